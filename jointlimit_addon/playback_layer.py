"""The playback layer: while the animation plays, Blender evaluates the clamped rotations itself.

The playback clamp in ``frame_change_post`` writes the clamped pose after Blender evaluated the
frame, which makes Blender evaluate it a second time: on Rigify's rig that second pass (a copy of
the whole armature object and its pose) costs about two frames more (docs/benchmarks.md).
During playback (between ``animation_playback_pre`` and ``_post``), and outside it with the
scene's Fast Scrubbing on for the frames of the window's scene (scrubbing, stepping frames, a
script's ``frame_set``; not a render's, ``render_init`` to ``render_complete``), this layer makes
the clamp part of the frame's only evaluation instead:

* Blender animates each armature from the *evaluated copy* of its action, which its depsgraph
  made from the user's action and keeps until the action is edited. For each limited bone of a
  *covered* armature that the clamp moves, the layer writes the values to store as keys into
  that copy: one key per computed frame, at the frame's scene time, on each channel of the
  bone's rotation (the copy's F-curve modifiers removed: the values were computed with them).
  Blender evaluates an F-curve at a key's own time to that key's value exactly, so the frame is
  evaluated once, clamped, at the cost of reading a key. The user's action is never touched,
  nothing reaches the file, and a bone the clamp never moves keeps its keys: an animation posed
  within the limits costs nothing but the check;
* in ``frame_change_pre`` the layer evaluates the bones' F-curves at the new frame itself,
  clamps them (the values to store are those the playback clamp would write: same limit, same
  continuity with the keyed values) and, when the frame was not computed before, writes the keys.
  A frame not seen before is computed in one batch with the next ``AHEAD - 1`` frames playback
  is expected to show (same step and direction as from the previous frame, within the playback
  range): the F-curves are looked up once per batch and every bone of every frame clamped in one
  vectorised pass. Values are remembered per frame until keys are edited: a loop of playback
  costs a lookup. The copy holds the keys of one *window* of frames: the new frame and the
  frames among the next ``WINDOW - 1`` playback is expected to show that are remembered (when
  scrubbing, which expects none, the remembered frames nearest it); a frame outside the window
  gets a new one, so that a write costs the same however long the shot
  (writing every remembered frame made a 1000-frame first play's writes grow to 0.6 ms a frame)
  and a replay writes once in ``WINDOW`` frames. Each evaluated copy the
  layer wrote carries ``MARK`` (the number of the window written last); a copy without it (a
  new view layer's, or one Blender made anew) gets the keys before the frame is evaluated;
* ``frame_change_post`` leaves covered armatures alone, unless the frame's evaluation made a
  copy anew (keys edited right before the frame with no update in between, ``after_frame``):
  the layer is then removed, the playback clamp clamps that frame, and the next frame sets the
  layer up again from the edited keys.

An armature is covered when its rotations come from its action alone and the action animates
nothing else: a local action with no other user (checked each frame) and no Action constraint
reading it, no NLA track playing, full influence, Replace, every channel of each limited bone's
rotation keyed (keys, not samples; not muted, not empty, no driver of the user), the rotation
mode not keyed, the rig not linked (a library override animated by a local action is covered:
the keys go into that action's copy). Otherwise it keeps the playback clamp. A render's frames
(its own depsgraph) get the same keys in the render's own copy of the action
(``key_render_frame``). Limited bones without keys are clamped when the layer is installed and
when they are turned during playback.

The layer is removed when playback stops without Fast Scrubbing (the evaluated copies made anew
from the user's action, the stopped frame clamped by the playback clamp), when the playback clamp
or Fast Scrubbing is switched off or a render starts, and rebuilt when limits, keys or a covered
bone's rotation mode change (``check_updates``; each frame compares the covered bones' modes
too: a script may change one right before a frame, with no update in between), when the action
or how it is blended is no longer the one covered (checked each frame), and when a frame's evaluation made the copy anew
(``after_frame``; the F-curves are looked up anew for each batch). Only the scene that plays, or
outside playback the window's scene, uses it. Outside playback it is set up only on the frame
after one whose evaluation kept a mark on the copies (``_probe``) with no action updated in
between: a script that keys frame after frame keeps the playback clamp. There the playback clamp
still clamps, after each frame, the covered rigs' bones whose values the frame did not take from
the layer (bones without keys), and turning a covered rig's bone is clamped by live limits only, as without the layer. An evaluation
no frame change prepared (the time set without one, a covered action given to another rig or
blended otherwise) removes the layer first (``before_update``). Earlier versions drove the bones
with drivers
reading a helper empty; a file saved with those during playback (an autosave) loses them on load
(``remove_leftovers``).
"""

