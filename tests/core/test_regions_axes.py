"""The AXES fit of ELLIPSE, OVAL and SUPERELLIPSE (issue 17): quadrant-wise half-axes through the
four axis limits, holding the rest pose; exact OPTIMAL and SIMPLE corrections."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointlimit_addon.core import projection, quat
from jointlimit_addon.core.limits import JointLimit
from jointlimit_addon.core.regions_axes import EllipseAxesRegion, OvalAxesRegion, SuperellipseAxesRegion
from jointlimit_addon.core.regions_smooth import EllipseRegion, SuperellipseRegion
from region_checks import assert_optimal_properties, dense_nearest, geodesic, plane_excess

POLE = np.array([0.0, -1.0, 0.0])
SETTINGS = dict(max_examples=30, deadline=None)
SHAPES = ("ELLIPSE", "OVAL", "SUPERELLIPSE")
IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])


def half_tan(deg):
    return math.tan(math.radians(deg) / 2.0)


def unit(v):
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def make(shape, s0, s1, t0, t1, m=4.0, n=4.0):
    if shape == "ELLIPSE":
        return EllipseAxesRegion(s0, s1, t0, t1)
    if shape == "OVAL":
        return OvalAxesRegion(s0, s1, t0, t1)
    return SuperellipseAxesRegion(s0, s1, t0, t1, m, n)


# ranges containing 0, usually asymmetric: (min, max) in degrees with min < 0 < max
sides = st.floats(0.5, 175.0)
exponents = st.one_of(st.sampled_from([1.0, 1.3, 1.5, 2.0, 3.0, 4.0, 10.0, 50.0]), st.floats(1.0, 20.0))


@st.composite
def ranges(draw):
    return (-draw(sides), draw(sides)), (-draw(sides), draw(sides))


@st.composite
def regions(draw):
    (z0, z1), (x0, x1) = draw(ranges())
    shape = draw(st.sampled_from(SHAPES))
    return make(shape, half_tan(z0), half_tan(z1), half_tan(x0), half_tan(x1), draw(exponents), draw(exponents))


@st.composite
def sphere_points(draw, region):
    """Random points, the pole, points near it, and points on, just inside and just outside the
    boundary, plus points on the four axes beyond the limits."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    pts = [unit(rng.normal(size=(24, 3))), POLE[None], unit(POLE + rng.normal(scale=1e-7, size=(2, 3)))]
    B = region.boundary_points_sphere(8)
    pts.append(B)
    for scale in (1e-12, 1e-9, 1e-4, 0.3):
        pts.append(unit(B + scale * rng.normal(size=B.shape)))
    s0, s1, t0, t1 = region.bounds
    beyond = np.array([(1.05 * s0, 0.0), (1.05 * s1, 0.0), (0.0, 1.05 * t0), (0.0, 1.05 * t1)])
    pts.append(projection.plane_to_sphere(beyond[:, 0], beyond[:, 1]))
    return np.concatenate(pts, axis=0)


# --- the shape -----------------------------------------------------------------------------------

@settings(**SETTINGS)
@given(regions())
def test_outline_passes_through_the_four_axis_limits_and_holds_the_origin(region):
    s0, s1, t0, t1 = region.bounds
    axis = np.array([(s1, 0.0), (0.0, t1), (s0, 0.0), (0.0, t0)])
    assert np.all(region.contains_st(axis[:, 0], axis[:, 1]))
    out = axis * (1.0 + 1e-6)
    assert not np.any(region.contains_st(out[:, 0], out[:, 1]))
    assert region.contains_st(0.0, 0.0)
    st_pts = region.boundary_points(4096)     # and goes no further
    assert np.all((st_pts[:, 0] <= s1 * (1 + 1e-12)) & (st_pts[:, 0] >= s0 * (1 + 1e-12)))
    assert np.all((st_pts[:, 1] <= t1 * (1 + 1e-12)) & (st_pts[:, 1] >= t0 * (1 + 1e-12)))
    if hasattr(region, "_outline"):
        s, t = region._outline(np.arange(4.0))[:2]
        assert np.allclose(np.stack((s, t), axis=-1), axis, rtol=1e-15, atol=1e-15 * max(map(abs, region.bounds)))


