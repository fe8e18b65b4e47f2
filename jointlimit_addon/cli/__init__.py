"""The extension's command line, ``blender -c jointlimit <command> ...`` (``--command``).

``register()`` adds the command with ``bpy.utils.register_cli_command`` and ``unregister()``
removes it. The parts: ``parser`` (options, no Blender work), ``runner`` (one file here, several in
``workers``), ``safe_save`` (verified atomic saves, locks), ``blend_io``, ``targets`` and the
commands in ``limits_commands``, ``pose_commands`` and ``skin_commands``.
"""

import bpy

COMMAND = "jointlimit"
_handle = None


def execute(argv):
    """What Blender calls for ``blender -c jointlimit ARGS``: the exit code of the run."""
    from . import runner

    return runner.main(argv)


def register():
    global _handle
    _handle = bpy.utils.register_cli_command(COMMAND, execute)


def unregister():
    global _handle
    if _handle is not None:
        bpy.utils.unregister_cli_command(_handle)
        _handle = None
