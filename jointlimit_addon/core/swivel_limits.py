"""Feasible swivel angles of a limb under joint limits [001; Tolani, Goswami, Badler 2000].

For a fixed target (hence a fixed hinge angle) the limb keeps one free parameter, the swivel.
Turning the swivel by ``delta`` turns the upper bone about the root->wrist axis ``n``:
``q1(delta) = R_n(delta) q1`` (``R_n`` in the frame the local rotation acts in), and with a target
orientation the end bone by ``R2(delta) = R_m(-delta) R2`` with ``m`` the same axis seen from the end
bone's parent. Both are *families* ``q(delta) = R_a(delta) q0`` (``a`` a unit axis; for the end
bone ``a = -m``). Tolani et al. compute the swivel intervals allowed by each joint's limits; here:

* swing point ``P(delta) = R_a(delta) P0`` runs on a circle of the sphere. Every edge of a RECT,
  OVAL or POLYGON region is an arc of a plane section ``k . X = h`` of the sphere (see
  ``regions``), so its crossings solve ``A cos(delta) + B sin(delta) = C`` in closed form;
* the twist ``psi = 2 atan2(q_y, q_w)`` of ``q(delta) = cos(delta/2) q0 + sin(delta/2) (0, a) q0``
  crosses a range end ``L`` where ``q_y cos(L/2) - q_w sin(L/2) = 0``: closed form again;
* smooth regions (ELLIPSE, SUPERELLIPSE): their level function along the circle is sampled and
  every sign change refined (regula falsi, Illinois); sampled minima just outside the region are
  searched for a hidden pair of crossings (a circle grazing the outline);
* any other limit kind: ``contains`` and a lower bound ``D_lo`` of the geodesic distance to the
  limit set are sampled on a grid of the circle, refined adaptively, and every change is
  bisected. ``q(delta)`` turns at unit geodesic speed (``angle(q(d1), q(d2)) = |d1 - d2|``), so the
  distance ``D`` to the limit set is 1-Lipschitz in ``delta`` and no feasible offset lies within
  ``D_lo`` of an infeasible sample. Where two neighbouring infeasible samples leave a gap between
  their excluded neighbourhoods, the gap's middle is sampled, until every gap is narrower than
  ``GENERIC_TOL``: every feasible interval wider than that is bracketed, and the refinement costs
  only where the distance is near zero. (Where the circle runs along the limit's border for long,
  certifying that would take many samples: after ``GENERIC_BUDGET`` samples, widest gaps first,
  the search stops and only intervals wider than the widest remaining gap are certain.) ``D_lo``
  is the limit's own ``distance_bound`` where it has one (``EulerLimit``), else ``CLAMP_TRUST``
  times the angle to ``clamp(q)`` (exact for limits whose ``clamp`` returns the nearest rotation
  inside; the factor leaves room for the others).

All crossing angles together cut the circle into arcs on which every limit is either satisfied or
not, so every feasible interval is bracketed (isolated feasible points, e.g. a fixed twist,
included). ``nearest_feasible`` visits the arcs outward from 0 (the requested swivel), testing
each arc's midpoint and each crossing with the limits' own ``contains`` (on Python floats for
``JointLimit``), and returns the nearest feasible offset. Everything on the way is scalar Python:
a handful of crossings costs less than numpy's per-call overhead.
"""

import math

import numpy as np

from . import quat
from .limits import TWIST_TOL, JointLimit
from .projection import POLE_EPS2, TWO_PI

LEVEL_SAMPLES = 64  # samples of a smooth region's level function along the swivel circle
GENERIC_SAMPLES = 256  # first grid of ``contains`` for limit kinds without crossings
GENERIC_TOL = 1e-7  # feasible intervals wider than this (radians) are bracketed for those kinds
GENERIC_MAX_GAPS = 1024  # open gaps sampled per refinement round, the widest first
GENERIC_BUDGET = 8192  # refinement samples at most (a circle running along the limit's border)
CLAMP_TRUST = 0.5  # share of the angle to ``clamp(q)`` taken as a distance bound without one
_NUDGES = (0.0, 1e-12, 1e-10, 1e-9, 1e-8, 1e-7)  # tried to step from a crossing into its arc
_ROOT_TOL = 1e-14


