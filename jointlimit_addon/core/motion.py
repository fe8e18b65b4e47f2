"""Smooth joint motion through key poses [004 §4].

Two profiles, both exact minimisers of an integrated squared derivative of the joint angle:

``MIN_ACCELERATION``
    The seed's "minimum angular-velocity-change" model: minimise ``E = ∫ (dω/dt)² dt``, the
    integrated squared angular *acceleration* [004 eq.4]. Rest to rest it is the cubic
    ``θ(t) = θ0 + α t² (3T - 2t) / T³`` [004 eq.5]; through via points it is a piecewise cubic
    with continuous velocity and acceleration [004 §4.1] (a clamped cubic spline).
    This is *not* the minimum-jerk model.
``MIN_JERK``
    Flash & Hogan (1985): minimise ``∫ (d³θ/dt³)² dt``. Rest to rest it is the quintic
    ``θ0 + α (10τ³ - 15τ⁴ + 6τ⁵)``, ``τ = t/T``; through via points a piecewise quintic that is
    continuous up to the fourth derivative (a quintic spline), zero acceleration at both ends.

Both are solved the same way: every segment is a Hermite polynomial of its end values and
end derivatives; the derivatives at the via points are the unknowns of the quadratic energy,
whose minimiser solves a block-tridiagonal linear system. With one via point and the cubic
profile this is the closed form of [004 §4.1] (see :func:`via_point_velocity`).

Erratum in [004 §4.1]: the printed closed form for ``b = θ'(S)`` is not the minimiser (it
fails e.g. for ``a = c = 0, α = β, S = T/2``, where symmetry and [004 eq.5] demand
``b = 3α/T``, and it is not symmetric under time reversal). The variational solution of the
seed's own problem [004 eq.6-10] is

    b = 6(T-S) α / (4T S) + 6S β / (4T (T-S)) - 2(T-S) a / (4T) - 2S c / (4T),

i.e. the printed ``4T + S`` must read ``4T`` and the ``c`` term ``-2S c``. The two cubic pieces
printed there are correct; :func:`via_point_cubic` implements them verbatim.

Via-point velocities: the exact minimiser overshoots between unevenly spaced keys (keys at
frames 1, 2 and 100 at 0°, 14.3° and 28.6° swing to 141° on the way). ``via="CLAMPED"``, the
default, keeps the optimal derivatives where each segment is monotone between its two keys and
limits them where it is not, so no segment leaves the range of its keys, like Blender's *Auto
Clamped* handles (see :func:`_clamp_via`); ``via="OPTIMAL"`` is the exact minimiser. Both are C1 and use
the profile's polynomial between keys.

Channels for joints: a local rotation is turned into three channel values per key, either
``SWING_TWIST`` = (s, t, psi) on the stereographic plane [000 eq.1-2, 37-39] (swing stays a
smooth curve on the plane where the joint limits live; psi unwrapped across keys) or
``EULER`` angles in a Blender order, unwrapped across the ±180° seam and switched between the
two equivalent triples [004 §3] so that every key is nearest to the previous one. After
interpolation every frame is clamped by the joint limit (any object with ``clamp(q)``).
"""

import math

import numpy as np

from . import quat

MIN_ACCELERATION = "MIN_ACCELERATION"
MIN_JERK = "MIN_JERK"
PROFILES = (MIN_ACCELERATION, MIN_JERK)

VIA_CLAMPED = "CLAMPED"
VIA_OPTIMAL = "OPTIMAL"
VIA_MODES = (VIA_CLAMPED, VIA_OPTIMAL)
# Closest allowed key times (frames): closer keys make the segment energies h^(1-2r) overflow.
MIN_KEY_GAP = 1e-6

SWING_TWIST = "SWING_TWIST"
EULER = "EULER"
CHANNELS = (SWING_TWIST, EULER)

