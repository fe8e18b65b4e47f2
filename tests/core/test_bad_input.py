"""Core robustness against hostile input (issue 16 item 7): single quaternions on a smooth
region's edge, huge and tiny quaternions and axes, ranges too narrow to clamp exactly, scalars
where a range is expected."""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from jointlimit_addon.core import ccd_steps, limb_ik, limits, quat
from jointlimit_addon.core.euler_limits import EulerLimit, EulerMultiLimit, HingeLimit, QuatSwingLimit
from jointlimit_addon.core.limits import JointLimit
from jointlimit_addon.core.projection import from_swing_twist

SETTINGS = dict(max_examples=30, deadline=None)
MIN_WIDTH = getattr(limits, "MIN_SWING_WIDTH", math.radians(0.1))  # documented as 0.1°


def all_limits():
    out = [JointLimit(shape, swing_x=(-0.4, 1.2), swing_z=(-0.8, 0.3), twist=(-0.3, 0.5), correction=corr)
           for shape in ("RECT", "ELLIPSE", "OVAL", "SUPERELLIPSE") for corr in ("OPTIMAL", "SIMPLE")]
    out.append(JointLimit("POLYGON", outline=[(-0.3, -0.2), (0.5, -0.2, 0.5), (0.6, 0.4), (-0.2, 0.7, -0.3)]))
    out += [HingeLimit((0.1, 1.5)), HingeLimit((-1.0, 0.5), axis=(0.3, 0.0, 0.9)),
            EulerLimit((-0.3, 0.4), (-0.2, 0.2), (-0.5, 0.1)), EulerMultiLimit((-0.3, 0.4), (-2.0, 2.0), (-0.5, 0.1)),
            QuatSwingLimit(max_swing=0.6, twist=(-0.2, 0.3))]
    return out


LIMITS = all_limits()


# --- a single quaternion on a smooth region's edge ---------------------------------------------

@pytest.mark.parametrize("shape", ["ELLIPSE", "SUPERELLIPSE"])
@given(seed=st.integers(0, 2**32 - 1), push=st.floats(-3e-13, 3e-13))
@settings(**SETTINGS)
def test_single_quaternion_on_the_edge_gives_the_batch_answer(shape, seed, push):
    """``contains`` of one quaternion whose swing lies within the boundary tolerance, just
    outside the outline (the near-outline branch), equals the batch answer (no TypeError)."""
    lim = JointLimit(shape, swing_x=(-0.4, 1.2), swing_z=(-0.8, 0.3), exponent=(3.0, 5.0))
    region = lim.region
    edge = region.boundary_points(16)
    centre = np.array([region.sb, region.tb])
    st_pts = edge + push * (edge - centre) / np.linalg.norm(edge - centre, axis=-1, keepdims=True)
    psi = np.random.default_rng(seed).uniform(-0.1, 0.1, len(st_pts))
    qs = from_swing_twist(st_pts[:, 0], st_pts[:, 1], psi)
    batch = lim.contains(qs)
    single = [lim.contains(q) for q in qs] + [lim.contains(tuple(q)) for q in qs]
    assert [bool(x) for x in single] == [bool(x) for x in batch] * 2
    if push <= 0.0:     # on the outline or just inside it: inside (the limit has no twist range)
        assert np.all(batch)


def test_single_quaternion_just_outside_the_outline_is_inside_within_tolerance():
    """The reported reproduction: a point 1e-13 beyond the outline (inside the tolerance)."""
    lim = JointLimit("SUPERELLIPSE", swing_x=(-0.4, 1.2), swing_z=(-0.8, 0.3))
    s, t = lim.region.boundary_points(8)[3]
    k = 1.0 + 1e-13
    q = from_swing_twist(lim.region.sb + k * (s - lim.region.sb), lim.region.tb + k * (t - lim.region.tb), 0.0)
    assert lim.region._level1(*lim.swing_point(q)) > 1.0   # really beyond the outline
    assert bool(lim.contains(q)) == bool(lim.contains(q[None])[0]) is True


# --- scale before normalising ------------------------------------------------------------------

