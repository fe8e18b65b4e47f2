"""Joint limits in Blender: settings, apply, bake, constraints, copy/mirror, live limits (issue 4)."""

import math
import zlib

import numpy as np
import pytest

from rigs import compat, select_only, symmetric_arms

pytestmark = [pytest.mark.blender]

MODES = ["QUATERNION", "AXIS_ANGLE", "XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"]
FLOAT32_TOL = 2e-5  # Blender stores rotations as float32


@pytest.fixture
def rig(scene):
    return symmetric_arms()


@pytest.fixture
def core(addon):
    """The installed add-on's own core modules."""
    import importlib

    pkg = addon.__name__
    return {m: importlib.import_module(f"{pkg}.core.{m}") for m in ("quat", "limits", "euler_limits")} | {
        "bone_limits": importlib.import_module(f"{pkg}.bone_limits"),
        "animation": importlib.import_module(f"{pkg}.animation"),
    }


def configure(settings, kind):
    settings.enabled = True
    settings.kind = kind
    settings.shape = "OVAL"
    settings.swing_x_min, settings.swing_x_max = math.radians(-20), math.radians(110)
    settings.swing_z_min, settings.swing_z_max = math.radians(-40), math.radians(30)
    settings.use_twist_limit = True
    settings.twist_min, settings.twist_max = math.radians(-25), math.radians(35)
    settings.hinge_min, settings.hinge_max = math.radians(5), math.radians(140)
    settings.euler_min = [math.radians(a) for a in (-30, -20, -45)]
    settings.euler_max = [math.radians(a) for a in (60, 20, 45)]
    settings.quat_swing_max = math.radians(50)


def random_rotations(core, n, seed):
    return core["quat"].random_unit(n, seed)


def set_rotation(core, pb, q, mode):
    pb.rotation_mode = mode
    core["bone_limits"].write_rotation(pb, q)


def test_settings_round_trip_through_blend(rig, tmp_path):
    import bpy

    s = rig.pose.bones["upper_arm.L"].jointlimit
    configure(s, "SWING_TWIST")
    s.shape, s.correction, s.exponent, s.fix_twist = "SUPERELLIPSE", "SIMPLE", (3.0, 5.0), True
    p = s.outline.add()
    p.swing_z, p.swing_x, p.bulge = 0.3, -0.2, 0.5
    bpy.context.scene.jointlimit.live = True
    path = tmp_path / "limits.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.open_mainfile(filepath=str(path))
    s2 = bpy.data.objects["Rig"].pose.bones["upper_arm.L"].jointlimit
    assert s2.enabled and s2.kind == "SWING_TWIST" and s2.shape == "SUPERELLIPSE" and s2.correction == "SIMPLE"
    assert s2.swing_x_max == pytest.approx(math.radians(110)) and s2.twist_min == pytest.approx(math.radians(-25))
    assert tuple(s2.exponent) == pytest.approx((3.0, 5.0)) and s2.fix_twist
    assert len(s2.outline) == 1 and s2.outline[0].bulge == pytest.approx(0.5)
    assert bpy.context.scene.jointlimit.live


@pytest.mark.parametrize("kind", ["SWING_TWIST", "HINGE", "EULER", "EULER_MULTI", "QUAT_SWING"])
@pytest.mark.parametrize("mode", MODES)
def test_apply_equals_core_clamp(rig, core, kind, mode):
    import bpy

    pb = rig.pose.bones["upper_arm.L"]
    configure(pb.jointlimit, kind)
    limit = core["bone_limits"].build_limit(pb.jointlimit)
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    Q = core["quat"]
    for q in random_rotations(core, 12, zlib.crc32(f"{kind}-{mode}".encode())):  # stable across runs
        set_rotation(core, pb, q, mode)
        stored = core["bone_limits"].read_rotation(pb)
        assert bpy.ops.pose.jointlimit_apply() == {"FINISHED"}
        result = core["bone_limits"].read_rotation(pb)
        expected = limit.clamp(stored)
        assert pb.rotation_mode == mode
        assert Q.angle_between(result, expected) < 1e-4, (kind, mode, q)
        tol = core["bone_limits"].storage_tol(core["bone_limits"].stored_magnitude(pb))
        assert core["bone_limits"].is_inside(limit, result, tol)  # as stored (float32)


def selected_hinged_arm(rig, core):
    """``(pose bone, limit)``: the left upper arm given a Hinge limit, the only bone selected."""
    pb = rig.pose.bones["upper_arm.L"]
    configure(pb.jointlimit, "HINGE")
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    return pb, core["bone_limits"].build_limit(pb.jointlimit)


def test_apply_on_keyed_bones_keys_with_auto_keying_or_warns(rig, core):
    """Apply writes the pose; a keyed bone's keys set it again on the next frame change. With Auto
    Keying on Apply keys the clamped bones (as a transform does); without, it warns naming them."""
    import bpy

    from modal_harness import OperatorStandIn

    pb, limit = selected_hinged_arm(rig, core)
    outside = core["quat"].from_axis_angle([0.0, 0.0, 1.0], 1.2)
    scene = bpy.context.scene
    scene.frame_set(1)
    pb.rotation_quaternion = outside
    pb.keyframe_insert("rotation_quaternion", frame=1)
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_apply, all_bones=False)
    assert op.execute(bpy.context) == {"FINISHED"}
    assert op.reports[-1][0] == {"WARNING"} and op.reports[-1][1].startswith("upper_arm.L: animated")
    scene.frame_set(1)
    assert not limit.contains(core["bone_limits"].read_rotation(pb))     # the key won
    scene.tool_settings.use_keyframe_insert_auto = True
    try:
        op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_apply, all_bones=False)
        assert op.execute(bpy.context) == {"FINISHED"}
        assert op.reports[-1][0] == {"INFO"}
        scene.frame_set(2)
        scene.frame_set(1)
        q = core["bone_limits"].read_rotation(pb)
        assert core["bone_limits"].is_inside(limit, q, core["bone_limits"].storage_tol(1.0))  # keyed clamped
    finally:
        scene.tool_settings.use_keyframe_insert_auto = False


def test_apply_with_auto_keying_keys_what_clamp_playback_shows(rig, core):
    """Clamp Playback on shows a keyed bone clamped while its key on the frame is outside: Apply
    with Auto Keying keys the pose shown, so that the keys match the viewport (it said "Clamped
    0 of 1" and left the key outside)."""
    import bpy

    from modal_harness import OperatorStandIn

    pb, limit = selected_hinged_arm(rig, core)
    scene = bpy.context.scene
    scene.frame_set(1)
    pb.rotation_quaternion = core["quat"].from_axis_angle([0.0, 0.0, 1.0], 1.2)
    pb.keyframe_insert("rotation_quaternion", frame=1)
    scene.jointlimit.clamp_playback = True
    scene.tool_settings.use_keyframe_insert_auto = True
    try:
        scene.frame_set(1)
        assert limit.contains(core["bone_limits"].read_rotation(pb))      # shown clamped
        op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_apply, all_bones=False)
        assert op.execute(bpy.context) == {"FINISHED"}
        assert any("keys outside the limits on this frame: keyed as shown" in text for _, text in op.reports)
        scene.jointlimit.clamp_playback = False
        scene.frame_set(2)
        scene.frame_set(1)
        q = core["bone_limits"].read_rotation(pb)
        assert core["bone_limits"].is_inside(limit, q, core["bone_limits"].storage_tol(1.0))   # the key too
    finally:
        scene.tool_settings.use_keyframe_insert_auto = False
        scene.jointlimit.clamp_playback = False


@pytest.mark.parametrize("keying_set", ["Location", "Rotation", "BUILTIN_KSI_VisualRot", "absolute", "option-off"])
def test_auto_keying_with_only_active_keying_set_keys_what_the_set_keys(rig, core, keying_set):
    """With Auto Keying and *Only Active Keying Set* on, Apply keys what the active keying set
    keys, as Blender's transform does: a relative set (Location, Rotation, Visual Rotation) its
    channels of the bones clamped (paths an earlier use left in the set in the way of none), an
    absolute one its own paths; with the option off, the rotation channel. A bone whose rotation
    keys were not keyed anew is named in the warning (its keys undo the clamp); a visual key is
    the pose just clamped (a constraint makes Blender read the evaluated pose)."""
    import bpy

    from modal_harness import OperatorStandIn

    pb, limit = selected_hinged_arm(rig, core)
    bone = 'pose.bones["upper_arm.L"]'
    scene = bpy.context.scene
    scene.frame_set(1)
    pb.rotation_quaternion = core["quat"].from_axis_angle([0.0, 0.0, 1.0], 1.2)
    pb.keyframe_insert("rotation_quaternion", frame=1)     # animated: its keys set the rotation
    pb.constraints.new("LIMIT_ROTATION")     # limits nothing, but keys become visual ones
    rig["weight"] = 0.5
    scene.frame_set(3)
    tools, edit = scene.tool_settings, bpy.context.preferences.edit
    available, needed = edit.use_keyframe_insert_available, edit.use_auto_keyframe_insert_needed
    edit.use_auto_keyframe_insert_needed = False    # (on by default: the clamp leaves a component as keyed)
    if keying_set == "absolute":
        ks = scene.keying_sets.new(idname="jl_test", name="Weight Only")
        ks.paths.add(rig, '["weight"]')
    else:
        idname = {"option-off": "Location"}.get(keying_set, keying_set)
        ks = next(k for k in scene.keying_sets_all if k.bl_idname == idname)
        ks.paths.add(rig, f"{bone}.rotation_quaternion")    # as an earlier use of the set left it
    scene.keying_sets_all.active = ks
    tools.use_keyframe_insert_auto, edit.use_keyframe_insert_available = True, False
    tools.use_keyframe_insert_keyingset = keying_set != "option-off"
    try:
        op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_apply, all_bones=False)
        assert op.execute(bpy.context) == {"FINISHED"}
        left = len(ks.paths)
    finally:
        tools.use_keyframe_insert_auto = tools.use_keyframe_insert_keyingset = False
        edit.use_keyframe_insert_available, edit.use_auto_keyframe_insert_needed = available, needed
        if keying_set != "absolute":
            ks.paths.clear()    # (a builtin set is shared by every test)
    curves = core["animation"].object_fcurves(rig)
    keyed = {(fc.data_path, fc.array_index) for fc in curves if any(k.co[0] == 3.0 for k in fc.keyframe_points)}
    rotation = {(f"{bone}.rotation_quaternion", i) for i in range(4)}
    want = {"Location": {(f"{bone}.location", i) for i in range(3)}, "Rotation": rotation,
            "BUILTIN_KSI_VisualRot": rotation, "absolute": {('["weight"]', 0)}, "option-off": rotation}[keying_set]
    assert keyed == want
    warned = [text for kind, text in op.reports if kind == {"WARNING"}]
    if keying_set in ("Location", "absolute"):
        assert warned and warned[-1].startswith("upper_arm.L: animated")
    else:
        assert not warned
        scene.frame_set(2)
        scene.frame_set(3)
        q = core["bone_limits"].read_rotation(pb)
        assert core["bone_limits"].is_inside(limit, q, core["bone_limits"].storage_tol(1.0))  # the clamped pose
        assert left == (1 if keying_set == "option-off" else 0)    # a relative set's paths are made for one use
        group = next(fc for fc in curves if fc.data_path.endswith("rotation_quaternion")).group
        assert group is not None and group.name == "upper_arm.L"


