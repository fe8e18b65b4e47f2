"""Locked rotation channels as a limit: the rotations a bone's Lock Rotation leaves free.

Blender's transform tools keep a locked rotation channel at its value. In an Euler mode the
locked channels are Euler angles in the bone's order; in quaternion and axis-angle modes without
4D locks Blender applies the X, Y, Z locks to the XYZ Euler angles of the rotation; with 4D locks
(a new bone's default) to the quaternion's components W, X, Y, Z. A tool that solves a pose (CCD
IK) treats the locks like a joint limit: after each step the rotation goes to the nearest one
whose locked angles (``LockedRotation``) or components (``LockedComponents``) are the bone's.
"""

import math

import numpy as np

from . import quat


def _euler_near(q, order, reference):
    """Euler angles ``(..., 3)`` of ``q`` in ``order``, of the two equivalent triples the one
    nearer ``reference`` ``(3,)``, each angle shifted by whole turns toward it."""
    first = quat.to_euler(q, order)
    i, j, k = ("XYZ".index(c) for c in order)
    second = first.copy()
    second[..., i] += np.pi
    second[..., j] = np.pi - first[..., j]
    second[..., k] += np.pi
    best, best_cost = None, None
    for cand in (first, second):
        cand = cand + 2.0 * np.pi * np.round((reference - cand) / (2.0 * np.pi))
        cost = np.abs(cand - reference).sum(axis=-1)
        if best is None:
            best, best_cost = cand, cost
        else:
            nearer = cost < best_cost
            best = np.where(nearer[..., None], cand, best)
            best_cost = np.where(nearer, cost, best_cost)
    return best


class LockedRotation:
    """The rotations with the ``locked`` Euler angles (X, Y, Z) of ``current`` (a unit
    quaternion), in the Euler ``order``; ``inner``: a joint limit applied first (or ``None``).
    Every axis locked: the bone keeps ``current``."""

    def __init__(self, current, order, locked, inner=None):
        self.current = quat.as_unit_quats(np.asarray(current, dtype=np.float64), "current rotation")
        self.order = quat.check_euler_order(order)
        self.locked = np.array(locked, dtype=bool).reshape(3)
        self.inner = inner
        self.euler = quat.to_euler(self.current, order)

    @property
    def fixed(self):
        return bool(self.locked.all())

    def clamp(self, q):
        """``q`` (..., 4) with its locked Euler angles put back to the bone's (after ``inner``)."""
        q = np.asarray(q, dtype=np.float64)
        if self.fixed:
            return np.broadcast_to(self.current, q.shape).copy()
        if self.inner is not None:
            q = np.asarray(self.inner.clamp(q), dtype=np.float64)
        if not self.locked.any():
            return q
        euler = _euler_near(q, self.order, self.euler)
        euler[..., self.locked] = self.euler[self.locked]
        out = quat.from_euler(euler, self.order)
        return np.where((np.sum(out * q, axis=-1) < 0.0)[..., None], -out, out)     # q's hemisphere


class LockedComponents:
    """The unit quaternions with the ``locked`` components (W, X, Y, Z) of ``current``: the
    nearest to a rotation keeps those and scales its free components onto the unit sphere
    (``current`` where the locked ones leave no room); ``inner``: a joint limit applied first."""

    def __init__(self, current, locked, inner=None):
        self.current = quat.as_unit_quats(np.asarray(current, dtype=np.float64), "current rotation")
        self.locked = np.array(locked, dtype=bool).reshape(4)
        self.inner = inner
        self.room = 1.0 - float(np.sum(self.current[self.locked] ** 2))    # |free part|² left

    @property
    def fixed(self):
        return bool(self.locked.all()) or self.room <= 1e-12

    def _sign_dot(self, q):
        """Which of ``q`` and ``-q`` is meant: the one whose locked components are nearer the
        bone's (the whole quaternion where those are zero)."""
        locked = np.sum(q[..., self.locked] * self.current[self.locked], axis=-1)
        return np.where(locked != 0.0, locked, np.sum(q * self.current, axis=-1))

    def clamp(self, q):
        q = np.asarray(q, dtype=np.float64)
        if self.fixed:
            return np.broadcast_to(self.current, q.shape).copy()
        if self.inner is not None:
            q = np.asarray(self.inner.clamp(q), dtype=np.float64)
        if not self.locked.any():
            return q
        q = np.where((self._sign_dot(q) < 0.0)[..., None], -q, q)      # the sign nearer the locked values
        free = q[..., ~self.locked]
        size = np.linalg.norm(free, axis=-1, keepdims=True)
        keep = np.broadcast_to(self.current[~self.locked], free.shape)
        free = np.where(size > 1e-12, free / np.maximum(size, 1e-300), keep / math.sqrt(self.room))
        out = np.empty(q.shape)
        out[..., self.locked] = self.current[self.locked]
        out[..., ~self.locked] = free * math.sqrt(self.room)
        return out
