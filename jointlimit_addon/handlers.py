"""Live limits: app handlers that keep limited bones inside their limits.

``depsgraph_update_post`` clamps bones whose rotation changed since the handler last saw them
(posing with R, trackball, typed values); ``frame_change_post`` clamps every limited bone on each
frame when playback clamping is on, except during playback on the armatures that the playback
layer covers (``playback_layer``: Blender evaluates their clamped rotations itself, installed and
removed by the ``frame_change_pre`` and ``animation_playback_pre``/``_post`` handlers, also
outside playback with Fast Scrubbing, where ``frame_change_post`` clamps what the layer did not
on that frame (bones without keys, rigs it does not cover); while the layer leaves it nothing
(during playback: it covers every limited armature; outside playback: every limited bone keyed
and the frame took the layer's keys), ``frame_change_post`` looks no further until something
changes, ``_quiet_key``;
``render_init`` to ``render_complete`` or ``_cancel`` the layer steps aside; a render's or an
export's frames, evaluated in a depsgraph of their own, take the render's way,
``_clamp_render_frame``). Both are
cheap when nothing changed, never recurse (writing a rotation triggers one more update, which finds
nothing to do), and are removed on unregister. ``depsgraph_update_post`` then lets the deformer
check that nothing else deforms its two-bone vertices now (``deformer.check_updates``).

The handlers work on whole armatures at once (``live_pose.clamp_armature``); an update that
touched no armature (and no limit setting) returns at once. ``clamp_object_per_bone`` is the
earlier bone-by-bone path, kept as the reference the array path is tested against.
"""

import sys
import threading

import bpy

from . import animation, autokey, bone_limits, deformer, live_pose, playback_layer, props, settings_io
from .core import quat

_state = {"busy": False, "live": False, "generation": None, "warned": False,
          "quiet": None,    # a frame's _quiet_key when the playback clamp found nothing of its own to clamp
          "imported": False}    # a library reloaded or data linked since the last update or frame
# (object name, bone name) -> (settings signature, rotation tuple) when last seen (per-bone path)
_cache = {}
_MAIN_THREAD = threading.main_thread().ident


def on_main_thread():
    """Whether this is the main thread, not a render's (its ident: cheaper than the thread
    objects, on every frame)."""
    return threading.get_ident() == _MAIN_THREAD


_raw_rotation = live_pose.raw_rotation
_unit_quaternion = live_pose.unit_quaternion


def clamp_object_per_bone(obj, only_changed, skip=None):
    """Clamp the limited bones of one armature bone by bone; returns how many were written.

    The reference for ``clamp_object`` (same results, one bone at a time)."""
    written = 0
    for pb in obj.pose.bones:
        settings = pb.jointlimit
        if not settings.enabled or (skip and pb.name in skip):
            continue
        raw = _raw_rotation(pb)
        signature = bone_limits.signature(settings)
        key = (obj.name, pb.name)
        entry = _cache.get(key)
        if only_changed and entry is not None and entry[0] == signature and entry[1] == raw:
            continue
        limit = bone_limits.cached_limit(settings, signature)[0]  # None: invalid, the panel says why
        q = _unit_quaternion(pb, raw) if limit is not None else None
        if q is not None:
            clamped = limit.clamp(q)
            tol = float(bone_limits.storage_tol(bone_limits.stored_magnitude(pb)))
            if any(abs(a - b) > tol for a, b in zip(clamped, q)):
                bone_limits.write_rotation(pb, clamped)
                written += 1
                raw = _raw_rotation(pb)
        _cache[key] = (signature, raw)
    return written


def clamp_object(obj, only_changed, skip=None):
    """Clamp the limited bones of one armature (all at once), but those named in ``skip``; returns
    how many were written. A frame's clamp (not ``only_changed``: the pose comes from the
    animation) clamps a partly animated bone from its animated components and the values the
    animator posed in the others (``_clamp_held``): taken from the stored pose, they would carry
    one frame's correction into the next frames."""
    held = {} if only_changed else animation.held_components(obj)
    if not held:
        return live_pose.clamp_armature(obj, only_changed, skip)
    return live_pose.clamp_armature(obj, only_changed, _with_held(skip, held)) + _clamp_held(obj, held, skip)


_unions = {}    # (held bone names, skip) -> the set of both, one object per pair (live_pose keeps its mask per set)


