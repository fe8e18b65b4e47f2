"""``pose.jointlimit_mirror``: mirror joint limits to the bones of the other side."""

import bpy

from .. import settings_io
from ._common import PosePoll, refuse_invalid_limits, report_rest_pose, selected_pose_bones


class POSE_OT_jointlimit_mirror(PosePoll, bpy.types.Operator):
    """Copy the selected bones' joint limits to their mirror bones (.L/.R, _L/_R, Left/Right) with the signs mirrored across X"""

    bl_idname = "pose.jointlimit_mirror"
    bl_label = "Mirror Joint Limits"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        bones = context.object.pose.bones
        pairs, unmatched = [], []
        for pb in selected_pose_bones(context):
            other = bones.get(bpy.utils.flip_name(pb.name))
            if other is None or other == pb:
                unmatched.append(pb.name)
            else:
                pairs.append((pb, other))
        if not pairs:
            self.report({"ERROR"}, "No mirror bones found for the selection (names need .L/.R, _L/_R or Left/Right)")
            return {"CANCELLED"}
        sources = {src.name for src, _ in pairs}
        # both sides selected: mirror from one side only
        pairs_used = [(src, dst) for src, dst in pairs if not (dst.name in sources and src.name > dst.name)]
        if refuse_invalid_limits(self, [src for src, _ in pairs_used]):
            return {"CANCELLED"}
        written = []
        for src, dst in pairs_used:
            settings_io.mirror_settings(src.jointlimit, dst.jointlimit)
            written.append(dst)
        message = f"Mirrored {len(pairs)} joint limits"
        if unmatched:
            message += f"; no mirror bone for: {', '.join(unmatched[:5])}"
        self.report({"INFO"}, message)
        report_rest_pose(self, written)
        return {"FINISHED"}
