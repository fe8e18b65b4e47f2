"""Fast Scrubbing (issue 22): outside playback the window's scene takes the playback layer too
(scrubbing, stepping frames, a script's ``frame_set``), with the playback clamp's results and
without Blender's second evaluation of the frame; a script keying frame after frame, posing,
renders and the switch keep what they had."""

import importlib
import math

import numpy as np
import pytest

from test_playback_layer_blender import (assert_same_frames, box_on_bone_shot, channel_of, keyed_rig, layer_keys, play,
                                         record_calls, rendered_frames)

pytestmark = [pytest.mark.blender]

FRAMES = [1, 2, 3, 4, 5, 6, 9, 12, 11, 10, 3]


@pytest.fixture
def mods(addon):
    pkg = addon.__name__
    mods = {m: importlib.import_module(f"{pkg}.{m}") for m in ("handlers", "playback_layer", "compat")}
    yield mods
    mods["playback_layer"].unregister()     # whatever a failed test left


def record_writes(monkeypatch, handlers):
    """The rotations the playback clamp (and live limits) wrote, call after call."""
    written, clamp_object = [], handlers.clamp_object

    def counted(obj, only_changed, skip=None):
        written.append(clamp_object(obj, only_changed, skip))
        return written[-1]

    monkeypatch.setattr(handlers, "clamp_object", counted)
    return written


def unkey(mods, obj, pb):
    """Remove the F-curves of ``pb``'s rotation channel from ``obj``'s action (and update)."""
    import bpy

    path = pb.path_from_id(channel_of(pb))
    fcurves = mods["compat"].action_fcurve_collection(obj.animation_data.action, obj.animation_data.action_slot)
    for fc in [fc for fc in fcurves if fc.data_path == path]:
        fcurves.remove(fc)
    bpy.context.view_layer.update()


def stepped_rig(scene, mods, seed=3):
    """A skinned ``keyed_rig`` (every rotation mode and limit kind, keys outside the limits) with
    Clamp Playback on, stepped through frames 1 to 3: set up by the layer outside playback."""
    obj = keyed_rig(seed=seed)
    scene.frame_start, scene.frame_end = 1, 12
    scene.jointlimit.clamp_playback = True
    assert scene.jointlimit.fast_scrubbing      # the default
    play(scene, obj, [1, 2, 3])
    assert mods["playback_layer"].covers(obj, scene) and not mods["playback_layer"].plays(scene)
    return obj


@pytest.mark.parametrize("seed", [3, 5])
def test_stepping_frames_equals_the_playback_clamp_without_a_second_evaluation(scene, mods, monkeypatch, seed):
    """Frames stepped forward, jumped to and back: the stored rotations and evaluated matrices of
    the playback clamp (Fast Scrubbing off), and once the layer is set up (the second frame after
    the first: one frame to see that no script edits the keys between frames) nothing is written
    after Blender evaluated a frame."""
    obj = keyed_rig(seed=seed)
    scene.frame_start, scene.frame_end = 1, 12
    scene.jointlimit.clamp_playback = True
    scene.jointlimit.fast_scrubbing = False
    reference = play(scene, obj)
    assert not mods["playback_layer"].is_installed()
    scene.jointlimit.fast_scrubbing = True
    written = record_writes(monkeypatch, mods["handlers"])
    got = play(scene, obj)
    assert_same_frames(got, reference)
    assert mods["playback_layer"].covers(obj, scene) and layer_keys(obj)[1]
    assert any(written[:2]) and not any(written[3:])    # frames 1, 2: the playback clamp; from 3 on: the layer
    written.clear()
    assert_same_frames(play(scene, obj), reference)     # remembered frames
    assert not any(written)


