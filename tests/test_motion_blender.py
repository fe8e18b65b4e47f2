"""Smooth motion operator: exact key poses, smooth in-betweens, inside limits (issue 8)."""

import math

import numpy as np
import pytest

from rigs import make_armature, select_only

pytestmark = [pytest.mark.blender]


@pytest.fixture
def rig(scene):
    obj = make_armature([("root", (0, 0, 0), (0, 0, 1), None, 0.0), ("joint", (0, 0, 1), (0, 0, 2), "root", 0.0)])
    select_only(obj, {"joint"}, active="joint")
    return obj


@pytest.fixture
def mods(addon):
    import importlib

    pkg = addon.__name__
    return {m: importlib.import_module(f"{pkg}.{m}") for m in ("core.quat", "bone_limits", "animation")}


def _key(pb, q, frame, mods):
    mods["bone_limits"].write_rotation(pb, q)
    path = "rotation_quaternion" if pb.rotation_mode == "QUATERNION" else "rotation_euler"
    pb.keyframe_insert(path, frame=frame)


def _sample(pb, frames, mods):
    import bpy

    out = []
    for f in frames:
        bpy.context.scene.frame_set(f)
        out.append(mods["bone_limits"].read_rotation(pb))
    return np.array(out)


def _three_key_poses(rig, mods):
    """The joint in quaternion mode keyed at frames 1, 11, 21 with three poses: the bone and them."""
    Q = mods["core.quat"]
    pb = rig.pose.bones["joint"]
    pb.rotation_mode = "QUATERNION"
    poses = [Q.from_euler(np.radians(e), "XYZ") for e in ((0, 0, 0), (40, 10, -20), (-10, 30, 50))]
    for frame, q in zip((1, 11, 21), poses):
        _key(pb, q, frame, mods)
    return pb, poses


@pytest.mark.parametrize("profile", ["MIN_ACCELERATION", "MIN_JERK"])
@pytest.mark.parametrize("channels", ["SWING_TWIST", "EULER"])
def test_keys_hit_exactly_and_every_frame_keyed(rig, mods, profile, channels):
    import bpy

    Q = mods["core.quat"]
    pb, poses = _three_key_poses(rig, mods)
    assert bpy.ops.pose.jointlimit_motion(frame_start=1, frame_end=21, profile=profile, channels=channels) == {"FINISHED"}
    got = _sample(pb, (1, 11, 21), mods)
    for g, q in zip(got, poses):
        assert Q.angle_between(g, q) < 1e-5
    assert mods["animation"].keyed_frames(rig, pb, "rotation_quaternion", 1, 21) == list(range(1, 22))
    path = _sample(pb, range(1, 22), mods)
    steps = Q.angle_between(path[1:], path[:-1])
    assert steps[0] < 0.3 * steps.max() and steps[-1] < 0.3 * steps.max()  # starts and ends at rest


def _limited_quaternion_joint(rig, mods, mode="QUATERNION", shape="ELLIPSE", x=(-10, 120), z=(-30, 30)):
    """The joint in quaternion mode with an ELLIPSE limit (X -10..120°, Z -30..30°), or as given:
    the bone, its settings and the core limit."""
    pb = rig.pose.bones["joint"]
    pb.rotation_mode = mode
    s = pb.jointlimit
    s.enabled, s.kind, s.shape = True, "SWING_TWIST", shape
    s.swing_x_min, s.swing_x_max = (math.radians(a) for a in x)
    s.swing_z_min, s.swing_z_max = (math.radians(a) for a in z)
    return pb, s, mods["bone_limits"].build_limit(s)


def test_generated_keys_stay_inside_limits(rig, mods):
    import bpy

    Q = mods["core.quat"]
    pb, s, limit = _limited_quaternion_joint(rig, mods)
    a = Q.from_euler(np.radians((110, 0, 25)), "XYZ")
    b = Q.from_euler(np.radians((110, 0, -25)), "XYZ")
    a, b = limit.clamp(a), limit.clamp(b)
    _key(pb, a, 1, mods)
    _key(pb, b, 31, mods)
    bpy.ops.pose.jointlimit_motion(frame_start=1, frame_end=31, channels="EULER")
    for q in _sample(pb, range(1, 32), mods):
        assert limit.contains(limit.clamp(q)) and Q.angle_between(limit.clamp(q), q) < 1e-5


def test_euler_path_across_the_seam_takes_the_short_way(rig, mods):
    import bpy

    pb = rig.pose.bones["joint"]
    pb.rotation_mode = "XYZ"
    pb.rotation_euler = (0, 0, math.radians(170))
    pb.keyframe_insert("rotation_euler", frame=1)
    pb.rotation_euler = (0, 0, math.radians(-170))
    pb.keyframe_insert("rotation_euler", frame=21)
    bpy.ops.pose.jointlimit_motion(frame_start=1, frame_end=21, channels="EULER")
    path = _sample(pb, range(1, 22), mods)
    total = mods["core.quat"].angle_between(path[1:], path[:-1]).sum()
    assert math.degrees(total) == pytest.approx(20, abs=0.5)


@pytest.mark.parametrize("playhead", [1, 31])
def test_euler_keys_past_a_half_turn_keep_their_values(rig, mods, playhead):
    """Keys 0°, 171.9°, 343.8° about X: the smoothed curve passes through the keyed values
    themselves (not a whole turn away), wherever the playhead stands."""
    import bpy

    pb = rig.pose.bones["joint"]
    pb.rotation_mode = "XYZ"
    keys = {1: 0.0, 15: 171.9, 31: 343.8}
    for frame, x in keys.items():
        pb.rotation_euler = (math.radians(x), 0.0, 0.0)
        pb.keyframe_insert("rotation_euler", frame=frame)
    bpy.context.scene.frame_set(playhead)
    assert bpy.ops.pose.jointlimit_motion(frame_start=1, frame_end=31, channels="EULER") == {"FINISHED"}
    for frame, x in keys.items():
        bpy.context.scene.frame_set(frame)
        assert math.degrees(pb.rotation_euler.x) == pytest.approx(x, abs=1e-3)


def test_step_keys_every_nth_frame_plus_keys(rig, mods):
    import bpy

    Q = mods["core.quat"]
    pb = rig.pose.bones["joint"]
    pb.rotation_mode = "QUATERNION"
    _key(pb, Q.identity(), 1, mods)
    _key(pb, Q.from_axis_angle([1, 0, 0], 0.8), 23, mods)
    bpy.ops.pose.jointlimit_motion(frame_start=1, frame_end=23, step=5)
    assert mods["animation"].keyed_frames(rig, pb, "rotation_quaternion", 1, 23) == [1, 6, 11, 16, 21, 23]


