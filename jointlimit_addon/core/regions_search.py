"""Global search for the nearest point of a smooth outline on the sphere (the OPTIMAL correction
of ``regions_smooth``).

The paper finds no closed form for the geodesic nearest point [000 §4.1, §4.4, §4.6.1]; here
it is computed numerically. For a point ``P`` outside, the nearest point
of the region is the boundary point ``B(tau)`` (``tau`` parametrises the outline) that maximises
``f(tau) = P·B(tau)`` (the geodesic distance falls as the chord shrinks). With
``x(tau) = (s, t)`` and [000 eq.2], ``f = 2 N / D - P.y`` where ``N = -P.x s + P.z t + P.y`` and
``D = s² + t² + 1``: no division by ``1 + P.y``, so the pole needs no special case.
``f`` may have several local maxima (on the sphere an outline can have more than one spherical
perpendicular from ``P`` [000 §4.5]), so the search is global:

1. ``f`` and ``f'`` at ~100 outline nodes, for all points at once (two small matrix products).
   Nodes are spaced so that every node interval deviates from its chord by about the same
   amount ``E_k`` (density ~ sqrt of the curvature on the sphere); corners are nodes. As
   ``|P| = 1``, ``f`` on interval ``k`` never exceeds ``max(f_k, f_k+1) + E_k``: intervals whose
   bound is below the best node value are dropped.
2. An interval where ``f'`` goes from + to - holds a local maximum: safeguarded Newton on
   ``f' = 0`` (bisection fallback), best bound first, until no bracket can beat the incumbent.
3. Intervals without a sign change that could still hide a better maximum (a max-min pair
   between two nodes), and the two halves of every refined bracket, are subdivided (branch and
   bound). Bounds of ``|f''|`` and ``|f'''|`` per interval (from the outline) prove most of them
   free of a hidden maximum from the end slopes alone; brackets found inside are refined the
   same way. Candidates are compared by the chord ``|P - B|²``, exact where ``f`` rounds to 1,
   so points a hair outside are corrected exactly too.

Everything is vectorised over the input points; loops run over levels and iterations only.

One point (interactive posing) first takes the short way of ``regions_local`` (Newton from a
start node and a certificate); what that does not settle takes a pure-Python path through the
same steps here: the node scan is one matrix product, brackets are refined with scalar Newton,
and the point goes to the vectorised branch and bound only when its own runs past a budget.
"""

import bisect
import math

import numpy as np

from . import projection