def test_frames_stepped_on_a_wholly_keyed_rig_leave_it_to_the_layer(scene, mods, monkeypatch):
    """Outside playback, as while playing: once a frame took the layer's keys in the rig and every
    limited bone has keys, the playback clamp looks no further on the next frames (same results
    as with Fast Scrubbing off). A limited bone without keys is the playback clamp's on every
    frame, also when a script turns it right before a frame with no update in between."""
    handlers = mods["handlers"]
    obj = keyed_rig(seed=3)
    scene.frame_start, scene.frame_end = 1, 12
    scene.jointlimit.clamp_playback = True
    scene.jointlimit.fast_scrubbing = False
    frames = list(range(1, 13))
    reference = play(scene, obj, frames)
    scene.jointlimit.fast_scrubbing = True
    looked, clamp_object = [], handlers.clamp_object

    def recorded(rig, only_changed, skip=None):
        looked.append(scene.frame_current)
        return clamp_object(rig, only_changed, skip)

    monkeypatch.setattr(handlers, "clamp_object", recorded)
    assert_same_frames(play(scene, obj, frames), reference)
    assert looked == [1, 2, 2]      # 1: the playback clamp; 2: the layer set up (its rig's bones without keys), its first frame
    unkeyed = next(pb for pb in obj.pose.bones if pb.jointlimit.enabled and pb.rotation_mode == "XYZ")
    unkey(mods, obj, unkeyed)
    play(scene, obj, [4, 5, 6])     # the layer removed (keys edited), the copies looked at, set up again
    assert mods["playback_layer"].covers(obj, scene)
    del looked[:]
    play(scene, obj, [7, 8])
    assert looked == [7, 8]
    unkeyed.rotation_euler = (0.0, 0.0, math.pi)    # outside its limit, no update before the frame
    scene.frame_set(9)
    assert looked == [7, 8, 9] and handlers.clamp_object_per_bone(obj, False) == 0


def test_a_script_keying_frame_after_frame_keeps_the_playback_clamp(scene, mods, monkeypatch):
    """A script that steps a frame and keys something on each (its action edited between frames,
    no update in between): the layer is set up once at most (on the second frame, before the
    first edit is seen), not on every frame (a layer set up on one frame would be gone on the
    next), each frame clamped as by the playback clamp; once the script stops keying, the layer
    takes over."""
    import bpy

    layer = mods["playback_layer"]
    obj = keyed_rig(seed=7)
    scene.jointlimit.clamp_playback = True
    scene.jointlimit.fast_scrubbing = False
    reference = play(scene, obj, range(1, 13))
    scene.frame_set(1)
    scene.jointlimit.fast_scrubbing = True
    installs = record_calls(monkeypatch, layer, "install")
    got = []
    for frame in range(1, 13):
        got += play(scene, obj, [frame])
        obj["keyed"] = float(frame)     # in the same action, moving no bone
        obj.keyframe_insert('["keyed"]', frame=frame)
    assert len(installs) <= 1 and not layer.is_installed()
    assert_same_frames(got, reference)
    bpy.context.view_layer.update()
    installs.clear()
    assert_same_frames(play(scene, obj, range(1, 13)), reference)
    assert len(installs) == 1 and layer.covers(obj, scene)


def test_posing_a_rig_the_layer_covers_outside_playback(scene, mods):
    """With the layer set up outside playback, posing is as without it: live limits off leave a
    turned bone where the user put it until the next frame, which clamps it (a keyed bone takes
    its clamped key, a bone without keys is clamped); live limits on clamp it at once."""
    import bpy

    handlers = mods["handlers"]
    obj = stepped_rig(scene, mods)
    keyed = next(pb for pb in obj.pose.bones if pb.jointlimit.enabled and pb.rotation_mode == "QUATERNION")
    unkeyed = next(pb for pb in obj.pose.bones if pb.jointlimit.enabled and pb.rotation_mode == "XYZ")
    unkey(mods, obj, unkeyed)
    for frame in (4, 5):    # the layer removed (keys edited), its copies looked at, then set up again
        scene.frame_set(frame)
    assert not mods["playback_layer"].is_installed()
    scene.frame_set(6)
    scene.frame_set(5)
    assert mods["playback_layer"].covers(obj, scene)
    clamped_key = tuple(keyed.rotation_quaternion)
    outside = (0.0, 0.0, 0.0, 1.0)      # 180° about Z: outside every limit of the rig
    keyed.rotation_quaternion = outside
    unkeyed.rotation_euler = (0.0, 0.0, math.pi)
    bpy.context.view_layer.update()
    assert tuple(keyed.rotation_quaternion) == outside and unkeyed.rotation_euler[2] == pytest.approx(math.pi)
    scene.frame_set(7)
    assert handlers.clamp_object_per_bone(obj, False) == 0      # both clamped by the frame
    scene.frame_set(5)
    assert tuple(keyed.rotation_quaternion) == pytest.approx(clamped_key)
    scene.jointlimit.live = True
    keyed.rotation_quaternion = unkeyed.rotation_quaternion = outside
    unkeyed.rotation_euler = (0.0, 0.0, math.pi)
    bpy.context.view_layer.update()
    assert handlers.clamp_object_per_bone(obj, False) == 0      # live limits: at once
    scene.jointlimit.live = False