def _with_held(skip, held):
    key = (tuple(held), skip)
    found = _unions.get(key)
    if found is None:
        if len(_unions) > 64:
            _unions.clear()
        found = _unions[key] = frozenset(held) | (skip or frozenset())
    return found


# (armature session_uid, bone) -> (rotation mode, held components, the animator's values of those
# components, the values a frame's clamp left in them, every value it left)
_posed = {}


def _clamp_held(obj, held, skip):
    """Clamp the partly animated bones ``held`` (``animation.held_components``) one by one: the
    rotation of their animated components (the frame's) and of the values the animator posed in
    the others, remembered while the stored ones are those a frame's clamp wrote (changed since,
    they are the animator's again); returns how many were written."""
    written = 0
    for name, components in held.items():
        if skip and name in skip:
            continue
        pb = obj.pose.bones[name]
        limit = bone_limits.cached_limit(pb.jointlimit)[0]
        if limit is None:
            continue
        attr, _ = bone_limits.rotation_path(pb)
        mode, stored = pb.rotation_mode, tuple(getattr(pb, attr))
        key = (obj.session_uid, name)
        known = _posed.get(key)
        if known is not None and known[:2] == (mode, components) and stored == known[4]:
            continue    # as this clamp left it: no frame evaluated since (clamped again, it would move on)
        posed = _held_part(stored, components)
        if known is not None and known[:2] == (mode, components) and posed == known[3]:
            posed = known[2]    # what a frame's clamp left: the animator's values are remembered
        values = tuple(v if not h else p for v, h, p in zip(stored, components, _spread(posed, components)))
        out = _clamped_values(pb, limit, mode, values)
        if out != stored:
            setattr(pb, attr, out)
            out = tuple(getattr(pb, attr))      # as stored (float32)
            written += 1
        if len(_posed) > 4096:
            _posed.clear()
        _posed[key] = (mode, components, posed, _held_part(out, components), out)
    return written


def _held_part(values, components):
    return tuple(v for v, h in zip(values, components) if h)


def _spread(part, components):
    """``part`` (the held components' values) laid out over every component (``None`` elsewhere)."""
    it = iter(part)
    return [next(it) if h else None for h in components]


def _clamped_values(pb, limit, mode, values):
    """The values to store for a bone whose channel holds ``values``: themselves when inside (or
    not a rotation), else the clamped rotation next to them (``bone_limits.values_for_mode``)."""
    try:
        q = bone_limits.rotation_of_values(mode, values, pb.name)
    except ValueError:
        return values
    if bone_limits.is_inside(limit, q, bone_limits.storage_tol(max(map(abs, values)) if mode != "QUATERNION" else 0.0)):
        return values
    return tuple(bone_limits.values_for_mode(mode, limit.clamp(q), values)[1])


def restore_posed(scene):
    """Clamp Playback switched off: the partly animated bones of ``scene`` get back the values the
    animator posed in their components nothing animates, where a frame's clamp left its own."""
    for obj in _armatures(scene):
        for (uid, name), (mode, components, posed, left, _) in list(_posed.items()):
            pb = obj.pose.bones.get(name) if uid == obj.session_uid else None
            if pb is None or pb.rotation_mode != mode:
                continue
            attr, _ = bone_limits.rotation_path(pb)
            stored = tuple(getattr(pb, attr))
            if len(stored) == len(components) and _held_part(stored, components) == left:
                setattr(pb, attr, tuple(v if not h else p for v, h, p in zip(stored, components,
                                                                               _spread(posed, components))))
            del _posed[(uid, name)]


def show_keyed(scene):
    """Clamp Playback switched off: each limited bone whose stored values are the clamp's of what
    its keys give on the frame shown gets its keys' values back now (they stayed clamped until the
    frame changed; before ``restore_posed`` gives a partly animated bone its posed values in the
    other components); a bone posed since, or not animated by its action alone (blended over an
    NLA layer), keeps its values. (The playback layer goes on the next frame: removing it now
    would evaluate the animation again, and the pose of every keyed channel with it.)"""
    frame = scene.frame_current_final
    for obj in _armatures(scene):
        if obj.library is not None or obj.animation_data is None or animation.action_blended(obj):
            continue
        for pb in obj.pose.bones:
            limit = bone_limits.cached_limit(pb.jointlimit)[0] if pb.jointlimit.enabled else None
            keyed = None if limit is None else animation.keyed_values(pb, frame)
            if keyed is None:
                continue
            attr, _ = bone_limits.rotation_path(pb)
            stored = tuple(getattr(pb, attr))
            known = _posed.get((obj.session_uid, pb.name))
            if known is not None and known[0] == pb.rotation_mode:    # partly animated: as the clamp left it?
                if stored == known[4]:
                    setattr(pb, attr, keyed)
            elif _is_clamp_of(pb, limit, keyed):
                setattr(pb, attr, keyed)


