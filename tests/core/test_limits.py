"""Projection-based joint limits: regions, OPTIMAL/SIMPLE corrections, twist [000 §3-6, SPEC §2]."""

import importlib.util
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointlimit_addon.core import quat
from jointlimit_addon.core.limits import JointLimit
from jointlimit_addon.core.projection import from_swing_twist, plane_to_sphere, swing_point, swing_twist, wrap_angle
from jointlimit_addon.core.regions import OvalRegion, PlaneRegion, PolygonRegion, RectRegion, outline_points

HAVE_SMOOTH = importlib.util.find_spec("jointlimit_addon.core.regions_smooth") is not None
needs_smooth = pytest.mark.skipif(not HAVE_SMOOTH, reason="core/regions_smooth.py not written yet")
SHAPES = ["RECT", "OVAL", "POLYGON", pytest.param("ELLIPSE", marks=needs_smooth),
          pytest.param("SUPERELLIPSE", marks=needs_smooth)]
POLE = np.array([0.0, -1.0, 0.0])

# Outlines on the (s, t) plane: convex with arcs, non-convex, and a lens of two arcs.
OUTLINES = [
    [(-0.3, -0.2), (0.5, -0.2, 0.5), (0.6, 0.4), (-0.2, 0.7, -0.3)],
    [(-1.0, -1.0), (2.0, -1.0), (2.0, 0.0), (0.0, 0.0, 0.8), (0.0, 3.0), (-1.0, 3.0)],  # an L
    [(-0.5, 0.1, 0.6), (1.5, 0.1, 0.6)],
    [(-4.0, -1.0), (3.0, -2.0, 0.3), (5.0, 4.0), (1.0, 1.0), (-3.0, 6.0, -0.2)],  # wide, reflex vertex
]


def geodesic(a, b):
    return 2.0 * np.arctan2(np.linalg.norm(a - b, axis=-1), np.linalg.norm(a + b, axis=-1))


def make(shape, swing_x=(-0.2, 1.9), swing_z=(-0.7, 0.35), outline_index=0, **kw):
    if shape == "POLYGON":
        return JointLimit(shape="POLYGON", outline=OUTLINES[outline_index], **kw)
    return JointLimit(shape=shape, swing_x=swing_x, swing_z=swing_z, **kw)


def plane_outline(lim, n=4000):
    """Dense (s, t) boundary samples built from the limit's parameters, independently of the
    region code, mapped to the sphere."""
    if lim.shape == "POLYGON":
        return _polygon_outline(lim.outline, n)
    s0, s1 = np.tan(np.array(lim.swing_z) / 2)
    t0, t1 = np.tan(np.array(lim.swing_x) / 2)
    sa, sb, ta, tb = (s1 - s0) / 2, (s1 + s0) / 2, (t1 - t0) / 2, (t1 + t0) / 2
    k = n // 4
    if lim.shape == "RECT":
        ts = np.tan(np.linspace(np.arctan(t0), np.arctan(t1), k))
        ss = np.tan(np.linspace(np.arctan(s0), np.arctan(s1), k))
        s = np.concatenate((np.full(k, s0), np.full(k, s1), ss, ss))
        t = np.concatenate((ts, ts, np.full(k, t0), np.full(k, t1)))
    elif lim.shape == "OVAL":
        r = min(sa, ta)
        ca = (sb, t0 + r) if sa < ta else (s0 + r, tb)
        cb = (sb, t1 - r) if sa < ta else (s1 - r, tb)
        u = np.linspace(0, 1, k)
        phi = np.linspace(0, 2 * np.pi, 2 * k)
        ls, lt = ca[0] + u * (cb[0] - ca[0]), ca[1] + u * (cb[1] - ca[1])  # the straight parts
        s = np.concatenate((ca[0] + r * np.cos(phi), cb[0] + r * np.cos(phi), ls + r * (sa < ta), ls - r * (sa < ta)))
        t = np.concatenate((ca[1] + r * np.sin(phi), cb[1] + r * np.sin(phi), lt + r * (sa >= ta), lt - r * (sa >= ta)))
        # keep only the boundary part: points at distance r from the centre segment
        keep = _stadium_dist(s, t, ca, cb) >= r - 1e-12
        s, t = s[keep], t[keep]
    else:
        phi = np.linspace(0, 2 * np.pi, n)
        m, nn = lim.exponent if lim.shape == "SUPERELLIPSE" else (2.0, 2.0)
        c, sn = np.cos(phi), np.sin(phi)
        s = sb + sa * np.sign(c) * np.abs(c) ** (2 / m)
        t = tb + ta * np.sign(sn) * np.abs(sn) ** (2 / nn)
    return plane_to_sphere(s, t)