AUTOKEY_CASES = ["replace-no-key", "replace-key-on-frame", "replace-other-key-on-frame", "replace-keying-set",
                 "replace-absolute-set", "replace-cycle-aware", "visual", "needed", "needed-off", "cycle-aware",
                 "subframe", "breakdown"]


@pytest.mark.parametrize("case", AUTOKEY_CASES)
def test_auto_keying_follows_blenders_mode_and_keying_options(rig, core, case):
    """Auto-keying after Apply keys as Blender's transform does with the scene's and the
    preferences' settings: in the *Replace* mode nothing on a rig without a key on the frame
    (keying set or not), else only the keys already on the frame, replaced; Visual Keying keys the
    pose after the bone's constraints; the auto-keying *Only Insert Needed* skips a component the
    clamp left as the curve gives it; Cycle-Aware Keying puts the key inside a cyclic action's
    range (in the *Replace* mode, the key there is replaced); keys go on the subframe shown and
    are of the scene's New Keyframe Type. Where no key was written the bone is named in the
    warning (its keys undo the clamp), with why when Auto Keying is on."""
    import bpy
    from mathutils import Quaternion

    from modal_harness import OperatorStandIn

    pb, limit = selected_hinged_arm(rig, core)
    bone = 'pose.bones["upper_arm.L"]'
    scene = bpy.context.scene
    tools, edit = scene.tool_settings, bpy.context.preferences.edit
    saved = (edit.use_visual_keying, edit.use_auto_keyframe_insert_needed, edit.use_keyframe_insert_available)
    outside = core["quat"].from_axis_angle([0.0, 0.0, 1.0], 1.2)
    pb.rotation_quaternion = outside
    cyclic = case in ("cycle-aware", "replace-cycle-aware")
    keys = {"cycle-aware": (1, 11), "replace-cycle-aware": (1, 5, 11), "replace-key-on-frame": (1, 3)}.get(case, (1,))
    for frame in keys:
        pb.keyframe_insert("rotation_quaternion", frame=frame)
    pb.keyframe_insert("location", frame={"replace-other-key-on-frame": 3, "replace-cycle-aware": 15}.get(case, 1))
    frame = 15 if cyclic else 3.5 if case == "subframe" else 3
    if cyclic:
        action = rig.animation_data.action
        action.use_frame_range, action.frame_start, action.frame_end, action.use_cyclic = True, 1, 11, True
        for fc in core["animation"].object_fcurves(rig):
            fc.modifiers.new("CYCLES")
    if case == "visual":
        con = pb.constraints.new("LIMIT_ROTATION")     # the visual pose differs from the channels
        con.owner_space, con.use_limit_x, con.min_x, con.max_x = "LOCAL", True, 0.3, 0.5
    scene.frame_set(int(frame), subframe=frame - int(frame))
    curves = {(fc.data_path, fc.array_index): fc for fc in core["animation"].object_fcurves(rig)}
    before = {channel: len(fc.keyframe_points) for channel, fc in curves.items()}
    keyed_value = {i: curves[f"{bone}.rotation_quaternion", i].evaluate(frame) for i in range(4)}
    if case == "replace-keying-set":
        scene.keying_sets_all.active = next(k for k in scene.keying_sets_all if k.bl_idname == "Rotation")
    elif case == "replace-absolute-set":
        rig["weight"] = 0.5
        scene.keying_sets_all.active = absolute = scene.keying_sets.new(idname="jl_test_weight", name="Weight")
        absolute.paths.add(rig, '["weight"]')
    tools.use_keyframe_insert_auto = True
    tools.use_keyframe_insert_keyingset = case in ("replace-keying-set", "replace-absolute-set")
    tools.auto_keying_mode = "REPLACE_KEYS" if case.startswith("replace") else "ADD_REPLACE_KEYS"
    tools.use_keyframe_cycle_aware = cyclic
    tools.keyframe_type = "BREAKDOWN" if case == "breakdown" else "KEYFRAME"
    edit.use_visual_keying, edit.use_keyframe_insert_available = case == "visual", False
    edit.use_auto_keyframe_insert_needed = case == "needed"
    try:
        op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_apply, all_bones=False)
        assert op.execute(bpy.context) == {"FINISHED"}
        bpy.context.view_layer.update()
        stored = np.array(pb.rotation_quaternion)
        visual = np.array(rig.convert_space(pose_bone=pb, matrix=pb.matrix, from_space="POSE",
                                            to_space="LOCAL").to_quaternion())
    finally:
        tools.use_keyframe_insert_auto = tools.use_keyframe_insert_keyingset = tools.use_keyframe_cycle_aware = False
        tools.auto_keying_mode, tools.keyframe_type = "ADD_REPLACE_KEYS", "KEYFRAME"
        edit.use_visual_keying, edit.use_auto_keyframe_insert_needed, edit.use_keyframe_insert_available = saved
    added = {channel for channel, fc in curves.items() if len(fc.keyframe_points) != before[channel]}
    on_frame = {channel for channel, fc in curves.items()
                if any(abs(k.co[0] - frame) < 0.01 for k in fc.keyframe_points)}
    rotation = {(f"{bone}.rotation_quaternion", i) for i in range(4)}
    warned = [text for kind, text in op.reports if kind == {"WARNING"}]
    if case.startswith("replace") and case not in ("replace-key-on-frame", "replace-cycle-aware"):
        assert not added and not (on_frame & rotation)      # nothing added, no rotation key on the frame
        assert len(core["animation"].object_fcurves(rig)) == len(curves)    # nor an F-curve (the weight's)
        assert warned and warned[-1].startswith("upper_arm.L: animated")
        assert "Auto Keying did not key the rotation here" in warned[-1]    # not "turn on Auto Keying"
        return
    assert not warned
    if case == "replace-key-on-frame":
        assert not added and on_frame == rotation       # the frame's keys replaced, the location's not added
    elif case == "replace-cycle-aware":
        assert not added and not (on_frame & rotation)  # frame 15's key is the cycle's at frame 5, replaced
        frame = 5
    elif case == "cycle-aware":
        assert added == rotation and not on_frame       # frame 15 keyed at frame 5, inside the cycle 1-11
        assert all(any(k.co[0] == 5.0 for k in curves[channel].keyframe_points) for channel in rotation)
    elif case == "needed":
        kept = {(f"{bone}.rotation_quaternion", i) for i in range(4) if abs(stored[i] - keyed_value[i]) < 1e-7}
        assert kept and added == rotation - kept        # a component the clamp left as keyed: no key
    else:
        assert added == rotation and on_frame >= rotation   # (on the subframe shown)
    types = {k.type for channel in added for k in curves[channel].keyframe_points if abs(k.co[0] - frame) < 0.01}
    assert types <= ({"BREAKDOWN"} if case == "breakdown" else {"KEYFRAME"})
    values = np.array([curves[f"{bone}.rotation_quaternion", i].evaluate(frame) for i in range(4)])
    want = visual if case == "visual" else stored
    assert min(np.abs(values - want).max(), np.abs(values + want).max()) < 1e-5
    if case == "visual":
        assert Quaternion(stored).rotation_difference(Quaternion(visual)).angle > 0.05    # not the channels
    else:
        scene.frame_set(int(frame) + 1)
        scene.frame_set(int(frame), subframe=frame - int(frame))
        q = core["bone_limits"].read_rotation(pb)
        assert core["bone_limits"].is_inside(limit, q, core["bone_limits"].storage_tol(1.0))   # keyed clamped


def test_apply_all_bones_and_selection(rig, core):
    import bpy

    for name in ("upper_arm.L", "upper_arm.R"):
        configure(rig.pose.bones[name].jointlimit, "HINGE")
        set_rotation(core, rig.pose.bones[name], [0.5, 0.5, 0.5, 0.5], "QUATERNION")
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    bpy.ops.pose.jointlimit_apply()
    assert tuple(rig.pose.bones["upper_arm.R"].rotation_quaternion) == pytest.approx((0.5, 0.5, 0.5, 0.5))
    bpy.ops.pose.jointlimit_apply(all_bones=True)
    assert tuple(rig.pose.bones["upper_arm.R"].rotation_quaternion) != pytest.approx((0.5, 0.5, 0.5, 0.5))


def test_bad_settings_report_error_and_leave_pose(rig, core):
    import bpy

    pb = rig.pose.bones["upper_arm.L"]
    configure(pb.jointlimit, "SWING_TWIST")
    pb.jointlimit.swing_x_min, pb.jointlimit.swing_x_max = math.radians(50), math.radians(10)
    set_rotation(core, pb, [0.2, 0.9, 0.3, 0.1], "QUATERNION")
    before = tuple(pb.rotation_quaternion)
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    assert core["bone_limits"].settings_error(pb.jointlimit).startswith("Swing X")
    with pytest.raises(RuntimeError, match="Swing X"):
        bpy.ops.pose.jointlimit_apply()
    assert tuple(pb.rotation_quaternion) == before


def test_no_limited_bones_is_an_error(rig):
    import bpy

    select_only(rig, {"spine"}, active="spine")
    with pytest.raises(RuntimeError, match="No limited bones"):
        bpy.ops.pose.jointlimit_apply()


def test_poll_outside_pose_mode(scene):
    import bpy

    assert not bpy.ops.pose.jointlimit_apply.poll()


