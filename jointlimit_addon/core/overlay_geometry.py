"""Geometry of the viewport overlay: what a joint limit allows, as lines on the unit sphere.

Everything here is in the joint's frame (the bone's rest orientation in its parent, +Y along the
bone, SPEC §1) on the unit sphere; ``to_world`` places it in the scene. Like [000 Fig.4, 12-21]
the allowed swing region is drawn as its outline on a sphere at the joint, optionally joined to
the joint by a cone, with the current swing point ``P = R(q) (0, 1, 0)`` [000 eq.40] and the
twist range as an arc around the bone [000 eq.44].

``swing_outline(limit, n)`` accepts every limit kind of the add-on:

- ``JointLimit`` (any shape, ranges past ±90°, POLYGON): the exact outline of the plane region
  mapped to the sphere [000 eq.2] (``JointLimit.outline_points``);
- ``HingeLimit``: the arc swept by +Y about the hinge axis (an open line: the region has no
  interior);
- ``QuatSwingLimit``: the cone circle [000 §6.3], cut by the component boxes when they bind;
- ``EulerLimit`` / ``EulerMultiLimit``: the outer boundary of the swing points of the Euler box,
  from a dense sampling of the box (faces and interior), rasterised on a chart about the swing of
  the box's centre and traced by marching squares (accurate to about a pixel, ~1-3 degrees);
- any other object with the limit protocol: the same tracing on ``clamp`` of random rotations.

No returned point lies within ``POLE_MARGIN`` of the pole ``(0, -1, 0)``.
"""

from collections import namedtuple

import numpy as np

from . import quat
from .euler_limits import EulerLimit, EulerMultiLimit, HingeLimit, QuatSwingLimit
from .limits import JointLimit

POLE = np.array([0.0, -1.0, 0.0])
Y_AXIS = np.array([0.0, 1.0, 0.0])
POLE_MARGIN = 1e-3  # radians kept between any drawn point and the pole
EULER_FACE_SAMPLES = 64  # per edge of each face of the Euler box
EULER_INTERIOR_SAMPLES = 16  # per axis inside the box (folds of the map, rare)
DENSE = 8  # rays per output point before resampling by length

SwingOutline = namedtuple("SwingOutline", "points closed")
SwingOutline.__doc__ = """``points (m, 3)`` ordered on the unit sphere; ``closed``: the last point
repeats the first (a region's boundary) rather than an open arc (a hinge)."""


def _check_n(n):
    n = int(n)
    if n < 8:
        raise ValueError(f"outline needs n >= 8 points, got {n}")
    return n


def swing_outline(limit, n=64):
    """The boundary of the swing region of ``limit`` as a ``SwingOutline`` of at most ``n``
    points (exactly ``n`` for ``JointLimit``, ``HingeLimit`` and ``QuatSwingLimit``)."""
    n = _check_n(n)
    if isinstance(limit, JointLimit):
        return SwingOutline(_away_from_pole(limit.outline_points(n)), True)
    if isinstance(limit, HingeLimit):
        return SwingOutline(hinge_arc(limit, n), False)
    if isinstance(limit, QuatSwingLimit):
        return SwingOutline(quat_swing_outline(limit, n), True)
    if isinstance(limit, (EulerLimit, EulerMultiLimit)):
        P, _ = euler_swing_samples(limit)
        centre = _swing_of_box_centre(limit)
        return SwingOutline(region_outline(P, centre, n), True)
    if hasattr(limit, "clamp"):
        P = quat.rotate(limit.clamp(quat.random_unit(20000, 0)), Y_AXIS)
        return SwingOutline(region_outline(P, _mean_direction(P), n), True)
    raise ValueError(f"cannot draw a limit of type {type(limit).__name__}")