def test_errors(rig, mods):
    import bpy

    pb = rig.pose.bones["joint"]
    pb.rotation_mode = "QUATERNION"
    _key(pb, mods["core.quat"].identity(), 1, mods)
    with pytest.raises(RuntimeError, match="two or more"):
        bpy.ops.pose.jointlimit_motion(frame_start=1, frame_end=20)
    with pytest.raises(RuntimeError, match="must be after"):
        bpy.ops.pose.jointlimit_motion(frame_start=20, frame_end=5)


def _uneven_keys(pb, mods):
    """The reported keys: frames 1, 2 and 100 at 0°, 14.3° and 28.6° about X."""
    Q = mods["core.quat"]
    pb.rotation_mode = "QUATERNION"
    for frame, deg in ((1, 0.0), (2, 14.3), (100, 28.6)):
        _key(pb, Q.from_axis_angle([1.0, 0.0, 0.0], math.radians(deg)), frame, mods)


def _angles_about_x(pb, mods):
    q = _sample(pb, range(1, 101), mods)
    return np.degrees(2.0 * np.arctan2(q[:, 1], q[:, 0]))


@pytest.mark.parametrize("profile", ["MIN_ACCELERATION", "MIN_JERK"])
@pytest.mark.parametrize("channels", ["SWING_TWIST", "EULER"])
def test_uneven_keys_stay_between_the_keys_by_default(rig, mods, profile, channels):
    import bpy

    pb = rig.pose.bones["joint"]
    _uneven_keys(pb, mods)
    assert bpy.ops.pose.jointlimit_motion(frame_start=1, frame_end=100, profile=profile, channels=channels) == {"FINISHED"}
    angle = _angles_about_x(pb, mods)
    assert angle.min() >= -1e-3 and angle.max() <= 28.6 + 1e-3
    assert angle[[0, 1, 99]] == pytest.approx([0.0, 14.3, 28.6], abs=1e-3)
    assert np.all(np.diff(angle) >= -1e-4)     # monotone keys, monotone motion


def test_exact_optimum_on_request_warns_about_the_overshoot(rig, mods):
    import bpy

    from modal_harness import OperatorStandIn

    pb = rig.pose.bones["joint"]
    _uneven_keys(pb, mods)
    props = dict(frame_start=1, frame_end=100, profile="MIN_ACCELERATION", use_via_points=True, channels="SWING_TWIST",
                 step=1)
    assert bpy.ops.pose.jointlimit_motion.get_rna_type().properties["via_velocity"].default == "CLAMPED"
    clamped = OperatorStandIn(bpy.types.POSE_OT_jointlimit_motion, via_velocity="CLAMPED", **props)
    assert clamped.execute(bpy.context) == {"FINISHED"}
    assert [kind for kind, _ in clamped.reports] == [{"INFO"}]
    rig.animation_data_clear()      # every frame is a key now: start again from the three keys
    _uneven_keys(pb, mods)
    optimal = OperatorStandIn(bpy.types.POSE_OT_jointlimit_motion, via_velocity="OPTIMAL", **props)
    assert optimal.execute(bpy.context) == {"FINISHED"}
    warnings = [text for kind, text in optimal.reports if kind == {"WARNING"}]
    assert len(warnings) == 1 and "joint" in warnings[0] and "Clamped" in warnings[0]
    reported = float(warnings[0].split("up to ")[1].split("°")[0])
    angle = _angles_about_x(pb, mods)
    assert angle.max() > 100.0                  # the exact optimum swings far past 28.6°
    assert reported >= 100.0


def test_zero_quaternion_key_is_reported_and_nothing_keyed(rig, mods):
    import bpy

    pb = rig.pose.bones["joint"]
    pb.rotation_mode = "QUATERNION"
    for frame, q in ((1, (1.0, 0.0, 0.0, 0.0)), (10, (0.0, 0.0, 0.0, 0.0))):
        pb.rotation_quaternion = q
        pb.keyframe_insert("rotation_quaternion", frame=frame)
    bpy.context.scene.frame_set(4)
    with pytest.raises(RuntimeError, match="'joint'.*zero length") as info:
        bpy.ops.pose.jointlimit_motion(frame_start=1, frame_end=10)
    assert "Traceback" not in str(info.value) and "\n" not in str(info.value).strip()
    assert str(info.value).count("joint") == 1       # the same one line as apply and bake
    assert bpy.context.scene.frame_current == 4
    assert mods["animation"].keyed_frames(rig, pb, "rotation_quaternion", 1, 10) == [1, 10]


def test_step_keys_are_inside_the_limit_and_in_betweens_are_warned_about(rig, mods):
    """Step > 1 on a limited bone: every written key is inside the limit (evaluated pose), and the
    operator warns that the frames between the keys are Blender's interpolation; Step 1 does not."""
    import bpy

    from modal_harness import OperatorStandIn

    Q = mods["core.quat"]
    pb, s, limit = _limited_quaternion_joint(rig, mods)
    keys = [limit.clamp(Q.from_euler(np.radians(e), "XYZ")) for e in ((110, 0, 25), (110, 0, -25))]
    props = dict(frame_start=1, frame_end=31, profile="MIN_ACCELERATION", use_via_points=True,
                 via_velocity="CLAMPED", channels="EULER")
    for step in (1, 4):
        rig.animation_data_clear()
        _key(pb, keys[0], 1, mods)
        _key(pb, keys[1], 31, mods)
        op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_motion, step=step, **props)
        assert op.execute(bpy.context) == {"FINISHED"}
        frames = mods["animation"].keyed_frames(rig, pb, "rotation_quaternion", 1, 31)
        assert frames == list(range(1, 32, step)) + ([31] if 30 % step else [])
        for q in _sample(pb, frames, mods):
            assert Q.angle_between(limit.clamp(q), q) < 1e-5
        warnings = [text for kind, text in op.reports if kind == {"WARNING"}]
        if step == 1:
            assert warnings == []
        else:
            assert len(warnings) == 1 and "limits of joint:" in warnings[0] and "Step 1" in warnings[0] and "interpolation" in warnings[0]
    s.enabled = False              # no limit: nothing to warn about
    rig.animation_data_clear()
    _key(pb, keys[0], 1, mods)
    _key(pb, keys[1], 31, mods)
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_motion, step=4, **props)
    assert op.execute(bpy.context) == {"FINISHED"} and not any(kind == {"WARNING"} for kind, _ in op.reports)


def _x_keys_motion_warnings(rig, keys, channels):
    """Key the joint (XYZ) at ``keys`` ``[(frame, degrees about X)]`` and run Smooth Motion over
    them with ``channels`` (minimum jerk, clamped via velocities, step 1): its warnings."""
    import bpy

    from modal_harness import OperatorStandIn

    pb = rig.pose.bones["joint"]
    pb.rotation_mode = "XYZ"
    rig.animation_data_clear()
    for frame, x in keys:
        pb.rotation_euler = (math.radians(x), 0.0, 0.0)
        pb.keyframe_insert("rotation_euler", frame=frame)
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_motion, frame_start=keys[0][0], frame_end=keys[-1][0],
                         channels=channels, profile="MIN_JERK", use_via_points=True, via_velocity="CLAMPED", step=1)
    assert op.execute(bpy.context) == {"FINISHED"}
    return [text for kind, text in op.reports if kind == {"WARNING"}]


