"""JointLimit batch runs: every pipeline operator of the add-on, headless, on one or many .blend files.

    blender -b scene.blend --python scripts/jointlimit_batch.py -- <command> [options]
    blender -b --python scripts/jointlimit_batch.py -- <command> [options] a.blend b.blend --jobs 2

Run ``... -- --help`` for the commands and ``... -- <command> --help`` for their options.
"""

import argparse
import concurrent.futures
import contextlib
import csv
import importlib
import json
import math
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import threading
import tomllib

import bpy

SCRIPT = pathlib.Path(__file__).resolve()
ROOT = SCRIPT.parent.parent
ADDON_ID = "jointlimit_addon"
ADDON_ENV = "JOINTLIMIT_BATCH_ADDON"  # the parent's add-on module, for --jobs workers
PROG = "blender -b scene.blend --python jointlimit_batch.py --"
ERROR_PREFIX = "jointlimit_batch: error:"
SUMMARY_PREFIX = "summary:"
STATE = {"addon": None, "unregister": None}  # the add-on's module name, once ensure_addon() found it

EPILOG = """\
files:
  The .blend is the one Blender opened (blender -b scene.blend ...), or FILE.blend arguments after
  the command's options. Several files run in parallel worker processes (--jobs N, default 1), each
  started with the same Blender ($JOINTLIMIT_BLENDER, set by the embedded launcher, or
  bpy.app.binary_path); each file's result is reported and any failure makes the exit code non-zero.

saving:
  After success the result is written atomically over the input (a temporary file in the same
  folder, then os.replace), or to --output PATH / --output-dir DIR; --no-save is a dry run. Nothing
  is written when a command fails. 'info' never saves.

the add-on:
  1. an enabled add-on whose module ends with 'jointlimit_addon' (e.g. the installed extension
     bl_ext.user_default.jointlimit_addon) is used as it is;
  2. else the built dist/jointlimit_addon-*.zip of this repository is installed into the
     'user_default' extension repository and enabled;
  3. else the add-on is registered from the repository's source (jointlimit_addon/).

angles are in degrees; frames are whole numbers.
exit codes: 0 success, 1 runtime failure, 2 usage or bad input (one line on stderr).
"""


class UsageError(Exception):
    """Bad command line or bad input: exit code 2."""


class BatchError(Exception):
    """The work failed: exit code 1."""


def say(*parts):
    print(*parts, flush=True)


# --- command line ---------------------------------------------------------------------------------


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(f"{message} (see '{self.prog} --help')")


def frame_range(parser):
    parser.add_argument("--frames", nargs=2, type=int, metavar=("START", "END"),
                        help="frame range (default: the scene's)")


def armature_option(parser):
    parser.add_argument("--armature", help="armature object (default: the active or the only armature)")


def bones_option(parser, what):
    parser.add_argument("--bones", type=name_list, metavar="A,B,...",
                        help=f"comma-separated bone names (default: {what})")


def mesh_option(parser):
    parser.add_argument("--mesh", type=name_list, metavar="A,B,...",
                        help="comma-separated mesh objects (default: every mesh with an Armature modifier)")


def name_list(text):
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("expected one or more comma-separated names")
    return names


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def ik_options(parser, tip):
    armature_option(parser)
    parser.add_argument("--bone", required=True, help=tip)
    parser.add_argument("--targets", required=True, metavar="FILE",
                        help="JSON (list of objects) or CSV (header row) with one target per frame")
    parser.add_argument("--space", choices=("armature", "world"), default="armature",
                        help="space of the target positions (default: armature)")
    parser.add_argument("--no-limits", action="store_true", help="ignore the bones' joint limits")


def add_apply(p):
    armature_option(p)
    bones_option(p, "every limited bone")


def add_bake(p):
    armature_option(p)
    bones_option(p, "every limited bone")
    frame_range(p)


def add_convert(p):
    armature_option(p)
    bones_option(p, "every bone")
    p.add_argument("--source", choices=("auto", "limit-rotation", "ik-limits"), default="auto",
                   help="Limit Rotation constraints (local space) or IK limits; auto: the constraint if "
                        "there is one (default: auto)")
    p.add_argument("--old-constraints", choices=("keep", "mute", "remove"), default="mute",
                   help="what happens to converted constraints (default: mute)")


def add_to_constraints(p):
    armature_option(p)
    bones_option(p, "every limited bone")
    p.add_argument("--disable-limits", action="store_true", help="turn the converted joint limits off")


def add_limb_ik(p):
    ik_options(p, "the end bone (hand/foot) of three connected bones")
    p.add_argument("--hinge-axis", choices=("AUTO", "X", "NEG_X", "Z", "NEG_Z"), default="AUTO",
                   help="axis of the middle joint (default: from the rest bend)")


