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

Limits of one kind whose OPTIMAL correction has a vectorised kernel with per-row shapes
(``grouped_shapes``: outlines of arcs and segments, RECT, OVAL, POLYGON; ellipses, ELLIPSE;
either fit) correct their rotations outside together, whatever limit each row has: one pass
over the rows of every such limit instead of one numpy pass, or one Python call per rotation,
per limit. Hinges are checked and corrected together the same way.

The result of each rotation equals ``limit.clamp`` of that rotation to round-off: rotations
inside are returned unchanged, the others as the limit corrects them.
"""

from itertools import accumulate

import numpy as np

from . import grouped_shapes
from .grouped_shapes import EllipseTables, HingeTables, OutlineTables, TwistTables
from .limits import JointLimit
from .projection import NP, TWO_PI, _compose, _parts

# Below this many rotations to correct, one at a time is cheaper than numpy's per-call cost
# (measured crossovers: ~25 for RECT, OVAL and POLYGON, ~75 for the numeric smooth shapes).
SINGLE_MAX = 24
SINGLE_MAX_SMOOTH = 72
SINGLE_MAX_FLOATS = 64     # other limits with a float path (the hinge: 3 µs a rotation, numpy ~200 µs a call)
# From this many rotations outside limits of one kind (hinges: rotations), the kind's pass
# (measured crossovers)
TOGETHER_MIN = {OutlineTables: 16, EllipseTables: 24, HingeTables: 32}
CHUNK = 4096


def _outside_swing_twist(q, groups):
    """Per ``JointLimit`` group, the rows of ``q`` outside the limit, where they are in the
    shared split, and whether their swing is inside; and the split ``(px, py, pz, s, t, psi)``
    of every row of the groups, one after the other. Each region checks its own rows; the
    twists of every group are checked in one pass (``grouped_shapes.TwistTables``)."""
    rows = np.concatenate([r for _, r in groups])
    w, x, y, z = np.ascontiguousarray(q[rows].T)
    *parts, pole = _parts(w, x, y, z, NP)
    _, _, _, s, t, psi = parts
    sizes = [len(r) for _, r in groups]
    ends = list(accumulate(sizes))
    swing_in = np.empty(len(rows), dtype=bool)
    for (limit, _), start, end in zip(groups, [0, *ends], ends):
        swing_in[start:end] = limit.region.contains_st(s[start:end], t[start:end])
    swing_in &= ~pole
    twists = grouped_shapes.tables(TwistTables, [limit for limit, _ in groups])
    bad = np.flatnonzero(~(swing_in & twists.inside(psi, np.repeat(np.arange(len(groups)), sizes))))
    return [(r[at - start], at, swing_in[at])
            for (_, r), start, at in zip(groups, [0, *ends], np.split(bad, np.searchsorted(bad, ends[:-1])))], parts


def _together_kind(limit):
    """The ``grouped_shapes`` tables of the pass ``limit`` corrects in, or ``None``."""
    if grouped_shapes.is_outline(limit):
        return OutlineTables
    if grouped_shapes.is_ellipse(limit):
        return EllipseTables
    return None


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
        together = {OutlineTables: [], EllipseTables: []}
        outside, parts = _outside_swing_twist(q, swing)
        for (limit, _), (bad, at, swing_in) in zip(swing, outside):
            kind = _together_kind(limit)
            if kind is EllipseTables and len(bad) >= SINGLE_MAX_SMOOTH:    # its own path is quicker
                together[kind].append((limit, bad[:0], at[:0], swing_in[:0]))  # (its tables whether many or few)
                out[bad] = limit.clamp(q[bad])
            elif kind is not None:
                together[kind].append((limit, bad, at, swing_in))
            elif len(bad) >= _single_max(limit):
                out[bad] = limit.clamp(q[bad])
            else:
                one_by_one.append((limit, bad))
        passes = []
        for kind, members in together.items():
            if sum(len(bad) for _, bad, _, _ in members) >= TOGETHER_MIN[kind]:
                passes.append(_together_pass(members, parts, kind))
            else:
                one_by_one += [(limit, bad) for limit, bad, _, _ in members]
        if passes:
            _compose_rows(q, out, *(np.concatenate(c) for c in zip(*passes)))
    others = [(limit, rows) for limit, rows in groups if len(rows) and not isinstance(limit, JointLimit)]
    hinges = [(limit, rows) for limit, rows in others if grouped_shapes.is_hinge(limit)]
    if sum(len(rows) for _, rows in hinges) >= TOGETHER_MIN[HingeTables]:
        _clamp_hinges(q, out, hinges)
        others = [(limit, rows) for limit, rows in others if not grouped_shapes.is_hinge(limit)]
    for limit, rows in others:
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


# --- rows of several limits of one kind, corrected together ------------------------------------


def _twist_clamp(psi, which, tables):
    """``JointLimit._twist_clamp`` of each twist with the range of its limit ``which``."""
    lo, hi = tables.lo[which], tables.hi[which]
    inside = (psi >= lo) & (psi <= hi)
    with np.errstate(invalid="ignore"):     # free twist: inf - inf, not used
        nearer_lo = (lo - psi) % TWO_PI < (psi - hi) % TWO_PI
    clamped = np.where(inside, psi, np.where(nearer_lo, lo, hi))
    return np.where(tables.fixed[which], psi * 0.0, np.where(tables.free[which], psi, clamped))


def _together_pass(groups, parts, kind):
    """The corrected swing and twist ``(rows, s, t, psi)`` of the rows ``bad`` of each
    ``(limit, bad, at, swing_in)`` of ``groups`` (limits of one ``grouped_shapes`` kind; ``at``:
    where the rows are in the split ``parts`` of ``_outside_swing_twist``; ``swing_in``: which of
    them have their swing inside), all rows in one pass (``JointLimit._clamp_block`` with each
    row's own shape and twist range); ``_compose_rows`` makes them rotations."""
    tables = grouped_shapes.tables(kind, [limit for limit, _, _, _ in groups])
    rows = np.concatenate([bad for _, bad, _, _ in groups])
    at = np.concatenate([at for _, _, at, _ in groups])
    swing_in = np.concatenate([inside for _, _, _, inside in groups])
    which = np.repeat(np.arange(len(groups)), [len(bad) for _, bad, _, _ in groups])
    px, py, pz, s, t, psi = (part[at] for part in parts)
    fix = np.flatnonzero(~swing_in)
    for start in range(0, len(fix), CHUNK):    # (rows, nodes or candidates) arrays per chunk
        f = fix[start:start + CHUNK]
        s[f], t[f] = tables.nearest(px[f], py[f], pz[f], which[f])
    return rows, s, t, _twist_clamp(psi, which, tables)


def _compose_rows(q, out, rows, s, t, psi):
    """``out[rows]``: the rotations of swing ``(s, t)`` and twist ``psi``, on the side of
    ``q[rows]`` (every pass's rows at once)."""
    qw, qx, qy, qz = _compose(s, t, psi, NP)
    w, x, y, z = q[rows].T
    sign = np.where(qw * w + qx * x + qy * y + qz * z < 0.0, -1.0, 1.0)
    out[rows] = np.stack((qw, qx, qy, qz), axis=-1) * sign[:, None]


def _clamp_hinges(q, out, groups):
    """``out[rows] = limit.clamp(q[rows])`` for each hinge ``(limit, rows)`` of ``groups``, all
    rows in one pass."""
    tables = grouped_shapes.tables(HingeTables, [limit for limit, _ in groups])
    rows = np.concatenate([r for _, r in groups])
    which = np.repeat(np.arange(len(groups)), [len(r) for _, r in groups])
    for start in range(0, len(rows), CHUNK):
        r = rows[start:start + CHUNK]
        out[r] = tables.clamp(q[r], which[start:start + CHUNK])