# Hermite bases on the unit interval. Row j is the polynomial (coefficients of τ^0..τ^n) that
# carries end datum j of (p0, h·v0[, h²·a0], p1, h·v1[, h²·a1]): its value/derivatives are 1 for
# that datum and 0 for every other one at τ = 0 and τ = 1.
_HERMITE = {
    MIN_ACCELERATION: np.array(
        [
            [1.0, 0.0, -3.0, 2.0],
            [0.0, 1.0, -2.0, 1.0],
            [0.0, 0.0, 3.0, -2.0],
            [0.0, 0.0, -1.0, 1.0],
        ]
    ),
    MIN_JERK: np.array(
        [
            [1.0, 0.0, 0.0, -10.0, 15.0, -6.0],
            [0.0, 1.0, 0.0, -6.0, 8.0, -3.0],
            [0.0, 0.0, 0.5, -1.5, 1.5, -0.5],
            [0.0, 0.0, 0.0, 10.0, -15.0, 6.0],
            [0.0, 0.0, 0.0, -4.0, 7.0, -3.0],
            [0.0, 0.0, 0.0, 0.5, -1.0, 0.5],
        ]
    ),
}


def check_profile(profile):
    """Raise ``ValueError`` unless ``profile`` is one of :data:`PROFILES`."""
    if profile not in PROFILES:
        raise ValueError(f"motion profile must be one of {', '.join(PROFILES)}, got {profile!r}")
    return profile


def check_via(via):
    """Raise ``ValueError`` unless ``via`` is one of :data:`VIA_MODES`."""
    if via not in VIA_MODES:
        raise ValueError(f"via must be one of {', '.join(VIA_MODES)}, got {via!r}")
    return via


def _end_order(profile):
    """Number of data per key in a segment's Hermite form: 2 (p, v) or 3 (p, v, a)."""
    return _HERMITE[profile].shape[0] // 2


def _poly_derivative(coeffs, n):
    """Coefficients (..., deg+1) of the n-th derivative of polynomials in τ, same length."""
    coeffs = np.asarray(coeffs, dtype=np.float64)
    size = coeffs.shape[-1]
    out = np.zeros_like(coeffs)
    if n >= size:
        return out
    powers = np.arange(size)
    factor = np.ones(size)
    for k in range(n):
        factor = factor * (powers - k)
    out[..., : size - n] = (coeffs * factor)[..., n:]
    return out


def _basis(profile, tau, derivative=0):
    """Hermite basis functions (or their τ-derivatives) at ``tau`` (M,) -> (M, 2d)."""
    coeffs = _poly_derivative(_HERMITE[profile], derivative)
    powers = np.asarray(tau, dtype=np.float64)[:, None] ** np.arange(coeffs.shape[1])
    return powers @ coeffs.T


def _gram(profile):
    """``G_ij = ∫0^1 B_i^(r) B_j^(r) dτ`` with r = 2 (acceleration) or 3 (jerk)."""
    r = _end_order(profile)
    p = _poly_derivative(_HERMITE[profile], r)
    n = p.shape[1]
    hilbert = 1.0 / (np.arange(n)[:, None] + np.arange(n)[None, :] + 1.0)
    return p @ hilbert @ p.T


# ---------------------------------------------------------------------------------------------
# Closed forms from the seed


def rest_to_rest(theta0, theta1, duration, t, profile=MIN_ACCELERATION):
    """Rest-to-rest profile from ``theta0`` at ``t = 0`` to ``theta1`` at ``t = duration``.

    ``MIN_ACCELERATION``: ``θ0 + α t² (3T - 2t) / T³`` [004 eq.5] with ``α = θ1 - θ0``.
    ``MIN_JERK``: ``θ0 + α (10τ³ - 15τ⁴ + 6τ⁵)``, ``τ = t/T`` (Flash & Hogan 1985).
    ``t`` is clipped to ``[0, T]``. Broadcasts over all arguments.
    """
    check_profile(profile)
    T = float(duration)
    if not np.isfinite(T) or T <= 0.0:
        raise ValueError(f"duration must be a positive number, got {duration!r}")
    alpha = np.asarray(theta1, dtype=np.float64) - np.asarray(theta0, dtype=np.float64)
    t = np.clip(np.asarray(t, dtype=np.float64), 0.0, T)
    if profile == MIN_ACCELERATION:
        return theta0 + alpha * t**2 * (3.0 * T - 2.0 * t) / T**3
    tau = t / T
    return theta0 + alpha * tau**3 * (10.0 + tau * (-15.0 + 6.0 * tau))


