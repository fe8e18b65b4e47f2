"""Two-bone skinning: LBS, SBS, SBS+ (= MMD's SDEF) and the quadratic-Bezier centre [002].

Every vertex handled here is driven by two bones: ``bone0`` (the parent in [002]) with weight
``t_v = weight0`` and ``bone1`` (the child) with weight ``1 - t_v``. Its SDEF parameters are the
PMX ones: ``C`` (centre ``c_v`` on the core line) and ``R0``, ``R1`` (boundary points ``r_0``,
``r_1`` where the blend starts on the parent and ends on the child), all absolute rest-pose
positions in the mesh's space. ``matrices`` are the skinning matrices ``M`` (B, 4, 4) in
column-vector form: ``deformed = M @ [v, 1]``, ``M = pose_matrix @ rest_matrix^-1``.

Convention fixes against the paper (SPEC §6):

* [002] writes row-vector (DirectX) products. In column-vector order the child's local rotation
  is ``R0^-1 R1`` [002 eq.7] and the rotation of a vertex about its centre is
  ``R0 (R0^-1 R1)^(1 - t_v) = slerp(R0, R1, 1 - t_v)`` [002 eq.6 and §3.3 (3-7)…(3-10)]:
  the identity offset for a vertex fully on the parent, ``R1`` for one fully on the child.
  ``R0``, ``R1`` are the rotation parts of the polar decompositions ``A_i = R_i S_i`` of the
  matrices' linear parts; the stretches are blended linearly, ``t_v S0 + (1 - t_v) S1``, and
  applied to the offset before the rotation, so scaled bones still move their own vertices
  exactly as ``M_i`` does.
  A mirrored bone (negative scale) has no unique nearest rotation when its scales are equal in
  size; with ``mirror_axes`` (its rest X axis) its reflection stays on that axis, so its
  rotation is its pose rotation (see :func:`polar_decompose`), as in the geometry-nodes tree.
* [002 eq.19] as printed adds ``c_v`` twice (it states ``r_0v`` is the offset from ``c_v``):
  the corrected boundary points are ``r''_i = c_v + r_i - r_w`` with
  ``r_w = t_v r_0 + (1 - t_v) r_1`` [002 eq.17-20], the line through ``c_v`` parallel to
  ``r_0 r_1`` on which ``c_v`` sits at parameter ``t_v``. With this reading SBS+ with ``s = 0.5``
  is exactly MMD's SDEF.
* [002 eq.25-26] the rest centre uses the rest joint ``b``, never ``b'``, so identity matrices
  move nothing [002 eq.16] and a common rigid motion of both bones moves the mesh rigidly.

Implementation: every mode is "an affine blend of two bone transforms of rest-space points plus
a rotated offset". The deformed centre is ``M0~(X0, h0) + M1~(X1, h1)`` where
``M~(X, h) = A X + h T`` applies the linear part ``A`` and translation ``T`` of ``M`` to a
weighted point, and the vertex is that centre plus ``Q (v - c_rest)``. All of it runs on
(component, vertex) arrays; the polar decompositions are per bone, not per vertex.
"""

import numpy as np

from . import quat

MODES = ("LBS", "SBS", "SDEF", "BEZIER")

_AFFINE_ROW_TOL = 1e-9  # |bottom row - (0, 0, 0, 1)| allowed in a skinning matrix
_ISOTROPY_TOL = 1e-9  # relative deviation of a stretch from s*I still treated as uniform scale
FLAT_REL = 1e-6  # a matrix whose smallest singular value is below this times its largest is flat (a zero scale)


# ----------------------------------------------------------------------------------------------
# Validation


def _soa(p):
    """(N, 3) points -> contiguous (3, N) component rows (fast elementwise numpy)."""
    return np.ascontiguousarray(p.T)


def _check_mode(mode):
    if not isinstance(mode, str) or mode.upper() not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    return mode.upper()


def _check_matrices(matrices):
    m = np.asarray(matrices, dtype=np.float64)
    if m.ndim != 3 or m.shape[1:] != (4, 4) or m.shape[0] == 0:
        raise ValueError(f"matrices must have shape (B, 4, 4) with B >= 1, got {m.shape}")
    if not np.all(np.isfinite(m)):
        raise ValueError("matrices contain NaN or infinite values")
    if np.abs(m[:, 3, :] - (0.0, 0.0, 0.0, 1.0)).max() > _AFFINE_ROW_TOL:
        raise ValueError("matrices must be affine: bottom row (0, 0, 0, 1) (column-vector form)")
    return m


