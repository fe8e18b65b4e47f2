"""Viewport overlay data and joint presets in Blender (issue 10)."""

import importlib
import json
import math
import pathlib

import numpy as np
import pytest

from jointlimit_addon.presets_data import JOINTS  # keys only; the tests use the installed add-on
from modal_harness import OperatorStandIn
from rigs import make_armature, select_only, symmetric_arms

pytestmark = [pytest.mark.blender]


@pytest.fixture
def rig(scene):
    return symmetric_arms()


@pytest.fixture
def mods(addon):
    names = ("overlay", "presets", "presets_data", "bone_limits", "settings_io", "core.quat")
    return {n.split(".")[-1]: importlib.import_module(f"{addon.__name__}.{n}") for n in names}


def world_tail(obj, name):
    return np.array(obj.matrix_world @ obj.pose.bones[name].tail)


def set_quat(pb, q):
    pb.rotation_mode = "QUATERNION"
    pb.rotation_quaternion = q


def configure_rect(settings, twist=True):
    settings.enabled, settings.kind, settings.shape = True, "SWING_TWIST", "RECT"
    settings.swing_x_min, settings.swing_x_max = math.radians(-30), math.radians(100)
    settings.swing_z_min, settings.swing_z_max = math.radians(-40), math.radians(20)
    settings.use_twist_limit = twist
    settings.twist_min, settings.twist_max = math.radians(-20), math.radians(40)


# --- overlay ----------------------------------------------------------------------------------


def test_no_draw_handler_in_background(mods):
    import bpy

    assert bpy.app.background
    assert mods["overlay"]._state["handle"] is None


def test_joint_matrix_matches_blender(rig, mods):
    import bpy

    rig.location, rig.rotation_euler, rig.scale = (0.3, -0.5, 0.2), (0.2, -0.4, 1.1), (1.5, 1.5, 1.5)
    Q = mods["quat"]
    for i, name in enumerate(("spine", "upper_arm.L", "forearm.L")):
        set_quat(rig.pose.bones[name], Q.random_unit(1, 10 + i)[0])
    bpy.context.view_layer.update()
    for name in ("spine", "upper_arm.L", "forearm.L"):
        pb = rig.pose.bones[name]
        local = np.eye(4)
        local[:3, :3] = Q.to_matrix(np.array(pb.rotation_quaternion))
        joint = mods["overlay"].joint_matrix(rig, pb)
        assert np.allclose(joint @ local, np.array(rig.matrix_world @ pb.matrix), atol=1e-5), name


def test_draw_data_follows_the_pose(rig, mods):
    import bpy

    ov, Q = mods["overlay"], mods["quat"]
    settings = bpy.context.scene.jointlimit
    settings.overlay_size, settings.overlay_cone, settings.overlay_twist = 1.0, True, True
    pb = rig.pose.bones["forearm.L"]
    set_quat(rig.pose.bones["upper_arm.L"], Q.from_axis_angle([0, 0, 1], 0.5))
    configure_rect(pb.jointlimit)
    set_quat(pb, Q.from_axis_angle([1, 0, 0], math.radians(60)))
    bpy.context.view_layer.update()
    data = ov.bone_draw_data(rig, pb, settings)
    assert data["inside"] and data["color"] == ov.COLOR_INSIDE
    head = np.array(rig.matrix_world @ pb.head)
    assert np.allclose(data["head"], head, atol=1e-6)
    # with Size 1 the swing point is the bone's tail, and the outline is on the sphere through it
    assert np.allclose(data["swing_point"], world_tail(rig, "forearm.L"), atol=1e-5)
    radius = np.linalg.norm(data["outline"] - head, axis=-1)
    assert np.allclose(radius, pb.bone.length, atol=1e-6) and data["closed"]
    assert data["cone"].shape == ((len(data["outline"]) - 1) * 3, 3)
    assert data["twist_arc"] is not None and data["twist_marker"].shape == (2, 3)
    # the twist tick lies on the twist arc when the twist is inside its range
    tick = data["twist_marker"][1]
    assert np.min(np.linalg.norm(data["twist_arc"] - tick, axis=-1)) < 0.05 * pb.bone.length
    # outside: red, and twice the size doubles the sphere
    set_quat(pb, Q.from_axis_angle([1, 0, 0], math.radians(150)))
    settings.overlay_size, settings.overlay_cone, settings.overlay_twist = 2.0, False, False
    bpy.context.view_layer.update()
    data = ov.bone_draw_data(rig, pb, settings)
    assert not data["inside"] and data["color"] == ov.COLOR_OUTSIDE
    assert data["cone"] is None and data["twist_arc"] is None
    assert np.allclose(np.linalg.norm(data["outline"] - head, axis=-1), 2 * pb.bone.length, atol=1e-6)