def via_point_velocity(alpha, beta, S, T, a=0.0, c=0.0):
    """Optimal velocity ``b = θ'(S)`` at a via point [004 §4.1] (erratum corrected).

    The joint moves by ``α`` during ``[0, S]`` and by ``β`` during ``[S, T]`` with velocities
    ``a`` at 0 and ``c`` at T; ``b`` minimises ``E1 + E2`` [004 eq.9-10]:
    ``b = 6(T-S)α/(4TS) + 6Sβ/(4T(T-S)) - 2(T-S)a/(4T) - 2Sc/(4T)``.
    (The seed prints ``4T + S`` for ``4T`` and ``-Sc`` for ``-2Sc``; see the module docstring.)
    """
    S = np.asarray(S, dtype=np.float64)
    T = np.asarray(T, dtype=np.float64)
    if np.any(~(0.0 < S)) or np.any(~(S < T)):
        raise ValueError("the via time S must satisfy 0 < S < T")
    R = T - S
    return (6.0 * R * alpha / (S * 4.0 * T) + 6.0 * S * beta / (R * 4.0 * T)
            - 2.0 * R * a / (4.0 * T) - 2.0 * S * c / (4.0 * T))


def via_point_cubic(theta0, alpha, beta, S, T, t, a=0.0, c=0.0):
    """The two cubic pieces through a via point, exactly as printed in [004 §4.1].

    ``θ(t)`` for ``0 <= t <= T`` (clipped), with ``γ = θ0``, ``b`` from
    :func:`via_point_velocity`. Piece 1 (``t <= S``) and piece 2 (``t >= S``) are the seed's
    polynomials in absolute time ``t``.
    """
    S = float(S)
    T = float(T)
    b = via_point_velocity(alpha, beta, S, T, a, c)
    t = np.clip(np.asarray(t, dtype=np.float64), 0.0, T)
    gamma = theta0
    first = ((a + b) / S**2 - 2.0 * alpha / S**3) * t**3 + (-(2.0 * a + b) / S + 3.0 * alpha / S**2) * t**2 + a * t + gamma
    R = T - S
    second = gamma + alpha + (
        ((b + c) - 2.0 * beta / R) * t**3
        + (-b * (2.0 * T + S) - c * (T + 2.0 * S) + 3.0 * (T + S) / R * beta) * t**2
        + (b * T * (T + 2.0 * S) + c * S * (2.0 * T + S) - 6.0 * beta * S * T / R) * t
        + beta * S**2 / R * (3.0 * T - S)
        - S * T * (b * T + c * S)
    ) / R**2
    return np.where(t <= S, first, second)


# ---------------------------------------------------------------------------------------------
# General chains of keys


def _check_keys(key_times, key_values):
    key_times = np.asarray(key_times, dtype=np.float64)
    key_values = np.asarray(key_values, dtype=np.float64)
    if key_times.ndim != 1 or key_times.size < 1:
        raise ValueError(f"key_times must be a non-empty 1-D array, got shape {key_times.shape}")
    if key_values.ndim not in (1, 2) or key_values.shape[0] != key_times.size:
        raise ValueError(
            f"key_values must have shape (K,) or (K, C) with K = {key_times.size} key times, "
            f"got {key_values.shape}"
        )
    if not (np.all(np.isfinite(key_times)) and np.all(np.isfinite(key_values))):
        raise ValueError("key_times and key_values must be finite")
    gaps = np.diff(key_times)
    if np.any(gaps <= 0.0):
        raise ValueError("key_times must be strictly increasing")
    if np.any(gaps < MIN_KEY_GAP):
        i = int(np.argmin(gaps))
        raise ValueError(f"keys at {key_times[i]:.9g} and {key_times[i + 1]:.9g} are closer than {MIN_KEY_GAP:g} "
                         "frames: merge or remove one of them")
    return key_times, key_values


def _end_velocity(v, channels, name):
    v = np.asarray(v, dtype=np.float64)
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be finite")
    try:
        return np.broadcast_to(v, (channels,)).astype(np.float64)
    except ValueError:
        raise ValueError(f"{name} must be a scalar or have shape ({channels},), got {v.shape}") from None


