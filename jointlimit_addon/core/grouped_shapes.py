"""Tables of several limits of one kind, padded to one size, and their passes: each row of a
pass is corrected with its own limit (``grouped.clamp_groups``).

- Outlines of arcs and segments (RECT, OVAL, POLYGON, either fit; ``OutlineTables``): the
  nearest vertex or edge foot of each row's own outline in one pass [000 §4.1-4.5], with the
  arithmetic of the single-limit kernel (``regions._nearest_on_sphere``): the same floats.
- Ellipses (ELLIPSE, either fit; ``EllipseTables``): the short way of ``regions_local`` for
  each row's own ellipse [000 §4.4, §4.6.1]: Newton on ``f = P·B`` from the best node of the
  row's outline, certified by the outline's tangent (certificate 1); a row the tangent does not
  certify takes its limit's own search.

Both fits of the ellipse are one curve family: ``(s, t) = (cs + a cos th, ct + b sin th)`` with
``a = a+`` where ``cos th >= 0`` else ``a-``, ``b = b+`` where ``sin th >= 0`` else ``b-`` (the
inscribed ellipse [000 eq.7-8]: centre ``(sb, tb)``, ``a± = sa``, ``b± = ta``; the AXES fit:
centre 0, four quarter-ellipses, ``regions_axes``); ``th`` is the inscribed outline's own
parameter and ``pi / 2`` times the AXES one's.

- Hinges (``HingeTables``): ``HingeLimit.clamp`` with each row's own axis and range, the check
  included.
"""

import math

import numpy as np

from . import quat
from .euler_limits import _ANGLE_TOL, TAU, HingeLimit
from .limits import TWIST_TOL
from .projection import MATH, NP, TWO_PI, _sphere_to_plane
from .regions import _candidate_point, _OutlineRegion
from .regions_axes import EllipseAxesRegion
from .regions_local import newton_g, newton_step, tangent_separates
from .regions_smooth import EllipseRegion

OUTLINES_MAX_CANDIDATES = 24    # vertices + edges; larger outlines alone (the padded pass costs more from ~24)


class _Twists:
    """The twist ranges of the limits, one row each (``grouped._twist_clamp``)."""

    def __init__(self, limits):
        twist = [limit.twist or (-np.inf, np.inf) for limit in limits]
        self.lo, self.hi = (np.array(column) for column in zip(*twist))
        self.free = np.array([limit.twist is None for limit in limits])
        self.fixed = np.array([limit.fix_twist for limit in limits])


class TwistTables:
    """The twist ranges of swing-twist limits widened by ``TWIST_TOL``, one row each, for the
    check of ``JointLimit._twist_inside`` on rows of several limits at once (``inside``)."""

    def __init__(self, limits):
        twist = [(0.0, 0.0) if limit.fix_twist else limit.twist or (-np.inf, np.inf) for limit in limits]
        lo, hi = (np.array(column) for column in zip(*twist))
        self.lo, self.hi = lo - TWIST_TOL, hi + TWIST_TOL   # the same floats as each limit's own

    def inside(self, psi, which):
        """``JointLimit._twist_inside`` of each twist ``psi`` (in ``(-pi, pi]``, from
        ``projection._parts``) with its limit ``which``: a fixed twist is the range ``[0, 0]``
        (``psi -/+ 2 pi`` then lie beyond it), a free one ``(-inf, inf)`` (``False`` only for NaN)."""
        lo, hi = self.lo[which], self.hi[which]
        return ((psi >= lo) & (psi <= hi)) | (psi - TWO_PI >= lo) | (psi + TWO_PI <= hi)


# --- outlines of arcs and segments ---------------------------------------------------------


def is_outline(limit):
    """Whether ``limit``'s OPTIMAL correction goes in the outline pass (small outlines only:
    each row pays for the largest outline of the pass)."""
    if limit.correction != "OPTIMAL" or not isinstance(limit.region, _OutlineRegion):
        return False
    outline = limit.region.outline
    return len(outline.vertices3) + len(outline.edges3) <= OUTLINES_MAX_CANDIDATES


