"""register -> unregister -> register, three times, leaves no trace."""

import importlib

import pytest

from conftest import ADDON_MODULE

pytestmark = [pytest.mark.blender]

WATCHED_TYPES = ("PoseBone", "Bone", "Object", "Scene", "Armature", "WindowManager", "Mesh", "EditBone")
WATCHED_MENUS = ("VIEW3D_MT_pose", "VIEW3D_MT_object", "VIEW3D_MT_editor_menus", "TOPBAR_MT_file_import")


def snapshot():
    """Everything an add-on can leave behind, in a comparable form."""
    import bpy

    keyconfig = bpy.context.window_manager.keyconfigs.addon
    keymap_items = []
    if keyconfig is not None:
        for km in keyconfig.keymaps:
            keymap_items.extend((km.name, item.idname) for item in km.keymap_items)
    return {
        "types": frozenset(dir(bpy.types)),
        "properties": {t: frozenset(getattr(bpy.types, t).bl_rna.properties.keys()) for t in WATCHED_TYPES},
        "py_attrs": {t: frozenset(vars(getattr(bpy.types, t))) for t in WATCHED_TYPES},
        "handlers": {
            name: tuple(getattr(h, "__module__", "") + "." + getattr(h, "__name__", repr(h)) for h in getattr(bpy.app.handlers, name))
            for name in dir(bpy.app.handlers)
            if isinstance(getattr(bpy.app.handlers, name), list)
        },
        "keymap_items": sorted(keymap_items),
        "menus": {m: len(getattr(bpy.types, m)._dyn_ui_initialize()) for m in WATCHED_MENUS if hasattr(bpy.types, m)},
        "translations": frozenset(bpy.app.translations.locales) if hasattr(bpy.app.translations, "locales") else None,
    }


def diff(a, b):
    out = []
    for key in a:
        if a[key] != b[key]:
            if isinstance(a[key], dict):
                out += [f"{key}.{k}: {a[key][k]!r} != {b[key].get(k)!r}" for k in a[key] if a[key][k] != b[key].get(k)]
            elif isinstance(a[key], frozenset):
                out.append(f"{key}: +{sorted(b[key] - a[key])} -{sorted(a[key] - b[key])}")
            else:
                out.append(f"{key}: {a[key]!r} != {b[key]!r}")
    return out


def test_register_cycle_leaves_no_trace(addon):
    import addon_utils
    import bpy

    addon_utils.disable(ADDON_MODULE, default_set=True)
    clean = snapshot()
    assert not hasattr(bpy.types.PoseBone, "jointlimit")
    enabled = None
    try:
        for _ in range(3):
            addon_utils.enable(ADDON_MODULE, default_set=True)
            assert hasattr(bpy.types.PoseBone, "jointlimit")
            now = snapshot()
            if enabled is None:
                enabled = now
                assert diff(clean, enabled), "enabling registered nothing"
            assert diff(enabled, now) == []
            addon_utils.disable(ADDON_MODULE, default_set=True)
            assert diff(clean, snapshot()) == []
    finally:
        addon_utils.enable(ADDON_MODULE, default_set=True)
    assert hasattr(bpy.types.PoseBone, "jointlimit")


def test_menus_and_sidebar_offer_every_tool(addon):
    """The Pose menu and sidebar reach the limit operators and the posing tools, the Object menu the
    deformer operators: every operator ui.py names is registered, and none of the tools is left to
    the F3 search alone."""
    import pathlib
    import re

    import bpy

    named = set(re.findall(r'\.operator\("([a-z_]+\.[a-z_]+)"', (pathlib.Path(addon.__file__).parent / "ui.py").read_text()))
    registered = {op.bl_rna.identifier for op in bpy.types.Operator.__subclasses__()}
    info = importlib.import_module(f"{addon.__name__}.operators.info")
    assert named <= set(info.addon_operator_ids())     # ours, and registered:
    assert {f"{idname.partition('.')[0].upper()}_OT_{idname.partition('.')[2]}" for idname in named} <= registered
    tools = {"pose.jointlimit_limb_ik", "pose.jointlimit_ccd_ik", "pose.jointlimit_motion", "pose.jointlimit_apply",
             "pose.jointlimit_bake", "object.jointlimit_sdef_derive", "object.jointlimit_deformer_add",
             "object.jointlimit_deformer_remove", "object.jointlimit_deformer_bake"}
    assert tools <= named
    for menu in ("POSE_MT_jointlimit", "OBJECT_MT_jointlimit_deformer"):
        assert hasattr(bpy.types, menu)
    ui = importlib.import_module(f"{addon.__name__}.ui")
    assert ui.draw_object_menu in bpy.types.VIEW3D_MT_object._dyn_ui_initialize()
    assert ui.draw_pose_menu in bpy.types.VIEW3D_MT_pose._dyn_ui_initialize()


def test_enabled_with_a_file_open_clamps_the_frame_shown(scene):
    """A file with Clamp Playback on, opened while the extension was off: enabling it clamps the
    frame shown at once, as opening the file with it on does (it showed the keys until the frame
    changed)."""
    import math

    import addon_utils
    import bpy

    bpy.ops.object.armature_add()
    obj = bpy.context.object
    pb = obj.pose.bones[0]
    pb.rotation_mode = "XYZ"
    settings = pb.jointlimit
    settings.enabled, settings.kind, settings.shape = True, "SWING_TWIST", "RECT"
    settings.swing_x_min, settings.swing_x_max = math.radians(-30), math.radians(60)
    settings.swing_z_min, settings.swing_z_max = math.radians(-20), math.radians(40)
    pb.rotation_euler = (math.radians(100), 0.0, 0.0)
    for frame in (1, 10):
        pb.keyframe_insert("rotation_euler", frame=frame)
    scene.jointlimit.clamp_playback = True
    addon_utils.disable(ADDON_MODULE, default_set=True)
    try:
        scene.frame_set(5)
        assert math.degrees(pb.rotation_euler[0]) == pytest.approx(100, abs=1e-3)
    finally:
        addon_utils.enable(ADDON_MODULE, default_set=True)
    assert math.degrees(pb.rotation_euler[0]) == pytest.approx(60, abs=1e-3)
    scene.jointlimit.clamp_playback = False
