"""Comparison limit kinds: hinge, Euler [003], multi-range Euler [004 §3], quaternion swing
[000 §6.3] (core, no bpy)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from jointlimit_addon.core import quat as Q
from jointlimit_addon.core.euler_limits import EulerLimit, EulerMultiLimit, HingeLimit, QuatSwingLimit

D = np.radians
X_AXIS, Y_AXIS, Z_AXIS = np.eye(3)
PI = np.pi


def rx(a):
    return Q.from_axis_angle(X_AXIS, a)


def ry(a):
    return Q.from_axis_angle(Y_AXIS, a)


def rz(a):
    return Q.from_axis_angle(Z_AXIS, a)


def same_rotation(a, b, tol=1e-9):
    return np.all(Q.angle_between(a, b) < tol)


def special_rotations():
    """Half turns, gimbal-lock poses of every order, identity, quarter turns."""
    out = [Q.identity()]
    for axis in np.vstack((np.eye(3), [[1, 1, 0], [0, 1, 1], [1, 0, -1], [1, 1, 1]])):
        for angle in (PI, -PI, PI / 2, -PI / 2, PI - 1e-9):
            out.append(Q.from_axis_angle(axis, angle))
    rng = np.random.default_rng(11)
    for order in Q.EULER_ORDERS:
        e = rng.uniform(-PI, PI, (6, 3))
        e[:, "XYZ".index(order[1])] = np.repeat([PI / 2, -PI / 2], 3)
        out.extend(Q.from_euler(e, order))
    return np.array(out)


SPECIAL = special_rotations()


@st.composite
def rotations(draw, n=24):
    raw = draw(hnp.arrays(np.float64, (n, 4), elements=st.floats(-1, 1)))
    raw[np.linalg.norm(raw, axis=1) < 1e-3] = [1.0, 0.0, 0.0, 0.0]
    picks = draw(st.lists(st.integers(0, len(SPECIAL) - 1), min_size=0, max_size=6))
    return Q.normalize(np.vstack([raw] + [SPECIAL[i][None] for i in picks]))


@st.composite
def angle_range(draw, bound=PI, free=True):
    if free and draw(st.booleans()) and draw(st.booleans()):
        return None
    a, b = sorted(draw(st.floats(-bound, bound)) for _ in range(2))
    return (a, b)


ORDERS = st.sampled_from(Q.EULER_ORDERS)


@st.composite
def euler_limits(draw):
    order = draw(ORDERS)
    guard = draw(st.sampled_from([D(80.0), D(60.0), D(89.0)]))
    ranges = {c: draw(angle_range(guard if c.upper() == order[1] else PI)) for c in "xyz"}
    return EulerLimit(order=order, gimbal_guard=guard, **ranges)


@st.composite
def euler_multi_limits(draw):
    return EulerMultiLimit(order=draw(ORDERS), **{c: draw(angle_range()) for c in "xyz"})


@st.composite
def hinge_limits(draw):
    axis = draw(st.sampled_from(["X", "Z", "Y", (1.0, 2.0, -0.5)]))
    return HingeLimit(draw(angle_range()), axis=axis)


@st.composite
def quat_swing_limits(draw):
    while True:
        kw = dict(max_swing=draw(st.none() | st.floats(0.05, PI)), swing_x=draw(angle_range()),
                  swing_z=draw(angle_range()), twist=draw(angle_range()))
        try:
            return QuatSwingLimit(**kw)
        except ValueError:  # cone and boxes disjoint: draw again
            continue


ALL_LIMITS = euler_limits() | euler_multi_limits() | hinge_limits() | quat_swing_limits()


# --------------------------------------------------------------------------- protocol properties


@settings(max_examples=150, deadline=None)
@given(ALL_LIMITS, rotations())
def test_clamp_inside_idempotent_never_nan(limit, q):
    out = limit.clamp(q)
    assert out.shape == q.shape
    assert np.all(np.isfinite(out))
    assert np.allclose(np.linalg.norm(out, axis=-1), 1.0)
    assert np.all(limit.contains(out))
    assert np.allclose(limit.clamp(out), out, atol=1e-12)
    inside = limit.contains(q)
    assert np.allclose(out[inside], q[inside], atol=1e-12)
    # the result keeps the input's hemisphere (no sign flips for keyed channels)
    assert np.all(np.sum(out * q, axis=-1) >= -1e-12)


@settings(max_examples=40, deadline=None)
@given(ALL_LIMITS, rotations(n=6))
def test_vectorised_matches_single_and_sign_invariant(limit, q):
    batch = limit.clamp(q.reshape(2, 3, 4) if len(q) == 6 else q).reshape(-1, 4)
    single = np.array([limit.clamp(qi) for qi in q])
    assert np.allclose(batch, single, atol=1e-12)
    assert np.array_equal(limit.contains(q), limit.contains(-q))
    assert same_rotation(limit.clamp(-q), batch)


@pytest.mark.parametrize("limit", [HingeLimit(), EulerLimit(), EulerMultiLimit(), QuatSwingLimit()])
@pytest.mark.parametrize("bad", [[np.nan, 0, 0, 1], [0, 0, 0, 0], [1, 0, 0], [[1, 0, 0, np.inf]]])
def test_bad_quaternions_raise(limit, bad):
    with pytest.raises(ValueError):
        limit.clamp(bad)
    with pytest.raises(ValueError):
        limit.contains(bad)


@pytest.mark.parametrize(
    "make",
    [
        lambda: HingeLimit((1.0, 0.5)),
        lambda: HingeLimit((-4.0, 0.0)),
        lambda: HingeLimit((0.0, 1.0), axis="W"),
        lambda: HingeLimit((0.0, 1.0), axis=(0, 0, 0)),
        lambda: HingeLimit((0.0, np.nan)),
        lambda: HingeLimit(0.5),
        lambda: EulerLimit(x=(0.3, -0.3)),
        lambda: EulerLimit(y=(-4.0, 0.0)),
        lambda: EulerLimit(x=(0.0, D(85.0))),  # middle axis of ZXY beyond the 80 deg guard
        lambda: EulerLimit(order="XYX"),
        lambda: EulerLimit(gimbal_guard=PI / 2),
        lambda: EulerLimit(gimbal_guard=0.0),
        lambda: EulerMultiLimit(z=(2.0, 1.0)),
        lambda: EulerMultiLimit(x=(0.0, 3.5)),
        lambda: EulerMultiLimit(order="zxy"),
        lambda: QuatSwingLimit(max_swing=-0.1),
        lambda: QuatSwingLimit(max_swing=4.0),
        lambda: QuatSwingLimit(twist=(1.0, -1.0)),
        lambda: QuatSwingLimit(max_swing=0.2, swing_x=(1.0, 2.0)),  # box outside the cone
    ],
)
def test_invalid_settings_raise(make):
    with pytest.raises(ValueError):
        make()


def test_middle_axis_range_may_reach_the_guard():
    lim = EulerLimit(x=(-D(80.0), D(80.0)))
    assert lim.x == pytest.approx((-D(80.0), D(80.0)))
    assert EulerLimit(order="XYZ").y == pytest.approx((-D(80.0), D(80.0)))


def test_ranges_set_to_180_degrees_in_blender_are_accepted_and_clipped():
    """Blender stores angles as float32: 180° reads back 8.7e-8 beyond pi (the UI's maximum)."""
    f32 = lambda x: float(np.float32(x))  # noqa: E731
    assert HingeLimit((0.0, f32(PI))).angle == (0.0, PI)
    assert HingeLimit((f32(-PI), f32(PI))).contains(Q.from_axis_angle([1, 0, 0], 3.0))
    euler = EulerLimit(x=(f32(-PI), f32(PI)), y=(f32(-PI / 2) * 0.5, 0.5), z=(f32(-PI), f32(PI)), order="XYZ")
    assert euler.x == (-PI, PI) and euler.z == (-PI, PI)
    assert EulerMultiLimit(x=(f32(-PI), f32(PI)), order="XYZ").x == (-PI, PI)
    with pytest.raises(ValueError, match="must lie inside"):
        HingeLimit((0.0, PI + 1e-5))     # beyond float32 rounding: still an error


# --------------------------------------------------------------------------- hinge


def test_hinge_removes_off_axis_parts_and_keeps_the_hinge_angle():
    lim = HingeLimit((-0.5, 1.0))
    q = Q.mul(rx(0.4), rz(0.3))  # nearest rotation about X is rx(0.4) exactly
    out = lim.clamp(q)
    assert np.allclose(out, rx(0.4), atol=1e-12)
    assert lim.contains(rx(0.4)) and not lim.contains(q)


@pytest.mark.parametrize(
    "rng_, angle, expected",
    [
        ((-0.5, 1.0), 1.5, 1.0),
        ((-0.5, 1.0), -2.0, -0.5),
        ((-0.5, 1.0), 3.0, 1.0),
        ((0.5, 1.0), -2.9, 1.0),  # nearer across +-180 deg (a plain clamp would give 0.5)
        ((2.5, PI), -3.0, -PI),  # -3.0 is 0.14 from +-180
    ],
)
def test_hinge_clamps_angle_to_nearer_end_on_circle(rng_, angle, expected):
    out = HingeLimit(rng_).clamp(rx(angle))
    assert same_rotation(out, rx(expected))


def test_hinge_about_z_and_vector_axis():
    lim = HingeLimit((0.0, 0.8), axis="Z")
    assert same_rotation(lim.clamp(Q.mul(rz(0.5), rx(0.2))), rz(0.5))
    assert same_rotation(lim.clamp(rz(1.2)), rz(0.8))
    axis = np.array([1.0, 1.0, 0.0]) / np.sqrt(2)
    lim = HingeLimit((-1.0, 1.0), axis=(2.0, 2.0, 0.0))
    assert same_rotation(lim.clamp(Q.from_axis_angle(axis, 1.7)), Q.from_axis_angle(axis, 1.0))
    # a half turn about a perpendicular axis has no hinge part: angle 0
    assert same_rotation(HingeLimit((-1.0, 1.0)).clamp(ry(PI)), Q.identity())


@pytest.mark.parametrize("axis", ["X", "Z", (2.0, 2.0, 1.0)])
def test_hinge_float_path_equals_clamp(axis):
    """``clamp1`` (the live limits' one-rotation path on floats) gives ``clamp``'s rotations to
    the last bits of float64, equal in float32 storage; on the axis, off it, at the range's ends."""
    rng = np.random.default_rng(3)
    lim = HingeLimit((np.radians(5), np.radians(140)), axis=axis)
    q = rng.normal(size=(3000, 4))
    q[1::3] = Q.from_axis_angle(lim.axis, rng.uniform(-4.0, 4.0, len(q[1::3]))) * 1.7
    q[2::3] = Q.from_axis_angle(lim.axis, rng.choice(lim.angle, len(q[2::3])))
    for qi in q:
        expected = lim.clamp(qi)
        got = np.array(lim.clamp1(tuple(qi.tolist())))
        assert np.abs(got - expected).max() <= 2e-15
        assert np.array_equal(got.astype(np.float32), expected.astype(np.float32))
    free = HingeLimit(None, axis="Y")
    assert np.allclose(free.clamp1((1.0, 0.3, 0.5, 0.2)), free.clamp(np.array((1.0, 0.3, 0.5, 0.2))), atol=1e-15)


@pytest.mark.parametrize("order", ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"])
def test_euler_float_path_equals_clamp(order):
    """``EulerLimit.clamp1`` (the CCD's one-rotation path on floats) gives ``clamp``'s rotations to
    float64 rounding and the same inside/outside answer: random rotations, rotations inside, on
    the ranges' ends, near gimbal lock, ranges touching 180°."""
    rng = np.random.default_rng(11)
    for first, middle, last in (((-0.5, 1.2), (-0.3, 0.9), (-1.0, 0.4)), ((-PI, PI), (-0.2, 0.2), (2.0, PI)),
                                (None, (0.0, 0.0), (-2.5, -1.0))):     # (the middle axis within the guard)
        ranges = dict(zip(order, (first, middle, last)))
        lim = EulerLimit(ranges["X"], ranges["Y"], ranges["Z"], order=order)
        q = rng.normal(size=(1500, 4))
        inside = lim.clamp(q[:500])
        q[500:1000] = inside * rng.uniform(0.5, 2.0, (500, 1))
        angles = np.zeros((250, 3))     # the middle angle at and next to +-90 deg: gimbal lock
        angles[:, ["XYZ".index(c) for c in order]] = np.c_[rng.uniform(-PI, PI, 250),
                                                           rng.choice([-1, 1], 250) * (PI / 2 - rng.choice([0, 1e-9, 1e-6, 1e-3], 250)),
                                                           rng.uniform(-PI, PI, 250)]
        q[1000:1250] = Q.from_euler(angles, order)
        for qi in q:
            expected = lim.clamp(qi)
            got = np.array(lim.clamp1(tuple(qi.tolist())))
            assert np.abs(got - expected).max() <= 1e-12, (qi, got, expected)
            assert bool(lim.contains(qi)) == (np.abs(got - qi / np.linalg.norm(qi)).max() <= 1e-15)


@settings(max_examples=60, deadline=None)
@given(hinge_limits(), rotations(n=12))
def test_hinge_clamp_is_geodesically_nearest(limit, q):
    out = limit.clamp(q)
    lo, hi = limit.angle
    samples = Q.from_axis_angle(limit.axis, np.linspace(lo, hi, 2001))
    best = Q.angle_between(q[:, None, :], samples[None]).min(axis=1)
    assert np.all(Q.angle_between(out, q) <= best + 1e-9)


# --------------------------------------------------------------------------- Euler [003]


def seed_reference_zxy(q, mins, maxs, guard=D(80.0)):
    """[003] D3DXVec3RotateReg, literally: row-vector matrix M, M32 = -sin x, etc."""
    M = Q.to_matrix(q).T  # the seed multiplies row vectors: M = R^T
    m = lambda r, c: M[r - 1, c - 1]  # noqa: E731  (1-based like the seed's _32)
    fx = np.arcsin(np.clip(-m(3, 2), -1, 1))
    if abs(fx) > guard:
        fx = np.copysign(guard, fx)
    fcx = np.cos(fx)
    fy = np.arctan2(m(3, 1) / fcx, m(3, 3) / fcx)
    fz = np.arctan2(m(1, 2) / fcx, m(2, 2) / fcx)
    fx, fy, fz = (min(max(v, lo), hi) for v, lo, hi in zip((fx, fy, fz), mins, maxs))
    c, s = np.cos, np.sin
    Rx = np.array([[1, 0, 0], [0, c(fx), -s(fx)], [0, s(fx), c(fx)]])
    Ry = np.array([[c(fy), 0, s(fy)], [0, 1, 0], [-s(fy), 0, c(fy)]])
    Rz = np.array([[c(fz), -s(fz), 0], [s(fz), c(fz), 0], [0, 0, 1]])
    return Ry @ Rx @ Rz  # D3DXMatrixRotationYawPitchRoll(y, x, z), as a column-vector matrix


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.0, D(80.0)), st.floats(0.0, PI), st.floats(0.0, PI))
def test_euler_limit_equals_seed_procedure(seed, hx, hy, hz):
    q = Q.random_unit(8, seed)  # generic rotations: no exact +-180 deg ties, no exact lock
    # symmetric ranges: the seed's linear clamp and our circular clamp agree there
    lim = EulerLimit(x=(-hx, hx), y=(-hy, hy), z=(-hz, hz))
    out = lim.clamp(q)
    for qi, oi in zip(q, out):
        ref = seed_reference_zxy(qi, (-hx, -hy, -hz), (hx, hy, hz))
        assert np.allclose(Q.to_matrix(oi), ref, atol=1e-8)


