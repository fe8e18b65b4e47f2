"""``object.jointlimit_sdef_derive``: automatic SDEF parameters C, R0, R1 for an ordinary rig."""

import bpy
import numpy as np
from bpy.props import EnumProperty, FloatProperty

from ..core import skinning
from ..deformer import data
from ._common import MeshPoll

CENTRE_ITEMS = [
    ("project", "Project", "C at the foot of the perpendicular from the vertex to the bone line"),
    ("joint", "Joint", "C at the joint (the child's head) for every vertex"),
]
BOUNDARY_ITEMS = [
    ("fit", "Fit", "R0, R1 from a least-squares fit of the position along the bones to the weight"),
    ("extent", "Extent", "R0, R1 at the ends of the blend zone along the bones"),
]


class OBJECT_OT_jointlimit_sdef_derive(MeshPoll, bpy.types.Operator):
    """Derive SDEF parameters C, R0, R1 for every vertex on exactly two bones and store them as the
    mesh attributes jl_sdef_c, jl_sdef_r0, jl_sdef_r1 (other vertices get their own position)"""

    bl_idname = "object.jointlimit_sdef_derive"
    bl_label = "Derive SDEF Parameters"
    bl_options = {"REGISTER", "UNDO"}

    centre: EnumProperty(name="Centre", description="Where the rotation centre C of a vertex goes",
                         items=CENTRE_ITEMS, default="project")
    boundary: EnumProperty(name="Boundary", description="How the blend boundaries R0 (parent) and R1 "
                           "(child) of each bone pair are found", items=BOUNDARY_ITEMS, default="fit")
    pad: FloatProperty(name="Padding", description="Widen the blend zone [R0, R1] by this fraction of its "
                       "length at each end", default=0.0, min=0.0, soft_max=1.0)

    def execute(self, context):
        obj = context.object
        try:
            arm = data.require_armature(obj).object
            two = data.two_bone_vertices(obj, arm)
            rest = data.positions(obj.data)
            heads, tails = data.heads_tails(obj, arm, two.bones)
            params = skinning.derive_sdef_params(rest[two.index], two.bone0, two.bone1, two.weight0, heads, tails,
                                                 centre=self.centre, boundary=self.boundary, pad=self.pad)
        except ValueError as exc:  # data.DataError included
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        attrs = obj.data.attributes
        for name, values in zip(data.DERIVED_ATTRS, params):
            full = rest.copy()
            full[two.index] = values
            if name in attrs:
                attrs.remove(attrs[name])
            attrs.new(name, "FLOAT_VECTOR", "POINT").data.foreach_set("vector", full.astype(np.float32).ravel())
        obj.data.update()
        self.report({"INFO"}, f"Derived SDEF parameters for {len(two.index)} vertices of '{obj.name}'")
        return {"FINISHED"}
