"""The playback layer (issue 22): during playback Blender evaluates the clamped rotations itself
from keys the layer writes into the evaluated copy of the action, with the same result as the
playback clamp; the user's action and file are never touched."""

import importlib
import math

import numpy as np
import pytest

from rigs import link_override, save_in_library
from test_live_limits_blender import limited_rig, snapshot

pytestmark = [pytest.mark.blender]

FRAMES = [1, 4, 6, 9, 12, 7, 2]


@pytest.fixture
def mods(addon, scene):
    """The modules; Fast Scrubbing off in ``scene``: frames stepped outside playback are the
    playback clamp's, the reference these tests compare the layer with
    (``test_fast_scrubbing_blender.py`` steps them with the layer)."""
    pkg = addon.__name__
    mods = {m: importlib.import_module(f"{pkg}.{m}")
            for m in ("handlers", "playback_layer", "playback_cover", "compat", "bone_limits")}
    scene.jointlimit.fast_scrubbing = False
    yield mods
    mods["playback_layer"].unregister()     # whatever a failed test left


def keyed_rig(seed=3, n_extra_free=3, skin=True):
    """``limited_rig`` with every limited bone keyed at frames 1, 6, 12 with random rotations
    (most outside their limits) in its own rotation mode (Euler angles past ±180°); with
    ``skin``, deforming a mesh (a character's rig)."""
    import bpy

    obj = limited_rig(n_extra_free)
    if skin:
        mesh = bpy.data.meshes.new("Skin")
        mesh.from_pydata([(0, 0, 0), (0.1, 0, 0), (0, 0.1, 0)], [], [(0, 1, 2)])
        skin = bpy.data.objects.new("Skin", mesh)
        bpy.context.scene.collection.objects.link(skin)
        skin.modifiers.new("Armature", "ARMATURE").object = obj
    rng = np.random.default_rng(seed)
    for pb in obj.pose.bones:
        if not pb.jointlimit.enabled:
            continue
        for frame in (1, 6, 12):
            q = rng.normal(size=4)
            pb.rotation_quaternion = q / np.linalg.norm(q)
            pb.rotation_euler = rng.uniform(-3 * math.pi, 3 * math.pi, 3)
            pb.rotation_axis_angle = (rng.uniform(-4.0, 4.0), *rng.normal(size=3))
            pb.keyframe_insert(channel_of(pb), frame=frame)
    return obj


def play(scene, obj, frames=FRAMES):
    """Per frame: the stored rotations and the evaluated bone matrices."""
    import bpy

    out = []
    for frame in frames:
        scene.frame_set(frame)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        out.append((snapshot(obj), [np.array(pb.matrix) for pb in obj.evaluated_get(depsgraph).pose.bones]))
    return out


def playing_rig(scene, mods, seed):
    """``(handlers, layer, obj)``: a skinned ``keyed_rig`` played with Clamp Playback on through
    frames 1 and 2, covered by the layer."""
    handlers, layer = mods["handlers"], mods["playback_layer"]
    obj = keyed_rig(seed=seed)
    scene.jointlimit.clamp_playback = True
    handlers.on_playback_start(scene)
    play(scene, obj, [1, 2])
    assert layer.is_installed() and layer.covers(obj)
    return handlers, layer, obj


def playing_twelve_frames(scene, mods, seed):
    """``(handlers, layer, obj)``: a ``keyed_rig`` without skin playing frames 1 and 2 of a 12-frame
    range with Clamp Playback on (frames 1 to 12 computed in the first batch)."""
    handlers, layer = mods["handlers"], mods["playback_layer"]
    obj = keyed_rig(seed=seed, skin=False)
    scene.frame_start, scene.frame_end = 1, 12
    scene.jointlimit.clamp_playback = True
    handlers.on_playback_start(scene)
    play(scene, obj, [1, 2])
    return handlers, layer, obj


def assert_same_frames(got, expected):
    """The same stored rotations to a float32 step and the same evaluated matrices."""
    for (stored, matrices), (stored_ref, matrices_ref) in zip(got, expected):
        assert [s[0] for s in stored] == [s[0] for s in stored_ref]
        for channel in (1, 2, 3):
            np.testing.assert_allclose([s[channel] for s in stored], [s[channel] for s in stored_ref],
                                       rtol=2.5e-7, atol=1e-7)
        for a, b in zip(matrices, matrices_ref):
            np.testing.assert_allclose(a, b, atol=1e-5)     # ulps along a chain of 200 bones


def channel_of(pb):
    return ("rotation_quaternion" if pb.rotation_mode == "QUATERNION" else
            "rotation_axis_angle" if pb.rotation_mode == "AXIS_ANGLE" else "rotation_euler")


def keys_of(fc):
    co = np.zeros(2 * len(fc.keyframe_points), dtype=np.float32)
    fc.keyframe_points.foreach_get("co", co)
    return co.tolist()


def layer_keys(obj, view_layer=None):
    """The channels ``(data path, index)`` whose keys in the evaluated copy of ``obj``'s action
    (in ``view_layer``'s depsgraph, the context's by default) differ from the user's action: the
    layer's keys; and whether the copy carries the layer's mark."""
    import bpy
    from rigs import compat

    data = obj.animation_data
    copy = data.action.evaluated_get((view_layer or bpy.context.view_layer).depsgraph)
    if not copy.is_evaluated:
        return set(), False
    user = {(fc.data_path, fc.array_index): keys_of(fc)
            for fc in compat().action_fcurve_collection(data.action, data.action_slot)}
    keyed = {(fc.data_path, fc.array_index) for fc in compat().action_fcurve_collection(copy, data.action_slot)
             if keys_of(fc) != user.get((fc.data_path, fc.array_index))}
    return keyed, copy.get(mods_layer().MARK) is not None


def mods_layer():
    from rigs import compat

    return importlib.import_module(compat().__name__.rsplit(".", 1)[0] + ".playback_layer")


def paths(keyed):
    return {path for path, _ in keyed}


def test_playing_with_the_layer_equals_the_playback_clamp(scene, mods):
    """Every rotation mode and limit kind: the stored rotations and the evaluated matrices of
    each frame are those of the playback clamp, the armature is left to the layer, and stopping
    removes the layer and keeps the stopped frame clamped."""
    handlers, layer = mods["handlers"], mods["playback_layer"]
    obj = keyed_rig()
    scene.jointlimit.clamp_playback = True
    reference = play(scene, obj)
    assert reference[1][0] != reference[2][0]
    handlers.on_playback_start(scene)
    got = play(scene, obj)
    assert layer.is_installed() and layer.covers(obj)
    keyed, marked = layer_keys(obj)
    limited = [pb for pb in obj.pose.bones if pb.jointlimit.enabled and pb.name != "b{:03d}".format(len(obj.pose.bones) - 4)]
    assert marked and len(keyed) == sum(3 if pb.rotation_mode not in ("QUATERNION", "AXIS_ANGLE") else 4
                                        for pb in limited)
    assert_same_frames(got, reference)
    assert handlers.clamp_scene(scene, only_changed=False) == 0      # the playback clamp leaves it
    handlers.on_playback_stop(scene, None)
    assert not layer.is_installed() and layer_keys(obj) == (set(), False)     # the copy made anew
    assert_same_frames(play(scene, obj, [FRAMES[-1]]), reference[-1:])
    scene.jointlimit.clamp_playback = False


def test_keys_limits_and_the_switch_change_during_playback(scene, mods):
    import bpy

    handlers, layer, obj = playing_rig(scene, mods, seed=5)
    # a limit changed
    pb = next(pb for pb in obj.pose.bones if pb.jointlimit.enabled and pb.rotation_mode == "QUATERNION")
    pb.jointlimit.swing_x_max = math.radians(5)
    play(scene, obj, [3, 6])
    # a key moved, as the Graph Editor moves it (an update follows), on a frame played before
    other = next(p for p in obj.pose.bones if p.jointlimit.enabled and p.rotation_mode == "XZY")
    fc = fcurves_of(obj).find(other.path_from_id("rotation_euler"), index=0)
    key = next(k for k in fc.keyframe_points if k.co[0] == 6)
    key.co[1] += 1.0
    key.handle_left[1] += 1.0
    key.handle_right[1] += 1.0
    bpy.context.view_layer.update()
    played = play(scene, obj, [3, 6])
    assert layer.covers(obj)
    handlers.on_playback_stop(scene, None)
    reference = play(scene, obj, [3, 6])
    assert_same_frames(played, reference)
    handlers.on_playback_start(scene)
    play(scene, obj, [4])
    assert layer.is_installed()
    scene.jointlimit.clamp_playback = False     # switched off while playing: gone on the next frame
    play(scene, obj, [5])
    assert not layer.is_installed() and layer_keys(obj) == (set(), False)
    handlers.on_playback_stop(scene, None)


def fcurves_of(obj):
    """The F-curves of the armature's action (the collection, with ``find`` and ``remove``)."""
    from rigs import compat

    data = obj.animation_data
    return compat().action_fcurve_collection(data.action, data.action_slot)


def record_calls(monkeypatch, owner, name, what=lambda *args, **kwargs: args):
    """Replace ``owner.name`` by a wrapper that appends ``what(*args, **kwargs)`` of each call to
    the list returned, then calls the original."""
    calls, original = [], getattr(owner, name)
    monkeypatch.setattr(owner, name, lambda *args, **kwargs: calls.append(what(*args, **kwargs))
                        or original(*args, **kwargs))
    return calls


def record_batches(monkeypatch, layer):
    """The frames of each batch the layer computes (``Cover._compute``), call after call."""
    return record_calls(monkeypatch, layer.Cover, "_compute", lambda self, fcurves, frames: list(frames))


