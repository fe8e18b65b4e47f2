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