def test_stopped_playback_keeps_the_layer_and_the_switch_removes_it(scene, mods):
    """Playback stopped: the layer stays for the frames stepped next (the stopped frame was
    clamped by it); Fast Scrubbing or Clamp Playback switched off: the next frame has the
    evaluated copy made anew from the user's keys."""
    handlers, layer = mods["handlers"], mods["playback_layer"]
    obj = stepped_rig(scene, mods)
    handlers.on_playback_start(scene)
    play(scene, obj, [4, 5])
    assert layer.plays(scene)
    installs = layer._layer["installs"]
    handlers.on_playback_stop(scene, None)
    assert layer.covers(obj, scene) and not layer.plays(scene) and layer_keys(obj)[1]
    assert handlers.clamp_object_per_bone(obj, False) == 0
    play(scene, obj, [6, 7])
    assert layer._layer["installs"] == installs and layer.covers(obj, scene)
    scene.jointlimit.fast_scrubbing = False
    stepped = play(scene, obj, [8])
    assert not layer.is_installed() and layer_keys(obj) == (set(), False)
    assert handlers.clamp_object_per_bone(obj, False) == 0
    scene.jointlimit.fast_scrubbing = True
    play(scene, obj, [9, 10, 8])
    assert layer.covers(obj, scene)
    assert_same_frames(play(scene, obj, [8]), stepped)
    scene.jointlimit.clamp_playback = False
    play(scene, obj, [9])
    assert not layer.is_installed() and layer_keys(obj) == (set(), False)


def test_a_scene_no_window_shows_keeps_the_playback_clamp(scene, mods):
    """A script stepping another scene than the window's: the layer is not set up for it (nor
    taken away from the window's scene)."""
    import bpy

    layer = mods["playback_layer"]
    obj = stepped_rig(scene, mods)
    other = bpy.data.scenes.new("Other")
    other.collection.objects.link(obj)
    other.jointlimit.clamp_playback = True
    for frame in (1, 2, 3, 4):
        other.frame_set(frame)
    assert layer.covers(obj, scene) and not layer.covers(obj, other)


def test_a_render_takes_its_own_way_with_the_layer_set_up(scene, mods, tmp_path):
    """The layer set up outside playback when an animation is rendered: the render's frames are
    clamped as with Fast Scrubbing off (the render's own copy of the action), the layer steps
    aside during the render (``render_init`` to ``render_complete``) and is set up again after."""
    import bpy

    layer = mods["playback_layer"]
    obj = stepped_rig(scene, mods)
    frames = range(2, 7)
    box_on_bone_shot(scene, obj, obj.pose.bones[4].name, frames, size=24, width=0.1, length=0.6, distance=6.0)
    installed = []

    def render(tag):
        return rendered_frames(scene, tmp_path, tag, frames)

    def seen(scene, *_args):      # whether the layer is set up on each rendered frame
        if layer._layer["rendering"]:
            installed.append(layer.is_installed())

    bpy.app.handlers.frame_change_post.append(seen)
    try:
        fast = render("fast")
        assert not layer._layer["rendering"] and installed and not any(installed)
        scene.jointlimit.fast_scrubbing = False
        plain = render("plain")
    finally:
        bpy.app.handlers.frame_change_post.remove(seen)
    for a, b in zip(fast, plain):
        np.testing.assert_array_equal(a, b)
    assert any(not np.array_equal(a, fast[0]) for a in fast[1:])   # the box moves
    scene.jointlimit.fast_scrubbing = True
    play(scene, obj, [7, 8, 9])
    assert layer.covers(obj, scene)



