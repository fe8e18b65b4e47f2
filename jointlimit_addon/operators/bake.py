"""``pose.jointlimit_bake``: key the clamped rotation of every limited bone on every frame."""

import bpy
import numpy as np
from bpy.props import BoolProperty, IntProperty

from .. import animation, bone_limits, compat
from ._common import MECHANISM_ONLY, PosePoll, bone_labels, name_list, report_count, report_text, target_bones_skipping


def sample_rotations(scene, bones, frames):
    """Evaluate the animation on each frame and read the bones' local rotations: unit quaternions
    ``(F, B, 4)`` and the values as stored in each bone's own channel (``[F][B]`` tuples)."""
    out = np.empty((len(frames), len(bones), 4))
    stored = []
    for f, frame in enumerate(frames):
        animation.set_scene_time(scene, frame)     # (a key pose on a subframe at its own time)
        stored.append([stored_rotation(pb) for pb in bones])
        for b, pb in enumerate(bones):
            try:
                out[f, b] = bone_limits.read_rotation(pb)
            except ValueError as exc:
                raise ValueError(report_text("{error} (frame {frame})", error=exc, frame=_time_text(frame))) from None
    return out, stored


def _time_text(time):
    """A frame as the timeline shows it: ``12``, or ``24.5`` on a subframe."""
    return f"{time:g}" if time != int(time) else str(int(time))


def _keyed_or_corrected(bones, corrected):
    """Per bone whether Bake keys it: its rotation animated (the action, an NLA strip that plays, a
    driver), or outside its limit on some frame."""
    animated = {(obj, name) for obj in {pb.id_data for pb in bones} for name in animation.animated_limited_bones(obj)}
    return np.array([(pb.id_data, pb.name) in animated or bool(corrected[:, b].any()) for b, pb in enumerate(bones)])


def stored_rotation(pose_bone):
    """The values of the pose bone's rotation channel in its own mode, as a tuple."""
    path, _ = bone_limits.rotation_path(pose_bone)
    return tuple(getattr(pose_bone, path))


def key_rotations(scene, bones, frames, rotations, stored, corrected, verbatim=None):
    """Key each bone's rotation on each of the scene's ``frames``, in the bone's own rotation mode:
    where ``corrected[f, b]`` is false the Euler or axis-angle values as stored (their turns), else
    ``rotations[f, b]`` written next to the stored values of that frame (the same Euler turn and
    quaternion sign as the keys had); quaternions are keyed unit length, except where
    ``verbatim[f, b]``: the stored values as they are (a locked bone's, ``locked_values``)."""
    for b, pb in enumerate(bones):
        path, _ = bone_limits.rotation_path(pb)
        mode = pb.rotation_mode
        values = [stored[f][b] if verbatim is not None and verbatim[f, b] else
                  bone_limits.values_for_mode(mode, rotations[f, b], stored[f][b])[1]
                  if corrected[f, b] or path == "rotation_quaternion" else stored[f][b] for f in range(len(frames))]
        key_values(pb, path, [animation.scene_time(scene, f) for f in frames], values)
        animation.remove_keys_between(pb, path, frames, scene=scene)


def locked_values(pb, limit, q, stored, near=None):
    """The values to store for a bone with Lock Rotation whose animation holds ``stored`` on a
    frame where it is at ``q`` outside ``limit``: the nearest rotation the limit and the lock
    (those values) both allow (moving on from ``near``, the frame before's), its locked channels
    exactly as stored; and that rotation, or ``None`` where there is none (the values are then
    ``stored`` itself: the lock holds the bone outside on that frame)."""
    path, _ = bone_limits.rotation_path(pb)
    setattr(pb, path, stored)
    allowed, _, met = bone_limits.clamp_locked(pb, limit, q, near)
    if not met:
        return stored, None
    bone_limits.write_posed_rotation(pb, allowed)
    return tuple(getattr(pb, path)), allowed


def key_values(pb, path, times, values):
    """Key the pose bone's channel ``path`` to ``values[f]`` at each of the scene's ``times``
    (``animation.scene_time``), as ``keyframe_insert`` at each would. The first key goes through
    ``keyframe_insert`` (it makes the F-curves, in the bone's group and the action's slot), the
    others straight into the F-curves, at the action's time of each (a tweaked NLA strip maps it),
    their handles computed once at the end: ``keyframe_insert`` computes every handle of the curve
    again for each key, so that a long bake took the square of its frames. An action blended over
    what is below it (Combine, Add, Subtract, Multiply, an influence below 1) takes every key
    through ``keyframe_insert``, which works out the key that gives the value after the blend."""
    setattr(pb, path, values[0])
    pb.keyframe_insert(data_path=path, frame=times[0], group=pb.name)
    data = pb.id_data.animation_data
    fcurves = None if data is None else compat.action_fcurve_collection(data.action, data.action_slot)
    curves = [None if fcurves is None else fcurves.find(pb.path_from_id(path), index=i) for i in range(len(values[0]))]
    if animation.action_blended(pb.id_data) or not all(_took_key(fc, animation.action_time(pb.id_data, times[0])) for fc in curves):
        for time, value in zip(times[1:], values[1:]):     # as keyframe_insert does (and refuses)
            setattr(pb, path, value)
            pb.keyframe_insert(data_path=path, frame=time, group=pb.name)
        return
    at = [animation.action_time(pb.id_data, time) for time in times[1:]]
    for i, fc in enumerate(curves):
        insert = fc.keyframe_points.insert
        for time, value in zip(at, values[1:]):
            insert(time, value[i], options={"FAST"})
        fc.update()