class _OutlineSearch:
    """The search, mixed into ``regions_smooth._SmoothRegion``, which provides the outline:
    ``PERIOD``, ``_outline(tau)`` / ``_outline1(tau)`` (``(s, t, ds, dt, dds, ddt)``),
    ``_sphere(tau)``, and the parameters below that describe its corners and smooth pieces."""

    N_NODES = 96        # outline nodes of the global search
    N_FINE = 8192       # samples of the outline used to place nodes and bound the error
    SUB = 8             # subdivision of an ambiguous interval per branch-and-bound level
    LEVELS = 8
    MAX_PIECES = 16     # per row and level of the branch and bound
    # f = cos(distance) is decided to F_TOL, less where the distance d is small (an error e in
    # f moves d by e / d): to F_TOL * min(1, chord² / CHORD2_REF)
    F_TOL = 1e-13
    CHORD2_REF = 1e-6
    TAU_TOL = 1e-13
    NEWTON_DONE = 1e-8  # after a Newton step this small the error is ~1e-16 * |f''' / f''|
    NEWTON_ITERS = 80
    CHUNK = 1 << 14
    ONE_BY_ONE = 72     # up to this many points, one at a time (``nearest_boundary_st1``, ~7 µs a point;
                        # the batch's Newton and certificates cost ~0.4 ms a call in numpy)
    _kinks = np.zeros(0)
    _sub_order = 2.0    # chord deviation of a sub-interval ~ width ** _sub_order
    _singular = np.zeros(0)   # kinks next to which f'' is unbounded (or f' jumps)
    _singular3 = np.zeros(0)  # kinks next to which f''' is unbounded
    _PIECE_RATE = 0.0   # smooth pieces per unit of tau: tau in [k, k + 1) / _PIECE_RATE is piece k

    # --- outline tables -------------------------------------------------------------------

    def _build_nodes(self):
        fine = np.union1d(np.linspace(0.0, self.PERIOD, self.N_FINE, endpoint=False), self._kinks)
        nf = fine.size
        B = self._sphere(fine)
        seg = np.roll(B, -1, axis=0) - B
        chord = np.linalg.norm(seg, axis=1)
        e = seg / np.maximum(chord, 1e-300)[:, None]
        turn = np.arccos(np.clip(np.sum(e * np.roll(e, 1, axis=0), axis=1), -1.0, 1.0))
        turn = np.maximum(0.5 * (turn + np.roll(turn, -1)), chord)  # >= chord: |P| = 1 curves
        # Equal sqrt(curvature) * length per interval gives equal chord deviation.
        mu = np.concatenate(([0.0], np.cumsum(np.sqrt(chord * turn))))
        self._arc = np.concatenate(([0.0], np.cumsum(chord)))
        self._fine = fine
        grid = np.append(fine, self.PERIOD)
        target = np.linspace(0.0, mu[-1], self.N_NODES, endpoint=False)
        want = np.union1d(np.interp(target, mu, grid), self._kinks)
        j = np.unique(np.clip(np.searchsorted(grid, want), 0, nf - 1))
        j = np.union1d(j, np.searchsorted(fine, self._kinks)).astype(np.intp)
        n = j.size
        tau = fine[j]
        self._tau = tau
        self._h = np.diff(np.append(tau, tau[0] + self.PERIOD))
        Bn = B[j]
        # E_k: largest distance of the outline on interval k from its chord (+ fine-grid slack)
        owner = np.searchsorted(j, np.arange(nf), side="right") - 1
        a = Bn[owner]
        ab = np.roll(Bn, -1, axis=0)[owner] - a
        lam = np.clip(np.sum((B - a) * ab, axis=1) / np.maximum(np.sum(ab * ab, axis=1), 1e-300), 0.0, 1.0)
        dev = np.linalg.norm(B - a - lam[:, None] * ab, axis=1) + chord * turn / 4.0
        E = np.zeros(n)
        np.maximum.at(E, owner, dev)
        self._E = 1.25 * E + 1e-15
        # C_k, J_k: bounds of |f''| <= |B''| and |f'''| <= |B'''| (tau units) on interval k
        dt = np.diff(np.concatenate((fine[-1:] - self.PERIOD, fine, fine[:1] + self.PERIOD)))
        d1 = (np.roll(B, -1, axis=0) - B) / dt[1:, None]
        d0 = (B - np.roll(B, 1, axis=0)) / dt[:-1, None]
        acc = (d1 - d0) / (0.5 * (dt[1:] + dt[:-1]))[:, None]
        acc[np.isin(fine, self._kinks)] = np.nan      # differences across a kink mean nothing
        jerk = np.linalg.norm(np.roll(acc, -1, axis=0) - acc, axis=1) / dt[1:]
        C, J = np.zeros(n), np.zeros(n)
        for bound, est in ((C, np.linalg.norm(acc, axis=1)), (J, jerk)):
            est = np.fmax(est, np.fmax(np.roll(est, 1), np.roll(est, -1)))
            np.fmax.at(bound, owner, est)
        C, J = 1.5 * C, 1.5 * J     # margin for the sampling of the estimates
        for kinks, bound in ((self._singular, C), (self._singular3, J)):
            for k in np.searchsorted(tau, kinks):
                bound[k % n] = bound[(k - 1) % n] = np.inf
        self._Ch = C * self._h
        self._Jh2 = J * self._h * self._h
        # f at the nodes is P @ _Bx (last column repeats the first); f' and f'' at the start and
        # the end of interval k (one-sided where the parametrisation has a kink) are P dotted
        # with row k of each of _GH_T = (G0, G1, H0, H1) transposed.
        start = np.nextafter(tau, np.inf)
        end = np.nextafter(np.append(tau[1:], tau[0] + self.PERIOD), -np.inf)
        (G0, H0), (G1, H1) = self._slope_rows(start), self._slope_rows(end)
        self._Bx = np.concatenate((Bn.T, Bn[:1].T), axis=1)
        self._GH_T = tuple(np.ascontiguousarray(z.T) for z in (G0, G1, H0, H1))
        # one-point search, (P, 1) @ _BGx1: six columns per interval (f at both ends, f' and
        # f'' at the start and the end), then f + E'_j at each node j, where E'_j bounds both
        # intervals at j (the fourth component 1 adds it)
        per_interval = np.stack((self._Bx[:, :-1], self._Bx[:, 1:], G0, G1, H0, H1), axis=2).reshape(3, 6 * n)
        E_node = np.maximum(self._E, np.roll(self._E, 1))
        self._BGx1 = np.vstack((np.concatenate((per_interval, self._Bx[:, :-1]), axis=1),
                                np.concatenate((np.zeros(6 * n), E_node))))
        node_st = np.stack(self._outline(tau)[:2], axis=-1)
        static = np.stack((self._E, self._Ch, self._Jh2, self._h * self._min_width1), axis=1)
        self._tables1 = (self._tau.tolist(), self._h.tolist(), [tuple(r) for r in static.tolist()],
                         Bn.tolist(), node_st.tolist())

    def _slope_rows(self, tau):
        """Rows ``G, H`` ``(3, len(tau))`` with ``f' = P @ G`` and ``f'' = P @ H`` at ``tau``:
        ``f = 2 N / D - P.y`` with ``N = n0·P``, ``n0 = (-s, 1, t)`` (see the module)."""
        with np.errstate(all="ignore"):     # f'' is infinite next to singular kinks
            return self._slope_rows_of(*self._outline(tau))

    @staticmethod
    def _slope_rows_of(s, t, ds, dt, dds, ddt):
        zero, one = np.zeros_like(s), np.ones_like(s)
        n0, n1, n2 = (np.stack(v) for v in ((-s, one, t), (-ds, zero, dt), (-dds, zero, ddt)))
        D = s * s + t * t + 1.0
        D1 = 2.0 * (s * ds + t * dt)
        D2 = 2.0 * (ds * ds + dt * dt + s * dds + t * ddt)
        g = n1 * D - n0 * D1            # f' = 2 g / D²
        g1 = n2 * D - n0 * D2           # g' (the n1 D1 terms cancel)
        return 2.0 * g / (D * D), 2.0 * (g1 * D - 2.0 * g * D1) / (D * D * D)

    # --- OPTIMAL: global search -----------------------------------------------------------

    def _fgh(self, Q, tau, outline=None):
        """``f = P·B(tau)``, ``f' = df/dtau`` and ``f''`` for rows of ``Q`` (vectorised ``_fgh1``;
        ``outline``: ``self._outline(tau)`` when the caller has it)."""
        s, t, ds, dt, dds, ddt = self._outline(tau) if outline is None else outline
        px, py, pz = Q[:, 0], Q[:, 1], Q[:, 2]
        D = s * s + t * t + 1.0
        D1 = 2.0 * (s * ds + t * dt)
        N = pz * t - px * s + py
        g = (pz * dt - px * ds) * D - N * D1
        with np.errstate(all="ignore"):     # f'' is infinite next to singular kinks
            g1 = (pz * ddt - px * dds) * D - 2.0 * N * (ds * ds + dt * dt + s * dds + t * ddt)
            return 2.0 * N / D - py, 2.0 * g / (D * D), 2.0 * (g1 * D - 2.0 * g * D1) / (D * D * D)

    def _refine(self, Q, lo, w, ends):
        """Local maximum of ``f`` in ``[lo, lo + w]`` where ``f'(lo) > 0 >= f'(lo + w)``:
        Newton on ``g = N'D - N D'`` (the sign of ``f'``) from the peak of the cubic Hermite
        interpolant of ``ends = (fa, fb, ga, gb)``, kept inside the shrinking bracket,
        bisection whenever a Newton step leaves it or stalls."""
        px, py, pz = Q[:, 0], Q[:, 1], Q[:, 2]
        lo, hi = lo.copy(), lo + w
        x = lo + w * _hermite_peaks(*ends, w)
        step_old = w.copy()
        act = np.arange(len(x))
        for _ in range(self.NEWTON_ITERS):
            if act.size == 0:
                break
            xa, la, ha = x[act], lo[act], hi[act]
            s, t, ds, dt, dds, ddt = self._outline(xa)
            qx, qy, qz = px[act], py[act], pz[act]
            N = qz * t - qx * s + qy
            N1 = qz * dt - qx * ds
            D = s * s + t * t + 1.0
            D1 = 2.0 * (s * ds + t * dt)
            g = N1 * D - N * D1
            la = np.where(g > 0.0, xa, la)
            ha = np.where(g < 0.0, xa, ha)
            with np.errstate(divide="ignore", invalid="ignore"):    # non-finite: bisect
                g1 = (qz * ddt - qx * dds) * D - 2.0 * N * (ds * ds + dt * dt + s * dds + t * ddt)
                newton = xa - g / g1
            step = np.abs(newton - xa)
            ok = (g1 < 0.0) & (newton >= la) & (newton <= ha) & (step < 0.5 * step_old[act])
            xn = np.where(ok, newton, 0.5 * (la + ha))
            x[act], lo[act], hi[act] = xn, la, ha
            step_old[act] = np.abs(xn - xa)
            done = (g == 0.0) | (ok & (step <= self.NEWTON_DONE)) | (ha - la <= self.TAU_TOL)
            x[act[g == 0.0]] = xa[g == 0.0]
            act = act[~done]
        return x

    def _try(self, Q, best, iv):
        """Refine the rising intervals ``iv`` (see ``_nearest_tau``) and keep, per row, the best
        maximum found and the incumbent ``best = (f, chord², tau)``; candidates are compared by
        the chord ``|P - B|²``, exact even where ``f`` rounds to 1. Returns the pieces either
        side of each maximum that may hide another one (a rising interval holds an odd number of
        critical points); as in ``_bracket1``, a piece goes when ``f'`` provably keeps its sign
        on it, from ``f''`` at the maximum and at the piece's other end."""
        r, lo, w, fa, fb, ga, gb, ha, hb, E, Ch, Jh2 = iv
        Qr = Q[r]
        tau = self._refine(Qr, lo, w, (fa, fb, ga, gb))
        outline = self._outline(tau)
        c = np.sum((Qr - np.stack(projection._plane_to_sphere(*outline[:2]), axis=-1)) ** 2, axis=1)
        f = 1.0 - 0.5 * c
        ddf = np.minimum(self._fgh(Qr, tau, outline)[2], 0.0)
        pick = _best_per_row(r, -c)
        best_f, best_c, best_tau = best
        up = pick[c[pick] < best_c[r[pick]]]
        best_f[r[up]] = f[up]
        best_c[r[up]] = c[up]
        best_tau[r[up]] = tau[up]
        with np.errstate(divide="ignore", invalid="ignore"):
            a = np.where(w > 0.0, np.clip((tau - lo) / w, 0.0, 1.0), 0.0)
            J = Jh2 / (w * w)
            reach = -2.0 * ddf / J      # f' keeps its sign that far from tau (nan: unknown)
        b = 1.0 - a
        zero = np.zeros_like(f)
        i = np.flatnonzero((a > 0.0) & ~(reach > w * a) & ~_monotone(ga, zero, ha, ddf, J, w * a))
        j = np.flatnonzero((b > 0.0) & ~(reach > w * b) & ~_monotone(zero, gb, ddf, hb, J, w * b))
        a, b = a[i], b[j]
        q = self._sub_order
        left = (r[i], lo[i], w[i] * a, fa[i], f[i], ga[i], zero[i], ha[i], ddf[i], _piece_E(E[i], Ch[i], w[i], a, q),
                Ch[i] * a, Jh2[i] * a * a)
        right = (r[j], tau[j], w[j] * b, f[j], fb[j], zero[j], gb[j], ddf[j], hb[j], _piece_E(E[j], Ch[j], w[j], b, q),
                 Ch[j] * b, Jh2[j] * b * b)
        return [np.concatenate(z) for z in zip(left, right)]

    def _ftol(self, best, rows):
        return self.F_TOL * np.minimum(1.0, best[1][rows] / self.CHORD2_REF)

    @staticmethod
    def _no_max(ga, gb, ha, hb, Ch, Jh2, w):
        """Vectorised ``_no_max1``: is an interval whose end slopes ``ga, gb`` do not bracket a
        maximum proven free of one?

        Yes if ``f'`` keeps its sign throughout: with ``|f''| <= C`` that holds when
        ``|ga + gb| > C h``, or, given ``f''`` at the ends, by ``_monotone``. Nor can it hold a
        max-min pair if between the ends ``f''`` would have to swing from ``-|ga| / a`` to
        ``|gb| / b`` (mean values, ``a + b <= h``) or the reverse, which needs
        ``(sqrt|ga| + sqrt|gb|)² <= h² max|f'''|``.
        """
        total, product = np.abs(ga + gb), ga * gb
        same = product >= 0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            pair = total + 2.0 * np.sqrt(np.maximum(product, 0.0)) > Jh2
            return (total > Ch) | (same & (pair | _monotone(ga, gb, ha, hb, Jh2 / (w * w), w)))

    def _nearest_tau(self, Q):
        """Outline parameter of the geodesic nearest boundary point of each row of ``Q``.

        Intervals travel as lists ``(row, lo, width, f(lo), f(hi), f'(lo), f'(hi), f''(lo),
        f''(hi), E, C h, J h^2)``: the chord-deviation bound and the bounds of ``|f''|``,
        ``|f'''|`` times powers of the width (``f''`` may be ``nan`` or infinite next to a
        singular kink: no bound uses it there).
        """
        n = self._tau.size
        F = Q @ self._Bx
        k0 = np.argmax(F[:, :n], axis=1)
        best_c = np.sum((Q - self._Bx[:, k0].T) ** 2, axis=1)
        best_f = 1.0 - 0.5 * best_c
        best = (best_f, best_c, self._tau[k0])
        U = np.maximum(F[:, :-1], F[:, 1:])
        U += self._E
        r, k = np.nonzero(U > best_f[:, None])
        u = U[r, k]
        Qr = Q[r]     # f' and f'' at the ends of the candidate intervals only
        ends = (np.einsum("ij,ij->i", Qr, rows[k]) for rows in self._GH_T)
        iv = [r, self._tau[k], self._h[k], F[r, k], F[r, k + 1], *ends, self._E[k], self._Ch[k], self._Jh2[k]]
        rising = (iv[5] > 0.0) & (iv[6] < 0.0)
        # 1. brackets of a local maximum: the most promising per row, then any that may still win
        pieces = []
        sc = np.flatnonzero(rising)
        if sc.size:
            first = sc[_best_per_row(r[sc], u[sc])]
            pieces.append(self._try(Q, best, [z[first] for z in iv]))
            rest = np.setdiff1d(sc, first)
            rest = rest[u[rest] > best_f[r[rest]] + self._ftol(best, r[rest])]
            if rest.size:
                pieces.append(self._try(Q, best, [z[rest] for z in iv]))
        # 2. branch and bound over intervals that may hide a max-min pair
        cand = [np.concatenate(z) for z in zip([z[~rising] for z in iv], *pieces)]
        frac = np.arange(1, self.SUB) / self.SUB
        for _ in range(self.LEVELS):
            r, lo, w, fa, fb, ga, gb, ha, hb, E, Ch, Jh2 = cand
            bound = np.maximum(fa, fb) + E
            hopeful = bound > best_f[r] + self._ftol(best, r)
            alive = np.flatnonzero(hopeful & ~self._no_max(ga, gb, ha, hb, Ch, Jh2, w))
            if alive.size == 0:
                break
            # where f is nearly constant along the outline every piece stays hopeful: per row,
            # go on with the most promising few only
            alive = alive[_best_per_row(r[alive], bound[alive], self.MAX_PIECES)]
            r, lo, w, fa, fb, ga, gb, ha, hb, E, Ch, Jh2 = (z[alive] for z in cand)
            fs, gs, hs = self._fgh(np.repeat(Q[r], self.SUB - 1, axis=0), (lo[:, None] + w[:, None] * frac).ravel())
            Fs, Gs, Hs = (np.concatenate((za[:, None], zs.reshape(-1, self.SUB - 1), zb[:, None]), axis=1)
                          for za, zs, zb in ((fa, fs, fb), (ga, gs, gb), (ha, hs, hb)))
            E = _piece_E(E, Ch, w, 1.0 / self.SUB, self._sub_order)
            w, Ch, Jh2 = w / self.SUB, Ch / self.SUB, Jh2 / self.SUB ** 2
            sub = [np.repeat(r, self.SUB), (lo[:, None] + w[:, None] * np.arange(self.SUB)).ravel(),
                   np.repeat(w, self.SUB), Fs[:, :-1].ravel(), Fs[:, 1:].ravel(), Gs[:, :-1].ravel(),
                   Gs[:, 1:].ravel(), Hs[:, :-1].ravel(), Hs[:, 1:].ravel(), np.repeat(E, self.SUB),
                   np.repeat(Ch, self.SUB), np.repeat(Jh2, self.SUB)]
            hopeful = np.maximum(sub[3], sub[4]) + sub[9] > best_f[sub[0]] + self._ftol(best, sub[0])
            rising = (sub[5] > 0.0) & (sub[6] < 0.0)
            pieces = []
            i = np.flatnonzero(hopeful & rising)
            if i.size:
                pieces.append(self._try(Q, best, [z[i] for z in sub]))
            cand = [np.concatenate(z) for z in zip([z[hopeful & ~rising] for z in sub], *pieces)]
        return best[2]

    # --- one point in pure Python ---------------------------------------------------------

    def nearest_boundary_st1(self, px, py, pz, seed=None):
        """``nearest_boundary1`` as ``(s, t)`` on the plane: ``_nearest_tau`` for one point, in
        pure Python, unless its branch and bound runs past ``MAX_EVALS1`` evaluations (then the
        vectorised search decides).

        Intervals carry ``f''`` at their ends too (``nan`` where unknown), so that an interval
        that the bounds of ``_no_max`` cannot clear may still be cleared by ``_monotone1``
        (both in ``_no_max1``); step 3 bisects
        (one evaluation per piece) down to the same smallest width as the vectorised search.

        ``seed``: ``(tau, x_e, f'' at x_e, (s, t))`` of a local maximum found already (by Newton
        steps ending at ``x_e``, ``regions_local``): it is the first incumbent, and its interval
        is split there as after a refined bracket instead of being refined again.
        """
        taus, hs, static, nodes, node_st = self._tables1
        n6 = 6 * len(taus)
        FG = np.dot((px, py, pz, 1.0), self._BGx1)
        if seed is None:
            k0 = k_seed = int(FG[:n6:6].argmax())
            bx, by, bz = nodes[k0]
            st0 = node_st[k0]
        else:
            tau_s, x_e, ddf_s, st0 = seed
            tau_s %= self.PERIOD
            k0 = k_seed = max(bisect.bisect_right(taus, tau_s) - 1, 0)
            bx, by, bz = projection._plane_to_sphere(*st0)
        c0 = (px - bx) ** 2 + (py - by) ** 2 + (pz - bz) ** 2
        f0 = 1.0 - 0.5 * c0
        best = [c0, f0 + self.F_TOL * min(1.0, c0 / self.CHORD2_REF), st0]   # chord², f to beat, (s, t)
        near = (FG[n6:] > f0).tobytes()     # one byte per node: 1 where it may be nearer
        j0, j1 = near.find(1), near.rfind(1)
        if j0 < 0:      # none but for round-off: k0
            j0 = j1 = k0
            near = bytes(k0) + b"\x01"
        first, last = min(j0 - 1, k_seed), max(j1, k_seed)
        if j0 and j1 - j0 < near.count(1) and last - first <= self.MAX_RUN1:
            ks = range(first, last + 1)      # one run of nodes (the usual case): one slice
            values = FG[6 * first:6 * last + 6].tolist()
        else:
            near = [j for j in range(j0, j1 + 1) if near[j]]
            ks = {(j or len(taus)) - 1 for j in near}       # node j bounds intervals j - 1 and j
            ks.update(near)
            ks.add(k_seed)
            values, first = FG[:n6].tolist(), 0
        P, work, brackets = (px, py, pz), [], []
        if seed is not None:
            i = 6 * (k_seed - first)
            E, Ch, Jh2, w_min = static[k_seed]
            fa, fb, ga, gb, ha, hb = values[i:i + 6]
            iv = (math.inf, taus[k_seed], hs[k_seed], fa, fb, ga, gb, ha, hb, E, Ch, Jh2, w_min)
            self._split1(work, iv, tau_s, x_e, ddf_s, f0)
        for k in ks:
            i = 6 * (k - first)
            fa, fb, ga, gb, ha, hb = values[i:i + 6]
            if fa > f0:     # a node nearer than the seed (every node that may be is in ks)
                bx, by, bz = nodes[k]
                c = (px - bx) ** 2 + (py - by) ** 2 + (pz - bz) ** 2
                if c < best[0]:
                    f0 = 1.0 - 0.5 * c
                    best[:] = c, f0 + self.F_TOL * min(1.0, c / self.CHORD2_REF), node_st[k]
            E, Ch, Jh2, w_min = static[k]
            u = (fa if fa > fb else fb) + E
            if u <= f0 or (k == k_seed and seed is not None):
                continue
            w = hs[k]
            if ga > 0.0 and gb < 0.0:
                brackets.append((u, taus[k], w, fa, fb, ga, gb, ha, hb, E, Ch, Jh2, w_min))
            elif not _no_max1(ga, gb, ha, hb, Ch, Jh2, w):
                work.append((u, taus[k], w, fa, fb, ga, gb, ha, hb, E, Ch, Jh2, w_min))
        if len(brackets) > 1:
            brackets.sort(reverse=True)
        for iv in brackets:     # most promising first
            if iv[0] <= best[1]:
                break
            self._bracket1(P, best, work, iv)
        evals = 0
        while work:     # pieces of brackets and intervals that may hide a maximum
            iv = work.pop()
            if iv[0] <= best[1]:
                continue
            _, lo, w, fa, fb, ga, gb, ha, hb, E, Ch, Jh2, w_min = iv
            if ga > 0.0 and gb < 0.0:
                self._bracket1(P, best, work, iv)
            elif w > w_min and not _no_max1(ga, gb, ha, hb, Ch, Jh2, w):
                evals += 1
                if evals > self.MAX_EVALS1:
                    tau = float(self._nearest_tau(np.array([P], dtype=np.float64))[0])
                    return self._outline1(tau)[:2]
                self._bisect1(P, work, iv)
        return best[2]

    MAX_EVALS1 = 48
    MAX_RUN1 = 24       # node intervals of one slice of the node scan

    @property
    def _min_width1(self):
        """Smallest piece of step 3, as a fraction of its node interval."""
        return float(self.SUB) ** -self.LEVELS

    def _bisect1(self, P, work, iv):
        """Push the two halves of interval ``iv``."""
        _, lo, w, fa, fb, ga, gb, ha, hb, E, Ch, Jh2, w_min = iv
        h = 0.5 * w
        fm, gm, hm = self._fgh1(P, lo + h)
        E, Ch, Jh2 = _piece_E1(E, Ch, w, 0.5, self._sub_order), 0.5 * Ch, 0.25 * Jh2
        work.append((max(fa, fm) + E, lo, h, fa, fm, ga, gm, ha, hm, E, Ch, Jh2, w_min))
        work.append((max(fm, fb) + E, lo + h, h, fm, fb, gm, gb, hm, hb, E, Ch, Jh2, w_min))

    def _bracket1(self, P, best, work, iv):
        """Refine the rising interval ``iv``, keep its maximum if it is the best so far (by
        chord) and push the pieces either side (``_split1``)."""
        px, py, pz = P
        tau, x_e, ddf, s, t = self._refine1(px, py, pz, *iv[1:9])
        r2 = s * s + t * t      # _sphere1(s, t), inline
        d = r2 + 1.0
        bx, by, bz = -2.0 * s / d, (1.0 - r2) / d, 2.0 * t / d
        c = (px - bx) * (px - bx) + (py - by) * (py - by) + (pz - bz) * (pz - bz)
        f = 1.0 - 0.5 * c
        if c < best[0]:
            best[:] = c, f + self.F_TOL * min(1.0, c / self.CHORD2_REF), (s, t)
        self._split1(work, iv, tau, x_e, ddf, f)

    def _split1(self, work, iv, tau, x_e, ddf, f):
        """Push the pieces of interval ``iv`` either side of its local maximum ``tau`` (``f``
        there; ``f''`` is ``ddf`` at ``x_e``, where Newton stopped) that may hide another: an
        interval with a maximum holds an odd number of critical points."""
        _, lo, w, fa, fb, ga, gb, ha, hb, E, Ch, Jh2, w_min = iv
        a = min(max((tau - lo) / w, 0.0), 1.0) if w > 0.0 else 0.0
        b = 1.0 - a
        # f'' at tau, from the one at the last Newton point (|f'''| <= J); a piece narrower
        # than |f''| / J has f'' < 0 throughout: no other critical point
        J = Jh2 / (w * w) if w > 0.0 else math.inf
        gap = abs(tau - x_e)
        ddf = min(ddf + J * gap, 0.0) if gap else min(ddf, 0.0)
        reach = -2.0 * ddf / J if J > 0.0 else math.inf    # f' keeps its sign that far from tau
        q = self._sub_order
        # nan (f'' unknown) proves nothing: the pieces stay
        if a > 0.0 and not reach > w * a and not _monotone1(ga, 0.0, ha, ddf, J, w * a):
            Ep = _piece_E1(E, Ch, w, a, q)
            work.append((max(fa, f) + Ep, lo, w * a, fa, f, ga, 0.0, ha, ddf, Ep, Ch * a, Jh2 * a * a, w_min))
        if b > 0.0 and not reach > w * b and not _monotone1(0.0, gb, ddf, hb, J, w * b):
            Ep = _piece_E1(E, Ch, w, b, q)
            work.append((max(f, fb) + Ep, tau, w * b, f, fb, 0.0, gb, ddf, hb, Ep, Ch * b, Jh2 * b * b, w_min))

    def _fgh1(self, P, tau):
        """``f``, ``f'`` and ``f''`` at ``tau`` (scalar ``_fg`` plus ``_slope_rows``)."""
        px, py, pz = P
        s, t, ds, dt, dds, ddt = self._outline1(tau)
        D = s * s + t * t + 1.0
        D1 = 2.0 * (s * ds + t * dt)
        N = pz * t - px * s + py
        g = (pz * dt - px * ds) * D - N * D1
        g1 = (pz * ddt - px * dds) * D - 2.0 * N * (ds * ds + dt * dt + s * dds + t * ddt)
        return 2.0 * N / D - py, 2.0 * g / (D * D), 2.0 * (g1 * D - 2.0 * g * D1) / (D * D * D)

    def _refine1(self, px, py, pz, lo, w, fa, fb, ga, gb, ha, hb):
        """Scalar ``_refine``: safeguarded Newton on ``g = N'D - N D'`` in ``[lo, lo + w]``,
        from the peak of the Hermite interpolant of ``f``, ``f'`` (and ``f''`` where known, not
        ``nan``) at the ends (``_hermite_peak``).

        Returns the maximum, the last point evaluated, ``f''`` there (``nan`` if unknown) and
        the outline point ``(s, t)`` of the maximum.
        """
        hi = lo + w
        x = lo + w * _hermite_peak(fa, fb, ga, gb, w, ha, hb)
        step_old = w
        outline1, tol, done = self._outline1, self.TAU_TOL, self.NEWTON_DONE
        for _ in range(self.NEWTON_ITERS):
            s, t, ds, dt, dds, ddt = outline1(x)
            N = pz * t - px * s + py
            D = s * s + t * t + 1.0
            D1 = 2.0 * (s * ds + t * dt)
            g = (pz * dt - px * ds) * D - N * D1
            g1 = (pz * ddt - px * dds) * D - 2.0 * N * (ds * ds + dt * dt + s * dds + t * ddt)
            if g == 0.0:
                xn = x
                break
            if g > 0.0:
                lo = x
            else:
                hi = x
            xn, step = 0.5 * (lo + hi), math.inf
            if -math.inf < g1 < 0.0:
                newton = x - g / g1
                if lo <= newton <= hi and abs(newton - x) < 0.5 * step_old:
                    xn, step = newton, abs(newton - x)
            step_old = abs(xn - x)
            if step <= done or hi - lo <= tol:
                break
            x = xn
        else:
            return (x, x, math.nan) + outline1(x)[:2]
        ddf = 2.0 * (g1 * D - 2.0 * g * D1) / (D * D * D)
        d = xn - x      # the first-order point at xn is off by |x''| d² / 2 <= 5e-16 ...
        if (abs(dds) + abs(ddt)) * d * d <= 1e-15 and int(x * self._PIECE_RATE) == int(xn * self._PIECE_RATE):
            return xn, x, ddf, s + ds * d, t + dt * d
        return (xn, x, ddf) + outline1(xn)[:2]      # ... unless it bends or x, xn straddle a kink


