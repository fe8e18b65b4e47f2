"""Overlay geometry: outlines of every limit kind on the sphere, twist arcs, world placement."""

import importlib.util
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointlimit_addon.core import overlay_geometry as og
from jointlimit_addon.core import projection, quat
from jointlimit_addon.core.euler_limits import EulerLimit, EulerMultiLimit, HingeLimit, QuatSwingLimit
from jointlimit_addon.core.limits import JointLimit

R = np.radians
POLE = np.array([0.0, -1.0, 0.0])

JOINT_LIMITS = {
    "rect": JointLimit("RECT", swing_x=R((-20, 110)), swing_z=R((-40, 30))),
    "rect_past_90": JointLimit("RECT", swing_x=R((-30, 150)), swing_z=R((-120, 100))),
    "rect_wide": JointLimit("RECT", swing_x=R((-170, 175)), swing_z=R((-160, 165))),
    "oval_upright": JointLimit("OVAL", swing_x=R((-60, 140)), swing_z=R((-30, 40))),
    "oval_lying": JointLimit("OVAL", swing_x=R((-10, 20)), swing_z=R((-130, 95))),
    "polygon_concave": JointLimit("POLYGON", outline=[(-0.5, -0.4), (0.6, -0.3), (0.1, 0.0), (0.5, 0.7), (-0.4, 0.5, 0.3)]),
    "polygon_arcs": JointLimit("POLYGON", outline=[(-1.5, 0.0, 1.0), (2.0, 0.0, 0.6)]),
}
if importlib.util.find_spec("jointlimit_addon.core.regions_smooth") is not None:
    JOINT_LIMITS["ellipse_past_90"] = JointLimit("ELLIPSE", swing_x=R((-40, 160)), swing_z=R((-100, 60)))
    JOINT_LIMITS["superellipse"] = JointLimit("SUPERELLIPSE", swing_x=R((-50, 80)), swing_z=R((-30, 120)),
                                              exponent=(3.0, 6.0))


def gaps(points):
    return np.linalg.norm(np.diff(points, axis=0), axis=-1)


def assert_ordered_closed(points, closed=True, factor=3.0):
    """On the unit sphere, closed (last = first), away from the pole, no jumps: every step is at
    most ``factor`` times the mean step."""
    assert np.allclose(np.linalg.norm(points, axis=-1), 1.0, atol=1e-12)
    if closed:
        assert np.array_equal(points[0], points[-1])
    assert np.min(np.arccos(np.clip(points @ POLE, -1, 1))) >= og.POLE_MARGIN - 1e-12
    g = gaps(points)
    assert g.max() <= factor * g.mean(), (g.max(), g.mean())
    assert g.min() > 0.0


def normals(points):
    """Unit tangent-plane normals of a closed outline (from the neighbours of each point)."""
    body = points[:-1]
    tangent = np.roll(body, -1, axis=0) - np.roll(body, 1, axis=0)
    n = np.cross(body, tangent)
    return n / np.linalg.norm(n, axis=-1, keepdims=True)


def step(points, direction, eps):
    p = points + eps * direction
    return p / np.linalg.norm(p, axis=-1, keepdims=True)


@pytest.mark.parametrize("name", sorted(JOINT_LIMITS))
@pytest.mark.parametrize("n", [16, 64, 200])
def test_joint_limit_outline_is_the_boundary(name, n):
    limit = JOINT_LIMITS[name]
    out = og.swing_outline(limit, n)
    P = out.points
    assert out.closed and P.shape == (n, 3)
    assert_ordered_closed(P)
    region = limit.region
    assert region.contains_sphere(P).all()
    N = normals(P)
    for eps in (1e-7, 1e-5):
        a = region.contains_sphere(step(P[:-1], N, eps))
        b = region.contains_sphere(step(P[:-1], -N, eps))
        assert np.all(a != b), f"{np.count_nonzero(a == b)} points are not on the boundary"


def test_joint_limit_outline_spans_the_ranges():
    """The outline of a rectangle past 90 degrees reaches the corners' angles."""
    P = og.swing_outline(JOINT_LIMITS["rect_past_90"], 400).points
    s, t = projection.sphere_to_plane(P)
    assert np.degrees(2 * np.arctan(s)).min() == pytest.approx(-120, abs=1e-6)
    assert np.degrees(2 * np.arctan(s)).max() == pytest.approx(100, abs=1e-6)
    assert np.degrees(2 * np.arctan(t)).max() == pytest.approx(150, abs=1e-6)


