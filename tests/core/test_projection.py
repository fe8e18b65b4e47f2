"""Stereographic projection and swing-twist split in Blender axes [000 §2, §5-6, SPEC §1]."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointlimit_addon.core import quat
from jointlimit_addon.core.projection import (
    NP,
    _parts,
    _parts1,
    from_swing_twist,
    plane_to_sphere,
    sphere_to_plane,
    swing_point,
    swing_quat_from_point,
    swing_twist,
    wrap_angle,
)

Y = np.array([0.0, 1.0, 0.0])
POLE = np.array([0.0, -1.0, 0.0])

finite = st.floats(-1.0, 1.0, allow_nan=False)
quats = st.tuples(finite, finite, finite, finite).filter(lambda v: sum(c * c for c in v) > 1e-6)


def geodesic(a, b):
    return 2.0 * np.arctan2(np.linalg.norm(a - b, axis=-1), np.linalg.norm(a + b, axis=-1))


def same_rotation(a, b, tol=1e-12):
    return quat.angle_between(a, b) <= tol


@pytest.mark.parametrize("a", [-3.0, -1.2, -0.3, 0.0, 0.4, 1.5, 2.9])
def test_axis_rotations_map_to_the_axes(a):
    """Rotation by a about local Z gives (tan(a/2), 0); about X gives (0, tan(a/2)) [000 eq.3-5]."""
    s, t, psi = swing_twist(quat.from_axis_angle([0, 0, 1], a))
    assert s == pytest.approx(math.tan(a / 2), rel=1e-14, abs=1e-15) and t == pytest.approx(0, abs=1e-15)
    assert psi == pytest.approx(0, abs=1e-15)
    s, t, psi = swing_twist(quat.from_axis_angle([1, 0, 0], a))
    assert t == pytest.approx(math.tan(a / 2), rel=1e-14, abs=1e-15) and s == pytest.approx(0, abs=1e-15)


@pytest.mark.parametrize("a", [-3.1, -1.0, 0.0, 0.7, math.pi])
def test_twist_about_y(a):
    s, t, psi = swing_twist(quat.from_axis_angle([0, 1, 0], a))
    assert (s, t) == (pytest.approx(0, abs=1e-15), pytest.approx(0, abs=1e-15))
    assert psi == pytest.approx(a, abs=1e-14)


def test_projection_formulas_and_inverse():
    """SPEC §1: s = -P.x / (1 + P.y), t = P.z / (1 + P.y); inverse with d = s² + t² + 1."""
    rng = np.random.default_rng(1)
    P = rng.normal(size=(500, 3))
    P /= np.linalg.norm(P, axis=-1, keepdims=True)
    s, t = sphere_to_plane(P)
    np.testing.assert_allclose(s, -P[:, 0] / (1 + P[:, 1]), rtol=1e-9)
    np.testing.assert_allclose(t, P[:, 2] / (1 + P[:, 1]), rtol=1e-9)
    d = s * s + t * t + 1
    back = plane_to_sphere(s, t)
    np.testing.assert_allclose(back, np.stack((-2 * s / d, 2 / d - 1, 2 * t / d), -1), atol=1e-12)
    np.testing.assert_allclose(back, P, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(back, axis=-1), 1.0, atol=1e-15)


def test_projection_near_the_pole_keeps_direction_and_precision():
    """1e-9 rad from the pole: (s, t) ~ 2e9 in the right direction with full relative precision."""
    eps = 1e-9
    for ang in np.linspace(0, 2 * np.pi, 7):
        d = np.array([-np.cos(ang), 0.0, np.sin(ang)])  # -x <-> +s, +z <-> +t
        P = np.cos(eps) * POLE + np.sin(eps) * d
        s, t = sphere_to_plane(P)
        r = 1.0 / np.tan(eps / 2)  # exact radius of the image circle
        assert math.hypot(s, t) == pytest.approx(r, rel=1e-12)
        assert math.atan2(t, s) == pytest.approx(math.atan2(np.sin(ang), np.cos(ang)), abs=1e-12)
        np.testing.assert_allclose(plane_to_sphere(s, t), P, atol=1e-15)


def test_pole_is_at_infinity():
    s, t = sphere_to_plane(POLE)
    assert np.isinf(s) and np.isinf(t)
    with pytest.raises(ValueError):
        plane_to_sphere(np.inf, 0.0)
    with pytest.raises(ValueError):
        plane_to_sphere(np.nan, 0.0)


@settings(max_examples=200, deadline=None)
@given(quats)
def test_swing_twist_roundtrip_and_parts(v):
    q = quat.as_unit_quats(np.array(v))
    s, t, psi = swing_twist(q)
    P = quat.rotate(q, Y)
    if np.linalg.norm(P - POLE) < 1e-6:
        return  # the pole region has its own tests
    assert -math.pi < psi <= math.pi
    np.testing.assert_allclose(swing_point(q), P, atol=1e-14)
    np.testing.assert_allclose(plane_to_sphere(s, t), P, atol=1e-12)
    assert same_rotation(from_swing_twist(s, t, psi), q, 1e-11)
    # q_swing has no Y component; the twist is a rotation about local Y [000 eq.37-39 mapped].
    q_swing = from_swing_twist(s, t, 0.0)
    assert q_swing[2] == 0.0
    q_twist = quat.mul(quat.conjugate(q_swing), q)
    assert abs(q_twist[1]) < 1e-12 and abs(q_twist[3]) < 1e-12
    np.testing.assert_allclose(quat.rotate(q_swing, Y), P, atol=1e-12)
    assert same_rotation(swing_quat_from_point(P), q_swing, 1e-8)


@settings(max_examples=100, deadline=None)
@given(quats)
def test_twist_matches_the_paper_matrix_formula(v):
    """psi from [000 eq.28, 34] with paper axes (x, y, z) -> Blender (Y, Z, X)."""
    q = quat.as_unit_quats(np.array(v))
    B = quat.to_matrix(q)
    b = (1, 2, 0)

    def m(i, j):
        return B[b[i], b[j]]

    den = m(1, 0) ** 2 + m(2, 0) ** 2
    if den < 1e-6 or m(0, 0) < -0.999:
        return
    d0 = (1 - m(0, 0)) / den
    expected = math.atan2((m(2, 1) - m(1, 2)) * d0, (m(1, 1) + m(2, 2)) * d0)
    psi = float(swing_twist(q)[2])
    assert abs(wrap_angle(psi - expected)) < 1e-9


def test_pole_fallback_is_deterministic():
    """At the pole: psi = 0, q_swing = q (SPEC §1 fallback), s = t = inf."""
    for ang in (0.0, 0.3, 2.0, -1.0):
        q = np.array([0.0, math.cos(ang), 0.0, math.sin(ang)])
        s, t, psi = swing_twist(q)
        assert np.isinf(s) and np.isinf(t) and psi == 0.0
        np.testing.assert_allclose(swing_point(q), POLE, atol=1e-15)


def test_next_to_the_pole_roundtrips():
    """1e-9 rad from the pole the split is still exact."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        a = rng.uniform(-np.pi, np.pi)
        near = quat.from_axis_angle([math.cos(a), 0.0, math.sin(a)], np.pi - 1e-9)
        q = quat.mul(near, quat.from_axis_angle([0, 1, 0], rng.uniform(-3, 3)))
        s, t, psi = swing_twist(q)
        assert np.isfinite(s) and np.isfinite(t)
        assert same_rotation(from_swing_twist(s, t, psi), q, 1e-8)


