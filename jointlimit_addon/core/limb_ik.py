"""Analytic IK for three-bone limbs with a swivel angle [001] (Tolani, Goswami, Badler 2000).

Model [001 §2]: an upper bone (root joint R1, 3 DOF), a lower bone (middle joint Ry, a 1-DOF
hinge) and an end bone (R2, 3 DOF). In Blender terms the three are pose bones in a parent chain,
each lying along its local +Y. Everything is solved in armature space; results are the three
joints' LOCAL rotations, i.e. what goes into ``pose_bone.rotation_quaternion`` (the child relative
to its rest orientation in the parent): ``pose = parent_pose @ parent_rest^-1 @ rest @ R_local``.

Geometry (all derived from the rest matrices, so non-connected bones work too):

* root   = head of the upper bone, elbow = head of the lower bone, wrist = head of the end bone.
  ``L1 = |elbow - root|``, ``L2 = |wrist - elbow|`` in the rest pose.
* Hinge axis ``a`` (lower bone local frame): perpendicular to the rest directions of the upper and
  lower bones, signed so that a positive hinge angle bends the limb further in its rest bend;
  local +X if the rest pose is straight; overridable. The hinge angle is 0 in the rest pose.
* Swivel angle ``phi`` [001 §3, Solve l.56-62]: the rotation of the bend (the elbow/knee) about
  the root->wrist axis ``n``, right-handed about ``n``. It is measured on the "bend direction"
  ``b = normalize(n x hinge_axis)``, which is exactly the direction of the elbow from the
  root->wrist line whenever the hinge bends positively, and stays defined (and continuous) when
  the limb is straight.
* Swivel 0 (the seed uses a fixed vector ``vA``; we use one that is singular in a rarer place):
  take the rest pose, rotate it by the shortest rotation that carries the rest root->wrist
  direction onto ``n``; its bend direction is swivel 0. So the rest pose is the solution for
  (rest wrist position, swivel 0), and swivel 0 moves smoothly with the target everywhere except
  when ``n`` points exactly opposite the rest root->wrist direction; there (within 1e-12) swivel 0
  is the rest bend direction reversed. The reference is fixed to the upper bone's parent.

Degenerate inputs never produce NaN (see ``LimbPose`` for the flags):

* unreachable targets: the chain points straight at the target, fully stretched (or fully folded
  when the target is nearer than ``|L1 - L2|``) — the seed's sample makes the limb vanish
  [001 §4]; we do not.
* a target at the root (closer than ``1e-9 (L1 + L2)``): status ``TOO_CLOSE``; the rest pose (or
  the ``current`` pose passed in) is returned, clamped into the limits (``_kept_inside``).

Limits (``LimbLimits``): the hinge range bounds the elbow/knee angle; the swivel is a free
parameter spent on the upper and end limits — the feasible swivel nearest the requested one is
used (Tolani, Goswami, Badler 2000, cited by [001]; the intervals are computed in
``swivel_limits``), and joints are clamped only when no swivel is feasible.

All functions accept batches: targets ``(..., 3)``, swivels ``(...)``, target rotations
``(..., 4)`` broadcast together (and with a batched parent pose in the chain). A single target
with an unbatched chain takes a scalar fast path (plain floats, same results to rounding;
``limb_ik_scalar``).
"""

import math
from dataclasses import dataclass
from typing import Any, NamedTuple, Optional

import numpy as np

from . import limb_ik_scalar as scalar
from . import quat as Q
from . import swivel_limits as SW

STATUS_OK = "OK"
STATUS_LIMITED = "LIMITED"
STATUS_OUT_OF_REACH = "OUT_OF_REACH"
STATUS_TOO_CLOSE = "TOO_CLOSE"

_STRAIGHT_SIN = 1e-6  # sine of the rest bend below which the rest limb counts as straight
_CLOSE_REL = 1e-9  # "too close" distance, relative to L1 + L2
_REACH_REL = 1e-9  # tip error counted as "reached", relative to L1 + L2
_DEGENERATE_SIN = 1e-6  # |n x axis| below which the bend direction falls back
_ANTIPODE = 1e-12  # 1 + cos below which swivel 0 uses its antipodal fallback
_TWO_PI = 2.0 * math.pi
_FULL_CIRCLE = 1e-6  # a hinge range this close to 2 pi is the whole circle (float32 storage)


class LimbLimits(NamedTuple):
    """Joint limits of a limb; each entry may be ``None`` (free).

    ``upper`` and ``end`` are joint-limit objects (``clamp(q)``/``contains(q)`` on local
    rotations, see ``core/limits.py``); ``hinge`` is a ``(lo, hi)`` range of the hinge angle in
    radians, relative to the rest pose (``lo <= hi``, ``hi - lo < 2 pi``).
    """

    upper: Any = None
    hinge: Optional[tuple] = None
    end: Any = None


