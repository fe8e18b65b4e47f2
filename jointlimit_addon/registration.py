"""Registers every Blender-facing module in order and removes them in reverse order."""

from . import handlers, ik_draw, keymaps, operators, props, ui

# Order matters: properties before the UI that draws them, keymaps after the operators.
MODULES = (props, operators, ui, keymaps, handlers, ik_draw)


def register():
    for module in MODULES:
        module.register()


def unregister():
    for module in reversed(MODULES):
        module.unregister()
