"""The AXES fit of the smooth swing shapes: every quadrant of the (s, t) plane has its own
half-axes, so the outline passes through the four axis limits and the region holds the origin.

The paper fits ELLIPSE, OVAL and SUPERELLIPSE inside the rectangle of the ranges [000 §3.2,
eq.6-9, 16-17] (the INSCRIBED fit of ``regions_smooth`` and ``regions.OvalRegion``). With
asymmetric ranges that shape misses the ranges the user typed and can exclude the rest pose
``(s, t) = (0, 0)``. The AXES fit keeps the shapes' equations but measures them from the origin,
with the half-axes of the quadrant a point lies in:

    a+ = s1, a- = -s0 (s >= 0, s < 0),   b+ = t1, b- = -t0 (t >= 0, t < 0),
    u = s / a±,  v = t / b±  (normalised coordinates, the unit INSCRIBED shape):

- ELLIPSE: ``u² + v² <= 1``, four quarter-ellipses [000 eq.7];
- SUPERELLIPSE: ``|u|^m + |v|^n <= 1``, four quarter-superellipses with the bone's exponents
  [000 eq.9];
- OVAL: in each quadrant the quarter of the stadium [000 eq.16-17] that fits the quadrant's box
  ``a± x b±``: from each axis point a straight edge (possibly of length 0) perpendicular to the
  axis, then a quarter circle of radius ``min(a±, b±)``.

So the outline passes through ``(s0, 0), (s1, 0), (0, t0), (0, t1)``. Each quarter leaves its
axis points perpendicular to the axis, so neighbouring quarters share the tangent there: the
outline is C1 (as the INSCRIBED shapes are: a superellipse exponent of 1 makes a corner in both
fits), each quarter is convex within its quadrant, so the region is convex, and the origin lies
strictly inside. The ranges must contain 0 strictly (``s0 < 0 < s1``, ``t0 < 0 < t1``).

Corrections, as exact as for the INSCRIBED shapes:

- OPTIMAL (ELLIPSE, SUPERELLIPSE): the global search of ``regions_search`` on the
  quarter outlines. The curvature jumps where quarters meet, so the four axis points are kinks:
  nodes of the search with one-sided slopes, never inside a refined bracket (a nearest point
  exactly on an axis point, as for a pure bend about X or Z past its limit, is a node).
- OPTIMAL (OVAL): exact per straight edge and arc on the sphere, as the INSCRIBED oval
  [000 eq.18-23] (``regions._OutlineRegion``).
- SIMPLE (ELLIPSE, SUPERELLIPSE): toward the centre [000 eq.15, §4.6.1], here the origin. A ray
  from the origin stays in its quadrant, so this is the INSCRIBED scaling of ``(u, v)``.
- SIMPLE (OVAL): the nearest point on the plane, as for the INSCRIBED oval: it lies in the
  point's own quadrant (``OvalAxesRegion._simple``).
"""

import math

import numpy as np

from . import projection
from .regions import _Outline, _OutlineRegion, _check_range
from .regions_smooth import EllipseRegion, SuperellipseRegion

FITS = ("INSCRIBED", "AXES")
_QUARTER_ARC = math.tan(math.pi / 8.0)      # bulge of a quarter circle (tan(90° / 4))


def check_axes_ranges(s0, s1, t0, t1):
    """The ranges as floats; ``ValueError`` naming the axis unless ``min < 0 < max`` on both."""
    s0, s1 = _check_range(s0, s1, "s")
    t0, t1 = _check_range(t0, t1, "t")
    for lo, hi, what in ((s0, s1, "s (swing_z)"), (t0, t1, "t (swing_x)")):
        if not lo < 0.0 < hi:
            raise ValueError(f"the AXES fit needs the {what} range to contain 0 (min < 0 < max), got ({lo}, {hi})")
    return s0, s1, t0, t1