def test_bones_another_handler_turns_after_the_frame(scene, mods):
    """Another add-on's ``frame_change_post`` handler (running before the playback clamp) turns
    two limited bones outside their limits on every frame: the one without keys is clamped with
    Fast Scrubbing on and off; the keyed one, whose value the frame took from the layer's keys,
    only with Fast Scrubbing off (as during playback: README)."""
    import bpy

    handlers, layer = mods["handlers"], mods["playback_layer"]
    obj = stepped_rig(scene, mods)
    keyed = next(pb for pb in obj.pose.bones if pb.jointlimit.enabled and pb.rotation_mode == "QUATERNION")
    unkeyed = next(pb for pb in obj.pose.bones if pb.jointlimit.enabled and pb.rotation_mode == "AXIS_ANGLE")
    unkey(mods, obj, unkeyed)
    play(scene, obj, [4, 5, 6, 7])
    assert layer.covers(obj, scene)
    outside = (0.0, 0.0, 0.0, 1.0)

    def turn(scene, *_args):
        keyed.rotation_quaternion = outside
        unkeyed.rotation_axis_angle = (math.pi, 0.0, 0.0, 1.0)

    post = bpy.app.handlers.frame_change_post
    post.insert(0, turn)
    try:
        scene.frame_set(8)
        assert layer.covers(obj, scene)
        assert tuple(keyed.rotation_quaternion) == outside
        assert handlers.clamp_object_per_bone(obj, False, frozenset([keyed.name])) == 0    # the unkeyed one
        scene.jointlimit.fast_scrubbing = False
        scene.frame_set(9)
        assert handlers.clamp_object_per_bone(obj, False) == 0
    finally:
        post.remove(turn)


def hinge_rig(name="Hinge", keys=((1, 170), (40, 100), (80, 20), (120, 100)), free=0):
    """Bone "a" limited to a hinge of 5° to 140° about X, its quaternion keyed at ``keys``
    (frame, degrees about X); ``free`` more bones without limits."""
    from rigs import make_armature

    obj = make_armature([("a", (0, 0, 0), (0, 0, 1), None, 0.0)]
                        + [(f"free{i}", (i + 1, 0, 0), (i + 1, 0, 1), None, 0.0) for i in range(free)], name)
    pb = obj.pose.bones["a"]
    pb.rotation_mode = "QUATERNION"
    s = pb.jointlimit
    s.enabled, s.kind, s.hinge_min, s.hinge_max = True, "HINGE", math.radians(5), math.radians(140)
    for frame, degrees in keys:
        pb.rotation_quaternion = (math.cos(math.radians(degrees) / 2), math.sin(math.radians(degrees) / 2), 0.0, 0.0)
        pb.keyframe_insert("rotation_quaternion", frame=frame)
    return obj


def degrees_about_x(pb):
    w, x = pb.rotation_quaternion[0], pb.rotation_quaternion[1]
    return math.degrees(2 * math.atan2(x, w))