def add_ccd(p):
    ik_options(p, "the tip bone of the chain")
    p.add_argument("--chain-length", type=int, default=0, help="bones in the chain (default 0: up to the root)")
    p.add_argument("--iterations", type=positive_int, default=1000, help="most CCD sweeps (default 1000)")


def add_motion(p):
    armature_option(p)
    bones_option(p, "every bone with two or more rotation keys")
    frame_range(p)
    p.add_argument("--profile", choices=("min-acceleration", "min-jerk"), default="min-acceleration",
                   help="what the motion minimises (default: min-acceleration)")
    p.add_argument("--channels", choices=("swing-twist", "euler"), default="swing-twist",
                   help="interpolated numbers (default: swing-twist)")
    p.add_argument("--step", type=positive_int, default=1, help="key every Nth frame (default 1)")
    p.add_argument("--no-via-points", action="store_true", help="stop at every key between the ends")


MODES = ("lbs", "sbs", "sdef", "bezier")
SOURCES = ("auto", "mmd", "derived")


def add_deformer_add(p, mode_default="sdef", mode_help="sdef"):
    mesh_option(p)
    p.add_argument("--mode", choices=MODES, default=mode_default,
                   help=f"skinning of two-bone vertices (default: {mode_help})")
    p.add_argument("--source", choices=SOURCES, default="auto", help="where C, R0, R1 come from (default: auto)")
    p.add_argument("--blend", type=float, default=0.5, help="SDEF blend s in [0, 1] (default 0.5)")


def add_deformer_bake(p):
    add_deformer_add(p, None, "the mesh's deformer mode, else sdef")
    frame_range(p)
    p.add_argument("--as", dest="bake_as", choices=("shape-keys", "meshes"), default="shape-keys",
                   help="one shape key or one mesh per frame (default: shape-keys)")
    p.add_argument("--mute-modifiers", action="store_true",
                   help="turn off the Armature modifier and the ones after it")


def add_sdef_derive(p):
    mesh_option(p)
    p.add_argument("--centre", choices=("project", "joint"), default="project", help="rotation centre C")
    p.add_argument("--boundary", choices=("fit", "extent"), default="fit", help="how R0, R1 are found")
    p.add_argument("--pad", type=float, default=0.0, help="widen the blend zone by this fraction")
    # issue 20: derived parameters also in mmd_tools' layout (shape keys mmd_sdef_c/r0/r1)
    p.add_argument("--write-mmd", action="store_true",
                   help="also write them as mmd_tools SDEF shape keys (mmd_sdef_c, mmd_sdef_r0, mmd_sdef_r1)")