def _solve_block_tridiagonal(diag, upper, rhs):
    """Solve a symmetric positive definite block-tridiagonal system.

    ``diag`` (K, d, d), ``upper`` (K-1, d, d) couples block i to block i+1 (the lower blocks
    are its transposes), ``rhs`` (K, d, C). Block Thomas algorithm; the loop runs over keys.
    """
    K = diag.shape[0]
    d_mod = diag.copy()
    r_mod = rhs.copy()
    for i in range(1, K):
        lower = upper[i - 1].T
        factor = np.linalg.solve(d_mod[i - 1].T, lower.T).T  # lower @ inv(d_mod[i-1])
        d_mod[i] -= factor @ upper[i - 1]
        r_mod[i] -= factor @ r_mod[i - 1]
    x = np.empty_like(rhs)
    x[-1] = np.linalg.solve(d_mod[-1], r_mod[-1])
    for i in range(K - 2, -1, -1):
        x[i] = np.linalg.solve(d_mod[i], r_mod[i] - upper[i] @ x[i + 1])
    return x


def _clamp_via(profile, key_times, x):
    """Via-key derivatives of ``x`` (K, d, C) changed where needed so that every segment is
    monotone between its keys (never overshoots them); the optimum is kept where it already is.

    A segment is accepted when its Bézier control points are monotone (the curve then is too).
    Where a segment is not, the derivatives at its via keys are replaced by boxed ones
    (:func:`_boxed_via`), which make every segment between two boxed keys monotone; this
    repeats until every segment is accepted or all its via keys are boxed.
    """
    K, _, C = x.shape
    if K < 3:
        return x
    h = np.diff(key_times)[:, None]
    boxed = _boxed_via(profile, h, x.copy())
    done = np.zeros((K, C), dtype=bool)
    for _ in range(K):
        bad = ~_monotone_segments(profile, h, x)
        need = np.zeros((K, C), dtype=bool)
        need[:-1] |= bad
        need[1:] |= bad
        need[[0, -1]] = False       # the ends keep their given velocities
        new = need & ~done
        if not new.any():
            break
        x[:, 1:] = np.where(new[:, None, :], boxed[:, 1:], x[:, 1:])
        done |= new
    return x


def _control_points(profile, h, x):
    """Bézier control points (K-1, n+1, C) of every segment's Hermite polynomial."""
    p0, p1 = x[:-1, 0], x[1:, 0]
    v0, v1 = h * x[:-1, 1], h * x[1:, 1]
    if profile == MIN_ACCELERATION:
        return np.stack((p0, p0 + v0 / 3.0, p1 - v1 / 3.0, p1), axis=1)
    a0, a1 = h * h * x[:-1, 2], h * h * x[1:, 2]
    return np.stack((p0, p0 + v0 / 5.0, p0 + 0.4 * v0 + a0 / 20.0, p1 - 0.4 * v1 + a1 / 20.0, p1 - v1 / 5.0, p1),
                    axis=1)


def _monotone_segments(profile, h, x):
    """(K-1, C): do a segment's control points run monotonically from one key to the next
    (all equal on a flat segment)?"""
    b = _control_points(profile, h, x)
    rise = x[1:, 0] - x[:-1, 0]
    tol = 1e-12 * (np.abs(b).max(axis=1) + 1e-300)
    steps = np.diff(b, axis=1)
    flat = (rise == 0.0)[:, None]
    ok = np.where(flat, np.abs(steps) <= tol[:, None], steps * np.sign(rise)[:, None] >= -tol[:, None])
    return np.all(ok, axis=1)


