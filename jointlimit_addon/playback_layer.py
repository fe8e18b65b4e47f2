"""The playback layer: while the animation plays, Blender evaluates the clamped rotations itself.

The playback clamp in ``frame_change_post`` writes the clamped pose after Blender evaluated the
frame, which makes Blender evaluate it a second time: on Rigify's rig that second pass (a copy of
the whole armature object and its pose) costs about two frames more (README, Live limits).
During playback (between ``animation_playback_pre`` and ``_post``) this layer makes the clamp
part of the frame's only evaluation instead:

* each limited bone of a *covered* armature that the clamp moves gets, on each channel of its
  rotation, a driver that reads one value of an ID property of the layer's helper empty
  (``EMPTY_NAME``, in no scene, marked ``MARK``); a driver runs after the F-curves, so its value
  is the one evaluated. A bone is driven from the first computed frame on which the clamp moves
  it (frames are computed before they are shown, see below); until then Blender evaluates its
  F-curves alone, which is what the clamp would keep: an animation posed within the limits
  costs no driver;
* in ``frame_change_pre`` the layer evaluates the bones' F-curves at the new frame itself,
  clamps them (the values to store are those the playback clamp would write: same limit, same
  continuity with the keyed values) and writes them into the empty's property. A frame not
  seen before is computed in one batch with the next ``AHEAD - 1`` frames playback is expected
  to show (same step and direction as from the previous frame, within the playback range): the
  F-curves are looked up once per batch and every bone of every frame clamped in one vectorised
  pass. Values are remembered per frame until keys are edited: a loop of playback costs a
  lookup. They go in the evaluated empty (read by this frame's drivers without a tag, which
  would copy the rig again) and in the original (what a new evaluated copy starts from);
* ``frame_change_post`` leaves covered armatures alone, unless keys were edited right before
  the frame with no update in between (``after_frame``): the frame's evaluation copied the
  edited action anew, which drops a mark the layer leaves on the evaluated copy; the layer is
  then set up anew and Blender evaluates the frame again.

An armature is covered when its rotations come from its action alone: an action, no NLA track
playing, full influence, Replace, every channel of each limited bone's rotation keyed (not
muted, not empty, no driver of the user), the rotation mode not keyed, the rig not linked.
Otherwise it keeps the playback clamp. Limited bones without keys are clamped when the layer is
installed and when they are turned during playback.

Nothing of the layer stays in the user's file: it is removed when playback stops (and the
stopped frame clamped by the playback clamp), before every save (the next frame puts it back),
when the playback clamp is switched off, and rebuilt when limits, keys or a covered bone's
rotation mode change (``check_updates``) and when the action or its F-curves are no longer those
covered (checked each frame, the F-curves looked up anew). Only the scene that plays uses it.
A file saved by other means while it was installed (an autosave) loses it on load
(``remove_leftovers``). Each driver's F-curve is emptied: ``driver_add`` gives it a Generator
(4.5) or, from 5.0, keys (0, 0) and (1, 1) whose Bezier mapping changes the value (0.5 read as
0.49999994, anything within 1e-4 of a key snapped to it); without either, the driver's value is
the float it read.
"""

import bpy
import numpy as np

from . import bone_limits, compat, live_pose, props

EMPTY_NAME = "JointLimit Playback Layer"
MARK = "jointlimit_playback_layer"      # ID property of the helper empty, name of each driver's variable
MEMO_FLOATS = 1 << 22    # values remembered per armature (32 MB): a longer shot forgets and computes again
AHEAD = 32      # frames computed together on a frame not seen before (see the module)

_layer = {
    "playing": None,    # session_uid of the scene playing (between animation_playback_pre and _post)
    "scene": None,      # session_uid of the scene the layer is set up for, covering armatures or none
    "empty": None,      # name of the helper empty
    "covers": [],       # [_Cover]
    "generation": None,  # props.settings_generation() when installed
    "stale": False,     # keys, bones or limits changed: rebuild before the next frame
    "last": None,       # the frame number shown before (the step to the next one)
}


