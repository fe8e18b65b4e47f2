"""CCD IK: JointLimit's length-weighted CCD vs Blender's IK constraint (and ikpy, if installed).

Run: .venv/bin/blender -b --factory-startup --python scripts/bench/ccd.py
(`make bench` installs ikpy into the venv first; without it the ikpy row is skipped.)

Same 10-bone chain, same random reachable targets (tips of random poses). Printed: success rate
(tip error <= 1e-3 x chain length), median/max error, time per solve — ours for the core solve
and for solve + pose write + depsgraph update, Blender's for the depsgraph update with an IK
constraint (Standard solver), ikpy for its solver alone. Then the seed's claim [004 §2]: the share
of the total rotation taken by the joint nearest the tip, weighted vs unweighted; then 3-, 10- and
30-bone chains with limits: success rate, sweeps and limit violations.
"""

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # Blender does not add the script's folder

import _common  # noqa: E402,F401
import _human  # noqa: E402
import bpy  # noqa: E402
import numpy as np  # noqa: E402

from _common import chain_armature, register_addon_from_source, table  # noqa: E402

N_BONES, N_TARGETS, BONE = 10, 100, 0.1
ITERATIONS = 1000  # the operator's default; most solves stop far earlier at the tolerance
LENGTH = N_BONES * BONE


def build_chain_object():
    return chain_armature("Tail", N_BONES, (0, BONE, 0))


def make_targets(chain, ccd, quat):
    rng = np.random.default_rng(0)
    out = []
    for _ in range(N_TARGETS):
        pose = quat.from_axis_angle(rng.normal(size=(N_BONES, 3)), rng.uniform(0, 0.5, N_BONES))
        out.append(ccd.forward(chain, pose)[-1])
    return np.array(out)


def with_limits_rows(ccd, quat, limits_mod):
    """3-, 10- and 30-bone chains with a RECT swing-twist limit on every joint: targets are tips
    of limit-respecting random poses. Success rate, median sweeps, limit violations."""
    limit = limits_mod.JointLimit("RECT", swing_x=(-0.9, 0.9), swing_z=(-0.7, 0.7), twist=(-0.3, 0.3))
    rows = []
    for n in (3, 10, 30):
        rng = np.random.default_rng(n)
        points = np.zeros((n + 1, 3))
        points[:, 1] = np.arange(n + 1) * BONE
        chain = ccd.Chain.from_points(points)
        hits, sweeps, violations = 0, [], 0
        for _ in range(N_TARGETS):
            pose = limit.clamp(quat.from_axis_angle(rng.normal(size=(n, 3)), rng.uniform(0, 1.2, n)))
            result = ccd.solve(chain, None, ccd.forward(chain, pose)[-1], iterations=ITERATIONS, limits=[limit] * n)
            hits += result.error <= 1e-3 * chain.length
            sweeps.append(result.iterations)
            violations += int(np.sum(~limit.contains(result.local_quats)))
        rows.append((f"{n} bones", f"{hits / N_TARGETS:.0%}", f"{statistics.median(sweeps):.0f}", str(violations)))
    return rows


SMOOTH_CHAINS = (  # (name, bones, bone step, swing_x, swing_z, twist) in degrees
    ("4-bone spine", 4, (0.0, 0.0, 0.12), (-10, 30), (-12, 12), (-15, 15)),
    ("10-bone tail", 10, (0.0, -0.08, 0.0), (-25, 25), (-25, 25), (-10, 10)),
)
DRAG_FRAMES = 60
DRAG_REPEATS = 3


def _set_smooth_limits(bones, shape, swing_x, swing_z, twist, presets):
    entry = {"kind": "SWING_TWIST", "shape": shape, "correction": "OPTIMAL", "swing_x": swing_x, "swing_z": swing_z,
             "twist": twist, "exponent": (3.0, 3.0)}
    for pb in bones:
        presets.write_entry(pb.jointlimit, entry)