class OutlineTables(_Twists):
    """The outlines of several outline limits, padded to one size: vertices ``(L, V, 3)``
    (repeats of the first vertex, never nearer than it), edges ``(L, E, 9)``
    (``regions._Outline.edges3``; padding never holds a foot: ``m = 0``, ``m·A = 1``), candidate
    points ``(L, V + E, 7)`` (``_Outline.candidates``, edges from column ``V``)."""

    def __init__(self, limits):
        super().__init__(limits)
        outlines = [limit.region.outline for limit in limits]
        n_v = max(len(o.vertices3) for o in outlines)
        n_e = max(len(o.edges3) for o in outlines)
        self.vertices = np.empty((len(limits), n_v, 3))
        self.edges = np.zeros((len(limits), n_e, 9))
        self.edges[..., 5] = 1.0
        self.table = np.zeros((len(limits), n_v + n_e, 7))
        for i, outline in enumerate(outlines):
            vertices, edges = np.array(outline.vertices3), np.array(outline.edges3)
            self.vertices[i] = vertices[0]
            self.vertices[i, :len(vertices)] = vertices
            self.edges[i, :len(edges)] = edges
            table = np.array(outline.candidates(MATH)).T
            self.table[i, :len(vertices)] = table[:len(vertices)]
            self.table[i, n_v:n_v + len(edges)] = table[len(vertices):]

    def nearest(self, px, py, pz, which):
        """``(s, t)`` of ``regions._nearest_on_sphere`` of each unit point on the outline
        ``which`` (the same candidates in the same order, the first nearest kept: the same
        floats; ``nearest_xyz``)."""
        return _sphere_to_plane(*self.nearest_xyz(px, py, pz, which), NP)

    def nearest_xyz(self, px, py, pz, which):
        """The nearest points of ``nearest`` on the sphere."""
        px, py, pz = px[:, None], py[:, None], pz[:, None]
        vx, vy, vz = np.moveaxis(self.vertices[which], -1, 0)
        dx, dy, dz = px - vx, py - vy, pz - vz
        d_vertex = dx * dx + dy * dy + dz * dz
        nx, ny, nz, h, rho, ma, mx, my, mz = np.moveaxis(self.edges[which], -1, 0)
        k = px * nx + py * ny + pz * nz
        ex, ey, ez = px - k * nx, py - k * ny, pz - k * nz
        el = np.sqrt(ex * ex + ey * ey + ez * ez)
        on_edge = (el > 1e-300) & ((px * mx + py * my + pz * mz) * rho >= ma * el)
        dk, dr = k - h, el - rho
        d_edge = np.where(on_edge, dk * dk + dr * dr, np.inf)
        code = np.argmin(np.concatenate((d_vertex, d_edge), axis=1), axis=1)
        rows = self.table[which, code].T      # each row's own candidate, as the kernel's table columns
        return _candidate_point(px[:, 0], py[:, 0], pz[:, 0], np.arange(len(code)), rows, NP)


# --- ellipses -------------------------------------------------------------------------------


def is_ellipse(limit):
    """Whether ``limit``'s OPTIMAL correction goes in the ellipse pass."""
    return (limit.correction == "OPTIMAL" and isinstance(limit.region, EllipseRegion)
            and bool(limit.region._coarse1))


class EllipseTables(_Twists):
    """The ellipses of several ELLIPSE limits (either fit): per limit the frame
    ``(cs, ct, a+, a-, b+, b-)`` (module docstring), and the nodes of its outline's global
    search (``regions_search``) padded to one count with repeats of the first (never better
    than it): ``th``, the outline points ``B`` and the rows ``G``, ``H`` with ``f' = P·G``,
    ``f'' = P·H`` in ``th``."""

    def __init__(self, limits):
        super().__init__(limits)
        regions = [limit.region for limit in limits]
        n = max(len(region._tau) for region in regions)
        self.frame = np.empty((len(limits), 6))
        self.th, self.B, self.G, self.H = np.empty((len(limits), n)), *np.empty((3, len(limits), n, 3))
        self.done, self.scale = np.empty(len(limits)), np.empty(len(limits))
        for i, region in enumerate(regions):
            if isinstance(region, EllipseAxesRegion):
                scale = 0.5 * math.pi   # d th / d tau
                self.frame[i] = (0.0, 0.0, *region._half)
            else:
                scale = 1.0
                self.frame[i] = region.sb, region.tb, region.sa, region.sa, region.ta, region.ta
            G0, _, H0, _ = region._GH_T
            for table, rows in ((self.th, region._tau * scale), (self.B, region._Bx[:, :-1].T),
                                (self.G, G0 / scale), (self.H, H0 / (scale * scale))):
                table[i, :len(rows)] = rows
                table[i, len(rows):] = rows[0]
            self.done[i], self.scale[i] = region.NEWTON_DONE * scale, scale
        self.regions = regions
        self.big = 2.0 * math.pi / EllipseRegion.N_COARSE     # ``_max_step1``, one start interval, in th

    def _outline(self, th, cs, ct, a_p, a_m, b_p, b_m):
        """``(s, t, ds, dt, dds, ddt)`` of each row's ellipse at ``th`` (derivatives in ``th``)."""
        c, s = np.cos(th), np.sin(th)
        a, b = np.where(c >= 0.0, a_p, a_m), np.where(s >= 0.0, b_p, b_m)
        ac, bs = a * c, b * s
        return cs + ac, ct + bs, -a * s, b * c, -ac, -bs

    def nearest(self, px, py, pz, which):
        """``(s, t)`` of the geodesic nearest point of each unit point (outside its own
        limit ``which``) on that limit's ellipse: ``regions_local``'s short way, all rows at once
        (Newton from the best node, certificate 1; a row whose cap holds the pole, certificate 2
        of its region on floats); each row neither certifies takes its region's one-point way
        (the global search; ``grouped`` sends a limit with many rows outside to its own
        vectorised path)."""
        P = np.stack((px, py, pz), axis=-1)
        k = np.argmax(np.einsum("ij,ikj->ik", P, self.B[which]), axis=1)     # the best of each row's nodes
        df, ddf = np.einsum("ij,ij->i", P, self.G[which, k]), np.einsum("ij,ij->i", P, self.H[which, k])
        th = self.th[which, k] + newton_step(df, ddf, self.big)
        frame, done = tuple(self.frame[which].T), self.done[which]
        going = np.ones(len(th), dtype=bool)       # rows still stepping (``_newton``: a row stops once its step is done)
        settled = np.zeros(len(th), dtype=bool)
        for _ in range(EllipseRegion.LOCAL_ITERS):     # every row each step: cheaper than following the few left
            g, g1, D = newton_g(px, py, pz, *self._outline(th, *frame))
            step = np.where(going, newton_step(g, g1, self.big), 0.0)
            th += step
            end = going & (np.abs(step) <= done)
            settled |= end & (g1 < 0.0) & (g1 > -np.inf)
            going &= ~end
            if not going.any():
                break
        s, t, ds, dt = self._outline(th, *frame)[:4]
        r2 = s * s + t * t
        f = (-2.0 * s * px + (1.0 - r2) * py + 2.0 * t * pz) / (r2 + 1.0)
        pole_free = py + f > EllipseRegion.POLE_MARGIN     # the cap of nearer points holds no pole: certificate 1
        proved = settled & pole_free & tangent_separates(P, s, t, ds, dt, EllipseRegion.SIDE_MARGIN)
        ddf = 2.0 * g1 / (D * D)    # f'' in th at the last point evaluated (within ``done`` of th)
        for i in np.flatnonzero(~proved).tolist():     # each the short way of its region, on floats
            region, scale, point = self.regions[which[i]], float(self.scale[which[i]]), P[i].tolist()
            if not (settled[i] and not pole_free[i]
                    and region._nodes_bound1(*point, float(th[i]) / scale, float(f[i]), float(ddf[i]) * scale * scale)):
                s[i], t[i] = region.nearest_boundary_st1(*point)
        return s, t