def _away_from_pole(P):
    """Points within ``POLE_MARGIN`` of the pole moved out to that distance (same azimuth)."""
    P = np.array(P, dtype=np.float64)
    alpha = np.arccos(np.clip(P @ POLE, -1.0, 1.0))
    near = alpha < POLE_MARGIN
    if np.any(near):
        side = P[near] - np.outer(P[near] @ POLE, POLE)
        norm = np.linalg.norm(side, axis=-1, keepdims=True)
        side = np.where(norm > 1e-300, side / np.where(norm > 1e-300, norm, 1.0), [1.0, 0.0, 0.0])
        P[near] = np.cos(POLE_MARGIN) * POLE + np.sin(POLE_MARGIN) * side
    return P


# --- hinge ----------------------------------------------------------------------------------------


def hinge_arc(limit, n=64):
    """``(n, 3)`` points ``R(axis, theta) (0, 1, 0)`` for ``theta`` across the hinge range, kept
    ``POLE_MARGIN`` away from the half turn (where +Y reaches the pole for an axis across Y)."""
    lo, hi = limit.angle
    reach = np.pi - POLE_MARGIN
    theta = np.linspace(max(lo, -reach), min(hi, reach), _check_n(n))
    return quat.rotate(quat.from_axis_angle(limit.axis, theta), Y_AXIS)


# --- quaternion swing [000 §6.3] -------------------------------------------------------------


def _swing_components_to_sphere(b):
    """Swing points of swing quaternions ``(bw, bx, 0, bz)`` given by ``b = (bx, bz)``."""
    bw = np.sqrt(np.clip(1.0 - np.sum(b * b, axis=-1), 0.0, 1.0))
    q = np.stack((bw, b[..., 0], np.zeros_like(bw), b[..., 1]), axis=-1)
    return quat.rotate(q, Y_AXIS)


def quat_swing_outline(limit, n=64):
    """Closed ``(n, 3)`` boundary of the cone ``|b| <= sin(max_swing / 2)`` [000 §6.3] cut by the
    component boxes, traced by rays on the ``(q_bx, q_bz)`` disk from a point of the region (the
    region is convex there, so every ray leaves it once)."""
    r = limit._radius
    (x0, x1), (z0, z1) = limit._box
    # A point of the region: midway between the region's points nearest to the origin and to the
    # box centre (both in the convex region, so the midpoint is too).
    c = 0.5 * (limit._project(np.zeros(2)) + limit._project(np.array([0.5 * (x0 + x1), 0.5 * (z0 + z1)])))
    phi = 2.0 * np.pi * np.arange(DENSE * (n - 1)) / (DENSE * (n - 1))
    u = np.stack((np.cos(phi), np.sin(phi)), axis=-1)
    cu = u @ c
    reach = -cu + np.sqrt(np.maximum(cu * cu - c @ c + r * r, 0.0))  # leaving the disk
    with np.errstate(divide="ignore", invalid="ignore"):
        for axis, (lo, hi) in enumerate(((x0, x1), (z0, z1))):
            d = u[:, axis]
            exit_ = np.where(d > 0, (hi - c[axis]) / d, np.where(d < 0, (lo - c[axis]) / d, np.inf))
            reach = np.minimum(reach, exit_)
    b = c + np.maximum(reach, 0.0)[:, None] * u
    P = _away_from_pole(_swing_components_to_sphere(b))
    return resample_closed(np.concatenate((P, P[:1]), axis=0), n)


# --- Euler boxes and generic limits -------------------------------------------------------------


def euler_box_samples(limit, face=EULER_FACE_SAMPLES, interior=EULER_INTERIOR_SAMPLES):
    """Euler triples ``(m, 3)`` (Blender x, y, z) densely covering the faces and, coarsely, the
    inside of the limit's box."""
    lo, hi = np.array((limit.x, limit.y, limit.z), dtype=np.float64).T
    g = np.linspace(0.0, 1.0, face)
    a, b = np.meshgrid(g, g, indexing="ij")
    a, b = a.ravel(), b.ravel()
    faces = []
    for fixed in range(3):
        free = [i for i in range(3) if i != fixed]
        for end in (0.0, 1.0):
            f = np.empty((len(a), 3))
            f[:, fixed] = end
            f[:, free[0]], f[:, free[1]] = a, b
            faces.append(f)
    gi = np.linspace(0.0, 1.0, interior)
    inner = np.stack(np.meshgrid(gi, gi, gi, indexing="ij"), axis=-1).reshape(-1, 3)
    unit = np.concatenate(faces + [inner], axis=0)
    return lo + unit * (hi - lo)