def test_undo_restores_pose(rig, core):
    import bpy

    pb = rig.pose.bones["upper_arm.L"]
    configure(pb.jointlimit, "HINGE")
    set_rotation(core, pb, [0.5, 0.5, 0.5, 0.5], "QUATERNION")
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    # Headless operators push no undo step themselves; push around the call as the UI does for
    # operators with the UNDO option, then undo once.
    assert "UNDO" in bpy.types.POSE_OT_jointlimit_apply.bl_options
    bpy.ops.ed.undo_push(message="before apply")
    bpy.ops.pose.jointlimit_apply()
    bpy.ops.ed.undo_push(message="Apply Joint Limits")
    assert tuple(bpy.data.objects["Rig"].pose.bones["upper_arm.L"].rotation_quaternion) != pytest.approx((0.5,) * 4)
    bpy.ops.ed.undo()
    restored = tuple(bpy.data.objects["Rig"].pose.bones["upper_arm.L"].rotation_quaternion)
    assert restored == pytest.approx((0.5, 0.5, 0.5, 0.5))


def _key_rotation(pb, q, frame):
    pb.rotation_quaternion = q
    pb.keyframe_insert("rotation_quaternion", frame=frame)


@pytest.mark.parametrize("kind,mode", [("SWING_TWIST", "QUATERNION"), ("SWING_TWIST", "ZXY"), ("HINGE", "XYZ"),
                                       ("EULER", "AXIS_ANGLE"), ("EULER_MULTI", "QUATERNION"), ("QUAT_SWING", "YZX")])
def test_bake_keys_clamped_rotations_on_limited_bones_only(rig, core, kind, mode):
    import bpy

    Q = core["quat"]
    scene = bpy.context.scene
    limited, free = rig.pose.bones["upper_arm.L"], rig.pose.bones["forearm.L"]
    configure(limited.jointlimit, kind)
    limited.rotation_mode = mode
    free.rotation_mode = "QUATERNION"
    qs = random_rotations(core, 3, 7)
    for frame, q in zip((1, 10, 20), qs):
        _key_any(limited, q, frame, core)
        _key_rotation(free, q, frame)
    # Sample the original animation to compare with afterwards.
    frames = range(1, 21)
    original = []
    for f in frames:
        scene.frame_set(f)
        original.append(core["bone_limits"].read_rotation(limited))
    free_keys_before = _keyed_frames(rig, 'pose.bones["forearm.L"]')
    assert bpy.ops.pose.jointlimit_bake(frame_start=1, frame_end=20) == {"FINISHED"}
    limit = core["bone_limits"].build_limit(limited.jointlimit)
    expected = limit.clamp(np.array(original))
    for f, e in zip(frames, expected):
        scene.frame_set(f)
        got = core["bone_limits"].read_rotation(limited)
        assert Q.angle_between(got, e) < 1e-4
        assert core["bone_limits"].is_inside(limit, got, core["bone_limits"].storage_tol(core["bone_limits"].stored_magnitude(limited)))
        assert limited.rotation_mode == mode
    assert _keyed_frames(rig, 'pose.bones["upper_arm.L"]') == set(frames)
    assert _keyed_frames(rig, 'pose.bones["forearm.L"]') == free_keys_before == {1, 10, 20}


def test_bake_leaves_a_limited_bone_without_keys_alone_where_it_is_inside(rig, core):
    """Bake (All Limited Bones) keyed every frame of every limited bone, also the ones nobody had
    animated and that rest inside their limits (a user trial: 36 new F-curves for the untouched
    side); such a bone is left unkeyed and named, one posed outside is keyed clamped."""
    import bpy
    from modal_harness import OperatorStandIn

    Q = core["quat"]
    keyed, still, outside = (rig.pose.bones[n] for n in ("upper_arm.L", "upper_arm.R", "forearm.R"))
    for pb in (keyed, still, outside):
        configure(pb.jointlimit, "SWING_TWIST")
        pb.rotation_mode = "QUATERNION"
    for frame, angle in ((1, 0.0), (10, 200.0)):
        _key_rotation(keyed, Q.from_axis_angle([1, 0, 0], math.radians(angle)), frame)
    outside.rotation_quaternion = Q.from_axis_angle([1, 0, 0], math.radians(170))
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_bake, frame_start=1, frame_end=10)
    assert op.execute(bpy.context) == {"FINISHED"}
    assert _keyed_frames(rig, 'pose.bones["upper_arm.L"]') == set(range(1, 11))
    assert _keyed_frames(rig, 'pose.bones["forearm.R"]') == set(range(1, 11))
    assert _keyed_frames(rig, 'pose.bones["upper_arm.R"]') == set()
    assert any("Left upper_arm.R unkeyed: no rotation keys, inside the limits on every frame" in text
               for _, text in op.reports), op.reports
    select_only(rig, {"upper_arm.R"}, active="upper_arm.R")      # nothing else to bake: said all the same
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_bake, frame_start=1, frame_end=10, all_bones=False)
    assert op.execute(bpy.context) == {"FINISHED"}
    assert [text for _, text in op.reports] == ["Left upper_arm.R unkeyed: no rotation keys, inside the limits on "
                                                "every frame"]
    # animated by an NLA strip that plays (not the active action): baked (a review: it was left out)
    action = rig.animation_data.action
    track = rig.animation_data.nla_tracks.new()
    track.strips.new("Keys", 1, action)
    rig.animation_data.action = None
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_bake, frame_start=1, frame_end=10, all_bones=False)
    assert op.execute(bpy.context) == {"FINISHED"}
    assert not any("unkeyed" in text for _, text in op.reports), op.reports

def _key_any(pb, q, frame, core):
    """Key a rotation in the bone's own mode."""
    core["bone_limits"].write_rotation(pb, q)
    path, _ = core["bone_limits"].rotation_path(pb)
    pb.keyframe_insert(path, frame=frame)


def _keyed_frames(obj, prefix):
    action = obj.animation_data.action
    fcurves = compat().action_fcurves(action, obj.animation_data.action_slot)
    return {round(k.co[0]) for fc in fcurves if fc.data_path.startswith(prefix) for k in fc.keyframe_points}


@pytest.mark.parametrize("playhead", [1, 11])
def test_bake_keeps_the_keyed_euler_values_where_they_are_inside(rig, playhead):
    """Keys past a half turn (0° to 300° about X, inside a ±179° RECT) bake to the values they had,
    wherever the playhead stands; a frame outside the limit is corrected in the same turn."""
    import bpy

    scene = bpy.context.scene
    pb = rig.pose.bones["upper_arm.L"]
    settings = pb.jointlimit
    configure(settings, "SWING_TWIST")
    settings.shape = "RECT"
    settings.use_twist_limit = False
    settings.swing_x_min, settings.swing_x_max = math.radians(-179), math.radians(179)
    settings.swing_z_min, settings.swing_z_max = math.radians(-179), math.radians(179)
    pb.rotation_mode = "XYZ"
    for frame, x in ((1, 0.0), (11, 300.0), (12, 300.0)):
        pb.rotation_euler = (math.radians(x), 0.0, math.radians(1.0))
        pb.keyframe_insert("rotation_euler", frame=frame)

    def sampled():
        out = []
        for frame in range(1, 13):
            scene.frame_set(frame)
            out.append(tuple(pb.rotation_euler))
        return np.array(out)

    before = sampled()
    scene.frame_set(playhead)
    assert bpy.ops.pose.jointlimit_bake(frame_start=1, frame_end=12) == {"FINISHED"}
    after = sampled()
    # the keys are inside and keep their values; a frame whose interpolated X comes within a
    # degree of 180° (the pole) is corrected onto the limit in the same turn as its value
    assert np.abs(after[[0, 10, 11]] - before[[0, 10, 11]]).max() < 1e-6
    assert np.abs(after - before).max() < math.radians(2.0)


def _channel_keys(obj, action, bone):
    """Every key of the bone's rotation F-curves in ``action``: (path, index) -> rows of co,
    handles, interpolation and handle types."""
    fcurves = compat().action_fcurves(action, obj.animation_data.action_slot)
    return {(fc.data_path, fc.array_index): [(tuple(k.co), tuple(k.handle_left), tuple(k.handle_right), k.interpolation,
                                              k.handle_left_type, k.handle_right_type) for k in fc.keyframe_points]
            for fc in fcurves if fc.data_path.startswith(f'pose.bones["{bone}"].rotation')}


@pytest.mark.parametrize("mode", ["QUATERNION", "XYZ", "AXIS_ANGLE"])
def test_bake_keys_as_keyframe_insert_on_each_frame(rig, core, mode):
    """The baked keys (written straight into the F-curves, handles computed once) equal those of
    keyframe_insert on each frame with the same values, the key on a subframe inside the range
    removed: existing keys before and after it, Bezier handles and all."""
    import bpy

    pb = rig.pose.bones["upper_arm.L"]
    configure(pb.jointlimit, "SWING_TWIST")
    pb.rotation_mode = mode
    for frame, q in zip((1, 4.5, 10, 30), random_rotations(core, 4, 3)):
        _key_any(pb, q, frame, core)
    action = rig.animation_data.action
    reference = action.copy()
    assert bpy.ops.pose.jointlimit_bake(frame_start=2, frame_end=20) == {"FINISHED"}
    baked = _channel_keys(rig, action, pb.name)
    path, width = core["bone_limits"].rotation_path(pb)
    values = {f: [next(k[0][1] for k in baked[(pb.path_from_id(path), i)] if k[0][0] == f) for i in range(width)]
              for f in range(2, 21)}
    rig.animation_data.action = reference
    if rig.animation_data.action_slot is None and compat().action_fcurve_collection(reference, None) is None:
        rig.animation_data.action_slot = reference.slots[0]
    for f in range(2, 21):
        setattr(pb, path, values[f])
        pb.keyframe_insert(path, frame=f, group=pb.name)
    for fc in compat().action_fcurves(reference, rig.animation_data.action_slot):
        if fc.data_path == pb.path_from_id(path):
            fc.keyframe_points.remove(next(k for k in fc.keyframe_points if k.co[0] == 4.5))
            fc.update()
    assert len(baked[(pb.path_from_id(path), 0)]) == 19 + 2    # 2..20, 1 and 30 (4.5 removed)
    assert _channel_keys(rig, reference, pb.name) == baked


def test_bake_leaves_locked_fcurves_as_keyframe_insert_does(rig, core):
    """A locked F-curve takes no keys from the bake, as keyframe_insert
    refuses them; the other channels are baked."""
    import bpy

    pb = rig.pose.bones["upper_arm.L"]
    configure(pb.jointlimit, "SWING_TWIST")
    for frame, q in zip((1, 10), random_rotations(core, 2, 9)):
        _key_any(pb, q, frame, core)
    fcurves = compat().action_fcurves(rig.animation_data.action, rig.animation_data.action_slot)
    curves = [fc for fc in fcurves if fc.data_path.endswith("rotation_quaternion")]
    curves[1].lock = True
    assert bpy.ops.pose.jointlimit_bake(frame_start=1, frame_end=12) == {"FINISHED"}
    assert [len(fc.keyframe_points) for fc in curves] == [12, 2, 12, 12]


