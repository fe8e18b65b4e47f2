"""Test set-up: isolated Blender user data, and the extension installed from the built zip.

Blender-level tests run against ``bl_ext.user_default.jointlimit_addon`` installed from
``dist/*.zip`` with ``bpy.ops.extensions.package_install_files``, never the source tree.
Core tests import ``jointlimit_addon.core`` from the source tree (pure numpy, no ``bpy``).
"""

import atexit
import importlib
import os
import pathlib
import sys
import tempfile
import tomllib

import shutil

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
ADDON_MODULE = "bl_ext.user_default.jointlimit_addon"

# Must happen before bpy is imported anywhere: Blender reads these at start-up.
if "BLENDER_USER_RESOURCES" not in os.environ or "XDG_CACHE_HOME" not in os.environ:
    _tmp = pathlib.Path(tempfile.mkdtemp(prefix="jointlimit-tests-"))
    atexit.register(shutil.rmtree, _tmp, ignore_errors=True)
    os.environ.setdefault("BLENDER_USER_RESOURCES", str(_tmp / "blender"))
    os.environ.setdefault("XDG_CACHE_HOME", str(_tmp / "cache"))


def built_zip():
    """The zip ``make build`` produced for the manifest's version (or ``$JOINTLIMIT_ZIP``)."""
    explicit = os.environ.get("JOINTLIMIT_ZIP")
    if explicit:
        return pathlib.Path(explicit)
    manifest = tomllib.loads((ROOT / "blender_manifest.toml").read_text())
    return ROOT / "dist" / f"{manifest['id']}-{manifest['version']}.zip"


@pytest.fixture(scope="session")
def addon():
    """The installed and enabled extension module."""
    import bpy

    module = sys.modules.get(ADDON_MODULE)
    if module is None:
        zip_path = built_zip()
        if not zip_path.is_file():
            pytest.fail(f"{zip_path} is missing: run 'make build' (make test does it)")
        result = bpy.ops.extensions.package_install_files(
            filepath=str(zip_path), repo="user_default", enable_on_install=True
        )
        assert result == {"FINISHED"}, result
        module = importlib.import_module(ADDON_MODULE)
    user_root = pathlib.Path(os.environ["BLENDER_USER_RESOURCES"]).resolve()
    assert pathlib.Path(module.__file__).resolve().is_relative_to(user_root), module.__file__
    return module


@pytest.fixture
def scene(addon):
    """An empty scene in a fresh file; the add-on stays enabled."""
    import bpy

    bpy.ops.wm.read_homefile(use_empty=True)
    return bpy.context.scene


_SESSION = {}


def pytest_sessionfinish(session, exitstatus):
    _SESSION["exitstatus"] = int(exitstatus)


def pytest_unconfigure(config):
    """End the process as soon as pytest is done with it when the embedded Blender was loaded.

    The bpy module's own exit (its C++ static destructors) can wait forever on its GPU worker
    threads: seen once with bpy 4.5.15 after the whole suite (its Workbench renders included),
    which would hang CI until its time limit. Everything pytest reports is written by now.
    """
    if "bpy" in sys.modules and "exitstatus" in _SESSION:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_SESSION["exitstatus"])