def test_euler_limit_worked_examples():
    # pure pitch of 85 deg, no ranges: the gimbal guard stops it at 80 deg
    assert same_rotation(EulerLimit().clamp(rx(D(85.0))), rx(D(80.0)))
    # yaw 100 deg against a +-90 deg y range
    assert same_rotation(EulerLimit(y=(-PI / 2, PI / 2)).clamp(ry(D(100.0))), ry(PI / 2))
    # each axis clamped on its own, then rebuilt as Ry Rx Rz
    q = Q.from_euler([0.2, 1.0, 0.4], "ZXY")
    out = EulerLimit(y=(-0.5, 0.5), z=(0.0, 0.3)).clamp(q)
    assert same_rotation(out, Q.from_euler([0.2, 0.5, 0.3], "ZXY"))
    assert same_rotation(out, Q.mul(ry(0.5), Q.mul(rx(0.2), rz(0.3))))
    # exact gimbal lock x = 90 deg: R = Ry(y - z) Rx(90); the lock split puts y - z = 0.1 on
    # the first axis (z = -0.1, y = 0), then the guard brings x to 80 deg
    q = Q.from_euler([PI / 2, 0.3, 0.2], "ZXY")
    assert np.allclose(EulerLimit().euler(q), [PI / 2, 0.0, -0.1], atol=1e-9)
    assert same_rotation(EulerLimit().clamp(q), Q.from_euler([D(80.0), 0.0, -0.1], "ZXY"))


