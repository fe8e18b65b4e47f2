"""Locked rotation channels as a limit: the rotations a bone's Lock Rotation leaves free.

Blender's transform tools keep a locked rotation channel at its stored value:

* in an Euler mode the locked Euler angles (the bone's order);
* in quaternion and axis-angle modes without 4D locks the locked angles of the rotation's XYZ
  Euler angles (``EulerLock``);
* with 4D locks (a new bone's default) the locked quaternion components, the quaternion's length
  left free (``ComponentLock``): the rotations it can hold are those whose locked part points
  the way of the stored one (any rotation of the right hemisphere when one component is locked at
  a non-zero value; none with a locked zero component in it).

A tool that solves a pose (CCD IK) treats a lock like a joint limit: after each step the rotation
goes to the nearest one the lock allows (``lock1``, on Python floats; ``clamp`` on arrays).
``inner`` is the joint's own limit, which the solver applies first (``ccd_steps._clamped``).
"""

import math

import numpy as np

from . import quat

_AXES = "XYZ"


def _axis_quat1(axis, angle):
    c, s = math.cos(0.5 * angle), math.sin(0.5 * angle)
    return (c, s, 0.0, 0.0) if axis == 0 else (c, 0.0, s, 0.0) if axis == 1 else (c, 0.0, 0.0, s)


def euler_to_quat1(euler, order):
    """Quaternion of Euler angles ``(x, y, z)`` in Blender's ``order`` (first letter applied first)."""
    q = (1.0, 0.0, 0.0, 0.0)
    for letter in order:
        axis = _AXES.index(letter)
        q = quat.mul1(_axis_quat1(axis, euler[axis]), q)
    return q


def euler_branches1(q, order):
    """The two Euler triples ``(x, y, z)`` of the unit quaternion ``q`` in ``order`` (the second
    is ``(a + pi, pi - b, c + pi)`` on the order's axes; both wrapped into (-pi, pi])."""
    w, x, y, z = q
    m = ((1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)),
         (2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)),
         (2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)))
    i, j, k = (_AXES.index(c) for c in order)
    parity = 1.0 if (j - i) % 3 == 1 else -1.0
    ai = math.atan2(parity * m[k][j], m[k][k])
    aj = math.atan2(-parity * m[k][i], math.hypot(m[k][j], m[k][k]))
    ak = math.atan2(parity * m[j][i], m[i][i])
    if math.hypot(m[i][i], m[j][i]) < 1e-12:    # gimbal lock: all of it on the first axis
        ai, ak = math.atan2(-parity * m[j][k], m[j][j]), 0.0
    first, second = [0.0] * 3, [0.0] * 3
    first[i], first[j], first[k] = ai, aj, ak
    second[i], second[j], second[k] = _wrap1(ai + math.pi), _wrap1(math.pi - aj), _wrap1(ak + math.pi)
    return first, second


def _wrap1(a):
    return a - 2.0 * math.pi * round(a / (2.0 * math.pi))


_TAU = 2.0 * math.pi


def locked_euler_branch1(q, order, locked, stored):
    """Euler angles of ``q`` in ``order``: of its two triples (shifted by whole turns toward the
    ``stored`` angles) the one whose ``locked`` angles are nearest the stored ones, then the
    others nearest."""
    best, best_key = None, None
    for branch in euler_branches1(q, order):
        cand = [a + _TAU * round((r - a) / _TAU) for a, r in zip(branch, stored)]
        lock_cost = cost = 0.0
        for c, r, lk in zip(cand, stored, locked):
            d = abs(c - r)
            cost += d
            if lk:
                lock_cost += d
        if best is None or (lock_cost, cost) < best_key:
            best, best_key = cand, (lock_cost, cost)
    return best


def _hemisphere(out, q):
    return out if sum(a * b for a, b in zip(out, q)) >= 0.0 else tuple(-c for c in out)


