"""Reading keyframes of pose-bone channels, for layered (slotted) actions and legacy ones."""

import bisect
import math

import numpy as np

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


_components = {}    # Object.session_uid -> (what they were read from, {bone: {path: animated indices}} of partly animated paths)
_ROTATION_WIDTHS = {"rotation_quaternion": 4, "rotation_euler": 3, "rotation_axis_angle": 4}


def forget_components():
    """Read the animated rotation components again (keys or drivers may have been added or removed)."""
    _components.clear()


def held_components(obj):
    """``{bone name: held}`` for the limited bones of ``obj`` whose rotation channel (in the
    bone's mode) is animated in some components and not in others (an animator keyed only the
    X angle): ``held`` marks the components nothing animates (the action, its slot's NLA strips,
    drivers), whose posed values a playback frame's clamp starts from, so that the frame does not
    depend on the frames shown before (the clamp's values in them would stay). Read once per
    action, slot, count of its F-curves (and of each NLA strip's) and animation layout
    (``forget_components`` on any action update; a script's keys on channels that had none, right
    before a frame, come with no update but with F-curves added)."""
    data = obj.animation_data
    if data is None:
        return {}
    slot, action = data.action_slot, data.action
    stamp = (None if action is None else action.session_uid, None if slot is None else slot.identifier,
             compat.action_fcurve_count(action, slot), len(data.drivers),
             tuple((track.mute, track.is_solo, tuple(map(compat.strip_fcurve_count, track.strips)))
                   for track in data.nla_tracks))
    known = _components.get(obj.session_uid)
    if known is None or known[0] != stamp:
        known = _components[obj.session_uid] = (stamp, _partly_animated(obj, data))
    if not known[1]:
        return {}
    held = {}
    bones = obj.pose.bones
    for name, paths in known[1].items():
        pb = bones.get(name)
        if pb is None or not pb.jointlimit.enabled:
            continue
        path = _rotation_path_of(pb.rotation_mode)
        animated = paths.get(path)
        if animated is not None:
            held[name] = tuple(i not in animated for i in range(_ROTATION_WIDTHS[path]))
    return held


def _rotation_path_of(mode):
    return ("rotation_quaternion" if mode == "QUATERNION" else "rotation_axis_angle" if mode == "AXIS_ANGLE"
            else "rotation_euler")


def _partly_animated(obj, data):
    """``{bone: {rotation path: animated indices}}`` of the paths animated in some components only."""
    animated = _rotation_animation(obj, data)
    return {name: {path: frozenset(indices) for path, indices in paths.items() if len(indices) < _ROTATION_WIDTHS[path]}
            for name, paths in animated.items()
            if any(len(indices) < _ROTATION_WIDTHS[path] for path, indices in paths.items())}


def _rotation_animation(obj, data):
    """``{bone: {rotation path: animated indices}}``: what the action, the NLA strips that play and
    the drivers animate of the bones' rotation channels."""
    curves = [*data.drivers, *object_fcurves(obj)]
    for track in data.nla_tracks:
        if not track.mute or track.is_solo:
            for strip in track.strips:
                if strip.action is not None and not strip.mute:
                    curves += compat.strip_fcurves(strip)
    animated = {}
    for fc in curves:
        path = fc.data_path
        if not path.startswith('pose.bones["') or not path.endswith(tuple(_ROTATION_WIDTHS)):
            continue
        name, _, attr = path[len('pose.bones["'):].rpartition('"].')
        if attr in _ROTATION_WIDTHS:
            animated.setdefault(name.replace('\\"', '"'), {}).setdefault(attr, set()).add(fc.array_index)
    return animated


def channel_fcurves(obj, path, width=4):
    """``{component: F-curve}`` of the F-curves of ``obj``'s action animating ``path`` (a full data
    path, up to ``width`` components), muted ones included."""
    data = obj.animation_data
    if data is None or data.action is None:
        return {}
    found = ((i, compat.find_fcurve(data.action, data.action_slot, path, i)) for i in range(width))
    return {i: fc for i, fc in found if fc is not None}


def rotation_fcurves(pose_bone, muted=False):
    """``{component: F-curve}`` of the F-curves of the armature's action that key the bone's
    rotation channel (in its mode): the unmuted ones, or all of them with ``muted``."""
    from .bone_limits import rotation_path

    attr, width = rotation_path(pose_bone)
    curves = channel_fcurves(pose_bone.id_data, pose_bone.path_from_id(attr), width)
    return {i: fc for i, fc in curves.items() if muted or not fc.mute}


