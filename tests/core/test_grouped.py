"""Many rotations under many limits in one pass (the live-limit batch, issue 22)."""

import math

import numpy as np
import pytest

from jointlimit_addon.core import quat
from jointlimit_addon.core.euler_limits import EulerLimit, HingeLimit, QuatSwingLimit
from jointlimit_addon.core.grouped import SINGLE_MAX_SMOOTH, clamp_groups
from jointlimit_addon.core.limits import JointLimit

D = math.radians


def _limits():
    swing = dict(swing_x=(D(-20), D(110)), swing_z=(D(-40), D(30)), twist=(D(-25), D(35)))
    return [
        JointLimit(shape="RECT", **swing),
        JointLimit(shape="ELLIPSE", **swing),
        JointLimit(shape="SUPERELLIPSE", correction="SIMPLE", **swing),
        JointLimit(shape="OVAL", fix_twist=True, **swing),
        JointLimit(shape="POLYGON", outline=[(-0.3, -0.2), (0.5, -0.2, 0.5), (0.6, 0.4), (-0.2, 0.7, -0.3)]),
        HingeLimit(angle=(D(5), D(140))),
        EulerLimit(x=(D(-30), D(60)), y=(D(-20), D(20)), z=(D(-45), D(45))),
        QuatSwingLimit(max_swing=D(50), twist=(D(-20), D(20))),
    ]


@pytest.mark.parametrize("group_size", [3, SINGLE_MAX_SMOOTH + 5])
def test_each_rotation_is_clamped_by_its_own_limit(group_size):
    limits = _limits()
    n = group_size * len(limits) + 7                  # 7 rotations in no group
    q = quat.random_unit(n, 3)
    q[::5] = quat.random_unit(len(q[::5]), 4) * [1.0, 0.05, 0.05, 0.05]   # some near rest, inside
    q = quat.normalize(q)
    order = np.random.default_rng(0).permutation(n)
    groups = [(limit, order[i * group_size:(i + 1) * group_size]) for i, limit in enumerate(limits)]
    out = clamp_groups(q, groups)
    for limit, rows in groups:
        expected = np.array([limit.clamp(qi) for qi in q[rows]])
        assert np.abs(out[rows] - expected).max() <= 1e-12
        assert np.all(limit.contains(out[rows]) | (quat.angle_between(out[rows], limit.clamp(out[rows])) < 1e-9))
    free = order[len(limits) * group_size:]
    assert np.array_equal(out[free], q[free])
    inside = np.concatenate([rows[limit.contains(q[rows])] for limit, rows in groups])
    assert len(inside) and np.abs(out[inside] - q[inside]).max() <= 1e-9    # inside: kept


def test_empty_groups_and_no_groups():
    q = quat.random_unit(5, 1)
    assert np.array_equal(clamp_groups(q, []), q)
    assert np.array_equal(clamp_groups(q, [(_limits()[0], np.zeros(0, dtype=np.int64))]), q)


def test_groups_with_every_rotation_inside():
    """Enough rotations for the shared check, none of them outside: nothing is corrected."""
    limit = _limits()[1]
    q = quat.normalize(np.c_[np.ones(40), np.random.default_rng(5).uniform(-0.02, 0.02, (40, 3))])
    assert limit.contains(q).all() and _limits()[0].contains(q).all()
    assert np.array_equal(clamp_groups(q, [(limit, np.arange(20)), (_limits()[0], np.arange(20, 40))]), q)