@dataclass(frozen=True)
class LimbPose:
    """Result of a limb solve. Arrays have the batch shape ``S`` of the inputs.

    quats          (S, 3, 4) local rotations (w, x, y, z) of upper, lower, end bone.
    hinge_angle    (S,) hinge angle of the lower bone (radians, 0 = rest), in (-pi, pi].
    tip_error      (S,) distance between the wrist (end bone head) and the target.
    orientation_error (S,) angle between end bone rotation and the target rotation
                   (``solve_pose`` only; ``None`` for ``solve_position``).
    reached        (S,) tip_error <= 1e-9 (L1 + L2).
    out_of_reach   (S,) the target distance is outside what the hinge (and its range) allows.
    too_close      (S,) target at the root; the rest/current pose was returned.
    hinge_clamped, upper_clamped, end_clamped  (S,) a limit changed that joint's solution.
    swivel         (S,) swivel used, in (-pi, pi]; ``swivel_requested`` the one asked for.
    upper_blocked, end_blocked  (S,) that joint's limit fails at the requested swivel.
    no_feasible_swivel  (S,) no swivel satisfies the limits at this hinge angle: the solution
                   is the best pose found inside the limits (status ``LIMITED``).
    ``swivel_moved`` (property): a limit failed at the requested swivel and another one that
    satisfies every limit was used (the wrist still reaches the target).
    """

    quats: np.ndarray
    hinge_angle: np.ndarray
    tip_error: np.ndarray
    reached: np.ndarray
    out_of_reach: np.ndarray
    too_close: np.ndarray
    hinge_clamped: np.ndarray
    upper_clamped: np.ndarray
    end_clamped: np.ndarray
    orientation_error: Optional[np.ndarray] = None
    swivel: Optional[np.ndarray] = None
    swivel_requested: Optional[np.ndarray] = None
    upper_blocked: Optional[np.ndarray] = None
    end_blocked: Optional[np.ndarray] = None
    no_feasible_swivel: Optional[np.ndarray] = None

    @property
    def swivel_moved(self):
        """(S,) the requested swivel broke a limit and a feasible swivel was used instead."""
        return (self.upper_blocked | self.end_blocked) & ~self.no_feasible_swivel

    @property
    def upper(self):
        return self.quats[..., 0, :]

    @property
    def lower(self):
        return self.quats[..., 1, :]

    @property
    def end(self):
        return self.quats[..., 2, :]

    @property
    def status(self):
        """``TOO_CLOSE``, ``OUT_OF_REACH``, ``LIMITED`` (a limit cost accuracy: a joint was
        clamped and the tip missed the target) or ``OK``; a string for a single solve, an object
        array for a batch."""
        limited = (self.hinge_clamped | self.upper_clamped | self.end_clamped) & ~self.reached
        s = np.where(
            self.too_close,
            STATUS_TOO_CLOSE,
            np.where(self.out_of_reach, STATUS_OUT_OF_REACH, np.where(limited, STATUS_LIMITED, STATUS_OK)),
        ).astype(object)
        return str(s) if s.ndim == 0 else s


# --------------------------------------------------------------------------------------------
# chain


def _rest_matrix(m, name):
    """Validate a 4x4 rest matrix; return (nearest rotation 3x3, head 3)."""
    m = np.asarray(m, dtype=np.float64)
    if m.shape != (4, 4):
        raise ValueError(f"{name} must be a 4x4 matrix, got shape {m.shape}")
    if not np.all(np.isfinite(m)):
        raise ValueError(f"{name} contains NaN or infinite values")
    rot, scale = _polar(m[:3, :3], name)
    if np.any(np.abs(scale - 1.0) > 1e-4):
        raise ValueError(f"{name} must be a rigid transform (rest matrices carry no scale)")
    return rot, m[:3, 3].copy()


def _polar(m, name):
    """Split (..., 3, 3) ``m = scale * rot``; ValueError for mirroring or non-uniform scale."""
    u, sv, vt = np.linalg.svd(m)
    det = np.linalg.det(m)
    if np.any(det <= 0.0):
        raise ValueError(f"{name} is singular or mirrored (negative scale)")
    scale = sv.mean(axis=-1)
    if np.any(sv.max(axis=-1) - sv.min(axis=-1) > 1e-5 * scale):
        raise ValueError(f"{name} has non-uniform scale, which limb IK does not support")
    return u @ vt, scale


def _unit(v):
    return Q.normalize(v)


