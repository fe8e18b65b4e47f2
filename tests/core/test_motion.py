"""Tests for smooth joint motion [004 eq.5, §4.1] and minimum-jerk quintics."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointlimit_addon.core import motion, quat
from jointlimit_addon.core.motion import MIN_ACCELERATION, MIN_JERK, PROFILES
from jointlimit_addon.core.motion import VIA_OPTIMAL as OPTIMAL  # the exact minimiser (default: CLAMPED)

DEG = np.pi / 180.0


def random_keys(seed, K=6, C=3):
    rng = np.random.default_rng(seed)
    key_times = np.cumsum(rng.uniform(0.2, 1.5, K)) - 0.1
    key_values = rng.normal(scale=2.0, size=(K, C))
    return key_times, key_values


def one_sided(profile, key_times, key_values, t, derivative, eps=1e-7, **kw):
    """Left and right limits of a derivative at ``t`` plus a tolerance from the next derivative."""
    left = motion.evaluate(profile, key_times, key_values, t - eps, derivative=derivative, **kw)
    right = motion.evaluate(profile, key_times, key_values, t + eps, derivative=derivative, **kw)
    nxt = motion.evaluate(profile, key_times, key_values, np.concatenate((t - eps, t + eps)), derivative=derivative + 1, **kw)
    return left, right, 4.0 * eps * (np.abs(nxt).max() + 1.0)


# --------------------------------------------------------------------------------------------
# Rest to rest


@pytest.mark.parametrize("profile", PROFILES)
def test_two_keys_equal_rest_to_rest_closed_form(profile):
    t = np.linspace(-0.5, 2.5, 41)
    got = motion.evaluate(profile, [0.0, 2.0], [[0.3], [1.7]], t)[:, 0]
    want = motion.rest_to_rest(0.3, 1.7, 2.0, t, profile)
    np.testing.assert_allclose(got, want, atol=1e-14)


def test_rest_to_rest_cubic_is_eq5_and_not_the_quintic():
    T, theta0, alpha = 2.0, 0.5, 3.0
    t = np.array([0.5, 1.0, 1.5])
    # [004 eq.5] written out by hand.
    np.testing.assert_allclose(motion.rest_to_rest(theta0, theta0 + alpha, T, t), theta0 + alpha * t**2 * (3 * T - 2 * t) / T**3)
    tau = t / T
    np.testing.assert_allclose(
        motion.rest_to_rest(theta0, theta0 + alpha, T, t, MIN_JERK), theta0 + alpha * (10 * tau**3 - 15 * tau**4 + 6 * tau**5)
    )
    # Peak speeds differ: 1.5 α/T for the cubic, 1.875 α/T for the quintic.
    v = [motion.evaluate(p, [0, T], [0, alpha], [T / 2], derivative=1)[0] for p in PROFILES]
    np.testing.assert_allclose(v, [1.5 * alpha / T, 1.875 * alpha / T])


def test_profile_samples_documented_values():
    s = motion.profile_samples(0.0, 90.0, 1.0, 5)
    np.testing.assert_allclose(s["time"], [0, 0.25, 0.5, 0.75, 1])
    np.testing.assert_allclose(s[MIN_ACCELERATION][:, 0], [0, 14.0625, 45, 75.9375, 90])
    np.testing.assert_allclose(s[MIN_JERK][:, 0], [0, 9.31640625, 45, 80.68359375, 90])
    # Rest to rest: zero velocity at both ends; the quintic also starts with zero acceleration.
    for p in PROFILES:
        np.testing.assert_allclose(s[p][[0, -1], 1], 0.0, atol=1e-12)
    np.testing.assert_allclose(s[MIN_JERK][[0, -1], 2], 0.0, atol=1e-12)
    assert s[MIN_ACCELERATION][0, 2] == pytest.approx(540.0)


# --------------------------------------------------------------------------------------------
# One via point [004 §4.1]


def cubic_piece(p0, v0, p1, v1, h):
    """Monomial coefficients (in local time) of the cubic with these end values; test-local."""
    A = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [1, h, h**2, h**3], [0, 1, 2 * h, 3 * h**2]], dtype=float)
    return np.linalg.solve(A, [p0, v0, p1, v1])


def energy_of_b(b, alpha, beta, S, T, a, c, n=2001):
    """∫ (θ'')² over two cubic pieces joined at S with velocity b, by Simpson's rule."""
    total = 0.0
    for p0, v0, p1, v1, h in ((0.0, a, alpha, b, S), (alpha, b, alpha + beta, c, T - S)):
        k = cubic_piece(p0, v0, p1, v1, h)
        x = np.linspace(0.0, h, n)
        acc = 2 * k[2] + 6 * k[3] * x
        w = np.ones(n)
        w[1:-1:2], w[2:-1:2] = 4, 2
        total += h / (3 * (n - 1)) * np.sum(w * acc**2)
    return total