@settings(**SETTINGS)
@given(regions())
def test_outline_is_convex_and_c1_at_the_axis_points(region):
    """Counter-clockwise with no right turn anywhere (convex); at each axis point the outline
    leaves on both sides perpendicular to the axis (C1; a superellipse exponent of 1 makes a
    corner there by design, as in the INSCRIBED fit)."""
    P = region.boundary_points(8192)
    d = np.roll(P, -1, axis=0) - P
    heading = np.unwrap(np.arctan2(d[:, 1], d[:, 0]))
    turn = np.diff(np.append(heading, heading[0] + 2 * np.pi))
    assert turn.min() >= -1e-9
    assert heading[-1] - heading[0] <= 2 * np.pi + 1e-9
    if min(getattr(region, "m", 2.0), getattr(region, "n", 2.0)) < 1.5:
        return
    s0, s1, t0, t1 = region.bounds
    eps = 1e-8
    for a_s, a_t in ((s1, 0.0), (s0, 0.0), (0.0, t1), (0.0, t0)):
        for side in (-1.0, 1.0):
            # a point just off the axis point along the axis' normal, brought onto the outline;
            # offsets measured in the half-axes of its quadrant
            a = s1 if (a_s > 0.0 or (a_s == 0.0 and side > 0.0)) else -s0
            b = t1 if (a_t > 0.0 or (a_t == 0.0 and side > 0.0)) else -t0
            q_s, q_t = (a_s, side * eps * b) if a_t == 0.0 else (side * eps * a, a_t)
            b_s, b_t = (float(c[0]) for c in region.clamp_simple(np.array([q_s]), np.array([q_t])))
            if a_t == 0.0:
                along, across = abs(b_t) / b, abs(b_s - a_s) / a
            else:
                along, across = abs(b_s) / a, abs(b_t - a_t) / b
            assert along > 0.0 and across <= 0.05 * along


@pytest.mark.parametrize("shape", SHAPES)
def test_symmetric_ranges_give_the_inscribed_shape(shape):
    a, b = half_tan(70.0), half_tan(40.0)
    axes = make(shape, -a, a, -b, b, 3.0, 5.0)
    inscribed = JointLimit(shape=shape, swing_z=(-math.radians(70), math.radians(70)),
                           swing_x=(-math.radians(40), math.radians(40)), exponent=(3.0, 5.0)).region
    P = unit(np.random.default_rng(4).normal(size=(500, 3)))
    assert np.abs(axes.clamp_optimal(P) - inscribed.clamp_optimal(P)).max() <= 1e-9
    s, t = projection.sphere_to_plane(P)
    assert np.array_equal(axes.contains_st(s, t), inscribed.contains_st(s, t))


def test_each_quadrant_is_the_shape_of_its_own_half_axes():
    """The quarter in quadrant (+, -) is the one of the range [-s1, s1] x [t0, -t0]."""
    s0, s1, t0, t1 = -0.2, 1.5, -0.7, 0.3
    for shape in SHAPES:
        axes = make(shape, s0, s1, t0, t1, 3.0, 1.5)
        sym = JointLimit(shape=shape, swing_z=(-2 * math.atan(s1), 2 * math.atan(s1)),
                         swing_x=(2 * math.atan(t0), -2 * math.atan(t0)), exponent=(3.0, 1.5)).region
        rng = np.random.default_rng(5)
        s, t = rng.uniform(0.0, 2.0, 4000), rng.uniform(-1.0, 0.0, 4000)
        assert np.array_equal(axes.contains_st(s, t), sym.contains_st(s, t)), shape


