"""Batch runs (issues 9, 21): ``blender -c jointlimit`` of the installed extension, driven as a
subprocess through the embedded ``blender`` launcher on small scenes built here, results checked by
loading the saved files."""

import importlib
import json
import math
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

from cli_helpers import WRAPPER, batch_env, blender_env, launcher, ok, one_error_line, run, tree_state  # noqa: F401
from conftest import ADDON_MODULE
from rigs import make_armature

pytestmark = [pytest.mark.blender]

COMMANDS = ["info", "apply", "bake", "convert", "to-constraints", "limb-ik", "ccd", "motion", "deformer-add",
            "deformer-remove", "deformer-bake", "sdef-derive"]


@pytest.fixture(scope="module")
def batch(addon):
    """The command line's modules of the installed extension, in this process."""
    class Parts:
        targets = importlib.import_module(f"{addon.__name__}.cli.targets")
        safe_save = importlib.import_module(f"{addon.__name__}.cli.safe_save")
        common = importlib.import_module(f"{addon.__name__}.cli.common")

    return Parts


# --- scenes -----------------------------------------------------------------------------------------


def save(path):
    import bpy

    if bpy.context.object and bpy.context.object.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    return path


def load(path):
    import bpy

    bpy.ops.wm.open_mainfile(filepath=str(path))
    return bpy.data.objects["Rig"] if "Rig" in bpy.data.objects else None


def build_rig():
    """spine (limited, ellipse +-20 deg), upper -> lower -> hand (a connected limb), tail (Limit Rotation)."""
    obj = make_armature([
        ("spine", (0, 0, 0), (0, 0, 1), None, 0.0),
        ("upper", (0, 0, 1), (0, 0, 2), "spine", 0.0),
        ("lower", (0, 0, 2), (0, 0.1, 3), "upper", 0.0),
        ("hand", (0, 0.1, 3), (0, 0.1, 3.3), "lower", 0.0),
        ("tail", (0, 0, 0), (0, -0.5, 0), None, 0.0),
    ])
    s = obj.pose.bones["spine"].jointlimit
    s.enabled, s.kind, s.shape = True, "SWING_TWIST", "ELLIPSE"
    s.swing_x_min, s.swing_x_max = math.radians(-20), math.radians(20)
    s.swing_z_min, s.swing_z_max = math.radians(-20), math.radians(20)
    for pb in obj.pose.bones:
        pb.rotation_mode = "QUATERNION"
    con = obj.pose.bones["tail"].constraints.new("LIMIT_ROTATION")
    con.owner_space = "LOCAL"
    con.use_limit_x, con.min_x, con.max_x = True, math.radians(-30), math.radians(50)
    return obj


def axis_x(angle_deg):
    a = math.radians(angle_deg) / 2
    return (math.cos(a), math.sin(a), 0.0, 0.0)


def angle_of(q):
    return math.degrees(2 * math.acos(min(1.0, abs(q[0]))))


@pytest.fixture
def rig_file(scene, tmp_path):
    """The rig with the spine posed at 60 degrees about X, outside its limit."""
    obj = build_rig()
    obj.pose.bones["spine"].rotation_quaternion = axis_x(60)
    return save(tmp_path / "rig.blend")


@pytest.fixture
def limb_file(scene, tmp_path):
    """The rig in its rest pose (IK targets are reachable from the rest shoulder at (0, 0, 1))."""
    build_rig()
    return save(tmp_path / "limb.blend")


def build_limb_mesh(arm):
    """A small tube around upper/lower with weights blending across the elbow, and an Armature modifier."""
    import bpy

    z = np.linspace(1.0, 3.0, 9)
    ang = np.linspace(0, 2 * np.pi, 6, endpoint=False)
    zz, aa = np.meshgrid(z, ang, indexing="ij")
    co = np.stack([0.2 * np.cos(aa), 0.2 * np.sin(aa), zz], -1).reshape(-1, 3)
    me = bpy.data.meshes.new("Skin")
    me.from_pydata(co.tolist(), [], [])
    obj = bpy.data.objects.new("Skin", me)
    bpy.context.scene.collection.objects.link(obj)
    upper, lower = obj.vertex_groups.new(name="upper"), obj.vertex_groups.new(name="lower")
    t = np.clip((2.4 - co[:, 2]) / 0.8, 0.0, 1.0)
    for i, w in enumerate(t):
        if w > 0:
            upper.add([i], float(w), "REPLACE")
        if w < 1:
            lower.add([i], float(1 - w), "REPLACE")
    obj.modifiers.new("Armature", "ARMATURE").object = arm
    return obj


# --- helpers for results ------------------------------------------------------------------------------


def rotation(path_or_obj, bone):
    return tuple(path_or_obj.pose.bones[bone].rotation_quaternion)


def sampled(obj, bone, frames):
    import bpy

    out = []
    for f in frames:
        bpy.context.scene.frame_set(f)
        out.append(tuple(obj.pose.bones[bone].rotation_quaternion))
    return out


# --- help and usage -------------------------------------------------------------------------------------


def test_help_lists_every_command(run):
    result = run("--help")
    assert result.returncode == 0, result.stderr
    for name in COMMANDS:
        assert f"\n    {name}" in result.stdout
    assert "exit codes" in result.stdout and "blender -c jointlimit" in result.stdout
    sub = run("limb-ik", "--help")
    assert sub.returncode == 0
    for option in ("--targets", "--bone", "--space", "--no-limits", "--output", "--no-save", "--jobs"):
        assert option in sub.stdout


# --- commands on a small scene ------------------------------------------------------------------------------


def test_info_prints_limits_in_degrees(run, rig_file):
    out = ok(run("info", blend=rig_file))
    row = next(ln for ln in out.splitlines() if ln.startswith("Rig") and "spine" in ln)
    assert "SWING_TWIST" in row and "ELLIPSE" in row and "x -20.0..20.0 z -20.0..20.0" in row
    as_json = json.loads(_json_block(ok(run("info", "--json", blend=rig_file))))
    assert [b["bone"] for b in as_json["limits"]] == ["spine"] and as_json["deformers"] == []
    alone = run("info", "--json", rig_file)     # the file after the command: stdout is the JSON alone
    assert json.loads(ok(alone)) == as_json and "summary: 1 limited bone in 1 armature, 0 deformers" in alone.stderr
    several = run("info", "--json", rig_file, rig_file)     # one document per run: refused
    assert several.returncode == 2 and "--json prints one file's JSON document" in several.stderr


def _json_block(stdout):
    start = stdout.index("{")
    end = stdout.rindex("}")
    return stdout[start:end + 1]


def test_apply_clamps_and_saves_over_the_input(run, rig_file):
    out = ok(run("apply", blend=rig_file))
    assert "clamped 1 of 1 limited bones" in out
    obj = load(rig_file)
    assert angle_of(rotation(obj, "spine")) == pytest.approx(20.0, abs=1e-3)
    assert not [p for p in rig_file.parent.iterdir() if p.name.startswith(".")]  # no temporary files left


