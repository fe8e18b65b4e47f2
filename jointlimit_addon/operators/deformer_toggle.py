"""``object.jointlimit_deformer_toggle``: switch the two-bone deformer off (the Armature modifier
alone deforms every vertex) or on again, keeping everything it added."""

import bpy

from .. import deformer
from ..deformer import data
from ._common import MeshPoll, run_on_meshes, target_meshes
from .deformer_add import selected_prop


class OBJECT_OT_jointlimit_deformer_toggle(MeshPoll, bpy.types.Operator):
    """Switch the JointLimit deformer off, so the Armature modifier alone deforms every vertex (as without the
    deformer), or on again. Switching only the deformer's modifier off would leave the two-bone vertices
    undeformed: the Armature modifier skips them while the deformer is on"""

    bl_idname = "object.jointlimit_deformer_toggle"
    bl_label = "Toggle JointLimit Deformer"
    bl_options = {"REGISTER", "UNDO"}

    use_selected: selected_prop()

    def execute(self, context):
        meshes = target_meshes(context, self.use_selected)
        with_deformer = [obj for obj in meshes if deformer.find(obj)[0] is not None]
        # one direction for the whole selection (the first mesh's, the active one first)
        on = not deformer.is_enabled(with_deformer[0]) if with_deformer else True

        def work(obj):
            mod = deformer.find(obj)[0]
            if mod is None:
                raise data.DataError(f"'{obj.name}' has no JointLimit deformer")
            deformer.set_enabled(obj, on)
            state = "on" if on else "off (the Armature modifier alone deforms every vertex)"
            return f"Switched '{mod.name}' of '{obj.name}' {state}"

        return run_on_meshes(self, meshes, work, "toggle the deformer")