def _stadium_dist(s, t, ca, cb):
    d = np.array(cb) - np.array(ca)
    l2 = d @ d
    u = np.clip(((s - ca[0]) * d[0] + (t - ca[1]) * d[1]) / l2, 0, 1) if l2 > 0 else 0 * s
    return np.hypot(s - ca[0] - u * d[0], t - ca[1] - u * d[1])


def _polygon_outline(outline, n):
    pts = []
    verts = [np.array(v[:2], float) for v in outline]
    k = n // len(verts)
    for i, v in enumerate(outline):
        a, b = verts[i], verts[(i + 1) % len(verts)]
        bulge = v[2] if len(v) == 3 else 0.0
        u = np.linspace(0, 1, k, endpoint=False)[:, None]
        if bulge == 0:
            pts.append(a + u * (b - a))
            continue
        theta = 4 * np.arctan(bulge)
        chord = b - a
        mid = (a + b) / 2 + bulge / 2 * np.array([chord[1], -chord[0]])  # sagitta to the right
        # circle through a, mid, b (relative to a: tiny outlines far from the origin stay exact)
        ax, ay, bx, by, cx, cy = 0.0, 0.0, *(mid - a), *(b - a)
        dd = 2 * (ax * (by - cy) + bx * (cy - ay) + cx * (ay - by))
        ux = ((ax**2 + ay**2) * (by - cy) + (bx**2 + by**2) * (cy - ay) + (cx**2 + cy**2) * (ay - by)) / dd
        uy = ((ax**2 + ay**2) * (cx - bx) + (bx**2 + by**2) * (ax - cx) + (cx**2 + cy**2) * (bx - ax)) / dd
        r = math.hypot(ux, uy)
        start = math.atan2(-uy, -ux)
        phi = start + theta * u[:, 0]
        pts.append(a + np.stack((ux + r * np.cos(phi), uy + r * np.sin(phi)), -1))
    pts = np.concatenate(pts)
    return plane_to_sphere(pts[:, 0], pts[:, 1])


def special_quats(rng, n=48):
    """Random rotations plus the pole, points 1e-9 from it, identity and large swings."""
    q = [quat.random_unit(n, rng)]
    a = rng.uniform(-np.pi, np.pi, 6)
    axis = np.stack((np.cos(a), np.zeros(6), np.sin(a)), -1)
    q.append(quat.from_axis_angle(axis, np.full(6, np.pi)))  # exactly at the pole
    q.append(quat.from_axis_angle(axis, np.full(6, np.pi - 1e-9)))  # next to it
    q.append(quat.mul(quat.from_axis_angle(axis, np.full(6, np.pi - 1e-9)),
                      quat.from_axis_angle([0, 1, 0], rng.uniform(-3, 3, 6))))
    q.append(quat.from_axis_angle(axis, rng.uniform(2.0, 3.1, 6)))
    q.append(np.array([[1.0, 0, 0, 0], [0.0, 0, 1, 0], [0.0, 1, 0, 0]]))
    return np.concatenate(q)


def inside_quats(lim, rng, n=32):
    """Rotations inside the limit, by rejection in the region's bounding box."""
    s0, s1, t0, t1 = lim.region.bounds
    s = rng.uniform(s0, s1, 40 * n)
    t = rng.uniform(t0, t1, 40 * n)
    ok = lim.region.contains_st(s, t)
    lo, hi = lim.twist if lim.twist else (-np.pi, np.pi)
    if lim.fix_twist:
        lo = hi = 0.0
    psi = lo + (hi - lo) * rng.random(ok.sum())     # (not rng.uniform: it refuses a range (0.0, -0.0))
    return from_swing_twist(s[ok][:n], t[ok][:n], psi[:n])


angle = st.floats(-2.9, 2.9)


@st.composite
def limits(draw, shape):
    kw = {}
    if shape == "POLYGON":
        kw["outline_index"] = draw(st.integers(0, len(OUTLINES) - 1))
    else:
        a0, a1 = sorted((draw(angle), draw(angle)))
        b0, b1 = sorted((draw(angle), draw(angle)))
        kw["swing_z"] = (a0, max(a1, a0 + 0.1))
        kw["swing_x"] = (b0, max(b1, b0 + 0.1))
        if shape == "SUPERELLIPSE":
            kw["exponent"] = (draw(st.floats(1.5, 8.0)), draw(st.floats(1.5, 8.0)))
    tw = draw(st.one_of(st.none(), st.tuples(st.floats(-3.1, 3.1), st.floats(-3.1, 3.1)).map(sorted)))
    kw["twist"] = tw
    kw["fix_twist"] = draw(st.booleans()) if tw is None else False
    return kw