def brute_force_b(alpha, beta, S, T, a, c):
    """Minimise energy_of_b by a coarse scan, a fine scan, then a parabola through 3 samples."""
    centre = 0.0
    for width in (1e3, 10.0, 0.1):
        grid = centre + np.linspace(-width, width, 401)
        centre = grid[np.argmin([energy_of_b(b, alpha, beta, S, T, a, c) for b in grid])]
    step = 1e-3
    e_m, e_0, e_p = (energy_of_b(centre + d, alpha, beta, S, T, a, c) for d in (-step, 0.0, step))
    return centre + 0.5 * step * (e_m - e_p) / (e_m - 2 * e_0 + e_p)


@pytest.mark.parametrize(
    "alpha, beta, S, T, a, c",
    [(1.0, 1.0, 0.5, 1.0, 0.0, 0.0), (1.0, -1.5, 0.3, 1.0, 0.2, -0.7), (-2.0, 0.5, 1.7, 2.0, 1.0, 3.0), (0.4, 2.0, 0.2, 3.0, -1.0, 0.5)],
)
def test_via_velocity_closed_form_is_the_numeric_minimiser(alpha, beta, S, T, a, c):
    b = motion.via_point_velocity(alpha, beta, S, T, a, c)
    assert b == pytest.approx(brute_force_b(alpha, beta, S, T, a, c), abs=1e-6)
    # The general chain solver reduces to the closed form for one via point.
    v = motion.key_derivatives(MIN_ACCELERATION, [0.0, S, T], [0.0, alpha, alpha + beta], a, c, via=OPTIMAL)
    assert v[1, 0] == pytest.approx(b, rel=1e-13, abs=1e-13)
    np.testing.assert_allclose(v[[0, 2], 0], [a, c], atol=1e-15)


def test_seed_printed_formula_for_b_is_an_erratum():
    """[004 §4.1] prints 4T+S where the minimiser has 4T (and -S c for -2S c)."""

    def printed(alpha, beta, S, T, a, c):
        return (6 * (T - S) / (S * (4 * T + S)) * alpha + 6 * S / ((T - S) * (4 * T + S)) * beta
                - 2 * (T - S) / (4 * T + S) * a - S / (4 * T + S) * c)

    # Symmetric case: the via point of a rest-to-rest move of 2α in T is [004 eq.5] at T/2,
    # where the velocity is 1.5 · 2α / T.
    assert motion.via_point_velocity(1.0, 1.0, 0.5, 1.0) == pytest.approx(3.0)
    assert printed(1.0, 1.0, 0.5, 1.0, 0, 0) == pytest.approx(8.0 / 3.0)
    args = (1.0, -1.5, 0.3, 1.0, 0.2, -0.7)
    b_star = brute_force_b(*args)
    assert energy_of_b(printed(*args), *args) > energy_of_b(b_star, *args) + 1e-3


def test_via_point_cubic_pieces_as_printed_match_the_general_evaluator():
    theta0, alpha, beta, S, T, a, c = 0.25, 1.0, -1.5, 0.3, 1.2, 0.2, -0.7
    t = np.linspace(0.0, T, 97)
    seed = motion.via_point_cubic(theta0, alpha, beta, S, T, t, a, c)
    general = motion.evaluate(MIN_ACCELERATION, [0, S, T], [theta0, theta0 + alpha, theta0 + alpha + beta], t, a, c,
                              via=OPTIMAL)
    np.testing.assert_allclose(seed, general, atol=1e-12)
    assert motion.via_point_cubic(theta0, alpha, beta, S, T, S, a, c) == pytest.approx(theta0 + alpha, abs=1e-12)


def test_via_velocity_rejects_bad_times():
    with pytest.raises(ValueError):
        motion.via_point_velocity(1.0, 1.0, 1.0, 1.0)
    with pytest.raises(ValueError):
        motion.via_point_velocity(1.0, 1.0, 0.0, 1.0)