def _boxed_via(profile, h, x):
    """Via-key derivatives limited so that any segment between two such keys is monotone.

    Per segment, with rise ``Δ`` and the normalised end velocities ``α = h v0 / Δ``,
    ``β = h v1 / Δ``: a cubic is monotone for ``α, β`` in ``[0, 3]`` (Fritsch & Carlson 1980).
    A quintic is monotone when its Bézier control points
    ``0, α/5, 2α/5 + A0/20, 1 - 2β/5 + A1/20, 1 - β/5, 1`` (``A = h² a / Δ``) increase; with
    ``α, β <= 5/4`` that holds for ``A0`` in ``[-4α, 10 - 8α]`` and ``A1`` in ``[8β - 10, 4β]``,
    intervals that both hold 0, so a key's acceleration always has a common admissible value.
    A key between a rise and a fall (or next to a flat segment) gets velocity 0.
    """
    rise = x[1:, 0] - x[:-1, 0]
    slope = rise / h
    left, right = slope[:-1], slope[1:]
    direction = np.where(left * right > 0.0, np.sign(left), 0.0)
    limit = (3.0 if profile == MIN_ACCELERATION else 1.25) * np.minimum(np.abs(left), np.abs(right))
    v = direction * np.clip(direction * x[1:-1, 1], 0.0, limit)
    x[1:-1, 1] = v
    if x.shape[1] == 3:
        h_in, h_out = h[:-1], h[1:]
        rise_in, rise_out = rise[:-1] / h_in**2, rise[1:] / h_out**2
        ends = (8.0 * v / h_in - 10.0 * rise_in, 4.0 * v / h_in, -4.0 * v / h_out, 10.0 * rise_out - 8.0 * v / h_out)
        lo = np.maximum(np.minimum(ends[0], ends[1]), np.minimum(ends[2], ends[3]))
        hi = np.minimum(np.maximum(ends[0], ends[1]), np.maximum(ends[2], ends[3]))
        x[1:-1, 2] = np.clip(x[1:-1, 2], lo, np.maximum(lo, hi))
    return x


def _key_data(profile, key_times, key_values, start_velocity, end_velocity, use_via_points, via=VIA_CLAMPED):
    """End data (K, d, C): values, velocities [and accelerations] at every key.

    Ends: given velocities, zero acceleration. Via points: the derivatives minimising the sum
    over segments of ``∫ (θ^(r))² dt`` (r = 2 or 3) [004 eq.9-10], limited by
    :func:`_clamp_via` unless ``via`` is ``OPTIMAL``, or zero (stop at every key, [004 eq.5]
    per segment) when ``use_via_points`` is false.
    """
    d = _end_order(profile)
    K, C = key_values.shape
    x = np.zeros((K, d, C))
    x[:, 0] = key_values
    x[0, 1] = start_velocity
    x[-1, 1] = end_velocity
    if K < 3 or not use_via_points:
        return x
    h = np.diff(key_times)
    # Segment energy h^(1-2r) (D c)ᵀ G (D c), D = diag(h^k), for the real end data c.
    scale = h[:, None] ** np.tile(np.arange(d), 2)[None, :]
    hess = _gram(profile)[None] * scale[:, :, None] * scale[:, None, :]
    hess *= (h ** (1.0 - 2.0 * d))[:, None, None]
    diag = np.zeros((K, d, d))
    diag[:-1] += hess[:, :d, :d]
    diag[1:] += hess[:, d:, d:]
    upper = hess[:, :d, d:]
    free = np.zeros((K, d), dtype=bool)
    free[1:-1, 1:] = True
    # Known data go to the right-hand side; their rows become identity equations.
    rhs = -np.einsum("kij,kjc->kic", diag, x)
    rhs[:-1] -= np.einsum("kij,kjc->kic", upper, x[1:])
    rhs[1:] -= np.einsum("kji,kjc->kic", upper, x[:-1])
    rhs = np.where(free[:, :, None], rhs, 0.0)
    diag = diag * (free[:, :, None] & free[:, None, :]) + np.eye(d) * ~free[:, :, None]
    upper = upper * (free[:-1, :, None] & free[1:, None, :])
    delta = _solve_block_tridiagonal(diag, upper, rhs)
    x = x + np.where(free[:, :, None], delta, 0.0)
    return _clamp_via(profile, key_times, x) if via == VIA_CLAMPED else x


