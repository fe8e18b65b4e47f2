"""Small rigs for Blender-level tests, built with the real API."""

import importlib

import bpy

COMPAT = "bl_ext.user_default.jointlimit_addon.compat"


def compat():
    """The installed extension's compatibility module (API differences between Blender versions)."""
    return importlib.import_module(COMPAT)


def make_armature(bones, name="Rig"):
    """Create an armature from ``[(name, head, tail, parent or None, roll)]`` and enter Pose Mode."""
    if bpy.context.object and bpy.context.object.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    data = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, data)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    bpy.ops.object.mode_set(mode="EDIT")
    for bone_name, head, tail, parent, roll in bones:
        eb = data.edit_bones.new(bone_name)
        eb.head, eb.tail, eb.roll = head, tail, roll
        if parent:
            eb.parent = data.edit_bones[parent]
            gap = sum((a - b) ** 2 for a, b in zip(data.edit_bones[parent].tail, head)) ** 0.5
            eb.use_connect = gap < 1e-6
    bpy.ops.object.mode_set(mode="POSE")
    return obj


def symmetric_arms(name="Rig"):
    """Spine plus left and right upper/fore arms, mirrored across X like Blender's Symmetrize."""
    return make_armature(
        [
            ("spine", (0, 0, 1.0), (0, 0, 1.5), None, 0.0),
            ("upper_arm.L", (0.2, 0, 1.5), (0.5, 0, 1.5), "spine", 0.0),
            ("forearm.L", (0.5, 0, 1.5), (0.8, 0, 1.5), "upper_arm.L", 0.0),
            ("upper_arm.R", (-0.2, 0, 1.5), (-0.5, 0, 1.5), "spine", 0.0),
            ("forearm.R", (-0.5, 0, 1.5), (-0.8, 0, 1.5), "upper_arm.R", 0.0),
        ],
        name,
    )


def select_only(obj, names, active=None):
    for pb in obj.pose.bones:
        compat().select_pose_bone(pb, pb.name in names)
    if active:
        obj.data.bones.active = obj.data.bones[active]


def save_in_library(scene, obj, collection_name, path):
    """Move ``obj`` into a new collection of ``scene`` named ``collection_name`` (in Object Mode)
    and save a copy of the file at ``path``, as a character library; returns the collection."""
    bpy.ops.object.mode_set(mode="OBJECT")
    collection = bpy.data.collections.new(collection_name)
    collection.objects.link(obj)
    scene.collection.objects.unlink(obj)
    scene.collection.children.link(collection)
    bpy.ops.wm.save_as_mainfile(filepath=path, copy=True)
    return collection


def overridden_rig(scene, obj, path, collection_name="RigCollection", fully_editable=True):
    """``obj`` saved as a character library at ``path`` (``save_in_library``), the local copy
    removed, then linked back and overridden (``link_override``): the overriding rig."""
    collection = save_in_library(scene, obj, collection_name, path)
    bpy.data.objects.remove(obj)
    bpy.data.collections.remove(collection)
    return link_override(scene, path, collection_name, fully_editable).objects[0]


def link_override(scene, path, collection_name, fully_editable=True):
    """Link the collection ``collection_name`` of the library file ``path`` into ``scene`` through
    an instance, as File > Link does, and make a library override of it (editable or a system
    override); the override collection."""
    with bpy.data.libraries.load(path, link=True) as (_found, wanted):
        wanted.collections = [collection_name]
    instance = bpy.data.objects.new("Instance", None)
    instance.instance_type, instance.instance_collection = "COLLECTION", wanted.collections[0]
    scene.collection.objects.link(instance)
    return wanted.collections[0].override_hierarchy_create(scene, bpy.context.view_layer,
                                                          do_fully_editable=fully_editable)
