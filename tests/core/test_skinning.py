"""Two-bone skinning [002]: LBS, SBS, SBS+/SDEF, Bezier centre (core, no bpy).

Run with ``-s`` to see the bent-cylinder measurements.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointlimit_addon.core import quat as Q
from jointlimit_addon.core import skinning as S

MODES = S.MODES


# ----------------------------------------------------------------------------------------------
# Helpers


def affine(q=None, translation=(0.0, 0.0, 0.0), scale=(1.0, 1.0, 1.0)):
    """4x4 column-vector matrix ``T · R · diag(scale)``."""
    m = np.eye(4)
    r = np.eye(3) if q is None else Q.to_matrix(np.asarray(q, float))
    m[:3, :3] = r * np.asarray(scale, float)
    m[:3, 3] = translation
    return m


def rot_x(angle, about=(0.0, 0.0, 0.0)):
    """Rotation by ``angle`` about the X axis through ``about``."""
    about = np.asarray(about, float)
    r = affine(Q.from_axis_angle([1.0, 0.0, 0.0], angle))
    r[:3, 3] = about - r[:3, :3] @ about
    return r


def apply(m, p):
    return p @ m[:3, :3].T + m[:3, 3]


def random_case(rng, n=200, bones=4):
    v = rng.normal(size=(n, 3))
    b0 = rng.integers(0, bones, n)
    b1 = (b0 + rng.integers(1, bones, n)) % bones
    t = rng.random(n)
    C, R0, R1 = (rng.normal(size=(n, 3)) for _ in range(3))
    heads = rng.normal(size=(bones, 3))
    return v, b0, b1, t, C, R0, R1, heads


def random_rigid(rng, bones):
    return np.stack([affine(Q.random_unit(1, rng)[0], rng.normal(size=3)) for _ in range(bones)])


def run(mode, case, matrices, **kw):
    v, b0, b1, t, C, R0, R1, heads = case
    return S.deform(mode, v, b0, b1, t, C, R0, R1, matrices, rest_heads=heads, **kw)


def mmd_sdef(v, b0, b1, w0, C, R0, R1, matrices):
    """MMD's SDEF written independently (per PMX): centre from the two half points, rotation
    ``slerp(q0, q1, w1)`` of ``v - C``."""
    w1 = 1.0 - w0
    m0, m1 = matrices[b0], matrices[b1]
    rw = w0[:, None] * R0 + w1[:, None] * R1
    r0p = C + R0 - rw
    r1p = C + R1 - rw
    cr0 = 0.5 * (C + r0p)
    cr1 = 0.5 * (C + r1p)
    centre = (w0[:, None] * (np.einsum("nij,nj->ni", m0[:, :3, :3], cr0) + m0[:, :3, 3])
              + w1[:, None] * (np.einsum("nij,nj->ni", m1[:, :3, :3], cr1) + m1[:, :3, 3]))
    q0 = Q.from_matrix(m0[:, :3, :3])
    q1 = Q.from_matrix(m1[:, :3, :3])
    return centre + Q.rotate(Q.slerp(q0, q1, w1), v - C)


def paper_algorithm_sdef(v, b0, b1, t, C, R0, R1, matrices, s=0.5):
    """[002 §3.3 (3-1)…(3-10)] step by step in column-vector order, rigid matrices only."""
    out = np.empty_like(v)
    for i in range(len(v)):  # reference implementation: clarity over speed
        m0, m1 = matrices[b0[i]], matrices[b1[i]]
        c = C[i]
        rw = t[i] * R0[i] + (1 - t[i]) * R1[i]
        rr0 = c + (R0[i] - rw)  # [002 eq.17-20], r_0v read as the offset from c_v
        rr1 = c + (R1[i] - rw)
        f2 = t[i] * apply(m0, rr0) + (1 - t[i]) * apply(m1, rr1)  # (3-1), (3-2)
        f1 = t[i] * apply(m0, c) + (1 - t[i]) * apply(m1, c)  # (3-3)
        c_new = s * f1 + (1 - s) * f2  # (3-4)
        local = np.linalg.inv(m0) @ m1  # (3-5): column-vector order of M1 M0^-1
        q1 = Q.from_matrix(local[:3, :3])  # (3-6)
        q = Q.slerp(np.array([1.0, 0, 0, 0]), q1, 1 - t[i])  # (3-7): exponent 1 - t_v
        v1 = c + Q.rotate(q, v[i] - c)  # (3-8)
        v2, c2 = apply(m0, v1), apply(m0, c)  # (3-9)
        out[i] = v2 + (c_new - c2)  # (3-10)
    return out


# ----------------------------------------------------------------------------------------------
# Traps (SPEC §6)


@pytest.mark.parametrize("mode", MODES)
def test_identity_moves_nothing(mode):
    """Trap 2 / [002 eq.16]: identity matrices leave every vertex where it is."""
    case = random_case(np.random.default_rng(1))
    out = run(mode, case, np.tile(np.eye(4), (4, 1, 1)))
    assert np.abs(out - case[0]).max() < 1e-12


@pytest.mark.parametrize("mode", MODES)
def test_common_rigid_motion_is_rigid(mode):
    """Trap 2: both bones under the same matrix G move the mesh by G. A rest centre built from
    ``b' = M0 b`` instead of the rest joint ``b`` [002 eq.25 as printed] fails this."""
    rng = np.random.default_rng(2)
    case = random_case(rng)
    g = affine(Q.random_unit(1, rng)[0], (1.0, -2.0, 0.5))
    out = run(mode, case, np.tile(g, (4, 1, 1)))
    assert np.abs(out - apply(g, case[0])).max() < 1e-12


