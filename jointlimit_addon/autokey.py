"""Auto-keying of what the tools moved, as Blender's transform keys (Auto Keying and its mode,
*Only Insert Available*, *Only Active Keying Set*, Visual Keying, *Only Insert Needed*, Cycle-Aware
Keying)."""

import sys

import numpy as np

from . import animation, bone_limits, compat

ON_FRAME = 0.01     # a key this near a frame is on it (Blender's binary search threshold)


def autokey_enabled(context):
    return bool(context.scene.tool_settings.use_keyframe_insert_auto)


def autokey(context, pose_bones):
    """With Auto Keying on, key the rotation channel of each of ``pose_bones`` on the current
    frame, component by component as Blender's transform does: not a driven component, not into
    an action that cannot keep keys (a library's), and with *Only Insert Available* only the
    components that have an F-curve already; visual keys with Visual Keying (a bone with
    constraints), only keys that change the curve with the auto-keying *Only Insert Needed*, and
    within the cycle with Cycle-Aware Keying. With *Only Active Keying Set* and a keying set
    active, what that set keys instead (``keying_set_channels``; *Only Insert Available* does not
    apply there, as in Blender). In the *Replace* mode only a rig with a key on the current frame
    is keyed (``has_key_on_frame``), and then only the keys already there are replaced (with a
    keying set, as in Blender, whatever the set keys). Returns the pose bones whose rotation got
    a key ([] with Auto Keying off): the others' keys, if any, set their rotation again on the
    next frame."""
    if not autokey_enabled(context):
        return []
    tools = context.scene.tool_settings
    replace = tools.auto_keying_mode == "REPLACE_KEYS"
    if replace:
        frame = context.scene.frame_current + context.scene.frame_subframe
        on_frame = {rig for rig in {pb.id_data for pb in pose_bones} if has_key_on_frame(rig, frame)}
        pose_bones = [pb for pb in pose_bones if pb.id_data in on_frame]
    if not pose_bones:
        return []   # nothing moved (or nothing Replace may key): not even an absolute keying set's paths
    rotations = {}
    for pb in pose_bones:
        path, width = bone_limits.rotation_path(pb)
        rotations[pb.id_data, pb.path_from_id(path)] = pb, width
    active = context.scene.keying_sets_all.active
    if active is not None and tools.use_keyframe_insert_keyingset:
        channels = keying_set_channels(context, active, pose_bones)
        only = None
    else:
        options = _autokey_options(context)
        channels = [(owner, path, i, pb.name, options) for (owner, path), (pb, width) in rotations.items()
                    for i in range(width)]
        only = "ON_FRAME" if replace else "AVAILABLE" if context.preferences.edit.use_keyframe_insert_available else None
    if any("INSERTKEY_VISUAL" in options for *_, options in channels):
        context.view_layer.update()     # the visual transform of the pose just written
    keyed = _key_channels(channels, only, context.scene)
    return [rotations[key][0] for key in rotations if key in keyed]


def _autokey_options(context):
    """The ``keyframe_insert`` options of Blender's auto-keying outside keying sets (its
    ``get_autokey_flags``)."""
    edit, tools = context.preferences.edit, context.scene.tool_settings
    return {option for option, on in (("INSERTKEY_VISUAL", edit.use_visual_keying),
                                      ("INSERTKEY_NEEDED", edit.use_auto_keyframe_insert_needed),
                                      ("INSERTKEY_REPLACE", tools.auto_keying_mode == "REPLACE_KEYS"),
                                      ("INSERTKEY_CYCLE_AWARE", tools.use_keyframe_cycle_aware)) if on}


def has_key_on_frame(obj, frame):
    """Whether an unmuted F-curve of ``obj``'s action has a key on the scene frame ``frame`` (in
    NLA tweak mode, where the tweaked strip plays it): what the *Replace* auto-keying mode asks of
    a rig before it keys anything."""
    time = animation.action_time(obj, frame)
    return any(not fc.mute and _key_near(fc, time) for fc in animation.object_fcurves(obj))


def _key_near(fc, time):
    return key_index(fc, time) is not None


