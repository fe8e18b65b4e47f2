"""CCD IK in Blender: scripted solves on limited chains and the modal tool (issue 6)."""

import math

import numpy as np
import pytest

from modal_harness import Event, OperatorStandIn, ViewContext, front_ortho_view
from rigs import make_armature, select_only

pytestmark = [pytest.mark.blender]

PROPS = dict(target=(0, 0, 0), chain_length=0, stop_at_unconnected=False, iterations=1000, tolerance=0.0,
             use_weights=True, use_limits=True, unit_angle=0.0)


def tail_chain(n, name="Tail", unconnected_at=None):
    bones = []
    for i in range(n):
        head = (0, 0.1 * i + (0.05 if unconnected_at is not None and i >= unconnected_at else 0), 1.0)
        tail = (0, head[1] + 0.1, 1.0)
        bones.append((f"t{i:02d}", head, tail, f"t{i - 1:02d}" if i else None, 0.0))
    obj = make_armature(bones, name)
    for pb in obj.pose.bones:
        pb.rotation_mode = "QUATERNION"
    select_only(obj, {f"t{n - 1:02d}"}, active=f"t{n - 1:02d}")
    return obj


@pytest.fixture
def mods(addon):
    import importlib

    pkg = addon.__name__
    return {m: importlib.import_module(f"{pkg}.{m}") for m in ("core.quat", "core.ccd", "bone_limits")}


def _limit_all(obj):
    for pb in obj.pose.bones:
        s = pb.jointlimit
        s.enabled, s.kind, s.shape = True, "SWING_TWIST", "OVAL"
        s.swing_x_min, s.swing_x_max = math.radians(-40), math.radians(40)
        s.swing_z_min, s.swing_z_max = math.radians(-30), math.radians(30)
        s.use_twist_limit, s.twist_min, s.twist_max = True, math.radians(-10), math.radians(10)


def _tip(obj):
    import bpy

    bpy.context.view_layer.update()
    return np.array(obj.pose.bones[-1].tail)


def test_exec_reaches_reachable_targets_within_limits(scene, mods):
    import bpy

    obj = tail_chain(10)
    _limit_all(obj)
    bl, Q = mods["bone_limits"], mods["core.quat"]
    rng = np.random.default_rng(2)
    limits = [bl.build_limit(pb.jointlimit) for pb in obj.pose.bones]
    reached = 0
    for _ in range(10):
        # a reachable target: the tip of a random pose inside the limits
        for pb, lim in zip(obj.pose.bones, limits):
            pb.rotation_quaternion = lim.clamp(Q.random_unit(1, rng)[0])
        target = _tip(obj)
        for pb in obj.pose.bones:
            pb.rotation_quaternion = (1, 0, 0, 0)
        bpy.ops.pose.jointlimit_ccd_ik(target=target, iterations=600)
        reached += np.linalg.norm(_tip(obj) - target) <= 1e-3 * 1.0
        for pb, lim in zip(obj.pose.bones, limits):
            assert lim.contains(lim.clamp(bl.read_rotation(pb)))
            assert Q.angle_between(lim.clamp(bl.read_rotation(pb)), bl.read_rotation(pb)) < 1e-5
    assert reached >= 9


def test_chain_length_and_unconnected_stop(scene, mods):
    import bpy

    obj = tail_chain(6, unconnected_at=3)
    before = {pb.name: tuple(pb.rotation_quaternion) for pb in obj.pose.bones}
    bpy.ops.pose.jointlimit_ccd_ik(target=(0.2, 0.5, 1.2), stop_at_unconnected=True)
    moved = {pb.name for pb in obj.pose.bones if tuple(pb.rotation_quaternion) != before[pb.name]}
    assert moved <= {"t03", "t04", "t05"} and moved
    with pytest.raises(RuntimeError, match="only 6 bones"):
        bpy.ops.pose.jointlimit_ccd_ik(target=(0, 0, 0), chain_length=9)


def test_unreachable_target_stretches(scene, mods):
    import bpy

    obj = tail_chain(5)
    target = np.array([3.0, 0.0, 1.0])
    bpy.ops.pose.jointlimit_ccd_ik(target=target, use_limits=False)
    root = np.array(obj.pose.bones[0].head)
    tip = _tip(obj)
    direction = (target - root) / np.linalg.norm(target - root)
    assert np.all(np.isfinite(tip))
    assert np.linalg.norm(tip - root) == pytest.approx(0.5, rel=1e-3)
    assert np.dot((tip - root) / np.linalg.norm(tip - root), direction) > 0.999


def test_nan_target_refused(scene):
    import bpy

    obj = tail_chain(3)
    with pytest.raises(RuntimeError, match="finite"):
        bpy.ops.pose.jointlimit_ccd_ik(target=(float("nan"), 0, 0))
    assert all(tuple(pb.rotation_quaternion) == (1, 0, 0, 0) for pb in obj.pose.bones)


def test_modal_drag_confirm_and_cancel(scene, mods):
    import bpy

    obj = tail_chain(8)
    obj.location = (0.5, 0.0, -0.3)
    bpy.context.view_layer.update()
    original = {pb.name: tuple(pb.rotation_quaternion) for pb in obj.pose.bones}
    tip_world = np.array(obj.matrix_world @ obj.pose.bones[-1].tail)
    region, rv3d, to_px = front_ortho_view(tip_world, 2.0)
    ctx = ViewContext(region, rv3d)
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_ccd_ik, **PROPS)
    assert op.invoke(ctx, Event("NONE")) == {"RUNNING_MODAL"}
    goal = tip_world + np.array([0.2, 0.0, -0.25])
    op.modal(ctx, Event("MOUSEMOVE", x=to_px(goal)[0], y=to_px(goal)[1]))
    bpy.context.view_layer.update()
    got = np.array(obj.matrix_world @ obj.pose.bones[-1].tail)
    root = np.array(obj.matrix_world @ obj.pose.bones[0].head)
    if np.linalg.norm(goal - root) < 0.8:
        assert np.linalg.norm(got[[0, 2]] - goal[[0, 2]]) < 0.01
    else:  # out of reach: stretched toward it
        assert np.linalg.norm(got - root) == pytest.approx(0.8, rel=1e-3)
        assert np.dot((got - root) / 0.8, (goal - root) / np.linalg.norm(goal - root)) > 0.999
    assert "error" in op._session.info and op._session.info["iterations"] >= 1
    assert op.modal(ctx, Event("RIGHTMOUSE", value="PRESS")) == {"CANCELLED"}
    assert {pb.name: tuple(pb.rotation_quaternion) for pb in obj.pose.bones} == original
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_ccd_ik, **PROPS)
    op.invoke(ctx, Event("NONE"))
    op.modal(ctx, Event("MOUSEMOVE", x=to_px(goal)[0], y=to_px(goal)[1]))
    assert op.modal(ctx, Event("RET", value="PRESS")) == {"FINISHED"}
    assert {pb.name: tuple(pb.rotation_quaternion) for pb in obj.pose.bones} != original
