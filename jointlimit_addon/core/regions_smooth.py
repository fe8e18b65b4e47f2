"""ELLIPSE and SUPERELLIPSE swing regions on the (s, t) plane [000 §3.2, §3.4.1, §4.4, §4.6.1].

Both regions are inscribed in the box ``s0 <= s <= s1, t0 <= t <= t1`` [000 eq.6] with centre
``(sb, tb)`` and half sizes ``(sa, ta)`` [000 eq.8]; in normalised coordinates
``u = (s - sb) / sa``, ``v = (t - tb) / ta`` the ellipse is ``u² + v² <= 1`` [000 eq.7] and the
superellipse ``|u|^m + |v|^n <= 1`` [000 eq.9].

SIMPLE: the point is scaled toward the centre until it meets the outline [000 eq.15, §4.6.1].

OPTIMAL: the geodesic nearest point on the sphere [000 §4.1], by the global search of
``regions_search`` (the paper finds no closed form [000 §4.4, §4.6.1]).
"""

import math

import numpy as np

from . import projection, quat
from .regions import PlaneRegion, _check_range
from .regions_local import _CertifiedLocalSearch
from .regions_search import _OutlineSearch


def _half_sizes(s0, s1, t0, t1):
    """``sa, sb, ta, tb`` of the inscribed shape [000 eq.8]."""
    return 0.5 * (s1 - s0), 0.5 * (s1 + s0), 0.5 * (t1 - t0), 0.5 * (t1 + t0)


def _power(x, e):
    """``x ** e`` for an array ``x`` and a scalar ``e``; the exponents of the usual
    superellipses (small integers, 1/2, 1/4) by products and square roots, which cost a
    fraction of a general ``pow``."""
    if e == 2.0:
        return x * x
    if e == 3.0:
        return x * x * x
    if e == 4.0:
        x2 = x * x
        return x2 * x2
    if e == 0.5:
        return np.sqrt(x)
    if e == 0.25:
        return np.sqrt(np.sqrt(x))
    return x ** e