def _check_points(p, n, name):
    p = quat.as_vectors(p, name)
    if p.shape != (n, 3):
        raise ValueError(f"{name} must have shape ({n}, 3), got {p.shape}")
    return p


def _check_bones(b, n, count, name):
    b = np.asarray(b)
    if b.shape != (n,) or not (np.issubdtype(b.dtype, np.integer) or b.size == 0):
        raise ValueError(f"{name} must be an integer array of shape ({n},), got {b.dtype} {b.shape}")
    if b.size and b.min() < 0:
        raise ValueError(f"{name} has negative bone indices")
    if b.size and count is not None and b.max() >= count:
        raise ValueError(f"{name} has bone indices outside [0, {count})")
    return b.astype(np.intp, copy=False)


def _check_weights(w, n):
    w = np.asarray(w, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"weight0 must have shape ({n},), got {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError("weight0 contains NaN or infinite values")
    if w.size and (w.min() < -1e-9 or w.max() > 1.0 + 1e-9):
        raise ValueError("weight0 (parent weight t_v) must lie in [0, 1]")
    return np.clip(w, 0.0, 1.0)


def check_blend(blend):
    """``s`` of [002 eq.22] as a float; ``ValueError`` unless it is a number in [0, 1] (every entry
    point of the deformer, the bake and the command line checks it here)."""
    try:
        s = float(blend)
    except (TypeError, ValueError):
        raise ValueError(f"blend s must lie in [0, 1], got {blend!r}") from None
    if not np.isfinite(s) or not 0.0 <= s <= 1.0:
        raise ValueError(f"blend s must lie in [0, 1], got {blend!r}")
    return s


# ----------------------------------------------------------------------------------------------
# Per-bone decomposition


def polar_decompose(matrices, mirror_axes=None):
    """Polar decomposition ``A = R S`` of the linear parts of ``matrices`` (B, 4, 4) [002 eq.7].

    Returns ``(R (B, 3, 3) proper rotations, S (B, 3, 3) symmetric stretches)`` computed by one
    batched SVD ``A = U Σ V^T``: ``R = U D V^T``, ``S = V D Σ V^T`` with ``D = diag(1, 1, ±1)``
    chosen so ``det R = +1`` (a mirrored bone keeps its reflection in ``S``). Singular matrices
    (zero scale) still give a rotation; never NaN.

    A bone scaled to zero on an axis (a flat ``A``, its smallest singular value below ``FLAT_REL``
    times its largest) is never mirrored: the sign of its determinant is round-off, and its
    rotation is the one its scale near zero but positive approaches (the live deformer's too).

    A mirrored bone (``det A < 0``) has no unique nearest rotation when its scales are equal in
    size (a scale of -1: the SVD picks an arbitrary axis, a half turn apart). With
    ``mirror_axes`` (B, 3), each bone's rest X axis in the same space, its reflection is taken
    along that axis: ``R`` is the rotation of ``A H`` with ``H = I - 2 x x^T`` and ``S = R^T A``,
    so a bone scaled ``(-1, 1, 1)`` keeps its pose rotation (a mirror on its Z or Y axis gives a
    half turn about another axis).
    """
    a = _check_matrices(matrices)[:, :3, :3]
    mirrored = None
    if mirror_axes is not None:
        x = quat.as_vectors(mirror_axes, "mirror_axes")
        if x.shape != (len(a), 3):
            raise ValueError(f"mirror_axes must have shape ({len(a)}, 3), got {x.shape}")
        x = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-300)
        size = np.linalg.svd(a, compute_uv=False)
        mirrored = (np.linalg.det(a) < 0.0) & (size[:, 2] > FLAT_REL * size[:, 0])  # flat: the sign is round-off
        original = a
        a = np.where(mirrored[:, None, None], a - 2.0 * (a @ x[:, :, None]) * x[:, None, :], a)  # A H
    u, sigma, vt = np.linalg.svd(a)
    d = np.ones_like(sigma)
    d[:, 2] = np.sign(np.linalg.det(u @ vt))
    d[d == 0] = 1.0
    r = (u * d[:, None, :]) @ vt
    s = (vt.transpose(0, 2, 1) * (d * sigma)[:, None, :]) @ vt
    if mirrored is not None and mirrored.any():
        s[mirrored] = r[mirrored].transpose(0, 2, 1) @ original[mirrored]
    return r, s