class Family:
    """Rotations ``q(delta) = R_axis(delta) q0`` of one joint along the swivel circle, with the
    joint's limit (protocol of ``core/limits.py``)."""

    def __init__(self, limit, axis, q0):
        self.limit = limit
        ax, ay, az = (float(c) for c in axis)
        w, x, y, z = (float(c) for c in q0)
        self.axis = (ax, ay, az)
        self.q0 = (w, x, y, z)
        # q(delta) = cos(delta/2) q0 + sin(delta/2) qa, qa = (0, axis) q0
        self.qa = (-ax * x - ay * y - az * z, ax * w + ay * z - az * y,
                   ay * w - ax * z + az * x, az * w + ax * y - ay * x)

    def at(self, delta):
        """Rotations ``(..., 4)`` at offsets ``delta``."""
        half = 0.5 * np.asarray(delta, dtype=np.float64)[..., None]
        return np.cos(half) * np.array(self.q0) + np.sin(half) * np.array(self.qa)

    def at1(self, delta):
        """One rotation (tuple) at offset ``delta``."""
        c, s = math.cos(0.5 * delta), math.sin(0.5 * delta)
        a, b = self.q0, self.qa
        return (c * a[0] + s * b[0], c * a[1] + s * b[1], c * a[2] + s * b[2], c * a[3] + s * b[3])

    def contains(self, delta):
        return np.asarray(self.limit.contains(self.at(delta)), dtype=bool)

    def distance_bound(self, delta):
        """Lower bounds of the geodesic distance from ``q(delta)`` to the limit set (0 inside)."""
        return distance_bound(self.limit, self.at(delta))

    def contains1(self, delta):
        """Does the limit hold at one offset (Python floats where the limit allows)."""
        return contains1(self.limit, self.at1(delta))

    def contains0(self):
        """Does the limit hold at offset 0."""
        return contains1(self.limit, self.q0)

    # --- crossing candidates --------------------------------------------------------------

    def crossings(self):
        """Offsets in (-pi, pi] (a list) where this joint may enter or leave its limit."""
        lim = self.limit
        if not isinstance(lim, JointLimit):
            return _sampled_changes(self)
        out = self._twist_crossings()
        region = lim.region
        outline = getattr(region, "outline", None)
        if outline is not None and hasattr(outline, "edges3"):
            return out + self._plane_crossings([e[:4] for e in outline.edges3])
        if hasattr(region, "_level") and hasattr(region, "_level1"):
            return out + _level_crossings(self, region)
        return _sampled_changes(self)

    def _circle(self):
        """Swing circle ``P(delta) = c + cos(delta) e1 + sin(delta) e2`` (tuples)."""
        w, x, y, z = self.q0
        p0 = (2.0 * (x * y - w * z), w * w + y * y - x * x - z * z, 2.0 * (y * z + w * x))  # R(q0) (0, 1, 0)
        ax, ay, az = self.axis
        k = ax * p0[0] + ay * p0[1] + az * p0[2]
        c = (k * ax, k * ay, k * az)
        e1 = (p0[0] - c[0], p0[1] - c[1], p0[2] - c[2])
        e2 = (ay * p0[2] - az * p0[1], az * p0[0] - ax * p0[2], ax * p0[1] - ay * p0[0])
        return c, e1, e2

    def _plane_crossings(self, planes):
        c, e1, e2 = self._circle()
        out = []
        for nx, ny, nz, h in planes:
            a = nx * e1[0] + ny * e1[1] + nz * e1[2]
            b = nx * e2[0] + ny * e2[1] + nz * e2[2]
            out += _trig_roots1(a, b, h - (nx * c[0] + ny * c[1] + nz * c[2]))
        return out

    def _twist_crossings(self):
        lim = self.limit
        if lim.fix_twist:
            ends = (0.0,)
        elif lim.twist is None:
            return []
        else:
            ends = lim.twist
        out = []
        for end in ends:
            # q_y cos(L/2) - q_w sin(L/2) = alpha cos(x) + beta sin(x), x = delta / 2
            cl, sl = math.cos(0.5 * end), math.sin(0.5 * end)
            alpha = self.q0[2] * cl - self.q0[0] * sl
            beta = self.qa[2] * cl - self.qa[0] * sl
            if math.hypot(alpha, beta) > 1e-15:
                out.append(_wrap1(2.0 * math.atan2(-alpha, beta)))
        return out

    def level1(self, delta):
        """Scalar level of the region (``<= 1`` inside) at ``delta``; ``inf`` at the pole."""
        half = 0.5 * delta
        cs, sn = math.cos(half), math.sin(half)
        a, b = self.q0, self.qa
        w, x, y, z = cs * a[0] + sn * b[0], cs * a[1] + sn * b[1], cs * a[2] + sn * b[2], cs * a[3] + sn * b[3]
        bw2 = w * w + y * y
        if bw2 <= 1e-24:
            return math.inf
        return self.limit.region._level1((w * z - x * y) / bw2, (y * z + w * x) / bw2)