import bpy
import numpy as np

from . import animation, props
from .playback_cover import AHEAD, MARK, Cover, covered_bones, evaluated, render_peers

PROBE = "jointlimit_playback_probe"     # ID property of the copies looked at before setting the layer up outside playback
LEGACY_EMPTY_NAME = "JointLimit Playback Layer"     # earlier versions' helper empty

_layer = {
    "playing": None,    # session_uid of the scene playing (between animation_playback_pre and _post)
    "rendering": False,     # between render_init and render_complete or _cancel
    "probing": None,    # session_uid of the scene whose copies were marked for this frame (``_probe``)
    "probed": None,     # session_uid of the scene whose last frame kept the marks
    "scene": None,      # session_uid of the scene the layer is set up for, covering armatures or none
    "covers": [],       # [Cover]
    "generation": None,  # props.settings_generation() when installed
    "stale": False,     # keys, bones or limits changed: rebuild before the next frame
    "last": None,       # the frame number shown before (the step to the next one)
    "stepped": False,   # whether that frame was a step from the one before it (not a jump)
    "installs": 0,      # layers installed so far (tells one layer from the next)
    "frames": 0,        # frames begun (frame_change_pre on the main thread)
    "time": None,       # the scene time (frame_current_final) of the frame the layer prepared last
    "keyed": None,      # _batches() when the frame just evaluated had every copy keyed, until an update
                        # (the next frame's writes are skipped only when the scene has one view layer:
                        # another one's copy may lack keys; ``shown_everywhere`` reads it for the
                        # frame's own view layer)
}


def _batches():
    """What tells one layer's windows of keys from the next: the layer and each cover's window count."""
    return _layer["installs"], [cover.batch for cover in _layer["covers"]]


# --- install and remove ----------------------------------------------------------------------


def is_installed():
    """Whether the layer covers an armature now."""
    return bool(_layer["covers"])


def installed_serial():
    """A number that differs for each layer installed, ``None`` when none is."""
    return _layer["installs"] if _layer["covers"] else None


def covers(obj, scene=None):
    """Whether ``obj`` is clamped by the layer (the playback clamp leaves it alone), in ``scene``
    if given (a rig linked into another scene is that scene's playback clamp's there)."""
    if scene is not None and scene.session_uid != _layer["scene"]:
        return False
    uid = obj.session_uid
    return any(cover.uid == uid for cover in _layer["covers"])


def covered_limit(obj, name):
    """The limit the layer clamps ``obj``'s bone ``name`` with, or ``None``."""
    uid = obj.session_uid
    return next((bone.limit for cover in _layer["covers"] if cover.uid == uid
                 for bone in cover.bones if bone.name == name), None)