@pytest.mark.parametrize("kind", ["HINGE", "EULER", "EULER_MULTI", "QUAT_SWING"])
def test_draw_data_for_every_kind(rig, mods, kind):
    import bpy

    pb = rig.pose.bones["upper_arm.L"]
    configure_rect(pb.jointlimit)
    pb.jointlimit.kind = kind
    data = mods["overlay"].bone_draw_data(rig, pb, bpy.context.scene.jointlimit)
    assert data is not None and data["closed"] == (kind != "HINGE")
    assert np.all(np.isfinite(data["outline"])) and len(data["outline"]) >= 16


@pytest.mark.parametrize("kind", ["SWING_TWIST", "HINGE", "EULER"])
def test_a_bone_clamped_by_apply_is_drawn_inside(rig, mods, kind):
    """A pose Apply clamped onto the edge of the limit is drawn inside, as the panel says it (the
    overlay tested the float32 values Blender stored without its tolerance: red for a third to
    two thirds of clamped poses)."""
    import bpy

    pb = rig.pose.bones["upper_arm.L"]
    configure_rect(pb.jointlimit)
    pb.jointlimit.kind = kind
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    outside = 0
    for q in mods["quat"].random_unit(80, 8):
        set_quat(pb, q)
        assert bpy.ops.pose.jointlimit_apply() == {"FINISHED"}
        limit = mods["bone_limits"].bone_limit(pb)
        outside += not limit.contains(mods["bone_limits"].read_rotation(pb))
        assert mods["overlay"].bone_draw_data(rig, pb, bpy.context.scene.jointlimit)["inside"]
    assert outside or kind == "HINGE"     # (poses that read a hair outside in float32 were among them)


def test_invalid_settings_draw_nothing_and_the_cache_follows_edits(rig, mods):
    import bpy

    pb = rig.pose.bones["upper_arm.L"]
    configure_rect(pb.jointlimit)
    settings = bpy.context.scene.jointlimit
    first = mods["overlay"].bone_draw_data(rig, pb, settings)["outline"]
    pb.jointlimit.swing_x_max = math.radians(150)
    second = mods["overlay"].bone_draw_data(rig, pb, settings)["outline"]
    assert not np.allclose(first, second)
    pb.jointlimit.swing_x_min = math.radians(160)  # min above max
    assert mods["overlay"].bone_draw_data(rig, pb, settings) is None



def test_one_limit_per_distinct_settings_shared_by_panel_overlay_and_handlers(rig, mods):
    """A smooth shape takes milliseconds to build: the panel (redrawn constantly), the overlay
    and the live-limit handlers read one cached limit per distinct settings; edits rebuild it."""
    bone_limits = mods["bone_limits"]
    left, right = rig.pose.bones["upper_arm.L"], rig.pose.bones["upper_arm.R"]
    for pb in (left, right):
        configure_rect(pb.jointlimit)
        pb.jointlimit.shape = "SUPERELLIPSE"
    limit, error = bone_limits.cached_limit(left.jointlimit)
    assert error is None and limit.shape == "SUPERELLIPSE"
    assert bone_limits.cached_limit(left.jointlimit)[0] is limit
    assert bone_limits.cached_limit(right.jointlimit)[0] is limit   # equal settings
    assert mods["overlay"].limit_geometry(rig, left)[0] is limit
    left.jointlimit.exponent = (3.0, 5.0)
    rebuilt = bone_limits.cached_limit(left.jointlimit)[0]
    assert rebuilt is not limit and rebuilt.exponent == (3.0, 5.0)
    left.jointlimit.swing_x_min = math.radians(170)  # min above max
    assert bone_limits.cached_limit(left.jointlimit)[0] is None
    assert "must be below" in bone_limits.settings_error(left.jointlimit)
    bone_limits.clear_cache()
    assert bone_limits.cached_limit(right.jointlimit)[0] is not limit

def test_overlay_bones_selected_or_all(rig, mods):
    import bpy

    settings = bpy.context.scene.jointlimit
    for name in ("upper_arm.L", "forearm.L", "upper_arm.R"):
        configure_rect(rig.pose.bones[name].jointlimit)
    select_only(rig, {"upper_arm.L", "spine"}, active="upper_arm.L")
    settings.show_overlay = False
    assert mods["overlay"].overlay_bones(bpy.context) == []
    settings.show_overlay = True
    settings.overlay_bones = "SELECTED"
    assert [pb.name for _, pb in mods["overlay"].overlay_bones(bpy.context)] == ["upper_arm.L"]
    settings.overlay_bones = "ALL"
    names = sorted(pb.name for _, pb in mods["overlay"].overlay_bones(bpy.context))
    assert names == ["forearm.L", "upper_arm.L", "upper_arm.R"]