class _Bone:
    """One covered bone: its rotation mode, the data path of its rotation channel and its limit."""

    __slots__ = ("name", "mode", "path", "width", "limit")

    def __init__(self, name, mode, path, width, limit):
        self.name, self.mode, self.path, self.width, self.limit = name, mode, path, width, limit


class _Cover:
    """A covered armature: its bones, the name of its property on the empty, its drivers, and
    what tells that its animation is still the one covered."""

    __slots__ = ("obj_name", "uid", "prop", "bones", "animation", "frames", "codes", "kinds", "groups", "used",
                 "offsets", "driven", "to_drive", "marked", "drivers")

    def __init__(self, obj, prop, bones):
        self.obj_name, self.uid, self.prop, self.bones = obj.name, obj.session_uid, prop, bones
        self.animation = _animation_key(obj)
        self.frames = {}    # frame -> values (a row of its batch), while the keys are unchanged
        self.codes, self.kinds = (np.array(a, dtype=np.int64).reshape(-1)
                                  for a in zip(*[live_pose.mode_code(bone.mode) for bone in bones]))
        by_limit = {}
        for i, bone in enumerate(bones):
            by_limit.setdefault(id(bone.limit), (bone.limit, []))[1].append(i)
        self.groups = [(limit, np.array(members)) for limit, members in by_limit.values()]
        widths = np.array([bone.width for bone in bones])
        self.used = np.arange(4) < widths[:, None]      # (bones, 4)
        self.offsets = (np.cumsum(widths) - widths).tolist()     # of each bone's values in a frame's
        self.driven = np.zeros(len(bones), dtype=bool)  # bones with drivers (moved on a computed frame)
        self.to_drive = []      # bones moved on a computed frame, not driven yet
        self.marked = False     # the evaluated action carries MARK (``action_edited``)
        self.drivers = len(obj.animation_data.drivers)  # the armature's drivers, the layer's included

    def object(self):
        """The armature (found again when renamed), or ``None`` when it was deleted."""
        obj = bpy.data.objects.get(self.obj_name)
        if obj is not None and obj.session_uid == self.uid:
            return obj
        obj = next((o for o in bpy.data.objects if o.session_uid == self.uid), None)
        if obj is not None:
            self.obj_name = obj.name
        return obj

    def modes_changed(self, obj):
        bones = obj.pose.bones
        for bone in self.bones:
            pb = bones.get(bone.name)
            if pb is None or pb.rotation_mode != bone.mode:
                return True
        return False

    def action_edited(self, depsgraph):
        """Whether the action's copy in ``depsgraph`` was made anew since it was marked (an edit
        of the action makes Blender copy it again; the original is never marked). The mark is
        put after a frame in which drivers were added, whose new relations may copy it again."""
        obj = self.object()
        action = None if obj is None or obj.animation_data is None else obj.animation_data.action
        evaluated = None if action is None else action.evaluated_get(depsgraph)
        if evaluated is None or not evaluated.is_evaluated:
            return False
        if not self.marked:
            evaluated[MARK] = 1
            self.marked = True
            return False
        return evaluated.get(MARK) is None

    def values(self, frame, ahead=list):
        """The values of every covered bone at ``frame``, or ``None`` when the armature's
        animation is no longer the one covered (another action or slot, F-curves added or
        removed, blended otherwise, a driver added, the armature gone). Those of the frames
        ``ahead()`` (the ones playback is expected to show next; asked only when ``frame`` is
        not remembered) are computed with them, in one batch."""
        obj = self.object()
        if obj is None or _animation_key(obj) != self.animation or len(obj.animation_data.drivers) != self.drivers:
            return None     # a driver added by the user (its channel may be one the layer drives)
        out = self.frames.get(frame)
        if out is not None:
            return out
        frames = [frame, *dict.fromkeys(f for f in ahead() if f != frame and f not in self.frames)]
        computed = self._compute(_fcurves(obj), frames)
        if computed is None:
            return None
        if (len(self.frames) + len(frames)) * computed.shape[1] > MEMO_FLOATS:
            self.frames.clear()
        self.frames.update(zip(frames, computed))
        return computed[0]

    def _compute(self, fcurves, frames):
        """Per frame of ``frames`` (rows), the values to store of every covered bone, channel
        after channel (``None`` when a channel lost its F-curve): each bone's keyed values where
        they are inside its limit, else the clamped rotation in the bone's mode, continuous with
        the keyed values -- the values the playback clamp writes (``live_pose.clamp_rows``). The
        bones moved on any of these frames are to be driven (``to_drive``). The F-curves are
        looked up anew: a reference kept from an earlier frame would point to freed memory once
        the F-curve is deleted."""
        n = len(frames)
        channels = {int(kind): np.zeros((len(self.bones) * n, live_pose.CHANNELS[kind][1]))
                    for kind in np.unique(self.kinds)}
        find = fcurves.find
        for b, bone in enumerate(self.bones):
            block = channels[self.kinds[b]][b * n:(b + 1) * n]
            for i in range(bone.width):
                fc = find(bone.path, index=i)
                if fc is None:
                    return None
                evaluate = fc.evaluate
                block[:, i] = [evaluate(f) for f in frames]
        kinds = np.repeat(self.kinds, n)
        rows = np.arange(len(kinds))
        groups = [(limit, (members[:, None] * n + np.arange(n)).ravel()) for limit, members in self.groups]
        stored, moved = live_pose.clamp_rows(np.repeat(self.codes, n), kinds, channels, rows, groups)
        values = np.zeros((len(rows), 4))
        for kind, block in channels.items():
            here = kinds == kind
            values[here, :block.shape[1]] = block[here]
        values[moved] = stored
        new = np.flatnonzero(moved.reshape(len(self.bones), n).any(axis=1) & ~self.driven)
        self.driven[new] = True
        self.to_drive += new.tolist()
        return values.reshape(len(self.bones), n, 4).transpose(1, 0, 2)[:, self.used]


