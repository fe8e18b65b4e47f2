"""Comparison and migration limit kinds: hinge, Euler [003], multi-range Euler [004 §3],
quaternion swing components [000 §6.3].

Every class follows the joint-limit protocol of ``core/limits.py``:

* ``contains(q) -> bool (...)`` for unit quaternions ``(..., 4)`` (the joint's local rotation),
* ``clamp(q) -> (..., 4)`` unit quaternions that satisfy ``contains``; a rotation already inside
  is returned unchanged, so ``clamp`` is idempotent. Results keep the input's hemisphere
  (``dot(out, q) >= 0``) so keyed quaternion channels do not flip sign.

Input goes through ``quat.as_unit_quats`` (``ValueError`` on NaN, zero length or wrong shape).
Angles are radians. Euler triples are stored and returned as Blender's (x, y, z) angles; orders
use Blender's names (``'ZXY'`` applies Z first: ``R = Ry Rx Rz``).
"""

import math

import numpy as np

from . import quat
from .projection import swing_twist

TAU = 2.0 * np.pi
_ANGLE_TOL = 1e-9  # tolerance of membership tests, radians
_STORED_SLACK = 1e-6    # beyond a bound a range may reach: Blender stores angles as float32 (pi: +8.7e-8)
_AXES = "XYZ"


# --------------------------------------------------------------------------- validation


def _check_range(value, name, bound=np.pi):
    """Return ``(lo, hi)`` floats of an angle range, or ``(-bound, bound)`` for ``None``; ends
    beyond the bound by at most float32 rounding (a property set to 180°) are clipped to it."""
    if value is None:
        return (-float(bound), float(bound))
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be None or a pair (lo, hi) of angles in radians, got {value!r}")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"{name} must be finite, got ({lo}, {hi})")
    if lo > hi:
        raise ValueError(f"{name}: lower limit {lo} is greater than upper limit {hi}")
    if lo < -bound - _STORED_SLACK or hi > bound + _STORED_SLACK:
        raise ValueError(f"{name} must lie inside [{-bound:.6g}, {bound:.6g}] rad, got ({lo}, {hi})")
    return (max(lo, -float(bound)), min(hi, float(bound)))


def _order_positions(order):
    """Axis indices (i, j, k) applied first, second, third, and the parity of the order."""
    i, j, k = ("XYZ".index(c) for c in quat.check_euler_order(order))
    return i, j, k, (1.0 if (j - i) % 3 == 1 else -1.0)


# --------------------------------------------------------------------------- circle helpers


def _wrap(a):
    """Angles wrapped into (-pi, pi]."""
    return np.pi - np.mod(np.pi - a, TAU)


def _in_arc(x, lo, hi, tol=_ANGLE_TOL):
    """Whether angle ``x`` lies in the arc ``[lo, hi]`` of the circle (so ``-pi`` == ``pi``)."""
    if hi - lo >= TAU - tol:
        return np.ones(np.shape(x), dtype=bool)
    d = np.mod(np.asarray(x) - lo, TAU)
    return (d <= hi - lo + tol) | (d >= TAU - tol)


def _arc_excess(x, lo, hi):
    """Distance (radians, in [0, pi]) round the circle from angle ``x`` to the arc ``[lo, hi]``."""
    width = hi - lo
    if width >= TAU:
        return np.zeros(np.shape(x))
    d = np.mod(np.asarray(x, dtype=np.float64) - lo, TAU)
    return np.where(d <= width, 0.0, np.minimum(d - width, TAU - d))


def _clamp_arc(x, lo, hi):
    """Angle ``x`` moved into ``[lo, hi]``: itself if inside (on the circle), else the nearer end.

    The result is the representative inside ``[lo, hi]`` as a real number.
    """
    d = np.mod(np.asarray(x, dtype=np.float64) - lo, TAU)
    width = hi - lo
    if width >= TAU:
        return lo + d
    nearer_hi = (d - width) <= (TAU - d)
    return np.where(d <= width, lo + d, np.where(nearer_hi, hi, lo))


def _in_arc1(x, lo, hi, tol=_ANGLE_TOL):
    """``_in_arc`` of one angle."""
    if hi - lo >= TAU - tol:
        return True
    d = (x - lo) % TAU
    return d <= hi - lo + tol or d >= TAU - tol