# Rows of the per-pair table gathered once per block of vertices.
_A0, _A1, _Q0, _Q1, _THETA, _COS, _INVSIN, _S0, _S1 = (
    slice(0, 12), slice(12, 24), slice(24, 28), slice(28, 32), 32, 33, 34, 35, 36)
_TABLE_ROWS = 37


def _pair_table(m, pair_bones, mirror_axes=None):
    """Per bone pair: both affine parts, both rotations (shorter arc), slerp angle, scales.

    Returns ``(table (37, K), stretch (B, 3, 3) or None when every used stretch is s*I)``.
    """
    r, s = polar_decompose(m, mirror_axes)
    q = quat.from_matrix(r)  # (B, 4); polar decomposition is per bone, never per vertex
    iso = np.trace(s, axis1=1, axis2=2) / 3.0
    aniso = np.abs(s - iso[:, None, None] * np.eye(3)).max(axis=(1, 2))
    used = np.unique(pair_bones)
    uniform = np.all(aniso[used] <= _ISOTROPY_TOL * np.maximum(np.abs(iso[used]), 1.0))
    p0, p1 = pair_bones[:, 0], pair_bones[:, 1]
    table = np.empty((_TABLE_ROWS, len(pair_bones)))
    rows = m[:, :3, :].reshape(len(m), 12)
    table[_A0] = rows[p0].T
    table[_A1] = rows[p1].T
    qa, qb = q[p0], q[p1]
    qb = qb * np.copysign(1.0, np.einsum("ij,ij->i", qa, qb))[:, None]  # shorter arc
    # Angle between the 4-vectors, exact also for tiny angles (unlike acos of the dot product).
    theta = 2.0 * np.arctan2(np.linalg.norm(qa - qb, axis=1), np.linalg.norm(qa + qb, axis=1))
    table[_Q0] = qa.T
    table[_Q1] = qb.T
    table[_THETA] = theta
    table[_COS] = np.cos(theta)
    table[_INVSIN] = 1.0 / np.maximum(np.sin(theta), 1e-300)
    table[_S0] = iso[p0] if uniform else 1.0
    table[_S1] = iso[p1] if uniform else 1.0
    return table, (None if uniform else s)


# ----------------------------------------------------------------------------------------------
# Vectorised kernels on (component, vertex) arrays


def _apply(a, x, h):
    """``A x + h T`` with per-vertex affine rows ``a`` (12, n), x (3, n), h (n,) -> (3, n)."""
    out = np.empty((3, x.shape[1]))
    for i in range(3):  # three output components, not vertices
        k = 4 * i
        out[i] = a[k] * x[0] + a[k + 1] * x[1] + a[k + 2] * x[2] + a[k + 3] * h
    return out


def _add_rotated(out, g, u, d):
    """``out += slerp(q0, q1, u) d`` per vertex [002 eq.6]; ``g`` is the gathered pair table.

    Column-vector order: ``slerp(R0, R1, u) = R0 (R0^-1 R1)^u`` (SPEC §6 trap 1). Weights
    ``sin((1-u)θ)/sin θ = cos uθ - cos θ sin uθ / sin θ`` and ``sin uθ / sin θ``; ``θ = 0``
    gives ``q0`` without a branch (``sin 0 / tiny = 0``); the result is unit to rounding.
    """
    ut = g[_THETA] * u
    wb = np.sin(ut)
    wb *= g[_INVSIN]
    wa = np.cos(ut)
    wa -= g[_COS] * wb
    q = wa * g[_Q0]
    q += wb * g[_Q1]
    w, x, y, z = q
    # p' = p + w t + (x, y, z) × t with t = 2 (x, y, z) × p
    tx = y * d[2] - z * d[1]
    ty = z * d[0] - x * d[2]
    tz = x * d[1] - y * d[0]
    tx += tx
    ty += ty
    tz += tz
    out[0] += d[0] + w * tx + (y * tz - z * ty)
    out[1] += d[1] + w * ty + (z * tx - x * tz)
    out[2] += d[2] + w * tz + (x * ty - y * tx)


