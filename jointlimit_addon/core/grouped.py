"""Many rotations under many limits in one pass: the batch of the live-limit handlers.

``clamp_groups(q, groups)`` clamps the rotations ``q[rows]`` of each ``(limit, rows)`` group
with its limit. Swing-twist limits (``JointLimit``) share the expensive part of the check: the
swing-twist split and the projection ``(s, t, psi)`` [000 eq.1, 37-39] are computed once for
all of their rows, then each group tests its own region and twist range; only the rotations
outside go to a correction, a few of them one at a time through the core's single-rotation
path (cheaper than numpy for a handful), many of them through the vectorised one. When there
are few swing-twist rotations in all, each goes through the single-rotation path. Other limit
kinds (hinge, Euler, quaternion swing) check each group in one vectorised call and correct the
rotations outside in another.

The result of each rotation equals ``limit.clamp`` of that rotation: rotations inside are
returned unchanged, the others as the limit corrects them.

A group may carry a memo (``(limit, rows, memo)``, a dict the caller keeps for that limit): the
results of rotations seen before are taken from it (keyed by the exact bytes of the rotation, so
a hit is the very result the limit gave that rotation), the others are clamped and remembered.
Playback that returns to the same frames (loops, scrubbing, held keys) then costs a lookup per
bone instead of a check or a correction.
"""

import numpy as np

from .limits import JointLimit
from .projection import NP, _parts

# Below this many rotations to correct, one at a time is cheaper than numpy's per-call cost
# (measured crossovers: ~25 for RECT, OVAL and POLYGON, ~50 for the numeric smooth shapes).
SINGLE_MAX = 24
SINGLE_MAX_SMOOTH = 48
# A memo that grows past this many rotations is emptied (playback of a long shot under a limit
# shared by many bones; ~150 bytes each).
MEMO_MAX = 1 << 15
_ROW = 32       # bytes of one float64 quaternion


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


def _recall(raw, out, groups):
    """Fill ``out`` from the groups' memos; returns the groups of the rows not found and, per
    memo, the rows to remember."""
    left, learn, hit_rows, hit_values = [], [], [], []
    for limit, rows, *memo in groups:
        if not memo:
            left.append((limit, rows))
            continue
        memo = memo[0]
        miss = []
        for i in rows.tolist():
            value = memo.get(raw[_ROW * i:_ROW * i + _ROW])
            if value is None:
                miss.append(i)
            else:
                hit_rows.append(i)
                hit_values.append(value)
        if miss:
            left.append((limit, np.array(miss, dtype=np.int64)))
            learn.append((memo, miss))
    if hit_rows:
        out[hit_rows] = np.frombuffer(b"".join(hit_values)).reshape(-1, 4)
    return left, learn


def _remember(raw, out, learn):
    done = out.tobytes()
    for memo, rows in learn:
        if len(memo) + len(rows) > MEMO_MAX:
            memo.clear()
        for i in rows:
            memo[raw[_ROW * i:_ROW * i + _ROW]] = done[_ROW * i:_ROW * i + _ROW]


def clamp_groups(q, groups):
    """Clamped copy of the unit quaternions ``q (n, 4)``; ``groups``: ``[(limit, rows)]`` or
    ``[(limit, rows, memo)]`` with disjoint integer ``rows`` into ``q`` (rows in no group are
    returned unchanged)."""
    q = np.ascontiguousarray(q, dtype=np.float64)
    out = q.copy()
    raw = q.tobytes()
    groups, learn = _recall(raw, out, groups)
    _clamp_into(out, q, groups)
    if learn:
        _remember(raw, out, learn)
    return out


def _clamp_into(out, q, groups):
    """``out[rows] = limit.clamp(q[rows])`` for each ``(limit, rows)``, checking first."""
    swing = [(limit, rows) for limit, rows in groups if isinstance(limit, JointLimit) and len(rows)]
    if sum(len(rows) for _, rows in swing) < SINGLE_MAX:    # few in all (small groups): one at a time
        for limit, rows in swing:
            for i in rows:
                out[i] = limit.clamp(q[i])
    elif swing:
        for (limit, _), bad in zip(swing, _outside_swing_twist(q, swing)):
            if len(bad) >= _single_max(limit):
                out[bad] = limit.clamp(q[bad])
            else:
                for i in bad:
                    out[i] = limit.clamp(q[i])
    for limit, rows in groups:
        if len(rows) and not isinstance(limit, JointLimit):
            bad = rows[~limit.contains(q[rows])]     # the check costs about half the clamp
            if len(bad):
                out[bad] = limit.clamp(q[bad])
