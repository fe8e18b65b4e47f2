"""The single-target fast path of ``limb_ik``: ``_upper_rotation`` and ``_finish`` on plain floats.

One target with an unbatched chain is what a viewport drag or an operator solves, many times a
second; numpy's per-call cost would dominate there. The steps are those of the general path
[001 §3, Solve] and give the same results to rounding (``tests/core/test_limb_ik.py`` compares
them); a target at the root and the rare choice of the other hinge branch return ``None`` and
take the general path.
"""

import math

import numpy as np

from . import limb_ik as L
from . import quat as Q


class ScalarChain:
    """Chain constants as Python floats for the single-target fast path."""

    def __init__(self, c):
        f = lambda v: tuple(float(x) for x in np.ravel(v))  # noqa: E731
        self.rb = f(c.base_rot)
        self.root = f(c.root)
        self.scale = float(c.base_scale)
        self.o_l = f(c.o_l)
        self.rel_lower = f(c.rel_lower)
        self.o_par, self.o_perp, self.o_cross = f(c.o_par), f(c.o_perp), f(c.o_cross)
        self.axis, self.axis_upper = f(c.axis), f(c.axis_upper)
        self.w_rest_hat, self.bend_rest = f(c.w_rest_hat), f(c.bend_rest)
        self.k, self.r, self.theta0, self.rigid = c.k, c.r, c.theta0, c.rigid
        self.d_min, self.d_max = c.d_min, c.d_max
        self.close = L._CLOSE_REL * c.reach
        self.base_quat, self.q_rel_lower = f(c.base_quat), f(c.q_rel_lower)
        self.q_rel_end = f(c.q_rel_end)


def inputs(chain, target, swivel, limits, target_rotation=None):
    """Plain-float (target, swivel, target_rotation, limits) for ``solve``, or ``None`` when the
    general path is needed (batch, batched chain, or anything to validate/reject)."""
    if chain.batched:
        return None
    t = np.asarray(target)
    if t.shape != (3,) or np.ndim(swivel) != 0:
        return None
    t = t.tolist()
    try:
        phi = float(swivel)
    except (TypeError, ValueError):
        return None
    if not all(isinstance(x, (int, float)) and math.isfinite(x) for x in t) or not math.isfinite(phi):
        return None
    limits = L._limb_limits(limits)
    if target_rotation is None:
        return t, phi, None, limits
    r = np.asarray(target_rotation)
    if r.shape != (4,):
        return None
    r = r.tolist()
    if not all(isinstance(x, (int, float)) and math.isfinite(x) for x in r):
        return None
    norm = math.sqrt(sum(x * x for x in r))
    if norm < 1e-12:
        return None
    return t, phi, tuple(x / norm for x in r), limits