class LimbChain:
    """An upper/lower/end bone chain, built from armature-space matrices.

    ``upper_rest``, ``lower_rest``, ``end_rest``: 4x4 rest matrices (``bone.matrix_local``).
    ``parent_pose``, ``parent_rest``: pose matrix (``pose_bone.matrix``, may be batched
    ``(..., 4, 4)`` for baking) and rest matrix of the upper bone's parent; both ``None`` for a
    root bone. Uniform scale in the parent pose is supported.
    ``hinge_axis``: override of the hinge axis in the lower bone's local frame.
    ``end_length``: length of the end bone (only used for the end tail in ``forward``).
    """

    def __init__(self, upper_rest, lower_rest, end_rest, parent_pose=None, parent_rest=None,
                 hinge_axis=None, end_length=0.0):
        r_u, h_u = _rest_matrix(upper_rest, "upper_rest")
        r_l, h_l = _rest_matrix(lower_rest, "lower_rest")
        r_e, h_e = _rest_matrix(end_rest, "end_rest")
        self.upper_rest = np.asarray(upper_rest, dtype=np.float64)
        self.end_length = float(end_length)
        self.o_l = r_u.T @ (h_l - h_u)  # elbow in the upper bone's frame
        self.o_e = r_l.T @ (h_e - h_l)  # wrist in the lower bone's frame
        self.length_upper = float(np.linalg.norm(self.o_l))
        self.length_lower = float(np.linalg.norm(self.o_e))
        if min(self.length_upper, self.length_lower) < 1e-9:
            raise ValueError("upper and lower bone heads must be apart (bone lengths L1, L2 > 0)")
        self.reach = self.length_upper + self.length_lower
        self.rel_lower = r_u.T @ r_l  # lower rest frame in the upper frame
        self.rel_end = r_l.T @ r_e
        self.q_rel_lower = Q.from_matrix(self.rel_lower)
        self.q_rel_end = Q.from_matrix(self.rel_end)
        self.axis = self._hinge_axis(r_u, r_l, hinge_axis)
        self.axis_upper = self.rel_lower @ self.axis
        self._hinge_constants()
        self.w_rest = self.o_l + self.rel_lower @ self.o_e
        self.w_rest_hat = _unit(self.w_rest)
        self.bend_rest = _bend_direction(self.w_rest_hat, self.axis_upper, self.o_l)
        self._set_base(parent_pose, parent_rest)

    @staticmethod
    def _hinge_axis(r_u, r_l, hinge_axis):
        if hinge_axis is not None:
            a = Q.as_vectors(hinge_axis, "hinge_axis")
            if a.shape != (3,) or not np.any(a):
                raise ValueError("hinge_axis must be one non-zero 3-vector (lower bone local frame)")
            return _unit(a)
        # Rotating about u x l turns u towards l, i.e. bends l further away from u.
        c = _cross(r_u[:, 1], r_l[:, 1])
        if np.linalg.norm(c) < _STRAIGHT_SIN:
            return np.array([1.0, 0.0, 0.0])
        return r_l.T @ _unit(c)

    def _hinge_constants(self):
        """``d(theta)^2 = K + B cos(theta) + C sin(theta) = K + R cos(theta - theta0)``: the
        root->wrist distance as a function of the hinge angle — the seed's cosine rule
        [001 §3, Solve l.39-44] for bones with arbitrary head offsets and hinge axis."""
        a, o_e = self.axis, self.o_e
        p = self.rel_lower.T @ self.o_l
        self.o_par = np.dot(o_e, a) * a
        self.o_perp = o_e - self.o_par
        self.o_cross = _cross(a, self.o_perp)
        k = self.length_upper ** 2 + self.length_lower ** 2 + 2.0 * np.dot(p, self.o_par)
        b = 2.0 * np.dot(p, self.o_perp)
        c = 2.0 * np.dot(p, self.o_cross)
        self.k = float(k)
        self.r = float(math.hypot(b, c))
        self.rigid = self.r < 1e-12 * self.reach ** 2  # the hinge cannot change the distance
        self.theta0 = 0.0 if self.rigid else float(math.atan2(c, b))
        self.d_max = math.sqrt(max(self.k + self.r, 0.0))
        self.d_min = math.sqrt(max(self.k - self.r, 0.0))

    def _set_base(self, parent_pose, parent_rest):
        """Frame in which the upper bone's local rotation acts: ``parent_pose @ parent_rest^-1
        @ upper_rest``, split into rotation, uniform scale and translation (the root)."""
        if (parent_pose is None) != (parent_rest is None):
            raise ValueError("give both parent_pose and parent_rest, or neither (root bone)")
        base = self.upper_rest
        if parent_pose is not None:
            pp = np.asarray(parent_pose, dtype=np.float64)
            pr = np.asarray(parent_rest, dtype=np.float64)
            if pp.shape[-2:] != (4, 4) or pr.shape != (4, 4):
                raise ValueError("parent_pose must be (..., 4, 4) and parent_rest 4x4")
            if not (np.all(np.isfinite(pp)) and np.all(np.isfinite(pr))):
                raise ValueError("parent matrices contain NaN or infinite values")
            base = pp @ np.linalg.inv(pr) @ self.upper_rest
        self.parent_pose, self.parent_rest = parent_pose, parent_rest
        self.base_rot, self.base_scale = _polar(base[..., :3, :3], "parent_pose")
        self.root = base[..., :3, 3].copy()
        self.base_quat = Q.from_matrix(self.base_rot)
        self.batched = self.base_rot.ndim > 2
        self._scalar = None if self.batched else scalar.ScalarChain(self)
        self._bands = {}

    def with_parent(self, parent_pose, parent_rest=None):
        """A copy of this chain with another parent pose (cheap: rest constants are shared)."""
        new = object.__new__(LimbChain)
        new.__dict__.update(self.__dict__)
        new._set_base(parent_pose, self.parent_rest if parent_rest is None else parent_rest)
        return new

    def distance_range(self, hinge_range=None):
        """(min, max) root->wrist distance in armature space, over the hinge range if given
        [001 §3, IsSolution]."""
        hinge_range = _free_hinge(hinge_range)
        if hinge_range is None:
            lo, hi = self.d_min, self.d_max
        else:
            h_lo, h_hi = _check_range(hinge_range)
            cand = [h_lo, h_hi] + [t for t in (self.theta0, self.theta0 + math.pi)
                                   if _in_range(t, h_lo, h_hi)[0]]
            d = self._dist(np.array(cand))
            lo, hi = float(d.min()), float(d.max())
        return lo * self.base_scale, hi * self.base_scale

    def _dist(self, theta):
        """Root->wrist distance in the base frame (unscaled) at hinge angle ``theta``."""
        return np.sqrt(np.maximum(self.k + self.r * np.cos(theta - self.theta0), 0.0))


# --------------------------------------------------------------------------------------------
# geometry helpers (vectorised)


def _cross(a, b):
    """``np.cross`` for (..., 3) arrays without its per-call overhead."""
    a1, a2, a3 = a[..., 0], a[..., 1], a[..., 2]
    b1, b2, b3 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack(np.broadcast_arrays(a2 * b3 - a3 * b2, a3 * b1 - a1 * b3, a1 * b2 - a2 * b1), axis=-1)


def _dot(a, b):
    return np.sum(a * b, axis=-1)


def _normalize(v):
    """Unit vectors (zero stays zero), scaled first so huge or tiny ones do not over/underflow."""
    m = np.max(np.abs(v), axis=-1, keepdims=True)
    v = v / np.where(m > 0.0, m, 1.0)
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.where(n > 0.0, n, 1.0)