# --- presets ----------------------------------------------------------------------------------


def deg(settings, field):
    return (round(math.degrees(getattr(settings, f"{field}_min")), 4), round(math.degrees(getattr(settings, f"{field}_max")), 4))


def test_side_detection(mods):
    right = mods["presets"].is_right_side
    for name in ("upper_arm.R", "hand_R", "Right_Hand", "thigh.r", "finger.R.001", "R_foot", "ArmRight"):
        assert right(name), name
    for name in ("upper_arm.L", "hand_L", "Left_Hand", "spine", "root", "forearm", "rear_leg.L"):
        assert not right(name), name


def test_a_joint_preset_on_one_bone_says_one_bone(rig, mods, capfd):
    """The report counts bones in the number they take: "Set 1 bone", "Set 2 bones"."""
    import bpy

    for names, said in (({"upper_arm.L"}, "Set 1 bone from"), ({"upper_arm.L", "upper_arm.R"}, "Set 2 bones from")):
        select_only(rig, names, active="upper_arm.L")
        capfd.readouterr()
        assert bpy.ops.pose.jointlimit_preset_apply(preset="JOINT:SHOULDER", fit_rig=False) == {"FINISHED"}
        assert said in capfd.readouterr().out
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")     # a chain preset on one bone too
    assert bpy.ops.pose.jointlimit_preset_apply(preset="CHAIN:ARM", fit_rig=False) == {"FINISHED"}
    assert "Set 1 bone from 'Arm" in capfd.readouterr().out


def test_the_rest_pose_warning_counts_one_more_bone_as_one(rig, mods):
    """Two bones whose limits leave out the rest pose: '(1 more bone like this)'."""
    import bpy
    from modal_harness import OperatorStandIn

    for name in ("forearm.L", "forearm.R"):
        s = rig.pose.bones[name].jointlimit
        s.enabled, s.kind, s.hinge_min, s.hinge_max = True, "HINGE", math.radians(20), math.radians(120)
    select_only(rig, {"forearm.L", "forearm.R"}, active="forearm.L")
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_copy)
    assert op.execute(bpy.context) == {"FINISHED"}
    select_only(rig, {"forearm.L", "forearm.R", "upper_arm.L"}, active="forearm.L")
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_copy)
    assert op.execute(bpy.context) == {"FINISHED"}
    assert any(text.endswith("(1 more bone like this)") for _, text in op.reports), op.reports


def test_a_polygon_outline_too_short_gives_one_message(rig, mods):
    """One vertex, or two joined by a straight edge: the same message, naming the shape."""
    s = rig.pose.bones["upper_arm.L"].jointlimit
    s.enabled, s.kind, s.shape = True, "SWING_TWIST", "POLYGON"
    s.outline.clear()
    for z in (0.3, -0.3):
        p = s.outline.add()
        p.swing_z = z
        assert mods["bone_limits"].settings_error(s) == \
            "Polygon: the outline needs at least three vertices (or two joined by an arc)"


def test_sides_of_prefixed_and_tricky_names(mods):
    """Mixamo's namespace prefix and a name holding "right" elsewhere: the side is where the name
    differs from its mirror's."""
    presets = mods["presets"]
    assert presets.flip_name("mixamorig:RightArm") == "mixamorig:LeftArm"
    assert presets.is_right_side("mixamorig:RightArm") and not presets.is_right_side("mixamorig:LeftArm")
    assert presets.is_right_side("Bright.R") and not presets.is_right_side("Bright.L")
    assert not presets.is_right_side("mixamorig:Spine") and presets.flip_name("mixamorig:Spine") == "mixamorig:Spine"


