"""The demo's scene builder (scripts/demo_scene.py) makes a valid, limited, skinned scene (issue 9)."""

import pathlib
import sys

import numpy as np
import pytest

pytestmark = [pytest.mark.blender]

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "scripts"))


def test_build_all(addon):
    import importlib

    import demo_scene

    bl = importlib.import_module(f"{addon.__name__}.bone_limits")
    objects = demo_scene.build_all()
    human, tail = objects["humanoid"], objects["tail"]
    assert set(demo_scene.HUMANOID_LIMITS) <= {pb.name for pb in human.pose.bones if pb.jointlimit.enabled}
    assert len(tail.pose.bones) == demo_scene.TAIL_BONES
    for obj in (human, tail):
        for pb in obj.pose.bones:
            if pb.jointlimit.enabled:
                assert bl.settings_error(pb.jointlimit) is None, pb.name
    for key in ("cylinder", "arm_skin"):
        mesh = objects[key]
        assert mesh.modifiers[0].type == "ARMATURE" and len(mesh.vertex_groups) == 2
        two_bone = [v for v in mesh.data.vertices if len([g for g in v.groups if g.weight > 0]) == 2]
        assert two_bone, f"{key} has no blend zone"
    # the elbow of the humanoid is bent in the rest pose (so limb IK finds its hinge axis)
    bones = human.data.bones
    a = np.array(bones["upper_arm.L"].vector)
    b = np.array(bones["forearm.L"].vector)
    assert np.linalg.norm(np.cross(a / np.linalg.norm(a), b / np.linalg.norm(b))) > 0.05


def test_bone_proxies_follow_pose(addon):
    import bpy

    import demo_scene

    objects = demo_scene.build_all()
    tail = objects["tail"]
    proxy = demo_scene.bone_proxies(tail)
    before = np.array([v.co for v in proxy.evaluated_get(bpy.context.evaluated_depsgraph_get()).data.vertices])
    tail.pose.bones[0].rotation_quaternion = (0.7071, 0.7071, 0, 0)
    bpy.context.view_layer.update()
    after = np.array([v.co for v in proxy.evaluated_get(bpy.context.evaluated_depsgraph_get()).data.vertices])
    assert np.abs(after - before).max() > 0.1
