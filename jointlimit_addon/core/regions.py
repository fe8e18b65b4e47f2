"""Swing regions on the (s, t) projection plane and their corrections [000 §3-4].

Every region derives from ``PlaneRegion`` and provides, vectorised over arrays:

- ``contains_st(s, t) -> bool``: boundary counts as inside, within ``self.tol``;
- ``clamp_simple(s, t) -> (s, t)``: the paper's simple corrections on the plane;
- ``clamp_optimal(P) -> P``: geodesic nearest point of the region for unit points ``(..., 3)``
  on the sphere (works at the pole); points inside are returned unchanged;
- ``boundary_points(n) -> (n, 2)``: ordered (s, t) points along the outline.

``ELLIPSE`` and ``SUPERELLIPSE`` live in ``regions_smooth.py`` and build on this base class.
"""

import math

import numpy as np

from . import projection

_TWO_PI = 2.0 * math.pi


class PlaneRegion:
    """Base class of swing regions on the (s, t) plane [000 §3].

    Subclasses set ``bounds = (s0, s1, t0, t1)`` (bounding box of the region on the plane) and
    ``tol`` (absolute tolerance of ``contains_st`` on the plane), and implement the four methods
    below. Optional overrides, all with working defaults:

    - ``nearest_boundary(P)`` / ``nearest_boundary_xyz(px, py, pz)``: the OPTIMAL point for
      points already known to be outside (``JointLimit`` tests containment itself first);
    - ``contains1``, ``clamp_simple1``, ``clamp_optimal1``, ``nearest_boundary1`` (and
      ``nearest_boundary_st1``, the same on the plane): the same on
      Python floats, for the one-rotation fast path of ``JointLimit.clamp`` (the defaults wrap
      the vector methods and cost a few numpy calls).
    """

    shape = None
    bounds = (0.0, 0.0, 0.0, 0.0)
    tol = 1e-12

    def contains_st(self, s, t):
        """Bool array: is ``(s, t)`` in the region (boundary included, within ``tol``)."""
        raise NotImplementedError

    def clamp_simple(self, s, t):
        """Simple correction on the plane [000 eq.14, 15]; inside points unchanged."""
        raise NotImplementedError

    def clamp_optimal(self, P):
        """Geodesic nearest point of the region to unit points ``P`` ``(..., 3)`` [000 §4.1]."""
        raise NotImplementedError

    def boundary_points(self, n):
        """``(n, 2)`` ordered (s, t) points on the outline (not repeating the first)."""
        raise NotImplementedError

    # Helpers shared by all regions.

    def contains_sphere(self, P):
        """Region test for unit points ``(..., 3)``; the pole is never inside (regions are bounded)."""
        P = np.asarray(P, dtype=np.float64)
        s, t = projection._sphere_to_plane(P[..., 0], P[..., 1], P[..., 2], projection.NP)
        pole = ~np.isfinite(s) | ~np.isfinite(t)
        return ~pole & self.contains_st(np.where(pole, 0.0, s), np.where(pole, 0.0, t))

    def contains1(self, s, t):
        """Scalar ``contains_st`` for Python floats."""
        return bool(self.contains_st(np.array([s]), np.array([t]))[0])

    def clamp_simple1(self, s, t):
        """Scalar ``clamp_simple`` for Python floats."""
        sm, tm = self.clamp_simple(np.array([s]), np.array([t]))
        return float(sm[0]), float(tm[0])

    def clamp_optimal1(self, px, py, pz):
        """Scalar ``clamp_optimal`` for Python floats."""
        out = self.clamp_optimal(np.array([[px, py, pz]]))[0]
        return float(out[0]), float(out[1]), float(out[2])

    def nearest_boundary1(self, px, py, pz):
        """Scalar ``nearest_boundary`` (the point is known to be outside) for Python floats."""
        return self.clamp_optimal1(px, py, pz)

    def nearest_boundary_st1(self, px, py, pz):
        """``nearest_boundary1`` as ``(s, t)`` on the plane (the result is never the pole)."""
        return projection._sphere_to_plane(*self.nearest_boundary1(px, py, pz), projection.MATH)

    def nearest_boundary(self, P):
        """Geodesic nearest point of the region for points known to be outside it.

        ``JointLimit`` calls this after its own inside test; the default is ``clamp_optimal``.
        """
        return self.clamp_optimal(P)

    def nearest_boundary_xyz(self, px, py, pz):
        """``nearest_boundary`` on component arrays; returns ``(x, y, z)``."""
        P = self.nearest_boundary(np.stack((px, py, pz), axis=-1))
        return P[..., 0], P[..., 1], P[..., 2]


# --- Outlines of straight segments and circular arcs ---------------------------------------------
#
# On the sphere every such edge is an arc of a circle, i.e. sphere ∩ plane {X : n·X = h}
# (|n| = 1) [000 §4.2 table]: a straight line of the plane gives a circle through the pole, a
# circle of the plane one that misses it; it is a great circle (h = 0) exactly when the plane
# circle satisfies d² = r² - 1 [000 eq.10]. The spherical perpendicular from P to that circle
# [000 §4.1] is the great circle through P and the circle's axis n, so its foot is
#
#     F = h n + rho (P - (P·n) n) / |P - (P·n) n|,    rho = sqrt(1 - h²),
#
# the same point the paper constructs on the plane for a straight edge [000 eq.11] and for an arc
# [000 eq.18-23] (of the two intersections, the ± of eq.20-22, F is the nearer one; the other
# is the farthest point of the circle). Along a circle the distance to P falls monotonically to
# F and rises after it, so the nearest point of an edge is F when F lies on the edge (P is in the
# edge's "nearest-point region" [000 §4.3.1, eq.12-13]), else one of its end vertices. The
# nearest boundary point is the best of these candidates over all edges and vertices [000 §4.3.1,
# last paragraph: "else the nearest corner"]. Distances are compared as chords |P - F|², which
# order like geodesic distances and stay exact for tiny corrections.


