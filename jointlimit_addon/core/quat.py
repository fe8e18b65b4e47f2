"""Vectorised quaternion, matrix and Euler helpers in Blender's conventions.

Quaternions are ``(w, x, y, z)`` float64 arrays of shape ``(..., 4)`` acting on column vectors,
exactly like ``mathutils.Quaternion``. Euler orders use Blender's naming: ``'XYZ'`` rotates
about X first, then Y, then Z, i.e. ``R = Rz @ Ry @ Rx``.
"""

import numpy as np

EULER_ORDERS = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")
_AXIS_INDEX = {"X": 0, "Y": 1, "Z": 2}


def as_unit_quats(q, name="quaternion"):
    """Validate ``q`` as ``(..., 4)`` finite, non-zero quaternions and return them normalised.

    Any non-zero length is a rotation: ``(1e200, 1e200, 0, 0)`` and ``(1e-200, 1e-200, 0, 0)``
    are ``(1, 1, 0, 0)`` (see ``normalize``). Raises ``ValueError`` with a clear message for a
    wrong shape, NaN/inf or an all-zero quaternion.
    """
    q = np.asarray(q, dtype=np.float64)
    if q.ndim == 0 or q.shape[-1] != 4:
        raise ValueError(f"{name} must have shape (..., 4) in (w, x, y, z) order, got {q.shape}")
    if not np.all(np.isfinite(q)):
        raise ValueError(f"{name} contains NaN or infinite values")
    n2 = _norm2(q)
    if np.all((n2 >= _SAFE_NORM2[0]) & (n2 <= _SAFE_NORM2[1])):     # the common case, fast
        return q / np.sqrt(n2)
    if np.any(np.max(np.abs(q), axis=-1) == 0.0):
        raise ValueError(f"{name} has zero length and is not a rotation")
    return normalize(q)