@pytest.mark.parametrize("fast", [False, True])
def test_the_time_set_without_a_frame_change(scene, mods, fast):
    """A script setting ``frame_current`` and updating the view layer (no frame handler runs):
    the user's animation at that time, as with Fast Scrubbing off (before, with the layer set up,
    the copy held no key of such a time and the rig showed a frame computed earlier)."""
    import bpy

    obj = hinge_rig()
    scene.frame_start, scene.frame_end = 1, 120
    scene.jointlimit.clamp_playback, scene.jointlimit.fast_scrubbing = True, fast
    for frame in (1, 2, 3, 4):
        scene.frame_set(frame)
    assert mods["playback_layer"].covers(obj, scene) == fast
    fcurves = mods["compat"].action_fcurve_collection(obj.animation_data.action, obj.animation_data.action_slot)
    path = obj.pose.bones["a"].path_from_id("rotation_quaternion")
    for frame in (60, 80, 100):     # the keys are inside the limit there
        scene.frame_current = frame
        bpy.context.view_layer.update()
        w, x = (fcurves.find(path, index=i).evaluate(frame) for i in (0, 1))
        assert tuple(obj.pose.bones["a"].rotation_quaternion)[:2] == pytest.approx((w, x), abs=1e-6)


def test_a_bone_without_keys_turned_before_playback_is_clamped_when_it_starts(scene, mods):
    """The layer set up by stepping frames; a limited bone without keys turned outside its limit
    with live limits off; playback starts: its first frame shows the bone clamped (during
    playback the playback clamp leaves covered rigs alone)."""
    import bpy

    handlers, layer = mods["handlers"], mods["playback_layer"]
    obj = stepped_rig(scene, mods)
    unkeyed = next(pb for pb in obj.pose.bones if pb.jointlimit.enabled and pb.rotation_mode == "XYZ")
    unkey(mods, obj, unkeyed)
    play(scene, obj, [4, 5, 6])
    assert layer.covers(obj, scene)
    unkeyed.rotation_euler = (0.0, 0.0, math.pi)
    bpy.context.view_layer.update()
    handlers.on_playback_start(scene)
    play(scene, obj, [7, 8])
    assert layer.plays(scene) and handlers.clamp_object_per_bone(obj, False) == 0
    handlers.on_playback_stop(scene, None)


@pytest.mark.parametrize("free", [0, 12])
def test_a_rotation_mode_a_script_changes_right_before_a_frame(scene, mods, free):
    """A covered bone's rotation mode changed by a script with no update before the next frame:
    that frame is clamped in the new mode (the layer is set up again from the next one); the
    modes read all at once, or by name when the covered bones are few among many."""
    obj = hinge_rig(free=free)
    scene.frame_start, scene.frame_end = 1, 120
    scene.jointlimit.clamp_playback = True
    for frame in (1, 2, 3, 4):
        scene.frame_set(frame)
    assert mods["playback_layer"].covers(obj, scene)
    pb = obj.pose.bones["a"]
    pb.rotation_mode = "XYZ"
    scene.frame_set(5)
    pb.rotation_euler = (3.0, 0.0, 0.0)     # 172° about X: outside the hinge
    scene.frame_set(6)
    assert pb.rotation_euler[0] == pytest.approx(math.radians(140), abs=1e-5)
    for frame in (7, 8, 9):
        pb.rotation_euler = (3.0, 0.0, 0.0)
        scene.frame_set(frame)
        assert mods["handlers"].clamp_object_per_bone(obj, False) == 0


def test_keys_edited_with_an_update_between_frames(scene, mods, monkeypatch):
    """A script keying frame after frame with ``view_layer.update()`` after each key (or an
    animator keying with I): the layer is not set up and torn down again every few frames."""
    import bpy

    obj = keyed_rig(seed=7)
    scene.jointlimit.clamp_playback = True
    installs = record_calls(monkeypatch, mods["playback_layer"], "install")
    for frame in range(1, 13):
        scene.frame_set(frame)
        obj["keyed"] = float(frame)
        obj.keyframe_insert('["keyed"]', frame=frame)
        bpy.context.view_layer.update()
    assert len(installs) <= 1


