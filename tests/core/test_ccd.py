"""Tests of the length-weighted CCD IK [004 §2, eq.1; SPEC §4]."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointlimit_addon.core import ccd, ccd_steps, projection, quat
from jointlimit_addon.core.euler_limits import HingeLimit
from jointlimit_addon.core.limits import JointLimit


# --- test doubles and chain builders ------------------------------------------------------

class ConeLimit:
    """Protocol test double: swing inside a cone about local +Y, twist within +-twist_max.

    Swing-twist q = q_swing q_twist with q_twist about Y (SPEC §1). ``clamp`` shrinks the
    swing angle onto the cone and clamps the twist angle: a point inside is unchanged and
    clamping twice equals once. Plain floats per quaternion keep the solver tests fast.
    """

    def __init__(self, swing_max, twist_max):
        self.swing_max = swing_max
        self.twist_max = twist_max

    @staticmethod
    def _split(q):
        """(swing axis (x, z), swing angle, twist angle) of one unit quaternion."""
        w, x, y, z = q if q[0] >= 0 else -np.asarray(q)
        r = math.hypot(w, y)
        if r < 1e-12:  # the pole: a half-turn swing, twist undefined -> 0
            return (x, z), math.pi, 0.0
        tw, ty = w / r, y / r
        # swing = q * conj(twist); its y component vanishes.
        sw, sx, sz = w * tw + y * ty, x * tw + z * ty, z * tw - x * ty
        return (sx, sz), 2.0 * math.atan2(math.hypot(sx, sz), sw), 2.0 * math.atan2(ty, tw)

    def contains(self, q, eps=1e-9):
        q = np.asarray(q, dtype=np.float64)
        flat = [self._split(row) for row in q.reshape(-1, 4)]
        ok = [a <= self.swing_max + eps and abs(p) <= self.twist_max + eps for _, a, p in flat]
        return np.array(ok).reshape(q.shape[:-1])

    def clamp(self, q):
        q = np.asarray(q, dtype=np.float64)
        if q.shape == (4,):
            return np.array(self._clamp_one(q))
        return np.array([self._clamp_one(row) for row in q.reshape(-1, 4)]).reshape(q.shape)

    def _clamp_one(self, q):
        (sx, sz), angle, psi = self._split(q)
        norm = math.hypot(sx, sz)
        ax, az = (sx / norm, sz / norm) if norm > 1e-15 else (1.0, 0.0)
        a = 0.5 * min(angle, self.swing_max)
        p = 0.5 * max(-self.twist_max, min(self.twist_max, psi))
        cs, sx, sz = math.cos(a), math.sin(a) * ax, math.sin(a) * az
        cp, sp = math.cos(p), math.sin(p)
        return (cs * cp, sx * cp - sz * sp, cs * sp, sx * sp + sz * cp)  # swing * twist


def test_cone_limit_double_is_a_projection():
    """The test double itself: inside points unchanged, result inside, idempotent."""
    limit = ConeLimit(0.6, 0.3)
    q = quat.random_unit(300, 11)
    c = limit.clamp(q)
    assert np.all(limit.contains(c))
    np.testing.assert_allclose(limit.clamp(c), c, atol=1e-12)
    inside = q[limit.contains(q)]
    assert len(inside) > 0
    np.testing.assert_allclose(quat.canonical(limit.clamp(inside)), quat.canonical(inside), atol=1e-12)


def zigzag_chain(n, bend=0.3):
    """A connected, slightly bent chain of n unit-ish bones going up +Y."""
    points = [np.zeros(3)]
    for i in range(n):
        points.append(points[-1] + np.array([bend * (-1) ** i, 1.0, 0.1 * (i % 3)]))
    return ccd.Chain.from_points(points)


def random_quats(rng, n, max_angle):
    axes = rng.normal(size=(n, 3))
    return quat.from_axis_angle(axes, rng.uniform(0.0, max_angle, size=n))


def success_rate(chain, targets, **kwargs):
    errors = np.array([ccd.solve(chain, None, t, **kwargs).error for t in targets])
    return float(np.mean(errors <= 1e-3 * chain.length))


# --- the chain model ----------------------------------------------------------------------

def _pose_matrix(q, head=np.zeros(3)):
    m = np.eye(4)
    m[:3, :3] = quat.to_matrix(q)
    m[:3, 3] = head
    return m


def test_forward_matches_blender_matrix_composition():
    """pose_i = pose_{i-1} @ (rest_{i-1}^-1 @ rest_i) @ R_i, root from parent_pose @ parent_rest^-1,
    with unconnected bones and a uniformly scaled, moved parent."""
    rng = np.random.default_rng(3)
    n = 4
    rest = np.stack([_pose_matrix(q, h) for q, h in zip(quat.random_unit(n, rng), rng.normal(size=(n, 3)))])
    lengths = rng.uniform(0.5, 2.0, size=n)
    parent_rest = _pose_matrix(quat.random_unit(1, rng)[0], rng.normal(size=3))
    parent_pose = _pose_matrix(quat.random_unit(1, rng)[0], rng.normal(size=3))
    parent_pose[:3, :3] *= 1.7
    chain = ccd.Chain.from_rest_matrices(rest, lengths, parent_pose, parent_rest)
    local = quat.random_unit(n, rng)

    expected = []
    prev_pose, prev_rest = parent_pose, parent_rest
    for i in range(n):
        pose = prev_pose @ np.linalg.inv(prev_rest) @ rest[i] @ _pose_matrix(local[i])
        expected.append(pose[:3, 3])
        prev_pose, prev_rest = pose, rest[i]
    expected.append((prev_pose @ np.array([0.0, lengths[-1], 0.0, 1.0]))[:3])

    np.testing.assert_allclose(ccd.forward(chain, local), np.array(expected), atol=1e-12)
    assert chain.base_scale == pytest.approx(1.7)
    gaps = np.linalg.norm(np.diff(rest[:, :3, 3], axis=0), axis=-1)
    assert chain.length == pytest.approx(1.7 * (gaps.sum() + lengths[-1]))


def test_weights_are_eq1_suffix_sums():
    """[004 eq.1]: w_i = sum_{j>=i} l_j / sum_k l_k, root first."""
    chain = ccd.Chain.from_points([[0, 0, 0], [0, 1, 0], [0, 3, 0], [0, 6, 0]])
    np.testing.assert_allclose(chain.weights, [1.0, 5.0 / 6.0, 3.0 / 6.0])
    np.testing.assert_allclose(chain.lengths, [1.0, 2.0, 3.0])


def test_disconnected_links_weigh_by_joint_distance():
    """A gap between bones belongs to the parent's link: l_i = |joint_{i+1} - joint_i|."""
    rest = np.stack([np.eye(4)] * 2)
    rest[1, :3, 3] = [0.0, 3.0, 0.0]  # bone 0 (length 1) ends at y=1, bone 1 starts at y=3
    chain = ccd.Chain.from_rest_matrices(rest, [1.0, 1.0])
    np.testing.assert_allclose(chain.links, [3.0, 1.0])
    np.testing.assert_allclose(chain.weights, [1.0, 0.25])
    assert chain.length == pytest.approx(4.0)
    result = ccd.solve(chain, None, [0.0, 0.0, 4.0], iterations=500)
    np.testing.assert_allclose(ccd.forward(chain, result.local_quats)[-1], [0.0, 0.0, 4.0], atol=1e-2)


