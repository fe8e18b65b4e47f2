"""The Fit of smooth swing shapes in Blender and the rest-pose warnings (issue 17): the bone
setting, the panel, presets, copy/mirror, constraints, .blend and preset files."""

import importlib
import json
import math

import numpy as np
import pytest

from jointlimit_addon.presets_data import JOINTS  # keys only; the tests use the installed add-on
from modal_harness import OperatorStandIn
from rigs import select_only, symmetric_arms

pytestmark = [pytest.mark.blender]

IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])
SMOOTH = ("ELLIPSE", "OVAL", "SUPERELLIPSE")


@pytest.fixture
def rig(scene):
    return symmetric_arms()


@pytest.fixture
def mods(addon):
    names = ("bone_limits", "settings_io", "presets", "ui", "core.quat", "core.limits", "operators.preset_apply",
             "operators.copy", "operators.mirror", "rig_frame")
    return {n: importlib.import_module(f"{addon.__name__}.{n}") for n in names}


def shoulder(settings, shape="OVAL", fit="INSCRIBED"):
    """The issue's example: Swing X -60..170, Z -30..170."""
    settings.enabled, settings.kind, settings.shape, settings.fit = True, "SWING_TWIST", shape, fit
    settings.swing_x_min, settings.swing_x_max = math.radians(-60), math.radians(170)
    settings.swing_z_min, settings.swing_z_max = math.radians(-30), math.radians(170)
    settings.use_twist_limit = False


def rest_offset(mods, settings):
    Q = mods["core.quat"]
    limit = mods["bone_limits"].build_limit(settings)
    return Q.angle_between(limit.clamp(IDENTITY), IDENTITY)


def test_fit_setting_defaults_to_the_paper_and_builds_the_axes_region(rig, mods):
    settings = rig.pose.bones["upper_arm.L"].jointlimit
    assert settings.fit == "INSCRIBED"
    for shape in SMOOTH:
        shoulder(settings, shape, "INSCRIBED")
        inscribed = mods["bone_limits"].build_limit(settings)
        assert inscribed.fit == "INSCRIBED" and not inscribed.contains(IDENTITY)
        settings.fit = "AXES"
        axes = mods["bone_limits"].build_limit(settings)
        assert axes.fit == "AXES" and type(axes.region).__name__.endswith("AxesRegion")
        assert axes.contains(IDENTITY)
        up = mods["core.quat"].from_axis_angle(np.array([1.0, 0.0, 0.0]), settings.swing_x_max)  # float32 170°
        assert axes.contains(up) and not inscribed.contains(up)


def test_axes_fit_needs_ranges_around_zero_with_a_clear_message(rig, mods):
    settings = rig.pose.bones["upper_arm.L"].jointlimit
    shoulder(settings, "ELLIPSE", "AXES")
    settings.swing_x_min = math.radians(10)
    error = mods["bone_limits"].settings_error(settings)
    assert error and error.startswith("Swing X") and "Axes fit" in error
    settings.swing_x_min, settings.swing_z_max = math.radians(-10), math.radians(-5)
    assert mods["bone_limits"].settings_error(settings).startswith("Swing Z")
    settings.shape = "RECT"         # RECT ignores the fit
    assert mods["bone_limits"].settings_error(settings) is None


def test_fit_round_trips_through_blend(rig, tmp_path):
    import bpy

    shoulder(rig.pose.bones["upper_arm.L"].jointlimit, "SUPERELLIPSE", "AXES")
    path = tmp_path / "fit.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.open_mainfile(filepath=str(path))
    s2 = bpy.data.objects["Rig"].pose.bones["upper_arm.L"].jointlimit
    assert s2.fit == "AXES" and s2.shape == "SUPERELLIPSE"
    assert bpy.data.objects["Rig"].pose.bones["upper_arm.R"].jointlimit.fit == "INSCRIBED"


def _flip(q):
    return np.array([q[0], q[1], -q[2], -q[3]])


