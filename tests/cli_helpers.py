"""Shared by the command-line tests: the embedded launcher, a Blender user folder with the extension
installed and enabled (as a user who installed the zip has it), and helpers to run the command."""

import hashlib
import os
import pathlib
import subprocess
import sys

import pytest

from conftest import built_zip

ROOT = pathlib.Path(__file__).resolve().parent.parent
WRAPPER = ROOT / "scripts" / "jointlimit_batch.py"
ERROR_PREFIX = "jointlimit: error:"


def launcher():
    here = pathlib.Path(sys.executable).parent / "blender"
    return here if here.is_file() else ROOT / ".venv" / "bin" / "blender"


def blender_env(tmp):
    env = dict(os.environ)
    env["BLENDER_USER_RESOURCES"] = str(tmp / "blender")
    env["XDG_CACHE_HOME"] = str(tmp / "cache")
    return env


def install_extension(env):
    """Install the built zip into the user folder of ``env`` and save the preferences, as Blender's
    *Install from Disk* does."""
    code = (f"import bpy; r = bpy.ops.extensions.package_install_files(filepath={str(built_zip())!r}, "
            "repo='user_default', enable_on_install=True); assert r == {'FINISHED'}, r; bpy.ops.wm.save_userpref()")
    result = subprocess.run([str(launcher()), "-b", "--factory-startup", "--python-exit-code", "1", "--python-expr",
                             code], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def tree_state(folder):
    """Every file under ``folder`` with its size, mtime and hash: any write shows."""
    folder = pathlib.Path(folder)
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def batch_env(tmp_path_factory):
    """Blender user folder and caches of the subprocesses, with the extension installed and enabled."""
    env = blender_env(tmp_path_factory.mktemp("batch-env"))
    install_extension(env)
    return env


def command(*args, blend=None):
    return [str(launcher()), *([str(blend)] if blend else []), "-c", "jointlimit", *map(str, args)]


@pytest.fixture
def run(batch_env):
    """``blender [FILE.blend] -c jointlimit ARGS`` through the launcher; the finished process."""
    def run(*args, blend=None, cwd=None, env=None):
        return subprocess.run(command(*args, blend=blend), env=env or batch_env, capture_output=True, text=True,
                              timeout=300, cwd=cwd)

    return run


def one_error_line(result):
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    ours = [ln for ln in lines if ln.startswith(ERROR_PREFIX)]
    assert len(ours) == 1, result.stderr
    assert lines[-1] == ours[0]
    assert "Traceback" not in result.stderr, result.stderr
    return ours[0]


def ok(result):
    assert result.returncode == 0, result.stdout + result.stderr
    assert "summary:" in (result.stderr if "--json" in result.args else result.stdout)   # JSON has stdout alone
    return result.stdout