def test_mirror_with_both_sides_selected_copies_from_the_active_side(rig, mods):
    """Limits set up on the right arm, both arms selected, the right one active: Mirror writes the
    left one from it (it overwrote the right one with the left's defaults before, reporting 2);
    the side with a limit wins over the active bone without one."""
    import bpy

    right = rig.pose.bones["upper_arm.R"].jointlimit
    configure_rect(right)
    right.swing_x_min, right.swing_x_max = math.radians(-20), math.radians(60)
    select_only(rig, {"upper_arm.L", "upper_arm.R"}, active="upper_arm.R")
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_mirror)
    assert op.execute(bpy.context) == {"FINISHED"}
    assert right.enabled and deg(right, "swing_x") == (-20, 60)
    left = rig.pose.bones["upper_arm.L"].jointlimit
    assert left.enabled and deg(left, "swing_x") == (-20, 60), op.reports
    assert ("Mirrored 1 joint limit" in op.reports[0][1])
    # the active bone of another pair: each pair copies from its side with a limit, never onto it
    right.enabled = False
    left.swing_x_max = math.radians(70)
    for name in ("forearm.L", "forearm.R"):
        configure_rect(rig.pose.bones[name].jointlimit)
    select_only(rig, {"upper_arm.L", "upper_arm.R", "forearm.L", "forearm.R"}, active="forearm.R")
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_mirror)
    assert op.execute(bpy.context) == {"FINISHED"}
    assert left.enabled and deg(left, "swing_x") == (-20, 70) and right.enabled and deg(right, "swing_x") == (-20, 70)
    # the active bone without a limit, its partner with one: copied onto the active bone (the
    # active one was copied before, switching the partner's limit off and resetting it)
    right.enabled = False
    select_only(rig, {"upper_arm.L", "upper_arm.R"}, active="upper_arm.R")
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_mirror)
    assert op.execute(bpy.context) == {"FINISHED"}
    assert left.enabled and deg(left, "swing_x") == (-20, 70) and right.enabled and deg(right, "swing_x") == (-20, 70)


def test_mirror_warns_where_the_rest_frames_are_not_mirror_images(rig, mods):
    """A symmetric rig mirrors without a warning; after forearm.R's roll is turned 30°, the same
    Mirror warns naming it (the mirrored limit bent it differently in the world, silently)."""
    import bpy

    left = rig.pose.bones["forearm.L"].jointlimit
    configure_rect(left)
    select_only(rig, {"forearm.L"}, active="forearm.L")
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_mirror)
    assert op.execute(bpy.context) == {"FINISHED"}
    assert not [text for kind, text in op.reports if kind == {"WARNING"}]
    bpy.ops.object.mode_set(mode="EDIT")
    rig.data.edit_bones["forearm.R"].roll += math.radians(30)
    bpy.ops.object.mode_set(mode="POSE")
    select_only(rig, {"forearm.L"}, active="forearm.L")
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_mirror)
    assert op.execute(bpy.context) == {"FINISHED"}
    warnings = [text for kind, text in op.reports if kind == {"WARNING"}]
    assert len(warnings) == 1 and "forearm.R" in warnings[0] and "up to 30°" in warnings[0], op.reports


def test_a_preset_saved_from_a_right_side_bone_gives_it_back_its_own_limit(rig, mods):
    """Saved from upper_arm.R, applied to upper_arm.R: the same limit (it came back mirrored a
    second time before); applied to upper_arm.L: the mirror image. A Hinge bone whose unused
    Swing X range is inverted (left from another kind) saves: only the fields its kind uses."""
    import bpy

    right = rig.pose.bones["upper_arm.R"].jointlimit
    configure_rect(right)
    right.swing_z_min, right.swing_z_max = math.radians(-20), math.radians(60)
    right.use_twist_limit, right.twist_min, right.twist_max = True, math.radians(-10), math.radians(30)
    select_only(rig, {"upper_arm.R"}, active="upper_arm.R")
    assert bpy.ops.pose.jointlimit_preset_save(name="Right Arm") == {"FINISHED"}
    right.swing_z_min, right.swing_z_max = math.radians(-5), math.radians(5)
    assert bpy.ops.pose.jointlimit_preset_apply(preset="USER:Right Arm") == {"FINISHED"}
    assert deg(right, "swing_z") == (-20, 60) and deg(right, "twist") == (-10, 30)
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    assert bpy.ops.pose.jointlimit_preset_apply(preset="USER:Right Arm") == {"FINISHED"}
    left = rig.pose.bones["upper_arm.L"].jointlimit
    assert deg(left, "swing_z") == (-60, 20) and deg(left, "twist") == (-30, 10)
    hinge = rig.pose.bones["forearm.L"].jointlimit
    hinge.enabled, hinge.kind = True, "HINGE"
    hinge.hinge_min, hinge.hinge_max = 0.0, math.radians(140)
    hinge.swing_x_min, hinge.swing_x_max = math.radians(10), math.radians(-50)
    select_only(rig, {"forearm.L"}, active="forearm.L")
    assert bpy.ops.pose.jointlimit_preset_save(name="Elbow") == {"FINISHED"}
    assert set(mods["presets"].load_user_preset("Elbow")) == {"kind", "hinge_axis", "hinge"}


