"""``pose.jointlimit_to_constraints``: JointLimit -> Limit Rotation constraints (Euler approximation)."""

import bpy
from bpy.props import BoolProperty

from .. import bone_limits, settings_io
from ._common import PosePoll, refuse_invalid_limits, report_count, target_bones_skipping

CONSTRAINT_NAME = "JointLimit Euler"


class POSE_OT_jointlimit_to_constraints(PosePoll, bpy.types.Operator):
    """Add Limit Rotation constraints that approximate the joint limits with Euler ranges, for pipelines that need Blender constraints"""

    bl_idname = "pose.jointlimit_to_constraints"
    bl_label = "Joint Limits to Constraints"
    bl_options = {"REGISTER", "UNDO"}

    all_bones: BoolProperty(name="All Limited Bones", description="Convert every limited bone an animator poses (rig mechanism bones are skipped), not only the selected ones", default=False)
    disable_limits: BoolProperty(name="Disable Joint Limits", description="Turn off the converted joint limits", default=False)

    def execute(self, context):
        bones, skipped = target_bones_skipping(context, self.all_bones)
        if not bones:
            self.report({"ERROR"}, "No limited bones to convert")
            return {"CANCELLED"}
        if refuse_invalid_limits(self, bones):
            return {"CANCELLED"}
        for pb in bones:
            order, axes = settings_io.euler_ranges(pb.jointlimit)
            con = pb.constraints.get(CONSTRAINT_NAME) or pb.constraints.new("LIMIT_ROTATION")
            con.name = CONSTRAINT_NAME
            con.owner_space = "LOCAL"
            con.euler_order = order
            con.use_legacy_behavior = False
            for axis, (use, lo, hi) in zip("xyz", axes):
                setattr(con, f"use_limit_{axis}", use)
                setattr(con, f"min_{axis}", lo)
                setattr(con, f"max_{axis}", hi)
            if self.disable_limits:
                pb.jointlimit.enabled = False
        self.report({"INFO"}, report_count("Added Limit Rotation constraints to 1 bone",
                                           "Added Limit Rotation constraints to {count} bones", len(bones))
                    + bone_limits.skipped_text(skipped))
        return {"FINISHED"}