def test_mirrored_ranges_mirror_the_region():
    """Mirroring (Z range negated and swapped) swaps the quadrants' s half-axes: the region is
    reflected in s, and so are the corrections."""
    z, x = (math.radians(-25.0), math.radians(150.0)), (math.radians(-70.0), math.radians(110.0))
    z_m = (-z[1], -z[0])
    rng = np.random.default_rng(6)
    P = unit(rng.normal(size=(400, 3)))
    flip = np.array([-1.0, 1.0, 1.0])     # s -> -s is x -> -x on the sphere
    for shape in SHAPES:
        for correction in ("OPTIMAL", "SIMPLE"):
            a = JointLimit(shape=shape, swing_z=z, swing_x=x, fit="AXES", correction=correction).region
            b = JointLimit(shape=shape, swing_z=z_m, swing_x=x, fit="AXES", correction=correction).region
            assert np.array_equal(a.contains_sphere(P), b.contains_sphere(P * flip))
            assert np.abs(a.clamp_optimal(P) * flip - b.clamp_optimal(P * flip)).max() <= 1e-9


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("bad, axis", [(((-0.3, 1.0), (0.1, 1.0)), "swing_x"), (((0.0, 1.0), (-1.0, 1.0)), "swing_z"),
                                       (((-1.0, -0.2), (-1.0, 1.0)), "swing_z"), (((-1.0, 1.0), (-1.0, 0.0)), "swing_x")])
def test_ranges_must_contain_zero_with_a_clear_error(shape, bad, axis):
    z, x = bad
    with pytest.raises(ValueError, match=axis):
        JointLimit(shape=shape, swing_z=z, swing_x=x, fit="AXES")
    JointLimit(shape=shape, swing_z=z, swing_x=x)           # the INSCRIBED fit takes them
    JointLimit(shape="RECT", swing_z=z, swing_x=x, fit="AXES")     # RECT ignores the fit
    with pytest.raises(ValueError, match="fit must be one of"):
        JointLimit(shape=shape, swing_z=(-1, 1), swing_x=(-1, 1), fit="OUTER")


# --- OPTIMAL -----------------------------------------------------------------------------------

@settings(**SETTINGS)
@given(st.data(), regions())
def test_optimal_properties(data, region):
    """See ``assert_optimal_properties`` (16384 outline samples)."""
    assert_optimal_properties(region, data.draw(sphere_points(region)), dense=16384)


@settings(**SETTINGS)
@given(st.data(), regions())
def test_one_point_path_matches_the_vectorised_search(data, region):
    P = data.draw(sphere_points(region))
    vec = region.clamp_optimal(P)
    one = np.array([region.clamp_optimal1(*p) for p in P.tolist()])
    assert np.all(region.contains_sphere(one))
    d_one, d_vec = geodesic(P, one), geodesic(P, vec)
    assert np.all(np.abs(d_one - d_vec) <= 1e-12 + 2e-13 / np.maximum(np.sin(d_vec), 1e-3))
    s, t = projection.sphere_to_plane(P)
    ok = np.isfinite(s)
    pairs = list(zip(s[ok].tolist(), t[ok].tolist()))
    assert [region.contains1(a, b) for a, b in pairs] == region.contains_st(s[ok], t[ok]).tolist()
    simple = np.array([region.clamp_simple1(a, b) for a, b in pairs])
    assert np.allclose(simple, np.stack(region.clamp_simple(s[ok], t[ok]), axis=-1), rtol=0, atol=1e-12)


HARD = [
    # needle-thin quadrants next to wide ones; a region reaching to 175°
    ("ELLIPSE", (-0.5, 175.0), (-170.0, 1.0)),
    ("SUPERELLIPSE", (-175.0, 0.5), (-3.0, 172.0)),
    ("OVAL", (-1.0, 174.0), (-0.7, 0.9)),
    ("SUPERELLIPSE", (-60.0, 170.0), (-30.0, 170.0)),
]


