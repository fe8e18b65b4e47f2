"""Builds the JointLimit demo scene with Blender's data API (used by demo.py, docs and tests).

Contents: a humanoid arm and leg with realistic limits, a 20-bone tail chain, a bent cylinder
(two bones, a narrow blend) and a character-like arm mesh skinned across the elbow. Meshes are
plain geometry with vertex groups and Armature modifiers, so they render with Workbench.
"""

import math

import bpy
import numpy as np

# Limits (degrees) on Blender bone axes: swing_x bends about local X, swing_z about local Z,
# twist about the bone's own Y axis. Roughly typical human ranges of motion.
HUMANOID_LIMITS = {
    "upper_arm.L": dict(kind="SWING_TWIST", shape="OVAL", swing_x=(-60, 150), swing_z=(-90, 40), twist=(-60, 80)),
    "forearm.L": dict(kind="HINGE", hinge=(0, 145)),
    "hand.L": dict(kind="SWING_TWIST", shape="ELLIPSE", swing_x=(-70, 80), swing_z=(-25, 35), twist=(-10, 10)),
    "thigh.L": dict(kind="SWING_TWIST", shape="OVAL", swing_x=(-120, 30), swing_z=(-30, 45), twist=(-40, 40)),
    "shin.L": dict(kind="HINGE", hinge=(0, 150)),
    "foot.L": dict(kind="SWING_TWIST", shape="RECT", swing_x=(-45, 25), swing_z=(-20, 20), twist=(-15, 15)),
}
TAIL_BONES = 20


def clear_scene():
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 60
    return scene


def armature(name, spec, location=(0, 0, 0)):
    """``spec``: [(bone, head, tail, parent, roll)] in armature space; returns the object in Pose Mode."""
    if bpy.context.object and bpy.context.object.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    data = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, data)
    obj.location = location
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    for bone, head, tail, parent, roll in spec:
        eb = data.edit_bones.new(bone)
        eb.head, eb.tail, eb.roll = head, tail, roll
        if parent:
            eb.parent = data.edit_bones[parent]
            eb.use_connect = (eb.parent.tail - eb.head).length < 1e-6
    bpy.ops.object.mode_set(mode="POSE")
    for pb in obj.pose.bones:
        pb.rotation_mode = "QUATERNION"
    bpy.ops.object.mode_set(mode="OBJECT")
    return obj


def set_limits(obj, limits):
    for bone, cfg in limits.items():
        s = obj.pose.bones[bone].jointlimit
        s.enabled, s.kind = True, cfg["kind"]
        if cfg["kind"] == "HINGE":
            s.hinge_min, s.hinge_max = (math.radians(a) for a in cfg["hinge"])
            continue
        s.shape = cfg["shape"]
        s.swing_x_min, s.swing_x_max = (math.radians(a) for a in cfg["swing_x"])
        s.swing_z_min, s.swing_z_max = (math.radians(a) for a in cfg["swing_z"])
        if "twist" in cfg:
            s.use_twist_limit = True
            s.twist_min, s.twist_max = (math.radians(a) for a in cfg["twist"])


def humanoid():
    """Left arm (bent elbow) and left leg (bent knee) on a spine, with HUMANOID_LIMITS."""
    spec = [
        ("hips", (0, 0, 1.0), (0, 0, 1.15), None, 0.0),
        ("spine", (0, 0, 1.15), (0, 0, 1.45), "hips", 0.0),
        ("upper_arm.L", (0.18, 0, 1.42), (0.46, 0.03, 1.40), "spine", 0.0),
        ("forearm.L", (0.46, 0.03, 1.40), (0.72, 0.0, 1.40), "upper_arm.L", 0.0),
        ("hand.L", (0.72, 0.0, 1.40), (0.82, 0.0, 1.40), "forearm.L", 0.0),
        ("thigh.L", (0.1, 0, 1.0), (0.1, -0.03, 0.55), "hips", 0.0),
        ("shin.L", (0.1, -0.03, 0.55), (0.1, 0.0, 0.1), "thigh.L", 0.0),
        ("foot.L", (0.1, 0.0, 0.1), (0.1, -0.15, 0.02), "shin.L", 0.0),
    ]
    obj = armature("Humanoid", spec)
    set_limits(obj, HUMANOID_LIMITS)
    return obj


def tail_chain(n=TAIL_BONES, location=(-0.6, 0.0, 1.0)):
    spec = [(f"tail{i:02d}", (0, 0.06 * i, 0), (0, 0.06 * (i + 1), 0), f"tail{i - 1:02d}" if i else None, 0.0)
            for i in range(n)]
    obj = armature("Tail", spec, location)
    for pb in obj.pose.bones:
        s = pb.jointlimit
        s.enabled, s.kind, s.shape = True, "SWING_TWIST", "ELLIPSE"
        s.swing_x_min, s.swing_x_max = math.radians(-25), math.radians(25)
        s.swing_z_min, s.swing_z_max = math.radians(-20), math.radians(20)
        s.use_twist_limit, s.twist_min, s.twist_max = True, math.radians(-5), math.radians(5)
    return obj


def tube_mesh(name, start, end, radius, rings=40, segments=32):
    """A capped-free tube from ``start`` to ``end`` (rings along the axis, segments around)."""
    start, end = np.asarray(start, float), np.asarray(end, float)
    axis = end - start
    length = np.linalg.norm(axis)
    a = axis / length
    u = np.cross(a, [0, 0, 1.0] if abs(a[2]) < 0.9 else [1.0, 0, 0])
    u /= np.linalg.norm(u)
    v = np.cross(a, u)
    ang = np.linspace(0, 2 * math.pi, segments, endpoint=False)
    s = np.linspace(0, 1, rings)
    verts = (start + s[:, None, None] * axis + radius * (np.cos(ang)[None, :, None] * u + np.sin(ang)[None, :, None] * v))
    verts = verts.reshape(-1, 3)
    faces = [(r * segments + k, r * segments + (k + 1) % segments, (r + 1) * segments + (k + 1) % segments,
              (r + 1) * segments + k) for r in range(rings - 1) for k in range(segments)]
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(verts.tolist(), [], faces)
    mesh.update()
    for poly in mesh.polygons:
        poly.use_smooth = True
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    return obj, s.repeat(segments)