@pytest.mark.parametrize("axis", ["X", "Z", (1.0, 0.5, 0.0)])
@pytest.mark.parametrize("rng", [(-0.2, 2.5), (-math.pi, math.pi), (0.0, math.pi)])
def test_hinge_arc(axis, rng):
    limit = HingeLimit(angle=rng, axis=axis)
    out = og.swing_outline(limit, 50)
    P = out.points
    assert not out.closed and P.shape == (50, 3)
    assert_ordered_closed(P, closed=False, factor=1.0 + 1e-9)
    # every point is +Y turned about the axis by an angle in the range
    a = limit.axis
    y0 = np.array([0.0, 1.0, 0.0]) - a[1] * a  # +Y and P across the axis
    y1 = P - np.outer(P @ a, a)
    theta = np.arctan2(np.cross(y0, y1) @ a, y1 @ y0)
    q = quat.from_axis_angle(a, theta)
    assert np.allclose(quat.rotate(q, [0, 1, 0]), P, atol=1e-12)
    assert theta.min() >= rng[0] - 1e-12 and theta.max() <= rng[1] + 1e-12
    # the ends are the range's ends (or as near the half turn as the pole margin allows)
    reach = math.pi - og.POLE_MARGIN
    assert theta[0] == pytest.approx(max(rng[0], -reach), abs=1e-9)
    assert theta[-1] == pytest.approx(min(rng[1], reach), abs=1e-9)


@pytest.mark.parametrize("max_swing", [R(10), R(60), R(150), math.pi])
def test_quat_swing_cone_circle(max_swing):
    P = og.swing_outline(QuatSwingLimit(max_swing=max_swing), 64).points
    assert P.shape == (64, 3)
    assert_ordered_closed(P)
    angle = np.arccos(np.clip(P[:, 1], -1, 1))
    assert np.allclose(angle, min(max_swing, math.pi - og.POLE_MARGIN), atol=1e-9)


@pytest.mark.parametrize("kwargs", [
    dict(max_swing=R(90), swing_x=R((-20, 50))),
    dict(max_swing=R(120), swing_x=R((10, 80)), swing_z=R((-30, 100))),
    dict(max_swing=R(45), swing_z=R((-90, 5))),
])
def test_quat_swing_with_boxes_is_the_boundary(kwargs):
    limit = QuatSwingLimit(**kwargs)
    P = og.swing_outline(limit, 80).points
    assert_ordered_closed(P, factor=3.5)

    def inside(points):
        return limit.contains(projection.swing_quat_from_point(points))

    assert inside(P).all()
    N = normals(P)
    a, b = inside(step(P[:-1], N, 1e-6)), inside(step(P[:-1], -N, 1e-6))
    assert np.mean(a != b) > 0.95  # corners, where the normal is ill-defined, may miss
    assert np.all(a | b)


def lat_long(P):
    """(b, c) of P = Rz(c) Rx(b) (0, 1, 0): order 'YXZ' (Y first is pure twist)."""
    return np.arcsin(np.clip(P[:, 2], -1, 1)), np.arctan2(-P[:, 0], P[:, 1])


@pytest.mark.parametrize("cls", [EulerLimit, EulerMultiLimit])
@pytest.mark.parametrize("box", [((-30, 60), (-45, 45)), ((-10, 80), (-1, 1)), ((-70, 20), (-120, 100))])
def test_euler_outline_matches_the_analytic_rectangle(cls, box):
    """With Y applied first the swing region of the box is the latitude-longitude rectangle
    x in [x0, x1], z in [z0, z1] (P = Rz(z) Rx(x) Y); the outline follows its edges to a pixel."""
    (x0, x1), (z0, z1) = R(box[0]), R(box[1])
    limit = cls(x=(x0, x1), y=R((-30, 30)), z=(z0, z1), order="YXZ")
    P = og.swing_outline(limit, 64).points
    assert len(P) >= 48
    assert_ordered_closed(P)
    b, c = lat_long(P[:-1])
    pixel = R(4.0)
    assert np.all((b > x0 - pixel) & (b < x1 + pixel) & (c > z0 - pixel) & (c < z1 + pixel))
    edge = np.min(np.abs(np.stack((b - x0, b - x1, c - z0, c - z1))), axis=0)
    assert edge.max() < pixel
    # and it goes all the way round: every edge of the rectangle is visited
    for near in (np.abs(b - x0), np.abs(b - x1), np.abs(c - z0), np.abs(c - z1)):
        assert np.any(near < pixel)