def owner_bone(obj, settings, active=None):
    """The pose bone of ``obj`` whose limit settings (or one of whose outline vertices) are
    ``settings`` (Blender makes no data path for them), looked for in ``active`` first; ``None``."""
    address = settings.as_pointer()
    known = _owners.get(address)
    bones = obj.pose.bones
    candidates = [bones.get(known)] if known is not None else []
    if active is not None and active.id_data == obj:
        candidates.append(active)
    for pb in (*candidates, *bones):
        own = None if pb is None else pb.jointlimit
        if own is not None and (own.as_pointer() == address or any(p.as_pointer() == address for p in own.outline)):
            if len(_owners) > 4096:
                _owners.clear()
            _owners[address] = pb.name
            return pb
    return None


_owners = {}    # address of limit settings (or of an outline vertex) -> name of the bone last found holding them


def show_limit_edit(settings, scene, active=None):
    """Clamp Playback on, a bone's limit edited (``settings``: its ``JointLimitSettings`` or an
    outline vertex of them; ``active``: the active pose bone, looked at first): a bone keyed in
    every component of its rotation whose pose shows its keys, inside the limit as it was
    or clamped by it, shows them clamped by the edited limit now (their own values when the limit
    is switched off or invalid), as the next frame change would show them; a bone posed since
    keeps its pose."""
    obj = settings.id_data
    if not isinstance(obj, bpy.types.Object) or obj.pose is None or obj.library is not None or \
            obj.animation_data is None or animation.action_blended(obj):
        return
    pb = owner_bone(obj, settings, active)
    if pb is None or not animation.fully_keyed(pb):
        return      # (a partly keyed bone: its posed components are the frame clamp's business)
    keyed = animation.keyed_values(pb, scene.frame_current_final)
    attr, _ = bone_limits.rotation_path(pb)
    stored = tuple(getattr(pb, attr))
    key = (obj.session_uid, pb.name)
    shown = [limit for limit in (live_pose.limit_seen(obj, pb.name), playback_layer.covered_limit(obj, pb.name),
                                 _edit_shown.get(key)) if limit is not None]
    if not (_shows(pb, keyed) or any(_is_clamp_of(pb, limit, keyed) for limit in shown)):
        return
    limit = bone_limits.cached_limit(pb.jointlimit)[0] if pb.jointlimit.enabled else None
    values = tuple(keyed) if limit is None else _clamped_values(pb, limit, pb.rotation_mode, tuple(keyed))
    if values != stored:
        setattr(pb, attr, values)
    if len(_edit_shown) > 256:
        _edit_shown.clear()
    _edit_shown[key] = limit


_edit_shown = {}    # (armature session_uid, bone) -> the limit ``show_limit_edit`` showed its keys with


def _shows(pb, values):
    """Whether the bone's stored rotation is the rotation ``values`` give (as stored, float32)."""
    seen = _stored_and_given(pb, values)
    return seen is not None and quat.angle_between(seen[1], seen[0]) <= seen[2]


def _is_clamp_of(pb, limit, values):
    """Whether the bone's stored rotation is the clamp of the rotation ``values`` give (as stored,
    float32), and not that rotation itself."""
    seen = _stored_and_given(pb, values)
    if seen is None:
        return False
    stored, q, tol = seen
    return quat.angle_between(q, stored) > tol and quat.angle_between(limit.clamp(q), stored) <= tol


def _stored_and_given(pb, values):
    """``(stored rotation, rotation values give, float32 storage tolerance)`` of the bone, or
    ``None`` when either is not a rotation."""
    try:
        q = bone_limits.rotation_of_values(pb.rotation_mode, values, pb.name)
        stored = bone_limits.read_rotation(pb)
    except ValueError:
        return None
    return stored, q, bone_limits.storage_tol(bone_limits.stored_magnitude(pb))


_scene_armatures = {}   # scene name (and view layer name) -> (object count, names of its armatures)