def _piece_E1(E, Ch, w, frac, q):
    """The bound ``E`` of a piece ``frac`` of an interval (``E``, ``C h = Ch``, width ``w``):
    ``f`` on a piece of width ``w'`` exceeds the higher of its ends by at most ``C w'² / 8``
    (``|f''| <= C``). Scaling the interval's own ``E`` by ``frac ** q`` holds only where the
    outline bends evenly (a superellipse with a large exponent bends almost all at its
    corners), so it serves only where ``f''`` has no bound (next to a singular kink)."""
    if Ch < math.inf:
        return Ch * w * frac * frac * 0.125
    return E * frac ** q


def _piece_E(E, Ch, w, frac, q):
    """Vectorised ``_piece_E1``."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(Ch), Ch * w * frac * frac * 0.125, E * frac ** q)


def _best_per_row(rows, values, count=1):
    """Indices (into ``rows``) of the ``count`` largest ``values`` of each distinct row."""
    order = np.lexsort((-values, rows))
    ranked = rows[order]
    start = np.searchsorted(ranked, ranked)     # first position of each row in the ranking
    return order[np.arange(order.size) - start < count]


def _hermite_peaks(fa, fb, ga, gb, w):
    """Vectorised ``_hermite_peak`` (the cubic only: per point, the quintic's Newton step costs
    more than the Newton steps on ``f`` it saves)."""
    c, d = ga * w, gb * w
    a = 3.0 * (c + d - 2.0 * (fb - fa))
    b = d - c - a
    disc = b * b - 4.0 * a * c
    with np.errstate(divide="ignore", invalid="ignore"):
        q = -0.5 * (b + np.copysign(np.sqrt(np.maximum(disc, 0.0)), b))
        x = c / q
        x = np.where((x >= 0.0) & (x <= 1.0), x, q / a)
        x = np.where((disc < 0.0) | (a == 0.0) | (q == 0.0) | ~np.isfinite(x), c / (c - d), x)
    return np.clip(x, 0.0, 1.0)


def _no_max1(ga, gb, ha, hb, Ch, Jh2, w):
    """Is an interval whose end slopes do not bracket a maximum proven free of one, either by
    the bounds of ``_no_max`` or, given ``f''`` at the ends, by ``_monotone1``?"""
    total, product = abs(ga + gb), ga * gb
    if total > Ch:
        return True
    if product < 0.0:
        return False
    # (sqrt|ga| + sqrt|gb|)² = |ga + gb| + 2 sqrt(ga gb) for slopes of one sign
    return total + 2.0 * math.sqrt(product) > Jh2 or _monotone1(ga, gb, ha, hb, Jh2 / (w * w), w)


def _monotone1(ga, gb, ha, hb, J, w):
    """Does ``f'`` keep the sign of ``ga, gb`` on an interval of width ``w``, given ``f''`` at
    its ends and ``|f'''| <= J``? Taylor bounds from each end cover the whole interval."""
    if ga + gb < 0.0:
        ga, gb, ha, hb = -ga, -gb, -ha, -hb
    if ga < 0.0 or gb < 0.0:    # signs that differ, their product underflowed to -0: nothing proven
        return False
    if not (0.0 < J < math.inf and -math.inf < ha < math.inf and -math.inf < hb < math.inf):
        return _positive_reach1(ga, ha, J) + _positive_reach1(gb, -hb, J) > w
    da, db = math.sqrt(ha * ha + 2.0 * J * ga), math.sqrt(hb * hb + 2.0 * J * gb)
    # _positive_reach1 from each end, inline (this runs for most intervals)
    reach_a = (ha + da) / J if ha >= 0.0 else 2.0 * ga / (da - ha)
    reach_b = (db - hb) / J if hb <= 0.0 else 2.0 * gb / (db + hb)
    return reach_a + reach_b > w


def _positive_reach1(g, h, J):
    """How far ``g + h x - J x² / 2`` stays positive for ``x >= 0`` (``g > 0``)."""
    if not (math.isfinite(J) and math.isfinite(h)):
        return 0.0
    if J == 0.0:
        return math.inf if h >= 0.0 else g / -h
    d = math.sqrt(h * h + 2.0 * J * g)
    return (h + d) / J if h >= 0.0 else 2.0 * g / (d - h)


def _monotone(ga, gb, ha, hb, J, w):
    """Vectorised ``_monotone1`` (``False`` wherever a bound is unknown)."""
    sign = np.where(ga + gb < 0.0, -1.0, 1.0)
    return _positive_reach(sign * ga, sign * ha, J) + _positive_reach(sign * gb, -sign * hb, J) > w


def _positive_reach(g, h, J):
    """Vectorised ``_positive_reach1``."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        d = np.sqrt(h * h + 2.0 * J * g)
        reach = np.where(h >= 0.0, (h + d) / J, 2.0 * g / (d - h))
        reach = np.where(J == 0.0, np.where(h >= 0.0, np.inf, g / -h), reach)
    return np.where(np.isfinite(J) & np.isfinite(h), reach, 0.0)


def _hermite_peak(fa, fb, ga, gb, w, ha=math.nan, hb=math.nan):
    """Where the cubic through ``f`` and ``f'`` at both ends of an interval of width ``w`` has
    its maximum, as a fraction of the interval (``ga > 0 > gb``): the root in ``[0, 1]`` of
    ``p'(x) = a x² + b x + c``.

    Given ``f''`` at both ends too (finite ``ha``, ``hb``), one Newton step on the slope of the
    quintic through all six values follows: it about squares the cubic's error."""
    c, d = ga * w, gb * w
    a = 3.0 * (c + d - 2.0 * (fb - fa))
    b = d - c - a
    disc = b * b - 4.0 * a * c
    if disc < 0.0 or a == 0.0:
        x = c / (c - d)
    else:
        q = -0.5 * (b + math.copysign(math.sqrt(disc), b))
        x = c / q if q != 0.0 else c / (c - d)
        if not 0.0 <= x <= 1.0:
            x = q / a
    x = min(max(x, 0.0), 1.0)
    if -math.inf < ha < math.inf and -math.inf < hb < math.inf:
        # p = fa + c x + a2 x² + a3 x³ + a4 x⁴ + a5 x⁵ with the end conditions F, G, H
        a2 = 0.5 * ha * w * w
        F, G, H = fb - fa - c - a2, d - c - 2.0 * a2, hb * w * w - 2.0 * a2
        a3, a4, a5 = 10.0 * F - 4.0 * G + 0.5 * H, 7.0 * G - 15.0 * F - H, 6.0 * F - 3.0 * G + 0.5 * H
        p2 = 2.0 * a2 + x * (6.0 * a3 + x * (12.0 * a4 + x * 20.0 * a5))
        if p2 < 0.0:
            xq = x - (c + x * (2.0 * a2 + x * (3.0 * a3 + x * (4.0 * a4 + x * 5.0 * a5)))) / p2
            if 0.0 <= xq <= 1.0:
                x = xq
    return x