def _chord2(px, py, pz, qx, qy, qz):
    dx, dy, dz = px - qx, py - qy, pz - qz
    return dx * dx + dy * dy + dz * dz


def _take(better, d, best, cand, cur, ops):
    """Running minimum: keep candidate ``cand`` (tuple of components) where ``better``."""
    if ops is projection.MATH:
        return (d, cand) if better else (best, cur)
    return np.where(better, d, best), tuple(np.where(better, c, o) for c, o in zip(cand, cur))


def _nearest_on_sphere(px, py, pz, outline, ops):
    """Geodesic nearest outline point of unit points (components) [000 §4.1-4.5].

    Candidates are numbered: vertices ``0..V-1``, edge feet ``V..V+E-1``. For an edge with axis
    ``n``, offset ``h`` and radius ``rho``, write ``P = k n + e``; the foot is
    ``F = h n + rho e/|e|``, so ``|P - F|² = (k - h)² + (|e| - rho)²`` exactly, and F lies on the
    edge iff ``m·F >= m·A``, i.e. ``rho (m·P) >= |e| (m·A)`` (``m`` is normal to the chord plane
    and to ``n``). Only the winner's point is built, by ``_candidate_point``.
    """
    vx, vy, vz = outline.vertices3[0]
    best, code = _chord2(px, py, pz, vx, vy, vz), px * 0.0
    for i, (vx, vy, vz) in enumerate(outline.vertices3[1:], 1):
        d = _chord2(px, py, pz, vx, vy, vz)
        best, code = ops.take(d < best, d, best, float(i), code)
    first = len(outline.vertices3)
    scalar = ops is projection.MATH
    for j, (nx, ny, nz, h, rho, ma, mx, my, mz) in enumerate(outline.edges3):
        k = px * nx + py * ny + pz * nz
        ex, ey, ez = px - k * nx, py - k * ny, pz - k * nz
        el = ops.sqrt(ex * ex + ey * ey + ez * ez)
        # el = 0: P on the circle's axis, all its points equally far; the vertices decide.
        on_edge = (el > 1e-300) & ((px * mx + py * my + pz * mz) * rho >= ma * el)
        if scalar and not on_edge:
            continue
        dk, dr = k - h, el - rho
        d = dk * dk + dr * dr
        best, code = ops.take(on_edge & (d < best), d, best, float(first + j), code)
    return _candidate_point(px, py, pz, ops.index(code), outline.candidates(ops), ops)


def _candidate_point(px, py, pz, c, table, ops):
    """Point of candidate ``c``: ``base + rho e/|e|`` (vertices have ``n = 0, rho = 0``)."""
    bx, by, bz, nx, ny, nz, rho = (col[c] for col in table)
    k = px * nx + py * ny + pz * nz
    ex, ey, ez = px - k * nx, py - k * ny, pz - k * nz
    el = ops.sqrt(ex * ex + ey * ey + ez * ez)
    f = rho / ops.where(el > 1e-300, el, 1.0)
    return bx + ex * f, by + ey * f, bz + ez * f


def _nearest_on_plane(s, t, outline):
    """Euclidean nearest outline point on the plane for arrays; returns ``(s, t)``."""
    v0 = outline.vertices[0]
    cur = (s * 0.0 + v0[0], t * 0.0 + v0[1])
    ds, dt = s - v0[0], t - v0[1]
    best = ds * ds + dt * dt
    for i, e in enumerate(outline.edges2):
        if e[0] == "line":
            _, a_s, a_t, d_s, d_t, inv_l2 = e
            u = np.clip(((s - a_s) * d_s + (t - a_t) * d_t) * inv_l2, 0.0, 1.0)
            qs, qt = a_s + u * d_s, a_t + u * d_t
            on_edge = True
        else:
            _, a_s, a_t, c_s, c_t, r, _m_s, _m_t = e
            vs, vt = s - c_s, t - c_t
            vl = np.sqrt(vs * vs + vt * vt)
            ok = vl > 1e-300
            dr = _radial_offset(s, t, a_s, a_t, c_s, c_t, r, projection.NP)
            near_p = _from_the_point(s, t, dr, c_s, c_t, r)
            f = np.where(near_p, -dr, r) / np.where(ok, vl, 1.0)
            qs, qt = np.where(near_p, s, c_s) + vs * f, np.where(near_p, t, c_t) + vt * f
            on_edge = ok & _in_arc_wedge(s, t, outline, i, projection.NP)
        ds, dt = s - qs, t - qt
        d = ds * ds + dt * dt
        best, cur = _take(on_edge & (d < best), d, best, (qs, qt), cur, projection.NP)
    for v in outline.vertices[1:]:
        ds, dt = s - v[0], t - v[1]
        d = ds * ds + dt * dt
        best, cur = _take(d < best, d, best, v, cur, projection.NP)
    return cur