class _AxesFit:
    """Mixin for the smooth regions of ``regions_smooth``: the base class works on the unit
    shape (frame ``sa = ta = 1``, ``sb = tb = 0``), this class maps ``(s, t)`` to the
    normalised ``(u, v)`` of the point's quadrant and back (see the module docstring)."""

    fit = "AXES"

    def _frame(self):
        s0, s1, t0, t1 = check_axes_ranges(self.s0, self.s1, self.t0, self.t1)
        self._half = (s1, -s0, t1, -t0)     # a+, a-, b+, b-
        return 1.0, 0.0, 1.0, 0.0

    def _fix_near_level(self):
        """``contains_st`` tests exactly below this level; the base class computed it for the
        unit frame, where a plane distance is ``min(a±, b±)`` times larger."""
        self._near_level = 1.0 + 2.0 * (self._near_level - 1.0) / min(self._half)

    def _uv(self, s, t):
        a_p, a_m, b_p, b_m = self._half
        return s / np.where(s >= 0.0, a_p, a_m), t / np.where(t >= 0.0, b_p, b_m)

    def _st(self, u, v):
        a_p, a_m, b_p, b_m = self._half
        return u * np.where(u >= 0.0, a_p, a_m), v * np.where(v >= 0.0, b_p, b_m)

    def _uv1(self, s, t):
        a_p, a_m, b_p, b_m = self._half
        return s / (a_p if s >= 0.0 else a_m), t / (b_p if t >= 0.0 else b_m)

    def _st1(self, u, v):
        a_p, a_m, b_p, b_m = self._half
        return u * (a_p if u >= 0.0 else a_m), v * (b_p if v >= 0.0 else b_m)

    def _level(self, s, t):
        return super()._level(*self._uv(s, t))

    def _scale(self, s, t):
        return self._st(*super()._scale(*self._uv(s, t)))

    def _level1(self, s, t):
        a_p, a_m, b_p, b_m = self._half     # _uv1, inline: this runs for every rotation
        return self._unit_level1(s / (a_p if s >= 0.0 else a_m), t / (b_p if t >= 0.0 else b_m))

    def _scale1(self, s, t):
        return self._st1(*super()._scale1(*self._uv1(s, t)))


class EllipseAxesRegion(_AxesFit, EllipseRegion):
    """Four quarter-ellipses about the origin through ``(s0, 0), (s1, 0), (0, t0), (0, t1)``
    (see the module docstring).

    Outline parameter ``tau`` in [0, 4): quadrant ``q = floor(tau)`` counter-clockwise from
    ``(s1, 0)``, angle ``phi = (pi / 2) (tau - q)`` within it, so the axis points sit at whole
    ``tau`` (exact kinks of the search) and ``(u, v)`` is ``(cos, sin)`` of ``phi`` turned by
    ``q`` quarter turns (exact signs and zeros at the axis points).
    """

    PERIOD = 4.0
    _kinks = np.arange(4.0)
    _PIECE_RATE = 1.0
    _K = 0.5 * math.pi      # d phi / d tau
    # (u, v) = (R0 c + R1 s, R2 c + R3 s) with (c, s) = (cos phi, sin phi), per quadrant
    _ROT = np.array([[1.0, 0.0, 0.0, 1.0], [0.0, -1.0, 1.0, 0.0], [-1.0, 0.0, 0.0, -1.0], [0.0, 1.0, -1.0, 0.0]])

    _unit_level1 = EllipseRegion._level1

    def __init__(self, s0, s1, t0, t1):
        super().__init__(s0, s1, t0, t1)
        self._fix_near_level()

    def _quadrant_axes(self):
        a_p, a_m, b_p, b_m = self._half
        return np.array([[a_p, b_p], [a_m, b_p], [a_m, b_m], [a_p, b_m]])

    def _outline(self, tau):
        tau = np.mod(tau, 4.0)
        quad = np.minimum(tau.astype(np.intp), 3)
        phi = self._K * (tau - quad)
        c, s = np.cos(phi), np.sin(phi)
        r = self._ROT[quad]
        u, v = r[..., 0] * c + r[..., 1] * s, r[..., 2] * c + r[..., 3] * s
        ab = self._quadrant_axes()[quad]
        a, b = ab[..., 0], ab[..., 1]
        k = self._K
        return a * u, b * v, -k * a * v, k * b * u, -k * k * a * u, -k * k * b * v

    def _outline1(self, tau):
        tau %= 4.0
        q = min(int(tau), 3)
        phi = self._K * (tau - q)
        c, s = math.cos(phi), math.sin(phi)
        a_p, a_m, b_p, b_m = self._half
        if q == 0:
            u, v, a, b = c, s, a_p, b_p
        elif q == 1:
            u, v, a, b = -s, c, a_m, b_p
        elif q == 2:
            u, v, a, b = -c, -s, a_m, b_m
        else:
            u, v, a, b = s, -c, a_p, b_m
        k = self._K
        return a * u, b * v, -k * a * v, k * b * u, -k * k * a * u, -k * k * b * v