def test_bake_in_nla_tweak_mode_keys_the_tweaked_action_at_its_own_times(rig, core):
    """A strip starting at frame 101 tweaked: frames 101..110 are keyed at the action's 1..10."""
    import bpy

    pb = rig.pose.bones["upper_arm.L"]
    configure(pb.jointlimit, "SWING_TWIST")
    for frame, q in zip((1, 10), random_rotations(core, 2, 5)):
        _key_any(pb, q, frame, core)
    data = rig.animation_data
    action = data.action
    track = data.nla_tracks.new()
    track.strips.new("strip", 101, action)
    data.action = None
    data.use_tweak_mode = True
    assert data.use_tweak_mode and data.action == action
    assert bpy.ops.pose.jointlimit_bake(frame_start=101, frame_end=110) == {"FINISHED"}
    data.use_tweak_mode = False
    assert _keyed_frames(rig, 'pose.bones["upper_arm.L"]') == set()     # no action of its own now
    fcurves = compat().action_fcurves(action, track.strips[0].action_slot)
    assert {round(k.co[0]) for fc in fcurves for k in fc.keyframe_points} == set(range(1, 11))


@pytest.mark.parametrize("overridden", [False, True])
def test_bake_refuses_a_linked_action_and_leaves_it(rig, core, tmp_path, overridden):
    """A rig animated by an action linked from a library (a shot using an animation library), or
    by a library override of one: the bake reports why it cannot key instead of writing keys that
    the save drops."""
    import bpy

    pb = rig.pose.bones["upper_arm.L"]
    configure(pb.jointlimit, "HINGE")
    for frame, q in zip((1, 10), random_rotations(core, 2, 4)):
        _key_any(pb, q, frame, core)
    action = rig.animation_data.action
    action.name = "Library walk"
    library = str(tmp_path / "anim.blend")
    bpy.data.libraries.write(library, {action}, fake_user=True)
    rig.animation_data.action = None
    bpy.data.actions.remove(action)
    with bpy.data.libraries.load(library, link=True) as (_found, wanted):
        wanted.actions = ["Library walk"]
    linked = rig.animation_data.action = wanted.actions[0].override_create() if overridden else wanted.actions[0]
    assert (linked.override_library is not None) == overridden
    keys = {(fc.data_path, fc.array_index): len(fc.keyframe_points)
            for fc in compat().action_fcurves(linked, rig.animation_data.action_slot)}
    with pytest.raises(RuntimeError, match=r"'Library walk' of 'Rig' comes from a library \(linked or overridden\) and cannot keep keys"):
        bpy.ops.pose.jointlimit_bake(frame_start=1, frame_end=10)
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    with pytest.raises(RuntimeError, match=r"'Library walk' of 'Rig' comes from a library \(linked or overridden\) and cannot keep keys"):
        bpy.ops.pose.jointlimit_motion(frame_start=1, frame_end=10)
    assert {(fc.data_path, fc.array_index): len(fc.keyframe_points)
            for fc in compat().action_fcurves(linked, rig.animation_data.action_slot)} == keys


def test_bake_bad_range_reports_error(rig):
    import bpy

    configure(rig.pose.bones["upper_arm.L"].jointlimit, "HINGE")
    with pytest.raises(RuntimeError, match="before start"):
        bpy.ops.pose.jointlimit_bake(frame_start=10, frame_end=5)
    assert rig.animation_data is None


def _limit_rotation(pb, x, y, z, order="XYZ"):
    con = pb.constraints.new("LIMIT_ROTATION")
    con.owner_space = "LOCAL"
    con.euler_order = order
    for axis, rng in zip("xyz", (x, y, z)):
        setattr(con, f"use_limit_{axis}", rng is not None)
        if rng is not None:
            setattr(con, f"min_{axis}", math.radians(rng[0]))
            setattr(con, f"max_{axis}", math.radians(rng[1]))
    return con


def test_from_limit_rotation_round_trip(rig):
    import bpy

    pb = rig.pose.bones["upper_arm.L"]
    con = _limit_rotation(pb, (-20, 30), (-10, 15), (-25, 5))
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    assert bpy.ops.pose.jointlimit_from_constraints(old_constraints="MUTE") == {"FINISHED"}
    s = pb.jointlimit
    assert s.enabled and s.kind == "SWING_TWIST" and s.shape == "RECT" and s.use_twist_limit
    assert (math.degrees(s.swing_x_min), math.degrees(s.swing_x_max)) == pytest.approx((-20, 30))
    assert (math.degrees(s.swing_z_min), math.degrees(s.swing_z_max)) == pytest.approx((-25, 5))
    assert (math.degrees(s.twist_min), math.degrees(s.twist_max)) == pytest.approx((-10, 15))
    assert not con.enabled
    assert bpy.ops.pose.jointlimit_to_constraints() == {"FINISHED"}
    back = pb.constraints["JointLimit Euler"]
    for axis, rng in zip("xyz", ((-20, 30), (-10, 15), (-25, 5))):
        assert getattr(back, f"use_limit_{axis}")
        assert (math.degrees(getattr(back, f"min_{axis}")), math.degrees(getattr(back, f"max_{axis}"))) == pytest.approx(rng)
    assert back.owner_space == "LOCAL"


def _world_tail(obj, bone):
    import bpy

    bpy.context.view_layer.update()
    return np.array(obj.matrix_world @ obj.pose.bones[bone].tail)


def test_narrow_ranges_agree_with_blender_constraint(rig, core):
    """For narrow ranges the converted limit and Blender's Limit Rotation give nearly the same pose."""
    import bpy

    Q = core["quat"]
    pb = rig.pose.bones["upper_arm.L"]
    pb.rotation_mode = "QUATERNION"
    s = pb.jointlimit
    configure(s, "SWING_TWIST")
    s.shape = "RECT"
    s.swing_x_min, s.swing_x_max = math.radians(-10), math.radians(15)
    s.swing_z_min, s.swing_z_max = math.radians(-12), math.radians(8)
    s.twist_min, s.twist_max = math.radians(-5), math.radians(10)
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    bpy.ops.pose.jointlimit_to_constraints()
    limit = core["bone_limits"].build_limit(s)
    worst = 0.0
    for q in Q.from_euler(np.radians(np.random.default_rng(3).uniform(-25, 25, (20, 3))), "XYZ"):
        pb.rotation_quaternion = q
        bpy.context.view_layer.update()
        blender = Q.from_matrix(np.array(pb.matrix_basis.to_3x3()) if False else _constrained_local(rig, pb))
        ours = limit.clamp(q)
        worst = max(worst, math.degrees(Q.angle_between(blender, ours)))
    assert worst < 4.0, worst


def _constrained_local(obj, pb):
    """The local rotation after constraints: parent-relative pose matrix vs rest."""
    rest = np.array(pb.bone.matrix_local.to_3x3())
    pose = np.array(pb.matrix.to_3x3())
    if pb.parent is None:
        return rest.T @ pose
    parent_rest = np.array(pb.parent.bone.matrix_local.to_3x3())
    parent_pose = np.array(pb.parent.matrix.to_3x3())
    return (parent_rest.T @ rest).T @ (parent_pose.T @ pose)


def test_wide_range_past_90_degrees_where_euler_fails(rig, core):
    """A 100° bend about X (plus 10° about Z) is inside a (-10°, 150°) X range; Blender's Euler
    constraint with X as its middle axis moves it far away, the converted JointLimit keeps it."""
    import bpy

    Q = core["quat"]
    pb = rig.pose.bones["upper_arm.L"]
    pb.rotation_mode = "QUATERNION"
    _limit_rotation(pb, (-10, 150), (-5, 5), (-20, 20), order="YXZ")
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    bpy.ops.pose.jointlimit_from_constraints(old_constraints="KEEP")
    limit = core["bone_limits"].build_limit(pb.jointlimit)
    from_swing_twist = __import__(f"{core['quat'].__package__}.projection", fromlist=["x"]).from_swing_twist
    q = from_swing_twist(math.tan(math.radians(10) / 2), math.tan(math.radians(100) / 2), 0.0)
    assert limit.contains(q)  # JointLimit: inside, untouched
    pb.rotation_quaternion = q
    bpy.context.view_layer.update()
    blender = Q.from_matrix(_constrained_local(rig, pb))
    assert math.degrees(Q.angle_between(blender, q)) > 15  # the Euler constraint moved it far away
    assert Q.angle_between(limit.clamp(q), q) < 1e-12


def test_from_constraints_as_euler_allows_what_the_constraint_allows(rig, core):
    """Limit Kind Euler: a ZXY constraint becomes an Euler limit in ZXY with its ranges, which
    holds exactly the rotations the constraint leaves alone on the evaluated pose (300 random
    rotations; the Swing & Twist RECT of the same ranges differs on many); a constraint whose
    middle axis is free becomes Euler (Equivalent Ranges); Auto order takes the bone's Euler
    mode; an axis locked at 0..0 a narrow valid range."""
    import bpy

    Q = core["quat"]
    pb = rig.pose.bones["upper_arm.L"]
    pb.rotation_mode = "QUATERNION"
    con = _limit_rotation(pb, (-30, 60), (-20, 20), (-50, 10), order="ZXY")
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    assert bpy.ops.pose.jointlimit_from_constraints(old_constraints="KEEP", limit_kind="EULER") == {"FINISHED"}
    s = pb.jointlimit
    assert (s.kind, s.euler_order) == ("EULER", "ZXY")
    assert np.degrees(list(s.euler_min)) == pytest.approx([-30, -20, -50]) and \
        np.degrees(list(s.euler_max)) == pytest.approx([60, 20, 10])
    limit = core["bone_limits"].build_limit(s)
    rect = core["limits"].JointLimit(shape="RECT", swing_x=(math.radians(-30), math.radians(60)),
                                     swing_z=(math.radians(-50), math.radians(10)),
                                     twist=(math.radians(-20), math.radians(20)))
    rng = np.random.default_rng(7)
    differ = 0
    for _ in range(300):
        q = Q.from_axis_angle(rng.normal(size=3), rng.uniform(0.0, math.pi))
        pb.rotation_quaternion = q
        bpy.context.view_layer.update()
        left_alone = Q.angle_between(Q.from_matrix(_constrained_local(rig, pb)), q) < 1e-4
        assert bool(limit.contains(q)) == left_alone
        differ += bool(rect.contains(q)) != left_alone
    assert differ > 0
    pb.constraints.remove(con)
    pb.rotation_mode = "YXZ"
    pb.jointlimit.enabled = False
    _limit_rotation(pb, None, (0, 0), (-40, 40), order="AUTO")     # YXZ's middle axis, X, free
    assert bpy.ops.pose.jointlimit_from_constraints(old_constraints="KEEP", limit_kind="EULER") == {"FINISHED"}
    assert (s.kind, s.euler_order) == ("EULER_MULTI", "YXZ") and core["bone_limits"].settings_error(s) is None
    assert math.degrees(s.euler_max[1] - s.euler_min[1]) == pytest.approx(0.1) and s.euler_max[0] > 3.14
    for con in list(pb.constraints):
        pb.constraints.remove(con)
    pb.jointlimit.enabled = False
    _limit_rotation(pb, (50, 10), None, None)      # inverted: said, converted at the middle
    from modal_harness import OperatorStandIn

    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_from_constraints, old_constraints="KEEP", limit_kind="EULER")
    assert op.execute(bpy.context) == {"FINISHED"}
    assert any("upper_arm.L have a minimum above its maximum" in text for kind, text in op.reports if kind == {"WARNING"})
    assert math.degrees(0.5 * (s.euler_min[0] + s.euler_max[0])) == pytest.approx(30.0)