def _nearest_on_plane1(s, t, outline):
    """Scalar ``_nearest_on_plane`` for Python floats; an edge whose box is no nearer than the
    best point so far is skipped."""
    best_s, best_t = outline.vertices[0]
    best = (s - best_s) ** 2 + (t - best_t) ** 2
    for i, (e, (lo_s, hi_s, lo_t, hi_t)) in enumerate(zip(outline.edges2, outline.edge_boxes)):
        gs = lo_s - s if s < lo_s else (s - hi_s if s > hi_s else 0.0)
        gt = lo_t - t if t < lo_t else (t - hi_t if t > hi_t else 0.0)
        if gs * gs + gt * gt >= best:
            continue
        if e[0] == "line":
            _, a_s, a_t, d_s, d_t, inv_l2 = e
            u = ((s - a_s) * d_s + (t - a_t) * d_t) * inv_l2
            u = 0.0 if u < 0.0 else (1.0 if u > 1.0 else u)
            qs, qt = a_s + u * d_s, a_t + u * d_t
        else:
            _, a_s, a_t, c_s, c_t, r, _m_s, _m_t = e
            vs, vt = s - c_s, t - c_t
            vl = math.sqrt(vs * vs + vt * vt)
            if not vl > 1e-300 or not _in_arc_wedge(s, t, outline, i, projection.MATH):
                continue
            dr = _radial_offset(s, t, a_s, a_t, c_s, c_t, r, projection.MATH)
            if _from_the_point(s, t, dr, c_s, c_t, r):
                qs, qt = s - vs * dr / vl, t - vt * dr / vl
            else:
                qs, qt = c_s + vs * r / vl, c_t + vt * r / vl
        d = (s - qs) ** 2 + (t - qt) ** 2
        if d < best:
            best, best_s, best_t = d, qs, qt
    for v_s, v_t in outline.vertices[1:]:
        d = (s - v_s) ** 2 + (t - v_t) ** 2
        if d < best:
            best, best_s, best_t = d, v_s, v_t
    return best_s, best_t


def _radial_offset(s, t, a_s, a_t, c_s, c_t, r, ops):
    """``|p - c| - r`` for the circle about ``c`` through ``a``, from ``|p - c|² - r²`` taken at
    ``a`` (exact for a nearly flat arc's huge radius, where ``|p - c|`` and ``r`` cancel)."""
    d_s, d_t = s - a_s, t - a_t
    power = d_s * d_s + d_t * d_t + 2.0 * (d_s * (a_s - c_s) + d_t * (a_t - c_t))
    return power / (ops.sqrt(ops.maximum(power + r * r, 0.0)) + r)


def _from_the_point(s, t, dr, c_s, c_t, r):
    """Whether the foot on the circle is better taken as ``p`` moved by ``-dr`` than as ``c`` plus
    ``r`` (the smaller numbers round less: a point near a huge circle, or far from a small one)."""
    return abs(s) + abs(t) + abs(dr) < abs(c_s) + abs(c_t) + r


def _in_arc_wedge(s, t, outline, i, ops):
    """Whether (s, t) lies in the angle of arc edge ``i`` seen from its centre (between the radii
    to its ends, on the arc's side): the sides of those radii, each taken from its end (exact
    for a nearly flat arc's huge radius, where a point rebuilt on the circle is not)."""
    _, a_s, a_t, c_s, c_t, _r, _m_s, _m_t = outline.edges2[i]
    b_s, b_t, turn, major = outline.arc_ends[i]
    after_a = turn * ((a_s - c_s) * (t - a_t) - (a_t - c_t) * (s - a_s)) >= 0.0
    before_b = turn * ((s - b_s) * (b_t - c_t) - (t - b_t) * (b_s - c_s)) >= 0.0
    return (after_a | before_b) if major else (after_a & before_b)


def _near_outline(s, t, outline, tol, ops):
    """Is (s, t) within ``tol`` of the outline on the plane (the boundary tolerance)."""
    near = s * 0.0 > 1.0
    tol2 = tol * tol
    scalar = ops is projection.MATH
    if scalar:      # one point, clearly away from the whole outline: no edge to look at
        lo_s, hi_s, lo_t, hi_t = outline.box
        if not (lo_s - tol <= s <= hi_s + tol and lo_t - tol <= t <= hi_t + tol):
            return False
    for i, (e, (lo_s, hi_s, lo_t, hi_t)) in enumerate(zip(outline.edges2, outline.edge_boxes)):
        if scalar and not (lo_s - tol <= s <= hi_s + tol and lo_t - tol <= t <= hi_t + tol):
            continue  # one point, clearly away from this edge: skip the arithmetic
        if e[0] == "line":
            _, a_s, a_t, d_s, d_t, inv_l2 = e
            u = ops.minimum(ops.maximum(((s - a_s) * d_s + (t - a_t) * d_t) * inv_l2, 0.0), 1.0)
            ds, dt = s - a_s - u * d_s, t - a_t - u * d_t
            near = near | (ds * ds + dt * dt <= tol2)
        else:
            _, a_s, a_t, c_s, c_t, r, _m_s, _m_t = e
            dr = _radial_offset(s, t, a_s, a_t, c_s, c_t, r, ops)
            near = near | (_in_arc_wedge(s, t, outline, i, ops) & (dr * dr <= tol2))
    for v_s, v_t in outline.vertices:
        ds, dt = s - v_s, t - v_t
        near = near | (ds * ds + dt * dt <= tol2)
    return near


