"""Length-weighted cyclic coordinate descent (CCD) IK for a bone chain [004 §2, SPEC §4].

A chain is ``n`` bones, root -> tip, each the parent of the next, each lying along its local
+Y. The pose of bone ``i`` (Blender's ``pose_bone.matrix``) is::

    pose_i = pose_{i-1} @ (rest_{i-1}^-1 @ rest_i) @ R_i        (pose_{-1} @ rest_{-1}^-1 = base)

with ``R_i`` the joint's local rotation (``pose_bone.rotation_quaternion``). The effector is
the tail of the last bone.

CCD visits the joints from the one nearest the tip to the root. Joint ``i`` rotates by the
shortest-arc rotation taking ``effector - joint_i`` toward ``target - joint_i``; the angle of
that rotation is damped by the length weight [004 eq.1]::

    w_i = (sum_{j >= i} l_j) / (sum_k l_k)

so the root (w = 1) turns fully and the tip bone only by its share of the chain length. This
spreads the motion toward the root instead of letting the bones nearest the effector do all
the work [004 §2]. An optional MMD-style "unit angle" caps the angle of each step, and an
optional joint limit (any object with ``clamp(q)`` on the LOCAL quaternion, SPEC §2, [004 §3])
is applied after every joint update.

With limits, the steps respect them instead of being cut back by them [issue 19]: a 1-DOF
joint (``HingeLimit``) turns about its axis only; a joint with a twist range whose step would
twist it out of range first turns about the joint -> effector line (leaving the effector where
the step put it) to the nearer end of the range. A solve with limits that stalls above the
tolerance restarts from seeded random limit-respecting poses (bounded; the best pose is kept)
when the target is within reach, and ends when it is not (the limits' corrections never settle
on a fixed point there: the sweeps would run the whole budget).
A sweep that gained little is extrapolated along the geometric series of its gain, kept only if
that lowers the error (CCD converges slowly toward targets near the stretched chain's reach).

The limit-aware steps live in ``ccd_steps``. The per-joint work is on 3-vectors and single quaternions, where numpy's per-call overhead
dominates, so the inner loop uses plain Python floats on tuples; arrays are used at the API.
"""

import math
from dataclasses import dataclass, field

import numpy as np

from . import quat
from .ccd_steps import (_clamped, _degenerate_arc, _hinge_axis, _hinge_rotation, _per_sweep_limit, _qconj,
                        _qmul, _qrot, _random_inside, _twist_into_range, _twist_range)

_EPS = 1e-12
_EPS2 = _EPS * _EPS
_ARC_EPS = 1e-12     # |u x v| <= this |u| |v|: no unique shortest arc
DEFAULT_TOLERANCE = 9e-4  # relative to the chain length, see solve()
DEFAULT_RESTARTS = 16  # restarts of a stalled solve with limits, see solve()
SLOW_GAIN = 1e-3  # a SIMPLE-corrected sweep gaining less than this share of the error hands over


# --- float helpers on tuples (the others are in ccd_steps) ---------------------------------

def _tuple_quats(q):
    return [tuple(float(c) for c in row) for row in np.asarray(q, dtype=np.float64)]


# --- the chain ----------------------------------------------------------------------------

def _rigid_rotation(m3, name):
    """Rotation quaternion of an orthonormal, right-handed 3x3 matrix, else ValueError."""
    if not np.allclose(m3.T @ m3, np.eye(3), atol=1e-4) or np.linalg.det(m3) <= 0:
        raise ValueError(f"{name} must be a rigid transform (orthonormal rotation, no scale)")
    u, _, vt = np.linalg.svd(m3)  # the nearest rotation: Blender stores rest matrices as float32
    return quat.from_matrix(u @ vt)


def _affine(m, name):
    m = np.asarray(m, dtype=np.float64)
    if m.shape != (4, 4) or not np.all(np.isfinite(m)):
        raise ValueError(f"{name} must be a finite 4x4 matrix, got shape {m.shape}")
    return m