def test_apply_on_keyed_bones_says_the_keys_win(run, scene, tmp_path):
    """Apply writes the stored pose; keys set it again when the file opens: the summary says so
    (a server run shows nobody the pose), and names bake."""
    obj = build_rig()
    pb = obj.pose.bones["spine"]
    pb.rotation_quaternion = axis_x(60)
    pb.keyframe_insert("rotation_quaternion", frame=1)
    path = save(tmp_path / "keyed.blend")
    result = run("apply", blend=path)
    out = ok(result)
    assert "clamped 1 of 1 limited bones" in out
    assert "Auto Keying" not in out + result.stderr    # not the operator's advice for the interface
    assert "1 of them animated (spine): their keys or drivers set the rotation again when the file opens, use bake" in out
    assert "animated" not in ok(run("apply", blend=save_rig_posed(tmp_path)))
    import bpy

    bpy.ops.wm.read_homefile(use_empty=True)    # a file saved with Auto Keying on: apply still keys nothing
    obj = build_rig()
    pb = obj.pose.bones["spine"]
    for frame, angle in ((1, 60), (21, 60)):
        pb.rotation_quaternion = axis_x(angle)
        pb.keyframe_insert("rotation_quaternion", frame=frame)
    bpy.context.scene.frame_set(11)
    bpy.context.scene.tool_settings.use_keyframe_insert_auto = True
    path = save(tmp_path / "autokey.blend")
    ok(run("apply", blend=path))
    obj = load(path)
    fcurves = [fc for fc in importlib.import_module(f"{ADDON_MODULE}.animation").object_fcurves(obj)]
    assert sorted({round(k.co[0]) for fc in fcurves for k in fc.keyframe_points}) == [1, 21]
    assert bpy.context.scene.tool_settings.use_keyframe_insert_auto     # the file's setting kept


def save_rig_posed(tmp_path):
    import bpy

    bpy.ops.wm.read_homefile(use_empty=True)
    build_rig().pose.bones["spine"].rotation_quaternion = axis_x(60)
    return save(tmp_path / "posed.blend")


def test_no_save_and_output(run, rig_file, tmp_path):
    before = rig_file.read_bytes()
    assert "dry run" in ok(run("apply", "--no-save", blend=rig_file))
    out_path = tmp_path / "out" / "clamped.blend"
    out_path.parent.mkdir()
    ok(run("apply", "--output", out_path, blend=rig_file))
    ok(run("apply", "--output-dir", out_path.parent, blend=rig_file))
    assert rig_file.read_bytes() == before
    assert angle_of(rotation(load(out_path), "spine")) == pytest.approx(20.0, abs=1e-3)
    assert angle_of(rotation(load(out_path.parent / "rig.blend"), "spine")) == pytest.approx(20.0, abs=1e-3)
    assert angle_of(rotation(load(rig_file), "spine")) == pytest.approx(60.0, abs=1e-3)


def test_bake_keys_every_frame_inside_the_limit(run, scene, tmp_path):
    obj = build_rig()
    obj.pose.bones["tail"].jointlimit.enabled = True    # no keys, at rest inside: left unkeyed, and said so
    pb = obj.pose.bones["spine"]
    for frame, angle in ((1, 0), (11, 60)):
        pb.rotation_quaternion = axis_x(angle)
        pb.keyframe_insert("rotation_quaternion", frame=frame)
    path = save(tmp_path / "bake.blend")
    out = ok(run("bake", "--frames", 1, 11, blend=path))
    assert "bake: frames 11/11" in out
    assert "baked 1 limited bones of 'Rig' over frames 1..11; left 1 without rotation keys unkeyed" in out
    obj = load(path)
    angles = [angle_of(q) for q in sampled(obj, "spine", range(1, 12))]
    assert max(angles) == pytest.approx(20.0, abs=1e-3) and angles[0] == pytest.approx(0.0, abs=1e-3)
    assert angles[5] <= 20.0 + 1e-3


def test_convert_and_back_to_constraints(run, rig_file):
    ok(run("convert", "--bones", "tail", "--old-constraints", "remove", blend=rig_file))
    obj = load(rig_file)
    s = obj.pose.bones["tail"].jointlimit
    assert s.enabled and math.degrees(s.swing_x_max) == pytest.approx(50.0, abs=1e-3)
    assert not obj.pose.bones["tail"].constraints
    ok(run("to-constraints", "--bones", "spine", blend=rig_file))
    con = load(rig_file).pose.bones["spine"].constraints[0]
    assert con.type == "LIMIT_ROTATION" and con.owner_space == "LOCAL"
    # back again: spine keeps its own limit unless asked (its shape was replaced by a RECT, silently)
    shape = load(rig_file).pose.bones["spine"].jointlimit.shape
    result = run("convert", "--bones", "spine", blend=rig_file)
    assert result.returncode == 2 and "--replace-limits" in one_error_line(result)
    assert load(rig_file).pose.bones["spine"].jointlimit.shape == shape
    out = ok(run("convert", "--bones", "spine", "--replace-limits", blend=rig_file))
    assert "replaced the joint limits of 1 bone (spine)" in out
    assert load(rig_file).pose.bones["spine"].jointlimit.shape == "RECT"
    ok(run("convert", "--bones", "spine", "--replace-limits", "--limit-kind", "euler", blend=rig_file))
    assert load(rig_file).pose.bones["spine"].jointlimit.kind in ("EULER", "EULER_MULTI")


def test_convert_with_nothing_to_convert_is_bad_input(run, rig_file):
    """Bones without a local-space Limit Rotation constraint or IK limits: exit 2 and one line
    naming the armature (exit 1, "the work failed", before), the file unchanged."""
    before = rig_file.read_bytes()
    result = run("convert", "--bones", "spine", "--source", "limit-rotation", blend=rig_file)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Limit Rotation constraint or IK limits to convert" in one_error_line(result)
    assert rig_file.read_bytes() == before


def test_limb_ik_from_csv_keys_each_row(run, limb_file, tmp_path):
    targets = tmp_path / "hand.csv"
    rows = [(1, 0.5, 0.3, 2.5, 0), (5, -0.4, 0.6, 2.0, 30), (9, 0.0, 1.2, 1.8, -20)]
    targets.write_text("frame,x,y,z,swivel\n" + "".join(f"{f},{x},{y},{z},{s}\n" for f, x, y, z, s in rows))
    out = ok(run("limb-ik", "--bone", "hand", "--targets", targets, blend=limb_file))
    assert "limb-ik: frames 3/3" in out and "keyed 3 frames of upper, lower" in out
    import bpy

    obj = load(limb_file)
    for frame, x, y, z, _ in rows:
        bpy.context.scene.frame_set(frame)
        assert (obj.pose.bones["hand"].head - type(obj.location)((x, y, z))).length < 1e-4