def _ms(times):
    return f"{statistics.median(times) * 1e3:.2f}"


def _range(medians):
    return f"{min(medians) * 1e3:.2f}–{max(medians) * 1e3:.2f}"


def smooth_limit_rows(addon, ccd, quat, write):
    """Interactive cost with smooth OPTIMAL limits on every joint (issue 19): core solve from the
    rest pose for tips of random limit-respecting poses (cold), and a drag — targets along a
    path between two such poses, each frame solved from the previous one as the modal tool does
    — with the modal update (solve + pose write + depsgraph) through the operator's solver."""
    ccd_op = sys.modules[addon.__name__ + ".operators.ccd_ik"]
    presets = sys.modules[addon.__name__ + ".presets"]
    rows = []
    for name, n, step, sx, sz, tw in SMOOTH_CHAINS:
        for shape in ("ELLIPSE", "SUPERELLIPSE", None):
            obj = chain_armature(name.split()[1].capitalize(), n, step)
            bones = list(obj.pose.bones)
            if shape:
                _set_smooth_limits(bones, shape, sx, sz, tw, presets)
            chain = ccd_op.build_chain(bones)
            limits = ccd_op.chain_limits(bones) if shape else [None] * n
            ref = limits[0] or sys.modules[addon.__name__ + ".core.limits"].JointLimit(
                "ELLIPSE", swing_x=np.radians(sx), swing_z=np.radians(sz), twist=np.radians(tw))
            rng = np.random.default_rng(n)
            poses = [ref.clamp(quat.from_axis_angle(rng.normal(size=(n, 3)), rng.uniform(0, 1.0, n)))
                     for _ in range(N_TARGETS)]
            targets = [ccd.forward(chain, pose)[-1] for pose in poses]
            cold_runs, hits, sweeps = [], 0, []
            for _ in range(DRAG_REPEATS):  # CPU time; the machine is shared: the range of the medians
                cold, hits, sweeps = [], 0, []
                for target in targets:
                    start = time.process_time()
                    res = ccd.solve(chain, None, target, iterations=ITERATIONS, limits=limits)
                    cold.append(time.process_time() - start)
                    hits += res.reached
                    sweeps.append(res.iterations)
                cold_runs.append(statistics.median(cold))
            ccd.EXTRAPOLATE = False  # the same targets without extrapolated sweeps, for the ratio
            plain = []
            for target in targets:
                start = time.process_time()
                ccd.solve(chain, None, target, iterations=ITERATIONS, limits=limits)
                plain.append(time.process_time() - start)
            ccd.EXTRAPOLATE = True
            path = [ccd.forward(chain, ref.clamp(quat.slerp(poses[0], poses[1], k / DRAG_FRAMES)))[-1]
                    for k in range(DRAG_FRAMES + 1)]
            options = dict(iterations=ITERATIONS, tolerance=None, use_weights=True, limits=limits, unit_angle=None)
            core_runs, full_runs = [], []
            for _ in range(DRAG_REPEATS):  # the machine is shared: the range of the medians
                for pb in bones:
                    pb.rotation_quaternion = (1, 0, 0, 0)
                solver = ccd_op.CCDSolver(bones, options)
                solver(path[0])
                core, full = [], []
                for target in path[1:]:
                    start = time.perf_counter()
                    quats, info = solver(target)
                    mid = time.perf_counter()
                    for pb, q in zip(bones, quats):
                        write(pb, q)
                    bpy.context.view_layer.update()
                    end = time.perf_counter()
                    core.append(mid - start)
                    full.append(end - start)
                core_runs.append(statistics.median(core))
                full_runs.append(statistics.median(full))
            label = f"{name}, {shape or 'no limits'}"
            rows.append((label, _range(cold_runs), f"{hits / N_TARGETS:.0%}", f"{statistics.median(sweeps):.0f}",
                         f"{statistics.median(plain) / statistics.median(cold_runs):.1f}x",
                         _range(core_runs), _range(full_runs)))
    return rows


