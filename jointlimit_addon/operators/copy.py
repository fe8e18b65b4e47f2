"""``pose.jointlimit_copy``: copy the active bone's joint limit to the selected bones."""

import bpy

from .. import bone_limits, settings_io
from ._common import ActiveBonePoll, limitable_selection, refuse_invalid_limits, report_count, report_rest_pose, report_text


class POSE_OT_jointlimit_copy(ActiveBonePoll, bpy.types.Operator):
    """Copy the active bone's joint-limit settings to the other selected bones"""

    bl_idname = "pose.jointlimit_copy"
    bl_label = "Copy Joint Limit to Selected"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        active = context.active_pose_bone
        targets, mechanism = limitable_selection(context)
        targets = [pb for pb in targets if pb != active]
        skipped = bone_limits.skipped_text([name for name in mechanism if name != active.name])
        if not targets:
            self.report({"ERROR"}, report_text("Select the bones to copy to, and make the source bone active") + skipped)
            return {"CANCELLED"}
        limited = [pb.name for pb in targets if pb.jointlimit.enabled]
        if not active.jointlimit.enabled and limited:
            self.report({"ERROR"}, report_text(
                "'{name}' has no joint limit: copying it would switch off the limits of {bones}. Make a bone with "
                "a limit active, or switch those limits off", name=active.name, bones=", ".join(limited[:5])))
            return {"CANCELLED"}
        if not active.jointlimit.enabled:   # (nothing to copy: the targets' stored ranges stay)
            self.report({"ERROR"}, report_text("'{name}' has no joint limit to copy: make a bone with a limit active",
                                               name=active.name))
            return {"CANCELLED"}
        if refuse_invalid_limits(self, [active]):
            return {"CANCELLED"}
        points = [(p.swing_z, p.swing_x, p.bulge) for p in active.jointlimit.outline]
        try:    # (before any change)
            for pb in targets:
                settings_io.check_outline_editable(pb.jointlimit, points)
        except ValueError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        for pb in targets:
            settings_io.copy_settings(active.jointlimit, pb.jointlimit)
        self.report({"INFO"}, report_count("Copied the joint limit of '{name}' to 1 bone",
                                           "Copied the joint limit of '{name}' to {count} bones", len(targets),
                                           name=active.name) + skipped)
        report_rest_pose(self, targets)
        return {"FINISHED"}
