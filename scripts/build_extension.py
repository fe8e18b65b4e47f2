"""Build ``dist/jointlimit_addon-<version>.zip`` with Blender's own extension tool.

The manifest lives at the top of the repository and the add-on in ``jointlimit_addon/``; the
zip must hold both side by side, so they are staged together first, validated with
``blender_ext.py validate`` and packed with ``blender_ext.py build``.

Usage: python scripts/build_extension.py [--output-dir dist]
"""

import argparse
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "jointlimit_addon"
MANIFEST = ROOT / "blender_manifest.toml"
# Tags Blender accepts for add-ons (Blender manual: Extensions > Tags).
VALID_ADDON_TAGS = [
    "3D View", "Add Curve", "Add Mesh", "Animation", "Bake", "Camera", "Compositing", "Development",
    "Game Engine", "Geometry Nodes", "Grease Pencil", "Import-Export", "Lighting", "Material",
    "Modeling", "Mesh", "Node", "Object", "Paint", "Pipeline", "Physics", "Render", "Rigging",
    "Scene", "Sculpt", "Sequencer", "System", "Text Editor", "Tracking", "User Interface", "UV",
]
EXCLUDE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", ".*", "*.blend1")


def blender_ext_tool():
    """Path of ``blender_ext.py`` shipped inside the installed ``bpy`` wheel."""
    import importlib.util

    spec = importlib.util.find_spec("bpy")
    if spec is None or spec.origin is None:
        sys.exit("build: the bpy module is not installed in this Python (run 'make setup')")
    found = sorted(pathlib.Path(spec.origin).parent.glob("*/scripts/addons_core/bl_pkg/cli/blender_ext.py"))
    if not found:
        sys.exit("build: blender_ext.py not found inside the bpy wheel")
    return found[-1]


def run_tool(tool, *args):
    result = subprocess.run([sys.executable, str(tool), *args], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"build: blender_ext.py {args[0]} failed:\n{result.stdout}{result.stderr}")
    return result.stdout


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", default=str(ROOT / "dist"))
    args = parser.parse_args(argv)
    manifest = tomllib.loads(MANIFEST.read_text())
    tool = blender_ext_tool()
    out_dir = pathlib.Path(args.output_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    zip_path = out_dir / f"{manifest['id']}-{manifest['version']}.zip"
    with tempfile.TemporaryDirectory() as tmp:
        stage = pathlib.Path(tmp) / manifest["id"]
        shutil.copytree(PACKAGE, stage, ignore=EXCLUDE)
        shutil.copy2(MANIFEST, stage / MANIFEST.name)
        tags = pathlib.Path(tmp) / "valid_tags.json"
        tags.write_text(json.dumps({"add-on": VALID_ADDON_TAGS, "theme": []}))
        run_tool(tool, "validate", str(stage), f"--valid-tags={tags}")
        run_tool(tool, "build", "--source-dir", str(stage), "--output-filepath", str(zip_path), f"--valid-tags={tags}")
    print(f"built {zip_path.relative_to(ROOT) if zip_path.is_relative_to(ROOT) else zip_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
