"""The limit-aware steps of CCD (``ccd``) and the float helpers they share [issue 19].

A 1-DOF joint (``HingeLimit``) turns about its axis only (``_hinge_rotation``); a joint with a
twist range whose step would twist it out of range first turns about the joint -> effector line
to the nearer end of the range (``_twist_into_range``, closed form in ``_turn_to_twist``);
smooth limits are applied in SIMPLE form while sweeps make progress (``_per_sweep_limit``);
restarts start from seeded random poses inside the limits (``_random_inside``). Everything
works on plain Python floats in tuples: quaternions ``(w, x, y, z)``, vectors ``(x, y, z)``.
"""

import copy
import math

import numpy as np

from . import quat
from .euler_limits import _ANGLE_TOL as _HINGE_TOL
from .euler_limits import TAU, EulerLimit, HingeLimit
from .limits import TWIST_TOL, JointLimit
from .locks import RotationLock
from .projection import MATH, POLE_EPS2, _compose
from .swivel_limits import contains1

_EPS = 1e-12
_EPS2 = _EPS * _EPS


_qmul = quat.mul1


def _qconj(q):
    return (q[0], -q[1], -q[2], -q[3])


def _qrot(q, v):
    """Rotate ``v`` by unit quaternion ``q``: v + 2 w (u x v) + 2 u x (u x v)."""
    w, ux, uy, uz = q
    vx, vy, vz = v
    cx = uy * vz - uz * vy
    cy = uz * vx - ux * vz
    cz = ux * vy - uy * vx
    return (
        vx + 2.0 * (w * cx + uy * cz - uz * cy),
        vy + 2.0 * (w * cy + uz * cx - ux * cz),
        vz + 2.0 * (w * cz + ux * cy - uy * cx),
    )


def _perpendicular(u, frame):
    """A deterministic unit axis perpendicular to ``u`` for a half turn: the joint's local X
    (the usual bend axis of a Blender bone), else its local Z, projected off ``u``."""
    nu = math.sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2])
    u = (u[0] / nu, u[1] / nu, u[2] / nu)
    for local in ((1.0, 0.0, 0.0), (0.0, 0.0, 1.0)):
        a = _qrot(frame, local)
        k = a[0] * u[0] + a[1] * u[1] + a[2] * u[2]
        a = (a[0] - k * u[0], a[1] - k * u[1], a[2] - k * u[2])
        na = math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])
        if na > 0.1:  # local X and Z are orthogonal: one of them is always > 0.7 off u
            return (a[0] / na, a[1] / na, a[2] / na)
    raise AssertionError("unreachable: X and Z cannot both be parallel to u")


def _degenerate_arc(u, v, frame):
    """The CCD step where the shortest arc from ``u`` (joint -> effector) to ``v`` (joint ->
    target) is not unique (``_sweep`` takes the usual case): ``None`` when either vanishes or
    they agree (nothing to turn), a half turn about a perpendicular axis when they are opposed."""
    ux, uy, uz = u
    vx, vy, vz = v
    if (ux * ux + uy * uy + uz * uz <= _EPS2 or vx * vx + vy * vy + vz * vz <= _EPS2
            or ux * vx + uy * vy + uz * vz > 0.0):
        return None
    return _perpendicular(u, frame), math.pi