def solve(chain, target, swivel, target_rotation, limits):
    """``LimbPose`` of ``limb_ik._upper_rotation`` + ``_finish`` on plain floats (same steps, same
    results to rounding); ``None`` where the general path answers (the target at the root, the
    swivel choice on the other hinge branch)."""
    c = chain._scalar
    rb, s = c.rb, c.scale
    px, py, pz = target
    dx, dy, dz = px - c.root[0], py - c.root[1], pz - c.root[2]
    tx = (rb[0] * dx + rb[3] * dy + rb[6] * dz) / s
    ty = (rb[1] * dx + rb[4] * dy + rb[7] * dz) / s
    tz = (rb[2] * dx + rb[5] * dy + rb[8] * dz) / s
    dist = math.sqrt(tx * tx + ty * ty + tz * tz)
    if dist <= c.close:  # TOO_CLOSE: the general path returns the rest pose and flags
        return None
    n = (tx / dist, ty / dist, tz / dist)
    theta, hinge_clamped = _hinge_scalar(c, min(max(dist, c.d_min), c.d_max), limits.hinge)
    ct, st = math.cos(theta), math.sin(theta)
    op, oq, oc, rl, ol = c.o_par, c.o_perp, c.o_cross, c.rel_lower, c.o_l
    ox, oy, oz = (op[i] + ct * oq[i] + st * oc[i] for i in range(3))
    w_vec = (ol[0] + rl[0] * ox + rl[1] * oy + rl[2] * oz,
             ol[1] + rl[3] * ox + rl[4] * oy + rl[5] * oz,
             ol[2] + rl[6] * ox + rl[7] * oy + rl[8] * oz)
    wn = math.sqrt(w_vec[0] * w_vec[0] + w_vec[1] * w_vec[1] + w_vec[2] * w_vec[2])
    w = (w_vec[0] / wn, w_vec[1] / wn, w_vec[2] / wn) if wn > 0.0 else c.w_rest_hat
    b0 = _bend_scalar(w, c.axis_upper, ol)
    # swivel 0 frame (see _swivel_zero)
    wr, a = c.w_rest_hat, c.bend_rest
    one_c = 1.0 + n[0] * wr[0] + n[1] * wr[1] + n[2] * wr[2]
    if one_c > L._ANTIPODE:
        f = (a[0] * n[0] + a[1] * n[1] + a[2] * n[2]) / one_c
        u = (a[0] - f * (wr[0] + n[0]), a[1] - f * (wr[1] + n[1]), a[2] - f * (wr[2] + n[2]))
    else:
        u = (-a[0], -a[1], -a[2])
    un = u[0] * n[0] + u[1] * n[1] + u[2] * n[2]
    u = _unit3((u[0] - un * n[0], u[1] - un * n[1], u[2] - un * n[2]))
    v = _cross3(n, u)
    cs, sn = math.cos(swivel), math.sin(swivel)
    b = (cs * u[0] + sn * v[0], cs * u[1] + sn * v[1], cs * u[2] + sn * v[2])
    f0 = (w, b0, _cross3(w, b0))
    ft = (n, b, _cross3(n, b))
    m = [[ft[0][i] * f0[0][j] + ft[1][i] * f0[1][j] + ft[2][i] * f0[2][j] for j in range(3)] for i in range(3)]
    q1 = _quat_from_rows(m)
    used, ub, eb, none = L._wrap_scalar(swivel), False, False, False
    if L._needs_swivel_choice(limits, target_rotation):
        ch = L._choose_swivel(chain, np.array(n), np.array(q1), theta, hinge_clamped, limits,
                            None if target_rotation is None else np.array(target_rotation), np.array(c.base_quat))
        if ch.theta != theta:  # rare: the general path handles the other hinge branch
            return None
        q1, used, ub, eb = tuple(ch.q1.tolist()), L._wrap_scalar(swivel + ch.delta), ch.upper_blocked, ch.end_blocked
        none = ch.none
    upper_clamped = end_clamped = False
    if limits.upper is not None and (none or not L._needs_swivel_choice(limits, target_rotation)):
        q1c, flag = L._clamp(limits.upper, np.array(q1))
        q1, upper_clamped = tuple(q1c.tolist()), bool(flag)
    ha = math.sin(0.5 * theta)
    ax = c.axis
    qh = (math.cos(0.5 * theta), ha * ax[0], ha * ax[1], ha * ax[2])
    q2, orient = (1.0, 0.0, 0.0, 0.0), None
    if target_rotation is not None:
        end_parent = _qmul(_qmul(_qmul(_qmul(c.base_quat, q1), c.q_rel_lower), qh), c.q_rel_end)
        q2 = _qmul((end_parent[0], -end_parent[1], -end_parent[2], -end_parent[3]), target_rotation)
        if q2[0] < 0.0:
            q2 = (-q2[0], -q2[1], -q2[2], -q2[3])
    if limits.end is not None:
        q2c, flag = L._clamp(limits.end, np.array(q2))
        q2, end_clamped = tuple(q2c.tolist()), bool(flag)
    if target_rotation is not None:
        orient = _angle_scalar(_qmul(end_parent, q2), target_rotation)
    if upper_clamped:
        wx, wy, wz = _rotate3(q1, w_vec)
        tip_error = s * math.sqrt((wx - tx) ** 2 + (wy - ty) ** 2 + (wz - tz) ** 2)
    else:  # R1 maps w0 exactly onto the target direction, so only the lengths can differ.
        tip_error = s * abs(wn - dist)
    tol = L._REACH_REL * chain.reach
    d_lo, d_hi = (c.d_min, c.d_max) if limits.hinge is None else _distance_band(chain, limits.hinge)
    return L.LimbPose(
        quats=np.array((q1, qh, q2)), hinge_angle=np.float64(theta), tip_error=np.float64(tip_error),
        reached=np.bool_(tip_error <= tol * s),
        out_of_reach=np.bool_(dist < d_lo - tol or dist > d_hi + tol),
        too_close=np.False_, hinge_clamped=np.bool_(hinge_clamped), upper_clamped=np.bool_(upper_clamped),
        end_clamped=np.bool_(end_clamped), orientation_error=orient, swivel=np.float64(used),
        swivel_requested=np.float64(L._wrap_scalar(swivel)), upper_blocked=np.bool_(ub), end_blocked=np.bool_(eb),
        no_feasible_swivel=np.bool_(none),
    )