def human_success_rows(addon, ccd, quat, n_targets=300):
    """CCD on a human arm (shoulder, elbow, wrist) and leg (hip, knee, ankle) with the built-in
    presets: targets are the end-bone tails of random limit-respecting poses; solved from the
    rest pose. Success within the solver's tolerance; violations after float32 storage; how
    many solves restarted (and the success without restarts); CPU time per solve, range of the
    medians (and means) of the timing runs."""
    obj, what = _human.human_rig(addon)
    ccd_op = sys.modules[addon.__name__ + ".operators.ccd_ik"]
    core = _human.core_modules(addon)
    rows = []
    for limb in _human.LIMBS:
        bones = _human.limb_bones(obj, limb)
        chain = ccd_op.build_chain(bones)
        limits = ccd_op.chain_limits(bones)
        rng = np.random.default_rng(11)
        targets = [ccd.forward(chain, np.array([_human.inside_rotation(lim, rng, core) for lim in limits]))[-1]
                   for _ in range(n_targets)]
        hits = bad = restarted = most = plain = 0
        sweeps = []
        for target in targets:
            res = ccd.solve(chain, None, target, iterations=ITERATIONS, limits=limits)
            hits += res.reached
            sweeps.append(res.iterations)
            restarted += res.restarts > 0
            most = max(most, res.restarts)
            bad += sum(_human.violates(lim, q, quat) for lim, q in zip(limits, res.local_quats))
            plain += ccd.solve(chain, None, target, iterations=ITERATIONS, limits=limits, restarts=0).reached
        medians, means = [], []
        for _ in range(DRAG_REPEATS):
            times = []
            for target in targets:
                start = time.process_time()
                ccd.solve(chain, None, target, iterations=ITERATIONS, limits=limits)
                times.append(time.process_time() - start)
            medians.append(statistics.median(times))
            means.append(statistics.mean(times))
        rows.append((limb, f"{hits / n_targets:.1%}", str(bad), f"{restarted} (most {most})",
                     f"{plain / n_targets:.1%}", f"{statistics.median(sweeps):.0f}", _range(medians), _range(means)))
    return what, rows


def summarise(errors, seconds):
    errors = np.asarray(errors)
    ok = np.mean(errors <= 1e-3 * LENGTH) * 100
    return f"{ok:.0f}%", f"{np.median(errors) / LENGTH:.1e} / {np.max(errors) / LENGTH:.1e}", f"{seconds * 1e3:.2f}"


def run_ours(obj, chain, ccd, targets, write):
    times, errors = [], []
    for t in targets:
        start = time.perf_counter()
        result = ccd.solve(chain, None, t, iterations=ITERATIONS)
        times.append(time.perf_counter() - start)
        errors.append(result.error)
    core = summarise(errors, statistics.median(times))
    times, errors = [], []
    bones = list(obj.pose.bones)
    for t in targets:
        start = time.perf_counter()
        result = ccd.solve(chain, None, t, iterations=ITERATIONS)
        for pb, q in zip(bones, result.local_quats):
            write(pb, q)
        bpy.context.view_layer.update()
        times.append(time.perf_counter() - start)
        errors.append(np.linalg.norm(np.array(bones[-1].tail) - t))
    for pb in bones:
        pb.rotation_quaternion = (1, 0, 0, 0)
    return core, summarise(errors, statistics.median(times))


def run_blender(obj, targets):
    empty = bpy.data.objects.new("Target", None)
    bpy.context.scene.collection.objects.link(empty)
    con = obj.pose.bones[-1].constraints.new("IK")
    con.target, con.chain_count = empty, N_BONES
    obj.pose.ik_solver = "LEGACY"  # Blender's "Standard" solver
    tip = obj.pose.bones[-1]
    times, errors = [], []
    for t in targets:
        start = time.perf_counter()
        empty.location = t
        bpy.context.view_layer.update()
        times.append(time.perf_counter() - start)
        errors.append(np.linalg.norm(np.array(tip.tail) - t))
    obj.pose.bones[-1].constraints.remove(con)
    return summarise(errors, statistics.median(times))