def _wrap(angle):
    """Wrap into (-pi, pi]."""
    return np.pi - np.mod(np.pi - angle, _TWO_PI)


def _wrap_scalar(a):
    """``_wrap`` of one float."""
    return math.pi - (math.pi - a) % _TWO_PI


def _bend_direction(w_hat, axis, elbow):
    """Bend direction ``normalize(w_hat x axis)`` (the elbow's side of the root->wrist line for
    a positive hinge bend). Fallbacks, for a hinge axis along the line: the elbow's offset from
    the line, then any perpendicular of ``w_hat``."""
    b = _cross(w_hat, axis)
    nb = np.linalg.norm(b, axis=-1, keepdims=True)
    e = elbow - _dot(elbow, w_hat)[..., None] * w_hat
    ne = np.linalg.norm(e, axis=-1, keepdims=True)
    any_perp = _cross(w_hat, np.where(np.abs(w_hat[..., :1]) < 0.9, [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]))
    out = np.where(nb > _DEGENERATE_SIN, b, np.where(ne > _DEGENERATE_SIN * np.linalg.norm(elbow), e, any_perp))
    return _normalize(out)


def _swivel_zero(chain, n):
    """Swivel-0 bend direction ``U`` and ``V = n x U`` for root->wrist directions ``n``: the rest
    bend direction carried by the shortest rotation taking the rest root->wrist direction to
    ``n`` (replaces the seed's projected ``vA`` [001 §3, Solve l.56-59])."""
    w, a = chain.w_rest_hat, chain.bend_rest
    one_c = 1.0 + _dot(n, w)
    safe = np.where(one_c > _ANTIPODE, one_c, 1.0)
    u = a - (_dot(a, n) / safe)[..., None] * (w + n)
    u = np.where((one_c > _ANTIPODE)[..., None], u, -a)
    u = _normalize(u - _dot(u, n)[..., None] * n)
    return u, _cross(n, u)


def _limb_limits(limits):
    """``LimbLimits`` of ``limits`` (a tuple or ``None``); a hinge range of the whole circle
    (a Hinge limit of -180° to 180°) is no hinge limit."""
    limits = LimbLimits(*limits) if limits is not None else LimbLimits()
    return limits if _free_hinge(limits.hinge) is not None else limits._replace(hinge=None)


def _free_hinge(hinge_range):
    """``hinge_range``, or ``None`` for ``None`` or a range of the whole circle."""
    if hinge_range is None:
        return None
    try:
        lo, hi = (float(x) for x in hinge_range)
    except (TypeError, ValueError):
        return hinge_range  # (``_check_range`` says what is wrong)
    return None if hi - lo >= _TWO_PI - _FULL_CIRCLE else hinge_range