def install(scene):
    """Cover what the layer can of ``scene``'s armatures and key the current frame's batch into
    their evaluated actions. Also when it covers none, the layer is then set up for ``scene``
    (and not looked for again every frame) until it is stale."""
    from . import handlers     # the playback clamp (imports this module)

    remove_leftovers()
    covers = []
    frame = _layer["time"] = scene.frame_current_final
    ahead = _frames_ahead(scene)
    for obj in handlers.view_layer_armatures(scene):
        bones = covered_bones(obj)
        if not bones:
            continue
        handlers.clamp_object(obj, only_changed=False)     # the bones without keys, once
        covers.append(Cover(obj, bones))
    _layer.update(scene=scene.session_uid, covers=covers, generation=props.settings_generation(), stale=False,
                  installs=_layer["installs"] + 1)
    _mark_copies(scene, skip={cover.action_uid for cover in covers})
    try:
        # keys a script added right before this frame are not in the copies yet (the frame's
        # evaluation makes them anew): a frame for the playback clamp, as after any change
        ready = all(cover.values(frame, ahead, check_modes=False) is not None
                    and all(cover.write_keys(copy) for copy in cover.copies(scene)) for cover in covers)
    except Exception:
        ready = False
        raise
    finally:
        if not ready:
            remove()    # the playback clamp takes over, and the layer is not tried again every frame
            _layer.update(scene=scene.session_uid, generation=props.settings_generation())


def remove():
    """Remove the layer (nothing happens when it is not installed): the evaluated copies that
    hold its keys are made anew from the user's action at the next evaluation."""
    covers = _layer["covers"]
    scene = next((s for s in bpy.data.scenes if s.session_uid == _layer["scene"]), None)
    _layer.update(scene=None, covers=[], generation=None, stale=False, keyed=None, probed=None)
    for cover in covers:
        action = cover.action()
        if action is not None and scene is not None and any(copy.get(MARK) is not None for copy in cover.copies(scene)):
            action.update_tag()


def remove_leftovers():
    """Remove what earlier versions' layer left in a file saved during playback (an autosave):
    its helper empty and the drivers that read it (a variable named ``MARK``)."""
    for empty in [o for o in bpy.data.objects if o.get(MARK)]:
        bpy.data.objects.remove(empty)
    for obj in bpy.data.objects:
        data = obj.animation_data if obj.type == "ARMATURE" and obj.library is None else None
        if data is not None:
            for fc in [fc for fc in data.drivers if any(v.name == MARK for v in fc.driver.variables)]:
                data.drivers.remove(fc)


def forget(loaded=False):
    """Forget the installed layer without touching it (undo or a file load replaced the data its
    references point to). A loaded file is not playing (nor rendering). Undo keeps the evaluated copies of the
    actions it did not change, the layer's keys in them: those are made anew."""
    _layer.update(scene=None, covers=[], generation=None, stale=False, keyed=None, probing=None, probed=None)
    if loaded:
        _layer["playing"], _layer["rendering"] = None, False
        return
    if not _layer["installs"]:
        return      # no layer this session: no copy holds its keys
    views = [view_layer for scene in bpy.data.scenes for view_layer in scene.view_layers]
    for action in bpy.data.actions:
        if any(copy.get(MARK) is not None for copy in (evaluated(action, view) for view in views) if copy is not None):
            action.update_tag()


def forget_results():
    """Forget each frame's values (the benchmark's first play)."""
    for cover in _layer["covers"]:
        cover.frames.clear()
        cover.window = {}


# --- per frame ----------------------------------------------------------------------------------


def serves(scene, uid=None):
    """Whether the layer clamps ``scene``'s frames: those it plays, and outside playback and renders,
    with Fast Scrubbing on, those of the window's scene (scrubbing, stepping frames, a script's
    ``frame_set``). ``uid``: the scene's ``session_uid``, if read already."""
    uid = scene.session_uid if uid is None else uid
    playing = _layer["playing"]
    if playing is not None:
        return playing == uid
    if _layer["rendering"] or not scene.jointlimit.fast_scrubbing:
        return False
    shown = bpy.context.scene
    return shown is not None and shown.session_uid == uid


def clamped_bones(obj, scene):
    """The names of ``obj``'s bones whose rotations the frame just evaluated in ``scene`` took
    from the layer's values (clamped already: the playback clamp leaves them alone), or ``None``."""
    if scene.session_uid != _layer["scene"]:
        return None
    uid = obj.session_uid
    cover = next((cover for cover in _layer["covers"] if cover.uid == uid), None)
    return cover.names if cover is not None and cover.shown == _layer["frames"] else None