def test_joint_preset_on_both_sides(rig, mods):
    import bpy

    select_only(rig, {"upper_arm.L", "upper_arm.R"}, active="upper_arm.L")
    assert bpy.ops.pose.jointlimit_preset_apply(preset="JOINT:SHOULDER", fit_rig=False) == {"FINISHED"}
    table = mods["presets_data"].JOINTS["SHOULDER"]
    left, right = rig.pose.bones["upper_arm.L"].jointlimit, rig.pose.bones["upper_arm.R"].jointlimit
    assert left.enabled and left.kind == "SWING_TWIST" and left.shape == table["shape"]
    assert deg(left, "swing_x") == table["swing_x"] and deg(left, "swing_z") == table["swing_z"]
    assert deg(left, "twist") == table["twist"] and left.use_twist_limit
    lo, hi = table["swing_z"]
    assert deg(right, "swing_x") == table["swing_x"] and deg(right, "swing_z") == (-hi, -lo)
    # the right side equals what the Mirror operator makes of the left side
    mirrored = rig.pose.bones["forearm.R"].jointlimit
    mods["settings_io"].mirror_settings(left, mirrored)
    for field in mods["settings_io"].SCALAR_FIELDS:
        a, b = getattr(right, field), getattr(mirrored, field)
        if isinstance(a, float):
            assert a == pytest.approx(b, abs=1e-6), field
        elif not isinstance(a, str) and hasattr(a, "__len__"):
            assert tuple(a) == pytest.approx(tuple(b), abs=1e-6), field
        else:
            assert a == b, field


@pytest.mark.parametrize("key", sorted(JOINTS))
def test_every_builtin_preset_is_a_valid_limit_on_both_sides(rig, mods, key):
    import bpy

    select_only(rig, {"forearm.L", "forearm.R"}, active="forearm.L")
    assert bpy.ops.pose.jointlimit_preset_apply(preset=f"JOINT:{key}") == {"FINISHED"}
    for name in ("forearm.L", "forearm.R"):
        settings = rig.pose.bones[name].jointlimit
        assert settings.enabled and mods["bone_limits"].settings_error(settings) is None, (key, name)


def test_flip_flexion_negates_x(rig, mods):
    import bpy

    select_only(rig, {"forearm.L"}, active="forearm.L")
    bpy.ops.pose.jointlimit_preset_apply(preset="JOINT:ELBOW", flip_x=True, fit_rig=False)
    s = rig.pose.bones["forearm.L"].jointlimit
    assert s.kind == "HINGE" and deg(s, "hinge") == (-145, 0)


def test_arm_chain_preset_sets_both_arms(rig, mods):
    import bpy

    select_only(rig, {"upper_arm.L", "forearm.L", "upper_arm.R", "forearm.R"}, active="upper_arm.L")
    assert bpy.ops.pose.jointlimit_preset_apply(preset="CHAIN:ARM", fit_rig=False) == {"FINISHED"}
    bones = rig.pose.bones
    for side in "LR":
        assert bones[f"upper_arm.{side}"].jointlimit.kind == "SWING_TWIST"
        fore = bones[f"forearm.{side}"].jointlimit
        assert fore.kind == "HINGE" and deg(fore, "hinge") == (0, 145)
    assert deg(bones["upper_arm.R"].jointlimit, "swing_z") == (-170, 30)
    assert not bones["spine"].jointlimit.enabled


def test_chain_preset_refuses_branches_and_long_chains(rig, mods):
    import bpy

    select_only(rig, {"spine", "upper_arm.L", "upper_arm.R"}, active="spine")
    with pytest.raises(RuntimeError, match="several selected children"):
        bpy.ops.pose.jointlimit_preset_apply(preset="CHAIN:ARM")
    with pytest.raises(RuntimeError, match="Unknown preset"):
        bpy.ops.pose.jointlimit_preset_apply(preset="NOPE")


def test_chain_preset_refuses_long_chains(scene, mods):
    import bpy

    chain = make_armature([(f"b{i}", (0, 0, i), (0, 0, i + 1), f"b{i - 1}" if i else None, 0.0) for i in range(5)], "Long")
    select_only(chain, {f"b{i}" for i in range(5)}, active="b0")
    with pytest.raises(RuntimeError, match="has 5 bones"):
        bpy.ops.pose.jointlimit_preset_apply(preset="CHAIN:FINGER")
    assert not chain.pose.bones["b0"].jointlimit.enabled  # nothing half-applied


