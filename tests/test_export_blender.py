"""Exports carry the clamped animation: Alembic and USD (each frame evaluated in a depsgraph of
their own, in Render or Viewport mode), FBX and glTF (frames stepped on the scene), with Clamp
Playback on and Fast Scrubbing on or off. Compared where it counts, on the skin: each exported
and re-imported frame against the frame the viewport evaluated."""

import importlib
import os

import numpy as np
import pytest

from test_playback_layer_blender import keyed_rig

pytestmark = [pytest.mark.blender]

FRAMES = (3, 6, 9)
SIDE = 0.03     # the skin's triangles: off the bone's axis, so that its twist shows


@pytest.fixture
def mods(addon):
    yield {m: importlib.import_module(f"{addon.__name__}.{m}") for m in ("handlers", "playback_layer")}
    importlib.import_module(f"{addon.__name__}.playback_layer").unregister()


def skinned_rig():
    """``keyed_rig`` (every rotation mode and limit kind, keys outside the limits) and a skin
    with a small triangle at the tail of each bone, bound to that bone alone."""
    import bpy

    obj = keyed_rig(skin=False)
    points, faces = [], []
    for bone in obj.data.bones:
        x, y, z = bone.tail_local
        faces.append(tuple(range(len(points), len(points) + 3)))
        points += [(x + SIDE, y, z), (x, y + SIDE, z), (x - SIDE, y, z - SIDE)]
    mesh = bpy.data.meshes.new("Skin")
    mesh.from_pydata(points, [], faces)
    skin = bpy.data.objects.new("Skin", mesh)
    bpy.context.scene.collection.objects.link(skin)
    for i, bone in enumerate(obj.data.bones):
        skin.vertex_groups.new(name=bone.name).add([3 * i, 3 * i + 1, 3 * i + 2], 1.0, "REPLACE")
    skin.modifiers.new("Armature", "ARMATURE").object = obj
    return obj, skin


def skin_points(scene, skin, frames=FRAMES):
    """The evaluated skin's vertices in world space at each of ``frames``."""
    import bpy

    out = []
    for frame in frames:
        scene.frame_set(frame)
        evaluated = skin.evaluated_get(bpy.context.evaluated_depsgraph_get())
        mesh = evaluated.to_mesh()
        co = np.empty(3 * len(mesh.vertices))
        mesh.vertices.foreach_get("co", co)
        evaluated.to_mesh_clear()
        out.append(co.reshape(-1, 3) @ np.array(skin.matrix_world)[:3, :3].T + np.array(skin.matrix_world)[:3, 3])
    return out


def export_and_import(fmt, folder, evaluation):
    """Export the scene in ``fmt``, open an empty scene and import it back; the imported mesh."""
    import addon_utils
    import bpy

    scene = bpy.context.scene
    path = os.path.join(folder, "shot." + {"abc": "abc", "usd": "usdc", "fbx": "fbx", "gltf": "glb"}[fmt])
    if fmt == "abc":
        bpy.ops.wm.alembic_export(filepath=path, start=scene.frame_start, end=scene.frame_end,
                                  evaluation_mode=evaluation)
    elif fmt == "usd":
        bpy.ops.wm.usd_export(filepath=path, export_animation=True, evaluation_mode=evaluation)
    elif fmt == "fbx":
        addon_utils.enable("io_scene_fbx", default_set=True)
        bpy.ops.export_scene.fbx(filepath=path, bake_anim=True, add_leaf_bones=False, bake_anim_use_all_actions=False,
                                 bake_anim_use_nla_strips=False, bake_anim_simplify_factor=0.0)
    else:
        addon_utils.enable("io_scene_gltf2", default_set=True)
        bpy.ops.export_scene.gltf(filepath=path, export_animations=True, export_force_sampling=True,
                                  export_animation_mode="ACTIVE_ACTIONS")
    bpy.ops.wm.read_homefile(use_empty=True)
    if fmt == "abc":
        bpy.ops.wm.alembic_import(filepath=path)
    elif fmt == "usd":
        bpy.ops.wm.usd_import(filepath=path)
    elif fmt == "fbx":
        bpy.ops.import_scene.fbx(filepath=path, anim_offset=0.0)
    else:
        bpy.ops.import_scene.gltf(filepath=path)
    return next(obj for obj in bpy.context.scene.objects if obj.type == "MESH")


def farthest(a, b):
    """The largest distance from a point of either set to the nearest point of the other (the
    formats may reorder or split the vertices)."""
    d = np.linalg.norm(a[:, None, :] - b[None, :, :], axis=-1)
    return max(d.min(axis=1).max(), d.min(axis=0).max())


@pytest.mark.parametrize("fast", [True, False], ids=["fast_scrubbing", "playback_clamp"])
@pytest.mark.parametrize("fmt, evaluation", [("abc", "VIEWPORT"), ("abc", "RENDER"), ("usd", "VIEWPORT"),
                                             ("usd", "RENDER"), ("fbx", None), ("gltf", None)])
def test_an_export_carries_the_clamped_animation(scene, mods, tmp_path, fmt, evaluation, fast):
    import bpy

    obj, skin = skinned_rig()
    scene.frame_start, scene.frame_end = 1, 12
    unclamped = skin_points(scene, skin)
    scene.jointlimit.clamp_playback, scene.jointlimit.fast_scrubbing = True, fast
    shown = skin_points(scene, skin)
    assert min(farthest(a, b) for a, b in zip(shown, unclamped)) > 0.05     # the limits matter on every frame
    scene.frame_set(1)
    imported = export_and_import(fmt, str(tmp_path), evaluation)
    got = skin_points(bpy.context.scene, imported)
    for frame, a, b in zip(FRAMES, got, shown):
        assert len(a) >= len(b) and farthest(a, b) < 1e-4, (fmt, evaluation, frame, farthest(a, b))


def test_a_viewport_export_leaves_the_playback_layer_in_place(scene, mods, tmp_path):
    """An export's own depsgraph is not the view layer's: the layer that serves the viewport's
    frames stays set up (and the viewport's frames clamped) through an Alembic export."""
    import bpy

    layer = mods["playback_layer"]
    obj, skin = skinned_rig()
    scene.frame_start, scene.frame_end = 1, 12
    scene.jointlimit.clamp_playback = True
    shown = skin_points(scene, skin, (1, 2, 3, 4))
    assert layer.covers(obj, scene)
    installs = layer._layer["installs"]
    bpy.ops.wm.alembic_export(filepath=str(tmp_path / "shot.abc"), start=1, end=12, evaluation_mode="VIEWPORT")
    assert layer._layer["installs"] == installs and layer.covers(obj, scene)
    for a, b in zip(skin_points(scene, skin, (1, 2, 3, 4)), shown):
        assert farthest(a, b) < 1e-6
