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

Limits whose OPTIMAL correction is exact on outlines of arcs and segments (RECT, OVAL, POLYGON,
either fit) correct their rotations outside together, whatever limit each row has: their
outlines padded to one size (``_OutlineTables``; outlines of up to 12 edges, larger ones alone),
the nearest vertex or edge foot of each row's own outline is found in one pass [000 §4.1-4.5],
with the same arithmetic as the single-limit kernel (``regions._nearest_on_sphere``), so the
swing points are the same floats.

The result of each rotation equals ``limit.clamp`` of that rotation to round-off: rotations
inside are returned unchanged, the others as the limit corrects them.
"""

import numpy as np

from .limits import JointLimit
from .projection import MATH, NP, TWO_PI, _compose, _parts, _sphere_to_plane
from .regions import _candidate_point, _OutlineRegion

# Below this many rotations to correct, one at a time is cheaper than numpy's per-call cost
# (measured crossovers: ~25 for RECT, OVAL and POLYGON, ~75 for the numeric smooth shapes).
SINGLE_MAX = 24
SINGLE_MAX_SMOOTH = 72
SINGLE_MAX_FLOATS = 64     # other limits with a float path (the hinge: 3 µs a rotation, numpy ~200 µs a call)
OUTLINES_MIN = 16       # rotations outside outline limits corrected together from this many (measured ~15)
OUTLINES_MAX_CANDIDATES = 24    # vertices + edges; larger outlines alone (the padded pass costs more from ~24)
OUTLINES_CHUNK = 4096


def _outside_swing_twist(q, groups):
    """Per ``JointLimit`` group, the rows of ``q`` outside the limit, where they are in the
    shared split, and whether their swing is inside; and the split ``(px, py, pz, s, t, psi)``
    of every row of the groups, one after the other."""
    rows = np.concatenate([r for _, r in groups])
    w, x, y, z = np.ascontiguousarray(q[rows].T)
    *parts, pole = _parts(w, x, y, z, NP)
    _, _, _, s, t, psi = parts
    out, start = [], 0
    for limit, r in groups:
        part = slice(start, start + len(r))
        swing_in = ~pole[part] & limit.region.contains_st(s[part], t[part])
        bad = np.flatnonzero(~(swing_in & limit._twist_inside(psi[part], NP)))
        out.append((r[bad], bad + start, swing_in[bad]))
        start += len(r)
    return out, parts


def _is_outline(limit):
    """Whether ``limit`` corrects with the others of ``_clamp_outlines`` (small outlines only:
    each row pays for the largest outline of the pass)."""
    if limit.correction != "OPTIMAL" or not isinstance(limit.region, _OutlineRegion):
        return False
    outline = limit.region.outline
    return len(outline.vertices3) + len(outline.edges3) <= OUTLINES_MAX_CANDIDATES


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
        outlines = []
        outside, parts = _outside_swing_twist(q, swing)
        for (limit, _), (bad, at, swing_in) in zip(swing, outside):
            if _is_outline(limit):
                outlines.append((limit, bad, at, swing_in))
            elif len(bad) >= _single_max(limit):
                out[bad] = limit.clamp(q[bad])
            else:
                one_by_one.append((limit, bad))
        if sum(len(bad) for _, bad, _, _ in outlines) >= OUTLINES_MIN:
            _clamp_outlines(q, out, outlines, parts)
        else:
            one_by_one += [(limit, bad) for limit, bad, _, _ in outlines]
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


# --- outline limits, corrected together ------------------------------------------------------


class _OutlineTables:
    """The outlines and twist ranges of several outline limits, padded to one size: vertices
    ``(L, V, 3)`` (repeats of the first vertex, never nearer than it), edges ``(L, E, 9)``
    (``regions._Outline.edges3``; padding never holds a foot: ``m = 0``, ``m·A = 1``), candidate
    points ``(L, V + E, 7)`` (``_Outline.candidates``, edges from column ``V``)."""

    def __init__(self, limits):
        outlines = [limit.region.outline for limit in limits]
        n_v = max(len(o.vertices3) for o in outlines)
        n_e = max(len(o.edges3) for o in outlines)
        self.vertices = np.empty((len(limits), n_v, 3))
        self.edges = np.zeros((len(limits), n_e, 9))
        self.edges[..., 5] = 1.0
        self.table = np.zeros((len(limits), n_v + n_e, 7))
        for i, outline in enumerate(outlines):
            vertices, edges = np.array(outline.vertices3), np.array(outline.edges3)
            self.vertices[i] = vertices[0]
            self.vertices[i, :len(vertices)] = vertices
            self.edges[i, :len(edges)] = edges
            table = np.array(outline.candidates(MATH)).T
            self.table[i, :len(vertices)] = table[:len(vertices)]
            self.table[i, n_v:n_v + len(edges)] = table[len(vertices):]
        twist = [limit.twist or (-np.inf, np.inf) for limit in limits]
        self.lo, self.hi = (np.array(column) for column in zip(*twist))
        self.free = np.array([limit.twist is None for limit in limits])
        self.fixed = np.array([limit.fix_twist for limit in limits])


_tables = {}    # tuple of limits -> _OutlineTables (the limits kept alive with their tables)


def forget_tables():
    """Let go of the padded tables (and the limits they keep)."""
    _tables.clear()


def _outline_tables(limits):
    key = tuple(limits)
    tables = _tables.get(key)
    if tables is None:
        if len(_tables) >= 64:
            _tables.clear()
        tables = _tables[key] = _OutlineTables(limits)
    return tables


def _nearest_on_outlines(px, py, pz, which, tables):
    """``regions._nearest_on_sphere`` of each unit point on the outline ``which`` of ``tables``
    (the same candidates in the same order, the first nearest kept: the same floats)."""
    px, py, pz = px[:, None], py[:, None], pz[:, None]
    vx, vy, vz = np.moveaxis(tables.vertices[which], -1, 0)
    dx, dy, dz = px - vx, py - vy, pz - vz
    d_vertex = dx * dx + dy * dy + dz * dz
    nx, ny, nz, h, rho, ma, mx, my, mz = np.moveaxis(tables.edges[which], -1, 0)
    k = px * nx + py * ny + pz * nz
    ex, ey, ez = px - k * nx, py - k * ny, pz - k * nz
    el = np.sqrt(ex * ex + ey * ey + ez * ez)
    on_edge = (el > 1e-300) & ((px * mx + py * my + pz * mz) * rho >= ma * el)
    dk, dr = k - h, el - rho
    d_edge = np.where(on_edge, dk * dk + dr * dr, np.inf)
    code = np.argmin(np.concatenate((d_vertex, d_edge), axis=1), axis=1)
    rows = tables.table[which, code].T      # each row's own candidate, as the kernel's table columns
    return _candidate_point(px[:, 0], py[:, 0], pz[:, 0], np.arange(len(code)), rows, NP)


def _twist_clamp(psi, which, tables):
    """``JointLimit._twist_clamp`` of each twist with the range of its limit ``which``."""
    lo, hi = tables.lo[which], tables.hi[which]
    inside = (psi >= lo) & (psi <= hi)
    with np.errstate(invalid="ignore"):     # free twist: inf - inf, not used
        nearer_lo = (lo - psi) % TWO_PI < (psi - hi) % TWO_PI
    clamped = np.where(inside, psi, np.where(nearer_lo, lo, hi))
    return np.where(tables.fixed[which], psi * 0.0, np.where(tables.free[which], psi, clamped))


def _clamp_outlines(q, out, groups, parts):
    """``out[bad] = limit.clamp(q[bad])`` for each ``(limit, bad, at, swing_in)`` of ``groups``
    (outline limits, OPTIMAL; ``at``: where the rows ``bad`` are in the split ``parts`` of
    ``_outside_swing_twist``; ``swing_in``: which of them have their swing inside), all rows in
    one pass (``JointLimit._clamp_block`` with each row's own outline and twist range)."""
    tables = _outline_tables([limit for limit, _, _, _ in groups])
    rows = np.concatenate([bad for _, bad, _, _ in groups])
    at = np.concatenate([at for _, _, at, _ in groups])
    swing_in = np.concatenate([inside for _, _, _, inside in groups])
    which = np.repeat(np.arange(len(groups)), [len(bad) for _, bad, _, _ in groups])
    px, py, pz, s, t, psi = (part[at] for part in parts)
    fix = np.flatnonzero(~swing_in)
    for start in range(0, len(fix), OUTLINES_CHUNK):    # (rows, vertices + edges) arrays per chunk
        f = fix[start:start + OUTLINES_CHUNK]
        s[f], t[f] = _sphere_to_plane(*_nearest_on_outlines(px[f], py[f], pz[f], which[f], tables), NP)
    qw, qx, qy, qz = _compose(s, t, _twist_clamp(psi, which, tables), NP)
    w, x, y, z = q[rows].T
    sign = np.where(qw * w + qx * x + qy * y + qz * z < 0.0, -1.0, 1.0)
    out[rows] = np.stack((qw, qx, qy, qz), axis=-1) * sign[:, None]