# ``M^T M`` of a uniformly scaled parent frame, read from Blender's float32 matrices through a few
# products (Rigify's tail: 1.5e-6 off), is ``s^2 I`` to this (relative); an uneven scale is far off it
UNEVEN_SCALE_TOL = 1e-5


@dataclass(frozen=True, eq=False)
class Chain:
    """A serial bone chain in its base frame (the root's parent, see module docstring).

    Build it with :meth:`from_rest_matrices` (Blender data) or :meth:`from_points`.

    Attributes:
        offsets: ``(n, 3)`` head of bone ``i`` in the rest frame of bone ``i-1``
            (bone 0: in the base frame, i.e. armature rest space of the root).
        rest_rotations: ``(n, 4)`` rest orientation of bone ``i`` relative to bone ``i-1``
            (``rest_{i-1}^-1 @ rest_i``; bone 0: its armature rest orientation).
        lengths: ``(n,)`` bone lengths (> 0), the tail is ``(0, length, 0)`` locally.
        links: ``(n,)`` link lengths ``l_i`` of [004 eq.1]: joint i to joint i+1 (the tip for
            the last bone); equal to the bone lengths for connected bones.
        weights: ``(n,)`` the damping weights ``w_i`` of [004 eq.1], root first (``w_0 = 1``).
        base_rotation, base_translation, base_scale: the base frame in armature space,
            ``base = parent_pose @ parent_rest^-1`` (rotation, translation, uniform scale).
    """

    offsets: np.ndarray
    rest_rotations: np.ndarray
    lengths: np.ndarray
    base_rotation: np.ndarray = field(default_factory=lambda: quat.identity())
    base_translation: np.ndarray = field(default_factory=lambda: np.zeros(3))
    base_scale: float = 1.0

    def __post_init__(self):
        offsets = quat.as_vectors(self.offsets, "offsets")
        lengths = np.asarray(self.lengths, dtype=np.float64)
        rest = quat.as_unit_quats(self.rest_rotations, "rest_rotations")
        n = len(lengths)
        if lengths.ndim != 1 or n == 0 or offsets.shape != (n, 3) or rest.shape != (n, 4):
            raise ValueError("a chain needs n >= 1 bones: offsets (n, 3), rest_rotations (n, 4), lengths (n,)")
        if not np.all(np.isfinite(lengths)) or np.any(lengths <= _EPS):
            raise ValueError("every bone length must be finite and > 0 (zero-length bones have no direction)")
        base_q = quat.as_unit_quats(self.base_rotation, "base_rotation")
        base_t = quat.as_vectors(self.base_translation, "base_translation")
        if not (np.isfinite(self.base_scale) and self.base_scale > _EPS):
            raise ValueError("base_scale must be finite and > 0")
        for name, value in (("offsets", offsets), ("rest_rotations", rest), ("lengths", lengths),
                            ("base_rotation", base_q), ("base_translation", base_t)):
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        object.__setattr__(self, "base_scale", float(self.base_scale))
        # Link i runs from joint i to joint i+1 (the tip for the last bone). For connected
        # bones it is the bone itself; for disconnected ones it is the lever the joint turns.
        links = np.append(np.linalg.norm(offsets[1:], axis=-1), lengths[-1])
        suffix = np.cumsum(links[::-1])[::-1]
        object.__setattr__(self, "links", links)
        # [004 eq.1]: w_i = sum_{j>=i} l_j / sum_k l_k (root weight 1).
        object.__setattr__(self, "weights", suffix / suffix[0])
        object.__setattr__(self, "_fast", (
            [tuple(map(float, o)) for o in offsets],
            _tuple_quats(rest),
            [float(v) for v in lengths],
        ))

    @property
    def n(self):
        """Number of bones."""
        return len(self.lengths)

    @property
    def length(self):
        """Total link length in armature units: the denominator of [004 eq.1] and the reach of
        the fully stretched chain (root head to tip)."""
        return float(np.sum(self.links)) * self.base_scale

    @classmethod
    def from_rest_matrices(cls, rest_matrices, lengths, parent_pose=None, parent_rest=None):
        """Chain from Blender data: ``bone.matrix_local`` (n, 4, 4) root -> tip and ``bone.length``.

        ``parent_pose``/``parent_rest`` are the pose and rest matrices (armature space) of the
        root's parent bone (identity if the root has no parent). The rest matrices must be
        rigid; the base ``parent_pose @ parent_rest^-1`` may carry a uniform scale.
        """
        rest = np.asarray(rest_matrices, dtype=np.float64)
        if rest.ndim != 3 or rest.shape[1:] != (4, 4) or len(rest) == 0:
            raise ValueError(f"rest_matrices must have shape (n, 4, 4) with n >= 1, got {rest.shape}")
        if not np.all(np.isfinite(rest)):
            raise ValueError("rest_matrices contain NaN or infinite values")
        lengths = np.asarray(lengths, dtype=np.float64)
        if lengths.shape != (len(rest),):
            raise ValueError(f"lengths must have shape ({len(rest)},), got {lengths.shape}")
        rot = np.stack([_rigid_rotation(m[:3, :3], f"rest_matrices[{i}]") for i, m in enumerate(rest)])
        head = rest[:, :3, 3]
        rel_rot = rot.copy()
        rel_rot[1:] = quat.mul(quat.conjugate(rot[:-1]), rot[1:])
        offsets = head.copy()
        offsets[1:] = quat.rotate(quat.conjugate(rot[:-1]), head[1:] - head[:-1])
        pose = np.eye(4) if parent_pose is None else _affine(parent_pose, "parent_pose")
        prest = np.eye(4) if parent_rest is None else _affine(parent_rest, "parent_rest")
        try:
            base = pose @ np.linalg.inv(prest)
        except np.linalg.LinAlgError:
            raise ValueError("parent_rest is singular") from None
        m3 = base[:3, :3]
        det = np.linalg.det(m3)
        if det <= _EPS:
            raise ValueError("the root's parent transform must be invertible without mirroring")
        scale = det ** (1.0 / 3.0)
        if not np.allclose(m3.T @ m3, scale * scale * np.eye(3), atol=UNEVEN_SCALE_TOL * max(1.0, scale * scale)):
            raise ValueError("the frame the root bone turns in (its parent's pose) is scaled unevenly; only a "
                             "uniform scale is supported")
        return cls(offsets, rel_rot, lengths, quat.from_matrix(m3 / scale), base[:3, 3], scale)

    @classmethod
    def from_points(cls, points):
        """Connected chain whose joints, at rest, are ``points`` (n+1, 3) in armature space.

        Each bone's +Y runs to the next point; its roll (local X) is a deterministic
        perpendicular. Convenient for tests and scripts.
        """
        p = quat.as_vectors(points, "points")
        if p.ndim != 2 or len(p) < 2:
            raise ValueError("points must have shape (n+1, 3) with n >= 1")
        seg = p[1:] - p[:-1]
        lengths = np.linalg.norm(seg, axis=-1)
        if np.any(lengths <= _EPS):
            raise ValueError("consecutive points must differ (zero-length bone)")
        mats = np.tile(np.eye(4), (len(seg), 1, 1))
        for i, d in enumerate(seg):
            y = quat.normalize(d)
            helper = np.array([0.0, 0.0, 1.0]) if abs(y[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
            x = quat.normalize(np.cross(y, helper))
            mats[i, :3, :3] = np.column_stack((x, y, np.cross(x, y)))
            mats[i, :3, 3] = p[i]
        return cls.from_rest_matrices(mats, lengths)

    def to_base(self, points):
        """Armature-space points -> the chain's base frame."""
        p = np.asarray(points, dtype=np.float64) - self.base_translation
        return quat.rotate(quat.conjugate(self.base_rotation), p) / self.base_scale

    def to_armature(self, points):
        """Base-frame points -> armature space."""
        p = quat.rotate(self.base_rotation, np.asarray(points, dtype=np.float64) * self.base_scale)
        return p + self.base_translation


def _forward_fast(chain, local):
    """Joint frames ``F_i = W_{i-1} C_i`` (rest orientation of joint i in the base frame),
    heads, and the effector, all in the base frame, for tuple quaternions ``local``."""
    offsets, rest, lengths = chain._fast
    ww, wx, wy, wz = 1.0, 0.0, 0.0, 0.0
    px = py = pz = 0.0
    frames, heads = [], []
    # _qrot(w, h), f = _qmul(w, c) and w = _qmul(f, r), written out: this runs every sweep
    for (hx, hy, hz), (cw, cx, cy, cz), (rw, rx, ry, rz) in zip(offsets, rest, local):
        tx, ty, tz = wy * hz - wz * hy, wz * hx - wx * hz, wx * hy - wy * hx
        px += hx + 2.0 * (ww * tx + wy * tz - wz * ty)
        py += hy + 2.0 * (ww * ty + wz * tx - wx * tz)
        pz += hz + 2.0 * (ww * tz + wx * ty - wy * tx)
        fw = ww * cw - wx * cx - wy * cy - wz * cz
        fx = ww * cx + wx * cw + wy * cz - wz * cy
        fy = ww * cy - wx * cz + wy * cw + wz * cx
        fz = ww * cz + wx * cy - wy * cx + wz * cw
        frames.append((fw, fx, fy, fz))
        heads.append((px, py, pz))
        ww = fw * rw - fx * rx - fy * ry - fz * rz
        wx = fw * rx + fx * rw + fy * rz - fz * ry
        wy = fw * ry - fx * rz + fy * rw + fz * rx
        wz = fw * rz + fx * ry - fy * rx + fz * rw
    # The tip is (0, l, 0) in the last bone's frame w: its image is l times w's Y column.
    l = lengths[-1]
    tip = (px + 2.0 * l * (wx * wy - wz * ww), py + l * (1.0 - 2.0 * (wx * wx + wz * wz)),
           pz + 2.0 * l * (wy * wz + wx * ww))
    return frames, heads, tip


def _check_local_quats(chain, local_quats):
    if local_quats is None:
        return quat.identity((chain.n,))
    q = quat.as_unit_quats(local_quats, "local_quats")
    if q.shape != (chain.n, 4):
        raise ValueError(f"local_quats must have shape ({chain.n}, 4), got {q.shape}")
    return q


def forward(chain, local_quats=None):
    """Joint positions ``(n+1, 3)`` in armature space: the n bone heads, then the tip (effector)."""
    q = _check_local_quats(chain, local_quats)
    _, heads, tip = _forward_fast(chain, _tuple_quats(q))
    return chain.to_armature(np.array(heads + [tip]))


@dataclass(frozen=True)
class CCDResult:
    """Outcome of :func:`solve`.

    ``local_quats`` (n, 4) are the new ``pose_bone.rotation_quaternion`` values, ``error`` the
    final effector-to-target distance (armature units), ``iterations`` the number of sweeps
    started (over all restarts), ``reached`` whether ``error <= tolerance``, ``restarts`` the
    number of restarts from random limit-respecting poses (see :func:`solve`).
    """

    local_quats: np.ndarray
    error: float
    iterations: int
    reached: bool
    restarts: int = 0


def _distance(a, b):
    return math.sqrt((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 + (a[2] - b[2]) ** 2)


def _limit_list(limits, n):
    if limits is None:
        return [None] * n
    limits = list(limits)
    if len(limits) != n:
        raise ValueError(f"limits must have one entry (a limit object or None) per bone: {n}, got {len(limits)}")
    for lim in limits:
        if lim is not None and not callable(getattr(lim, "clamp", None)):
            raise ValueError(f"limit objects need a clamp(q) method, got {type(lim).__name__}")
    return limits


MAX_COORDINATE = 1e150     # far beyond Blender's float32 coordinates (3.4e38); squares stay finite


def solve(chain, local_quats=None, target=None, iterations=256, tolerance=None, use_weights=True,
          limits=None, unit_angle=None, callback=None, restarts=DEFAULT_RESTARTS, seed=0):
    """Length-weighted CCD IK [004 §2, eq.1; SPEC §4].

    Args:
        chain: a :class:`Chain`.
        local_quats: ``(n, 4)`` start pose (local rotations; ``None`` = rest pose).
        target: ``(3,)`` target of the effector (tail of the last bone), armature space.
        iterations: maximum number of sweeps (tip joint -> root joint).
        tolerance: stop when the effector error <= this (armature units);
            ``None`` = ``DEFAULT_TOLERANCE * chain.length`` (0.9 mm on a 1 m chain: just inside
            the 1e-3 success criterion even after Blender stores the pose as float32).
        use_weights: damp each joint's step angle by ``w_i`` [004 eq.1]; ``False`` = plain CCD.
        limits: ``None`` or a sequence of n limit objects / ``None``; each limit's
            ``clamp(q)`` is applied to the joint's local quaternion after every update [004 §3].
            A limit with an ``axis`` 3-vector attribute (``HingeLimit``) marks a 1-DOF joint:
            its CCD step is the rotation about that local axis that best aligns the effector.
        unit_angle: MMD-style cap (radians) on each joint's step angle per sweep, applied to
            the CCD step (after weighting, before the limit, whose correction may move the
            joint further); ``None`` = no cap.
        callback: ``callback(iteration, local_quats)`` after every sweep
            (``iteration`` counts from 1; ``local_quats`` is a fresh ``(n, 4)`` array).

        restarts: with limits and a target within the chain's reach, how many times a stalled
            solve (its best error fell by less than ``STALL_GAIN`` over ``STALL_WINDOW`` sweeps,
            above the tolerance) starts again from a seeded random limit-respecting pose; the
            best pose found is returned. All runs share the ``iterations`` budget. ``0`` = never.
        seed: seed of the restart poses (the solve is deterministic).

    Returns:
        :class:`CCDResult`. Unreachable targets end with the chain stretched toward them.
        The result never contains NaN: degenerate steps (effector or target on the joint)
        are skipped, and a target exactly behind the joint turns it about the joint's local X.
    """
    q0 = _check_local_quats(chain, local_quats)
    if target is None:
        raise ValueError("target is required")
    target = quat.as_vectors(target, "target")
    if target.shape != (3,):
        raise ValueError(f"target must have shape (3,), got {target.shape}")
    if np.abs(target).max() > MAX_COORDINATE:     # its distances would overflow
        raise ValueError(f"target is too far away to solve for: a coordinate beyond ±{MAX_COORDINATE:g}")
    iterations = int(iterations)
    if iterations < 0:
        raise ValueError("iterations must be >= 0")
    if tolerance is None:
        tolerance = DEFAULT_TOLERANCE * chain.length
    if not (np.isfinite(tolerance) and tolerance >= 0):
        raise ValueError("tolerance must be finite and >= 0")
    if unit_angle is not None and not (np.isfinite(unit_angle) and unit_angle > 0):
        raise ValueError("unit_angle must be a positive finite angle in radians (or None)")
    restarts = int(restarts)
    if restarts < 0:
        raise ValueError("restarts must be >= 0")
    limits = _limit_list(limits, chain.n)
    hinges = [_hinge_axis(lim) for lim in limits]
    twists = [_twist_range(lim) for lim in limits]

    goal = tuple(map(float, chain.to_base(target)))
    tol = float(tolerance) / chain.base_scale
    weights = [float(w) for w in chain.weights] if use_weights else [1.0] * chain.n
    cap = math.pi if unit_angle is None else min(float(unit_angle), math.pi)
    local = _tuple_quats(q0)
    # Respect the limits from the start, so every returned rotation satisfies them.
    for i, lim in enumerate(limits):
        if lim is not None:
            local[i] = _clamped(lim, local[i])

    cheap = [_per_sweep_limit(lim) for lim in limits]
    # Smooth OPTIMAL limits: sweep with their SIMPLE twins (same region, cheap correction toward
    # the centre) while that makes good progress; the OPTIMAL limits then take over for the
    # rest, so a pose that still needs correcting is corrected geodesically. Every pose is inside.
    phases = ([cheap] if any(c is not lim for c, lim in zip(cheap, limits)) else []) + [limits]
    # Restarts only where they can help: with limits, and a target within the chain's reach.
    reach = float(np.sum(chain.links))
    reachable = _distance(goal, chain._fast[0][0]) < reach
    limited = any(lim is not None for lim in limits)
    run = _Run(chain, goal, tol, weights, cap, hinges, twists, iterations, callback, stall=limited,
               floor=max(_distance(goal, chain._fast[0][0]) - reach, 0.0))
    best_error, best = run.descend(local, phases)
    attempts = 0
    rng = None
    # Limits make local minima (a hinge held at its end, a shoulder at its twist end): restart
    # from seeded random limit-respecting poses, a bounded number of times, keep the best.
    # A target the limits keep out of reach stalls at about the same error from every start:
    # stop after RESTART_PATIENCE restarts in a row that gain less than RESTART_GAIN.
    fruitless = 0
    while (best_error > tol and run.sweeps < iterations and attempts < restarts and limited and reachable
           and fruitless < RESTART_PATIENCE):
        attempts += 1
        rng = rng if rng is not None else np.random.default_rng(seed)
        local = [_random_inside(lim, rng) for lim in limits]
        error, pose = run.descend(local, phases)
        fruitless = fruitless + 1 if error > (1.0 - RESTART_GAIN) * best_error else 0
        if error < best_error:
            best_error, best = error, pose
    local = best
    # Recompute from scratch so the reported error is that of the returned pose.
    _, _, effector = _forward_fast(chain, local)
    error = _distance(effector, goal)
    return CCDResult(np.array(local), error * chain.base_scale, run.sweeps, bool(error <= tol), attempts)


RESTART_PATIENCE = 4  # restarts in a row that gain less than RESTART_GAIN of the best error
RESTART_GAIN = 0.1    # end the restarts (see solve)
STALL_WINDOW = 10   # sweeps: with limits, a run whose best error fell by less than
STALL_GAIN = 0.01   # this share over the window is stalled (a local minimum or a crawl)


EXTRAPOLATE = True      # extrapolate slow sweeps (see _extrapolate); off for comparisons
EXTRAPOLATE_MAX = 30.0  # most multiples of the last sweep's rotations added at once


def _extrapolate(chain, local, prev, goal, before, error, limits):
    """After a sweep ``prev -> local`` that cut the error from ``before`` to ``error`` (ratio
    ``r``), the sweeps still to come would, if each kept that ratio, add ``r + r^2 + ... =
    error / (before - error)`` times its motion: try each joint turned on by that multiple of
    its last rotation (at most a half turn more), corrected by its limit, and keep the trial
    only if it lowers the error. Returns the error of ``local`` (changed in place if kept)."""
    alpha = min(error / (before - error), EXTRAPOLATE_MAX)
    trial = []
    for q, p, lim in zip(local, prev, limits):
        dw, dx, dy, dz = _qmul(q, _qconj(p))
        if dw < 0.0:
            dw, dx, dy, dz = -dw, -dx, -dy, -dz
        nv = math.sqrt(dx * dx + dy * dy + dz * dz)
        if nv <= 1e-15:
            trial.append(q)
            continue
        half = alpha * math.atan2(nv, dw)
        if half > 0.5 * math.pi:
            half = 0.5 * math.pi
        sn = math.sin(half) / nv
        t = _qmul((math.cos(half), dx * sn, dy * sn, dz * sn), q)
        trial.append(t if lim is None else _clamped(lim, t))
    _, _, effector = _forward_fast(chain, trial)
    e = _distance(effector, goal)
    if e < error:
        local[:] = trial
        return e
    return error


class _Run:
    """The sweeps of one solve, shared by its restarts (one sweep budget)."""

    def __init__(self, chain, goal, tol, weights, cap, hinges, twists, iterations, callback, stall, floor=0.0):
        self.chain, self.goal, self.tol, self.weights, self.cap = chain, goal, tol, weights, cap
        self.hinges, self.twists, self.iterations, self.callback = hinges, twists, iterations, callback
        self.stall, self.sweeps = stall, 0
        self.floor = floor  # the error no pose goes below (a target out of reach): progress counts above it
        self.extrapolate = EXTRAPOLATE and cap >= math.pi  # a unit angle caps every sweep's motion

    def descend(self, local, phases):
        """Sweep ``local`` (in place) through the phases; returns the best error and its pose."""
        _, _, effector = _forward_fast(self.chain, local)
        error = _distance(effector, self.goal)
        best_error, best = error, list(local)
        prev = None
        for phase in phases:
            history = [best_error]
            while error > self.tol and self.sweeps < self.iterations:
                self.sweeps += 1
                before = error
                error, moved = _sweep(self.chain, local, self.goal, self.tol, self.weights, self.cap, phase,
                                      self.hinges, self.twists)
                if self.extrapolate and before > error > 0.3 * before and prev is not None:
                    error = _extrapolate(self.chain, local, prev, self.goal, before, error, phase)
                prev = list(local)
                if self.callback is not None:
                    self.callback(self.sweeps, np.array(local))
                if error < best_error:
                    best_error, best = error, list(local)
                if moved <= 1e-15:
                    break  # a fixed point: further sweeps would repeat this one
                if phase is not phases[-1] and before - error <= SLOW_GAIN * before:
                    break  # the cheap correction crawls along the outline: hand over to OPTIMAL
                history.append(best_error)
                if self.floor > 0.0 and best_error - self.floor <= self.tol:
                    break   # out of reach: as near as any pose gets, to the tolerance
                if (self.stall and len(history) > STALL_WINDOW and best_error - self.floor
                        > (1.0 - STALL_GAIN) * (history[-1 - STALL_WINDOW] - self.floor)):
                    break
        return best_error, best


def _sweep(chain, local, goal, tol, weights, cap, limits, hinges, twists=None):
    """One CCD sweep, tip joint -> root joint, updating ``local`` in place [004 §2].

    Returns the effector error and a measure of how much the joints moved (0 at a fixed
    point). Plain floats on tuples: this is the solver's hot loop.
    """
    frames, heads, (ex, ey, ez) = _forward_fast(chain, local)
    if twists is None:
        twists = [None] * len(local)
    gx, gy, gz = goal
    moved = 0.0
    tol2 = tol * tol
    for i in range(len(local) - 1, -1, -1):
        jx, jy, jz = heads[i]
        ux, uy, uz = u = (ex - jx, ey - jy, ez - jz)
        vx, vy, vz = v = (gx - jx, gy - jy, gz - jz)
        # the shortest arc u -> v: axis u x v, angle atan2(|u x v|, u.v), unless degenerate
        cx, cy, cz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
        sin_part = math.sqrt(cx * cx + cy * cy + cz * cz)
        nu2, nv2 = ux * ux + uy * uy + uz * uz, vx * vx + vy * vy + vz * vz
        if (hinges[i] is None and nu2 > _EPS2 and nv2 > _EPS2
                and sin_part > _ARC_EPS * math.sqrt(nu2 * nv2)):
            ax, ay, az = cx / sin_part, cy / sin_part, cz / sin_part
            angle = math.atan2(sin_part, ux * vx + uy * vy + uz * vz)
        else:
            if hinges[i] is None:
                step = _degenerate_arc(u, v, frames[i])
            else:
                step = _hinge_rotation(u, v, _qrot(frames[i], hinges[i]))
            if step is None:
                continue
            (ax, ay, az), angle = step
        angle *= weights[i]
        if angle > cap:
            angle = cap
        if angle <= 0.0:
            continue
        c, s = math.cos(0.5 * angle), math.sin(0.5 * angle)
        fw, fx, fy, fz = frames[i]
        old = local[i]
        # The same rotation seen from the joint's rest frame F (axis F^-1 a), applied after `old`.
        # l = F^-1 a (_qrot by the conjugate, written out)
        tx, ty, tz = fz * ay - fy * az, fx * az - fz * ax, fy * ax - fx * ay
        lx = ax + 2.0 * (fw * tx - fy * tz + fz * ty)
        ly = ay + 2.0 * (fw * ty - fz * tx + fx * tz)
        lz = az + 2.0 * (fw * tz - fx * ty + fy * tx)
        bx, by, bz = s * lx, s * ly, s * lz
        ow, ox, oy, oz = old
        nw, nx = c * ow - bx * ox - by * oy - bz * oz, c * ox + bx * ow + by * oz - bz * oy
        ny, nz = c * oy - bx * oz + by * ow + bz * ox, c * oz + bx * oy - by * ox + bz * ow
        norm = math.sqrt(nw * nw + nx * nx + ny * ny + nz * nz)
        new = (nw / norm, nx / norm, ny / norm, nz / norm)
        if limits[i] is None:
            limited = new
        elif twists[i] is None:
            limited = _clamped(limits[i], new)
        else:
            limited = _twist_into_range(limits[i], twists[i], (fw, fx, fy, fz), new, old, u)
        if limited is new:  # no limit, or the limit holds the new rotation: the step as it is
            local[i] = new
            moved += s * (abs(ax) + abs(ay) + abs(az))
            # Rodrigues: u cos + (a x u) sin + a (a.u)(1 - cos), with cos, sin of the full angle
            cos_a, sin_a = c * c - s * s, 2.0 * c * s
            k = (ax * ux + ay * uy + az * uz) * (1.0 - cos_a)
            ex = jx + ux * cos_a + (ay * uz - az * uy) * sin_a + ax * k
            ey = jy + uy * cos_a + (az * ux - ax * uz) * sin_a + ay * k
            ez = jz + uz * cos_a + (ax * uy - ay * ux) * sin_a + az * k
        else:
            frame = (fw, fx, fy, fz)
            new = limited
            # The rotation actually applied, in the base frame: F (new old^-1) F^-1.
            delta = _qmul(_qmul(frame, _qmul(new, _qconj(old))), _qconj(frame))
            local[i] = new
            moved += abs(delta[1]) + abs(delta[2]) + abs(delta[3])
            dx, dy, dz = _qrot(delta, u)
            ex, ey, ez = jx + dx, jy + dy, jz + dz
        if (ex - gx) ** 2 + (ey - gy) ** 2 + (ez - gz) ** 2 <= tol2:
            break
    return math.sqrt((ex - gx) ** 2 + (ey - gy) ** 2 + (ez - gz) ** 2), moved


def rotation_share(chain, targets, local_quats=None, joint=-1, **solve_kwargs):
    """Mean share of the total rotation taken by one joint (default: the tip's) over targets.

    For each target, solve from ``local_quats`` and measure each joint's rotation angle
    between start and result; the share is ``angle[joint] / sum(angles)``. Targets whose
    solve moves nothing are skipped. Used to check the claim of [004 §2] that the weights
    of [004 eq.1] shift the motion away from the tip toward the root.
    """
    q0 = _check_local_quats(chain, local_quats)
    shares = []
    for t in np.atleast_2d(np.asarray(targets, dtype=np.float64)):
        res = solve(chain, q0, t, **solve_kwargs)
        angles = quat.angle_between(q0, res.local_quats)
        total = float(np.sum(angles))
        if total > 1e-9:
            shares.append(float(angles[joint]) / total)
    if not shares:
        raise ValueError("no target moved the chain; rotation share is undefined")
    return float(np.mean(shares))
