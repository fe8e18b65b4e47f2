"""Production rigs (issue 18): Rigify's human meta-rig, its generated rig and Blender's basic human
meta-rig, built once for this module (generation takes about 7 s), checked numerically."""

import importlib
import math

import numpy as np
import pytest

from rigs import compat

pytestmark = [pytest.mark.blender]

ARM_FK = ("upper_arm_fk.L", "forearm_fk.L", "hand_fk.L")
LEG_FK = ("thigh_fk.L", "shin_fk.L", "foot_fk.L", "toe_fk.L")


@pytest.fixture(scope="module")
def rigs(addon):
    """``{"meta": Rigify human meta-rig, "rig": its generated rig, "basic": basic human meta-rig}``."""
    import addon_utils
    import bpy

    bpy.ops.wm.read_homefile(use_empty=True)
    addon_utils.enable("rigify", default_set=True)
    bpy.ops.object.armature_human_metarig_add()
    meta = bpy.context.object
    meta.name = "metarig"
    bpy.ops.pose.rigify_generate()
    rig = next(o for o in bpy.data.objects if o.type == "ARMATURE" and o.data.get("rig_id") and o is not meta)
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.ops.object.select_all(action="DESELECT")
    bpy.ops.object.armature_basic_human_metarig_add()
    basic = bpy.context.object
    basic.name = "basic_metarig"
    basic.location = (3.0, 0.0, 0.0)
    yield {"meta": meta, "rig": rig, "basic": basic}
    addon_utils.disable("rigify", default_set=True)


def pose_mode(obj, selected=(), active=None):
    """Make ``obj`` the active object in Pose Mode with the rest pose, no limits, ``selected``
    bones selected and ``active`` active."""
    import bpy

    if bpy.context.object is not None and bpy.context.object.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    for other in bpy.context.view_layer.objects:
        other.select_set(other is obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="POSE")
    for pb in obj.pose.bones:
        pb.location = (0, 0, 0)
        pb.rotation_quaternion = (1, 0, 0, 0)
        pb.rotation_euler = (0, 0, 0)
        pb.scale = (1, 1, 1)
        pb.jointlimit.enabled = False
        compat().select_pose_bone(pb, pb.name in selected)
    if active:
        obj.data.bones.active = obj.data.bones[active]
    bpy.context.view_layer.update()
    return obj


@pytest.fixture
def mods(addon):
    pkg = addon.__name__
    return {m: importlib.import_module(f"{pkg}.{m}")
            for m in ("chains", "bone_limits", "core.quat", "operators.limb_ik", "operators.ccd_ik")}


def _names(bones):
    return [pb.name for pb in bones]


# --- 1. logical chains -------------------------------------------------------------------------------


def test_limb_chains_skip_mechanism_bones(rigs, mods):
    rig = pose_mode(rigs["rig"], active="hand_fk.L")
    limb = mods["operators.limb_ik"]
    assert _names(limb.limb_bones(rig.pose.bones["hand_fk.L"])) == list(ARM_FK)
    assert _names(limb.limb_bones(rig.pose.bones["foot_fk.L"])) == list(LEG_FK[:3])
    assert _names(limb.limb_bones(rig.pose.bones["hand_fk.R"])) == [n.replace(".L", ".R") for n in ARM_FK]
    assert rig.pose.bones["hand_fk.L"].parent.name == "MCH-hand_fk.L"  # the rig really has mechanism between


def test_ccd_spine_chain_is_only_fk_controls(rigs, mods):
    rig = pose_mode(rigs["rig"], active="spine_fk.003")
    bones = mods["operators.ccd_ik"].chain_bones(rig.pose.bones["spine_fk.003"], 0, False)
    assert _names(bones) == ["spine_fk.002", "spine_fk.003"]
    fingers = mods["operators.ccd_ik"].chain_bones(rig.pose.bones["f_index.03.L"], 0, False)
    assert _names(fingers) == ["f_index.01.L", "f_index.02.L", "f_index.03.L"]