def _inside_parity(s, t, outline, ops):
    """Even-odd inside test: the crossings of the ray toward +s with the outline itself, its
    straight edges and the pieces of its arcs that are monotone in ``t``, each counted by the same
    half-open rule (``(t0 > t) != (t1 > t)``, the vertices' own ``t``), so that no point inside is
    special (a chord polygon XOR the arcs' segments left the points on a chord out: the rest pose
    on the chord of a circle made of two half-circle edges)."""
    inside = s * 0.0 > 1.0
    scalar = ops is projection.MATH
    for a_s, a_t, b_s, b_t, inv_dt in outline.chords:
        cross = (a_t > t) != (b_t > t)
        if scalar and not cross:
            continue
        inside = inside ^ (cross & (s < a_s + (t - a_t) * (b_s - a_s) * inv_dt))
    for t0, t1, c_s, c_t, side, a_s, a_t in outline.pieces:
        cross = (t0 > t) != (t1 > t)
        if scalar and not cross:
            continue
        # left of the piece: left of the centre, and within the circle on the right half or beyond it
        # on the left; |p - c|² - r² taken from the arc's end a (exact for a nearly flat arc's huge r)
        d_s, d_t = s - a_s, t - a_t
        in_circle = d_s * d_s + d_t * d_t + 2.0 * (d_s * (a_s - c_s) + d_t * (a_t - c_t)) < 0.0
        left = (s < c_s) | in_circle if side > 0.0 else (s < c_s) & (in_circle ^ True)
        inside = inside ^ (cross & left)
    return inside


def _monotone_pieces(a, b, centre, radius, bulge):
    """The arc from ``a`` to ``b`` about ``centre`` (counter-clockwise for a positive ``bulge``)
    split at the circle's top and bottom: ``[(t0, t1, c_s, c_t, side, a_s, a_t)]``, each piece
    monotone in ``t`` on the side ``side`` (+1 right of the centre, -1 left); the ends keep the
    vertices' own ``t``; ``a`` is on the circle (the circle's test is taken from it)."""
    c_s, c_t = centre
    start = math.atan2(a[1] - c_t, a[0] - c_s)
    turn = 1.0 if bulge > 0.0 else -1.0
    sweep = turn * math.atan2(b[1] - c_t, b[0] - c_s) - turn * start
    sweep = sweep % _TWO_PI or _TWO_PI      # (unsigned; a whole turn where the ends round together)
    cuts = sorted(off for off in ((turn * (k * math.pi / 2.0 - start)) % _TWO_PI for k in (1, 3)) if 0.0 < off < sweep)
    offsets = [0.0, *cuts, sweep]
    ts = [a[1], *(c_t + radius * math.sin(start + turn * off) for off in cuts), b[1]]
    return [(ts[i], ts[i + 1], c_s, c_t,
             1.0 if math.cos(start + turn * 0.5 * (offsets[i] + offsets[i + 1])) >= 0.0 else -1.0, a[0], a[1])
            for i in range(len(offsets) - 1)]


def _circle_frame(centre, n, a3):
    u = (a3 - centre) / np.linalg.norm(a3 - centre)
    return u, np.cross(n, u)


def _arc_span(centre, n, a3, b3, mid3):
    """Signed angle about ``n`` from ``a3`` to ``b3`` going through ``mid3`` (atan2: exact even
    for tiny arcs)."""
    u, v = _circle_frame(centre, n, a3)

    def angle(x):
        return np.arctan2(np.dot(x - centre, v), np.dot(x - centre, u)) % (2.0 * np.pi)

    end, through = angle(b3), angle(mid3)
    return end if through < end else end - 2.0 * np.pi


def edge_midpoint(a, b, bulge):
    """The midpoint ``(s, t)`` of the edge from ``a`` to ``b`` (plane points) with ``bulge``:
    the chord's midpoint moved by ``bulge`` times half the chord along its right-hand normal
    (a positive bulge puts the arc's midpoint on that side)."""
    d_s, d_t = b[0] - a[0], b[1] - a[1]
    half = 0.5 * bulge
    return a[0] + 0.5 * d_s + half * d_t, a[1] + 0.5 * d_t - half * d_s


def split_edge(a, b, bulge):
    """``(midpoint, bulge)``: the point that splits the edge from ``a`` to ``b`` into two halves
    of the same line or circle, and the bulge of each half (half the included angle:
    ``tan(theta / 8) = tan(atan(bulge) / 2)``)."""
    return edge_midpoint(a, b, bulge), math.tan(0.5 * math.atan(bulge))