# --------------------------------------------------------------------------------------------
# Chains of keys


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_keys_hit_and_end_velocities(profile, seed):
    key_times, key_values = random_keys(seed)
    a = np.array([0.5, -1.0, 0.0])
    c = np.array([0.0, 2.0, -0.3])
    got = motion.evaluate(profile, key_times, key_values, key_times, a, c)
    np.testing.assert_allclose(got, key_values, atol=1e-12, rtol=0)
    v = motion.evaluate(profile, key_times, key_values, key_times[[0, -1]], a, c, derivative=1)
    np.testing.assert_allclose(v, [a, c], atol=1e-12)
    if profile == MIN_JERK:
        acc = motion.evaluate(profile, key_times, key_values, key_times[[0, -1]], a, c, derivative=2)
        np.testing.assert_allclose(acc, 0.0, atol=1e-9)


@pytest.mark.parametrize("profile, orders", [(MIN_ACCELERATION, (0, 1, 2)), (MIN_JERK, (0, 1, 2, 3, 4))])
def test_continuity_at_via_points(profile, orders):
    """Cubic: C2 (the minimiser of ∫θ''² is a cubic spline). Quintic: C4 (quintic spline)."""
    key_times, key_values = random_keys(7, K=7)
    inner = key_times[1:-1]
    for n in orders:
        left, right, tol = one_sided(profile, key_times, key_values, inner, n, start_velocity=0.3, via=OPTIMAL)
        np.testing.assert_allclose(left, right, atol=tol)
    # The next derivative does jump (a non-trivial check that one_sided can fail).
    left, right, tol = one_sided(profile, key_times, key_values, inner, orders[-1] + 1, start_velocity=0.3, via=OPTIMAL)
    assert np.abs(left - right).max() > 100 * tol


def numeric_energy(profile, key_times, key_values, derivs, n=4001):
    """∫ (θ^(r))² dt of the piecewise polynomial with the given key derivatives (Simpson)."""
    r = 2 if profile == MIN_ACCELERATION else 3
    total = 0.0
    for i in range(len(key_times) - 1):
        h = key_times[i + 1] - key_times[i]
        x = np.linspace(0.0, 1.0, n)
        ends = [key_values[i]] + [h**k * derivs[i][k - 1] for k in range(1, r)]
        ends += [key_values[i + 1]] + [h**k * derivs[i + 1][k - 1] for k in range(1, r)]
        basis = motion._basis(profile, x, r)
        f = basis @ np.array(ends) / h**r
        w = np.ones(n)
        w[1:-1:2], w[2:-1:2] = 4, 2
        total += h / (3 * (n - 1)) * np.sum(w * f**2)
    return total


@pytest.mark.parametrize("profile", PROFILES)
def test_via_derivatives_minimise_the_energy(profile):
    key_times, key_values = random_keys(3, K=5, C=1)
    key_values = key_values[:, 0]
    derivs = motion.key_derivatives(profile, key_times, key_values, 0.4, -0.2, via=OPTIMAL)
    best = numeric_energy(profile, key_times, key_values, derivs)
    rng = np.random.default_rng(11)
    for _ in range(20):
        trial = derivs.copy()
        trial[1:-1] += rng.normal(scale=0.05, size=trial[1:-1].shape)
        assert numeric_energy(profile, key_times, key_values, trial) > best
    # Stopping at every key (rest to rest per segment) costs more.
    stops = motion.key_derivatives(profile, key_times, key_values, 0.4, -0.2, use_via_points=False)
    np.testing.assert_allclose(stops[1:-1], 0.0)
    assert numeric_energy(profile, key_times, key_values, stops) > best


def test_quintic_one_via_point_matches_brute_force():
    """Minimise ∫ jerk² over (velocity, acceleration) at one via point by fitting the quadratic."""
    key_times = np.array([0.0, 0.4, 1.5])
    key_values = np.array([0.0, 1.0, -0.5])
    base = np.zeros((3, 2))
    base[0, 0], base[2, 0] = 0.3, -0.6

    def energy(v, acc):
        d = base.copy()
        d[1] = v, acc
        return numeric_energy(MIN_JERK, key_times, key_values, d)

    # Quadratic in (v, acc): gradient and Hessian by central differences are exact up to rounding.
    s = 0.5
    e0 = energy(0, 0)
    g = np.array([(energy(s, 0) - energy(-s, 0)) / (2 * s), (energy(0, s) - energy(0, -s)) / (2 * s)])
    hvv = (energy(s, 0) - 2 * e0 + energy(-s, 0)) / s**2
    haa = (energy(0, s) - 2 * e0 + energy(0, -s)) / s**2
    hva = (energy(s, s) - energy(s, -s) - energy(-s, s) + energy(-s, -s)) / (4 * s**2)
    want = np.linalg.solve([[hvv, hva], [hva, haa]], -g)
    got = motion.key_derivatives(MIN_JERK, key_times, key_values, 0.3, -0.6, via=OPTIMAL)[1]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.floats(0.05, 3.0), min_size=1, max_size=6),
    st.lists(st.floats(-10.0, 10.0), min_size=7, max_size=7),
    st.sampled_from(PROFILES),
)
def test_property_keys_hit_and_finite(gaps, values, profile):
    key_times = np.concatenate(([0.0], np.cumsum(gaps)))
    key_values = np.array(values[: key_times.size])
    got = motion.evaluate(profile, key_times, key_values, key_times)
    np.testing.assert_allclose(got, key_values, atol=1e-12 * (1 + np.abs(key_values).max()))
    dense = motion.evaluate(profile, key_times, key_values, np.linspace(-1, key_times[-1] + 1, 200), derivative=1)
    assert np.all(np.isfinite(dense))