def locked(fc):
    """Whether the F-curve is locked, itself or its group: Blender keys nothing there."""
    return fc.lock or (fc.group is not None and fc.group.lock)


def driven_rotation(pose_bone):
    """Whether a driver (unmuted) sets a component of the bone's rotation channel (in its mode):
    the driver sets it again on every update, so no clamp and no key holds it."""
    from .bone_limits import rotation_path

    data = pose_bone.id_data.animation_data
    if data is None:
        return False
    attr, width = rotation_path(pose_bone)
    path = pose_bone.path_from_id(attr)
    return any((fc := data.drivers.find(path, index=i)) is not None and not fc.mute for i in range(width))


def repeated_tweak(obj):
    """The Repeat of the NLA strip tweaked on ``obj`` when it repeats its action (a key there plays
    in every repeat, and a scene frame past the first repeat has no single action time), else ``None``."""
    data = obj.animation_data
    if data is None or not data.use_tweak_mode:
        return None
    repeats = [strip.repeat for track in data.nla_tracks for strip in track.strips
               if strip.action == data.action and abs(strip.repeat - 1.0) > 1e-6]
    return repeats[0] if repeats else None


REPEATED_TWEAK = ("The NLA strip tweaked on {rig} repeats its action (Repeat {repeat:g}): its keys play in every "
                  "repeat, so they cannot take the frames of one; set its Repeat to 1, or leave tweak mode (a new "
                  "action then takes the keys on top)")


def repeated_tweak_message(objects):
    """``REPEATED_TWEAK`` (translated) for the first of ``objects`` tweaking a repeated strip, else ``None``."""
    import bpy

    for obj in objects:
        repeat = repeated_tweak(obj)
        if repeat is not None:
            return bpy.app.translations.pgettext_rpt(REPEATED_TWEAK).format(rig=repr(obj.name), repeat=repeat)
    return None


def fully_keyed(pose_bone):
    """Whether the armature's action keys every component of the bone's rotation channel (in its
    mode) with unmuted F-curves."""
    from .bone_limits import rotation_path

    return len(rotation_fcurves(pose_bone)) == rotation_path(pose_bone)[1]


def animated_limited_bones(obj):
    """Names of ``obj``'s limited bones whose rotation channel something animates (the action, an
    NLA strip that plays, a driver)."""
    data = obj.animation_data
    if data is None:
        return []
    bones = obj.pose.bones
    return [name for name in _rotation_animation(obj, data)
            if (pb := bones.get(name)) is not None and pb.jointlimit.enabled]


def frame_length(scene):
    """Scene time per frame: Time Stretching's Old / New (1 without), as Blender computes it (float32)."""
    render = scene.render
    return float(np.float32(render.frame_map_old) / np.float32(render.frame_map_new))


def scene_time(scene, frame):
    """The scene's time (``frame_current_final``: where the animation is evaluated) at ``frame``,
    a frame or a frame and subframe: ``frame`` itself unless Time Stretching is set."""
    length = frame_length(scene)
    return frame if length == 1.0 else float(np.float32(frame) * np.float32(length))


def _scene(scene):
    import bpy

    return bpy.context.scene if scene is None else scene


def _to_scene(obj, scene=None):
    """Key time -> scene frame: through the tweaked strip in NLA tweak mode (its start, scale and
    repeats), and Time Stretching's Old / New."""
    data = obj.animation_data
    to_time = data.nla_tweak_strip_time_to_scene if data is not None and data.use_tweak_mode else None
    length = frame_length(_scene(scene))
    if to_time is None and length == 1.0:
        return lambda time: time
    return lambda time: (time if to_time is None else to_time(time)) / length


def action_time(obj, time):
    """The action's time at the scene's time ``time`` (``scene_time``; through the tweaked strip in
    NLA tweak mode)."""
    data = obj.animation_data
    if data is not None and data.use_tweak_mode:
        return data.nla_tweak_strip_time_to_scene(time, invert=True)
    return time


