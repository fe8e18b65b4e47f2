"""``object.jointlimit_deformer_remove``: remove the two-bone deformer and everything it added."""

import bpy

from .. import deformer
from ..deformer import data
from ._common import MeshPoll


class OBJECT_OT_jointlimit_deformer_remove(MeshPoll, bpy.types.Operator):
    """Remove the SDEF deformer: its modifier, helper object, attributes and the node group if unused
    (SDEF data such as mmd_tools shape keys or derived attributes stay)"""

    bl_idname = "object.jointlimit_deformer_remove"
    bl_label = "Remove SDEF Deformer"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        obj = context.object
        try:
            deformer.remove(obj)
        except data.DataError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        self.report({"INFO"}, f"Removed the SDEF deformer from '{obj.name}'")
        return {"FINISHED"}
