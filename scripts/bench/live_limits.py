"""Cost of live limits per frame on a 100-bone rig, against Blender's Limit Rotation constraint.

Run: .venv/bin/blender -b --factory-startup --python scripts/bench/live_limits.py

Measured in one run on the same rig and animation:
- playback with no limits (baseline frame change),
- playback with JointLimit's frame-change clamp on all 100 bones (our handler),
- playback with a Limit Rotation constraint on each of the 100 bones (Blender's reference),
- the live-limit handler on a depsgraph update where nothing changed (the idle cost while posing).
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # Blender does not add the script's folder

import _common  # noqa: E402,F401  (sets up the import path)
import bpy
import numpy as np  # noqa: E402

from _common import best_of, chain_armature, register_addon_from_source, table

N_BONES = 100
FRAMES = list(range(1, 21))


def build_rig():
    obj = chain_armature("Bench", N_BONES, (0, 0, 0.1))
    rng = np.random.default_rng(0)
    shapes = ("RECT", "ELLIPSE", "OVAL", "SUPERELLIPSE")
    for i, pb in enumerate(obj.pose.bones):
        s = pb.jointlimit
        s.enabled, s.shape = True, shapes[i % 4]
        s.swing_x_min, s.swing_x_max = math.radians(-30), math.radians(60)
        s.swing_z_min, s.swing_z_max = math.radians(-40), math.radians(20)
        s.use_twist_limit, s.twist_min, s.twist_max = True, math.radians(-20), math.radians(20)
        for frame in (1, 10, 20):
            q = rng.normal(size=4)
            pb.rotation_quaternion = q / np.linalg.norm(q)
            pb.keyframe_insert("rotation_quaternion", frame=frame)
    return obj


def per_frame(scene):
    def play():
        for f in FRAMES:
            scene.frame_set(f)

    return best_of(play, repeat=5) / len(FRAMES)


def add_constraints(obj, on):
    for pb in obj.pose.bones:
        if on:
            con = pb.constraints.new("LIMIT_ROTATION")
            con.owner_space = "LOCAL"
            con.use_limit_x = con.use_limit_y = con.use_limit_z = True
            con.min_x, con.max_x = math.radians(-30), math.radians(60)
            con.min_z, con.max_z = math.radians(-40), math.radians(20)
            con.min_y, con.max_y = math.radians(-20), math.radians(20)
        else:
            for con in list(pb.constraints):
                pb.constraints.remove(con)


def main():
    addon = register_addon_from_source()
    obj = build_rig()
    scene = bpy.context.scene
    base = per_frame(scene)
    scene.jointlimit.clamp_playback = True
    ours = per_frame(scene)
    scene.jointlimit.clamp_playback = False
    add_constraints(obj, True)
    blender = per_frame(scene)
    add_constraints(obj, False)
    scene.jointlimit.live = True
    handlers = sys.modules[addon.__name__ + ".handlers"]
    handlers.clamp_scene(scene, only_changed=True)  # warm the cache
    idle = best_of(lambda: handlers.clamp_scene(scene, only_changed=True), repeat=7, number=5)
    rows = [
        ("frame change, no limits", f"{base * 1e3:.2f}", "-"),
        ("+ JointLimit playback clamp (100 bones)", f"{ours * 1e3:.2f}", f"{(ours - base) * 1e3:.2f}"),
        ("+ Limit Rotation constraints (100 bones)", f"{blender * 1e3:.2f}", f"{(blender - base) * 1e3:.2f}"),
        ("live-limit handler, nothing changed", "-", f"{idle * 1e3:.2f}"),
    ]
    print(table(("per frame, 100-bone rig", "total ms", "added ms"), rows))
    per_bone = lambda t: max(t - base, 0.0) / N_BONES * 1e6  # noqa: E731
    print(f"per limited bone and frame: JointLimit {per_bone(ours):.1f} µs (Python handler), "
          f"Limit Rotation {per_bone(blender):.1f} µs (C, within timing noise when ~0)")
    addon.unregister()


main()