# --- convergence --------------------------------------------------------------------------

@pytest.mark.parametrize("n, max_angle", [(3, 1.5), (10, 0.6), (30, 0.3)])
@pytest.mark.parametrize("use_weights", [True, False])
def test_reachable_targets_unlimited(n, max_angle, use_weights):
    """Targets made by FK of random poses are reached (tip error <= 1e-3 x chain length)."""
    rng = np.random.default_rng(n)
    chain = zigzag_chain(n)
    targets = [ccd.forward(chain, random_quats(rng, n, max_angle))[-1] for _ in range(100)]
    rate = success_rate(chain, targets, iterations=600, use_weights=use_weights)
    assert rate >= 0.99


@pytest.mark.parametrize("n, floor", [(3, 0.95), (10, 0.95), (30, 0.95)])
def test_reachable_targets_with_limits_stay_inside(n, floor):
    """With cone limits (swing 50 deg, twist 20 deg) every returned joint respects its limit,
    and targets made by FK of limit-respecting poses are mostly reached."""
    rng = np.random.default_rng(100 + n)
    chain = zigzag_chain(n)
    limit = ConeLimit(math.radians(50), math.radians(20))
    limits = [limit] * n
    hits = 0
    trials = 60
    for _ in range(trials):
        pose = limit.clamp(random_quats(rng, n, 1.2))
        assert np.all(limit.contains(pose))
        result = ccd.solve(chain, None, ccd.forward(chain, pose)[-1], iterations=600, limits=limits)
        assert np.all(limit.contains(result.local_quats))
        hits += result.error <= 1e-3 * chain.length
    assert hits / trials >= floor