@pytest.mark.parametrize("mode", MODES)
def test_vertices_fully_on_one_bone_follow_it(mode):
    """Trap 1: t_v = 1 moves with the parent, t_v = 0 with the child, also for scaled, sheared,
    mirrored bones (polar decomposition)."""
    rng = np.random.default_rng(3)
    v, b0, b1, t, C, R0, R1, heads = random_case(rng, n=300)
    t = np.where(np.arange(300) % 2 == 0, 1.0, 0.0)
    mats = []
    for k in range(4):
        m = affine(Q.random_unit(1, rng)[0], rng.normal(size=3), rng.uniform(0.3, 2.0, 3))
        m[:3, :3] = m[:3, :3] @ (np.eye(3) + 0.3 * rng.normal(size=(3, 3)))  # shear
        if k == 3:
            m[:3, :3] = m[:3, :3] @ np.diag([-1.0, 1.0, 1.0])  # mirrored bone
        mats.append(m)
    mats = np.stack(mats)
    out = S.deform(mode, v, b0, b1, t, C, R0, R1, mats, rest_heads=heads)
    bone = np.where(t == 1.0, b0, b1)
    expected = np.einsum("nij,nj->ni", mats[bone, :3, :3], v) + mats[bone, :3, 3]
    assert np.abs(out - expected).max() < 1e-10


@pytest.mark.parametrize("mode", ["SBS", "SDEF", "BEZIER"])
def test_offset_rotation_is_slerp_r0_r1_at_one_minus_t(mode):
    """Trap 1: the rotation about the centre is R0 (R0^-1 R1)^(1 - t_v) = slerp(R0, R1, 1 - t_v)."""
    rng = np.random.default_rng(4)
    n = 50
    C = rng.normal(size=(n, 3))
    d = rng.normal(size=(n, 3))
    t = rng.random(n)
    R0, R1 = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
    b0, b1 = np.zeros(n, int), np.ones(n, int)
    heads = np.zeros((2, 3))
    q0, q1 = Q.random_unit(2, rng)
    mats = np.stack([affine(q0, (1, 2, 3)), affine(q1, (-1, 0, 2))])
    # Vertex at C + d and a probe at C share t and centre: their difference is Q d.
    pts = np.concatenate([C + d, C])
    args = (np.tile(b0, 2), np.tile(b1, 2), np.tile(t, 2), np.tile(C, (2, 1)), np.tile(R0, (2, 1)),
            np.tile(R1, (2, 1)), mats)
    out = S.deform(mode, pts, *args, rest_heads=heads)
    rotated = out[:n] - out[n:]
    expected = Q.rotate(Q.slerp(q0, q1, 1.0 - t), d)
    assert np.abs(rotated - expected).max() < 1e-12
    wrong = Q.rotate(Q.slerp(q0, q1, t), d)  # the paper's literal Slerp(Q0, Q1, t_v)
    assert np.abs(rotated - wrong).max() > 0.1


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([0.0, 1e-12, 1e-8, 1e-4, 1.0, 3.1, np.pi]))
def test_slerp_kernel_matches_reference_for_any_relative_angle(seed, angle):
    """Tiny, zero and half-turn relative rotations: finite, length-preserving, = quat.slerp."""
    rng = np.random.default_rng(seed)
    q0 = Q.random_unit(1, rng)[0]
    q1 = Q.mul(Q.from_axis_angle(rng.normal(size=3), angle), q0)
    n = 64
    d = rng.normal(size=(n, 3))
    t = rng.random(n)
    mats = np.stack([affine(q0), affine(-q1)])  # sign of q1 must not matter
    zero = np.zeros((n, 3))
    out = S.deform("SBS", d, np.zeros(n, int), np.ones(n, int), t, zero, matrices=mats)
    assert np.all(np.isfinite(out))
    assert np.allclose(np.linalg.norm(out, axis=1), np.linalg.norm(d, axis=1), atol=1e-12)
    if angle < np.pi:  # at exactly a half turn both arcs are equally short
        assert np.abs(out - Q.rotate(Q.slerp(q0, q1, 1.0 - t), d)).max() < 1e-9


