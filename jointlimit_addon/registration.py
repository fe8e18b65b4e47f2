"""Registers every Blender-facing module in order and removes them in reverse order."""

from . import cli, handlers, ik_draw, keymaps, operators, overlay, props, translations, ui

# Order matters: translations first (and removed last), properties before the UI that draws
# them, keymaps after the operators, the viewport overlay, then the command line that runs the operators.
MODULES = (translations, props, operators, ui, keymaps, handlers, ik_draw, overlay, cli)


def register():
    for module in MODULES:
        module.register()


def unregister():
    for module in reversed(MODULES):
        module.unregister()