def add_info(p):
    armature_option(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")


def build_parser():
    parser = Parser(prog=PROG, description="Run JointLimit operators on .blend files, headless.",
                    epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="<command>", required=True)
    for name, (help_text, add, _run, saves) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text, epilog=EPILOG,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        add(p)
        p.add_argument("files", nargs="*", metavar="FILE.blend",
                       help="files to process (default: the file Blender opened)")
        p.add_argument("--jobs", type=positive_int, default=1, help="parallel worker processes (default 1)")
        p.add_argument("--worker-file", help=argparse.SUPPRESS)
        if saves:
            out = p.add_mutually_exclusive_group()
            out.add_argument("--output", metavar="PATH", help="write the result here (one input file only)")
            out.add_argument("--output-dir", metavar="DIR", help="write DIR/<input name> instead")
            out.add_argument("--no-save", action="store_true", help="dry run: change nothing on disk")
    return parser


# --- input files ----------------------------------------------------------------------------------

TARGET_KEYS = ("frame", "x", "y", "z")


def read_targets(path, with_swivel):
    """Target rows ``[(frame, (x, y, z), swivel_degrees or None)]`` sorted by frame; ``UsageError``
    naming the file and row for anything malformed."""
    try:
        text = pathlib.Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read targets file {path}: {exc}") from None
    is_json = path.lower().endswith(".json") or (not path.lower().endswith(".csv") and text.lstrip()[:1] in "[{")
    raw = _json_rows(path, text) if is_json else _csv_rows(path, text)
    allowed = set(TARGET_KEYS) | ({"swivel"} if with_swivel else set())
    rows, seen = [], set()
    for where, record in raw:
        unknown = sorted(set(record) - allowed)
        if unknown:
            raise UsageError(f"{path} {where}: unknown column {unknown[0]!r} (expected {', '.join(sorted(allowed))})")
        missing = [k for k in TARGET_KEYS if record.get(k) in (None, "")]
        if missing:
            raise UsageError(f"{path} {where}: missing {missing[0]!r}")
        frame = _number(path, where, "frame", record["frame"])
        if frame != int(frame):
            raise UsageError(f"{path} {where}: frame must be a whole number, got {record['frame']!r}")
        frame = int(frame)
        if frame in seen:
            raise UsageError(f"{path} {where}: frame {frame} appears twice")
        seen.add(frame)
        xyz = tuple(_number(path, where, k, record[k]) for k in "xyz")
        swivel = record.get("swivel")
        swivel = None if swivel in (None, "") else _number(path, where, "swivel", swivel)
        rows.append((frame, xyz, swivel))
    if not rows:
        raise UsageError(f"{path}: no targets in the file")
    return sorted(rows)


def _number(path, where, key, value):
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise UsageError(f"{path} {where}: {key} is not a number: {value!r}") from None
    if isinstance(value, bool) or not math.isfinite(number):
        raise UsageError(f"{path} {where}: {key} must be a finite number, got {value!r}")
    return number


def _json_rows(path, text):
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(data, list):
        raise UsageError(f"{path}: expected a JSON list of objects with keys frame, x, y, z")
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            raise UsageError(f"{path} item {i}: expected an object with keys frame, x, y, z")
    return [(f"item {i}", {str(k).lower(): v for k, v in item.items()}) for i, item in enumerate(data)]


def _csv_rows(path, text):
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    reader = csv.reader(lines)
    try:
        header = [h.strip().lower() for h in next(reader)]
    except StopIteration:
        raise UsageError(f"{path}: empty file (expected a header row: frame,x,y,z)") from None
    except csv.Error as exc:
        raise UsageError(f"{path}: not valid CSV: {exc}") from None
    if len(set(header)) != len(header) or "" in header:
        raise UsageError(f"{path}: bad header row {','.join(header)!r} (expected e.g. frame,x,y,z)")
    rows = []
    for n, cells in enumerate(reader, start=2):
        if len(cells) != len(header):
            raise UsageError(f"{path} row {n}: {len(cells)} values for {len(header)} columns")
        rows.append((f"row {n}", {h: c.strip() for h, c in zip(header, cells)}))
    return rows


# --- atomic save ----------------------------------------------------------------------------------


def atomic_save(target, writer):
    """Write ``target`` through ``writer(temporary path)`` in the same folder, then ``os.replace``.

    If anything fails, ``target`` is untouched and the temporary file is removed."""
    target = os.path.abspath(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp.blend",
                               dir=os.path.dirname(target))
    os.close(fd)
    os.unlink(tmp)  # Blender would otherwise back up the empty placeholder as .blend1
    try:
        writer(tmp)
        if not os.path.isfile(tmp):
            raise BatchError(f"saving wrote nothing to {tmp}")
        if os.path.exists(target):
            shutil.copymode(target, tmp)
        os.replace(tmp, target)
    finally:
        for leftover in (tmp, tmp + "@", tmp + "1"):
            if os.path.exists(leftover):
                os.unlink(leftover)


def blender_writer(path):
    try:
        bpy.ops.wm.save_as_mainfile(filepath=path, copy=True, check_existing=False)
    except RuntimeError as exc:
        raise BatchError(f"cannot save {path}: {report_text(exc)}") from None


def output_path(args, source):
    if getattr(args, "no_save", True):
        return None
    if args.output:
        path = os.path.abspath(args.output)
    elif args.output_dir:
        path = os.path.join(os.path.abspath(args.output_dir), os.path.basename(source))
    else:
        path = source
    if not path.endswith(".blend"):
        raise UsageError(f"output {path} must end with .blend")
    if not os.path.isdir(os.path.dirname(path)):
        raise UsageError(f"output folder {os.path.dirname(path)} does not exist")
    return path


# --- the add-on -----------------------------------------------------------------------------------


def ensure_addon():
    """The module name of the JointLimit add-on, made available as the epilog describes."""
    if hasattr(bpy.types, "POSE_OT_jointlimit_apply"):
        for name in bpy.context.preferences.addons.keys():
            if name == ADDON_ID or name.endswith("." + ADDON_ID):
                importlib.import_module(name)
                return name
    import addon_utils

    hint = os.environ.get(ADDON_ENV)
    if hint == ADDON_ID:
        return register_source()
    if hint and addon_utils.enable(hint, default_set=True, handle_error=lambda exc: None):
        return hint
    zips = built_zips()
    if zips:
        try:
            result = bpy.ops.extensions.package_install_files(filepath=str(zips[0]), repo="user_default",
                                                              enable_on_install=True)
        except RuntimeError as exc:
            raise BatchError(f"cannot install {zips[0]}: {report_text(exc)}") from None
        name = f"bl_ext.user_default.{ADDON_ID}"
        if result == {"FINISHED"} and name in bpy.context.preferences.addons:
            say(f"add-on: installed {zips[0].name}")
            return name
    return register_source()


def built_zips():
    """``dist/jointlimit_addon-*.zip`` of this repository, the manifest's version first."""
    zips = sorted((ROOT / "dist").glob(f"{ADDON_ID}-*.zip"), key=lambda p: p.stat().st_mtime, reverse=True)
    try:
        version = tomllib.loads((ROOT / "blender_manifest.toml").read_text())["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return zips
    return sorted(zips, key=lambda p: p.name != f"{ADDON_ID}-{version}.zip")


def register_source():
    if not (ROOT / ADDON_ID / "__init__.py").is_file():
        raise BatchError(f"the JointLimit add-on is not enabled, and neither {ROOT / 'dist'} nor "
                         f"{ROOT / ADDON_ID} has it")
    sys.path.insert(0, str(ROOT))
    module = importlib.import_module(ADDON_ID)
    if not hasattr(bpy.types, "POSE_OT_jointlimit_apply"):
        module.register()
        STATE["unregister"] = module.unregister  # Blender only unregisters add-ons it enabled itself
    say(f"add-on: registered from source {ROOT / ADDON_ID}")
    return ADDON_ID


def addon_part(name):
    return importlib.import_module(f"{STATE['addon']}.{name}")


def require_operator(type_name, idname):
    if not hasattr(bpy.types, type_name):
        raise BatchError(f"this JointLimit add-on has no operator {idname} (update the add-on)")


# --- scene helpers --------------------------------------------------------------------------------


def report_text(exc):
    """The first line of an operator's error report, without Blender's 'Error: ' prefix."""
    line = (str(exc).strip().splitlines() or ["unknown error"])[0]
    return line.split(": ", 1)[1] if line.startswith(("Error: ", "Warning: ")) else line


def run_op(op, label, **props):
    try:
        result = op(**props)
    except RuntimeError as exc:
        raise BatchError(f"{label}: {report_text(exc)}") from None
    if "FINISHED" not in result:
        raise BatchError(f"{label}: the operator was cancelled")


def scene_objects(kind):
    return [o for o in bpy.context.scene.objects if o.type == kind]


def pick_armature(name):
    arms = scene_objects("ARMATURE")
    if name is not None:
        match = [o for o in arms if o.name == name]
        if not match:
            names = ", ".join(o.name for o in arms) or "none"
            raise UsageError(f"no armature {name!r} in the scene (armatures: {names})")
        return match[0]
    active = bpy.context.view_layer.objects.active
    if active is not None and active.type == "ARMATURE":
        return active
    if len(arms) == 1:
        return arms[0]
    if not arms:
        raise UsageError("the scene has no armature")
    raise UsageError(f"several armatures ({', '.join(o.name for o in arms)}): choose one with --armature")


def pick_meshes(names, exclude=lambda obj: False):
    meshes = scene_objects("MESH")
    if names:
        by_name = {o.name: o for o in meshes}
        for n in names:
            if n not in by_name:
                raise UsageError(f"no mesh object {n!r} in the scene")
        return [by_name[n] for n in names]
    helpers = {deformer_of(o)[1] for o in meshes} - {None}
    found = [o for o in meshes
             if any(m.type == "ARMATURE" for m in o.modifiers) and o not in helpers and not exclude(o)]
    if not found:
        raise UsageError("no mesh with an Armature modifier to work on; name one with --mesh")
    return found


def pose_bone(obj, name):
    pb = obj.pose.bones.get(name)
    if pb is None:
        raise UsageError(f"no bone {name!r} in armature {obj.name!r}")
    return pb


@contextlib.contextmanager
def active_in_mode(obj, mode):
    """``obj`` active (and visible) in ``mode``; the previous active object, mode and visibility return."""
    layer = bpy.context.view_layer
    if obj.name not in layer.objects:
        raise UsageError(f"{obj.name!r} is not in the active view layer")
    previous = layer.objects.active
    previous_mode = previous.mode if previous is not None else "OBJECT"
    hidden, hidden_viewport = obj.hide_get(), obj.hide_viewport
    if previous is not None and previous.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    obj.hide_viewport = False
    obj.hide_set(False)
    layer.objects.active = obj
    if mode != "OBJECT":
        bpy.ops.object.mode_set(mode=mode)
    try:
        yield obj
    finally:
        if obj.mode != "OBJECT":
            bpy.ops.object.mode_set(mode="OBJECT")
        obj.hide_set(hidden)
        obj.hide_viewport = hidden_viewport
        layer.objects.active = previous
        if previous is not None and previous_mode != "OBJECT":
            with contextlib.suppress(RuntimeError):
                bpy.ops.object.mode_set(mode=previous_mode)


@contextlib.contextmanager
def bone_selection(obj, names, active=None):
    """Select exactly the bones ``names`` (all if ``None``); restore the selection afterwards."""
    bones = obj.pose.bones
    compat = addon_part("compat")
    before = {pb.name: compat.pose_bone_selected(pb) for pb in bones}
    active_before = obj.data.bones.active
    wanted = set(before) if names is None else set(names)
    try:
        for pb in bones:
            compat.select_pose_bone(pb, pb.name in wanted)
        if active is not None:
            obj.data.bones.active = obj.data.bones[active]
        yield
    finally:
        for pb in bones:
            compat.select_pose_bone(pb, before[pb.name])
        obj.data.bones.active = active_before


@contextlib.contextmanager
def frame_progress(label, total):
    """Print ``label: frames done/total`` about ten times while operators step through frames."""
    done = [0]
    every = max(1, total // 10)

    def on_frame(scene, *_):
        done[0] += 1
        if done[0] <= total and (done[0] % every == 0 or done[0] == total):
            say(f"{label}: frames {done[0]}/{total}")

    bpy.app.handlers.frame_change_post.append(on_frame)
    try:
        yield
    finally:  # a handler left behind makes Blender 4.5's Python module hang at exit
        bpy.app.handlers.frame_change_post.remove(on_frame)


def frames_of(args, minimum):
    scene = bpy.context.scene
    start, end = args.frames or (scene.frame_start, scene.frame_end)
    if end - start + 1 < minimum:
        need = "after" if minimum > 1 else "at or after"
        raise UsageError(f"bad frame range {start}..{end}: END must be {need} START")
    return start, end


def check_bones(obj, names):
    for name in names or ():
        pose_bone(obj, name)


def rotation_state(obj):
    return {pb.name: (tuple(pb.rotation_quaternion), tuple(pb.rotation_euler), tuple(pb.rotation_axis_angle))
            for pb in obj.pose.bones}


def limited(obj, names):
    return [pb.name for pb in obj.pose.bones if pb.jointlimit.enabled and (names is None or pb.name in names)]


# --- commands -------------------------------------------------------------------------------------


def cmd_info(args):
    bone_limits = addon_part("bone_limits")
    arms = [pick_armature(args.armature)] if args.armature else scene_objects("ARMATURE")
    bones = []
    for arm in arms:
        for pb in arm.pose.bones:
            s = pb.jointlimit
            if s.enabled:
                smooth = s.kind == "SWING_TWIST" and s.shape in ("ELLIPSE", "OVAL", "SUPERELLIPSE")
                bones.append({"armature": arm.name, "bone": pb.name, "kind": s.kind,
                              "shape": s.shape if s.kind == "SWING_TWIST" else "-", "fit": s.fit if smooth else "-",
                              "ranges": ranges_text(s),
                              "problem": bone_limits.settings_error(s) or bone_limits.rest_pose_message(s) or ""})
    deformers = deformer_rows()
    if args.json:
        say(json.dumps({"file": bpy.data.filepath, "limits": bones, "deformers": deformers}, indent=1))
    else:
        say(table(["ARMATURE", "BONE", "KIND", "SHAPE", "FIT", "RANGES (deg)", "PROBLEM"],
                  [list(b.values()) for b in bones]) if bones else "no limited bones")
        say(table(["MESH", "MODIFIER", "MODE"], [list(d.values()) for d in deformers])
            if deformers else "no JointLimit deformers")
    return f"{len(bones)} limited bones in {len(arms)} armatures, {len(deformers)} deformers", False


def deg_range(lo, hi):
    return f"{math.degrees(lo):.1f}..{math.degrees(hi):.1f}"


def ranges_text(s):
    twist = ""
    if s.fix_twist and s.kind == "SWING_TWIST":
        twist = " twist fixed"
    elif s.use_twist_limit and s.kind in ("SWING_TWIST", "QUAT_SWING"):
        twist = f" twist {deg_range(s.twist_min, s.twist_max)}"
    if s.kind == "SWING_TWIST":
        if s.shape == "POLYGON":
            return f"outline {len(s.outline)} points" + twist
        return f"x {deg_range(s.swing_x_min, s.swing_x_max)} z {deg_range(s.swing_z_min, s.swing_z_max)}" + twist
    if s.kind == "HINGE":
        return f"{s.hinge_axis} {deg_range(s.hinge_min, s.hinge_max)}"
    if s.kind == "QUAT_SWING":
        return f"swing <= {math.degrees(s.quat_swing_max):.1f}" + twist
    return s.euler_order + "".join(f" {a} {deg_range(lo, hi)}" for a, lo, hi in zip("xyz", s.euler_min, s.euler_max))


def deformer_rows():
    try:
        deformer = addon_part("deformer")
    except ImportError:
        return []
    rows = []
    for obj in scene_objects("MESH"):
        mod, _ = deformer.find(obj)
        if mod is not None:
            rows.append({"mesh": obj.name, "modifier": mod.name, "mode": deformer.get_mode(mod)})
    return rows


def table(header, rows):
    rows = [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [header, *rows])


def cmd_apply(args):
    arm = pick_armature(args.armature)
    check_bones(arm, args.bones)
    targets = limited(arm, args.bones)
    if not targets:
        raise UsageError(f"no limited bones to clamp in {arm.name!r}" + (" among --bones" if args.bones else ""))
    before = rotation_state(arm)
    with active_in_mode(arm, "POSE"), bone_selection(arm, args.bones):
        run_op(bpy.ops.pose.jointlimit_apply, "apply", all_bones=args.bones is None)
    moved = [n for n, v in rotation_state(arm).items() if v != before[n]]
    return f"clamped {len(moved)} of {len(targets)} limited bones of {arm.name!r}", True


def cmd_bake(args):
    arm = pick_armature(args.armature)
    check_bones(arm, args.bones)
    start, end = frames_of(args, 1)
    targets = limited(arm, args.bones)
    if not targets:
        raise UsageError(f"no limited bones to bake in {arm.name!r}")
    with active_in_mode(arm, "POSE"), bone_selection(arm, args.bones), frame_progress("bake", end - start + 1):
        run_op(bpy.ops.pose.jointlimit_bake, "bake", frame_start=start, frame_end=end, all_bones=args.bones is None)
    return f"baked {len(targets)} limited bones of {arm.name!r} over frames {start}..{end}", True


def cmd_convert(args):
    arm = pick_armature(args.armature)
    check_bones(arm, args.bones)
    before = set(limited(arm, None))
    with active_in_mode(arm, "POSE"), bone_selection(arm, args.bones):
        run_op(bpy.ops.pose.jointlimit_from_constraints, "convert", source=args.source.upper().replace("-", "_"),
               old_constraints=args.old_constraints.upper(), all_bones=args.bones is None)
    new = sorted(set(limited(arm, None)) - before)
    return f"converted constraints of {arm.name!r}: {len(new)} newly limited bones, old constraints: " \
           f"{args.old_constraints}", True


def cmd_to_constraints(args):
    arm = pick_armature(args.armature)
    check_bones(arm, args.bones)
    targets = limited(arm, args.bones)
    if not targets:
        raise UsageError(f"no limited bones to convert in {arm.name!r}")
    with active_in_mode(arm, "POSE"), bone_selection(arm, args.bones):
        run_op(bpy.ops.pose.jointlimit_to_constraints, "to-constraints", all_bones=args.bones is None,
               disable_limits=args.disable_limits)
    return f"added Limit Rotation constraints to {len(targets)} bones of {arm.name!r}", True


def ik_chain(args, arm, tip):
    """The bones the IK command writes and keys, root first; bad chains are bad input."""
    try:
        if args.command == "limb-ik":
            return list(addon_part("operators.limb_ik").limb_bones(tip)[:2])
        if args.chain_length < 0:
            raise ValueError("--chain-length must be 0 or more")
        return addon_part("operators.ccd_ik").chain_bones(tip, args.chain_length, False)
    except ValueError as exc:
        raise UsageError(f"bone {tip.name!r}: {exc}") from None


def run_ik(args):
    from mathutils import Vector

    rows = read_targets(args.targets, with_swivel=args.command == "limb-ik")
    arm = pick_armature(args.armature)
    tip = pose_bone(arm, args.bone)
    chain = ik_chain(args, arm, tip)
    scene = bpy.context.scene
    original_frame = scene.frame_current
    bone_limits = addon_part("bone_limits")
    worst = 0.0
    with active_in_mode(arm, "POSE"), bone_selection(arm, [tip.name], active=tip.name):
        try:
            for i, (frame, xyz, swivel) in enumerate(rows, start=1):
                scene.frame_set(frame)
                target = Vector(xyz)
                if args.space == "world":
                    target = arm.matrix_world.inverted() @ target
                label = f"{args.command} frame {frame}"
                if args.command == "limb-ik":
                    run_op(bpy.ops.pose.jointlimit_limb_ik, label, target=target, use_limits=not args.no_limits,
                           swivel=math.radians(swivel or 0.0), hinge_axis=args.hinge_axis)
                else:
                    run_op(bpy.ops.pose.jointlimit_ccd_ik, label, target=target, use_limits=not args.no_limits,
                           chain_length=args.chain_length, iterations=args.iterations)
                for pb in chain:
                    pb.keyframe_insert(data_path=bone_limits.rotation_path(pb)[0], frame=frame, group=pb.name)
                bpy.context.view_layer.update()
                reached = tip.head if args.command == "limb-ik" else tip.tail
                worst = max(worst, (reached - target).length)
                if i % max(1, len(rows) // 10) == 0 or i == len(rows):
                    say(f"{args.command}: frames {i}/{len(rows)}")
        finally:
            scene.frame_set(original_frame)
    names = ", ".join(pb.name for pb in chain)
    return f"keyed {len(rows)} frames of {names} in {arm.name!r}; largest distance to target {worst:.3g}", True


def cmd_motion(args):
    arm = pick_armature(args.armature)
    check_bones(arm, args.bones)
    start, end = frames_of(args, 2)
    animation, bone_limits = addon_part("animation"), addon_part("bone_limits")
    names = args.bones or [pb.name for pb in arm.pose.bones]
    keyed = [n for n in names
             if len(animation.keyed_frames(arm, arm.pose.bones[n], bone_limits.rotation_path(arm.pose.bones[n])[0],
                                           start, end)) >= 2]
    if not keyed:
        raise UsageError(f"no bone of {arm.name!r} has two or more rotation keys in frames {start}..{end}")
    with active_in_mode(arm, "POSE"), bone_selection(arm, keyed):
        run_op(bpy.ops.pose.jointlimit_motion, "motion", frame_start=start, frame_end=end,
               profile=args.profile.upper().replace("-", "_"), channels=args.channels.upper().replace("-", "_"),
               step=args.step, use_via_points=not args.no_via_points)
    return f"smoothed {len(keyed)} bones of {arm.name!r} over frames {start}..{end} ({args.profile})", True


def deformer_of(obj):
    """``(modifier, helper object)`` of the JointLimit deformer on ``obj``, or ``(None, None)``."""
    try:
        return addon_part("deformer").find(obj)
    except ImportError:
        return None, None


def has_deformer(obj):
    return deformer_of(obj)[0] is not None


def cmd_deformer_add(args):
    require_operator("OBJECT_OT_jointlimit_deformer_add", "object.jointlimit_deformer_add")
    meshes = pick_meshes(args.mesh, exclude=has_deformer)
    for obj in meshes:
        with active_in_mode(obj, "OBJECT"):
            run_op(bpy.ops.object.jointlimit_deformer_add, f"deformer-add {obj.name!r}", mode=args.mode.upper(),
                   source=args.source.upper(), blend=args.blend, use_selected=False)
    return f"added the {args.mode.upper()} deformer to {', '.join(o.name for o in meshes)}", True


def cmd_deformer_bake(args):
    require_operator("OBJECT_OT_jointlimit_deformer_bake", "object.jointlimit_deformer_bake")
    meshes = pick_meshes(args.mesh)
    start, end = frames_of(args, 1)
    done = []
    for obj in meshes:
        mode = bake_mode(obj, args.mode)
        with active_in_mode(obj, "OBJECT"), frame_progress(f"deformer-bake {obj.name}", end - start + 1):
            run_op(bpy.ops.object.jointlimit_deformer_bake, f"deformer-bake {obj.name!r}", use_scene_range=False,
                   frame_start=start, frame_end=end, mode=mode, source=args.source.upper(), blend=args.blend,
                   output=args.bake_as.upper().replace("-", "_"), mute_modifiers=args.mute_modifiers,
                   use_selected=False)
        done.append(f"{obj.name} ({mode})")
    return f"baked frames {start}..{end} of {', '.join(done)} as {args.bake_as}", True


def bake_mode(obj, mode):
    if mode:
        return mode.upper()
    mod = deformer_of(obj)[0]
    return addon_part("deformer").get_mode(mod) if mod is not None else "SDEF"


def cmd_sdef_derive(args):
    require_operator("OBJECT_OT_jointlimit_sdef_derive", "object.jointlimit_sdef_derive")
    meshes = pick_meshes(args.mesh)
    for obj in meshes:
        with active_in_mode(obj, "OBJECT"):
            run_op(bpy.ops.object.jointlimit_sdef_derive, f"sdef-derive {obj.name!r}", centre=args.centre,
                   boundary=args.boundary, pad=args.pad, write_mmd=args.write_mmd, use_selected=False)
    return f"derived SDEF parameters of {', '.join(o.name for o in meshes)}", True


# name: (help, options, run, saves) -- run(args) returns (summary, changed)
COMMANDS = {
    "info": ("print the rig's joint limits and deformers", add_info, cmd_info, False),
    "apply": ("clamp the current pose to the joint limits", add_apply, cmd_apply, True),
    "bake": ("key the clamped rotation of limited bones on every frame", add_bake, cmd_bake, True),
    "convert": ("Limit Rotation constraints / IK limits -> joint limits", add_convert, cmd_convert, True),
    "to-constraints": ("joint limits -> Limit Rotation constraints", add_to_constraints, cmd_to_constraints, True),
    "limb-ik": ("analytic limb IK to targets from a file, keyed per frame", add_limb_ik, run_ik, True),
    "ccd": ("CCD IK of a chain to targets from a file, keyed per frame", add_ccd, run_ik, True),
    "motion": ("smooth, limit-respecting motion between key poses", add_motion, cmd_motion, True),
    "deformer-add": ("add the SDEF/SBS/Bezier deformer to meshes", add_deformer_add, cmd_deformer_add, True),
    "deformer-bake": ("bake the deformer per frame (shape keys or meshes)", add_deformer_bake, cmd_deformer_bake,
                      True),
    "sdef-derive": ("derive SDEF parameters C, R0, R1 for meshes", add_sdef_derive, cmd_sdef_derive, True),
}


# --- one file, many files -------------------------------------------------------------------------


def process_current(args):
    """Run the command on the open file and save it; returns the summary line."""
    source = bpy.data.filepath
    _help, _add, run, saves = COMMANDS[args.command]
    if not source and args.command != "info":
        raise UsageError("no .blend file: give one to Blender (blender -b scene.blend ...) or after the command")
    target = output_path(args, source) if saves else None
    STATE["addon"] = STATE["addon"] or ensure_addon()
    summary, changed = run(args)
    if not saves:
        return summary
    if target is None:
        return summary + "; dry run, not saved"
    atomic_save(target, blender_writer)
    return summary + f"; saved {target}"


def open_blend(path):
    if not path.endswith(".blend") or not os.path.isfile(path):
        raise UsageError(f"cannot read {path}: not an existing .blend file")
    try:
        bpy.ops.wm.open_mainfile(filepath=os.path.abspath(path), load_ui=False)
    except RuntimeError as exc:
        raise UsageError(f"cannot read {path}: {report_text(exc)}") from None


def worker_argv(argv, path):
    return ["-b", "--python-exit-code", "1", "--python", str(SCRIPT), "--", *argv, "--worker-file", path]


def run_worker(blender, argv, path, env, lock):
    """Run one file in its own Blender; returns ``(exit code, summary or error line)``."""
    name = os.path.basename(path)
    proc = subprocess.Popen([blender, *worker_argv(argv, path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    errors = []
    reader = threading.Thread(target=lambda: errors.extend(proc.stderr))
    reader.start()
    summary = ""
    for line in proc.stdout:
        line = line.rstrip("\n")
        if line.startswith(SUMMARY_PREFIX):
            summary = line[len(SUMMARY_PREFIX):].strip()
        with lock:
            say(f"[{name}] {line}")
    code = proc.wait()
    reader.join()
    if code == 0:
        return 0, summary
    ours = [e.strip() for e in errors if e.startswith(ERROR_PREFIX)]
    last = ours[-1][len(ERROR_PREFIX):].strip() if ours else next((e.strip() for e in reversed(errors) if e.strip()),
                                                                  "no error message")
    return code, last


def process_many(args, argv):
    if bpy.data.filepath:
        raise UsageError("give the .blend files either to Blender or after the command, not both")
    if getattr(args, "output", None):
        raise UsageError("--output takes one input file; use --output-dir with several")
    for path in args.files:
        if not path.endswith(".blend") or not os.path.isfile(path):
            raise UsageError(f"cannot read {path}: not an existing .blend file")
    blender = os.environ.get("JOINTLIMIT_BLENDER") or bpy.app.binary_path
    if not blender:
        raise BatchError("cannot start workers: neither $JOINTLIMIT_BLENDER nor bpy.app.binary_path is set")
    STATE["addon"] = ensure_addon()
    env = dict(os.environ, **{ADDON_ENV: STATE["addon"]})
    lock = threading.Lock()
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_worker, blender, argv, os.path.abspath(p), env, lock): p for p in args.files}
        for done, future in enumerate(concurrent.futures.as_completed(futures), start=1):
            results[futures[future]] = future.result()
            with lock:
                say(f"files done {done}/{len(args.files)}")
    for path in args.files:
        code, text = results[path]
        say(f"{'ok' if code == 0 else f'FAILED (exit {code})'}  {path}: {text}")
    failed = [code for code, _ in results.values() if code]
    if failed:
        raise (UsageError if set(failed) == {2} else BatchError)(f"{len(failed)} of {len(args.files)} files failed")
    return f"{len(args.files)} files done"


def script_argv(argv):
    return argv[argv.index("--") + 1:] if "--" in argv else []


def main(argv=None):
    argv = script_argv(sys.argv) if argv is None else argv
    try:
        return run_main(argv)
    finally:  # handlers left registered make Blender 4.5's Python module hang at exit
        if STATE["unregister"] is not None:
            STATE["unregister"]()
            STATE["unregister"] = None


def run_main(argv):
    try:
        args = build_parser().parse_args(argv)
        if args.worker_file:
            open_blend(args.worker_file)
            summary = process_current(args)
        elif len(args.files) > 1 or (args.files and args.jobs > 1):
            summary = process_many(args, argv)
        else:
            if args.files:
                if bpy.data.filepath:
                    raise UsageError("give the .blend file either to Blender or after the command, not both")
                open_blend(args.files[0])
            summary = process_current(args)
    except UsageError as exc:
        print(f"{ERROR_PREFIX} {exc}", file=sys.stderr, flush=True)
        return 2
    except BatchError as exc:
        print(f"{ERROR_PREFIX} {exc}", file=sys.stderr, flush=True)
        return 1
    except Exception as exc:  # anything unexpected: the traceback, then the one-line error last
        import traceback

        traceback.print_exc()
        print(f"{ERROR_PREFIX} unexpected {type(exc).__name__}: {exc}".splitlines()[0], file=sys.stderr, flush=True)
        return 1
    say(f"{SUMMARY_PREFIX} {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