def _real_limits(n):
    """A mix of the project's limit kinds (SPEC §2), skipped if those modules are missing."""
    limits = pytest.importorskip("jointlimit_addon.core.limits")
    euler = pytest.importorskip("jointlimit_addon.core.euler_limits")
    r = math.radians
    kinds = [
        lambda: limits.JointLimit("RECT", swing_x=(r(-60), r(60)), swing_z=(r(-40), r(40)), twist=(r(-20), r(20))),
        lambda: limits.JointLimit("OVAL", swing_x=(r(-70), r(50)), swing_z=(r(-45), r(45)), twist=(r(-15), r(15)),
                                  correction="SIMPLE"),
        lambda: euler.HingeLimit((r(-10), r(120))),
        lambda: euler.EulerLimit(x=(r(-60), r(60)), y=(r(-20), r(20)), z=(r(-45), r(45))),
        lambda: euler.EulerMultiLimit(x=(r(-120), r(120)), y=(r(-20), r(20)), z=(r(-45), r(45))),
    ]
    return [kinds[i % len(kinds)]() for i in range(n)]


@pytest.mark.parametrize("n, floor", [(3, 0.85), (10, 0.9)])
def test_project_limits_are_respected(n, floor):
    """With the real JointLimit / HingeLimit / EulerLimit / EulerMultiLimit objects mixed along
    the chain, no returned joint violates its limit and limit-respecting targets are reached
    (measured: 3 bones 92 %, 10 bones 100 %)."""
    chain = zigzag_chain(n)
    limits = _real_limits(n)
    rng = np.random.default_rng(n)
    trials, hits = 30, 0
    for _ in range(trials):
        pose = np.array([lim.clamp(q) for lim, q in zip(limits, random_quats(rng, n, 1.5))])
        result = ccd.solve(chain, None, ccd.forward(chain, pose)[-1], iterations=600, limits=limits)
        assert all(bool(lim.contains(q)) for lim, q in zip(limits, result.local_quats))
        hits += result.error <= 1e-3 * chain.length
    assert hits / trials >= floor


class HingeDouble:
    """Protocol test double of a 1-DOF joint about local X (exposes ``axis`` like HingeLimit)."""

    axis = np.array([1.0, 0.0, 0.0])

    def contains(self, q):
        q = np.asarray(q, dtype=np.float64)
        return np.linalg.norm(q[..., 2:], axis=-1) <= 1e-9

    def clamp(self, q):
        q = np.asarray(q, dtype=np.float64)
        out = np.zeros_like(q)
        out[..., :2] = q[..., :2]
        return out / np.linalg.norm(out, axis=-1, keepdims=True)


def test_hinge_joint_turns_about_its_axis():
    """A hinge's CCD step is the best rotation about its axis: one sweep lands the effector
    on the target's direction projected into the hinge plane, where a free 3-D step followed
    by the projection would barely move (its axis is nearly normal to the hinge)."""
    chain = ccd.Chain.from_rest_matrices(np.eye(4)[None], [1.0])
    target = [1.0, 0.0, 0.1]
    result = ccd.solve(chain, None, target, iterations=1, limits=[HingeDouble()])
    tip = ccd.forward(chain, result.local_quats)[-1]
    np.testing.assert_allclose(tip, [0.0, 0.0, 1.0], atol=1e-12)
    assert np.all(HingeDouble().contains(result.local_quats))


def test_start_pose_outside_limits_is_clamped():
    chain = zigzag_chain(3)
    limit = ConeLimit(0.2, 0.1)
    start = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), np.full(3, 1.0))
    result = ccd.solve(chain, start, [5.0, 1.0, 0.0], iterations=3, limits=[limit] * 3)
    assert np.all(limit.contains(result.local_quats))


def test_weighting_moves_motion_toward_the_root():
    """[004 §2]: the weights of eq.1 lower the tip joint's share of the total rotation."""
    rng = np.random.default_rng(7)
    chain = zigzag_chain(10)
    targets = [ccd.forward(chain, random_quats(rng, 10, 0.5))[-1] for _ in range(40)]
    weighted = ccd.rotation_share(chain, targets, use_weights=True, iterations=600)
    plain = ccd.rotation_share(chain, targets, use_weights=False, iterations=600)
    root_weighted = ccd.rotation_share(chain, targets, joint=0, use_weights=True, iterations=600)
    root_plain = ccd.rotation_share(chain, targets, joint=0, use_weights=False, iterations=600)
    assert weighted < 0.8 * plain
    assert root_weighted > root_plain


def test_unit_angle_caps_every_joint_per_iteration():
    chain = zigzag_chain(6)
    cap = math.radians(2.0)
    seen = [quat.identity((6,))]
    ccd.solve(chain, None, [3.0, 2.0, 1.0], iterations=30, tolerance=0.0, unit_angle=cap,
              callback=lambda it, q: seen.append(q))
    steps = quat.angle_between(np.array(seen[:-1]), np.array(seen[1:]))
    assert len(seen) == 31
    assert steps.max() <= cap + 1e-12
    assert steps.max() >= cap - 1e-9  # the cap is active for this far target