def _hinge_rotation(u, v, axis):
    """Signed angle about the unit ``axis`` taking the projection of ``u`` onto the plane
    normal to it toward that of ``v`` (CCD step of a 1-DOF joint); ``None`` if either
    projection vanishes."""
    ax, ay, az = axis
    ku = u[0] * ax + u[1] * ay + u[2] * az
    kv = v[0] * ax + v[1] * ay + v[2] * az
    pu = (u[0] - ku * ax, u[1] - ku * ay, u[2] - ku * az)
    pv = (v[0] - kv * ax, v[1] - kv * ay, v[2] - kv * az)
    nu = math.sqrt(pu[0] * pu[0] + pu[1] * pu[1] + pu[2] * pu[2])
    nv = math.sqrt(pv[0] * pv[0] + pv[1] * pv[1] + pv[2] * pv[2])
    if nu <= _EPS or nv <= _EPS:
        return None
    cx = pu[1] * pv[2] - pu[2] * pv[1]
    cy = pu[2] * pv[0] - pu[0] * pv[2]
    cz = pu[0] * pv[1] - pu[1] * pv[0]
    angle = math.atan2(cx * ax + cy * ay + cz * az, pu[0] * pv[0] + pu[1] * pv[1] + pu[2] * pv[2])
    if angle < 0.0:
        return (-ax, -ay, -az), -angle
    return axis, angle


def _hinge_axis(limit):
    """The local axis of a 1-DOF limit (an ``axis`` 3-vector attribute, as ``HingeLimit`` has),
    else ``None``. Hinge joints then turn about that axis only, instead of taking a 3-D step
    that the limit would mostly discard."""
    axis = getattr(limit, "axis", None)
    if axis is None:
        return None
    axis = np.asarray(axis, dtype=np.float64)
    if axis.shape != (3,) or not np.all(np.isfinite(axis)) or not np.any(axis):
        return None
    return tuple(float(c) for c in quat.normalize(axis))


def _twist_range(limit):
    """``(lo, hi)`` twist range of a swing-twist ``JointLimit`` (``(0, 0)`` with ``fix_twist``),
    else ``None`` (no twist range, or another kind of limit)."""
    if not isinstance(limit, JointLimit):
        return None
    if limit.fix_twist:
        return (0.0, 0.0)
    return limit.twist


def _twist1(q):
    """Twist ``psi`` in (-pi, pi] of the swing-twist split (``projection._parts``), ``None`` at
    the pole."""
    w, _, y, _ = q
    if w < 0.0 or (w == 0.0 and y < 0.0):
        w, y = -w, -y
    if w * w + y * y < POLE_EPS2:
        return None
    psi = 2.0 * math.atan2(y, w)
    return psi + TAU if psi <= -math.pi else psi


def _turn_to_twist(q, a, psi):
    """Half-angle ``h`` of the rotation ``(cos h, sin h a)`` about the local unit axis ``a``
    after which ``(cos h, sin h a) q`` has twist ``psi``; ``None`` if no turn about ``a``
    changes the twist. The twist is ``2 atan2(y, w)`` and ``(w, y)`` of the product is linear
    in ``(cos h, sin h)``: ``(w, y) = cos h (q_w, q_y) + sin h (-a.q_v, q_w a_y + (a x q_v)_y)``,
    so ``y cos(psi/2) - w sin(psi/2) = 0`` is one equation ``cos h P + sin h Q = 0``."""
    qw, qx, qy, qz = q
    bw = -(a[0] * qx + a[1] * qy + a[2] * qz)
    by = qw * a[1] + a[2] * qx - a[0] * qz
    cp, sp = math.cos(0.5 * psi), math.sin(0.5 * psi)
    p, r = qy * cp - qw * sp, by * cp - bw * sp
    if abs(p) + abs(r) <= 1e-15:
        return None
    h = math.atan2(-p, r)  # h and h +- pi are the same rotation: take the smaller
    if h > 0.5 * math.pi:
        h -= math.pi
    elif h <= -0.5 * math.pi:
        h += math.pi
    return h