def brute_force_swings(limit, n=400_000, seed=3):
    rng = np.random.default_rng(seed)
    lo, hi = np.array((limit.x, limit.y, limit.z)).T
    e = lo + rng.random((n, 3)) * (hi - lo)
    return quat.rotate(quat.from_euler(e, limit.order), [0, 1, 0])


@pytest.mark.parametrize("limit", [
    EulerLimit(x=R((-30, 60)), y=R((-20, 20)), z=R((-45, 45))),
    EulerMultiLimit(x=R((-30, 120)), y=R((-20, 20)), z=R((-45, 45)), order="XYZ"),
    EulerMultiLimit(x=R((-10, 10)), y=R((-50, 50)), z=R((-80, 60)), order="ZYX"),
], ids=["ZXY", "XYZ_past_90", "ZYX"])
def test_euler_outline_is_near_the_edge_of_the_reachable_swings(limit):
    P = og.swing_outline(limit, 64).points
    assert_ordered_closed(P, factor=3.5)
    cloud = brute_force_swings(limit)

    def distance(points):
        return np.arccos(np.clip((points @ cloud.T).max(axis=1), -1, 1))

    assert distance(P).max() < R(3.0)  # on the region, to about a pixel
    out = normals(P)
    centre = og._swing_of_box_centre(limit)
    out *= np.sign(np.sum(out * (P[:-1] - centre), axis=-1))[:, None]  # away from the centre
    beyond = step(P[:-1], out, R(6.0))
    assert np.mean(distance(beyond) > R(1.5)) > 0.9  # a few degrees outward leaves the region


def test_euler_samples_are_inside_the_box():
    limit = EulerMultiLimit(x=R((-30, 120)), y=R((-20, 20)), z=R((-45, 45)), order="XYZ")
    P, e = og.euler_swing_samples(limit)
    lo, hi = np.array((limit.x, limit.y, limit.z)).T
    assert np.all((e >= lo - 1e-12) & (e <= hi + 1e-12))
    assert np.allclose(quat.rotate(quat.from_euler(e, "XYZ"), [0, 1, 0]), P)
    assert limit.contains(quat.from_euler(e[::97], "XYZ")).all()


class DuckLimit:
    """Any object with the protocol (here a JointLimit behind a wrapper)."""

    def __init__(self, inner):
        self.inner = inner

    def contains(self, q):
        return self.inner.contains(q)

    def clamp(self, q):
        return self.inner.clamp(q)


def test_protocol_only_limits_are_traced_from_clamped_samples():
    inner = JointLimit("RECT", swing_x=R((-40, 70)), swing_z=R((-50, 20)))
    P = og.swing_outline(DuckLimit(inner), 64).points
    assert_ordered_closed(P, factor=3.5)
    exact = og.swing_outline(inner, 2000).points
    d = np.arccos(np.clip((P @ exact.T).max(axis=1), -1, 1))
    assert d.max() < R(3.0)


def test_outline_rejects_bad_input():
    with pytest.raises(ValueError, match="n >= 8"):
        og.swing_outline(JOINT_LIMITS["rect"], 4)
    with pytest.raises(ValueError, match="cannot draw"):
        og.swing_outline(object())


# --- twist arc ---------------------------------------------------------------------------------


def test_twist_range_of_each_kind():
    assert og.twist_range(JointLimit("RECT", swing_x=(-1, 1), swing_z=(-1, 1), twist=(-0.3, 0.5))) == (-0.3, 0.5)
    assert og.twist_range(JointLimit("RECT", swing_x=(-1, 1), swing_z=(-1, 1), fix_twist=True)) == (0.0, 0.0)
    assert og.twist_range(JointLimit("RECT", swing_x=(-1, 1), swing_z=(-1, 1))) is None
    assert og.twist_range(QuatSwingLimit(max_swing=1.0, twist=(-0.2, 0.4))) == pytest.approx((-0.2, 0.4))
    assert og.twist_range(QuatSwingLimit(max_swing=1.0)) is None
    assert og.twist_range(HingeLimit(angle=(0, 1))) is None
    assert og.twist_range(EulerLimit()) is None