def test_frames_computed_ahead_equal_frames_computed_alone(scene, mods, monkeypatch):
    """A frame not seen before is computed in one batch with the frames playback shows next,
    forward and reversed, within the playback range; each frame of the batch is what the
    playback clamp puts there."""
    handlers, layer = mods["handlers"], mods["playback_layer"]
    obj = keyed_rig(seed=17)
    scene.frame_start, scene.frame_end = 1, 12
    forward, backward = list(range(1, 13)), list(range(12, 0, -1))
    scene.jointlimit.clamp_playback = True
    reference = play(scene, obj, forward)
    batches = record_batches(monkeypatch, layer)
    handlers.on_playback_start(scene)
    assert_same_frames(play(scene, obj, forward), reference)
    assert batches == [forward]
    handlers.on_playback_stop(scene, None)
    batches.clear()
    handlers.on_playback_start(scene)       # a new layer remembers nothing: played backwards
    assert_same_frames(play(scene, obj, backward), reference[::-1])
    assert batches == [[12], backward[1:]]      # 12 shown twice: the scene's step, past the end
    handlers.on_playback_stop(scene, None)
    scene.jointlimit.clamp_playback = False


def still_rig(handlers):
    """``limited_rig`` with every limited bone keyed at frames 1 and 60 at rest, or where its
    limit puts rest: an animation the clamp leaves as it is."""
    obj = limited_rig()
    for pb in obj.pose.bones:
        pb.rotation_quaternion, pb.rotation_euler, pb.rotation_axis_angle = (1, 0, 0, 0), (0, 0, 0), (0, 0, 1, 0)
    handlers.clamp_object_per_bone(obj, False)
    for pb in obj.pose.bones:
        if pb.jointlimit.enabled:
            for frame in (1, 60):
                pb.keyframe_insert(channel_of(pb), frame=frame)
    return obj


def playing_still_rig(scene, mods):
    """``(handlers, layer, obj)``: a ``still_rig`` played with Clamp Playback on through frames 1
    and 2 of a 100-frame range."""
    handlers, layer = mods["handlers"], mods["playback_layer"]
    obj = still_rig(handlers)
    scene.frame_start, scene.frame_end = 1, 100
    scene.jointlimit.clamp_playback = True
    handlers.on_playback_start(scene)
    play(scene, obj, [1, 2])
    return handlers, layer, obj


def test_keys_edited_right_before_a_frame_are_seen_on_that_frame(scene, mods, monkeypatch):
    """A key moved by a script with no update before the next frame (so no ``check_updates``):
    that frame, computed ahead with the old keys, is shown with the new ones, and the layer is
    set up anew only once."""
    handlers, layer, obj = playing_twelve_frames(scene, mods, seed=5)
    pb = next(p for p in obj.pose.bones if p.jointlimit.enabled and p.rotation_mode == "XZY")
    assert pb.path_from_id("rotation_euler") in paths(layer_keys(obj)[0])
    key = next(k for k in fcurves_of(obj).find(pb.path_from_id("rotation_euler"), index=0).keyframe_points
               if k.co[0] == 6)
    for point in (key.co, key.handle_left, key.handle_right):
        point[1] += 1.0
    installs = record_calls(monkeypatch, layer, "install")
    played = play(scene, obj, [6, 7, 8])
    assert len(installs) == 1
    handlers.on_playback_stop(scene, None)
    assert_same_frames(played, play(scene, obj, [6, 7, 8]))
    scene.jointlimit.clamp_playback = False


def test_channels_removed_right_before_a_remembered_frame(scene, mods):
    """F-curves removed by a script with no update before a frame computed ahead: that frame's
    evaluation makes the action's copy anew (the removal tags the action), so it is shown as the
    playback clamp shows it, without the layer's keys of the removed channels; the next frame
    sets the layer up again without them."""
    handlers, layer, obj = playing_twelve_frames(scene, mods, seed=33)
    gone = next(pb for pb in obj.pose.bones if pb.jointlimit.enabled and pb.rotation_mode == "QUATERNION")
    path = gone.path_from_id("rotation_quaternion")
    assert path in paths(layer_keys(obj)[0])
    cover = layer._layer["covers"][0]
    assert 3.0 in cover.frames
    for index in range(4):
        fcurves_of(obj).remove(fcurves_of(obj).find(path, index=index))
    played = play(scene, obj, [3, 4])
    assert layer.covers(obj) and path not in paths(layer_keys(obj)[0])
    handlers.on_playback_stop(scene, None)
    assert_same_frames(played, play(scene, obj, [3, 4]))
    scene.jointlimit.clamp_playback = False


def test_a_bone_keyed_outside_right_before_a_frame_is_clamped_on_that_frame(scene, mods):
    """As above, for a bone the layer does not key yet: keyed outside its limit with no update
    before a frame computed ahead as within it. That frame is the playback clamp's; the next
    one's keys come from the layer set up anew."""
    handlers, layer, obj = playing_still_rig(scene, mods)
    assert layer_keys(obj) == (set(), True)
    late = next(p for p in obj.pose.bones if p.jointlimit.enabled and p.rotation_mode == "QUATERNION")
    late.rotation_quaternion = (0.0, 1.0, 0.0, 0.0)
    late.keyframe_insert("rotation_quaternion", frame=20)
    played = play(scene, obj, [20, 21])
    assert layer.covers(obj) and paths(layer_keys(obj)[0]) == {late.path_from_id("rotation_quaternion")}
    handlers.on_playback_stop(scene, None)
    assert_same_frames(played, play(scene, obj, [20, 21]))
    scene.jointlimit.clamp_playback = False


def test_keyed_channels_hold_the_clamped_values_exactly(scene, mods):
    """A channel the layer keys holds the value the layer computed, as the playback clamp stores
    it: 0.5 stays 0.5 and 5e-5 stays 5e-5 (drivers, which earlier versions used, made them
    0.49999994 and 0 through the keys Blender 5 gives a new driver)."""
    from rigs import make_armature

    handlers = mods["handlers"]
    obj = make_armature([("a", (0, 0, 0), (0, 0, 1), None, 0.0), ("b", (1, 0, 0), (1, 0, 1), None, 0.0)], "Hinges")
    for pb, low in zip(obj.pose.bones, (1e-4, math.radians(60))):   # sin(low / 2) = 5e-5 and 0.5
        s = pb.jointlimit
        s.enabled, s.kind, s.hinge_axis, s.hinge_min, s.hinge_max = True, "HINGE", "X", low, math.radians(90)
        pb.rotation_mode = "QUATERNION"
        pb.rotation_quaternion = (math.cos(math.radians(-15)), math.sin(math.radians(-15)), 0, 0)  # -30° about X
        for frame in (1, 10):
            pb.keyframe_insert("rotation_quaternion", frame=frame)
    scene.jointlimit.clamp_playback = True
    reference = play(scene, obj, [5])
    handlers.on_playback_start(scene)
    played = play(scene, obj, [1, 5])[1:]
    assert len(layer_keys(obj)[0]) == 8
    x = [stored[1][1] for stored in played[0][0]]
    assert x == [stored[1][1] for stored in reference[0][0]]
    assert x == [pytest.approx(5e-5, rel=1e-6), 0.5]
    handlers.on_playback_stop(scene, None)
    scene.jointlimit.clamp_playback = False


def test_a_bone_is_keyed_once_the_clamp_moves_it(scene, mods):
    """An animation posed within the limits gets no key; a bone that leaves its limit later in
    the shot gets its keys with the batch of frames that reaches that part, before it is shown;
    every frame is the playback clamp's."""
    handlers, layer = mods["handlers"], mods["playback_layer"]
    obj = still_rig(handlers)
    late = next(pb for pb in obj.pose.bones if pb.jointlimit.enabled and pb.rotation_mode == "QUATERNION")
    late.rotation_quaternion = (0.0, 1.0, 0.0, 0.0)     # 180° about X
    late.keyframe_insert("rotation_quaternion", frame=80)
    scene.frame_start, scene.frame_end = 1, 100
    frames = list(range(1, 101))
    scene.jointlimit.clamp_playback = True
    reference = play(scene, obj, frames)
    handlers.on_playback_start(scene)
    played = play(scene, obj, frames[:layer.AHEAD])
    assert layer.covers(obj) and layer_keys(obj) == (set(), True)
    played += play(scene, obj, frames[layer.AHEAD:])
    assert paths(layer_keys(obj)[0]) == {late.path_from_id("rotation_quaternion")}
    assert len(layer_keys(obj)[0]) == 4
    assert_same_frames(played, reference)
    assert reference[79][0][obj.pose.bones.find(late.name)][1] != (0.0, 1.0, 0.0, 0.0)    # clamped at frame 80
    handlers.on_playback_stop(scene, None)
    scene.jointlimit.clamp_playback = False