# ----------------------------------------------------------------------------------------------
# SBS+ (s = 0.5) is MMD's SDEF


def test_sdef_equals_independent_mmd_formulation():
    rng = np.random.default_rng(5)
    for _ in range(10):
        v, b0, b1, t, C, R0, R1, heads = random_case(rng, n=500, bones=6)
        mats = random_rigid(rng, 6)
        ours = S.deform("SDEF", v, b0, b1, t, C, R0, R1, mats)
        assert np.abs(ours - mmd_sdef(v, b0, b1, t, C, R0, R1, mats)).max() < 1e-6


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.0, 1.0))
def test_sdef_matches_paper_algorithm_steps(seed, s):
    rng = np.random.default_rng(seed)
    v, b0, b1, t, C, R0, R1, heads = random_case(rng, n=8, bones=3)
    mats = random_rigid(rng, 3)
    ours = S.deform("SDEF", v, b0, b1, t, C, R0, R1, mats, blend=s)
    assert np.abs(ours - paper_algorithm_sdef(v, b0, b1, t, C, R0, R1, mats, s)).max() < 1e-9


def test_sdef_blend_one_is_sbs_and_centre_curve_is_eq22():
    rng = np.random.default_rng(6)
    v, b0, b1, t, C, R0, R1, heads = case = random_case(rng, n=100)
    mats = random_rigid(rng, 4)
    assert np.allclose(run("SDEF", case, mats, blend=1.0), run("SBS", case, mats), atol=1e-12)
    rest, moved = S.centre_curve("SDEF", v, b0, b1, t, C, R0, R1, mats, blend=0.3)
    rw = t[:, None] * R0 + (1 - t[:, None]) * R1
    m0, m1 = mats[b0], mats[b1]

    def tr(m, p):
        return np.einsum("nij,nj->ni", m[:, :3, :3], p) + m[:, :3, 3]

    f1 = t[:, None] * tr(m0, C) + (1 - t[:, None]) * tr(m1, C)
    f2 = t[:, None] * tr(m0, C + R0 - rw) + (1 - t[:, None]) * tr(m1, C + R1 - rw)
    assert np.allclose(rest, C)
    assert np.allclose(moved, 0.3 * f1 + 0.7 * f2, atol=1e-12)


def test_lbs_is_weighted_matrix_blend():
    rng = np.random.default_rng(7)
    v, b0, b1, t, C, R0, R1, heads = random_random = random_case(rng)
    mats = random_rigid(rng, 4)
    mats[:, :3, :3] *= 1.7
    blend = t[:, None, None] * mats[b0] + (1 - t[:, None, None]) * mats[b1]
    expected = np.einsum("nij,nj->ni", blend[:, :3, :3], v) + blend[:, :3, 3]
    assert np.abs(S.deform("LBS", v, b0, b1, t, matrices=mats) - expected).max() < 1e-12


def test_bezier_centre_is_quadratic_bezier_with_rest_joint():
    """[002 eq.24, 26]: c' = t² M0 r''0 + 2t(1-t) M0 b + (1-t)² M1 r''1, c''' uses rest b."""
    rng = np.random.default_rng(8)
    v, b0, b1, t, C, R0, R1, heads = random_case(rng)
    mats = random_rigid(rng, 4)
    rest, moved = S.centre_curve("BEZIER", v, b0, b1, t, C, R0, R1, mats, rest_heads=heads)
    tt, uu = t[:, None], 1 - t[:, None]
    rw = tt * R0 + uu * R1
    rr0, rr1, b = C + R0 - rw, C + R1 - rw, heads[b1]
    assert np.allclose(rest, tt**2 * rr0 + 2 * tt * uu * b + uu**2 * rr1, atol=1e-12)
    m0, m1 = mats[b0], mats[b1]

    def tr(m, p):
        return np.einsum("nij,nj->ni", m[:, :3, :3], p) + m[:, :3, 3]

    expected = tt**2 * tr(m0, rr0) + 2 * tt * uu * tr(m0, b) + uu**2 * tr(m1, rr1)
    assert np.allclose(moved, expected, atol=1e-12)


