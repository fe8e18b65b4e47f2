"""Run the test suite with Blender's user data, caches and HOME in a fresh temporary folder.

Usage: python scripts/run_tests.py [--blender PATH] [pytest args...]

Without ``--blender`` pytest runs in this Python, where ``bpy`` is the embedded Blender.
With ``--blender`` the same suite runs inside that Blender executable through pytest-blender
(a real Blender, or the ``.venv/bin/blender`` launcher). Afterwards the temporary HOME must still
be empty: nothing may be written under the home directory. pytest's exit code 5 (no tests ran)
counts as a failure.
"""

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent


def isolated_env(tmp):
    env = dict(os.environ)
    for key, sub in (("HOME", "home"), ("BLENDER_USER_RESOURCES", "blender"), ("XDG_CACHE_HOME", "cache")):
        path = tmp / sub
        path.mkdir(parents=True, exist_ok=True)
        env[key] = str(path)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def main(argv):
    blender = None
    if argv[:1] == ["--blender"]:
        if len(argv) < 2:
            sys.exit("run_tests: --blender needs a path")
        blender, argv = argv[1], argv[2:]
        resolved = shutil.which(blender)
        if resolved is None:
            sys.exit(f"run_tests: Blender executable not found: {blender}")
        blender = os.path.abspath(resolved)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="jointlimit-run-"))
    try:
        env = isolated_env(tmp)
        if blender:
            cmd = [sys.executable, "-m", "pytest", "--blender-executable", blender, *argv]
        else:
            cmd = [sys.executable, "-m", "pytest", "-p", "no:pytest-blender", *argv]
        print("+", " ".join(cmd), flush=True)
        code = subprocess.call(cmd, cwd=ROOT, env=env)
        if code == 5:
            print("run_tests: pytest collected no tests; that is a failure", file=sys.stderr)
            code = 1
        leftovers = sorted(str(p.relative_to(tmp / "home")) for p in (tmp / "home").rglob("*"))
        if leftovers:
            print(f"run_tests: tests wrote under the home directory: {leftovers[:10]}", file=sys.stderr)
            code = code or 1
        return code
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