def test_keys_over_the_swing_pole_warn_with_swing_twist_channels(rig, mods):
    """Keys 0°, 171.9°, 343.8° about X: Swing & Twist channels go back through the rest pose
    between the last two (they cannot pass the pole), and the operator says so; Euler channels
    keep the keyed direction and do not warn."""
    warnings = {channels: _x_keys_motion_warnings(rig, ((1, 0.0), (15, 171.9), (31, 343.8)), channels)
                for channels in ("SWING_TWIST", "EULER")}
    pole = [w for w in warnings["SWING_TWIST"] if "swing pole" in w]
    assert len(pole) == 1 and "frames 15 and 31" in pole[0]
    # (a 171.9° swing in tan(x/2) runs fast near rest: the jump warning may come too)
    assert all("swing pole" in w or "from one frame to the next" in w for w in warnings["SWING_TWIST"])
    assert warnings["EULER"] == []


def test_a_fast_turn_on_euler_channels_warns_without_naming_swing_twist(rig, mods):
    """Keys 0° and 150° about X two frames apart, smoothed on Euler channels: the operator warns
    of the turn from one frame to the next, naming what makes it on Euler channels (not the
    Swing & Twist channels, which were not used)."""
    warnings = _x_keys_motion_warnings(rig, ((1, 0.0), (3, 150.0)), "EULER")
    assert len(warnings) == 1 and "from one frame to the next" in warnings[0]
    assert "Swing & Twist" not in warnings[0] and "space the keys further apart" in warnings[0]


def test_nla_tweak_mode_works_in_scene_frames(rig, mods):
    """In NLA tweak mode on a strip that starts at frame 101 (its action keyed at 1, 11, 21), the
    animator's frames 101-121 are smoothed: the keys go to the action's frames 1-21, the strip plays
    them, and the key poses are kept."""
    import bpy

    Q = mods["core.quat"]
    pb, poses = _three_key_poses(rig, mods)
    data = rig.animation_data
    action = data.action
    data.nla_tracks.new().strips.new("shot", 101, action)
    data.action = None
    data.use_tweak_mode = True
    assert mods["animation"].keyed_frames(rig, pb, "rotation_quaternion", 101, 121) == [101, 111, 121]
    assert bpy.ops.pose.jointlimit_motion(frame_start=101, frame_end=121) == {"FINISHED"}
    frames = {round(k.co[0]) for fc in mods["animation"].object_fcurves(rig) for k in fc.keyframe_points}
    assert frames == set(range(1, 22))
    data.use_tweak_mode = False
    got = _sample(pb, (101, 111, 121), mods)
    for g, q in zip(got, poses):
        assert Q.angle_between(g, q) < 1e-5


def test_a_key_far_outside_the_limit_is_clamped_before_the_motion_is_made(rig, mods, capfd):
    """A key far outside the limit (166° about Z on a joint limited to ±30° there): the key pose is
    clamped into the limit first and the motion made through it, so no frame turns far (it used to
    be reached by a turn of about 50° in one frame); the key frame holds the clamped key."""
    import bpy

    Q = mods["core.quat"]
    pb, _s, limit = _limited_quaternion_joint(rig, mods)
    far = Q.from_axis_angle([0, 0, 1], math.radians(166))
    for frame, q in ((1, Q.from_euler(np.radians((30, 0, 0)), "XYZ")), (10, far),
                     (20, Q.from_euler(np.radians((60, 0, 10)), "XYZ"))):
        _key(pb, q, frame, mods)
    capfd.readouterr()
    assert bpy.ops.pose.jointlimit_motion(frame_start=1, frame_end=20) == {"FINISHED"}
    path = _sample(pb, range(1, 21), mods)
    out = capfd.readouterr().out
    assert np.degrees(Q.angle_between(path[1:], path[:-1]).max()) < 30.0
    assert "from one frame to the next" not in out
    assert f"Key poses of {pb.name} were outside their limits: the motion passes through them clamped" in out
    assert Q.angle_between(path[9], limit.clamp(far)) < 1e-5


def test_the_clamped_key_poses_are_named_with_clamp_playback_on_too(rig, mods, capfd):
    """With Clamp Playback on, the pose read at a key is clamped already: the report compares with
    the keys themselves (a review: no bone was named then)."""
    import bpy

    Q = mods["core.quat"]
    pb, _s, _limit = _limited_quaternion_joint(rig, mods)
    for frame, z in ((1, 0.0), (10, 166.0), (20, 0.0)):
        _key(pb, Q.from_axis_angle([0, 0, 1], math.radians(z)), frame, mods)
    bpy.context.scene.jointlimit.clamp_playback = True
    try:
        capfd.readouterr()
        assert bpy.ops.pose.jointlimit_motion(frame_start=1, frame_end=20) == {"FINISHED"}
        assert f"Key poses of {pb.name} were outside their limits" in capfd.readouterr().out
    finally:
        bpy.context.scene.jointlimit.clamp_playback = False

def test_locked_channels_keep_their_value(rig, mods):
    """A bone whose X angle is locked (keyed the same at every key): the generated keys keep it
    exactly, with Swing & Twist channels too (which interpolate other numbers)."""
    import bpy

    pb = rig.pose.bones["joint"]
    pb.rotation_mode = "XYZ"
    pb.lock_rotation = (True, False, False)
    for frame, (y, z) in ((1, (0.0, 0.0)), (10, (0.4, -0.3)), (20, (-0.2, 0.5))):
        pb.rotation_euler = (0.3, y, z)
        pb.keyframe_insert("rotation_euler", frame=frame)
    x = pb.rotation_euler[0]
    assert bpy.ops.pose.jointlimit_motion(frame_start=1, frame_end=20, channels="SWING_TWIST") == {"FINISHED"}
    for frame in range(1, 21):
        bpy.context.scene.frame_set(frame)
        assert pb.rotation_euler[0] == x