def shown_everywhere(uid):
    """Whether the layer is installed for the scene of ``session_uid`` ``uid`` and the frame just
    evaluated took the latest batch's keys in every armature it covers (``after_frame``)."""
    return bool(_layer["covers"]) and _layer["scene"] == uid and _layer["keyed"] is not None


def plays(scene, uid=None):
    """Whether the layer is installed for ``scene`` and ``scene`` plays (``uid``: its
    ``session_uid``, if read already)."""
    return bool(_layer["covers"]) and _layer["scene"] == _layer["playing"] == (scene.session_uid if uid is None else uid)


def _local_actions(scene):
    """The local actions of ``scene``'s armatures (found through the playback clamp's list of
    them, kept while the object count stays)."""
    from . import handlers

    return [obj.animation_data.action for obj in handlers.scene_armatures(scene)
            if obj.animation_data is not None and obj.animation_data.action is not None
            and obj.animation_data.action.library is None]


def _mark_copies(scene, skip=()):
    """Put ``PROBE`` on the evaluated copies of the actions of ``scene``'s armatures (but the
    actions whose ``session_uid`` is in ``skip``): an update that makes a copy anew (keys edited)
    takes it away, one that evaluates the animation again (another handler's update during a
    frame) keeps it (``_edits_animation``)."""
    for action in _local_actions(scene):
        if action.session_uid not in skip:
            for copy in (evaluated(action, view_layer) for view_layer in scene.view_layers):
                if copy is not None:
                    copy[PROBE] = 1


def _probe(scene):
    """Outside playback, before setting the layer up: mark the evaluated copies of the actions of
    ``scene``'s armatures (``PROBE``; no key). ``after_frame`` notes whether the frame's evaluation
    kept every mark, and only then does the next frame set the layer up: a script that edits keys
    between its frame changes (keying frame after frame) has the copies made anew on each frame,
    and a layer set up on one frame and gone on the next would only add its batch to the playback
    clamp's work."""
    _layer["probing"], _layer["probed"], _layer["last"] = scene.session_uid, None, scene.frame_current
    _mark_copies(scene)


def _probe_kept(scene, depsgraph):
    for action in _local_actions(scene):
        copy = action.evaluated_get(depsgraph)
        if copy.is_evaluated and copy.get(PROBE) is None:
            return False
    return True


def before_frame(scene):
    """``frame_change_pre``: install, rebuild or remove the layer as needed, compute the new
    frame (and those ahead) when it is not remembered, and write the keys into each evaluated
    copy that lacks the latest batch."""
    _layer["frames"] += 1
    uid = scene.session_uid
    set_up = _layer["scene"]
    if not serves(scene, uid):
        if set_up == uid:
            remove()    # Fast Scrubbing switched off, or a render started
        return      # another scene (a script stepping it): the playback clamp
    if not scene.jointlimit.clamp_playback:
        if set_up is not None:
            remove()
        return
    if set_up is not None and (set_up != uid or _layer["stale"] or _layer["generation"] != props.settings_generation()):
        remove()        # this frame: the playback clamp, from copies made anew; the next one: the layer
        return
    if set_up is None:
        if _layer["playing"] is None and _layer["probed"] != uid:
            _probe(scene)   # outside playback: the layer from the next frame on, if this one keeps the marks
            return
        install(scene)
        return
    frame = _layer["time"] = scene.frame_current_final
    ahead = _frames_ahead(scene)
    for cover in _layer["covers"]:
        if cover.values(frame, ahead) is None:
            remove()    # the animation changed: the playback clamp, and set up anew next frame
            return
    if _layer["keyed"] == _batches() and len(scene.view_layers) == 1:
        return      # no batch since the last frame found the copy keyed, and no update since
    for cover in _layer["covers"]:
        for copy in cover.copies(scene):
            if copy.get(MARK) != cover.batch and not cover.write_keys(copy):
                remove()
                return