@pytest.mark.parametrize("order", Q.EULER_ORDERS)
def test_seed_decomposition_is_consistent_near_gimbal_lock(order):
    # middle angle in [-90, 90] deg, and the triple rebuilds the rotation even within 1e-16 of lock
    rng = np.random.default_rng(4)
    j = "XYZ".index(order[1])
    for d in (1e-3, 1e-8, 1e-10, 1e-13, 1e-16, 0.0):
        e = rng.uniform(-PI, PI, (200, 3))
        e[:, j] = rng.choice([-1.0, 1.0], 200) * (PI / 2 - d)
        q = Q.from_euler(e, order)
        angles = EulerLimit(order=order).euler(q)
        assert np.all(np.abs(angles[:, j]) <= PI / 2)
        assert Q.angle_between(Q.from_euler(angles, order), q).max() < 1e-14


def test_euler_limit_inside_unchanged_and_order_matters():
    lim = EulerLimit(x=(-0.5, 0.5), y=(-0.5, 0.5), z=(-0.5, 0.5), order="XYZ")
    q = Q.from_euler([0.4, -0.3, 0.45], "XYZ")
    assert lim.contains(q)
    assert np.allclose(lim.clamp(q), q, rtol=0, atol=1e-15)
    # the same angles composed in another order give a different rotation, still inside
    assert not same_rotation(Q.from_euler([0.4, -0.3, 0.45], "ZYX"), q)