def as_vectors(v, name="vector"):
    """Validate ``v`` as finite ``(..., 3)`` vectors."""
    v = np.asarray(v, dtype=np.float64)
    if v.ndim == 0 or v.shape[-1] != 3:
        raise ValueError(f"{name} must have shape (..., 3), got {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return v


# Squared norms in this range are computed without overflow or loss to underflow.
_SAFE_NORM2 = (1e-290, 1e290)


def _norm2(q):
    """Squared norms along the last axis, kept as ``(..., 1)``; summed in order, so a single
    quaternion's pure-Python norm (``limits``) is bit-identical."""
    with np.errstate(over="ignore", under="ignore"):     # out of range: the caller rescales
        n2 = q[..., 0] * q[..., 0]
        for i in range(1, q.shape[-1]):
            n2 = n2 + q[..., i] * q[..., i]
    return np.asarray(n2)[..., None]


def normalize(q):
    """Return ``q / |q|`` along the last axis (no validation; quaternions or axes).

    Vectors whose squared norm would overflow (``1e200`` squared) or underflow are divided by
    their largest component first; an all-zero vector gives NaN, as ``0 / 0``.
    """
    q = np.asarray(q, dtype=np.float64)
    n2 = _norm2(q)
    safe = (n2 >= _SAFE_NORM2[0]) & (n2 <= _SAFE_NORM2[1])
    if np.all(safe):
        return q / np.sqrt(n2)
    with np.errstate(invalid="ignore", divide="ignore"):
        q = q / np.where(safe, 1.0, np.max(np.abs(q), axis=-1, keepdims=True))
        return q / np.linalg.norm(q, axis=-1, keepdims=True)


def identity(shape=()):
    """Identity quaternions of the given batch shape."""
    q = np.zeros(tuple(np.atleast_1d(shape)) + (4,) if shape != () else (4,))
    q[..., 0] = 1.0
    return q


def mul(a, b):
    """Hamilton product ``a * b`` (apply ``b`` first, then ``a``), broadcasting."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack(
        (
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ),
        axis=-1,
    )


def mul1(a, b):
    """``mul`` of two quaternion tuples on Python floats (the solvers' inner loops)."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw)


def conjugate(q):
    """Conjugate (the inverse of a unit quaternion)."""
    q = np.asarray(q, dtype=np.float64)
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def rotate(q, v):
    """Rotate vectors ``v`` (..., 3) by unit quaternions ``q`` (..., 4), broadcasting."""
    q = np.asarray(q, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    w = q[..., :1]
    u = q[..., 1:]
    uv = np.cross(u, v)
    return v + 2.0 * (w * uv + np.cross(u, uv))


def canonical(q):
    """Pick the representative with ``w >= 0`` (ties broken deterministically)."""
    q = np.asarray(q, dtype=np.float64)
    flip = q[..., 0] < 0
    return np.where(flip[..., None], -q, q)


def from_axis_angle(axis, angle):
    """Quaternions for rotations by ``angle`` (radians) about ``axis`` (normalised here)."""
    axis = np.asarray(axis, dtype=np.float64)
    angle = np.asarray(angle, dtype=np.float64)
    axis = normalize(axis)
    half = 0.5 * angle[..., None]
    return np.concatenate((np.cos(half), np.sin(half) * axis), axis=-1)


def to_axis_angle(q):
    """Return ``(axis (..., 3), angle (...))`` of unit quaternions; angle in [0, pi]."""
    q = canonical(q)
    s = np.linalg.norm(q[..., 1:], axis=-1)
    angle = 2.0 * np.arctan2(s, q[..., 0])
    safe = np.where(s > 1e-15, s, 1.0)
    axis = np.where((s > 1e-15)[..., None], q[..., 1:] / safe[..., None], np.array([1.0, 0.0, 0.0]))
    return axis, angle


def norms(v, keepdims=False):
    """``np.linalg.norm(v, axis=-1)``, the same floats, without its per-call checks (the live
    limits' batches call it on small arrays, where those cost more than the arithmetic)."""
    return np.sqrt(np.add.reduce(v * v, axis=-1, keepdims=keepdims))


def angle_between(a, b):
    """Geodesic angle (radians, in [0, pi]) between the rotations ``a`` and ``b``."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    b = np.where(np.add.reduce(a * b, axis=-1, keepdims=True) < 0, -b, b)
    # 2*atan2(|a-b|, |a+b|) stays exact for tiny angles, unlike arccos of the dot product.
    return 4.0 * np.arctan2(norms(a - b), norms(a + b))


def slerp(a, b, t):
    """Spherical interpolation from ``a`` (t=0) to ``b`` (t=1) along the shorter arc."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)[..., None]
    d = np.sum(a * b, axis=-1, keepdims=True)
    b = np.where(d < 0, -b, b)
    d = np.abs(d)
    theta = np.arccos(np.clip(d, -1.0, 1.0))
    sin_theta = np.sin(theta)
    near = sin_theta < 1e-9
    safe = np.where(near, 1.0, sin_theta)
    wa = np.where(near, 1.0 - t, np.sin((1.0 - t) * theta) / safe)
    wb = np.where(near, t, np.sin(t * theta) / safe)
    return normalize(wa * a + wb * b)


def to_matrix(q):
    """Rotation matrices (..., 3, 3) of unit quaternions (column-vector convention)."""
    q = np.asarray(q, dtype=np.float64)
    w, x, y, z = np.moveaxis(q, -1, 0)
    m = np.empty(q.shape[:-1] + (3, 3))
    m[..., 0, 0] = 1 - 2 * (y * y + z * z)
    m[..., 0, 1] = 2 * (x * y - z * w)
    m[..., 0, 2] = 2 * (x * z + y * w)
    m[..., 1, 0] = 2 * (x * y + z * w)
    m[..., 1, 1] = 1 - 2 * (x * x + z * z)
    m[..., 1, 2] = 2 * (y * z - x * w)
    m[..., 2, 0] = 2 * (x * z - y * w)
    m[..., 2, 1] = 2 * (y * z + x * w)
    m[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return m


def from_matrix(m):
    """Unit quaternions (w >= 0) of rotation matrices (..., 3, 3), numerically robust."""
    m = np.asarray(m, dtype=np.float64)
    m00, m11, m22 = m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]
    cand = np.stack(
        (
            np.stack((1 + m00 + m11 + m22, m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0], m[..., 1, 0] - m[..., 0, 1]), -1),
            np.stack((m[..., 2, 1] - m[..., 1, 2], 1 + m00 - m11 - m22, m[..., 0, 1] + m[..., 1, 0], m[..., 0, 2] + m[..., 2, 0]), -1),
            np.stack((m[..., 0, 2] - m[..., 2, 0], m[..., 0, 1] + m[..., 1, 0], 1 - m00 + m11 - m22, m[..., 1, 2] + m[..., 2, 1]), -1),
            np.stack((m[..., 1, 0] - m[..., 0, 1], m[..., 0, 2] + m[..., 2, 0], m[..., 1, 2] + m[..., 2, 1], 1 - m00 - m11 + m22), -1),
        ),
        axis=-2,
    )
    diag = np.stack((1 + m00 + m11 + m22, 1 + m00 - m11 - m22, 1 - m00 + m11 - m22, 1 - m00 - m11 + m22), -1)
    best = np.argmax(diag, axis=-1)
    q = np.take_along_axis(cand, best[..., None, None], axis=-2)[..., 0, :]
    return canonical(normalize(q))


def _axis_rotation(axis_letter, angle):
    axis = np.zeros(np.shape(angle) + (3,))
    axis[..., _AXIS_INDEX[axis_letter]] = 1.0
    return from_axis_angle(axis, angle)


def check_euler_order(order):
    """Raise ``ValueError`` unless ``order`` is one of Blender's six Euler orders."""
    if order not in EULER_ORDERS:
        raise ValueError(f"Euler order must be one of {', '.join(EULER_ORDERS)}, got {order!r}")
    return order


def from_euler(euler, order="XYZ"):
    """Quaternions of Euler angles ``(..., 3)`` given as (x, y, z) angles, Blender's ``order``.

    The first letter of ``order`` is applied first: ``'XYZ'`` gives ``Rz @ Ry @ Rx``.
    """
    check_euler_order(order)
    euler = np.asarray(euler, dtype=np.float64)
    q = None
    for letter in order:
        r = _axis_rotation(letter, euler[..., _AXIS_INDEX[letter]])
        q = r if q is None else mul(r, q)
    return q


def to_euler(q, order="XYZ"):
    """Euler angles (x, y, z) ``(..., 3)`` of unit quaternions in Blender's ``order``.

    Of the two equivalent triples it returns the one with the smaller sum of absolute angles,
    as ``mathutils`` does, so values match what Blender shows.
    """
    check_euler_order(order)
    m = to_matrix(q)
    i, j, k = (_AXIS_INDEX[c] for c in order)
    # R = R_k R_j R_i; parity +1 for cyclic orders (XYZ, YZX, ZXY).
    parity = 1.0 if (j - i) % 3 == 1 else -1.0
    sin_j = -parity * m[..., k, i]
    ai = np.arctan2(parity * m[..., k, j], m[..., k, k])
    aj = np.arctan2(sin_j, np.hypot(m[..., k, j], m[..., k, k]))  # exact near ±90°, unlike arcsin
    ak = np.arctan2(parity * m[..., j, i], m[..., i, i])
    # Gimbal lock: m[k,j], m[k,k], m[j,i], m[i,i] vanish; put all of it on the first axis.
    lock = np.hypot(m[..., i, i], m[..., j, i]) < 1e-12
    if np.any(lock):
        ai_lock = np.arctan2(-parity * m[..., j, k], m[..., j, j])
        ai = np.where(lock, ai_lock, ai)
        ak = np.where(lock, 0.0, ak)
    # Like Blender, of the two equivalent triples keep the one with the smaller |a|+|b|+|c|.
    ai2, aj2, ak2 = _wrap(ai + np.pi), _wrap(np.pi - aj), _wrap(ak + np.pi)
    alt = (np.abs(ai2) + np.abs(aj2) + np.abs(ak2)) < (np.abs(ai) + np.abs(aj) + np.abs(ak)) - 1e-12
    out = np.empty(m.shape[:-2] + (3,))
    out[..., i] = np.where(alt, ai2, ai)
    out[..., j] = np.where(alt, aj2, aj)
    out[..., k] = np.where(alt, ak2, ak)
    return out


def _wrap(a):
    """Wrap angles into (-pi, pi]."""
    return np.pi - np.mod(np.pi - a, 2.0 * np.pi)


def random_unit(n, rng=None):
    """``n`` uniformly distributed random unit quaternions (w >= 0)."""
    rng = np.random.default_rng(rng)
    return canonical(normalize(rng.normal(size=(n, 4))))