def test_locked_channels_keep_the_animations_value_on_every_frame(rig, mods):
    """Lock Rotation on a keyed channel: the motion keeps that channel's own animation on every
    frame (it overwrote the key poses with the first key's value): an Euler bone's locked X, a
    quaternion bone's locked W (4D; the key poses stay exactly as keyed)."""
    import bpy

    Q = mods["core.quat"]
    pb = rig.pose.bones["joint"]
    pb.rotation_mode = "XYZ"
    for frame, (x, y, z) in ((1, (10, 0, 0)), (10, (50, 20, -10)), (20, (-20, -15, 30))):
        pb.rotation_euler = np.radians((x, y, z))
        pb.keyframe_insert("rotation_euler", frame=frame)
    animated_x = []     # the locked channel's own animation
    for frame in range(1, 21):
        bpy.context.scene.frame_set(frame)
        animated_x.append(pb.rotation_euler[0])
    pb.lock_rotation = (True, False, False)
    assert bpy.ops.pose.jointlimit_motion(frame_start=1, frame_end=20) == {"FINISHED"}
    for frame in range(1, 21):
        bpy.context.scene.frame_set(frame)
        assert pb.rotation_euler[0] == pytest.approx(animated_x[frame - 1], abs=1e-6), frame
    rig.animation_data_clear()
    pb.lock_rotation = (False, False, False)
    pb.rotation_mode = "QUATERNION"
    poses = [Q.from_euler(np.radians(e), "XYZ") for e in ((10, 0, 0), (40, 50, 10), (-30, 20, 60))]
    for frame, q in zip((1, 10, 20), poses):
        _key(pb, q, frame, mods)
    pb.lock_rotations_4d, pb.lock_rotation_w = True, True
    assert bpy.ops.pose.jointlimit_motion(frame_start=1, frame_end=20) == {"FINISHED"}
    for frame, q in zip((1, 10, 20), poses):
        bpy.context.scene.frame_set(frame)
        assert np.allclose(np.array(pb.rotation_quaternion), q * np.sign(np.dot(pb.rotation_quaternion, q)), atol=1e-6)


def test_axis_angle_keys_stay_continuous_past_a_half_turn(rig, mods):
    """An axis-angle bone keyed 0° -> 170° -> -170° about X (the short way goes past 180°): the
    stored angle runs on past 180° instead of jumping to -180°, where Blender's interpolation
    between two keys (subframes, motion blur) turned the bone back through rest."""
    import bpy

    pb = rig.pose.bones["joint"]
    pb.rotation_mode = "AXIS_ANGLE"
    for frame, angle in ((1, 0.0), (11, 170.0), (21, -170.0)):
        pb.rotation_axis_angle = (math.radians(angle), 1.0, 0.0, 0.0)
        pb.keyframe_insert("rotation_axis_angle", frame=frame)
    assert bpy.ops.pose.jointlimit_motion(frame_start=1, frame_end=21, channels="EULER") == {"FINISHED"}
    angles = []
    for frame in range(1, 22):
        bpy.context.scene.frame_set(frame)
        angle, *axis = pb.rotation_axis_angle
        angles.append(math.degrees(angle) * (1 if axis[0] >= 0 else -1))
    assert max(abs(b - a) for a, b in zip(angles, angles[1:])) < 30.0, angles
    bpy.context.scene.frame_set(16, subframe=0.5)     # between two generated keys: no turn back through rest
    assert math.degrees(abs(pb.rotation_axis_angle[0])) > 150.0


def test_a_key_outside_the_limit_gives_the_same_smooth_motion_whether_playback_clamps_or_not(rig, mods):
    """Hinge 0..145°, keys 0/90/170/20°: the key poses go inside the limit before the motion is
    made, so the keys do not depend on Clamp Playback (they held at 145° for ten frames and then
    dropped 34° a frame with it off)."""
    import bpy

    Q = mods["core.quat"]
    pb = rig.pose.bones["joint"]
    pb.rotation_mode = "QUATERNION"
    s = pb.jointlimit
    s.enabled, s.kind, s.hinge_axis = True, "HINGE", "X"
    s.hinge_min, s.hinge_max = 0.0, math.radians(145)
    results = {}
    for clamp in (False, True):
        rig.animation_data_clear()
        bpy.context.scene.jointlimit.clamp_playback = False
        for frame, angle in ((1, 0), (12, 90), (24, 170), (40, 20)):
            _key(pb, Q.from_axis_angle([1, 0, 0], math.radians(angle)), frame, mods)
        bpy.context.scene.jointlimit.clamp_playback = clamp
        assert bpy.ops.pose.jointlimit_motion(frame_start=1, frame_end=40) == {"FINISHED"}
        bpy.context.scene.jointlimit.clamp_playback = False
        results[clamp] = _sample(pb, range(1, 41), mods)
    assert np.abs(results[True] - results[False]).max() < 1e-5
    steps = np.degrees(Q.angle_between(results[False][1:], results[False][:-1]))
    assert steps.max() < 20.0, steps


def test_a_jump_is_reported_also_when_another_segment_passes_the_pole(rig, mods):
    """Keys 0°, 170°, -170° about X with Swing & Twist channels: the last segment passes the pole
    (warned), and the first turns 60° in a frame: warned as well (it was hidden behind the pole
    warning)."""
    warnings = _x_keys_motion_warnings(rig, ((1, 0.0), (4, 170.0), (20, -170.0)), "SWING_TWIST")
    assert any("swing pole" in w for w in warnings) and any("from one frame to the next" in w for w in warnings)


def test_a_jump_through_a_subframe_key_is_reported(rig, mods):
    """Keys 0° at 10, 40° at 10.5 and 80° at 11 about X: the joint turns 80° from frame 10 to
    frame 11 whether or not the subframe key is there; each half-frame step counted as a whole
    frame's turn hid it (40° under the warning's 45°)."""
    for keys in (((1, 0.0), (10, 0.0), (11, 80.0), (20, 80.0)), ((1, 0.0), (10, 0.0), (10.5, 40.0), (11, 80.0), (20, 80.0))):
        warnings = _x_keys_motion_warnings(rig, keys, "EULER")
        assert any("turns up to 80° from one frame to the next" in w for w in warnings), (keys, warnings)


def test_quaternion_swing_twist_range_error_is_in_degrees(rig, mods):
    import bpy

    s = rig.pose.bones["joint"].jointlimit
    s.enabled, s.kind, s.use_twist_limit = True, "QUAT_SWING", True
    s.twist_min, s.twist_max = math.radians(40), math.radians(-40)
    with pytest.raises(RuntimeError, match=r"Bone 'joint': Twist: minimum \(40\.0°\) is above maximum \(-40\.0°\)"):
        bpy.ops.pose.jointlimit_apply()