def _took_key(fc, time):
    """Whether ``keyframe_insert`` keyed the F-curve ``fc`` at ``time`` (it refuses a locked curve,
    or one whose modifiers make keys meaningless); ``False`` for no curve (the channel is not in
    an action this looks in)."""
    if fc is None or animation.locked(fc):
        return False
    return any(abs(point.co[0] - time) < 1e-4 for point in fc.keyframe_points)


DRIVEN = ("Left {bones} as they are: a driver sets their rotation, so keys would not play and no limit "
          "holds them (limit what drives them, or remove the driver)")


class POSE_OT_jointlimit_bake(PosePoll, bpy.types.Operator):
    """Evaluate the animation over a frame range and key the clamped rotation of the limited bones on every frame"""

    bl_idname = "pose.jointlimit_bake"
    bl_label = "Bake Joint Limits"
    bl_options = {"REGISTER", "UNDO"}

    frame_start: IntProperty(name="Start Frame", description="First frame to bake", default=1)
    frame_end: IntProperty(name="End Frame", description="Last frame to bake", default=250)
    all_bones: BoolProperty(
        name="All Limited Bones", description="Bake every limited bone an animator poses (rig mechanism bones are skipped), not only the selected ones", default=True
    )

    def invoke(self, context, event):
        self.frame_start, self.frame_end = context.scene.frame_start, context.scene.frame_end
        return context.window_manager.invoke_props_dialog(self) if context.window else self.execute(context)

    def execute(self, context):
        if self.frame_end < self.frame_start:
            self.report({"ERROR"}, report_text("End frame {end} is before start frame {start}", end=self.frame_end,
                                               start=self.frame_start))
            return {"CANCELLED"}
        bones, skipped = target_bones_skipping(context, self.all_bones)
        if not bones and skipped:
            self.report({"ERROR"}, report_text(MECHANISM_ONLY) + bone_limits.skipped_text(skipped))
            return {"CANCELLED"}
        if not bones:
            self.report({"ERROR"}, "No limited bones to bake")
            return {"CANCELLED"}
        refused = animation.unkeyable_message({pb.id_data for pb in bones}) or \
            animation.repeated_tweak_message(dict.fromkeys(pb.id_data for pb in bones))
        if refused is not None:
            self.report({"ERROR"}, refused)
            return {"CANCELLED"}
        driven = [pb for pb in bones if animation.driven_rotation(pb)]
        if driven:
            names = name_list(bone_labels(bones)(pb) for pb in driven)
            bones = [pb for pb in bones if pb not in driven]
            if not bones:
                self.report({"ERROR"}, report_text(DRIVEN, bones=names))
                return {"CANCELLED"}
            self.report({"WARNING"}, report_text(DRIVEN, bones=names))
        scene = context.scene
        original_frame = (scene.frame_current, scene.frame_subframe)     # (its subframe kept)
        frames = list(range(self.frame_start, self.frame_end + 1))
        try:
            limits = [bone_limits.bone_limit(pb) for pb in bones]
            sampled, stored = sample_rotations(scene, bones, frames)     # ValueError for a zero quaternion
        except ValueError as exc:
            scene.frame_set(original_frame[0], subframe=original_frame[1])
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        clamped = np.stack([limit.clamp(sampled[:, b]) for b, limit in enumerate(limits)], axis=1)
        corrected = ~np.stack([limit.contains(sampled[:, b]) for b, limit in enumerate(limits)], axis=1)
        keep = _keyed_or_corrected(bones, corrected)     # a bone without keys held inside: nothing to bake
        label = bone_labels(bones)
        unkeyed = [label(pb) for pb, k in zip(bones, keep) if not k]
        if unkeyed:
            bones, limits = [pb for pb, k in zip(bones, keep) if k], [lim for lim, k in zip(limits, keep) if k]
            sampled, clamped, corrected = sampled[:, keep], clamped[:, keep], corrected[:, keep]
            stored = [[values for values, k in zip(row, keep) if k] for row in stored]
        verbatim, held = np.zeros_like(corrected), []
        for b, pb in enumerate(bones):
            if bone_limits.with_rotation_lock(pb, None) is not None:    # its locked channels keep their keys
                before = None   # the result of the frame before, when that was corrected too
                for f in range(len(frames)):
                    if not corrected[f, b]:
                        before = None
                        continue
                    stored[f][b], before = locked_values(pb, limits[b], sampled[f, b], stored[f][b], before)
                    verbatim[f, b] = True
                    if before is None and label(pb) not in held:
                        held.append(label(pb))
        key_rotations(scene, bones, frames, clamped, stored, corrected, verbatim)
        scene.frame_set(original_frame[0], subframe=original_frame[1])
        if bones or not unkeyed:
            self.report({"INFO"}, report_count("Baked 1 limited bone over frames {start}-{end}",
                                               "Baked {count} limited bones over frames {start}-{end}", len(bones),
                                               start=frames[0], end=frames[-1]) + bone_limits.skipped_text(skipped))
        if unkeyed:
            self.report({"INFO"}, report_text("Left {bones} unkeyed: no rotation keys, inside the limits on every "
                                              "frame", bones=name_list(unkeyed))
                        + ("" if bones else bone_limits.skipped_text(skipped)))
        if held:
            self.report({"WARNING"}, bone_limits.held_text(held))
        return {"FINISHED"}