@pytest.mark.parametrize("shape, z, x", HARD)
def test_optimal_is_global_on_extreme_quadrants(shape, z, x):
    region = make(shape, half_tan(z[0]), half_tan(z[1]), half_tan(x[0]), half_tan(x[1]), 1.0, 3.0)
    pts = unit(np.random.default_rng(7).normal(size=(1000, 3)))
    inside = region.contains_sphere(pts)
    d_ref = dense_nearest(region, pts, 100001)
    for out in (region.clamp_optimal(pts), np.array([region.clamp_optimal1(*p) for p in pts.tolist()])):
        assert np.all(geodesic(pts, out)[~inside] <= d_ref[~inside] + 1e-9)


# --- SIMPLE ------------------------------------------------------------------------------------

@settings(**SETTINGS)
@given(regions(), st.lists(st.tuples(st.floats(-50, 50), st.floats(-50, 50)), min_size=1, max_size=20))
def test_simple_properties(region, pts):
    """On the outline when outside, inside points unchanged, idempotent, never NaN; ELLIPSE and
    SUPERELLIPSE move toward the origin [000 eq.15], OVAL to the nearest point of the plane."""
    s, t = np.array(pts).T
    sm, tm = region.clamp_simple(s, t)
    assert np.all(np.isfinite(sm)) and np.all(np.isfinite(tm))
    assert np.all(region.contains_st(sm, tm))
    s2, t2 = region.clamp_simple(sm, tm)
    assert np.allclose(s2, sm, rtol=0, atol=1e-12) and np.allclose(t2, tm, rtol=0, atol=1e-12)
    if isinstance(region, OvalAxesRegion):
        B = region.boundary_points(20000)
        out = ~region.contains_st(s, t)
        d = np.hypot(s - sm, t - tm)[out]
        d_ref = np.hypot(s[out, None] - B[:, 0], t[out, None] - B[:, 1]).min(axis=1)
        assert np.all(d <= d_ref + 1e-9)
        return
    inner = region._level(s, t) <= 1.0
    assert np.array_equal(sm[inner], s[inner]) and np.array_equal(tm[inner], t[inner])
    assert np.allclose(region._level(sm[~inner], tm[~inner]), 1.0, rtol=1e-12, atol=1e-12)
    cross = sm * t - tm * s     # on the ray from the origin
    assert np.allclose(cross, 0.0, atol=1e-9 * (1 + np.abs(s) + np.abs(t)) ** 2)
    assert np.all(sm * s >= 0.0) and np.all(tm * t >= 0.0)


# --- JointLimit: rotations about the axes -------------------------------------------------------

@settings(**SETTINGS)
@given(ranges(), st.sampled_from(SHAPES), st.sampled_from(("OPTIMAL", "SIMPLE")), exponents, exponents)
def test_pure_bends_up_to_each_limit_pass_and_beyond_land_on_it(rng_pair, shape, correction, m, n):
    """A rotation about X (or Z) up to each typed limit is unchanged; just beyond it (and well
    beyond) it lands on that limit; the rest pose is inside."""
    (z0, z1), (x0, x1) = rng_pair
    limit = JointLimit(shape=shape, swing_z=(math.radians(z0), math.radians(z1)),
                       swing_x=(math.radians(x0), math.radians(x1)), correction=correction,
                       exponent=(m, n), fit="AXES")
    assert limit.contains(IDENTITY)
    assert quat.angle_between(limit.clamp(IDENTITY), IDENTITY) == 0.0
    for axis, (lo, hi) in (((1.0, 0.0, 0.0), (x0, x1)), ((0.0, 0.0, 1.0), (z0, z1))):
        for end in (lo, hi):
            at = quat.from_axis_angle(np.array(axis), math.radians(end))
            assert quat.angle_between(limit.clamp(at), at) <= 1e-9
            for over in (0.5, 4.0):
                beyond_deg = end + math.copysign(over, end)
                if abs(beyond_deg) > 176.0:
                    # past ~176° a point can sit near the centre of the limit's small circle
                    # through the pole, where the distance along the outline is flat to ~1e-8
                    # and the search (shared with the INSCRIBED fit) is good to ~1e-7 rad only
                    continue
                beyond = quat.from_axis_angle(np.array(axis), math.radians(beyond_deg))
                for out in (limit.clamp(beyond), limit.clamp(beyond[None])[0]):
                    assert limit.contains(out[None])[0]     # (batch form: the scalar one is issue 16)
                    if over < 1.0 or correction == "SIMPLE":
                        # just beyond: on the limit (where the outline is very flat there, e.g. a
                        # superellipse top, the optimum is flat too: its place is good to ~1e-7)
                        assert quat.angle_between(out, at) <= 1e-6
                    if correction == "OPTIMAL":
                        # farther beyond the nearest point may leave the axis (the outline can
                        # curve round the point): no farther than the limit (1e-9, as the other
                        # optimality tests; the issue asks 1e-6)
                        d_out, d_at = quat.angle_between(out, beyond), quat.angle_between(at, beyond)
                        assert d_out <= d_at + 1e-9