def test_a_full_length_chain_whose_names_say_other_joints_is_refused(scene, mods):
    """As many bones as the preset's joints, but a name saying another joint (the collarbone
    selected with the upper arm and forearm, the neck and head with two spine bones): refused, not
    shifted (the upper arm got the elbow's hinge, the neck a spine segment's limit); unnamed bones
    and names at their own joints still take the preset in order."""
    import bpy

    def chain(names):
        obj = make_armature([(n, (0, 0, i), (0, 0, i + 1), names[i - 1] if i else None, 0.0)
                             for i, n in enumerate(names)], "Chain")
        select_only(obj, set(names), active=names[0])
        return obj

    for names, preset in ((["shoulder.L", "upper_arm.L", "forearm.L"], "CHAIN:ARM"),
                          (["spine.002", "spine.003", "neck", "head"], "CHAIN:SPINE")):
        obj = chain(names)
        with pytest.raises(RuntimeError, match="does not match"):
            bpy.ops.pose.jointlimit_preset_apply(preset=preset)
        assert not any(pb.jointlimit.enabled for pb in obj.pose.bones)
        bpy.ops.object.mode_set(mode="OBJECT")
        bpy.data.objects.remove(obj)
    for names, preset in ((["upper_arm.L", "forearm.L", "hand.L"], "CHAIN:ARM"), (["a.L", "b.L", "c.L"], "CHAIN:ARM"),
                          (["spine", "spine.001", "chest", "neck"], "CHAIN:SPINE"),
                          (["spine.001", "spine.002", "spine.003", "spine.004"], "CHAIN:SPINE"),  # the meta-rig's neck
                          ([f"mixamorig:LeftHandIndex{i}" for i in (1, 2, 3)], "CHAIN:FINGER"),
                          (["c_arm_fk.l", "c_forearm_fk.l", "c_hand_fk.l"], "CHAIN:ARM")):
        obj = chain(names)
        assert bpy.ops.pose.jointlimit_preset_apply(preset=preset) == {"FINISHED"}
        assert all(pb.jointlimit.enabled for pb in obj.pose.bones)
        bpy.ops.object.mode_set(mode="OBJECT")
        bpy.data.objects.remove(obj)


@pytest.mark.parametrize("fit_rig", [True, False])
def test_a_right_side_bone_without_a_side_in_its_name_gets_the_right_sides_limit(rig, mods, fit_rig):
    """A bone named without a side (MMD's 右腕) that sits on the character's right gets the
    right side's limit, as ``upper_arm.R`` does (it got the left side's: the arm could not be
    raised sideways)."""
    import bpy

    pb = rig.pose.bones["upper_arm.R"]
    select_only(rig, {"upper_arm.R"}, active="upper_arm.R")
    assert bpy.ops.pose.jointlimit_preset_apply(preset="JOINT:SHOULDER", fit_rig=fit_rig) == {"FINISHED"}
    named = mods["bone_limits"].build_limit(pb.jointlimit)
    pb.jointlimit.enabled = False
    pb.name = "右腕"
    assert not mods["presets"].is_right_side(pb.name) and mods["presets"].bone_on_right(pb)
    select_only(rig, {"右腕"}, active="右腕")
    assert bpy.ops.pose.jointlimit_preset_apply(preset="JOINT:SHOULDER", fit_rig=fit_rig) == {"FINISHED"}
    q = mods["quat"].random_unit(400, 3)
    np.testing.assert_array_equal(mods["bone_limits"].build_limit(pb.jointlimit).contains(q), named.contains(q))
    assert not mods["presets"].bone_on_right(rig.pose.bones["spine"])     # on the midplane
    bpy.ops.object.mode_set(mode="EDIT")    # the rig's bones off its origin (a location applied)
    ends = {eb.name: (eb.head.copy(), eb.tail.copy()) for eb in rig.data.edit_bones}
    for eb in rig.data.edit_bones:      # (absolute: a connected child's head moves its parent's tail)
        eb.head, eb.tail = (v - type(v)((2.0, 0.0, 0.0)) for v in ends[eb.name])
    bpy.ops.object.mode_set(mode="POSE")
    assert mods["presets"].bone_on_right(rig.pose.bones["右腕"])
    assert not any(mods["presets"].bone_on_right(rig.pose.bones[n]) for n in ("spine", "upper_arm.L"))