def _fcurves(obj):
    data = obj.animation_data
    return compat.action_fcurve_collection(data.action, data.action_slot)


def _animation_key(obj):
    """What decides how an armature's action animates it, to tell a change each frame: the
    action, its slot, its number of F-curves, and how it is blended (influence, blend type,
    tweak mode, NLA tracks playing)."""
    data = obj.animation_data
    action = data.action if data is not None else None
    if action is None:
        return None
    slot = data.action_slot
    fcurves = compat.action_fcurve_collection(action, slot)
    return (action.session_uid, None if slot is None else slot.identifier, -1 if fcurves is None else len(fcurves),
            data.action_influence, data.action_blend_type, data.use_tweak_mode,
            sum(not track.mute for track in data.nla_tracks))


# --- which armatures the layer covers --------------------------------------------------------


def _covered_bones(obj):
    """The bones the layer would drive on ``obj`` (``[]``: none moves), or ``None`` when the
    armature's rotations do not come from its action alone (see the module)."""
    data = obj.animation_data
    if obj.library is not None or obj.override_library is not None or data is None or data.action is None:
        return None
    if (data.use_tweak_mode or data.action_blend_type != "REPLACE" or data.action_influence != 1.0
            or any(not track.mute for track in data.nla_tracks)):
        return None
    fcurves = _fcurves(obj)
    if fcurves is None:
        return None
    curves = {(fc.data_path, fc.array_index): fc for fc in fcurves}
    driven = {(fc.data_path, fc.array_index) for fc in data.drivers}
    bones = []
    for pb in obj.pose.bones:
        settings = pb.jointlimit
        if not settings.enabled:
            continue
        limit = bone_limits.cached_limit(settings)[0]
        if limit is None:
            continue    # invalid settings: left alone (the panel says why)
        attr, width = bone_limits.rotation_path(pb)
        path = pb.path_from_id(attr)
        keyed = [curves.get((path, i)) for i in range(width)]
        keyed = [None if fc is None or _is_empty(fc) else fc for fc in keyed]
        if (pb.path_from_id("rotation_mode"), 0) in curves or any((path, i) in driven for i in range(width)):
            return None
        if all(fc is None for fc in keyed):
            continue    # not animated: clamped once on install
        if any(fc is None or fc.mute for fc in keyed):
            return None
        bones.append(_Bone(pb.name, pb.rotation_mode, path, width, limit))
    return bones