def euler_swing_samples(limit):
    """Swing points ``(m, 3)`` of ``euler_box_samples`` and the Euler triples they come from."""
    e = euler_box_samples(limit)
    return quat.rotate(quat.from_euler(e, limit.order), Y_AXIS), e


def _swing_of_box_centre(limit):
    e = np.array([0.5 * (r[0] + r[1]) for r in (limit.x, limit.y, limit.z)])
    P = quat.rotate(quat.from_euler(e, limit.order), Y_AXIS)
    return P if P @ POLE < np.cos(POLE_MARGIN) else Y_AXIS


def _mean_direction(P):
    m = P.mean(axis=0)
    norm = np.linalg.norm(m)
    return m / norm if norm > 0.1 else Y_AXIS


def _tangent_frame(c):
    """Unit vectors ``u, v`` with ``(u, v, c)`` orthonormal."""
    helper = np.array([1.0, 0.0, 0.0]) if abs(c[0]) < 0.9 else np.array([0.0, 0.0, 1.0])
    u = quat.normalize(np.cross(helper, c))
    return u, np.cross(c, u)


def _chart(P, centre):
    """Azimuthal equidistant chart about ``centre``: ``alpha (cos phi, sin phi)``."""
    u, v = _tangent_frame(centre)
    alpha = np.arccos(np.clip(P @ centre, -1.0, 1.0))
    phi = np.arctan2(P @ v, P @ u)
    return np.stack((alpha * np.cos(phi), alpha * np.sin(phi)), axis=-1), (u, v)


def _unchart(xy, centre, frame):
    alpha = np.hypot(xy[:, 0], xy[:, 1])
    phi = np.arctan2(xy[:, 1], xy[:, 0])
    u, v = frame
    side = np.cos(phi)[:, None] * u + np.sin(phi)[:, None] * v
    return np.cos(alpha)[:, None] * centre + np.sin(alpha)[:, None] * side


def _occupancy(xy, grid):
    """Pixels of a ``grid x grid`` image over the samples' extent that hold a sample, closed by
    one pixel (dilate, erode) so sampling gaps do not notch the outline; padded with a free
    border."""
    extent = np.abs(xy).max() + 1e-9
    pixel = 2.0 * extent / grid
    ij = np.clip(((xy + extent) / pixel).astype(int), 0, grid - 1)
    img = np.zeros((grid + 4, grid + 4), dtype=bool)
    img[ij[:, 0] + 2, ij[:, 1] + 2] = True
    shifts = [(di, dj) for di in (-1, 0, 1) for dj in (-1, 0, 1)]
    grown = np.zeros_like(img)
    for di, dj in shifts:
        grown |= np.roll(np.roll(img, di, 0), dj, 1)
    closed = np.ones_like(img)
    for di, dj in shifts:
        closed &= np.roll(np.roll(grown, di, 0), dj, 1)
    closed[:1], closed[-1:], closed[:, :1], closed[:, -1:] = False, False, False, False
    return closed | img, pixel, extent


# Marching squares: for each 2x2 case (bit 1 = (i, j), 2 = (i+1, j), 4 = (i+1, j+1), 8 = (i, j+1))
# the cell edges joined by boundary segments; edges: 0 bottom (j), 1 right (i+1), 2 top (j+1), 3 left (i).
_SEGMENTS = {
    1: ((3, 0),), 2: ((0, 1),), 3: ((3, 1),), 4: ((1, 2),), 5: ((3, 0), (1, 2)), 6: ((0, 2),), 7: ((3, 2),),
    8: ((2, 3),), 9: ((2, 0),), 10: ((0, 1), (2, 3)), 11: ((2, 1),), 12: ((1, 3),), 13: ((1, 0),), 14: ((0, 3),),
}