def _armatures(scene, view_layer=None):
    """The armature objects of ``scene``, or of ``view_layer`` only (the objects a frame's
    depsgraph evaluates: Rigify's widgets sit in an excluded collection); remembered while the
    object count stays the same and no update or frame saw objects linked or unlinked
    (``_relinked``; a rig's scene often holds many more objects than armatures)."""
    if view_layer is None:
        objects_of, lookup, key = scene.objects, bpy.data.objects, scene.name
    else:
        objects_of = lookup = view_layer.objects
        key = (scene.name, view_layer.name)
    count = len(objects_of)
    known = _scene_armatures.get(key)
    if known is not None and known[0] == count:
        objects = [lookup.get(name) for name in known[1]]
        if all(o is not None and o.type == "ARMATURE" for o in objects):
            return [o for o in objects if o.pose is not None]
    objects = [o for o in objects_of if o is not None and o.type == "ARMATURE"]   # (None: removed, not yet resynced)
    _scene_armatures[key] = (count, [o.name for o in objects])
    return [o for o in objects if o.pose is not None]


def scene_armatures(scene):
    """The armature objects of ``scene`` (``_armatures``, remembered while the count stays)."""
    return _armatures(scene)


def view_layer_armatures(scene):
    """The armature objects of ``scene``'s view layers, each once (``_armatures``, remembered
    while the counts stay): those its frames evaluate and the playback clamp clamps. A rig shown
    only through a collection instance (its collection excluded, as File > Link instances one) is
    in none: no way clamps it, in the viewport or in a render."""
    found = {}
    for view_layer in scene.view_layers:
        for obj in _armatures(scene, view_layer):
            found.setdefault(obj.session_uid, obj)
    return list(found.values())


def _updated_armatures(depsgraph):
    """Armature objects the update touched (their pose, transform or data); ``None`` when the
    handlers must look at every armature (settings changed, live limits just turned on)."""
    if _state["generation"] != props.settings_generation() or not _state["live"]:
        return None
    objects = []
    for update in depsgraph.updates:
        data = update.id
        if isinstance(data, bpy.types.Object) and data.type == "ARMATURE":
            objects.append(data.original)
        elif isinstance(data, bpy.types.Armature) and update.is_updated_geometry:
            live_pose.recheck_bones()   # posing updates the data too; Edit Mode changes bones
    return objects


def clamp_scene(scene, only_changed, depsgraph=None, view_layer=None, stepped=False):
    """Clamp the armatures of ``scene`` (with ``depsgraph``: only those its update touched; with
    ``view_layer``: those of that view layer), but those the playback layer covers while ``scene``
    plays. (On a frame ``stepped`` outside playback the layer's keys brought a covered rig's keyed
    bones inside, and this clamps the rest: bones without keys, or turned by something else.)"""
    if _state["busy"]:
        return 0
    _state["busy"] = True
    try:
        objects = None if depsgraph is None else _updated_armatures(depsgraph)
        _state["generation"] = props.settings_generation()
        if objects is None:
            objects = _armatures(scene, view_layer)
        if playback_layer.plays(scene):
            objects = [obj for obj in objects if not playback_layer.covers(obj, scene)]
        elif stepped and playback_layer.is_installed():     # Fast Scrubbing
            return sum(clamp_object(obj, only_changed, playback_layer.clamped_bones(obj, scene))
                       for obj in objects if obj.pose is not None)
        return sum(clamp_object(obj, only_changed) for obj in objects if obj.pose is not None)
    finally:
        _state["busy"] = False


@bpy.app.handlers.persistent
def on_depsgraph_update(scene, depsgraph=None):
    _after_import()
    _state["quiet"] = None      # objects, bones or settings may have changed
    if depsgraph is not None and _relinked(depsgraph):
        _scene_armatures.clear()
    animated = False    # keys edited (or a file opened): the pose shown is the animation's again
    if depsgraph is not None and not evaluates_apart(depsgraph):    # an export's evaluations edit nothing
        animated = depsgraph.id_type_updated("ACTION")
        if animated:
            animation.forget_components()
        playback_layer.check_updates(depsgraph)
    written = 0
    if animated and scene.jointlimit.clamp_playback:
        written = clamp_scene(scene, only_changed=False, depsgraph=depsgraph)     # as a frame is clamped
    if scene.jointlimit.live:
        written += clamp_scene(scene, only_changed=True, depsgraph=depsgraph)
        if written and animated and scene.tool_settings.use_keyframe_insert_auto:
            autokey.key_live_clamps(scene, _armatures(scene), _is_clamp_of)     # the keys auto-keying just made
        _state["live"] = True
    else:
        _state["live"] = False
        live_pose.recheck_bones()   # unseen edits while off: check before the next pass
    if depsgraph is not None:
        deformer.check_updates(depsgraph)