class _Outline:
    """Closed outline of straight segments and circular arcs, precomputed for the kernels.

    ``vertices`` ``(E, 2)`` and ``bulges`` ``(E,)``: edge ``i`` runs from vertex ``i`` to vertex
    ``i + 1`` (the last back to the first). ``bulge = tan(theta / 4)`` with ``theta`` the arc's
    included angle; 0 is a straight edge, positive turns counter-clockwise (the arc bulges to the
    right of the direction of travel), 1 is a half circle (the convention of DXF polylines).
    """

    def __init__(self, vertices, bulges):
        self.vertices = [tuple(map(float, v)) for v in vertices]
        self.bulges = [float(b) for b in bulges]
        self.edges2, self.edges3, self.chords, self.pieces, self.arcs = [], [], [], [], []
        self.arc_ends = []  # per edge: None for a line, (b_s, b_t, turn, major) for an arc
        self.spans = []  # signed angle of each edge about its circle's axis
        self.vertices3 = [tuple(map(float, projection._plane_to_sphere(*v))) for v in self.vertices]
        n_edges = len(self.vertices)
        for i in range(n_edges):
            self._add_edge(self.vertices[i], self.vertices[(i + 1) % n_edges], self.bulges[i])
        self._build_candidates()
        self.edges2 = [(e[0], *map(float, e[1:])) for e in self.edges2]     # plain floats: one point is faster
        self.edge_boxes = [self._edge_box(i) for i in range(n_edges)]
        self.box = tuple(f(b[k] for b in self.edge_boxes) for k, f in enumerate((min, max, min, max)))

    def _edge_box(self, i):
        """Bounding box (s_min, s_max, t_min, t_max) of edge ``i`` on the plane (of the whole
        circle for an arc: conservative)."""
        a, b = self.vertices[i], self.vertices[(i + 1) % len(self.vertices)]
        s_lo, s_hi, t_lo, t_hi = min(a[0], b[0]), max(a[0], b[0]), min(a[1], b[1]), max(a[1], b[1])
        if self.arcs[i] is not None:
            c_s, c_t, r = self.arcs[i]
            s_lo, s_hi, t_lo, t_hi = min(s_lo, c_s - r), max(s_hi, c_s + r), min(t_lo, c_t - r), max(t_hi, c_t + r)
        return s_lo, s_hi, t_lo, t_hi

    def _add_edge(self, a, b, bulge):
        a_s, a_t = a
        d_s, d_t = b[0] - a[0], b[1] - a[1]
        l2 = d_s * d_s + d_t * d_t
        length = np.sqrt(l2)
        r_s, r_t = d_t / length, -d_s / length
        mid = edge_midpoint(a, b, bulge)
        if bulge == 0.0:
            self.chords.append((a_s, a_t, b[0], b[1], 1.0 / d_t if d_t != 0.0 else 0.0))
            self.edges2.append(("line", a_s, a_t, d_s, d_t, 1.0 / l2))
            self.arc_ends.append(None)
            # Line  a s + b t = c  ->  plane n·X = h with n = (-a, -c, b), h = c.
            la, lb = -d_t, d_s
            lc = la * a_s + lb * a_t
            n = np.array([-la, -lc, lb])
            h, rho_n = lc, np.hypot(la, lb)
            self.arcs.append(None)
        else:
            radius = length * (1.0 + bulge * bulge) / (4.0 * abs(bulge))
            sgn = 1.0 if bulge > 0 else -1.0
            c_s, c_t = mid[0] - sgn * radius * r_s, mid[1] - sgn * radius * r_t
            m_s, m_t = sgn * r_s, sgn * r_t
            self.edges2.append(("arc", a_s, a_t, c_s, c_t, radius, m_s, m_t))
            self.arc_ends.append((float(b[0]), float(b[1]), sgn, abs(bulge) > 1.0))
            self.pieces += _monotone_pieces(a, b, (c_s, c_t), radius, bulge)
            # Circle (c, r): power of the origin K = |c|² - r² = 2 c·a - |a|² (no cancellation);
            # plane n = (2 c_s, K - 1, -2 c_t), h = -(1 + K), |n|² - h² = 4 r².
            k_pow = 2.0 * (c_s * a_s + c_t * a_t) - (a_s * a_s + a_t * a_t)
            n = np.array([2.0 * c_s, k_pow - 1.0, -2.0 * c_t])
            h, rho_n = -(1.0 + k_pow), 2.0 * radius
            self.arcs.append((c_s, c_t, radius))
        norm = np.linalg.norm(n)
        n, h, rho = n / norm, h / norm, rho_n / norm
        a3 = np.array(projection._plane_to_sphere(a_s, a_t))
        b3 = np.array(projection._plane_to_sphere(*b))
        m3 = np.array(projection._plane_to_sphere(*mid))
        # m: normal of the plane through the chord A B and the axis n, pointing to the edge's side.
        # A short edge's midpoint is too close to its chord to tell the side reliably; then use
        # the circle's centre, which lies beyond the chord for a minor arc, on the edge's side
        # for a major one (cos(span / 2) < 0).
        m = np.cross(b3 - a3, n)
        m = m / np.linalg.norm(m)
        span = _arc_span(h * n, n, a3, b3, m3)
        cos_half = np.cos(0.5 * span)
        side = np.dot(m, m3 - a3) if abs(cos_half) < 0.5 else -cos_half * np.dot(m, h * n - a3)
        if side < 0.0:
            m = -m
        self.spans.append(float(span))
        self.edges3.append((*map(float, n), float(h), float(rho), float(np.dot(m, a3)), *map(float, m)))

    def candidates(self, ops):
        """Columns (base xyz, axis xyz, rho) of the candidates of ``_nearest_on_sphere``: as
        numpy arrays for ``NP`` (fancy-indexed), as tuples of floats for ``MATH``."""
        if ops is projection.NP:
            return self._table_np
        return self._table_py

    def _build_candidates(self):
        rows = [(*v, 0.0, 0.0, 0.0, 0.0) for v in self.vertices3]
        for nx, ny, nz, h, rho, *_ in self.edges3:
            rows.append((h * nx, h * ny, h * nz, nx, ny, nz, rho))
        self._table_py = tuple(zip(*rows))
        self._table_np = tuple(np.array(col) for col in self._table_py)

    def sphere_samples(self, n):
        """``(n, 3)`` ordered points on the outline on the sphere, evenly spaced by arc length
        within each edge, every vertex included (``n >= number of edges``)."""
        n_edges = len(self.edges3)
        if n < n_edges:
            raise ValueError(f"need at least {n_edges} boundary points for this outline, got {n}")
        frames = [self._edge_frame(i) for i in range(n_edges)]
        lengths = np.array([f[-1] for f in frames])
        share = (n - n_edges) * lengths / lengths.sum()
        counts = 1 + np.floor(share).astype(int)
        extra = n - counts.sum()
        counts[np.argsort(np.floor(share) - share)[:extra]] += 1
        pts = []
        for (centre, rho, u, v, span, _), k in zip(frames, counts):
            phi = span * np.arange(k) / k
            pts.append(centre + rho * (np.cos(phi)[:, None] * u + np.sin(phi)[:, None] * v))
        return np.concatenate(pts, axis=0)

    def _edge_frame(self, i):
        """Centre, radius, in-plane frame (u at the start vertex), signed angle to the end vertex
        passing through the edge, and arc length of edge ``i`` on the sphere."""
        nx, ny, nz, h, rho, *_ = self.edges3[i]
        n = np.array([nx, ny, nz])
        centre = h * n
        u, v = _circle_frame(centre, n, np.array(self.vertices3[i]))
        span = self.spans[i]
        return centre, rho, u, v, span, abs(span) * rho