def _check_range(hinge_range):
    try:
        lo, hi = (float(x) for x in hinge_range)
    except (TypeError, ValueError):
        raise ValueError(f"hinge range must be a pair (lo, hi) of angles in radians, got {hinge_range!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
        raise ValueError(f"hinge range must be finite (lo, hi) with lo <= hi, got {hinge_range}")
    if hi - lo >= _TWO_PI:
        raise ValueError("hinge range must span less than 2 pi")
    return lo, hi


def _in_range(theta, lo, hi):
    """(inside, theta shifted by 2 pi k into [lo, hi]) with a rounding tolerance."""
    delta = np.mod(np.asarray(theta) - lo, _TWO_PI)
    delta = np.where(delta > _TWO_PI - 1e-12, 0.0, delta)
    inside = delta <= (hi - lo) + 1e-12
    return inside, np.minimum(lo + delta, hi)


def _clip_to_range(theta, lo, hi):
    """The angle ``theta`` kept in the arc ``[lo, hi]`` of the circle, else the nearer end on
    the circle; and whether it was outside."""
    d = (theta - lo) % _TWO_PI
    if d > _TWO_PI - 1e-12:
        d = 0.0
    if d <= (hi - lo) + 1e-12:
        return _wrap_scalar(min(lo + d, hi)), False
    return _wrap_scalar(lo if _TWO_PI - d <= d - (hi - lo) else hi), True


def _hinge_angle(chain, dist, hinge_range):
    """Hinge angle for root->wrist distances ``dist`` (base frame) by the cosine rule
    [001 §3, Solve l.39-44]: ``theta = theta0 +- acos((d^2 - K) / R)``; the ``+`` branch bends
    the rest bend further (the seed's ``Ry >= 0`` constraint [001 §2]). With a hinge range the
    branch inside the range is used; if neither is, the range end whose distance is nearest.
    Returns (theta, hinge_clamped)."""
    if chain.rigid:
        theta = np.zeros_like(dist)
        if hinge_range is None:
            return theta, np.zeros(dist.shape, dtype=bool)
        kept, clamped = _clip_to_range(0.0, *_check_range(hinge_range))
        return theta + kept, np.full(dist.shape, clamped)
    c = np.clip((dist * dist - chain.k) / chain.r, -1.0, 1.0)
    delta = np.arccos(c)
    plus = _wrap(chain.theta0 + delta)
    if hinge_range is None:
        return plus, np.zeros(dist.shape, dtype=bool)
    lo, hi = _check_range(hinge_range)
    in_plus, plus = _in_range(plus, lo, hi)
    in_minus, minus = _in_range(_wrap(chain.theta0 - delta), lo, hi)
    d_lo, d_hi = chain._dist(lo), chain._dist(hi)
    end = np.where(np.abs(d_lo - dist) <= np.abs(d_hi - dist), lo, hi)
    theta = np.where(in_plus, plus, np.where(in_minus, minus, end))
    return _wrap(theta), ~(in_plus | in_minus)


def _wrist_local(chain, theta):
    """Wrist in the upper bone's frame at hinge angle ``theta`` (Rodrigues about the axis)."""
    ct, st = np.cos(theta)[..., None], np.sin(theta)[..., None]
    o_rot = chain.o_par + ct * chain.o_perp + st * chain.o_cross
    return chain.o_l + o_rot @ chain.rel_lower.T


def _to_local(chain, points):
    """Armature-space points -> base frame (upper bone rest frame at the root, unscaled)."""
    d = points - chain.root
    return np.einsum("...ji,...j->...i", chain.base_rot, d) / np.asarray(chain.base_scale)[..., None]


# --------------------------------------------------------------------------------------------
# public API


def is_reachable(chain, target, hinge_range=None):
    """Whether the wrist can be put exactly on ``target`` (..., 3): the seed's ``IsSolution``
    [001 §3]: ``|target - root|`` within the distance range of the hinge (and its range), and
    not at the root. Boundary distances count as reachable."""
    target = Q.as_vectors(target, "target")
    dist = np.linalg.norm(target - chain.root, axis=-1)
    lo, hi = chain.distance_range(hinge_range)
    tol = 1e-12 * chain.reach * np.asarray(chain.base_scale)
    return (dist >= lo - tol) & (dist <= hi + tol) & (dist > _CLOSE_REL * chain.reach * chain.base_scale)


def _upper_rotation(chain, target, swivel, hinge_range):
    """Core solve [001 §3, Solve]: (q1, theta, distance in the base frame, too_close,
    hinge_clamped).

    1. hinge angle from the distance (cosine rule); unreachable distances are clipped, so the
       limb stretches (or folds) towards the target;
    2. swivel frame ``n``, ``U``, ``V`` and the wanted bend direction
       ``U cos(phi) + V sin(phi)`` (the seed's elbow circle ``vE = vC + r(cos vU + sin vV)``);
    3. ``R1`` maps the limb's own frame (root->wrist, bend direction) at that hinge angle onto
       the wanted frame."""
    t_loc = _to_local(chain, target)
    dist = np.linalg.norm(t_loc, axis=-1)
    too_close = dist <= _CLOSE_REL * chain.reach
    n = np.where(too_close[..., None], chain.w_rest_hat, _normalize(t_loc))
    theta, hinge_clamped = _hinge_angle(chain, np.clip(dist, chain.d_min, chain.d_max), hinge_range)
    f0, _ = _limb_frame(chain, theta)
    u, v = _swivel_zero(chain, n)
    cs, sn = np.cos(swivel)[..., None], np.sin(swivel)[..., None]
    b = cs * u + sn * v
    ft = np.stack((n, b, _cross(n, b)), axis=-1)
    q1 = Q.from_matrix(np.einsum("...ik,...jk->...ij", ft, f0))
    return q1, theta, dist, too_close, hinge_clamped


def _limb_frame(chain, theta):
    """The limb's own frame (root->wrist, bend direction, their cross) in the upper bone's frame
    at hinge angle ``theta``, as matrix columns; and the wrist ``w0``."""
    w0 = _wrist_local(chain, theta)
    w0_hat = np.where((np.linalg.norm(w0, axis=-1) > 0.0)[..., None], _normalize(w0), chain.w_rest_hat)
    b0 = _bend_direction(w0_hat, chain.axis_upper, chain.o_l)
    return np.stack((w0_hat, b0, _cross(w0_hat, b0)), axis=-1), w0


# --------------------------------------------------------------------------------------------
# feasible swivel [001; Tolani, Goswami, Badler 2000]


class _Choice(NamedTuple):
    q1: np.ndarray
    theta: float
    delta: float  # swivel offset used (0 when the requested swivel is feasible)
    upper_blocked: bool
    end_blocked: bool
    none: bool  # no feasible swivel at any hinge branch: best pose inside the limits instead


def _needs_swivel_choice(limits, target_rotation):
    return limits.upper is not None or (target_rotation is not None and limits.end is not None)


def _families(chain, n, q1, theta, limits, target_rotation, base_quat):
    """Swivel families (see ``swivel_limits``) of the upper joint and, with a target
    orientation, of the end joint; ``None`` entries where that joint has no limit to respect."""
    upper = end = None
    if limits.upper is not None:
        upper = SW.Family(limits.upper, n, q1)
    if target_rotation is not None and limits.end is not None:
        k = Q.mul(Q.mul(chain.q_rel_lower, Q.from_axis_angle(chain.axis, theta)), chain.q_rel_end)
        m = Q.mul(q1, k)  # end parent frame in the base frame; R2(delta) = R_{m^-1 n}(-delta) R2
        r2 = Q.canonical(Q.mul(Q.conjugate(Q.mul(base_quat, m)), target_rotation))
        end = SW.Family(limits.end, -Q.rotate(Q.conjugate(m), n), r2)
    return upper, end


def _choose_swivel(chain, n, q1, theta, hinge_clamped, limits, target_rotation, base_quat):
    """The feasible swivel nearest the requested one, for one target (``n``, ``q1`` at the
    requested swivel, ``theta`` the hinge angle) [001; Tolani et al. 2000]. If no swivel is
    feasible, the other hinge branch (when inside the hinge range) is tried; if neither has one,
    the swivel whose clamped pose lands nearest the target. Returns a ``_Choice`` (its ``q1`` with
    ``w >= 0``, whichever sign the caller's ``q1`` had: the scalar and the batched paths agree)."""
    upper, end = _families(chain, n, q1, theta, limits, target_rotation, base_quat)
    fams = [f for f in (upper, end) if f is not None]
    delta, blocked = SW.nearest_feasible(fams)
    ub, eb = (upper is not None and blocked[0]), (end is not None and blocked[-1])
    q1 = Q.canonical(q1)
    if delta is not None:
        return _Choice(Q.canonical(SW.Family(None, n, q1).at1(delta)) if delta else q1, theta, delta, ub, eb, False)
    alt = _other_branch(chain, theta, hinge_clamped, limits.hinge)
    if alt is not None:
        frame, _ = _limb_frame(chain, theta)
        ft = Q.to_matrix(q1) @ frame
        q1_alt = Q.from_matrix(ft @ _limb_frame(chain, alt)[0].T)
        upper_a, end_a = _families(chain, n, q1_alt, alt, limits, target_rotation, base_quat)
        delta, _ = SW.nearest_feasible([f for f in (upper_a, end_a) if f is not None])
        if delta is not None:
            return _Choice(Q.canonical(SW.Family(None, n, q1_alt).at(delta)), alt, delta, ub, eb, False)
    delta = _least_violation(chain, theta, upper, end)
    return _Choice(Q.canonical(SW.Family(None, n, q1).at(delta)) if delta else q1, theta, delta, ub, eb, True)


def _other_branch(chain, theta, hinge_clamped, hinge_range):
    """The mirror hinge solution ``2 theta0 - theta`` (same distance) when a hinge range holds it."""
    if hinge_range is None or hinge_clamped or chain.rigid:
        return None
    lo, hi = _check_range(hinge_range)
    inside, alt = _in_range(_wrap(2.0 * chain.theta0 - theta), lo, hi)
    if not inside or abs(_wrap(alt - theta)) < 1e-9:
        return None
    return float(_wrap(alt))


_FALLBACK_GRID = np.concatenate(([0.0], np.pi * np.arange(1, 36) / 36.0, -np.pi * np.arange(1, 36) / 36.0, [np.pi]))


def _least_violation(chain, theta, upper, end):
    """Swivel offset whose clamped pose lands the wrist nearest the target, then whose end bone
    turns least under its limit: the fallback when no swivel is feasible. The best of a 5° grid
    (0 first), refined by a golden-section search within a grid step either side (a target just
    past the edge of what the limits reach lands within round-off of it, not a grid step away),
    or, with an end hinge, the swivel that keeps its axis (``SW.hinge_alignment``) where that
    scores better: no swivel is feasible for a hinge beyond round-off, and its one swivel can
    lie where the upper bone's limit leaves less than a grid step."""
    w0 = _wrist_local(chain, theta)

    def score(delta):
        out = np.zeros(np.shape(delta))
        if upper is not None:
            q = upper.at(delta)
            moved = Q.rotate(Q.as_unit_quats(upper.limit.clamp(q)), w0) - Q.rotate(q, w0)
            out += np.linalg.norm(moved, axis=-1) / chain.reach
        if end is not None:
            q = end.at(delta)
            out += 1e-3 * Q.angle_between(Q.as_unit_quats(end.limit.clamp(q)), q)
        return out

    grid = score(_FALLBACK_GRID)
    i = int(np.argmin(grid))
    step = np.pi / 36.0
    best, f_best = SW._golden_min(lambda d: float(score(np.array([d]))[0]), _FALLBACK_GRID[i] - step,
                                  _FALLBACK_GRID[i] + step)
    if grid[i] <= f_best:
        best, f_best = _FALLBACK_GRID[i], grid[i]
    aligned = None if end is None else SW.hinge_alignment(end)
    if aligned is not None:
        f_aligned = float(score(np.array([aligned]))[0])
        if f_aligned < f_best:  # an end hinge's one swivel, narrower than the grid (the upper bone at its limit's edge)
            return float(aligned)
    return float(_wrap(best))


def _spend_swivel(chain, target, swivel, q1, theta, too_close, hinge_clamped, limits, target_rotation):
    """``_choose_swivel`` for every target of a batch; returns (q1, theta, swivel info)."""
    shape = np.shape(q1)[:-1]
    requested = np.broadcast_to(np.asarray(swivel, dtype=np.float64), shape)
    used = np.array(requested, dtype=np.float64)
    ub, eb, none = (np.zeros(shape, dtype=bool) for _ in range(3))
    if _needs_swivel_choice(limits, target_rotation):
        q1 = np.array(q1, dtype=np.float64)
        theta = np.array(np.broadcast_to(theta, shape), dtype=np.float64)
        n = np.broadcast_to(_normalize(_to_local(chain, target)), shape + (3,))
        base = np.broadcast_to(chain.base_quat, shape + (4,))
        goal = None if target_rotation is None else np.broadcast_to(target_rotation, shape + (4,))
        clamped = np.broadcast_to(hinge_clamped, shape)
        close = np.broadcast_to(too_close, shape)
        for i in np.ndindex(shape):
            if close[i]:
                continue
            ch = _choose_swivel(chain, n[i], q1[i], float(theta[i]), bool(clamped[i]), limits,
                                None if goal is None else goal[i], base[i])
            q1[i], theta[i], ub[i], eb[i], none[i] = ch.q1, ch.theta, ch.upper_blocked, ch.end_blocked, ch.none
            used[i] = requested[i] + ch.delta
    return q1, theta, (_wrap(used), _wrap(requested), ub, eb, none)


def _prepare(chain, target, swivel, limits):
    target = Q.as_vectors(target, "target")
    swivel = np.asarray(swivel, dtype=np.float64)
    if not np.all(np.isfinite(swivel)):
        raise ValueError("swivel contains NaN or infinite values")
    return target, swivel, _limb_limits(limits)


def _clamp(limit, q):
    if limit is None:
        return q, np.zeros(q.shape[:-1], dtype=bool)
    qc = Q.as_unit_quats(limit.clamp(q), "clamped rotation")
    return qc, Q.angle_between(qc, q) > 1e-12


def _finish(chain, target, q1, theta, dist, too_close, hinge_clamped, limits, end_q, current,
            target_rotation=None, swivel_info=None):
    """Apply R1/R2 limits, handle TOO_CLOSE, compute errors and flags."""
    q1, upper_clamped = _clamp(limits.upper, q1)
    q_hinge = Q.from_axis_angle(chain.axis, theta)
    if target_rotation is not None:  # [001 §3, Solve(mGoal): R2 = Ry^-1 R1^-1 Goal]
        end_parent = Q.mul(Q.mul(Q.mul(Q.mul(chain.base_quat, q1), chain.q_rel_lower), q_hinge), chain.q_rel_end)
        end_q = Q.canonical(Q.mul(Q.conjugate(end_parent), target_rotation))
    end_q, end_clamped = _clamp(limits.end, end_q)
    quats = np.stack(np.broadcast_arrays(q1, q_hinge, end_q), axis=-2)
    if np.any(too_close):
        keep = Q.identity(quats.shape[:-1]) if current is None else Q.as_unit_quats(current, "current")
        keep, kept_theta, flags = _kept_inside(chain, np.broadcast_to(keep, quats.shape), limits)
        quats = np.where(too_close[..., None, None], keep, quats)
        theta = np.where(too_close, kept_theta, theta)
        hinge_clamped, upper_clamped, end_clamped = (
            np.where(too_close, kept, f) for kept, f in zip(flags, (hinge_clamped, upper_clamped, end_clamped)))
    tip_error = np.linalg.norm(forward(chain, quats)[..., 2, :] - target, axis=-1)
    d_lo, d_hi = chain.distance_range(limits.hinge)
    scale = np.asarray(chain.base_scale)
    out = ((dist * scale < d_lo - _REACH_REL * chain.reach * scale)
           | (dist * scale > d_hi + _REACH_REL * chain.reach * scale)) & ~too_close
    orient = None
    if target_rotation is not None:
        orient = Q.angle_between(pose_rotations(chain, quats)[..., 2, :], target_rotation)
    return LimbPose(
        quats=quats, hinge_angle=np.asarray(theta, dtype=np.float64), tip_error=tip_error,
        reached=tip_error <= _REACH_REL * chain.reach * scale, out_of_reach=out, too_close=too_close,
        hinge_clamped=hinge_clamped, upper_clamped=upper_clamped, end_clamped=end_clamped,
        orientation_error=orient, swivel=swivel_info[0], swivel_requested=swivel_info[1],
        upper_blocked=swivel_info[2] & ~too_close, end_blocked=swivel_info[3] & ~too_close,
        no_feasible_swivel=swivel_info[4] & ~too_close,
    )


def _kept_inside(chain, keep, limits):
    """The pose ``keep`` (..., 3, 4) kept for a target at the root, inside the limits: the upper and
    end bones clamped; with a hinge range the lower bone turned about the hinge axis only, its hinge
    angle brought into the range; its hinge angles and the (hinge, upper, end) clamped flags."""
    upper, upper_clamped = _clamp(limits.upper, keep[..., 0, :])
    end, end_clamped = _clamp(limits.end, keep[..., 2, :])
    lower, theta = keep[..., 1, :], _hinge_of(chain, keep[..., 1, :])
    hinge_clamped = np.zeros(theta.shape, dtype=bool)
    if limits.hinge is not None:
        lo, hi = _check_range(limits.hinge)
        theta = np.reshape([_clip_to_range(float(a), lo, hi)[0] for a in np.ravel(theta)], theta.shape)
        hinge = Q.from_axis_angle(chain.axis, theta)
        hinge_clamped = Q.angle_between(hinge, lower) > 1e-12    # off the axis, or out of range
        lower = hinge
    return np.stack((upper, lower, end), axis=-2), theta, (hinge_clamped, upper_clamped, end_clamped)


def _hinge_of(chain, q_lower):
    """Signed hinge angle of a lower-bone local rotation (its twist about the hinge axis)."""
    return _wrap(2.0 * np.arctan2(_dot(q_lower[..., 1:], chain.axis), q_lower[..., 0]))


def rest_hinge_axis(upper_rest, lower_rest):
    """The hinge axis the chain takes from the rest-pose bend of these rest matrices (lower
    bone's frame; local +X when straight)."""
    return LimbChain._hinge_axis(_rest_matrix(upper_rest, "upper_rest")[0], _rest_matrix(lower_rest, "lower_rest")[0], None)


def hinge_residual(chain, q_lower):
    """``H(theta)^-1 q_lower`` with ``q_lower = H(theta) residual``: what a lower-bone local
    rotation holds besides its turn about the hinge axis (a twist about the bone, a bend about
    another axis); it has no part about the axis."""
    q_lower = Q.as_unit_quats(q_lower, "q_lower")
    turn = Q.from_axis_angle(chain.axis, _hinge_of(chain, q_lower))
    return Q.mul(Q.conjugate(turn), q_lower)


def solve_position(chain, target, swivel=0.0, limits=None, end_local=None, current=None):
    """Rotations putting the wrist (end bone head) on ``target`` with the bend at ``swivel``
    [001 §3, Solve(vGoal)]. The end joint is not solved: it gets ``end_local`` (default rest),
    clamped by the end limit.

    ``target`` (..., 3) armature space; ``swivel`` (...) radians; ``limits`` a ``LimbLimits`` or a
    tuple ``(upper_limit, hinge_range, end_limit)``. Limit semantics: the hinge angle is kept in
    its range while solving, which shrinks the reachable distances (targets outside are treated
    as unreachable: stretched/folded as far as the range allows). The swivel is then spent on the
    upper limit [001; Tolani et al. 2000]: if ``R1`` breaks it at the requested swivel, the
    feasible swivel nearest the requested one is used (``swivel``, ``upper_blocked``; the wrist
    still reaches). Only when no swivel fits (at either hinge branch inside the range) is ``R1``
    clamped at the swivel whose clamped pose lands nearest — the wrist then misses the target,
    see ``tip_error`` and ``no_feasible_swivel``. ``R2`` is clamped by the end limit.
    ``current`` (..., 3, 4): local rotations kept for TOO_CLOSE targets (default rest).
    """
    if end_local is None and current is None:
        fast = scalar.inputs(chain, target, swivel, limits)
        pose = None if fast is None else scalar.solve(chain, *fast)
        if pose is not None:
            return pose
    target, swivel, limits = _prepare(chain, target, swivel, limits)
    q1, theta, dist, close, hinge_clamped = _upper_rotation(chain, target, swivel, limits.hinge)
    q1, theta, info = _spend_swivel(chain, target, swivel, q1, theta, close, hinge_clamped, limits, None)
    end_q = Q.identity() if end_local is None else Q.as_unit_quats(end_local, "end_local")
    return _finish(chain, target, q1, theta, dist, close, hinge_clamped, limits, end_q, current, swivel_info=info)


def solve_pose(chain, target, target_rotation, swivel=0.0, limits=None, current=None):
    """Position and orientation: wrist on ``target`` and the end bone's armature-space rotation
    equal to ``target_rotation`` (..., 4) [001 §3, Solve(mGoal)]: R1 and the hinge as in
    ``solve_position``, then ``R2`` takes the remaining rotation (computed after the R1/hinge
    limits, so the orientation stays exact unless the end limit clamps it). With limits the
    swivel is chosen so that both ``R1`` and ``R2`` keep their limits (nearest the requested
    swivel); the end limit clamps only when no swivel fits both."""
    if current is None:
        fast = scalar.inputs(chain, target, swivel, limits, target_rotation)
        pose = None if fast is None else scalar.solve(chain, *fast)
        if pose is not None:
            return pose
    target, swivel, limits = _prepare(chain, target, swivel, limits)
    target_rotation = Q.as_unit_quats(target_rotation, "target_rotation")
    q1, theta, dist, close, hinge_clamped = _upper_rotation(chain, target, swivel, limits.hinge)
    q1, theta, info = _spend_swivel(chain, target, swivel, q1, theta, close, hinge_clamped, limits,
                                    target_rotation)
    return _finish(chain, target, q1, theta, dist, close, hinge_clamped, limits, Q.identity(), current,
                   target_rotation=target_rotation, swivel_info=info)


def get_swivel(chain, local_quats):
    """Swivel angle in (-pi, pi] of a pose given by local rotations (..., 3, 4) or a
    ``LimbPose`` [001 §3, GetSwivel]: the angle about the root->wrist axis from swivel 0 to the
    pose's bend direction ``n x hinge_axis``. Round-trips ``solve_*`` exactly (to rounding),
    also for unreachable targets. 0 when the wrist is at the root."""
    if isinstance(local_quats, LimbPose):
        local_quats = local_quats.quats
    q = Q.as_unit_quats(local_quats, "local_quats")
    if q.shape[-2:] != (3, 4):
        raise ValueError(f"local_quats must have shape (..., 3, 4), got {q.shape}")
    m1 = Q.to_matrix(q[..., 0, :])
    m_lower = m1 @ Q.to_matrix(Q.mul(chain.q_rel_lower, q[..., 1, :]))
    elbow = m1 @ chain.o_l
    w = elbow + m_lower @ chain.o_e
    axis = m_lower @ chain.axis
    dist = np.linalg.norm(w, axis=-1)
    n = np.where((dist > _CLOSE_REL * chain.reach)[..., None], _normalize(w), chain.w_rest_hat)
    b = _bend_direction(n, axis, elbow)
    u, v = _swivel_zero(chain, n)
    phi = _wrap(np.arctan2(_dot(b, v), _dot(b, u)))
    return np.where(dist > _CLOSE_REL * chain.reach, phi, 0.0)


def pose_rotations(chain, local_quats):
    """Armature-space rotations (..., 3, 4) of upper, lower and end bone."""
    q = np.asarray(local_quats, dtype=np.float64)
    r1 = Q.mul(chain.base_quat, q[..., 0, :])
    r2 = Q.mul(Q.mul(r1, chain.q_rel_lower), q[..., 1, :])
    r3 = Q.mul(Q.mul(r2, chain.q_rel_end), q[..., 2, :])
    return np.stack(np.broadcast_arrays(r1, r2, r3), axis=-2)


def forward(chain, local_quats):
    """Forward kinematics: armature-space (..., 4, 3) positions of root, elbow (lower head),
    wrist (end head) and end tail for local rotations (..., 3, 4)."""
    q = Q.as_unit_quats(local_quats, "local_quats")
    m = Q.to_matrix(pose_rotations(chain, q))
    s = np.asarray(chain.base_scale)[..., None]
    root = np.broadcast_to(chain.root, m.shape[:-3] + (3,))
    elbow = root + s * (m[..., 0, :, :] @ chain.o_l)
    wrist = elbow + s * (m[..., 1, :, :] @ chain.o_e)
    tail = wrist + s * (m[..., 2, :, 1] * chain.end_length)
    return np.stack((root, elbow, wrist, tail), axis=-2)

