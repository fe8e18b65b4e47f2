"""``pose.jointlimit_from_constraints``: Limit Rotation constraints and IK limits -> JointLimit."""

import bpy
from bpy.props import BoolProperty, EnumProperty

from .. import bone_limits, settings_io
from ._common import PosePoll, limitable_selection, pose_objects, report_count, report_rest_pose, report_text


class POSE_OT_jointlimit_from_constraints(PosePoll, bpy.types.Operator):
    """Turn the Limit Rotation constraints or IK limits of the selected bones into joint limits (s = tan(angle/2))"""

    bl_idname = "pose.jointlimit_from_constraints"
    bl_label = "Joint Limits from Constraints"
    bl_options = {"REGISTER", "UNDO"}

    source: EnumProperty(
        name="Source",
        description="Which Blender limits to convert",
        items=(
            ("AUTO", "Auto", "Limit Rotation constraint if the bone has one, otherwise its IK limits"),
            ("LIMIT_ROTATION", "Limit Rotation", "Limit Rotation constraints in local space"),
            ("IK_LIMITS", "IK Limits", "The bone's IK limits and locks"),
        ),
        default="AUTO",
    )
    old_constraints: EnumProperty(
        name="Old Constraints",
        description="What to do with the converted Limit Rotation constraints",
        items=(("KEEP", "Keep", "Leave them as they are"), ("MUTE", "Mute", "Disable them"), ("REMOVE", "Remove", "Delete them")),
        default="MUTE",
    )
    all_bones: BoolProperty(name="All Bones", description="Convert every bone an animator poses (rig mechanism bones are skipped), not only the selected ones", default=False)
    limit_kind: EnumProperty(
        name="Limit Kind",
        description="What a Limit Rotation constraint becomes (IK limits always become Swing & Twist)",
        items=(("SWING_TWIST", "Swing & Twist",
                "A rectangle of swing ranges through s = tan(angle/2) and a twist range, corrected along the sphere "
                "(the same ranges, not the same region as the constraint's Euler clamp)"),
               ("EULER", "Euler",
                "Euler ranges in the constraint's order: the region the constraint allows (Euler (Equivalent "
                "Ranges) where its middle axis reaches past 80°)")),
        default="SWING_TWIST",
    )
    replace_limits: BoolProperty(
        name="Replace Limits",
        description="Also convert bones that have a joint limit already, replacing it (its shape, hinge or Euler "
                    "ranges); off: they keep theirs, and their constraints are left as they are",
        default=False,
    )

    def _convert(self, pb, unmerged, disjoint, restored):
        if not settings_io.convertible(pb, self.source) or (pb.jointlimit.enabled and not self.replace_limits):
            return False
        cons = settings_io.local_limit_rotations(pb)
        if self.source == "LIMIT_ROTATION" or (self.source == "AUTO" and cons):
            con = settings_io.merged_limit_rotation(cons)
            if con is None:     # (its constraints stay as they are)
                (disjoint if settings_io.merge_problem(cons) == "DISJOINT" else unmerged).append(pb.name)
                return False
            if self.limit_kind == "EULER":
                settings_io.euler_settings_from_limit_rotation(pb.jointlimit, con, pb.rotation_mode)
            elif not pb.jointlimit.enabled and bone_limits.settings_error(pb.jointlimit) is None and \
                    settings_io.made_from(pb.jointlimit, con):
                pb.jointlimit.enabled = True    # (the limit the constraints were made from: its shape back)
                restored.append(pb.name)
            else:
                settings_io.settings_from_axes(pb.jointlimit, *settings_io.axes_from_limit_rotation(con))
            for con in cons:
                if self.old_constraints == "REMOVE" and _from_library(pb, con):
                    con.enabled = False     # (removed, it would come back, acting, when the shot is opened)
                    if pb.name not in self.muted:
                        self.muted.append(pb.name)
                elif self.old_constraints == "MUTE":
                    con.enabled = False
                elif self.old_constraints == "REMOVE":
                    pb.constraints.remove(con)
            return True
        settings_io.settings_from_axes(pb.jointlimit, *settings_io.axes_from_ik_limits(pb))
        return True

    def execute(self, context):
        skipped = []
        if self.all_bones:  # the bones an animator poses: rig mechanism keeps its constraints
            every = [pb for obj in pose_objects(context) for pb in obj.pose.bones]
            bones, _ = bone_limits.animator_bones(every)
            kept = {(pb.id_data.name, pb.name) for pb in bones}
            skipped = [pb.name for pb in every if (pb.id_data.name, pb.name) not in kept    # those it would convert:
                       and settings_io.convertible(pb, self.source)]                   # the others keep nothing
        else:   # (a selected bone named as rig mechanism keeps its constraints too)
            bones, skipped = limitable_selection(context)
        if not bones:
            self.report({"ERROR"}, report_text("Select the bones to convert") + bone_limits.skipped_text(skipped))
            return {"CANCELLED"}
        kept = [pb.name for pb in bones
                if pb.jointlimit.enabled and not self.replace_limits and settings_io.convertible(pb, self.source)]
        replaced = [pb.name for pb in bones if pb.jointlimit.enabled]
        unmerged, disjoint, restored, self.muted = [], [], [], []
        converted = [pb.name for pb in bones if self._convert(pb, unmerged, disjoint, restored)]
        if unmerged:
            self.report({"WARNING"}, report_text(
                "Left {bones} as they are: their Limit Rotation constraints read the rotation in different Euler "
                "orders (or one with legacy behaviour), which one limit cannot hold", bones=", ".join(unmerged[:5])))
        if disjoint:
            self.report({"WARNING"}, report_text(
                "Left {bones} as they are: two of their Limit Rotation constraints limit one axis to ranges that do "
                "not overlap (one after the other they hold it at one angle), which one limit cannot hold (check "
                "those ranges)", bones=", ".join(disjoint[:5])))
        replaced = [name for name in replaced if name in converted]
        if not converted:
            if unmerged or disjoint:
                return {"CANCELLED"}    # (the warning says why)
            if kept:
                self.report({"ERROR"}, report_count(
                    "The bone has a joint limit already: switch on Replace Limits to replace it with the converted one",
                    "The {count} bones have joint limits already: switch on Replace Limits to replace them with the "
                    "converted ones", len(kept)))
                return {"CANCELLED"}
            self.report({"ERROR"}, "None of the bones has a local-space Limit Rotation constraint or IK limits"
                        + bone_limits.skipped_text(skipped))
            return {"CANCELLED"}
        if kept:
            self.report({"INFO"}, report_count(
                "Kept the joint limit of 1 bone that has one ({bones}; Replace Limits converts it too)",
                "Kept the joint limits of {count} bones that have one ({bones}; Replace Limits converts them too)",
                len(kept), bones=", ".join(kept[:5])))
        inverted = [pb.name for pb in bones if pb.name in converted and _inverted(pb, self.source)]
        if inverted:
            self.report({"WARNING"}, report_text(
                "The Limit Rotation constraints of {bones} have a minimum above its maximum: Blender holds such an "
                "axis at one angle, the conversion at the middle of the two (check those ranges)",
                bones=", ".join(inverted[:5])))
        if self.muted:
            self.report({"WARNING"}, report_text(
                "Muted the Limit Rotation constraints of {bones} instead of removing them: they come from the "
                "library of this override, which Blender keeps (removed, they would be back and acting when the "
                "file is opened again)", bones=", ".join(self.muted[:5])))
        if restored:
            self.report({"INFO"}, report_count(
                "Switched the joint limit of 1 bone on again ({bones}): its Limit Rotation constraints were made "
                "from it (Joint Limits to Constraints), so it keeps its own shape",
                "Switched the joint limits of {count} bones on again ({bones}): their Limit Rotation constraints "
                "were made from them (Joint Limits to Constraints), so they keep their own shapes",
                len(restored), bones=", ".join(restored[:5])))
        if replaced:
            self.report({"INFO"}, report_count(
                "Replaced the joint limit of 1 bone ({bones})", "Replaced the joint limits of {count} bones ({bones})",
                len(replaced), bones=", ".join(replaced[:5])))
        bad = [(pb.name, bone_limits.settings_error(pb.jointlimit)) for pb in bones if pb.name in converted]
        bad = [b for b in bad if b[1]]
        if bad:
            self.report({"WARNING"}, f"Converted, but bone '{bad[0][0]}' needs attention: {bad[0][1]}"
                        f"{bone_limits.skipped_text(skipped)}")
        else:
            self.report({"INFO"}, report_count("Converted 1 bone", "Converted {count} bones", len(converted))
                        + bone_limits.skipped_text(skipped))
        report_rest_pose(self, [pb for pb in bones if pb.name in converted])
        return {"FINISHED"}


def _from_library(pb, con):
    """Whether ``con`` of ``pb`` is the library's on a library override of the rig (Blender keeps
    those: a removal is not saved)."""
    return pb.id_data.override_library is not None and getattr(con, "is_override_data", False)


def _inverted(pb, source):
    """Whether the Limit Rotation constraint converted from ``pb`` limits an axis whose minimum is
    above its maximum (a typo, or a range typed the wrong way round)."""
    cons = settings_io.local_limit_rotations(pb)
    con = settings_io.merged_limit_rotation(cons) if cons and source != "IK_LIMITS" else None
    return con is not None and any(use and lo > hi for use, lo, hi, _ in settings_io.axes_from_limit_rotation(con))
