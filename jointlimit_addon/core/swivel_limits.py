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
* any other limit kind: its ``contains`` is sampled on a fine grid of the circle and every
  change is bisected.

All crossing angles together cut the circle into arcs on which every limit is either satisfied or
not; one vectorised ``contains`` per limit at the crossings and the arcs' midpoints classifies
them, so every feasible interval is bracketed (isolated feasible points, e.g. a fixed twist,
included). ``nearest_feasible`` returns the feasible offset nearest 0 (the requested swivel).
"""

import math

import numpy as np

from . import quat as Q
from .limits import JointLimit
from .projection import MATH, NP, TWO_PI, _parts1, _sphere_to_plane

LEVEL_SAMPLES = 64  # samples of a smooth region's level function along the swivel circle
GENERIC_SAMPLES = 256  # samples of ``contains`` for limit kinds without crossings
_NUDGES = (0.0, 1e-12, 1e-10, 1e-9, 1e-8, 1e-7)  # tried to step from a crossing into its arc
_ROOT_TOL = 1e-14


class Family:
    """Rotations ``q(delta) = R_axis(delta) q0`` of one joint along the swivel circle, with the
    joint's limit (protocol of ``core/limits.py``)."""

    def __init__(self, limit, axis, q0):
        self.limit = limit
        self.axis = np.asarray(axis, dtype=np.float64)
        self.q0 = np.asarray(q0, dtype=np.float64)
        # q(delta) = cos(delta/2) q0 + sin(delta/2) qa, qa = (0, axis) q0
        self.qa = Q.mul(np.concatenate(([0.0], self.axis)), self.q0)

    def at(self, delta):
        """Rotations ``(..., 4)`` at offsets ``delta``."""
        half = 0.5 * np.asarray(delta, dtype=np.float64)[..., None]
        return np.cos(half) * self.q0 + np.sin(half) * self.qa

    def contains(self, delta):
        return np.asarray(self.limit.contains(self.at(delta)), dtype=bool)

    def contains0(self):
        """Does the limit hold at offset 0 (scalar path where the limit has one)."""
        return contains1(self.limit, self.q0)

    # --- crossing candidates --------------------------------------------------------------

    def crossings(self):
        """Offsets in (-pi, pi] where this joint may enter or leave its limit."""
        lim = self.limit
        if not isinstance(lim, JointLimit):
            return _sampled_changes(self)
        out = [self._twist_crossings()]
        region = lim.region
        outline = getattr(region, "outline", None)
        if outline is not None and hasattr(outline, "edges3"):
            out.append(self._plane_crossings([e[:4] for e in outline.edges3]))
        elif hasattr(region, "_level") and hasattr(region, "_level1"):
            out.append(_level_crossings(self, region))
        else:
            return _sampled_changes(self)
        return np.concatenate(out)

    def _circle(self):
        """Swing circle ``P(delta) = c + cos(delta) e1 + sin(delta) e2``."""
        p0 = Q.rotate(self.q0, [0.0, 1.0, 0.0])
        c = np.dot(self.axis, p0) * self.axis
        return c, p0 - c, np.cross(self.axis, p0)

    def _plane_crossings(self, planes):
        c, e1, e2 = self._circle()
        k = np.array(planes, dtype=np.float64).reshape(-1, 4)
        a, b = k[:, :3] @ e1, k[:, :3] @ e2
        rhs = k[:, 3] - k[:, :3] @ c
        return _trig_roots(a, b, rhs)

    def _twist_crossings(self):
        lim = self.limit
        if lim.fix_twist:
            ends = np.array([0.0])
        elif lim.twist is None:
            return np.zeros(0)
        else:
            ends = np.array(lim.twist)
        # q_y cos(L/2) - q_w sin(L/2) = alpha cos(x) + beta sin(x), x = delta / 2
        cl, sl = np.cos(0.5 * ends), np.sin(0.5 * ends)
        alpha = self.q0[2] * cl - self.q0[0] * sl
        beta = self.qa[2] * cl - self.qa[0] * sl
        ok = np.hypot(alpha, beta) > 1e-15
        x = np.arctan2(-alpha[ok], beta[ok])
        return _wrap(2.0 * x)

    def level1(self, delta):
        """Scalar level of the region (``<= 1`` inside) at ``delta``; ``inf`` at the pole."""
        half = 0.5 * delta
        cs, sn = math.cos(half), math.sin(half)
        w, x, y, z = (cs * a + sn * b for a, b in zip(self.q0.tolist(), self.qa.tolist()))
        px, py, pz = 2.0 * (x * y - w * z), w * w + y * y - (x * x + z * z), 2.0 * (y * z + w * x)
        s, t = _sphere_to_plane(px, py, pz, MATH)
        if not (math.isfinite(s) and math.isfinite(t)):
            return math.inf
        return self.limit.region._level1(s, t)


def contains1(limit, q):
    """``limit.contains`` for one unit quaternion ``(4,)``, on Python floats for ``JointLimit``."""
    if not isinstance(limit, JointLimit):
        return bool(np.asarray(limit.contains(q)))
    w, x, y, z = (float(c) for c in q)
    *_, s, t, psi, pole = _parts1(w, x, y, z)
    return not pole and limit.region.contains1(s, t) and bool(limit._twist_inside(psi, MATH))


def _wrap(a):
    return np.pi - np.mod(np.pi - np.asarray(a, dtype=np.float64), TWO_PI)


