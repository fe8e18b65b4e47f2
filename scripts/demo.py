"""JointLimit demo, run headless by ``make demo``:

    blender -b --factory-startup --python scripts/demo.py

Installs the built extension into this Blender (``make demo`` points Blender's user folder at
``out/blender-user`` so your own Blender set-up is untouched), builds the demo scene (humanoid
arm and leg with limits, a 20-bone tail, a bent cylinder and an arm mesh with SDEF/Bezier
skinning), runs every feature on it headless, saves ``out/demo.blend``, renders pictures with
Workbench into ``out/`` and prints a summary table.
"""

import importlib
import math
import os
import pathlib
import sys
import time
import tomllib

import bpy
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "out"
MODULE = "bl_ext.user_default.jointlimit_addon"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # Blender does not add the script's folder

import demo_scene  # noqa: E402

ROWS = []


def step(name):
    """Decorator-free timing: ``with step('x') as row: row.append(result)``."""

    class _Step:
        def __enter__(self):
            self.start, self.result = time.perf_counter(), []
            return self.result

        def __exit__(self, *exc):
            if exc[0] is None:
                ROWS.append((name, "; ".join(self.result), f"{time.perf_counter() - self.start:.2f}"))
            return False

    return _Step()


def install():
    manifest = tomllib.loads((ROOT / "blender_manifest.toml").read_text())
    zip_path = ROOT / "dist" / f"{manifest['id']}-{manifest['version']}.zip"
    if not zip_path.is_file():
        sys.exit(f"demo: {zip_path} is missing; run 'make build'")
    bpy.ops.extensions.package_install_files(filepath=str(zip_path), repo="user_default", enable_on_install=True)
    return importlib.import_module(MODULE)


def pose_mode(obj, active, selected=()):
    """Pose Mode on ``obj`` with ``active`` (and ``selected``) the only selected bones."""
    bpy.context.view_layer.objects.active = obj
    if obj.mode != "POSE":
        bpy.ops.object.mode_set(mode="POSE")
    chosen = {active, *selected}
    compat = importlib.import_module(f"{MODULE}.compat")
    for pb in obj.pose.bones:
        compat.select_pose_bone(pb, pb.name in chosen)
    obj.data.bones.active = obj.data.bones[active]


def object_mode():
    if bpy.context.object and bpy.context.object.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")


def run_limits(addon, human):
    bl = importlib.import_module(f"{addon.__name__}.bone_limits")
    quat = importlib.import_module(f"{addon.__name__}.core.quat")
    pose_mode(human, "upper_arm.L")
    wild = {"upper_arm.L": ([1, 0, 0], 175), "forearm.L": ([1, 0.2, 0], -40), "hand.L": ([0, 0, 1], 80),
            "thigh.L": ([1, 0, 0], 60), "shin.L": ([1, 0, 0], 170), "foot.L": ([0, 1, 0], 50)}
    for name, (axis, angle) in wild.items():
        human.pose.bones[name].rotation_quaternion = quat.from_axis_angle(np.array(axis, float), math.radians(angle))
    bpy.ops.pose.jointlimit_apply(all_bones=True)
    inside = sum(bl.is_inside(bl.build_limit(pb.jointlimit), bl.read_rotation(pb))
                 for pb in human.pose.bones if pb.jointlimit.enabled)
    for pb in human.pose.bones:
        pb.rotation_quaternion = (1, 0, 0, 0)
    return f"{len(wild)} bones posed outside their limits, {inside} inside after pose.jointlimit_apply"


def run_limb_ik(human):
    scene = bpy.context.scene
    pose_mode(human, "hand.L")
    shoulder = np.array(human.pose.bones["upper_arm.L"].head)
    targets = {1: shoulder + (0.45, -0.1, -0.2), 30: shoulder + (0.2, -0.35, 0.15), 60: shoulder + (0.35, 0.1, 0.3)}
    errors = []
    for frame, target in targets.items():
        scene.frame_set(frame)
        bpy.ops.pose.jointlimit_limb_ik(target=target, swivel=math.radians(-30 + frame), use_limits=True)
        bpy.context.view_layer.update()
        errors.append(np.linalg.norm(np.array(human.pose.bones["hand.L"].head) - target))
        for name in ("upper_arm.L", "forearm.L"):
            human.pose.bones[name].keyframe_insert("rotation_quaternion", frame=frame)
    pose_mode(human, "foot.L")
    hip = np.array(human.pose.bones["thigh.L"].head)
    for frame, target in {1: hip + (0.05, -0.3, -0.7), 30: hip + (0.05, -0.45, -0.5), 60: hip + (0.0, 0.1, -0.85)}.items():
        scene.frame_set(frame)
        bpy.ops.pose.jointlimit_limb_ik(target=target, use_limits=True)
        for name in ("thigh.L", "shin.L"):
            human.pose.bones[name].keyframe_insert("rotation_quaternion", frame=frame)
    return f"arm: 3 targets keyed, max tip error {max(errors):.1e}; leg: 3 targets keyed"