def _outline_limits():
    """Outline limits of every kind the batch corrects together: RECT, OVAL (both fits),
    POLYGON with arcs, with a twist range, a free twist or a fixed one."""
    return [
        JointLimit(shape="RECT", swing_x=(D(-45), D(30)), swing_z=(D(-20), D(20)), twist=(D(-25), D(25))),
        JointLimit(shape="RECT", swing_x=(D(-10), D(150)), swing_z=(D(-80), D(5)), twist=None),
        JointLimit(shape="OVAL", swing_x=(D(-30), D(110)), swing_z=(D(-35), D(40)), twist=(D(-40), D(40))),
        JointLimit(shape="OVAL", fit="AXES", swing_x=(D(-30), D(90)), swing_z=(D(-45), D(10)), twist=(D(-60), D(0))),
        JointLimit(shape="OVAL", fit="AXES", swing_x=(D(-60), D(170)), swing_z=(D(-5), D(120)), fix_twist=True),
        JointLimit(shape="POLYGON", outline=[(-0.3, -0.2), (0.5, -0.2, 0.5), (0.6, 0.4), (-0.2, 0.7, -0.3)],
                   twist=(D(170), D(180))),
    ]


def test_outline_limits_are_corrected_together_as_each_alone(monkeypatch):
    """Rotations outside outline limits of different shapes, a few per limit, go through one
    pass with each row's own outline and twist range: the same as each limit's own clamp, the
    pole and rotations with only the twist outside included."""
    import jointlimit_addon.core.grouped as grouped

    calls = []
    together = grouped._together_pass
    monkeypatch.setattr(grouped, "_together_pass", lambda *args: calls.append(args[-1]) or together(*args))
    limits = _outline_limits() + [HingeLimit(angle=(D(5), D(140)))]
    rng = np.random.default_rng(8)
    q = quat.random_unit(6 * len(limits), 11)
    q[0] = (0.0, 1.0, 0.0, 0.0)                                 # the pole (swing 180°)
    q[7] = (math.cos(D(40)), 0.0, math.sin(D(40)), 0.0)          # twist 80° only
    q[8] = -q[8]                                                 # the other sign
    order = rng.permutation(len(q))
    groups = [(limit, order[6 * i:6 * (i + 1)]) for i, limit in enumerate(limits)]
    out = clamp_groups(q, groups)
    assert calls == [grouped.OutlineTables]
    for limit, rows in groups:
        expected = np.array([limit.clamp(qi) for qi in q[rows]])
        assert np.abs(out[rows] - expected).max() <= 1e-12
        assert np.all(np.sign(np.einsum("ij,ij->i", out[rows], q[rows])) >= 0)
    corrected = sum(not limit.contains(q[rows]).all() for limit, rows in groups[:-1])
    assert corrected == len(groups) - 1


def test_outline_swing_points_are_the_single_limit_kernels_floats():
    """The padded outlines find the same nearest points, to the last bit, as each outline alone
    (the float path and the vectorised one)."""
    from jointlimit_addon.core import grouped_shapes
    from jointlimit_addon.core.projection import MATH, NP, _parts
    from jointlimit_addon.core.regions import _nearest_on_sphere

    limits = _outline_limits()
    q = quat.random_unit(400, 12)
    px, py, pz = _parts(*q.T, NP)[:3]
    which = np.arange(len(q)) % len(limits)
    tables = grouped_shapes.tables(grouped_shapes.OutlineTables, limits)
    got = np.stack(tables.nearest_xyz(px, py, pz, which), axis=-1)
    for i, limit in enumerate(limits):
        mine = which == i
        alone = np.stack(_nearest_on_sphere(px[mine], py[mine], pz[mine], limit.region.outline, NP), axis=-1)
        assert np.array_equal(got[mine], alone)
        one = [_nearest_on_sphere(a, b, c, limit.region.outline, MATH) for a, b, c in zip(px[mine], py[mine], pz[mine])]
        assert np.array_equal(got[mine], np.array(one))


def test_many_outline_rotations_go_in_chunks(monkeypatch):
    """More rotations than a chunk: the same results as one chunk."""
    import jointlimit_addon.core.grouped as grouped

    limits = _outline_limits()
    q = quat.random_unit(600, 13)
    groups = [(limit, np.arange(i, len(q), len(limits))) for i, limit in enumerate(limits)]
    whole = clamp_groups(q, groups)
    monkeypatch.setattr(grouped, "CHUNK", 7)
    assert np.array_equal(clamp_groups(q, groups), whole)


