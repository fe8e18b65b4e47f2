"""The code rules of DEVELOPERS.md, checked on the package and proven on planted violations."""

import pathlib
import subprocess
import sys
import textwrap

import pytest

import codebase_rules as rules

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "jointlimit_addon"
SOURCES = sorted(PACKAGE.rglob("*.py"))


def _rel(path):
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("check", rules.PACKAGE_CHECKS, ids=lambda c: c.__name__)
def test_package_follows_rule(check):
    violations = [v for path in SOURCES for v in check(_rel(path), path.read_text())]
    assert violations == []


def test_core_never_imports_blender_modules():
    core = [p for p in SOURCES if "core" in p.relative_to(PACKAGE).parts]
    assert core, "no core sources found"
    assert [v for p in core for v in rules.check_core_imports(_rel(p), p.read_text())] == []


def test_core_imports_without_bpy():
    """Every core module imports in a Python where bpy and mathutils cannot be imported."""
    modules = sorted(p.stem for p in (PACKAGE / "core").glob("*.py") if p.stem != "__init__")
    code = textwrap.dedent(
        f"""
        import sys
        for name in ("bpy", "mathutils", "bmesh", "gpu"):
            sys.modules[name] = None
        import importlib
        for m in {modules!r}:
            importlib.import_module("jointlimit_addon.core." + m)
        print("ok")
        """
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0 and "ok" in result.stdout, result.stderr


def test_no_version_checks_outside_compat_in_scripts_and_tests():
    """Scripts, benchmarks and tests go through the same compatibility module as the add-on."""
    others = sorted((ROOT / "scripts").rglob("*.py")) + sorted(p for p in (ROOT / "tests").rglob("*.py") if p.name != "codebase_rules.py")
    assert [v for p in others for v in rules.check_version_branches(_rel(p), p.read_text())] == []


def test_operator_modules_one_each():
    ops_dir = PACKAGE / "operators"
    for path in ops_dir.glob("*.py"):
        assert rules.check_one_operator_per_file(_rel(path), path.read_text()) == []


# --- planted violations: every rule must catch them ------------------------------------------

PLANTED = {
    rules.check_class_names: "import bpy\nclass JointLimitApply(bpy.types.Operator):\n    '''Doc'''\n",
    rules.check_operators: (
        "import bpy\n"
        "class POSE_OT_apply(bpy.types.Operator):\n"
        "    bl_idname = 'pose.apply'\n"
        "    @classmethod\n"
        "    def poll(cls, context):\n"
        "        return False\n"
    ),
    rules.check_properties: "from bpy.props import FloatProperty\nx = FloatProperty(name='X')\n",
    rules.check_core_imports: "import numpy as np\nfrom mathutils import Vector\n",
    rules.check_bare_except: "try:\n    pass\nexcept:\n    pass\n",
    rules.check_bpy_types_assignment: "import bpy\nbpy.types.PoseBone.foo = 1\ndef setup():\n    bpy.types.Object.bar = 2\n",
    rules.check_extension_rules: "import sys\nsys.path.append('x')\nbl_info = {}\nfrom jointlimit_addon.core import quat\n",
    rules.check_version_branches: (
        "import bpy\n"
        "if bpy.app.version >= (5, 0): pass\n"
        "sel = getattr(pb, 'select', None)\n"
        "mod['Socket_2'] = 1\n"
    ),
    rules.check_one_operator_per_file: (
        "import bpy\n"
        "class POSE_OT_jointlimit_a(bpy.types.Operator):\n    '''A'''\n    bl_idname = 'pose.jointlimit_a'\n"
        "class POSE_OT_jointlimit_b(bpy.types.Operator):\n    '''B'''\n    bl_idname = 'pose.jointlimit_b'\n"
    ),
}

CLEAN = (
    "import bpy\n"
    "from bpy.props import FloatProperty\n"
    "class POSE_OT_jointlimit_apply(bpy.types.Operator):\n"
    "    '''Clamp the pose'''\n"
    "    bl_idname = 'pose.jointlimit_apply'\n"
    "    value: FloatProperty(name='Value', description='A value')\n"
    "    @classmethod\n"
    "    def poll(cls, context):\n"
    "        cls.poll_message_set('needs a pose')\n"
    "        return False\n"
    "def register():\n"
    "    bpy.types.PoseBone.foo = FloatProperty(name='Foo', description='Foo')\n"
    "try:\n    pass\nexcept ValueError:\n    pass\n"
)


@pytest.mark.parametrize("check", list(PLANTED), ids=lambda c: c.__name__)
def test_rule_catches_planted_violation(check):
    assert check("planted.py", PLANTED[check]), f"{check.__name__} missed a planted violation"
    clean = "import numpy as np\nfrom . import quat\n" if check is rules.check_core_imports else CLEAN
    assert check("clean.py", clean) == []


def test_planted_counts():
    assert len(rules.check_operators("p.py", PLANTED[rules.check_operators])) == 3  # idname, doc, poll
    assert len(rules.check_bpy_types_assignment("p.py", PLANTED[rules.check_bpy_types_assignment])) == 2
    assert len(rules.check_extension_rules("p.py", PLANTED[rules.check_extension_rules])) == 3
    assert len(rules.check_version_branches("p.py", PLANTED[rules.check_version_branches])) == 3
    assert rules.check_version_branches("jointlimit_addon/compat.py", PLANTED[rules.check_version_branches]) == []