def after_frame(scene, depsgraph, uid):
    """``frame_change_post``: when keys were edited right before this frame, with no update in
    between to tell ``check_updates`` (a script's edit, or one the frame step came before), the
    frame's evaluation made the action's copy anew from the edited keys, without the layer's
    keys or its mark: the layer is removed, so that the playback clamp clamps this frame, and the
    next frame sets it up again (outside playback: looks at the copies first, ``_probe``). Also
    notes whether a frame that looked kept the marks. Called for the view layer's own depsgraph only (a render's or an
    export's has copies of its own: ``handlers.evaluates_apart``). ``uid``: the scene's
    ``session_uid``."""
    _layer["rendering"] = False     # (a render that failed to start calls render_init alone)
    if _layer["probing"] == uid:
        _layer["probing"] = None
        _layer["probed"] = uid if _probe_kept(scene, depsgraph) else None
    if _layer["scene"] != uid:
        return
    keyed = True
    frame = None
    for cover in _layer["covers"]:
        action = cover.action()
        copy = None if action is None else action.evaluated_get(depsgraph)
        cover.shown = None
        if copy is not None and copy.is_evaluated:
            mark = copy.get(MARK)
            if mark is None:
                remove()
                return
            if frame is None:
                frame = scene.frame_current_final
            if mark == cover.batch and frame in cover.window:
                cover.shown = _layer["frames"]
        keyed = keyed and cover.shown is not None
    _layer["keyed"] = _batches() if keyed else None


def key_render_frame(depsgraph, objects):
    """A render's frame (``frame_change_post`` of its depsgraph; an Alembic or USD export's
    frame too, evaluated in a depsgraph of its own, ``handlers.evaluates_apart``): for each armature of
    ``objects`` the layer could cover, the clamped values of the frame the render evaluated are
    written as keys into the render's own copy of the action, as the layer does for the
    interface's copy (a render's depsgraph writes nothing it animated back to the pose that the
    playback clamp reads). Once a copy holds such keys, every later frame of the render writes
    all the covered bones' values (a channel keyed on an earlier frame would hold that frame's).
    Returns the ``session_uid`` of the armatures whose keys changed (their animation must be
    evaluated again)."""
    frame = depsgraph.scene_eval.frame_current_final
    keyed, done = set(), set()
    for obj in objects:
        if obj.session_uid in done:
            continue    # its action keyed with a peer's (``render_peers``)
        bones, peers = covered_bones(obj), ()
        if bones is None:
            bones, peers = render_peers(obj, objects) or (None, ())
            if bones is None:
                _left_unclamped.add(obj.name)
        if not bones:   # nothing keyed, or not from its action alone: the pose stored in the rig
            if unkey_render_copy(depsgraph, obj):
                keyed.add(obj.session_uid)
            continue
        done.update(peer.session_uid for peer in peers)
        copy = obj.animation_data.action.evaluated_get(depsgraph)
        if not copy.is_evaluated:
            continue
        cover = Cover(obj, bones)
        if cover.values(frame, check_modes=False) is None:
            continue
        if copy.get(MARK) is not None:
            cover.moved[:] = True   # keys an earlier frame wrote hold that frame's values: every bone gets this one's
        if cover.moved.any() and cover.write_keys(copy):
            keyed.update(rig.session_uid for rig in (obj, *peers))
    return keyed


_left_unclamped = set()     # names of the rigs a render's frames could not key (``unclamped_rigs``)


def unclamped_rigs():
    """The names of the rigs whose animation the render's frames so far left as keyed (an NLA
    track plays, rigs share an action with other limits...: ``covered_bones``), emptied."""
    names = sorted(_left_unclamped)
    _left_unclamped.clear()
    return names


