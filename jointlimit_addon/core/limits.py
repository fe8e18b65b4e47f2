"""Projection-based joint limits: swing region on the (s, t) plane + twist range [000, SPEC §2].

``JointLimit`` follows the joint-limit protocol: ``contains(q) -> bool (...)`` and
``clamp(q) -> (..., 4)`` for unit quaternions ``(w, x, y, z)`` of the joint's local rotation.

A rotation is split as ``q = q_swing · q_twist`` [000 eq.37]; the swing point
``P = R(q) (0, 1, 0)`` is projected to ``(s, t)`` [000 eq.1, 42 mapped] and tested against the
region; the twist ``psi`` against ``twist``. ``clamp`` corrects each part and recombines them as
``q_swing_corrected · q_twist_corrected`` [000 eq.43-46]. Rotations already inside are returned
unchanged (after normalisation); corrected ones keep the sign hemisphere of the input.
The twist correction moves ``psi`` to the nearer end of the range along the circle of angles
[000 eq.44-45]; ``fix_twist`` sets it to 0 [000 §5.2] and takes precedence over ``twist``.

At the pole (swing of 180 degrees straight back, where (s, t) is infinite and the twist
undefined) the twist is taken as 0 and the swing correction is the OPTIMAL one even in SIMPLE
mode (the direction a simple correction needs does not exist there); so it is within ~2e-10 rad
of the pole (``SIMPLE_FAR2``), where that direction is lost in rounding.
"""

import math

import numpy as np

from . import quat
from .projection import MATH, NP, TWO_PI, _compose, _parts, _parts1, _sphere_to_plane
from .regions import OvalRegion, PolygonRegion, RectRegion, outline_points  # noqa: F401 (re-export)

SHAPES = ("RECT", "ELLIPSE", "OVAL", "SUPERELLIPSE", "POLYGON")
CORRECTIONS = ("OPTIMAL", "SIMPLE")
FITS = ("INSCRIBED", "AXES")
SMOOTH_SHAPES = ("ELLIPSE", "OVAL", "SUPERELLIPSE")
TWIST_TOL = 1e-12
# Narrowest swing range (radians) per shape: narrower ranges are refused, as their corrections
# would land outside the region. The numeric OPTIMAL correction of ELLIPSE and SUPERELLIPSE fails
# below ~1e-3 rad; the closed forms of RECT and OVAL stay exact down to ~1e-13 rad.
MIN_SWING_WIDTH = math.radians(0.1)
MIN_SWING_WIDTHS = {"RECT": 1e-9, "OVAL": 1e-9, "ELLIPSE": MIN_SWING_WIDTH, "SUPERELLIPSE": MIN_SWING_WIDTH}
# Beyond this s² + t² (within ~2e-10 rad of the pole) the plane's squared distances round by more
# than the region's points differ: the SIMPLE correction's choice would be rounding noise.
SIMPLE_FAR2 = 1e20
_CHUNK = 1 << 14
_ONE_BY_ONE = 32    # batches up to this size go row by row: numpy's per-call cost outweighs them


def _pair(rng, what):
    """``(lo, hi)`` floats of a range, else ``ValueError`` saying what is expected."""
    try:
        lo, hi = (float(a) for a in rng)
    except (TypeError, ValueError):
        raise ValueError(f"{what} range must be a pair (min, max) of angles in radians, got {rng!r}") from None
    return lo, hi


def _swing_range(rng, what, min_width=0.0):
    """Angle range (radians) inside (-pi, pi), at least ``min_width`` wide -> plane range
    ``tan(a / 2)`` [000 eq.5]."""
    if rng is None:
        raise ValueError(f"{what} range is required for this shape")
    lo, hi = _pair(rng, what)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"{what} range must be finite, got ({lo}, {hi})")
    if not (-math.pi < lo < hi < math.pi):
        raise ValueError(f"{what} range must satisfy -pi < min < max < pi (radians), got ({lo}, {hi})")
    if hi - lo < min_width * (1.0 - 1e-6):     # slack for rounding (degrees converted to radians)
        raise ValueError(f"{what} range must be at least {math.degrees(min_width):.3g}° wide, got "
                         f"{math.degrees(hi - lo):.3g}°")
    return math.tan(0.5 * lo), math.tan(0.5 * hi)


