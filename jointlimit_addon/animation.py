"""Reading keyframes of pose-bone channels, for layered (slotted) actions and legacy ones."""

from . import compat


def object_fcurves(obj):
    """All F-curves animating ``obj`` through its active action (and slot)."""
    data = obj.animation_data
    if data is None:
        return []
    return compat.action_fcurves(data.action, data.action_slot)


def _to_scene(obj):
    """Key time -> scene frame: through the tweaked strip in NLA tweak mode (its start, scale and
    repeats), else the same."""
    data = obj.animation_data
    if data is not None and data.use_tweak_mode:
        return data.nla_tweak_strip_time_to_scene
    return lambda frame: frame


def keyed_frames(obj, pose_bone, data_path, frame_start, frame_end):
    """Sorted whole scene frames in [start, end] where any channel of the bone's ``data_path`` has
    a key (in NLA tweak mode, the frames where the tweaked strip plays them)."""
    full = f'pose.bones["{pose_bone.name}"].{data_path}'
    to_scene = _to_scene(obj)
    frames = set()
    for fc in object_fcurves(obj):
        if fc.data_path == full:
            times = (to_scene(k.co[0]) for k in fc.keyframe_points)
            frames.update(round(t) for t in times if frame_start <= t <= frame_end)
    return sorted(frames)