@pytest.mark.parametrize("shape", SMOOTH)
def test_mirror_swaps_the_quadrants(rig, mods, shape):
    """The mirrored bone's AXES region is the reflection: a mirrored rotation is clamped to the
    mirror of the left result, and the right side reaches its own (swapped) Z limits."""
    import bpy

    Q = mods["core.quat"]
    left, right = rig.pose.bones["upper_arm.L"], rig.pose.bones["upper_arm.R"]
    shoulder(left.jointlimit, shape, "AXES")
    left.jointlimit.swing_z_min = math.radians(-20)     # uneven on the mirrored axis
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    assert bpy.ops.pose.jointlimit_mirror() == {"FINISHED"}
    assert right.jointlimit.fit == "AXES"
    lim_l = mods["bone_limits"].build_limit(left.jointlimit)
    lim_r = mods["bone_limits"].build_limit(right.jointlimit)
    for q in Q.random_unit(40, 12):
        assert Q.angle_between(lim_r.clamp(_flip(q)), _flip(lim_l.clamp(q))) < 1e-6
    z = np.array([0.0, 0.0, 1.0])
    s = right.jointlimit
    assert math.degrees(s.swing_z_min) == pytest.approx(-170.0) and math.degrees(s.swing_z_max) == pytest.approx(20.0)
    for angle in (s.swing_z_min, s.swing_z_max):
        at = Q.from_axis_angle(z, angle)
        beyond = Q.from_axis_angle(z, angle + math.copysign(math.radians(5.0), angle))
        assert lim_r.contains(at) and Q.angle_between(lim_r.clamp(beyond), at) < 1e-7


def test_copy_copies_the_fit_and_warns_about_the_rest_pose(rig, mods):
    import bpy

    src = rig.pose.bones["upper_arm.L"]
    shoulder(src.jointlimit, "OVAL", "INSCRIBED")
    select_only(rig, {"upper_arm.L", "forearm.L"}, active="upper_arm.L")
    op = OperatorStandIn(mods["operators.copy"].POSE_OT_jointlimit_copy)
    assert op.execute(bpy.context) == {"FINISHED"}
    assert rig.pose.bones["forearm.L"].jointlimit.fit == "INSCRIBED"
    warnings = [m for kind, m in op.reports if kind == {"WARNING"}]
    expected = f"{math.degrees(rest_offset(mods, src.jointlimit)):.0f}°"
    assert len(warnings) == 1 and "forearm.L" in warnings[0] and expected in warnings[0]
    src.jointlimit.fit = "AXES"
    op = OperatorStandIn(mods["operators.copy"].POSE_OT_jointlimit_copy)
    assert op.execute(bpy.context) == {"FINISHED"}
    assert rig.pose.bones["forearm.L"].jointlimit.fit == "AXES"
    assert [m for kind, m in op.reports if kind == {"WARNING"}] == []


def test_rest_pose_warning_text_and_apply_still_works(rig, mods):
    import bpy

    pb = rig.pose.bones["upper_arm.L"]
    shoulder(pb.jointlimit, "OVAL", "INSCRIBED")
    offset = rest_offset(mods, pb.jointlimit)
    text = mods["bone_limits"].rest_pose_message(pb.jointlimit)
    assert text == f"The rest pose is outside this limit: it will be moved {math.degrees(offset):.0f}° by Apply"
    pb.jointlimit.fit = "AXES"
    assert mods["bone_limits"].rest_pose_message(pb.jointlimit) is None
    pb.jointlimit.fit = "INSCRIBED"
    # a hinge that starts past 0° moves the rest pose too
    hinge = rig.pose.bones["forearm.L"].jointlimit
    hinge.enabled, hinge.kind = True, "HINGE"
    hinge.hinge_min, hinge.hinge_max = math.radians(20), math.radians(120)
    assert "20°" in mods["bone_limits"].rest_pose_message(hinge)
    # Apply moves the rest pose by the announced angle
    pb.rotation_mode = "QUATERNION"
    pb.rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    assert bpy.ops.pose.jointlimit_apply() == {"FINISHED"}
    bpy.context.view_layer.update()
    moved = mods["core.quat"].angle_between(np.array(pb.rotation_quaternion), IDENTITY)
    assert moved == pytest.approx(offset, abs=1e-5)