def test_batch_shapes():
    q = quat.random_unit(24, 5).reshape(2, 3, 4, 4)
    s, t, psi = swing_twist(q)
    assert s.shape == t.shape == psi.shape == (2, 3, 4)
    assert from_swing_twist(s, t, psi).shape == (2, 3, 4, 4)
    assert swing_point(q).shape == (2, 3, 4, 3)


@pytest.mark.parametrize("bad", [[np.nan, 0, 0, 1], [0, 0, 0, 0], [1, 0, 0], [np.inf, 0, 0, 0]])
def test_bad_quaternions_raise(bad):
    with pytest.raises(ValueError):
        swing_twist(np.array(bad, dtype=float))
    with pytest.raises(ValueError):
        swing_point(np.array(bad, dtype=float))


def test_bad_inputs_raise():
    with pytest.raises(ValueError):
        from_swing_twist(np.nan, 0.0, 0.0)
    with pytest.raises(ValueError):
        sphere_to_plane([1.0, 0.0])
    with pytest.raises(ValueError):
        swing_quat_from_point(POLE)


def test_wrap_angle():
    np.testing.assert_allclose(wrap_angle(np.array([-np.pi, np.pi, 3 * np.pi, 0.5, -4.0])),
                               [np.pi, np.pi, np.pi, 0.5, 2 * np.pi - 4.0], atol=1e-15)


SPECIAL = [(0.0, 1.0, 0.0, 0.0), (0.0, 0.6, -0.8, 0.0), (0.0, 0.0, -1.0, 0.0), (-1.0, 0.0, 0.0, 0.0),
           (-0.5, 0.5, -0.5, 0.5), (1e-80, 0.6, -1e-80, 0.8), (-1e-160, 0.0, 1e-160, 1.0)]


@settings(max_examples=300, deadline=None)
@given(quats)
def test_scalar_parts_equal_the_vector_kernel(v):
    """``_parts1`` (the one-rotation path) equals ``_parts``: bit for bit except the twist
    (``math.atan2`` and ``np.arctan2`` may differ in the last bit, so a twist of -pi + 1 ulp may
    come out as pi), at the pole too."""
    for w, x, y, z in [v, *SPECIAL, (-1.0389166047449727e-16, 0.0, 0.75, 0.0)]:
        scalar = _parts1(w, x, y, z)
        vector = tuple(a.item() for a in _parts(*(np.array([c]) for c in (w, x, y, z)), NP))
        assert scalar[:5] == vector[:5] and scalar[6] == vector[6]
        assert abs(wrap_angle(scalar[5] - vector[5])) <= 1e-15 * max(1.0, abs(vector[5]))
