"""Keymap items of the add-on, removed exactly as added."""

import bpy

# (operator idname, key, modifiers) added to the Pose keymap.
KEYMAP_ITEMS = ()

_added = []


def register():
    keyconfig = bpy.context.window_manager.keyconfigs.addon
    if keyconfig is None:  # background mode has no add-on keyconfig
        return
    keymap = keyconfig.keymaps.new(name="Pose", space_type="EMPTY")
    for idname, key, modifiers in KEYMAP_ITEMS:
        item = keymap.keymap_items.new(idname, key, "PRESS", **modifiers)
        _added.append((keymap, item))


def unregister():
    for keymap, item in _added:
        keymap.keymap_items.remove(item)
    _added.clear()