def test_a_locked_channel_and_the_limit_hold_together(rig, mods):
    """Euler XYZ with Z locked at 0 and a RECT limit (X -10..30°, Z ±12°): keys (0,0,0),
    (50,20,0), (0,0,0). Every generated key is inside the limit with Z still 0 (the limit's own
    clamp moved Z to -3.5° and zeroing it left the pose 1° outside); Apply and Bake keep the lock
    the same way."""
    import bpy

    pb, s, _ = _limited_quaternion_joint(rig, mods, "XYZ", "RECT", (-10, 30), (-12, 12))
    s.use_twist_limit, s.twist_min, s.twist_max = True, math.radians(-15), math.radians(15)
    bl = mods["bone_limits"]
    limit = bl.build_limit(s)

    def key_shot():
        rig.animation_data_clear()
        pb.lock_rotation = (False, False, False)
        for frame, e in ((1, (0, 0, 0)), (10, (50, 20, 0)), (20, (0, 0, 0))):
            pb.rotation_euler = np.radians(e)
            pb.keyframe_insert("rotation_euler", frame=frame)
        pb.lock_rotation = (False, False, True)

    def check(label):
        for frame in range(1, 21):
            bpy.context.scene.frame_set(frame)
            assert pb.rotation_euler[2] == 0.0, (label, frame)
            assert bl.is_inside(limit, bl.read_rotation(pb), 1e-5), (label, frame, tuple(pb.rotation_euler))

    key_shot()
    assert bpy.ops.pose.jointlimit_motion(frame_start=1, frame_end=20) == {"FINISHED"}
    check("motion")
    key_shot()
    assert bpy.ops.pose.jointlimit_bake(frame_start=1, frame_end=20) == {"FINISHED"}
    check("bake")
    rig.animation_data_clear()
    pb.rotation_euler = np.radians((50, 20, 0))
    assert bpy.ops.pose.jointlimit_apply() == {"FINISHED"}
    assert pb.rotation_euler[2] == 0.0 and bl.is_inside(limit, bl.read_rotation(pb), 1e-5)


def test_a_lock_that_holds_the_bone_outside_its_limit_moves_nothing_and_is_named(rig, mods):
    """A hinge about X (0..60°) with Euler Z locked at 40°: no rotation with that Z is a turn about
    X alone. Apply, Bake and Smooth Motion leave the other channels as they were (they invented a
    10° Y turn and jumps) and warn naming the bone; a fully locked bone outside its limit is named
    too."""
    import bpy

    from modal_harness import OperatorStandIn

    pb = rig.pose.bones["joint"]
    pb.rotation_mode = "XYZ"
    s = pb.jointlimit
    s.enabled, s.kind, s.hinge_axis = True, "HINGE", "X"
    s.hinge_min, s.hinge_max = 0.0, math.radians(60)
    keyed = {1: (0, 0, 40), 11: (60, 0, 40), 21: (0, 0, 40)}
    for frame, e in keyed.items():
        pb.rotation_euler = np.radians(e)
        pb.keyframe_insert("rotation_euler", frame=frame)
    animated = []
    for frame in range(1, 22):
        bpy.context.scene.frame_set(frame)
        animated.append(tuple(pb.rotation_euler))
    pb.lock_rotation = (False, False, True)
    for op_class, props in ((bpy.types.POSE_OT_jointlimit_bake, dict(frame_start=1, frame_end=21, all_bones=False)),
                            (bpy.types.POSE_OT_jointlimit_motion,
                             dict(frame_start=1, frame_end=21, channels="EULER", profile="MIN_JERK", use_via_points=True,
                                  via_velocity="CLAMPED", step=1))):
        op = OperatorStandIn(op_class, **props)
        assert op.execute(bpy.context) == {"FINISHED"}
        assert any(kind == {"WARNING"} and text.startswith("joint: Lock Rotation keeps it outside the joint limit")
                   for kind, text in op.reports), op.reports
        for frame in range(1, 22):
            bpy.context.scene.frame_set(frame)
            assert pb.rotation_euler[1] == pytest.approx(0.0, abs=1e-6), (op_class.__name__, frame)  # no invented Y
            assert pb.rotation_euler[2] == pytest.approx(math.radians(40), abs=1e-6)
        if op_class is bpy.types.POSE_OT_jointlimit_bake:    # the keys as animated
            for frame in range(1, 22):
                bpy.context.scene.frame_set(frame)
                assert np.allclose(tuple(pb.rotation_euler), animated[frame - 1], atol=1e-6), frame
    rig.animation_data_clear()
    pb.lock_rotation = (True, True, True)
    pb.rotation_euler = np.radians((80, 0, 0))
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_apply, all_bones=False)
    assert op.execute(bpy.context) == {"FINISHED"}
    assert tuple(pb.rotation_euler) == pytest.approx(tuple(np.radians((80, 0, 0))))
    assert op.reports[-1][0] == {"WARNING"} and "joint: Lock Rotation keeps it outside" in op.reports[-1][1]


@pytest.mark.parametrize("order", ["XYZ", "ZXY"])
def test_a_locked_bone_goes_to_the_nearest_rotation_inside_continuously(rig, mods, order):
    """Euler Z locked at 70° with an ELLIPSE limit (X -10..120°, Z ±30°), the free angles swept
    smoothly: a pose alone (Apply) goes to the nearest such rotation (to a 1° search); frame after
    frame (Bake, Smooth Motion: from the frame before's) each result is inside, keeps the lock and
    follows its nearest rotation on from the frame before: it changes sides at most once in the
    sweep, where that nearest rotation ends (the limit and the lock in turn, then a bisection
    toward a grid point, landed 50-80° farther than the nearest and flipped by up to 180° between
    nearby frames again and again; the rotations the lock allows are a surface, and the nearest on
    it moves up to about 50° while the pose moves 9°)."""
    Q, bl = mods["core.quat"], mods["bone_limits"]
    pb, _s, limit = _limited_quaternion_joint(rig, mods, order)
    pb.lock_rotation = (False, False, True)
    grid = np.radians(np.arange(-180.0, 180.0, 1.0))
    angles = np.stack(np.meshgrid(grid, grid, indexing="ij"), axis=-1).reshape(-1, 2)
    every = Q.from_euler(np.column_stack((angles, np.full(len(angles), math.radians(70)))), order)
    every = every[limit.contains(every)]
    previous, steps = None, []
    for i in range(121):
        t = i / 120
        pb.rotation_euler = np.radians((170 * math.cos(2 * math.pi * t), 150 * math.sin(2 * math.pi * t), 70))
        q = bl.read_rotation(pb)
        alone, _, met = bl.clamp_locked(pb, limit, q)
        assert met and limit.contains(alone), i
        assert Q.angle_between(alone, q) <= Q.angle_between(every, q).min() + math.radians(1.0), i
        out, _, met = bl.clamp_locked(pb, limit, q, None if previous is None else previous[0])
        assert met and limit.contains(out), i
        if previous is not None:
            steps.append(math.degrees(Q.angle_between(out, previous[0])))
        previous = (out, q)
    assert sum(step > 60.0 for step in steps) <= 1, sorted(steps)[-5:]     # (once: the minimum followed ends)


