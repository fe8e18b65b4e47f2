"""ELLIPSE / SUPERELLIPSE regions [000 §3.2, §3.4.1, eq.7-9, 15, §4.4, §4.6.1]."""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from jointlimit_addon.core import projection
from jointlimit_addon.core.regions_smooth import EllipseRegion, SuperellipseRegion
from region_checks import assert_optimal_properties, dense_nearest, geodesic

POLE = np.array([0.0, -1.0, 0.0])
SETTINGS = dict(max_examples=40, deadline=None)


def half_tan(deg):
    return float(np.tan(np.radians(deg) / 2.0))


def make(kind, s0, s1, t0, t1, m=2.0, n=2.0):
    if kind == "ELLIPSE":
        return EllipseRegion(s0, s1, t0, t1)
    return SuperellipseRegion(s0, s1, t0, t1, m, n)


angle_pairs = st.lists(st.floats(-175.0, 175.0), min_size=2, max_size=2, unique=True).map(sorted).filter(
    lambda p: p[1] - p[0] > 0.5)
exponents = st.one_of(st.sampled_from([1.0, 1.3, 1.5, 2.0, 2.5, 3.0, 4.0, 10.0, 50.0]), st.floats(1.0, 20.0))


@st.composite
def regions(draw):
    (a0, a1), (b0, b1) = draw(angle_pairs), draw(angle_pairs)
    kind = draw(st.sampled_from(["ELLIPSE", "SUPERELLIPSE"]))
    return make(kind, half_tan(a0), half_tan(a1), half_tan(b0), half_tan(b1), draw(exponents), draw(exponents))


def unit(v):
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


@st.composite
def sphere_points(draw, region):
    """Random points plus the pole, points on, just inside and just outside the boundary."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    pts = [unit(rng.normal(size=(24, 3))), POLE[None], unit(POLE + rng.normal(scale=1e-7, size=(2, 3)))]
    B = region.boundary_points_sphere(8)
    pts.append(B)
    for scale in (1e-12, 1e-9, 1e-4, 0.3):
        pts.append(unit(B + scale * rng.normal(size=B.shape)))
    st_pts = region.boundary_points(8)
    centre = np.array([region.sb, region.tb])
    inner = centre + 0.5 * (st_pts - centre)
    pts.append(projection.plane_to_sphere(inner[:, 0], inner[:, 1]))
    return np.concatenate(pts, axis=0)


# --- OPTIMAL ---------------------------------------------------------------------------------

@settings(**SETTINGS)
@given(st.data(), regions())
def test_optimal_properties(data, region):
    """See ``assert_optimal_properties`` (8192 outline samples)."""
    assert_optimal_properties(region, data.draw(sphere_points(region)), dense=8192)


HARD_CASES = [
    # a needle near the pole: two local maxima of P·B on either side of the best node
    (EllipseRegion(-0.45407823074932424, -0.3623143090548009, -4.198273135070287, 1.4902820563980244),
     [0.11876, -0.88442, -0.45133]),
    # flat points of a 3-superellipse: the distance is almost constant along a stretch
    (SuperellipseRegion(-0.4179325687538734, 1.0165281600679386, -0.05152837771939425, 3.3372206858965723,
                        3.0, 1.5), None),
    # a huge region (s up to tan(87.5°)) with three critical points between two nodes
    (SuperellipseRegion(-0.5098959876557487, 19.265112406266468, -1.14420079274872, 0.6967709887756127,
                        1.3, 2.0), [0.04555, -0.49444, 0.86802]),
    (SuperellipseRegion(0.1652595699205636, 5.209435289834353, -5.537147078659006, 1.617591855771867,
                        1.0, 1.0), None),
]


@pytest.mark.parametrize("region, P", HARD_CASES)
def test_optimal_is_global_on_hard_cases(region, P):
    """Several local maxima exist on the sphere [000 §4.5]; the search must find the global one.
    Reference: 100001 outline samples."""
    rng = np.random.default_rng(7)
    pts = unit(rng.normal(size=(1000, 3)))
    if P is not None:
        pts = np.concatenate((unit(P)[None], pts))
    out = region.clamp_optimal(pts)
    d_ref = dense_nearest(region, pts, 100001)
    inside = region.contains_sphere(pts)
    assert np.all(geodesic(pts, out)[~inside] <= d_ref[~inside] + 1e-9)


def test_pole_goes_to_the_outline_point_farthest_from_the_origin():
    """At the pole ``P·B = 1 - 2 / (s² + t² + 1)``: the farthest outline point on the plane."""
    region = EllipseRegion(-0.2, 3.0, -0.5, 0.5)
    out = region.clamp_optimal(POLE)
    s, t = projection.sphere_to_plane(out)
    assert s == pytest.approx(3.0, abs=1e-12) and t == pytest.approx(0.0, abs=1e-9)


def test_circle_about_the_origin_simple_equals_optimal():
    """``s0 = -s1 = t0 = -t1``: the region is a circle about +Y and SIMPLE is optimal [000 §4.4]."""
    a = half_tan(70.0)
    region = EllipseRegion(-a, a, -a, a)
    rng = np.random.default_rng(3)
    P = unit(rng.normal(size=(2000, 3)))
    P = P[~region.contains_sphere(P) & (P[:, 1] > -1.0 + 1e-6)]
    s, t = projection.sphere_to_plane(P)
    sm, tm = region.clamp_simple(s, t)
    assert np.abs(projection.plane_to_sphere(sm, tm) - region.clamp_optimal(P)).max() <= 1e-9


def test_superellipse_simple_is_not_optimal_even_when_centred():
    """[000 §4.6.1]: unlike the ellipse, a centred superellipse's SIMPLE result is not optimal."""
    a = half_tan(70.0)
    region = SuperellipseRegion(-a, a, -a, a, 4.0, 4.0)
    P = unit([[1.0, 0.2, 0.6]])
    s, t = projection.sphere_to_plane(P)
    sm, tm = region.clamp_simple(s, t)
    assert geodesic(P, region.clamp_optimal(P)) < geodesic(P, projection.plane_to_sphere(sm, tm)) - 1e-4