def _off_axis1(a, b):
    """``quat.angle_between`` of two quaternion tuples."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    if ((aw * bw + ax * bx) + ay * by) + az * bz < 0:
        bw, bx, by, bz = -bw, -bx, -by, -bz
    minus = math.sqrt(_sum_sq((aw - bw, ax - bx, ay - by, az - bz)))
    plus = math.sqrt(_sum_sq((aw + bw, ax + bx, ay + by, az + bz)))
    return 4.0 * math.atan2(minus, plus)


def _sum_sq(values):
    """Squares summed in order (numpy's sum over four values)."""
    total = 0.0
    for v in values:
        total = total + v * v
    return total


def _sign_fixed(q):
    """``q`` or ``-q``, whichever has its first non-zero component positive (``q`` and ``-q``
    then give identical results, ties included)."""
    first = np.take_along_axis(q, np.argmax(q != 0.0, axis=-1)[..., None], axis=-1)
    return np.where(first < 0.0, -q, q)


def _same_hemisphere(out, q):
    """Flip ``out`` where needed so that ``dot(out, q) >= 0``."""
    return np.where(np.sum(out * q, axis=-1, keepdims=True) < 0.0, -out, out)


# --------------------------------------------------------------------------- Euler decomposition


def _decompose(q, order):
    """Angles ``(a_i, a_j, a_k)`` of the axes applied first, second, third (``R = R_k R_j R_i``).

    This is the decomposition of [003]: the middle angle lies in [-pi/2, pi/2] (the seed's
    ``asin(-M32)`` for ZXY), the outer ones are in (-pi, pi]. Unlike ``quat.to_euler`` it does
    not switch to the other equivalent triple, and it stays consistent near gimbal lock: the
    middle angle uses ``atan2(sin, cos)``, and the last angle is read from the residual
    rotation ``R R_i(a_i)^-1 R_j(a_j)^-1`` (about axis k), so ``R_k R_j R_i`` reproduces ``q`` to
    rounding even where ``a_i`` itself is poorly determined. At exact lock the first axis takes
    the combined angle and the last gets 0.
    """
    i, j, k, p = _order_positions(order)
    m = quat.to_matrix(q)
    cos_j = np.hypot(m[..., i, i], m[..., j, i])
    a_j = np.arctan2(-p * m[..., k, i], cos_j)
    lock = cos_j < 1e-15  # only decides the split; the residual keeps the rotation
    a_i = np.where(lock, np.arctan2(-p * m[..., j, k], m[..., j, j]),
                   np.arctan2(p * m[..., k, j], m[..., k, k]))
    q_i = _axis_quat(i, a_i)
    q_j = _axis_quat(j, a_j)
    q_k = quat.mul(quat.mul(q, quat.conjugate(q_i)), quat.conjugate(q_j))
    a_k = _wrap(2.0 * np.arctan2(q_k[..., 1 + k], q_k[..., 0]))
    return a_i, a_j, a_k


def _axis_quat(axis_index, angle):
    half = 0.5 * np.asarray(angle, dtype=np.float64)
    out = np.zeros(half.shape + (4,))
    out[..., 0] = np.cos(half)
    out[..., 1 + axis_index] = np.sin(half)
    return out


def _compose(a_i, a_j, a_k, order):
    """Quaternions of the position angles (first, second, third axis) in ``order``."""
    i, j, k, _ = _order_positions(order)
    shape = np.broadcast(a_i, a_j, a_k).shape
    euler = np.empty(shape + (3,))
    euler[..., i] = a_i
    euler[..., j] = a_j
    euler[..., k] = a_k
    return quat.from_euler(euler, order)


def _decompose1(q, order):
    """``_decompose`` of one unit quaternion tuple, on Python floats."""
    i, j, k, p = _order_positions(order)
    w, x, y, z = q
    m = ((1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)),
         (2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)),
         (2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)))
    cos_j = math.hypot(m[i][i], m[j][i])
    a_j = math.atan2(-p * m[k][i], cos_j)
    if cos_j < 1e-15:
        a_i = math.atan2(-p * m[j][k], m[j][j])
    else:
        a_i = math.atan2(p * m[k][j], m[k][k])
    q_i, q_j = _axis_quat1(i, a_i), _axis_quat1(j, a_j)
    q_k = _mul1(_mul1(q, _conjugate1(q_i)), _conjugate1(q_j))
    a_k = math.pi - (math.pi - 2.0 * math.atan2(q_k[1 + k], q_k[0])) % TAU
    return a_i, a_j, a_k