@bpy.app.handlers.persistent
def on_depsgraph_update_pre(scene, *_args):
    if on_main_thread():
        playback_layer.before_update(scene)


@bpy.app.handlers.persistent
def on_undo_or_load(*_args, loaded=False):
    """Settings and poses come back from the file or the undo step: regroup everything."""
    _state["quiet"] = None
    _scene_armatures.clear()
    live_pose.invalidate()
    animation.forget_components()
    props.settings_changed()
    playback_layer.forget(loaded)
    playback_layer.remove_leftovers()


@bpy.app.handlers.persistent
def on_blend_import_pre(context=None, *_args):
    """A library about to be reloaded or relocated (or data linked or appended): the settings of
    linked rigs and of overrides will come from the library file again, with no update callback.
    Everything is regrouped after it (``_after_import``: ``blend_import_post``, which Blender 4.5
    does not call for a reload, or else the next update or frame). A file only looked into (a
    ``bpy.data.libraries.load`` that takes nothing) imports no item: nothing to regroup (during
    playback the layer would be built anew)."""
    if context is None or len(context.import_items):
        _state["imported"] = True


@bpy.app.handlers.persistent
def on_blend_import_post(*_args):
    _after_import()


def _after_import():
    if _state["imported"] and on_main_thread():
        _state["imported"] = False
        on_undo_or_load()


@bpy.app.handlers.persistent
def on_load(*_args):
    on_undo_or_load(loaded=True)
    _state["warned"] = False
    for scene in bpy.data.scenes:   # a file saved before Clamp Playback switched Lock Interface on with it
        if scene.jointlimit.clamp_playback and not scene.render.use_lock_interface and scene.library is None:
            scene.render.use_lock_interface = True
    scene, view_layer = bpy.context.scene, bpy.context.view_layer
    if scene is not None and view_layer is not None and scene.jointlimit.clamp_playback:
        view_layer.update()     # the pose the animation gives the frame shown, clamped as a frame is
        clamp_scene(scene, only_changed=False, view_layer=view_layer)


@bpy.app.handlers.persistent
def on_frame_change_pre(scene, *_args):
    if on_main_thread():     # not a render's thread
        _after_import()
        playback_layer.before_frame(scene)


@bpy.app.handlers.persistent
def on_render_init(*_args):
    playback_layer.render_started()
    _said_unclamped.clear()


@bpy.app.handlers.persistent
def on_render_end(*_args):
    playback_layer.render_ended()


@bpy.app.handlers.persistent
def on_playback_start(scene, *_args):
    playback_layer.playback_started(scene)


@bpy.app.handlers.persistent
def on_playback_stop(scene, *_args):
    playback_layer.playback_stopped(scene)


def unsafe_render(scene, main=None):
    """Whether this frame is rendered from the interface without Lock Interface: Blender then
    calls the frame handlers from its render thread while the interface goes on evaluating the
    viewport, and a handler that changes data can crash Blender (its note on altering data from
    handlers). A render in the foreground (``blender -b``, ``render.render()`` from a script)
    runs on the main thread. ``main``: whether this is the main thread, if known."""
    if main is None:
        main = on_main_thread()
    return not main and not scene.render.use_lock_interface


def evaluates_apart(depsgraph, view_layer=None):
    """Whether ``depsgraph`` is not its view layer's own but one made to evaluate frames apart:
    a render's, or an export's (Alembic and USD evaluate each frame in a depsgraph of their own,
    in Render or Viewport mode). Such a depsgraph writes nothing it animated back to the pose the
    playback clamp reads, and has copies of the actions of its own. (A view layer's own depsgraph
    is never in Render mode: the identity alone tells.) ``view_layer``: ``depsgraph.view_layer``,
    if read already."""
    return depsgraph != (depsgraph.view_layer if view_layer is None else view_layer).depsgraph