def _stretched(d, g, t, u, b0, b1, stretch):
    """Rest offsets ``d`` (3, n) under the blended stretch ``t S0 + u S1`` (see module doc)."""
    if stretch is None:
        scale = t * g[_S0] + u * g[_S1]
        if np.all(scale == 1.0):
            return d
        return d * scale
    blend = t[:, None, None] * stretch[b0] + u[:, None, None] * stretch[b1]
    return np.einsum("nij,jn->in", blend, d)


# ----------------------------------------------------------------------------------------------
# Centre functions [002 eq.14, 21, 22, 24-26]


def _centre_terms(mode, t, u, v, c, r0, r1, b, s):
    """Rest centre and the weighted points ``(X0, h0), (X1, h1)`` of the deformed centre.

    Deformed centre = ``M0~(X0, h0) + M1~(X1, h1)``, with ``h0 + h1 = 1``.
    """
    if mode == "LBS":  # [002 eq.3]
        return None, (t * v, t), (u * v, u)
    if mode == "SBS":  # f1 [002 eq.5, 14]
        return c, (t * c, t), (u * c, u)
    dr = r0 - r1
    # r''_0 = c + r0 - r_w = c + u (r0 - r1), r''_1 = c - t (r0 - r1) [002 eq.17-20]
    if mode == "SDEF":
        # f3 = s f1 + (1 - s) f2' = t M0 (s c + (1-s) r''_0) + u M1 (s c + (1-s) r''_1)
        # [002 eq.14, 21, 22]; both terms share M0 / M1, so blend the rest points first.
        k = 1.0 - s
        return c, (t * (c + (k * u) * dr), t), (u * (c - (k * t) * dr), u)
    # BEZIER: f_v = t² M0 r''_0 + 2 t u M0 b + u² M1 r''_1 [002 eq.24, b' = M0 b as in §4.2 (3-1)]
    # rest centre c''' = t² r''_0 + 2 t u b + u² r''_1 with the REST joint b [002 eq.26].
    tt, tu2, uu = t * t, 2.0 * t * u, u * u
    x0 = tt * (c + u * dr) + tu2 * b
    x1 = uu * (c - t * dr)
    return x0 + x1, (x0, tt + tu2), (x1, uu)


# ----------------------------------------------------------------------------------------------
# Public API

_BLOCK = 8192  # vertices per block: keeps the temporaries in cache (the loop is over blocks)


def _pairs(bone0, bone1, count):
    """Index of each vertex's (bone0, bone1) pair and the pairs (K, 2), without sorting N keys
    when a dense ``count**2`` lookup is small."""
    key = bone0 * count + bone1
    if count * count <= 1 << 22:
        present = np.zeros(count * count, bool)
        present[key] = True
        keys = np.flatnonzero(present)
        ids = np.cumsum(present) - 1
        pair = ids[key]
    else:
        keys, pair = np.unique(key, return_inverse=True)
    return pair.ravel().astype(np.intp), np.stack(np.divmod(keys, count), axis=1).astype(np.intp)