def test_a_large_outline_is_corrected_alone(monkeypatch):
    """Every row of the pass pays for the largest outline in it: a polygon of many edges takes
    its own path, the small outlines still go together, and each row is its limit's clamp."""
    import jointlimit_addon.core.grouped as grouped

    angles = np.linspace(0.0, 2.0 * math.pi, 40, endpoint=False)
    big = JointLimit(shape="POLYGON", outline=[(0.1 + 0.5 * math.cos(a), 0.3 * math.sin(a)) for a in angles])
    limits = _outline_limits()[:3] + [big]
    together = []
    original = grouped._together_pass
    monkeypatch.setattr(grouped, "_together_pass",
                        lambda groups, parts, kind: together.append([g[0] for g in groups]) or
                        original(groups, parts, kind))
    q = quat.random_unit(40 * len(limits), 14)
    groups = [(limit, np.arange(i, len(q), len(limits))) for i, limit in enumerate(limits)]
    out = clamp_groups(q, groups)
    assert len(together) == 1 and big not in together[0] and len(together[0]) == 3
    for limit, rows in groups:
        assert np.abs(out[rows] - np.array([limit.clamp(qi) for qi in q[rows]])).max() <= 1e-12


def _ellipse_limits():
    """ELLIPSE limits of both fits, OPTIMAL: uneven and centred ranges, wide ones (a large
    plane outline), a twist range, a free twist and a fixed one."""
    return [
        JointLimit(shape="ELLIPSE", swing_x=(D(-60), D(90)), swing_z=(D(-80), D(40)), twist=(D(-60), D(60))),
        JointLimit(shape="ELLIPSE", swing_x=(D(-25), D(35)), swing_z=(D(-25), D(25)), twist=None),
        JointLimit(shape="ELLIPSE", swing_x=(D(-10), D(10)), swing_z=(D(-10), D(10)), fix_twist=True),
        JointLimit(shape="ELLIPSE", fit="AXES", swing_x=(D(-30), D(110)), swing_z=(D(-35), D(40)), twist=(D(-40), D(40))),
        JointLimit(shape="ELLIPSE", fit="AXES", swing_x=(D(-60), D(170)), swing_z=(D(-5), D(120)), twist=(D(170), D(180))),
    ]


def test_ellipse_limits_are_corrected_together_as_each_alone(monkeypatch):
    """Rotations outside ELLIPSE limits of either fit go through one pass with each row's own
    ellipse and twist range: the same as each limit's own clamp, for rotations the tangent
    certifies, for those whose cap holds the pole (far from the region: certificate 2 of the
    limit's region) and for those neither certifies (the limit's own search), with only the
    twist outside, and of either sign; other smooth limits keep their way."""
    import jointlimit_addon.core.grouped as grouped

    calls = []
    together = grouped._together_pass
    monkeypatch.setattr(grouped, "_together_pass", lambda *args: calls.append(args[-1]) or together(*args))
    limits = _ellipse_limits() + [JointLimit(shape="SUPERELLIPSE", swing_x=(D(-20), D(60)), swing_z=(D(-30), D(30)))]
    q = quat.random_unit(30 * len(limits), 15)
    q[0] = (0.0, 1.0, 0.0, 0.0)                                  # the pole (swing 180°)
    q[1] = (math.cos(D(40)), 0.0, math.sin(D(40)), 0.0)          # twist 80° only
    q[2] = -q[2]                                                 # the other sign
    groups = [(limit, np.arange(i, len(q), len(limits))) for i, limit in enumerate(limits)]
    searched, bounded = [], []
    for limit in limits[:len(_ellipse_limits())]:
        region = limit.region
        own, bound = region.nearest_boundary_st1, region._nodes_bound1
        monkeypatch.setattr(region, "nearest_boundary_st1", lambda *p, own=own: searched.append(p) or own(*p))
        monkeypatch.setattr(region, "_nodes_bound1", lambda *a, bound=bound: bounded.append(bound(*a)) or bounded[-1])
    for search_all in (False, True):
        out = clamp_groups(q, groups)
        assert calls[-1] is grouped.EllipseTables
        if not search_all:      # most rows certified by the tangent, some by the nodes' bounds
            assert 0 < bounded.count(True) < len(q) // 2 and len(searched) == bounded.count(False)
            pole_rows = len(bounded)
        else:                   # certificate 2 failing (forced here): those rows take the search
            assert len(searched) == pole_rows
        for limit, rows in groups:
            expected = np.array([limit.clamp(qi) for qi in q[rows]])
            assert np.abs(out[rows] - expected).max() <= 1e-12
            assert np.all(np.sign(np.einsum("ij,ij->i", out[rows], q[rows])) >= 0)
            assert not limit.contains(q[rows]).all()
        searched.clear(), bounded.clear()
        for limit in limits[:len(_ellipse_limits())]:
            monkeypatch.setattr(limit.region, "_nodes_bound1", lambda *a: bounded.append(False) or False)