def _edge_key(i, j, edge):
    """A cell edge as the pixel pair it separates (shared by the two cells on either side)."""
    if edge == 0:
        return ((i, j), (i + 1, j))
    if edge == 1:
        return ((i + 1, j), (i + 1, j + 1))
    if edge == 2:
        return ((i, j + 1), (i + 1, j + 1))
    return ((i, j), (i, j + 1))


def _longest_contour(img):
    """The longest closed contour of a binary image, as pixel-pair edges in order."""
    code = (img[:-1, :-1] * 1 + img[1:, :-1] * 2 + img[1:, 1:] * 4 + img[:-1, 1:] * 8).astype(int)
    links = {}
    for i, j in zip(*np.nonzero((code > 0) & (code < 15))):
        for a, b in _SEGMENTS[code[i, j]]:
            ka, kb = _edge_key(i, j, a), _edge_key(i, j, b)
            links.setdefault(ka, []).append(kb)
            links.setdefault(kb, []).append(ka)
    seen, best = set(), []
    for start in links:
        if start in seen:
            continue
        loop, prev, cur = [start], None, start
        seen.add(start)
        while True:
            nxt = [k for k in links[cur] if k != prev]
            nxt = nxt[0] if nxt else links[cur][0]
            if nxt == start or nxt in seen:
                break
            seen.add(nxt)
            loop.append(nxt)
            prev, cur = cur, nxt
        if len(loop) > len(best):
            best = loop
    return best


def region_outline(P, centre, n=64, grid=96):
    """Closed outline (at most ``n`` points) of the region covered by the sample cloud ``P (m, 3)``
    on the unit sphere: the samples are rasterised on an azimuthal equidistant chart about
    ``centre`` (a point of the region), the longest contour is traced by marching squares and
    resampled by length. Accurate to about one pixel (the samples' extent / ``grid``); samples
    near the pole and near the antipode of ``centre`` are ignored."""
    n = _check_n(n)
    P = np.asarray(P, dtype=np.float64)
    centre = np.asarray(centre, dtype=np.float64)
    centre = quat.normalize(centre)
    keep = (P @ POLE < np.cos(POLE_MARGIN)) & (P @ centre > -np.cos(0.05))
    if not np.any(keep):
        raise ValueError("no samples away from the pole to outline")
    xy, frame = _chart(P[keep], centre)
    img, pixel, extent = _occupancy(xy, grid)
    loop = _longest_contour(img)
    if len(loop) < 3:
        raise ValueError("the sampled region is too small to outline")
    # a contour point: the midpoint of the two pixel centres it separates
    mid = np.array([[(a[0] + b[0]) * 0.5, (a[1] + b[1]) * 0.5] for a, b in loop])
    chart_xy = (mid - 2.0 + 0.5) * pixel - extent
    out = _away_from_pole(_unchart(chart_xy, centre, frame))
    return resample_closed(np.concatenate((out, out[:1]), axis=0), n)


def resample_closed(P, n):
    """At most ``n`` points of a closed polyline ``P`` (last = first), evenly spread along its
    length and taken from its own points (so they stay exactly where ``P``'s points are)."""
    P = np.asarray(P, dtype=np.float64)
    if len(P) <= n:
        return P
    length = np.r_[0.0, np.cumsum(np.linalg.norm(np.diff(P, axis=0), axis=-1))]
    targets = np.linspace(0.0, length[-1], n)[:-1]
    idx = np.unique(np.clip(np.searchsorted(length, targets), 0, len(P) - 2))
    out = P[idx]
    return np.concatenate((out, out[:1]), axis=0)


# --- twist, cone, current pose -----------------------------------------------------------------


