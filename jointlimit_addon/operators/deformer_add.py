"""``object.jointlimit_deformer_add``: SDEF / SBS / Bezier skinning as a geometry-nodes modifier."""

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty

from .. import deformer
from ..core import skinning
from ..deformer import mmd
from ._common import MeshPoll, run_on_meshes, target_meshes

SOURCE_ITEMS = [
    ("AUTO", "Automatic", "mmd_tools SDEF shape keys if present, else the derived jl_sdef_* attributes, else "
     "derive them now"),
    ("MMD", "mmd_tools Shape Keys", "C, R0, R1 from the shape keys mmd_sdef_c, mmd_sdef_r0, mmd_sdef_r1"),
    ("DERIVED", "Derived Attributes", "C, R0, R1 from the attributes written by Derive SDEF Parameters"),
]
MODE_ITEMS = [
    ("LBS", "LBS", "Linear blend skinning [002 eq.1-3] (what the Armature modifier does)"),
    ("SBS", "SBS", "Spherical blend skinning about the centre C [002 eq.4-7]"),
    ("SDEF", "SDEF (SBS+)", "SBS+ with boundary correction, equal to MMD's SDEF at blend 0.5 [002 eq.8-22]"),
    ("BEZIER", "Bezier", "Quadratic Bezier rotation centre through the joint [002 eq.23-26]"),
]


def selected_prop():
    return BoolProperty(name="All Selected Meshes", description="Act on every selected mesh, not only the "
                        "active one", default=True)


def strongest_two_prop():
    return BoolProperty(name="Two Strongest Groups", description="Vertices with three or more deforming "
                        "groups use their two strongest groups, renormalised (otherwise they follow the "
                        "Armature modifier)", default=False)


class OBJECT_OT_jointlimit_deformer_add(MeshPoll, bpy.types.Operator):
    """Recompute the mesh's two-bone vertices with SDEF, SBS or Bezier skinning in a geometry-nodes
    modifier after its Armature modifier (no Python per frame)"""

    bl_idname = "object.jointlimit_deformer_add"
    bl_label = "Add JointLimit Deformer"
    bl_options = {"REGISTER", "UNDO"}

    source: EnumProperty(name="SDEF Data", description="Where the C, R0, R1 parameters come from",
                         items=SOURCE_ITEMS, default="AUTO")
    mode: EnumProperty(name="Mode", description="Skinning of the two-bone vertices (switchable later on the "
                       "modifier: Mode 0 LBS, 1 SBS, 2 SDEF, 3 Bezier)", items=MODE_ITEMS, default="SDEF")
    blend: FloatProperty(name="Blend", description="SDEF blend s [002 eq.22]: 1 = LBS centre, 0 = boundary line",
                         default=0.5, min=0.0, max=1.0)
    strongest_two: strongest_two_prop()
    take_over: BoolProperty(name="Take Over mmd_tools SDEF", description="Unbind mmd_tools' own SDEF (its "
                            "mmd_sdef_skinning shape key and mask) while the deformer is on; Remove restores it",
                            default=False)
    use_selected: selected_prop()

    def invoke(self, context, event):
        if any(mmd.binding(o) is not None for o in target_meshes(context, self.use_selected)):
            self.take_over = True
            return context.window_manager.invoke_props_dialog(self)
        return self.execute(context)

    def execute(self, context):
        try:
            skinning.check_blend(self.blend)  # NaN passes Blender's min/max
        except ValueError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}

        def work(obj):
            mod, prep = deformer.add(context, obj, self.source, self.mode, self.blend, self.strongest_two,
                                     self.take_over)
            notes = []
            if prep.derived:
                notes.append("derived SDEF parameters")
            if prep.two.many:
                notes.append(f"{prep.two.many} vertices with three or more deform groups "
                             + ("use their two strongest" if self.strongest_two else "follow the Armature modifier"))
            if mmd.STATE_PROP in find_helper(obj):
                notes.append("took over mmd_tools' SDEF binding")
            bent = [name for name in prep.two.bones if prep.arm_mod.object.data.bones[name].bbone_segments > 1]
            if bent:
                notes.append(f"{len(bent)} bone{'s' * (len(bent) > 1)} with B-Bone segments ({', '.join(bent[:3])}"
                             f"{', ...' if len(bent) > 3 else ''}): SBS, SDEF and Bezier follow their bent first "
                             "segment, not the bone; set Segments to 1 for the skinning [002] defines")
            return (f"Added '{mod.name}' to '{obj.name}' (mode {self.mode}, {len(prep.two.index)} two-bone "
                    "vertices" + "".join(f"; {n}" for n in notes) + ")")

        for obj, error in deformer.upgrade(context):  # deformers saved by an older version
            if error is None:
                self.report({"INFO"}, f"Upgraded the deformer of '{obj.name}' to the current node tree")
            else:
                self.report({"WARNING"}, f"Removed the old deformer of '{obj.name}'; adding it again failed: {error}")
        return run_on_meshes(self, target_meshes(context, self.use_selected), work, "add the deformer")


def find_helper(obj):
    helper = deformer.find(obj)[1]
    return helper if isinstance(helper, bpy.types.Object) else {}