class SuperellipseAxesRegion(_AxesFit, SuperellipseRegion):
    """Four quarter-superellipses ``|s / a±|^m + |t / b±|^n <= 1`` about the origin (see the
    module docstring); the outline is the INSCRIBED one's (two graphs per quadrant) with each
    quadrant scaled by its own half-axes."""

    _unit_level1 = SuperellipseRegion._level1

    def __init__(self, s0, s1, t0, t1, m, n):
        super().__init__(s0, s1, t0, t1, m, n)
        self._fix_near_level()

    @property
    def _axes_q(self):
        a_p, a_m, b_p, b_m = self._half
        return np.array([[a_p, b_p], [-a_m, b_p], [-a_m, -b_m], [a_p, -b_m]])


def _quarter(a, b, sign_s, sign_t):
    """Counter-clockwise vertices and bulges of one quadrant's quarter oval (from the axis point
    it starts at; the end point is the next quarter's first vertex)."""
    r = min(a, b)
    pts = [(a, 0.0), (a, b - r), (a - r, b), (0.0, b)]
    bulges = [0.0, _QUARTER_ARC, 0.0]
    pts = [(sign_s * x, sign_t * y) for x, y in pts]
    if sign_s * sign_t < 0.0:   # a reflection reverses the direction of travel: walk it backwards
        pts.reverse()
        bulges.reverse()
    return pts[:-1], bulges


def _oval_axes_outline(a_p, a_m, b_p, b_m):
    """Vertices and bulges of the AXES oval: quarters joined at the axis points, without
    zero-length edges and without vertices between two collinear straight edges."""
    rows = []
    for a, b, sign_s, sign_t in ((a_p, b_p, 1.0, 1.0), (a_m, b_p, -1.0, 1.0), (a_m, b_m, -1.0, -1.0),
                                 (a_p, b_m, 1.0, -1.0)):
        rows.extend(zip(*_quarter(a, b, sign_s, sign_t)))
    kept = []
    for vertex, bulge in rows:
        if kept and kept[-1][0] == vertex:      # the previous edge has length 0
            kept[-1] = (vertex, bulge)
        else:
            kept.append((vertex, bulge))
    if kept[-1][0] == kept[0][0]:
        kept.pop()
    out = []
    for i, (vertex, bulge) in enumerate(kept):
        prev, nxt = kept[i - 1], kept[(i + 1) % len(kept)]
        if bulge == 0.0 and prev[1] == 0.0:
            (ps, pt), (ns, nt) = prev[0], nxt[0]
            if (vertex[0] - ps) * (nt - vertex[1]) == (vertex[1] - pt) * (ns - vertex[0]):
                continue    # an axis point between two straight edges on one line
        out.append((vertex, bulge))
    return [v for v, _ in out], [b for _, b in out]