def check_limit(lim, q, rng):
    c = lim.clamp(q)
    assert np.all(np.isfinite(c))
    np.testing.assert_allclose(np.linalg.norm(c, axis=-1), 1.0, atol=1e-14)
    # the result is inside, and applying twice equals applying once
    assert np.all(lim.contains(c))
    np.testing.assert_allclose(lim.clamp(c), c, atol=1e-15)
    # points inside stay unchanged
    qi = inside_quats(lim, rng)
    assert np.all(lim.contains(qi))
    np.testing.assert_allclose(lim.clamp(qi), qi, atol=1e-15)
    # the one-rotation fast path gives the same answers
    for k in range(0, len(q), 7):
        np.testing.assert_allclose(lim.clamp(q[k]), c[k], atol=1e-12)
        assert lim.contains(q[k]) == lim.contains(q[k : k + 1])[0]
    # twist of the result [000 eq.44-46]
    psi_q, psi_c = swing_twist(q)[2], swing_twist(c)[2]
    P, Pc = swing_point(q), swing_point(c)
    not_pole = np.linalg.norm(P - POLE, axis=-1) > 1e-6
    if lim.fix_twist:
        np.testing.assert_allclose(psi_c[not_pole], 0.0, atol=1e-9)
    elif lim.twist is None:
        assert np.all(np.abs(wrap_angle(psi_c - psi_q)[not_pole]) < 1e-8)
    else:
        lo, hi = lim.twist
        inside = (psi_q >= lo) & (psi_q <= hi)
        assert np.all(np.abs(wrap_angle(psi_c - psi_q))[inside & not_pole] < 1e-8)
        # outside: the range end nearer round the circle of angles [000 eq.44-45]
        to_lo, to_hi = np.abs(wrap_angle(psi_q - lo)), np.abs(wrap_angle(psi_q - hi))
        nearer = np.where(to_lo < to_hi, lo, hi)
        clear = ~inside & not_pole & (np.abs(to_lo - to_hi) > 1e-9)
        assert np.all(np.abs(wrap_angle(psi_c - nearer))[clear] < 1e-8)
        err = np.minimum(np.abs(wrap_angle(psi_c - lo)), np.abs(wrap_angle(psi_c - hi)))
        assert np.all(err[~inside & not_pole] < 1e-8)
    return c, P, Pc


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("correction", ["OPTIMAL", "SIMPLE"])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_correction_properties(shape, correction, data):
    kw = data.draw(limits(shape))
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    lim = make(shape, correction=correction, **kw)
    q = special_quats(rng)
    c, P, Pc = check_limit(lim, q, rng)
    outside = ~lim.region.contains_sphere(P)
    if correction == "OPTIMAL":
        # no farther than any point of a dense, independent boundary sampling (4000 points)
        B = plane_outline(lim)
        d_best = geodesic(P[outside][:, None, :], B[None]).min(axis=1)
        assert np.all(geodesic(P[outside], Pc[outside]) <= d_best + 1e-9)
        # and never farther than SIMPLE
        simple = make(shape, correction="SIMPLE", **kw)
        Ps = swing_point(simple.clamp(q))
        assert np.all(geodesic(P, Pc) <= geodesic(P, Ps) + 1e-9)
    np.testing.assert_allclose(Pc[~outside], P[~outside], atol=1e-14)


@pytest.mark.parametrize("shape", SHAPES)
def test_outline_points_lie_on_the_boundary(shape):
    lim = make(shape, swing_x=(-1.0, 2.8), swing_z=(-2.5, 0.4), outline_index=3)
    pts = outline_points(lim, 200)
    assert pts.shape == (200, 3)
    np.testing.assert_array_equal(pts[0], pts[-1])
    np.testing.assert_allclose(np.linalg.norm(pts, axis=-1), 1.0, atol=1e-14)
    assert np.all(np.linalg.norm(pts - POLE, axis=-1) > 1e-3)
    # on the boundary: inside; far points clamp inside
    assert np.all(lim.region.contains_sphere(pts))
    st_pts = lim.region.boundary_points(100)
    assert st_pts.shape == (100, 2)
    assert np.all(lim.region.contains_st(st_pts[:, 0], st_pts[:, 1]))
    far = lim.region.clamp_optimal(plane_to_sphere(st_pts[:, 0] * 1e6 + 1.0, st_pts[:, 1] * 1e6))
    assert np.all(lim.region.contains_sphere(far))
    # consecutive points are close: an ordered, connected line
    steps = geodesic(pts[1:], pts[:-1])
    assert steps.max() < 0.5


