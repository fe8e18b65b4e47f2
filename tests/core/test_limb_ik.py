"""Analytic limb IK [001]: reach, swivel, orientation, limits, degenerate targets (core, no bpy)."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from jointlimit_addon.core import limb_ik as L
from jointlimit_addon.core import quat as Q

SEEDS = st.integers(0, 2**32 - 1)
FAST = settings(max_examples=40, deadline=None)


def _mat(q, head):
    m = np.eye(4)
    m[:3, :3] = Q.to_matrix(q)
    m[:3, 3] = head
    return m


def _random_chain(rng, connected=True, parent=True, hinge_axis=None, straight=False):
    """Random rest chain: random orientations, lengths, a non-straight rest bend, random rolls,
    optionally offset (non-connected) heads and a uniformly scaled, moved parent."""
    q_u = Q.random_unit(1, rng)[0]
    l1, l2 = rng.uniform(0.3, 2.0, 2)
    y_u = Q.rotate(q_u, [0.0, 1.0, 0.0])
    perp = np.cross(y_u, rng.normal(size=3))
    bend = Q.from_axis_angle(perp, 0.0 if straight else rng.uniform(0.15, 2.6))
    roll = Q.from_axis_angle([0.0, 1.0, 0.0], rng.uniform(-np.pi, np.pi))
    q_l = Q.mul(Q.mul(bend, q_u), roll)
    h_u = rng.normal(size=3)
    h_l = h_u + l1 * y_u + (0 if connected else rng.normal(scale=0.2, size=3))
    h_e = h_l + l2 * Q.rotate(q_l, [0.0, 1.0, 0.0]) + (0 if connected else rng.normal(scale=0.2, size=3))
    q_e = Q.random_unit(1, rng)[0]
    kw = {}
    if parent:
        pose = _mat(Q.random_unit(1, rng)[0], rng.normal(size=3))
        pose[:3, :3] *= rng.uniform(0.5, 2.0)
        kw = dict(parent_pose=pose, parent_rest=_mat(Q.random_unit(1, rng)[0], rng.normal(size=3)))
    return L.LimbChain(_mat(q_u, h_u), _mat(q_l, h_l), _mat(q_e, h_e), hinge_axis=hinge_axis,
                       end_length=0.5, **kw)


def _targets(rng, chain, n, lo_frac=0.0, hi_frac=1.0, hinge_range=None):
    lo, hi = chain.distance_range(hinge_range)
    d = lo + (hi - lo) * rng.uniform(lo_frac, hi_frac, n)
    u = rng.normal(size=(n, 3))
    return chain.root + d[:, None] * u / np.linalg.norm(u, axis=1, keepdims=True)


def _wrap_diff(a, b):
    return np.abs(np.angle(np.exp(1j * (np.asarray(a) - np.asarray(b)))))


def _reach(chain):
    return chain.reach * float(chain.base_scale)


class ConeLimit:
    """Test double of the joint-limit protocol: rotation angle from rest at most ``max_angle``
    (within ``TOL``); as the protocol asks, ``clamp`` leaves what ``contains`` holds unchanged."""

    TOL = 1e-9

    def __init__(self, max_angle):
        self.max_angle = max_angle

    def contains(self, q):
        return Q.angle_between(q, Q.identity()) <= self.max_angle + self.TOL

    def clamp(self, q):
        ang = Q.angle_between(q, Q.identity())
        t = np.where(ang > self.max_angle + self.TOL, self.max_angle / np.maximum(ang, 1e-300), 1.0)
        return Q.slerp(np.broadcast_to(Q.identity(), np.shape(q)), q, t)


# ---------------------------------------------------------------------------- reach and swivel


@FAST
@given(SEEDS, st.booleans())
def test_exact_reach_random_chains(seed, connected):
    rng = np.random.default_rng(seed)
    chain = _random_chain(rng, connected=connected)
    targets = _targets(rng, chain, 64)
    swivel = rng.uniform(-np.pi, np.pi, 64)
    pose = L.solve_position(chain, targets, swivel)
    wrist = L.forward(chain, pose.quats)[:, 2]
    assert np.linalg.norm(wrist - targets, axis=1).max() <= 1e-6 * _reach(chain)
    assert pose.reached.all() and not pose.out_of_reach.any()
    # Each single solve (scalar fast path) reaches too.
    single = L.solve_position(chain, targets[0], swivel[0])
    assert np.linalg.norm(L.forward(chain, single.quats)[2] - targets[0]) <= 1e-6 * _reach(chain)


@FAST
@given(SEEDS)
def test_swivel_round_trips_full_circle(seed):
    rng = np.random.default_rng(seed)
    chain = _random_chain(rng, connected=bool(seed % 2))
    swivel = np.linspace(-np.pi, np.pi, 41)[1:]  # (-pi, pi]
    targets = _targets(rng, chain, 40, -0.2, 1.3)  # includes unreachable ones
    pose = L.solve_position(chain, targets, swivel)
    got = L.get_swivel(chain, pose)
    assert _wrap_diff(got, swivel).max() < 1e-9
    assert np.all(got > -np.pi) and np.all(got <= np.pi)
    assert abs(L.get_swivel(chain, L.solve_position(chain, targets[3], swivel[3]).quats) - swivel[3]) < 1e-9


@FAST
@given(SEEDS)
def test_swivel_rotates_elbow_about_root_target_axis(seed):
    rng = np.random.default_rng(seed)
    chain = _random_chain(rng)
    target = _targets(rng, chain, 1, 0.05, 0.95)[0]
    phi = rng.uniform(-np.pi, np.pi)
    delta = rng.uniform(-np.pi, np.pi)
    e0 = L.forward(chain, L.solve_position(chain, target, phi).quats)[1]
    e1 = L.forward(chain, L.solve_position(chain, target, phi + delta).quats)[1]
    n = (target - chain.root) / np.linalg.norm(target - chain.root)
    expected = chain.root + Q.rotate(Q.from_axis_angle(n, delta), e0 - chain.root)
    assert np.linalg.norm(e1 - expected) < 1e-9 * _reach(chain)


def test_rest_pose_is_swivel_zero():
    rng = np.random.default_rng(5)
    for _ in range(20):
        chain = _random_chain(rng)
        wrist = L.forward(chain, np.tile(Q.identity(), (3, 1)))[2]
        pose = L.solve_position(chain, wrist, 0.0)
        assert Q.angle_between(pose.quats, Q.identity()).max() < 1e-7
        assert abs(L.get_swivel(chain, np.tile(Q.identity(), (3, 1)))) < 1e-12


@FAST
@given(SEEDS)
def test_straight_rest_chain_uses_local_x_and_round_trips(seed):
    rng = np.random.default_rng(seed)
    chain = _random_chain(rng, straight=True)
    assert np.allclose(chain.axis, [1.0, 0.0, 0.0])
    targets = _targets(rng, chain, 32, 0.0, 1.2)
    swivel = rng.uniform(-np.pi, np.pi, 32)
    pose = L.solve_position(chain, targets, swivel)
    reach = L.is_reachable(chain, targets)
    err = np.linalg.norm(L.forward(chain, pose.quats)[:, 2] - targets, axis=1)
    assert err[reach].max(initial=0.0) <= 1e-6 * _reach(chain)
    assert _wrap_diff(L.get_swivel(chain, pose), swivel).max() < 1e-9
    wrist = L.forward(chain, np.tile(Q.identity(), (3, 1)))[2]
    assert Q.angle_between(L.solve_position(chain, wrist, 0.0).quats, Q.identity()).max() < 1e-6


def test_hinge_axis_along_the_bone_is_rigid_but_finite():
    chain = L.LimbChain(np.eye(4), _mat(Q.identity(), [0, 1, 0]), _mat(Q.identity(), [0, 2, 0]), hinge_axis=[0, 1, 0])
    assert chain.rigid and chain.d_min == chain.d_max == 2.0
    pose = L.solve_position(chain, np.array([[1.0, 0.5, 0.2], [0.0, 0.0, 2.0]]), [0.3, -2.0])
    assert np.all(np.isfinite(pose.quats)) and np.allclose(pose.hinge_angle, 0.0)
    assert pose.out_of_reach.tolist() == [True, False] and pose.reached.tolist() == [False, True]


def test_a_hinge_range_of_the_whole_circle_is_no_hinge_limit():
    """A Hinge limit of -180°..180° (float32 from Blender, clipped to [-pi, pi] by the limit)."""
    rng = np.random.default_rng(3)
    chain = _random_chain(rng)
    root = L.forward(chain, np.array([Q.identity()] * 3))[0]
    target = root + 0.5 * chain.reach * np.array([0.6, 0.0, 0.8])
    free = L.solve_position(chain, target, 0.4)
    for full in ((-np.pi, np.pi), (float(np.float32(-np.pi)), float(np.float32(np.pi)))):
        pose = L.solve_position(chain, target, 0.4, limits=L.LimbLimits(hinge=full))
        assert np.allclose(pose.quats, free.quats) and not pose.hinge_clamped
        assert chain.distance_range(full) == chain.distance_range()
    with pytest.raises(ValueError, match="lo <= hi"):
        L.solve_position(chain, target, 0.4, limits=L.LimbLimits(hinge=(1.0, 0.0)))


def test_rigid_chain_keeps_its_hinge_at_zero_when_the_range_holds_it_on_the_circle():
    chain = L.LimbChain(np.eye(4), _mat(Q.identity(), [0, 1, 0]), _mat(Q.identity(), [0, 2, 0]), hinge_axis=[0, 1, 0])
    target = np.array([0.0, 0.0, 2.0])
    for limits, theta, clamped in ((L.LimbLimits(hinge=(5.0, 6.5)), 0.0, False),     # holds 2 pi = 0
                                   (L.LimbLimits(hinge=(0.5, 1.0)), 0.5, True),
                                   (L.LimbLimits(hinge=(3.0, 6.0)), 6.0 - 2 * np.pi, True)):   # 6.0 is nearer 0
        for pose in (L.solve_position(chain, target, 0.0, limits=limits),
                     L.solve_position(chain, target[None], [0.0], limits=limits)):   # scalar and batched paths
            assert np.allclose(np.ravel(pose.hinge_angle), theta) and np.ravel(pose.hinge_clamped).tolist() == [clamped]


def test_swivel_zero_keeps_elbow_on_rest_bend_side():
    # Straight arm along +X (upper bone local Y -> armature X), rest bend towards -Y (back).
    q_u = Q.from_axis_angle([0, 0, 1], -np.pi / 2)
    q_l = Q.mul(Q.from_axis_angle([0, 0, 1], 0.3), q_u)
    h_l = np.array([1.0, 0.0, 0.0])
    h_e = h_l + Q.rotate(q_l, [0, 1, 0])
    chain = L.LimbChain(_mat(q_u, [0, 0, 0]), _mat(q_l, h_l), _mat(Q.identity(), h_e))
    # Target straight ahead along X at half reach: the elbow must stick out to -Y (rest side).
    elbow = L.forward(chain, L.solve_position(chain, [1.0, 0.0, 0.0], 0.0).quats)[1]
    assert elbow[1] < -0.8 and abs(elbow[2]) < 1e-12
    # Swivel +90 deg rotates it right-handed about +X: -Y -> -Z.
    elbow = L.forward(chain, L.solve_position(chain, [1.0, 0.0, 0.0], np.pi / 2).quats)[1]
    assert elbow[2] < -0.8 and abs(elbow[1]) < 1e-12


def test_swivel_zero_is_continuous_in_target_direction():
    rng = np.random.default_rng(11)
    chain = _random_chain(rng)
    d = 0.5 * (chain.d_min + chain.d_max) * chain.base_scale
    u = rng.normal(size=(200, 3))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    step = rng.normal(size=(200, 3)) * 1e-6
    a = L.solve_position(chain, chain.root + d * u, 0.0)
    b = L.solve_position(chain, chain.root + d * (u + step), 0.0)
    assert Q.angle_between(a.quats, b.quats).max() < 1e-4


# ---------------------------------------------------------------------------- orientation


@FAST
@given(SEEDS)
def test_solve_pose_matches_target_rotation(seed):
    rng = np.random.default_rng(seed)
    chain = _random_chain(rng, connected=bool(seed % 2))
    targets = _targets(rng, chain, 32)
    rot = Q.random_unit(32, rng)
    swivel = rng.uniform(-np.pi, np.pi, 32)
    pose = L.solve_pose(chain, targets, rot, swivel)
    end_rot = L.pose_rotations(chain, pose.quats)[:, 2]
    assert Q.angle_between(end_rot, rot).max() < 1e-9
    assert pose.orientation_error.max() < 1e-9
    assert np.linalg.norm(L.forward(chain, pose.quats)[:, 2] - targets, axis=1).max() <= 1e-6 * _reach(chain)
    single = L.solve_pose(chain, targets[0], rot[0], swivel[0])
    assert Q.angle_between(L.pose_rotations(chain, single.quats)[2], rot[0]) < 1e-9
    assert np.abs(single.quats - pose.quats[0]).max() < 1e-9
    assert _wrap_diff(L.get_swivel(chain, pose), swivel).max() < 1e-9


# ---------------------------------------------------------------------------- degenerate targets


@FAST
@given(SEEDS)
def test_unreachable_far_stretches_towards_target(seed):
    rng = np.random.default_rng(seed)
    chain = _random_chain(rng)
    targets = _targets(rng, chain, 16, 1.2, 5.0)
    pose = L.solve_position(chain, targets, rng.uniform(-np.pi, np.pi, 16))
    assert np.all(np.isfinite(pose.quats)) and pose.out_of_reach.all() and not pose.reached.any()
    assert (pose.status == L.STATUS_OUT_OF_REACH).all()
    p = L.forward(chain, pose.quats)
    n = (targets - chain.root) / np.linalg.norm(targets - chain.root, axis=1, keepdims=True)
    wrist_dir = p[:, 2] - chain.root
    # Pointing at the target, at full extension.
    assert np.abs(np.cross(wrist_dir, n)).max() < 1e-9 * _reach(chain)
    assert np.allclose(np.linalg.norm(wrist_dir, axis=1), chain.d_max * chain.base_scale, rtol=1e-12)
    assert np.allclose(pose.tip_error, np.linalg.norm(targets - chain.root, axis=1) - chain.d_max * chain.base_scale)


def test_unreachable_near_folds_towards_target():
    rng = np.random.default_rng(3)
    for _ in range(10):
        chain = _random_chain(rng, parent=False)
        if chain.d_min < 0.1:
            continue
        u = rng.normal(size=(8, 3))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        targets = chain.root + chain.d_min * rng.uniform(0.1, 0.9, (8, 1)) * u
        pose = L.solve_position(chain, targets, 0.3)
        wrist = L.forward(chain, pose.quats)[:, 2] - chain.root
        assert pose.out_of_reach.all()
        assert np.allclose(np.linalg.norm(wrist, axis=1), chain.d_min, rtol=1e-9)
        assert np.all(np.sum(wrist * (targets - chain.root), axis=1) > 0)


def test_target_at_root_is_too_close_and_finite():
    rng = np.random.default_rng(4)
    chain = _random_chain(rng)
    single = L.solve_position(chain, chain.root, 1.0)
    assert single.status == L.STATUS_TOO_CLOSE and bool(single.too_close)
    assert np.all(np.isfinite(single.quats)) and np.allclose(single.quats, Q.identity())
    current = np.stack([Q.random_unit(1, rng)[0], Q.from_axis_angle(chain.axis, 0.7), Q.random_unit(1, rng)[0]])
    kept = L.solve_pose(chain, np.stack([chain.root, chain.root + 1e-3]), Q.identity(), 0.0, current=current)
    assert kept.too_close.tolist() == [True, False]
    assert np.allclose(kept.quats[0], current) and abs(kept.hinge_angle[0] - 0.7) < 1e-12
    assert np.all(np.isfinite(kept.quats)) and np.isfinite(L.get_swivel(chain, kept)).all()
    assert not L.is_reachable(chain, chain.root)


def test_the_pose_kept_for_a_target_at_the_root_is_inside_the_limits():
    """TOO_CLOSE keeps the rest (or current) pose; with limits that leave it out, the kept pose is
    clamped into them and flagged, on the scalar and the batched paths."""
    from jointlimit_addon.core.limits import JointLimit

    chain = _random_chain(np.random.default_rng(7), parent=False)
    upper = JointLimit("RECT", swing_x=(0.5, 1.0), swing_z=(0.2, 0.6))
    limits = L.LimbLimits(upper, (0.5, 2.0), None)
    for pose in (L.solve_position(chain, chain.root.copy(), 0.0, limits=limits),
                 L.solve_position(chain, chain.root[None], [0.0], limits=limits)):
        assert np.ravel(pose.too_close).all() and np.ravel(pose.status).tolist() == [L.STATUS_TOO_CLOSE]
        assert 0.5 - 1e-12 <= float(np.ravel(pose.hinge_angle)[0]) <= 2.0
        quats = pose.quats.reshape(-1, 3, 4)[0]
        assert upper.contains(quats[0]) and np.ravel(pose.upper_clamped).all() and np.ravel(pose.hinge_clamped).all()
        assert abs(float(L._hinge_of(chain, quats[1])) - float(np.ravel(pose.hinge_angle)[0])) < 1e-12
    inside = np.stack([upper.clamp(Q.identity()), Q.from_axis_angle(chain.axis, 1.0), Q.identity()])
    kept = L.solve_position(chain, chain.root, 0.0, limits=limits, current=inside)
    assert np.allclose(kept.quats[:2], inside[:2]) and not kept.hinge_clamped and not kept.upper_clamped
    off_axis = inside.copy()     # its hinge angle in range, but turned off the hinge axis too
    off_axis[1] = Q.mul(Q.from_axis_angle(np.cross(chain.axis, [0.3, 0.5, 0.8]), 0.4), inside[1])
    kept = L.solve_position(chain, chain.root, 0.0, limits=limits, current=off_axis)
    assert kept.hinge_clamped and Q.angle_between(kept.quats[1], Q.from_axis_angle(chain.axis, kept.hinge_angle)) < 1e-12
    assert 0.5 - 1e-12 <= float(kept.hinge_angle) <= 2.0


# ---------------------------------------------------------------------------- hinge and limits


def test_hinge_axis_detection_and_sign():
    rng = np.random.default_rng(8)
    for _ in range(20):
        chain = _random_chain(rng, parent=False)
        axis_u = chain.rel_lower @ chain.axis
        y_l = chain.rel_lower[:, 1]
        assert abs(axis_u[1]) < 1e-12 and abs(axis_u @ y_l) < 1e-12  # perpendicular to both bones
        # A positive hinge angle bends further: the root->wrist distance shrinks.
        assert chain._dist(0.05) < chain._dist(0.0) < chain._dist(-0.05)
    straight = L.LimbChain(np.eye(4), _mat(Q.identity(), [0, 1, 0]), _mat(Q.identity(), [0, 2, 0]))
    assert np.allclose(straight.axis, [1, 0, 0])
    custom = L.LimbChain(np.eye(4), _mat(Q.identity(), [0, 1, 0]), _mat(Q.identity(), [0, 2, 0]), hinge_axis=[0, 0, 2])
    assert np.allclose(custom.axis, [0, 0, 1])
    pose = L.solve_position(custom, [1.0, 1.0, 0.0], 0.0)
    lower_axis, _ = Q.to_axis_angle(pose.lower)
    assert np.allclose(np.abs(lower_axis), [0, 0, 1])


@FAST
@given(SEEDS)
def test_hinge_range_respected(seed):
    rng = np.random.default_rng(seed)
    chain = _random_chain(rng)
    lo = rng.uniform(-1.0, 0.5)
    rng_ = (lo, lo + rng.uniform(0.1, 2.0))
    targets = _targets(rng, chain, 64, -0.2, 1.2)
    pose = L.solve_position(chain, targets, rng.uniform(-np.pi, np.pi, 64), limits=(None, rng_, None))
    th = pose.hinge_angle
    assert np.all(th >= rng_[0] - 1e-12) and np.all(th <= rng_[1] + 1e-12)
    lower_angle = L._hinge_of(chain, pose.lower)
    assert np.allclose(lower_angle, th, atol=1e-12)
    reachable = L.is_reachable(chain, targets, rng_)
    assert np.all(pose.reached[reachable]) and not np.any(pose.reached[~reachable])
    assert np.array_equal(pose.out_of_reach, ~reachable)
    assert np.all(pose.hinge_clamped[~reachable] | np.isclose(th[~reachable], chain.theta0)
                  | np.isclose(th[~reachable], L._wrap(chain.theta0 + np.pi)))


def test_hinge_range_picks_other_branch_when_needed():
    rng = np.random.default_rng(21)
    chain = _random_chain(rng, parent=False)
    target = _targets(rng, chain, 1, 0.4, 0.6)[0]
    free = L.solve_position(chain, target, 0.0)
    other = 2 * chain.theta0 - float(free.hinge_angle)  # mirror solution about the straight angle
    pose = L.solve_position(chain, target, 0.0, limits=(None, (other - 0.01, other + 0.01), None))
    assert pose.reached and not pose.hinge_clamped and abs(pose.hinge_angle - L._wrap(other)) < 1e-9


@FAST
@given(SEEDS)
def test_upper_and_end_limits_respected(seed):
    rng = np.random.default_rng(seed)
    chain = _random_chain(rng)
    upper, end = ConeLimit(0.5), ConeLimit(0.3)
    targets = _targets(rng, chain, 32)
    rot = Q.random_unit(32, rng)
    swivel = rng.uniform(-np.pi, np.pi, 32)
    pose = L.solve_pose(chain, targets, rot, swivel, limits=L.LimbLimits(upper, None, end))
    assert upper.contains(pose.upper).all() and end.contains(pose.end).all()
    free = L.solve_pose(chain, targets, rot, swivel)
    # The limits are checked at the requested swivel; only where they fail does the swivel move.
    assert np.array_equal(pose.upper_blocked, ~upper.contains(free.upper))
    assert np.array_equal(pose.end_blocked, ~end.contains(free.end))
    kept = ~(pose.upper_blocked | pose.end_blocked)
    assert np.abs(pose.quats[kept] - free.quats[kept]).max(initial=0.0) < 1e-12
    assert _wrap_diff(pose.swivel[kept], swivel[kept]).max(initial=0.0) == 0.0
    # A clamp acts only when no swivel satisfies both limits (else by rounding at the boundary).
    feasible = ~pose.no_feasible_swivel
    assert pose.orientation_error[feasible].max(initial=0.0) < 1e-6
    tip = np.linalg.norm(L.forward(chain, pose.quats)[:, 2] - targets, axis=1)
    assert np.allclose(pose.tip_error, tip, atol=1e-12)
    assert np.all(pose.reached == (tip <= 1e-9 * _reach(chain)))
    assert np.all(pose.reached[~pose.no_feasible_swivel])
    assert np.all(pose.status[pose.upper_clamped & ~pose.out_of_reach & ~pose.reached] == L.STATUS_LIMITED)
    assert np.all(pose.status[~pose.out_of_reach & pose.reached] == L.STATUS_OK)
    # R2 is computed after R1: orientation stays exact where the end limit did not act.
    ok = ~pose.end_clamped
    assert np.all(pose.orientation_error[ok] < 1e-9)


def test_euler_limit_from_euler_limits_module():
    euler_limits = pytest.importorskip("jointlimit_addon.core.euler_limits")
    rng = np.random.default_rng(9)
    chain = _random_chain(rng)
    upper = euler_limits.EulerLimit(x=(-0.4, 0.4), y=(-0.2, 0.2), z=(-0.6, 0.3))
    targets = _targets(rng, chain, 32)
    pose = L.solve_position(chain, targets, 0.5, limits=(upper, (0.0, 2.0), None))
    assert upper.contains(pose.upper).all()
    assert np.all((pose.hinge_angle >= -1e-12) & (pose.hinge_angle <= 2.0 + 1e-12))
    assert np.all(pose.reached | pose.upper_clamped | pose.out_of_reach)


# ---------------------------------------------------------------------------- batch and API


@FAST
@given(SEEDS)
@example(seed=234893)       # solutions on a cone's edge: clamp moved what contains held
@example(seed=52894983)
@example(seed=331848)       # the no-feasible-swivel fallback's flat minimum
@example(seed=415)          # the same, in the end bone's orientation (1.2e-7, numpy 1.26)
@example(seed=1632)         # the chosen swivel's R1 as -q on one path and q on the other
def test_batch_equals_loop_of_singles(seed):
    rng = np.random.default_rng(seed)
    chain = _random_chain(rng)
    targets = _targets(rng, chain, 12, -0.3, 1.3)
    swivel = rng.uniform(-np.pi, np.pi, 12)
    rot = Q.random_unit(12, rng)
    batch_p = L.solve_position(chain, targets, swivel)
    batch_o = L.solve_pose(chain, targets, rot, swivel)
    for i in range(12):
        p = L.solve_position(chain, targets[i], swivel[i])
        o = L.solve_pose(chain, targets[i], rot[i], swivel[i])
        assert np.abs(p.quats - batch_p.quats[i]).max() < 1e-10  # scalar vs numpy rounding (seed 3930: 1.6e-11)
        assert np.abs(o.quats - batch_o.quats[i]).max() < 1e-10
        assert abs(p.hinge_angle - batch_p.hinge_angle[i]) < 1e-12
        assert abs(p.tip_error - batch_p.tip_error[i]) < 1e-9 * _reach(chain)
        assert p.status == batch_p.status[i] and o.status == batch_o.status[i]
    limits = (ConeLimit(0.6), (-0.3, 1.5), ConeLimit(0.4))
    batch_l = L.solve_pose(chain, targets, rot, swivel, limits=limits)
    for i in range(12):
        o = L.solve_pose(chain, targets[i], rot[i], swivel[i], limits=limits)
        # the swivel search is a root find; with no feasible swivel a golden-section search finds
        # the flat minimum of the clamping's miss, to ~1e-7 (seed 331848: 2.7e-7)
        tol = 1e-6 if batch_l.no_feasible_swivel[i] else 1e-9
        assert np.abs(o.quats - batch_l.quats[i]).max() < tol
        assert abs(o.tip_error - batch_l.tip_error[i]) < tol * _reach(chain)
        assert abs(o.orientation_error - batch_l.orientation_error[i]) < max(1e-7, 2.0 * tol)
        for flag in ("reached", "out_of_reach", "hinge_clamped", "upper_clamped", "end_clamped"):
            assert getattr(o, flag) == getattr(batch_l, flag)[i], flag
    grid = L.solve_position(chain, targets.reshape(3, 4, 3), swivel.reshape(3, 4))
    assert np.abs(grid.quats.reshape(12, 3, 4) - batch_p.quats).max() == 0.0


def test_batched_parent_pose_equals_loop():
    rng = np.random.default_rng(12)
    chain = _random_chain(rng)
    poses = np.stack([_mat(q, rng.normal(size=3)) for q in Q.random_unit(6, rng)])
    batched = chain.with_parent(poses)
    targets = batched.root + rng.normal(size=(6, 3))
    res = L.solve_position(batched, targets, 0.4)
    for i in range(6):
        single = L.solve_position(chain.with_parent(poses[i]), targets[i], 0.4)
        assert np.abs(single.quats - res.quats[i]).max() < 1e-12
    assert np.allclose(L.forward(batched, res.quats)[:, 0], batched.root)


def test_uniform_parent_scale_scales_reach():
    rng = np.random.default_rng(13)
    chain = _random_chain(rng, parent=False)
    scaled = chain.with_parent(np.diag([2.0, 2.0, 2.0, 1.0]), np.eye(4))
    lo, hi = scaled.distance_range()
    assert np.isclose(hi, 2 * chain.d_max) and np.isclose(lo, 2 * chain.d_min)
    target = _targets(rng, scaled, 1, 0.1, 0.9)[0]
    pose = L.solve_position(scaled, target, 1.0)
    assert np.linalg.norm(L.forward(scaled, pose.quats)[2] - target) < 1e-9


def test_is_reachable_matches_distance_band():
    rng = np.random.default_rng(14)
    chain = _random_chain(rng)
    targets = _targets(rng, chain, 200, -0.5, 1.5)
    d = np.linalg.norm(targets - chain.root, axis=1)
    lo, hi = chain.distance_range()
    assert np.array_equal(L.is_reachable(chain, targets), (d >= lo) & (d <= hi))
    assert L.is_reachable(chain, targets[0]).shape == ()


def test_forward_tail_and_lengths():
    chain = L.LimbChain(np.eye(4), _mat(Q.identity(), [0, 1, 0]), _mat(Q.identity(), [0, 3, 0]), end_length=0.5)
    p = L.forward(chain, np.tile(Q.identity(), (3, 1)))
    assert np.allclose(p, [[0, 0, 0], [0, 1, 0], [0, 3, 0], [0, 3.5, 0]])
    assert chain.length_upper == 1.0 and chain.length_lower == 2.0


_LOWER, _END = _mat(Q.identity(), [0, 1, 0]), _mat(Q.identity(), [0, 2, 0])


@pytest.mark.parametrize(
    "call",
    [
        lambda c: L.solve_position(c, [np.nan, 0, 0], 0.0),
        lambda c: L.solve_position(c, [1, 0], 0.0),
        lambda c: L.solve_position(c, [1, 0, 0], np.inf),
        lambda c: L.solve_pose(c, [1, 0, 0], [0, 0, 0, 0], 0.0),
        lambda c: L.solve_position(c, [1, 0, 0], 0.0, limits=(None, (1.0, 0.0), None)),
        lambda c: L.get_swivel(c, np.tile(Q.identity(), (2, 1))),
        lambda c: c.with_parent(np.diag([1.0, 2.0, 1.0, 1.0]), np.eye(4)),
        lambda c: c.with_parent(np.diag([-1.0, 1.0, 1.0, 1.0]), np.eye(4)),
        lambda c: L.LimbChain(np.eye(3), np.eye(4), np.eye(4)),
        lambda c: L.LimbChain(np.eye(4), np.eye(4), np.eye(4)),
        lambda c: L.LimbChain(np.eye(4), _LOWER, _END, hinge_axis=[0, 0, 0]),
        lambda c: L.LimbChain(np.eye(4), _LOWER, _END, parent_pose=np.eye(4)),
    ],
)
def test_bad_input_raises(call):
    chain = L.LimbChain(np.eye(4), _mat(Q.identity(), [0, 1, 0]), _mat(Q.identity(), [0, 2, 0]))
    with pytest.raises(ValueError):
        call(chain)


@pytest.mark.parametrize("seed", range(6))
def test_a_target_just_past_the_limits_is_missed_by_round_off_only(seed):
    """A pose whose upper bone sits a hair (1e-6 rad) outside a small swing-twist limit reaches a
    target that no swivel reaches inside it: the fallback pose (clamped at the best swivel) lands
    within ~1e-6 of the limb's length of it, not a 5° grid step away (~1e-2, as before)."""
    from jointlimit_addon.core.limits import JointLimit

    rng = np.random.default_rng(seed)
    chain = _random_chain(rng, parent=False, straight=True, hinge_axis=[1.0, 0.0, 0.0])  # one hinge branch
    upper = JointLimit(shape="OVAL", swing_x=(-0.2, 0.3), swing_z=(-0.25, 0.15), twist=(-0.2, 0.2))
    q_in = Q.as_unit_quats(upper.clamp(Q.random_unit(1, rng)[0]))
    outward = Q.as_unit_quats(upper.clamp(Q.random_unit(1, rng)[0]))     # another point on the edge
    axis = np.cross(q_in[1:], outward[1:])
    q_out = Q.mul(Q.from_axis_angle(axis / np.linalg.norm(axis), -1e-6), q_in)
    theta = rng.uniform(0.3, 2.0)
    quats = np.stack((q_out, Q.from_axis_angle(chain.axis, theta), Q.identity()))
    target = L.forward(chain, quats)[2]
    pose = L.solve_position(chain, target, rng.uniform(-np.pi, np.pi), limits=L.LimbLimits(upper, (0.05, 2.8), None))
    assert upper.contains(pose.upper) or Q.angle_between(upper.clamp(pose.upper), pose.upper) < 1e-12
    assert float(pose.tip_error) <= 2e-6 * _reach(chain)