class OvalAxesRegion(_OutlineRegion):
    """Four quarter ovals about the origin through ``(s0, 0), (s1, 0), (0, t0), (0, t1)``: in the
    quadrant with half-axes ``a, b`` a straight edge from each axis point and a quarter circle of
    radius ``min(a, b)`` (see the module docstring); equal half-axes on opposite sides give the
    INSCRIBED stadium centred on the origin.

    OPTIMAL: exact geodesic nearest point [000 §4.5, eq.18-23]; SIMPLE: the nearest point on the
    plane.
    """

    shape = "OVAL"
    fit = "AXES"

    def __init__(self, s0, s1, t0, t1):
        self.s0, self.s1, self.t0, self.t1 = check_axes_ranges(s0, s1, t0, t1)
        self._half = (self.s1, -self.s0, self.t1, -self.t0)
        super().__init__(_Outline(*_oval_axes_outline(*self._half)))
        self.bounds = (self.s0, self.s1, self.t0, self.t1)

    def __repr__(self):
        return f"{type(self).__name__}({self.s0!r}, {self.s1!r}, {self.t0!r}, {self.t1!r})"

    def _excess2(self, s, t, ops, tol):
        """Squared distance from the quarter's core box beyond ``r + tol``: ``<= 0`` inside."""
        a_p, a_m, b_p, b_m = self._half
        a = ops.where(s >= 0.0, a_p, a_m)
        b = ops.where(t >= 0.0, b_p, b_m)
        r = ops.minimum(a, b)
        dx = ops.maximum(abs(s) - (a - r), 0.0)
        dy = ops.maximum(abs(t) - (b - r), 0.0)
        rt = r + tol
        return dx * dx + dy * dy - rt * rt

    def contains_st(self, s, t):
        s, t = np.broadcast_arrays(np.asarray(s, dtype=np.float64), np.asarray(t, dtype=np.float64))
        return self._excess2(s, t, projection.NP, self.tol) <= 0.0

    def contains1(self, s, t):
        return self._excess2(s, t, projection.MATH, self.tol) <= 0.0

    def _simple(self, s, t, ops):
        """The nearest point on the plane. The region is convex and its outward normals in a
        quadrant point into that quadrant, so a point's nearest point lies in its own quadrant:
        the quarter's core box ``[0, a - r] x [0, b - r]`` clamped, then ``r`` toward the point
        (as ``OvalRegion`` does with its core segment)."""
        a_p, a_m, b_p, b_m = self._half
        pos_s, pos_t = s >= 0.0, t >= 0.0
        a, b = ops.where(pos_s, a_p, a_m), ops.where(pos_t, b_p, b_m)
        r = ops.minimum(a, b)
        x, y = abs(s), abs(t)
        c_x, c_y = ops.minimum(x, a - r), ops.minimum(y, b - r)
        d_x, d_y = x - c_x, y - c_y
        dl = ops.sqrt(d_x * d_x + d_y * d_y)
        inside = dl <= r
        f = r / ops.where(inside, 1.0, dl)
        q_x, q_y = c_x + d_x * f, c_y + d_y * f
        return (ops.where(inside, s, ops.where(pos_s, q_x, -q_x)),
                ops.where(inside, t, ops.where(pos_t, q_y, -q_y)))

    def clamp_simple(self, s, t):
        s, t = np.broadcast_arrays(np.asarray(s, dtype=np.float64), np.asarray(t, dtype=np.float64))
        return self._simple(s, t, projection.NP)

    def clamp_simple1(self, s, t):
        return self._simple(s, t, projection.MATH)


def make_axes_region(shape, s0, s1, t0, t1, exponent=(4.0, 4.0)):
    """The AXES-fit region of a smooth ``shape`` (ELLIPSE, OVAL, SUPERELLIPSE)."""
    if shape == "ELLIPSE":
        return EllipseAxesRegion(s0, s1, t0, t1)
    if shape == "OVAL":
        return OvalAxesRegion(s0, s1, t0, t1)
    if shape == "SUPERELLIPSE":
        m, n = (float(e) for e in exponent)
        return SuperellipseAxesRegion(s0, s1, t0, t1, m, n)
    raise ValueError(f"the AXES fit applies to ELLIPSE, OVAL and SUPERELLIPSE, not {shape}")