def twist_range(limit):
    """``(lo, hi)`` radians of the limit's twist about the bone, or ``None`` when the limit has
    no separate twist range (free twist, hinges and Euler boxes)."""
    if isinstance(limit, JointLimit):
        if limit.fix_twist:
            return (0.0, 0.0)
        return limit.twist
    if isinstance(limit, QuatSwingLimit):
        lo, hi = limit.twist
        return None if hi - lo >= 2.0 * np.pi - 1e-9 else (lo, hi)
    return None


def twist_arc(lo, hi, n=32, radius=0.2, height=0.5):
    """``(n, 3)`` arc of the twist range around the bone: the bone's local +Z twisted by ``psi``
    about +Y, ``(r sin psi, h, r cos psi)`` for ``psi`` in ``[lo, hi]`` [000 eq.44 mapped]."""
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo > hi:
        raise ValueError(f"twist range must be finite with min <= max, got ({lo}, {hi})")
    psi = np.linspace(lo, hi, max(int(n), 2))
    return np.stack((radius * np.sin(psi), np.full_like(psi, height), radius * np.cos(psi)), axis=-1)


def twist_marker(q, radius=0.2, height=0.5):
    """The twist arc's point for the current rotation: the bone's local ``(0, h, r)`` turned by
    ``q``; together with ``twist_arc`` turned by the swing part it shows the twist in range."""
    return quat.rotate(quat.as_unit_quats(q), np.array([0.0, height, radius]))


def swing_only(q):
    """The swing part ``q_swing`` of ``q = q_swing · q_twist`` [000 eq.37-39 mapped]."""
    q = quat.as_unit_quats(q)
    psi = 2.0 * np.arctan2(q[..., 2], q[..., 0])
    half = -0.5 * psi
    twist_inv = np.stack((np.cos(half), np.zeros_like(half), np.sin(half), np.zeros_like(half)), axis=-1)
    return quat.mul(q, twist_inv)


def cone_triangles(apex, ring):
    """Triangles ``(3 k, 3)`` of a fan from ``apex`` to consecutive points of ``ring`` (a closed
    polyline whose last point repeats the first)."""
    ring = np.asarray(ring, dtype=np.float64)
    apex = np.broadcast_to(np.asarray(apex, dtype=np.float64), ring[:-1].shape)
    return np.stack((apex, ring[:-1], ring[1:]), axis=1).reshape(-1, 3)


# --- placement in the scene ---------------------------------------------------------------------


def _matrix(m, what):
    m = np.asarray(m, dtype=np.float64)
    if m.shape != (4, 4) or not np.all(np.isfinite(m)):
        raise ValueError(f"{what} must be a finite 4x4 matrix")
    return m


def joint_matrix(armature_world, bone_rest, parent_rest=None, parent_pose=None):
    """World matrix of the joint's frame: the bone's rest orientation in its posed parent,
    ``armature_world @ parent_pose @ parent_rest⁻¹ @ bone_rest`` (armature-space rest matrices
    ``Bone.matrix_local``, the parent's ``PoseBone.matrix``); a root bone has
    ``armature_world @ bone_rest``. The pose bone's own matrix is this times its local rotation."""
    world = _matrix(armature_world, "armature matrix")
    rest = _matrix(bone_rest, "bone rest matrix")
    if parent_rest is None or parent_pose is None:
        return world @ rest
    parent_pose = _matrix(parent_pose, "parent pose matrix")
    return world @ parent_pose @ np.linalg.inv(_matrix(parent_rest, "parent rest matrix")) @ rest


def to_world(matrix, points, scale=1.0, head=None):
    """Points of the joint frame ``(..., 3)`` (unit sphere) scaled by ``scale`` (the bone length)
    into the world: ``head + M3 @ (scale p)``, ``head`` defaulting to the matrix's translation."""
    m = _matrix(matrix, "joint matrix")
    points = np.asarray(points, dtype=np.float64)
    origin = m[:3, 3] if head is None else np.asarray(head, dtype=np.float64)
    return origin + (scale * points) @ m[:3, :3].T
