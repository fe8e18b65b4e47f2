"""Limb IK: JointLimit's analytic solver vs Blender's IK constraint on the same rig and targets.

Run: .venv/bin/blender -b --factory-startup --python scripts/bench/limb_ik.py

Blender's reference is an IK constraint on the forearm (chain of 2) with a pole target. Both
solve the same random reachable targets; printed: tip error (median, max) and time per solve —
ours for the core solve alone and for solve + pose write + depsgraph update, Blender's for the
depsgraph update with the constraint.
"""

import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # Blender does not add the script's folder

import _common  # noqa: E402,F401
import _human  # noqa: E402
import bpy  # noqa: E402
import numpy as np  # noqa: E402

from _common import connected_armature, register_addon_from_source, table  # noqa: E402

N_TARGETS = 300


def build_arm():
    return connected_armature("Arm", [("upper_arm", (0.2, 0, 1.5), (0.5, 0.03, 1.45), None),
                                      ("forearm", (0.5, 0.03, 1.45), (0.78, 0, 1.45), "upper_arm"),
                                      ("hand", (0.78, 0, 1.45), (0.88, 0, 1.45), "forearm")])


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


def limited_timing_rows(obj, addon):
    """Core solve with limits on, per shoulder shape: targets from poses inside the limits (upper
    limit of that shape, elbow hinge 0..145°), asked for with a random swivel, so many need the
    feasible-swivel search [001; Tolani et al. 2000]."""
    limb_op = sys.modules[addon.__name__ + ".operators.limb_ik"]
    limb = sys.modules[addon.__name__ + ".core.limb_ik"]
    limits_mod = sys.modules[addon.__name__ + ".core.limits"]
    euler = sys.modules[addon.__name__ + ".core.euler_limits"]
    core = _human.core_modules(addon)
    chain = limb_op.build_chain(*[obj.pose.bones[n] for n in ("upper_arm", "forearm", "hand")], hinge_axis="X")
    r = np.radians
    hinge = euler.HingeLimit((0.0, r(145)), axis="X")
    rows = []
    for shape in ("RECT", "OVAL", "POLYGON", "ELLIPSE", "SUPERELLIPSE"):
        if shape == "POLYGON":
            ang = np.radians([0, 60, 120, 180, 240, 300])
            outline = [(0.55 + 0.9 * np.cos(a), 0.4 + 0.8 * np.sin(a)) for a in ang]
            upper = limits_mod.JointLimit("POLYGON", outline=outline, twist=(r(-80), r(80)))
        else:
            upper = limits_mod.JointLimit(shape, swing_x=(r(-60), r(170)), swing_z=(r(-30), r(170)), twist=(r(-80), r(80)))
        limits = limb.LimbLimits(upper, hinge.angle, None)
        rng = np.random.default_rng(1)
        cases = []
        for _ in range(N_TARGETS):
            pose = np.array([_human.inside_rotation(upper, rng, core), _human.inside_rotation(hinge, rng, core),
                             [1.0, 0.0, 0.0, 0.0]])
            cases.append((limb.forward(chain, pose)[2], rng.uniform(-math.pi, math.pi)))
        times, free, moved, reached = [], [], 0, 0
        for target, swivel in cases:  # interleaved with the free solve: both see the same load
            start = time.perf_counter()
            limb.solve_position(chain, target, swivel)
            mid = time.perf_counter()
            pose = limb.solve_position(chain, target, swivel, limits=limits)
            times.append(time.perf_counter() - mid)
            free.append(mid - start)
            moved += bool(pose.swivel_moved)
            reached += bool(pose.reached)
        med, ref = statistics.median(times), statistics.median(free)
        rows.append((f"{shape} shoulder + hinge", f"{med * 1e6:.0f}", f"{ref * 1e6:.0f}", f"{med / ref:.1f}x",
                     f"{moved / N_TARGETS:.0%}", f"{reached / N_TARGETS:.1%}"))
    return rows


def success_rows(addon, n_targets=400):
    """Success on a human arm and leg with the built-in presets: targets (and, for the pose rows,
    end-bone orientations) from random limit-respecting poses, asked for with a random swivel.
    Ours vs clamping each joint at the requested swivel (the behaviour before issue 19)."""
    obj, what = _human.human_rig(addon)
    limb_op = sys.modules[addon.__name__ + ".operators.limb_ik"]
    limb = sys.modules[addon.__name__ + ".core.limb_ik"]
    core = _human.core_modules(addon)
    quat, bone_limits = core["quat"], sys.modules[addon.__name__ + ".bone_limits"]
    rows = []
    for name in _human.LIMBS:
        bones = _human.limb_bones(obj, name)
        chain = limb_op.build_chain(*bones)  # Auto: the Hinge limit's axis
        limits = limb_op.build_limits(*bones)
        joint_limits = [bone_limits.build_limit(pb.jointlimit) for pb in bones]
        rng = np.random.default_rng(7)
        length = chain.reach * float(chain.base_scale)
        for mode in ("position", "pose"):
            ok = ok_before = bad = bad_before = 0
            for _ in range(n_targets):
                q = np.array([_human.inside_rotation(lim, rng, core) for lim in joint_limits])
                target = limb.forward(chain, q)[2]
                goal = limb.pose_rotations(chain, q)[2]
                swivel = rng.uniform(-math.pi, math.pi)
                free_limits = limb.LimbLimits(None, limits.hinge, None)
                if mode == "position":
                    res = limb.solve_position(chain, target, swivel, limits=limits, end_local=q[2])
                    free = limb.solve_position(chain, target, swivel, limits=free_limits, end_local=q[2])
                else:
                    res = limb.solve_pose(chain, target, goal, swivel, limits=limits)
                    free = limb.solve_pose(chain, target, goal, swivel, limits=free_limits)
                before = np.array([joint_limits[i].clamp(free.quats[i]) for i in range(3)])
                err_before = np.linalg.norm(limb.forward(chain, before)[2] - target)
                good = res.tip_error <= 1e-4 * length
                if mode == "pose":
                    good = good and res.orientation_error <= 1e-6
                    err_before = max(err_before, 0.0) if quat.angle_between(
                        limb.pose_rotations(chain, before)[2], goal) <= 1e-6 else np.inf
                ok += bool(good)
                ok_before += bool(err_before <= 1e-4 * length)
                bad += sum(_human.violates(lim, res.quats[i], quat) for i, lim in enumerate(joint_limits))
                bad_before += sum(_human.violates(lim, before[i], quat) for i, lim in enumerate(joint_limits))
            rows.append((f"{name}, {mode}", f"{ok / n_targets:.1%}", str(bad), f"{ok_before / n_targets:.1%}", str(bad_before)))
    return what, rows


def main():
    addon = register_addon_from_source()
    what, success = success_rows(addon)
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
    print(f"\nwith limits: core solve (median over {N_TARGETS} targets from poses inside the limits, random swivel asked)")
    print(table(("limits", "µs per solve", "µs, no limits", "ratio", "swivel moved", "reached"),
                limited_timing_rows(obj, addon)))
    print(f"\nsuccess on targets from random limit-respecting poses ({what}, built-in presets, random swivel asked):"
          " within 1e-4 of the limb length (pose: and orientation within 1e-6 rad); violations after float32 storage")
    print(table(("limb, target", "success", "violations", "success: clamp at asked swivel", "violations: clamp"), success))
    addon.unregister()


main()