class SkinPlan:
    """Rest-pose data of two-bone vertices, prepared once; :meth:`deform` runs per frame.

    Arguments as :func:`deform` without ``matrices``. Everything that depends only on the rest
    pose (weighted centre points of [002 eq.14, 21-22, 24-26], rest offsets ``v - c``, the bone
    pairs) is computed here, so a frame costs two affine transforms, one slerp and one rotation
    per vertex, plus one polar decomposition per bone.
    """

    def __init__(self, mode, rest_positions, bone0, bone1, weight0, C=None, R0=None, R1=None,
                 rest_heads=None, blend=0.5, mirror_axes=None):
        self.mode = _check_mode(mode)
        self.mirror_axes = None if mirror_axes is None else quat.as_vectors(mirror_axes, "mirror_axes")
        v = quat.as_vectors(rest_positions, "rest_positions")
        if v.ndim != 2:
            raise ValueError(f"rest_positions must have shape (N, 3), got {v.shape}")
        n = len(v)
        count = None
        if self.mode == "BEZIER":
            if rest_heads is None:
                raise ValueError("mode BEZIER needs rest_heads (B, 3): the rest-pose bone heads")
            heads = quat.as_vectors(rest_heads, "rest_heads")
            if heads.ndim != 2 or len(heads) == 0:
                raise ValueError(f"rest_heads must have shape (B, 3), got {heads.shape}")
            count = len(heads)
        bone0 = _check_bones(bone0, n, count, "bone0")
        bone1 = _check_bones(bone1, n, count, "bone1")
        t = _check_weights(weight0, n)
        s = check_blend(blend)
        c = r0 = r1 = b = None
        if self.mode != "LBS":
            if C is None:
                raise ValueError(f"mode {self.mode} needs the SDEF centre C (N, 3)")
            c = _soa(_check_points(C, n, "C"))
        if self.mode in ("SDEF", "BEZIER"):
            if R0 is None or R1 is None:
                raise ValueError(f"mode {self.mode} needs the SDEF boundary points R0 and R1 (N, 3)")
            r0 = _soa(_check_points(R0, n, "R0"))
            r1 = _soa(_check_points(R1, n, "R1"))
        if self.mode == "BEZIER":
            b = _soa(heads[bone1])
        vs = _soa(v)
        self.n = n
        self.t, self.u = t, 1.0 - t
        rest, (self.x0, self.h0), (self.x1, self.h1) = _centre_terms(
            self.mode, self.t, self.u, vs, c, r0, r1, b, s)
        self.rest_centre = rest
        self.offset = None if rest is None else vs - rest
        self.bone0, self.bone1 = bone0, bone1
        self.max_bone = int(max(bone0.max(), bone1.max())) if n else -1
        self.pair, self.pair_bones = _pairs(bone0, bone1, self.max_bone + 1)

    def _frame(self, matrices):
        m = _check_matrices(matrices)
        if self.max_bone >= len(m):
            raise ValueError(f"matrices has {len(m)} bones but the vertices use bone {self.max_bone}")
        axes = self.mirror_axes
        if axes is not None and len(axes) != len(m):
            raise ValueError(f"mirror_axes has {len(axes)} bones but matrices has {len(m)}")
        table, stretch = _pair_table(m, self.pair_bones, axes)
        # LBS needs the two affine parts only; gather no more rows per vertex than used.
        return (table[:_A1.stop] if self.offset is None else table), stretch

    def _morphed(self, positions):
        """``(x0, x1, offset)`` for other rest positions ``v`` (N, 3) of the same vertices, e.g.
        with shape keys: the centres do not depend on ``v``; LBS weights it, the others offset it."""
        v = _check_points(positions, self.n, "positions")
        vs = _soa(v)
        if self.offset is None:
            return self.t * vs, self.u * vs, None
        return self.x0, self.x1, vs - self.rest_centre

    def deform(self, matrices, positions=None):
        """Deformed positions (N, 3) for skinning ``matrices`` (B, 4, 4), see :func:`deform`;
        ``positions`` (N, 3) replaces the rest positions for this call (morphed vertices: the
        result equals a plan built on them, as C, R0, R1 stay)."""
        table, stretch = self._frame(matrices)
        x0, x1, offset = (self.x0, self.x1, self.offset) if positions is None else self._morphed(positions)
        out = np.empty((self.n, 3))
        for start in range(0, self.n, _BLOCK):
            sl = slice(start, start + _BLOCK)
            g = np.take(table, self.pair[sl], axis=1)
            res = _apply(g[_A0], x0[:, sl], self.h0[sl])
            res += _apply(g[_A1], x1[:, sl], self.h1[sl])
            if offset is not None:
                t, u = self.t[sl], self.u[sl]
                d = _stretched(offset[:, sl], g, t, u, self.bone0[sl], self.bone1[sl], stretch)
                _add_rotated(res, g, u, d)
            out[sl] = res.T
        return out

    def centres(self, matrices):
        """Rest and deformed centres ``(c_rest (N, 3), c' (N, 3))``, see :func:`centre_curve`."""
        if self.rest_centre is None:
            raise ValueError("LBS has no rotation centre; use centre_curve, which uses C")
        table, _ = self._frame(matrices)
        g = np.take(table, self.pair, axis=1)
        moved = _apply(g[_A0], self.x0, self.h0) + _apply(g[_A1], self.x1, self.h1)
        return self.rest_centre.T.copy(), moved.T


