"""register -> unregister -> register, three times, leaves no trace."""

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