def key_derivatives(profile, key_times, key_values, start_velocity=0.0, end_velocity=0.0, use_via_points=True,
                    via=VIA_CLAMPED):
    """Velocities (and, for ``MIN_JERK``, accelerations) at every key (``via``: see module).

    Returns ``(K, 1, C)`` (velocity) for ``MIN_ACCELERATION`` and ``(K, 2, C)`` (velocity,
    acceleration) for ``MIN_JERK``; ``(K, n)`` for 1-D ``key_values``. For one via point and
    ``MIN_ACCELERATION`` and ``via="OPTIMAL"`` the velocity equals :func:`via_point_velocity`
    [004 §4.1].
    """
    check_profile(profile)
    check_via(via)
    key_times, values = _check_keys(key_times, key_values)
    flat = values.ndim == 1
    values = values.reshape(values.shape[0], -1)
    C = values.shape[1]
    a = _end_velocity(start_velocity, C, "start_velocity")
    c = _end_velocity(end_velocity, C, "end_velocity")
    x = _key_data(profile, key_times, values, a, c, use_via_points, via)[:, 1:]
    return x[..., 0] if flat else x


def evaluate(profile, key_times, key_values, times, start_velocity=0.0, end_velocity=0.0,
             use_via_points=True, derivative=0, via=VIA_CLAMPED):
    """Evaluate a smooth motion through keys at arbitrary ``times`` [004 eq.5, §4.1].

    ``key_values`` (K, C) (or (K,)) at strictly increasing ``key_times`` (K,); ``times`` of any
    shape -> ``times.shape + (C,)``. ``start_velocity``/``end_velocity``: scalars or (C,)
    (``a`` and ``c`` of [004 §4.1]); accelerations at the ends are zero for ``MIN_JERK``.
    ``use_via_points=False`` stops at every key (rest-to-rest per segment [004 eq.5]).
    ``via``: ``CLAMPED`` (never overshoots the neighbouring keys) or ``OPTIMAL`` (the exact
    minimiser). ``derivative`` 0, 1, 2, ... gives the value, velocity, acceleration, ...
    Outside the key range the end values are held (derivatives 0 there).
    """
    check_profile(profile)
    check_via(via)
    key_times, values = _check_keys(key_times, key_values)
    times = np.asarray(times, dtype=np.float64)
    if not np.all(np.isfinite(times)):
        raise ValueError("times must be finite")
    if int(derivative) != derivative or derivative < 0:
        raise ValueError(f"derivative must be a non-negative integer, got {derivative!r}")
    derivative = int(derivative)
    flat = values.ndim == 1
    values = values.reshape(values.shape[0], -1)
    K, C = values.shape
    a = _end_velocity(start_velocity, C, "start_velocity")
    c = _end_velocity(end_velocity, C, "end_velocity")
    t = times.ravel()
    if K == 1:
        out = np.broadcast_to(values[0] if derivative == 0 else 0.0 * values[0], (t.size, C)).copy()
    else:
        data = _key_data(profile, key_times, values, a, c, use_via_points, via)
        out = _evaluate_segments(profile, key_times, data, t, derivative)
    out = out.reshape(times.shape + (C,))
    return out[..., 0] if flat else out


def _evaluate_segments(profile, key_times, data, t, derivative):
    K, d, C = data.shape
    inside = (t >= key_times[0]) & (t <= key_times[-1])
    tc = np.clip(t, key_times[0], key_times[-1])
    seg = np.clip(np.searchsorted(key_times, tc, side="right") - 1, 0, K - 2)
    h = key_times[seg + 1] - key_times[seg]
    tau = (tc - key_times[seg]) / h
    powers = h[:, None] ** np.arange(d)[None, :]
    ends = np.concatenate((data[seg] * powers[:, :, None], data[seg + 1] * powers[:, :, None]), axis=1)
    basis = _basis(profile, tau, derivative)
    out = np.einsum("mj,mjc->mc", basis, ends) / h[:, None] ** derivative
    if derivative > 0:
        out[~inside] = 0.0
    return out


