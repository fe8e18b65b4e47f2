"""Reading keyframes of pose-bone channels, for layered (slotted) actions and legacy ones."""

from . import compat


def object_fcurves(obj):
    """All F-curves animating ``obj`` through its active action (and slot)."""
    data = obj.animation_data
    if data is None:
        return []
    return compat.action_fcurves(data.action, data.action_slot)


UNKEYABLE = ("The action {action} of {rig} comes from a library (linked or overridden) and cannot keep keys: "
             "make it local first (Make Local, or give the rig an action of its own)")


def keyable(obj):
    """Whether keys can go into ``obj``'s action (none yet: the first key makes one). A linked
    action is not editable (``keyframe_insert`` skips it with a console warning, and what a script
    writes into it is lost on save); an override of one takes keys that the save drops (its keys
    are the library's)."""
    data = obj.animation_data
    action = None if data is None else data.action
    return action is None or action.is_editable and action.override_library is None


def unkeyable_message(objects):
    """The error for the first of ``objects`` whose action cannot keep keys (``UNKEYABLE``,
    translated), else ``None``."""
    import bpy

    obj = next((o for o in objects if not keyable(o)), None)
    if obj is None:
        return None
    return bpy.app.translations.pgettext_rpt(UNKEYABLE).format(action=repr(obj.animation_data.action.name),
                                                               rig=repr(obj.name))


def animated_rotations(obj, pose_bones):
    """Names of ``pose_bones`` whose rotation channel (in the bone's mode) the active action keys or
    a driver drives: a pose written into them is evaluated away on the next frame change, and
    when the file opens."""
    from .bone_limits import rotation_path

    data = obj.animation_data
    if data is None:
        return []
    paths = {fc.data_path for fc in data.drivers} | {fc.data_path for fc in object_fcurves(obj)}
    return [pb.name for pb in pose_bones if f'pose.bones["{pb.name}"].{rotation_path(pb)[0]}' in paths]


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
