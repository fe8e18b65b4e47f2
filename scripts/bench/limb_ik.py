"""Limb IK: JointLimit's analytic solver vs Blender's IK constraint on the same rig and targets.

Run: .venv/bin/blender -b --factory-startup --python scripts/bench/limb_ik.py

Blender's reference is an IK constraint on the forearm (chain of 2) with a pole target. Both
solve the same random reachable targets; printed: tip error (median, max) and time per solve —
ours for the core solve alone and for solve + pose write + depsgraph update, Blender's for the
depsgraph update with the constraint.
"""

import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # Blender does not add the script's folder

import _common  # noqa: E402,F401
import bpy  # noqa: E402
import numpy as np  # noqa: E402

from _common import new_armature_in_edit_mode, register_addon_from_source, table  # noqa: E402

N_TARGETS = 300


def build_arm():
    obj, data = new_armature_in_edit_mode("Arm")
    spec = [("upper_arm", (0.2, 0, 1.5), (0.5, 0.03, 1.45), None),
            ("forearm", (0.5, 0.03, 1.45), (0.78, 0, 1.45), "upper_arm"),
            ("hand", (0.78, 0, 1.45), (0.88, 0, 1.45), "forearm")]
    for name, head, tail, parent in spec:
        eb = data.edit_bones.new(name)
        eb.head, eb.tail = head, tail
        if parent:
            eb.parent, eb.use_connect = data.edit_bones[parent], True
    bpy.ops.object.mode_set(mode="POSE")
    for pb in obj.pose.bones:
        pb.rotation_mode = "QUATERNION"
    return obj


def targets(obj):
    rng = np.random.default_rng(0)
    root = np.array(obj.pose.bones["upper_arm"].head)
    reach = obj.data.bones["upper_arm"].length + obj.data.bones["forearm"].length
    d = rng.normal(size=(N_TARGETS, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    return root + d * rng.uniform(0.4, 0.9, (N_TARGETS, 1)) * reach, reach


def run_ours(obj, pts, addon):
    limb_op = sys.modules[addon.__name__ + ".operators.limb_ik"]
    limb = sys.modules[addon.__name__ + ".core.limb_ik"]
    write = sys.modules[addon.__name__ + ".bone_limits"].write_rotation
    bones = [obj.pose.bones[n] for n in ("upper_arm", "forearm", "hand")]
    chain = limb_op.build_chain(*bones)
    start = time.perf_counter()
    for p in pts:
        limb.solve_position(chain, p, 0.0)
    core = (time.perf_counter() - start) / len(pts)
    errors = []
    start = time.perf_counter()
    for p in pts:
        pose = limb.solve_position(chain, p, 0.0)
        write(bones[0], pose.quats[0])
        write(bones[1], pose.quats[1])
        bpy.context.view_layer.update()
        errors.append(np.linalg.norm(np.array(bones[2].head) - p))
    full = (time.perf_counter() - start) / len(pts)
    for pb in bones:
        pb.rotation_quaternion = (1, 0, 0, 0)
    return core, full, np.array(errors)


def run_blender(obj, pts):
    target = bpy.data.objects.new("IKTarget", None)
    pole = bpy.data.objects.new("IKPole", None)
    for empty in (target, pole):
        bpy.context.scene.collection.objects.link(empty)
    pole.location = (0.5, 1.0, 1.45)
    con = obj.pose.bones["forearm"].constraints.new("IK")
    con.target, con.pole_target, con.chain_count = target, pole, 2
    con.pole_angle = -math.pi / 2
    hand = obj.pose.bones["hand"]
    errors = []
    start = time.perf_counter()
    for p in pts:
        target.location = p
        bpy.context.view_layer.update()
        errors.append(np.linalg.norm(np.array(hand.head) - p))
    full = (time.perf_counter() - start) / len(pts)
    return full, np.array(errors)


def main():
    addon = register_addon_from_source()
    obj = build_arm()
    pts, reach = targets(obj)
    core, ours_full, ours_err = run_ours(obj, pts, addon)
    blender_full, blender_err = run_blender(obj, pts)
    fmt = lambda e: f"{np.median(e) / reach:.1e} / {np.max(e) / reach:.1e}"  # noqa: E731
    rows = [
        ("JointLimit analytic: core solve", f"{core * 1e6:.1f}", "-"),
        ("JointLimit analytic: solve + write + depsgraph", f"{ours_full * 1e6:.1f}", fmt(ours_err)),
        ("Blender IK constraint: depsgraph update", f"{blender_full * 1e6:.1f}", fmt(blender_err)),
    ]
    print(f"{N_TARGETS} random reachable targets, arm of length {reach:.3f}")
    print(table(("limb IK", "µs per solve", "tip error / length (median / max)"), rows))
    print(f"full update, ours / Blender: {ours_full / blender_full:.2f}x")
    addon.unregister()


main()