def test_shapes_and_constant_outside():
    key_times, key_values = random_keys(4, K=4, C=2)
    times = np.array([[key_times[0] - 5.0, key_times[-1] + 5.0], [key_times[1], key_times[2]]])
    out = motion.evaluate(MIN_JERK, key_times, key_values, times)
    assert out.shape == (2, 2, 2)
    np.testing.assert_allclose(out[0], key_values[[0, -1]])
    assert motion.evaluate(MIN_JERK, key_times, key_values, times, derivative=1)[0].max() == 0.0
    assert motion.evaluate(MIN_JERK, key_times, key_values[:, 0], times).shape == (2, 2)
    single = motion.evaluate(MIN_ACCELERATION, [1.0], [[2.0, 3.0]], [0.0, 1.0, 5.0])
    np.testing.assert_allclose(single, [[2.0, 3.0]] * 3)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(key_times=[0.0, 1.0, 1.0], key_values=[0.0, 1.0, 2.0]),
        dict(key_times=[0.0, 2.0, 1.0], key_values=[0.0, 1.0, 2.0]),
        dict(key_times=[0.0, 1.0], key_values=[0.0, 1.0, 2.0]),
        dict(key_times=[[0.0, 1.0]], key_values=[0.0, 1.0]),
        dict(key_times=[0.0, 1.0], key_values=[0.0, np.nan]),
        dict(key_times=[0.0, 1.0], key_values=[[0.0, 1.0], [1.0, 2.0]], start_velocity=[1.0, 2.0, 3.0]),
        dict(key_times=[0.0, 1.0], key_values=[0.0, 1.0], times=[np.inf]),
        dict(key_times=[0.0, 1.0], key_values=[0.0, 1.0], derivative=-1),
        dict(key_times=[0.0, 1.0], key_values=[0.0, 1.0], profile="MINIMUM_JERK"),
    ],
)
def test_validation(kwargs):
    kwargs = dict(kwargs)
    profile = kwargs.pop("profile", MIN_ACCELERATION)
    times = kwargs.pop("times", [0.5])
    with pytest.raises(ValueError):
        motion.evaluate(profile, times=times, **kwargs)


# --------------------------------------------------------------------------------------------
# Channels and rotations


def path_length(q):
    return float(np.sum(quat.angle_between(q[1:], q[:-1])))


def test_euler_path_across_the_seam_takes_the_short_way():
    keys = quat.from_euler([[0, 0, 170 * DEG], [0, 0, -170 * DEG]], "XYZ")
    values = motion.rotations_to_channels(keys, motion.EULER, "XYZ")
    assert values[1, 2] == pytest.approx(190 * DEG)
    times = np.linspace(0.0, 1.0, 101)
    for profile in PROFILES:
        q = motion.interpolate_rotations([0.0, 1.0], keys, times, profile, motion.EULER, order="XYZ")
        assert path_length(q) == pytest.approx(20 * DEG, abs=1e-9)
        assert quat.angle_between(q[50], quat.from_euler([0, 0, np.pi], "XYZ")) < 1e-9
        assert quat.angle_between(q[[0, -1]], keys).max() < 1e-12