def test_smooth_motion_takes_a_subframe_key_pose_at_its_own_time(rig, mods):
    """A key on a subframe is a key pose like any other: Smooth Motion reads its pose at its own
    time (not the curve at the nearest whole frame, which the key only nudged) and keys it there,
    and the motion passes through it."""
    import bpy

    Q = mods["core.quat"]
    pb = rig.pose.bones["joint"]    # (selected, no limit)
    pb.rotation_mode = "QUATERNION"
    key_poses = {1: 0.0, 10.5: 60.0, 20: 0.0}
    for frame, z in key_poses.items():
        _key(pb, Q.from_axis_angle([0, 0, 1], math.radians(z)), frame, mods)
    assert mods["animation"].keyed_frames(rig, pb, "rotation_quaternion", 1, 20) == [1, 10.5, 20]
    assert bpy.ops.pose.jointlimit_motion(frame_start=1, frame_end=20) == {"FINISHED"}
    curves = sorted((fc for fc in mods["animation"].object_fcurves(rig)
                     if fc.data_path == pb.path_from_id("rotation_quaternion")), key=lambda fc: fc.array_index)
    times = sorted({k.co[0] for fc in curves for k in fc.keyframe_points})
    assert times == [*range(1, 11), 10.5, *range(11, 21)]
    for frame, z in key_poses.items():
        q = np.array([fc.evaluate(frame) for fc in curves])
        assert math.degrees(Q.angle_between(q, Q.from_axis_angle([0, 0, 1], math.radians(z)))) < 1e-3, frame
    assert math.degrees(Q.angle_between(np.array([fc.evaluate(10) for fc in curves]),
                                        Q.from_axis_angle([0, 0, 1], math.radians(60)))) < 5.0


@pytest.mark.parametrize("operator", ["bake", "motion"])
def test_the_scene_time_comes_back_with_its_subframe(rig, mods, operator):
    """The operators evaluate frame after frame; the scene then shows the time it showed before,
    its subframe included (it came back on the whole frame: a user trial)."""
    import bpy

    Q = mods["core.quat"]
    pb, _s, _limit = _limited_quaternion_joint(rig, mods)
    for frame, z in ((1, 0.0), (20, 40.0)):
        _key(pb, Q.from_axis_angle([0, 0, 1], math.radians(z)), frame, mods)
    scene = bpy.context.scene
    scene.frame_set(10, subframe=0.5)
    assert getattr(bpy.ops.pose, f"jointlimit_{operator}")(frame_start=1, frame_end=20) == {"FINISHED"}
    assert (scene.frame_current, scene.frame_subframe) == (10, 0.5)
    scene.render.frame_map_old, scene.render.frame_map_new = 100, 200   # Time Remapping: the scene time is not
    try:                                                                # the frame (a review: back on frame 20)
        scene.frame_set(40, subframe=0.25)
        assert getattr(bpy.ops.pose, f"jointlimit_{operator}")(frame_start=1, frame_end=20) == {"FINISHED"}
        assert (scene.frame_current, scene.frame_subframe) == (40, 0.25)
    finally:
        scene.render.frame_map_old = scene.render.frame_map_new = 100


@pytest.mark.parametrize("operator", ["bake", "motion"])
def test_a_subframe_key_inside_the_range_goes(rig, mods, operator):
    """Keys at 1, 10, 20 inside the limit and one at frame 15.5 far outside (Z 90°): Bake and
    Smooth Motion key whole frames and remove the key between them, so that the curve stays
    inside on the subframes too (it read 90° at 15.5 between two clamped keys: motion blur,
    subframe renders)."""
    import bpy

    Q = mods["core.quat"]
    pb, _s, limit = _limited_quaternion_joint(rig, mods)
    for frame, z in ((1, 0.0), (10, 20.0), (20, 0.0), (15.5, 90.0)):
        _key(pb, Q.from_axis_angle([0, 0, 1], math.radians(z)), frame, mods)
    run = getattr(bpy.ops.pose, f"jointlimit_{operator}")
    assert run(frame_start=1, frame_end=20) == {"FINISHED"}
    curves = [fc for fc in mods["animation"].object_fcurves(rig) if fc.data_path.endswith("rotation_quaternion")]
    kept = [15.5] if operator == "motion" else []   # Smooth Motion: a key pose, kept at its time (clamped)
    assert curves and all(sorted(k.co[0] for k in fc.keyframe_points if abs(k.co[0] - round(k.co[0])) > 1e-6) == kept
                          for fc in curves)
    for t in (15.25, 15.5, 15.75):
        q = np.array([fc.evaluate(t) for fc in sorted(curves, key=lambda fc: fc.array_index)])
        assert Q.angle_between(limit.clamp(q / np.linalg.norm(q)), q / np.linalg.norm(q)) < 1e-3


def test_the_jump_check_leaves_out_a_pole_span_that_starts_on_a_subframe(addon):
    """The pole warning's span from a subframe key (2.5 to 5) is left out of the turn-per-frame
    check, also the whole-frame step 2..3 that reaches into it (it warned a second time)."""
    import importlib

    motion = importlib.import_module(f"{addon.__name__}.operators.motion")
    Q = importlib.import_module(f"{addon.__name__}.core.quat")
    frames = [1, 2, 2.5, 3, 4, 5]
    quats = [Q.from_axis_angle([1.0, 0.0, 0.0], math.radians(a)) for a in (0, 5, 10, 100, 130, 160)]
    assert motion._largest_step_degrees(frames, quats, [(2.5, 5)]) == pytest.approx(5.0)
    assert motion._largest_step_degrees(frames, quats) == pytest.approx(95.0)


def test_each_rig_in_pose_mode_is_smoothed_through_its_own_keys(rig, mods):
    """Two rigs in Pose Mode with a bone selected on each: each bone's motion goes through its own
    rig's key poses (the keys were read from the active rig only: the other rig's were timed by
    the active one's and its key poses lost)."""
    import bpy

    Q = mods["core.quat"]
    pb, poses = _three_key_poses(rig, mods)
    bpy.ops.object.mode_set(mode="OBJECT")
    other = rig.copy()
    other.data = rig.data.copy()
    other.animation_data_clear()
    bpy.context.scene.collection.objects.link(other)
    other_pb = other.pose.bones["joint"]
    other_pb.rotation_mode = "QUATERNION"
    own = [Q.from_euler(np.radians(e), "XYZ") for e in ((10, 0, 0), (90, 0, 0), (20, 0, 0))]
    for frame, q in zip((5, 12, 25), own):
        _key(other_pb, q, frame, mods)
    for obj in (rig, other):
        obj.select_set(True)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="POSE")
    select_only(rig, {"joint"}, active="joint")
    select_only(other, {"joint"})
    assert {p.id_data.name for p in bpy.context.selected_pose_bones} == {rig.name, other.name}
    assert bpy.ops.pose.jointlimit_motion(frame_start=1, frame_end=30) == {"FINISHED"}
    assert mods["animation"].keyed_frames(other, other_pb, "rotation_quaternion", 1, 30) == list(range(5, 26))
    assert mods["animation"].keyed_frames(rig, pb, "rotation_quaternion", 1, 30) == list(range(1, 22))
    for g, q in zip(_sample(other_pb, (5, 12, 25), mods), own):
        assert Q.angle_between(g, q) < 1e-5
    for g, q in zip(_sample(pb, (1, 11, 21), mods), poses):
        assert Q.angle_between(g, q) < 1e-5