def test_from_constraints_reads_several_constraints_legacy_ranges_and_an_inverted_twist(rig, core):
    """Two local Limit Rotation constraints on one bone (X on one, Z on the other) become one
    limit with both ranges (only the first was read and both were muted: the Z range lost); with
    different Euler orders, or ranges of one axis that do not overlap, the bone is left as it is and
    named; a legacy constraint's 0..360°
    allows 0..180° (it became a free axis); an inverted Y range becomes a 0.1° twist at its middle
    (it stayed inverted: an invalid limit)."""
    import bpy

    from modal_harness import OperatorStandIn

    pb = rig.pose.bones["forearm.L"]
    s = pb.jointlimit
    select_only(rig, {"forearm.L"}, active="forearm.L")

    def convert(**props):
        op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_from_constraints, **props)
        return op.execute(bpy.context), op.reports

    def clear():
        for con in list(pb.constraints):
            pb.constraints.remove(con)
        s.enabled = False

    _limit_rotation(pb, (0, 140), None, None)
    _limit_rotation(pb, None, None, (-10, 10))
    for kind in ("SWING_TWIST", "EULER"):
        for con in pb.constraints:
            con.enabled = True
        s.enabled = False
        assert convert(old_constraints="MUTE", limit_kind=kind)[0] == {"FINISHED"}
        if kind == "EULER":
            assert np.degrees([s.euler_min[0], s.euler_max[0], s.euler_min[2], s.euler_max[2]]) == \
                pytest.approx([0, 140, -10, 10])
        else:
            assert np.degrees([s.swing_x_min, s.swing_x_max, s.swing_z_min, s.swing_z_max]) == \
                pytest.approx([0, 140, -10, 10])
        assert not any(con.enabled for con in pb.constraints)
    clear()
    _limit_rotation(pb, (0, 140), None, None)
    _limit_rotation(pb, None, None, (-10, 10), order="ZXY")
    result, reports = convert(old_constraints="MUTE")
    assert result == {"CANCELLED"} and not s.enabled and all(con.enabled for con in pb.constraints)
    assert any("Left forearm.L as they are" in text for kind, text in reports if kind == {"WARNING"}), reports
    pb.constraints[1].enabled = False     # muted: it limits nothing, the other is read alone
    assert convert(old_constraints="KEEP")[0] == {"FINISHED"}
    assert np.degrees([s.swing_x_min, s.swing_x_max, s.swing_z_min, s.swing_z_max]) == pytest.approx([0, 140, -179, 179])
    clear()
    _limit_rotation(pb, None, (0, 360), None).use_legacy_behavior = True
    assert convert(old_constraints="KEEP")[0] == {"FINISHED"}
    assert s.use_twist_limit and np.degrees([s.twist_min, s.twist_max]) == pytest.approx([0, 180])
    clear()
    _limit_rotation(pb, None, (50, 10), None)
    assert convert(old_constraints="KEEP")[0] == {"FINISHED"}
    assert core["bone_limits"].settings_error(s) is None
    assert np.degrees([s.twist_min, s.twist_max]) == pytest.approx([29.95, 30.05])
    clear()
    _limit_rotation(pb, (0, 40), None, None)
    _limit_rotation(pb, (60, 120), None, None)     # (one after the other: X held at 60°, not a range)
    result, reports = convert(old_constraints="MUTE")
    assert result == {"CANCELLED"} and not s.enabled and all(con.enabled for con in pb.constraints)
    assert any("ranges that do not overlap" in text for kind, text in reports if kind == {"WARNING"}), reports
    assert not any("minimum above its maximum" in text for _, text in reports), reports
    clear()


def test_from_constraints_keeps_existing_limits_unless_asked(rig):
    """A bone with a Hinge limit and the Limit Rotation constraint To Constraints made of it, a
    bone with a constraint only: From Constraints converts the second and keeps the hinge (it was
    replaced by a RECT, reported as converted); Replace Limits replaces it and says so; the
    hinge alone: refused, naming the option."""
    import bpy

    from modal_harness import OperatorStandIn

    upper, fore = rig.pose.bones["upper_arm.L"], rig.pose.bones["forearm.L"]
    s = fore.jointlimit
    s.enabled, s.kind, s.hinge_min, s.hinge_max = True, "HINGE", 0.0, math.radians(140)
    _limit_rotation(fore, (0, 140), (0, 0), (0, 0))
    _limit_rotation(upper, (-20, 30), (-10, 15), (-25, 5))
    select_only(rig, {"upper_arm.L", "forearm.L"}, active="forearm.L")
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_from_constraints, old_constraints="MUTE")
    assert op.execute(bpy.context) == {"FINISHED"}
    assert upper.jointlimit.enabled and s.kind == "HINGE" and fore.constraints[0].enabled
    assert any("Kept the joint limit of 1 bone that has one (forearm.L" in text for _, text in op.reports), op.reports
    select_only(rig, {"forearm.L"}, active="forearm.L")
    with pytest.raises(RuntimeError, match="switch on Replace Limits"):
        bpy.ops.pose.jointlimit_from_constraints()
    assert s.kind == "HINGE"
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_from_constraints, old_constraints="MUTE", replace_limits=True)
    assert op.execute(bpy.context) == {"FINISHED"}
    assert s.kind == "SWING_TWIST" and not fore.constraints[0].enabled
    assert any("Replaced the joint limit of 1 bone (forearm.L)" in text for _, text in op.reports), op.reports


def test_from_ik_limits(rig):
    import bpy

    pb = rig.pose.bones["forearm.L"]
    pb.use_ik_limit_x, pb.ik_min_x, pb.ik_max_x = True, math.radians(-10), math.radians(120)
    pb.lock_ik_y = True
    pb.use_ik_limit_z, pb.ik_min_z, pb.ik_max_z = True, math.radians(-5), math.radians(5)
    select_only(rig, {"forearm.L"}, active="forearm.L")
    bpy.ops.pose.jointlimit_from_constraints(source="IK_LIMITS")
    s = pb.jointlimit
    assert (math.degrees(s.swing_x_min), math.degrees(s.swing_x_max)) == pytest.approx((-10, 120))
    assert s.use_twist_limit and s.twist_min == s.twist_max == 0.0


def test_copy_to_selected(rig):
    import bpy

    configure(rig.pose.bones["upper_arm.L"].jointlimit, "EULER")
    select_only(rig, {"upper_arm.L", "forearm.L", "spine"}, active="upper_arm.L")
    assert bpy.ops.pose.jointlimit_copy() == {"FINISHED"}
    for name in ("forearm.L", "spine"):
        s = rig.pose.bones[name].jointlimit
        assert s.enabled and s.kind == "EULER"
        assert tuple(s.euler_max) == pytest.approx(tuple(rig.pose.bones["upper_arm.L"].jointlimit.euler_max))



def test_copy_from_a_bone_without_a_limit_keeps_the_targets_limits(rig):
    """An active bone without a limit would switch off the selected bones' limits: refused (a user
    trial lost a Polygon limit that way, with 'Copied the joint limit' reported)."""
    import bpy

    configure(rig.pose.bones["upper_arm.L"].jointlimit, "SWING_TWIST")
    select_only(rig, {"upper_arm.L", "forearm.L"}, active="forearm.L")
    with pytest.raises(RuntimeError, match="'forearm.L' has no joint limit: copying it would switch off the limits "
                                           "of upper_arm.L"):
        bpy.ops.pose.jointlimit_copy()
    assert rig.pose.bones["upper_arm.L"].jointlimit.enabled
    # neither has a limit: nothing to copy (it reported a copy and overwrote the stored ranges)
    spine = rig.pose.bones["spine"].jointlimit
    spine.swing_x_max = math.radians(77.0)
    select_only(rig, {"spine", "forearm.L"}, active="forearm.L")
    with pytest.raises(RuntimeError, match="'forearm.L' has no joint limit to copy"):
        bpy.ops.pose.jointlimit_copy()
    assert spine.swing_x_max == pytest.approx(math.radians(77.0))


def test_mirror_of_bones_without_a_limit_on_either_side_mirrors_nothing(rig):
    """A pair with no limit on either side has nothing to mirror: refused when it is all, named
    beside the pairs mirrored otherwise; the partner's stored ranges stay (Mirror reported them
    mirrored and overwrote them)."""
    import bpy

    right = rig.pose.bones["forearm.R"].jointlimit
    right.swing_x_max = math.radians(77.0)
    select_only(rig, {"forearm.L"}, active="forearm.L")
    with pytest.raises(RuntimeError, match="forearm.L and their mirror bones have no joint limit to mirror"):
        bpy.ops.pose.jointlimit_mirror()
    assert right.swing_x_max == pytest.approx(math.radians(77.0))
    configure(rig.pose.bones["upper_arm.L"].jointlimit, "SWING_TWIST")
    select_only(rig, {"forearm.L", "upper_arm.L"}, active="upper_arm.L")
    from modal_harness import OperatorStandIn

    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_mirror)
    assert op.execute(bpy.context) == {"FINISHED"}
    assert any("Mirrored 1 joint limit; no joint limit on either side: forearm.L" in text for _, text in op.reports)
    assert right.swing_x_max == pytest.approx(math.radians(77.0)) and not right.enabled