@pytest.mark.parametrize("lim", LIMITS, ids=repr)
@pytest.mark.parametrize("scale", [1e200, 1e-200, 1e300, 5e-310])
def test_clamp_and_contains_do_not_depend_on_the_quaternion_scale(lim, scale):
    qs = np.concatenate((quat.random_unit(20, 4), [[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]))
    want = lim.clamp(qs)
    for q, w in zip(qs, want):
        big = q * scale
        np.testing.assert_allclose(lim.clamp(big), w, atol=1e-14)
        np.testing.assert_allclose(lim.clamp(tuple(big.tolist())), w, atol=1e-14)
        assert bool(lim.contains(big)) == bool(lim.contains(q))
    np.testing.assert_allclose(lim.clamp(qs * scale), want, atol=1e-14)
    np.testing.assert_array_equal(lim.contains(qs * scale), lim.contains(qs))


def test_reported_clamp_of_a_huge_quaternion():
    lim = JointLimit("RECT", swing_x=(-0.5, 0.7), swing_z=(-0.4, 0.6))
    np.testing.assert_allclose(lim.clamp((1e200, 1e200, 0, 0)), lim.clamp((1, 1, 0, 0)), atol=1e-15)


@pytest.mark.parametrize("scale", [1e300, 1e200, 1e-200, 1e-310])
def test_quat_helpers_scale_before_normalising(scale):
    q = np.array([[3.0, -4.0, 0.0, 12.0], [1.0, 1.0, 1.0, 1.0]])
    unit = q / np.linalg.norm(q, axis=-1, keepdims=True)
    np.testing.assert_allclose(quat.as_unit_quats(q * scale), unit, atol=1e-15)
    np.testing.assert_allclose(quat.normalize(q * scale), unit, atol=1e-15)
    axis = np.array([1.0, 1.0, 0.0])
    np.testing.assert_allclose(quat.from_axis_angle(axis * scale, 0.7), quat.from_axis_angle(axis, 0.7), atol=1e-15)


@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_hinge_axis_of_any_scale(scale):
    want = HingeLimit((0.0, 1.0), axis=(1.0, 1.0, 0.0))
    got = HingeLimit((0.0, 1.0), axis=(scale, scale, 0.0))
    np.testing.assert_allclose(got.axis, want.axis, atol=1e-16)
    q = np.array([1.0, 0.2, 0.1, 0.3])
    np.testing.assert_allclose(got.clamp(q), want.clamp(q), atol=1e-15)
    assert np.all(np.isfinite(got.clamp(q)))


def test_limb_and_ccd_hinge_axes_of_any_scale():
    rest = np.eye(4)
    lower = np.eye(4)
    lower[:3, 3] = (0.0, 1.0, 0.0)
    end = np.eye(4)
    end[:3, 3] = (0.0, 2.0, 0.0)
    big = limb_ik.LimbChain(rest, lower, end, hinge_axis=(1e300, 1e300, 0.0))
    unit = limb_ik.LimbChain(rest, lower, end, hinge_axis=(1.0, 1.0, 0.0))
    np.testing.assert_allclose(big.axis, unit.axis, atol=1e-16)
    assert ccd_steps._hinge_axis(HingeLimit(axis=(1e300, 0.0, 1e300))) == pytest.approx(ccd_steps._hinge_axis(HingeLimit(axis=(1, 0, 1))))


def test_zero_quaternion_is_still_refused():
    for lim in LIMITS:
        with pytest.raises(ValueError, match="zero length"):
            lim.clamp((0.0, 0.0, 0.0, 0.0))
        with pytest.raises(ValueError, match="zero length"):
            lim.contains(np.zeros((2, 4)))


# --- ranges too narrow to clamp exactly --------------------------------------------------------

NARROWEST = {"RECT": 1e-9, "OVAL": 1e-9, "ELLIPSE": MIN_WIDTH, "SUPERELLIPSE": MIN_WIDTH}


@pytest.mark.parametrize("shape", ["RECT", "ELLIPSE", "OVAL", "SUPERELLIPSE"])
@pytest.mark.parametrize("fraction", [1e-300 / 1e-9, 1e-12 / 1e-9, 0.5])
def test_too_narrow_swing_range_is_refused_clearly(shape, fraction):
    width = fraction * NARROWEST[shape]
    for kw in (dict(swing_x=(0.0, width), swing_z=(-0.4, 0.6)), dict(swing_x=(-0.4, 0.6), swing_z=(0.3, 0.3 + width))):
        if not kw.get("swing_z", (0, 1))[0] < kw.get("swing_z", (0, 1))[1]:
            continue    # rounded to an empty range: refused by the min < max rule
        with pytest.raises(ValueError, match=r"range must be at least [0-9.e-]+° wide"):
            JointLimit(shape, **kw)
    if shape in ("ELLIPSE", "SUPERELLIPSE"):
        with pytest.raises(ValueError, match=r"swing_x range must be at least 0\.1° wide"):
            JointLimit(shape, swing_x=(0.3, 0.3 + 1e-12), swing_z=(-0.4, 0.6))


@pytest.mark.parametrize("shape", ["RECT", "ELLIPSE", "OVAL", "SUPERELLIPSE"])
@given(lo=st.floats(-3.0, 3.0), other=st.lists(st.floats(-3.1, 3.1), min_size=2, max_size=2, unique=True),
       extra=st.floats(1.0, 2.0), axis=st.sampled_from("xz"), seed=st.integers(0, 2**32 - 1),
       m=st.floats(1.0, 10.0), corr=st.sampled_from(["OPTIMAL", "SIMPLE"]))
@example(lo=0.0, other=[3.099609375, 3.0999999999999996], extra=1.0, axis="x", seed=0, m=1.0, corr="OPTIMAL")
@settings(max_examples=15, deadline=None)
def test_narrowest_accepted_ranges_clamp_exactly(shape, lo, other, extra, axis, seed, m, corr):
    """At the narrowest accepted width every clamped rotation is inside the limit."""
    a, b = sorted(other)
    if b - a < MIN_WIDTH:   # widened inside (-pi, pi): a + 0.1 passed pi for a near 3.1 (a hypothesis find)
        a, b = (a, a + 0.1) if a + 0.1 < math.pi else (b - 0.1, b)
    rng = (lo, lo + extra * NARROWEST[shape])
    kw = dict(swing_x=rng, swing_z=(a, b)) if axis == "x" else dict(swing_x=(a, b), swing_z=rng)
    lim = JointLimit(shape, exponent=(m, 2.0 + m), correction=corr, **kw)
    qs = quat.random_unit(200, seed)
    assert np.all(lim.contains(lim.clamp(qs)))
    assert all(lim.contains(lim.clamp(q)) for q in qs[:20])


# --- a scalar where a range is expected --------------------------------------------------------

@pytest.mark.parametrize("make,what", [
    (lambda: JointLimit("RECT", swing_x=0.5, swing_z=(-0.4, 0.6)), "swing_x"),
    (lambda: JointLimit("OVAL", swing_x=(-0.4, 0.6), swing_z=0.5), "swing_z"),
    (lambda: JointLimit("RECT", swing_x=(-0.4, 0.6), swing_z=(-0.4, 0.6), twist=0.5), "twist"),
    (lambda: JointLimit("RECT", swing_x=(0.1, 0.2, 0.3), swing_z=(-0.4, 0.6)), "swing_x"),
    (lambda: JointLimit("RECT", swing_x="ab", swing_z=(-0.4, 0.6)), "swing_x"),
    (lambda: HingeLimit(angle=1.0), "hinge angle"),
    (lambda: EulerLimit(x=0.3), "x"),
    (lambda: QuatSwingLimit(max_swing=0.5, twist=0.3), "twist"),
])
def test_scalar_range_is_a_clear_value_error(make, what):
    with pytest.raises(ValueError, match=rf"{what}.*pair \(min, max\)|{what}.*pair \(lo, hi\)"):
        make()


def _straight_chain():
    rest = np.eye(4)
    lower = np.eye(4)
    lower[:3, 3] = (0.0, 1.0, 0.0)
    end = np.eye(4)
    end[:3, 3] = (0.0, 2.0, 0.0)
    return limb_ik.LimbChain(rest, lower, end)


@pytest.mark.parametrize("hinge", [1.0, (0.1, 0.2, 0.3), "ab"])
def test_scalar_hinge_range_of_a_limb_is_a_clear_value_error(hinge):
    chain = _straight_chain()
    limits_ = limb_ik.LimbLimits(hinge=hinge)
    with pytest.raises(ValueError, match=r"hinge range must be a pair \(lo, hi\)"):
        limb_ik.solve_position(chain, np.array([0.5, 1.0, 0.3]), 0.0, limits=limits_)
    with pytest.raises(ValueError, match=r"hinge range must be a pair \(lo, hi\)"):
        chain.distance_range(hinge)


@pytest.mark.parametrize("outline", [0.5, [0.5, 0.2], [(0, 0), (1, 0), 0.3], [(0, 0), (1, 0), (0, "a")], [(0, 0, 0, 0)]])
def test_scalar_outline_vertex_is_a_clear_value_error(outline):
    with pytest.raises(ValueError, match=r"outline must be a list of \(s, t\) or \(s, t, bulge\) vertices"):
        JointLimit("POLYGON", outline=outline)


@pytest.mark.parametrize("exponent", [4.0, (1.0, 2.0, 3.0), None])
def test_scalar_exponent_is_a_clear_value_error(exponent):
    for shape in ("SUPERELLIPSE", "RECT"):
        with pytest.raises(ValueError, match=r"exponent must be a pair \(m, n\)"):
            JointLimit(shape, swing_x=(-0.4, 0.6), swing_z=(-0.4, 0.6), exponent=exponent)


def test_euler_multi_tie_gives_the_same_rotation_for_q_and_minus_q():
    """A rotation equally far from two allowed ones (90° about (0, 1, 1)/√2 with only X free):
    ``q`` and ``-q`` are one rotation and must be clamped to one rotation (found by hypothesis
    in test_euler_limits; it failed before this change)."""
    lim = EulerMultiLimit(x=(-1.0, 1.0), y=(0.0, 0.0), z=(0.0, 0.0), order="XYZ")
    half = float.fromhex("0x1.ffffffffffffep-2")    # 0.5 one ulp low, as a rotation matrix gives it
    q = np.array([[1.0, 0.0, 0.0, 0.0], [np.sqrt(0.5), 0.0, half, half], [np.sqrt(0.5), 0.0, 0.5, 0.5]])
    a, b = lim.clamp(q), lim.clamp(-q)
    assert np.all(quat.angle_between(a, b) < 1e-12)
    for qi in q:
        assert quat.angle_between(lim.clamp(qi), lim.clamp(-qi)) < 1e-12
