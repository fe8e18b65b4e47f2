"""Reading keyframes of pose-bone channels, for layered (slotted) actions and legacy ones."""

from . import compat


def object_fcurves(obj):
    """All F-curves animating ``obj`` through its active action (and slot)."""
    data = obj.animation_data
    if data is None:
        return []
    return compat.action_fcurves(data.action, data.action_slot)


def keyed_frames(obj, pose_bone, data_path, frame_start, frame_end):
    """Sorted whole frames in [start, end] where any channel of the bone's ``data_path`` has a key."""
    full = f'pose.bones["{pose_bone.name}"].{data_path}'
    frames = set()
    for fc in object_fcurves(obj):
        if fc.data_path == full:
            frames.update(round(k.co[0]) for k in fc.keyframe_points if frame_start <= k.co[0] <= frame_end)
    return sorted(frames)