@settings(**SETTINGS)
@given(angle_pairs, angle_pairs, st.integers(0, 2**32 - 1))
@example(sp=[-175.0, 175.0], tp=[0.0, 15.0], seed=0)  # a tie at the pole (found on numpy 1.26)
def test_superellipse_2_2_is_the_ellipse(sp, tp, seed):
    """``m = n = 2`` is the ellipse [000 §3.4.1]."""
    args = (half_tan(sp[0]), half_tan(sp[1]), half_tan(tp[0]), half_tan(tp[1]))
    ell, sup = EllipseRegion(*args), SuperellipseRegion(*args, 2.0, 2.0)
    P = np.concatenate((unit(np.random.default_rng(seed).normal(size=(64, 3))), POLE[None]))
    e, u = ell.clamp_optimal(P), sup.clamp_optimal(P)
    assert np.abs(e[:-1] - u[:-1]).max() <= 1e-9
    # The pole may have several nearest boundary points (a symmetric region): equally far is enough.
    assert abs(geodesic(POLE[None], e[-1:])[0] - geodesic(POLE[None], u[-1:])[0]) <= 1e-9
    s, t = projection.sphere_to_plane(P[:-1])
    for a, b in zip(ell.clamp_simple(s, t), sup.clamp_simple(s, t)):
        assert np.allclose(a, b, rtol=1e-12, atol=1e-12)
    assert np.array_equal(ell.contains_st(s, t), sup.contains_st(s, t))


# --- SIMPLE and the plane --------------------------------------------------------------------

def test_ellipse_simple_is_eq15():
    """[000 eq.15] by hand: (s, t) = (3, 1) for the box [-1, 1] x [-1, 3] (sb, tb = 0, 1)."""
    region = EllipseRegion(-1.0, 1.0, -1.0, 3.0)
    sm, tm = region.clamp_simple(3.0, 1.0)
    assert (sm, tm) == pytest.approx((1.0, 1.0))
    sm, tm = region.clamp_simple(2.0, 5.0)
    k_s, k_t = 2.0, 2.0  # (2 - 0) / 1, (5 - 1) / 2
    k_m = 1.0 / np.hypot(k_s, k_t)
    assert (sm, tm) == pytest.approx((k_s * k_m, k_t * k_m * 2.0 + 1.0))