def _trig_roots(a, b, c):
    """All ``delta`` with ``a cos(delta) + b sin(delta) = c`` (arrays of equations)."""
    r = np.hypot(a, b)
    ok = (r > 1e-15) & (np.abs(c) <= r * (1.0 + 1e-12))
    base = np.arctan2(b[ok], a[ok])
    spread = np.arccos(np.clip(c[ok] / r[ok], -1.0, 1.0))
    return _wrap(np.concatenate((base + spread, base - spread)))


def _grid(n):
    return -np.pi + TWO_PI * np.arange(n) / n


def _level_crossings(fam, region):
    """Sign changes of ``level - 1`` along the circle, refined; hidden pairs near grazing."""
    delta = _grid(LEVEL_SAMPLES)
    q = fam.at(delta)
    w, x, y, z = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    px, py, pz = 2.0 * (x * y - w * z), w * w + y * y - (x * x + z * z), 2.0 * (y * z + w * x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        s, t = _sphere_to_plane(px, py, pz, NP)
        g = np.where(np.isfinite(s) & np.isfinite(t), region._level(np.nan_to_num(s), np.nan_to_num(t)), np.inf) - 1.0
    g = np.where(np.isnan(g), np.inf, g)
    nxt = np.roll(np.arange(LEVEL_SAMPLES), -1)
    step = TWO_PI / LEVEL_SAMPLES
    roots = []
    f = lambda d: fam.level1(d) - 1.0  # noqa: E731
    for i in np.flatnonzero((g <= 0.0) != (g[nxt] <= 0.0)):
        roots.append(_illinois(f, delta[i], delta[i] + step, g[i], g[nxt[i]]))
    prev = np.roll(np.arange(LEVEL_SAMPLES), 1)
    rise = np.maximum(g[prev], g[nxt]) - g
    for i in np.flatnonzero((g > 0.0) & (g <= g[prev]) & (g <= g[nxt]) & (g < 4.0 * rise)):
        lo, hi = delta[i] - step, delta[i] + step
        x_min, g_min = _golden_min(f, lo, hi)
        if g_min <= 0.0:
            roots.append(_illinois(f, lo, x_min, g[prev[i]], g_min))
            roots.append(_illinois(f, x_min, hi, g_min, g[nxt[i]]))
    return _wrap(np.array(roots, dtype=np.float64))


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
    """Changes of ``contains`` on a fine grid, bisected (all brackets at once)."""
    delta = _grid(GENERIC_SAMPLES)
    inside = fam.contains(delta)
    nxt = np.roll(np.arange(GENERIC_SAMPLES), -1)
    idx = np.flatnonzero(inside != inside[nxt])
    if idx.size == 0:
        return np.zeros(0)
    lo, hi = delta[idx], delta[idx] + TWO_PI / GENERIC_SAMPLES
    lo_in = inside[idx]
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        same = fam.contains(mid) == lo_in
        lo, hi = np.where(same, mid, lo), np.where(same, hi, mid)
    return _wrap(np.concatenate((lo, hi)))


def feasible_at(families, delta):
    """Bool array: every family's limit holds at each offset."""
    ok = np.ones(np.shape(delta), dtype=bool)
    for fam in families:
        ok &= fam.contains(delta)
    return ok


def nearest_feasible(families):
    """The offset nearest 0 (on the circle) at which every family's limit holds.

    Returns ``(delta, blocked)``: ``blocked`` a tuple of bools, one per family, telling which limits
    fail at offset 0; ``delta`` is 0.0 when nothing is blocked and ``None`` when no offset is
    feasible. A returned non-zero offset lies inside the feasible set (a crossing stepped into its
    feasible arc by at most ~1e-7 rad, or an isolated feasible point itself)."""
    blocked = tuple(not f.contains0() for f in families)
    if not any(blocked):
        return 0.0, blocked
    cand = np.unique(np.concatenate([f.crossings() for f in families] + [np.zeros(0)]))
    if cand.size == 0:
        return None, blocked
    mids = 0.5 * (cand + np.append(cand[1:], cand[0] + TWO_PI))
    ok = feasible_at(families, np.concatenate((cand, mids)))
    ok_pt, ok_mid = ok[:cand.size], ok[cand.size:]
    ok_before = np.roll(ok_mid, 1)
    usable = ok_pt | ok_mid | ok_before
    if not usable.any():
        return None, blocked
    dist = np.where(usable, np.abs(cand), np.inf)
    for i in np.argsort(dist)[:4]:
        if not usable[i]:
            break
        got = _step_inside(families, cand, mids, ok_pt, ok_mid, ok_before, int(i))
        if got is not None:
            return got, blocked
    return None, blocked


def _step_inside(families, cand, mids, ok_pt, ok_mid, ok_before, i):
    """A feasible offset at crossing ``i``: the crossing itself, or a tiny step into a feasible
    neighbouring arc (the side away from 0 first), or that arc's midpoint."""
    n = cand.size
    arcs = []
    after = (mids[i] - cand[i], mids[i]) if ok_mid[i] else None
    before_mid = mids[i - 1] - (TWO_PI if i == 0 else 0.0)
    before = (before_mid - cand[i], before_mid) if ok_before[i] else None
    away_after = cand[i] >= 0.0
    for arc in ((after, before) if away_after else (before, after)):
        if arc is not None:
            arcs.append(arc)
    trials = [cand[i]] if ok_pt[i] else []
    for span, mid in arcs:
        trials += [cand[i] + math.copysign(min(e, 0.5 * abs(span)), span) for e in _NUDGES[1:]] + [mid]
    if not trials:
        return None
    trials = np.array(trials)
    good = feasible_at(families, trials)
    if not good.any():
        return None
    pick = trials[good]
    return float(_wrap(pick[np.argmin(np.abs(pick - cand[i]))])) if n else None
