"""``object.jointlimit_deformer_remove``: remove the two-bone deformer and everything it added."""

import bpy

from .. import deformer
from ._common import MeshPoll, run_on_meshes, target_meshes
from .deformer_add import selected_prop


class OBJECT_OT_jointlimit_deformer_remove(MeshPoll, bpy.types.Operator):
    """Remove the JointLimit deformer: its modifiers, helper object, attributes and the node groups if unused,
    and give a taken-over mmd_tools SDEF binding back (SDEF data such as mmd_tools shape keys or
    derived attributes stay)"""

    bl_idname = "object.jointlimit_deformer_remove"
    bl_label = "Remove JointLimit Deformer"
    bl_options = {"REGISTER", "UNDO"}

    use_selected: selected_prop()

    def execute(self, context):
        def work(obj):
            mod = deformer.find(obj)[0]
            if mod is None and deformer.has_leftovers(obj):
                deformer.remove(obj)
                return (f"Cleared what the JointLimit deformer of '{obj.name}' left (its modifier had been deleted, "
                        "applied or converted, or a mesh with it joined)")
            name = mod.name if mod is not None else ""
            deformer.remove(obj)  # DataError when there is none
            return f"Removed '{name}' from '{obj.name}'"

        return run_on_meshes(self, target_meshes(context, self.use_selected), work, "remove the deformer")
