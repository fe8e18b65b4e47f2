"""Many rotations under many limits in one pass: the batch of the live-limit handlers.

``clamp_groups(q, groups)`` clamps the rotations ``q[rows]`` of each ``(limit, rows)`` group
with its limit. Swing-twist limits (``JointLimit``) share the expensive part of the check: the
swing-twist split and the projection ``(s, t, psi)`` [000 eq.1, 37-39] are computed once for
all of their rows, then each group tests its own region and twist range; only the rotations
outside go to a correction, a few of them one at a time through the core's single-rotation
path (cheaper than numpy for a handful), many of them through the vectorised one. When there
are few swing-twist rotations in all, each goes through the single-rotation path. Other limit
kinds (hinge, Euler, quaternion swing) check each group in one vectorised call and correct the
rotations outside in another, or, in small groups of a kind with a float path (the hinge), take
that path one rotation at a time.

The result of each rotation equals ``limit.clamp`` of that rotation: rotations inside are
returned unchanged, the others as the limit corrects them.
"""

import numpy as np

from .limits import JointLimit
from .projection import NP, _parts

# Below this many rotations to correct, one at a time is cheaper than numpy's per-call cost
# (measured crossovers: ~25 for RECT, OVAL and POLYGON, ~75 for the numeric smooth shapes).
SINGLE_MAX = 24
SINGLE_MAX_SMOOTH = 72
SINGLE_MAX_FLOATS = 64     # other limits with a float path (the hinge: 3 µs a rotation, numpy ~200 µs a call)


def _outside_swing_twist(q, groups):
    """Per ``JointLimit`` group, the rows of ``q`` outside the limit (one shared split)."""
    rows = np.concatenate([r for _, r in groups])
    w, x, y, z = np.ascontiguousarray(q[rows].T)
    _, _, _, s, t, psi, pole = _parts(w, x, y, z, NP)
    out, start = [], 0
    for limit, r in groups:
        part = slice(start, start + len(r))
        start += len(r)
        inside = ~pole[part] & limit.region.contains_st(s[part], t[part]) & limit._twist_inside(psi[part], NP)
        out.append(r[~inside])
    return out


def _single_max(limit):
    smooth = limit.shape in ("ELLIPSE", "SUPERELLIPSE") and limit.correction == "OPTIMAL"
    return SINGLE_MAX_SMOOTH if smooth else SINGLE_MAX


def clamp_groups(q, groups):
    """Clamped copy of the unit quaternions ``q (n, 4)``; ``groups``: ``[(limit, rows)]`` with
    disjoint integer ``rows`` into ``q`` (rows in no group are returned unchanged)."""
    q = np.asarray(q, dtype=np.float64)
    out = q.copy()
    one_by_one = []     # (limit, rows) taking the float path, one rotation at a time
    swing = [(limit, rows) for limit, rows in groups if isinstance(limit, JointLimit) and len(rows)]
    if sum(len(rows) for _, rows in swing) < SINGLE_MAX:    # few in all (small groups): one at a time
        one_by_one += swing
    elif swing:
        for (limit, _), bad in zip(swing, _outside_swing_twist(q, swing)):
            if len(bad) >= _single_max(limit):
                out[bad] = limit.clamp(q[bad])
            else:
                one_by_one.append((limit, bad))
    for limit, rows in groups:
        if not len(rows) or isinstance(limit, JointLimit):
            continue
        if len(rows) < SINGLE_MAX_FLOATS and hasattr(limit, "clamp1"):
            one_by_one.append((limit, rows))
            continue
        bad = rows[~limit.contains(q[rows])]     # the check costs about half the clamp
        if len(bad):
            out[bad] = limit.clamp(q[bad])
    if one_by_one:
        _clamp_each(q, out, one_by_one)
    return out


def _clamp_each(q, out, groups):
    """``out[rows] = limit.clamp1`` of each row of ``q``, on Python floats (``limit.clamp`` of
    one rotation takes the same path), written in one assignment."""
    rows = np.concatenate([r for _, r in groups])
    if not len(rows):
        return
    floats = q.tolist()
    values = []
    for limit, r in groups:
        clamp1 = limit.clamp1
        values += [clamp1(floats[i]) for i in r.tolist()]
    out[rows] = values