def unkey_render_copy(depsgraph, obj):
    """Have the render's copy of ``obj``'s action made anew if it holds keys a clamped frame
    wrote (a render depsgraph kept from one render to the next, Persistent Data, the rig no
    longer covered or Clamp Playback off); ``True`` when it did (the rig's animation must be
    evaluated again)."""
    data = obj.animation_data
    action = None if data is None else data.action
    if action is None or action.library is not None:
        return False
    copy = action.evaluated_get(depsgraph)
    if not copy.is_evaluated or copy.get(MARK) is None:
        return False
    action.update_tag()
    return True


def _frames_ahead(scene):
    """A function giving the scene times (``frame_current_final``) of the frames playback is
    expected to show after the current one: ``count - 1`` of them at the step from the frame
    shown before (reversed playback steps back; a jump or a repeat takes the scene's frame step,
    but outside playback only right after a step: a loop starting over, stepping resumed
    elsewhere; a jump after a jump, as when scrubbing, computes the frame alone), up to the end
    of the playback range
    (preview range if set). The frame shown is noted now; the times are computed only when asked
    for (a remembered frame needs none)."""
    frame = scene.frame_current
    last, _layer["last"] = _layer["last"], frame
    ahead = _layer["playing"] is not None or _layer["stepped"]
    _layer["stepped"] = _is_step(scene, frame, last)
    return lambda count: _scene_times(scene, _next_frames(scene, frame, last, ahead, count))


def _is_step(scene, frame, last):
    if last is None or frame == last:
        return False
    jump = abs(frame - last)
    return jump <= 4 or jump <= 4 * max(scene.frame_step, 1)     # (the frame step read only for longer ones)


def _next_frames(scene, frame, last, ahead=True, count=AHEAD):
    """The frame numbers of ``_frames_ahead``, from ``frame`` and the one shown before (``last``);
    without ``ahead`` (outside playback, the frame before a jump was not a step: scrubbing) none
    after a jump, the frame alone."""
    step = max(scene.frame_step, 1)
    if _is_step(scene, frame, last):
        step = frame - last
    elif not ahead:
        return []
    if scene.use_preview_range:
        start, end = scene.frame_preview_start, scene.frame_preview_end
    else:
        start, end = scene.frame_start, scene.frame_end
    return [f for f in range(frame + step, frame + count * step, step) if start <= f <= end]


def _scene_times(scene, frames):
    """``frame_current_final`` at each frame number of ``frames`` with the scene's subframe and
    time remapping (``BKE_scene_frame_to_ctime``, in float32 like Blender: the same floats)."""
    times = (np.asarray(frames, dtype=np.float32) + np.float32(scene.frame_subframe)) * np.float32(animation.frame_length(scene))
    return times.astype(np.float64).tolist()


def render_started():
    _layer["rendering"] = True


def render_ended():
    _layer["rendering"] = False


def playback_started(scene):
    """Playback of ``scene`` begins. A layer set up for it before (Fast Scrubbing) goes on; its
    rigs' limited bones without keys, turned since the last frame, are clamped now, as when the
    layer is installed (during playback the playback clamp leaves the covered rigs alone)."""
    from . import handlers

    _layer["playing"] = scene.session_uid
    _layer["last"] = scene.frame_current     # the first frame played tells the direction
    if _layer["scene"] == scene.session_uid and scene.jointlimit.clamp_playback:
        for cover in _layer["covers"]:
            obj = cover.object()
            if obj is not None:
                handlers.clamp_object(obj, only_changed=False, skip=cover.names)


def playback_stopped(scene):
    """Remove the layer unless it goes on serving the scene (Fast Scrubbing) and is not stale; the
    frame playback stopped on keeps the clamped pose (the layer's, or the playback clamp writes it,
    as it would have: also where keys or limits were edited since the frame, which the update
    then evaluated from the edited keys)."""
    from . import handlers

    _layer["playing"] = None
    stale = _layer["stale"] or _layer["generation"] != props.settings_generation()
    if _layer["scene"] == scene.session_uid and serves(scene) and not stale:
        _layer["last"] = scene.frame_current
        return      # Fast Scrubbing: the frame shown was clamped by the layer, which stays for the next ones
    covered = is_installed()
    remove()
    if covered and scene.jointlimit.clamp_playback:
        # the F-curves' values, from copies of the action made anew
        for view_layer in scene.view_layers:
            if view_layer.depsgraph is not None:
                view_layer.depsgraph.update()
        handlers.clamp_scene(scene, only_changed=False)