def profile_samples(theta0=0.0, theta1=1.0, duration=1.0, count=101):
    """Sample one rest-to-rest channel with both profiles (for documentation and plots).

    Returns ``{"time": (count,), "MIN_ACCELERATION": (count, 3), "MIN_JERK": (count, 3)}`` where
    columns are angle, velocity and acceleration. Example::

        s = profile_samples(0.0, 90.0, 1.0, 5)
        s["MIN_ACCELERATION"][:, 0]  # [0, 14.0625, 45, 75.9375, 90]   [004 eq.5]
        s["MIN_JERK"][:, 0]          # [0, 9.31640625, 45, 80.68359375, 90]
    """
    t = np.linspace(0.0, duration, int(count))
    out = {"time": t}
    for profile in PROFILES:
        out[profile] = np.stack(
            [evaluate(profile, [0.0, duration], [theta0, theta1], t, derivative=n) for n in range(3)], axis=-1
        )
    return out


# ---------------------------------------------------------------------------------------------
# Joint channels


def check_channels(channels):
    """Raise ``ValueError`` unless ``channels`` is one of :data:`CHANNELS`."""
    if channels not in CHANNELS:
        raise ValueError(f"channels must be one of {', '.join(CHANNELS)}, got {channels!r}")
    return channels


def unwrap_euler(euler, order="XYZ"):
    """Make a sequence of Euler triples (K, 3) continuous [004 §3].

    Each triple is replaced by the equivalent one nearest (Euclidean, in radians) to the
    previous key: among ``(a, b, c)`` and ``(a ± π, π - b, c ± π)`` (first, middle, last axis
    of ``order``), each angle shifted by multiples of 2π. The first triple is kept.
    """
    quat.check_euler_order(order)
    euler = np.asarray(euler, dtype=np.float64)
    if euler.ndim != 2 or euler.shape[1] != 3:
        raise ValueError(f"euler must have shape (K, 3), got {euler.shape}")
    i, j, k = (quat._AXIS_INDEX[letter] for letter in order)
    alt = euler.copy()
    alt[:, i] += np.pi
    alt[:, j] = np.pi - euler[:, j]
    alt[:, k] += np.pi
    out = euler.copy()
    two_pi = 2.0 * np.pi
    # Sequential: every choice depends on the one before.
    for n in range(1, euler.shape[0]):
        prev = out[n - 1]
        cands = np.stack((euler[n], alt[n]))
        cands = cands + two_pi * np.round((prev - cands) / two_pi)
        out[n] = cands[np.argmin(np.sum((cands - prev) ** 2, axis=1))]
    return out


def rotations_to_channels(key_quats, channels, order="XYZ"):
    """Channel values (K, 3) of local rotations (K, 4), continuous across keys.

    ``SWING_TWIST``: (s, t, psi) of ``q = q_swing · q_twist`` [000 eq.1-2, 37-39], psi unwrapped
    so consecutive keys differ by at most π. ``EULER``: angles (x, y, z) in Blender ``order``,
    made continuous by :func:`unwrap_euler` [004 §3].
    """
    check_channels(channels)
    q = quat.as_unit_quats(key_quats, "key_quats")
    if q.ndim != 2:
        raise ValueError(f"key_quats must have shape (K, 4), got {q.shape}")
    if channels == EULER:
        return unwrap_euler(quat.to_euler(q, order), order)
    from . import projection

    s, t, psi = projection.swing_twist(q)
    values = np.stack((s, t, np.unwrap(psi)), axis=-1)
    if not np.all(np.isfinite(values)):
        raise ValueError("a key lies at the swing pole (swing of 180°), where SWING_TWIST channels "
                         "are undefined; use EULER channels")
    return values


POLE_NEAR = math.radians(170.0)   # swing angle from which a key pair counts as passing the pole


def swing_pole_segments(key_quats, near=POLE_NEAR):
    """Indices ``k`` of the key pairs ``(k, k + 1)`` whose shortest rotation from one to the other
    swings the bone, between the keys, past ``near`` (radians) from its rest direction ``+Y`` and
    farther than at either key: over the swing pole. ``SWING_TWIST`` channels cannot pass it (180°,
    where ``(s, t)`` is infinite [000 eq.1]), so between such keys their motion goes another way
    round than the shortest one."""
    q = quat.as_unit_quats(key_quats, "key_quats")
    if q.ndim != 2 or len(q) < 2:
        return []
    t = np.linspace(0.0, 1.0, 33)
    path = quat.slerp(q[:-1, None, :], q[1:, None, :], t[None, :])     # (K - 1, 33, 4)
    w, x, y, z = np.moveaxis(path, -1, 0)
    cos_swing = w * w + y * y - x * x - z * z      # (R(q) Y) . Y
    inner = cos_swing[:, 1:-1].min(axis=1)
    ends = np.minimum(cos_swing[:, 0], cos_swing[:, -1])
    return np.flatnonzero((inner < math.cos(near)) & (inner < ends - 1e-9)).tolist()


