"""Locked rotation channels as a limit (``core.locks``): what Lock Rotation leaves a solver."""

import math

import numpy as np
import pytest

from jointlimit_addon.core import ccd, quat
from jointlimit_addon.core.ccd_steps import _clamped
from jointlimit_addon.core.limits import JointLimit
from jointlimit_addon.core.locks import ComponentLock, EulerLock, euler_to_quat1, locked_euler_branch1

ORDERS = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")


def random_rotations(rng, n, amplitude=2.5):
    return quat.from_axis_angle(rng.normal(size=(n, 3)), rng.uniform(0.0, amplitude, n))


@pytest.mark.parametrize("order", ORDERS)
def test_scalar_euler_conversions_match_the_array_ones(order):
    rng = np.random.default_rng(1)
    for q in random_rotations(rng, 100, 3.1):
        branch = locked_euler_branch1(tuple(q), order, (False,) * 3, (0.0, 0.0, 0.0))
        back = np.array(euler_to_quat1(branch, order))
        assert min(np.abs(back - q).max(), np.abs(back + q).max()) < 1e-12
        np.testing.assert_allclose(quat.from_euler(np.array(branch), order), euler_to_quat1(branch, order), atol=1e-14)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("locked", [(True, False, False), (False, True, False), (False, False, True),
                                    (True, False, True), (False, True, True)])
def test_locked_euler_angles_stay_and_free_ones_follow(order, locked):
    """The allowed rotation keeps the bone's locked Euler angles (also near gimbal lock, where the
    other triple would change them) and takes the free ones from the rotation asked for."""
    rng = np.random.default_rng(3)
    stored = (0.35, 1.42 if order[1] == "X" else -0.6, 0.9)      # the middle angle near 90° for some orders
    lock = EulerLock(euler_to_quat1(stored, order), order, locked, stored)
    for _ in range(200):
        q = euler_to_quat1(np.array(stored) + rng.uniform(-0.5, 0.5, 3), order)
        out = lock.lock1(q)
        assert abs(math.fsum(c * c for c in out) - 1.0) < 1e-12
        euler = locked_euler_branch1(out, order, locked, stored)
        for a, s, lk in zip(euler, stored, locked):
            if lk:
                assert a == pytest.approx(s, abs=1e-9)
        assert lock.lock1(out) == pytest.approx(out, abs=1e-12)     # a projection
        assert sum(a * b for a, b in zip(out, q)) >= 0.0


def test_a_fully_locked_bone_is_held_and_no_lock_changes_nothing():
    rng = np.random.default_rng(4)
    current = tuple(quat.normalize(np.array([0.9, 0.1, -0.3, 0.2])))
    held = EulerLock(current, "XYZ", (True,) * 3, (0.1, 0.2, 0.3))
    assert held.fixed and ComponentLock(current, (True,) * 4).fixed
    for q in random_rotations(rng, 20):
        assert held.lock1(tuple(q)) == pytest.approx(current, abs=1e-15)
        assert EulerLock(current, "XYZ", (False,) * 3, (0, 0, 0)).lock1(tuple(q)) == tuple(q)


@pytest.mark.parametrize("stored, locked", [((0.954, 0.301, 0.0, 0.0), (False, True, False, False)),
                                            ((1.0, 0.0, 0.0, 0.0), (False, True, True, False)),
                                            ((1.0, 0.0, 0.0, 0.0), (True, False, False, False)),
                                            ((2.0, 0.6, 0.0, 0.0), (False, True, False, True)),
                                            ((0.7, 0.1, -0.5, 0.2), (True, True, False, False))])
