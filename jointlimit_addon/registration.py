"""Registers every Blender-facing module in order and removes them in reverse order."""

from . import cli, handlers, ik_draw, keymaps, operators, overlay, props, translations, ui

# Order matters: translations first (and removed last), properties before the UI that draws
# them, keymaps after the operators, the viewport overlay, then the command line that runs the operators.
MODULES = (translations, props, operators, ui, keymaps, handlers, ik_draw, overlay, cli)


def register():
    other = other_copy()
    if other is not None:
        raise RuntimeError(f"JointLimit is enabled already as '{other}': disable that copy first (two copies "
                           f"would replace each other's operators, settings and handlers)")
    for module in MODULES:
        module.register()


def other_copy():
    """The package of another copy of the extension enabled in this session (installed in another
    repository), or ``None``."""
    import bpy

    prop = bpy.types.PoseBone.bl_rna.properties.get("jointlimit")
    package = "" if prop is None else type(prop.fixed_type).__module__.rpartition(".")[0]
    return package if package and package != __package__ else None


def unregister():
    """Every module's ``unregister``, also after one of them failed (the first error is raised
    at the end): what the others registered is removed."""
    failed = None
    for module in reversed(MODULES):
        try:
            module.unregister()
        except Exception as exc:    # (any module's error: the rest must still go)
            failed = failed or exc
    if failed is not None:
        raise failed