class _SmoothRegion(_CertifiedLocalSearch, _OutlineSearch, PlaneRegion):
    """A region bounded by a closed parametrised outline ``x(tau)``, ``tau`` in ``[0, PERIOD)``,
    counter-clockwise on the plane, with numeric OPTIMAL correction (``regions_search``).

    Subclasses set ``PERIOD``, ``_kinks`` (parameters where the outline may have a corner or an
    infinite curvature; they become nodes) and implement ``_outline(tau)`` returning
    ``(s, t, ds, dt, dds, ddt)`` (derivatives in ``tau``), ``_level(s, t)`` and ``_scale(s, t)``.
    """

    PERIOD = 2.0 * np.pi

    def _setup(self, s0, s1, t0, t1):
        self.s0, self.s1 = _check_range(s0, s1, "s")
        self.t0, self.t1 = _check_range(t0, t1, "t")
        self.sa, self.sb, self.ta, self.tb = self._frame()
        self.bounds = (self.s0, self.s1, self.t0, self.t1)
        scale = max(abs(b) for b in self.bounds)
        # Round-off of a boundary point mapped sphere -> plane grows like (1 + s² + t²).
        self.tol = 1e-12 * (1.0 + scale * scale)
        self._build_nodes()
        self._build_local1()

    def _frame(self):
        """``sa, sb, ta, tb``: half sizes and centre of the shape [000 eq.8] (the AXES fit of
        ``regions_axes`` overrides it)."""
        return _half_sizes(self.s0, self.s1, self.t0, self.t1)

    def __repr__(self):
        extra = f", {self.m!r}, {self.n!r}" if hasattr(self, "m") else ""
        return f"{type(self).__name__}({self.s0!r}, {self.s1!r}, {self.t0!r}, {self.t1!r}{extra})"

    # --- outline tables -------------------------------------------------------------------

    def _sphere(self, tau):
        s, t = self._outline(tau)[:2]
        return np.stack(projection._plane_to_sphere(s, t), axis=-1)

    # --- region protocol ------------------------------------------------------------------

    def contains_st(self, s, t):
        """Inside or within ``tol`` of the outline on the plane [000 eq.7, 9]."""
        s, t = np.broadcast_arrays(np.asarray(s, dtype=np.float64), np.asarray(t, dtype=np.float64))
        level = self._level(s, t)
        inside = np.array(level <= 1.0)     # an array even for one point (a numpy.bool_ is read-only)
        near = ~inside & (level <= self._near_level)
        if np.any(near):
            sm, tm = self._scale(s[near], t[near])
            inside[near] = np.hypot(s[near] - sm, t[near] - tm) <= self.tol
        return inside

    def clamp_simple(self, s, t):
        """Toward the centre until on the outline [000 eq.15, §4.6.1]; inside points unchanged."""
        s, t = np.broadcast_arrays(np.asarray(s, dtype=np.float64), np.asarray(t, dtype=np.float64))
        out = self._level(s, t) > 1.0
        sm, tm = s.copy(), t.copy()
        if np.any(out):
            sm[out], tm[out] = self._scale(s[out], t[out])
        return sm, tm

    def clamp_optimal(self, P):
        """Geodesic nearest point of the region on the sphere [000 §4.1, §4.4, §4.6.1] for unit
        points ``(..., 3)`` (the pole included); inside points are returned unchanged."""
        P = np.array(quat.as_vectors(P, "swing point"), dtype=np.float64)
        outside = ~self.contains_sphere(P)
        if np.any(outside):
            P[outside] = self.nearest_boundary(P[outside])
        return P

    def nearest_boundary(self, P):
        """Geodesic nearest outline point of unit points ``(..., 3)`` (meant for points outside)."""
        P = np.asarray(P, dtype=np.float64)
        px, py, pz = self.nearest_boundary_xyz(P[..., 0], P[..., 1], P[..., 2])
        return np.stack((px, py, pz), axis=-1)

    def nearest_boundary_xyz(self, px, py, pz):
        """``nearest_boundary`` on component arrays; returns ``(x, y, z)``."""
        px, py, pz = (np.asarray(c, dtype=np.float64) for c in (px, py, pz))
        shape = np.broadcast(px, py, pz).shape
        Q = np.stack(np.broadcast_arrays(px, py, pz), axis=-1).reshape(-1, 3)
        if len(Q) <= self.ONE_BY_ONE:     # the search's fixed numpy cost outweighs a few points
            s, t = np.array([self.nearest_boundary_st1(*P) for P in Q.tolist()]).reshape(-1, 2).T
        else:
            s, t = np.empty(len(Q)), np.empty(len(Q))
            for i in range(0, len(Q), self.CHUNK):
                chunk = Q[i:i + self.CHUNK]
                tau, proved = self._short_way(chunk)
                rest = np.flatnonzero(~proved)
                if rest.size > self.ONE_BY_ONE:
                    tau[rest] = self._nearest_tau(chunk[rest])
                s[i:i + len(chunk)], t[i:i + len(chunk)] = self._outline(tau)[:2]
                if 0 < rest.size <= self.ONE_BY_ONE:     # a few left: each the short way on floats
                    s[i + rest], t[i + rest] = np.array([self.nearest_boundary_st1(*P) for P in chunk[rest].tolist()]).T
        return tuple(c.reshape(shape) for c in projection._plane_to_sphere(s, t))

    def boundary_points(self, n):
        """``(n, 2)`` ordered (s, t) outline points, evenly spaced by arc length on the sphere."""
        s, t = self._outline(self._even_tau(n))[:2]
        return np.stack((s, t), axis=-1)

    def boundary_points_sphere(self, n):
        """``(n, 3)`` ordered outline points on the unit sphere (evenly spaced by arc length)."""
        return self._sphere(self._even_tau(n))

    def _even_tau(self, n):
        n = int(n)
        if n < 1:
            raise ValueError(f"need at least one boundary point, got {n}")
        target = np.linspace(0.0, self._arc[-1], n, endpoint=False)
        return np.interp(target, self._arc, np.append(self._fine, self.PERIOD))

    # --- one point in pure Python ---------------------------------------------------------

    def contains1(self, s, t):
        """Scalar ``contains_st``."""
        level = self._level1(s, t)
        if level <= 1.0:
            return True
        if not level <= self._near_level:
            return False
        sm, tm = self._scale1(s, t)
        return math.hypot(s - sm, t - tm) <= self.tol

    def clamp_simple1(self, s, t):
        """Scalar ``clamp_simple`` [000 eq.15, §4.6.1]."""
        return (s, t) if self._level1(s, t) <= 1.0 else self._scale1(s, t)

    def clamp_optimal1(self, px, py, pz):
        """Scalar ``clamp_optimal``."""
        s, t = projection._sphere_to_plane(px, py, pz, projection.MATH)
        if math.isfinite(s) and math.isfinite(t) and self.contains1(s, t):
            return px, py, pz
        return self.nearest_boundary1(px, py, pz)

    def nearest_boundary1(self, px, py, pz):
        """Scalar ``nearest_boundary``: the same global search, see ``_nearest_st1``."""
        return _sphere1(*self.nearest_boundary_st1(px, py, pz))

