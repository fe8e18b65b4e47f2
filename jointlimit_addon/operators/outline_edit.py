"""``pose.jointlimit_outline_edit``: add or remove POLYGON outline vertices."""

import math

import bpy
from bpy.props import EnumProperty

from .. import settings_io
from ..core.regions import split_edge
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
            if len(outline) < 2 or (len(outline) == 2 and not any(p.bulge for p in outline)):
                # the first three go round the rest pose (a midpoint would repeat a vertex; two
                # vertices joined by arcs are a shape already)
                index = len(outline) - 1
                z, x = _first_vertex(outline)
                turn = 2.0 * math.pi / 3.0 * len(outline)
                z, x = z * math.cos(turn) - x * math.sin(turn), z * math.sin(turn) + x * math.cos(turn)
                bulge = 0.0
            else:
                a = outline[index]
                z, x, bulge = _split_edge(a, outline[(index + 1) % len(outline)])
                a.bulge = bulge
            p = outline.add()
            p.swing_z, p.swing_x, p.bulge = z, x, bulge
            outline.move(len(outline) - 1, index + 1)
            settings.outline_index = index + 1
        else:
            if not len(outline):
                self.report({"ERROR"}, "The outline has no vertices")
                return {"CANCELLED"}
            outline.remove(min(settings.outline_index, len(outline) - 1))
            settings.outline_index = max(0, min(settings.outline_index, len(outline) - 1))
        return {"FINISHED"}


def _split_edge(a, b):
    """``(swing_z, swing_x, bulge)`` of a vertex splitting the edge from vertex ``a`` to ``b``
    where the outline runs (on the ``(s, t)`` plane, on its arc if it bulges), and the bulge of
    both halves: the outline keeps its shape."""
    plane = [(math.tan(p.swing_z / 2.0), math.tan(p.swing_x / 2.0)) for p in (a, b)]
    (s, t), bulge = split_edge(*plane, a.bulge)
    return 2.0 * math.atan(s), 2.0 * math.atan(t), bulge


def _first_vertex(outline):
    """``(swing_z, swing_x)`` of the outline's first vertex, or 30° along Z where there is none or it
    lies on the rest pose (the vertices added after it turn it by 120° about the rest pose)."""
    if len(outline) and math.hypot(outline[0].swing_z, outline[0].swing_x) > 1e-6:
        return outline[0].swing_z, outline[0].swing_x
    return math.radians(30.0), 0.0