@bpy.app.handlers.persistent
def on_frame_change(scene, depsgraph=None):
    # (every frame of playback passes here: each property read counts, so each is read once)
    view_layer = None if depsgraph is None else depsgraph.view_layer
    apart = view_layer is not None and evaluates_apart(depsgraph, view_layer)
    main = on_main_thread()
    uid = scene.session_uid
    if view_layer is not None and not apart and main:
        playback_layer.after_frame(scene, depsgraph, uid)
    unsafe = unsafe_render(scene, main)
    if not scene.jointlimit.clamp_playback:
        if apart and not unsafe:
            for obj in _armatures(scene, view_layer):     # keys an earlier render wrote
                if playback_layer.unkey_render_copy(depsgraph, obj):
                    obj.update_tag(refresh={"TIME"})
        return
    if unsafe:
        if not _state["warned"]:
            print("JointLimit: Clamp Playback leaves this render (or export) unclamped: switch on Render > Lock "
                  "Interface (changing the pose from the render thread could crash Blender)", file=sys.stderr)
        _state["warned"] = True
        return
    if depsgraph is not None and _relinked(depsgraph):
        _scene_armatures.clear()        # objects linked, unlinked or excluded in this evaluation
        _state["quiet"] = None
    if apart:
        _clamp_render_frame(scene, depsgraph, view_layer)
        return
    quiet = _quiet_key(scene, view_layer, uid)
    if quiet is not None and quiet == _state["quiet"]:
        return
    clamp_scene(scene, only_changed=False, view_layer=view_layer, stepped=True)
    if quiet is not None and all(_left_to_layer(obj, scene, stepped=quiet[-1]) for obj in _armatures(scene, view_layer)):
        _state["quiet"] = quiet


def _clamp_render_frame(scene, depsgraph, view_layer):
    """A render's frame. Its depsgraph writes nothing it animated back to the pose the playback
    clamp reads and writes (only the interface's depsgraph does), so the keyed limited bones take
    the playback layer's way (``playback_layer.key_render_frame``: the frame's clamped values as
    keys in the render's own copy of the action), and the pose stored in each rig is clamped as
    always. A rig either changed has its animation evaluated again (a ``TIME`` tag): the render's
    second pass then takes every animated value from the animation, none from the stored pose."""
    if _state["busy"]:
        return
    _state["busy"] = True
    try:
        objects = [obj for obj in _armatures(scene, view_layer) if obj.pose is not None]
        keyed = playback_layer.key_render_frame(depsgraph, objects)
        for obj in objects:
            if clamp_object(obj, only_changed=False) or obj.session_uid in keyed:
                obj.update_tag(refresh={"TIME"})
        left = set(playback_layer.unclamped_rigs())
        _warn_unclamped([obj for obj in objects if obj.name in left])
    finally:
        _state["busy"] = False


_said_unclamped = set()     # rig names a render's warning named (once a render: ``on_render_init`` empties it)


def _warn_unclamped(objects):
    """Say once a render which rigs with animated limited bones it renders unclamped (the render
    could not key their animation: ``playback_layer.key_render_frame``), as the viewport shows
    them clamped."""
    names = [obj.name for obj in objects if obj.name not in _said_unclamped and animation.animated_limited_bones(obj)]
    if names:
        _said_unclamped.update(names)
        print(f"JointLimit: Clamp Playback leaves the animation of {', '.join(names)} unclamped in this render (an "
              f"NLA track plays, rigs share an action with different limits, or a driver sets a limited bone's "
              f"rotation): bake their limits into the keys "
              f"first (Bake Joint Limits)", file=sys.stderr)


def _relinked(depsgraph):
    """Whether this evaluation saw objects linked, unlinked or excluded (collections or the scene
    updated; a plain frame updates neither): the remembered armature lists may be wrong."""
    return depsgraph.id_type_updated("COLLECTION") or depsgraph.id_type_updated("SCENE")


def _quiet_key(scene, view_layer, uid):
    """While the playback layer serves a view layer's frames: what tells that the playback clamp
    has nothing to do again when it had nothing on the frame before (``_left_to_layer``). Another
    layer, objects added or removed, limits edited, or playback started or stopped change it; any
    depsgraph update forgets it (``on_depsgraph_update``), and so does a frame whose evaluation
    saw objects linked, unlinked or excluded (``_relinked``: a swap keeps the count). Outside
    playback (Fast Scrubbing) only a frame that took the layer's latest keys in every rig it
    covers has one. ``None`` otherwise. ``uid``: the scene's ``session_uid``."""
    serial = playback_layer.installed_serial()
    if serial is None or view_layer is None:
        return None
    if playback_layer.plays(scene, uid):
        stepped = False
    elif playback_layer.shown_everywhere(uid):
        stepped = True
    else:
        return None
    return serial, uid, view_layer.name, len(view_layer.objects), props.settings_generation(), stepped