def _is_empty(fc):
    """An F-curve that Blender's animation leaves alone: no keys and no modifier making a curve."""
    return len(fc.keyframe_points) == 0 and not any(m.type in ("GENERATOR", "FNGENERATOR") for m in fc.modifiers)


def _armatures(scene):
    return [o for o in scene.objects if o.type == "ARMATURE" and o.pose is not None]


# --- install and remove ----------------------------------------------------------------------


def is_installed():
    """Whether the layer covers an armature now."""
    return bool(_layer["covers"])


def covers(obj):
    """Whether ``obj`` is clamped by the layer (the playback clamp leaves it alone)."""
    uid = obj.session_uid
    return any(cover.uid == uid for cover in _layer["covers"])


def _empty():
    name = _layer["empty"]
    empty = bpy.data.objects.get(name) if name else None
    return empty if empty is not None and empty.get(MARK) else None


def install(scene):
    """Cover what the layer can of ``scene``'s armatures. Also when it covers none, the layer is
    then set up for ``scene`` (and not looked for again every frame) until it is stale."""
    from . import handlers     # the playback clamp (imports this module)

    remove_leftovers()
    covers = []
    frame = scene.frame_current_final
    ahead = _frames_ahead(scene)
    for obj in _armatures(scene):
        bones = _covered_bones(obj)
        if not bones:
            continue
        handlers.clamp_object(obj, only_changed=False)     # the bones without keys, once
        covers.append(_Cover(obj, f"rig_{len(covers)}", bones))
    _layer.update(scene=scene.session_uid, covers=covers, generation=props.settings_generation(), stale=False)
    if not covers:
        return
    empty = bpy.data.objects.new(EMPTY_NAME, None)
    empty[MARK] = 1
    _layer["empty"] = empty.name
    try:
        for cover in covers:
            empty[cover.prop] = cover.values(frame, ahead)
            _add_drivers(cover.object(), cover, empty)
    except Exception:
        remove()    # the playback clamp takes over, and the layer is not tried again every frame
        _layer.update(scene=scene.session_uid, generation=props.settings_generation())
        raise


def _add_drivers(obj, cover, empty):
    """Drive the bones of ``cover`` that moved on a computed frame and are not driven yet: a bone
    the clamp never moves keeps its F-curves' values, and Blender evaluates no driver for it."""
    cover.marked = False
    for b in cover.to_drive:
        bone, offset = cover.bones[b], cover.offsets[b]
        for i in range(bone.width):
            fc = obj.driver_add(bone.path, i)
            for modifier in list(fc.modifiers):
                fc.modifiers.remove(modifier)
            fc.keyframe_points.clear()      # the value as read, not mapped through keys
            driver = fc.driver
            driver.type = "AVERAGE"
            var = driver.variables.new()
            var.name, var.type = MARK, "SINGLE_PROP"
            target = var.targets[0]
            target.id_type, target.id = "OBJECT", empty
            target.data_path = f'["{cover.prop}"][{offset + i}]'
    cover.to_drive.clear()
    cover.drivers = len(obj.animation_data.drivers)