def _hinge_scalar(c, dist, hinge_range):
    """Scalar twin of ``_hinge_angle`` (``dist`` already clipped to [d_min, d_max])."""
    if hinge_range is not None:
        lo, hi = L._check_range(hinge_range)
    if c.rigid:
        return (0.0, False) if hinge_range is None else L._clip_to_range(0.0, lo, hi)
    delta = math.acos(min(max((dist * dist - c.k) / c.r, -1.0), 1.0))
    plus = L._wrap_scalar(c.theta0 + delta)
    if hinge_range is None:
        return plus, False
    for cand in (plus, L._wrap_scalar(c.theta0 - delta)):
        d = (cand - lo) % L._TWO_PI
        if d > L._TWO_PI - 1e-12:
            d = 0.0
        if d <= (hi - lo) + 1e-12:
            return L._wrap_scalar(min(lo + d, hi)), False
    dist_of = lambda t: math.sqrt(max(c.k + c.r * math.cos(t - c.theta0), 0.0))  # noqa: E731
    return L._wrap_scalar(lo if abs(dist_of(lo) - dist) <= abs(dist_of(hi) - dist) else hi), True


def _distance_band(chain, hinge_range):
    """``distance_range`` in the base frame, cached per hinge range."""
    key = L._check_range(hinge_range)
    band = chain._bands.get(key)
    if band is None:
        lo, hi = chain.distance_range(key)
        band = chain._bands[key] = (lo / float(chain.base_scale), hi / float(chain.base_scale))
    return band


def _rotate3(q, v):
    w, x, y, z = q
    cx, cy, cz = y * v[2] - z * v[1], z * v[0] - x * v[2], x * v[1] - y * v[0]
    return (v[0] + 2.0 * (w * cx + y * cz - z * cy),
            v[1] + 2.0 * (w * cy + z * cx - x * cz),
            v[2] + 2.0 * (w * cz + x * cy - y * cx))


def _angle_scalar(a, b):
    """Scalar twin of ``quat.angle_between``."""
    if a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] < 0.0:
        b = (-b[0], -b[1], -b[2], -b[3])
    d = math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3])
    p = math.hypot(a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3])
    return np.float64(4.0 * math.atan2(d, p))


_qmul = Q.mul1


def _cross3(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _unit3(v):
    n = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    return (v[0] / n, v[1] / n, v[2] / n)


def _bend_scalar(w, axis, elbow):
    """Scalar twin of ``_bend_direction``."""
    b = _cross3(w, axis)
    if math.sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2]) > L._DEGENERATE_SIN:
        return _unit3(b)
    return tuple(float(x) for x in L._bend_direction(np.array(w), np.array(axis), np.array(elbow)))


def _quat_from_rows(m):
    """Unit quaternion (w >= 0) of a rotation matrix given as nested rows (Shepperd's method)."""
    tr = m[0][0] + m[1][1] + m[2][2]
    if tr >= max(m[0][0], m[1][1], m[2][2]):
        w = math.sqrt(1.0 + tr) * 2.0
        q = (0.25 * w, (m[2][1] - m[1][2]) / w, (m[0][2] - m[2][0]) / w, (m[1][0] - m[0][1]) / w)
    elif m[0][0] >= m[1][1] and m[0][0] >= m[2][2]:
        x = math.sqrt(1.0 + m[0][0] - m[1][1] - m[2][2]) * 2.0
        q = ((m[2][1] - m[1][2]) / x, 0.25 * x, (m[0][1] + m[1][0]) / x, (m[0][2] + m[2][0]) / x)
    elif m[1][1] >= m[2][2]:
        y = math.sqrt(1.0 + m[1][1] - m[0][0] - m[2][2]) * 2.0
        q = ((m[0][2] - m[2][0]) / y, (m[0][1] + m[1][0]) / y, 0.25 * y, (m[1][2] + m[2][1]) / y)
    else:
        z = math.sqrt(1.0 + m[2][2] - m[0][0] - m[1][1]) * 2.0
        q = ((m[1][0] - m[0][1]) / z, (m[0][2] + m[2][0]) / z, (m[1][2] + m[2][1]) / z, 0.25 * z)
    n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    sign = 1.0 if q[0] >= 0.0 else -1.0
    return tuple(sign * x / n for x in q)