def _sphere1(s, t):
    """Scalar [000 eq.2] (see ``projection._plane_to_sphere``)."""
    r2 = s * s + t * t
    d = r2 + 1.0
    return -2.0 * s / d, (1.0 - r2) / d, 2.0 * t / d


class EllipseRegion(_SmoothRegion):
    """Ellipse inscribed in ``[s0, s1] x [t0, t1]`` [000 §3.2, eq.7-8].

    SIMPLE: toward the centre [000 eq.15] (exact only for a circle about the origin,
    ``s0 = -s1 = t0 = -t1`` [000 §4.4]); OPTIMAL: numeric geodesic nearest point (``regions_search``).
    Outline: ``(sb + sa cos tau, tb + ta sin tau)``.
    """

    shape = "ELLIPSE"
    PERIOD = 2.0 * np.pi

    def __init__(self, s0, s1, t0, t1):
        self._setup(s0, s1, t0, t1)
        # contains_st: beyond this level the plane distance to the ellipse exceeds tol
        r_in = min(self.sa, self.ta)
        self._near_level = (1.0 + 2.0 * self.tol / r_in) ** 2

    def _outline(self, tau):
        c, s = np.cos(tau), np.sin(tau)
        sc, ss, tc, ts = self.sa * c, self.sa * s, self.ta * c, self.ta * s
        return self.sb + sc, self.tb + ts, -ss, tc, -sc, -ts

    def _level(self, s, t):
        """Left side of [000 eq.7]."""
        u, v = (s - self.sb) / self.sa, (t - self.tb) / self.ta
        return u * u + v * v

    def _scale(self, s, t):
        """[000 eq.15]."""
        k_s, k_t = (s - self.sb) / self.sa, (t - self.tb) / self.ta
        k_m = 1.0 / np.hypot(k_s, k_t)
        return k_s * k_m * self.sa + self.sb, k_t * k_m * self.ta + self.tb

    def _outline1(self, tau):
        c, s = math.cos(tau), math.sin(tau)
        sc, ss, tc, ts = self.sa * c, self.sa * s, self.ta * c, self.ta * s
        return self.sb + sc, self.tb + ts, -ss, tc, -sc, -ts

    _level1 = _level    # plain arithmetic: works on Python floats as it is

    def _scale1(self, s, t):
        k_s, k_t = (s - self.sb) / self.sa, (t - self.tb) / self.ta
        k_m = 1.0 / math.hypot(k_s, k_t)
        return k_s * k_m * self.sa + self.sb, k_t * k_m * self.ta + self.tb