def remove():
    """Remove the layer's drivers and empty (nothing happens when it is not installed)."""
    covers = _layer["covers"]
    empty = _empty()
    _layer.update(scene=None, empty=None, covers=[], generation=None, stale=False)
    for cover in covers:
        obj = cover.object()
        if obj is not None:
            _remove_drivers(obj)    # found by their variable: a renamed bone renames their paths
    if empty is not None:
        bpy.data.objects.remove(empty)


def _remove_drivers(obj):
    data = obj.animation_data
    if data is not None:
        for fc in [fc for fc in data.drivers if _is_ours(fc)]:
            data.drivers.remove(fc)


def _is_ours(fc):
    """The layer's driver: it reads the empty through a variable named ``MARK`` (also after the
    user edited it during playback, e.g. added a variable)."""
    return any(variable.name == MARK for variable in fc.driver.variables)


def remove_leftovers():
    """Remove a layer that is not this session's: saved in a file (an autosave during playback:
    its drivers, whose empty was not saved as nothing uses it) or brought back by undo."""
    mine = _empty()
    for empty in [o for o in bpy.data.objects if o.get(MARK) and o != mine]:
        bpy.data.objects.remove(empty)
    if mine is not None:
        return      # this session's layer is installed: it has the only drivers of the kind
    for obj in bpy.data.objects:
        if obj.type == "ARMATURE" and obj.library is None:
            _remove_drivers(obj)


def forget(loaded=False):
    """Forget the installed layer without touching it (undo or a file load replaced the data its
    references point to); ``remove_leftovers`` removes it if it came back. A loaded file is not
    playing (a layer set up while scrubbing would keep its drivers)."""
    _layer.update(scene=None, empty=None, covers=[], generation=None, stale=False)
    if loaded:
        _layer["playing"] = None


def forget_results():
    """Forget each frame's values (the benchmark's first play)."""
    for cover in _layer["covers"]:
        cover.frames.clear()


# --- per frame ----------------------------------------------------------------------------------


def before_frame(scene):
    """``frame_change_pre``: install, rebuild or remove the layer as needed and write the
    clamped values of the new frame."""
    set_up = _layer["scene"]
    if _layer["playing"] != scene.session_uid:
        return      # another scene (a script stepping it): the playback clamp
    if not scene.jointlimit.clamp_playback:
        if set_up is not None:
            remove()
        return
    if set_up is not None and (_layer["stale"] or _layer["generation"] != props.settings_generation()):
        remove()
        set_up = None
    if set_up is None:
        install(scene)
        return      # values written for this frame; the drivers' relations are new anyway
    if not _layer["covers"]:
        return
    empty = _empty()
    frame = scene.frame_current_final
    ahead = _frames_ahead(scene)
    computed = [] if empty is None else [cover.values(frame, ahead) for cover in _layer["covers"]]
    if empty is None or any(values is None for values in computed):
        remove()            # the animation changed: set up anew
        install(scene)
        return
    written = []
    for cover, values in zip(_layer["covers"], computed):
        if cover.to_drive:      # moved on a frame computed now: driven from this frame on
            _add_drivers(cover.object(), cover, empty)
        if cover.driven.any():  # else no driver reads the values
            written.append((cover.prop, values))
    if not written:
        return
    evaluated = [ev for ev in (_evaluated(empty, view_layer) for view_layer in scene.view_layers) if ev is not None]
    for prop, values in written:
        empty[prop] = values
        for ev in evaluated:
            ev[prop] = values
    if not evaluated:
        empty.update_tag()      # no evaluated copy yet: the next one is made from the original


def after_frame(scene, depsgraph):
    """``frame_change_post``: when keys were edited right before this frame, with no update in
    between to tell ``check_updates`` (a script's edit, or one the frame step came before), the
    frame was shown from values computed with the old keys. Its evaluation copied the edited
    action anew, which dropped the mark left on the evaluated copy (``_Cover.action_edited``):
    the layer is then set up anew, and Blender evaluates the frame again with it."""
    if _layer["scene"] != scene.session_uid or _layer["playing"] != scene.session_uid:
        return
    if any(cover.action_edited(depsgraph) for cover in _layer["covers"]):
        remove()
        install(scene)


