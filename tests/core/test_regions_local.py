"""The one-point short way of the smooth shapes (``regions_local``): Newton from a start node and
two certificates that its maximum is the global nearest point."""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from jointlimit_addon.core import quat
from jointlimit_addon.core.limits import JointLimit
from jointlimit_addon.core.regions_axes import EllipseAxesRegion, SuperellipseAxesRegion
from jointlimit_addon.core.regions_search import _OutlineSearch
from jointlimit_addon.core.regions_smooth import EllipseRegion, SuperellipseRegion, _sphere1
from region_checks import dense_nearest, geodesic

SETTINGS = dict(max_examples=30, deadline=None)


def half_tan(deg):
    return math.tan(math.radians(deg) / 2.0)


def unit(v):
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def make(kind, fit, z, x, m=4.0, n=4.0):
    (s0, s1), (t0, t1) = ((half_tan(a), half_tan(b)) for a, b in (z, x))
    if kind == "ELLIPSE":
        return (EllipseAxesRegion if fit == "AXES" else EllipseRegion)(s0, s1, t0, t1)
    return (SuperellipseAxesRegion if fit == "AXES" else SuperellipseRegion)(s0, s1, t0, t1, m, n)


# ranges containing 0 (both fits accept them), often asymmetric, up to nearly a half turn
sides = st.floats(1.0, 175.0)
exponents = st.one_of(st.sampled_from([1.0, 1.5, 2.0, 2.5, 4.0, 10.0]), st.floats(1.0, 20.0))


@st.composite
def regions(draw):
    z, x = (-draw(sides), draw(sides)), (-draw(sides), draw(sides))
    return make(draw(st.sampled_from(["ELLIPSE", "SUPERELLIPSE"])), draw(st.sampled_from(["INSCRIBED", "AXES"])),
                z, x, draw(exponents), draw(exponents))


REGIONS = [
    make("ELLIPSE", "INSCRIBED", (-20, 120), (-15, 25)),
    make("SUPERELLIPSE", "INSCRIBED", (-20, 120), (-15, 25)),
    make("ELLIPSE", "AXES", (-10, 150), (-60, 20)),
    make("SUPERELLIPSE", "AXES", (-10, 150), (-60, 20), 3.0, 5.0),
]


def outside_points(region, count, seed):
    P = unit(np.random.default_rng(seed).normal(size=(count, 3)))
    return P[~region.contains_sphere(P)]


def f_at(P, s, t):
    return float(np.dot(P, _sphere1(s, t)))


def global_search(region, p, seed=None):
    return _OutlineSearch.nearest_boundary_st1(region, *p, seed=seed)


def local_maxima(region, p):
    """Newton's maxima from every start node: ``(tau, x_e, f'', s, t, ds, dt)``."""
    found = (region._newton1(*p, tau0) for tau0, *_ in region._coarse1)
    return [m for m in found if m is not None]


@settings(**SETTINGS)
@given(regions(), st.integers(0, 2**32 - 1))
def test_short_way_finds_the_global_nearest_point(region, seed):
    """Whatever way a point takes, its nearest point is as near as the global search's and as
    near as the nearest of 20001 outline samples."""
    P = outside_points(region, 200, seed)
    near_outline = unit(region.boundary_points_sphere(16) * 1.001 + 1e-3)
    P = np.concatenate((P, near_outline[~region.contains_sphere(near_outline)]))
    short = np.array([_sphere1(*region.nearest_boundary_st1(*p)) for p in P.tolist()])
    full = np.array([_sphere1(*global_search(region, p)) for p in P.tolist()])
    d_short, d_full = geodesic(P, short), geodesic(P, full)
    assert np.all(np.abs(d_short - d_full) <= 1e-12 + 2e-13 / np.maximum(np.sin(d_full), 1e-3))
    assert np.all(d_short <= dense_nearest(region, P, 20001) + 1e-9)