def test_an_action_given_to_another_rig_outside_playback(scene, mods):
    """The covered action given to a second rig between frames: the update shows that rig its
    own keys (the user's), not the layer's clamped ones."""
    import bpy

    obj = hinge_rig()
    other = hinge_rig("Other", keys=())
    other.pose.bones["a"].jointlimit.enabled = False
    scene.jointlimit.clamp_playback = True
    for frame in (1, 2, 3, 1):
        scene.frame_set(frame)
    assert mods["playback_layer"].covers(obj, scene)
    assert degrees_about_x(obj.pose.bones["a"]) == pytest.approx(140.0, abs=1e-4)
    other.animation_data_create()
    other.animation_data.action = obj.animation_data.action
    other.animation_data.action_slot = obj.animation_data.action_slot
    bpy.context.view_layer.update()
    assert degrees_about_x(other.pose.bones["a"]) == pytest.approx(170.0, abs=1e-4)
    assert not mods["playback_layer"].covers(obj, scene)


def test_a_render_that_fails_to_start_leaves_fast_scrubbing_on(scene, mods):
    """``render_init`` without ``render_complete`` or ``_cancel`` (Blender skips both when a
    render fails to start, e.g. a movie file it cannot open): the next frame stepped in the
    interface's depsgraph brings the layer back."""
    handlers, layer = mods["handlers"], mods["playback_layer"]
    obj = stepped_rig(scene, mods)
    handlers.on_render_init(scene)
    play(scene, obj, [4])
    assert not layer.is_installed()
    play(scene, obj, [5, 6, 7])
    assert layer.covers(obj, scene)


def test_keys_of_a_prop_edited_between_frames_leave_the_layer(scene, mods, monkeypatch):
    """A script (or an animator) keying a camera on every frame, with an update after each key:
    the rig's layer stays set up (only the actions of the scene's armatures matter)."""
    import bpy

    obj = keyed_rig(seed=7)
    camera = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    scene.collection.objects.link(camera)
    scene.jointlimit.clamp_playback = True
    scene.jointlimit.fast_scrubbing = False
    reference = play(scene, obj, range(1, 13))
    scene.jointlimit.fast_scrubbing = True
    installs = record_calls(monkeypatch, mods["playback_layer"], "install")
    got = []
    for frame in range(1, 13):
        got += play(scene, obj, [frame])
        camera.location.x = 0.1 * frame
        camera.keyframe_insert("location", frame=frame)
        bpy.context.view_layer.update()
    assert len(installs) == 1 and mods["playback_layer"].covers(obj, scene)
    assert_same_frames(got, reference)


def test_playback_started_with_clamp_playback_off_leaves_the_pose(scene, mods):
    """The layer in place, a limited bone without keys turned outside its limit, Clamp Playback
    switched off, playback started: the bone stays where the user put it."""
    import bpy

    obj = hinge_rig()
    free = hinge_rig("Unkeyed", keys=())
    scene.jointlimit.clamp_playback = True
    for frame in (1, 2, 3, 4):
        scene.frame_set(frame)
    assert mods["playback_layer"].covers(obj, scene)
    pb = free.pose.bones["a"]
    pb.rotation_quaternion = (math.cos(math.radians(85)), math.sin(math.radians(85)), 0.0, 0.0)    # 170°
    scene.jointlimit.clamp_playback = False
    bpy.context.view_layer.update()
    mods["handlers"].on_playback_start(scene)
    assert degrees_about_x(pb) == pytest.approx(170.0, abs=1e-4)
    mods["handlers"].on_playback_stop(scene, None)


@pytest.mark.parametrize("where", ["pre, first", "pre, last", "post, first"])
def test_another_handler_updating_the_view_layer_during_frames(scene, mods, monkeypatch, where):
    """Another add-on's frame handler moves a prop and updates the view layer on every frame
    (before or after the layer's own handlers): the layer is set up once and stays (the update
    evaluates the animation again, which keeps the marks on the copies, at a time the layer
    computed), with the playback clamp's results."""
    import bpy

    obj = keyed_rig(seed=9)
    prop = bpy.data.objects.new("Prop", None)
    scene.collection.objects.link(prop)
    scene.jointlimit.clamp_playback = True
    scene.jointlimit.fast_scrubbing = False
    frames = list(range(1, 13))
    reference = play(scene, obj, frames)

    def touch(scene, *_args):
        prop.location.x = scene.frame_current * 0.1
        bpy.context.view_layer.update()

    handler_list = bpy.app.handlers.frame_change_pre if where.startswith("pre") else bpy.app.handlers.frame_change_post
    handler_list.insert(0, touch) if where.endswith("first") else handler_list.append(touch)
    try:
        scene.jointlimit.fast_scrubbing = True
        installs = record_calls(monkeypatch, mods["playback_layer"], "install")
        removes = record_calls(monkeypatch, mods["playback_layer"], "remove")
        got = play(scene, obj, frames)
        assert len(installs) == 1 and not removes and mods["playback_layer"].covers(obj, scene)
        assert_same_frames(got, reference)
    finally:
        handler_list.remove(touch)