def test_ellipse_pass_finds_each_limits_nearest_point():
    """The pass's nearest point of each point outside is its limit's own (the one-point search,
    certified or searched) to round-off."""
    from jointlimit_addon.core import grouped_shapes
    from jointlimit_addon.core.projection import NP, _parts

    limits = _ellipse_limits()
    q = quat.random_unit(3000, 16)
    px, py, pz, s, t, _, pole = _parts(*q.T, NP)
    which = np.arange(len(q)) % len(limits)
    outside = np.zeros(len(q), dtype=bool)
    for i, limit in enumerate(limits):
        mine = which == i
        outside[mine] = pole[mine] | ~limit.region.contains_st(s[mine], t[mine])
    px, py, pz, which = px[outside], py[outside], pz[outside], which[outside]
    tables = grouped_shapes.tables(grouped_shapes.EllipseTables, limits)
    got = np.stack(tables.nearest(px, py, pz, which), axis=-1)
    for i, limit in enumerate(limits):
        mine = np.flatnonzero(which == i)
        alone = np.array([limit.region.nearest_boundary_st1(*p) for p in zip(px[mine], py[mine], pz[mine])])
        assert len(mine) > 100 and np.abs(got[mine] - alone).max() <= 1e-12 * (1.0 + np.abs(alone).max())


def test_hinges_are_checked_and_corrected_together_as_each_alone(monkeypatch):
    """Rotations under hinges of different axes and ranges (a free one, one ending at 180°) go
    through one pass: each is its hinge's clamp, rotations inside returned unchanged."""
    import jointlimit_addon.core.grouped as grouped

    calls = []
    together = grouped._clamp_hinges
    monkeypatch.setattr(grouped, "_clamp_hinges", lambda *args: calls.append(1) or together(*args))
    hinges = [HingeLimit(angle=(D(5), D(140))), HingeLimit(angle=(D(-40), D(60)), axis="Z"),
              HingeLimit(angle=None, axis=(0.3, 0.0, 1.0)), HingeLimit(angle=(D(90), D(180)), axis="Y")]
    limits = hinges + [QuatSwingLimit(max_swing=D(50), twist=(D(-20), D(20)))]
    rng = np.random.default_rng(17)
    q = quat.random_unit(12 * len(limits), 18)
    for i, hinge in enumerate(hinges):      # some rotations about each hinge's own axis, inside and out
        rows = np.arange(i, len(q), len(limits))[:6]
        q[rows] = quat.from_axis_angle(hinge.axis, rng.uniform(-math.pi, math.pi, len(rows)))
    q[::7] = -q[::7]
    groups = [(limit, np.arange(i, len(q), len(limits))) for i, limit in enumerate(limits)]
    out = clamp_groups(q, groups)
    assert calls == [1]
    for limit, rows in groups:
        expected = limit.clamp(q[rows])
        assert np.abs(out[rows] - expected).max() <= 1e-12
        inside = limit.contains(q[rows])
        assert np.array_equal(out[rows[inside]], q[rows[inside]])
        assert limit is hinges[2] or not inside.all()
    assert np.any(hinges[0].contains(q[groups[0][1]]))