@settings(**SETTINGS)
@given(regions(), st.lists(st.tuples(st.floats(-50, 50), st.floats(-50, 50)), min_size=1, max_size=20))
def test_simple_properties(region, pts):
    """Toward the centre onto the outline; inside unchanged; idempotent; never NaN."""
    s, t = np.array(pts).T
    sm, tm = region.clamp_simple(s, t)
    assert np.all(np.isfinite(sm)) and np.all(np.isfinite(tm))
    assert np.all(region.contains_st(sm, tm))
    inside = region.contains_st(s, t)
    assert np.array_equal(sm[inside & (region._level(s, t) <= 1.0)], s[inside & (region._level(s, t) <= 1.0)])
    out = region._level(s, t) > 1.0
    assert np.allclose(region._level(sm[out], tm[out]), 1.0, rtol=1e-12, atol=1e-12)
    # on the segment from the centre to the point
    cross = (sm - region.sb) * (t - region.tb) - (tm - region.tb) * (s - region.sb)
    assert np.allclose(cross, 0.0, atol=1e-9 * (1 + np.abs(s) + np.abs(t)) ** 2)
    s2, t2 = region.clamp_simple(sm, tm)
    assert np.allclose(s2, sm, rtol=0, atol=1e-12) and np.allclose(t2, tm, rtol=0, atol=1e-12)


def test_superellipse_equation_and_large_exponents():
    """[000 eq.9]; large exponents approach the rectangle (corner almost inside)."""
    region = SuperellipseRegion(-1.0, 1.0, -1.0, 1.0, 4.0, 4.0)
    assert region.contains_st(0.5 ** 0.25, 0.5 ** 0.25)
    assert not region.contains_st(0.85, 0.85)
    sharp = SuperellipseRegion(-1.0, 1.0, -1.0, 1.0, 200.0, 200.0)
    assert sharp.contains_st(0.99, 0.99) and not sharp.contains_st(1.0, 1.0)
    diamond = SuperellipseRegion(-1.0, 1.0, -1.0, 1.0, 1.0, 1.0)
    assert diamond.contains_st(0.5, 0.5) and not diamond.contains_st(0.5, 0.51)


def test_contains_boundary_tolerance():
    """Boundary points count as inside; points clearly outside do not."""
    region = EllipseRegion(-0.3, 0.8, -0.4, 0.2)
    st_pts = region.boundary_points(64)
    assert np.all(region.contains_st(st_pts[:, 0], st_pts[:, 1]))
    c = np.array([region.sb, region.tb])
    far = c + (1.0 + 1e-6) * (st_pts - c)
    assert not np.any(region.contains_st(far[:, 0], far[:, 1]))


@pytest.mark.parametrize("region", [EllipseRegion(-0.3, 2.0, -0.4, 0.2),
                                    SuperellipseRegion(-0.3, 2.0, -0.4, 0.2, 1.0, 6.0)])
def test_boundary_points_ordered_on_outline(region):
    n = 200
    st_pts = region.boundary_points(n)
    assert st_pts.shape == (n, 2)
    assert np.allclose(region._level(st_pts[:, 0], st_pts[:, 1]), 1.0, atol=1e-12)
    P = region.boundary_points_sphere(n)
    steps = geodesic(P, np.roll(P, -1, axis=0))
    assert steps.max() < 1.5 * steps.mean()     # evenly spaced, in order, closed
    centre = np.array([region.sb, region.tb])
    ang = np.unwrap(np.arctan2(st_pts[:, 1] - centre[1], st_pts[:, 0] - centre[0]))
    assert np.all(np.diff(ang) > 0) and ang[-1] - ang[0] < 2 * np.pi


# --- validation ------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [(0.5, 0.5, -1, 1), (1.0, -1.0, -1, 1), (-1, 1, 2, 1), (np.nan, 1, -1, 1),
                                  (-1, np.inf, -1, 1)])
def test_bad_ranges_raise(args):
    with pytest.raises(ValueError):
        EllipseRegion(*args)
    with pytest.raises(ValueError):
        SuperellipseRegion(*args, 4.0, 4.0)


@pytest.mark.parametrize("m, n", [(0.5, 2.0), (2.0, 0.99), (0.0, 0.0), (-3.0, 4.0), (np.nan, 2.0), (np.inf, 2.0)])
def test_bad_exponents_raise(m, n):
    with pytest.raises(ValueError):
        SuperellipseRegion(-1.0, 1.0, -1.0, 1.0, m, n)