def test_euler_limit_range_touching_180_is_one_angle():
    lim = EulerLimit(y=(-PI, -3.0))
    q = ry(PI)  # decomposes to y = +pi, which is -pi
    assert lim.contains(q)
    assert np.allclose(lim.clamp(q), q, rtol=0, atol=1e-15)
    assert same_rotation(lim.clamp(ry(3.0)), ry(PI))  # nearer end across +-180


@settings(max_examples=60, deadline=None)
@given(euler_limits(), st.data())
def test_euler_limit_inside_points_are_kept(limit, data):
    # random triples inside the box (middle angle within the guard) are inside
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    lo = np.array([limit.x[0], limit.y[0], limit.z[0]])
    hi = np.array([limit.x[1], limit.y[1], limit.z[1]])
    e = lo + (hi - lo) * rng.random((32, 3))
    q = Q.from_euler(e, limit.order)
    assert np.all(limit.contains(q))
    assert np.allclose(limit.clamp(q), q, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(euler_limits(), st.integers(0, 2**32 - 1))
def test_euler_distance_bound_is_a_lower_bound_of_the_geodesic_distance(limit, seed):
    """``distance_bound`` (the feasible-swivel search's Lipschitz certificate) never exceeds the
    angle to any rotation inside (dense samples of the box and the clamped rotation), is 0 exactly
    inside and positive outside."""
    rng = np.random.default_rng(seed)
    lo = np.array([limit.x[0], limit.y[0], limit.z[0]])
    hi = np.array([limit.x[1], limit.y[1], limit.z[1]])
    inside = Q.from_euler(lo + (hi - lo) * rng.random((4000, 3)), limit.order)
    q = np.concatenate([Q.random_unit(60, rng), inside[:20]])
    bound = limit.distance_bound(q)
    nearest = np.minimum(Q.angle_between(q[:, None], inside[None]).min(axis=1),
                         Q.angle_between(q, limit.clamp(q)))
    assert np.all(bound <= nearest + 1e-12)
    assert np.array_equal(bound == 0.0, limit.contains(q))


# --------------------------------------------------------------------------- Euler multi [004 §3]


def test_multi_accepts_middle_angle_beyond_90_that_euler_limit_rejects():
    r30 = (-D(30.0), D(30.0))
    q = Q.from_euler(D([110.0, 10.0, -5.0]), "ZXY")  # X (middle) at 110 deg
    assert EulerMultiLimit(x=(0.0, D(120.0)), y=r30, z=r30).contains(q)
    single = EulerLimit(x=(0.0, D(80.0)), y=r30, z=r30)
    assert not single.contains(q)
    # the conventional decomposition sees (x 70, y 190, z 175): y and z are far out of range
    assert np.allclose(np.degrees(single.euler(q)), [70.0, -170.0, 175.0], atol=1e-9)
    # beyond the multi range: clamp back to 120 deg on the flipped triple
    multi = EulerMultiLimit(x=(0.0, D(120.0)), y=r30, z=r30)
    out = multi.clamp(Q.from_euler(D([130.0, 10.0, -5.0]), "ZXY"))
    assert same_rotation(out, Q.from_euler(D([120.0, 10.0, -5.0]), "ZXY"))


def test_multi_gimbal_lock_sets_3_and_4():
    # [004 §3] sets 3/4: at middle = 90 deg only the combination of the outer angles matters.
    lim = EulerMultiLimit(x=(D(60.0), D(100.0)), y=(0.0, 0.3), z=(0.0, 0.3))
    q = Q.from_euler([PI / 2, 0.25, 0.25], "ZXY")  # decomposes to z = 0, y = 0 split otherwise
    assert lim.contains(q)
    assert np.allclose(lim.clamp(q), q, rtol=0, atol=1e-15)
    # same lock but y - z outside [-0.3, 0.3]: no split fits
    q = Q.from_euler([PI / 2, 0.0, -0.9], "ZXY")  # R = Ry(0.9) Rx(90)
    assert not lim.contains(q)
    out = lim.clamp(q)
    assert lim.contains(out)
    assert Q.angle_between(out, q) == pytest.approx(0.6, abs=1e-9)  # Ry(0.3) Rx(90) is nearest


def paper_sets_contains(q, lim):
    """[004 §3] sets 1 and 2 (sets 3/4 have measure zero): either triple inside, on the circle."""
    i, j, k = ("XYZ".index(c) for c in lim.order)
    e = Q.to_euler(q, lim.order)
    a, b, c = e[..., i], e[..., j], e[..., k]
    b_std = np.abs(b) <= PI / 2
    a0, b0, c0 = (np.where(b_std, v, v + PI) for v in (a, b, c))
    b0 = np.where(b_std, b, PI - b)
    rngs = [getattr(lim, ch.lower()) for ch in lim.order]

    def inside(v, r):
        lo, hi = r
        return np.mod(v - lo, 2 * PI) <= hi - lo + 1e-12

    t0 = inside(a0, rngs[0]) & inside(b0, rngs[1]) & inside(c0, rngs[2])
    t1 = inside(a0 + PI, rngs[0]) & inside(PI - b0, rngs[1]) & inside(c0 + PI, rngs[2])
    return t0 | t1


@settings(max_examples=60, deadline=None)
@given(euler_multi_limits())
def test_multi_contains_matches_the_paper_condition_sets(limit):
    q = Q.random_unit(200, 5)
    ours = limit.contains(q)
    ref = paper_sets_contains(q, limit)
    # skip rotations within 1e-6 rad of a boundary, where tolerances decide
    shrunk = EulerMultiLimit(order=limit.order, **{c: _shrink(getattr(limit, c)) for c in "xyz"})
    grown = EulerMultiLimit(order=limit.order, **{c: _grow(getattr(limit, c)) for c in "xyz"})
    clear = shrunk.contains(q) == grown.contains(q)
    assert np.array_equal(ours[clear], ref[clear])


def _shrink(r, eps=1e-6):
    lo, hi = r
    return (lo + eps, hi - eps) if hi - lo > 2 * eps else ((lo + hi) / 2, (lo + hi) / 2)


def _grow(r, eps=1e-6):
    return (max(r[0] - eps, -PI), min(r[1] + eps, PI))


@settings(max_examples=60, deadline=None)
@given(euler_limits(), rotations(n=16))
def test_multi_is_never_farther_than_single_for_the_same_box(single, q):
    multi = EulerMultiLimit(x=single.x, y=single.y, z=single.z, order=single.order)
    d_single = Q.angle_between(single.clamp(q), q)
    d_multi = Q.angle_between(multi.clamp(q), q)
    assert np.all(d_multi <= d_single + 2e-9)  # both move points within tolerance of the box
    assert np.all(multi.contains(q)[single.contains(q)])


@settings(max_examples=60, deadline=None)
@given(euler_multi_limits(), st.data())
def test_multi_inside_points_are_kept(limit, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    lo = np.array([limit.x[0], limit.y[0], limit.z[0]])
    hi = np.array([limit.x[1], limit.y[1], limit.z[1]])
    e = lo + (hi - lo) * rng.random((32, 3))
    j = "XYZ".index(limit.order[1])
    e[:4, j] = np.clip([PI / 2, -PI / 2, PI / 2, -PI / 2], lo[j], hi[j])  # lock where allowed
    q = Q.from_euler(e, limit.order)
    assert np.all(limit.contains(q))
    assert np.allclose(limit.clamp(q), q, atol=1e-12)


# --------------------------------------------------------------------------- quaternion swing [000 §6.3]


def swing_angle(q):
    P = Q.rotate(q, Y_AXIS)
    return np.arctan2(np.linalg.norm(np.cross(P, Y_AXIS), axis=-1), P[..., 1])


@settings(max_examples=60, deadline=None)
@given(st.floats(0.05, PI - 0.01), rotations(n=32))
def test_sum_of_squares_limit_is_the_geodesic_cone(max_swing, q):
    lim = QuatSwingLimit(max_swing=max_swing)
    ang = swing_angle(q)
    clear = np.abs(ang - max_swing) > 1e-7
    assert np.array_equal(lim.contains(q)[clear], (ang <= max_swing)[clear])
    out = lim.clamp(q)
    assert np.all(swing_angle(out) <= max_swing + 1e-9)
    outside = ang > max_swing + 1e-7
    # clamped swings sit on the cone, in the same direction, with the twist kept
    assert np.allclose(swing_angle(out)[outside], max_swing, atol=1e-9)
    P, Pc = Q.rotate(q, Y_AXIS), Q.rotate(out, Y_AXIS)
    azimuth = lambda v: np.arctan2(v[..., 2], v[..., 0])  # noqa: E731
    ok = outside & (ang < PI - 1e-6)
    dphi = np.mod(azimuth(P)[ok] - azimuth(Pc)[ok] + PI, 2 * PI) - PI
    assert np.allclose(dphi, 0.0, atol=1e-7)
    assert np.allclose(lim.swing_components(out)[1][ok], lim.swing_components(q)[1][ok], atol=1e-7)


def test_quat_swing_components_and_box():
    lim = QuatSwingLimit(swing_x=(-D(20.0), D(40.0)), swing_z=(-D(10.0), D(10.0)))
    b, psi = lim.swing_components(Q.mul(rx(0.5), ry(0.3)))
    assert np.allclose(b, [np.sin(0.25), 0.0]) and psi == pytest.approx(0.3)
    b, _ = lim.swing_components(rz(-0.6))
    assert np.allclose(b, [0.0, np.sin(-0.3)])
    assert lim.contains(rx(D(39.0))) and not lim.contains(rx(D(41.0)))
    assert same_rotation(lim.clamp(rx(D(60.0))), rx(D(40.0)))
    assert same_rotation(lim.clamp(rz(D(-30.0))), rz(D(-10.0)))
    # twist untouched without a twist range
    assert same_rotation(lim.clamp(Q.mul(rz(D(30.0)), ry(1.2))), Q.mul(rz(D(10.0)), ry(1.2)))


def test_quat_swing_twist_range_and_fix():
    lim = QuatSwingLimit(max_swing=D(45.0), twist=(-0.2, 0.3))
    q = Q.mul(rx(0.3), ry(0.8))
    assert same_rotation(lim.clamp(q), Q.mul(rx(0.3), ry(0.3)))
    assert same_rotation(QuatSwingLimit(twist=(0.0, 0.0)).clamp(q), rx(0.3))
    # cone and twist together: swing 60 deg about Z -> 45 deg, twist -1 -> -0.2
    assert same_rotation(lim.clamp(Q.mul(rz(D(60.0)), ry(-1.0))), Q.mul(rz(D(45.0)), ry(-0.2)))


def test_quat_swing_pole():
    lim = QuatSwingLimit()
    for q in (rx(PI), rz(PI), Q.from_axis_angle([1, 0, 1], PI)):
        assert not lim.contains(q)  # the pole itself is excluded
        out = lim.clamp(q)
        assert Q.angle_between(out, q) <= 2 * QuatSwingLimit.POLE_MARGIN
        assert lim.contains(out)
    assert same_rotation(QuatSwingLimit(max_swing=PI / 2).clamp(rx(PI)), rx(PI / 2))


@settings(max_examples=60, deadline=None)
@given(quat_swing_limits(), rotations(n=16))
def test_quat_swing_projection_is_nearest_on_the_component_disk(limit, q):
    b, _ = limit.swing_components(q)
    bc, _ = limit.swing_components(limit.clamp(q))
    # dense sample of the region on the (q_bx, q_bz) disk
    g = np.linspace(-1, 1, 401)
    grid = np.stack(np.meshgrid(g, g), -1).reshape(-1, 2)
    grid = grid[limit._on_disk_region(grid)]
    if len(grid) == 0:
        return
    best = np.sqrt(((b[:, None, :] - grid[None]) ** 2).sum(-1).min(axis=1))
    pole = np.sum(b * b, axis=-1) > 1 - 1e-9
    assert np.all((np.linalg.norm(bc - b, axis=-1) <= best + 1e-9)[~pole])
