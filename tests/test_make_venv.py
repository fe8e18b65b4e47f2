"""``scripts/make_venv.py``: the Python each Blender needs, found on PATH or in pyenv's folder."""

import importlib.util
import os
import pathlib
import stat
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "make_venv.py"


@pytest.fixture(scope="module")
def make_venv():
    spec = importlib.util.spec_from_file_location("make_venv", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fake_python(path, version):
    """An executable that answers the version probe like a Python of ``version``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho {version[0]} {version[1]}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


@pytest.mark.parametrize("bpy_version, python", [
    ("5.2.3", (3, 13)), ("5.1.0", (3, 13)), ("5.0.1", (3, 11)), ("4.5.15", (3, 11)), ("4.2.0", (3, 11)),
])
def test_each_blender_gets_its_python(make_venv, bpy_version, python):
    assert make_venv.required_python(bpy_version) == python


def test_path_first_then_the_newest_pyenv_version(make_venv, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    fake_python(bin_dir / "python3.13", (3, 12))  # a shim that runs something else: skipped
    pyenv = tmp_path / "pyenv"
    fake_python(pyenv / "versions" / "3.13.0" / "bin" / "python3", (3, 13))
    newest = fake_python(pyenv / "versions" / "3.13.10" / "bin" / "python3", (3, 13))
    fake_python(pyenv / "versions" / "3.13.10-debug" / "bin" / "python3", (3, 13))
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("PYENV_ROOT", str(pyenv))
    assert make_venv.find_python((3, 13)) == str(newest)
    on_path = fake_python(bin_dir / "python3.13", (3, 13))
    assert make_venv.find_python((3, 13)) == str(on_path)


def test_no_suitable_python_is_one_line_naming_what_to_install(tmp_path):
    bin_dir = tmp_path / "bin"
    fake_python(bin_dir / "python3", (3, 11))
    env = dict(os.environ, PATH=str(bin_dir), PYENV_ROOT=str(tmp_path / "no-pyenv"), HOME=str(tmp_path))
    result = subprocess.run([sys.executable, str(SCRIPT), "5.2.3", str(tmp_path / "venv")],
                            capture_output=True, text=True, env=env)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs Python 3.13" in lines[0] and "install Python 3.13" in lines[0]
    assert not (tmp_path / "venv").exists()


def test_bad_version_is_one_line(tmp_path):
    result = subprocess.run([sys.executable, str(SCRIPT), "five", str(tmp_path / "venv")],
                            capture_output=True, text=True)
    assert result.returncode == 2 and result.stderr.strip().count("\n") == 0
    assert "not a bpy version" in result.stderr


def test_existing_venv_of_the_right_python_is_kept(make_venv, tmp_path):
    venv = tmp_path / "venv"
    me = sys.version_info[:2]
    bpy_version = "5.2.3" if me == (3, 13) else "5.0.1"
    if make_venv.required_python(bpy_version) != me:
        pytest.skip(f"this Python ({me}) matches no supported bpy")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    marker = venv / "marker"
    marker.write_text("kept")
    result = subprocess.run([sys.executable, str(SCRIPT), bpy_version, str(venv)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(venv / "bin" / "python") and marker.exists()


def test_existing_venv_of_another_python_is_replaced(tmp_path):
    venv = tmp_path / "venv"
    fake_python(venv / "bin" / "python", (3, 9))
    me = sys.version_info[:2]
    bpy_version = "5.2.3" if me == (3, 13) else "5.0.1"
    # pip, run by venv, asks rustc for its version (a rustup proxy writes ~/.rustup): keep HOME here
    result = subprocess.run([sys.executable, str(SCRIPT), bpy_version, str(venv), "--python", sys.executable],
                            capture_output=True, text=True, env=dict(os.environ, HOME=str(tmp_path)))
    assert result.returncode == 0, result.stderr
    probe = subprocess.run([str(venv / "bin" / "python"), "-c", "import sys; print(*sys.version_info[:2])"],
                           capture_output=True, text=True)
    assert tuple(int(v) for v in probe.stdout.split()) == me