def _axis_quat1(axis_index, angle):
    out = [math.cos(0.5 * angle), 0.0, 0.0, 0.0]
    out[1 + axis_index] = math.sin(0.5 * angle)
    return tuple(out)


def _conjugate1(q):
    return q[0], -q[1], -q[2], -q[3]


def _mul1(a, b):
    """``quat.mul`` of two tuples."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw)


def _clamp_arc1(x, lo, hi):
    """``_clamp_arc`` of one angle."""
    d, width = (x - lo) % TAU, hi - lo
    if width >= TAU or d <= width:
        return lo + d
    return hi if (d - width) <= (TAU - d) else lo


# --------------------------------------------------------------------------- hinge


class HingeLimit:
    """1-DOF hinge (SPEC §2 ``HINGE``): rotation about one local axis only, angle in a range.

    ``angle=(lo, hi)`` radians inside [-pi, pi] (``None``: free hinge). ``axis`` is ``"X"``
    (the default, as in SPEC §2), ``"Y"``, ``"Z"`` or any non-zero 3-vector (normalised here), so
    an IK solver can pass the hinge axis it detects from the rest bend. The angle is measured
    right-handed about ``axis``.

    ``clamp`` removes everything off the axis by taking the nearest rotation about the axis (the
    twist of the swing-twist split about ``axis``, angle ``2 atan2(q . axis, q_w)``), then moves
    that angle to the nearer end of the range on the circle. Both steps are geodesically
    nearest. A half-turn about an axis perpendicular to the hinge has no twist; it maps to
    angle 0 (then clamped).
    """

    def __init__(self, angle=None, axis="X"):
        self.angle = _check_range(angle, "hinge angle")
        if isinstance(axis, str):
            if axis.upper() not in ("X", "Y", "Z"):
                raise ValueError(f"hinge axis must be 'X', 'Y', 'Z' or a 3-vector, got {axis!r}")
            vec = np.zeros(3)
            vec[_AXES.index(axis.upper())] = 1.0
        else:
            vec = quat.as_vectors(axis, "hinge axis")
            if vec.shape != (3,):
                raise ValueError(f"hinge axis must be a single 3-vector, got shape {vec.shape}")
            if not np.any(vec):
                raise ValueError("hinge axis has zero length")
            vec = quat.normalize(vec)
        self.axis = vec
        self._axis1 = tuple(vec.tolist())

    def hinge_angle(self, q):
        """Angle in (-pi, pi] of the rotation about the hinge axis nearest to ``q``."""
        q = quat.as_unit_quats(q)
        return _wrap(2.0 * np.arctan2(q[..., 1:] @ self.axis, q[..., 0]))

    def contains(self, q):
        q = quat.as_unit_quats(q)
        theta = self.hinge_angle(q)
        twist = quat.from_axis_angle(self.axis, theta)
        off_axis = quat.angle_between(q, twist)
        return (off_axis <= _ANGLE_TOL) & _in_arc(theta, *self.angle)

    def clamp(self, q):
        q = quat.as_unit_quats(q)
        theta = _clamp_arc(self.hinge_angle(q), *self.angle)
        out = _same_hemisphere(quat.from_axis_angle(self.axis, theta), q)
        return np.where(self.contains(q)[..., None], q, out)

    def clamp1(self, q):
        """``clamp`` of one quaternion ``(w, x, y, z)`` of finite floats, not zero, on Python floats
        (the same formulas in the same order, without numpy's per-call cost); a tuple."""
        w, x, y, z = q
        norm = math.sqrt(((w * w + x * x) + y * y) + z * z)      # quat.as_unit_quats
        w, x, y, z = w / norm, x / norm, y / norm, z / norm
        ax, ay, az = self._axis1
        theta = math.pi - (math.pi - 2.0 * math.atan2((x * ax + y * ay) + z * az, w)) % TAU   # hinge_angle
        lo, hi = self.angle
        if _in_arc1(theta, lo, hi) and _off_axis1((w, x, y, z), self._about_axis(theta)) <= _ANGLE_TOL:
            return (w, x, y, z)
        d, width = (theta - lo) % TAU, hi - lo                   # _clamp_arc
        theta = lo + d if width >= TAU or d <= width else hi if (d - width) <= (TAU - d) else lo
        out = self._about_axis(theta)
        if ((out[0] * w + out[1] * x) + out[2] * y) + out[3] * z < 0.0:   # _same_hemisphere
            return -out[0], -out[1], -out[2], -out[3]
        return out

    def _about_axis(self, theta):
        """``quat.from_axis_angle(self.axis, theta)`` on floats."""
        half = 0.5 * theta
        s = math.sin(half)
        ax, ay, az = self._axis1
        return math.cos(half), s * ax, s * ay, s * az

    def __repr__(self):
        return f"HingeLimit(angle={self.angle}, axis={tuple(self.axis)})"


# --------------------------------------------------------------------------- Euler [003]


class _EulerRanges:
    """Shared construction of per-axis ranges indexed by Blender axis (x, y, z)."""

    def _set_ranges(self, x, y, z, order, middle_bound):
        self.order = quat.check_euler_order(order)
        middle = order[1]
        ranges = {}
        for letter, value in zip(_AXES, (x, y, z)):
            bound = middle_bound if letter == middle else np.pi
            ranges[letter] = _check_range(value, f"{letter.lower()} range (order {order})", bound)
        self.x, self.y, self.z = ranges["X"], ranges["Y"], ranges["Z"]
        self._pos_ranges = tuple(ranges[c] for c in order)  # first, middle, last axis


class EulerLimit(_EulerRanges):
    """Conventional per-axis Euler limit with the gimbal guard of [003].

    ``x, y, z``: ``(lo, hi)`` radians for Blender's Euler X, Y, Z angles (``None``: free).
    ``order``: Blender order name; the default ``'ZXY'`` is the seed's rotation
    ``R = Ry Rx Rz`` letter for letter (its row-vector matrix ``Rz Rx Ry``, [003 §1]).
    ``gimbal_guard``: bound on the middle axis, in (0, pi/2); default 80 deg as in [003].

    The seed's procedure, per rotation: take the middle angle from ``asin`` in [-90, 90] deg
    (``-M32`` for ZXY), clamp it to +-guard so the other two stay well defined, read the first and
    last angles with ``atan2``, clamp each angle to its range, rebuild. The middle axis range
    therefore has to lie within +-guard (``ValueError`` otherwise; ``None`` means +-guard), and a
    rotation whose middle angle exceeds the guard is never inside.

    One deliberate difference from the seed's C code: ranges are compared on the circle, so
    +-180 deg are one angle and an angle outside goes to the nearer end on the circle (the seed
    compares raw ``atan2`` values). Without this, a limit touching +-180 deg would not be
    idempotent. For ranges symmetric about 0 the two agree exactly.
    """

    def __init__(self, x=None, y=None, z=None, order="ZXY", gimbal_guard=np.radians(80.0)):
        guard = float(gimbal_guard)
        if not (0.0 < guard < np.pi / 2):
            raise ValueError(f"gimbal_guard must be in (0, pi/2) rad, got {gimbal_guard!r}")
        self.gimbal_guard = guard
        self._set_ranges(x, y, z, order, guard)

    def euler(self, q):
        """The seed's Euler angles (x, y, z) of ``q`` (middle angle in [-pi/2, pi/2])."""
        q = quat.as_unit_quats(q)
        i, j, k, _ = _order_positions(self.order)
        out = np.empty(q.shape[:-1] + (3,))
        out[..., i], out[..., j], out[..., k] = _decompose(q, self.order)
        return out

    def contains(self, q):
        return self._inside(_decompose(quat.as_unit_quats(q), self.order))

    def _inside(self, angles):
        # a quarter of the tolerance per angle: inside here implies inside EulerMultiLimit's
        # 1e-9 rad geodesic test for the same box
        inside = [_in_arc(a, *r, tol=0.25 * _ANGLE_TOL) for a, r in zip(angles, self._pos_ranges)]
        return inside[0] & inside[1] & inside[2]

    def distance_bound(self, q):
        """A lower bound of the geodesic angle from ``q`` to the nearest rotation inside (0 inside).

        With ``R = R_k(c) R_j(b) R_i(a)``, ``R e_i`` has elevation ``b`` above the plane normal to
        ``e_k`` and azimuth ``c`` about it; ``R^T e_k`` has elevation ``b`` and azimuth ``-a``
        about ``e_i``. A rotation by ``theta`` moves a vector by at most ``theta``, so a rotation
        inside (middle angle ``b'``, ``|b'| <= b_max``) is at least ``|b - b'|`` away, and, from
        the chord ``|u - u'|^2 >= 4 cos b cos b' sin^2(dc / 2)`` of two unit vectors at elevations
        ``b, b'`` and azimuths ``dc`` apart, at least ``2 asin(sqrt(cos b cos b_max) sin(e / 2))``
        with ``e`` an outer angle's distance outside its range. The bound is the largest of the
        three; the feasible-swivel search (``swivel_limits``) uses it as a Lipschitz certificate.
        """
        angles = a_i, a_j, a_k = _decompose(quat.as_unit_quats(q), self.order)
        (lo_i, hi_i), (lo_j, hi_j), (lo_k, hi_k) = self._pos_ranges
        scale = np.sqrt(np.cos(a_j) * np.cos(max(abs(lo_j), abs(hi_j))))
        outer = np.maximum(_arc_excess(a_i, lo_i, hi_i), _arc_excess(a_k, lo_k, hi_k))
        middle = np.maximum(np.maximum(lo_j - a_j, a_j - hi_j), 0.0)
        bound = np.maximum(middle, 2.0 * np.arcsin(np.minimum(scale * np.sin(0.5 * outer), 1.0)))
        return np.where(self._inside(angles), 0.0, bound)

    def clamp(self, q):
        q = quat.as_unit_quats(q)
        angles = _decompose(q, self.order)
        clamped = [_clamp_arc(a, *r) for a, r in zip(angles, self._pos_ranges)]
        out = _same_hemisphere(_compose(*clamped, self.order), q)
        return np.where(self.contains(q)[..., None], q, out)

    def clamp1(self, q):
        """``clamp`` of one quaternion ``(w, x, y, z)`` of finite floats, not zero, on Python floats
        (the same steps without numpy's per-call cost, for the CCD's per-joint clamps); a tuple."""
        w, x, y, z = q
        norm = math.sqrt(((w * w + x * x) + y * y) + z * z)
        q = (w / norm, x / norm, y / norm, z / norm)
        angles = _decompose1(q, self.order)
        if all(_in_arc1(a, *r, tol=0.25 * _ANGLE_TOL) for a, r in zip(angles, self._pos_ranges)):
            return q
        i, j, k, _ = _order_positions(self.order)
        a_i, a_j, a_k = (_clamp_arc1(a, *r) for a, r in zip(angles, self._pos_ranges))
        out = _mul1(_axis_quat1(k, a_k), _mul1(_axis_quat1(j, a_j), _axis_quat1(i, a_i)))
        if ((out[0] * q[0] + out[1] * q[1]) + out[2] * q[2]) + out[3] * q[3] < 0.0:
            return -out[0], -out[1], -out[2], -out[3]
        return out

    def __repr__(self):
        return (f"EulerLimit(x={self.x}, y={self.y}, z={self.z}, order={self.order!r}, "
                f"gimbal_guard={self.gimbal_guard})")


# --------------------------------------------------------------------------- Euler, multi [004 §3]


class EulerMultiLimit(_EulerRanges):
    """Euler limit that accepts any equivalent Euler triple [004 §3].

    ``x, y, z``: ``(lo, hi)`` radians inside [-pi, pi] for Blender's Euler X, Y, Z angles
    (``None``: free); the middle axis of ``order`` may exceed +-90 deg. No gimbal guard.

    A rotation with decomposition ``(a, b, c)`` (first, middle, last axis; ``b`` in
    [-90, 90] deg) is also ``(a +- pi, +-pi - b, c +- pi)``. [004 §3] turns this into four
    condition sets: (1) the triple itself, (2) the flipped triple with the wrap variants,
    (3)/(4) at gimbal lock ``b = -+90`` deg only the combination ``c + s a`` matters (sign ``s``
    fixed by order and side) and it must lie in the summed ranges. Here the wraps are handled by
    comparing on the circle, and the lock sets by re-splitting ``c + s a`` between the two outer
    axes.

    ``clamp``: candidates from both triples: each angle clamped into its range, the re-split of
    ``c + s a`` at the clamped middle angle (keeps the rotation exactly at lock), and the four
    outer-axis corners. The candidate nearest to the input in geodesic angle wins. ``contains``
    is "the nearest candidate is within 1e-9 rad", so ``clamp(q) == q`` exactly when inside.
    """

    def __init__(self, x=None, y=None, z=None, order="ZXY"):
        self._set_ranges(x, y, z, order, np.pi)

    def _candidates(self, q):
        """Candidate rotations (..., n, 4) satisfying the ranges, built from ``q``'s triples."""
        _, _, _, p = _order_positions(self.order)
        (a_lo, a_hi), (b_lo, b_hi), (c_lo, c_hi) = self._pos_ranges
        a0, b0, c0 = _decompose(q, self.order)
        a = _wrap(np.stack((a0, a0 + np.pi), axis=-1))
        b = _wrap(np.stack((b0, np.pi - b0), axis=-1))
        c = _wrap(np.stack((c0, c0 + np.pi), axis=-1))

        b_in = _clamp_arc(b, b_lo, b_hi)
        cand_a = [_clamp_arc(a, a_lo, a_hi)]
        cand_c = [_clamp_arc(c, c_lo, c_hi)]
        # Near lock R_k(c) R_j(b) R_i(a) depends on sigma = c + s a (exactly, at b = +-pi/2).
        s = np.where(b_in >= 0.0, -p, p)
        sigma = c + s * a
        for turns in (-1.0, 0.0, 1.0):
            target = sigma + TAU * turns
            # c = target - s a in [c_lo, c_hi]  <=>  s a in [target - c_hi, target - c_lo]
            lo = np.where(s > 0, target - c_hi, c_lo - target)
            hi = np.where(s > 0, target - c_lo, c_hi - target)
            lo, hi = np.maximum(lo, a_lo), np.minimum(hi, a_hi)
            ok = lo <= hi
            a_split = np.clip(a, lo, np.maximum(lo, hi))
            c_split = np.clip(target - s * a_split, c_lo, c_hi)
            cand_a.append(np.where(ok, a_split, cand_a[0]))
            cand_c.append(np.where(ok, c_split, cand_c[0]))
        for a_corner in (a_lo, a_hi):
            for c_corner in (c_lo, c_hi):
                cand_a.append(np.full_like(a, a_corner))
                cand_c.append(np.full_like(c, c_corner))
        n = len(cand_a)
        a_all = np.concatenate(cand_a, axis=-1)
        c_all = np.concatenate(cand_c, axis=-1)
        b_all = np.concatenate([b_in] * n, axis=-1)
        return _compose(a_all, b_all, c_all, self.order)

    def _nearest(self, q):
        cand = self._candidates(_sign_fixed(q))     # q and -q: the same candidates, ties included
        dist = quat.angle_between(q[..., None, :], cand)
        best = np.argmin(dist, axis=-1)
        near = np.take_along_axis(cand, best[..., None, None], axis=-2)[..., 0, :]
        return near, np.take_along_axis(dist, best[..., None], axis=-1)[..., 0]

    def contains(self, q):
        q = quat.as_unit_quats(q)
        return self._nearest(q)[1] <= _ANGLE_TOL

    def clamp(self, q):
        q = quat.as_unit_quats(q)
        near, dist = self._nearest(q)
        return np.where((dist <= _ANGLE_TOL)[..., None], q, _same_hemisphere(near, q))

    def __repr__(self):
        return f"EulerMultiLimit(x={self.x}, y={self.y}, z={self.z}, order={self.order!r})"


# --------------------------------------------------------------------------- quaternion swing [000 §6.3]


class QuatSwingLimit:
    """Limit on the swing quaternion's components [000 §6.3], with an optional twist range.

    Swing-twist as in ``core/projection.py``: ``q = q_swing · q_twist``, twist about local Y by
    ``psi``, ``q_swing = (q_bw, q_bx, 0, q_bz)`` with ``q_bw >= 0`` [000 eq.37-39, mapped: the
    paper's ``q_by, q_bz`` are Blender's ``q_bz, q_bx``]. Region on the ``(q_bx, q_bz)`` disk:

    * ``max_swing``: the paper's sum-of-squares limit ``q_bx² + q_bz² <= sin²(max_swing/2)``,
      which is exactly the cone "angle between local +Y and the swung +Y <= max_swing"
      [000 §6.3]. Radians in [0, pi]; ``None``: no cone.
    * ``swing_x``, ``swing_z``: per-component ranges given as angles, ``q_bx = sin(xi/2)``,
      ``q_bz = sin(zeta/2)`` [000 §6.3], ``(lo, hi)`` radians in [-pi, pi]; ``None``: free.
      (A pure swing by ``a`` about X has ``xi = a``; mixed swings do not decompose like that,
      which is why [000 §6.3] prefers the projection.)
    * ``twist``: ``(lo, hi)`` radians in [-pi, pi] for ``psi``; ``None``: free.

    The cone and the boxes must overlap (``ValueError`` otherwise). ``clamp`` projects
    ``(q_bx, q_bz)`` to the nearest point of the region on the disk (for the cone alone this is
    the geodesically nearest swing: same direction, smaller angle), clamps ``psi`` to the nearer
    end on the circle and rebuilds ``q_swing · q_twist`` [000 eq.46]. At the pole, where ``q`` and
    ``-q`` give opposite swing components, both are tried and the nearer result kept.

    The pole (swing of exactly 180 deg) is the one point where twist is undefined, so the region
    always stays ``POLE_MARGIN`` rad away from it; even an unlimited ``QuatSwingLimit()`` moves
    an exact half-turn swing by that much.
    """

    POLE_MARGIN = 1e-5

    def __init__(self, max_swing=None, swing_x=None, swing_z=None, twist=None):
        if max_swing is None:
            max_swing = np.pi
        max_swing = float(max_swing)
        if not (0.0 <= max_swing <= np.pi):
            raise ValueError(f"max_swing must be in [0, pi] rad, got {max_swing!r}")
        self.max_swing = max_swing
        self.swing_x = _check_range(swing_x, "swing_x range")
        self.swing_z = _check_range(swing_z, "swing_z range")
        self.twist = _check_range(twist, "twist range")
        self._cone = min(max_swing, np.pi - self.POLE_MARGIN)
        self._radius = np.sin(0.5 * self._cone)
        self._box = np.sin(0.5 * np.array([self.swing_x, self.swing_z]))  # [[bx lo, hi], [bz lo, hi]]
        nearest = np.clip(0.0, self._box[:, 0], self._box[:, 1])
        if np.sum(nearest * nearest) > self._radius ** 2 + 1e-15:
            raise ValueError("swing_x/swing_z ranges lie entirely outside the max_swing cone")
        self._fixed = self._vertices()

    @staticmethod
    def _split(q):
        """Swing components ``(q_bx, q_bz)`` (..., 2), ``q_bw`` and the twist angle of ``q``."""
        _, _, psi = swing_twist(q)
        half = 0.5 * psi
        twist_inv = np.stack((np.cos(half), np.zeros_like(half), -np.sin(half), np.zeros_like(half)), -1)
        swing = quat.canonical(quat.mul(q, twist_inv))
        return swing[..., [1, 3]], swing[..., 0], psi

    @staticmethod
    def _compose(b, psi):
        bw = np.sqrt(np.clip(1.0 - np.sum(b * b, axis=-1), 0.0, 1.0))
        swing = np.stack((bw, b[..., 0], np.zeros_like(bw), b[..., 1]), axis=-1)
        half = 0.5 * psi
        twist = np.stack((np.cos(half), np.zeros_like(half), np.sin(half), np.zeros_like(half)), -1)
        return quat.normalize(quat.mul(swing, twist))

    def _in_region(self, b, bw, tol=_ANGLE_TOL):
        """Swing components ``b`` (..., 2), ``q_bw`` inside the boxes and the cone (angle test,
        which stays sharp near the pole where ``|b|`` is flat)."""
        lo, hi = self._box[:, 0], self._box[:, 1]
        in_box = np.all((b >= lo - tol) & (b <= hi + tol), axis=-1)
        angle = 2.0 * np.arctan2(np.linalg.norm(b, axis=-1), bw)
        return in_box & (angle <= self._cone + tol)

    def _on_disk_region(self, b):
        """Strict test of points of the (q_bx, q_bz) disk (projection candidates)."""
        lo, hi = self._box[:, 0], self._box[:, 1]
        in_box = np.all((b >= lo - 1e-15) & (b <= hi + 1e-15), axis=-1)
        return in_box & (np.sum(b * b, axis=-1) <= self._radius ** 2 + 1e-15)

    def _vertices(self):
        """Fixed projection candidates: box corners and box-edge/circle crossings in the region."""
        (x0, x1), (z0, z1) = self._box
        pts = [(x, z) for x in (x0, x1) for z in (z0, z1)]
        crossing = lambda e: np.sqrt(max(self._radius ** 2 - e * e, 0.0))  # noqa: E731
        for x in (x0, x1):
            pts += [(x, crossing(x)), (x, -crossing(x))]
        for z in (z0, z1):
            pts += [(crossing(z), z), (-crossing(z), z)]
        pts = np.array(pts)
        return pts[self._on_disk_region(pts)]

    def _project(self, b):
        """Euclidean projection of ``b`` (..., 2) onto box ∩ disk: the nearest of the point's
        projections onto each face (box, circle, the four edges) and the vertices."""
        (x0, x1), (z0, z1) = self._box
        r = self._radius
        bx, bz = b[..., 0], b[..., 1]
        norm = np.hypot(bx, bz)
        scale = np.where(norm > r, r / np.where(norm > r, norm, 1.0), 1.0)
        zc, xc = np.clip(bz, z0, z1), np.clip(bx, x0, x1)
        moving = np.stack((
            b, np.stack((xc, zc), -1), b * scale[..., None],
            np.stack((np.full_like(bx, x0), zc), -1), np.stack((np.full_like(bx, x1), zc), -1),
            np.stack((xc, np.full_like(bz, z0)), -1), np.stack((xc, np.full_like(bz, z1)), -1),
        ), axis=-2)
        cand = np.concatenate((moving, np.broadcast_to(self._fixed, b.shape[:-1] + self._fixed.shape)), -2)
        dist = np.sum((cand - b[..., None, :]) ** 2, axis=-1)
        dist = np.where(self._on_disk_region(cand), dist, np.inf)
        best = np.argmin(dist, axis=-1)
        return np.take_along_axis(cand, best[..., None, None], axis=-2)[..., 0, :]

    def swing_components(self, q):
        """``(q_bx, q_bz)`` (..., 2) of the swing quaternion and the twist ``psi`` of ``q``."""
        b, _, psi = self._split(quat.as_unit_quats(q))
        return b, psi

    def contains(self, q):
        b, bw, psi = self._split(quat.as_unit_quats(q))
        return self._in_region(b, bw) & _in_arc(psi, *self.twist)

    def clamp(self, q):
        q = quat.as_unit_quats(q)
        q_fixed = _sign_fixed(q)
        out = self._clamped(q_fixed, q)
        if np.any(self._split(q_fixed)[1] == 0.0):
            # at the pole (q_bw = 0) -q gives the opposite swing components: keep the nearer
            other = self._clamped(-q_fixed, q)
            nearer = quat.angle_between(other, q) < quat.angle_between(out, q)
            out = np.where(nearer[..., None], other, out)
        return np.where(self.contains(q)[..., None], q, out)

    def _clamped(self, q_signed, q):
        b, _, psi = self._split(q_signed)
        out = self._compose(self._project(b), _clamp_arc(psi, *self.twist))
        return _same_hemisphere(out, q)

    def __repr__(self):
        return (f"QuatSwingLimit(max_swing={self.max_swing}, swing_x={self.swing_x}, "
                f"swing_z={self.swing_z}, twist={self.twist})")
