"""The compatibility module on the running Blender (CI runs it on 5.2 LTS, 5.0 and 4.5 LTS)."""

import pytest

from rigs import compat, make_armature

pytestmark = [pytest.mark.blender]


@pytest.fixture
def rig(scene):
    return make_armature([("a", (0, 0, 0), (0, 0, 1), None, 0.0), ("b", (0, 0, 1), (0, 0, 2), "a", 0.0)])


def test_pose_bone_selection_round_trip_reaches_the_selection_operators_see(rig):
    import bpy

    c = compat()
    for value in (True, False):
        for pb in rig.pose.bones:
            c.select_pose_bone(pb, value)
        assert [c.pose_bone_selected(pb) for pb in rig.pose.bones] == [value, value]
    c.select_pose_bone(rig.pose.bones["b"], True)
    assert [pb.name for pb in bpy.context.selected_pose_bones] == ["b"]


def _node_group():
    import bpy

    ng = bpy.data.node_groups.new("compat-test", "GeometryNodeTree")
    ng.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    ng.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    out = ng.nodes.new("NodeGroupOutput")
    inp = ng.nodes.new("NodeGroupInput")
    ng.links.new(inp.outputs[0], out.inputs[0])
    ids = {}
    for name, kind in (("Mode", "NodeSocketInt"), ("Blend", "NodeSocketFloat"), ("Frames", "NodeSocketObject")):
        ids[name] = ng.interface.new_socket(name, in_out="INPUT", socket_type=kind).identifier
    return ng, ids


def test_modifier_inputs_set_and_read_back_numbers_and_objects(scene):
    import bpy

    c = compat()
    mesh = bpy.data.meshes.new("m")
    obj = bpy.data.objects.new("m", mesh)
    scene.collection.objects.link(obj)
    other = bpy.data.objects.new("other", None)
    ng, ids = _node_group()
    mod = obj.modifiers.new("nodes", "NODES")
    mod.node_group = ng
    c.set_modifier_input(mod, ids["Mode"], 3)
    c.set_modifier_input(mod, ids["Blend"], 0.25)
    c.set_modifier_input(mod, ids["Frames"], other)
    assert c.modifier_input(mod, ids["Mode"]) == 3
    assert c.modifier_input(mod, ids["Blend"]) == pytest.approx(0.25)
    assert c.modifier_input(mod, ids["Frames"]) == other
    assert c.modifier_input(mod, "Socket_999", "missing") == "missing"


def test_modifier_input_survives_save_and_reload(scene, tmp_path):
    import bpy

    c = compat()
    obj = bpy.data.objects.new("m", bpy.data.meshes.new("m"))
    scene.collection.objects.link(obj)
    ng, ids = _node_group()
    mod = obj.modifiers.new("nodes", "NODES")
    mod.node_group = ng
    c.set_modifier_input(mod, ids["Mode"], 2)
    path = tmp_path / "mod.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path))
    assert c.modifier_input(bpy.data.objects["m"].modifiers["nodes"], ids["Mode"]) == 2


def test_action_fcurves_of_a_keyed_pose_bone(rig):
    c = compat()
    assert c.action_fcurves(None, None) == []
    pb = rig.pose.bones["b"]
    pb.keyframe_insert("rotation_quaternion", frame=1)
    data = rig.animation_data
    paths = {fc.data_path for fc in c.action_fcurves(data.action, data.action_slot)}
    assert paths == {'pose.bones["b"].rotation_quaternion'}
    assert len(c.action_fcurves(data.action, data.action_slot)) == 4


def test_find_fcurve_is_the_action_fcurves_curve_of_that_channel(rig):
    c = compat()
    assert c.find_fcurve(None, None, 'pose.bones["b"].rotation_quaternion', 0) is None
    rig.pose.bones["b"].keyframe_insert("rotation_quaternion", index=2, frame=1)
    rig.pose.bones["a"].keyframe_insert("location", frame=1)
    data = rig.animation_data
    every = {(fc.data_path, fc.array_index): fc for fc in c.action_fcurves(data.action, data.action_slot)}
    for (path, index), fc in every.items():
        assert c.find_fcurve(data.action, data.action_slot, path, index) == fc
    assert c.find_fcurve(data.action, data.action_slot, 'pose.bones["b"].rotation_quaternion', 1) is None
    assert c.find_fcurve(data.action, None, 'pose.bones["b"].rotation_quaternion', 2) is None