def hinge_alignment(fam):
    """The offset at which a hinge family's rotation ``q(delta) = R_a(delta) q0`` keeps the
    hinge axis ``h`` in place (``q(delta) h = h``: a rotation about ``h`` alone), or the one
    nearest that, or ``None`` (not a hinge, or ``h`` along ``a``). ``R_a(delta)`` must turn
    ``v = q0 h`` onto ``h``: ``delta`` is the angle from ``v`` to ``h`` across ``a``, exact where
    ``a . v = a . h`` (a target rotation a hinge pose gave; a float32 one within its round-off).
    The hinge's feasible offsets are isolated points of the swivel circle, which the sampled
    crossings of other limit kinds do not bracket."""
    axis = getattr(fam.limit, "axis", None)
    if not hasattr(fam.limit, "hinge_angle") or axis is None:
        return None
    a, h = np.array(fam.axis), np.asarray(axis, dtype=np.float64)
    v = quat.rotate(np.array(fam.q0), h)
    v_perp, h_perp = v - np.dot(a, v) * a, h - np.dot(a, h) * a
    if np.linalg.norm(v_perp) < 1e-9 or np.linalg.norm(h_perp) < 1e-9:
        return None
    return _wrap1(math.atan2(float(np.dot(a, np.cross(v_perp, h_perp))), float(np.dot(v_perp, h_perp))))


