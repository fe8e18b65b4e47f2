"""Locked rotation channels as a limit (``core.locks``): what Lock Rotation leaves a solver."""

import numpy as np
import pytest

from jointlimit_addon.core import ccd, quat
from jointlimit_addon.core.limits import JointLimit
from jointlimit_addon.core.locks import LockedComponents, LockedRotation

ORDERS = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")


def random_rotations(rng, n, amplitude=2.5):
    return quat.from_axis_angle(rng.normal(size=(n, 3)), rng.uniform(0.0, amplitude, n))


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("locked", [(True, False, False), (False, True, False), (False, False, True),
                                    (True, False, True), (False, True, True)])
def test_locked_angles_stay_and_free_ones_follow(order, locked):
    """The result keeps the bone's locked Euler angles and takes the others from the rotation
    asked for (of its two Euler triples, the one nearer the bone's)."""
    rng = np.random.default_rng(3)
    current = quat.from_euler(np.radians([20.0, -35.0, 50.0]), order)
    lock = LockedRotation(current, order, locked)
    q = quat.from_euler(np.radians([20.0, -35.0, 50.0]) + rng.uniform(-0.6, 0.6, (200, 3)), order)
    out = lock.clamp(q)
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), 1.0, atol=1e-12)
    got, asked, bone = quat.to_euler(out, order), quat.to_euler(q, order), quat.to_euler(current, order)
    mask = np.array(locked)
    np.testing.assert_allclose(got[:, mask], np.broadcast_to(bone[mask], got[:, mask].shape), atol=1e-9)
    np.testing.assert_allclose(got[:, ~mask], asked[:, ~mask], atol=1e-9)
    assert (np.sum(out * q, axis=-1) >= 0.0).all()     # the hemisphere of the rotation asked for
    np.testing.assert_allclose(lock.clamp(out), out, atol=1e-12)     # a projection


def test_every_axis_locked_holds_the_bone_and_no_lock_is_the_inner_limit():
    rng = np.random.default_rng(4)
    current = quat.normalize(np.array([0.9, 0.1, -0.3, 0.2]))
    q = random_rotations(rng, 50)
    held = LockedRotation(current, "XYZ", (True, True, True)).clamp(q)
    np.testing.assert_allclose(held, np.broadcast_to(current, q.shape), atol=1e-15)
    limit = JointLimit("RECT", swing_x=np.radians((-30, 30)), swing_z=np.radians((-20, 20)), twist=np.radians((-10, 10)))
    np.testing.assert_array_equal(LockedRotation(current, "XYZ", (False,) * 3, inner=limit).clamp(q), limit.clamp(q))


def test_ccd_keeps_locked_bones_and_the_rest_reaches():
    """A CCD solve with the first bone fully locked and the second with X locked: the first
    keeps its rotation, the second its X angle, and the other bones still reach the target."""
    chain = ccd.Chain.from_points([np.array([0.3 * (-1) ** i, float(i), 0.1 * (i % 3)]) for i in range(6)])
    start = quat.identity((5,))
    start[0] = quat.from_axis_angle([0.0, 0.0, 1.0], 0.3)
    limits = [LockedRotation(start[0], "XYZ", (True, True, True)),
              LockedRotation(start[1], "XYZ", (True, False, False)), None, None, None]
    target = ccd.forward(chain, start)[-1] + np.array([1.2, -0.8, -0.9])
    result = ccd.solve(chain, start, target, iterations=2000, limits=limits)
    np.testing.assert_allclose(result.local_quats[0], start[0], atol=1e-12)
    assert abs(quat.to_euler(result.local_quats[1], "XYZ")[0]) < 1e-9
    assert result.reached


@pytest.mark.parametrize("locked", [(True, False, False, False), (False, True, False, False), (False, False, True, True),
                                    (True, True, False, False)])
def test_locked_components_stay_and_the_result_is_the_nearest_unit_quaternion(locked):
    """4D locks: the locked components are the bone's; the free ones are the rotation's own,
    scaled onto the unit sphere (the nearest unit quaternion with those components)."""
    rng = np.random.default_rng(5)
    current = quat.normalize(np.array([0.8, 0.3, -0.4, 0.2]))
    lock = LockedComponents(current, locked)
    q = random_rotations(rng, 300)
    out = lock.clamp(q)
    mask = np.array(locked)
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(out[:, mask], np.broadcast_to(current[mask], out[:, mask].shape), atol=1e-15)
    assert (out[:, mask] == lock.current[mask]).all()
    signed = np.where((np.sum(q[:, mask] * lock.current[mask], axis=-1) < 0.0)[:, None], -q, q)
    free = signed[:, ~mask]
    cos = np.sum(out[:, ~mask] * free, axis=-1) / (np.linalg.norm(out[:, ~mask], axis=-1) * np.linalg.norm(free, axis=-1))
    np.testing.assert_allclose(cos, 1.0, atol=1e-12)     # the same direction
    np.testing.assert_allclose(lock.clamp(out), out, atol=1e-12)
    held = LockedComponents(current, (True,) * 4).clamp(q)
    np.testing.assert_allclose(held, np.broadcast_to(current, q.shape), atol=1e-15)