# ----------------------------------------------------------------------------------------------
# Scale


@pytest.mark.parametrize("mode", MODES)
def test_uniform_scale_is_scale_after_rotation(mode):
    rng = np.random.default_rng(9)
    case = random_case(rng)
    rigid = random_rigid(rng, 4)
    for s in (0.25, 3.0):
        scaled = np.diag([s, s, s, 1.0]) @ rigid
        assert np.abs(run(mode, case, scaled) - s * run(mode, case, rigid)).max() < 1e-10


def test_per_bone_uniform_scale_blends_offset_scale():
    """Different uniform scales on the two bones: the offset scale is t s0 + (1-t) s1."""
    n = 20
    t = np.linspace(0, 1, n)
    C = np.zeros((n, 3))
    v = np.tile([1.0, 0.0, 0.0], (n, 1))
    mats = np.stack([np.diag([2.0, 2.0, 2.0, 1.0]), np.diag([3.0, 3.0, 3.0, 1.0])])
    out = S.deform("SBS", v, np.zeros(n, int), np.ones(n, int), t, C, matrices=mats)
    assert np.allclose(out[:, 0], 2 * t + 3 * (1 - t))


def test_polar_decomposition():
    rng = np.random.default_rng(10)
    mats = np.tile(np.eye(4), (6, 1, 1))
    mats[:, :3, :3] = rng.normal(size=(6, 3, 3))
    mats[5, :3, :3] = 0.0  # collapsed bone
    r, s = S.polar_decompose(mats)
    assert np.allclose(r @ s, mats[:, :3, :3], atol=1e-12)
    assert np.allclose(r @ r.transpose(0, 2, 1), np.eye(3), atol=1e-12)
    assert np.allclose(np.linalg.det(r), 1.0)
    assert np.allclose(s, s.transpose(0, 2, 1))



@pytest.mark.parametrize("scale", [(-1.0, 1.0, 1.0), (-1.3, 0.8, 1.1), (-0.7, 1.2, 1.2)])
def test_polar_decomposition_of_a_mirrored_bone_keeps_its_pose_rotation(scale):
    """A bone scaled negatively on its own X axis: with its rest X axis given, R is the bone's pose
    rotation (whatever the SVD picks among the equally near rotations) and S carries the mirror."""
    rng = np.random.default_rng(11)
    rest = Q.to_matrix(Q.normalize(rng.normal(size=(2, 4))))  # rest frames (columns: bone X, Y, Z)
    pose = Q.to_matrix(Q.normalize(rng.normal(size=(2, 4))))  # rotation relative to the rest frame
    stretch = np.stack([np.eye(3), np.diag(scale)])
    mats = np.tile(np.eye(4), (2, 1, 1))
    mats[:, :3, :3] = rest @ pose @ stretch @ rest.transpose(0, 2, 1)
    r, s = S.polar_decompose(mats, mirror_axes=rest[:, :, 0])
    want = rest @ pose @ rest.transpose(0, 2, 1)
    assert np.allclose(r, want, atol=1e-12)
    assert np.allclose(r @ s, mats[:, :3, :3], atol=1e-12)
    assert np.allclose(np.linalg.det(r), 1.0)
    assert np.linalg.det(s[1]) < 0 < np.linalg.det(s[0])
    r_plain, _ = S.polar_decompose(mats)  # an unmirrored bone does not depend on the axes
    assert np.allclose(r_plain[0], r[0], atol=1e-12)
    with pytest.raises(ValueError, match="mirror_axes"):
        S.polar_decompose(mats, mirror_axes=np.zeros((3, 3)))


# ----------------------------------------------------------------------------------------------
# Bent cylinder: the claims of [002 §5.5]

RADIUS = 1.0
AROUND = 64