def _stretched(scene, old=50, new=100):
    scene.render.frame_map_old, scene.render.frame_map_new = old, new


def test_time_stretching_keeps_the_key_poses_on_their_frames(rig, mods, capfd):
    """With Time Stretching (Old 50, New 100: the action's frame 10 plays on the scene's 20), the
    key poses stay on the frames that show them and the motion is keyed on every frame shown,
    with no report of key poses outside the limits when none are."""
    import bpy

    Q = mods["core.quat"]
    pb, s, limit = _limited_quaternion_joint(rig, mods, x=(-30, 130), z=(-40, 40))
    poses = [Q.from_euler(np.radians(e), "XYZ") for e in ((0, 0, 0), (100, 0, 10), (30, 0, -20))]
    for frame, q in zip((1, 10, 20), poses):
        _key(pb, q, frame, mods)
    scene = bpy.context.scene
    _stretched(scene)
    assert mods["animation"].keyed_frames(rig, pb, "rotation_quaternion", 1, 40) == [2, 20, 40]
    capfd.readouterr()
    assert bpy.ops.pose.jointlimit_motion(frame_start=1, frame_end=40) == {"FINISHED"}
    assert "outside their limits" not in capfd.readouterr().err
    for g, q in zip(_sample(pb, (2, 20, 40), mods), poses):
        assert Q.angle_between(g, q) < 1e-5
    times = {k.co[0] for fc in mods["animation"].object_fcurves(rig) for k in fc.keyframe_points}
    assert times == {0.5 * f for f in range(2, 41)}


def test_bake_keeps_the_timing_of_a_stretched_scene(rig, mods):
    """Bake with Time Stretching: every frame shown after the bake is the frame shown before,
    clamped (each key went to the scene time the frame was sampled at, not to the frame number:
    the animation played at half speed)."""
    import bpy

    Q = mods["core.quat"]
    pb, s, limit = _limited_quaternion_joint(rig, mods)
    for frame, e in zip((1, 10, 20, 30), ((0, 0, 0), (60, 0, 0), (20, 0, 50), (40, 0, 0))):
        _key(pb, Q.from_euler(np.radians(e), "XYZ"), frame, mods)
    _stretched(bpy.context.scene)
    frames = range(1, 61)
    before = _sample(pb, frames, mods)
    assert bpy.ops.pose.jointlimit_bake(frame_start=1, frame_end=60) == {"FINISHED"}
    after = _sample(pb, frames, mods)
    assert Q.angle_between(after, limit.clamp(before)).max() < 1e-5


def _keyed_over_an_nla_strip(rig, mods):
    """The joint (XYZ, limited X -45..120°) held at X -30° by an NLA strip below and keyed in the
    action from 0° to -120° over frames 1-30: the bone, its limit and the animation data."""
    pb, _, limit = _limited_quaternion_joint(rig, mods, mode="XYZ", x=(-45, 120), z=(-30, 30))
    pb.rotation_euler = (math.radians(-30), 0.0, 0.0)
    pb.keyframe_insert("rotation_euler", frame=1)
    data = rig.animation_data
    below = data.action
    data.action = None
    data.nla_tracks.new().strips.new("below", 1, below)
    for frame, x in ((1, 0.0), (30, -120.0)):
        pb.rotation_euler = (math.radians(x), 0.0, 0.0)
        pb.keyframe_insert("rotation_euler", frame=frame)
    return pb, limit, data


def _bake_gives_the_clamped_frames(pb, limit, mods):
    """Bake frames 1-30 (some outside the limit): each frame then shows the clamp of what it showed."""
    import bpy

    frames = range(1, 31)
    before = _sample(pb, frames, mods)
    assert not limit.contains(before).all()
    assert bpy.ops.pose.jointlimit_bake(frame_start=1, frame_end=30) == {"FINISHED"}
    after = _sample(pb, frames, mods)
    assert mods["core.quat"].angle_between(after, limit.clamp(before)).max() < 1e-4


@pytest.mark.parametrize("blend", [("COMBINE", 1.0), ("ADD", 1.0), ("REPLACE", 0.5)])
def test_bake_over_an_nla_layer_keys_what_gives_the_clamped_pose(rig, mods, blend):
    """The action blended over an NLA strip (Combine, Add, or half influence): after the bake
    every frame shows the clamped pose of before (keys written straight into the F-curves took
    the layer below a second time: 30° outside, frames flipped)."""
    pb, limit, data = _keyed_over_an_nla_strip(rig, mods)
    data.action_blend_type, data.action_influence = blend
    _bake_gives_the_clamped_frames(pb, limit, mods)


def test_bake_in_nla_tweak_mode_on_an_add_strip_keys_what_gives_the_clamped_pose(rig, mods):
    """In NLA tweak mode on a strip that adds its action over a strip below, the action's own
    blending reads Replace at full influence: the strip's blending counts (the straight F-curve
    writes took the layer below twice: 30° off on every frame)."""
    import bpy

    pb, limit, data = _keyed_over_an_nla_strip(rig, mods)
    top = data.action
    data.action = None
    track = data.nla_tracks.new()
    strip = track.strips.new("top", 1, top)
    strip.blend_type = "ADD"
    for other in data.nla_tracks:
        other.select = False
    track.select = strip.select = True
    data.nla_tracks.active = track
    data.use_tweak_mode = True
    assert data.action == top and data.action_blend_type == "REPLACE" and mods["animation"].action_blended(rig)
    _bake_gives_the_clamped_frames(pb, limit, mods)
    data.use_tweak_mode = False     # a strip that replaces at full influence: its keys are the values
    strip.blend_type = "REPLACE"
    data.use_tweak_mode = True
    assert strip.influence == 0.0 and not strip.use_animated_influence    # (Blender's unused influence)
    assert not mods["animation"].action_blended(rig)


def test_a_bone_named_with_a_quote_gets_its_motion(rig, mods):
    import bpy

    Q = mods["core.quat"]
    bpy.ops.object.mode_set(mode="EDIT")
    rig.data.edit_bones["joint"].name = 'arm "L"'
    bpy.ops.object.mode_set(mode="POSE")
    pb = rig.pose.bones['arm "L"']
    pb.rotation_mode = "QUATERNION"
    poses = [Q.from_euler(np.radians(e), "XYZ") for e in ((0, 0, 0), (40, 10, -20))]
    for frame, q in zip((1, 11), poses):
        _key(pb, q, frame, mods)
    assert mods["animation"].keyed_frames(rig, pb, "rotation_quaternion", 1, 11) == [1, 11]
    assert bpy.ops.pose.jointlimit_motion(frame_start=1, frame_end=11) == {"FINISHED"}
    assert mods["animation"].keyed_frames(rig, pb, "rotation_quaternion", 1, 11) == list(range(1, 12))
    got = _sample(pb, (1, 11), mods)
    assert all(Q.angle_between(g, q) < 1e-5 for g, q in zip(got, poses))