def test_mirror_of_a_selected_bone_without_a_limit_takes_its_partners(rig):
    """Selecting the side that still needs its limit and mirroring gives it the other side's limit,
    not the other side a blank one."""
    import bpy
    from modal_harness import OperatorStandIn

    left, right = rig.pose.bones["upper_arm.L"], rig.pose.bones["upper_arm.R"]
    configure(left.jointlimit, "SWING_TWIST")
    select_only(rig, {"upper_arm.R"}, active="upper_arm.R")
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_mirror)
    assert op.execute(bpy.context) == {"FINISHED"}
    assert left.jointlimit.enabled and right.jointlimit.enabled
    assert right.jointlimit.swing_z_max == pytest.approx(-left.jointlimit.swing_z_min)
    assert any("upper_arm.R had no joint limit: mirrored from the other side" in text for _, text in op.reports)


def test_add_vertex_builds_a_valid_outline_from_none(rig, core):
    """Add Vertex on an empty Polygon outline: the first three vertices go round the rest pose, a
    valid outline (each Add repeated the first vertex: 'outline has a zero-length edge')."""
    import bpy

    pb = rig.pose.bones["upper_arm.L"]
    s = pb.jointlimit
    s.enabled, s.kind, s.shape = True, "SWING_TWIST", "POLYGON"
    s.outline.clear()
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    for _ in range(4):
        assert bpy.ops.pose.jointlimit_outline_edit(action="ADD") == {"FINISHED"}
    points = [(p.swing_z, p.swing_x) for p in s.outline]
    assert len(set(points)) == 4
    limit = core["bone_limits"].build_limit(s)
    assert limit.contains(core["quat"].identity())
    # two vertices joined by arcs are a shape already: a vertex goes halfway along the active
    # edge, on its arc (the chord's midpoint was the circle's centre)
    s.outline.clear()
    for z in (-0.5, 0.5):
        p = s.outline.add()
        p.swing_z, p.swing_x, p.bulge = z, 0.0, 1.0
    s.outline_index = 0
    assert bpy.ops.pose.jointlimit_outline_edit(action="ADD") == {"FINISHED"}
    half = math.tan(math.pi / 8.0)
    assert [(round(p.swing_z, 6), round(p.swing_x, 6), round(p.bulge, 6)) for p in s.outline] == [
        (-0.5, 0.0, round(half, 6)), (0.0, -0.5, round(half, 6)), (0.5, 0.0, 1.0)]
    # one vertex with a bulge: the next goes round the rest pose too (a midpoint repeated it)
    s.outline.clear()
    p = s.outline.add()
    p.swing_z, p.swing_x, p.bulge = 0.5, 0.0, 1.0
    assert bpy.ops.pose.jointlimit_outline_edit(action="ADD") == {"FINISHED"}
    assert len({(round(p.swing_z, 6), round(p.swing_x, 6)) for p in s.outline}) == 2