def test_unit_angle_still_converges():
    chain = zigzag_chain(5)
    target = ccd.forward(chain, random_quats(np.random.default_rng(1), 5, 0.5))[-1]
    result = ccd.solve(chain, None, target, iterations=2000, unit_angle=math.radians(1.0))
    assert result.reached


def test_unreachable_target_stretches_the_chain_toward_it():
    chain = zigzag_chain(5)
    direction = np.array([1.0, 0.5, -0.3]) / np.linalg.norm([1.0, 0.5, -0.3])
    result = ccd.solve(chain, None, 3.0 * chain.length * direction, iterations=600)
    tip = ccd.forward(chain, result.local_quats)[-1]
    assert not result.reached
    assert np.linalg.norm(tip) == pytest.approx(chain.length, rel=1e-3)
    assert np.dot(tip / np.linalg.norm(tip), direction) > math.cos(math.radians(0.5))


@pytest.mark.parametrize("limit", ["euler", "quat_swing"])
def test_a_target_just_past_reach_with_limits_ends_when_the_sweeps_stall(limit):
    """With Euler or Quaternion Swing limits the corrections never settle on a fixed point near
    the stretched chain: the solve ends once its sweeps stall (it ran the whole sweep budget, 5-8
    seconds on an 8-bone chain in the viewport), as near the target as the chain without limits."""
    from jointlimit_addon.core.euler_limits import EulerLimit, QuatSwingLimit

    chain = zigzag_chain(8)
    r = math.radians
    make = {"euler": lambda: EulerLimit((r(-60), r(60)), (r(-40), r(40)), (r(-60), r(60)), order="ZXY"),
            "quat_swing": lambda: QuatSwingLimit(r(70), twist=(r(-40), r(40)))}[limit]
    direction = np.array([1.0, 0.5, -0.3]) / np.linalg.norm([1.0, 0.5, -0.3])
    for beyond in (1.002, 3.0):     # just past reach; far: the stall counts above the gap no pose closes
        target = beyond * chain.length * direction
        free = ccd.solve(chain, None, target, iterations=1000)
        limited = ccd.solve(chain, None, target, iterations=1000, limits=[make() for _ in range(8)])
        assert not limited.reached and limited.iterations < 300
        assert limited.error <= free.error + 0.1 * (free.error - (beyond - 1.0) * chain.length) + 1e-3 * chain.length


# --- degenerate and bad inputs -------------------------------------------------------------

def test_target_at_effector_changes_nothing():
    chain = zigzag_chain(4)
    start = random_quats(np.random.default_rng(2), 4, 0.5)
    result = ccd.solve(chain, start, ccd.forward(chain, start)[-1])
    assert result.reached and result.iterations == 0 and result.error == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(result.local_quats, start)


def test_target_at_root_gives_finite_result_and_no_worse_error():
    chain = zigzag_chain(4)
    start_error = np.linalg.norm(ccd.forward(chain)[-1])
    result = ccd.solve(chain, None, [0.0, 0.0, 0.0], iterations=200)
    assert np.all(np.isfinite(result.local_quats))
    assert result.error < 0.1 * start_error


def test_target_exactly_behind_turns_about_local_x():
    """Effector, joint and target collinear with the target behind: a deterministic half turn."""
    chain = ccd.Chain.from_points([[0, 0, 0], [0, 2, 0]])
    result = ccd.solve(chain, None, [0.0, -2.0, 0.0])
    assert result.reached
    axis, angle = quat.to_axis_angle(result.local_quats[0])
    assert angle == pytest.approx(math.pi)
    assert abs(axis[0]) == pytest.approx(1.0)  # local X of the bone (from_points roll)
    again = ccd.solve(chain, None, [0.0, -2.0, 0.0])
    np.testing.assert_array_equal(result.local_quats, again.local_quats)


def test_solver_is_deterministic():
    chain = zigzag_chain(8)
    target = [2.0, 4.0, -1.0]
    a = ccd.solve(chain, None, target, limits=[ConeLimit(0.8, 0.3)] * 8)
    b = ccd.solve(chain, None, target, limits=[ConeLimit(0.8, 0.3)] * 8)
    np.testing.assert_array_equal(a.local_quats, b.local_quats)
    assert a.error == b.error and a.iterations == b.iterations


def test_zero_length_bone_is_rejected():
    with pytest.raises(ValueError, match="length"):
        ccd.Chain.from_rest_matrices(np.tile(np.eye(4), (2, 1, 1)), [1.0, 0.0])
    with pytest.raises(ValueError, match="zero-length"):
        ccd.Chain.from_points([[0, 0, 0], [0, 1, 0], [0, 1, 0]])


