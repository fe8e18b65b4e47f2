"""Stereographic projection of the swing sphere and the swing-twist split [000 §2, §5-6].

Blender axes (SPEC §1; the paper's x, y, z are Blender's Y, Z, X). The swing point of a joint
rotation ``q`` is ``P = R(q) (0, 1, 0)``; the pole is ``P0 = (0, -1, 0)``. The projection from the
pole [000 eq.1-2] is

    s = -P.x / (1 + P.y),  t = P.z / (1 + P.y)
    d = s² + t² + 1,       P = (-2s/d, 2/d - 1, 2t/d)

so a rotation by ``a`` about local Z gives ``(tan(a/2), 0)`` and about local X gives
``(0, tan(a/2))`` [000 eq.3-5].

Swing-twist: ``q = q_swing · q_twist`` with ``q_twist = (cos psi/2, 0, sin psi/2, 0)`` about local
Y, ``psi`` in (-pi, pi], and ``q_swing = (1, t, 0, s) / sqrt(1 + s² + t²)`` (no Y component)
[000 eq.37-45, mapped]. At the pole the twist is undefined; the documented fallback is
``psi = 0`` and ``q_swing = q`` (a half turn about an axis in the XZ plane). Rotations whose swing
lies within about 1e-100 rad of the pole (``w² + y² < POLE_EPS2``) are treated as at the pole.

The arithmetic kernels (``_parts``, ``_compose``, ...) take the numeric primitives as an ``ops``
argument: ``NP`` (numpy, vectorised) or ``MATH`` (Python floats, for the one-rotation fast path),
so the same formulas serve both.
"""

import math

import numpy as np

from . import quat

POLE_EPS2 = 1e-200
TWO_PI = 2.0 * math.pi


def _where_scalar(cond, a, b):
    return a if cond else b


class NP:
    """Numpy primitives for the shared kernels (arrays, vectorised)."""

    sqrt = staticmethod(np.sqrt)
    atan2 = staticmethod(np.arctan2)
    cos = staticmethod(np.cos)
    sin = staticmethod(np.sin)
    where = staticmethod(np.where)
    minimum = staticmethod(np.minimum)
    maximum = staticmethod(np.maximum)
    inf = np.inf

    @staticmethod
    def take(better, d, best, cand, cur):
        """Running minimum: ``(d, cand)`` where ``better``, else ``(best, cur)``, per element."""
        return np.where(better, d, best), np.where(better, cand, cur)

    @staticmethod
    def index(code):
        return code.astype(np.intp)


class MATH:
    """Python-float primitives for the same kernels (one rotation, no numpy overhead)."""

    sqrt = staticmethod(math.sqrt)
    atan2 = staticmethod(math.atan2)
    cos = staticmethod(math.cos)
    sin = staticmethod(math.sin)
    where = staticmethod(_where_scalar)
    minimum = staticmethod(min)
    maximum = staticmethod(max)

    inf = math.inf

    @staticmethod
    def take(better, d, best, cand, cur):
        return (d, cand) if better else (best, cur)

    @staticmethod
    def index(code):
        return int(code)


def _parts(w, x, y, z, ops):
    """Swing point, (s, t) and twist of unit quaternion components [000 eq.40, 42, 44 mapped].

    Returns ``(px, py, pz, s, t, psi, pole)``. Sign is normalised first (``w >= 0``, or ``y >= 0``
    when ``w == 0``) so that ``psi = 2 atan2(y, w)`` lies in (-pi, pi]. At the pole ``s = t = 0``
    are placeholders (check ``pole``) and ``psi = 0``.
    """
    flip = (w < 0) | ((w == 0) & (y < 0))
    sg = ops.where(flip, -1.0, 1.0)
    w, x, y, z = w * sg, x * sg, y * sg, z * sg
    bw2 = w * w + y * y
    pole = bw2 < POLE_EPS2
    den = ops.where(pole, 1.0, bw2)
    s = ops.where(pole, 0.0, (w * z - x * y) / den)
    t = ops.where(pole, 0.0, (y * z + w * x) / den)
    psi = 2.0 * ops.atan2(y, w)
    psi = ops.where(pole, 0.0, ops.where(psi <= -math.pi, psi + TWO_PI, psi))  # w ~ 1e-75, y < 0
    px = 2.0 * (x * y - w * z)
    py = bw2 - (x * x + z * z)
    pz = 2.0 * (y * z + w * x)
    return px, py, pz, s, t, psi, pole


def _parts1(w, x, y, z):
    """Scalar ``_parts`` for Python floats (the one-rotation path)."""
    if w < 0.0 or (w == 0.0 and y < 0.0):
        w, x, y, z = -w, -x, -y, -z
    bw2 = w * w + y * y
    px, py, pz = 2.0 * (x * y - w * z), bw2 - (x * x + z * z), 2.0 * (y * z + w * x)
    if bw2 < POLE_EPS2:
        return px, py, pz, 0.0, 0.0, 0.0, True
    psi = 2.0 * math.atan2(y, w)
    if psi <= -math.pi:
        psi += TWO_PI
    return px, py, pz, (w * z - x * y) / bw2, (y * z + w * x) / bw2, psi, False