def test_bad_points_raise():
    region = EllipseRegion(-1.0, 1.0, -1.0, 1.0)
    with pytest.raises(ValueError):
        region.clamp_optimal([[np.nan, 0.0, 1.0]])
    with pytest.raises(ValueError):
        region.clamp_optimal([1.0, 0.0])


def test_shapes_preserved():
    region = SuperellipseRegion(-1.0, 0.5, -0.2, 1.0, 3.0, 5.0)
    P = unit(np.random.default_rng(1).normal(size=(4, 5, 3)))
    assert region.clamp_optimal(P).shape == (4, 5, 3)
    assert region.clamp_optimal(P[0, 0]).shape == (3,)
    px, py, pz = region.nearest_boundary_xyz(P[..., 0], P[..., 1], P[..., 2])
    assert px.shape == (4, 5)


# --- the one-point path (interactive use) ----------------------------------------------------

def _scalar_optimal(region, P):
    return np.array([region.clamp_optimal1(*p) for p in P.tolist()])


@settings(**SETTINGS)
@given(st.data(), regions())
def test_one_point_path_matches_the_vectorised_search(data, region):
    """``clamp_optimal1`` (pure Python, its own branch and bound) finds the same distance as the
    vectorised search, stays in the region and leaves inside points alone; ``contains1`` and
    ``clamp_simple1`` equal their vector forms."""
    P = data.draw(sphere_points(region))
    vec = region.clamp_optimal(P)
    one = _scalar_optimal(region, P)
    assert np.all(np.isfinite(one))
    assert np.all(region.contains_sphere(one))
    d_one, d_vec = geodesic(P, one), geodesic(P, vec)
    # both decide f = cos(d) to ~1e-13, i.e. d to 1e-13 / sin(d) near the antipode
    assert np.all(np.abs(d_one - d_vec) <= 1e-12 + 2e-13 / np.maximum(np.sin(d_vec), 1e-3))
    inside = region.contains_sphere(P)
    assert np.array_equal(one[inside], P[inside])
    s, t = projection.sphere_to_plane(P)
    ok = np.isfinite(s)
    pairs = list(zip(s[ok].tolist(), t[ok].tolist()))     # Python floats, as the fast path gets
    assert [region.contains1(a, b) for a, b in pairs] == region.contains_st(s[ok], t[ok]).tolist()
    simple = np.array([region.clamp_simple1(a, b) for a, b in pairs])
    assert np.allclose(simple, np.stack(region.clamp_simple(s[ok], t[ok]), axis=-1), rtol=0, atol=1e-12)


@pytest.mark.parametrize("region, P", HARD_CASES)
def test_one_point_path_on_hard_cases(region, P):
    pts = unit(np.random.default_rng(8).normal(size=(300, 3)))
    if P is not None:
        pts = np.concatenate((unit(P)[None], pts))
    out = _scalar_optimal(region, pts)
    inside = region.contains_sphere(pts)
    d_ref = dense_nearest(region, pts, 100001)
    assert np.all(geodesic(pts, out)[~inside] <= d_ref[~inside] + 1e-9)


def test_one_point_path_hands_over_to_the_vectorised_search(monkeypatch):
    """Past ``MAX_EVALS1`` bisections the point goes to the vectorised search (same answer)."""
    region = SuperellipseRegion(-0.7, 0.35, -0.2, 1.9, 1.0, 3.0)
    pts = unit(np.random.default_rng(9).normal(size=(200, 3)))
    pts = pts[~region.contains_sphere(pts)]
    calls = []
    search = region._nearest_tau
    monkeypatch.setattr(region, "_nearest_tau", lambda Q: calls.append(len(Q)) or search(Q))
    monkeypatch.setattr(region, "MAX_EVALS1", 0)
    out = np.array([region.nearest_boundary1(*p) for p in pts.tolist()])
    assert len(calls) > 0
    d_one, d_vec = geodesic(pts, out), geodesic(pts, region.nearest_boundary(pts))
    assert np.all(np.abs(d_one - d_vec) <= 1e-12 + 2e-13 / np.maximum(np.sin(d_vec), 1e-3))


