"""Scene and picture helpers of the demo and the docs (``demo.py``, ``make_docs.py``, tests).

Simple rigs and tubes made with Blender's data API, a camera, Workbench settings, text labels,
and pictures as numpy arrays (render, tile side by side, save as PNG) so several renders can be
put into one image without a compositor.
"""

import math
import pathlib
import tempfile

import bpy
import numpy as np


def clear_scene(frame_end=60):
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, frame_end
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
    scene.view_settings.view_transform = "Standard"  # colours as given, not washed out by Filmic/AgX


def render(scene, path):
    scene.render.filepath = str(path)
    bpy.ops.render.render(write_still=True)
    return path


# --- labels and pictures as arrays --------------------------------------------------------------

INK = (0.05, 0.05, 0.06, 1.0)


def label(text, location, size=0.35, colour=INK, align="CENTER"):
    """A text object facing the scene camera (dark by default, legible on a light background)."""
    curve = bpy.data.curves.new(text, "FONT")
    curve.body, curve.size, curve.align_x = text, size, align
    obj = bpy.data.objects.new(text, curve)
    obj.location = location
    obj.rotation_euler = bpy.context.scene.camera.rotation_euler
    obj.color = colour
    bpy.context.scene.collection.objects.link(obj)
    return obj


def caption(scene, text, height=0.06, margin=0.03):
    """A line of text along the bottom of the camera's view (one object, reused)."""
    cam = scene.camera
    obj = bpy.data.objects.get("Caption")
    if obj is None:
        curve = bpy.data.curves.new("Caption", "FONT")
        curve.align_x, curve.align_y = "CENTER", "BOTTOM"
        obj = bpy.data.objects.new("Caption", curve)
        scene.collection.objects.link(obj)
        obj.color = INK
    obj.parent = cam
    obj.matrix_parent_inverse.identity()
    corners = [c.copy() for c in cam.data.view_frame(scene=scene)]
    depth = 1.0 if cam.data.type == "ORTHO" else cam.data.clip_start * 20
    scale = 1.0 if cam.data.type == "ORTHO" else depth / -corners[0].z
    bottom = min(c.y for c in corners) * scale
    top = max(c.y for c in corners) * scale
    obj.location = (0.0, bottom + margin * (top - bottom), -depth)
    obj.rotation_euler = (0.0, 0.0, 0.0)
    obj.data.body = text
    obj.data.size = height * (top - bottom)
    obj.hide_render = not text
    return obj


def render_array(scene, text=None):
    """Render the scene camera (with ``caption(text)`` when given) into an ``(h, w, 4)`` float
    array, top row first."""
    if text is not None:
        caption(scene, text)
    with tempfile.TemporaryDirectory() as tmp:
        path = render(scene, pathlib.Path(tmp) / "frame.png")
        image = bpy.data.images.load(str(path))
        pixels = np.empty(image.size[0] * image.size[1] * 4, np.float32)
        image.pixels.foreach_get(pixels)
        w, h = image.size
        bpy.data.images.remove(image)
    return pixels.reshape(h, w, 4)[::-1].copy()


def tile(images, gap=6, background=1.0, columns=None):
    """Pictures of equal size side by side (``columns`` per row, default all in one row)."""
    h, w = images[0].shape[:2]
    columns = columns or len(images)
    rows = -(-len(images) // columns)
    out = np.full((rows * h + (rows - 1) * gap, columns * w + (columns - 1) * gap, 4), background, np.float32)
    out[..., 3] = 1.0
    for i, img in enumerate(images):
        r, c = divmod(i, columns)
        out[r * (h + gap):r * (h + gap) + h, c * (w + gap):c * (w + gap) + w] = img
    return out


def save_png(array, path):
    """Write an ``(h, w, 4)`` float array (top row first) as an 8-bit PNG."""
    h, w = array.shape[:2]
    image = bpy.data.images.new(pathlib.Path(path).stem, w, h, alpha=True)
    image.pixels.foreach_set(np.ascontiguousarray(array[::-1], np.float32).ravel())
    image.filepath_raw = str(path)
    image.file_format = "PNG"
    image.save()
    bpy.data.images.remove(image)
    return pathlib.Path(path)


# --- the character's picture set-up -------------------------------------------------------------


def character_view(scene, size=(420, 520), location=(4.1, -2.1, 1.5), target=(0.0, 0.1, 0.98), lens=50.0):
    """Workbench, a floor, a soft background and a camera three-quarter front on the character."""
    workbench(scene, *size)
    scene.display.shading.show_shadows = False  # shadows cost ~3x the render time on a CPU
    scene.display.shading.show_cavity = False
    scene.display.shading.studio_light = "paint.sl"  # bright and soft: skin reads as skin
    scene.display.render_aa = "8"
    if scene.world is None:
        scene.world = bpy.data.worlds.new("DemoWorld")
    scene.world.color = (0.86, 0.89, 0.93)
    for obj in bpy.data.objects:
        if obj.type == "MESH" and obj.name.startswith("Character"):
            obj.color = (0.95, 0.55, 0.3, 1.0) if "Arms" in obj.name else (0.9, 0.58, 0.38, 1.0)
    if "Floor" not in bpy.data.objects:
        bpy.ops.mesh.primitive_plane_add(size=12.0, location=(0.0, 0.0, 0.0))
        floor = bpy.context.object
        floor.name = "Floor"
        floor.color = (1.0, 1.0, 1.0, 1.0)
    cam = scene.camera
    if cam is None or cam.name != "CharacterCamera":
        cam = camera(scene, location, target, lens)
        cam.name = "CharacterCamera"
    return cam
