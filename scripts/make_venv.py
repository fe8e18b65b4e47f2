"""Create the virtual environment for one ``bpy`` version with the Python that version needs.

Usage: python3 scripts/make_venv.py BPY_VERSION VENV_DIR [--python PATH]

Each Blender release is built for one Python: ``bpy`` 5.1 and newer need 3.13, 4.2 to 5.0 need
3.11. The interpreter is looked up on ``PATH`` first (``python3.13``, then ``python3``), then in
pyenv's versions folder (``$PYENV_ROOT`` or ``~/.pyenv``); every candidate is run once to check
its real version (a pyenv shim on ``PATH`` may point to nothing). An existing ``VENV_DIR`` made with
another Python is replaced. Prints the venv's Python; on failure one line that names what to
install, and exit code 2.
"""

import os
import pathlib
import shutil
import subprocess
import sys


def required_python(bpy_version):
    """``(major, minor)`` of the Python a ``bpy`` release is built for."""
    try:
        major, minor = (int(part) for part in bpy_version.split(".")[:2])
    except ValueError:
        raise SystemExit(f"make_venv: not a bpy version: {bpy_version!r} (expected e.g. 5.2.3)") from None
    if (major, minor) >= (5, 1):
        return (3, 13)
    if (major, minor) >= (4, 2):
        return (3, 11)
    raise SystemExit(f"make_venv: bpy {bpy_version} is older than the oldest supported Blender (4.5)")


def python_version(executable):
    """``(major, minor)`` the interpreter reports, or None when it does not run."""
    try:
        out = subprocess.run(
            [executable, "-c", "import sys; print(*sys.version_info[:2])"],
            capture_output=True, text=True, timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    try:
        return tuple(int(v) for v in out.stdout.split())
    except ValueError:
        return None


def pyenv_candidates(want):
    root = pathlib.Path(os.environ.get("PYENV_ROOT") or pathlib.Path.home() / ".pyenv")
    prefix = f"{want[0]}.{want[1]}."
    versions = sorted(
        (p for p in (root / "versions").glob(f"{prefix}*") if p.name[len(prefix):].isdigit()),
        key=lambda p: int(p.name[len(prefix):]),
        reverse=True,
    )
    return [str(p / "bin" / "python3") for p in versions]


def find_python(want):
    """The first interpreter of version ``want``: PATH, then pyenv's versions folder."""
    name = f"python{want[0]}.{want[1]}"
    on_path = [shutil.which(n) for n in (name, "python3")]
    for candidate in [c for c in on_path if c] + pyenv_candidates(want):
        if python_version(candidate) == want:
            return candidate
    return None


def main(argv):
    args = list(argv)
    explicit = None
    if "--python" in args:
        i = args.index("--python")
        if i + 1 >= len(args):
            raise SystemExit("make_venv: --python needs a path")
        explicit = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2:
        raise SystemExit("usage: make_venv.py BPY_VERSION VENV_DIR [--python PATH]")
    bpy_version, venv = args[0], pathlib.Path(args[1])
    want = required_python(bpy_version)
    venv_python = venv / "bin" / "python"
    if venv_python.exists():
        if python_version(str(venv_python)) == want:
            print(venv_python)
            return 0
        shutil.rmtree(venv)
    python = explicit or find_python(want)
    if python is None or python_version(python) != want:
        version = f"{want[0]}.{want[1]}"
        print(
            f"make_venv: bpy {bpy_version} needs Python {version}, and none was found on PATH or in pyenv's "
            f"versions folder: install Python {version} (e.g. 'pyenv install {version}') or pass PYTHON=/path/to/python{version}",
            file=sys.stderr,
        )
        return 2
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    print(venv_python)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except SystemExit as exc:
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
            sys.exit(2)
        raise