def test_many_rotations_outside_one_ellipse_take_its_own_vectorised_path(monkeypatch):
    """An ellipse with as many rotations outside as its own vectorised path handles best is
    corrected by it; the few outside other ellipses still go together; every row is its limit's
    clamp."""
    import jointlimit_addon.core.grouped as grouped

    limits = _ellipse_limits()
    big = limits[0]
    calls = []
    own = big.clamp
    monkeypatch.setattr(big, "clamp", lambda q: calls.append(len(q)) or own(q))
    q = quat.random_unit(400, 19)
    rows_big = np.arange(0, 200)
    groups = [(big, rows_big)] + [(limit, np.arange(200 + 40 * i, 240 + 40 * i)) for i, limit in enumerate(limits[1:])]
    out = clamp_groups(q, groups)
    outside = int((~big.contains(q[rows_big])).sum())
    assert outside >= grouped.SINGLE_MAX_SMOOTH and calls == [outside]
    monkeypatch.setattr(big, "clamp", own)
    for limit, rows in groups:
        assert np.abs(out[rows] - np.array([limit.clamp(qi) for qi in q[rows]])).max() <= 1e-12


def test_a_rows_result_does_not_depend_on_the_rest_of_its_batch():
    """Each row stops stepping once its own Newton step is done, as on the one-rotation path: on
    a nearly flat ellipse (a range up to 179.97°) a row that needs many steps beside it does not
    move a settled row's point (it did by 1e-10 when every row stepped until the last settled)."""
    flat = JointLimit(shape="ELLIPSE", fit="AXES", swing_x=(-0.026337598335279624, 3.141178273539709),
                      swing_z=(-1.164834477247259, 2.0258276979145085), fix_twist=True)
    other = JointLimit(shape="ELLIPSE", swing_x=(-0.3, 0.3), swing_z=(-0.3, 0.3))
    q0 = np.array([0.12403397970653725, 0.54287919348892, 0.3139258752223372, 0.7689917411915863])
    slow = np.array([0.021047217395562527, 0.14677999432292155, -0.05394172547391144, -0.9874730062940273])
    quick = quat.random_unit(40, 3)
    expected = flat.clamp(q0)
    for rows in ([q0], [q0, slow]):
        q = np.vstack(rows + [quick])
        out = clamp_groups(q, [(flat, np.arange(len(rows))), (other, np.arange(len(rows), len(q)))])
        assert np.abs(out[0] - expected).max() <= 1e-12


def test_outline_and_ellipse_passes_in_one_batch_are_each_limits_clamp(monkeypatch):
    """Rotations outside outline limits and ELLIPSE limits of one batch: each kind's pass finds
    its rows' swings and twists, one composition makes them rotations (the rows of both passes
    at once), and each row is its own limit's clamp; the twists of every group are checked in
    one pass, a fixed and a free twist included."""
    import jointlimit_addon.core.grouped as grouped

    calls = []
    together = grouped._together_pass
    monkeypatch.setattr(grouped, "_together_pass", lambda *args: calls.append(args[-1]) or together(*args))
    limits = _outline_limits() + _ellipse_limits()
    q = quat.random_unit(12 * len(limits), 21)
    q[3] = (math.cos(D(40)), 0.0, math.sin(D(40)), 0.0)          # twist 80° only
    q[4] = -q[4]
    groups = [(limit, np.arange(i, len(q), len(limits))) for i, limit in enumerate(limits)]
    out = clamp_groups(q, groups)
    assert sorted(calls, key=lambda kind: kind.__name__) == [grouped.EllipseTables, grouped.OutlineTables]
    for limit, rows in groups:
        expected = np.array([limit.clamp(qi) for qi in q[rows]])
        assert np.abs(out[rows] - expected).max() <= 1e-12
        assert np.array_equal(limit.contains(q[rows]), np.all(out[rows] == q[rows], axis=1))   # inside: kept as is
