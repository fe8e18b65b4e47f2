"""A ``blender`` command for the embedded Blender (the ``bpy`` module from PyPI).

``make setup`` installs ``.venv/bin/blender``, which runs this file with the venv's Python, so that
``blender -b scene.blend --python script.py -- args`` behaves the same on a machine with Blender
installed and on a fresh machine. Arguments are handled in order, as Blender does:

  -b, --background          accepted (the embedded Blender is always in background mode)
  -noaudio, -y, -Y           accepted, no effect
  --factory-startup          load factory settings instead of the user's startup file
  FILE.blend                 open that file
  -P, --python FILE          run a Python file (``__name__ == "__main__"``)
  --python-expr EXPR         run a Python expression/statements
  --python-exit-code N       exit with N when a script raises (default: report and go on)
  --                         everything after it is left to the scripts, in ``sys.argv``

A script's ``sys.exit(n)`` ends Blender with exit code ``n``, as in Blender. The launcher sets
``$JOINTLIMIT_BLENDER`` to its own path, so scripts can start more workers of the same Blender
(``bpy.app.binary_path`` is empty in the embedded module).
"""

import os
import runpy
import sys
import traceback

NO_EFFECT = {"-b", "--background", "-noaudio", "-y", "--enable-autoexec", "-Y", "--disable-autoexec"}


def fail(message):
    print(f"blender: {message}", file=sys.stderr)
    sys.exit(1)


def parse(args):
    """Split the command line into ordered actions up to ``--``."""
    actions, exit_code = [], 0
    factory = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            break

        def value():
            if i + 1 >= len(args) or args[i + 1] == "--":
                fail(f"{arg} needs an argument")
            return args[i + 1]

        if arg in NO_EFFECT:
            pass
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
            i += 1
        elif arg.startswith("-"):
            fail(f"unknown argument {arg!r} (the embedded Blender supports: {', '.join(sorted(NO_EFFECT))}, "
                 "--factory-startup, --python, --python-expr, --python-exit-code, --)")
        else:
            actions.append(("open", arg))
        i += 1
    return factory, actions, exit_code


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
    factory, actions, script_error_code = parse(args)
    sys.argv = ["blender"] + args
    import bpy

    if factory:
        bpy.ops.wm.read_factory_settings(use_empty=False)
    for kind, value in actions:
        try:
            run_action(bpy, kind, value)
        except SystemExit:
            raise
        except Exception:
            traceback.print_exc()
            if script_error_code:
                sys.exit(script_error_code)
    return 0


if __name__ == "__main__":
    sys.exit(main())