@pytest.mark.parametrize("width", [1e-3, 1e-6, 1e-9])
@pytest.mark.parametrize("shape", ["RECT", "OVAL", "POLYGON"])
def test_tiny_regions_stay_exact(shape, width):
    """Edges far shorter than their circles: the side of each edge must still be right."""
    if shape == "POLYGON":
        outline = [(0.5 + width * v[0], -1.0 + width * v[1], *v[2:]) for v in OUTLINES[0]]
        lim = JointLimit("POLYGON", outline=outline)
    else:
        lim = JointLimit(shape, swing_z=(0.3, 0.3 + width), swing_x=(-2.0, -2.0 + 3 * width))
    q = quat.random_unit(400, np.random.default_rng(11))
    c = lim.clamp(q)
    assert np.all(lim.contains(c))
    np.testing.assert_allclose(lim.clamp(c), c, atol=1e-15)
    P, Pc = swing_point(q), swing_point(c)
    B = plane_outline(lim) if shape != "POLYGON" else _polygon_outline(outline, 4000)
    d_best = geodesic(P[:, None, :], B[None]).min(axis=1)
    assert np.all(geodesic(P, Pc) <= d_best + 1e-12)
    assert np.all(geodesic(Pc, B[0]) < 10 * width)


def test_rect_optimal_matches_paper_eq_11():
    """Foot of the spherical perpendicular to the edge s = s0 [000 eq.11]."""
    reg = RectRegion(-0.4, 0.8, -1.5, 2.0)
    s0 = reg.s0
    for sp, tp in [(-0.6, 0.3), (-0.9, -0.7), (-1.1, 1.4), (-0.45, -1.2)]:
        tc = (sp**2 + tp**2 - 2 * s0 * sp - 1) / (2 * tp)
        rc = math.sqrt(s0**2 + tc**2 + 1)
        tf = tc + math.copysign(rc, tp)
        assert reg.t0 <= tf <= reg.t1
        got = reg.clamp_optimal(plane_to_sphere(sp, tp))
        np.testing.assert_allclose(got, plane_to_sphere(s0, tf), atol=1e-14)


def test_rect_optimal_on_the_axis_matches_eq_12():
    """t_p = 0: the foot is (s0, 0) inside the nearest-point region s_p(s_p - 2 s0) <= 1 [000 eq.12];
    outside it the answer is a corner."""
    reg = RectRegion(0.5, 2.0, -0.3, 0.3)
    for sp in (0.2, -0.1, 0.5 - math.sqrt(1.25) + 1e-3):
        np.testing.assert_allclose(reg.clamp_optimal(plane_to_sphere(sp, 0.0)), plane_to_sphere(0.5, 0.0), atol=1e-14)
    # beyond the edge circle's spherical centre (s0 - sqrt(s0² + 1), 0) the foot (s0, 0) is the
    # farthest point of that circle, so something else is nearer
    P = plane_to_sphere(-0.7, 0.0)
    got = reg.clamp_optimal(P)
    assert geodesic(P, got) < geodesic(P, plane_to_sphere(0.5, 0.0)) - 1e-3
    assert reg.contains_sphere(got)


def test_paper_fig27_simple_goes_round_the_wrong_side():
    """[000 Fig.27]: with a wide RECT the per-axis clamp of a far point lands on the far side of
    the sphere; OPTIMAL finds the true nearest point across the back."""
    kw = dict(shape="RECT", swing_z=(-0.4, 2.9), swing_x=(-0.3, 0.3))
    q = quat.from_axis_angle([0, 0, 1], -3.0)  # swing -172 deg about Z, just past the pole
    P = swing_point(q)
    d_opt = geodesic(P, swing_point(JointLimit(correction="OPTIMAL", **kw).clamp(q)))
    d_simple = geodesic(P, swing_point(JointLimit(correction="SIMPLE", **kw).clamp(q)))
    # across the back, to a corner of the far edge s = s1: on that edge's circle (which passes
    # through the pole) the foot (s1, 0) is the point farthest from P
    corner = plane_to_sphere(math.tan(1.45), math.tan(0.15))
    assert d_opt == pytest.approx(geodesic(P, corner), abs=1e-12)
    assert d_opt < 2 * np.pi - 3.0 - 2.9
    assert d_simple == pytest.approx(3.0 - 0.4, abs=1e-12)  # all the way round to -0.4
    # off the axis too: OPTIMAL beats SIMPLE by far and matches dense sampling
    q = quat.mul(quat.from_axis_angle([1, 0, 0], 0.5), quat.from_axis_angle([0, 0, 1], -2.8))
    lim = JointLimit(correction="OPTIMAL", **kw)
    P = swing_point(q)
    d_opt = geodesic(P, swing_point(lim.clamp(q)))
    d_simple = geodesic(P, swing_point(JointLimit(correction="SIMPLE", **kw).clamp(q)))
    d_best = geodesic(P, plane_outline(lim, 20000)).min()
    assert d_opt <= d_best + 1e-12 and d_opt > d_best - 1e-4
    assert d_simple > d_opt + 1.0