class RotationLock:
    """Base of the locks: ``inner`` is the joint's limit (or ``None``), ``fixed`` a lock that
    holds the bone whole, ``current`` the bone's rotation (unit)."""

    inner = None
    current = (1.0, 0.0, 0.0, 0.0)
    locked = ()

    @property
    def fixed(self):
        return all(self.locked)

    def lock1(self, q):
        """The rotation nearest ``q`` (a unit tuple) that the lock allows."""
        if self.fixed:
            return self.current
        if not any(self.locked):
            return tuple(q)
        return self._partly_locked(q)

    def _partly_locked(self, q):
        raise NotImplementedError

    def clamp(self, q):
        """``lock1`` after ``inner`` on arrays ``(..., 4)`` (the solver alternates the two, see
        ``ccd_steps._clamped``; this is one round)."""
        q = np.asarray(q, dtype=np.float64)
        if self.inner is not None:
            q = np.asarray(self.inner.clamp(q), dtype=np.float64)
        flat = q.reshape(-1, 4)
        out = np.array([self.lock1(tuple(row)) for row in flat.tolist()]).reshape(q.shape)
        return out


class EulerLock(RotationLock):
    """Locked Euler angles (``locked``: X, Y, Z) of the bone's ``stored`` angles in ``order``:
    a bone in an Euler mode, or a quaternion or axis-angle bone without 4D locks (order XYZ)."""

    def __init__(self, current, order, locked, stored, inner=None):
        self.current = tuple(float(c) for c in quat.as_unit_quats(np.asarray(current, dtype=np.float64)))
        self.order = quat.check_euler_order(order)
        self.locked = tuple(bool(v) for v in locked)
        self.stored = tuple(float(v) for v in stored)
        self.inner = inner

    def _partly_locked(self, q):
        euler = locked_euler_branch1(q, self.order, self.locked, self.stored)
        euler = [s if lk else a for a, s, lk in zip(euler, self.stored, self.locked)]
        return _hemisphere(euler_to_quat1(euler, self.order), q)


class ComponentLock(RotationLock):
    """4D locks on a quaternion: the ``locked`` components (W, X, Y, Z) keep their ``stored``
    values and the quaternion's length is free, so the rotations allowed are those whose locked
    part is a positive multiple of the stored one (or zero when that is zero)."""

    def __init__(self, stored, locked, inner=None):
        stored = tuple(float(v) for v in stored)
        self.stored = stored
        self.locked = tuple(bool(v) for v in locked)
        self.current = tuple(float(c) for c in quat.as_unit_quats(np.asarray(stored, dtype=np.float64)))
        self.inner = inner
        self.size = math.sqrt(sum(v * v for v, lk in zip(stored, self.locked) if lk))

    def _partly_locked(self, q):
        if self.size > 0.0:
            along = sum(a * s for a, s, lk in zip(q, self.stored, self.locked) if lk) / self.size
            if along < 0.0:
                q, along = tuple(-c for c in q), -along
            r = [along * s / self.size if lk else a for a, s, lk in zip(q, self.stored, self.locked)]
        else:
            r = [0.0 if lk else a for a, lk in zip(q, self.locked)]
        norm = math.sqrt(sum(c * c for c in r))
        if norm < 1e-9 or (self.size > 0.0 and along <= 1e-9):
            return self.current       # no allowed rotation near: stay
        return tuple(c / norm for c in r)

    def free_at_rest(self):
        """The rotation the lock allows with its free components at 0 (``None`` when only zero
        components are locked: no rotation is made of them alone)."""
        if self.size <= 0.0:
            return (1.0, 0.0, 0.0, 0.0) if not self.locked[0] else None
        return tuple(s / self.size if lk else 0.0 for s, lk in zip(self.stored, self.locked))

    def stored_values(self, q):
        """The quaternion to store for the allowed rotation ``q``: scaled so that its locked
        components are exactly the stored ones."""
        if self.fixed:
            return self.stored
        if self.size > 0.0:
            along = sum(a * s for a, s, lk in zip(q, self.stored, self.locked) if lk) / self.size
            scale = self.size / along if along > 1e-12 else 1.0
        else:
            scale = 1.0
        return tuple(s if lk else a * scale for a, s, lk in zip(q, self.stored, self.locked))