def keyed_values(pose_bone, frame):
    """The values of ``pose_bone``'s rotation channel (in its mode) the armature's action gives at
    the scene's time ``frame`` (``scene_time``; in NLA tweak mode at the tweaked strip's time),
    components without an F-curve as posed; ``None`` when the action keys none of them."""
    from .bone_limits import rotation_path

    curves = rotation_fcurves(pose_bone)
    if not curves:
        return None
    time = action_time(pose_bone.id_data, frame)
    values = list(getattr(pose_bone, rotation_path(pose_bone)[0]))
    for i, fc in curves.items():
        values[i] = fc.evaluate(time)
    return values


def keyed_rotation(pose_bone, frame):
    """The rotation (unit quaternion) of ``keyed_values``; ``None`` when the action keys none of
    the bone's rotation channel, or not a rotation."""
    from .bone_limits import rotation_of_values

    values = keyed_values(pose_bone, frame)
    if values is None:
        return None
    try:
        return rotation_of_values(pose_bone.rotation_mode, values, pose_bone.name)
    except ValueError:
        return None


def action_blended(obj):
    """Whether the keys of ``obj``'s action are not the values they give: the action blended over
    the layers below it (Combine, Add, Subtract, Multiply, an influence below 1). In NLA tweak mode
    the tweaked strip blends it (``action_blend_type`` and ``action_influence`` then keep the
    action's own settings): any strip of that action that does not replace at full influence."""
    data = obj.animation_data
    if data is None:
        return False
    if data.use_tweak_mode:     # (a strip's influence counts only when animated; blend in/out lower it at its ends)
        return any(strip.action == data.action and (strip.blend_type != "REPLACE" or strip.blend_in > 0.0
                                                     or strip.blend_out > 0.0 or strip.use_animated_influence)
                   for track in data.nla_tracks for strip in track.strips)
    return data.action_blend_type != "REPLACE" or data.action_influence != 1.0


def action_times(obj, frames, scene=None):
    """The action's times of scene ``frames`` (``action_time`` of their ``scene_time``)."""
    scene = _scene(scene)
    return [action_time(obj, scene_time(scene, f)) for f in frames]


def remove_keys_between(pose_bone, data_path, frames, tol=1e-4, scene=None):
    """Remove the keys of the bone's channel ``data_path`` that lie between the first and the
    last of scene ``frames`` but on none of them (a key on a subframe): a bake or a motion keyed
    on ``frames`` replaces the animation there, and a key left between two of its keys would
    play its old value (outside the limits) on the way. Returns how many went."""
    obj = pose_bone.id_data
    times = sorted(action_times(obj, frames, scene))
    if len(times) < 2:
        return 0
    removed = 0
    for fc in channel_fcurves(obj, pose_bone.path_from_id(data_path)).values():
        if locked(fc):
            continue
        points = fc.keyframe_points
        doomed = [i for i, point in enumerate(points)
                  if times[0] < point.co[0] < times[-1] and not _near(times, point.co[0], tol)]
        for i in reversed(doomed):
            points.remove(points[i], fast=True)
        if doomed:
            fc.update()
            removed += len(doomed)
    return removed


def _near(times, t, tol):
    at = bisect.bisect_left(times, t)
    return any(abs(times[j] - t) <= tol for j in (at - 1, at) if 0 <= j < len(times))


def keyed_frames(obj, pose_bone, data_path, frame_start, frame_end, tol=1e-4, scene=None):
    """Sorted scene frames in [start, end] where any channel of the bone's ``data_path`` has a key
    (in NLA tweak mode, where the tweaked strip plays them; with Time Stretching, where the
    stretched time reaches them): whole frames as ``int`` (within ``tol``), a key between frames
    at its own time (``float``)."""
    full = pose_bone.path_from_id(data_path)
    to_scene = _to_scene(obj, scene)
    frames = set()
    for fc in channel_fcurves(obj, full).values():
        times = (to_scene(k.co[0]) for k in fc.keyframe_points)
        frames.update(_frame_or_time(t, tol) for t in times if frame_start - tol <= t <= frame_end + tol)
    return sorted(frames)


def _frame_or_time(t, tol):
    whole = round(t)
    return whole if abs(t - whole) <= tol else round(float(t), 4)


def set_scene_time(scene, time):
    """Evaluate ``scene`` at ``time``: a whole frame, or a frame and its subframe."""
    frame = math.floor(time)
    scene.frame_set(int(frame), subframe=float(time - frame))
