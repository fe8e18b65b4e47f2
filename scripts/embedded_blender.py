"""A ``blender`` command for the embedded Blender (the ``bpy`` module from PyPI).

``make setup`` installs ``.venv/bin/blender``, which runs this file with the venv's Python, so that
``blender -b scene.blend --python script.py -- args`` behaves the same on a machine with Blender
installed and on a fresh machine. Arguments are handled in order, as Blender does:

  -b, --background          accepted (the embedded Blender is always in background mode)
  -noaudio                   accepted, no effect
  -y, --enable-autoexec      run the Python scripts and drivers of the files opened (Rigify's
                             ``rig_ui.py``): the preference *Auto Run Python Scripts* on for the
                             session (not saved unless a script saves the preferences)
  -Y, --disable-autoexec     the same preference off for the session
  --factory-startup          load factory settings instead of the user's startup file
  FILE.blend                 open that file
  -P, --python FILE          run a Python file (``__name__ == "__main__"``)
  --python-expr EXPR         run a Python expression/statements
  --python-exit-code N       exit with N when a script after it raises (default: report and go
                             on; as in Blender, it must come before the --python it is for)
  -c, --command NAME ARGS    run the command NAME registered with ``bpy.utils.register_cli_command``
                             with all remaining arguments, then exit with its return value
                             (``-c help`` lists the commands)
  -v, --version              print the embedded Blender's version and exit
  -h, --help                 print this list of arguments and exit
  --                         everything after it is left to the scripts, in ``sys.argv``

As Blender does at start-up, the user's preferences (``userpref.blend`` in Blender's user
configuration folder) are loaded unless ``--factory-startup`` is given, which enables the add-ons
and extensions enabled there; nothing is written back. The embedded module has no way to run a
registered command, so the launcher records every ``register_cli_command`` call from the start (an
import hook on ``bpy.utils``) and runs the command as Blender's ``-c`` does: the callback gets the
remaining arguments as a list of strings, ``SystemExit`` becomes the return value, a non-int result
or an exception is printed and gives exit code 1, and an id registered twice cannot be run.

A script's ``sys.exit(n)`` ends Blender with exit code ``n``, as in Blender. The launcher sets
``$JOINTLIMIT_BLENDER`` to its own path, so scripts can start more workers of the same Blender
(``bpy.app.binary_path`` is empty in the embedded module).
"""

import importlib.machinery
import os
import runpy
import shutil
import sys
import traceback

COMMANDS = []  # [id, execute, handle] of every registered command, in order

NO_EFFECT = {"-b", "--background", "-noaudio"}
AUTOEXEC = {"-y": True, "--enable-autoexec": True, "-Y": False, "--disable-autoexec": False}


def fail(message):
    print(f"blender: {message}", file=sys.stderr)
    sys.exit(1)


def parse(args):
    """Split the command line into ordered actions up to ``--``; also whether to load the factory
    settings and the auto-run choice (``None``: the preference's)."""
    actions = []
    factory, autoexec = False, None
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            break

        def value():
            if i + 1 >= len(args) or args[i + 1] == "--":
                fail(f"{arg} needs an argument")
            return args[i + 1]

        if arg in ("-v", "--version", "-h", "--help"):     # as in Blender: at once, whatever else is given
            return False, None, [("version" if arg in ("-v", "--version") else "help", None)]
        if arg in NO_EFFECT:
            pass
        elif arg in AUTOEXEC:
            autoexec = AUTOEXEC[arg]    # as in Blender, for every file, wherever it stands
        elif arg == "--factory-startup":
            factory = True
        elif arg in ("-P", "--python"):
            actions.append(("python", value()))
            i += 1
        elif arg == "--python-expr":
            actions.append(("expr", value()))
            i += 1
        elif arg == "--python-exit-code":
            try:
                exit_code = int(value())
            except ValueError:
                fail(f"--python-exit-code expects a number, got {args[i + 1]!r}")
            if not 0 <= exit_code <= 255:
                fail("--python-exit-code must be between 0 and 255")
            actions.append(("exit-code", exit_code))    # as in Blender: for the scripts after it
            i += 1
        elif arg in ("-c", "--command"):
            if i + 1 >= len(args):
                fail(f"{arg} needs a command name (see '{arg} help')")
            actions.append(("command", (args[i + 1], args[i + 2:])))
            break
        elif arg.startswith("-"):
            fail(f"unknown argument {arg!r} (the embedded Blender supports: {', '.join(sorted(NO_EFFECT | set(AUTOEXEC)))}, "
                 "--factory-startup, -P/--python, --python-expr, --python-exit-code, -c/--command, -v/--version, "
                 "-h/--help, --)")
        else:
            actions.append(("open", arg))
        i += 1
    return factory, autoexec, actions