def test_presets_copy_and_mirror_leave_rig_mechanism_bones_alone(scene, mods):
    """Bones named as Rigify's mechanism (MCH-, ORG-, DEF-), selected where their collections were
    made visible, get no limit from a preset, Copy or Mirror, and the report names them (they got
    limits that playback clamped and Bake, Apply and the All Bones operations then skipped)."""
    import bpy
    from modal_harness import OperatorStandIn

    obj = make_armature([("upper_arm.L", (0.2, 0, 1.5), (0.5, 0, 1.5), None, 0.0),
                         ("ORG-upper_arm.L", (0.2, 0, 1.5), (0.5, 0, 1.5), None, 0.0),
                         ("upper_arm.R", (-0.2, 0, 1.5), (-0.5, 0, 1.5), None, 0.0),
                         ("ORG-upper_arm.R", (-0.2, 0, 1.5), (-0.5, 0, 1.5), None, 0.0)], "Mech")
    select_only(obj, {"upper_arm.L", "ORG-upper_arm.L"}, active="upper_arm.L")
    for op, props in ((bpy.types.POSE_OT_jointlimit_preset_apply, {"preset": "JOINT:SHOULDER"}),
                      (bpy.types.POSE_OT_jointlimit_copy, {}), (bpy.types.POSE_OT_jointlimit_mirror, {})):
        run = OperatorStandIn(op, **props)
        result = run.execute(bpy.context)
        assert any("skipped 1 rig mechanism bone: ORG-upper_arm.L" in text for _, text in run.reports), run.reports
        assert not obj.pose.bones["ORG-upper_arm.L"].jointlimit.enabled, op
        assert result == ({"CANCELLED"} if op is bpy.types.POSE_OT_jointlimit_copy else {"FINISHED"})
    assert obj.pose.bones["upper_arm.R"].jointlimit.enabled and not obj.pose.bones["ORG-upper_arm.R"].jointlimit.enabled
    con = obj.pose.bones["ORG-upper_arm.L"].constraints.new("LIMIT_ROTATION")   # From Constraints on the selection
    con.owner_space, con.use_limit_x, con.max_x = "LOCAL", True, math.radians(90)
    select_only(obj, {"ORG-upper_arm.L"}, active="ORG-upper_arm.L")
    run = OperatorStandIn(bpy.types.POSE_OT_jointlimit_from_constraints, source="LIMIT_ROTATION", old_constraints="MUTE")
    assert run.execute(bpy.context) == {"CANCELLED"}
    assert con.enabled and not obj.pose.bones["ORG-upper_arm.L"].jointlimit.enabled
    assert any("skipped 1 rig mechanism bone: ORG-upper_arm.L" in text for _, text in run.reports), run.reports


def test_user_preset_round_trip(rig, mods):
    import bpy

    src = rig.pose.bones["upper_arm.L"].jointlimit
    src.enabled, src.kind, src.shape = True, "SWING_TWIST", "POLYGON"
    for z, x, bulge in ((-30, -20, 0.0), (40, -10, 0.3), (10, 60, 0.0)):
        p = src.outline.add()
        p.swing_z, p.swing_x, p.bulge = math.radians(z), math.radians(x), bulge
    src.use_twist_limit, src.twist_min, src.twist_max = True, math.radians(-15), math.radians(25)
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    name = "肩 My Arm (1)"  # any script's letters are fine
    assert bpy.ops.pose.jointlimit_preset_save(name=name) == {"FINISHED"}
    assert name in mods["presets"].user_preset_names()
    path = pathlib.Path(bpy.utils.extension_path_user(mods["presets"].ADDON_PACKAGE, path="presets")) / f"{name}.json"
    data = json.loads(path.read_text())
    assert data["format"] == "jointlimit-preset" and data["joint"]["shape"] == "POLYGON"
    assert data["joint"]["outline"][1] == [40.0, -10.0, 0.3] and data["joint"]["twist"] == [-15.0, 25.0]   # (no float32 noise)
    select_only(rig, {"forearm.L", "forearm.R"}, active="forearm.L")
    assert bpy.ops.pose.jointlimit_preset_apply(preset=f"USER:{name}") == {"FINISHED"}
    left, right = rig.pose.bones["forearm.L"].jointlimit, rig.pose.bones["forearm.R"].jointlimit
    assert left.shape == "POLYGON" and len(left.outline) == 3
    assert math.degrees(left.outline[1].swing_z) == pytest.approx(40, abs=1e-4)
    assert left.outline[1].bulge == pytest.approx(0.3)
    assert math.degrees(right.outline[1].swing_z) == pytest.approx(-40, abs=1e-4)
    assert right.outline[1].bulge == pytest.approx(-0.3)
    assert deg(right, "twist") == (-25, 15)


@pytest.mark.parametrize("name,message", [("", "empty"), ("   ", "empty"), ("../evil", "Invalid preset name"),
                                          (".hidden", "Invalid preset name"), ("x" * 65, "longer than")])
def test_save_refuses_bad_names(rig, mods, name, message):
    import bpy

    configure_rect(rig.pose.bones["upper_arm.L"].jointlimit)
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    with pytest.raises(RuntimeError, match=message):
        bpy.ops.pose.jointlimit_preset_save(name=name)


