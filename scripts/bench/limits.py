"""Benchmark of the projection-based joint limits (core/limits.py).

Rotations clamped per second (wall clock) for each shape x correction on random unit quaternions
(vector path), and the cost of one single-rotation call (the pure-Python fast path; CPU time of
the calling thread, so that other jobs on a shared machine do not count). The smooth shapes
run with both fits (``/AXES``: quadrant-wise half-axes through the axis limits, issue 17).

Run from the repo root:  /tmp/venvtest/v50/bin/python scripts/bench/limits.py [--n 1000000]
Figures depend on the machine and on what else runs on it at the time.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

import numpy as np  # noqa: E402

from jointlimit_addon.core import quat  # noqa: E402
from jointlimit_addon.core.limits import JointLimit  # noqa: E402

SHAPES = ("RECT", "OVAL", "ELLIPSE", "SUPERELLIPSE", "POLYGON", "OVAL/AXES", "ELLIPSE/AXES", "SUPERELLIPSE/AXES")
TARGET = {"RECT": 1e6, "OVAL": 1e6, "ELLIPSE": 2.5e5, "SUPERELLIPSE": 2.5e5}
OUTLINE = [(-0.3, -0.2), (0.5, -0.2, 0.5), (0.6, 0.4), (-0.2, 0.7, -0.3), (-0.5, 0.3)]


def make(shape, correction):
    if shape == "POLYGON":
        return JointLimit(shape="POLYGON", outline=OUTLINE, twist=(-0.5, 0.5), correction=correction)
    shape, _, fit = shape.partition("/")
    return JointLimit(shape=shape, swing_x=(-0.2, 1.9), swing_z=(-0.7, 0.35), twist=(-0.5, 0.5),
                      correction=correction, fit=fit or "INSCRIBED")


def best_of(fn, repeat, clock=time.perf_counter):
    times = []
    for _ in range(repeat):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="rotations per batch")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    args = parser.parse_args()
    q = quat.random_unit(args.n, np.random.default_rng(0))
    singles = [q[i].copy() for i in range(2000)]
    print(f"{args.n} random rotations, best of {args.repeat}; {os.cpu_count()} CPUs "
          "(shared with other jobs: figures may be pessimistic)")
    print(f"{'shape':<17} {'correction':<9} {'outside':>8} {'rot/s':>12} {'target':>10} {'one call':>10}")
    for shape in SHAPES:
        for correction in ("OPTIMAL", "SIMPLE"):
            try:
                lim = make(shape, correction)
            except ValueError as exc:
                print(f"{shape:<17} {correction:<9} unavailable: {exc}")
                continue
            outside = 1.0 - lim.contains(q[:100_000]).mean()
            t_batch = best_of(lambda: lim.clamp(q), args.repeat)
            # one call: CPU time of this thread (what the call costs, not the time the shared
            # machine gave to other jobs meanwhile)
            t_one = best_of(lambda: [lim.clamp(s) for s in singles], args.repeat, time.thread_time) / len(singles)
            target = TARGET.get(shape.partition("/")[0]) if correction == "OPTIMAL" else None
            rate = args.n / t_batch
            mark = "" if target is None else (f"{target:>9.0f}{'+' if rate >= target else '!'}")
            one = "+" if t_one <= 20e-6 else "!"
            print(f"{shape:<17} {correction:<9} {outside:>8.1%} {rate:>12,.0f} {mark:>10} {t_one * 1e6:>8.1f} us{one}")
    print("targets (+ met, ! missed): rot/s for OPTIMAL; one call <= 20 us (thread CPU time)")


if __name__ == "__main__":
    main()
