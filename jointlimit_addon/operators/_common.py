"""Helpers shared by the operators (no operator classes here)."""

from .. import bone_limits


def pose_mode_problem(context):
    """Why a pose operator cannot run here, or ``None`` when it can."""
    obj = context.object
    if obj is None or obj.type != "ARMATURE":
        return "Select an armature"
    if context.mode != "POSE":
        return "Enter Pose Mode first"
    return None


def target_bones(context, all_bones):
    """Limited pose bones of the active armature: all of them, or only the selected ones."""
    return bone_limits.limited_bones(context.object, selected_only=not all_bones)


def selected_pose_bones(context):
    return list(context.selected_pose_bones or [])