def run_ccd(tail):
    scene = bpy.context.scene
    object_mode()
    pose_mode(tail, tail.pose.bones[-1].name)
    root = np.array(tail.pose.bones[0].head)
    errors = []
    for frame, offset in {1: (0.3, 0.9, 0.5), 30: (-0.4, 0.8, -0.4), 60: (0.0, 0.6, 0.8)}.items():
        scene.frame_set(frame)
        target = root + np.array(offset)
        bpy.ops.pose.jointlimit_ccd_ik(target=target)
        bpy.context.view_layer.update()
        errors.append(np.linalg.norm(np.array(tail.pose.bones[-1].tail) - target))
        for pb in tail.pose.bones:
            pb.keyframe_insert("rotation_quaternion", frame=frame)
    return f"20-bone tail: 3 targets keyed, tip errors {', '.join(f'{e:.1e}' for e in errors)}"


def run_motion(human, tail):
    for obj, bones in ((human, ("upper_arm.L", "forearm.L", "thigh.L", "shin.L")), (tail, [b.name for b in tail.pose.bones])):
        object_mode()
        pose_mode(obj, bones[0], bones)
        bpy.ops.pose.jointlimit_motion(frame_start=1, frame_end=60, profile="MIN_JERK", channels="SWING_TWIST")
    return "min-jerk in-betweens keyed on frames 1-60 for arm, leg and tail, clamped by their limits"


def run_deformer(scene_objects):
    results = []
    for key, mode in (("cylinder", "SDEF"), ("arm_skin", "BEZIER")):
        obj = scene_objects[key]
        object_mode()
        bpy.context.view_layer.objects.active = obj
        obj.select_set(True)
        bpy.ops.object.jointlimit_sdef_derive()
        bpy.ops.object.jointlimit_deformer_add(source="DERIVED", mode=mode)
        results.append(f"{obj.name}: {mode}")
    rig = scene_objects["cylinder_rig"]
    rig.pose.bones["upper"].rotation_quaternion = (math.cos(math.pi / 4), math.sin(math.pi / 4), 0, 0)
    return "geometry-nodes deformer on " + ", ".join(results)


def render_pictures(objects):
    scene = bpy.context.scene
    demo_scene.workbench(scene)
    for arm in (objects["humanoid"], objects["tail"]):
        demo_scene.bone_proxies(arm).color = (0.9, 0.55, 0.2, 1.0)
    objects["cylinder"].color = (0.55, 0.7, 0.9, 1.0)
    objects["arm_skin"].color = (0.85, 0.75, 0.65, 1.0)
    demo_scene.camera(scene, (0.6, -5.2, 1.6), (0.6, 0.0, 1.0), lens=40)
    paths = []
    for frame in (1, 30, 60):
        scene.frame_set(frame)
        paths.append(demo_scene.render(scene, OUT / f"demo_frame{frame:02d}.png"))
    return paths


def main():
    start = time.perf_counter()
    with step("install extension") as row:
        addon = install()
        row.append(addon.__name__)
    with step("build scene") as row:
        objects = demo_scene.build_all()
        row.append(", ".join(o.name for o in bpy.data.objects))
    with step("joint limits (apply)") as row:
        row.append(run_limits(addon, objects["humanoid"]))
    with step("limb IK (arm, leg)") as row:
        row.append(run_limb_ik(objects["humanoid"]))
    with step("CCD IK (tail)") as row:
        row.append(run_ccd(objects["tail"]))
    with step("smooth motion") as row:
        row.append(run_motion(objects["humanoid"], objects["tail"]))
    with step("SDEF/Bezier deformer") as row:
        row.append(run_deformer(objects))
    OUT.mkdir(exist_ok=True)
    with step("save out/demo.blend") as row:
        object_mode()
        bpy.ops.wm.save_as_mainfile(filepath=str(OUT / "demo.blend"))
        row.append(str((OUT / "demo.blend").relative_to(ROOT)))
    with step("render (Workbench)") as row:
        paths = render_pictures(objects)
        row.append(", ".join(str(p.relative_to(ROOT)) for p in paths))
    widths = [max(len(r[i]) for r in ROWS + [("step", "result", "s")]) for i in range(3)]
    print("\nJointLimit demo")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(("step", "result", "s"), widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in ROWS:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |")
    print(f"total {time.perf_counter() - start:.1f} s")


main()