def test_limb_ik_world_space(run, scene, tmp_path):
    obj = build_rig()
    obj.location = (1.0, 2.0, 0.5)
    path = save(tmp_path / "moved.blend")
    targets = tmp_path / "t.json"
    targets.write_text(json.dumps([{"frame": 3, "x": 1.5, "y": 2.3, "z": 3.0}]))
    ok(run("limb-ik", "--bone", "hand", "--targets", targets, "--space", "world", blend=path))
    import bpy

    obj = load(path)
    bpy.context.scene.frame_set(3)
    head = obj.matrix_world @ obj.pose.bones["hand"].head
    assert (head - type(head)((1.5, 2.3, 3.0))).length < 1e-4


def test_ccd_from_json(run, limb_file, tmp_path):
    targets = tmp_path / "tip.json"
    rows = [{"frame": 2, "x": 0.8, "y": 0.5, "z": 2.6}, {"frame": 4, "x": -0.6, "y": 0.9, "z": 2.2}]
    targets.write_text(json.dumps(rows))
    out = ok(run("ccd", "--bone", "hand", "--chain-length", 3, "--targets", targets, blend=limb_file))
    assert "keyed 2 frames of upper, lower, hand" in out
    import bpy

    obj = load(limb_file)
    for row in rows:
        bpy.context.scene.frame_set(row["frame"])
        tip = obj.pose.bones["hand"].tail
        assert (tip - type(tip)((row["x"], row["y"], row["z"]))).length < 1e-2


def test_motion_keys_every_frame_between_key_poses(run, scene, addon, tmp_path):
    obj = build_rig()
    pb = obj.pose.bones["upper"]
    for frame, angle in ((1, 0), (11, 40), (21, -10)):
        pb.rotation_quaternion = axis_x(angle)
        pb.keyframe_insert("rotation_quaternion", frame=frame)
    path = save(tmp_path / "motion.blend")
    out = ok(run("motion", "--frames", 1, 21, "--profile", "min-jerk", "--bones", "upper,lower", blend=path))
    assert "smoothed 1 bone of" in out and "left lower (fewer than two rotation keys in the range)" in out
    obj = load(path)
    animation = importlib.import_module(f"{addon.__name__}.animation")
    assert animation.keyed_frames(obj, obj.pose.bones["upper"], "rotation_quaternion", 0, 100) == list(range(1, 22))
    angles = [angle_of(q) for q in sampled(obj, "upper", (1, 11, 21))]
    assert angles == pytest.approx([0.0, 40.0, 10.0], abs=1e-3)


def test_motion_via_velocity_clamped_by_default_optimal_on_request(run, scene, tmp_path):
    """Keys at frames 1, 2, 100 (0°, 14.3°, 28.6° about X): the default never leaves the keys'
    range; ``--via-velocity optimal`` is the exact minimiser, which swings far past them (issue 16)."""
    obj = build_rig()
    pb = obj.pose.bones["upper"]
    for frame, angle in ((1, 0.0), (2, 14.3), (100, 28.6)):
        pb.rotation_quaternion = axis_x(angle)
        pb.keyframe_insert("rotation_quaternion", frame=frame)
    path = save(tmp_path / "uneven.blend")
    largest = {}
    for via in ("clamped", "optimal"):
        copy = tmp_path / f"{via}.blend"
        shutil.copyfile(path, copy)
        args = ("motion", "--frames", 1, 100) + (() if via == "clamped" else ("--via-velocity", via))
        ok(run(*args, blend=copy))
        largest[via] = max(angle_of(q) for q in sampled(load(copy), "upper", range(1, 101)))
    assert largest["clamped"] <= 28.6 + 1e-3
    assert largest["optimal"] > 100.0


def test_deformer_pipeline(run, scene, tmp_path):
    arm = build_rig()
    build_limb_mesh(arm)
    arm.pose.bones["lower"].rotation_quaternion = axis_x(50)
    path = save(tmp_path / "skin.blend")
    ok(run("sdef-derive", "--mesh", "Skin", blend=path))
    import bpy

    load(path)
    assert "jl_sdef_c" in bpy.data.objects["Skin"].data.attributes
    ok(run("deformer-add", "--mode", "bezier", blend=path))
    info = ok(run("info", blend=path))
    assert any(ln.startswith("Skin") and "BEZIER" in ln and "0.5" in ln and "True" in ln for ln in info.splitlines())
    out = ok(run("deformer-bake", "--frames", 1, 3, "--mute-modifiers", blend=path))
    as_json = json.loads(_json_block(ok(run("info", "--json", blend=path))))     # (a bake with Disable Modifiers: off)
    assert as_json["deformers"] == [{"mesh": "Skin", "modifier": "JointLimit Deformer", "mode": "BEZIER", "blend": 0.5,
                                     "on": False}]
    assert "deformer-bake Skin: frames 3/3" in out
    load(path)
    keys = bpy.data.objects["Skin"].data.shape_keys.key_blocks
    assert {"jl_frame_0001", "jl_frame_0002", "jl_frame_0003"} <= set(keys.keys())
    assert "of Skin (BEZIER) as shape-keys" in out  # the deformer's own mode when --mode is not given


def test_sdef_derive_strongest_two_covers_what_deformer_add_strongest_two_uses(run, scene, tmp_path):
    """Vertices on three groups (upper, lower and a little hand): ``sdef-derive`` leaves them out,
    so ``deformer-add --strongest-two`` refuses with why (it saved them as plain LBS while saying
    otherwise); ``sdef-derive --strongest-two`` derives them and the add goes through."""
    import bpy

    arm = build_rig()
    skin = build_limb_mesh(arm)
    elbow = [i for i, v in enumerate(skin.data.vertices) if len(v.groups) == 2]
    skin.vertex_groups.new(name="hand").add(elbow[::2], 0.05, "REPLACE")
    path = save(tmp_path / "three.blend")
    ok(run("sdef-derive", "--mesh", "Skin", blend=path))
    refused = run("deformer-add", "--strongest-two", blend=path)
    assert refused.returncode == 2 and "derive the SDEF parameters again" in refused.stderr, refused.stderr
    ok(run("sdef-derive", "--mesh", "Skin", "--strongest-two", blend=path))
    ok(run("deformer-add", "--strongest-two", blend=path))
    load(path)
    assert "JointLimit Deformer" in bpy.data.objects["Skin"].modifiers