class SuperellipseRegion(_SmoothRegion):
    """Superellipse ``(|s - sb| / sa)^m + (|t - tb| / ta)^n <= 1`` in ``[s0, s1] x [t0, t1]``
    [000 §3.4.1, eq.9]; ``m = n = 2`` is the ellipse, large exponents approach the rectangle,
    ``m`` or ``n`` = 1 gives corners. Exponents must be finite and >= 1 (convex shapes).

    SIMPLE: toward the centre [000 §4.6.1] (not optimal even for a centred square-ish shape);
    OPTIMAL: numeric geodesic nearest point (``regions_search``).

    Outline parameter ``tau`` in [0, 4): quadrant ``floor(tau)`` counter-clockwise from
    ``(u, v) = (1, 0)``. Each quadrant is two graphs, ``u = (1 - |v|^n)^(1/m)`` near the u axis and
    ``v = (1 - |u|^m)^(1/n)`` near the v axis, joined where ``|u|^m = |v|^n = 1/2``: a graph in the
    coordinate that stays away from 0 has bounded slope, unlike ``|cos|^(2/m)`` forms, which
    have infinite derivatives at the axes for exponents > 2 and stall for exponents < 2. The
    four axis points (corners when an exponent is 1) are nodes of the search.
    """

    shape = "SUPERELLIPSE"
    PERIOD = 4.0
    _kinks = np.arange(8) * 0.5   # axis points and the joins of the two graphs
    _PIECE_RATE = 2.0   # tau in [0, 4]: piece int(2 tau) (see _outline1)
    _SIGN = np.array([[1.0, 1.0], [-1.0, 1.0], [-1.0, -1.0], [1.0, -1.0]])
    _REVERSED = np.array([False, True, False, True])

    def __init__(self, s0, s1, t0, t1, m, n):
        m, n = float(m), float(n)
        if not (np.isfinite(m) and np.isfinite(n) and m >= 1.0 and n >= 1.0):
            raise ValueError(f"superellipse exponents must be finite and >= 1, got m={m}, n={n}")
        self.m, self.n = m, n
        self._u_split, self._v_split = 0.5 ** (1.0 / m), 0.5 ** (1.0 / n)
        # v ~ 1 - |u|^m / n near the v axis: a corner there when m = 1, unbounded curvature
        # when 1 < m < 2; no bound on f'' is used next to such points
        axes = ((0.0, n), (2.0, n), (1.0, m), (3.0, m))
        self._singular = np.array([q for q, p in axes if p < 2.0])
        self._singular3 = np.array([q for q, p in axes if p < 3.0 and p != 2.0])
        low = min(m, n)
        self._sub_order = low if 1.0 < low < 2.0 else 2.0
        self._setup(s0, s1, t0, t1)
        self._tables_q1()
        r_in = min(self.sa, self.ta) / np.sqrt(2.0)    # the shape contains |u| + |v| <= 1
        self._near_level = (1.0 + 2.0 * self.tol / r_in) ** max(m, n)

    @property
    def _axes_q(self):
        """Signed half sizes ``(s, t)`` of each quadrant's quarter outline ``(4, 2)``."""
        return self._SIGN * (self.sa, self.ta)

    @staticmethod
    def _graph(z, p, q):
        """``y = (1 - z^p)^(1/q)`` and its first two derivatives for ``0 <= z``, ``z^p <= 1/2``
        (scalar exponents ``p``, ``q``)."""
        zp1 = _power(z, p - 1.0)
        r = 1.0 - zp1 * z
        y = _power(r, 1.0 / q)
        y1 = -(p / q) * zp1 * y / r
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            # z^(p-2) is infinite at z = 0 when p < 2 (unbounded curvature; p = 1 is a corner):
            # only Newton's slope uses it, and a non-finite slope makes that step a bisection.
            bend = 0.0 if p == 1.0 else (p - 1.0) * _power(z, p - 2.0) * r
            y2 = -(p / q) * (y / (r * r)) * (bend + (1.0 - 1.0 / q) * p * zp1 * zp1)
        return y, y1, y2

    def _outline(self, tau):
        tau = np.mod(tau, 4.0)
        quad = np.minimum(tau.astype(np.intp), 3)
        lam = tau - quad
        rev = self._REVERSED[quad]
        lam = np.where(rev, 1.0 - lam, lam)
        # first quadrant from (1, 0) at lam = 0 to (0, 1) at lam = 1
        near_u = lam <= 0.5
        z = np.where(near_u, 2.0 * lam * self._v_split, 2.0 * (1.0 - lam) * self._u_split)
        dz = np.where(near_u, 2.0 * self._v_split, -2.0 * self._u_split)
        if self.m == self.n:
            y, y1, y2 = self._graph(z, self.m, self.m)
        else:   # each graph on its own points
            y, y1, y2 = np.empty_like(z), np.empty_like(z), np.empty_like(z)
            for side, p, q in ((near_u, self.n, self.m), (~near_u, self.m, self.n)):
                y[side], y1[side], y2[side] = self._graph(z[side], p, q)
        dy, ddy = y1 * dz, y2 * dz * dz
        u, v = np.where(near_u, y, z), np.where(near_u, z, y)
        du, dv = np.where(near_u, dy, dz), np.where(near_u, dz, dy)
        ddu, ddv = np.where(near_u, ddy, 0.0), np.where(near_u, 0.0, ddy)
        axes = self._axes_q
        su, sv = axes[quad, 0], axes[quad, 1]
        rho = np.where(rev, -1.0, 1.0)
        return self.sb + su * u, self.tb + sv * v, su * rho * du, sv * rho * dv, su * ddu, sv * ddv

    def _level(self, s, t):
        """Left side of [000 eq.9] (``inf`` far outside for large exponents)."""
        with np.errstate(over="ignore"):
            return _power(np.abs((s - self.sb) / self.sa), self.m) + _power(np.abs((t - self.tb) / self.ta), self.n)

    def _scale(self, s, t):
        """Scale ``(u, v)`` by ``k`` with ``|k u|^m + |k v|^n = 1`` [000 §4.6.1]: Newton on
        ``ln k`` from ``1 / max(|u|, |v|)`` (the function is convex and increasing there, so
        the iterates fall monotonically; logs keep huge exponents finite)."""
        u, v = (s - self.sb) / self.sa, (t - self.tb) / self.ta
        au, av = np.abs(u), np.abs(v)
        with np.errstate(divide="ignore"):
            lu, lv = np.log(au), np.log(av)
        y = -np.maximum(lu, lv)
        for _ in range(60):
            a = np.exp(self.m * (y + lu))
            b = np.exp(self.n * (y + lv))
            step = (a + b - 1.0) / (self.m * a + self.n * b)
            y = y - step
            if np.all(np.abs(step) <= 4e-16 * (1.0 + np.abs(y))):
                break
        k = np.exp(y)
        return self.sb + self.sa * k * u, self.tb + self.ta * k * v

    def _outline1(self, tau):
        """Scalar ``_outline`` on piece ``int(2 tau)`` (half a quadrant, one graph), where the
        graph coordinate is linear in ``tau``: ``z = b (tau - quad - l0)`` (``_tables_q1``)."""
        tau %= 4.0
        k = int(2.0 * tau)
        quad, l0, b, p_q, pm1, pm2, inv_q, k2, near_u, s0, su, t0, sv = self._pieces1[k if k < 8 else 7]
        z = b * (tau - quad - l0)
        zp1 = z ** pm1
        r = 1.0 - zp1 * z
        y = r ** inv_q
        g = -p_q * y / r
        dy = g * zp1 * b
        if pm1 == 0.0:
            bend = 0.0
        elif z == 0.0 and pm2 < 0.0:
            bend = math.inf     # unbounded curvature: Newton falls back to bisection
        else:
            bend = pm1 * z ** pm2 * r
        ddy = g / r * (bend + k2 * zp1 * zp1) * b * b
        if near_u:
            return s0 + su * y, t0 + sv * z, su * dy, sv * b, su * ddy, 0.0
        return s0 + su * z, t0 + sv * y, su * b, sv * dy, 0.0, sv * ddy

    def _tables_q1(self):
        """Constants of ``_outline1`` for each of the eight pieces: the quadrant, ``l0`` and
        ``b`` of ``z``, the graph's exponents, which graph (``u = y(z)`` near the u axis), and
        the quadrant's signs and scales."""
        graphs = {True: (self.n, self.m, self._v_split), False: (self.m, self.n, self._u_split)}
        self._pieces1 = []
        for k in range(8):
            quad, half = divmod(k, 2)
            rev = bool(self._REVERSED[quad])
            near_u = (half == 1) if rev else (half == 0)
            p, q, split = graphs[near_u]
            # lam = tau - quad runs against the outline in reversed quadrants; the graph
            # coordinate grows from the axis point: z = 2 split lam' (near u) or 2 split (1 - lam')
            l0 = float(half)
            b = (2.0 if half == 0 else -2.0) * split
            su, sv = (float(c) for c in self._axes_q[quad])
            self._pieces1.append((float(quad), l0, b, p / q, p - 1.0, p - 2.0, 1.0 / q, (1.0 - 1.0 / q) * p,
                                  near_u, self.sb, su, self.tb, sv))

    def _level1(self, s, t):
        try:
            return abs((s - self.sb) / self.sa) ** self.m + abs((t - self.tb) / self.ta) ** self.n
        except OverflowError:   # far outside with a large exponent
            return math.inf

    def _scale1(self, s, t):
        """Scalar ``_scale``."""
        u, v = (s - self.sb) / self.sa, (t - self.tb) / self.ta
        lu = math.log(abs(u)) if u else -math.inf
        lv = math.log(abs(v)) if v else -math.inf
        y = -max(lu, lv)
        m, n = self.m, self.n
        for _ in range(60):
            a = math.exp(m * (y + lu)) if lu > -math.inf else 0.0
            b = math.exp(n * (y + lv)) if lv > -math.inf else 0.0
            step = (a + b - 1.0) / (m * a + n * b)
            y -= step
            if abs(step) <= 4e-16 * (1.0 + abs(y)):
                break
        k = math.exp(y)
        return self.sb + self.sa * k * u, self.tb + self.ta * k * v