def channels_to_rotations(values, channels, order="XYZ"):
    """Unit quaternions (..., 4) of channel values (..., 3); inverse of :func:`rotations_to_channels`."""
    check_channels(channels)
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 0 or values.shape[-1] != 3:
        raise ValueError(f"channel values must have shape (..., 3), got {values.shape}")
    if channels == EULER:
        return quat.from_euler(values, order)
    from . import projection

    return projection.from_swing_twist(values[..., 0], values[..., 1], values[..., 2])


def _sign_continuous(q):
    """Flip signs along the first axis so consecutive quaternions have non-negative dot products."""
    if q.shape[0] == 0:
        return q
    flips = np.where(np.sum(q[1:] * q[:-1], axis=-1) < 0.0, -1.0, 1.0)
    signs = np.concatenate(([1.0 if q[0, 0] >= 0.0 else -1.0], flips))
    return q * np.cumprod(signs)[:, None]


def interpolate_rotations(key_times, key_quats, times, profile, channels, limit=None,
                          use_via_points=True, order="XYZ", via=VIA_CLAMPED):
    """Per-frame local rotations (M, 4) of one joint moving smoothly through key rotations.

    The keys (K, 4) become channel values (:func:`rotations_to_channels`), each channel is
    interpolated with ``profile`` starting and ending at rest [004 eq.5, §4.1], the result is
    turned back into quaternions and every frame is clamped by ``limit`` (any object with
    ``clamp(q)``; ``None`` = no limit). Signs are made continuous along ``times`` (first frame
    ``w >= 0``) so the result can be keyed as quaternion F-curves. ``via``: see :func:`evaluate`.
    """
    check_profile(profile)
    check_channels(channels)
    times = np.asarray(times, dtype=np.float64)
    if times.ndim != 1:
        raise ValueError(f"times must be a 1-D array, got shape {times.shape}")
    values = rotations_to_channels(key_quats, channels, order)
    curve = evaluate(profile, key_times, values, times, use_via_points=use_via_points, via=via)
    q = quat.normalize(channels_to_rotations(curve, channels, order))
    if limit is not None:
        q = np.asarray(limit.clamp(q), dtype=np.float64)
    return _sign_continuous(q)


def _channel_angles(values, channels):
    """Channel values as angles (radians): ``s, t`` are ``tan(angle / 2)`` [000 eq.5]."""
    if channels == EULER:
        return values
    return np.concatenate((2.0 * np.arctan(values[..., :2]), values[..., 2:]), axis=-1)


def overshoot_degrees(key_times, key_quats, times, profile, channels, use_via_points=True, order="XYZ",
                      via=VIA_CLAMPED):
    """How far (degrees) the channels of :func:`interpolate_rotations` leave the range of the
    two keys around each of ``times`` (before any limit): 0 when every in-between stays within
    its keys; the largest excess of any channel otherwise."""
    check_channels(channels)
    key_times = np.asarray(key_times, dtype=np.float64)
    times = np.asarray(times, dtype=np.float64).ravel()
    values = rotations_to_channels(key_quats, channels, order)
    curve = _channel_angles(evaluate(profile, key_times, values, times, use_via_points=use_via_points, via=via), channels)
    keys = _channel_angles(values, channels)
    if len(key_times) < 2 or times.size == 0:
        return 0.0
    seg = np.clip(np.searchsorted(key_times, times, side="right") - 1, 0, len(key_times) - 2)
    lo = np.minimum(keys[seg], keys[seg + 1])
    hi = np.maximum(keys[seg], keys[seg + 1])
    excess = np.maximum(np.maximum(curve - hi, lo - curve), 0.0)
    return float(np.degrees(excess.max()))