@pytest.mark.parametrize("live", [False, True], ids=["clamp_playback", "and_live_limits"])
@pytest.mark.parametrize("fast", [False, True])
def test_an_armature_without_bones_leaves_the_others_clamped(scene, mods, fast, live):
    """An armature with no bones yet (a prop's rig being started) before a limited rig in the
    scene: the handlers go on to the rigs after it (reading its bones' modes raised, and the
    playback clamp stopped there)."""
    import bpy

    empty = bpy.data.objects.new("Armature", bpy.data.armatures.new("Armature"))
    scene.collection.objects.link(empty)
    obj = hinge_rig("Rig", free=1)
    unkeyed = obj.pose.bones["free0"]
    s = unkeyed.jointlimit
    s.enabled, s.kind, s.hinge_min, s.hinge_max = True, "HINGE", math.radians(5), math.radians(140)
    unkeyed.rotation_mode = "XYZ"
    scene.jointlimit.clamp_playback, scene.jointlimit.fast_scrubbing, scene.jointlimit.live = True, fast, live
    assert [o.name for o in scene.objects if o.type == "ARMATURE"].index("Armature") == 0
    for frame in range(1, 6):
        unkeyed.rotation_euler = (math.radians(175), 0.0, 0.0)     # posed beyond the limit, not keyed
        scene.frame_set(frame)
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).pose.bones
    assert degrees_about_x(evaluated["a"]) == pytest.approx(140.0, abs=1e-4)
    assert math.degrees(evaluated["free0"].rotation_euler[0]) == pytest.approx(140.0, abs=1e-4)


@pytest.mark.parametrize("fast", [False, True])
def test_playback_stopped_right_after_a_key_edit_keeps_the_frame_clamped(scene, mods, fast):
    """Keys edited during playback (the update evaluates the frame from the edited keys), then
    playback stopped before the next frame: the frame stopped on is clamped, stored and evaluated
    (with Fast Scrubbing the stale layer used to stay, the frame unclamped)."""
    import bpy

    handlers = mods["handlers"]
    obj = hinge_rig(keys=((1, 170), (20, 170)))
    scene.frame_start, scene.frame_end = 1, 40
    scene.jointlimit.clamp_playback, scene.jointlimit.fast_scrubbing = True, fast
    handlers.on_playback_start(scene)
    for frame in (1, 2, 3, 4):
        scene.frame_set(frame)
    fcurves = mods["compat"].action_fcurve_collection(obj.animation_data.action, obj.animation_data.action_slot)
    for fc in fcurves:      # the key at frame 20 dragged to 175° in the Graph Editor
        w, x = math.cos(math.radians(175) / 2), math.sin(math.radians(175) / 2)
        point = fc.keyframe_points[1]
        value = {0: w, 1: x}.get(fc.array_index, 0.0)
        for attr in ("co", "handle_left", "handle_right"):
            getattr(point, attr)[1] = value
        fc.update()
    bpy.context.view_layer.update()
    handlers.on_playback_stop(scene, None)
    pb = obj.pose.bones["a"]
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).pose.bones["a"]
    assert degrees_about_x(pb) == pytest.approx(140.0, abs=1e-4)
    assert degrees_about_x(evaluated) == pytest.approx(140.0, abs=1e-4)