def test_add_vertex_keeps_the_outline(rig, core):
    """Add Vertex splits the active edge where the outline runs: on a straight edge and on an arc
    of either sign, the limit allows exactly what it allowed before (a vertex at the angles'
    average left the straight edge on the plane, and cut an arc into a shorter arc and a chord)."""
    import bpy

    pb = rig.pose.bones["upper_arm.L"]
    s = pb.jointlimit
    s.enabled, s.kind, s.shape = True, "SWING_TWIST", "POLYGON"
    s.outline.clear()
    for z, x, bulge in ((-0.6, -0.4, 0.0), (0.7, -0.3, 0.6), (0.5, 0.8, -0.3), (-0.4, 0.6, 0.0)):
        p = s.outline.add()
        p.swing_z, p.swing_x, p.bulge = math.radians(57.3) * z, math.radians(57.3) * x, bulge
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    q = random_rotations(core, 4000, 3)
    before = core["bone_limits"].build_limit(s)
    for index in (0, 2, 4):     # a straight edge, then each arc (the earlier splits move them along)
        s.outline_index = index
        assert bpy.ops.pose.jointlimit_outline_edit(action="ADD") == {"FINISHED"}
        after = core["bone_limits"].build_limit(s)
        assert len(s.outline) == 4 + (index // 2 + 1)
        np.testing.assert_array_equal(after.contains(q), before.contains(q))
        assert core["quat"].angle_between(after.clamp(q), before.clamp(q)).max() < 1e-5
    half = [round(math.tan(0.5 * math.atan(bulge)), 6) for bulge in (0.6, -0.3)]
    assert [round(p.bulge, 6) for p in s.outline] == [0.0, 0.0, half[0], half[0], half[1], half[1], 0.0]


def _flip(q):
    return np.array([q[0], q[1], -q[2], -q[3]])


@pytest.mark.parametrize("kind,shape", [("SWING_TWIST", "RECT"), ("SWING_TWIST", "OVAL"), ("SWING_TWIST", "ELLIPSE"),
                                        ("EULER", "RECT"), ("HINGE", "RECT"), ("QUAT_SWING", "RECT")])
def test_mirror_gives_symmetric_poses(rig, core, kind, shape):
    import bpy

    Q = core["quat"]
    left, right = rig.pose.bones["upper_arm.L"], rig.pose.bones["upper_arm.R"]
    configure(left.jointlimit, kind)
    left.jointlimit.shape = shape
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    assert bpy.ops.pose.jointlimit_mirror() == {"FINISHED"}
    assert right.jointlimit.enabled
    lim_l = core["bone_limits"].build_limit(left.jointlimit)
    lim_r = core["bone_limits"].build_limit(right.jointlimit)
    for q in random_rotations(core, 30, 11):
        assert Q.angle_between(lim_r.clamp(_flip(q)), _flip(lim_l.clamp(q))) < 1e-6
    # and the flipped rotation really is the mirror pose in the world
    left.rotation_mode = right.rotation_mode = "QUATERNION"
    q = random_rotations(core, 1, 5)[0]
    left.rotation_quaternion, right.rotation_quaternion = q, _flip(q)
    tail_l, tail_r = _world_tail(rig, "upper_arm.L"), _world_tail(rig, "upper_arm.R")
    assert np.allclose(tail_l * [-1, 1, 1], tail_r, atol=1e-5)


def test_live_limits_clamp_while_posing(rig, core):
    import bpy

    pb = rig.pose.bones["upper_arm.L"]
    configure(pb.jointlimit, "HINGE")
    pb.rotation_mode = "XYZ"
    bpy.context.scene.jointlimit.live = True
    pb.rotation_euler = (math.radians(170), 0.3, 0.0)  # like a typed value or an R drag
    bpy.context.view_layer.update()
    limit = core["bone_limits"].build_limit(pb.jointlimit)
    q = core["bone_limits"].read_rotation(pb)
    assert limit.contains(q)
    assert math.degrees(pb.rotation_euler[0]) == pytest.approx(140, abs=1e-3)
    # the float32 value Blender stored is accepted: further updates write nothing (no ping-pong)
    handlers = __import__(f"{core['bone_limits'].__package__}.handlers", fromlist=["x"])
    assert handlers.clamp_scene(bpy.context.scene, only_changed=False) == 0
    bpy.context.scene.jointlimit.live = False
    pb.rotation_euler = (math.radians(170), 0.0, 0.0)
    bpy.context.view_layer.update()
    assert math.degrees(pb.rotation_euler[0]) == pytest.approx(170, abs=1e-3)


def test_playback_clamp_on_frame_change(rig, core):
    import bpy

    pb = rig.pose.bones["upper_arm.L"]
    configure(pb.jointlimit, "HINGE")
    pb.rotation_mode = "QUATERNION"
    _key_rotation(pb, core["quat"].from_axis_angle([1, 0, 0], math.radians(170)), 1)
    bpy.context.scene.jointlimit.clamp_playback = True
    bpy.context.scene.frame_set(1)
    limit = core["bone_limits"].build_limit(pb.jointlimit)
    assert limit.contains(core["bone_limits"].read_rotation(pb))


def _error_of(op, **kw):
    """The error text an operator reports (raised as RuntimeError by a headless call)."""
    with pytest.raises(RuntimeError) as info:
        op(**kw)
    return str(info.value).strip()


def test_bake_zero_quaternion_reports_like_apply_and_keys_nothing(rig, core):
    """A keyed all-zero quaternion: bake gives apply's one-line error, keys nothing, keeps the frame."""
    import bpy

    scene = bpy.context.scene
    pb = rig.pose.bones["upper_arm.L"]
    configure(pb.jointlimit, "SWING_TWIST")
    pb.rotation_mode = "QUATERNION"
    for frame in (1, 5):
        _key_rotation(pb, (0.0, 0.0, 0.0, 0.0), frame)
    keys_before = _keyed_frames(rig, 'pose.bones["upper_arm.L"]')
    scene.frame_set(3)
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    applied = _error_of(bpy.ops.pose.jointlimit_apply)
    baked = _error_of(bpy.ops.pose.jointlimit_bake, frame_start=1, frame_end=10)
    assert "zero length" in baked and "upper_arm.L" in baked and "\n" not in baked and "Traceback" not in baked
    assert baked == applied + " (frame 1)"     # the key to mend named (a user trial hunted for it)
    assert _keyed_frames(rig, 'pose.bones["upper_arm.L"]') == keys_before == {1, 5}
    assert scene.frame_current == 3


def test_invalid_range_message_names_the_bone_in_apply_and_bake(rig):
    import bpy

    pb = rig.pose.bones["forearm.L"]
    configure(pb.jointlimit, "HINGE")
    pb.jointlimit.hinge_min, pb.jointlimit.hinge_max = math.radians(100), math.radians(10)
    select_only(rig, {"forearm.L"}, active="forearm.L")
    want = "Bone 'forearm.L': Hinge: minimum (100.0°) must be below maximum (10.0°)"
    assert _error_of(bpy.ops.pose.jointlimit_apply).endswith(want)
    assert _error_of(bpy.ops.pose.jointlimit_bake, frame_start=1, frame_end=3).endswith(want)
    assert rig.animation_data is None



def test_a_too_narrow_smooth_shape_range_is_named_in_panel_terms(rig):
    import bpy

    pb = rig.pose.bones["forearm.L"]
    configure(pb.jointlimit, "SWING_TWIST")
    pb.jointlimit.shape = "ELLIPSE"
    pb.jointlimit.swing_z_min, pb.jointlimit.swing_z_max = math.radians(10.0), math.radians(10.05)
    select_only(rig, {"forearm.L"}, active="forearm.L")
    assert _error_of(bpy.ops.pose.jointlimit_apply).endswith(
        "Bone 'forearm.L': Swing Z: the Ellipse shape needs a range at least 0.1° wide (got 0.05°)")
    pb.jointlimit.shape = "RECT"
    pb.jointlimit.swing_z_min, pb.jointlimit.swing_z_max = 0.0, 1e-12     # (a script's: the sliders cannot)
    assert "Swing Z: the Rectangle shape needs a range at least" in _error_of(bpy.ops.pose.jointlimit_apply)

@pytest.mark.parametrize("kind, field", [("HINGE", "hinge_min"), ("SWING_TWIST", "swing_x_max"), ("SWING_TWIST", "twist_min"),
                                         ("EULER", "euler_min")])
def test_a_range_a_script_set_to_nan_is_named_as_not_a_number(rig, kind, field):
    """A script sets one end of a range to NaN (the sliders cannot): Apply's error says the range
    must be numbers of degrees, not that NaN "must be below" the other end."""
    import bpy

    pb = rig.pose.bones["forearm.L"]
    configure(pb.jointlimit, kind)
    pb.jointlimit.use_twist_limit, pb.jointlimit.fix_twist = True, False
    if field == "euler_min":
        pb.jointlimit.euler_min = (math.nan, -0.5, -0.5)
    else:
        setattr(pb.jointlimit, field, math.nan)
    select_only(rig, {"forearm.L"}, active="forearm.L")
    error = _error_of(bpy.ops.pose.jointlimit_apply)
    assert "Bone 'forearm.L'" in error and "must be numbers of degrees (got " in error and "nan°" in error
    assert "below" not in error and "above" not in error


def _make_invalid(settings, how):
    """Hinge min above max, or a NaN twist (Swing & Twist with a twist limit)."""
    if how == "MIN_ABOVE_MAX":
        configure(settings, "HINGE")
        settings.hinge_min, settings.hinge_max = math.radians(100), math.radians(10)
    else:
        configure(settings, "SWING_TWIST")
        settings.use_twist_limit = True
        settings.fix_twist = False
        settings.twist_min = math.nan


def _settings_snapshot(obj):
    return {pb.name: (pb.jointlimit.enabled, pb.jointlimit.kind, pb.jointlimit.hinge_min, pb.jointlimit.hinge_max,
                      repr(pb.jointlimit.twist_min), [c.name for c in pb.constraints]) for pb in obj.pose.bones}


@pytest.mark.parametrize("how", ["MIN_ABOVE_MAX", "NAN"])
@pytest.mark.parametrize("op_name", ["copy", "mirror", "to_constraints"])
def test_operators_reading_settings_refuse_invalid_ones_like_apply(rig, how, op_name):
    """Copy, Mirror and To Constraints refuse invalid settings with Apply's one-line message and change nothing."""
    import bpy

    _make_invalid(rig.pose.bones["forearm.L"].jointlimit, how)
    select_only(rig, {"forearm.L"}, active="forearm.L")
    applied = _error_of(bpy.ops.pose.jointlimit_apply)
    assert "forearm.L" in applied and "\n" not in applied
    select_only(rig, {"forearm.L", "spine"} if op_name == "copy" else {"forearm.L"}, active="forearm.L")
    before = _settings_snapshot(rig)
    assert _error_of(getattr(bpy.ops.pose, f"jointlimit_{op_name}")) == applied
    assert _settings_snapshot(rig) == before
    assert not rig.pose.bones["spine"].jointlimit.enabled and not rig.pose.bones["forearm.R"].jointlimit.enabled


@pytest.mark.parametrize("free_axis", [0, 1, 2])
def test_one_free_euler_angle_takes_the_exactly_nearest_rotation_inside(rig, core, free_axis):
    """Lock Rotation on two Euler angles (or the channels a playback frame holds): the clamp turns
    the free angle to the inside value nearest the posed one, which is the rotation nearest the
    pose (a turn of one Euler angle by d turns the rotation by |d|): checked against a scan of the
    free angle in 0.02° steps."""
    Q, BL = core["quat"], core["bone_limits"]
    pb = rig.pose.bones["upper_arm.L"]
    configure(pb.jointlimit, "SWING_TWIST")
    limit = BL.build_limit(pb.jointlimit)
    pb.rotation_mode = "XZY"
    rng = np.random.default_rng(free_axis)
    checked = 0
    for _ in range(200):
        angles = rng.uniform(-2.5, 2.5, size=3)
        pb.rotation_euler = angles
        pb.lock_rotation = [i != free_axis for i in range(3)]
        q = BL.read_rotation(pb)
        if limit.contains(q):
            continue
        out, _, met = BL.clamp_locked(pb, limit, q)
        scan = np.tile(angles, (18000, 1))
        scan[:, free_axis] = angles[free_axis] + np.radians(np.arange(-180.0, 180.0, 0.02))
        turned = Q.from_euler(scan, "XZY")
        inside = limit.contains(turned)
        if not inside.any():
            assert not met
            continue
        assert met and BL.is_inside(limit, out, 1e-6)
        best = Q.angle_between(turned[inside], q).min()
        assert Q.angle_between(out, q) <= best + 1e-6
        assert Q.angle_between(turned, out).min() < 1e-3     # the locked angles kept: on the scanned line
        checked += 1
    assert checked >= 10


def test_settings_errors_speak_of_the_settings_and_full_euler_ranges_work(rig, core):
    """Ranges typed as the panel shows them: Euler −180..180° on every axis (stored a hair beyond
    pi in float32) is a valid Euler (Equivalent Ranges) limit, and on the Euler kind's outer axes
    (refused before with 'x range (order XYZ) must lie inside [-3.14159, 3.14159] rad'); the Euler
    kind's middle axis beyond its 80° gimbal guard, a NaN largest swing and NaN superellipse
    exponents are named in the panel's terms instead of the core's."""
    import math as m

    bl = core["bone_limits"]
    s = rig.pose.bones["upper_arm.L"].jointlimit
    s.enabled, s.kind, s.euler_order = True, "EULER_MULTI", "XYZ"
    s.euler_min, s.euler_max = (-m.pi,) * 3, (m.pi,) * 3
    assert bl.settings_error(s) is None
    s.kind = "EULER"
    assert bl.settings_error(s) == ("Euler Y: the middle axis of the XYZ order must stay within ±80° (the Euler kind's "
                                    "gimbal guard; Euler (Equivalent Ranges) takes wider ranges), got -180.0° to 180.0°")
    s.euler_min[1], s.euler_max[1] = m.radians(-80), m.radians(80)
    assert bl.settings_error(s) is None
    assert bl.build_limit(s).contains(np.array([m.cos(m.radians(85)), m.sin(m.radians(85)), 0.0, 0.0]))
    s.kind, s.quat_swing_max = "QUAT_SWING", float("nan")
    assert bl.settings_error(s) == "Swing: the largest swing must lie between 0° and 180°, got nan°"
    s.kind, s.shape = "SWING_TWIST", "SUPERELLIPSE"
    s.exponent = (float("nan"), 4.0)
    assert bl.settings_error(s) == "Superellipse: the exponents must be numbers of at least 1, got nan and 4"


def _turned_rig(core):
    """A rig of ``symmetric_arms``' bones turned 90° about Z in its rest pose (another front), alone in
    Pose Mode, and the limit the Shoulder preset fitted to that rig gives its ``upper_arm.L``
    (which is then left without a limit)."""
    import bpy

    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.ops.object.select_all(action="DESELECT")
    other = symmetric_arms("Other")
    bpy.ops.object.mode_set(mode="EDIT")
    for eb in other.data.edit_bones:
        eb.head, eb.tail = (-eb.head.y, eb.head.x, eb.head.z), (-eb.tail.y, eb.tail.x, eb.tail.z)
    bpy.ops.object.mode_set(mode="POSE")
    select_only(other, {"upper_arm.L"}, active="upper_arm.L")
    assert bpy.ops.pose.jointlimit_preset_apply(preset="JOINT:SHOULDER", fit_rig=True) == {"FINISHED"}
    settings = other.pose.bones["upper_arm.L"].jointlimit
    own = core["bone_limits"].build_limit(settings)
    settings.enabled = False
    return other, own


def _both_in_pose_mode(rig, other):
    import bpy

    bpy.ops.object.mode_set(mode="OBJECT")
    for obj in (rig, other):
        obj.select_set(True)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="POSE")
    assert {obj.name for obj in bpy.context.objects_in_mode} == {rig.name, other.name}


def test_pose_operators_act_on_every_rig_in_pose_mode(rig, core):
    """With two rigs in Pose Mode (selected together as it was entered), a preset fits each rig's
    bones to that rig's own front and up, Mirror finds each bone's partner in its own rig, and
    Bake and Apply work on the limited bones of both (the active rig's front and up were used for
    all, Mirror looked for partners in the active rig, Bake and Apply left the other rig alone)."""
    import bpy

    other, own = _turned_rig(core)
    _both_in_pose_mode(rig, other)
    for obj in (rig, other):
        select_only(obj, {"upper_arm.L"}, active="upper_arm.L")
    assert bpy.ops.pose.jointlimit_preset_apply(preset="JOINT:SHOULDER", fit_rig=True) == {"FINISHED"}
    assert bpy.ops.pose.jointlimit_mirror() == {"FINISHED"}
    limits = [core["bone_limits"].build_limit(obj.pose.bones["upper_arm.L"].jointlimit) for obj in (rig, other)]
    assert all(obj.pose.bones["upper_arm.R"].jointlimit.enabled for obj in (rig, other))
    q = random_rotations(core, 300, 21)
    np.testing.assert_array_equal(limits[1].contains(q), own.contains(q))
    assert not np.array_equal(limits[0].contains(q), own.contains(q))     # each rig its own fit
    outside = core["quat"].from_euler(np.radians((0.0, 0.0, 120.0)), "XYZ")
    for obj in (rig, other):
        pb = obj.pose.bones["upper_arm.L"]
        set_rotation(core, pb, outside, "QUATERNION")
        pb.keyframe_insert("rotation_quaternion", frame=1)
        pb.keyframe_insert("rotation_quaternion", frame=3)
    assert bpy.ops.pose.jointlimit_bake(frame_start=1, frame_end=3) == {"FINISHED"}
    for obj in (rig, other):
        assert _keyed_frames(obj, 'pose.bones["upper_arm.L"]') == {1, 2, 3}
        obj.animation_data_clear()
        set_rotation(core, obj.pose.bones["upper_arm.L"], outside, "QUATERNION")
    assert bpy.ops.pose.jointlimit_apply() == {"FINISHED"}
    tol = core["bone_limits"].storage_tol(1.0)
    for obj, limit in zip((rig, other), limits):
        assert core["bone_limits"].is_inside(limit, core["bone_limits"].read_rotation(obj.pose.bones["upper_arm.L"]), tol)