def test_save_refuses_invalid_settings(rig, mods):
    import bpy

    s = rig.pose.bones["upper_arm.L"].jointlimit
    configure_rect(s)
    s.swing_x_min = math.radians(170)
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    with pytest.raises(RuntimeError, match="Bone 'upper_arm.L': Swing X"):   # the message every operator gives
        bpy.ops.pose.jointlimit_preset_save(name="Broken")


@pytest.mark.parametrize("text,message", [
    ("{ not json", "not valid JSON"),
    ('{"format": "jointlimit-preset", "joint": {"kind": "SWING_TWIST", "shape": "POLYGON", '
     '"outline": [[0, 0, 50], [10, 20, 0], [-10, 20, 0]]}}', "bulges within -10 and 10"),
    ('{"format": "jointlimit-preset", "joint": {"kind": "SWING_TWIST", "shape": "POLYGON", '
     '"outline": [[0, 400, 0], [10, 20, 0], [-10, 20, 0]]}}', "within -179 and 179"),
    ('{"format": "other"}', "not a JointLimit preset"),
    ('{"format": "jointlimit-preset", "joint": {"kind": "HINGE", "hinge": [10, 5]}}', "min < max"),
    ('{"format": "jointlimit-preset", "joint": {"kind": "SWING_TWIST", "swingx": [1, 2]}}', "Unknown preset field"),
    ('{"format": "jointlimit-preset", "joint": {"kind": "WOBBLE"}}', "must be one of"),
])
def test_bad_user_presets_are_refused_clearly(rig, mods, text, message):
    import bpy

    folder = mods["presets"].user_dir(create=True)
    (folder / "Bad.json").write_text(text)
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    try:
        with pytest.raises(RuntimeError, match=message):
            bpy.ops.pose.jointlimit_preset_apply(preset="USER:Bad")
    finally:
        (folder / "Bad.json").unlink()
    assert not rig.pose.bones["upper_arm.L"].jointlimit.enabled


def test_menu_lists_builtin_and_user_presets(rig, mods):
    import bpy

    class Recorder:
        def __init__(self):
            self.items = []

        def operator(self, idname, text="", **kw):
            record = type("Props", (), {})()
            self.items.append((idname, text, record))
            return record

        def label(self, **kw):
            pass

        def separator(self):
            pass

    configure_rect(rig.pose.bones["upper_arm.L"].jointlimit)
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    bpy.ops.pose.jointlimit_preset_save(name="Menu Test")
    layout = Recorder()
    mods["presets"].draw_menu(layout)
    presets = [getattr(r, "preset", None) for _, _, r in layout.items]
    assert "JOINT:NECK" in presets and "CHAIN:ARM" in presets and "USER:Menu Test" in presets
    assert layout.items[-1][0] == "pose.jointlimit_preset_save"


def test_draw_callback_issues_batches(rig, mods, monkeypatch):
    """The draw callback with ``gpu`` stood in for (drawing is unavailable in background mode):
    a cone, the outline, the swing line and the twist arc per drawn bone."""
    import sys
    import types

    import bpy

    drawn, uniforms = [], {}

    class Shader:
        def uniform_float(self, name, value):
            uniforms[name] = value

    class Batch:
        def __init__(self, kind, pos):
            self.kind, self.pos = kind, pos

        def draw(self, shader):
            drawn.append((self.kind, len(self.pos), uniforms.get("color")))

    gpu = types.ModuleType("gpu")
    gpu.shader = types.SimpleNamespace(from_builtin=lambda name: Shader())
    gpu.state = types.SimpleNamespace(viewport_get=lambda: (0, 0, 800, 600), blend_set=lambda mode: None)
    batch = types.ModuleType("gpu_extras.batch")
    batch.batch_for_shader = lambda shader, kind, content: Batch(kind, content["pos"])
    monkeypatch.setitem(sys.modules, "gpu", gpu)
    monkeypatch.setitem(sys.modules, "gpu_extras.batch", batch)

    configure_rect(rig.pose.bones["upper_arm.L"].jointlimit)
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    settings = bpy.context.scene.jointlimit
    settings.show_overlay, settings.overlay_bones, settings.overlay_opacity = True, "SELECTED", 0.3
    settings.overlay_cone = settings.overlay_twist = True
    mods["overlay"]._draw()
    kinds = [d[0] for d in drawn]
    assert kinds == ["TRIS", "LINE_STRIP", "LINES", "LINE_STRIP", "LINES"]
    assert drawn[0][2] == pytest.approx((*mods["overlay"].COLOR_INSIDE, 0.3))
    drawn.clear()
    settings.show_overlay = False
    mods["overlay"]._draw()
    assert drawn == []