@pytest.mark.parametrize("target", [[np.nan, 0.0, 0.0], [np.inf, 1.0, 1.0], [1.0, 2.0], None, [1e160, 1e160, 0.0]])
def test_bad_target_is_rejected(target):
    with pytest.raises(ValueError):
        ccd.solve(zigzag_chain(2), None, target)


def test_far_but_computable_targets_stretch_the_chain():
    """Targets out of reach up to float32's range (Blender's coordinates) are solved (the chain
    stretched toward them); only coordinates whose squares would overflow are refused."""
    for far in (1e6, 3e38, 1e150):
        result = ccd.solve(zigzag_chain(3), None, [far, far, 0.0])
        assert np.all(np.isfinite(result.local_quats))


def test_other_bad_inputs_are_rejected():
    chain = zigzag_chain(3)
    with pytest.raises(ValueError):
        ccd.solve(chain, quat.identity((2,)), [1.0, 1.0, 1.0])
    with pytest.raises(ValueError):
        ccd.solve(chain, np.full((3, 4), np.nan), [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="one entry"):
        ccd.solve(chain, None, [1.0, 1.0, 1.0], limits=[None])
    with pytest.raises(ValueError, match="clamp"):
        ccd.solve(chain, None, [1.0, 1.0, 1.0], limits=[object()] * 3)
    with pytest.raises(ValueError, match="unit_angle"):
        ccd.solve(chain, None, [1.0, 1.0, 1.0], unit_angle=0.0)
    sheared = np.eye(4)
    sheared[0, 1] = 0.5
    with pytest.raises(ValueError, match="rigid"):
        ccd.Chain.from_rest_matrices(sheared[None], [1.0])
    squashed = np.diag([1.0, 2.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="uniform scale"):
        ccd.Chain.from_rest_matrices(np.eye(4)[None], [1.0], parent_pose=squashed)


def test_a_parent_frame_off_uniform_by_float32_noise_is_taken():
    """Rigify's tail: the parent frame read from Blender's float32 matrices is 1.5e-6 off a pure
    rotation (M^T M), and the chain was refused as 'scaled unevenly' though every scale is 1; a
    scale uneven by a thousandth is still refused."""
    parent_pose = np.eye(4)
    parent_pose[:3, :3] = quat.to_matrix(quat.from_axis_angle(np.array([0.3, 0.5, 0.8]) / np.sqrt(0.98), 1.1))
    noisy = parent_pose.copy()
    noisy[:3, 0] += 1.5e-6 * noisy[:3, 1]     # M^T M 1.5e-6 off the diagonal
    ccd.Chain.from_rest_matrices(np.eye(4)[None], [1.0], parent_pose=noisy)
    uneven = parent_pose.copy()
    uneven[:3, 0] *= 1.001
    with pytest.raises(ValueError, match="uniform scale"):
        ccd.Chain.from_rest_matrices(np.eye(4)[None], [1.0], parent_pose=uneven)


def test_scaled_parent_solves_in_armature_units():
    parent_pose = np.eye(4)
    parent_pose[:3, :3] = 2.0 * quat.to_matrix(quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), 0.7))
    parent_pose[:3, 3] = [1.0, -2.0, 0.5]
    rest = np.stack([np.eye(4)] * 3)
    rest[1, 1, 3], rest[2, 1, 3] = 1.0, 2.0
    chain = ccd.Chain.from_rest_matrices(rest, [1.0, 1.0, 1.0], parent_pose)
    target = ccd.forward(chain, random_quats(np.random.default_rng(5), 3, 0.8))[-1]
    result = ccd.solve(chain, None, target, tolerance=1e-6, iterations=2000)
    assert result.reached
    assert np.linalg.norm(ccd.forward(chain, result.local_quats)[-1] - target) <= 1e-6