def test_hinge_residual_is_what_the_rotation_holds_besides_its_hinge_turn():
    """``q = H(theta) residual`` with the residual turning nothing about the hinge axis; a pure
    hinge turn has none; and ``rest_hinge_axis`` is the axis the chain takes from the rest bend."""
    rng = np.random.default_rng(7)
    for _ in range(20):
        chain = _random_chain(rng)
        q = Q.random_unit(1, rng)[0]
        residual = L.hinge_residual(chain, q)
        assert abs(np.dot(residual[1:], chain.axis)) < 1e-12
        turn = Q.from_axis_angle(chain.axis, L._hinge_of(chain, q))
        assert Q.angle_between(Q.mul(turn, residual), q) < 1e-12
        pure = Q.from_axis_angle(chain.axis, rng.uniform(-3.0, 3.0))
        assert Q.angle_between(L.hinge_residual(chain, pure), Q.identity()) < 1e-12
        assert np.allclose(L.rest_hinge_axis(chain.upper_rest, _lower_rest(chain)), chain.axis, atol=1e-12)


def _lower_rest(chain):
    """The lower bone's rest matrix of ``chain`` (from the upper's and the relative rest frame)."""
    m = chain.upper_rest.copy()
    m[:3, :3] = chain.upper_rest[:3, :3] @ chain.rel_lower
    return m