# --- hinges ---------------------------------------------------------------------------------


def is_hinge(limit):
    return type(limit) is HingeLimit


class HingeTables:
    """The axes ``(L, 3)`` and angle ranges of several hinges."""

    def __init__(self, limits):
        self.axis = np.array([limit.axis for limit in limits])
        self.lo, self.hi = np.array([limit.angle for limit in limits]).T
        self.width = self.hi - self.lo      # as ``_in_arc`` and ``_clamp_arc`` compute it

    def clamp(self, q, which):
        """``HingeLimit.clamp`` of each unit quaternion of ``q (n, 4)`` with its hinge ``which``
        (the same formulas; each rotation inside returned unchanged)."""
        axis, lo, hi, width = self.axis[which], self.lo[which], self.hi[which], self.width[which]
        w, v = q[:, 0], q[:, 1:]
        theta = np.pi - np.mod(np.pi - 2.0 * np.arctan2(np.einsum("ij,ij->i", v, axis), w), TAU)   # hinge_angle
        d = np.mod(theta - lo, TAU)
        full = width >= TAU - _ANGLE_TOL
        in_arc = full | (d <= width + _ANGLE_TOL) | (d >= TAU - _ANGLE_TOL)
        inside = in_arc & (quat.angle_between(q, self._about_axis(axis, theta)) <= _ANGLE_TOL)
        nearer_hi = (d - width) <= (TAU - d)
        theta = np.where((width >= TAU) | (d <= width), lo + d, np.where(nearer_hi, hi, lo))   # _clamp_arc
        out = self._about_axis(axis, theta)
        out = np.where(np.add.reduce(out * q, axis=-1, keepdims=True) < 0.0, -out, out)
        return np.where(inside[:, None], q, out)

    @staticmethod
    def _about_axis(axis, theta):
        half = 0.5 * theta[:, None]
        return np.concatenate((np.cos(half), np.sin(half) * axis), axis=-1)


# --- the tables, kept per set of limits -----------------------------------------------------


TABLES_KEPT = 64     # per kind: the playback clamp's batches hold the limits of the bones that changed

_tables = {}    # kind -> {tuple of limits: tables}, least recently used first (the limits kept alive with them)


def forget_tables():
    """Let go of the padded tables (and the limits they keep)."""
    _tables.clear()


def tables(kind, limits):
    """The tables of ``kind`` (``OutlineTables``, ``EllipseTables``, ``HingeTables``,
    ``TwistTables``) for ``limits``, kept."""
    kept = _tables.setdefault(kind, {})
    key = tuple(limits)
    found = kept.pop(key, None)
    if found is None:
        found = kind(limits)
        if len(kept) >= TABLES_KEPT:
            del kept[next(iter(kept))]
    kept[key] = found       # the most recently used last
    return found