@settings(max_examples=60, deadline=None)
@given(st.floats(-3.0, 3.0), st.floats(-1.2, 1.2), st.floats(-1.2, 1.2))
def test_twist_marker_lies_on_the_swung_arc_exactly_when_in_range(psi, s, t):
    lo, hi = -0.4, 0.9
    q = projection.from_swing_twist(s, t, psi)
    arc = og.twist_arc(lo, hi, n=2001, radius=0.3, height=0.6)
    swung = quat.rotate(og.swing_only(q), arc)
    marker = og.twist_marker(q, radius=0.3, height=0.6)
    d = np.linalg.norm(swung - marker, axis=-1).min()
    spacing = 0.3 * (hi - lo) / 2000
    if lo <= psi <= hi:
        assert d <= spacing
    elif min(abs(psi - lo), abs(psi - hi)) > 0.01:
        assert d > 0.3 * 0.005


def test_swing_only_has_no_twist_and_same_swing_point():
    q = quat.random_unit(200, 4)
    sw = og.swing_only(q)
    assert np.allclose(sw[:, 2], 0.0, atol=1e-12)
    assert np.allclose(quat.rotate(sw, [0, 1, 0]), quat.rotate(q, [0, 1, 0]), atol=1e-12)


def test_twist_arc_rejects_bad_range():
    with pytest.raises(ValueError):
        og.twist_arc(0.5, 0.1)
    with pytest.raises(ValueError):
        og.twist_arc(float("nan"), 0.1)


def test_cone_triangles_fan():
    ring = og.swing_outline(JOINT_LIMITS["rect"], 16).points
    tri = og.cone_triangles([1.0, 2.0, 3.0], ring)
    assert tri.shape == (15 * 3, 3)
    assert np.allclose(tri[0::3], [1.0, 2.0, 3.0])
    assert np.array_equal(tri[1::3], ring[:-1]) and np.array_equal(tri[2::3], ring[1:])


# --- placement --------------------------------------------------------------------------------


def affine(q, translation, scale=1.0):
    m = np.eye(4)
    m[:3, :3] = quat.to_matrix(np.asarray(q, dtype=np.float64)) * scale
    m[:3, 3] = translation
    return m


def test_joint_matrix_times_local_rotation_is_the_pose_matrix():
    """pose = parent_pose @ parent_rest^-1 @ bone_rest @ R(q) (Blender, full inheritance); the
    joint frame is that without R(q), and a unit +Y in it goes along the posed bone."""
    rng = np.random.default_rng(7)
    qs = quat.random_unit(5, rng)
    world = affine(qs[0], [1.0, -2.0, 0.5], scale=2.0)
    parent_rest = affine(qs[1], [0.0, 0.0, 1.0])
    bone_rest = affine(qs[2], [0.3, 0.1, 1.4])
    parent_pose = affine(qs[3], [0.2, 0.2, 1.1])
    local = affine(qs[4], [0.0, 0.0, 0.0])
    joint = og.joint_matrix(world, bone_rest, parent_rest, parent_pose)
    expected_pose = world @ parent_pose @ np.linalg.inv(parent_rest) @ bone_rest @ local
    assert np.allclose(joint @ local, expected_pose)
    tip = og.to_world(joint, quat.rotate(qs[4], [0.0, 1.0, 0.0]), scale=0.7)
    assert np.allclose(tip, (expected_pose @ [0.0, 0.7, 0.0, 1.0])[:3])
    # a root bone: the armature's matrix times the rest matrix
    assert np.allclose(og.joint_matrix(world, bone_rest), world @ bone_rest)
    # an explicit head replaces the matrix's translation
    assert np.allclose(og.to_world(joint, [[0, 0, 0]], 3.0, head=[5, 6, 7]), [[5, 6, 7]])


def test_placement_rejects_bad_matrices():
    with pytest.raises(ValueError, match="4x4"):
        og.joint_matrix(np.eye(3), np.eye(4))
    bad = np.eye(4)
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="finite"):
        og.to_world(bad, [[0, 1, 0]])
