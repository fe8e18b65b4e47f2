"""Quaternion helpers: algebraic identities and Euler round-trips (core, no bpy)."""

import numpy as np
import pytest

from jointlimit_addon.core import quat as Q


def test_euler_round_trip_every_order():
    qs = Q.random_unit(500, 1)
    for order in Q.EULER_ORDERS:
        e = Q.to_euler(qs, order)
        assert Q.angle_between(Q.from_euler(e, order), qs).max() < 1e-9


def test_euler_picks_smaller_triple_like_blender():
    # A rotation whose naive middle angle solution sums larger than its twin.
    q = Q.from_euler(np.array([np.pi - 0.1, 0.2, np.pi - 0.1]), "XYZ")
    e = Q.to_euler(q, "XYZ")
    assert np.abs(e).sum() < 2 * np.pi - 0.2
    assert Q.angle_between(Q.from_euler(e, "XYZ"), q) < 1e-12


def test_matrix_round_trip_and_rotate():
    qs = Q.random_unit(100, 2)
    assert np.allclose(Q.from_matrix(Q.to_matrix(qs)), Q.canonical(qs))
    v = np.random.default_rng(3).normal(size=(100, 3))
    assert np.allclose(Q.rotate(qs, v), np.einsum("nij,nj->ni", Q.to_matrix(qs), v))


def test_mul_composes_rotations():
    a, b = Q.random_unit(50, 4), Q.random_unit(50, 5)
    v = np.random.default_rng(6).normal(size=(50, 3))
    assert np.allclose(Q.rotate(Q.mul(a, b), v), Q.rotate(a, Q.rotate(b, v)))


def test_slerp_ends_and_midpoint():
    a, b = Q.random_unit(20, 7), Q.random_unit(20, 8)
    assert Q.angle_between(Q.slerp(a, b, 0.0), a).max() < 1e-12
    assert Q.angle_between(Q.slerp(a, b, 1.0), b).max() < 1e-12
    mid = Q.slerp(a, b, 0.5)
    assert np.allclose(Q.angle_between(a, mid), Q.angle_between(mid, b))


@pytest.mark.parametrize("bad", [[np.nan, 0, 0, 1], [0, 0, 0, 0], [1, 0, 0]])
def test_bad_quaternions_raise(bad):
    with pytest.raises(ValueError):
        Q.as_unit_quats(bad)


def test_bad_euler_order_raises():
    with pytest.raises(ValueError):
        Q.from_euler([0, 0, 0], "XXY")