def gravity_run(lim, down, steps=300, step=0.05):
    """Pull the swing point toward ``down`` a little, correct, repeat [000 Fig.29]."""
    q = np.array([1.0, 0.0, 0.0, 0.0])
    for _ in range(steps):
        P = swing_point(q)
        axis = np.cross(P, down)
        n = np.linalg.norm(axis)
        if n > 1e-12:
            a = min(step, math.atan2(n, P @ down))
            q = quat.mul(quat.from_axis_angle(axis / n, a), q)
        q = lim.clamp(q)
    return swing_point(q)


DOWN = plane_to_sphere(1.5, -2.5)


@pytest.mark.parametrize("shape", ["RECT", "OVAL", pytest.param("ELLIPSE", marks=needs_smooth),
                                   pytest.param("SUPERELLIPSE", marks=needs_smooth)])
def test_gravity_settles_at_the_lowest_point_with_optimal(shape):
    kw = dict(shape=shape, swing_z=(-1.2, 0.3), swing_x=(-2.0, 0.4))
    lim = JointLimit(correction="OPTIMAL", **kw)
    P = gravity_run(lim, DOWN)
    d_low = geodesic(DOWN, plane_outline(lim, 40000)).min()
    assert not lim.region.contains_sphere(DOWN)
    assert geodesic(P, DOWN) <= d_low + 1e-12
    assert geodesic(P, DOWN) == pytest.approx(d_low, abs=1e-5)


@needs_smooth
def test_paper_fig29_simple_ellipse_drifts():
    """[000 Fig.29]: under repeated "gravity then correction" an ELLIPSE with the SIMPLE
    correction (toward the centre) settles away from the lowest point."""
    kw = dict(shape="ELLIPSE", swing_z=(-1.2, 0.3), swing_x=(-2.0, 0.4))
    lim = JointLimit(correction="SIMPLE", **kw)
    P = gravity_run(lim, DOWN)
    B = plane_outline(lim, 40000)
    lowest = B[np.argmin(geodesic(DOWN, B))]
    assert geodesic(P, lowest) > 0.05
    assert geodesic(P, DOWN) > geodesic(DOWN, B).min() + 1e-3


def test_polygon_gravity_optimal():
    lim = make("POLYGON", outline_index=1)
    down = plane_to_sphere(3.0, 2.5)
    P = gravity_run(lim, down)
    d_low = geodesic(down, plane_outline(lim, 40000)).min()
    assert geodesic(P, down) == pytest.approx(d_low, abs=1e-5)


def test_oval_orientations_and_circle():
    upright = OvalRegion(-0.2, 0.2, -1.0, 1.0)
    assert upright.contains_st(0.0, 0.95) and not upright.contains_st(0.19, 0.95)
    lying = OvalRegion(-1.0, 1.0, -0.2, 0.2)
    assert lying.contains_st(0.95, 0.0) and not lying.contains_st(0.95, 0.19)
    circle = OvalRegion(-0.5, 0.5, 1.0, 2.0)
    assert circle.contains_st(0.5, 1.5) and not circle.contains_st(0.36, 1.86)
    # the circle centred on the origin is symmetric: SIMPLE (toward the centre) is optimal [000 §4.4]
    centred = OvalRegion(-0.5, 0.5, -0.5, 0.5)
    P = plane_to_sphere(np.array([3.0, -0.1, 40.0]), np.array([1.0, -2.0, -30.0]))
    s, t = centred.clamp_simple(np.array([3.0, -0.1, 40.0]), np.array([1.0, -2.0, -30.0]))
    np.testing.assert_allclose(centred.clamp_optimal(P), plane_to_sphere(s, t), atol=1e-14)


def test_polygon_contains_nonconvex():
    reg = PolygonRegion(OUTLINES[1])
    # the arc from (0, 0) to (0, 3) bulges to +s (sagitta 1.2): circle centre (-0.3375, 1.5), r 1.5375
    s = np.array([-0.5, 1.5, -0.5, 1.0, 1.5, 0.3, 1.0, -1.0, 1.15, 1.25])
    t = np.array([2.5, -0.5, -0.5, 2.0, 1.5, 0.3, 0.3, 0.0, 1.5, 1.5])
    expected = [True, True, True, True, False, True, False, True, True, False]
    assert list(reg.contains_st(s, t)) == expected