def test_from_constraints_on_all_bones_converts_every_rig_in_pose_mode(rig, core):
    """From Constraints with All Bones converts the Limit Rotation constraints of each rig in Pose
    Mode (only the active rig's were)."""
    import bpy

    other, _ = _turned_rig(core)
    _both_in_pose_mode(rig, other)
    for obj in (rig, other):
        con = obj.pose.bones["forearm.L"].constraints.new("LIMIT_ROTATION")
        con.owner_space, con.use_limit_x, con.min_x, con.max_x = "LOCAL", True, 0.0, math.radians(140)
    assert bpy.ops.pose.jointlimit_from_constraints(all_bones=True, source="LIMIT_ROTATION") == {"FINISHED"}
    assert all(obj.pose.bones["forearm.L"].jointlimit.enabled for obj in (rig, other))


def test_apply_with_auto_keying_keys_only_the_bones_it_moved_in_each_rig(rig, core):
    """Two rigs in Pose Mode with a limited bone of the same name, one outside and one inside:
    with Auto Keying, Apply keys only the one it moved (bones were told apart by name: the other
    rig's got keys too)."""
    import bpy

    other, _ = _turned_rig(core)
    _both_in_pose_mode(rig, other)
    for obj in (rig, other):
        configure(obj.pose.bones["forearm.L"].jointlimit, "HINGE")
        obj.pose.bones["forearm.L"].rotation_mode = "XYZ"
        obj.pose.bones["forearm.L"].keyframe_insert("rotation_euler", frame=1)   # (Only Insert Available)
    bpy.context.scene.frame_set(2)
    rig.pose.bones["forearm.L"].rotation_euler = (math.radians(170), 0.0, 0.0)   # outside 5..140
    other.pose.bones["forearm.L"].rotation_euler = (math.radians(40), 0.0, 0.0)  # inside
    bpy.context.scene.tool_settings.use_keyframe_insert_auto = True
    try:
        assert bpy.ops.pose.jointlimit_apply(all_bones=True) == {"FINISHED"}
    finally:
        bpy.context.scene.tool_settings.use_keyframe_insert_auto = False
    assert _keyed_frames(rig, 'pose.bones["forearm.L"]') == {1, 2}
    assert _keyed_frames(other, 'pose.bones["forearm.L"]') == {1}
    # a report naming bones of several rigs names each bone's rig too
    other.pose.bones["forearm.L"].rotation_euler = (math.radians(170), 0.0, 0.0)
    rig.pose.bones["forearm.L"].rotation_euler = (math.radians(170), 0.0, 0.0)
    from modal_harness import OperatorStandIn

    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_apply, all_bones=True)
    assert op.execute(bpy.context) == {"FINISHED"}
    assert any(f"forearm.L ({rig.name}), forearm.L ({other.name}): animated" in text or
               f"forearm.L ({other.name}), forearm.L ({rig.name}): animated" in text for _, text in op.reports), op.reports


@pytest.mark.parametrize("shape", ["ELLIPSE", "SUPERELLIPSE", "RECT"])
def test_to_constraints_and_back_gives_the_limit_its_shape_again(rig, shape):
    """To Constraints with Disable Joint Limits, then From Constraints: the bone's own limit (its
    shape, not a rectangle of its ranges) is switched on again; the constraint muted."""
    import bpy

    pb = rig.pose.bones["upper_arm.L"]
    s = pb.jointlimit
    configure(s, "SWING_TWIST")
    s.shape = shape
    s.swing_x_min, s.swing_x_max = math.radians(-30), math.radians(80)
    s.swing_z_min, s.swing_z_max = math.radians(-40), math.radians(20)
    s.use_twist_limit = True
    s.twist_min, s.twist_max = math.radians(-20), math.radians(35)
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    assert bpy.ops.pose.jointlimit_to_constraints(disable_limits=True) == {"FINISHED"}
    assert not s.enabled
    assert bpy.ops.pose.jointlimit_from_constraints() == {"FINISHED"}
    assert s.enabled and s.kind == "SWING_TWIST" and s.shape == shape
    assert not pb.constraints["JointLimit Euler"].enabled
    pb.constraints["JointLimit Euler"].max_x = math.radians(70)    # edited since: converted as ranges
    s.enabled = False
    assert bpy.ops.pose.jointlimit_from_constraints() == {"FINISHED"}
    assert s.enabled and s.shape == "RECT" and math.degrees(s.swing_x_max) == pytest.approx(70)


def test_remove_on_a_library_override_mutes_the_librarys_constraints(scene, tmp_path):
    """From Constraints with Remove on a library override: the library's constraints cannot be
    removed there (Blender brings them back, acting, when the shot is opened: the bone limited
    twice): they are muted instead, and the report says so; saved and opened again, muted."""
    import bpy

    from modal_harness import OperatorStandIn
    from rigs import make_armature, overridden_rig

    obj = make_armature([("upper_arm.L", (0, 0, 0), (0, 0, 1), None, 0.0), ("forearm.L", (0, 0, 1), (0, 0, 2), "upper_arm.L", 0.0)])
    _limit_rotation(obj.pose.bones["upper_arm.L"], (-20, 30), None, (-25, 5))
    rig = overridden_rig(scene, obj, str(tmp_path / "library.blend"))
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="POSE")
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_from_constraints, old_constraints="REMOVE")
    assert op.execute(bpy.context) == {"FINISHED"}
    assert any(kind == {"WARNING"} and "Muted the Limit Rotation constraints of upper_arm.L" in text
               for kind, text in op.reports), op.reports
    cons = rig.pose.bones["upper_arm.L"].constraints
    assert [(c.type, c.enabled) for c in cons] == [("LIMIT_ROTATION", False)]
    shot = str(tmp_path / "shot.blend")
    bpy.ops.wm.save_as_mainfile(filepath=shot)
    bpy.ops.wm.open_mainfile(filepath=shot)
    rig = next(o for o in bpy.data.objects if o.type == "ARMATURE" and o.override_library is not None)
    assert [(c.type, c.enabled) for c in rig.pose.bones["upper_arm.L"].constraints] == [("LIMIT_ROTATION", False)]
    assert rig.pose.bones["upper_arm.L"].jointlimit.enabled


def test_bake_leaves_driven_bones_and_refuses_a_repeated_tweaked_strip(rig, core):
    """A limited bone whose rotation a driver sets: Bake's keys would not play (the driver wins)
    and it reported the bone baked; now it is left as it is and named (alone: refused). In NLA
    tweak mode on a strip that repeats its action, a scene frame past the first repeat has no
    single action time (the keys landed past the strip and it grew): refused, saying why."""
    import bpy

    from modal_harness import OperatorStandIn

    Q = core["quat"]
    driven, keyed = rig.pose.bones["forearm.L"], rig.pose.bones["upper_arm.L"]
    for pb in (driven, keyed):
        configure(pb.jointlimit, "SWING_TWIST")
        pb.rotation_mode = "QUATERNION"
    for frame, angle in ((1, 0.0), (10, 170.0)):
        _key_rotation(keyed, Q.from_axis_angle([1, 0, 0], math.radians(angle)), frame)
    for i in range(4):
        fc = driven.driver_add("rotation_quaternion", i)
        fc.driver.expression = "cos(frame / 4)" if i == 0 else ("sin(frame / 4)" if i == 1 else "0")
    select_only(rig, {"forearm.L", "upper_arm.L"}, active="forearm.L")
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_bake, frame_start=1, frame_end=10, all_bones=False)
    assert op.execute(bpy.context) == {"FINISHED"}
    assert any(kind == {"WARNING"} and "Left forearm.L as they are: a driver sets" in text
               for kind, text in op.reports), op.reports
    assert _keyed_frames(rig, 'pose.bones["forearm.L"]') == set()
    assert _keyed_frames(rig, 'pose.bones["upper_arm.L"]') == set(range(1, 11))
    select_only(rig, {"forearm.L"}, active="forearm.L")
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_bake, frame_start=1, frame_end=10, all_bones=False)
    assert op.execute(bpy.context) == {"CANCELLED"} and "a driver sets" in op.reports[-1][1]
    data = rig.animation_data
    strip = data.nla_tracks.new().strips.new("Keys", 1, data.action)
    data.action = None
    strip.repeat = 2.0
    data.use_tweak_mode = True
    assert data.use_tweak_mode and data.action is not None
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_bake, frame_start=1, frame_end=20, all_bones=False)
    assert op.execute(bpy.context) == {"CANCELLED"}
    assert "repeats its action (Repeat 2)" in op.reports[-1][1], op.reports


def test_limits_on_bones_a_rig_constraint_turns_are_said_to_be_rig_mechanism(rig):
    """A bone a Copy Rotation constraint turns (Rigify's tail controls) counts as rig mechanism:
    a preset set on it says so (Clamp Playback clamps it, All Limited Bones leaves it), and
    Apply or Bake with All Limited Bones and only such bones say why instead of 'No limited
    bones'; selected, it is clamped."""
    import bpy

    from modal_harness import OperatorStandIn

    pb = rig.pose.bones["forearm.L"]
    con = pb.constraints.new("COPY_ROTATION")
    con.target, con.subtarget, con.mix_mode, con.target_space, con.owner_space = \
        rig, "upper_arm.L", "BEFORE", "LOCAL", "LOCAL"
    select_only(rig, {"forearm.L"}, active="forearm.L")
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_preset_apply, preset="JOINT:ELBOW")
    assert op.execute(bpy.context) == {"FINISHED"}
    assert any(kind == {"WARNING"} and "forearm.L count as rig mechanism" in text for kind, text in op.reports)
    pb.rotation_mode = "XYZ"
    pb.rotation_euler = (0.0, 0.0, 2.5)
    for kind in ("apply", "bake"):
        op = OperatorStandIn(getattr(bpy.types, f"POSE_OT_jointlimit_{kind}"), all_bones=True)
        assert op.execute(bpy.context) == {"CANCELLED"}
        assert "count as rig mechanism" in op.reports[-1][1] and "forearm.L" in op.reports[-1][1], op.reports
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_apply, all_bones=False)
    assert op.execute(bpy.context) == {"FINISHED"}
    assert tuple(pb.rotation_euler) != (0.0, 0.0, 2.5)
