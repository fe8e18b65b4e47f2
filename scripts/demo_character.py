"""The demo character: Rigify's human meta-rig with a tail and a body the demo builds itself.

Rigify ships inside Blender (and the ``bpy`` wheel); its *Human (Meta-Rig)* gives the bones of a
person (spine, neck, head, arms, legs). The face, fingers, palms, breasts, pelvis and heel bones
are removed (the body has no fingers or face to move), and an 8-bone tail is added behind the hips
for CCD IK. The body is made of metaball capsules around the bones, converted to meshes and
skinned with Blender's automatic (bone heat) weights:

- ``CharacterBody``: torso, neck, head, legs and tail (plain Armature modifier);
- ``CharacterArms``: both arms, limited to two bones per vertex so the JointLimit deformer
  (SDEF/Bezier) can take over the elbows and shoulders.

Only Blender's own operators and data API are used here; JointLimit's operators are run by
``demo.py`` on the result.
"""

import math

import addon_utils
import bpy
from mathutils import Vector

KEEP = ("spine", "shoulder.", "upper_arm.", "forearm.", "hand.", "thigh.", "shin.", "foot.", "toe.")
ARM_BONES = ("upper_arm", "forearm", "hand")
TAIL_BONES = 8
# Capsule radius (metres, metaball influence radius; the surface lies at about half of it) at the
# head and the tail of each bone, by bone name without its side suffix.
RADIUS = {
    "spine": (0.27, 0.25), "spine.001": (0.25, 0.24), "spine.002": (0.25, 0.28), "spine.003": (0.29, 0.17),
    "spine.004": (0.11, 0.11), "spine.005": (0.11, 0.11), "spine.006": (0.19, 0.2),
    "shoulder": (0.13, 0.13), "upper_arm": (0.13, 0.105), "forearm": (0.105, 0.085), "hand": (0.09, 0.075),
    "thigh": (0.19, 0.13), "shin": (0.13, 0.095), "foot": (0.095, 0.08), "toe": (0.075, 0.07),
}
TAIL_RADIUS = (0.11, 0.04)
RESOLUTION = 0.018  # metaball polygonisation step (metres)


def add_metarig(name="Character"):
    """Rigify's human meta-rig (enables the bundled Rigify add-on) as the active object."""
    addon_utils.enable("rigify", default_set=True)
    bpy.ops.object.armature_human_metarig_add()
    rig = bpy.context.object
    rig.name = rig.data.name = name
    return rig


def trim_and_add_tail(rig, bones=TAIL_BONES):
    """Remove the bones the body does not use and add a tail chain ``tail.001…`` under ``spine``."""
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    edit = rig.data.edit_bones
    for eb in list(edit):
        if not eb.name.startswith(KEEP):
            edit.remove(eb)
    parent, head = edit["spine"], Vector((0.0, 0.1, 1.0))
    for i in range(bones):
        # out backwards and down, then curling up: a cat-like tail about 0.75 m long
        angle = math.radians(-35 + 14 * i)
        step = 0.1 * (1.0 - 0.04 * i)
        eb = edit.new(f"tail.{i + 1:03d}")
        eb.head = head
        head = head + Vector((0.0, step * math.cos(angle), step * math.sin(angle)))
        eb.tail, eb.roll, eb.parent, eb.use_connect = head, 0.0, parent, i > 0
        parent = eb
    bpy.ops.object.mode_set(mode="POSE")
    for pb in rig.pose.bones:
        pb.rotation_mode = "QUATERNION"
    bpy.ops.object.mode_set(mode="OBJECT")
    return rig


def _radius(name):
    if name.startswith("tail."):
        i, n = int(name[-3:]) - 1, TAIL_BONES
        r0, r1 = TAIL_RADIUS
        return r0 + (r1 - r0) * i / n, r0 + (r1 - r0) * (i + 1) / n
    key = name if name.startswith("spine") else name.rsplit(".", 1)[0]
    return RADIUS[key]