def long_keyed_rig(scene, seed, end):
    """A ``keyed_rig`` without skin whose keys of frames 6 and 12 are moved to ``end // 2`` and
    ``end``, the scene's range 1..``end``."""
    obj = keyed_rig(seed=seed, skin=False)
    for fc in fcurves_of(obj):
        for point, frame in zip(fc.keyframe_points, (1, end // 2, end)):
            point.co.x, point.handle_left.x, point.handle_right.x = frame, frame - 1, frame + 1
    scene.frame_start, scene.frame_end = 1, end
    return obj


def test_a_long_shot_keeps_one_window_of_keys(scene, mods, monkeypatch):
    """A shot longer than ``WINDOW``: the evaluated copy holds the keys of at most ``WINDOW``
    frames at any time (it held every frame remembered, so each batch of a first play wrote more
    than the one before: 0.6 ms a frame by frame 1000 of 100 bones); a replay computes nothing and
    writes a window once in ``WINDOW`` frames; a jump back shows its frame; every frame is the
    playback clamp's."""
    import bpy

    handlers, layer = mods["handlers"], mods["playback_layer"]
    obj = long_keyed_rig(scene, 23, 300)
    frames = list(range(1, 301))
    checked = frames[::7] + [299, 300]
    scene.jointlimit.clamp_playback = True
    reference = play(scene, obj, checked)
    batches = record_batches(monkeypatch, layer)
    writes = record_calls(monkeypatch, layer.Cover, "write_keys")
    handlers.on_playback_start(scene)
    most = 0
    for loop in range(2):
        played = []
        for frame in frames:
            if frame in checked:
                played += play(scene, obj, [frame])
            else:
                scene.frame_set(frame)
            copy = obj.animation_data.action.evaluated_get(bpy.context.evaluated_depsgraph_get())
            most = max([most, *(len(fc.keyframe_points) for fc in mods["compat"].action_fcurve_collection(
                copy, obj.animation_data.action_slot))])
        assert_same_frames(played, reference)
        if loop == 0:
            assert sum(map(len, batches)) == 300 and len(layer_keys(obj)[0]) > 0
            batches.clear(), writes.clear()
    assert 3 <= most <= mods["playback_cover"].WINDOW
    assert batches == [] and len(writes) <= -(-300 // mods["playback_cover"].WINDOW) + 1
    assert_same_frames(play(scene, obj, [71]), [reference[checked.index(71)]])     # a jump back
    handlers.on_playback_stop(scene, None)
    scene.jointlimit.clamp_playback = False


def test_scrubbing_over_remembered_frames_writes_no_key(scene, mods, monkeypatch):
    """Fast Scrubbing: jumps among frames played before take the window of the remembered frames
    nearest the first one and write nothing more (each jump wrote a window of its frame alone:
    the review of session 20), and each shows the playback clamp's frame."""
    handlers, layer = mods["handlers"], mods["playback_layer"]
    obj = long_keyed_rig(scene, 29, 60)
    jumps = [50, 10, 40, 20, 55, 5, 30, 45]
    scene.jointlimit.clamp_playback = True
    reference = play(scene, obj, jumps)
    scene.jointlimit.fast_scrubbing = True
    play(scene, obj, list(range(1, 61)))      # every frame remembered
    assert layer.covers(obj, scene)
    writes = record_calls(monkeypatch, layer.Cover, "write_keys")
    batches = record_batches(monkeypatch, layer)
    assert_same_frames(play(scene, obj, jumps), reference)
    assert batches == [] and len(writes) <= 1
    scene.jointlimit.fast_scrubbing = False
    scene.jointlimit.clamp_playback = False


@pytest.mark.parametrize("old, new", [(100, 70), (100, 300), (1, 200)])
def test_frames_ahead_with_time_remapped(scene, mods, monkeypatch, old, new):
    """With Time Remapping, the times computed ahead are those the frames show (float32 scene
    times): one batch for the range played, equal to the playback clamp's frames; also with the
    layer's keys 0.005 frames apart (1 : 200)."""
    handlers, layer = mods["handlers"], mods["playback_layer"]
    obj = keyed_rig(seed=19, skin=False)
    scene.render.frame_map_old, scene.render.frame_map_new = old, new
    scene.frame_start, scene.frame_end = 1, 10
    frames = list(range(1, 11))
    scene.jointlimit.clamp_playback = True
    reference = play(scene, obj, frames)
    batches = record_batches(monkeypatch, layer)
    handlers.on_playback_start(scene)
    played = play(scene, obj, frames)
    handlers.on_playback_stop(scene, None)
    assert len(batches) == 1 and len(batches[0]) == 10 and batches[0][1] != 2.0
    assert_same_frames(played, reference)
    scene.render.frame_map_old = scene.render.frame_map_new = 100
    scene.jointlimit.clamp_playback = False


def test_the_frames_expected_next(scene, mods):
    """The step from the frame shown before, else the scene's step; the preview range when set.
    Outside playback a jump computes frames ahead only right after a step (a loop starting
    over), a jump after a jump (scrubbing) the frame alone."""
    layer = mods["playback_layer"]
    scene.frame_start, scene.frame_end, scene.frame_step = 1, 100, 1
    def ahead(scene, frame):
        scene.frame_current = frame
        return layer._frames_ahead(scene)(layer.AHEAD)

    layer._layer["last"], layer._layer["stepped"] = None, False
    assert ahead(scene, 10) == [] and ahead(scene, 12) == list(range(14, 12 + 2 * layer.AHEAD, 2))
    assert ahead(scene, 50) == list(range(51, 50 + layer.AHEAD))     # a jump after a step
    assert ahead(scene, 70) == [] and ahead(scene, 70) == []        # a jump after a jump, a repeat
    layer._layer["playing"], layer._layer["last"] = scene.session_uid, None
    assert ahead(scene, 10) == list(range(11, 10 + layer.AHEAD))
    assert ahead(scene, 12) == list(range(14, 12 + 2 * layer.AHEAD, 2))     # frames dropped
    assert ahead(scene, 11) == list(range(10, 0, -1))       # reversed, down to the start
    assert ahead(scene, 50) == list(range(51, 50 + layer.AHEAD))            # a jump
    assert ahead(scene, 49) == list(range(48, 49 - layer.AHEAD, -1))
    assert ahead(scene, 60) == list(range(61, 60 + layer.AHEAD))            # a jump
    scene.use_preview_range, scene.frame_preview_start, scene.frame_preview_end = True, 58, 64
    assert ahead(scene, 61) == [62, 63, 64]
    scene.use_preview_range, scene.frame_step = False, 3
    assert ahead(scene, 95) == [98]
    layer._layer["playing"] = None


def test_a_channel_deleted_or_keyed_during_playback(scene, mods):
    """F-curves removed by a script right before a frame (no update in between) are not read:
    the layer is set up anew for that frame; a limited bone keyed during playback is covered from
    the next frame on."""
    handlers, layer = mods["handlers"], mods["playback_layer"]
    obj = keyed_rig(seed=6)
    still = next(pb for pb in obj.pose.bones if pb.jointlimit.enabled and pb.rotation_mode == "XYZ")
    for fc in [fc for fc in fcurves_of(obj) if fc.data_path == still.path_from_id("rotation_euler")]:
        fcurves_of(obj).remove(fc)
    still.rotation_euler = (2.5, 0.0, 0.0)                  # outside its limit, not keyed
    scene.jointlimit.clamp_playback = True
    handlers.on_playback_start(scene)
    play(scene, obj, [1, 3])
    assert layer.covers(obj)
    assert still.path_from_id("rotation_euler") not in paths(layer_keys(obj)[0])
    assert tuple(still.rotation_euler) != (2.5, 0.0, 0.0)   # clamped once when installed
    gone = next(pb for pb in obj.pose.bones if pb.jointlimit.enabled and pb.rotation_mode == "QUATERNION")
    for index in range(4):          # the bone no longer animated
        fcurves_of(obj).remove(fcurves_of(obj).find(gone.path_from_id("rotation_quaternion"), index=index))
    played = play(scene, obj, [4, 5])
    assert layer.covers(obj)
    assert gone.path_from_id("rotation_quaternion") not in paths(layer_keys(obj)[0])
    still.rotation_euler = (2.5, 0.0, 0.0)
    still.keyframe_insert("rotation_euler", frame=1)        # outside its limit: keyed by the layer
    play(scene, obj, [6, 7])
    assert still.path_from_id("rotation_euler") in paths(layer_keys(obj)[0])
    handlers.on_playback_stop(scene, None)
    assert_same_frames(played, play(scene, obj, [4, 5]))
    scene.jointlimit.clamp_playback = False


def test_rigs_the_layer_leaves_to_the_playback_clamp(scene, mods):
    """An NLA track playing, a muted channel group, a bone keyed on some of its channels: the
    playback clamp; a muted track, even one holding the action itself (stashed), is no obstacle
    unless it is solo."""
    handlers, layer = mods["handlers"], mods["playback_layer"]
    obj = keyed_rig(seed=9, skin=False)
    assert layer.covered_bones(obj)
    track = obj.animation_data.nla_tracks.new()
    assert layer.covered_bones(obj) is None
    track.mute = True
    assert layer.covered_bones(obj)
    track.strips.new("Stashed", 1, obj.animation_data.action)  # the action stashed, then assigned again
    assert layer.covered_bones(obj)        # a muted track reads nothing
    track.mute = False
    assert layer.covered_bones(obj) is None
    track.mute = True
    key = mods["playback_cover"].animation_key(obj)
    track.is_solo = True                    # a solo track plays even muted, and the action then does not
    assert layer.covered_bones(obj) is None and mods["playback_cover"].animation_key(obj) != key
    track.is_solo = False
    group = fcurves_of(obj)[0].group            # a muted group: Blender leaves its channels alone
    group.mute = True
    assert layer.covered_bones(obj) is None
    group.mute = False
    pb = next(pb for pb in obj.pose.bones if pb.jointlimit.enabled and pb.rotation_mode == "AXIS_ANGLE")
    fcurves_of(obj).remove(fcurves_of(obj).find(pb.path_from_id("rotation_axis_angle"), index=0))
    assert layer.covered_bones(obj) is None
    scene.jointlimit.clamp_playback = True
    handlers.on_playback_start(scene)
    play(scene, obj, [2, 7])
    assert not layer.is_installed() and layer_keys(obj) == (set(), False)
    assert mods["handlers"].clamp_scene(scene, only_changed=False) == 0     # the playback clamp did it
    handlers.on_playback_stop(scene, None)
    scene.jointlimit.clamp_playback = False


def user_action(obj):
    """Every key (co and both handles, interpolation) and modifier of ``obj``'s action."""
    from rigs import compat

    data = obj.animation_data
    return [(fc.data_path, fc.array_index, [(tuple(k.co), tuple(k.handle_left), tuple(k.handle_right), k.interpolation)
                                            for k in fc.keyframe_points], [m.type for m in fc.modifiers])
            for fc in compat().action_fcurve_collection(data.action, data.action_slot)]


def test_saving_during_playback_saves_the_users_action(scene, mods, tmp_path):
    """The layer stays while the file is saved, and the file holds the user's keys."""
    import bpy

    handlers, layer, obj = playing_rig(scene, mods, seed=10)
    before = user_action(obj)
    path = str(tmp_path / "saved.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path, copy=True)
    play(scene, obj, [3])
    assert layer.covers(obj) and layer_keys(obj)[1]
    name = obj.animation_data.action.name
    with bpy.data.libraries.load(path) as (_, target):
        target.objects = [obj.name]
    saved = next(o for o in bpy.data.objects if o.name != obj.name and o.name.startswith(obj.name))
    assert saved.animation_data.action.name != name and user_action(saved) == before == user_action(obj)
    handlers.on_playback_stop(scene, None)
    scene.jointlimit.clamp_playback = False


def test_an_earlier_versions_layer_saved_in_a_file_is_removed_on_load(scene, mods, tmp_path):
    """Earlier versions drove the bones through drivers reading a helper empty; a file saved with
    them (an autosave during playback) loses them on load, and the bones follow their keys."""
    import bpy

    handlers, layer = mods["handlers"], mods["playback_layer"]
    obj = keyed_rig(seed=11)
    empty = bpy.data.objects.new(layer.LEGACY_EMPTY_NAME, None)
    empty[layer.MARK] = 1
    empty["rig_0"] = [0.5] * 4
    empty.use_fake_user = True      # else not saved (the drivers do not keep it), as it was then
    pb = next(pb for pb in obj.pose.bones if pb.jointlimit.enabled and pb.rotation_mode == "QUATERNION")
    for i in range(4):
        driver = obj.driver_add(pb.path_from_id("rotation_quaternion"), i).driver
        var = driver.variables.new()
        var.name, var.targets[0].id, var.targets[0].data_path = layer.MARK, empty, f'["rig_0"][{i}]'
    path = str(tmp_path / "autosave.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path, copy=True)
    bpy.app.handlers.load_post.remove(handlers.on_load)
    try:
        bpy.ops.wm.open_mainfile(filepath=path)
    finally:
        bpy.app.handlers.load_post.append(handlers.on_load)
    obj = bpy.data.objects["Live"]
    assert len(obj.animation_data.drivers) == 4 and layer.LEGACY_EMPTY_NAME in bpy.data.objects
    handlers.on_load()                                  # what load_post does
    assert len(obj.animation_data.drivers) == 0 and not [o for o in bpy.data.objects if o.get(layer.MARK)]
    bpy.context.scene.jointlimit.clamp_playback = False
    first = snapshot(obj)
    bpy.context.scene.frame_set(6)
    assert snapshot(obj) != first                         # the keys move the bones again


def test_renamed_rig_and_bone_during_playback_leave_nothing_behind(scene, mods, tmp_path):
    """A bone renamed (Blender renames the action's paths, which copies it anew) and the armature
    renamed while the layer is installed: the frames are the playback clamp's, and stopping
    leaves the evaluated action as the user's; a file loaded while playing is not playing
    (scrubbing it sets up no layer)."""
    import bpy

    handlers, layer, obj = playing_rig(scene, mods, seed=12)
    pb = next(pb for pb in obj.pose.bones if pb.jointlimit.enabled)
    obj.data.bones[pb.name].name = "renamed bone"
    obj.name = "Renamed Rig"
    played = play(scene, obj, [3, 4])
    assert layer.covers(obj)
    handlers.on_playback_stop(scene, None)
    assert layer_keys(obj) == (set(), False)
    assert_same_frames(played, play(scene, obj, [3, 4]))
    handlers.on_playback_start(scene)
    play(scene, obj, [4])
    assert layer.covers(obj)
    path = str(tmp_path / "playing.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path, copy=True)
    bpy.ops.wm.open_mainfile(filepath=path)             # Blender stops playing a file it replaces
    scene = bpy.context.scene
    scene.frame_set(5)
    assert not layer.is_installed() and layer_keys(bpy.data.objects["Renamed Rig"]) == (set(), False)
    scene.jointlimit.clamp_playback = False


def test_two_bones_swapping_names_right_before_a_frame(scene, mods):
    """Two covered bones of one rotation mode with different limits swap names by script, with no
    update before the next frame: that frame is the playback clamp's (Blender renames the
    action's paths, which copies it anew)."""
    handlers, layer, obj = playing_rig(scene, mods, seed=21)
    bones = obj.pose.bones
    a, b = next((p, q) for p in bones for q in bones
                if p.jointlimit.enabled and q.jointlimit.enabled and p.rotation_mode == q.rotation_mode == "QUATERNION"
                and p.jointlimit.swing_x_max != q.jointlimit.swing_x_max)
    names = a.name, b.name
    obj.data.bones[names[0]].name = "swap"
    obj.data.bones[names[1]].name = names[0]
    obj.data.bones["swap"].name = names[1]
    layer.forget_results()          # frames not computed yet
    played = play(scene, obj, [3, 4])
    handlers.on_playback_stop(scene, None)
    assert_same_frames(played, play(scene, obj, [3, 4]))
    scene.jointlimit.clamp_playback = False


def test_a_driver_added_during_playback_is_the_users(scene, mods):
    """A driver the user adds during playback on a limited bone's rotation (not driven by the
    layer yet) hands the rig to the playback clamp, and stays when playback stops."""
    handlers, layer, obj = playing_still_rig(scene, mods)
    assert layer.covers(obj) and layer_keys(obj)[0] == set()
    pb = next(p for p in obj.pose.bones if p.jointlimit.enabled and p.rotation_mode == "QUATERNION")
    fc = obj.driver_add(pb.path_from_id("rotation_quaternion"), 1)
    fc.driver.type = "SCRIPTED"
    fc.driver.expression = "0.9"           # far outside any limit
    played = play(scene, obj, [3])
    assert not layer.covers(obj)
    handlers.on_playback_stop(scene, None)
    drivers = [(d.data_path, d.array_index, d.driver.expression) for d in obj.animation_data.drivers]
    assert drivers == [(pb.path_from_id("rotation_quaternion"), 1, "0.9")]
    assert_same_frames(played, play(scene, obj, [3]))
    scene.jointlimit.clamp_playback = False


def test_the_users_action_is_never_touched(scene, mods):
    """Keys, handles, interpolation and modifiers of the user's action are the same after
    playing with the layer; a channel with F-curve modifiers (a Noise, computed into the values)
    plays as the playback clamp has it."""
    handlers, layer = mods["handlers"], mods["playback_layer"]
    obj = keyed_rig(seed=23)
    pb = next(p for p in obj.pose.bones if p.jointlimit.enabled and p.rotation_mode == "QUATERNION")
    noise = fcurves_of(obj).find(pb.path_from_id("rotation_quaternion"), index=2).modifiers.new("NOISE")
    noise.strength, noise.scale = 2.0, 3.0
    before = user_action(obj)
    scene.jointlimit.clamp_playback = True
    reference = play(scene, obj)
    handlers.on_playback_start(scene)
    played = play(scene, obj)
    assert layer.covers(obj) and (pb.path_from_id("rotation_quaternion"), 2) in layer_keys(obj)[0]
    assert user_action(obj) == before
    handlers.on_playback_stop(scene, None)
    assert user_action(obj) == before and layer_keys(obj) == (set(), False)
    assert_same_frames(played, reference)
    scene.jointlimit.clamp_playback = False


def assert_left_to_the_playback_clamp(scene, handlers, layer, obj):
    """Played, ``obj`` gets no layer and the frames the playback clamp gives it."""
    scene.jointlimit.clamp_playback = True
    reference = play(scene, obj, [2, 7])
    handlers.on_playback_start(scene)
    played = play(scene, obj, [2, 7])
    assert not layer.is_installed()
    assert_same_frames(played, reference)
    handlers.on_playback_stop(scene, None)
    scene.jointlimit.clamp_playback = False


def test_an_action_animating_another_armature_too_is_left_to_the_playback_clamp(scene, mods):
    """Two armatures playing one action would share its evaluated copy, keys included."""
    import bpy

    handlers, layer = mods["handlers"], mods["playback_layer"]
    obj = keyed_rig(seed=24, skin=False)
    assert layer.covered_bones(obj)
    other = obj.copy()
    bpy.context.scene.collection.objects.link(other)
    other.animation_data.action = obj.animation_data.action
    other.animation_data.action_slot = obj.animation_data.action_slot
    assert layer.covered_bones(obj) is None and layer.covered_bones(other) is None
    assert_left_to_the_playback_clamp(scene, handlers, layer, obj)


def test_a_view_layer_evaluated_later_gets_the_keys(scene, mods):
    """A second view layer's depsgraph, evaluated during playback after the layer was set up,
    has its own copy of the action: it gets the keys before the next frame."""
    handlers, layer, obj = playing_rig(scene, mods, seed=25)
    second = scene.view_layers.new("Second")
    second.update()
    assert layer_keys(obj, second) == (set(), False)     # made from the user's action
    play(scene, obj, [3])
    second.update()
    keyed, marked = layer_keys(obj, second)
    assert marked and keyed == layer_keys(obj)[0] and keyed
    matrices = [np.array(pb.matrix) for pb in obj.evaluated_get(second.depsgraph).pose.bones]
    for a, b in zip(matrices, play(scene, obj, [3])[0][1]):
        np.testing.assert_allclose(a, b, atol=1e-6)
    handlers.on_playback_stop(scene, None)
    assert layer_keys(obj, second) == (set(), False)
    scene.view_layers.remove(second)
    scene.jointlimit.clamp_playback = False


def test_the_layer_is_built_once_and_left_alone_by_the_playback_clamp(scene, mods, monkeypatch):
    """Frames, a selection and the rig moved do not rebuild the layer; the playback clamp does
    not touch the covered rig; the evaluated copy of the action holds the latest batch, and this
    frame's values at its time; a covered bone's rotation mode changed rebuilds it, with the
    playback clamp's result; a bone without keys turned while playing is clamped."""
    import bpy

    handlers, layer = mods["handlers"], mods["playback_layer"]
    obj = keyed_rig(seed=13)
    still = next(pb for pb in obj.pose.bones if pb.jointlimit.enabled and pb.rotation_mode == "QUATERNION")
    for fc in [fc for fc in fcurves_of(obj) if fc.data_path == still.path_from_id("rotation_quaternion")]:
        fcurves_of(obj).remove(fc)
    bpy.context.view_layer.update()
    installs = record_calls(monkeypatch, layer, "install")
    clamped = record_calls(monkeypatch, handlers, "clamp_object", lambda o, only_changed: o.name)
    scene.jointlimit.clamp_playback = True
    handlers.on_playback_start(scene)
    play(scene, obj, [1, 2, 3])
    mods["compat"].select_pose_bone(obj.pose.bones[0], True)
    bpy.context.view_layer.update()
    obj.location.x += 0.5
    bpy.context.view_layer.update()
    clamped.clear()
    play(scene, obj, [4, 5])
    assert len(installs) == 1 and obj.name not in clamped
    cover = layer._layer["covers"][0]
    copy = obj.animation_data.action.evaluated_get(bpy.context.view_layer.depsgraph)
    assert copy.get(layer.MARK) == cover.batch
    values = cover.values(scene.frame_current_final).astype(np.float32).tolist()
    curves = mods["compat"].action_fcurve_collection(copy, obj.animation_data.action_slot)
    for b in np.flatnonzero(cover.moved).tolist():
        bone = cover.bones[b]
        got = [curves.find(bone.path, index=i).evaluate(scene.frame_current_final) for i in range(bone.width)]
        assert got == values[cover.offsets[b]:cover.offsets[b] + bone.width]
    still.rotation_quaternion = (0.0, 0.0, 0.0, 1.0)           # 180° about Z: outside
    bpy.context.view_layer.update()
    assert mods["handlers"].clamp_object_per_bone(obj, False) == 0     # clamped at once
    turned = next(pb for pb in obj.pose.bones if pb.jointlimit.enabled and pb.rotation_mode == "YZX")
    turned.rotation_mode = "ZXY"        # its keyed Euler channel, now read in another order
    bpy.context.view_layer.update()
    played = play(scene, obj, [6, 7])
    assert len(installs) == 2
    handlers.on_playback_stop(scene, None)
    assert_same_frames(played, play(scene, obj, [6, 7]))
    handlers.on_playback_start(scene)
    play(scene, obj, [8])
    assert layer.covers(obj)
    obj.animation_data.action_influence = 0.5       # blended: the playback clamp from this frame on
    play(scene, obj, [9])
    assert not layer.is_installed()
    handlers.on_playback_stop(scene, None)
    scene.jointlimit.clamp_playback = False


def test_a_rotation_mode_changed_right_before_a_frame_while_playing_rebuilds_the_layer(scene, mods):
    """During playback a script changes a covered bone's rotation mode and steps the frame with no
    update in between: the frame compares the covered bones' modes first and removes the layer
    (the playback clamp clamps the frame: inside the limit), and the next frames are the playback
    clamp's of the user's keys in the new mode (before, the layer read its values in the old mode
    until playback stopped)."""
    import bpy

    handlers, layer, obj = playing_rig(scene, mods, seed=31)
    turned = next(pb for pb in obj.pose.bones if pb.jointlimit.enabled and pb.rotation_mode == "YZX")
    turned.rotation_mode = "ZXY"        # its keyed Euler channel, now read in another order
    scene.frame_set(3)
    assert not layer.is_installed()
    limit = mods["bone_limits"].build_limit(turned.jointlimit)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    q = mods["bone_limits"].read_rotation(obj.evaluated_get(depsgraph).pose.bones[turned.name])
    assert mods["bone_limits"].is_inside(limit, q, mods["bone_limits"].storage_tol(math.pi))
    played = play(scene, obj, [4, 5])
    assert layer.covers(obj)
    assert [bone.mode for bone in layer._layer["covers"][0].bones if bone.name == turned.name] == ["ZXY"]
    handlers.on_playback_stop(scene, None)
    assert_same_frames(played, play(scene, obj, [4, 5]))
    scene.jointlimit.clamp_playback = False


def test_an_armature_removed_right_before_the_layer_is_set_up(scene, mods):
    """A script removes an armature and steps the frame on which the layer is set up: the view
    layer lists the removed object as ``None`` until the frame resyncs it; the armatures are
    found without it (a traceback in ``frame_change_pre`` before)."""
    import bpy

    handlers, layer = mods["handlers"], mods["playback_layer"]
    obj = keyed_rig(seed=32, skin=False)
    other = bpy.data.objects.new("Other", bpy.data.armatures.new("Other"))
    scene.collection.objects.link(other)
    scene.jointlimit.clamp_playback = True
    play(scene, obj, [1, 2])
    handlers.view_layer_armatures(scene)        # remembered with the other armature
    bpy.data.objects.remove(other)
    assert None in list(bpy.context.view_layer.objects)     # (resynced on the next evaluation)
    assert handlers.view_layer_armatures(scene) == [obj]
    handlers.on_playback_start(scene)
    play(scene, obj, [3])
    assert layer.covers(obj)
    handlers.on_playback_stop(scene, None)
    scene.jointlimit.clamp_playback = False


def test_a_channel_without_keys_is_not_keyed(scene, mods):
    """An F-curve with no keys (Blender's animation leaves its channel alone) makes its bone
    partially keyed: the playback clamp."""
    layer = mods["playback_layer"]
    obj = keyed_rig(seed=14)
    pb = next(pb for pb in obj.pose.bones if pb.jointlimit.enabled and pb.rotation_mode == "XYZ")
    fc = fcurves_of(obj).find(pb.path_from_id("rotation_euler"), index=1)
    while len(fc.keyframe_points):
        fc.keyframe_points.remove(fc.keyframe_points[0])
    assert layer.covered_bones(obj) is None
    fc.modifiers.new("GENERATOR")
    assert layer.covered_bones(obj)


def test_a_failing_install_leaves_nothing_and_is_not_retried_every_frame(scene, mods, monkeypatch):
    import bpy

    handlers, layer = mods["handlers"], mods["playback_layer"]
    keyed_rig(seed=15)
    calls = []

    def broken(*args):
        calls.append(1)
        raise RuntimeError("keys refused")

    monkeypatch.setattr(layer.Cover, "write_keys", broken)
    scene.jointlimit.clamp_playback = True
    bpy.context.view_layer.update()         # the evaluated copy of the action, to write into
    handlers.on_playback_start(scene)
    with pytest.raises(RuntimeError):
        layer.before_frame(scene)
    for frame in (1, 2, 3):
        scene.frame_set(frame)
    assert len(calls) == 1 and not layer.is_installed()
    assert handlers.clamp_scene(scene, only_changed=False) == 0     # the playback clamp did it
    handlers.on_playback_stop(scene, None)
    scene.jointlimit.clamp_playback = False


def test_an_action_swapped_or_cleared_during_playback(scene, mods):
    """Another action assigned while playing: that frame is the playback clamp's, the next one the
    layer's with the new action's keys; the first action's copy is made anew (no keys left in it
    when it plays again). Animation data cleared while playing: the layer goes, nothing fails."""
    handlers, layer, obj = playing_rig(scene, mods, seed=26)
    first = obj.animation_data.action
    second = first.copy()
    obj.animation_data.action = second
    obj.animation_data.action_slot = second.slots[0]
    played = play(scene, obj, [3, 4])
    assert layer.covers(obj) and layer_keys(obj)[1]
    obj.animation_data.action = first
    obj.animation_data.action_slot = first.slots[0]
    played += play(scene, obj, [5, 6])
    assert layer.covers(obj) and layer_keys(obj)[1]
    handlers.on_playback_stop(scene, None)
    assert layer_keys(obj) == (set(), False)
    assert_same_frames(played, play(scene, obj, [3, 4, 5, 6]))
    handlers.on_playback_start(scene)
    play(scene, obj, [7])
    obj.animation_data_clear()
    play(scene, obj, [8, 9])
    assert not layer.is_installed()
    handlers.on_playback_stop(scene, None)
    scene.jointlimit.clamp_playback = False


def test_actions_the_layer_cannot_key_are_left_to_the_playback_clamp(scene, mods, tmp_path):
    """A linked action (its evaluated copy is read-only: keys would be written as zeros), F-curves
    baked to samples (no keys to write among), and an Action constraint reading the rig's own
    action (it would read the layer's keys): the playback clamp, with its results."""
    import bpy

    handlers, layer = mods["handlers"], mods["playback_layer"]
    obj = keyed_rig(seed=27, skin=False)
    action = obj.animation_data.action
    action.name, action.use_fake_user = "Library action", True
    library = str(tmp_path / "library.blend")
    bpy.data.libraries.write(library, {action}, fake_user=True)
    with bpy.data.libraries.load(library, link=True) as (_, target):
        target.actions = ["Library action"]
    linked = target.actions[0]
    assert linked.library is not None
    obj.animation_data.action = linked
    obj.animation_data.action_slot = linked.slots[0]
    assert layer.covered_bones(obj) is None
    obj.animation_data.action = action
    obj.animation_data.action_slot = action.slots[0]
    assert layer.covered_bones(obj)
    pb = next(p for p in obj.pose.bones if p.jointlimit.enabled and p.rotation_mode == "QUATERNION")
    con = pb.constraints.new("ACTION")
    con.action = action
    assert layer.covered_bones(obj) is None
    pb.constraints.remove(con)
    fcurves_of(obj).find(pb.path_from_id("rotation_quaternion"), index=0).convert_to_samples(1, 12)
    assert layer.covered_bones(obj) is None
    assert_left_to_the_playback_clamp(scene, handlers, layer, obj)


def test_another_rig_given_the_action_during_playback(scene, mods):
    """A rig without limits given the covered action during playback would play the layer's keys:
    the layer goes (the action's users changed) and is not set up again while both play it."""
    import bpy

    handlers, layer = mods["handlers"], mods["playback_layer"]
    obj = keyed_rig(seed=28, skin=False)
    other = obj.copy()
    other.data = obj.data.copy()
    other.animation_data_clear()
    for pb in other.pose.bones:
        pb.jointlimit.enabled = False
    bpy.context.scene.collection.objects.link(other)
    bpy.context.view_layer.update()
    scene.jointlimit.clamp_playback = True
    handlers.on_playback_start(scene)
    play(scene, obj, [1, 2])
    assert layer.covers(obj)
    action = obj.animation_data.action
    other.animation_data_create()
    other.animation_data.action = action
    other.animation_data.action_slot = action.slots[0]
    bpy.context.view_layer.update()
    played = play(scene, other, [3, 4, 5])
    assert not layer.is_installed()
    handlers.on_playback_stop(scene, None)
    assert_same_frames(played, play(scene, other, [3, 4, 5]))
    scene.jointlimit.clamp_playback = False


def hinge_at(pb, degrees):
    """``pb`` limited to a 0..140° hinge about X (or left free with ``None``), turned ``degrees``."""
    pb.jointlimit.enabled = degrees is not None
    pb.jointlimit.kind, pb.jointlimit.hinge_min, pb.jointlimit.hinge_max = "HINGE", 0.0, math.radians(140)
    pb.rotation_mode = "XYZ"
    pb.rotation_euler = (math.radians(degrees or 170), 0.0, 0.0)


def test_armatures_beside_a_covered_rig_are_clamped_once_they_have_limits(scene, mods, monkeypatch):
    """While the layer covers every limited rig of the view layer, frame after frame the playback
    clamp has nothing to do and does not look again; an armature given a limit, or a limited one
    added, is clamped on the next frame all the same (no update in between)."""
    import bpy
    from rigs import make_armature

    handlers, layer = mods["handlers"], mods["playback_layer"]
    other = make_armature([("a", (0, 0, 0), (0, 0, 1), None, 0.0)], "Unlimited")
    hinge_at(other.pose.bones["a"], None)
    obj = keyed_rig(seed=31)
    scene.jointlimit.clamp_playback = True
    handlers.on_playback_start(scene)
    looked = []
    clamp_object = handlers.clamp_object
    monkeypatch.setattr(handlers, "clamp_object", lambda o, only_changed: looked.append(o.name) or clamp_object(o, only_changed))
    play(scene, obj, [1, 2])
    assert layer.covers(obj) and "Unlimited" in looked
    looked.clear()
    play(scene, obj, [3, 4])
    assert looked == []                                     # nothing of its own to clamp
    hinge_at(other.pose.bones["a"], 170)                    # a limit given by a script: no update
    play(scene, obj, [5])
    assert math.degrees(other.pose.bones["a"].rotation_euler[0]) == pytest.approx(140, abs=1e-4)
    added = make_armature([("a", (0, 0, 0), (0, 0, 1), None, 0.0)], "Added")
    hinge_at(added.pose.bones["a"], 170)
    other.pose.bones["a"].rotation_euler = (math.radians(175), 0.0, 0.0)
    play(scene, obj, [6])
    for rig in (added, other):
        assert math.degrees(rig.pose.bones["a"].rotation_euler[0]) == pytest.approx(140, abs=1e-4)
    assert layer.covers(obj) and bpy.data.objects["Added"].name in looked
    handlers.on_playback_stop(scene, None)
    scene.jointlimit.clamp_playback = False


def test_copies_are_looked_at_again_after_an_update_or_a_new_batch(scene, mods, monkeypatch):
    """Between batches a frame whose copy was keyed when the frame before was evaluated writes
    no keys; an update in between (a copy may have been made anew) or a new batch looks again."""
    import bpy

    handlers, layer, obj = playing_rig(scene, mods, seed=32)
    cover = layer._layer["covers"][0]
    looked = []
    copies = type(cover).copies
    monkeypatch.setattr(type(cover), "copies", lambda self, scene: looked.append(1) or copies(self, scene))
    play(scene, obj, [3, 4])
    assert looked == []
    bpy.context.view_layer.update()
    obj.location.x += 1.0           # an update: the copies are looked at on the next frame
    bpy.context.view_layer.update()
    play(scene, obj, [5])
    assert looked == [1]
    layer.forget_results()          # the next frame is computed anew: a batch, written to the copy
    play(scene, obj, [6])
    assert looked == [1, 1] and layer_keys(obj)[1]
    handlers.on_playback_stop(scene, None)
    scene.jointlimit.clamp_playback = False


def test_an_armature_swapped_in_with_the_object_count_unchanged_is_clamped(scene, mods):
    """A script unlinks an armature without limits and links a limited one between frames (no
    update, the same number of objects): the next frame's evaluation saw the collection change,
    so the playback clamp looks again and clamps the new armature."""
    import bpy
    from rigs import make_armature

    handlers, layer = mods["handlers"], mods["playback_layer"]
    late = make_armature([("a", (0, 0, 0), (0, 0, 1), None, 0.0)], "Late")
    hinge_at(late.pose.bones["a"], 170)
    bpy.ops.object.mode_set(mode="OBJECT")
    scene.collection.objects.unlink(late)
    other = make_armature([("a", (0, 0, 0), (0, 0, 1), None, 0.0)], "Unlimited")
    hinge_at(other.pose.bones["a"], None)
    obj = keyed_rig(seed=31)
    scene.jointlimit.clamp_playback = True
    handlers.on_playback_start(scene)
    play(scene, obj, [1, 2, 3, 4])
    assert layer.covers(obj) and handlers._state["quiet"] is not None
    scene.collection.objects.unlink(other)
    scene.collection.objects.link(late)
    play(scene, obj, [5, 6])
    assert math.degrees(late.pose.bones["a"].rotation_euler[0]) == pytest.approx(140, abs=1e-4)
    handlers.on_playback_stop(scene, None)
    scene.jointlimit.clamp_playback = False


@pytest.mark.parametrize("playing", [False, True])
def test_an_object_deleted_and_a_limited_armature_added_are_seen(scene, mods, playing):
    """An empty deleted and a limited armature added (the same number of objects, updates in
    between): the playback clamp finds the new armature, playing or stepping frames."""
    import bpy
    from rigs import make_armature

    handlers = mods["handlers"]
    empty = bpy.data.objects.new("E", None)
    scene.collection.objects.link(empty)
    obj = keyed_rig(seed=31)
    scene.jointlimit.clamp_playback = True
    if playing:
        handlers.on_playback_start(scene)
    play(scene, obj, [1, 2, 3])
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.data.objects.remove(empty)
    bpy.context.view_layer.update()
    late = make_armature([("a", (0, 0, 0), (0, 0, 1), None, 0.0)], "Late")
    hinge_at(late.pose.bones["a"], 170)
    bpy.context.view_layer.update()
    play(scene, obj, [4, 5])
    assert math.degrees(late.pose.bones["a"].rotation_euler[0]) == pytest.approx(140, abs=1e-4)
    if playing:
        handlers.on_playback_stop(scene, None)
    scene.jointlimit.clamp_playback = False


def _undo_steps():
    import bpy

    for step in ("first", "second"):        # undo to the very first step would reload everything
        bpy.ops.ed.undo_push(message=step)


@pytest.mark.parametrize("what", ["clamp playback switched on", "a limit enabled"])
def test_undo_while_playing_leaves_no_key_behind(scene, mods, what):
    """Undo during playback to before Clamp Playback was on (or before a limit was enabled):
    undo keeps the evaluated copy of an action it did not change, so the layer's keys would go on
    playing; the copy is made anew, the frames are the user's keys, during playback and after."""
    import bpy

    handlers = mods["handlers"]
    obj = keyed_rig(seed=34, skin=False)
    name = obj.name
    if what == "a limit enabled":
        scene.jointlimit.clamp_playback = True
        pb = next(pb for pb in obj.pose.bones if pb.jointlimit.enabled)
        pb.jointlimit.enabled = False
    _undo_steps()
    if what == "a limit enabled":
        pb.jointlimit.enabled = True
    else:
        scene.jointlimit.clamp_playback = True
    bpy.ops.ed.undo_push(message=what)
    handlers.on_playback_start(scene)
    play(scene, obj, [1, 2, 3])
    assert layer_keys(obj)[0]
    bpy.ops.ed.undo()
    scene, obj = bpy.context.scene, bpy.data.objects[name]
    played = play(scene, obj, [8, 9])
    handlers.on_playback_stop(scene, None)
    stopped = play(scene, obj, [8, 9])
    assert not layer_keys(obj)[1]
    obj.animation_data.action.update_tag()      # made anew from the user's keys
    reference = play(scene, obj, [8, 9])        # not playing: the playback clamp, or no clamp at all
    assert_same_frames(played, reference)
    assert_same_frames(stopped, reference)
    scene.jointlimit.clamp_playback = False


def test_a_rig_playing_in_one_scene_is_clamped_in_another_one_switched_to(scene, mods):
    """The window switches to another scene holding the same rig while the layer covers it in
    the first one: that scene's frames are its playback clamp's, every limited bone inside."""
    import bpy

    handlers = mods["handlers"]
    obj = keyed_rig(seed=35, skin=False)
    other = bpy.data.scenes.new("Shot B")
    other.collection.objects.link(obj)
    other.frame_end, other.jointlimit.clamp_playback = 12, True
    scene.jointlimit.clamp_playback = True
    handlers.on_playback_start(scene)
    play(scene, obj, [1, 2, 3])
    assert mods["playback_layer"].covers(obj)
    window = bpy.context.window
    window.scene = other
    bone_limits = importlib.import_module(handlers.__name__.rsplit(".", 1)[0] + ".bone_limits")
    try:
        for frame in (6, 7, 8):
            other.frame_set(frame)
            for pb in obj.pose.bones:
                limit = bone_limits.cached_limit(pb.jointlimit)[0] if pb.jointlimit.enabled else None
                if limit is not None:
                    q = np.array(bone_limits.read_rotation(pb))
                    assert bone_limits.quat.angle_between(limit.clamp(q), q) < 1e-4, (frame, pb.name)
        handlers.on_playback_stop(other, None)
    finally:
        window.scene = scene
        bpy.data.scenes.remove(other)
    scene.jointlimit.clamp_playback = False


def _probe_engine():
    """A render engine that records, per rendered frame, what the render's depsgraph finally
    evaluated (after Blender's second pass): each armature's bone X angles (degrees) and height."""
    import bpy

    class Probe(bpy.types.RenderEngine):
        bl_idname = "JL_TEST_PROBE"
        bl_label = "Probe"
        seen = []

        def render(self, depsgraph):
            for obj in depsgraph.objects:
                if obj.type == "ARMATURE":
                    Probe.seen.append(({pb.name: math.degrees(pb.rotation_euler[0]) for pb in obj.pose.bones},
                                       obj.matrix_world.translation.z))
            result = self.begin_result(0, 0, 4, 4)
            self.end_result(result)

    bpy.utils.register_class(Probe)
    return Probe


def probe_renders(scene):
    """A camera and the probe engine (``_probe_engine``) rendering ``scene`` at 4 x 4 pixels."""
    import bpy

    camera = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    scene.collection.objects.link(camera)
    scene.camera = camera
    probe = _probe_engine()
    scene.render.engine = probe.bl_idname
    scene.render.resolution_x = scene.render.resolution_y = 4
    scene.render.resolution_percentage = 100
    return probe


def render_frame(scene, probe, frame, rigs):
    """Render ``frame`` of ``scene`` with the probe engine (``probe_renders``); what it saw of each
    of the ``rigs`` armatures."""
    import bpy

    probe.seen.clear()
    scene.frame_start = scene.frame_end = frame
    bpy.ops.render.render(animation=True)
    assert len(probe.seen) == rigs
    return list(probe.seen)


def test_renders_show_the_clamped_animation_and_the_rest_of_it(scene, mods):
    """A render's depsgraph does not write what it animated back to the pose: the keyed limited
    bone is clamped in the rendered frame all the same (stepped, and while the layer plays the rig),
    the rest of the animation (another bone, the rig's height) is the frame's, and the pose stored
    in the rig (an unkeyed limited bone posed inside its limit) is left as it is."""
    import bpy
    from rigs import make_armature

    handlers = mods["handlers"]
    obj = make_armature([("a", (0, 0, 0), (0, 0, 1), None, 0.0), ("b", (1, 0, 0), (1, 0, 1), None, 0.0),
                         ("c", (2, 0, 0), (2, 0, 1), None, 0.0)], "Rendered")
    bones = obj.pose.bones
    for pb, (lo, hi) in zip(bones, ((10, 170), (0, 90))):
        hinge_at(pb, lo if pb.name == "a" else None)
        pb.jointlimit.hinge_max = math.radians(90)
        for frame, degrees in ((1, lo), (10, hi)):
            pb.rotation_euler = (math.radians(degrees), 0.0, 0.0)
            pb.keyframe_insert("rotation_euler", frame=frame)
    hinge_at(bones["c"], 30)
    bones["c"].jointlimit.hinge_max = math.radians(90)
    for frame, z in ((1, 0.0), (10, 9.0)):
        obj.location.z = z
        obj.keyframe_insert("location", frame=frame)
    bpy.ops.object.mode_set(mode="OBJECT")
    probe = probe_renders(scene)

    def render():
        return render_frame(scene, probe, 8, rigs=1)[0]

    try:
        scene.frame_set(1)
        unclamped, height = render()
        assert unclamped["a"] > 140 and 0 < unclamped["b"] < 90 and height > 7
        scene.jointlimit.clamp_playback = True
        scene.frame_set(1)
        stepped = render()
        handlers.on_playback_start(scene)
        play(scene, obj, [6, 7, 8])
        assert mods["playback_layer"].covers(obj)
        while_playing = render()
        handlers.on_playback_stop(scene, None)
        for angles, z in (stepped, while_playing):
            assert angles["a"] == pytest.approx(90, abs=1e-4)
            assert angles["b"] == pytest.approx(unclamped["b"], abs=1e-5) and z == pytest.approx(height, abs=1e-6)
            assert angles["c"] == pytest.approx(30, abs=1e-4)
        assert math.degrees(bones["c"].rotation_euler[0]) == pytest.approx(30, abs=1e-4)
    finally:
        scene.render.engine = "BLENDER_WORKBENCH"
        bpy.utils.unregister_class(probe)
        scene.jointlimit.clamp_playback = False


def test_rigs_sharing_an_action_render_clamped_when_their_limits_agree(scene, mods, capfd):
    """Two rigs playing one action (a character duplicated with its action, a crowd given one
    walk): a render keys the render's copy of the action once for both when their keyed limited
    bones agree (the same limits and rotation modes), so each renders clamped, stepped and
    while the other plays it; when one rig's limit differs, keys in the shared copy would be
    wrong for the other: neither is keyed and both render their animation as keyed (README), which
    the render says once on the console, naming both rigs (it said nothing)."""
    import bpy
    from rigs import make_armature

    obj = make_armature([("a", (0, 0, 0), (0, 0, 1), None, 0.0), ("b", (1, 0, 0), (1, 0, 1), None, 0.0)], "Walker")
    for pb in obj.pose.bones:
        hinge_at(pb, 10 if pb.name == "a" else None)
        pb.jointlimit.hinge_max = math.radians(90)
        for frame, degrees in ((1, 10), (10, 170)):
            pb.rotation_euler = (math.radians(degrees), 0.0, 0.0)
            pb.keyframe_insert("rotation_euler", frame=frame)
    bpy.ops.object.mode_set(mode="OBJECT")
    twin = obj.copy()       # the same action, armature and limits
    scene.collection.objects.link(twin)
    twin.location.x = 3.0
    assert twin.animation_data.action == obj.animation_data.action
    probe = probe_renders(scene)

    def render():
        seen = render_frame(scene, probe, 8, rigs=2)
        return [angles["a"] for angles, _z in seen], [angles["b"] for angles, _z in seen]

    try:
        scene.jointlimit.clamp_playback = True
        scene.frame_set(1)
        capfd.readouterr()
        clamped, free = render()
        assert clamped == pytest.approx([90, 90], abs=1e-4) and free[0] == free[1] > 140    # b has no limit
        assert "unclamped in this render" not in capfd.readouterr().err
        twin.pose.bones["a"].jointlimit.hinge_max = math.radians(60)
        scene.frame_set(1)
        disagreeing, _ = render()
        assert min(disagreeing) > 140       # as keyed, both (the shared copy cannot hold two clamps)
        said = [line for line in capfd.readouterr().err.splitlines() if "unclamped in this render" in line]
        assert len(said) == 1 and obj.name in said[0] and twin.name in said[0] and "Bake Joint Limits" in said[0]
        twin.pose.bones["a"].jointlimit.hinge_max = math.radians(90)
        mods["handlers"].on_playback_start(scene)
        play(scene, obj, [6, 7, 8])
        clamped, _ = render()
        mods["handlers"].on_playback_stop(scene, None)
        assert clamped == pytest.approx([90, 90], abs=1e-4)
    finally:
        scene.render.engine = "BLENDER_WORKBENCH"
        bpy.utils.unregister_class(probe)
        scene.jointlimit.clamp_playback = False


def box_on_bone_shot(scene, obj, bone, frames, size, width, length, distance):
    """A box (``2 width`` across, ``length`` along the bone) parented to ``bone`` of ``obj``, an
    orthographic camera ``distance`` along X looking at it, Workbench at ``size`` x ``size``
    pixels, and ``frames`` (a range) the scene's."""
    import bpy

    mesh = bpy.data.meshes.new("Box")
    mesh.from_pydata([(x, y, z) for x in (-width, width) for y in (-0.1, length) for z in (-width, width)], [],
                     [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)])
    box = bpy.data.objects.new("Box", mesh)
    scene.collection.objects.link(box)
    box.parent, box.parent_type, box.parent_bone = obj, "BONE", bone
    camera = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    scene.collection.objects.link(camera)
    camera.location, camera.rotation_euler = (distance, 0.0, 0.5), (math.radians(90), 0.0, math.radians(90))
    camera.data.type, camera.data.ortho_scale, scene.camera = "ORTHO", 3.0, camera
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.resolution_x = scene.render.resolution_y = size
    scene.render.resolution_percentage = 100
    scene.frame_start, scene.frame_end = frames[0], frames[-1]


def rendered_frames(scene, tmp_path, tag, frames):
    """Render the scene's animation to ``tmp_path`` (``tag_####.png``); the images of ``frames``,
    ``(size, size, 4)`` each."""
    import bpy

    scene.render.filepath = str(tmp_path / f"{tag}_")
    bpy.ops.render.render(animation=True)
    size = scene.render.resolution_x
    images = []
    for frame in frames:
        image = bpy.data.images.load(str(tmp_path / f"{tag}_{frame:04d}.png"), check_existing=False)
        images.append(np.array(image.pixels[:]).reshape(size, size, 4))
        bpy.data.images.remove(image)
    return images


def test_a_rendered_sequence_clamps_each_frame_as_its_own(scene, mods, tmp_path):
    """Frames rendered one after the other in one render (Workbench keeps the render's copy of
    the action from frame to frame): a bone outside its limit on the first frames and inside on
    the later ones is clamped on the first and follows its keys on the later, as the same frames
    keyed by hand with the clamped angles render."""
    import bpy
    from rigs import compat, make_armature

    obj = make_armature([("a", (0, 0, 0), (0, 0, 1), None, 0.0)], "Sequence")
    pb = obj.pose.bones["a"]
    hinge_at(pb, 170)
    pb.jointlimit.hinge_max = math.radians(90)
    for frame, degrees in ((1, 170), (10, 10)):
        pb.rotation_euler = (math.radians(degrees), 0.0, 0.0)
        pb.keyframe_insert("rotation_euler", frame=frame)
    bpy.ops.object.mode_set(mode="OBJECT")
    frames = range(2, 10)
    box_on_bone_shot(scene, obj, "a", frames, size=32, width=0.15, length=0.9, distance=8.0)

    def render(tag):
        return rendered_frames(scene, tmp_path, tag, frames)

    scene.jointlimit.clamp_playback = True
    clamped = render("clamped")
    scene.jointlimit.clamp_playback = False
    data = obj.animation_data
    fc = compat().action_fcurve_collection(data.action, data.action_slot).find(pb.path_from_id("rotation_euler"), index=0)
    angles = [min(fc.evaluate(frame), math.radians(90)) for frame in frames]
    assert angles[0] == angles[3] == math.radians(90) and angles[-1] < math.radians(40)   # outside, then inside
    fc.keyframe_points.clear()
    for frame, angle in zip(frames, angles):                   # the clamped frames, keyed by hand
        fc.keyframe_points.insert(frame, angle).interpolation = "CONSTANT"
    expected = render("expected")
    for frame, got, want in zip(frames, clamped, expected):
        assert int((np.abs(got - want).max(axis=2) > 0.05).sum()) == 0, frame


def test_a_render_depsgraph_kept_between_frames_and_renders(scene, mods):
    """Persistent Data keeps the render's depsgraph, and the keys a clamped frame wrote into its
    copy of the action, from frame to frame and from one render to the next: each frame is still
    its own (clamped, then following the keys), and with Clamp Playback off again the next render
    is the user's animation."""
    import bpy
    from rigs import make_armature

    obj = make_armature([("a", (0, 0, 0), (0, 0, 1), None, 0.0)], "Persistent")
    pb = obj.pose.bones["a"]
    hinge_at(pb, 0)
    pb.jointlimit.hinge_max = math.radians(90)
    for frame, degrees in ((1, 0), (5, 160), (9, 0)):
        pb.rotation_euler = (math.radians(degrees), 0.0, 0.0)
        pb.keyframe_insert("rotation_euler", frame=frame)
    bpy.ops.object.mode_set(mode="OBJECT")
    probe = probe_renders(scene)
    scene.render.use_persistent_data = True

    def render(first, last):
        probe.seen.clear()
        scene.frame_start, scene.frame_end = first, last
        bpy.ops.render.render(animation=True)
        return [angles["a"] for angles, _ in probe.seen]

    try:
        unclamped = render(3, 8)
        assert max(unclamped) > 140 and unclamped[-1] < 90
        scene.jointlimit.clamp_playback = True
        assert render(3, 8) == [pytest.approx(min(a, 90.0), abs=1e-4) for a in unclamped]
        assert render(8, 8) == [pytest.approx(unclamped[-1], abs=1e-4)]
        render(5, 5)
        scene.jointlimit.clamp_playback = False
        assert render(5, 5) == [pytest.approx(unclamped[2], abs=1e-4)]      # the user's 160°
    finally:
        scene.render.use_persistent_data = False
        scene.render.engine = "BLENDER_WORKBENCH"
        bpy.utils.unregister_class(probe)
        scene.jointlimit.clamp_playback = False


def overridden_rig(scene, tmp_path):
    """A rig linked from another file in a collection and made an editable library override, as a
    shot brings in a character, then animated in the shot (a local action): one hinge bone keyed
    from 170° (outside its 0..90° range) at frame 1 to 10° at frame 10. The rigger's later version
    of the library (the range 0..30°) is saved beside it as ``character_narrower.blend``."""
    import bpy
    from rigs import make_armature

    obj = make_armature([("a", (0, 0, 0), (0, 0, 1), None, 0.0)], "Character")
    hinge_at(obj.pose.bones["a"], 170)
    obj.pose.bones["a"].jointlimit.hinge_max = math.radians(90)
    library = str(tmp_path / "character.blend")
    collection = save_in_library(scene, obj, "CharacterCollection", library)
    obj.pose.bones["a"].jointlimit.hinge_max = math.radians(30)     # the rigger's later edit
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "character_narrower.blend"), copy=True)
    bpy.data.objects.remove(obj)
    bpy.data.collections.remove(collection)
    rig = link_override(scene, library, "CharacterCollection").objects[0]
    assert rig.library is None and rig.override_library is not None and not rig.override_library.is_system_override
    pb = rig.pose.bones["a"]
    for frame, degrees in ((1, 170), (10, 10)):
        pb.rotation_euler = (math.radians(degrees), 0.0, 0.0)
        pb.keyframe_insert("rotation_euler", frame=frame)
    assert rig.animation_data.action.library is None
    return rig


def test_an_overridden_rig_animated_in_the_shot_is_covered_and_rendered_clamped(scene, mods, tmp_path):
    """A library-overridden rig with its own action (a linked character animated in the shot):
    the layer covers it during playback (each frame evaluated once, clamped), and a render shows
    it clamped (a render's depsgraph does not write what it animated back to the pose)."""
    import bpy

    handlers, layer = mods["handlers"], mods["playback_layer"]
    rig = overridden_rig(scene, tmp_path)
    assert layer.covered_bones(rig)
    scene.jointlimit.clamp_playback = True
    handlers.on_playback_start(scene)
    try:
        for frame in (1, 2, 3):
            scene.frame_set(frame)
            evaluated = rig.evaluated_get(bpy.context.evaluated_depsgraph_get()).pose.bones["a"]
            assert math.degrees(evaluated.rotation_euler[0]) == pytest.approx(90, abs=1e-4)
        assert layer.covers(rig) and paths(layer_keys(rig)[0]) == {'pose.bones["a"].rotation_euler'}
    finally:
        handlers.on_playback_stop(scene, None)
    probe = probe_renders(scene)
    scene.render.filepath = str(tmp_path / "frame_")
    try:
        for frame, degrees in ((2, 90), (9, None)):     # clamped, then the keys' own angle
            probe.seen.clear()
            scene.frame_start = scene.frame_end = frame
            bpy.ops.render.render(animation=True)
            (angles, _), = probe.seen
            expected = degrees if degrees is not None else math.degrees(keyed_angle(rig, frame))
            assert angles["a"] == pytest.approx(expected, abs=1e-4) and expected <= 90, frame
    finally:
        scene.render.engine = "BLENDER_WORKBENCH"
        bpy.utils.unregister_class(probe)
        scene.jointlimit.clamp_playback = False


def keyed_angle(rig, frame):
    """The keyed X angle of ``rig``'s bone ``a`` at ``frame`` (the user's action)."""
    from rigs import compat

    data = rig.animation_data
    return compat().action_fcurve_collection(data.action, data.action_slot).find(
        'pose.bones["a"].rotation_euler', index=0).evaluate(frame)


def test_a_muted_solo_track_plays_and_is_clamped(scene, mods):
    """A muted NLA track set solo plays (Blender ignores mute on the solo track) and the rig's
    action does not: the layer leaves the rig to the playback clamp, which clamps what plays."""
    import bpy
    from rigs import make_armature

    handlers, layer = mods["handlers"], mods["playback_layer"]
    obj = make_armature([("a", (0, 0, 0), (0, 0, 1), None, 0.0)], "Soloed")
    pb = obj.pose.bones["a"]
    hinge_at(pb, 30)
    pb.jointlimit.hinge_max = math.radians(90)
    for frame, degrees in ((1, 150), (10, 160)):            # the take the track holds
        pb.rotation_euler = (math.radians(degrees), 0.0, 0.0)
        pb.keyframe_insert("rotation_euler", frame=frame)
    take = obj.animation_data.action
    obj.animation_data.action = None
    pb.rotation_euler = (math.radians(30), 0.0, 0.0)
    pb.keyframe_insert("rotation_euler", frame=1)           # the rig's own action, inside
    bpy.ops.object.mode_set(mode="OBJECT")
    track = obj.animation_data.nla_tracks.new()
    track.strips.new("Take", 1, take)
    track.mute, track.is_solo = True, True
    scene.jointlimit.clamp_playback = True
    handlers.on_playback_start(scene)
    try:
        for frame in (1, 2, 4, 8):
            scene.frame_set(frame)
            evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).pose.bones["a"]
            assert math.degrees(evaluated.rotation_euler[0]) == pytest.approx(90, abs=1e-4), frame
        assert not layer.covers(obj)
    finally:
        handlers.on_playback_stop(scene, None)
        scene.jointlimit.clamp_playback = False


@pytest.mark.parametrize("playing", [False, True])
def test_limits_changed_in_a_reloaded_library_are_followed(scene, mods, tmp_path, playing):
    """The rigger narrows a limit in the character's library file and the shot reloads the
    library: the next frame is clamped to the new range, stepped and while playing (the reload
    sets no setting through the interface: no update callback tells the cached limits)."""
    import shutil

    import bpy

    handlers = mods["handlers"]
    rig = overridden_rig(scene, tmp_path)
    scene.jointlimit.clamp_playback = True

    def angle(frame):
        scene.frame_set(frame)
        return math.degrees(rig.evaluated_get(bpy.context.evaluated_depsgraph_get()).pose.bones["a"].rotation_euler[0])

    if playing:
        handlers.on_playback_start(scene)
    try:
        assert angle(2) == pytest.approx(90, abs=1e-4)
        shutil.copyfile(tmp_path / "character_narrower.blend", tmp_path / "character.blend")
        next(lib for lib in bpy.data.libraries if lib.filepath.endswith("character.blend")).reload()
        rig = bpy.data.objects["Character", None]
        assert math.degrees(rig.pose.bones["a"].jointlimit.hinge_max) == pytest.approx(30)
        assert angle(3) == pytest.approx(30, abs=1e-4) and angle(4) == pytest.approx(30, abs=1e-4)
    finally:
        if playing:
            handlers.on_playback_stop(scene, None)
        scene.jointlimit.clamp_playback = False


def test_a_file_only_looked_into_during_playback_leaves_the_layer(scene, mods, tmp_path):
    """Listing what another file holds (``bpy.data.libraries.load`` taking nothing, as add-ons do)
    imports nothing: the layer playing is kept (rebuilding it costs about 100 ms); linking data
    does regroup (a library's limits may have come with it)."""
    import bpy

    prop = bpy.data.objects.new("Prop", None)
    scene.collection.objects.link(prop)
    other = str(tmp_path / "props.blend")
    bpy.ops.wm.save_as_mainfile(filepath=other, copy=True)
    bpy.data.objects.remove(prop)
    handlers, layer, obj = playing_rig(scene, mods, 31)
    try:
        installs = layer._layer["installs"]
        with bpy.data.libraries.load(other) as (found, _wanted):
            assert list(found.objects) == ["Prop"]
        play(scene, obj, [3, 4])
        assert layer._layer["installs"] == installs and layer.covers(obj)
        with bpy.data.libraries.load(other, link=True) as (_found, wanted):
            wanted.objects = ["Prop"]
        play(scene, obj, [5, 6, 7])
        assert layer._layer["installs"] > installs and layer.covers(obj)
    finally:
        handlers.on_playback_stop(scene, None)
        scene.jointlimit.clamp_playback = False