def _twist_range(rng):
    if rng is None:
        return None
    lo, hi = _pair(rng, "twist")
    slack = 1e-9
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"twist range must be finite, got ({lo}, {hi})")
    if not (-math.pi - slack <= lo <= hi <= math.pi + slack):
        raise ValueError(f"twist range must satisfy -pi <= min <= max <= pi (radians), got ({lo}, {hi})")
    return max(lo, -math.pi), min(hi, math.pi)


def _exponent(exponent):
    """``(m, n)`` floats of a SUPERELLIPSE exponent pair [000 eq.9]."""
    try:
        m, n = (float(e) for e in exponent)
    except (TypeError, ValueError):
        raise ValueError(f"exponent must be a pair (m, n) of numbers >= 1, got {exponent!r}") from None
    return m, n


def _smooth_regions():
    try:
        from .regions_smooth import EllipseRegion, SuperellipseRegion
    except ImportError as exc:  # the module is written separately; fail clearly until it exists
        raise ValueError(f"ELLIPSE/SUPERELLIPSE regions are unavailable: {exc}") from exc
    return EllipseRegion, SuperellipseRegion


def _check_axes_fit(rng, what, min_width):
    """``fit="AXES"`` measures the shape from the rest pose: the range must hold 0 strictly, and
    each side of 0 is a quadrant's half-axis, so each must be as wide as a whole range must be."""
    lo, hi = (float(a) for a in rng)
    if not lo < 0.0 < hi:
        raise ValueError(f"fit AXES needs the {what} range to contain 0 (min < 0 < max), got ({lo}, {hi}) radians")
    if min(-lo, hi) < min_width * (1.0 - 1e-6):
        raise ValueError(f"fit AXES needs the {what} range to reach at least {math.degrees(min_width):.3g}° on "
                         f"each side of 0°, got ({math.degrees(lo):.3g}°, {math.degrees(hi):.3g}°)")


def make_region(shape, swing_x=None, swing_z=None, exponent=(4.0, 4.0), outline=None, fit="INSCRIBED"):
    """The plane region of a limit: ``swing_z`` (about local Z) gives the s range and
    ``swing_x`` (about local X) the t range, each ``tan(angle / 2)`` [000 eq.5, SPEC §1].
    ``fit``: INSCRIBED (the paper's smooth shapes inside the rectangle of the ranges) or AXES
    (through the four axis limits, see ``regions_axes``); RECT and POLYGON ignore it."""
    if shape not in SHAPES:
        raise ValueError(f"shape must be one of {', '.join(SHAPES)}, got {shape!r}")
    if fit not in FITS:
        raise ValueError(f"fit must be one of {', '.join(FITS)}, got {fit!r}")
    if shape == "POLYGON":
        return PolygonRegion(outline)
    if outline is not None:
        raise ValueError(f"outline is only used by POLYGON, not {shape}")
    min_width = MIN_SWING_WIDTHS[shape]
    s0, s1 = _swing_range(swing_z, "swing_z", min_width)
    t0, t1 = _swing_range(swing_x, "swing_x", min_width)
    if fit == "AXES" and shape in SMOOTH_SHAPES:
        _check_axes_fit(swing_z, "swing_z", min_width)
        _check_axes_fit(swing_x, "swing_x", min_width)
        from .regions_axes import make_axes_region

        return make_axes_region(shape, s0, s1, t0, t1, exponent)
    if shape == "RECT":
        return RectRegion(s0, s1, t0, t1)
    if shape == "OVAL":
        return OvalRegion(s0, s1, t0, t1)
    ellipse, superellipse = _smooth_regions()
    if shape == "ELLIPSE":
        return ellipse(s0, s1, t0, t1)
    m, n = _exponent(exponent)
    return superellipse(s0, s1, t0, t1, m, n)


def _is_single(q):
    if isinstance(q, np.ndarray):
        return q.shape == (4,)
    return isinstance(q, (list, tuple)) and len(q) == 4 and not isinstance(q[0], (list, tuple, np.ndarray))


