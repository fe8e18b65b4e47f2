"""One point, the short way: a local maximum of ``f = P·B(tau)`` and a certificate that it is
the global one (the OPTIMAL correction of ``regions_smooth``; ``regions_search`` defines ``f``
and does the global search).

Newton on ``f' = 0`` starts from the best of a few outline nodes (plain Python). Its maximum
``B`` is certified in one of two ways:

1. **Convexity** (most points). The smooth regions are convex on the plane, and the map from
   the plane to the sphere [000 eq.2] is a stereographic projection, which maps circles on the
   sphere to circles on the plane. The cap of the points nearer to ``P`` than ``B``,
   ``{X : P·X > f(B)}``, is a disk on the plane unless it holds the projection's pole
   ``(0, -1, 0)``, that is while ``P.y + f(B) > 0``. At a critical point of ``f`` the disk
   touches the outline at ``B``, so the outline's tangent there is the disk's tangent too. If
   ``P``'s own point ``(s_P, t_P)`` (inside the disk) lies strictly outside that tangent, the
   whole disk does, the convex region lies on the other side, and no point of the region is
   nearer to ``P`` than ``B``.
2. **Node bounds** (points whose cap holds the pole: far from the region, where no tangent can
   separate the two). The bounds of the global search's node scan clear every node interval
   whose outline cannot rise above ``f(B)``; each other interval must be free of a maximum by
   its end slopes (``_no_max1``), and the interval of ``B``, either side of it, by the Taylor
   bounds of ``f'`` from ``B`` (as after a refined bracket of the global search).

A maximum neither certifies seeds the global search (``regions_search``): it is the first
incumbent, and the search finishes the proof or finds the nearer point. A Newton run that does
not settle leaves the global search to start from its own best node.
"""

import bisect
import math

import numpy as np

from .regions_search import _monotone, _monotone1, _no_max1


def newton_g(px, py, pz, s, t, ds, dt, dds, ddt):
    """``g = N'D - N D'`` (``f' = 2 g / D²``, see ``regions_search``), ``g'`` and ``D`` at
    outline points ``(s, t)`` with their derivatives, for the unit points ``P``."""
    N = pz * t - px * s + py
    D = s * s + t * t + 1.0
    g = (pz * dt - px * ds) * D - 2.0 * N * (s * ds + t * dt)
    g1 = (pz * ddt - px * dds) * D - 2.0 * N * (ds * ds + dt * dt + s * dds + t * ddt)
    return g, g1, D