# --- properties ---------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 6),
    use_weights=st.booleans(),
    unit_angle=st.one_of(st.none(), st.floats(0.01, 3.0)),
)
def test_unlimited_error_never_grows_and_is_finite(seed, n, use_weights, unit_angle):
    """Every CCD step turns a joint part of the way along the shortest arc toward the target,
    which cannot increase the effector distance; nothing becomes NaN."""
    rng = np.random.default_rng(seed)
    chain = ccd.Chain.from_points(np.cumsum(rng.normal(size=(n + 1, 3)), axis=0))
    start = quat.random_unit(n, rng)
    target = rng.normal(size=3) * 2.0 * chain.length
    start_error = np.linalg.norm(ccd.forward(chain, start)[-1] - target)
    result = ccd.solve(chain, start, target, iterations=20, use_weights=use_weights, unit_angle=unit_angle)
    assert np.all(np.isfinite(result.local_quats))
    np.testing.assert_allclose(np.linalg.norm(result.local_quats, axis=-1), 1.0, atol=1e-12)
    assert result.error <= start_error + 1e-9
    assert result.error == pytest.approx(np.linalg.norm(ccd.forward(chain, result.local_quats)[-1] - target), abs=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_one_sweep_turns_each_joint_by_its_weight_times_the_shortest_arc(seed):
    """[004 eq.1]: in one sweep (tip joint first) joint i turns by exactly ``w_i`` times the
    angle of the shortest arc taking joint->effector to joint->target, toward the target."""
    rng = np.random.default_rng(seed)
    n = 5
    points = np.cumsum(np.vstack([np.zeros(3), rng.normal(size=(n, 3)) * 0.2 + [0, 0.3, 0]]), axis=0)
    chain = ccd.Chain.from_points(points)
    start = quat.from_axis_angle(rng.normal(size=(n, 3)), rng.uniform(0, 0.6, n))
    target = ccd.forward(chain, quat.from_axis_angle(rng.normal(size=(n, 3)), rng.uniform(0, 0.6, n)))[-1]
    result = ccd.solve(chain, start, target, iterations=1, tolerance=0.0).local_quats
    pose = start.copy()
    weights = chain.lengths[::-1].cumsum()[::-1] / chain.lengths.sum()  # connected: links = bones
    assert np.allclose(weights, chain.weights)
    for i in range(n - 1, -1, -1):
        joints = ccd.forward(chain, pose)
        u, v = joints[-1] - joints[i], target - joints[i]
        arc = np.arctan2(np.linalg.norm(np.cross(u, v)), u @ v)
        pose[i] = result[i]
        u_new = ccd.forward(chain, pose)[-1] - joints[i]
        turned = np.arctan2(np.linalg.norm(np.cross(u, u_new)), u @ u_new)
        left = np.arctan2(np.linalg.norm(np.cross(u_new, v)), u_new @ v)
        assert abs(turned - weights[i] * arc) < 1e-9, i
        assert abs(left - (1.0 - weights[i]) * arc) < 1e-9, i  # in the plane of u and v, toward v
        assert abs(quat.angle_between(result[i], start[i]) - weights[i] * arc) < 1e-9


@pytest.mark.parametrize("shape", ["ELLIPSE", "SUPERELLIPSE"])
@pytest.mark.parametrize("n", [4, 10])
def test_smooth_optimal_limits_reach_limit_respecting_targets(shape, n):
    """Smooth OPTIMAL limits sweep with their SIMPLE twin first (cheap), then OPTIMAL: targets
    made from poses inside the limits are reached, and no joint ever ends outside."""
    rng = np.random.default_rng(n)
    points = np.zeros((n + 1, 3))
    points[:, 1] = np.arange(n + 1) * 0.1
    chain = ccd.Chain.from_points(points)
    lim = JointLimit(shape, swing_x=(-0.5, 0.6), swing_z=(-0.3, 0.3), twist=(-0.3, 0.3), exponent=(3.0, 3.0))
    twin = ccd_steps._per_sweep_limit(lim)
    assert twin.correction == "SIMPLE" and twin.region is lim.region and lim.correction == "OPTIMAL"
    hits, count = 0, 60
    for _ in range(count):
        pose = lim.clamp(quat.from_axis_angle(rng.normal(size=(n, 3)), rng.uniform(0, 1.2, n)))
        result = ccd.solve(chain, None, ccd.forward(chain, pose)[-1], iterations=1000, limits=[lim] * n)
        assert lim.contains(result.local_quats).all()
        hits += result.reached
    assert hits >= 0.98 * count
    far = ccd.solve(chain, None, [0.0, 0.0, 5.0], iterations=300, limits=[lim] * n)
    assert lim.contains(far.local_quats).all() and not far.reached


# --- limit-aware steps, restarts, extrapolation (issue 19) ---------------------------------

def _bent_two_bone_chain():
    """Root bone up +Y, second bone bent away from the root's axis (so turning the root about
    its own axis moves the effector)."""
    return ccd.Chain.from_points([[0.0, 0.0, 0.0], [0.0, 0.3, 0.0], [0.12, 0.5, 0.09]])


FROZEN = HingeLimit((0.0, 0.0))  # a joint that cannot move


def _hinge_angle_scan(chain, limit, target, count=20001):
    """Brute force: the distance to ``target`` over the hinge's range (root frozen)."""
    angles = np.linspace(*limit.angle, count)
    tips = np.array([ccd.forward(chain, [quat.identity(), quat.from_axis_angle(limit.axis, a)])[-1]
                     for a in angles])
    return float(np.min(np.linalg.norm(tips - target, axis=-1)))


@pytest.mark.parametrize("seed", range(4))
def test_hinge_step_lands_the_effector_on_the_targets_circle(seed):
    """A hinge joint's CCD step turns about the hinge axis by the signed angle between the
    joint -> effector and joint -> target directions projected onto the hinge plane: one step
    takes the effector to the point of its circle nearest the target (exactly onto a target on
    the circle), within the range; weighted, the angle is ``w_i`` times that."""
    rng = np.random.default_rng(seed)
    chain = _bent_two_bone_chain()
    hinge = HingeLimit((-2.0, 1.5), axis=quat.normalize(rng.normal(size=3)))
    on_circle = ccd.forward(chain, [quat.identity(), quat.from_axis_angle(hinge.axis, rng.uniform(-1.9, 1.4))])[-1]
    result = ccd.solve(chain, None, on_circle, iterations=1, tolerance=0.0, use_weights=False, limits=[FROZEN, hinge])
    assert result.error < 1e-9
    assert hinge.contains(result.local_quats[1])
    off_circle = on_circle + rng.normal(size=3) * 0.1
    result = ccd.solve(chain, None, off_circle, iterations=1, tolerance=0.0, use_weights=False,
                       limits=[FROZEN, hinge])
    assert result.error == pytest.approx(_hinge_angle_scan(chain, hinge, off_circle), abs=1e-6)
    # beyond the range: the nearer end holds the effector nearest the target
    blocked = HingeLimit((-0.2, 0.2), axis=hinge.axis)
    result = ccd.solve(chain, None, on_circle, iterations=1, tolerance=0.0, use_weights=False,
                       limits=[FROZEN, blocked])
    assert result.error == pytest.approx(_hinge_angle_scan(chain, blocked, on_circle), abs=1e-6)
    # weighted [004 eq.1]: w_1 times the signed angle
    free = HingeLimit(None, axis=hinge.axis)
    full = ccd.solve(chain, None, on_circle, iterations=1, tolerance=0.0, use_weights=False, limits=[FROZEN, free])
    part = ccd.solve(chain, None, on_circle, iterations=1, tolerance=0.0, use_weights=True, limits=[FROZEN, free])
    angle_full, angle_part = (float(free.hinge_angle(r.local_quats[1])) for r in (full, part))
    assert angle_part == pytest.approx(chain.weights[1] * angle_full, abs=1e-9)


def _twist(q):
    return float(projection.swing_twist(np.asarray(q))[2])


def test_twist_limited_step_keeps_the_effector_on_the_target_ray():
    """A joint with a twist range whose shortest-arc step twists it out of range turns about
    the joint -> effector axis to the range's end first: the effector stays on the ray to the
    target, where correcting the twist alone would swing it off."""
    chain = _bent_two_bone_chain()
    rng = np.random.default_rng(5)
    twist = (-0.1, 0.1)
    wide = (-3.1, 3.1)  # a swing region that does not bind here: only the twist range acts
    limit = JointLimit("RECT", swing_x=wide, swing_z=wide, twist=twist)
    tested = 0
    for _ in range(40):
        target = ccd.forward(chain, [quat.random_unit(1, rng)[0], quat.identity()])[-1] * rng.uniform(0.6, 1.0)
        plain = ccd.solve(chain, None, target, iterations=1, tolerance=0.0, limits=[None, FROZEN])
        if twist[0] <= _twist(plain.local_quats[0]) <= twist[1]:
            continue  # the plain step needs no twist correction
        tested += 1
        result = ccd.solve(chain, None, target, iterations=1, tolerance=0.0, limits=[limit, FROZEN])
        assert limit.contains(result.local_quats[0])
        assert min(abs(_twist(result.local_quats[0]) - end) for end in twist) < 1e-9
        tip = ccd.forward(chain, result.local_quats)[-1]
        assert np.linalg.norm(np.cross(quat.normalize(tip), quat.normalize(target))) < 1e-9
        assert tip @ target > 0.0
        clamped_only = ccd.forward(chain, [limit.clamp(plain.local_quats[0]), quat.identity()])[-1]
        assert np.linalg.norm(np.cross(quat.normalize(clamped_only), quat.normalize(target))) > 1e-3
    assert tested >= 10


def test_turn_to_twist_solves_for_the_twist():
    """The closed form behind the twist correction: turning ``q`` about ``a`` by ``2h`` gives
    twist ``psi`` exactly."""
    rng = np.random.default_rng(8)
    for _ in range(200):
        q = tuple(quat.random_unit(1, rng)[0])
        a = tuple(quat.normalize(rng.normal(size=3)))
        psi = rng.uniform(-3.0, 3.0)
        h = ccd_steps._turn_to_twist(q, a, psi)
        turned = quat.mul(np.array([math.cos(h), *(math.sin(h) * np.array(a))]), np.array(q))
        assert abs(float(projection.wrap_angle(_twist(turned) - psi))) < 1e-9
        assert -0.5 * math.pi < h <= 0.5 * math.pi


def test_hinge_clamp_on_floats_equals_the_hinge_limit():
    rng = np.random.default_rng(4)
    for k in range(600):
        lo, hi = sorted(rng.uniform(-math.pi, math.pi, 2))
        limit = HingeLimit((lo, hi), axis="X" if k % 3 == 0 else rng.normal(size=3))
        q = quat.from_axis_angle(limit.axis, rng.uniform(-4, 4)) if k % 2 else quat.random_unit(1, rng)[0]
        q = q if rng.uniform() < 0.5 else -q
        np.testing.assert_allclose(ccd_steps._hinge_clamp1(limit, tuple(q)), limit.clamp(q), atol=1e-12)


def human_arm():
    """A plain human arm (upper arm, forearm, hand) with limits of the built-in SHOULDER,
    ELBOW and WRIST presets (radians)."""
    chain = ccd.Chain.from_points([[0.18, 0.0, 1.45], [0.45, 0.02, 1.2], [0.68, -0.02, 1.0], [0.75, -0.02, 0.92]])
    r = np.radians
    return chain, [
        JointLimit("OVAL", swing_x=r((-60, 170)), swing_z=r((-30, 170)), twist=r((-80, 80)), fit="AXES"),
        HingeLimit(r((0, 145))),
        JointLimit("OVAL", swing_x=r((-70, 80)), swing_z=r((-30, 20)), fix_twist=True, fit="AXES"),
    ]


def _inside_pose(limits, rng):
    """Random limit-respecting joint rotations, drawn as the benchmarks draw them: a hinge angle
    uniform in range; a swing point uniform on the (s, t) plane inside the region (rejection
    sampling), a twist uniform in range."""
    out = []
    for lim in limits:
        if isinstance(lim, HingeLimit):
            out.append(quat.from_axis_angle(lim.axis, rng.uniform(*lim.angle)))
            continue
        s0, s1, t0, t1 = lim.region.bounds
        lo, hi = lim.twist if lim.twist else (-math.pi, math.pi)
        while True:
            s, t = rng.uniform(s0, s1), rng.uniform(t0, t1)
            if lim.region.contains_st(np.array([s]), np.array([t]))[0]:
                out.append(projection.from_swing_twist(s, t, 0.0 if lim.fix_twist else rng.uniform(lo, hi)))
                break
    return np.array(out)


def test_restarts_reach_the_human_arms_limit_respecting_targets():
    """Strongly limited 3-bone limbs stall in local minima (elbow straight at its hinge end):
    a stalled solve restarts from seeded random limit-respecting poses, a bounded number of
    times within one sweep budget. Without restarts some targets are missed; with them
    >= 99% are reached, every joint inside its limit, and the solve is deterministic."""
    chain, limits = human_arm()
    rng = np.random.default_rng(19)
    targets = [ccd.forward(chain, _inside_pose(limits, rng))[-1] for _ in range(200)]
    reached = missed_without = restarted = 0
    for target in targets:
        result = ccd.solve(chain, None, target, iterations=1000, limits=limits)
        reached += result.reached
        restarted += result.restarts > 0
        assert 0 <= result.restarts <= ccd.DEFAULT_RESTARTS and result.iterations <= 1000
        for lim, q in zip(limits, result.local_quats):
            assert lim.contains(q)
        if result.restarts:
            missed_without += not ccd.solve(chain, None, target, iterations=1000, limits=limits, restarts=0).reached
            again = ccd.solve(chain, None, target, iterations=1000, limits=limits)
            np.testing.assert_array_equal(again.local_quats, result.local_quats)
    assert reached >= 0.99 * len(targets)
    assert restarted > 0 and missed_without > 0


def test_extrapolated_sweeps_cut_the_sweeps_near_full_reach(monkeypatch):
    """CCD crawls toward targets near the stretched chain's reach; extrapolating a sweep's
    rotations along the geometric series of its gain (kept only when it lowers the error)
    reaches them in far fewer sweeps."""
    chain = ccd.Chain.from_points(np.arange(5)[:, None] * np.array([0.0, 0.0, 0.12]))
    rng = np.random.default_rng(4)
    targets = [ccd.forward(chain, random_quats(rng, 4, 0.3))[-1] for _ in range(30)]
    fast = [ccd.solve(chain, None, t, iterations=1000) for t in targets]
    monkeypatch.setattr(ccd, "EXTRAPOLATE", False)
    slow = [ccd.solve(chain, None, t, iterations=1000) for t in targets]
    assert all(r.reached for r in fast)
    assert np.median([r.iterations for r in fast]) * 4 <= np.median([r.iterations for r in slow])