@pytest.mark.parametrize("region", REGIONS, ids=lambda r: type(r).__name__)
def test_certificates_reject_every_local_maximum_that_is_not_global(region):
    """Newton from every start node finds the local maxima of ``f``; of those farther than the
    nearest outline sample, neither certificate accepts any, and the global search seeded with
    one still finds the nearest point. Both certificates meet such maxima here (the test would
    notice one that accepts them)."""
    P = outside_points(region, 150, 3)
    d_ref = dense_nearest(region, P, 20001)
    rejected = {"tangent": 0, "nodes": 0}
    for p, d in zip(P.tolist(), d_ref):
        px, py, pz = p
        for tau, x_e, ddf, s, t, ds, dt in local_maxima(region, p):
            if geodesic(np.array(p), np.array(_sphere1(s, t))) <= d + 1e-9:
                continue
            f = f_at(p, s, t)
            if py + f > region.POLE_MARGIN:
                assert not region._tangent_separates1(px, py, pz, s, t, ds, dt)
                rejected["tangent"] += 1
            else:
                assert not region._nodes_bound1(px, py, pz, tau, f, ddf)
                rejected["nodes"] += 1
            seeded = _sphere1(*global_search(region, p, seed=(tau, x_e, ddf, (s, t))))
            assert geodesic(np.array(p), np.array(seeded)) <= d + 1e-9
    assert rejected["tangent"] > 20 and rejected["nodes"] > 20


@pytest.mark.parametrize("region", REGIONS, ids=lambda r: type(r).__name__)
def test_most_points_outside_take_the_short_way(region, monkeypatch):
    """The short way is what one rotation usually costs: a certificate settles nearly every
    point outside; the rest go to the global search (seeded or not)."""
    P = outside_points(region, 400, 5)
    searched = []
    monkeypatch.setattr(_OutlineSearch, "nearest_boundary_st1", lambda self, *a, **k: searched.append(a) or (0.0, 0.0))
    for p in P.tolist():
        region.nearest_boundary_st1(*p)
    assert len(searched) <= 0.2 * len(P)


def test_outlines_with_unbounded_curvature_take_the_global_search():
    """Superellipses with an exponent below 2 have no start nodes: every point goes to the
    global search (Newton's quadratic convergence, which the certificates rely on, fails next
    to their axis points)."""
    region = make("SUPERELLIPSE", "INSCRIBED", (-20, 120), (-15, 25), 1.5, 4.0)
    assert region._coarse1 == ()
    P = outside_points(region, 50, 6)
    short = np.array([_sphere1(*region.nearest_boundary_st1(*p)) for p in P.tolist()])
    full = np.array([_sphere1(*global_search(region, p)) for p in P.tolist()])
    assert np.array_equal(short, full)


@settings(**SETTINGS)
@given(regions())
def test_outlines_run_counter_clockwise(region):
    """Certificate 1 takes the region to lie left of the outline's tangent."""
    s, t = region.boundary_points(512).T
    assert 0.5 * np.sum(s * np.roll(t, -1) - np.roll(s, -1) * t) > 0.0


@pytest.mark.parametrize("shape", ["ELLIPSE", "SUPERELLIPSE"])
@pytest.mark.parametrize("fit", ["INSCRIBED", "AXES"])
def test_one_rotation_equals_the_batch_of_rotations(shape, fit):
    """``JointLimit.clamp`` of one rotation (the short way) equals the vectorised batch."""
    lim = JointLimit(shape=shape, swing_x=(-0.2, 1.9), swing_z=(-0.7, 0.35), twist=(-0.5, 0.5), fit=fit)
    q = quat.random_unit(300, np.random.default_rng(7))
    one = np.array([lim.clamp(row) for row in q])
    batch = lim.clamp(np.repeat(q, 40, axis=0))[::40]
    assert np.abs(one - batch).max() <= 1e-11