def newton_step(g, g1, big):
    """Newton's step ``-g / g'`` toward a maximum of ``f`` (arrays), at most ``big``; uphill by
    ``big`` where ``f`` is not concave (``g'`` not negative)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((g1 < 0.0) & (g1 > -np.inf), np.clip(-g / g1, -big, big), np.where(g > 0.0, big, -big))


def tangent_separates(Q, s, t, ds, dt, margin):
    """Certificate 1 for the rows of ``Q``: does the outline's tangent at ``(s, t)`` (direction
    ``(ds, dt)``) leave each point's own plane point strictly outside, by ``margin`` relatively
    (``_CertifiedLocalSearch._tangent_separates1``)?"""
    px, py, pz = Q.T
    with np.errstate(divide="ignore", invalid="ignore"):   # the pole: nan, not proved
        e = 1.0 / np.where(py >= 0.0, 1.0 + py, (px * px + pz * pz) / (1.0 - py))
        ex, ey = -px * e - s, pz * e - t
        cross = ds * ey - dt * ex
        return cross < -margin * np.sqrt((ds * ds + dt * dt) * (ex * ex + ey * ey))


class _CertifiedLocalSearch:
    """Mixed into ``regions_smooth._SmoothRegion`` before ``regions_search._OutlineSearch``,
    whose node tables (``_tau``, ``_Bx``, ``_slope_rows``), outline (``_outline1``, ``PERIOD``)
    and one-point search it uses. Every outline it serves must bound a convex region on the
    plane, counter-clockwise."""

    N_COARSE = 16       # nodes of the start search
    LOCAL_ITERS = 16
    # certificate 1's margins: relative distance of (s_P, t_P) from the tangent, and P.y + f
    SIDE_MARGIN = 1e-7
    POLE_MARGIN = 1e-9
    MAX_NEAR1 = 8       # certificate 2 leaves it to the search when more nodes than this may rise above f

    def _build_local1(self):
        """The start nodes ``(tau, x, y, z, (f' and f'' rows))``, every few nodes of the global
        search (``f = P·B``, ``f' = P·G``, ``f'' = P·H`` there); none where the outline has
        points of unbounded curvature (Newton's convergence there is not the quadratic one the
        certificates and the seed rely on)."""
        self._max_step1 = self.PERIOD / self.N_COARSE
        if len(self._singular):
            self._coarse1 = ()
            return
        step = max(1, len(self._tau) // self.N_COARSE)
        tau = self._tau[::step]
        G, H = self._slope_rows(np.nextafter(tau, np.inf))
        rows = zip(tau.tolist(), self._Bx[:, :-1:step].T.tolist(), G.T.tolist(), H.T.tolist())
        self._coarse1 = tuple((t, *b, (*g, *h)) for t, b, g, h in rows)

    def _short_way(self, Q):
        """The short way of ``nearest_boundary_st1`` for the rows of ``Q`` (unit points
        outside) at once, from the best node of the global search's scan (one matrix product
        serves both certificates): Newton, then certificate 1 (the tangent) or 2 (the node
        bounds). Returns the outline parameter of each row and which rows a certificate proves;
        the others are for the global search."""
        if not self._coarse1:   # unbounded curvature somewhere (see ``_build_local1``)
            return np.zeros(len(Q)), np.zeros(len(Q), dtype=bool)
        F = Q @ self._Bx
        k = np.argmax(F[:, :-1], axis=1)
        G0, _, H0, _ = self._GH_T
        df, ddf = np.einsum("ij,ij->i", Q, G0[k]), np.einsum("ij,ij->i", Q, H0[k])
        tau = self._tau[k] + newton_step(df, ddf, self._max_step1)
        settled, ddf = self._newton(Q, tau)
        s, t, ds, dt = self._outline(tau)[:4]
        px, py, pz = Q.T
        r2 = s * s + t * t
        f = (-2.0 * s * px + (1.0 - r2) * py + 2.0 * t * pz) / (r2 + 1.0)
        proved = settled & (py + f > self.POLE_MARGIN) & self._tangent_separates(Q, s, t, ds, dt)
        rest = np.flatnonzero(settled & ~proved)
        if rest.size:
            proved[rest] = self._nodes_bound(Q[rest], F[rest], tau[rest], f[rest], ddf[rest])
        return tau, proved

    def _newton(self, Q, tau):
        """``_newton1`` on the rows of ``Q`` from ``tau`` (updated in place); which rows
        settled on a maximum."""
        done, big = self.NEWTON_DONE, self._max_step1
        settled = np.zeros(len(tau), dtype=bool)
        ddf = np.zeros(len(tau))
        act = np.arange(len(tau))
        for _ in range(self.LOCAL_ITERS):
            x = tau[act]
            g, g1, D = newton_g(*Q[act].T, *self._outline(x))
            concave = (g1 < 0.0) & (g1 > -np.inf)
            step = newton_step(g, g1, big)
            tau[act] = x + step
            end = np.abs(step) <= done
            settled[act[end & concave]] = True
            ddf[act] = 2.0 * g1 / (D * D)   # at x; g is ~0 there once settled
            act = act[~end]
            if act.size == 0:
                break
        return settled, ddf

    def _nodes_bound(self, Q, F, tau, f, ddf):
        """Vectorised ``_nodes_bound1`` (certificate 2) for the rows of ``Q`` with their maxima
        at ``tau`` (``f`` and ``f''`` there): a node interval whose bound rises above ``f`` must
        be free of a maximum by its end slopes, the maximum's own by the Taylor bounds of
        ``f'`` either side of it (``F``: ``f`` at the nodes, ``Q @ _Bx``)."""
        n = self._tau.size
        beat = f + self.F_TOL * np.minimum(1.0, (2.0 - 2.0 * f) / self.CHORD2_REF)
        tau = tau % self.PERIOD
        k_star = np.clip(np.searchsorted(self._tau, tau, side="right") - 1, 0, n - 1)
        r, k = np.nonzero(np.maximum(F[:, :-1], F[:, 1:]) + self._E > beat[:, None])
        keep = k != k_star[r]
        r, k = r[keep], k[keep]
        ga, gb, ha, hb = (np.einsum("ij,ij->i", Q[r], rows[k]) for rows in self._GH_T)
        bad = ((F[r, k] > beat[r]) | (F[r, k + 1] > beat[r]) | ((ga > 0.0) & (gb < 0.0))
               | ~self._no_max(ga, gb, ha, hb, self._Ch[k], self._Jh2[k], self._h[k]))
        proved = np.ones(len(Q), dtype=bool)
        proved[r[bad]] = False
        ga, gb, ha, hb = (np.einsum("ij,ij->i", Q, rows[k_star]) for rows in self._GH_T)
        w = self._h[k_star]
        J = self._Jh2[k_star] / (w * w)
        zero = np.zeros_like(f)
        with np.errstate(divide="ignore", invalid="ignore"):
            ddf = np.minimum(ddf + J * self.NEWTON_DONE, 0.0)
            reach = np.where(J > 0.0, -2.0 * ddf / J, np.inf)
        left = tau - self._tau[k_star]
        right = w - left
        for side, ends in ((left, (ga, zero, ha, ddf)), (right, (zero, gb, ddf, hb))):
            with np.errstate(invalid="ignore"):
                proved &= ~((side > 0.0) & ~(reach > side) & ~_monotone(*ends, J, side))
        return proved

    def _tangent_separates(self, Q, s, t, ds, dt):
        """Vectorised ``_tangent_separates1``."""
        return tangent_separates(Q, s, t, ds, dt, self.SIDE_MARGIN)

    def nearest_boundary_st1(self, px, py, pz):
        """``(s, t)`` of the geodesic nearest outline point of the unit point ``P`` outside: the
        local maximum Newton finds from the best start node if a certificate proves it global,
        else the global search seeded with it (module docstring)."""
        best, tau = -2.0, None
        for tau_k, bx, by, bz, slopes_k in self._coarse1:
            f = px * bx + py * by + pz * bz
            if f > best:
                best, tau, slopes = f, tau_k, slopes_k
        if tau is None:
            return super().nearest_boundary_st1(px, py, pz)
        gx, gy, gz, hx, hy, hz = slopes
        found = self._newton_from1(px, py, pz, tau, px * gx + py * gy + pz * gz, px * hx + py * hy + pz * hz)
        if found is None:
            return super().nearest_boundary_st1(px, py, pz)
        tau, x_e, ddf, s, t, ds, dt = found
        r2 = s * s + t * t
        f = (-2.0 * s * px + (1.0 - r2) * py + 2.0 * t * pz) / (r2 + 1.0)
        if py + f > self.POLE_MARGIN:
            if self._tangent_separates1(px, py, pz, s, t, ds, dt):
                return s, t
        elif self._nodes_bound1(px, py, pz, tau, f, ddf):
            return s, t
        return super().nearest_boundary_st1(px, py, pz, seed=(tau, x_e, ddf, (s, t)))

    def _newton_from1(self, px, py, pz, tau, df, ddf):
        """``_newton1`` after a first step from the node ``tau``, where ``f' = df`` and
        ``f'' = ddf``."""
        big = self._max_step1
        tau += min(max(-df / ddf, -big), big) if -math.inf < ddf < 0.0 else big if df > 0.0 else -big
        return self._newton1(px, py, pz, tau)

    def _newton1(self, px, py, pz, tau):
        """Newton on ``g = N'D - N D'`` (``f' = 2 g / D²``, see ``regions_search``) from
        ``tau``, steps at most one start interval, uphill where ``f`` is not concave. Once a step
        is below ``NEWTON_DONE`` (``_refine1``'s rule) returns the maximum as
        ``(tau, x_e, f'' at x_e, s, t, ds, dt)``, ``x_e`` the last point evaluated; else
        ``None``."""
        outline1, done, big = self._outline1, self.NEWTON_DONE, self._max_step1
        for _ in range(self.LOCAL_ITERS):
            s, t, ds, dt, dds, ddt = outline1(tau)
            N = pz * t - px * s + py
            D = s * s + t * t + 1.0
            g = (pz * dt - px * ds) * D - 2.0 * N * (s * ds + t * dt)
            g1 = (pz * ddt - px * dds) * D - 2.0 * N * (ds * ds + dt * dt + s * dds + t * ddt)
            if -math.inf < g1 < 0.0:
                step = min(max(-g / g1, -big), big)
            else:
                step = big if g > 0.0 else -big
            tau += step
            if abs(step) <= done:
                break
        else:
            return None
        if not g1 < 0.0:
            return None     # not a maximum
        ddf = 2.0 * g1 / (D * D)    # g is ~0 here
        x_e = tau - step
        if (abs(dds) + abs(ddt)) * step * step <= 1e-15 and int(x_e * self._PIECE_RATE) == int(tau * self._PIECE_RATE):
            return tau, x_e, ddf, s + ds * step, t + dt * step, ds, dt
        return (tau, x_e, ddf, *outline1(tau)[:4])

    def _tangent_separates1(self, px, py, pz, s, t, ds, dt):
        """Certificate 1: does the outline's tangent at ``(s, t)`` (direction ``(ds, dt)``)
        leave ``P``'s point strictly outside, the region inside (module docstring)?"""
        e = 1.0 / (1.0 + py if py >= 0.0 else (px * px + pz * pz) / (1.0 - py))    # 1 + P.y > 0
        ex, ey = -px * e - s, pz * e - t
        cross = ds * ey - dt * ex   # < 0: (s_P, t_P) right of the tangent, outside
        return cross < -self.SIDE_MARGIN * math.sqrt((ds * ds + dt * dt) * (ex * ex + ey * ey))

    def _nodes_bound1(self, px, py, pz, tau, f, ddf):
        """Certificate 2: can no node interval of the global search hold a point with ``f``
        above the maximum's (``f`` at ``tau``, ``f''`` there ``ddf``)? Module docstring."""
        taus, hs, static, _, _ = self._tables1
        n = len(taus)
        FG = np.dot((px, py, pz, 1.0), self._BGx1)
        beat = f + self.F_TOL * min(1.0, (2.0 - 2.0 * f) / self.CHORD2_REF)     # as the global search
        near = (FG[6 * n:] > beat).tobytes()    # node j bounds intervals j - 1 and j
        if near.count(1) > self.MAX_NEAR1:
            return False
        tau %= self.PERIOD
        k_star = bisect.bisect_right(taus, tau) - 1
        ks = {k_star}
        j = near.find(1)
        while j >= 0:
            ks.update(((j or n) - 1, j))
            j = near.find(1, j + 1)
        for k in ks:
            fa, fb, ga, gb, ha, hb = FG[6 * k:6 * k + 6].tolist()
            _, Ch, Jh2, _ = static[k]
            w = hs[k]
            if k != k_star:
                if fa > beat or fb > beat or (ga > 0.0 and gb < 0.0) or not _no_max1(ga, gb, ha, hb, Ch, Jh2, w):
                    return False
                continue
            # f' keeps its sign within reach of tau (|f'''| <= J); beyond, the Taylor bounds
            J = Jh2 / (w * w)
            ddf = min(ddf + J * self.NEWTON_DONE, 0.0)
            reach = -2.0 * ddf / J if J > 0.0 else math.inf
            left = tau - taus[k]
            right = w - left
            if left > 0.0 and not reach > left and not _monotone1(ga, 0.0, ha, ddf, J, left):
                return False
            if right > 0.0 and not reach > right and not _monotone1(0.0, gb, ddf, hb, J, right):
                return False
        return True