def test_mechanism_detection(rigs, mods):
    rig = pose_mode(rigs["rig"])
    chains = mods["chains"]
    pbs = rig.pose.bones
    assert chains.mechanism_reason(pbs["MCH-hand_fk.L"]) == "name"
    assert chains.mechanism_reason(pbs["VIS_thigh_ik_pole.L"]) is not None  # constraint-driven
    for name in ARM_FK + LEG_FK + ("spine_fk.002", "neck", "head", "torso", "f_index.02.L"):
        assert chains.mechanism_reason(pbs[name]) is None, name
    meta = pose_mode(rigs["meta"])
    assert not any(chains.is_mechanism(pb) for pb in meta.pose.bones)


def test_limb_ik_refuses_where_no_chain_exists(rigs):
    import bpy

    pose_mode(rigs["rig"], selected={"torso"}, active="torso")
    with pytest.raises(RuntimeError, match="follow each other"):
        bpy.ops.pose.jointlimit_limb_ik(target=(0.2, 0.0, 1.0))


def test_limb_ik_uses_bones_selected_in_order(rigs, mods):
    rig = pose_mode(rigs["basic"], selected={"upper_arm.L", "forearm.L", "hand.L", "shoulder.L"}, active="hand.L")
    bones = mods["operators.limb_ik"].limb_bones(rig.pose.bones["hand.L"], {"upper_arm.L", "forearm.L", "hand.L"})
    assert _names(bones) == ["upper_arm.L", "forearm.L", "hand.L"]


# --- 2. the evaluated pose is the truth ------------------------------------------------------------------


def _limb_targets(rig, names, rng, count):
    """Reachable targets: where the end bone's head goes in random bent poses of the chain."""
    import bpy

    out = []
    for _ in range(count):
        for name in names[:2]:
            axis = rng.normal(size=3)
            rig.pose.bones[name].rotation_quaternion = (math.cos(0.3), *(math.sin(0.3) * axis / np.linalg.norm(axis)))
        bpy.context.view_layer.update()
        out.append(np.array(rig.pose.bones[names[2]].head))
    for name in names:
        rig.pose.bones[name].rotation_quaternion = (1, 0, 0, 0)
    bpy.context.view_layer.update()
    return out


@pytest.mark.parametrize("names", [ARM_FK, LEG_FK[:3]], ids=["arm", "leg"])
def test_limb_ik_on_generated_rig_is_exact_on_the_evaluated_pose(rigs, names):
    import bpy

    rig = pose_mode(rigs["rig"], selected={names[2]}, active=names[2])
    length = sum(rig.pose.bones[n].length for n in names[:2])
    rng = np.random.default_rng(18)
    for target in _limb_targets(rig, names, rng, 6):
        bpy.ops.pose.jointlimit_limb_ik(target=target, use_limits=False)
        bpy.context.view_layer.update()
        error = np.linalg.norm(np.array(rig.pose.bones[names[2]].head) - target)
        assert error <= 1e-4 * length


def test_ccd_on_spine_reports_the_evaluated_error(rigs, mods):
    import bpy

    rig = pose_mode(rigs["rig"], selected={"spine_fk.003"}, active="spine_fk.003")
    bones = [rig.pose.bones[n] for n in ("spine_fk.002", "spine_fk.003")]
    rest_tip = np.array(bones[-1].tail)
    targets = [rest_tip + d for d in (np.array([0.05, -0.03, -0.01]), np.array([-0.04, 0.05, -0.02]))]
    for target in targets:
        pose_mode(rig, selected={"spine_fk.003"}, active="spine_fk.003")
        solver = mods["operators.ccd_ik"].CCDSolver(bones, dict(iterations=500, tolerance=None, use_weights=True,
                                                                 limits=None, unit_angle=None), bpy.context.view_layer)
        _, info = solver(target)
        bpy.context.view_layer.update()
        evaluated_error = np.linalg.norm(np.array(bones[-1].tail) - target)
        assert info["error"] == pytest.approx(evaluated_error, abs=1e-7)
        assert info["reached"] and evaluated_error <= 1e-3 * solver.chain.length
        # only the spine controls moved
        moved = {pb.name for pb in rig.pose.bones if tuple(pb.rotation_quaternion) != (1, 0, 0, 0)}
        assert moved == {"spine_fk.002", "spine_fk.003"}