class _OutlineRegion(PlaneRegion):
    """Region bounded by an ``_Outline``: exact OPTIMAL correction on the sphere for all of them."""

    def __init__(self, outline):
        self.outline = outline
        v = np.array(outline.vertices)
        pts = outline.sphere_samples(max(256, 4 * len(v)))
        s, t = projection._sphere_to_plane(pts[:, 0], pts[:, 1], pts[:, 2], projection.NP)
        self.bounds = (float(s.min()), float(s.max()), float(t.min()), float(t.max()))
        scale = max(abs(b) for b in self.bounds)
        # Round-off of a boundary point mapped sphere -> plane grows like (1 + s² + t²).
        self.tol = 1e-12 * (1.0 + scale * scale)

    def clamp_optimal(self, P):
        """Geodesic nearest point of the region [000 §4.1, §4.3.1 eq.11-13, §4.5 eq.16-23];
        inside points are returned unchanged."""
        P = np.array(P, dtype=np.float64)
        inside = self.contains_sphere(P)
        if not np.all(inside):
            P[~inside] = self.nearest_boundary(P[~inside])
        return P

    def nearest_boundary(self, P):
        P = np.asarray(P, dtype=np.float64)
        return np.stack(self.nearest_boundary_xyz(P[..., 0], P[..., 1], P[..., 2]), axis=-1)

    def nearest_boundary_xyz(self, px, py, pz):
        return _nearest_on_sphere(px, py, pz, self.outline, projection.NP)

    def clamp_optimal1(self, px, py, pz):
        s, t = projection._sphere_to_plane(px, py, pz, projection.MATH)
        if s != projection.MATH.inf and self.contains1(s, t):
            return px, py, pz
        return _nearest_on_sphere(px, py, pz, self.outline, projection.MATH)

    def nearest_boundary1(self, px, py, pz):
        return _nearest_on_sphere(px, py, pz, self.outline, projection.MATH)

    def boundary_points(self, n):
        """``(n, 2)`` ordered (s, t) outline points, evenly spaced on the sphere per edge."""
        P = self.outline.sphere_samples(int(n))
        s, t = projection._sphere_to_plane(P[:, 0], P[:, 1], P[:, 2], projection.NP)
        return np.stack((s, t), axis=-1)

    def boundary_points_sphere(self, n):
        """``(n, 3)`` ordered outline points on the unit sphere."""
        return self.outline.sphere_samples(int(n))


def _check_range(lo, hi, what):
    lo, hi = float(lo), float(hi)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"{what} range must be finite, got ({lo}, {hi})")
    if not lo < hi:
        raise ValueError(f"{what} range must have min < max, got ({lo}, {hi})")
    return lo, hi


class RectRegion(_OutlineRegion):
    """``s0 <= s <= s1, t0 <= t <= t1`` [000 §3.1, eq.6].

    OPTIMAL: the exact geodesic nearest point [000 §4.3.1, eq.10-13] (spherical perpendicular to
    each edge if its foot is on the edge, else the nearest corner); SIMPLE: per-axis clamp on the
    plane [000 eq.14], good only for small ranges or small corrections [000 Fig.27].
    """

    shape = "RECT"

    def __init__(self, s0, s1, t0, t1):
        self.s0, self.s1 = _check_range(s0, s1, "s")
        self.t0, self.t1 = _check_range(t0, t1, "t")
        verts = [(self.s0, self.t0), (self.s1, self.t0), (self.s1, self.t1), (self.s0, self.t1)]
        super().__init__(_Outline(verts, [0.0] * 4))
        self.bounds = (self.s0, self.s1, self.t0, self.t1)

    def _contains(self, s, t):
        e = self.tol
        return (s >= self.s0 - e) & (s <= self.s1 + e) & (t >= self.t0 - e) & (t <= self.t1 + e)

    def contains_st(self, s, t):
        return self._contains(np.asarray(s, dtype=np.float64), np.asarray(t, dtype=np.float64))

    def contains1(self, s, t):
        return bool(self._contains(s, t))

    def _simple(self, s, t, ops):
        """[000 eq.14] per axis."""
        return ops.minimum(ops.maximum(s, self.s0), self.s1), ops.minimum(ops.maximum(t, self.t0), self.t1)

    def clamp_simple(self, s, t):
        return self._simple(np.asarray(s, dtype=np.float64), np.asarray(t, dtype=np.float64), projection.NP)

    def clamp_simple1(self, s, t):
        return self._simple(s, t, projection.MATH)


