"""The JointLimit command line from a checkout, for when the extension is not installed.

    blender -b --python scripts/jointlimit_batch.py -- <command> [options] [FILE.blend ...]

does what ``blender -c jointlimit <command> ...`` does with the installed extension (run
``... -- --help``). It uses the extension if this Blender has it enabled; otherwise it registers the
add-on from this checkout's ``jointlimit_addon/`` for this process only and removes it at the end:
nothing is installed and nothing is written to Blender's user configuration. The exit code is the
command's.
"""

import importlib
import importlib.util
import pathlib
import sys

import bpy

ROOT = pathlib.Path(__file__).resolve().parent.parent
ADDON_ID = "jointlimit_addon"
PROG = "blender -b --python jointlimit_batch.py --"


def enabled_addon():
    """The module name of an enabled JointLimit add-on with the command line, or ``None``."""
    for name in bpy.context.preferences.addons.keys():
        if (name == ADDON_ID or name.endswith("." + ADDON_ID)) and importlib.util.find_spec(name + ".cli"):
            return name
    return None


def register_checkout():
    """Register ``jointlimit_addon/`` of this checkout for this process; returns its module."""
    init = ROOT / ADDON_ID / "__init__.py"
    spec = importlib.util.spec_from_file_location(ADDON_ID, init, submodule_search_locations=[str(init.parent)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[ADDON_ID] = module
    spec.loader.exec_module(module)
    module.register()
    return module


def main(argv):
    name = enabled_addon()
    own = None if name else register_checkout()
    try:
        runner = importlib.import_module(f"{name or ADDON_ID}.cli.runner")
        return runner.main(argv, prog=PROG)
    finally:  # Blender only unregisters add-ons it enabled itself
        if own is not None:
            own.unregister()


if __name__ == "__main__":
    sys.exit(main(sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []))