class Recorder:
    """A layout stand-in that records what the panel draws (labels with their alert state)."""

    def __init__(self, log, alert=False):
        self.log, self.alert, self.active = log, alert, True

    def _child(self, *args, **kwargs):
        return Recorder(self.log, self.alert)

    row = column = box = _child

    def prop(self, data, name, **kwargs):
        self.log.append(("prop", name))

    def label(self, text="", icon="NONE", translate=True, **kwargs):
        self.log.append(("label", text, icon, self.alert, translate))

    def operator(self, *args, **kwargs):
        return type("Props", (), {})()

    def menu(self, *args, **kwargs):
        pass


def test_panel_has_a_fit_choice_and_shows_the_warning_in_red(rig, mods):
    pb = rig.pose.bones["upper_arm.L"]
    shoulder(pb.jointlimit, "ELLIPSE", "INSCRIBED")
    log = []
    mods["ui"].draw_settings(Recorder(log), pb)
    names = [e[1] for e in log if e[0] == "prop"]
    assert names.index("fit") == names.index("shape") + 1
    alerts = [e for e in log if e[0] == "label" and e[3]]
    assert len(alerts) == 1 and "rest pose" in alerts[0][1] and alerts[0][2] == "ERROR"
    pb.jointlimit.fit = "AXES"
    log.clear()
    mods["ui"].draw_settings(Recorder(log), pb)
    assert not [e for e in log if e[0] == "label" and e[3]]
    pb.jointlimit.shape = "RECT"
    log.clear()
    mods["ui"].draw_settings(Recorder(log), pb)
    assert "fit" not in [e[1] for e in log if e[0] == "prop"]



def test_panel_texts_with_numbers_are_formatted_from_translatable_templates(rig, mods):
    pb = rig.pose.bones["upper_arm.L"]
    s = pb.jointlimit
    s.enabled, s.kind, s.shape = True, "SWING_TWIST", "POLYGON"
    log = []
    mods["ui"].draw_outline(Recorder(log), s)
    mods["ui"].draw_readout(Recorder(log), pb)
    texts = {e[1]: e[4] for e in log if e[0] == "label"}
    outline = f"Outline ({len(s.outline)} vertices)"
    readout = next(t for t in texts if t.startswith("s +0.000   t +0.000   twist 0.0°"))
    # formatted from a translated template, shown as it is (Blender would look the formatted text up)
    assert texts[outline] is False and texts[readout] is False

@pytest.mark.parametrize("key", sorted(JOINTS))
def test_every_builtin_preset_holds_the_rest_pose_on_both_sides(rig, mods, key):
    import bpy

    select_only(rig, {"forearm.L", "forearm.R"}, active="forearm.L")
    op = OperatorStandIn(mods["operators.preset_apply"].POSE_OT_jointlimit_preset_apply,
                         preset=f"JOINT:{key}", mirror_right=True, flip_x=False, fit_rig=True, front="AUTO", up="AUTO")
    assert op.execute(bpy.context) == {"FINISHED"}
    assert [m for kind, m in op.reports if kind == {"WARNING"}] == []
    entry = JOINTS[key]
    for name in ("forearm.L", "forearm.R"):
        settings = rig.pose.bones[name].jointlimit
        assert settings.fit == entry.get("fit", "INSCRIBED") or entry["kind"] != "SWING_TWIST"
        limit = mods["bone_limits"].build_limit(settings)
        assert limit.contains(IDENTITY), (key, name)
        assert mods["bone_limits"].rest_pose_warning(settings) is None
        if entry.get("shape") in SMOOTH and entry["kind"] == "SWING_TWIST":
            lo_x, hi_x = entry["swing_x"]
            lo_z, hi_z = entry["swing_z"]
            if lo_x + hi_x or lo_z + hi_z:
                assert settings.fit == "AXES", key      # uneven ranges use the AXES fit