class OvalRegion(_OutlineRegion):
    """Stadium inscribed in ``[s0, s1] x [t0, t1]`` [000 §3.3, eq.16-17]: two half circles of
    radius ``r_e = min(s_a, t_a)`` joined by straight edges; upright when ``s_a < t_a``, lying
    when ``s_a > t_a``, a circle when they are equal (to 1e-12 relative).

    OPTIMAL: exact geodesic nearest point [000 §4.5, eq.18-23]; SIMPLE: the nearest point on the
    plane (the stadium is the set within ``r_e`` of the segment joining the arc centres).
    """

    shape = "OVAL"

    def __init__(self, s0, s1, t0, t1):
        self.s0, self.s1 = _check_range(s0, s1, "s")
        self.t0, self.t1 = _check_range(t0, t1, "t")
        sa, sb = 0.5 * (self.s1 - self.s0), 0.5 * (self.s1 + self.s0)  # [000 eq.8]
        ta, tb = 0.5 * (self.t1 - self.t0), 0.5 * (self.t1 + self.t0)
        if abs(sa - ta) <= 1e-12 * max(sa, ta):
            self.r_e = 0.5 * (sa + ta)
            self.c1 = self.c2 = (sb, tb)
            verts, bulges = [(sb + self.r_e, tb), (sb - self.r_e, tb)], [1.0, 1.0]
        elif sa < ta:  # [000 eq.16]
            self.r_e = sa
            self.c1, self.c2 = (sb, self.t0 + sa), (sb, self.t1 - sa)
            verts = [(self.s1, self.c1[1]), (self.s1, self.c2[1]), (self.s0, self.c2[1]), (self.s0, self.c1[1])]
            bulges = [0.0, 1.0, 0.0, 1.0]
        else:  # [000 eq.17]
            self.r_e = ta
            self.c1, self.c2 = (self.s0 + ta, tb), (self.s1 - ta, tb)
            verts = [(self.c1[0], self.t0), (self.c2[0], self.t0), (self.c2[0], self.t1), (self.c1[0], self.t1)]
            bulges = [0.0, 1.0, 0.0, 1.0]
        d_s, d_t = self.c2[0] - self.c1[0], self.c2[1] - self.c1[1]
        self._core = (self.c1[0], self.c1[1], d_s, d_t, 1.0 / (d_s * d_s + d_t * d_t) if (d_s or d_t) else 0.0)
        super().__init__(_Outline(verts, bulges))
        self.bounds = (self.s0, self.s1, self.t0, self.t1)

    def _core_offset(self, s, t, ops):
        """Nearest point of the centre segment and the offset from it."""
        c_s, c_t, d_s, d_t, inv_l2 = self._core
        u = ops.minimum(ops.maximum(((s - c_s) * d_s + (t - c_t) * d_t) * inv_l2, 0.0), 1.0)
        q_s, q_t = c_s + u * d_s, c_t + u * d_t
        return q_s, q_t, s - q_s, t - q_t

    def _contains(self, s, t, ops):
        *_, v_s, v_t = self._core_offset(s, t, ops)
        r = self.r_e + self.tol
        return v_s * v_s + v_t * v_t <= r * r

    def contains_st(self, s, t):
        return self._contains(np.asarray(s, dtype=np.float64), np.asarray(t, dtype=np.float64), projection.NP)

    def contains1(self, s, t):
        return bool(self._contains(s, t, projection.MATH))

    def _simple(self, s, t, ops):
        q_s, q_t, v_s, v_t = self._core_offset(s, t, ops)
        vl = ops.sqrt(v_s * v_s + v_t * v_t)
        inside = vl <= self.r_e
        f = self.r_e / ops.where(inside, 1.0, vl)
        return ops.where(inside, s, q_s + v_s * f), ops.where(inside, t, q_t + v_t * f)

    def clamp_simple(self, s, t):
        return self._simple(np.asarray(s, dtype=np.float64), np.asarray(t, dtype=np.float64), projection.NP)

    def clamp_simple1(self, s, t):
        return self._simple(s, t, projection.MATH)


class PolygonRegion(_OutlineRegion):
    """Region bounded by a closed outline of straight segments and circular arcs on the (s, t)
    plane [000 §3.4.2, §4.6.2].

    ``outline``: a sequence of vertices ``(s, t)`` or ``(s, t, bulge)``; edge ``i`` runs from
    vertex ``i`` to vertex ``i + 1``, the last edge back to the first vertex (do not repeat it).
    ``bulge = tan(theta / 4)`` of the arc's included angle ``theta`` (0 or omitted: straight;
    positive: the arc turns counter-clockwise, bulging to the right of the travel direction;
    1: a half circle), as in DXF polylines. Either orientation is accepted. Supported: any simple
    outline, convex or not; two vertices suffice when an edge is an arc. Rejected with
    ``ValueError``: non-finite values, fewer than two vertices, zero-length edges, zero area,
    self-intersections (checked on a fine sampling of the arcs).

    OPTIMAL: exact geodesic nearest point, per edge and vertex as for the oval [000 eq.18-23];
    SIMPLE: the nearest point on the plane.
    """

    shape = "POLYGON"

    def __init__(self, outline):
        verts, bulges = _parse_outline(outline)
        super().__init__(_Outline(verts, bulges))

    def _contains(self, s, t, ops):
        return _inside_parity(s, t, self.outline, ops) | _near_outline(s, t, self.outline, self.tol, ops)

    def contains_st(self, s, t):
        s, t = np.broadcast_arrays(np.asarray(s, dtype=np.float64), np.asarray(t, dtype=np.float64))
        return self._contains(s, t, projection.NP)

    def contains1(self, s, t):
        ops = projection.MATH
        return bool(_inside_parity(s, t, self.outline, ops)) or bool(_near_outline(s, t, self.outline, self.tol, ops))

    def clamp_simple(self, s, t):
        s, t = np.broadcast_arrays(np.asarray(s, dtype=np.float64), np.asarray(t, dtype=np.float64))
        q_s, q_t = _nearest_on_plane(s, t, self.outline)
        inside = _inside_parity(s, t, self.outline, projection.NP)
        return np.where(inside, s, q_s), np.where(inside, t, q_t)

    def clamp_simple1(self, s, t):
        if _inside_parity(s, t, self.outline, projection.MATH):
            return s, t
        return _nearest_on_plane1(s, t, self.outline)