def cylinder(y0, y1, length=6.0, step=0.02, delta=1e-4):
    """Rings of a cylinder along +Y through the joint at the origin; linear parent weight
    1 at ``y0`` -> 0 at ``y1``. Extra rings at ``y0 ± delta`` and ``y1 ± delta`` give the
    one-sided tangents at the blend boundaries."""
    grid = np.arange(-length, length + step / 2, step)
    grid = grid[(np.abs(grid - y0) > 2 * delta) & (np.abs(grid - y1) > 2 * delta)]
    ys = np.sort(np.concatenate([grid, [y0 - delta, y0, y0 + delta, y1 - delta, y1, y1 + delta]]))
    phi = np.linspace(0.0, 2.0 * np.pi, AROUND, endpoint=False)
    x, z = RADIUS * np.cos(phi), RADIUS * np.sin(phi)
    v = np.stack(np.broadcast_arrays(x[None, :], ys[:, None], z[None, :]), -1).reshape(-1, 3)
    t = np.clip((y1 - v[:, 1]) / (y1 - y0), 0.0, 1.0)
    n = len(v)
    C = v * [0.0, 1.0, 0.0]
    R0 = np.tile([0.0, y0, 0.0], (n, 1))
    R1 = np.tile([0.0, y1, 0.0], (n, 1))
    heads = np.array([[0.0, -length, 0.0], [0.0, 0.0, 0.0]])
    return ys, v, t, C, R0, R1, heads


def bend(mode, cyl, angle=np.pi / 2):
    ys, v, t, C, R0, R1, heads = cyl
    n = len(v)
    mats = np.stack([np.eye(4), rot_x(angle)])
    out = S.deform(mode, v, np.zeros(n, int), np.ones(n, int), t, C, R0, R1, mats, rest_heads=heads)
    return out.reshape(len(ys), AROUND, 3)


def ring_area(ring):
    """Vector area of a closed polygon (planar or not)."""
    return 0.5 * np.linalg.norm(np.cross(ring, np.roll(ring, -1, axis=0)).sum(axis=0))


def kink_deg(curve, ys, y):
    """Tangent-angle jump (degrees) of a polyline sampled at ``ys`` at the sample ``y``."""
    i = int(np.argmin(np.abs(ys - y)))
    before = curve[i] - curve[i - 1]
    after = curve[i + 1] - curve[i]
    cos = before @ after / np.linalg.norm(before) / np.linalg.norm(after)
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