def test_preset_files_keep_the_fit_and_old_ones_mean_inscribed(rig, mods, tmp_path):
    presets = mods["presets"]
    settings = rig.pose.bones["upper_arm.L"].jointlimit
    shoulder(settings, "SUPERELLIPSE", "AXES")
    entry = presets.entry_from_settings(settings)
    assert entry["fit"] == "AXES"
    other = rig.pose.bones["forearm.L"].jointlimit
    presets.write_entry(other, json.loads(json.dumps(entry)))
    assert other.fit == "AXES"
    old = {k: v for k, v in entry.items() if k != "fit"}
    presets.write_entry(other, old)
    assert other.fit == "INSCRIBED"
    with pytest.raises(presets.PresetError, match="fit"):
        presets.validate_entry({**entry, "fit": "OUTER"})
    # mirroring an entry swaps the Z range, which is what the AXES quadrants follow
    assert presets.mirror_entry(entry)["swing_z"] == [-entry["swing_z"][1], -entry["swing_z"][0]]


def test_preset_apply_warns_when_a_user_preset_leaves_out_the_rest_pose(rig, mods, monkeypatch):
    import bpy

    presets = mods["presets"]
    settings = rig.pose.bones["upper_arm.L"].jointlimit
    shoulder(settings, "OVAL", "INSCRIBED")
    entry = presets.entry_from_settings(settings)
    monkeypatch.setattr(presets, "load_user_preset", lambda name: entry)
    select_only(rig, {"upper_arm.L", "upper_arm.R"}, active="upper_arm.L")
    op = OperatorStandIn(mods["operators.preset_apply"].POSE_OT_jointlimit_preset_apply,
                         preset="USER:old shoulder", mirror_right=True, flip_x=False, fit_rig=True, front="AUTO", up="AUTO")
    assert op.execute(bpy.context) == {"FINISHED"}
    warnings = [m for kind, m in op.reports if kind == {"WARNING"}]
    assert len(warnings) == 1 and "rest pose" in warnings[0] and "1 more" in warnings[0]


def test_to_and_from_constraints_keep_the_typed_ranges(rig, mods):
    """The AXES region spans exactly the typed ranges, so the Euler approximation is them."""
    import bpy

    pb = rig.pose.bones["upper_arm.L"]
    shoulder(pb.jointlimit, "ELLIPSE", "AXES")
    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    assert bpy.ops.pose.jointlimit_to_constraints() == {"FINISHED"}
    con = pb.constraints["JointLimit Euler"]
    assert (con.min_x, con.max_x) == pytest.approx((math.radians(-60), math.radians(170)), abs=1e-6)
    assert (con.min_z, con.max_z) == pytest.approx((math.radians(-30), math.radians(170)), abs=1e-6)
    assert bpy.ops.pose.jointlimit_from_constraints(source="LIMIT_ROTATION", old_constraints="KEEP",
                                                    replace_limits=True) == {"FINISHED"}
    s = pb.jointlimit
    assert s.shape == "RECT" and mods["bone_limits"].build_limit(s).contains(IDENTITY)
    assert (s.swing_x_min, s.swing_x_max) == pytest.approx((math.radians(-60), math.radians(170)), abs=1e-6)


def test_overlay_draws_the_axes_outline(rig, mods, addon):
    """The viewport overlay's outline of an AXES limit lies on that region's boundary (mapped
    back into the joint frame) and differs from the inscribed one."""
    import bpy

    ov = importlib.import_module(f"{addon.__name__}.overlay")
    proj = importlib.import_module(f"{addon.__name__}.core.projection")
    settings = bpy.context.scene.jointlimit
    settings.overlay_size = 1.0
    pb = rig.pose.bones["upper_arm.L"]
    outlines = {}
    for fit in ("INSCRIBED", "AXES"):
        shoulder(pb.jointlimit, "OVAL", fit)
        data = ov.bone_draw_data(rig, pb, settings)
        rotation = ov.joint_matrix(rig, pb)[:3, :3]
        local = (data["outline"] - data["head"]) @ rotation / pb.bone.length
        local /= np.linalg.norm(local, axis=-1, keepdims=True)
        limit = mods["bone_limits"].build_limit(pb.jointlimit)
        assert np.allclose(local, limit.outline_points(len(local)), atol=1e-5)    # float32 matrices
        s, t = proj.sphere_to_plane(limit.outline_points(len(local)))
        assert np.all(limit.region.contains_st(s, t))       # on the boundary (core tests: and no farther)
        outlines[fit] = data["outline"]
    assert not np.allclose(outlines["INSCRIBED"][:8], outlines["AXES"][:8], atol=1e-3)


