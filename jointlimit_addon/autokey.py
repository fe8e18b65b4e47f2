"""Auto-keying of what the tools moved, as Blender's transform keys (Auto Keying, *Only Insert
Available*, *Only Active Keying Set*)."""

import sys

from . import animation, bone_limits


def autokey_enabled(context):
    return bool(context.scene.tool_settings.use_keyframe_insert_auto)


def autokey(context, pose_bones):
    """With Auto Keying on, key the rotation channel of each of ``pose_bones`` on the current
    frame, component by component as Blender's transform does: not a driven component, not into
    an action that cannot keep keys (a library's), and with *Only Insert Available* only the
    components that have an F-curve already. With *Only Active Keying Set* and a keying set
    active, what that set keys instead (``keying_set_channels``; *Only Insert Available* does not
    apply there, as in Blender). Returns the names of the bones whose rotation got a key ([] with
    Auto Keying off): the others' keys, if any, set their rotation again on the next frame."""
    if not autokey_enabled(context):
        return []
    rotations = {}
    for pb in pose_bones:
        path, width = bone_limits.rotation_path(pb)
        rotations[pb.id_data, pb.path_from_id(path)] = pb.name, width
    active = context.scene.keying_sets_all.active
    if active is not None and context.scene.tool_settings.use_keyframe_insert_keyingset:
        channels = keying_set_channels(context, active, pose_bones)
        if any("INSERTKEY_VISUAL" in options for *_, options in channels):
            context.view_layer.update()     # the visual transform of the pose just written
        keyed = _key_channels(channels, only_available=False)
    else:
        channels = [(owner, path, i, name, set()) for (owner, path), (name, width) in rotations.items()
                    for i in range(width)]
        keyed = _key_channels(channels, context.preferences.edit.use_keyframe_insert_available)
    return [rotations[key][0] for key in rotations if key in keyed]


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
    the preferences say (the Visual keying sets key the visual transform)."""
    edit = context.preferences.edit
    options = set()
    for flag, option, preference in (("needed", "INSERTKEY_NEEDED", edit.use_keyframe_insert_needed),
                                     ("visual", "INSERTKEY_VISUAL", edit.use_visual_keying)):
        owner = next((o for o in (path, keying_set) if getattr(o, f"use_insertkey_override_{flag}")), None)
        if (getattr(owner, f"use_insertkey_{flag}") if owner is not None else preference):
            options.add(option)
    return options


def _key_channels(channels, only_available):
    """Key each channel ``(ID, data path, index, group, options)`` on the current frame (index -1:
    a single value), but driven ones, those of an ID whose action cannot keep keys and, with
    ``only_available``, those without an F-curve; the ``(ID, data path)`` keyed."""
    keyed, known = set(), {}
    for owner, path, index, group, options in channels:
        if not hasattr(owner, "animation_data") or not animation.keyable(owner):
            continue
        if owner not in known:
            data = owner.animation_data
            driven = set() if data is None else {(fc.data_path, fc.array_index) for fc in data.drivers}
            curves = {(fc.data_path, fc.array_index) for fc in animation.object_fcurves(owner)}
            known[owner] = driven, curves
        driven, curves = known[owner]
        channel = (path, max(index, 0))
        if channel in driven or (only_available and channel not in curves):
            continue
        try:
            done = owner.keyframe_insert(data_path=path, index=index, options=options,
                                         **({"group": group} if group else {}))
        except (TypeError, RuntimeError):
            continue    # not animatable (Blender's keying set skips it with a warning)
        if done:
            keyed.add((owner, path))
    return keyed