def distance_bound(limit, q):
    """A lower bound of the geodesic angle from rotations ``q (..., 4)`` to ``limit``'s set: the
    limit's own ``distance_bound`` if it has one, else ``CLAMP_TRUST`` times the angle to
    ``limit.clamp(q)`` (0 for rotations inside, which ``clamp`` returns unchanged)."""
    own = getattr(limit, "distance_bound", None)
    if own is not None:
        return np.asarray(own(q), dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    return CLAMP_TRUST * quat.angle_between(q, limit.clamp(q))


def contains1(limit, q):
    """``limit.contains`` for one unit quaternion ``(4,)``, on Python floats for ``JointLimit``
    (the same tests as ``JointLimit.contains``: ``projection._parts`` and ``_twist_inside``)."""
    if not isinstance(limit, JointLimit):
        return bool(np.asarray(limit.contains(q)))
    w, x, y, z = q if isinstance(q, tuple) else (float(c) for c in q)
    if w < 0.0 or (w == 0.0 and y < 0.0):
        w, x, y, z = -w, -x, -y, -z
    bw2 = w * w + y * y
    if bw2 < POLE_EPS2 or not limit.region.contains1((w * z - x * y) / bw2, (y * z + w * x) / bw2):
        return False
    if limit.fix_twist or limit.twist is not None:
        psi = 2.0 * math.atan2(y, w)
        if psi <= -math.pi:
            psi += TWO_PI
        if limit.fix_twist:
            return -TWIST_TOL <= psi <= TWIST_TOL
        lo, hi = limit.twist
        lo, hi = lo - TWIST_TOL, hi + TWIST_TOL
        return lo <= psi <= hi or psi - TWO_PI >= lo or psi + TWO_PI <= hi
    return True


def _wrap(a):
    return np.pi - np.mod(np.pi - np.asarray(a, dtype=np.float64), TWO_PI)


def _wrap1(a):
    return math.pi - (math.pi - a) % TWO_PI


def _trig_roots1(a, b, c):
    """Both ``delta`` with ``a cos(delta) + b sin(delta) = c`` (none when out of range)."""
    r = math.hypot(a, b)
    if not (r > 1e-15 and abs(c) <= r * (1.0 + 1e-12)):
        return []
    base = math.atan2(b, a)
    spread = math.acos(min(max(c / r, -1.0), 1.0))
    return [_wrap1(base + spread), _wrap1(base - spread)]


def _grid(n):
    return -np.pi + TWO_PI * np.arange(n) / n


_LEVEL_GRID = -np.pi + TWO_PI * np.arange(LEVEL_SAMPLES) / LEVEL_SAMPLES
_LEVEL_COS, _LEVEL_SIN = np.cos(0.5 * _LEVEL_GRID), np.sin(0.5 * _LEVEL_GRID)
_LEVEL_NEXT = np.roll(np.arange(LEVEL_SAMPLES), -1)
_LEVEL_PREV = np.roll(np.arange(LEVEL_SAMPLES), 1)


def _level_crossings(fam, region):
    """Sign changes of ``level - 1`` along the circle, refined; hidden pairs near grazing."""
    (a0, a1, a2, a3), (b0, b1, b2, b3) = fam.q0, fam.qa
    c, sn = _LEVEL_COS, _LEVEL_SIN
    w, x, y, z = c * a0 + sn * b0, c * a1 + sn * b1, c * a2 + sn * b2, c * a3 + sn * b3
    bw2 = w * w + y * y  # (1 + P.y) / 2 without cancellation; s, t as in projection._parts
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        g = region._level((w * z - x * y) / bw2, (y * z + w * x) / bw2) - 1.0
    g = np.where((bw2 > 1e-24) & np.isfinite(g), g, np.inf)
    delta, nxt, prev = _LEVEL_GRID, _LEVEL_NEXT, _LEVEL_PREV
    step = TWO_PI / LEVEL_SAMPLES
    roots = []
    f = lambda d: fam.level1(d) - 1.0  # noqa: E731
    inside = g <= 0.0
    for i in np.flatnonzero(inside != inside[nxt]).tolist():
        roots.append(_illinois(f, delta[i], delta[i] + step, g[i], g[nxt[i]]))
    rise = np.maximum(g[prev], g[nxt]) - g
    for i in np.flatnonzero(~inside & (g <= g[prev]) & (g <= g[nxt]) & (g < 4.0 * rise)).tolist():
        lo, hi = delta[i] - step, delta[i] + step
        x_min, g_min = _golden_min(f, lo, hi)
        if g_min <= 0.0:
            roots.append(_illinois(f, lo, x_min, g[prev[i]], g_min))
            roots.append(_illinois(f, x_min, hi, g_min, g[nxt[i]]))
    return [_wrap1(float(r)) for r in roots]


def _illinois(f, a, b, fa, fb, iters=60):
    """Root of ``f`` in ``[a, b]`` where ``f(a) <= 0 < f(b)`` or the reverse (regula falsi with
    the Illinois modification; bisection where a value is not finite)."""
    if not math.isfinite(fa):
        fa = f(a)
    if not math.isfinite(fb):
        fb = f(b)
    side = 0
    for _ in range(iters):
        if b - a <= _ROOT_TOL * (1.0 + abs(a)):
            break
        if math.isfinite(fa) and math.isfinite(fb) and fa != fb:
            x = (a * fb - b * fa) / (fb - fa)
            if not a < x < b:
                x = 0.5 * (a + b)
        else:
            x = 0.5 * (a + b)
        fx = f(x)
        if (fx <= 0.0) == (fa <= 0.0):
            a, fa = x, fx
            if side == -1 and math.isfinite(fb):
                fb *= 0.5
            side = -1
        else:
            b, fb = x, fx
            if side == 1 and math.isfinite(fa):
                fa *= 0.5
            side = 1
        if fx == 0.0:
            return x
    return 0.5 * (a + b)


def _golden_min(f, a, b, iters=40):
    """Minimum of ``f`` on ``[a, b]`` by golden-section search: (x, f(x))."""
    r = 0.5 * (math.sqrt(5.0) - 1.0)
    c, d = b - r * (b - a), a + r * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(iters):
        if fc <= 0.0:
            return c, fc
        if fd <= 0.0:
            return d, fd
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - r * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + r * (b - a)
            fd = f(d)
    return (c, fc) if fc < fd else (d, fd)


def _sampled_changes(fam, iters=34):
    """Changes of ``contains`` along the circle, every feasible interval wider than
    ``GENERIC_TOL`` bracketed (Lipschitz refinement, see the module docstring), then bisected
    (all brackets at once)."""
    lo, hi, lo_in = _lipschitz_brackets(fam)
    if lo.size == 0:
        return []
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        same = fam.contains(mid) == lo_in
        lo, hi = np.where(same, mid, lo), np.where(same, hi, mid)
    return _wrap(np.concatenate((lo, hi))).tolist()


def _lipschitz_brackets(fam):
    """``(lo, hi, lo_in)`` of intervals whose ends differ in ``contains``: a grid, then the middle
    of every gap the ends' distance bounds leave uncovered, until the gaps are below
    ``GENERIC_TOL`` (or the sample budget is spent, widest gaps first)."""
    delta = _grid(GENERIC_SAMPLES)
    inside = fam.contains(delta)
    bound = _bounds_outside(fam, delta, inside)
    nxt = np.roll(np.arange(GENERIC_SAMPLES), -1)
    lo, hi = delta, delta + TWO_PI / GENERIC_SAMPLES
    lo_in, hi_in, lo_b, hi_b = inside, inside[nxt], bound, bound[nxt]
    brackets = []
    budget = GENERIC_BUDGET
    while lo.size:
        change = lo_in != hi_in
        brackets.append((lo[change], hi[change], lo_in[change]))
        gap = (hi - hi_b) - (lo + lo_b)  # not excluded by either end's distance bound
        open_ = np.flatnonzero(~lo_in & ~hi_in & (gap > GENERIC_TOL))
        keep = min(GENERIC_MAX_GAPS, budget)
        if open_.size > keep:  # the widest gaps first: the work stays bounded
            open_ = open_[np.argsort(gap[open_])[open_.size - keep:]]
        if open_.size == 0:
            break
        budget -= open_.size
        lo, hi, lo_b, hi_b, gap = lo[open_], hi[open_], lo_b[open_], hi_b[open_], gap[open_]
        mid = lo + lo_b + 0.5 * gap
        mid_in = fam.contains(mid)
        mid_b = _bounds_outside(fam, mid, mid_in)
        false = np.zeros(lo.size, dtype=bool)  # both ends of an open gap are infeasible
        lo, hi = np.concatenate((lo, mid)), np.concatenate((mid, hi))
        lo_in, hi_in = np.concatenate((false, mid_in)), np.concatenate((mid_in, false))
        lo_b, hi_b = np.concatenate((lo_b, mid_b)), np.concatenate((mid_b, hi_b))
    return tuple(np.concatenate(parts) for parts in zip(*brackets))


def _bounds_outside(fam, delta, inside):
    """Distance bounds at the offsets ``delta`` (0 where ``inside``; only the others computed)."""
    out = np.zeros(delta.shape)
    if not inside.all():
        out[~inside] = fam.distance_bound(delta[~inside])
    return out


def _holds(families, delta):
    return all(f.contains1(delta) for f in families)


def nearest_feasible(families):
    """The offset nearest 0 (on the circle) at which every family's limit holds.

    Returns ``(delta, blocked)``: ``blocked`` a tuple of bools, one per family, telling which limits
    fail at offset 0; ``delta`` is 0.0 when nothing is blocked and ``None`` when no offset is
    feasible. The crossings cut the circle into arcs on which feasibility does not change; they
    are visited outward from 0 in both directions, testing each arc's midpoint and each crossing,
    until the nearest feasible one is found. A returned non-zero offset is feasible: a crossing,
    or one stepped into its feasible arc by at most ~1e-7 rad (else the arc's midpoint)."""
    blocked = tuple(not f.contains0() for f in families)
    if not any(blocked):
        return 0.0, blocked
    cand = sorted({c for f in families for c in f.crossings()})
    if not cand:
        return None, blocked
    best = None
    for sign in (1.0, -1.0):
        offsets = sorted((sign * c) % TWO_PI for c in cand)
        prev = 0.0
        for d in offsets + [TWO_PI]:
            if best is not None and prev >= best[0]:
                break
            if d > prev and _holds(families, sign * 0.5 * (prev + d)):  # arc (prev, d) is feasible
                got = _enter(families, sign, prev, d)
                if best is None or got[0] < best[0]:
                    best = got
                break
            if d < TWO_PI and _holds(families, sign * d):  # an isolated feasible crossing
                if best is None or d < best[0]:
                    best = (d, sign * d)
                break
            prev = d
    return (None if best is None else _wrap1(best[1])), blocked


def _enter(families, sign, start, end):
    """(distance, offset) of the feasible point of arc ``(start, end)`` (walked in direction
    ``sign``) nearest its start: the crossing itself, a tiny step into the arc, or the midpoint."""
    half = 0.5 * (end - start)
    for eps in _NUDGES:
        d = start + min(eps, half)
        if _holds(families, sign * d):
            return d, sign * d
    d = start + half
    return d, sign * d