def skin_two_bones(mesh_obj, arm_obj, parent_bone, child_bone, along, blend_start, blend_end):
    """Weights that blend linearly from ``parent_bone`` to ``child_bone`` over [start, end] of ``along``."""
    g0 = mesh_obj.vertex_groups.new(name=parent_bone)
    g1 = mesh_obj.vertex_groups.new(name=child_bone)
    t = np.clip((along - blend_start) / (blend_end - blend_start), 0.0, 1.0)
    for i, w1 in enumerate(t):
        if w1 < 1.0:
            g0.add([i], float(1.0 - w1), "REPLACE")
        if w1 > 0.0:
            g1.add([i], float(w1), "REPLACE")
    mod = mesh_obj.modifiers.new("Armature", "ARMATURE")
    mod.object = arm_obj
    mesh_obj.parent = arm_obj
    return mod


def bent_cylinder(name="Cylinder", location=(1.5, 0.0, 0.0)):
    """Two bones along +Z with an elbow-like narrow blend around the joint at z = 1."""
    arm = armature(f"{name}Rig", [("lower", (0, 0, 0), (0, 0, 1), None, 0.0), ("upper", (0, 0, 1), (0, 0, 2), "lower", 0.0)],
                   location)
    mesh, along = tube_mesh(name, (0, 0, 0), (0, 0, 2), 0.25, rings=60)
    skin_two_bones(mesh, arm, "lower", "upper", along * 2.0, 0.8, 1.2)
    return arm, mesh


def arm_skin(humanoid_obj):
    """A character-like arm mesh on the humanoid's upper arm and forearm (blend across the elbow)."""
    pose = humanoid_obj.data.bones
    shoulder, elbow = np.array(pose["upper_arm.L"].head_local), np.array(pose["forearm.L"].head_local)
    wrist = np.array(pose["forearm.L"].tail_local)
    mesh, along = tube_mesh("ArmSkin", shoulder, wrist, 0.05, rings=48, segments=24)
    split = np.linalg.norm(elbow - shoulder) / np.linalg.norm(wrist - shoulder)
    skin_two_bones(mesh, humanoid_obj, "upper_arm.L", "forearm.L", along, split - 0.12, split + 0.08)
    return mesh


def build_all():
    scene = clear_scene()
    human = humanoid()
    tail = tail_chain()
    cyl_rig, cyl = bent_cylinder()
    skin = arm_skin(human)
    return {"scene": scene, "humanoid": human, "tail": tail, "cylinder_rig": cyl_rig, "cylinder": cyl, "arm_skin": skin}


def bone_proxies(arm_obj, radius=0.015, name=None):
    """A renderable mesh with a thin tube per bone, rigidly following the pose (Armature modifier)."""
    verts, faces, groups = [], [], []
    segments = 8
    for bone in arm_obj.data.bones:
        head, tail = np.array(bone.head_local), np.array(bone.tail_local)
        r = min(radius, 0.15 * bone.length)
        axis = (tail - head) / bone.length
        u = np.cross(axis, [0, 0, 1.0] if abs(axis[2]) < 0.9 else [1.0, 0, 0])
        u /= np.linalg.norm(u)
        v = np.cross(axis, u)
        base = len(verts)
        for k in range(segments):
            a = 2 * math.pi * k / segments
            offset = r * (math.cos(a) * u + math.sin(a) * v)
            verts += [tuple(head + offset), tuple(tail + 0.3 * offset)]
        faces += [(base + 2 * k, base + 2 * ((k + 1) % segments), base + 2 * ((k + 1) % segments) + 1, base + 2 * k + 1)
                  for k in range(segments)]
        groups.append((bone.name, list(range(base, len(verts)))))
    mesh = bpy.data.meshes.new(name or f"{arm_obj.name}Bones")
    mesh.from_pydata(verts, [], faces)
    obj = bpy.data.objects.new(mesh.name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    for bone_name, indices in groups:
        obj.vertex_groups.new(name=bone_name).add(indices, 1.0, "REPLACE")
    obj.modifiers.new("Armature", "ARMATURE").object = arm_obj
    obj.parent = arm_obj
    return obj


def camera(scene, location, target, lens=50.0, ortho_scale=None):
    cam_data = bpy.data.cameras.new("DemoCamera")
    if ortho_scale:
        cam_data.type, cam_data.ortho_scale = "ORTHO", ortho_scale
    cam_data.lens = lens
    cam = bpy.data.objects.new("DemoCamera", cam_data)
    scene.collection.objects.link(cam)
    cam.location = location
    direction = np.asarray(target, float) - np.asarray(location, float)
    from mathutils import Vector

    cam.rotation_euler = Vector(direction).to_track_quat("-Z", "Y").to_euler()
    scene.camera = cam
    return cam


def workbench(scene, width=800, height=450):
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.resolution_x, scene.render.resolution_y = width, height
    scene.render.resolution_percentage = 100
    scene.display.shading.light = "STUDIO"
    scene.display.shading.color_type = "OBJECT"
    scene.display.shading.show_cavity = True
    scene.render.film_transparent = False


def render(scene, path):
    scene.render.filepath = str(path)
    bpy.ops.render.render(write_still=True)
    return path