def measure(mode, y0, y1):
    cyl = cylinder(y0, y1)
    ys = cyl[0]
    rings = bend(mode, cyl)
    rest_area = 0.5 * AROUND * RADIUS**2 * np.sin(2 * np.pi / AROUND)
    blend = (ys > y0) & (ys < y1)
    area = min(ring_area(r) for r in rings[blend]) / rest_area
    centre = rings.mean(axis=1)
    parent_side = ys <= 0.0
    outer = rings[:, 3 * AROUND // 4]  # phi = 270°: the -Z (outer) surface line of the parent
    inner = rings[:, AROUND // 4]  # +Z (inner) surface line
    return {
        "min_area_ratio": area,
        # outward (-Z) bulge of the centre line and of the outer surface beyond the rigid parent
        "centre_bulge": max(0.0, -centre[parent_side, 2].min()),
        "surface_bulge": max(0.0, -(outer[parent_side, 2] + RADIUS).min()),
        "kink_start_centre": kink_deg(centre, ys, y0),
        "kink_end_centre": kink_deg(centre, ys, y1),
        "kink_start_outer": kink_deg(outer, ys, y0),
        "kink_end_outer": kink_deg(outer, ys, y1),
        "kink_start_inner": kink_deg(inner, ys, y0),
        "kink_end_inner": kink_deg(inner, ys, y1),
    }


BLENDS = {
    # name: (y0, y1) in radii; both asymmetric about the joint as painted weights usually are
    "hose": (-3.0, 1.0),
    "elbow": (-0.6, 0.2),
    "symmetric": (-1.0, 1.0),
}


@pytest.fixture(scope="module")
def cylinder_numbers():
    numbers = {(name, mode): measure(mode, *span) for name, span in BLENDS.items() for mode in MODES}
    keys = list(next(iter(numbers.values())))
    print("\nbent cylinder, child bent 90° about X; radius 1; kinks in degrees")
    print(f"{'blend':10s}{'mode':8s}" + "".join(f"{k:>20s}" for k in keys))
    for (name, mode), row in numbers.items():
        print(f"{name:10s}{mode:8s}" + "".join(f"{row[k]:20.4f}" for k in keys))
    return numbers


@pytest.mark.parametrize("name", ["hose", "elbow", "symmetric"])
def test_lbs_loses_cross_section_sdef_keeps_it(cylinder_numbers, name):
    lbs = cylinder_numbers[name, "LBS"]["min_area_ratio"]
    assert lbs < 0.75  # half way through a 90° blend: cos 45° = 0.707
    for mode in ("SBS", "SDEF", "BEZIER"):
        assert cylinder_numbers[name, mode]["min_area_ratio"] > 0.97


@pytest.mark.parametrize("name", ["hose", "elbow", "symmetric"])
def test_sdef_bends_less_outward_than_lbs(cylinder_numbers, name):
    """[002 §3.4]: the centre line of the parent side swings outward (-Z) under LBS/SBS (f1);
    SBS+ pulls it in. On the narrow elbow LBS's collapse hides its outer-surface bulge."""
    lbs, sdef = cylinder_numbers[name, "LBS"], cylinder_numbers[name, "SDEF"]
    assert lbs["centre_bulge"] > 0.1
    assert cylinder_numbers[name, "SBS"]["centre_bulge"] == pytest.approx(lbs["centre_bulge"])
    assert sdef["centre_bulge"] < 0.25 * lbs["centre_bulge"]
    if name == "hose":
        assert sdef["surface_bulge"] < 0.5 * lbs["surface_bulge"]


@pytest.mark.parametrize("name", ["hose", "elbow"])
def test_bezier_has_no_kink_where_sdef_has_one(cylinder_numbers, name):
    """[002 §3.4, eq.23]: SBS+ kinks where the blend starts and ends, the Bezier centre does not.
    (The inner surface line of the narrow elbow folds in every mode: not a boundary kink.)"""
    sdef, bez = cylinder_numbers[name, "SDEF"], cylinder_numbers[name, "BEZIER"]
    for where in ("start", "end"):
        assert sdef[f"kink_{where}_centre"] > 5.0
        assert sdef[f"kink_{where}_outer"] > 2.0
        assert bez[f"kink_{where}_centre"] < 0.1
        assert bez[f"kink_{where}_outer"] < 0.1
        if name == "hose":
            assert sdef[f"kink_{where}_inner"] > 5.0
            assert bez[f"kink_{where}_inner"] < 0.1


def test_symmetric_linear_blend_sdef_equals_bezier(cylinder_numbers):
    """Finding: for linear weights symmetric about the joint, SBS+ (s = 0.5) and the Bezier
    centre coincide (both give -t² h ŷ + (1-t)² h R ŷ), so SBS+ has no kink there."""
    sdef = cylinder_numbers["symmetric", "SDEF"]
    assert sdef["kink_start_centre"] < 0.1 and sdef["kink_end_centre"] < 0.1
    cyl = cylinder(-1.0, 1.0)
    assert np.abs(bend("SDEF", cyl) - bend("BEZIER", cyl)).max() < 1e-12


# ----------------------------------------------------------------------------------------------
# Automatic SDEF parameters


def test_derive_recovers_linear_blend_on_straight_cylinder():
    ys, v, t, C, R0, R1, heads = cylinder(-1.5, 0.5)
    blended = (t > 0) & (t < 1)
    v, t = v[blended], t[blended]
    n = len(v)
    tails = np.array([[0.0, 0.0, 0.0], [0.0, 6.0, 0.0]])
    c, r0, r1 = S.derive_sdef_params(v, np.zeros(n, int), np.ones(n, int), t, heads, tails)
    assert np.allclose(c, v * [0, 1, 0], atol=1e-12)
    assert np.allclose(r0, [0.0, -1.5, 0.0], atol=1e-9)
    assert np.allclose(r1, [0.0, 0.5, 0.0], atol=1e-9)
    c2, r0e, r1e = S.derive_sdef_params(v, np.zeros(n, int), np.ones(n, int), t, heads, tails,
                                        centre="joint", boundary="extent", pad=0.5)
    assert np.allclose(c2, 0.0)
    lo, hi = v[:, 1].min(), v[:, 1].max()
    assert np.allclose(r0e[:, 1], lo - 0.5 * (hi - lo)) and np.allclose(r1e[:, 1], hi + 0.5 * (hi - lo))


def test_derive_bent_rest_pose_and_separate_pairs():
    # bones: 0 along +Y to the joint at the origin, 1 along +Z from it, 2 along +X from it
    heads = np.array([[0.0, -2.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    tails = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 2.0], [2.0, 0.0, 0.0]])
    s = np.linspace(-1.0, 1.0, 21)
    # pair (0, 1): points on the parent leg (y < 0) then the child leg (z > 0), 0.3 off the axis
    p01 = np.where(s[:, None] < 0, s[:, None] * [0, 1, 0] + [0.3, 0, 0], s[:, None] * [0, 0, 1] + [0.3, 0, 0])
    # pair (0, 2): parent leg then +X leg, offset in Z
    p02 = np.where(s[:, None] < 0, s[:, None] * [0, 1, 0] + [0, 0, -0.3], s[:, None] * [1, 0, 0] + [0, 0, -0.3])
    v = np.concatenate([p01, p02])
    t = np.concatenate([(1 - s) / 2, (0.6 - s) / 1.6 * 0.5 + 0.25])
    b0 = np.zeros(len(v), int)
    b1 = np.repeat([1, 2], len(s))
    c, r0, r1 = S.derive_sdef_params(v, b0, b1, t, heads, tails)
    expected_c = np.where(s[:, None] < 0, s[:, None] * [0, 1, 0], s[:, None] * [0, 0, 1])
    assert np.allclose(c[: len(s)], expected_c, atol=1e-12)
    assert np.allclose(r0[: len(s)], [0, -1, 0]) and np.allclose(r1[: len(s)], [0, 0, 1])
    # second pair: t = 1 at s = -1 ... fitted separately; R1 lies on the +X leg
    assert np.all(np.ptp(r0[len(s):], axis=0) < 1e-12) and np.all(np.ptp(r1[len(s):], axis=0) < 1e-12)
    assert r1[-1, 0] > 0 and abs(r1[-1, 1]) < 1e-12 and abs(r1[-1, 2]) < 1e-12
    assert not np.allclose(r0[0], r0[-1])


def test_derive_constant_weights_collapse_without_nan():
    heads = np.array([[0.0, -2.0, 0.0], [0.0, 0.0, 0.0]])
    tails = np.array([[0.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
    v = np.array([[1.0, -0.2, 0.0], [0.0, 0.1, 1.0], [-1.0, 0.4, 0.0]])
    for boundary in ("fit", "extent"):
        c, r0, r1 = S.derive_sdef_params(v, [0, 0, 0], [1, 1, 1], [0.5, 0.5, 0.5], heads, tails,
                                         boundary=boundary)
        assert np.all(np.isfinite(r0)) and np.allclose(r0, r1)
        assert np.allclose(r0, [0.0, np.mean([-0.2, 0.1, 0.4]), 0.0])


def test_derived_params_drive_sdef_end_to_end():
    ys, v, t, C, R0, R1, heads = cylinder(-2.0, 1.0)
    n = len(v)
    tails = np.array([[0.0, 0.0, 0.0], [0.0, 6.0, 0.0]])
    b0, b1 = np.zeros(n, int), np.ones(n, int)
    mask = (t > 0) & (t < 1)
    c, r0, r1 = S.derive_sdef_params(v[mask], b0[mask], b1[mask], t[mask], heads, tails)
    mats = np.stack([np.eye(4), rot_x(np.pi / 2)])
    derived = S.deform("SDEF", v[mask], b0[mask], b1[mask], t[mask], c, r0, r1, mats)
    given_ = S.deform("SDEF", v[mask], b0[mask], b1[mask], t[mask], C[mask], R0[mask], R1[mask], mats)
    assert np.abs(derived - given_).max() < 1e-9


# ----------------------------------------------------------------------------------------------
# Plan, validation


def test_plan_reuse_matches_one_shot():
    rng = np.random.default_rng(11)
    v, b0, b1, t, C, R0, R1, heads = case = random_case(rng, n=20000, bones=5)
    for mode in MODES:
        plan = S.SkinPlan(mode, v, b0, b1, t, C, R0, R1, rest_heads=heads)
        for _ in range(2):
            mats = random_rigid(rng, 5)
            assert np.array_equal(plan.deform(mats), run(mode, case, mats))


def test_plan_with_morphed_positions_equals_a_plan_built_on_them():
    """Shape keys: ``deform(matrices, positions)`` equals the one-shot core on the morphed rest
    positions (C, R0, R1 unchanged), also with scaled bones; bad shapes raise."""
    rng = np.random.default_rng(14)
    v, b0, b1, t, C, R0, R1, heads = case = random_case(rng, n=3000, bones=4)
    morphed = v + rng.normal(scale=0.05, size=v.shape)
    mats = random_rigid(rng, 4)
    mats[1, :3, :3] *= (1.2, 0.9, 1.1)
    for mode in MODES:
        plan = S.SkinPlan(mode, v, b0, b1, t, C, R0, R1, rest_heads=heads)
        want = S.deform(mode, morphed, b0, b1, t, C, R0, R1, mats, rest_heads=heads)
        assert np.abs(plan.deform(mats, morphed) - want).max() < 1e-12, mode
        assert np.array_equal(plan.deform(mats), run(mode, case, mats))  # the plan itself is unchanged
    with pytest.raises(ValueError, match="positions"):
        plan.deform(mats, morphed[:-1])


def test_non_uniform_scale_blends_stretch():
    """Non-uniform scale: offsets get t S0 + (1-t) S1 before the slerped rotation."""
    rng = np.random.default_rng(12)
    v, b0, b1, t, C, R0, R1, heads = random_case(rng, n=50, bones=2)
    b0, b1 = np.zeros(50, int), np.ones(50, int)
    q = Q.random_unit(2, rng)
    mats = np.stack([affine(q[0], (0, 1, 0), (1.0, 2.0, 0.5)), affine(q[1], (1, 0, 0), (3.0, 1.0, 1.0))])
    out = S.deform("SBS", v, b0, b1, t, C, matrices=mats)
    rest, centre = S.centre_curve("SBS", v, b0, b1, t, C, matrices=mats)
    stretch = t[:, None] * np.array([1.0, 2.0, 0.5]) + (1 - t[:, None]) * np.array([3.0, 1.0, 1.0])
    expected = centre + Q.rotate(Q.slerp(q[0], q[1], 1 - t), stretch * (v - C))
    assert np.abs(out - expected).max() < 1e-10


def test_bad_input_raises():
    rng = np.random.default_rng(13)
    v, b0, b1, t, C, R0, R1, heads = random_case(rng, n=10)
    mats = np.tile(np.eye(4), (4, 1, 1))
    ok = dict(rest_heads=heads)
    with pytest.raises(ValueError, match="mode"):
        S.deform("DQS", v, b0, b1, t, C, R0, R1, mats)
    with pytest.raises(ValueError, match="weight0"):
        S.deform("SDEF", v, b0, b1, t + 1.5, C, R0, R1, mats)
    with pytest.raises(ValueError, match="bone"):
        S.deform("SDEF", v, b0 + 10, b1, t, C, R0, R1, mats)
    with pytest.raises(ValueError, match="NaN"):
        S.deform("SDEF", np.where(np.arange(10)[:, None] == 3, np.nan, v), b0, b1, t, C, R0, R1, mats)
    with pytest.raises(ValueError, match="R0"):
        S.deform("SDEF", v, b0, b1, t, C, None, R1, mats)
    with pytest.raises(ValueError, match="rest_heads"):
        S.deform("BEZIER", v, b0, b1, t, C, R0, R1, mats)
    with pytest.raises(ValueError, match="affine"):
        bad = mats.copy()
        bad[0, 3, 0] = 1.0
        S.deform("LBS", v, b0, b1, t, matrices=bad, **ok)
    with pytest.raises(ValueError, match="shape"):
        S.deform("LBS", v, b0, b1, t, matrices=np.eye(4))
    with pytest.raises(ValueError, match="blend"):
        S.deform("SDEF", v, b0, b1, t, C, R0, R1, mats, blend=2.0)
    with pytest.raises(ValueError, match="C"):
        S.deform("SBS", v, b0, b1, t, None, matrices=mats)
    with pytest.raises(ValueError, match="non-zero length"):
        S.derive_sdef_params(v, b0, b1, t, heads, heads)


def test_empty_input():
    e = np.zeros((0, 3))
    i = np.zeros(0, int)
    for mode in MODES:
        out = S.deform(mode, e, i, i, np.zeros(0), e, e, e, np.tile(np.eye(4), (2, 1, 1)),
                       rest_heads=np.zeros((2, 3)))
        assert out.shape == (0, 3)


def test_a_flat_matrix_is_never_mirrored():
    """A bone scaled to zero on an axis: the sign of its determinant is round-off (here -1e-9 or
    +1e-9 on the flat axis), and either way its rotation is the one a small positive scale
    approaches, with mirror axes given (the flat one read as mirrored turned it half a turn)."""
    rot = Q.to_matrix(Q.from_axis_angle([0.3, -0.5, 0.8], 1.1))
    for flat in (-1e-9, 1e-9, 1e-3):
        m = np.eye(4)
        m[:3, :3] = rot @ np.diag([1.0, flat, 1.0])
        r, _ = S.polar_decompose(m[None], mirror_axes=np.array([[1.0, 0.0, 0.0]]))
        assert np.abs(r[0] - rot).max() < 1e-6, flat