def test_sdef_derive_writes_mmd_tools_layout(run, scene, tmp_path):
    """``sdef-derive --write-mmd``: the derived parameters also as mmd_tools' shape keys (issue 20)."""
    arm = build_rig()
    build_limb_mesh(arm)
    path = save(tmp_path / "mmd.blend")
    ok(run("sdef-derive", "--mesh", "Skin", "--write-mmd", blend=path))
    import bpy

    load(path)
    mesh = bpy.data.objects["Skin"].data
    keys = mesh.shape_keys.key_blocks
    assert {"mmd_sdef_c", "mmd_sdef_r0", "mmd_sdef_r1"} <= set(keys.keys())
    n = len(mesh.vertices)
    c, attr = np.empty(n * 3, np.float32), np.empty(n * 3, np.float32)
    keys["mmd_sdef_c"].data.foreach_get("co", c)
    mesh.attributes["jl_sdef_c"].data.foreach_get("vector", attr)
    assert np.array_equal(c, attr) and keys["mmd_sdef_c"].value == 0.0


# --- bad input: exit 2, one line, input untouched ---------------------------------------------------------


@pytest.mark.parametrize("case", ["armature", "bone", "targets", "range", "command", "mesh", "step", "iterations",
                                  "pad", "pad-nan", "not-blend"])
def test_bad_input_is_one_line_and_leaves_the_file(run, rig_file, tmp_path, case):
    bad = tmp_path / "bad.csv"
    bad.write_text("frame,x,y,z\n1,0.1,0.2,0.3\n2,abc,0,0\n")
    good = tmp_path / "good.csv"
    good.write_text("frame,x,y,z\n1,0.1,0.2,0.3\n")
    args = {
        "armature": ("apply", "--armature", "Nope"),
        "bone": ("limb-ik", "--bone", "nope", "--targets", good),
        "targets": ("ccd", "--bone", "hand", "--targets", bad),
        "range": ("bake", "--frames", 10, 1),
        "command": ("frobnicate",),
        "mesh": ("sdef-derive", "--mesh", "Nope"),
        "step": ("motion", "--step", 1000),     # options beyond the operator's range are refused, not clamped
        "iterations": ("ccd", "--bone", "hand", "--targets", good, "--iterations", 10001),
        "pad": ("sdef-derive", "--pad", -5),
        "pad-nan": ("sdef-derive", "--pad", "nan"),
        "not-blend": ("apply", "--jobs", 2, good),     # and the .blend after it
    }[case]
    before, mtime = rig_file.read_bytes(), rig_file.stat().st_mtime_ns
    result = run(*args, rig_file) if case == "not-blend" else run(*args, blend=rig_file)
    assert result.returncode == 2, result.stderr
    line = one_error_line(result)
    expected = {"armature": "'Nope'", "bone": "'nope'", "targets": "row 3: x is not a number", "range": "10..1",
                "command": "frobnicate", "mesh": "'Nope'", "step": "--step: must be from 1 to 100, got 1000",
                "iterations": "--iterations: must be from 1 to 10000", "pad": "--pad: must be a finite number of 0",
                "pad-nan": "--pad: must be a finite number of 0", "not-blend": "not a .blend file name"}[case]
    assert expected in line
    assert rig_file.read_bytes() == before and rig_file.stat().st_mtime_ns == mtime
    assert sorted(p.name for p in rig_file.parent.iterdir()) == ["bad.csv", "good.csv", "rig.blend"]


def test_a_mesh_without_two_bone_vertices_is_bad_input(run, scene, tmp_path):
    """A mesh with no vertex weighted to two bones is input to fix: exit 2 (it was the operator's
    failure, exit 1), one line naming the problem, the file untouched."""
    arm = build_rig()
    skin = build_limb_mesh(arm)
    for group in list(skin.vertex_groups):
        skin.vertex_groups.remove(group)
    path = save(tmp_path / "noweights.blend")
    before = path.read_bytes()
    for command in ("sdef-derive", "deformer-add"):
        result = run(command, blend=path)
        assert result.returncode == 2
        assert "no vertices on exactly two deforming bones" in one_error_line(result)
    assert path.read_bytes() == before


@pytest.mark.parametrize("args", [("deformer-add", "--blend", "nan"), ("deformer-add", "--blend", "2"),
                                  ("deformer-bake", "--blend", "nan", "--frames", 1, 2),
                                  ("deformer-bake", "--blend", "-0.5", "--frames", 1, 2)])
