"""``wm.jointlimit_info``: report the add-on's version, operators and limited bones."""

import bpy

ADDON_PACKAGE = __package__.rpartition(".")[0]


def addon_operator_ids():
    """The ``bl_idname`` of every operator this add-on registers, sorted."""
    from . import classes

    return sorted(cls.bl_idname for cls in classes)


def limited_bones(context):
    """``(armature name, bone name)`` of every pose bone with an enabled limit in the scene."""
    rows = []
    for obj in context.scene.objects:
        if obj.type == "ARMATURE" and obj.pose:
            rows.extend((obj.name, pb.name) for pb in obj.pose.bones if pb.jointlimit.enabled)
    return rows


class WM_OT_jointlimit_info(bpy.types.Operator):
    """Print JointLimit's package, its operators and the limited bones of the scene"""

    bl_idname = "wm.jointlimit_info"
    bl_label = "JointLimit Info"
    bl_options = {"REGISTER"}

    def execute(self, context):
        lines = [f"JointLimit ({ADDON_PACKAGE})", "operators: " + ", ".join(addon_operator_ids())]
        bones = limited_bones(context)
        lines.append(f"limited bones: {len(bones)}")
        lines.extend(f"  {arm}: {bone}" for arm, bone in bones)
        for line in lines:
            print(line)
        self.report({"INFO"}, f"JointLimit: {len(addon_operator_ids())} operators, {len(bones)} limited bones")
        return {"FINISHED"}