def _compose(s, t, psi, ops):
    """``q_swing(s, t) · q_twist(psi)`` as components [000 eq.43, 45, 46 mapped]."""
    bw = 1.0 / ops.sqrt(1.0 + s * s + t * t)
    bx, bz = t * bw, s * bw
    cw, cy = ops.cos(0.5 * psi), ops.sin(0.5 * psi)
    return bw * cw, bx * cw - bz * cy, bw * cy, bx * cy + bz * cw


def _sphere_to_plane(px, py, pz, ops):
    """[000 eq.1] with ``1 + P.y`` computed as ``(x² + z²) / (1 - y)`` on the pole's half, where
    the direct sum cancels. The pole itself gives ``inf`` (caller checks)."""
    r2 = px * px + pz * pz
    den = ops.where(py >= 0.0, 1.0 + py, r2 / ops.where(py >= 0.0, 1.0, 1.0 - py))
    ok = den > 0.0
    safe = ops.where(ok, den, 1.0)
    return ops.where(ok, -px / safe, ops.inf), ops.where(ok, pz / safe, ops.inf)


def _plane_to_sphere(s, t):
    """[000 eq.2] with ``P.y = (1 - s² - t²) / d``, exact near both the origin and the pole."""
    r2 = s * s + t * t
    d = r2 + 1.0
    return -2.0 * s / d, (1.0 - r2) / d, 2.0 * t / d


def sphere_to_plane(P):
    """Stereographic projection ``(..., 3) -> (s, t)`` [000 eq.1] (Blender axes, SPEC §1).

    ``P`` must be (close to) unit length. The pole ``(0, -1, 0)`` maps to ``s = t = inf``.
    """
    P = quat.as_vectors(P, "swing point")
    with np.errstate(divide="ignore", invalid="ignore"):
        s, t = _sphere_to_plane(P[..., 0], P[..., 1], P[..., 2], NP)
    return s, t


def plane_to_sphere(s, t):
    """Inverse projection ``(s, t) -> (..., 3)`` unit points [000 eq.2]."""
    s = np.asarray(s, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    if not (np.all(np.isfinite(s)) and np.all(np.isfinite(t))):
        raise ValueError("s and t must be finite (the pole has no plane coordinates)")
    return np.stack(_plane_to_sphere(*np.broadcast_arrays(s, t)), axis=-1)


def swing_point(q):
    """``P = R(q) (0, 1, 0)`` for unit quaternions ``(..., 4)`` [000 eq.40 mapped]."""
    q = quat.as_unit_quats(q)
    px, py, pz = _parts(q[..., 0], q[..., 1], q[..., 2], q[..., 3], NP)[:3]
    return np.stack((px, py, pz), axis=-1)


def swing_twist(q):
    """Split rotations ``(..., 4)`` into ``(s, t, psi)`` with ``q = q_swing(s, t) · q_twist(psi)``.

    [000 eq.37-39, 42, 44 mapped]. ``psi`` in (-pi, pi]. At the pole ``s = t = inf``, ``psi = 0``.
    """
    q = quat.as_unit_quats(q)
    *_, s, t, psi, pole = _parts(q[..., 0], q[..., 1], q[..., 2], q[..., 3], NP)
    s = np.where(pole, np.inf, s)
    t = np.where(pole, np.inf, t)
    return s, t, psi


def from_swing_twist(s, t, psi):
    """Unit quaternions ``q_swing(s, t) · q_twist(psi)`` [000 eq.43, 45, 46 mapped], ``w >= 0``
    for ``psi`` in [-pi, pi]."""
    s, t, psi = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (s, t, psi)))
    if not all(np.all(np.isfinite(a)) for a in (s, t, psi)):
        raise ValueError("s, t and psi must be finite")
    return np.stack(_compose(s, t, psi, NP), axis=-1)


def swing_quat_from_point(P):
    """The swing rotation (no Y component) taking +Y to unit points ``P`` [000 eq.41 mapped].

    Undefined at the pole (raises ``ValueError``)."""
    P = quat.as_vectors(P, "swing point")
    py, r2 = P[..., 1], P[..., 0] ** 2 + P[..., 2] ** 2
    # 1 + P.y without cancellation near the pole, as in sphere_to_plane
    h = np.where(py >= 0.0, 1.0 + py, r2 / np.where(py >= 0.0, 1.0, 1.0 - py))
    if np.any(h <= 0.0):
        raise ValueError("the pole (0, -1, 0) has no unique swing rotation")
    w = np.sqrt(0.5 * h)
    k = 1.0 / np.sqrt(2.0 * h)
    return np.stack((w, P[..., 2] * k, np.zeros_like(w), -P[..., 0] * k), axis=-1)


def wrap_angle(a):
    """Wrap angles into (-pi, pi]."""
    return math.pi - (math.pi - a) % TWO_PI