def test_a_rig_shown_only_through_a_collection_instance_is_left_as_the_render_leaves_it(scene, mods):
    """A rig whose collection is excluded from the view layer and shown by an Empty instancing it
    (as File > Link instances a character): the view layer's frames and a render do not clamp it,
    and neither does Fast Scrubbing (the layer took it from the scene's objects: the viewport
    showed it clamped, the render not); a library override, or the collection itself shown, is."""
    import bpy

    layer = mods["playback_layer"]
    obj = hinge_rig("Instanced")
    collection = bpy.data.collections.new("Character")
    collection.objects.link(obj)
    scene.collection.objects.unlink(obj)
    scene.collection.children.link(collection)
    bpy.context.view_layer.layer_collection.children["Character"].exclude = True
    instance = bpy.data.objects.new("Instance", None)
    instance.instance_type, instance.instance_collection = "COLLECTION", collection
    scene.collection.objects.link(instance)
    scene.jointlimit.clamp_playback = True
    seen = []
    for fast in (False, True):
        scene.jointlimit.fast_scrubbing = fast
        for frame in (1, 2, 3, 4):
            scene.frame_set(frame)
        seen.append(degrees_about_x(obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).pose.bones["a"]))
        assert not layer.covers(obj, scene)
    assert seen[0] == pytest.approx(seen[1], abs=1e-6) and seen[0] > 140.0 + 1e-3


def test_keys_a_script_puts_in_a_new_slot_right_before_a_frame(scene, mods, capfd):
    """A script gives the rig a new slot of its action and keys it frame by frame: the layer, set
    up again on such a frame, finds the evaluated copy without the new keys (they come with the
    frame's evaluation) and leaves the frame to the playback clamp without a traceback (it raised
    from the frame handler), every frame clamped."""
    import bpy

    from rigs import make_armature

    obj = make_armature([("a", (0, 0, 0), (0, 0, 1), None, 0.0), ("b", (0, 0, 1), (0, 0, 2), "a", 0.0)], "Two")
    for pb in obj.pose.bones:   # both limited and keyed in the first slot
        pb.rotation_mode = "QUATERNION"
        s = pb.jointlimit
        s.enabled, s.kind, s.hinge_min, s.hinge_max = True, "HINGE", math.radians(5), math.radians(140)
        for frame, degrees in ((1, 0.0), (10, 150.0)):
            pb.rotation_quaternion = (math.cos(math.radians(degrees) / 2), math.sin(math.radians(degrees) / 2), 0, 0)
            pb.keyframe_insert("rotation_quaternion", frame=frame)
    scene.frame_start, scene.frame_end = 1, 10
    scene.jointlimit.clamp_playback = True
    mods["handlers"].on_playback_start(scene)
    for frame in range(1, 11):
        scene.frame_set(frame)
    mods["handlers"].on_playback_stop(scene, None)
    scene.jointlimit.clamp_playback = False
    for frame in range(1, 11):
        scene.frame_set(frame)
    scene.jointlimit.clamp_playback = True
    capfd.readouterr()
    data = obj.animation_data
    data.action_slot = data.action.slots.new(id_type="OBJECT", name="Other")    # "a" keyed alone there
    pb = obj.pose.bones["a"]
    for frame, degrees in ((1, -20.0), (10, 170.0)):     # both outside
        scene.frame_set(frame)
        pb.rotation_quaternion = (math.cos(math.radians(degrees) / 2), math.sin(math.radians(degrees) / 2), 0.0, 0.0)
        pb.keyframe_insert("rotation_quaternion", frame=frame)
    shown = []
    for frame in range(1, 11):
        scene.frame_set(frame)
        shown.append(degrees_about_x(pb))
    assert "Error in bpy.app.handlers" not in capfd.readouterr().err
    assert shown[0] == pytest.approx(5.0, abs=1e-3) and shown[-1] == pytest.approx(140.0, abs=1e-3)
    assert all(5.0 - 1e-3 <= a <= 140.0 + 1e-3 for a in shown)
