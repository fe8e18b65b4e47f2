"""``object.jointlimit_deformer_add``: SDEF / SBS / Bezier skinning as a geometry-nodes modifier."""

import bpy
from bpy.props import EnumProperty, FloatProperty

from .. import deformer
from ..deformer import data
from ._common import MeshPoll

SOURCE_ITEMS = [
    ("AUTO", "Automatic", "mmd_tools SDEF shape keys if present, else the derived jl_sdef_* attributes"),
    ("MMD", "mmd_tools Shape Keys", "C, R0, R1 from the shape keys mmd_sdef_c, mmd_sdef_r0, mmd_sdef_r1"),
    ("DERIVED", "Derived Attributes", "C, R0, R1 from the attributes written by Derive SDEF Parameters"),
]
MODE_ITEMS = [
    ("LBS", "LBS", "Linear blend skinning [002 eq.1-3] (what the Armature modifier does)"),
    ("SBS", "SBS", "Spherical blend skinning about the centre C [002 eq.4-7]"),
    ("SDEF", "SDEF (SBS+)", "SBS+ with boundary correction, equal to MMD's SDEF at blend 0.5 [002 eq.8-22]"),
    ("BEZIER", "Bezier", "Quadratic Bezier rotation centre through the joint [002 eq.23-26]"),
]


class OBJECT_OT_jointlimit_deformer_add(MeshPoll, bpy.types.Operator):
    """Recompute the mesh's two-bone vertices with SDEF, SBS or Bezier skinning in a geometry-nodes
    modifier after its Armature modifier (no Python per frame)"""

    bl_idname = "object.jointlimit_deformer_add"
    bl_label = "Add SDEF Deformer"
    bl_options = {"REGISTER", "UNDO"}

    source: EnumProperty(name="SDEF Data", description="Where the C, R0, R1 parameters come from",
                         items=SOURCE_ITEMS, default="AUTO")
    mode: EnumProperty(name="Mode", description="Skinning of the two-bone vertices (switchable later on the "
                       "modifier: Mode 0 LBS, 1 SBS, 2 SDEF, 3 Bezier)", items=MODE_ITEMS, default="SDEF")
    blend: FloatProperty(name="Blend", description="SDEF blend s [002 eq.22]: 1 = LBS centre, 0 = boundary line",
                         default=0.5, min=0.0, max=1.0)

    def execute(self, context):
        obj = context.object
        try:
            mod = deformer.add(context, obj, self.source, self.mode, self.blend)
        except data.DataError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        self.report({"INFO"}, f"Added '{mod.name}' to '{obj.name}' (mode {self.mode})")
        return {"FINISHED"}