def _frames_ahead(scene):
    """A function giving the scene times (``frame_current_final``) of the frames playback is
    expected to show after the current one: ``AHEAD - 1`` of them at the step from the frame
    shown before (reversed playback steps back; a jump or a repeat takes the scene's frame
    step), up to the end of the playback range (preview range if set). The frame shown is noted
    now; the times are computed only when asked for (a remembered frame needs none)."""
    frame = scene.frame_current
    last, _layer["last"] = _layer["last"], frame
    step = max(scene.frame_step, 1)
    if last is not None and 0 < abs(frame - last) <= 4 * step:
        step = frame - last
    if scene.use_preview_range:
        start, end = scene.frame_preview_start, scene.frame_preview_end
    else:
        start, end = scene.frame_start, scene.frame_end
    ahead = [frame + k * step for k in range(1, AHEAD)]
    return lambda: _scene_times(scene, [f for f in ahead if start <= f <= end])


def _scene_times(scene, frames):
    """``frame_current_final`` at each frame number of ``frames`` with the scene's subframe and
    time remapping (``BKE_scene_frame_to_ctime``, in float32 like Blender: the same floats)."""
    render = scene.render
    frame_length = np.float32(render.frame_map_old) / np.float32(render.frame_map_new)
    times = (np.asarray(frames, dtype=np.float32) + np.float32(scene.frame_subframe)) * frame_length
    return times.astype(np.float64).tolist()


def _evaluated(empty, view_layer):
    """The empty's evaluated copy in ``view_layer``'s depsgraph, if there is one (Blender gives
    ``frame_change_pre`` no depsgraph; its evaluation of the new frame has not started)."""
    depsgraph = view_layer.depsgraph
    if depsgraph is None:
        return None
    evaluated = empty.evaluated_get(depsgraph)
    return evaluated if evaluated.is_evaluated else None


def playback_started(scene):
    _layer["playing"] = scene.session_uid
    _layer["last"] = scene.frame_current     # the first frame played tells the direction


def playback_stopped(scene):
    """Remove the layer; the frame playback stopped on keeps the clamped pose (the playback
    clamp writes it, as it would have)."""
    from . import handlers

    _layer["playing"] = None
    covered = is_installed()
    remove()
    if covered and scene.jointlimit.clamp_playback:
        # the F-curves' values, now that no driver overrides them
        for view_layer in scene.view_layers:
            if view_layer.depsgraph is not None:
                view_layer.depsgraph.update()
        handlers.clamp_scene(scene, only_changed=False)


def before_save():
    """``save_pre``: the file never holds the layer (the next frame of playback installs it again)."""
    if is_installed():
        remove()


def unregister():
    remove()
    _layer["playing"] = None


def check_updates(depsgraph):
    """``depsgraph_update_post`` while set up: edited keys (an action updated) make the layer
    stale, and so does a covered bone's rotation mode changed. A covered armature's limited bones
    without keys are clamped when turned (what the playback clamp would do on the next frame),
    unless live limits do it. Anything else (a selection, the rig moved) changes nothing. F-curves
    added or removed need no update: each frame checks their number and looks them up anew."""
    if _layer["scene"] is None:
        return      # every depsgraph update of the session passes here
    from . import handlers

    covers = {cover.uid: cover for cover in _layer["covers"]}
    for update in depsgraph.updates:
        data = update.id
        if isinstance(data, bpy.types.Action):
            _layer["stale"] = True
            return
        cover = covers.get(data.original.session_uid) if isinstance(data, bpy.types.Object) else None
        if cover is None or not update.is_updated_geometry:
            continue
        obj = data.original
        if cover.modes_changed(obj):
            _layer["stale"] = True
            return
        if not depsgraph.scene.jointlimit.live:
            handlers.clamp_object(obj, only_changed=True)