def test_euler_unwrap_switches_to_the_equivalent_triple():
    """Blender reports (-80, 100, -80) for (100, 80, 100); next to (80, 60, 80) keep the latter [004 §3]."""
    keys = quat.from_euler(np.array([[80, 60, 80], [100, 80, 100]]) * DEG, "XYZ")
    raw = quat.to_euler(keys, "XYZ")
    np.testing.assert_allclose(raw[1], np.array([-80, 100, -80]) * DEG, atol=1e-9)
    values = motion.rotations_to_channels(keys, motion.EULER, "XYZ")
    np.testing.assert_allclose(values, np.array([[80, 60, 80], [100, 80, 100]]) * DEG, atol=1e-9)
    times = np.linspace(0, 1, 201)
    q = motion.interpolate_rotations([0.0, 1.0], keys, times, MIN_JERK, motion.EULER, order="XYZ")
    direct = quat.angle_between(keys[0], keys[1])
    assert direct == pytest.approx(20.88 * DEG, abs=0.01 * DEG)
    assert path_length(q) < 1.05 * direct
    # Interpolating Blender's raw triples instead detours by more than twice as far.
    detour = quat.from_euler(motion.evaluate(MIN_JERK, [0.0, 1.0], raw, times), "XYZ")
    assert path_length(detour) > 2.5 * direct


@pytest.mark.parametrize("order", quat.EULER_ORDERS)
def test_euler_channels_round_trip_and_are_continuous(order):
    rng = np.random.default_rng(5)
    steps = quat.from_axis_angle(rng.normal(size=(40, 3)), np.full(40, 0.3))
    keys = np.empty((41, 4))
    keys[0] = quat.random_unit(1, rng)[0]
    for i in range(40):
        keys[i + 1] = quat.mul(steps[i], keys[i])
    values = motion.rotations_to_channels(keys, motion.EULER, order)
    back = motion.channels_to_rotations(values, motion.EULER, order)
    assert quat.angle_between(back, keys).max() < 1e-9
    # No jumps of whole turns or branch flips between neighbouring keys.
    assert np.abs(np.diff(values, axis=0)).max() < 2.0


def test_unwrap_euler_validation():
    with pytest.raises(ValueError):
        motion.unwrap_euler(np.zeros((3, 2)))
    with pytest.raises(ValueError):
        motion.unwrap_euler(np.zeros((3, 3)), "XXY")
    with pytest.raises(ValueError):
        motion.rotations_to_channels(quat.identity(2), "QUATERNION")


def test_interpolate_rotations_validation():
    keys = quat.identity(2)
    with pytest.raises(ValueError):
        motion.interpolate_rotations([0.0, 1.0], keys, [0.5], "LINEAR", motion.EULER)
    with pytest.raises(ValueError):
        motion.interpolate_rotations([1.0, 0.0], keys, [0.5], MIN_JERK, motion.EULER)
    with pytest.raises(ValueError):
        motion.interpolate_rotations([0.0, 1.0, 2.0], keys, [0.5], MIN_JERK, motion.EULER)
    with pytest.raises(ValueError):
        motion.interpolate_rotations([0.0, 1.0], np.zeros((2, 4)), [0.5], MIN_JERK, motion.EULER)


class ConeLimit:
    """Test-local limit: the bone axis (+Y) within ``max_angle`` of rest; twist untouched."""

    def __init__(self, max_angle):
        self.max_angle = max_angle

    def swing_angle(self, q):
        p = quat.rotate(q, [0.0, 1.0, 0.0])
        return np.arccos(np.clip(p[..., 1], -1.0, 1.0)), p

    def contains(self, q):
        return self.swing_angle(q)[0] <= self.max_angle + 1e-12

    def clamp(self, q):
        q = quat.normalize(q)
        angle, p = self.swing_angle(q)
        axis = np.cross([0.0, 1.0, 0.0], p)
        norm = np.linalg.norm(axis, axis=-1, keepdims=True)
        axis = np.where(norm > 1e-12, axis / np.where(norm > 1e-12, norm, 1.0), [1.0, 0.0, 0.0])
        swing = quat.from_axis_angle(axis, angle)
        twist = quat.mul(quat.conjugate(swing), q)
        clamped = quat.mul(quat.from_axis_angle(axis, np.minimum(angle, self.max_angle)), twist)
        return np.where((angle > self.max_angle)[..., None], clamped, q)


def make_limits():
    """A test-local cone and the project's real Euler limit (core/euler_limits.py)."""
    from jointlimit_addon.core.euler_limits import EulerLimit

    euler = EulerLimit(x=(-60 * DEG, 60 * DEG), y=(-45 * DEG, 45 * DEG), z=(-60 * DEG, 60 * DEG), order="ZXY")
    return [ConeLimit(60 * DEG), euler]