class JointLimit:
    """Swing region + optional twist range + correction mode [000, SPEC §2].

    ``shape``: RECT | ELLIPSE | OVAL | SUPERELLIPSE | POLYGON. ``swing_x``/``swing_z``: angle
    ranges (radians, inside (-pi, pi), min < max) of rotation about local X (-> t) and local Z
    (-> s); not used by POLYGON, whose ``outline`` is given on the (s, t) plane (see
    ``PolygonRegion``). ``twist``: (min, max) about local Y inside [-pi, pi], or None (free).
    ``correction``: OPTIMAL (geodesic nearest swing) | SIMPLE (the paper's plane corrections).
    ``exponent``: (m, n) of SUPERELLIPSE [000 eq.9]. ``fix_twist``: twist forced to 0 [000 §5.2].
    ``fit``: how ELLIPSE, OVAL and SUPERELLIPSE meet the ranges: INSCRIBED (the paper's, inside
    the rectangle of the ranges [000 §3.2]) or AXES (each quadrant of the plane has its own
    half-axes, so the outline passes through the four axis limits and holds the rest pose; the
    ranges must contain 0); RECT and POLYGON ignore it.
    """

    def __init__(self, shape="RECT", swing_x=None, swing_z=None, twist=None, correction="OPTIMAL",
                 exponent=(4.0, 4.0), outline=None, fix_twist=False, fit="INSCRIBED"):
        if correction not in CORRECTIONS:
            raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, got {correction!r}")
        self.shape = shape
        self.region = make_region(shape, swing_x, swing_z, exponent, outline, fit)
        self.fit = fit
        self.swing_x = None if swing_x is None else tuple(float(a) for a in swing_x)
        self.swing_z = None if swing_z is None else tuple(float(a) for a in swing_z)
        self.twist = _twist_range(twist)
        self.correction = correction
        self.exponent = _exponent(exponent)
        self.outline = outline
        self.fix_twist = bool(fix_twist)

    def __repr__(self):
        return (f"JointLimit(shape={self.shape!r}, swing_x={self.swing_x}, swing_z={self.swing_z}, "
                f"twist={self.twist}, correction={self.correction!r}, fix_twist={self.fix_twist}, fit={self.fit!r})")

    # --- twist [000 eq.44-45] ---------------------------------------------------------------

    def _twist_inside(self, psi, ops):
        if self.fix_twist:
            return (psi <= TWIST_TOL) & (psi >= -TWIST_TOL)
        if self.twist is None:
            return psi == psi
        lo, hi = self.twist
        lo, hi = lo - TWIST_TOL, hi + TWIST_TOL
        # psi and psi -/+ 2 pi are the same twist: a range ending at -pi also holds psi = pi.
        return ((psi >= lo) & (psi <= hi)) | (psi - TWO_PI >= lo) | (psi + TWO_PI <= hi)

    def _twist_clamp(self, psi, ops):
        if self.fix_twist:
            return psi * 0.0
        if self.twist is None:
            return psi
        lo, hi = self.twist
        inside = (psi >= lo) & (psi <= hi)
        nearer_lo = (lo - psi) % TWO_PI < (psi - hi) % TWO_PI
        return ops.where(inside, psi, ops.where(nearer_lo, lo, hi))

    def _twist_clamp1(self, psi):
        """Scalar ``_twist_clamp``."""
        if self.fix_twist:
            return psi * 0.0
        if self.twist is None:
            return psi
        lo, hi = self.twist
        if lo <= psi <= hi:
            return psi
        return lo if (lo - psi) % TWO_PI < (psi - hi) % TWO_PI else hi

    # --- swing ------------------------------------------------------------------------------

    def _optimal(self, px, py, pz):
        return _sphere_to_plane(*self.region.nearest_boundary_xyz(px, py, pz), NP)

    def _swing_correct(self, px, py, pz, s, t, pole):
        """Corrected (s, t) of swing points outside the region (arrays)."""
        if self.correction == "OPTIMAL":
            return self._optimal(px, py, pz)
        s_m, t_m = self.region.clamp_simple(s, t)
        s_m, t_m = np.array(s_m, dtype=np.float64), np.array(t_m, dtype=np.float64)
        far = pole | (s * s + t * t >= SIMPLE_FAR2)
        if np.any(far):
            s_m[far], t_m[far] = self._optimal(px[far], py[far], pz[far])
        return s_m, t_m

    # --- protocol ---------------------------------------------------------------------------

    def contains(self, q):
        """Bool ``(...)``: is each rotation within the swing region and the twist range."""
        q = quat.as_unit_quats(q)
        *_, s, t, psi, pole = _parts(q[..., 0], q[..., 1], q[..., 2], q[..., 3], NP)
        return ~pole & self.region.contains_st(s, t) & self._twist_inside(psi, NP)

    def clamp(self, q):
        """Rotations ``(..., 4)`` corrected into the limit [000 §4-6]; a single quaternion
        ``(4,)``, and each row of a small batch, takes a pure-Python fast path with the same
        formulas (it agrees with the vectorised path to round-off)."""
        if q.shape == (4,) if q.__class__ is np.ndarray else _is_single(q):
            return self._clamp1(q)
        q = quat.as_unit_quats(q)
        flat = q.reshape(-1, 4)
        out = flat.copy()
        if len(flat) <= _ONE_BY_ONE:
            for i, row in enumerate(flat.tolist()):
                fixed = self._correct1(*row)
                if fixed is not None:
                    out[i] = fixed
            return out.reshape(q.shape)
        for start in range(0, len(flat), _CHUNK):
            self._clamp_block(flat[start:start + _CHUNK], out[start:start + _CHUNK])
        return out.reshape(q.shape)

    def _clamp_block(self, q, out):
        w, x, y, z = np.ascontiguousarray(q.T)
        px, py, pz, s, t, psi, pole = _parts(w, x, y, z, NP)
        swing_in = ~pole & self.region.contains_st(s, t)
        good = swing_in & self._twist_inside(psi, NP)
        if good.all():
            return
        idx = np.flatnonzero(~good)
        s, t, psi, swing_in = s[idx], t[idx], psi[idx], swing_in[idx]
        fix = np.flatnonzero(~swing_in)
        if len(fix):
            s[fix], t[fix] = self._swing_correct(px[idx[fix]], py[idx[fix]], pz[idx[fix]], s[fix], t[fix],
                                                 pole[idx[fix]])
        qw, qx, qy, qz = _compose(s, t, self._twist_clamp(psi, NP), NP)
        sign = np.where(qw * w[idx] + qx * x[idx] + qy * y[idx] + qz * z[idx] < 0.0, -1.0, 1.0)
        out[idx] = np.stack((qw, qx, qy, qz), axis=-1) * sign[:, None]

    def _clamp1(self, q):
        return np.array(self.clamp1(q.tolist() if isinstance(q, np.ndarray) else [float(c) for c in q]))

    def clamp1(self, q):
        """``clamp`` of one quaternion ``(w, x, y, z)`` of Python floats, as a tuple of floats
        (the same path as ``clamp`` of one rotation, without numpy: the live limits' per-bone
        path)."""
        w, x, y, z = q
        if (w - w) + (x - x) + (y - y) + (z - z) != 0.0:     # NaN for any NaN or inf
            raise ValueError("quaternion contains NaN or infinite values")
        n2 = w * w + x * x + y * y + z * z
        if not quat._SAFE_NORM2[0] <= n2 <= quat._SAFE_NORM2[1]:    # scale first: no over/underflow
            big = max(abs(w), abs(x), abs(y), abs(z))
            if big == 0.0:
                raise ValueError("quaternion has zero length and is not a rotation")
            w, x, y, z = w / big, x / big, y / big, z / big
            n2 = w * w + x * x + y * y + z * z
        norm = math.sqrt(n2)
        w, x, y, z = w / norm, x / norm, y / norm, z / norm
        fixed = self._correct1(w, x, y, z)
        return (w, x, y, z) if fixed is None else fixed

    def _correct1(self, w, x, y, z):
        """The corrected unit quaternion ``(w, x, y, z)`` (floats) as a tuple, or ``None`` when
        it is inside the limit."""
        px, py, pz, s, t, psi, pole = _parts1(w, x, y, z)
        swing_in = not pole and self.region.contains1(s, t)
        if swing_in and self._twist_inside(psi, MATH):
            return None
        if not swing_in:
            if self.correction == "SIMPLE" and not pole and s * s + t * t < SIMPLE_FAR2:
                s, t = self.region.clamp_simple1(s, t)
            else:
                s, t = self.region.nearest_boundary_st1(px, py, pz)
        qw, qx, qy, qz = _compose(s, t, self._twist_clamp1(psi), MATH)
        if qw * w + qx * x + qy * y + qz * z < 0.0:
            return -qw, -qx, -qy, -qz
        return qw, qx, qy, qz

    # --- helpers for the UI and the overlay ------------------------------------------------

    def swing_point(self, q):
        """``(s, t)`` of rotations ``(..., 4)`` on the projection plane (``inf`` at the pole)."""
        q = quat.as_unit_quats(q)
        *_, s, t, _, pole = _parts(q[..., 0], q[..., 1], q[..., 2], q[..., 3], NP)
        return np.where(pole, np.inf, s), np.where(pole, np.inf, t)

    def outline_points(self, n=64):
        """Closed ``(n, 3)`` outline of the swing region on the unit sphere (see
        ``regions.outline_points``)."""
        return outline_points(self.region, n)