def test_region_base_class_is_abstract():
    base = PlaneRegion()
    with pytest.raises(NotImplementedError):
        base.contains_st(0.0, 0.0)
    with pytest.raises(NotImplementedError):
        base.clamp_optimal(np.array([0.0, 1.0, 0.0]))


@pytest.mark.parametrize("kw", [
    dict(swing_x=(0.5, 0.2), swing_z=(-0.3, 0.3)),  # inverted
    dict(swing_x=(0.2, 0.2), swing_z=(-0.3, 0.3)),  # degenerate
    dict(swing_x=(-0.2, 0.2), swing_z=(-np.pi, 0.3)),  # outside (-pi, pi)
    dict(swing_x=(-0.2, 3.2), swing_z=(-0.3, 0.3)),
    dict(swing_x=(-0.2, np.nan), swing_z=(-0.3, 0.3)),
    dict(swing_x=None, swing_z=(-0.3, 0.3)),
    dict(swing_x=(-0.2, 0.2), swing_z=(-0.3, 0.3), twist=(0.5, -0.5)),
    dict(swing_x=(-0.2, 0.2), swing_z=(-0.3, 0.3), twist=(-4.0, 0.5)),
    dict(swing_x=(-0.2, 0.2), swing_z=(-0.3, 0.3), correction="BEST"),
    dict(swing_x=(-0.2, 0.2), swing_z=(-0.3, 0.3), outline=OUTLINES[0]),
    dict(shape="CIRCLE", swing_x=(-0.2, 0.2), swing_z=(-0.3, 0.3)),
    dict(shape="POLYGON"),
])
def test_bad_limits_raise(kw):
    kw.setdefault("shape", "RECT")
    with pytest.raises(ValueError):
        JointLimit(**kw)


@pytest.mark.parametrize("outline", [
    [(0, 0), (1, 1), (1, 0), (0, 1)],  # bow tie
    [(0, 0), (1, 0), (2, 0)],  # no area
    [(0, 0), (1, 0), (1, 0), (0, 1)],  # repeated vertex
    [(0, 0), (1, 0)],  # two points, straight
    [(0, 0), (np.nan, 0), (0, 1)],
    [(0, 0, 0, 0), (1, 0), (0, 1)],
    [(0, 0, -1.0), (2, 0), (1, 1.5)],  # half circle crossing the other two edges
])
def test_bad_outlines_raise(outline):
    with pytest.raises(ValueError):
        PolygonRegion(outline)


def test_a_symmetric_bow_tie_is_named_as_crossing_itself():
    """Its halves' areas cancel: it said the outline encloses no area."""
    with pytest.raises(ValueError, match="intersects itself"):
        PolygonRegion([(-1, -1), (1, 1), (1, -1), (-1, 1)])
    with pytest.raises(ValueError, match="encloses no area"):
        PolygonRegion([(0, 0), (1, 0), (2, 0)])


def test_full_circle_from_two_arcs_and_either_orientation():
    ccw = PolygonRegion([(1.0, 0.0, 1.0), (-1.0, 0.0, 1.0)])
    cw = PolygonRegion([(1.0, 0.0, -1.0), (-1.0, 0.0, -1.0)])
    for reg in (ccw, cw):
        assert reg.contains_st(0.0, 0.99) and not reg.contains_st(0.0, 1.01)
        assert reg.contains_st(0.0, -0.99) and not reg.contains_st(0.72, 0.72)
    # the unit circle on the plane is the equator: nearest point of the pole region is straight up
    P = np.array([0.0, -0.6, 0.8])
    np.testing.assert_allclose(ccw.clamp_optimal(P), [0.0, 0.0, 1.0], atol=1e-15)



@pytest.mark.parametrize("bulge", [1.0, -1.0, 3.0, -0.4])
@pytest.mark.parametrize("axis", [0, 1])
def test_points_on_the_chord_of_an_arc_are_inside(bulge, axis):
    """The chord joining an arc's ends runs inside the region when the arc bulges outward: the
    rest pose and pure bends on the chord of a circle of two half-circle edges are inside (a user
    trial saw Apply move the rest pose 30° onto a vertex: the old parity test, a chord polygon XOR
    the arcs' segments, left every point of a chord out)."""
    a = math.tan(math.radians(30) / 2)
    ends = [(-a, 0.0), (a, 0.0)] if axis == 0 else [(0.0, -a), (0.0, a)]
    reg = PolygonRegion([(*ends[0], bulge), (*ends[1], bulge)])
    on_chord = [(f * a * (axis == 0), f * a * (axis == 1)) for f in (0.0, 0.3, -0.7, 0.97)]
    for s, t in on_chord:
        assert reg.contains1(s, t) and reg.contains_st(s, t), (s, t)
    assert reg.contains_st(*np.array(on_chord).T).all()
    assert JointLimit("POLYGON", outline=[(*ends[0], bulge), (*ends[1], bulge)]).contains(quat.identity())