def test_hermite_peak_is_exact_for_a_cubic():
    """The start of Newton: the maximum of the cubic through f, f' at both ends."""
    from jointlimit_addon.core.regions_search import _hermite_peak, _hermite_peaks
    lo, w = 0.3, 0.5
    f = lambda x: -(x - 0.5) ** 3 - 0.8 * (x - 0.5) ** 2 + 0.1 * x   # noqa: E731
    df = lambda x: -3.0 * (x - 0.5) ** 2 - 1.6 * (x - 0.5) + 0.1      # noqa: E731
    ends = (f(lo), f(lo + w), df(lo), df(lo + w))
    x = lo + w * _hermite_peak(*ends, w)
    assert abs(df(x)) < 1e-12 and -6.0 * (x - 0.5) - 1.6 < 0.0
    arrays = [np.array([v, v]) for v in ends]
    assert np.allclose(lo + w * _hermite_peaks(*arrays, np.array([w, w])), x, atol=1e-15)



def test_hermite_peak_with_second_derivatives_squares_the_error():
    """Given f'' at the ends, one Newton step on the quintic interpolant's slope: on a smooth
    peak (f = cos) the start is orders of magnitude closer to the maximum than the cubic's;
    on a quintic it is much closer than the cubic's; unknown f'' (nan) leaves the cubic's."""
    from jointlimit_addon.core.regions_search import _hermite_peak
    for lo, w in ((-0.05, 0.08), (-0.3, 0.4), (-0.01, 0.015)):
        ends = (math.cos(lo), math.cos(lo + w), -math.sin(lo), -math.sin(lo + w))
        cubic = abs(lo + w * _hermite_peak(*ends, w))
        quintic = abs(lo + w * _hermite_peak(*ends, w, -math.cos(lo), -math.cos(lo + w)))
        assert quintic <= 0.01 * cubic
    p = np.polynomial.Polynomial([0.2, 0.9, -1.0, -0.4, 0.3, -0.1])     # peak at x = 0.4072...
    d1, d2 = p.deriv(1), p.deriv(2)
    x = 0.1 + 0.6 * _hermite_peak(p(0.1), p(0.7), d1(0.1), d1(0.7), 0.6, d2(0.1), d2(0.7))
    assert abs(d1(x)) < 1e-3 * abs(d1(0.1 + 0.6 * _hermite_peak(p(0.1), p(0.7), d1(0.1), d1(0.7), 0.6)))
    assert _hermite_peak(0.0, 0.1, 1.0, -0.5, 1.0, math.nan, -2.0) == _hermite_peak(0.0, 0.1, 1.0, -0.5, 1.0)

def test_monotone_test_is_sound():
    """``_monotone1`` clears an interval only when f' cannot vanish in it: f' = a + b x + c x²
    with |f'''| = 2|c| <= J."""
    from jointlimit_addon.core.regions_search import _monotone1
    rng = np.random.default_rng(10)
    cleared = 0
    for a, b, c in rng.normal(size=(4000, 3)):
        w = 1.0
        ga, gb, ha, hb = a, a + b * w + c * w * w, b, b + 2.0 * c * w
        if ga * gb <= 0.0:
            continue
        x = np.linspace(0.0, w, 2001)
        keeps = np.all(np.sign(a + b * x + c * x * x) == np.sign(ga))
        if _monotone1(ga, gb, ha, hb, 2.0 * abs(c), w):
            cleared += 1
            assert keeps
    assert cleared > 1000


def test_joint_limit_single_rotation_equals_batch():
    """``JointLimit.clamp`` of one quaternion (the fast path) equals the batch result."""
    from jointlimit_addon.core import quat
    from jointlimit_addon.core.limits import JointLimit
    q = quat.random_unit(300, np.random.default_rng(11))
    for shape in ("ELLIPSE", "SUPERELLIPSE"):
        for correction in ("OPTIMAL", "SIMPLE"):
            lim = JointLimit(shape=shape, swing_x=(-0.2, 1.9), swing_z=(-0.7, 0.35), twist=(-0.5, 0.5),
                             correction=correction, exponent=(1.5, 6.0))
            single = np.array([lim.clamp(x) for x in q])
            assert quat.angle_between(single, lim.clamp(q)).max() <= 1e-12