def key_index(fc, time):
    """The index of ``fc``'s key on the action's time ``time`` (within ``ON_FRAME``), or ``None``."""
    points = fc.keyframe_points
    co = np.empty(2 * len(points))
    points.foreach_get("co", co)
    near = np.flatnonzero(np.abs(co[0::2] - time) < ON_FRAME)
    return int(near[0]) if len(near) else None


def key_live_clamps(scene, objects, is_clamp_of):
    """Live Limits with Auto Keying: Blender's auto-keying keys the rotation a tool or a typed
    value gave the selected bones, and Live Limits clamp it in the update that follows. Each
    selected limited bone of ``objects`` whose rotation channel has keys on the current frame
    giving the rotation whose clamp the bone now shows (``is_clamp_of(pose_bone, limit, values)``)
    gets its channel keyed to its pose there: the keys on the frame take its values (handles moved
    with them, key types kept, as Blender replaces a key), and a component the clamp moved whose
    curve has no key there gets one, so that the keys give the pose Live Limits let the bone take.
    Returns how many bones were keyed."""
    done = 0
    for obj in objects:
        if obj.library is not None or not animation.keyable(obj) or animation.action_blended(obj):
            continue
        time = animation.action_time(obj, scene.frame_current_final)
        for name in animation.animated_limited_bones(obj):
            pb = obj.pose.bones[name]
            limit = bone_limits.cached_limit(pb.jointlimit)[0]
            if limit is not None and compat.pose_bone_selected(pb):
                done += _key_to_pose(pb, limit, time, is_clamp_of)
    return done


def _key_to_pose(pb, limit, time, is_clamp_of):
    """``key_live_clamps`` for one bone; 1 when it was keyed, else 0."""
    attr, width = bone_limits.rotation_path(pb)
    stored = tuple(getattr(pb, attr))
    channel = animation.rotation_fcurves(pb)
    at = {i: key_index(fc, time) for i, fc in channel.items()}
    if not any(k is not None for k in at.values()):
        return 0
    keyed = [channel[i].evaluate(time) if i in channel else stored[i] for i in range(width)]
    if not is_clamp_of(pb, limit, keyed):
        return 0
    tol = float(bone_limits.storage_tol(bone_limits.stored_magnitude(pb)))
    for i, fc in channel.items():
        if at[i] is not None:
            _move_key(fc.keyframe_points[at[i]], stored[i])
        elif abs(keyed[i] - stored[i]) > tol:
            fc.keyframe_points.insert(time, stored[i])
    return 1


def _move_key(point, value):
    """``point`` at ``value``, its handles moved with it (Blender's key replacement)."""
    delta = value - point.co.y
    point.co.y = value
    point.handle_left.y += delta
    point.handle_right.y += delta


def keying_set_channels(context, keying_set, pose_bones):
    """The channels ``(ID, data path, index, group, keyframe_insert options)`` that Blender's
    auto-keying keys with *Only Active Keying Set* when ``pose_bones`` moved: an absolute keying
    set's own paths, or those a relative one (Rotation, Whole Character, ...) generates for each
    bone, Blender's sources. None when the set's poll refuses the context (Blender then keys
    nothing; a poll that cannot run without an area, from a script, is taken as passed). A
    bone whose generator fails is skipped, named on the console, as Blender does."""
    if keying_set.is_path_absolute:
        return _path_channels(context, keying_set, list(keying_set.paths))
    info = keying_set.type_info
    if info is None or not _polls(info, context):
        return []
    paths = keying_set.paths
    paths.clear()   # a relative set's paths are made anew for each use (Blender clears them first too)
    try:
        for pb in pose_bones:
            try:
                info.generate(context, keying_set, pb)
            except Exception as exc:    # the keying set's own code (Python, any error)
                print(f"JointLimit: keying set '{keying_set.bl_label}' failed on bone '{pb.name}': {exc}",
                      file=sys.stderr)
        return _path_channels(context, keying_set, list(paths))
    finally:
        paths.clear()