def unregister():
    remove()
    _layer["playing"] = None


def _edits_animation(depsgraph):
    """Whether the update made anew the evaluated copy of an action of one of the armatures of
    the scene the layer is set up or looked for (keys edited: the copy lost the layer's or the
    probe's mark, or never had one). An update that only evaluated the animation again (another
    add-on's during a frame) keeps the marks; a camera's or a prop's keys do not matter."""
    uid = _layer["scene"] if _layer["scene"] is not None else _layer["probed"]
    scene = depsgraph.scene
    if scene is None or scene.original.session_uid != uid:
        return False
    animating = {action.session_uid for action in _local_actions(scene.original)}
    for update in depsgraph.updates:
        copy = update.id
        if (isinstance(copy, bpy.types.Action) and copy.original.session_uid in animating
                and copy.get(MARK) is None and copy.get(PROBE) is None):
            return True
    return False


def before_update(scene):
    """``depsgraph_update_pre``: an evaluation no frame change prepared would read the layer's keys
    where they are not the frame's: the scene's time set without a frame change (a script's
    ``frame_current`` and ``view_layer.update()``) to a time the layer did not compute (between
    the frames it computed the copy holds no key of that time), or a covered rig's action given
    to another rig too, or blended otherwise. The layer is removed first, so that this evaluation
    takes the user's keys (the copies made anew), as with Fast Scrubbing off; the next frame change
    sets it up again. A time it computed (another add-on's update at the next frame's time, its
    frame handler running before the layer's) reads the keys of that time: the clamped frame."""
    if _layer["scene"] != scene.session_uid or not _layer["covers"]:
        return
    frame = scene.frame_current_final
    if frame != _layer["time"] and not all(cover.keyed_at(frame, scene) for cover in _layer["covers"]):
        remove()
        return
    for cover in _layer["covers"]:
        obj = cover.object()
        if obj is None or cover.animation_changed(obj):
            remove()
            return


def check_updates(depsgraph):
    """``depsgraph_update_post`` while set up: edited keys (an action of one of the scene's
    armatures updated; a camera's or a prop's keys change nothing) make the layer stale, and so does a covered bone's rotation mode changed. During playback a covered
    armature's limited bones without keys are clamped when turned (what the playback clamp would
    do on the next frame), unless live limits do it; outside playback the next frame does it.
    Anything else (a selection, the rig moved) changes nothing. F-curves
    added or removed by a script right before a frame tag the action: that frame's evaluation
    makes its copy anew, which ``after_frame`` sees; each batch looks them up anew. While the
    layer is not set up, an action updated cancels a probe that succeeded (``_probe``)."""
    _layer["keyed"] = None     # a view layer evaluated, an action edited: look at the copies again
    if _layer["scene"] is None:
        if _layer["probed"] is not None and depsgraph.id_type_updated("ACTION") and _edits_animation(depsgraph):
            _layer["probed"] = None     # keys edited between frames, with an update: look again
        return      # every depsgraph update of the session passes here
    from . import handlers

    if depsgraph.id_type_updated("ACTION") and _edits_animation(depsgraph):
        _layer["stale"] = True
        return
    covers = {cover.uid: cover for cover in _layer["covers"]}
    for update in depsgraph.updates:
        data = update.id
        cover = covers.get(data.original.session_uid) if isinstance(data, bpy.types.Object) else None
        if cover is None or not update.is_updated_geometry:
            continue
        obj = data.original
        if cover.modes_changed(obj):
            _layer["stale"] = True
            return
        if _layer["playing"] is not None and not depsgraph.scene.jointlimit.live:
            handlers.clamp_object(obj, only_changed=True)