def check_outline(outline):
    """Raise ``ValueError`` (a message starting with ``outline``) unless ``outline`` makes a valid
    POLYGON region: what ``PolygonRegion`` refuses."""
    _parse_outline(outline)


def _parse_outline(outline):
    """Validate a POLYGON outline; return ``(vertices (E, 2), bulges (E,))``."""
    if outline is None:
        raise ValueError("POLYGON needs an outline: a list of (s, t) or (s, t, bulge) vertices")
    try:
        rows = [tuple(v) for v in outline]
        if any(len(r) not in (2, 3) for r in rows):
            raise TypeError
        data = np.array([(r[0], r[1], r[2] if len(r) == 3 else 0.0) for r in rows], dtype=np.float64).reshape(-1, 3)
    except (TypeError, ValueError):
        raise ValueError(f"outline must be a list of (s, t) or (s, t, bulge) vertices, got {outline!r}") from None
    if not np.all(np.isfinite(data)):
        raise ValueError("outline contains NaN or infinite values")
    verts, bulges = data[:, :2], data[:, 2]
    bulges = np.where(np.abs(bulges) < 1e-9, 0.0, bulges)
    if len(verts) < 2 or (len(verts) == 2 and not np.any(bulges)):
        raise ValueError("outline needs at least three vertices (or two joined by an arc)")
    chord = np.roll(verts, -1, axis=0) - verts
    scale = max(1.0, float(np.abs(verts).max()))
    if np.any(np.hypot(chord[:, 0], chord[:, 1]) <= 1e-12 * scale):
        raise ValueError("outline has a zero-length edge (repeated vertex)")
    poly = _sample_outline(verts, bulges, 24)
    x, y = poly[:, 0], poly[:, 1]
    area = 0.5 * np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y)
    extent = float(np.ptp(poly, axis=0).max())
    crossing = _self_intersects(poly)
    if abs(area) <= 1e-12 * extent * extent and not crossing:     # (a bow tie's halves cancel)
        raise ValueError("outline encloses no area")
    if crossing:
        raise ValueError("outline intersects itself; it must be a simple closed curve")
    return verts, bulges


def _sample_outline(verts, bulges, per_arc):
    """Closed polyline through the vertices, arcs sampled at ``per_arc`` points (on the plane)."""
    pts = []
    for i, (a, bulge) in enumerate(zip(verts, bulges)):
        b = verts[(i + 1) % len(verts)]
        pts.append(a)
        if bulge != 0.0:
            theta = 4.0 * np.arctan(bulge)
            d = b - a
            length = np.hypot(*d)
            radius = length / (2.0 * np.sin(0.5 * abs(theta)))
            # Centre to the left of the chord for a counter-clockwise (positive) arc of < 180°.
            left = np.array([-d[1], d[0]]) / length
            centre = a + 0.5 * d + np.sign(bulge) * left * radius * np.cos(0.5 * theta)
            start = np.arctan2(*(a - centre)[::-1])
            phi = start + theta * np.arange(1, per_arc) / per_arc
            pts.extend(centre + radius * np.stack((np.cos(phi), np.sin(phi)), axis=-1))
    return np.array(pts)


def _self_intersects(poly):
    """Proper crossings between non-adjacent edges of a closed polyline."""
    a, b = poly, np.roll(poly, -1, axis=0)
    n = len(poly)

    def orient(p, q, r):
        return (q[..., 0] - p[..., 0]) * (r[..., 1] - p[..., 1]) - (q[..., 1] - p[..., 1]) * (r[..., 0] - p[..., 0])

    A, B = a[:, None], b[:, None]
    C, D = a[None, :], b[None, :]
    cross = (orient(A, B, C) * orient(A, B, D) < 0) & (orient(C, D, A) * orient(C, D, B) < 0)
    i, j = np.indices((n, n))
    gap = np.abs(i - j)
    return bool(np.any(cross & (gap > 1) & (gap < n - 1)))


def outline_points(limit_or_region, n=64):
    """``(n, 3)`` ordered points on the region's outline on the unit sphere (Blender axes), for
    drawing: the last point repeats the first, so the list is a closed line strip. Every point
    lies on the boundary; none is at the pole (regions are bounded on the plane)."""
    region = getattr(limit_or_region, "region", limit_or_region)
    n = int(n)
    if n < 4:
        raise ValueError(f"outline_points needs n >= 4, got {n}")
    if hasattr(region, "boundary_points_sphere"):
        P = region.boundary_points_sphere(n - 1)
    else:
        st = np.asarray(region.boundary_points(n - 1), dtype=np.float64)
        P = projection.plane_to_sphere(st[:, 0], st[:, 1])
    return np.concatenate((P, P[:1]), axis=0)
