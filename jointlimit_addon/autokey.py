"""Auto-keying of what the tools moved, as Blender's transform keys (Auto Keying, *Only Insert
Available*, *Only Active Keying Set*)."""

from . import animation, bone_limits


def autokey_enabled(context):
    return bool(context.scene.tool_settings.use_keyframe_insert_auto)


def autokey(context, pose_bones):
    """With Auto Keying on, key the rotation channel of each of ``pose_bones`` on the current
    frame, component by component as Blender's transform does: not a driven component, not into
    an action that cannot keep keys (a library's), and with *Only Insert Available* only the
    components that have an F-curve already. With *Only Active Keying Set* and a keying set
    active, what that set keys instead (``keying_set_channels``). Returns the names of the bones
    keyed ([] with Auto Keying off)."""
    if not autokey_enabled(context):
        return []
    only_available = context.preferences.edit.use_keyframe_insert_available
    active = context.scene.keying_sets_all.active
    if active is not None and context.scene.tool_settings.use_keyframe_insert_keyingset:
        return _key_channels(keying_set_channels(context, active, pose_bones), only_available)
    channels = []
    for pb in pose_bones:
        path, width = bone_limits.rotation_path(pb)
        channels += [(pb.id_data, pb.path_from_id(path), i, pb.name, set()) for i in range(width)]
    return _key_channels(channels, only_available)


def keying_set_channels(context, keying_set, pose_bones):
    """The channels ``(ID, data path, index, group, keyframe_insert options)`` that Blender's auto-keying keys with
    *Only Active Keying Set* when ``pose_bones`` moved: an absolute keying set's own paths, or
    those a relative one (Rotation, Whole Character, ...) generates for each bone (Blender's
    auto-keying gives it the moved bones as its sources: its poll, which looks at the selection
    and the area, is not asked)."""
    if keying_set.is_path_absolute:
        return _path_channels(keying_set, list(keying_set.paths))
    info = keying_set.type_info
    if info is None:
        return []
    paths = keying_set.paths
    before = len(paths)
    try:
        for pb in pose_bones:
            info.generate(context, keying_set, pb)
        return _path_channels(keying_set, list(paths)[before:])
    finally:
        for path in list(paths)[before:]:     # (a relative set's paths are made for one use)
            paths.remove(path)


def _path_channels(keying_set, paths):
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
        channels += [(path.id, path.data_path, i, group, _insert_options(keying_set, path)) for i in indices]
    return channels


def _insert_options(keying_set, path):
    """``Needed`` and ``Visual`` keying as the path, else the keying set, overrides them (the
    Visual keying sets key the visual transform)."""
    options = set()
    for flag, option in (("needed", "INSERTKEY_NEEDED"), ("visual", "INSERTKEY_VISUAL")):
        owner = next((o for o in (path, keying_set) if getattr(o, f"use_insertkey_override_{flag}")), None)
        if owner is not None and getattr(owner, f"use_insertkey_{flag}"):
            options.add(option)
    return options


def _key_channels(channels, only_available):
    """Key each channel ``(ID, data path, index, group, options)`` on the current frame (index -1: a
    single value), but driven ones, those of an ID whose action cannot keep keys and, with
    ``only_available``, those without an F-curve; the names of the bones (or IDs) keyed."""
    keyed, known = {}, {}
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
            owner.keyframe_insert(data_path=path, index=index, options=options, **({"group": group} if group else {}))
        except (TypeError, RuntimeError):
            continue    # not animatable (Blender's keying set skips it with a warning)
        keyed.setdefault(_bone_name(path) or owner.name)
    return list(keyed)


def _bone_name(path):
    """The bone a ``pose.bones["name"]...`` data path names, else ``None``."""
    prefix = 'pose.bones["'
    if not path.startswith(prefix):
        return None
    end = path.find('"]', len(prefix))
    return path[len(prefix):end].replace('\\"', '"') if end > 0 else None