def test_seeded_search_takes_a_nearer_node_than_the_seed():
    """A thin region (±0.5° across): from just beyond its lower axis limit, Newton from the
    best start node climbs to the local maximum on the far side, which the tangent rejects;
    the global search seeded with it must still take the nearer axis point, a node."""
    region = make("ELLIPSE", "AXES", (-5.0, 37.0), (-1.0, 1.0))
    s0, s1, t0, t1 = region.bounds
    p = _sphere1(0.0, 1.05 * t0)
    nearest = np.array(_sphere1(0.0, t0))
    far_side = [m for m in local_maxima(region, p) if m[4] > 0.0]
    assert far_side
    tau, x_e, ddf, s, t, ds, dt = far_side[0]
    assert not region._tangent_separates1(*p, s, t, ds, dt)
    for st in (global_search(region, p, seed=(tau, x_e, ddf, (s, t))), region.nearest_boundary_st1(*p)):
        assert geodesic(np.array(p), np.array(_sphere1(*st))) <= geodesic(np.array(p), nearest) + 1e-12


# --- the short way for a batch (``_short_way``: the vectorised path's first step) -------------


@settings(**SETTINGS)
@given(regions(), st.integers(0, 2**32 - 1))
def test_batch_short_way_finds_the_global_nearest_point(region, seed):
    """The rows a certificate proves in a batch are as near as the global search's point and
    the nearest of 20001 outline samples; a batch's points (proved or searched) too."""
    P = outside_points(region, 200, seed)
    assume(len(P) > 0)      # a region covering nearly the whole sphere
    tau, proved = region._short_way(P)
    full = np.array([_sphere1(*global_search(region, p)) for p in P.tolist()])
    d_full = geodesic(P, full)
    d_short = geodesic(P, region._sphere(tau))
    tol = 1e-12 + 2e-13 / np.maximum(np.sin(d_full), 1e-3)
    assert np.all(np.abs(d_short - d_full)[proved] <= tol[proved])
    batch = region.nearest_boundary(np.repeat(P, 2, axis=0))[::2]    # past ONE_BY_ONE: the batch path
    assert np.all(np.abs(geodesic(P, batch) - d_full) <= tol)
    assert np.all(geodesic(P, batch) <= dense_nearest(region, P, 20001) + 1e-9)


@pytest.mark.parametrize("region", REGIONS, ids=lambda r: type(r).__name__)
def test_batch_certificates_reject_every_local_maximum_that_is_not_global(region):
    """The vectorised certificates accept none of the local maxima that are farther than the
    nearest outline sample (Newton from every start node finds them), and both meet such maxima."""
    P = outside_points(region, 150, 3)
    d_ref = dense_nearest(region, P, 20001)
    rows, maxima = [], []
    for r, (p, d) in enumerate(zip(P.tolist(), d_ref)):
        for m in local_maxima(region, p):
            if geodesic(np.array(p), np.array(_sphere1(*m[3:5]))) > d + 1e-9:
                rows.append(r)
                maxima.append(m)
    tau, _, ddf, s, t, ds, dt = (np.array(c) for c in zip(*maxima))
    Q = P[rows]
    f = np.sum(Q * np.stack(_sphere1(s, t), axis=-1), axis=1)
    cap = Q[:, 1] + f > region.POLE_MARGIN
    assert cap.sum() > 20 and (~cap).sum() > 20
    assert not region._tangent_separates(Q[cap], s[cap], t[cap], ds[cap], dt[cap]).any()
    assert not region._nodes_bound(Q, Q @ region._Bx, tau, f, ddf).any()


@pytest.mark.parametrize("region", REGIONS, ids=lambda r: type(r).__name__)
def test_most_points_of_a_batch_take_the_short_way(region):
    P = outside_points(region, 400, 5)
    assert region._short_way(P)[1].mean() >= 0.8


@pytest.mark.parametrize("unproved", [5, 150])
def test_batch_rows_no_certificate_proves(monkeypatch, unproved):
    """Rows the batch's certificates leave go one at a time when they are a few, else to the
    vectorised global search; either way the same points as the one-rotation path."""
    region = REGIONS[0]
    P = outside_points(region, 400, 8)
    short_way = type(region)._short_way

    def leave_some(self, Q):
        tau, proved = short_way(self, Q)
        proved[:unproved] = False
        return tau, proved

    monkeypatch.setattr(type(region), "_short_way", leave_some)
    one = np.array([_sphere1(*region.nearest_boundary_st1(*p)) for p in P.tolist()])
    assert np.abs(region.nearest_boundary(P) - one).max() <= 1e-12