def capsule_body(name, rig, bone_names, pieces=2):
    """A mesh object made of metaball capsules around ``bone_names`` (``pieces`` per bone, so the
    radius tapers from the bone's head to its tail)."""
    ball = bpy.data.metaballs.new(name)
    ball.resolution = ball.render_resolution = RESOLUTION
    obj = bpy.data.objects.new(name, ball)
    bpy.context.scene.collection.objects.link(obj)
    obj.matrix_world = rig.matrix_world
    for bone_name in bone_names:
        bone = rig.data.bones[bone_name]
        head, tail = Vector(bone.head_local), Vector(bone.tail_local)
        r0, r1 = _radius(bone_name)
        for k in range(pieces):
            a, b = head.lerp(tail, k / pieces), head.lerp(tail, (k + 1) / pieces)
            element = ball.elements.new(type="CAPSULE")
            element.co = (a + b) / 2
            element.size_x = (b - a).length / 2
            element.radius = r0 + (r1 - r0) * (k + 0.5) / pieces
            element.rotation = Vector((1.0, 0.0, 0.0)).rotation_difference((b - a).normalized())
    if "thigh.L" in bone_names and "thigh.R" in bone_names:  # hips as wide as the legs are apart
        a, b = (Vector(rig.data.bones[f"thigh.{s}"].head_local) for s in "LR")
        element = ball.elements.new(type="CAPSULE")
        element.co, element.size_x, element.radius = (a + b) / 2 + Vector((0.0, 0.0, 0.03)), (a - b).length / 2, 0.22
    if "spine.006" in bone_names:  # a nose, so the way the head turns shows
        head = rig.data.bones["spine.006"]
        element = ball.elements.new(type="BALL")
        element.co = Vector(head.head_local).lerp(Vector(head.tail_local), 0.45) + Vector((0.0, -0.12, 0.0))
        element.radius = 0.1
    bpy.ops.object.select_all(action="DESELECT")
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    bpy.ops.object.convert(target="MESH")
    mesh_obj = bpy.context.object
    mesh_obj.name = mesh_obj.data.name = name
    bpy.data.metaballs.remove(ball) if ball.users == 0 else None
    for poly in mesh_obj.data.polygons:
        poly.use_smooth = True
    return mesh_obj


def auto_weights(mesh_obj, rig, max_bones=None):
    """Parent ``mesh_obj`` to ``rig`` with automatic weights; optionally keep at most ``max_bones``
    weights per vertex (normalised)."""
    bpy.ops.object.select_all(action="DESELECT")
    mesh_obj.select_set(True)
    rig.select_set(True)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.parent_set(type="ARMATURE_AUTO")
    if max_bones:
        bpy.ops.object.select_all(action="DESELECT")
        bpy.context.view_layer.objects.active = mesh_obj
        mesh_obj.select_set(True)
        bpy.ops.object.vertex_group_limit_total(group_select_mode="ALL", limit=max_bones)
        bpy.ops.object.vertex_group_normalize_all(group_select_mode="ALL", lock_active=False)
    return mesh_obj


def build(name="Character"):
    """The rigged character: ``{"rig", "body", "arms"}``."""
    rig = trim_and_add_tail(add_metarig(name))
    arm_names = [b.name for b in rig.data.bones if b.name.split(".")[0] in ARM_BONES]
    body_names = [b.name for b in rig.data.bones if b.name not in arm_names]
    body = auto_weights(capsule_body(f"{name}Body", rig, body_names), rig)
    arms = auto_weights(capsule_body(f"{name}Arms", rig, arm_names), rig, max_bones=2)
    bpy.ops.object.select_all(action="DESELECT")
    return {"rig": rig, "body": body, "arms": arms}


def bone_chains(rig):
    """Bone names by role: arms, legs, spine (hips to neck) and tail."""
    names = [b.name for b in rig.data.bones]
    side = lambda s, parts: [f"{p}.{s}" for p in parts]  # noqa: E731
    return {
        "arm.L": side("L", ARM_BONES), "arm.R": side("R", ARM_BONES),
        "leg.L": side("L", ("thigh", "shin", "foot", "toe")), "leg.R": side("R", ("thigh", "shin", "foot", "toe")),
        "spine": ["spine.001", "spine.002", "spine.003", "spine.004"],
        "tail": [n for n in names if n.startswith("tail.")],
    }