def _left_to_layer(obj, scene, stepped):
    """Whether the playback clamp leaves ``obj`` to the playback layer on this frame: it has no
    limited bone, or the layer covers it, while playing wholly, and outside playback (``stepped``)
    as far as the frame took the layer's keys: every limited bone keyed (a bone without keys, or
    partly keyed, is the playback clamp's on each frame)."""
    if live_pose.found_no_limits(obj):
        return True
    if not stepped:
        return playback_layer.covers(obj, scene)
    return live_pose.skips_every_bone(obj, playback_layer.clamped_bones(obj, scene))


@bpy.app.handlers.persistent
def on_save_pre(*_args):
    """Every pose bone of the file's own armatures holds its limit settings as stored data, also
    at their defaults: a shot that links the rig and overrides it can then keep a limit switched
    on there (Blender records no override of settings its library file never stored, and the
    shot's edit is gone on reopening). On an override of a rig whose library stores no settings
    for a bone (saved without JointLimit), settings read there at their defaults are let go:
    Blender would record the whole settings as one override it cannot apply, and say so once
    per bone on every opening."""
    unkept = []
    for obj in bpy.data.objects:
        if obj.type != "ARMATURE" or obj.library is not None or obj.pose is None:
            continue
        if obj.override_library is None:
            for pb in obj.pose.bones:
                if not pb.is_property_set("jointlimit"):
                    pb.jointlimit.enabled = False     # stores the settings (reading them would too)
            continue
        reference = obj.override_library.reference
        ref_bones = reference.pose.bones if reference is not None and reference.pose is not None else None
        for pb in obj.pose.bones:
            ref = ref_bones.get(pb.name) if ref_bones is not None else None
            if ref is None or ref.is_property_set("jointlimit") or not pb.is_property_set("jointlimit"):
                continue
            if settings_io.is_default(pb.jointlimit):
                pb.property_unset("jointlimit")
            else:
                unkept.append(f"{obj.name}: {pb.name}")
    if unkept:
        print(f"JointLimit: limits set in this file on {', '.join(unkept[:5])} are not kept on reopening: their "
              "library file stores no limit settings for those bones (saved without JointLimit); open and save it "
              "with JointLimit, then set them again here", file=sys.stderr)


HANDLERS = (
    (bpy.app.handlers.save_pre, on_save_pre),
    (bpy.app.handlers.depsgraph_update_pre, on_depsgraph_update_pre),
    (bpy.app.handlers.depsgraph_update_post, on_depsgraph_update),
    (bpy.app.handlers.frame_change_pre, on_frame_change_pre),
    (bpy.app.handlers.frame_change_post, on_frame_change),
    (bpy.app.handlers.animation_playback_pre, on_playback_start),
    (bpy.app.handlers.animation_playback_post, on_playback_stop),
    (bpy.app.handlers.load_post, on_load),
    (bpy.app.handlers.undo_post, on_undo_or_load),
    (bpy.app.handlers.blend_import_pre, on_blend_import_pre),
    (bpy.app.handlers.blend_import_post, on_blend_import_post),
    (bpy.app.handlers.redo_post, on_undo_or_load),
    (bpy.app.handlers.render_init, on_render_init),
    (bpy.app.handlers.render_complete, on_render_end),
    (bpy.app.handlers.render_cancel, on_render_end),
)


def register():
    for handler_list, func in HANDLERS:
        if func not in handler_list:
            if func is on_frame_change_pre:
                handler_list.insert(0, func)    # the layer's keys in place before other add-ons evaluate the frame
            else:
                handler_list.append(func)
    try:    # enabled with a file open: its shown frame clamped as on opening it
        bpy.context.scene and on_load()
    except AttributeError:
        pass    # Blender starting: its context and data are not open yet (``on_load`` comes with the file)
    except Exception as exc:    # (whatever the file holds: the add-on is enabled all the same)
        print(f"JointLimit: the frame shown could not be clamped on enabling: {exc}", file=sys.stderr)


def unregister():
    for handler_list, func in HANDLERS:
        while func in handler_list:
            handler_list.remove(func)
    playback_layer.unregister()
    _cache.clear()
    _scene_armatures.clear()
    _unions.clear()
    _posed.clear()
    live_pose.invalidate()
    animation.forget_components()
    bone_limits.clear_cache()