@pytest.mark.parametrize("bulge", [1e-8, -1.69e-8, 3e-6, -1e-5])
def test_a_nearly_flat_arc_keeps_points_beyond_its_ends_out(bulge):
    """Its circle's radius is up to 1e8: its crossings and distances are taken from the arc's ends
    (from the centre, ``sqrt(r² - dt²)`` and ``|p - c| - r`` lost every digit: points 0.01 to
    0.07 beyond the ends read as inside; a review)."""
    w = 1.164
    reg = PolygonRegion([(-w, 0.0, bulge), (w, 0.0), (0.0, 0.8)])
    for s in (w + 0.01, w + 0.07, -w - 0.01, -w - 0.05):
        for t in (0.0, 1e-9, -1e-9, 0.003):
            assert not reg.contains1(s, t) and not reg.contains_st(s, t), (s, t)
    points = reg.boundary_points(400)
    assert reg.contains_st(points[:, 0], points[:, 1]).all()
    assert all(reg.contains1(*p) for p in points)
    # the SIMPLE correction lands on the outline, not on the arc's circle beyond its ends
    P = np.random.default_rng(1).uniform(-2.0, 2.0, size=(300, 2))
    assert reg.contains_st(*reg.clamp_simple(P[:, 0], P[:, 1])).all()
    assert all(reg.contains1(*reg.clamp_simple1(*p)) for p in P)

def _parity_of_polyline(s, t, poly):
    """Even-odd test against a dense polyline (the reference)."""
    x, y = poly[:, 0], poly[:, 1]
    inside = np.zeros(len(s), dtype=bool)
    for a_s, a_t, b_s, b_t in zip(x, y, np.roll(x, -1), np.roll(y, -1)):
        cross = (a_t > t) != (b_t > t)
        with np.errstate(divide="ignore", invalid="ignore"):
            inside ^= cross & (s < a_s + (t - a_t) * (b_s - a_s) / (b_t - a_t))
    return inside


@pytest.mark.parametrize("outline", OUTLINES + [
    [(-0.3, -0.3, 0.4), (0.3, -0.3, 0.4), (0.3, 0.3, 0.4), (-0.3, 0.3, 0.4)],   # every edge bulged out
    [(0.0, -0.2, 2.5), (0.0, 0.2, 0.5)],
    [(-0.4, -0.1), (0.1, -0.35, -0.5), (0.45, 0.1, 1.2), (0.0, 0.3), (-0.3, 0.25, -0.2)],
])
def test_inside_test_equals_a_dense_outline_and_holds_on_chords(outline):
    reg = PolygonRegion(outline)
    poly = reg.boundary_points(20000)
    lo, hi = poly.min(axis=0), poly.max(axis=0)
    rng = np.random.default_rng(7)
    P = rng.uniform(lo - 0.3 * (hi - lo), hi + 0.3 * (hi - lo), size=(4000, 2))
    vertices = np.array([v[:2] for v in outline])
    arcs = [(a, b) for a, b, v in zip(vertices, np.roll(vertices, -1, axis=0), outline) if len(v) > 2 and v[2]]
    P = np.concatenate([P] + [a + np.linspace(0.05, 0.95, 7)[:, None] * (b - a) for a, b in arcs])
    near = np.concatenate([np.min(np.hypot(c[:, None, 0] - poly[None, :, 0], c[:, None, 1] - poly[None, :, 1]), axis=1)
                           for c in np.array_split(P, 40)])
    far = near > 1e-4 * np.max(hi - lo)     # the polyline's chords cut the arcs by less
    got = reg.contains_st(P[:, 0], P[:, 1])
    ref = _parity_of_polyline(P[:, 0] + 1e-12, P[:, 1] + 1e-12, poly)
    assert np.array_equal(got[far], ref[far])
    assert [reg.contains1(*p) for p in P[:500]] == got[:500].tolist()

@pytest.mark.parametrize("bad", [[np.nan, 0, 0, 1], [0, 0, 0, 0], [1, 0, 0], [[0, 0, 0, 0], [1, 0, 0, 0]]])
def test_bad_quaternions_raise(bad):
    lim = make("RECT")
    with pytest.raises(ValueError):
        lim.clamp(np.array(bad, dtype=float))
    with pytest.raises(ValueError):
        lim.contains(np.array(bad, dtype=float))