def deform(mode, rest_positions, bone0, bone1, weight0, C=None, R0=None, R1=None, matrices=None,
           rest_heads=None, blend=0.5, mirror_axes=None):
    """Deformed positions (N, 3) of two-bone vertices.

    Parameters (N vertices, B bones):
        mode: ``'LBS'`` [002 eq.1-3], ``'SBS'`` [002 eq.4-7] (centre ``C``, f1 [002 eq.14]),
            ``'SDEF'`` = SBS+ [002 eq.8-22, §3.3 (3-1)…(3-10)]: centre
            ``f3 = s f1 + (1 - s) f2'``; equals MMD's SDEF at ``blend = 0.5``,
            ``'BEZIER'``: quadratic-Bezier centre [002 eq.23-26, §4.2].
        rest_positions: (N, 3) rest vertex positions ``v``.
        bone0, bone1: (N,) integer indices into ``matrices``: parent / child bone.
        weight0: (N,) parent weight ``t_v`` in [0, 1]; the child gets ``1 - t_v``.
        C, R0, R1: (N, 3) PMX SDEF parameters, absolute rest positions (``C`` unused by LBS,
            ``R0``/``R1`` used by SDEF and BEZIER only).
        matrices: (B, 4, 4) skinning matrices, column-vector form, affine.
        rest_heads: (B, 3) rest-pose bone heads in the mesh's space; BEZIER only. Its control
            point is the joint ``b = rest_heads[bone1]`` (the child's head), deformed as
            ``b' = M0 b`` [002 §4.2 (3-1)] (equal to ``M1 b`` for connected bones).
        blend: ``s`` of [002 eq.22] (SDEF only).
        mirror_axes: (B, 3) rest X axes of the bones in the mesh's space: the axis a mirrored
            bone reflects on (see :func:`polar_decompose`; without it, the SVD's choice).

    Vertex: ``centre' + Q (t S0 + (1 - t) S1) (v - centre)`` with
    ``Q = slerp(R0, R1, 1 - t_v)`` (rotation parts of ``M0``, ``M1``) [002 eq.6, 8], which is the
    paper's ``v'' + (c' - c'')`` of §3.3 (3-8)…(3-10) written in column-vector order.
    For repeated frames of the same mesh build a :class:`SkinPlan` once and call its ``deform``.
    """
    if matrices is None:
        raise ValueError("matrices (B, 4, 4) are required")
    plan = SkinPlan(mode, rest_positions, bone0, bone1, weight0, C, R0, R1, rest_heads, blend, mirror_axes)
    return plan.deform(matrices)


def centre_curve(mode, rest_positions, bone0, bone1, weight0, C=None, R0=None, R1=None,
                 matrices=None, rest_heads=None, blend=0.5):
    """Rest and deformed rotation centres ``(c_rest (N, 3), c' (N, 3))`` of each vertex.

    The locus of ``c'`` is what [002] Figs. 3, 4 and 5-18 visualise: ``f1(C)`` for SBS (and for
    LBS, whose centre is ``C`` deformed by LBS) [002 eq.14], ``f3`` for SDEF [002 eq.22], the
    Bezier ``f_v(t)`` for BEZIER with rest centre ``c'''`` [002 eq.24, 26]. Same arguments as
    :func:`deform`; LBS needs ``C`` here.
    """
    if matrices is None:
        raise ValueError("matrices (B, 4, 4) are required")
    probe = "SBS" if _check_mode(mode) == "LBS" else mode
    plan = SkinPlan(probe, rest_positions, bone0, bone1, weight0, C, R0, R1, rest_heads, blend)
    return plan.centres(matrices)


def _group_extent(group, values, k):
    """Per-group (min, max) of ``values``."""
    lo = np.full(k, np.inf)
    hi = np.full(k, -np.inf)
    np.minimum.at(lo, group, values)
    np.maximum.at(hi, group, values)
    return lo, hi


