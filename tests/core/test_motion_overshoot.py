"""Smooth motion that never overshoots the neighbouring keys (issue 16 item 8): the clamped
via-point velocities, the exact optimum kept as an option, the overshoot measure, and keys too
close together."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointlimit_addon.core import motion, quat
from jointlimit_addon.core.motion import MIN_ACCELERATION, MIN_JERK, PROFILES

DEG = np.pi / 180.0
# The reported keys: frames 1, 2 and 100 at 0, 14.3 and 28.6 degrees about X.
FRAMES = np.array([1.0, 2.0, 100.0])
ANGLES = np.array([0.0, 14.3, 28.6]) * DEG


def reported_quats():
    return quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), ANGLES)


def about_x(q):
    """Signed angle about X of rotations about X."""
    return 2.0 * np.arctan2(q[..., 1], q[..., 0])


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("channels", motion.CHANNELS)
def test_reported_keys_stay_between_the_keys_by_default(profile, channels):
    times = np.linspace(1.0, 100.0, 991)
    q = motion.interpolate_rotations(FRAMES, reported_quats(), times, profile, channels)
    angle = about_x(q) / DEG
    assert angle.min() >= -1e-9 and angle.max() <= 28.6 + 1e-9
    assert motion.overshoot_degrees(FRAMES, reported_quats(), times, profile, channels) < 1e-9


@pytest.mark.parametrize("profile,at_least", [(MIN_ACCELERATION, 120.0), (MIN_JERK, 150.0)])
def test_exact_optimum_is_kept_as_an_option_and_its_overshoot_measured(profile, at_least):
    """The exact minimiser through the unevenly spaced via point swings far past the keys
    (141° and 178° as reported); ``via="OPTIMAL"`` still gives it, and the measure sees it."""
    times = np.linspace(1.0, 100.0, 991)
    values = ANGLES[:, None]
    curve = motion.evaluate(profile, FRAMES, values, times, via=motion.VIA_OPTIMAL)[:, 0] / DEG
    assert curve.max() > at_least
    over = motion.overshoot_degrees(FRAMES, reported_quats(), times, profile, "EULER", via=motion.VIA_OPTIMAL)
    assert over == pytest.approx(curve.max() - 28.6, rel=1e-6)
    assert motion.VIA_CLAMPED == motion.VIA_MODES[0]   # the default comes first


gaps = st.lists(st.one_of(st.floats(0.01, 2.0), st.floats(2.0, 200.0)), min_size=2, max_size=7)
values = st.lists(st.floats(-5.0, 5.0), min_size=8, max_size=8)


@given(gaps=gaps, vals=values, profile=st.sampled_from(PROFILES), ends=st.sampled_from([(0.0, 0.0), (0.3, -0.7)]),
       repeat=st.booleans())
@settings(max_examples=80, deadline=None)
def test_clamped_segments_stay_within_their_keys_and_are_c1(gaps, vals, profile, ends, repeat):
    key_times = np.concatenate(([0.0], np.cumsum(gaps)))
    key_values = np.array(vals[: len(key_times)])
    if repeat:
        key_values[1] = key_values[2]   # a flat segment must stay flat
    a, c = ends
    h = np.diff(key_times)
    tau = np.linspace(0.0, 1.0, 201)
    t = (key_times[:-1, None] + h[:, None] * tau[None, :]).ravel()
    curve = motion.evaluate(profile, key_times, key_values, t, start_velocity=a, end_velocity=c).reshape(len(h), -1)
    lo = np.minimum(key_values[:-1], key_values[1:])[:, None]
    hi = np.maximum(key_values[:-1], key_values[1:])[:, None]
    tol = 1e-9 * (1.0 + np.abs(key_values).max())
    inner = np.ones(len(h), dtype=bool)
    if a != 0.0:
        inner[0] = False      # a given end velocity may leave the first segment's range
    if c != 0.0:
        inner[-1] = False
    assert np.all(curve[inner] >= lo[inner] - tol) and np.all(curve[inner] <= hi[inner] + tol)
    # keys hit, C1 at every via key, the given end velocities
    np.testing.assert_allclose(motion.evaluate(profile, key_times, key_values, key_times), key_values, atol=1e-12)
    eps = 1e-7 * h.min()
    vl = motion.evaluate(profile, key_times, key_values, key_times[1:-1] - eps, start_velocity=a, end_velocity=c, derivative=1)
    vr = motion.evaluate(profile, key_times, key_values, key_times[1:-1] + eps, start_velocity=a, end_velocity=c, derivative=1)
    acc = motion.evaluate(profile, key_times, key_values, np.concatenate((key_times[1:-1] - eps, key_times[1:-1] + eps)),
                          start_velocity=a, end_velocity=c, derivative=2)
    np.testing.assert_allclose(vl, vr, atol=4.0 * eps * (np.abs(acc).max() + 1.0) + 1e-9 * np.abs(vl).max())
    v = motion.key_derivatives(profile, key_times, key_values, a, c)[:, 0]
    np.testing.assert_allclose(v[[0, -1]], [a, c], atol=1e-12)


def test_clamped_equals_the_optimum_where_that_does_not_overshoot():
    """Evenly spaced keys on a straight ramp: the optimum is already within the keys and is kept."""
    key_times = np.arange(5.0)
    key_values = 0.4 * key_times
    for profile in PROFILES:
        t = np.linspace(0.0, 4.0, 81)
        got = motion.evaluate(profile, key_times, key_values, t)
        want = motion.evaluate(profile, key_times, key_values, t, via=motion.VIA_OPTIMAL)
        np.testing.assert_allclose(got, want, atol=1e-14)


def test_clamped_turns_at_a_peak_key():
    """At a key above both neighbours the motion stops there (velocity 0), like Auto Clamped."""
    v = motion.key_derivatives(MIN_ACCELERATION, [0.0, 1.0, 5.0], [0.0, 1.0, 0.2])
    assert v[1, 0] == 0.0


@pytest.mark.parametrize("gap", [1e-100, 1e-12, 0.5 * motion.MIN_KEY_GAP])
def test_keys_closer_than_the_frame_tolerance_are_refused(gap):
    key_times = [1.0, 1.0 + gap, 10.0] if gap > 1e-15 else [0.0, gap, 10.0]
    with pytest.raises(ValueError, match="closer than"):
        motion.evaluate(MIN_ACCELERATION, key_times, [0.0, 0.1, 0.2], [0.5, 1.0])
    with pytest.raises(ValueError, match="closer than"):
        motion.interpolate_rotations(key_times, reported_quats(), [0.5, 1.0], MIN_JERK, "SWING_TWIST")


def test_keys_at_the_frame_tolerance_give_finite_motion():
    key_times = np.array([0.0, motion.MIN_KEY_GAP, 10.0])
    for profile in PROFILES:
        for via in motion.VIA_MODES:
            out = motion.evaluate(profile, key_times, [0.0, 0.1, 0.2], np.linspace(0, 10, 101), via=via)
            assert np.all(np.isfinite(out))


def test_bad_via_mode():
    with pytest.raises(ValueError, match="via"):
        motion.evaluate(MIN_ACCELERATION, [0.0, 1.0, 2.0], [0.0, 1.0, 2.0], [0.5], via="SOMETIMES")