def test_twist_only_and_fixed_twist():
    lim = JointLimit("RECT", swing_x=(-1, 1), swing_z=(-1, 1), twist=(-0.5, 0.3))
    q = from_swing_twist(0.1, -0.2, np.array([-2.0, 0.0, 1.0, 3.1]))
    psi = swing_twist(lim.clamp(q))[2]
    np.testing.assert_allclose(psi, [-0.5, 0.0, 0.3, -0.5], atol=1e-14)  # 3.1 is nearer -0.5 round the circle
    np.testing.assert_allclose(swing_twist(lim.clamp(q))[0], 0.1, atol=1e-14)
    fixed = JointLimit("OVAL", swing_x=(-1, 1), swing_z=(-1, 1), fix_twist=True)
    out = fixed.clamp(from_swing_twist(3.0, 0.5, 1.0))
    s, t, psi = swing_twist(out)
    assert psi == pytest.approx(0.0, abs=1e-15)
    assert fixed.contains(out)
    # full-range twist ending at -pi still accepts psi = pi
    full = JointLimit("RECT", swing_x=(-1, 1), swing_z=(-1, 1), twist=(-np.pi, 0.2))
    q = quat.from_axis_angle([0, 1, 0], np.pi)
    assert full.contains(q)


def test_batch_shape_and_sign_hemisphere():
    lim = make("OVAL", twist=(-0.2, 0.2))
    q = quat.random_unit(60, 9).reshape(3, 5, 4, 4) * -1.0
    c = lim.clamp(q)
    assert c.shape == q.shape and lim.contains(c).shape == (3, 5, 4)
    assert np.all(np.sum(c * q, axis=-1) >= 0.0)


def test_scalar_path_accepts_lists_and_matches():
    lim = make("RECT", twist=(-0.1, 0.1), correction="SIMPLE")
    q = [0.3, 0.5, -0.7, 0.2]
    np.testing.assert_allclose(lim.clamp(q), lim.clamp(np.array([q]))[0], atol=1e-14)
    P = np.array([0.0, -1.0, 0.0])
    s, t = lim.swing_point(np.array([0.0, 1.0, 0.0, 0.0]))
    assert np.isinf(s) and np.isinf(t)
    assert lim.clamp(np.array([0.0, 1.0, 0.0, 0.0])).shape == (4,)
    assert lim.region.contains_sphere(P) == np.False_


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("correction", ["OPTIMAL", "SIMPLE"])
def test_clamp1_on_floats_equals_clamp_of_one_rotation(shape, correction):
    """``clamp1`` (the live limits' per-bone path: tuples of floats, no numpy) gives exactly
    ``clamp``'s rotation, and leaves rotations inside unchanged."""
    lim = make(shape, correction=correction)
    q = quat.random_unit(200, np.random.default_rng(11)) * 1.7     # not unit: normalised first
    for row in q:
        one = lim.clamp1(tuple(row.tolist()))
        assert type(one) is tuple and all(type(c) is float for c in one)
        assert np.array_equal(np.array(one), lim.clamp(row))
    inside = quat.as_unit_quats(q[lim.contains(q)])
    assert len(inside) and all(np.abs(np.array(lim.clamp1(tuple(r.tolist()))) - r).max() <= 1e-15 for r in inside)


@pytest.mark.parametrize("shape", SHAPES)
def test_simple_next_to_the_pole_is_not_rounding_noise(shape):
    """A half turn (``from_axis_angle(axis, pi)``: w = 6e-17, not quite the pole) has (s, t)
    ~1e16, where the plane's squared distances round by more than the region's points differ:
    SIMPLE takes the OPTIMAL correction there as at the pole, the same in the batch path and the
    one-rotation path (they picked different vertices of an outline: a hypothesis example)."""
    for outline_index in range(len(OUTLINES)) if shape == "POLYGON" else [0]:
        simple = make(shape, correction="SIMPLE", outline_index=outline_index)
        optimal = make(shape, correction="OPTIMAL", outline_index=outline_index)
        a = np.linspace(-np.pi, np.pi, 61)
        axis = np.stack((np.cos(a), np.zeros_like(a), np.sin(a)), -1)
        q = quat.from_axis_angle(axis, np.full(len(a), np.pi))
        batch = simple.clamp(q)
        assert len(q) > 32    # (the batch path, not row by row)
        for row, got in zip(q, batch):
            np.testing.assert_allclose(simple.clamp(row), got, atol=1e-12)
            np.testing.assert_allclose(got, optimal.clamp(row), atol=1e-12)
        # a millionth of a radian away the simple correction still goes its own way
        near = quat.from_axis_angle(axis, np.full(len(a), np.pi - 1e-6))
        assert np.abs(simple.clamp(near) - optimal.clamp(near)).max() > 1e-3