def _twist_into_range(limit, twist, frame, new, old, u):
    """The limit's correction of a CCD step ``old -> new`` of a joint with a twist range
    (``frame``: the joint's rest frame in the base frame, ``u``: joint -> effector before the
    step), without losing the step to the twist correction: when the twist of ``new`` is out of
    range, first turn it about the joint -> effector direction after the step — a turn that
    leaves the effector where the step put it — to the end of the twist range that needs the
    smaller turn; then the limit corrects what remains (the swing)."""
    psi = _twist1(new)
    lo, hi = twist
    if psi is None or lo - TWIST_TOL <= psi <= hi + TWIST_TOL or psi - TAU >= lo or psi + TAU <= hi:
        return _clamped(limit, new)
    # the effector's direction after the step: F (new old^-1) F^-1 u
    ex, ey, ez = _qrot(_qmul(_qmul(frame, _qmul(new, _qconj(old))), _qconj(frame)), u)
    ne = math.sqrt(ex * ex + ey * ey + ez * ez)
    if ne <= _EPS:
        return _clamped(limit, new)
    a = _qrot(_qconj(frame), (ex / ne, ey / ne, ez / ne))  # the axis in the joint's rest frame
    turns = [h for h in (_turn_to_twist(new, a, lo), _turn_to_twist(new, a, hi)) if h is not None]
    if not turns:
        return _clamped(limit, new)
    h = min(turns, key=abs)
    c, s = math.cos(h), math.sin(h)
    return _clamped(limit, _qmul((c, s * a[0], s * a[1], s * a[2]), new))


def _random_inside(limit, rng):
    """A seeded random local rotation inside ``limit`` (tuple): for a swing-twist
    ``JointLimit`` a swing point drawn on the (s, t) plane inside the region and a twist in
    range; for a hinge an angle in range about its axis; any other limit clamps a uniformly
    random rotation; ``None`` (a free joint) a uniformly random rotation."""
    if isinstance(limit, JointLimit):
        s0, s1, t0, t1 = limit.region.bounds
        for _ in range(64):
            s, t = rng.uniform(s0, s1), rng.uniform(t0, t1)
            if limit.region.contains1(s, t):
                break
        else:
            s = t = 0.0
        lo, hi = (0.0, 0.0) if limit.fix_twist else (limit.twist or (-math.pi, math.pi))
        q = tuple(float(c) for c in _compose(s, t, rng.uniform(lo, hi), MATH))
        return _clamped(limit, q)
    axis = _hinge_axis(limit)
    if axis is not None and hasattr(limit, "angle"):
        half = 0.5 * rng.uniform(*limit.angle)
        q = (math.cos(half), axis[0] * math.sin(half), axis[1] * math.sin(half), axis[2] * math.sin(half))
        return _clamped(limit, q)
    q = tuple(float(c) for c in quat.random_unit(1, rng)[0])
    return q if limit is None else _clamped(limit, q)


def _per_sweep_limit(limit):
    """The limit used inside the sweeps: a SIMPLE twin of a smooth-shape OPTIMAL ``JointLimit``
    (ELLIPSE, SUPERELLIPSE: numeric geodesic correction; also as a lock's ``inner``), else the
    limit itself."""
    if isinstance(limit, RotationLock) and limit.inner is not None:
        inner = _per_sweep_limit(limit.inner)
        if inner is limit.inner:
            return limit
        twin = copy.copy(limit)
        twin.inner = inner
        return twin
    if (isinstance(limit, JointLimit) and limit.correction == "OPTIMAL"
            and limit.shape in ("ELLIPSE", "SUPERELLIPSE")):
        twin = copy.copy(limit)
        twin.correction = "SIMPLE"
        return twin
    return limit