class RecordCommands:
    """Import hook: once ``bpy.utils`` is loaded, its ``register_cli_command`` and
    ``unregister_cli_command`` also keep ``COMMANDS`` up to date (Blender keeps this list in C)."""

    def find_spec(self, name, path, target=None):
        if name != "bpy.utils":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_record(module):
            exec_module(module)
            record_commands(module)

        spec.loader.exec_module = exec_and_record
        return spec


def record_commands(utils):
    register, unregister = utils.register_cli_command, utils.unregister_cli_command

    def register_cli_command(id, execute):
        handle = register(id, execute)
        COMMANDS.append([id, execute, handle])
        return handle

    def unregister_cli_command(handle):
        unregister(handle)
        COMMANDS[:] = [c for c in COMMANDS if c[2] is not handle]

    register_cli_command.__doc__, unregister_cli_command.__doc__ = register.__doc__, unregister.__doc__
    utils.register_cli_command, utils.unregister_cli_command = register_cli_command, unregister_cli_command


def run_command(name, argv):
    """Blender's ``-c NAME ARGS``: the exit code."""
    if name == "help":
        print("Available commands:" if COMMANDS else "No command line commands available")
        for command in sorted({c[0] for c in COMMANDS}):
            print(f"  {command}")
        return 0
    found = [c for c in COMMANDS if c[0] == name]
    if not found:
        print(f"Unrecognized command: \"{name}\"", file=sys.stderr)
        run_command("help", [])
        return 1
    if len(found) > 1:
        print(f"Command \"{name}\" is registered more than once, it cannot be run", file=sys.stderr)
        return 1
    try:
        result = found[0][1](list(argv))
    except SystemExit as exc:
        result = 0 if exc.code is None else exc.code
    except Exception:
        traceback.print_exc()
        return 1
    if not isinstance(result, int) or isinstance(result, bool):
        print(f"TypeError: Expected an int return value, not a {type(result).__name__}", file=sys.stderr)
        return 1
    return result


def load_user_preferences(bpy):
    """Read the user's preferences as Blender does at start-up (the module starts with factory ones)."""
    path = os.path.join(bpy.utils.resource_path("USER"), "config", "userpref.blend")
    if os.path.isfile(path):
        bpy.ops.wm.read_userpref()


def exit_blender(code):
    """Disable the add-ons and free the commands still registered as Blender does when it quits, then
    exit with ``code`` (a command left registered by a script crashes the 4.5 module at exit)."""
    import addon_utils
    import bpy

    addon_utils.disable_all()
    for _id, _execute, handle in list(COMMANDS):
        bpy.utils.unregister_cli_command(handle)
    sys.exit(code)


def run_action(bpy, kind, value):
    if kind == "open":
        path = os.path.abspath(value)
        if not os.path.isfile(path):
            fail(f"cannot read file {value!r}: no such file")
        bpy.ops.wm.open_mainfile(filepath=path)
    elif kind == "python":
        path = os.path.abspath(value)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"Python script not found: {value}")
        runpy.run_path(path, run_name="__main__")
    else:
        exec(compile(value, "<string>", "exec"), {"__name__": "__main__"})