def derive_sdef_params(rest_positions, bone0, bone1, weight0, heads, tails, centre="project",
                       boundary="fit", pad=0.0):
    """Automatic PMX-style SDEF parameters ``(C, R0, R1)``, each (N, 3), for ordinary rigs.

    The core line of a vertex is the polyline through the joint ``b = heads[bone1]``: along the
    parent's axis ``u0`` (``heads -> tails`` of bone0) before it and the child's axis ``u1``
    after it. A vertex's axial coordinate ``x`` is its signed distance along that polyline from
    ``b`` (negative on the parent side).

    * ``C`` [002 §2.2]: ``centre='project'`` (default) puts ``c_v`` at the foot of the
      perpendicular from ``v`` to the core line (the nearer of the two legs when both apply, the
      joint when the vertex is in the wedge of a bent rest pose where neither does);
      ``centre='joint'`` puts every ``C`` at ``b`` (rotation about the joint, Kavan's SBS).
    * ``R0``, ``R1``: one pair per bone pair ``(bone0, bone1)``, the points on the core line
      where the blend starts (``t_v`` reaches 1) and ends (``t_v`` reaches 0) [002 §3.3].
      ``boundary='fit'`` (default) fits ``x ≈ t_v x0 + (1 - t_v) x1`` by least squares over the
      pair's vertices: the same linear-in-weight parametrisation SBS+ assumes for ``r_w``
      [002 eq.19-20], so the rest correction ``r_w - c_v`` is as small as the weights allow and
      vanishes for weights linear along the axis (their endpoints are recovered exactly).
      ``boundary='extent'`` takes the smallest and largest ``x`` of the pair's vertices.
      If a pair's weights do not vary, both collapse to the mean ``x`` (SDEF then equals SBS).
      ``pad`` widens ``[x0, x1]`` by that fraction of its length at each end.
    """
    v = quat.as_vectors(rest_positions, "rest_positions")
    if v.ndim != 2:
        raise ValueError(f"rest_positions must have shape (N, 3), got {v.shape}")
    heads = quat.as_vectors(heads, "heads")
    tails = quat.as_vectors(tails, "tails")
    if heads.ndim != 2 or heads.shape != tails.shape or len(heads) == 0:
        raise ValueError(f"heads and tails must both have shape (B, 3), got {heads.shape}, {tails.shape}")
    if centre not in ("project", "joint"):
        raise ValueError(f"centre must be 'project' or 'joint', got {centre!r}")
    if boundary not in ("fit", "extent"):
        raise ValueError(f"boundary must be 'fit' or 'extent', got {boundary!r}")
    pad = float(pad)
    if not np.isfinite(pad) or pad < 0.0:
        raise ValueError(f"pad must be a finite number >= 0, got {pad!r}")
    n, count = len(v), len(heads)
    bone0 = _check_bones(bone0, n, count, "bone0")
    bone1 = _check_bones(bone1, n, count, "bone1")
    t = _check_weights(weight0, n)
    axis = tails - heads
    length = np.linalg.norm(axis, axis=1)
    used = np.zeros(count, bool)
    used[bone0] = used[bone1] = True
    if np.any(used & (length < 1e-12)):
        raise ValueError("bones used by the vertices must have non-zero length (head != tail)")
    axis = axis / np.where(length > 0, length, 1.0)[:, None]

    b = heads[bone1]
    u0, u1 = axis[bone0], axis[bone1]
    rel = v - b
    a0 = np.einsum("ij,ij->i", rel, u0)
    a1 = np.einsum("ij,ij->i", rel, u1)
    on0, on1 = a0 <= 0.0, a1 >= 0.0
    dist0 = np.einsum("ij,ij->i", rel, rel) - a0 * a0
    dist1 = np.einsum("ij,ij->i", rel, rel) - a1 * a1
    use0 = on0 & ~(on1 & (dist1 < dist0))
    x = np.where(use0, a0, np.where(on1, a1, 0.0))

    def point(xs):
        return b + np.where(xs[:, None] < 0.0, xs[:, None] * u0, xs[:, None] * u1)

    c = point(x) if centre == "project" else b.copy()

    _, group = np.unique(bone0 * count + bone1, return_inverse=True)
    group = group.ravel()
    k = group.max() + 1 if n else 0
    cnt = np.bincount(group, minlength=k).astype(np.float64)
    mean_x = np.bincount(group, x, k) / np.maximum(cnt, 1.0)
    if boundary == "fit":
        mean_t = np.bincount(group, t, k) / np.maximum(cnt, 1.0)
        dt = t - mean_t[group]
        var_t = np.bincount(group, dt * dt, k)
        cov = np.bincount(group, dt * (x - mean_x[group]), k)
        flat = var_t <= 1e-12 * np.maximum(cnt, 1.0)
        slope = np.where(flat, 0.0, cov / np.where(flat, 1.0, var_t))  # x0 - x1
        x1 = mean_x - slope * mean_t
        x0 = x1 + slope
    else:
        x0, x1 = _group_extent(group, x, k)
        t_lo, t_hi = _group_extent(group, t, k)
        flat = t_hi - t_lo <= 1e-12
        x0 = np.where(flat, mean_x, x0)
        x1 = np.where(flat, mean_x, x1)
    span = x1 - x0
    x0, x1 = x0 - pad * span, x1 + pad * span
    return c, point(x0[group]), point(x1[group])