def _x_keys(pb, degrees_by_frame, mode="XYZ"):
    pb.rotation_mode = mode
    for frame, x in degrees_by_frame.items():
        if mode == "AXIS_ANGLE":
            pb.rotation_axis_angle = (math.radians(x), 1.0, 0.0, 0.0)
            pb.keyframe_insert("rotation_axis_angle", frame=frame)
        else:
            pb.rotation_euler = (math.radians(x), 0.0, 0.0)
            pb.keyframe_insert("rotation_euler", frame=frame)


def _run(**props):
    import bpy

    from modal_harness import OperatorStandIn

    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_motion, **props)
    return op.execute(bpy.context), op.reports


@pytest.mark.parametrize("mode", ["XYZ", "AXIS_ANGLE"])
def test_keys_more_than_half_a_turn_apart_are_warned_about(rig, mods, mode):
    """Keys 0° and 270° about X: the motion takes the shorter way (-90°) and keys it; the report
    says so, naming the bone and the frames (it said only 'Smoothed 1 bone')."""
    pb = rig.pose.bones["joint"]
    _x_keys(pb, {1: 0.0, 11: 270.0}, mode)
    result, reports = _run(frame_start=1, frame_end=11, channels="EULER")
    assert result == {"FINISHED"}
    assert any(kind == {"WARNING"} and "joint" in text and "more than half a turn" in text and "1 and 11" in text
               for kind, text in reports), reports
    rig.animation_data_clear()
    _x_keys(pb, {1: 0.0, 11: 90.0, 21: 200.0}, mode)      # each step under half a turn: nothing said
    result, reports = _run(frame_start=1, frame_end=21, channels="EULER")
    assert result == {"FINISHED"} and not any("half a turn" in text for _, text in reports), reports


@pytest.mark.parametrize("start", ["rest_axis_angle", "quaternion"])
def test_a_long_turn_from_rest_or_across_quaternion_hemispheres_is_warned_about(rig, mods, start):
    """Axis-angle keys from Blender's rest value (angle 0 about Y) to 270° about X, and quaternion
    keys from identity to 270° about X (the other hemisphere, which Blender plays the long way
    round): the motion takes the shorter way, and says so."""
    pb = rig.pose.bones["joint"]
    if start == "quaternion":
        pb.rotation_mode = "QUATERNION"
        for frame, half in ((1, 0.0), (11, math.radians(135))):
            pb.rotation_quaternion = (math.cos(half), math.sin(half), 0.0, 0.0)
            pb.keyframe_insert("rotation_quaternion", frame=frame)
    else:
        pb.rotation_mode = "AXIS_ANGLE"
        for frame, value in ((1, (0.0, 0.0, 1.0, 0.0)), (11, (math.radians(270), 1.0, 0.0, 0.0))):
            pb.rotation_axis_angle = value
            pb.keyframe_insert("rotation_axis_angle", frame=frame)
    result, reports = _run(frame_start=1, frame_end=11)
    assert result == {"FINISHED"}
    assert any("more than half a turn" in text and "270°" in text for _, text in reports), reports


def _rotation_curves(rig, mods):
    data = rig.animation_data
    import importlib

    compat = importlib.import_module(mods["animation"].__name__.rpartition(".")[0] + ".compat")
    return [fc for fc in compat.action_fcurves(data.action, data.action_slot) if "rotation" in fc.data_path]


def test_curves_with_modifiers_or_locked_are_left_as_they_are(rig, mods):
    """A Generator on a rotation curve would act again on the keys the motion writes (the key
    poses moved by its offset), a locked curve takes no keys (reported as smoothed): both bones
    are left as they are and named; a Cycles modifier does not count."""
    pb = rig.pose.bones["joint"]
    _x_keys(pb, {1: 0.0, 11: 60.0, 21: 0.0})
    curves = _rotation_curves(rig, mods)
    counts = [len(fc.keyframe_points) for fc in curves]
    gen = curves[0].modifiers.new("GENERATOR")
    gen.use_additive, gen.coefficients = True, (0.1, 0.0)
    result, reports = _run(frame_start=1, frame_end=21, channels="EULER")
    assert result == {"CANCELLED"} and any("modifiers" in text and "joint" in text for _, text in reports), reports
    assert [len(fc.keyframe_points) for fc in curves] == counts
    curves[0].modifiers.remove(gen)
    curves[0].modifiers.new("CYCLES")
    curves[1].lock = True
    result, reports = _run(frame_start=1, frame_end=21, channels="EULER")
    assert result == {"CANCELLED"} and any("locked" in text and "joint" in text for _, text in reports), reports
    assert [len(fc.keyframe_points) for fc in curves] == counts
    curves[1].lock = False
    assert _run(frame_start=1, frame_end=21, channels="EULER")[0] == {"FINISHED"}
    assert all(len(fc.keyframe_points) == 21 for fc in curves)


def test_stepped_keys_are_smoothed_too(rig, mods):
    """Key poses blocked with Constant interpolation: the keys in the range (new ones copy it)
    interpolate smoothly after the motion, so Step 3 plays smoothly between its keys; the last
    key keeps its own (it leads out of the range)."""
    import bpy

    pb = rig.pose.bones["joint"]
    _x_keys(pb, {1: 0.0, 11: 60.0, 21: 0.0})
    for fc in _rotation_curves(rig, mods):
        for point in fc.keyframe_points:
            point.interpolation = "CONSTANT"
    result, reports = _run(frame_start=1, frame_end=21, channels="EULER", step=3)
    assert result == {"FINISHED"} and any("Constant" in text for _, text in reports), reports
    for fc in _rotation_curves(rig, mods):
        kinds = [p.interpolation for p in fc.keyframe_points]
        assert set(kinds[:-1]) == {"BEZIER"} and kinds[-1] == "CONSTANT", kinds
    xs = []
    for frame in range(1, 12):
        bpy.context.scene.frame_set(frame)
        xs.append(math.degrees(pb.rotation_euler.x))
    assert np.all(np.diff(xs) > 0.1), xs    # rising every frame to the 60° key, no holds


def test_a_repeated_strip_in_tweak_mode_is_refused(rig, mods):
    """In NLA tweak mode on a strip that repeats its action, the keys of one repeat play in every
    repeat (a motion over two repeats keyed past the strip, which grew): refused, saying why."""
    pb, _ = _three_key_poses(rig, mods)
    data = rig.animation_data
    strip = data.nla_tracks.new().strips.new("shot", 1, data.action)
    data.action = None
    strip.repeat = 2.0
    data.use_tweak_mode = True
    result, reports = _run(frame_start=1, frame_end=41)
    assert result == {"CANCELLED"} and "repeats its action" in reports[-1][1], reports