def test_locked_components_keep_their_stored_values(stored, locked):
    """4D locks (Blender's default): the quaternion's length is free, so the stored value of each
    locked component is kept exactly by scaling; the allowed rotations are those whose locked part
    points the stored one's way (none is lost with one non-zero component locked)."""
    rng = np.random.default_rng(5)
    lock = ComponentLock(stored, locked)
    mask = np.array(locked)
    s = np.array(stored)
    for q in random_rotations(rng, 300, 3.1):
        out = np.array(lock.lock1(tuple(q)))
        assert abs(np.linalg.norm(out) - 1.0) < 1e-12
        written = np.array(lock.stored_values(tuple(out)))
        assert (written[mask] == s[mask]).all()
        np.testing.assert_allclose(written / np.linalg.norm(written), out, atol=1e-9)
        if mask.sum() == 1 and s[mask][0] != 0.0 and abs(q[mask][0]) > 1e-3:
            assert min(np.abs(out - q).max(), np.abs(out + q).max()) < 1e-12     # nothing held back
        assert lock.lock1(tuple(out)) == pytest.approx(tuple(out), abs=1e-12)


def test_a_lock_and_a_limit_alternate_until_both_hold():
    """In the solver a joint's limit and its lock are applied in turn: where they agree the result
    is inside the limit with the lock kept."""
    rng = np.random.default_rng(6)
    limit = JointLimit("OVAL", swing_x=np.radians((-40, 40)), swing_z=np.radians((-30, 30)), twist=np.radians((-10, 10)))
    lock = EulerLock((1.0, 0.0, 0.0, 0.0), "XYZ", (False, True, False), (0.0, 0.0, 0.0), inner=limit)
    for q in random_rotations(rng, 300, 1.5):
        out = np.array(_clamped(lock, tuple(q)))
        assert quat.to_euler(out, "XYZ")[1] == pytest.approx(0.0, abs=1e-9)
        assert quat.angle_between(limit.clamp(out), out) < 1e-6


def test_ccd_keeps_locked_bones_and_the_rest_reaches():
    """A CCD solve with the first bone fully locked and the second with X locked: the first
    keeps its rotation, the second its X angle, and the other bones still reach the target."""
    chain = ccd.Chain.from_points([np.array([0.3 * (-1) ** i, float(i), 0.1 * (i % 3)]) for i in range(6)])
    start = quat.identity((5,))
    start[0] = quat.from_axis_angle([0.0, 0.0, 1.0], 0.3)
    limits = [EulerLock(start[0], "XYZ", (True, True, True), (0.0, 0.0, 0.3)),
              EulerLock(start[1], "XYZ", (True, False, False), (0.0, 0.0, 0.0)), None, None, None]
    target = ccd.forward(chain, start)[-1] + np.array([1.2, -0.8, -0.9])
    result = ccd.solve(chain, start, target, iterations=2000, limits=limits)
    np.testing.assert_allclose(result.local_quats[0], start[0], atol=1e-12)
    assert abs(quat.to_euler(result.local_quats[1], "XYZ")[0]) < 1e-9
    assert result.reached


@pytest.mark.parametrize("order", ["XYZ", "XZY", "ZXY"])
@pytest.mark.parametrize("locked", [(True, False, False), (False, True, False), (False, False, True)])
def test_a_locked_joint_stays_inside_its_limit_when_its_own_rotation_is(order, locked):
    """Where alternating the limit and the lock does not meet, the solver takes the rotation the
    lock allows on the way back to the bone's own rotation, inside the limit: a joint whose own
    rotation is inside both never leaves either."""
    rng = np.random.default_rng(7)
    limit = JointLimit("RECT", swing_x=np.radians((-35, 60)), swing_z=np.radians((-25, 30)), twist=np.radians((-15, 15)))
    for _ in range(20):
        own = tuple(limit.clamp(random_rotations(rng, 1, 1.2)[0]))
        stored = tuple(locked_euler_branch1(own, order, (False,) * 3, (0.0, 0.0, 0.0)))
        lock = EulerLock(own, order, locked, stored, inner=limit)
        for q in random_rotations(rng, 20, 3.0):
            out = np.array(_clamped(lock, tuple(q)))
            euler = locked_euler_branch1(tuple(out), order, locked, stored)
            assert all(a == pytest.approx(s, abs=1e-9) for a, s, lk in zip(euler, stored, locked) if lk)
            assert quat.angle_between(limit.clamp(out), out) < 1e-6
