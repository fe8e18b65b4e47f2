"""``pose.jointlimit_outline_edit``: add or remove POLYGON outline vertices."""

import math

import bpy
from bpy.props import EnumProperty

from .. import settings_io
from ._common import ActiveBonePoll


class POSE_OT_jointlimit_outline_edit(ActiveBonePoll, bpy.types.Operator):
    """Add or remove vertices of the active bone's polygon outline"""

    bl_idname = "pose.jointlimit_outline_edit"
    bl_label = "Edit Polygon Outline"
    bl_options = {"REGISTER", "UNDO"}

    action: EnumProperty(
        name="Action",
        description="What to do with the outline",
        items=(
            ("ADD", "Add Vertex", "Add a vertex after the active one"),
            ("REMOVE", "Remove Vertex", "Remove the active vertex"),
            ("FROM_RANGES", "From Ranges", "Replace the outline by the rectangle of the swing ranges"),
        ),
        default="ADD",
    )

    def execute(self, context):
        settings = context.active_pose_bone.jointlimit
        try:
            settings_io.check_outline_editable(settings)
        except ValueError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        outline = settings.outline
        if self.action == "FROM_RANGES":
            outline.clear()
            for z, x in ((settings.swing_z_min, settings.swing_x_min), (settings.swing_z_max, settings.swing_x_min),
                         (settings.swing_z_max, settings.swing_x_max), (settings.swing_z_min, settings.swing_x_max)):
                p = outline.add()
                p.swing_z, p.swing_x = z, x
            settings.outline_index = 0
        elif self.action == "ADD":
            index = min(settings.outline_index, len(outline) - 1)
            p = outline.add()
            if index >= 0:
                a, b = outline[index], outline[(index + 1) % (len(outline) - 1)]
                p.swing_z, p.swing_x = 0.5 * (a.swing_z + b.swing_z), 0.5 * (a.swing_x + b.swing_x)
            else:
                p.swing_z, p.swing_x = math.radians(30.0), 0.0
            outline.move(len(outline) - 1, index + 1)
            settings.outline_index = index + 1
        else:
            if not len(outline):
                self.report({"ERROR"}, "The outline has no vertices")
                return {"CANCELLED"}
            outline.remove(min(settings.outline_index, len(outline) - 1))
            settings.outline_index = max(0, min(settings.outline_index, len(outline) - 1))
        return {"FINISHED"}