def _polls(info, context):
    try:
        return bool(info.poll(context))
    except AttributeError:
        return context.area is None     # the builtin polls read context.area.type
    except Exception:
        return False


def _path_channels(context, keying_set, paths):
    channels = []
    for path in paths:
        if path.id is None:
            continue
        group = {"NAMED": path.group, "KEYINGSET": keying_set.bl_label}.get(path.group_method)
        try:
            value = path.id.path_resolve(path.data_path)
        except ValueError:
            continue    # a path to nothing
        if not path.use_entire_array:
            indices = (path.array_index,)
        else:
            indices = range(len(value)) if hasattr(value, "__len__") and not isinstance(value, str) else (-1,)
        options = _insert_options(context, keying_set, path)
        channels += [(path.id, path.data_path, i, group, options) for i in indices]
    return channels


def _insert_options(context, keying_set, path):
    """``Needed`` and ``Visual`` keying as the path, else the keying set, overrides them, else as
    the preferences say (the Visual keying sets key the visual transform); Cycle-Aware Keying as
    the scene says."""
    edit = context.preferences.edit
    options = {"INSERTKEY_CYCLE_AWARE"} if context.scene.tool_settings.use_keyframe_cycle_aware else set()
    for flag, option, preference in (("needed", "INSERTKEY_NEEDED", edit.use_keyframe_insert_needed),
                                     ("visual", "INSERTKEY_VISUAL", edit.use_visual_keying)):
        owner = next((o for o in (path, keying_set) if getattr(o, f"use_insertkey_override_{flag}")), None)
        if (getattr(owner, f"use_insertkey_{flag}") if owner is not None else preference):
            options.add(option)
    return options


def _key_channels(channels, only, scene):
    """Key each channel ``(ID, data path, index, group, options)`` on the current frame, its
    subframe included (index -1: a single value), as the scene's New Keyframe Type, but driven
    ones, those of an ID whose action cannot keep keys and, with ``only`` ``"AVAILABLE"``, those
    without an F-curve, with ``"ON_FRAME"`` those without a key on the frame (the *Replace* mode:
    asked of Blender, each would print a warning; with Cycle-Aware Keying Blender finds the key
    inside the cycle itself); the ``(ID, data path)`` keyed. The components kept of a whole array
    are keyed in one call, as Blender's transform does (one call each would print a warning per
    component *Only Insert Needed* leaves alone)."""
    keyed, known, calls = set(), {}, {}
    frame = scene.frame_current + scene.frame_subframe
    for owner, path, index, group, options in channels:
        if not hasattr(owner, "animation_data") or not animation.keyable(owner):
            continue
        if owner not in known:
            data = owner.animation_data
            driven = set() if data is None else {(fc.data_path, fc.array_index) for fc in data.drivers}
            curves = {(fc.data_path, fc.array_index): fc for fc in animation.object_fcurves(owner)}
            known[owner] = driven, curves, animation.action_time(owner, frame) if only == "ON_FRAME" else None
        driven, curves, time = known[owner]
        channel = (path, max(index, 0))
        if channel in driven or (only is not None and channel not in curves):
            continue
        if only == "ON_FRAME" and "INSERTKEY_CYCLE_AWARE" not in options and not _key_near(curves[channel], time):
            continue
        calls.setdefault((owner, path, group, frozenset(options)), []).append(index)
    keytype = scene.tool_settings.keyframe_type
    for (owner, path, group, options), indices in calls.items():
        for index in [-1] if _whole_array(owner, path, indices) else indices:
            try:
                done = owner.keyframe_insert(data_path=path, index=index, frame=frame, keytype=keytype,
                                             options=set(options), **({"group": group} if group else {}))
            except (TypeError, RuntimeError):
                continue    # not animatable (Blender's keying set skips it with a warning)
            if done:
                keyed.add((owner, path))
    return keyed


def _whole_array(owner, path, indices):
    """Whether ``indices`` are every component of the array property at ``path`` (or -1)."""
    if indices == [-1]:
        return True
    try:
        value = owner.path_resolve(path)
    except ValueError:
        return False
    return hasattr(value, "__len__") and sorted(indices) == list(range(len(value)))