def _bone_rest(d, roll):
    """A rest matrix (3x3 in 4x4) whose Y axis is ``d``, turned by ``roll`` about it."""
    y = np.asarray(d, dtype=np.float64) / np.linalg.norm(d)
    x = np.cross(y, [0.0, 0.0, 1.0] if abs(y[2]) < 0.9 else [1.0, 0.0, 0.0])
    x /= np.linalg.norm(x)
    z = np.cross(x, y)
    c, s = math.cos(roll), math.sin(roll)
    x, z = c * x - s * z, s * x + c * z
    m = np.eye(4)
    m[:3, :3] = np.c_[x, y, z]
    return m


def _tip_motion(mods, joint, d, roll):
    """Where the bone's tip goes when the joint flexes (the table's positive flexion, Fit to Rig)."""
    m = _bone_rest(d, roll)
    axis, sign, *_ = mods["rig_frame"].bone_axes(m, joint, np.array([0.0, -1.0, 0.0]), False)
    a = sign * m[:3, 0 if axis == "X" else 2]
    return np.cross(a, m[:3, 1])


@pytest.mark.parametrize("roll", [0.0, math.pi, 0.7])
@pytest.mark.parametrize("tilt", [-15.0, -5.0, 5.0, 15.0])
def test_fit_flexes_hanging_hocks_and_level_spines_one_way_whatever_their_tilt_and_roll(mods, roll, tilt):
    """A quadruped's metatarsal hangs within degrees of vertical and its spine runs level: the
    rule's axis (bone x direction) turned round with the tilt's side, and within 11° it fell back
    to the table's +X whatever the roll (a cat's generated hock flexed opposite to its meta-rig's,
    a horse's spine segments flexed up or down). Dorsiflexion moves a hanging foot's tip forward
    (-Y), spine flexion moves a level spine's tip down (ventral), for any tilt and roll."""
    t = math.radians(tilt)
    hock = _tip_motion(mods, "ANKLE", (0.0, -math.sin(t), -math.cos(t)), roll)
    assert hock[1] < -0.5 * np.linalg.norm(hock)
    spine = _tip_motion(mods, "SPINE", (0.0, -math.cos(t), math.sin(t)), roll)
    assert spine[2] < -0.5 * np.linalg.norm(spine)
    upright = _tip_motion(mods, "SPINE", (0.0, -math.sin(t), math.cos(t)), roll)    # a biped's: toward the front
    assert upright[1] < -0.5 * np.linalg.norm(upright)


def test_a_fitted_preset_says_which_front_and_up_it_found(rig):
    """Fit to Rig with Front and Up on Auto: the report names the front and up found in the rig
    (a bird's front came out backwards and nothing showed it); explicit ones are not repeated."""
    import bpy

    select_only(rig, {"upper_arm.L"}, active="upper_arm.L")
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_preset_apply, preset="JOINT:SHOULDER")
    assert op.execute(bpy.context) == {"FINISHED"}
    assert any(f"{rig.name}: front -Y, up +Z" in text for _, text in op.reports), op.reports
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_preset_apply, preset="JOINT:SHOULDER", front="NEG_Y", up="POS_Z")
    assert op.execute(bpy.context) == {"FINISHED"}
    assert not any("found in each rig" in text for _, text in op.reports), op.reports