def test_blend_outside_0_1_is_bad_input(run, scene, tmp_path, args):
    arm = build_rig()
    build_limb_mesh(arm)
    path = save(tmp_path / "skin.blend")
    before = path.read_bytes()
    result = run(*args, blend=path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"blend s must lie in [0, 1], got {float(args[2])}" in one_error_line(result)
    assert path.read_bytes() == before


def test_deformer_add_on_a_mesh_that_has_it_names_it(run, scene, tmp_path):
    arm = build_rig()
    build_limb_mesh(arm)
    path = save(tmp_path / "skin.blend")
    ok(run("deformer-add", blend=path))
    before = path.read_bytes()
    for args in ((), ("--mesh", "Skin")):
        result = run("deformer-add", *args, blend=path)
        assert result.returncode == 2, result.stdout + result.stderr
        assert "'Skin' already has the JointLimit deformer ('JointLimit Deformer')" in one_error_line(result)
        assert path.read_bytes() == before


@pytest.mark.parametrize("state", ["bound", "use-sdef-off"])
def test_a_mesh_bound_by_mmd_tools_needs_take_over(run, scene, tmp_path, state):
    """deformer-add refuses a mesh with mmd_tools' SDEF binding unless --take-over (exit 2, one
    line), also with mmd_tools' Use SDEF off (key muted, mask cleared); deformer-bake of a mesh
    that binding deforms says to take it over first; with --take-over both work."""
    import bpy
    from test_deformer_blender import bind_like_mmd_tools

    arm = build_rig()
    obj = build_limb_mesh(arm)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    assert bpy.ops.object.jointlimit_sdef_derive(write_mmd=True) == {"FINISHED"}
    kb, fc, _ = bind_like_mmd_tools(obj, arm)
    if state == "use-sdef-off":
        kb.mute, obj.modifiers["mmd_armature"].vertex_group = True, ""
    path = save(tmp_path / "bound.blend")
    before = path.read_bytes()
    refused = [(("deformer-add",), "bound by mmd_tools' SDEF: pass --take-over")]
    if state == "bound":
        refused.append((("deformer-bake", "--frames", 1, 2), "run deformer-add --take-over first"))
    for args, want in refused:
        result = run(*args, blend=path)
        assert result.returncode == 2, result.stdout + result.stderr
        assert want in one_error_line(result) and "'Skin'" in one_error_line(result)
        assert path.read_bytes() == before
    ok(run("deformer-add", "--take-over", blend=path))
    ok(run("deformer-bake", "--frames", 1, 2, blend=path))
    load(path)
    skin = bpy.data.objects["Skin"]
    assert skin.data.shape_keys.key_blocks["mmd_sdef_skinning"].mute
    assert skin.modifiers["mmd_armature"].vertex_group == "jl_deformer_skip"


@pytest.mark.parametrize("problem", ["modifier", "nan"])
def test_take_over_checks_the_unbound_mesh_first(run, scene, tmp_path, problem):
    """deformer-add --take-over of a bound mesh with a problem the binding hid until unbound (a
    modifier before the Armature modifier, a NaN in mmd_tools' SDEF data): exit 2 with one line
    before any work, the file and the binding untouched."""
    import bpy
    from test_deformer_blender import bind_like_mmd_tools

    arm = build_rig()
    obj = build_limb_mesh(arm)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    assert bpy.ops.object.jointlimit_sdef_derive(write_mmd=True) == {"FINISHED"}
    bind_like_mmd_tools(obj, arm)
    if problem == "modifier":
        obj.modifiers.new("Subdivision", "SUBSURF")
        bpy.ops.object.modifier_move_to_index(modifier="Subdivision", index=0)
        want = "modifier 'Subdivision' (SUBSURF) comes before the Armature modifier 'mmd_armature'"
    else:
        kb = obj.data.shape_keys.key_blocks["mmd_sdef_c"]
        vertex = next(i for i, (p, q) in enumerate(zip(kb.data, obj.data.shape_keys.key_blocks[0].data))
                      if p.co != q.co)
        kb.data[vertex].co = (float("nan"), 0.0, 0.0)
        want = "'mmd_sdef_c'"
    path = save(tmp_path / "bound.blend")
    before = path.read_bytes()
    result = run("deformer-add", "--take-over", blend=path)
    assert result.returncode == 2, result.stdout + result.stderr
    line = one_error_line(result)
    assert "deformer-add 'Skin'" in line and want in line, line
    assert path.read_bytes() == before


@pytest.mark.parametrize("case", ["apply-nan", "bake-reversed", "to-constraints-nan", "limb-ik-reversed"])
def test_invalid_limit_settings_in_the_file_are_bad_input(run, scene, tmp_path, case):
    obj = build_rig()
    obj.pose.bones["spine"].rotation_quaternion = axis_x(60)
    command, problem = case.rsplit("-", 1)
    bone = "upper" if command == "limb-ik" else "spine"
    s = obj.pose.bones[bone].jointlimit
    s.enabled, s.kind, s.shape = True, "SWING_TWIST", "ELLIPSE"
    s.swing_x_min, s.swing_x_max = (float("nan"), 0.3) if problem == "nan" else (0.4, -0.4)
    path = save(tmp_path / "rig.blend")
    targets = tmp_path / "t.csv"
    targets.write_text("frame,x,y,z\n1,0.3,0.2,2.6\n")
    args = {"apply": (), "bake": ("--frames", 1, 2), "to-constraints": (),
            "limb-ik": ("--bone", "hand", "--targets", targets)}[command]
    before = path.read_bytes()
    result = run(command, *args, blend=path)
    assert result.returncode == 2, result.stdout + result.stderr
    line = one_error_line(result)
    assert f"bone '{bone}'" in line and "Swing X: minimum" in line
    assert path.read_bytes() == before


@pytest.mark.parametrize("text, message", [
    ("frame,x,y\n1,0,0\n", "missing 'z'"),
    ("frame,x,y,z\n1.5,0,0,0\n", "whole number"),
    ("frame,x,y,z\n1,0,0,0\n1,1,1,1\n", "appears twice"),
    ("frame,x,y,z,swivle\n1,0,0,0,3\n", "t.csv header: unknown column 'swivle'"),
    ("frame,x,y,z\n1,0,nan,0\n", "finite"),
    ("frame,x,y,z\n", "no targets"),
    ("1,0.4,-0.2,1.3\n", "not a header"),
    ("", "empty file"),
    ('[{"frame": 1, "x": 0, "y": 0}]', "missing 'z'"),
    ('{"frame": 1}', "expected a JSON list"),
    ('[{"frame": 1, "x": 0, "y": 0, "z": true}]', "finite number"),
    ("[1, 2", "not valid JSON"),
])
def test_malformed_target_files(batch, tmp_path, text, message):
    path = tmp_path / ("t.json" if text.startswith(("[", "{")) else "t.csv")
    path.write_text(text)
    with pytest.raises(batch.common.UsageError, match=message):
        batch.targets.read_targets(str(path), with_swivel=True)


def test_a_missing_or_binary_targets_file_is_named_plainly(batch, tmp_path):
    """As a missing .blend is ("no such file"), not Python's "[Errno 2] ..."."""
    with pytest.raises(batch.common.UsageError, match=r"cannot read targets file .*nosuch.csv: no such file$"):
        batch.targets.read_targets(str(tmp_path / "nosuch.csv"), with_swivel=False)
    (tmp_path / "bin.csv").write_bytes(b"\xff\xfe\x00frame")
    with pytest.raises(batch.common.UsageError, match="not UTF-8 text"):
        batch.targets.read_targets(str(tmp_path / "bin.csv"), with_swivel=False)


def test_target_files_parse(batch, tmp_path):
    csv_path = tmp_path / "t.csv"
    csv_path.write_text("# comment\nFrame, X, Y, Z, Swivel\n5,1,2,3,\n2,4,5,6,45\n")
    assert batch.targets.read_targets(str(csv_path), True) == [(2, (4.0, 5.0, 6.0), 45.0), (5, (1.0, 2.0, 3.0), None)]
    json_path = tmp_path / "t.txt"
    json_path.write_text('[{"frame": 3.0, "x": 1, "y": "2", "z": 3.5}]')
    assert batch.targets.read_targets(str(json_path), False) == [(3, (1.0, 2.0, 3.5), None)]
    with pytest.raises(batch.common.UsageError, match="t.csv header: unknown column 'swivel'"):
        batch.targets.read_targets(str(csv_path), False)


# --- atomic save -----------------------------------------------------------------------------------------


def test_interrupted_save_keeps_the_original(batch, tmp_path):
    target = tmp_path / "scene.blend"
    target.write_bytes(b"ORIGINAL" * 100)

    def failing_writer(tmp):
        with open(tmp, "wb") as f:
            f.write(b"PARTIAL")
        raise OSError("disk full")

    with pytest.raises(batch.common.BatchError, match="disk full"):
        batch.safe_save.verified_save(str(target), failing_writer, lambda path: None)
    assert target.read_bytes() == b"ORIGINAL" * 100
    assert [p.name for p in tmp_path.iterdir()] == ["scene.blend"]


def test_atomic_save_replaces_and_keeps_the_mode(batch, tmp_path):
    target = tmp_path / "scene.blend"
    target.write_bytes(b"old")
    target.chmod(0o640)
    seen = []

    def writer(tmp):
        seen.append(pathlib.Path(tmp))
        pathlib.Path(tmp).write_bytes(b"new")

    batch.safe_save.verified_save(str(target), writer, lambda path: None)
    assert target.read_bytes() == b"new" and (target.stat().st_mode & 0o777) == 0o640
    assert seen[0].parent == tmp_path and seen[0].name != "scene.blend"
    assert [p.name for p in tmp_path.iterdir()] == ["scene.blend"]


# --- many files ------------------------------------------------------------------------------------------------


def test_jobs_run_files_in_parallel_and_report_each(run, scene, tmp_path):
    import bpy

    obj = build_rig()
    obj.pose.bones["spine"].rotation_quaternion = axis_x(60)
    a, b = save(tmp_path / "a.blend"), save(tmp_path / "b.blend")
    bpy.ops.wm.read_homefile(use_empty=True)
    c = save(tmp_path / "c.blend")  # no armature
    c_bytes = c.read_bytes()
    result = run("apply", "--jobs", 2, a, b, c)
    assert result.returncode == 2, result.stdout + result.stderr
    out = result.stdout
    assert "files done 3/3" in out and "[a.blend]" in out and "[b.blend]" in out
    assert f"ok  {a}" in out and f"ok  {b}" in out and f"FAILED (exit 2)  {c}: the scene has no armature" in out
    assert "1 of 3 files failed" in one_error_line(result)
    assert c.read_bytes() == c_bytes
    for path in (a, b):
        assert angle_of(rotation(load(path), "spine")) == pytest.approx(20.0, abs=1e-3)
    both = run("apply", "--jobs", 2, "--no-save", a, b)
    assert both.returncode == 0 and both.stdout.count("dry run") >= 2


def test_armatures_of_other_scenes_are_named_where_they_are_missed(run, scene, tmp_path):
    """The commands work on the scene the file opens on; an armature only in another scene is
    named by info (and its JSON) and by the error of a command asked for it."""
    import bpy

    build_rig()
    other = bpy.data.scenes.new("Scene2")
    rig_c = bpy.data.objects.new("RigC", bpy.data.armatures.new("RigC"))
    other.collection.objects.link(rig_c)
    path = save(tmp_path / "multi.blend")
    result = run("info", "--json", path)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["other_scenes"] == {"Scene2": ["RigC"]} and doc["scene"] == "Scene"
    assert "scene 'Scene2' has RigC" in result.stderr     # the summary
    result = run("bake", "--armature", "RigC", "--frames", 1, 2, blend=path)
    assert result.returncode == 2
    assert "no armature 'RigC' in the scene (armatures: Rig); scene 'Scene2' has RigC" in one_error_line(result)


def test_info_shows_the_fit_and_warns_about_the_rest_pose(run, scene, tmp_path):
    """Issue 17: the FIT column, and a limit that leaves out the rest pose says how far Apply moves it."""
    obj = build_rig()
    up = obj.pose.bones["upper"].jointlimit
    up.enabled, up.kind, up.shape, up.fit = True, "SWING_TWIST", "OVAL", "INSCRIBED"
    up.swing_x_min, up.swing_x_max = math.radians(-60), math.radians(170)
    up.swing_z_min, up.swing_z_max = math.radians(-30), math.radians(170)
    path = save(tmp_path / "fit.blend")
    out = ok(run("info", blend=path))
    row = next(ln for ln in out.splitlines() if ln.startswith("Rig") and " upper " in ln)
    assert "OVAL" in row and "INSCRIBED" in row and "The rest pose is outside this limit" in row
    spine = next(ln for ln in out.splitlines() if ln.startswith("Rig") and " spine " in ln)
    assert "rest pose" not in spine
    as_json = json.loads(_json_block(ok(run("info", "--json", blend=path))))
    rows = {b["bone"]: b for b in as_json["limits"]}
    assert rows["upper"]["fit"] == "INSCRIBED" and "moved" in rows["upper"]["problem"]
    load(path).pose.bones["upper"].jointlimit.fit = "AXES"
    save(path)
    as_json = json.loads(_json_block(ok(run("info", "--json", blend=path))))
    rows = {b["bone"]: b for b in as_json["limits"]}
    assert rows["upper"]["fit"] == "AXES" and rows["upper"]["problem"] == ""


def test_wrapper_runs_the_checkout_without_touching_the_user_folder(scene, tmp_path):
    """Without the extension installed, scripts/jointlimit_batch.py registers the checkout's add-on
    for its own process (also in its workers) and writes nothing into Blender's user folder."""
    obj = build_rig()
    obj.pose.bones["spine"].rotation_quaternion = axis_x(60)
    a, b = save(tmp_path / "a.blend"), save(tmp_path / "b.blend")
    env = blender_env(tmp_path / "fresh")
    (tmp_path / "fresh" / "blender").mkdir(parents=True)
    before = tree_state(tmp_path / "fresh" / "blender")
    result = subprocess.run([str(launcher()), "-b", "--python", str(WRAPPER), "--", "apply", "--jobs", "2", a, b],
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "files done 2/2" in result.stdout
    for path in (a, b):
        assert angle_of(rotation(load(path), "spine")) == pytest.approx(20.0, abs=1e-3)
    assert tree_state(tmp_path / "fresh" / "blender") == before


def test_keying_into_a_linked_action_is_refused_and_leaves_the_file(run, scene, tmp_path):
    """An action linked from a library takes no keys (Blender skips them with a console warning,
    and what a script writes into it is lost on save): bake, limb-ik, ccd and motion say so (exit
    2, one line) instead of reporting work that the saved file would not hold."""
    import bpy

    obj = build_rig()
    for name in ("spine", "upper", "lower"):
        pb = obj.pose.bones[name]
        for frame, angle in ((1, 0), (11, 60)):
            pb.rotation_quaternion = axis_x(angle)
            pb.keyframe_insert("rotation_quaternion", frame=frame)
    action = obj.animation_data.action
    action.name = "Walk"
    library = tmp_path / "anim.blend"
    bpy.data.libraries.write(str(library), {action}, fake_user=True)
    obj.animation_data.action = None
    bpy.data.actions.remove(action)
    with bpy.data.libraries.load(str(library), link=True) as (_found, wanted):
        wanted.actions = ["Walk"]
    obj.animation_data.action = wanted.actions[0]
    path = save(tmp_path / "shot.blend")
    before = path.read_bytes()
    targets = tmp_path / "t.csv"
    targets.write_text("frame,x,y,z\n1,0.3,0.2,2.6\n")
    for args in (("bake", "--frames", 1, 11), ("limb-ik", "--bone", "hand", "--targets", targets),
                 ("ccd", "--bone", "hand", "--chain-length", 2, "--targets", targets),
                 ("motion", "--frames", 1, 11, "--bones", "upper,lower")):
        result = run(*args, blend=path)
        assert result.returncode == 2, result.stdout + result.stderr
        assert "the action 'Walk' of 'Rig' comes from a library (linked or overridden)" in one_error_line(result)
        assert path.read_bytes() == before
    bpy.context.scene.frame_set(11)     # the keys outside the spine's limit: apply clamps, and says what to do
    out = ok(run("apply", blend=save(tmp_path / "shot11.blend")))
    assert "their keys or drivers set the rotation again when the file opens" in out
    assert "comes from a library (linked or overridden)" in out and "use bake" not in out


@pytest.mark.parametrize("case", ["subdivision-first", "mmd-bound", "own-mask"])
def test_sdef_derive_accepts_what_its_operator_accepts(run, scene, tmp_path, case):
    """sdef-derive takes what Derive takes (a modifier before the Armature modifier, a mesh bound
    by mmd_tools, a mask of the user's): the batch's input check refused them (review, session 20)."""
    import bpy
    from test_deformer_blender import bind_like_mmd_tools

    arm = build_rig()
    skin = build_limb_mesh(arm)
    bpy.context.view_layer.objects.active = skin
    skin.select_set(True)
    if case == "subdivision-first":
        sub = skin.modifiers.new("Subdivision", "SUBSURF")
        with bpy.context.temp_override(object=skin, active_object=skin):
            bpy.ops.object.modifier_move_to_index(modifier=sub.name, index=0)
    elif case == "mmd-bound":
        assert bpy.ops.object.jointlimit_sdef_derive(write_mmd=True) == {"FINISHED"}
        bind_like_mmd_tools(skin, arm)
    else:
        skin.vertex_groups.new(name="mine")
        skin.modifiers["Armature"].vertex_group = "mine"
    # the operator works on it
    assert bpy.ops.object.jointlimit_sdef_derive(write_mmd=True) == {"FINISHED"}
    path = save(tmp_path / "skin.blend")
    result = run("sdef-derive", "--mesh", "Skin", "--write-mmd", blend=path)
    assert result.returncode == 0, result.stderr


def test_deformer_remove_finds_a_deformer_whose_armature_modifier_is_gone(run, scene, tmp_path):
    """deformer-remove without --mesh finds a deformer whose Armature modifier was deleted (the
    watcher says to remove it): meshes are picked by their deformer, not their Armature modifier."""
    import bpy

    arm = build_rig()
    skin = build_limb_mesh(arm)
    bpy.context.view_layer.objects.active = skin
    skin.select_set(True)
    assert bpy.ops.object.jointlimit_sdef_derive() == {"FINISHED"}
    assert bpy.ops.object.jointlimit_deformer_add() == {"FINISHED"}
    skin.modifiers.remove(skin.modifiers["Armature"])
    path = save(tmp_path / "skin.blend")
    result = run("deformer-remove", blend=path)
    assert result.returncode == 0, result.stderr
    load(path)
    assert "JointLimit Deformer" not in bpy.data.objects["Skin"].modifiers


def test_deformer_remove_several_meshes_and_a_leftover_mask(run, scene, tmp_path):
    """Several meshes: one with the deformer, one whose deformer modifier was deleted by hand
    (leftover skip mask), one with none; without --mesh the first two are handled, the third
    skipped; --mesh naming the third is refused (exit 2)."""
    import bpy

    arm = build_rig()
    a = build_limb_mesh(arm)
    b = build_limb_mesh(arm)
    c = build_limb_mesh(arm)
    for o in (a, b):
        for x in bpy.context.selected_objects:
            x.select_set(False)
        bpy.context.view_layer.objects.active = o
        o.select_set(True)
        assert bpy.ops.object.jointlimit_deformer_add() == {"FINISHED"}
    b.modifiers.remove(b.modifiers["JointLimit Deformer"])
    names = (a.name, b.name, c.name)
    path = save(tmp_path / "skin.blend")
    result = run("deformer-remove", "--mesh", names[2], blend=path)
    assert result.returncode == 2 and "no JointLimit deformer" in one_error_line(result)
    out = ok(run("deformer-remove", blend=path))
    load(path)
    for n in names:
        o = bpy.data.objects[n]
        assert [m.vertex_group for m in o.modifiers if m.type == "ARMATURE"] == [""], n
        assert "JointLimit Deformer" not in o.modifiers
    assert names[2] not in out.split("removed the deformer from")[-1].splitlines()[0] if "removed" in out else True


def test_bake_again_after_a_bake_that_disabled_modifiers(run, scene, tmp_path):
    """deformer-bake --mute-modifiers switches the Armature modifier off; a second bake (check_input
    before the operator switches them on again) and deformer-add on the file still work."""
    arm = build_rig()
    build_limb_mesh(arm)
    arm.pose.bones["lower"].rotation_quaternion = axis_x(50)
    path = save(tmp_path / "skin.blend")
    ok(run("sdef-derive", blend=path))
    ok(run("deformer-add", blend=path))
    ok(run("deformer-bake", "--frames", 1, 2, "--mute-modifiers", blend=path))
    ok(run("deformer-bake", "--frames", 1, 3, "--mute-modifiers", blend=path))
    ok(run("deformer-bake", "--frames", 1, 3, "--source", "derived", blend=path))
    ok(run("deformer-remove", blend=path))


def test_bake_auto_without_sdef_data_is_bad_input(run, scene, tmp_path):
    """deformer-bake --source auto on a mesh with no SDEF data: input to fix, exit 2 (only Add
    derives what is missing)."""
    arm = build_rig()
    build_limb_mesh(arm)
    path = save(tmp_path / "skin.blend")
    result = run("deformer-bake", "--frames", 1, 2, blend=path)
    assert result.returncode == 2, result.stderr


@pytest.mark.parametrize("who", ["mesh", "armature"])
def test_a_flattened_object_is_one_error_line(run, scene, tmp_path, who):
    """A mesh (or armature) scaled to 0 on one axis: one error line, exit 2 (a singular matrix
    raised LinAlgError: a traceback)."""
    import bpy

    arm = build_rig()
    skin = build_limb_mesh(arm)
    (skin if who == "mesh" else arm).scale = (1.0, 1.0, 0.0)
    bpy.context.view_layer.update()
    path = save(tmp_path / "skin.blend")
    for command in ("sdef-derive", "deformer-add"):
        result = run(command, blend=path)
        line = one_error_line(result)
        assert result.returncode == 2 and "Skin" in line, (command, result.returncode, result.stderr[-800:])


def test_a_rig_that_is_not_editable_is_refused_in_one_line(run, scene, tmp_path):
    """A shot whose rig is a system (not editable) library override, as Blender's Make Library
    Override leaves a linked character's rig: apply and bake refuse with exit 2 and one line
    saying what to do (they crashed in Pose Mode's poll with a traceback, exit 1)."""
    import bpy

    from rigs import overridden_rig

    obj = build_rig()
    obj.pose.bones["spine"].rotation_quaternion = axis_x(60)
    obj.pose.bones["spine"].keyframe_insert("rotation_quaternion", frame=1)
    library = str(tmp_path / "character.blend")
    rig = overridden_rig(bpy.context.scene, obj, library, "CHAR", fully_editable=False)
    assert rig.override_library.is_system_override
    path = save(tmp_path / "shot.blend")
    before = path.read_bytes()
    for args in (("apply",), ("bake", "--frames", 1, 3)):
        result = run(*args, blend=path)
        assert result.returncode == 2, result.stdout + result.stderr
        line = one_error_line(result)     # (bake: the library's action is refused first)
        assert "is a library override that is not editable" in line or "comes from a library" in line, line
        assert "Traceback" not in result.stderr and path.read_bytes() == before


def test_workers_take_the_runs_session_options(addon):
    """A worker is started with the run's own -y/-Y and --factory-startup (before -c or --, not the
    command's arguments): the files' scripts and drivers run as in the run, the same preferences."""
    import importlib

    workers = importlib.import_module(addon.__name__ + ".cli.workers")
    argv = ["blender", "-b", "-y", "--factory-startup", "a.blend", "-c", "jointlimit", "apply", "-Y"]
    assert workers.session_options(argv) == ["-y", "--factory-startup"]
    assert workers.session_options(["blender", "-b", "--python", "x.py", "--", "-y"]) == []
    command = workers.worker_command("blender", ["apply"], "a.blend", "r.json", blender_argv=argv)
    assert command[:4] == ["blender", "-b", "-y", "--factory-startup"]


@pytest.mark.parametrize("flags, runs", [([], False), (["-y"], True)])
def test_jobs_run_the_files_scripts_as_the_run_does(batch_env, scene, tmp_path, flags, runs):
    """With -y a file's scripts (Rigify's rig_ui.py, Python drivers) run in every worker as in a
    one-file run; without it in none (workers were started without the run's -y: a rig with a
    Python driver was solved as if the driver were off, with a summary saying all was well)."""
    import bpy

    build_rig()
    text = bpy.data.texts.new("autorun.py")
    text.write("print('AUTORUN RAN')\n")
    text.use_module = True
    a, b = save(tmp_path / "a.blend"), save(tmp_path / "b.blend")
    result = subprocess.run([str(launcher()), "-b", *flags, "-c", "jointlimit", "apply", "--jobs", "2", "--no-save",
                             str(a), str(b)], env=batch_env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("AUTORUN RAN") == (2 if runs else 0), result.stdout


def test_deformer_bake_lbs_needs_no_sdef_data(run, scene, tmp_path):
    """``deformer-bake --mode lbs`` on a mesh without SDEF data bakes, as the operator does (the
    command's input check asked for SDEF data first: exit 2); SDEF still asks for it."""
    import bpy

    arm = build_rig()
    build_limb_mesh(arm)
    arm.pose.bones["lower"].rotation_quaternion = axis_x(50)
    path = save(tmp_path / "skin.blend")
    out = ok(run("deformer-bake", "--mode", "lbs", "--frames", 1, 2, blend=path))
    assert "of Skin (LBS) as shape-keys" in out
    load(path)
    assert {"jl_frame_0001", "jl_frame_0002"} <= set(bpy.data.objects["Skin"].data.shape_keys.key_blocks.keys())
    assert "no SDEF data" in one_error_line(run("deformer-bake", "--mode", "sdef", "--frames", 1, 2, blend=path))


def test_a_saving_run_leaves_no_thumbnail_of_its_temporary_file(batch_env, scene, tmp_path):
    """Blender's save writes a thumbnail of the file it saves into the user's thumbnail cache; a
    run saves a temporary file and renames it, so that thumbnail named a file that is gone (one
    orphan per save, where the file is not under the temporary folder, as on a render node)."""
    obj = build_rig()
    obj.pose.bones["spine"].rotation_quaternion = axis_x(60)
    (tmp_path / "files").mkdir()
    path = save(tmp_path / "files" / "shot 1.blend")
    env = dict(batch_env, TMPDIR=str(tmp_path / "tmp"), XDG_CACHE_HOME=str(tmp_path / "cache"))
    (tmp_path / "tmp").mkdir()
    ok(subprocess.run([str(launcher()), "-c", "jointlimit", "apply", str(path)], env=env, capture_output=True,
                      text=True, timeout=300))
    assert angle_of(rotation(load(path), "spine")) == pytest.approx(20.0, abs=1e-3)
    made = list((tmp_path / "cache").rglob("*.png"))
    assert not [p for p in made if b".jointlimit-" in p.read_bytes()], made     # (the URI is text in the PNG)


def test_info_summary_counts_invalid_limits_and_the_armatures_with_limits(run, scene, tmp_path):
    """The summary says how many limits have invalid settings, and in how many of the scene's
    armatures the limited bones are (it said '1 limited bone in 2 armatures' of a rig and a
    meta-rig without limits, and counted invalid limits as any others)."""
    import bpy

    obj = build_rig()
    bpy.data.objects.new("Meta", bpy.data.armatures.new("Meta"))
    bpy.context.scene.collection.objects.link(bpy.data.objects["Meta"])
    s = obj.pose.bones["spine"].jointlimit
    s.swing_x_min = s.swing_x_max
    path = save(tmp_path / "two.blend")
    result = run("info", blend=path)
    assert result.returncode == 0, result.stderr
    assert "summary: 1 limited bone (1 with invalid settings) in 1 of 2 armatures, 0 deformers" in result.stdout


def test_limb_ik_keys_each_row_where_time_stretching_shows_its_frame(run, scene, tmp_path):
    """With Time Stretching (Old 50, New 100: frame 8 shows the animation's 4) the solved pose of
    each row is keyed at the time its frame is shown (it was keyed at the frame number, which plays
    on another frame)."""
    import bpy

    build_rig()
    bpy.context.scene.render.frame_map_old, bpy.context.scene.render.frame_map_new = 50, 100
    bpy.context.scene.tool_settings.use_keyframe_insert_auto = True     # (saved on: keyed only where the rows say)
    path = save(tmp_path / "stretched.blend")
    targets = tmp_path / "hand.csv"
    rows = [(2, 0.5, 0.3, 2.5), (8, -0.4, 0.6, 2.0)]
    targets.write_text("frame,x,y,z\n" + "".join(f"{f},{x},{y},{z}\n" for f, x, y, z in rows))
    ok(run("limb-ik", "--bone", "hand", "--targets", targets, blend=path))
    obj = load(path)
    for frame, x, y, z in rows:
        bpy.context.scene.frame_set(frame)
        assert (obj.pose.bones["hand"].head - type(obj.location)((x, y, z))).length < 1e-4, frame
    action = obj.animation_data.action
    times = {round(k.co[0], 3) for fc in compat_fcurves(action, obj) for k in fc.keyframe_points}
    assert times == {1.0, 4.0}, times   # (Auto Keying keyed the frame numbers 2 and 8 too)


def compat_fcurves(action, obj):
    import importlib

    from conftest import ADDON_MODULE

    compat = importlib.import_module(ADDON_MODULE + ".compat")
    return compat.action_fcurves(action, obj.animation_data.action_slot)
