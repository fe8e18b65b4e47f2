"""The built zip installs as a real extension into the embedded Blender and is enabled."""

import os
import pathlib
import zipfile

import pytest

from conftest import ADDON_MODULE, built_zip

pytestmark = [pytest.mark.blender]


def test_zip_layout():
    names = zipfile.ZipFile(built_zip()).namelist()
    assert "blender_manifest.toml" in names and "__init__.py" in names
    assert "core/__init__.py" in names
    assert not [n for n in names if n.startswith(("tests/", "scripts/")) or "__pycache__" in n or n.endswith(".pyc")]


@pytest.mark.smoke
def test_installed_and_enabled(addon):
    import addon_utils
    import bpy

    assert addon.__name__ == ADDON_MODULE
    assert ADDON_MODULE in {a.module for a in bpy.context.preferences.addons}
    loaded, enabled = addon_utils.check(ADDON_MODULE)
    assert loaded and enabled
    assert hasattr(bpy.types.PoseBone, "jointlimit")


@pytest.mark.smoke
def test_info_operator_runs(scene):
    import bpy

    bpy.ops.object.armature_add()
    arm = bpy.context.object
    bpy.ops.object.mode_set(mode="POSE")
    arm.pose.bones[0].jointlimit.enabled = True
    assert bpy.ops.wm.jointlimit_info() == {"FINISHED"}


def test_user_data_isolated(addon):
    """Blender's user config, scripts, extensions and caches live in the test's temporary folder."""
    import bpy

    root = pathlib.Path(os.environ["BLENDER_USER_RESOURCES"]).resolve()
    for kind in ("CONFIG", "SCRIPTS", "EXTENSIONS", "DATAFILES"):
        assert pathlib.Path(bpy.utils.user_resource(kind)).resolve().is_relative_to(root), kind
    assert pathlib.Path(addon.__file__).resolve().is_relative_to(root)
    cache = pathlib.Path(os.environ["XDG_CACHE_HOME"]).resolve()
    assert not cache.is_relative_to(pathlib.Path.home().resolve()) or os.environ.get("HOME") != str(pathlib.Path.home())


def test_a_second_copy_from_another_repository_is_refused(addon, tmp_path):
    """The same zip installed into a second repository (a studio's) while the first copy is
    enabled: the second refuses to register, naming the first (both registered, each replacing the
    other's operators and handlers, and disabling one failed half-way); the first keeps working."""
    import addon_utils
    import bpy

    repos = bpy.context.preferences.extensions.repos
    folder = tmp_path / "studio"
    folder.mkdir()
    assert bpy.ops.preferences.extension_repo_add(name="studio", type="LOCAL", use_custom_directory=True,
                                                  custom_directory=str(folder)) == {"FINISHED"}
    index, repo = next((i, r) for i, r in enumerate(repos) if pathlib.Path(r.directory) == folder)
    second = f"bl_ext.{repo.module}.jointlimit_addon"
    try:
        with pytest.raises(RuntimeError, match=f"JointLimit is enabled already as '{ADDON_MODULE}': disable that copy "
                                               f"first"):
            bpy.ops.extensions.package_install_files(filepath=str(built_zip()), repo=repo.module, enable_on_install=True)
        assert addon_utils.check(second) == (False, False)
        assert addon_utils.check(ADDON_MODULE)[1]
        handlers = [f for f in bpy.app.handlers.depsgraph_update_post if "jointlimit" in getattr(f, "__module__", "")]
        assert [f.__module__.rpartition(".")[0] for f in handlers] == [ADDON_MODULE]
    finally:
        bpy.ops.preferences.extension_repo_remove(index=index, remove_files=True)
