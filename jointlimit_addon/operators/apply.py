"""``pose.jointlimit_apply``: clamp the current pose to the joint limits."""

import bpy
from bpy.props import BoolProperty

from .. import animation, autokey, bone_limits
from ._common import MECHANISM_ONLY, PosePoll, bone_labels, report_count, report_text, target_bones_skipping


class POSE_OT_jointlimit_apply(PosePoll, bpy.types.Operator):
    """Clamp the rotation of the selected limited bones to their joint limits"""

    bl_idname = "pose.jointlimit_apply"
    bl_label = "Apply Joint Limits"
    bl_options = {"REGISTER", "UNDO"}

    all_bones: BoolProperty(
        name="All Limited Bones", description="Clamp every limited bone an animator poses (rig mechanism bones are skipped), not only the selected ones", default=False
    )
    warn_animated: BoolProperty(
        name="Warn About Animated Bones",
        description="Warn when clamped bones are animated (their keys or drivers set the rotation again on the next frame "
                    "change) and say what to do in the interface; the batch command says it in its own terms",
        default=True, options={"HIDDEN", "SKIP_SAVE"},
    )

    def execute(self, context):
        bones, skipped = target_bones_skipping(context, self.all_bones)
        if not bones and skipped:
            self.report({"ERROR"}, report_text(MECHANISM_ONLY) + bone_limits.skipped_text(skipped))
            return {"CANCELLED"}
        if not bones:
            self.report({"ERROR"}, "No limited bones to clamp (enable a limit on the bone, or use All Limited Bones)")
            return {"CANCELLED"}
        try:
            moved, held = bone_limits.clamp_bones(bones)
        except ValueError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        self.report({"INFO"}, report_count("Clamped {moved} of 1 limited bone", "Clamped {moved} of {count} limited bones",
                                           len(bones), moved=len(moved)) + bone_limits.skipped_text(skipped))
        label = bone_labels(bones)
        if held:
            self.report({"WARNING"}, bone_limits.held_text([label(pb) for pb in held]))
        outside = _keys_outside(context, [pb for pb in bones if pb not in moved])
        if outside:
            self.report({"INFO"}, f"{', '.join(label(pb) for pb in outside[:5])}: shown clamped by Clamp Playback, "
                                  f"keys outside the limits on this frame: keyed as shown")
        keyed = autokey.autokey(context, moved + outside)
        clamped = [pb for pb in moved if pb not in keyed]
        animated = [label(obj.pose.bones[name]) for obj in {pb.id_data for pb in clamped}
                    for name in animation.animated_rotations(obj, [pb for pb in clamped if pb.id_data is obj])]
        if animated and self.warn_animated:
            self.report({"WARNING"}, f"{', '.join(animated)}: animated, the keys or drivers set the rotation again on "
                                     f"the next frame change {_not_keyed_hint(context, clamped)}")
        return {"FINISHED"}


def _keys_outside(context, pose_bones):
    """With Auto Keying and Clamp Playback on, the bones of ``pose_bones`` (inside their limits as
    shown) whose keys on the current frame are outside: the frame's clamp shows them inside, and
    Apply keys what it shows, as it keys a bone it clamped itself."""
    scene = context.scene
    if not (autokey.autokey_enabled(context) and scene.jointlimit.clamp_playback):
        return []
    frame = scene.frame_current_final
    out = []
    for pb in pose_bones:
        q = animation.keyed_rotation(pb, frame)
        limit = bone_limits.cached_limit(pb.jointlimit)[0]
        if q is not None and limit is not None and not bone_limits.bone_inside(pb, limit, q):
            out.append(pb)
    return out


def _not_keyed_hint(context, clamped):
    """Why the clamped bones' rotations were not keyed, and what to do."""
    if not autokey.autokey_enabled(context):
        return "(insert a key, turn on Auto Keying, or Bake)"
    unkeyable = animation.unkeyable_message({pb.id_data for pb in clamped})
    if unkeyable is not None:
        return f"({unkeyable})"
    return "(Auto Keying did not key the rotation here, by its mode, keying set or a driver: insert a key, or Bake)"