def _hinge_clamp1(limit, q):
    """``HingeLimit.clamp`` of one tuple quaternion on Python floats (same formulas: the angle
    ``2 atan2(q . axis, q_w)`` of the nearest rotation about the axis, moved to the nearer end
    of the range on the circle; ``q`` itself when it is on the axis within the range)."""
    ax, ay, az = (float(c) for c in limit.axis)
    w, x, y, z = q
    k = x * ax + y * ay + z * az
    off = math.sqrt((x - k * ax) ** 2 + (y - k * ay) ** 2 + (z - k * az) ** 2)  # sin of half the off-axis angle
    theta = 2.0 * math.atan2(k, w)
    theta = math.pi - (math.pi - theta) % TAU  # (-pi, pi]
    lo, hi = limit.angle
    width = hi - lo
    d = (theta - lo) % TAU
    inside = width >= TAU - _HINGE_TOL or d <= width + _HINGE_TOL or d >= TAU - _HINGE_TOL
    if inside and 2.0 * math.asin(min(off, 1.0)) <= _HINGE_TOL:
        return q
    if width >= TAU or d <= width:
        angle = lo + d
    else:
        angle = hi if d - width <= TAU - d else lo
    c, sn = math.cos(0.5 * angle), math.sin(0.5 * angle)
    out = (c, ax * sn, ay * sn, az * sn)
    if c * w + out[1] * x + out[2] * y + out[3] * z < 0.0:
        return (-out[0], -out[1], -out[2], -out[3])
    return out


LOCK_ROUNDS = 10    # limit, then lock, again while the locked rotation leaves the limit
LOCK_BISECTIONS = 24


HOLD_TOL = 1e-7     # a pose stored in float32 just inside a limit may be that far out


def _holds(limit, q):
    back = _clamped(limit, q)
    return max(abs(a - b) for a, b in zip(back, q)) <= HOLD_TOL


def _locked(lock, q):
    """A joint with locked rotation channels (``locks.RotationLock``): its limit (``inner``) and
    its lock applied in turn, up to ``LOCK_ROUNDS`` times, until the locked rotation is also inside
    the limit. Where they do not meet, the rotation the lock allows nearest to it on the way back
    to the bone's own rotation (``lock.current``) that is inside the limit, if that is inside."""
    r = q if lock.inner is None else _clamped(lock.inner, q)
    for _ in range(LOCK_ROUNDS):
        r = lock.lock1(r)
        if lock.inner is None or lock.fixed:
            return r
        back = _clamped(lock.inner, r)
        if max(abs(a - b) for a, b in zip(back, r)) <= 1e-12:
            return r
        r = back
    r = lock.lock1(r)
    home = lock.current
    if not _holds(lock.inner, home):
        return r        # the bone's own rotation is outside the limit too: the lock wins
    outside, inside = r, home
    for _ in range(LOCK_BISECTIONS):
        mid = lock.lock1(_nlerp(outside, inside))
        if _holds(lock.inner, mid):
            inside = mid
        else:
            outside = mid
    return inside


def _nlerp(a, b):
    if sum(x * y for x, y in zip(a, b)) < 0.0:
        b = tuple(-c for c in b)
    m = [x + y for x, y in zip(a, b)]
    norm = math.sqrt(sum(c * c for c in m))
    return tuple(c / norm for c in m) if norm > 1e-12 else a


def _clamped(limit, q):
    """``limit.clamp`` on one tuple quaternion, validated and renormalised (a ``JointLimit`` that
    already holds ``q`` is checked on Python floats and ``q`` returned as it is; a
    ``HingeLimit`` is clamped on Python floats; a lock see ``_locked``)."""
    if isinstance(limit, RotationLock):
        return _locked(limit, q)
    if isinstance(limit, JointLimit) and contains1(limit, q):
        return q
    if type(limit) is HingeLimit:
        return _hinge_clamp1(limit, q)
    if type(limit) is EulerLimit:
        return limit.clamp1(q)
    out = np.asarray(limit.clamp(np.array(q)), dtype=np.float64)
    if out.shape != (4,):
        raise ValueError(f"{type(limit).__name__}.clamp must return shape (4,) for one quaternion, got {out.shape}")
    w, x, y, z = out.tolist()
    norm = math.sqrt(w * w + x * x + y * y + z * z)
    if not (norm > _EPS and math.isfinite(norm)):
        raise ValueError(f"{type(limit).__name__}.clamp returned a non-finite or zero quaternion")
    return (w / norm, x / norm, y / norm, z / norm)


clamp_one = _clamped   # for callers outside the CCD (Limb IK keeps a bone's lock within its limit with it)