def limit_test_keys(limit):
    rng = np.random.default_rng(9)
    if isinstance(limit, ConeLimit):
        # Keys inside the cone, but the overshooting curve between them leaves it unclamped.
        axes = np.stack((rng.normal(size=6), np.zeros(6), rng.normal(size=6)), axis=-1)
        swings = quat.from_axis_angle(axes, np.array([55, -58, 50, -59, 57, 0]) * DEG)
        twists = quat.from_axis_angle([0.0, 1.0, 0.0], rng.uniform(-1, 1, 6))
        return quat.mul(swings, twists)
    corners = np.array([[58, 40, -55], [-57, -43, 58], [55, 42, 59], [-59, -40, -57], [50, 44, 55], [0, 0, 0]]) * DEG
    return quat.from_euler(corners, "ZXY")


@pytest.mark.parametrize("limit_index", [0, 1], ids=["cone", "EulerLimit"])
@pytest.mark.parametrize("channels", motion.CHANNELS)
@pytest.mark.parametrize("profile", PROFILES)
def test_generated_rotations_stay_within_the_limit(channels, profile, limit_index):
    limit = make_limits()[limit_index]
    keys = limit_test_keys(limit)
    assert np.all(limit.contains(keys))
    key_times = np.array([0.0, 0.3, 0.5, 1.1, 1.2, 2.0])
    times = np.linspace(-0.1, 2.1, 400)
    free = motion.interpolate_rotations(key_times, keys, times, profile, channels, order="ZXY", via=OPTIMAL)
    assert not np.all(limit.contains(free))
    q = motion.interpolate_rotations(key_times, keys, times, profile, channels, limit=limit, order="ZXY", via=OPTIMAL)
    assert q.shape == (400, 4)
    assert np.all(np.isfinite(q))
    assert np.all(limit.contains(q))
    # Keys are still hit, and the quaternion signs are continuous for F-curves.
    at_keys = motion.interpolate_rotations(key_times, keys, key_times, profile, channels, limit=limit, order="ZXY")
    assert quat.angle_between(at_keys, keys).max() < 1e-9
    assert np.all(np.sum(q[1:] * q[:-1], axis=-1) > 0)


def test_swing_twist_psi_across_pi_takes_the_short_way():
    keys = quat.from_axis_angle([0.0, 1.0, 0.0], np.array([170.0, -170.0]) * DEG)
    values = motion.rotations_to_channels(keys, motion.SWING_TWIST)
    np.testing.assert_allclose(values[:, :2], 0.0, atol=1e-12)
    assert values[1, 2] - values[0, 2] == pytest.approx(20 * DEG)
    q = motion.interpolate_rotations([0.0, 1.0], keys, np.linspace(0, 1, 101), MIN_ACCELERATION, motion.SWING_TWIST)
    assert path_length(q) == pytest.approx(20 * DEG, abs=1e-9)
    assert quat.angle_between(q[50], quat.from_axis_angle([0.0, 1.0, 0.0], np.pi)) < 1e-9


def test_swing_twist_channels_round_trip():
    rng = np.random.default_rng(2)
    keys = quat.random_unit(50, rng)
    p = quat.rotate(keys, [0.0, 1.0, 0.0])
    keys = keys[p[:, 1] > -0.9]  # away from the swing pole
    values = motion.rotations_to_channels(keys, motion.SWING_TWIST)
    back = motion.channels_to_rotations(values, motion.SWING_TWIST)
    assert quat.angle_between(back, keys).max() < 1e-9
    assert np.abs(np.diff(values[:, 2])).max() <= np.pi + 1e-12


def test_key_pairs_over_the_swing_pole_are_named():
    """Keys 0°, 171.9°, 343.8° about X: the second pair's shortest rotation passes the swing pole,
    which SWING_TWIST channels cannot; keys that only come near it, or turn about the bone's own
    axis (twist), are not named."""
    from jointlimit_addon.core import motion, quat

    def about(axis, degrees):
        return quat.from_axis_angle(axis, np.radians(degrees))

    assert motion.swing_pole_segments(about([1, 0, 0], [0, 171.9, 343.8])) == [1]
    assert motion.swing_pole_segments(about([0, 0, 1], [-100, 100])) == [0]    # the short way is over the pole
    assert motion.swing_pole_segments(about([1, 0, 0], [0, 175, 178])) == []
    assert motion.swing_pole_segments(about([0, 1, 0], [0, 170, 340])) == []
    assert motion.swing_pole_segments(about([1, 0, 0], [0])) == []
