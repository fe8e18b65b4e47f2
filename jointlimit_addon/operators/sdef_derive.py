"""``object.jointlimit_sdef_derive``: automatic SDEF parameters C, R0, R1 for an ordinary rig."""

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty

from .. import deformer
from ..deformer import data, derive
from ..wording import counted
from ._common import MeshPoll, run_on_meshes, target_meshes
from .deformer_add import selected_prop, strongest_two_prop

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
    strongest_two: strongest_two_prop()
    write_mmd: BoolProperty(name="Write as mmd_tools SDEF Data", description="Also write the parameters as "
                            "mmd_tools' shape keys mmd_sdef_c, mmd_sdef_r0, mmd_sdef_r1 (overwriting them), so "
                            "its PMX export carries them", default=False)
    use_selected: selected_prop()

    def execute(self, context):
        def work(obj):
            replaced = self.write_mmd and data.has_mmd(obj)     # (a PMX model's own, or a Derive's before)
            two, swapped = derive.derive(obj, self.centre, self.boundary, self.pad, self.strongest_two,
                                         self.write_mmd)
            if swapped:
                self.report({"WARNING"}, f"'{obj.name}': {swapped} SDEF vertices have their two vertex groups in "
                            "the opposite order to mmd_tools' bone order, so its PMX export would swap their R0 "
                            "and R1: order each pair's vertex groups as mmd_tools orders their bones (MMD bone "
                            "ID, then name: bones without an ID by name), or give the bones MMD bone IDs in the "
                            "vertex groups' order, before exporting")
            where = " (also as mmd_tools shape keys)" if self.write_mmd else ""
            if replaced:
                where = " (also as mmd_tools shape keys, replacing the SDEF data they held: undo to keep it)"
            if not self.write_mmd and data.has_mmd(obj):
                where += ("; its mmd_tools SDEF shape keys, which Automatic reads first, keep their values (Write "
                          "as mmd_tools SDEF Data updates them)")
            mod, helper = deformer.find(obj)
            if mod is not None:     # (the derivation is the user's now: Remove keeps it)
                if isinstance(helper, bpy.types.Object):
                    helper.pop(deformer.AUTO_DERIVED_FLAG, None)
                where += ("; the deformer keeps the parameters it was added with: Remove it and Add it again to "
                          "use these")
            return f"Derived SDEF parameters for {counted(len(two.index), 'vertex', 'vertices')} of '{obj.name}'{where}"

        return run_on_meshes(self, target_meshes(context, self.use_selected), work, "derive SDEF parameters")