def run_ikpy(targets):
    try:
        from ikpy.chain import Chain
        from ikpy.link import OriginLink, URDFLink
    except ImportError:
        return None
    links = [OriginLink()]
    for i in range(N_BONES):
        for k, axis in enumerate(np.eye(3)):
            offset = [0, BONE, 0] if (k == 0 and i > 0) else [0, 0, 0]
            links.append(URDFLink(name=f"j{i}{k}", origin_translation=offset, origin_orientation=[0, 0, 0], rotation=axis))
    links.append(URDFLink(name="tip", origin_translation=[0, BONE, 0], origin_orientation=[0, 0, 0], rotation=None,
                          joint_type="fixed"))
    chain = Chain(links, active_links_mask=[False] + [True] * (3 * N_BONES) + [False])
    times, errors = [], []
    for t in targets:
        start = time.perf_counter()
        angles = chain.inverse_kinematics(t)
        times.append(time.perf_counter() - start)
        errors.append(np.linalg.norm(chain.forward_kinematics(angles)[:3, 3] - t))
    return summarise(errors, statistics.median(times))


def main():
    addon = register_addon_from_source()
    ccd = sys.modules[addon.__name__ + ".core.ccd"]
    quat = sys.modules[addon.__name__ + ".core.quat"]
    write = sys.modules[addon.__name__ + ".bone_limits"].write_rotation
    ccd_op = sys.modules[addon.__name__ + ".operators.ccd_ik"]
    obj = build_chain_object()
    chain = ccd_op.build_chain(list(obj.pose.bones))
    targets = make_targets(chain, ccd, quat)
    core, full = run_ours(obj, chain, ccd, targets, write)
    rows = [("JointLimit CCD: core solve", *core), ("JointLimit CCD: solve + write + depsgraph", *full),
            ("Blender IK constraint (Standard): depsgraph update", *run_blender(obj, targets))]
    ikpy_row = run_ikpy(targets)
    rows.append(("ikpy inverse_kinematics", *ikpy_row) if ikpy_row else ("ikpy (not installed: make bench)", "-", "-", "-"))
    print(f"{N_BONES}-bone chain, {N_TARGETS} random reachable targets")
    print(table(("solver", "success", "error / length (median / max)", "ms per solve (median)"), rows))
    share_w = ccd.rotation_share(chain, targets[:50], use_weights=True)
    share_u = ccd.rotation_share(chain, targets[:50], use_weights=False)
    print(f"share of total rotation at the tip joint: weighted {share_w:.2f}, unweighted {share_u:.2f} "
          "(weighting spreads motion toward the root [004 §2])")
    limits_mod = sys.modules[addon.__name__ + ".core.limits"]
    print("\nchains with a RECT limit on every joint, targets from limit-respecting poses")
    print(table(("chain", "success", "median sweeps", "limit violations"), with_limits_rows(ccd, quat, limits_mod)))
    print(f"\nsmooth OPTIMAL limits on every joint: ms per solve (median); drag = {DRAG_FRAMES} frames, "
          f"each solved from the previous one (the modal tool), range of the medians of {DRAG_REPEATS} runs")
    print(table(("chain, limits", "cold core solve (CPU)", "cold success", "cold median sweeps",
                 "cold without extrapolation", "drag: core solve",
                 "drag: modal update"),
                smooth_limit_rows(addon, ccd, quat, write)))
    what, rows = human_success_rows(addon, ccd, quat)
    print(f"\nhuman limbs ({what}, built-in presets): targets from random limit-respecting poses, "
          "solved from the rest pose; violations after float32 storage")
    print(table(("limb", "success", "violations", "solves restarted", "success without restarts", "median sweeps",
                 "ms per solve (CPU, median)", "ms per solve (CPU, mean)"), rows))
    addon.unregister()


main()