@pytest.mark.parametrize("shape", SHAPES)
def test_shoulder_example_of_the_issue(shape):
    """Swing X -60..170, Z -30..170: the INSCRIBED fit leaves out the rest pose and the 170°
    bends; the AXES fit holds both."""
    kw = dict(shape=shape, swing_x=(math.radians(-60), math.radians(170)),
              swing_z=(math.radians(-30), math.radians(170)))
    inscribed, axes = JointLimit(**kw), JointLimit(**kw, fit="AXES")
    assert not inscribed.contains(IDENTITY) and quat.angle_between(inscribed.clamp(IDENTITY), IDENTITY) > 1.0
    up = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), math.radians(170.0))
    assert not inscribed.contains(up)
    assert axes.contains(IDENTITY) and axes.contains(up)
    assert "fit='AXES'" in repr(axes)


def test_single_rotation_equals_batch():
    q = quat.random_unit(300, np.random.default_rng(11))
    for shape in SHAPES:
        for correction in ("OPTIMAL", "SIMPLE"):
            lim = JointLimit(shape=shape, swing_x=(-0.2, 1.9), swing_z=(-0.7, 0.35), twist=(-0.5, 0.5),
                             correction=correction, exponent=(1.5, 6.0), fit="AXES")
            single = np.array([lim.clamp(x) for x in q])
            assert quat.angle_between(single, lim.clamp(q)).max() <= 1e-12
            assert np.array_equal(np.array([lim.contains(x) for x in q]), lim.contains(q))


def test_outline_points_for_the_overlay():
    """``outline_points`` (the overlay's outline) lies on the boundary and reaches the axes."""
    for shape in SHAPES:
        lim = JointLimit(shape=shape, swing_x=(math.radians(-60), math.radians(170)),
                         swing_z=(math.radians(-30), math.radians(170)), fit="AXES")
        P = lim.outline_points(257)
        assert P.shape == (257, 3) and np.allclose(P[0], P[-1])
        s, t = projection.sphere_to_plane(P)
        assert np.all(lim.region.contains_st(s, t))
        assert np.all(plane_excess(lim.region, P * np.array([1.0, 1.0, 1.0])) <= 1e-9)
        assert not np.any(lim.region.contains_st(s * (1 + 1e-6), t * (1 + 1e-6)))


def test_inscribed_classes_unchanged_by_the_fit_hooks():
    """The INSCRIBED regions keep their centre and half sizes (the hooks default to them)."""
    e = EllipseRegion(-0.2, 1.0, -0.5, 0.3)
    assert (e.sa, e.sb, e.ta, e.tb) == pytest.approx((0.6, 0.4, 0.4, -0.1))
    s = SuperellipseRegion(-0.2, 1.0, -0.5, 0.3, 3.0, 4.0)
    assert np.allclose(s._axes_q, [[0.6, 0.4], [-0.6, 0.4], [-0.6, -0.4], [0.6, -0.4]])


@settings(**SETTINGS)
@given(ranges(), st.sampled_from(SHAPES), st.sampled_from(("OPTIMAL", "SIMPLE")), exponents,
       st.integers(0, 2**32 - 1))