def main():
    args = sys.argv[1:]
    factory, autoexec, actions = parse(args)
    if actions and actions[0][0] == "help":
        print("Usage: blender [ARGS ...] [FILE.blend] [ARGS ...] [-- SCRIPT ARGS]\n"
              + __doc__.split("Arguments are handled in order, as Blender does:")[1].lstrip("\n").split("\n\n")[0])
        return 0
    if actions and actions[0][0] == "version":
        from importlib import metadata

        print(f"Blender {metadata.version('bpy')} (the bpy module from PyPI, run by {os.path.basename(__file__)})")
        return 0
    sys.argv = ["blender"] + args
    sys.meta_path.insert(0, RecordCommands())
    import bpy

    if factory:
        bpy.ops.wm.read_factory_settings(use_empty=False)
    else:
        load_user_preferences(bpy)
    if autoexec is not None:
        bpy.context.preferences.filepaths.use_scripts_auto_execute = autoexec
    script_error_code = 0
    for kind, value in actions:
        if kind == "command":
            exit_blender(run_command(*value))
        if kind == "exit-code":
            script_error_code = value
            continue
        try:
            run_action(bpy, kind, value)
        except SystemExit:
            raise
        except Exception:
            traceback.print_exc()
            if script_error_code:
                sys.exit(script_error_code)
    return 0


def release_data():
    """Disable the add-ons as Blender does when it quits, then free the app handlers still set
    and the open file's data before the interpreter ends: the bpy 4.5 module hangs in its teardown
    when the open file holds a Python driver whose expression failed (an mmd_tools model's SDEF
    driver without mmd_tools, or with auto-run off) or when a script left a persistent handler.
    The add-ons go first (each removes its own handlers: Cycles' unregister fails on a handler
    already gone), then the handlers, so none of them runs on the empty file."""
    bpy = sys.modules.get("bpy")
    if bpy is None:
        return
    import addon_utils

    try:
        addon_utils.disable_all()
    except Exception:   # an add-on's unregister failing: report it, as Blender does, and go on
        traceback.print_exc()
    for name in dir(bpy.app.handlers):
        handlers = getattr(bpy.app.handlers, name)
        if isinstance(handlers, list):
            handlers.clear()
    try:
        bpy.ops.wm.read_homefile(use_empty=True)
    except Exception:   # nothing to keep at this point: exit as Blender would
        pass


def end_process(code):
    """Exit with ``code`` as ``sys.exit(code)`` would, after what the interpreter does on its way
    out (the caller has waited for the scripts' threads; Python's exit functions, the bpy module's
    own clean-up among them, files still open flushed), but without the C++ static destructors that come after
    it: the bpy 4.5 module can wait there forever (a thread's condition variable, after
    ``rigify_generate``), where Blender itself exits. The session's temporary folder, which
    Blender removes at that point, is removed here."""
    bpy = sys.modules.get("bpy")
    session_temp = os.path.normpath(bpy.app.tempdir) if bpy is not None and bpy.app.tempdir else None
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    import atexit
    import gc
    import io

    try:
        atexit._run_exitfuncs()
    except BaseException:   # as the interpreter reports an exit function's error, and goes on
        traceback.print_exc()
    gc.collect()
    for obj in gc.get_objects():    # files a script left open: their buffers written
        try:
            if issubclass(type(obj), io.IOBase) and not obj.closed:
                obj.flush()
        except Exception:   # a file gone bad, a freed object: nothing to write
            pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:   # closed by a script, a pipe whose reader left
            pass
    if os.name != "posix":
        sys.exit(code)
    import ctypes

    try:
        ctypes.CDLL(None).fflush(None)     # what Blender's C code printed
    except Exception:
        pass
    if session_temp is not None and os.path.basename(session_temp).startswith("blender_"):
        shutil.rmtree(session_temp, ignore_errors=True)
    os._exit(code)


if __name__ == "__main__":
    try:
        exit_code = main()
    except SystemExit as exc:
        exit_code = exc.code
    except KeyboardInterrupt:
        traceback.print_exc()
        exit_code = 130
    except BaseException:   # as Python reports an uncaught exception
        traceback.print_exc()
        exit_code = 1
    import threading

    threading._shutdown()      # the scripts' threads end (as at the interpreter's exit) before the data goes
    release_data()
    end_process(exit_code)
