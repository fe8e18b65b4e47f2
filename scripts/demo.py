"""JointLimit demo, run headless by ``make demo``:

    blender -b --factory-startup --python scripts/demo.py

Installs the built extension into this Blender (the Makefile points Blender's user folder at
``out/blender-user`` so your own Blender set-up is untouched), builds a small rig, enables a limit
and reports what the add-on provides. The full demo scene arrives with the demo issue.
"""

import importlib
import pathlib
import sys
import tomllib

import bpy

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "out"
MODULE = "bl_ext.user_default.jointlimit_addon"


def install():
    manifest = tomllib.loads((ROOT / "blender_manifest.toml").read_text())
    zip_path = ROOT / "dist" / f"{manifest['id']}-{manifest['version']}.zip"
    if not zip_path.is_file():
        sys.exit(f"demo: {zip_path} is missing; run 'make build'")
    bpy.ops.extensions.package_install_files(filepath=str(zip_path), repo="user_default", enable_on_install=True)
    return importlib.import_module(MODULE)


def build_arm():
    bpy.ops.object.armature_add(enter_editmode=True)
    arm = bpy.context.object
    arm.name = "DemoArm"
    bones = arm.data.edit_bones
    upper = bones[0]
    upper.name, upper.head, upper.tail = "upper_arm.L", (0, 0, 1.5), (0.3, 0, 1.5)
    fore = bones.new("forearm.L")
    fore.head, fore.tail, fore.parent, fore.use_connect = (0.3, 0, 1.5), (0.6, 0, 1.5), upper, True
    bpy.ops.object.mode_set(mode="POSE")
    limit = arm.pose.bones["upper_arm.L"].jointlimit
    limit.enabled, limit.shape = True, "OVAL"
    return arm


def main():
    module = install()
    print(f"installed {module.__name__} from {pathlib.Path(module.__file__).parent}")
    bpy.ops.wm.read_homefile(use_empty=True)
    build_arm()
    bpy.ops.wm.jointlimit_info()
    OUT.mkdir(exist_ok=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(OUT / "demo.blend"))
    print(f"saved {OUT / 'demo.blend'}")


main()