def test_joint_limit_properties_with_the_axes_fit(rng_pair, shape, correction, m, seed):
    """Rotations (the pole and its neighbourhood included): unit, finite, inside, idempotent,
    unchanged when inside; OPTIMAL no farther on the sphere than a brute-force boundary point."""
    (z0, z1), (x0, x1) = rng_pair
    limit = JointLimit(shape=shape, swing_z=(math.radians(z0), math.radians(z1)),
                       swing_x=(math.radians(x0), math.radians(x1)), twist=(-0.4, 0.6), correction=correction,
                       exponent=(m, 2.5), fit="AXES")
    rng = np.random.default_rng(seed)
    pole = np.array([[0.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 0.0]])     # half turns about Z and X
    q = np.concatenate((quat.random_unit(64, rng), pole, unit(pole + 1e-7 * rng.normal(size=pole.shape))))
    out = limit.clamp(q)
    assert np.all(np.isfinite(out)) and np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-12)
    assert np.all(limit.contains(out))
    assert quat.angle_between(limit.clamp(out), out).max() <= 1e-9
    inside = limit.contains(q)
    assert quat.angle_between(out[inside], q[inside]).max(initial=0.0) <= 1e-15
    if correction == "OPTIMAL":
        P = quat.rotate(q, np.array([0.0, 1.0, 0.0]))
        swing = quat.rotate(out, np.array([0.0, 1.0, 0.0]))
        outside = ~limit.region.contains_sphere(P)
        d_ref = dense_nearest(limit.region, P[outside], 16384)
        assert np.all(geodesic(P[outside], swing[outside]) <= d_ref + 1e-9)


def test_one_point_search_keeps_a_maximum_next_to_a_minimum_at_a_node():
    """Found by hypothesis: from the pole, f has a local minimum exactly at the axis node
    tau = 1 and its maximum 1e-4 before it; Newton in the rising interval ends on the minimum
    (f'' > 0 there, infinite |f'''| bound), and the piece that holds the maximum must stay."""
    region = SuperellipseAxesRegion(-0.00872686779075879, 0.03492076949174773, -0.00872686779075879,
                                    1.4825609685127403, 2.9375, 1.3)
    P = np.array([[0.0, -1.0, 0.0]])
    d_vec = geodesic(P, region.clamp_optimal(P))
    d_one = geodesic(P, np.array([region.clamp_optimal1(0.0, -1.0, 0.0)]))
    assert abs(d_one[0] - d_vec[0]) <= 1e-13
    assert region.nearest_boundary_st1(0.0, -1.0, 0.0)[0] > 1e-6     # off the axis point


def test_pieces_of_an_unevenly_bending_outline_keep_a_true_bound():
    """A superellipse with exponents 10 and 50 bends almost all at its corners: the bound of a
    piece of a node interval must come from ``|f''|`` (``C w² / 8``), not from the interval's
    chord deviation scaled as if the outline bent evenly, which let the vectorised search
    drop the piece holding the nearest point (2.8e-5 rad off)."""
    region = make("SUPERELLIPSE", -0.3693065346342553, 2.267061060033383, -12.85345923418611,
                  0.006103228964606316, 10.0, 50.0)
    P = np.array([[0.0926077977169818, -0.5663936747205678, 0.8189151366524752]])
    d_ref = dense_nearest(region, P, 2000001)
    tau = region._nearest_tau(P)
    B = projection.plane_to_sphere(*region._outline(tau)[:2])
    assert geodesic(P, np.asarray(B).reshape(1, 3))[0] <= d_ref[0] + 1e-9


def test_a_slope_product_that_underflows_proves_nothing():
    """Slopes of opposite sign whose product underflows to -0 (a hypothesis find: the one-point
    search raised 'math domain error')."""
    from jointlimit_addon.core import regions_search

    assert regions_search._monotone1(-1e-300, 1e-10, 1e-200, 0.0, 1.0, 1.0) is False
    assert regions_search._no_max1(-1e-300, 1e-10, 1e-200, 0.0, 1.0, 4.0, 1.0) is False
