"""The extension's own command line (issue 21): ``blender -c jointlimit`` registered on register()
and removed on unregister(), the launcher's ``-c`` as Blender's, help and bad input for every
command, the JSON report, and a worker that dies."""

import importlib
import json
import math
import pathlib
import stat
import subprocess
import sys

import pytest

from cli_helpers import ROOT, batch_env, command, launcher, ok, one_error_line, run  # noqa: F401
from conftest import ADDON_MODULE
from test_batch import COMMANDS, angle_of, axis_x, build_limb_mesh, build_rig, load, rotation, save

pytestmark = [pytest.mark.blender]

RECORD_KEYS = {"file", "command", "status", "exit_code", "output", "bones", "objects", "tip_errors", "errors",
               "summary", "seconds"}


def test_register_and_unregister_add_and_remove_the_command(addon):
    """The add-on's register() registers the command, unregister() removes it (the handle dies)."""
    import addon_utils
    import bpy

    cli = importlib.import_module(f"{addon.__name__}.cli")
    handle = cli._handle
    assert handle is not None
    addon_utils.disable(ADDON_MODULE, default_set=True)
    try:
        assert cli._handle is None
        with pytest.raises(ValueError, match="already been removed"):
            bpy.utils.unregister_cli_command(handle)
    finally:
        addon_utils.enable(ADDON_MODULE, default_set=True)
    assert importlib.import_module(f"{addon.__name__}.cli")._handle is not None


def test_launcher_lists_and_forgets_the_command(batch_env):
    listed = subprocess.run([str(launcher()), "-c", "help"], env=batch_env, capture_output=True, text=True, timeout=300)
    assert listed.returncode == 0 and "  jointlimit\n" in listed.stdout
    disable = f"import addon_utils; addon_utils.disable({ADDON_MODULE!r})"
    gone = subprocess.run([str(launcher()), "-b", "--python-expr", disable, "-c", "jointlimit", "info"],
                          env=batch_env, capture_output=True, text=True, timeout=300)
    assert gone.returncode == 1 and 'Unrecognized command: "jointlimit"' in gone.stderr
    factory = subprocess.run([str(launcher()), "--factory-startup", "-c", "help"], env=batch_env, capture_output=True,
                             text=True, timeout=300)
    assert "jointlimit" not in factory.stdout  # not enabled in factory settings


def test_launcher_prints_its_version_and_help_as_blender(batch_env):
    """``--version`` (also after ``-b``) prints the embedded Blender's version and exits 0, as
    Blender does; ``-h`` lists the arguments it supports; an unknown one is refused naming both."""
    from importlib import metadata

    version = subprocess.run([str(launcher()), "-b", "--version"], env=batch_env, capture_output=True, text=True,
                             timeout=300)
    assert version.returncode == 0 and version.stdout.startswith(f"Blender {metadata.version('bpy')} ")
    helped = subprocess.run([str(launcher()), "-h"], env=batch_env, capture_output=True, text=True, timeout=300)
    assert helped.returncode == 0 and "--python-exit-code N" in helped.stdout and "-v, --version" in helped.stdout
    unknown = subprocess.run([str(launcher()), "--bogus"], env=batch_env, capture_output=True, text=True, timeout=300)
    assert unknown.returncode == 1 and "-v/--version" in unknown.stderr and "-h/--help" in unknown.stderr


@pytest.mark.parametrize("body, args, code, text", [
    ("return len(argv)", ["a", "b", "--x"], 3, "['a', 'b', '--x']"),
    ("raise SystemExit(4)", [], 4, "[]"),
    ("return 'no'", [], 1, "Expected an int return value, not a str"),
    ("raise RuntimeError('boom')", ["z"], 1, "RuntimeError: boom"),
])
def test_launcher_runs_a_registered_command_like_blender(tmp_path, body, args, code, text):
    """-c NAME ARGS: the callback gets the remaining arguments; its int (or SystemExit) is the exit code."""
    script = tmp_path / "register.py"
    script.write_text(f"import bpy\n\ndef run(argv):\n    print(argv)\n    {body}\n\n"
                      "bpy.utils.register_cli_command('probe', run)\n")
    result = subprocess.run([str(launcher()), "--factory-startup", "--python", str(script), "-c", "probe", *args],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == code, result.stderr
    assert text in result.stdout + result.stderr


def test_launcher_ends_a_script_run_without_an_add_on_error(tmp_path):
    """A ``--python-expr`` run (add-ons enabled, Cycles among them) ends with nothing on stderr:
    the add-ons are disabled before the handlers are freed, so none fails to remove its own."""
    result = subprocess.run([str(launcher()), "-b", "--factory-startup", "--python-expr", "print('done')"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "done" in result.stdout
    assert result.stderr.strip() == ""



@pytest.mark.parametrize("order, code", [("before", 3), ("after", 0)])
def test_python_exit_code_counts_for_the_scripts_after_it_as_in_blender(order, code):
    """Blender handles its arguments in order: ``--python-exit-code`` given after the ``--python``
    it was meant for has no effect on it (the launcher took it wherever it stood, and the README's
    example, which a farm would copy, had it after)."""
    flag, script = ["--python-exit-code", "3"], ["--python-expr", "raise ValueError('failed')"]
    args = flag + script if order == "before" else script + flag
    result = subprocess.run([str(launcher()), "-b", "--factory-startup", *args], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == code and "ValueError: failed" in result.stderr


def test_launcher_exits_after_rigify_generates_a_rig_and_removes_its_temporary_folder():
    """The README's Rigify how-to run headless: the bpy 4.5 module waited forever in its C++
    teardown after ``rigify_generate`` (a user trial's batch job never ended); the run's code, what
    Blender's C code printed, and no session folder left behind."""
    script = ("import addon_utils, bpy, sys\naddon_utils.enable('rigify', default_set=True)\n"
              "bpy.ops.object.armature_human_metarig_add()\nbpy.ops.pose.rigify_generate()\n"
              "print('TEMP', bpy.app.tempdir)\nsys.exit(4)\n")
    result = subprocess.run([str(launcher()), "-b", "--factory-startup", "--python-expr", script],
                            capture_output=True, text=True, timeout=240)
    assert result.returncode == 4, result.stderr[-2000:]
    assert 'Successfully generated: "rig"' in result.stdout
    temp = next(line.split(" ", 1)[1] for line in result.stdout.splitlines() if line.startswith("TEMP "))
    assert not pathlib.Path(temp).exists()


def test_launcher_lets_a_scripts_thread_finish_and_its_open_file_be_written(tmp_path):
    """Ending the process itself (above) still does what the interpreter's exit does: a script's
    thread that is still working finishes, a file a script left open is written out."""
    done, kept = tmp_path / "done.txt", tmp_path / "kept.txt"
    script = ("import sys, threading, time\n"
              f"def work():\n    time.sleep(0.5)\n    open({str(done)!r}, 'w').write('done')\n"
              "threading.Thread(target=work).start()\n"
              f"f = open({str(kept)!r}, 'w')\nf.write('buffered')\nsys.modules['kept_file'] = f\n")
    result = subprocess.run([str(launcher()), "-b", "--factory-startup", "--python-expr", script],
                            capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-2000:]
    assert done.read_text() == "done" and kept.read_text() == "buffered"
    # a dead weak proxy among the objects looked through, a closed stdout: the run's code all the same
    script = ("import sys, weakref\nclass A: pass\na = A()\nsys.modules['dead'] = [weakref.proxy(a)]\ndel a\n"
              "sys.stdout.close()\nsys.exit(5)\n")
    result = subprocess.run([str(launcher()), "-b", "--factory-startup", "--python-expr", script],
                            capture_output=True, text=True, timeout=240)
    assert result.returncode == 5, result.stderr[-2000:]

@pytest.mark.parametrize("flags, runs", [([], False), (["-y"], True), (["--enable-autoexec"], True),
                                         (["-y", "-Y"], False)])
def test_launcher_runs_a_files_scripts_with_y(tmp_path, flags, runs):
    """``-y`` runs the scripts a file registers (Rigify's ``rig_ui.py``), as Blender's does;
    without it, or with ``-Y`` after it, they are skipped."""
    import bpy

    bpy.ops.wm.read_homefile(use_empty=True)
    text = bpy.data.texts.new("autorun.py")
    text.write("print('AUTORUN RAN')\n")
    text.use_module = True
    path = tmp_path / "scripted.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.read_homefile(use_empty=True)
    result = subprocess.run([str(launcher()), "-b", "--factory-startup", *flags, str(path), "--python-expr",
                             "import bpy; print('FAILED', bpy.app.autoexec_fail)"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert ("AUTORUN RAN" in result.stdout) == runs and f"FAILED {not runs}" in result.stdout


PERSISTENT = ("import bpy\n@bpy.app.handlers.persistent\ndef on_load(*_args):\n    print('LOAD_POST')\n"
              "bpy.app.handlers.load_post.append(on_load)\n")


@pytest.mark.parametrize("tail, code", [([], 0), (["--python-expr", "import sys; sys.exit(3)"], 3), (["-c", "nothing"], 1),
                                        (["--python-expr", PERSISTENT], 0)])
def test_launcher_exits_from_a_file_with_a_failing_python_driver(tmp_path, tail, code):
    """A file with a Python driver whose expression fails (an mmd_tools model's SDEF driver without
    mmd_tools), and a script that leaves a persistent handler: the bpy 4.5 module hung in its
    teardown after either; the launcher exits with the run's code on every version, running no
    handler on its way out."""
    import bpy

    bpy.ops.wm.read_homefile(use_empty=True)
    obj = bpy.data.objects.new("Driven", None)
    bpy.context.scene.collection.objects.link(obj)
    fc = obj.driver_add("location", 0)
    fc.driver.type = "SCRIPTED"
    fc.driver.expression = "function_of_an_absent_add_on(1)"
    path = tmp_path / "driven.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.read_homefile(use_empty=True)
    result = subprocess.run([str(launcher()), "-b", "--factory-startup", str(path), *tail], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == code, result.stderr[-2000:]
    assert "LOAD_POST" not in result.stdout


def test_help_of_every_command(run):
    top = run("--help")
    assert top.returncode == 0 and "usage: blender -c jointlimit" in top.stdout
    for name in COMMANDS:
        sub = run(name, "--help")
        assert sub.returncode == 0, sub.stderr
        assert f"usage: blender -c jointlimit {name}" in sub.stdout and "--report" in sub.stdout


BAD = {  # one bad input per command: exit 2, one line, file untouched
    "info": (("--armature", "Nope"), "'Nope'"),
    "apply": (("--bones", "nope"), "'nope'"),
    "bake": (("--frames", "1", "99999999999"), "outside Blender's frame range"),
    "convert": (("--armature", "Nope"), "'Nope'"),
    "to-constraints": (("--bones", "nope"), "'nope'"),
    "limb-ik": (("--bone", "nope", "--targets", "TARGETS"), "'nope'"),
    "ccd": (("--bone", "hand", "--targets", "TARGETS", "--chain-length", "-1"), "--chain-length"),
    "motion": (("--frames", "5", "5"), "5..5"),
    "deformer-add": (("--mesh", "Nope"), "'Nope'"),
    "deformer-remove": ((), "has the JointLimit deformer"),
    "deformer-bake": (("--mesh", "Nope"), "'Nope'"),
    "sdef-derive": (("--mesh", "Nope"), "'Nope'"),
}


@pytest.fixture
def skin_file(scene, tmp_path):
    arm = build_rig()
    build_limb_mesh(arm)
    arm.pose.bones["spine"].rotation_quaternion = axis_x(60)
    return save(tmp_path / "skin.blend")


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_on_a_saved_file_and_bad_input(run, skin_file, tmp_path, name):
    targets = tmp_path / "t.csv"
    targets.write_text("frame,x,y,z\n1,0.3,0.2,2.6\n")
    args, expected = BAD[name]
    args = [str(targets) if a == "TARGETS" else a for a in args]
    before = skin_file.read_bytes()
    result = run(name, *args, skin_file)
    assert result.returncode == 2, result.stdout + result.stderr
    assert expected in one_error_line(result)
    assert skin_file.read_bytes() == before
    good = {"limb-ik": ("--bone", "hand", "--targets", targets), "ccd": ("--bone", "hand", "--targets", targets),
            "motion": ("--frames", 1, 5), "bake": ("--frames", 1, 3)}.get(name, ())
    if name in ("deformer-add", "deformer-bake"):  # need SDEF data
        ok(run("sdef-derive", skin_file))
    if name == "deformer-remove":   # needs a deformer
        ok(run("deformer-add", skin_file))
    if name == "motion":  # needs two keys
        ok(run("limb-ik", "--bone", "hand", "--targets", targets, skin_file))
        ok(run("ccd", "--bone", "hand", "--targets", _targets(tmp_path, 5), "--chain-length", 3, skin_file))
    before = skin_file.read_bytes()
    ok(run(name, *good, skin_file))
    assert (skin_file.read_bytes() == before) == (name == "info")  # every other command saved its result


def _targets(tmp_path, frame):
    path = tmp_path / f"t{frame}.json"
    path.write_text(json.dumps([{"frame": frame, "x": -0.3, "y": 0.4, "z": 2.5}]))
    return path


def test_report_schema_and_a_failing_file_among_several(run, scene, tmp_path):
    import bpy

    obj = build_rig()
    obj.pose.bones["spine"].rotation_quaternion = axis_x(60)
    files = [save(tmp_path / f"{n}.blend") for n in ("a", "b")]
    bpy.ops.wm.read_homefile(use_empty=True)
    files.insert(1, save(tmp_path / "empty.blend"))
    report = tmp_path / "report.json"
    result = run("apply", "--jobs", 2, "--report", report, *files)
    assert result.returncode == 2 and "1 of 3 files failed" in one_error_line(result)
    data = json.loads(report.read_text())
    assert set(data) == {"schema", "tool", "command", "exit_code", "files"}
    assert (data["schema"], data["tool"], data["command"], data["exit_code"]) == (1, "jointlimit", "apply", 2)
    assert [r["file"] for r in data["files"]] == [str(f) for f in files]
    for record in data["files"]:
        assert set(record) == RECORD_KEYS and record["command"] == "apply" and record["seconds"] >= 0
    good, bad = data["files"][0], data["files"][1]
    assert good["status"] == "ok" and good["exit_code"] == 0 and good["errors"] == []
    assert good["bones"] == ["spine"] and good["objects"] == ["Rig"] and good["output"] == str(files[0])
    assert bad["status"] == "failed" and bad["exit_code"] == 2 and bad["output"] is None
    assert bad["errors"] == ["the scene has no armature"]
    for path in (files[0], files[2]):  # the others completed
        assert angle_of(rotation(load(path), "spine")) == pytest.approx(20.0, abs=1e-3)


def test_report_of_a_run_refused_before_any_work_has_every_file(run, scene, tmp_path):
    """A missing input among several refuses the run before any work (exit 2); the report still
    has one record per input file, each failed with the run's one-line error, none written."""
    obj = build_rig()
    obj.pose.bones["spine"].rotation_quaternion = axis_x(60)
    good = save(tmp_path / "a.blend")
    before = good.read_bytes()
    missing = tmp_path / "missing.blend"
    report = tmp_path / "report.json"
    result = run("apply", "--report", report, good, missing)
    assert result.returncode == 2
    line = one_error_line(result)
    data = json.loads(report.read_text())
    assert data["exit_code"] == 2 and [r["file"] for r in data["files"]] == [str(good), str(missing)]
    for record in data["files"]:
        assert set(record) == RECORD_KEYS and record["status"] == "failed" and record["exit_code"] == 2
        assert record["output"] is None and record["errors"] == [line.removeprefix("jointlimit: error: ")]
    assert good.read_bytes() == before


def test_a_command_line_the_parser_refuses_still_writes_its_report(run, scene, tmp_path):
    """An unknown option (a typo) is refused with exit 2 before any work; ``--report`` is still
    written: every input file failed with the one-line error, also when an option's value is
    refused. A command line with no command known has a report without files."""
    good = save(tmp_path / "a.blend")
    before = good.read_bytes()
    report = tmp_path / "report.json"
    result = run("apply", "--bogus", "--report", report, good)
    assert result.returncode == 2
    line = one_error_line(result).removeprefix("jointlimit: error: ")
    assert "--bogus" in line
    data = json.loads(report.read_text())
    assert (data["command"], data["exit_code"]) == ("apply", 2) and [r["file"] for r in data["files"]] == [str(good)]
    record = data["files"][0]
    assert set(record) == RECORD_KEYS and record["status"] == "failed" and record["errors"] == [line]
    assert good.read_bytes() == before
    report.unlink()
    for bad in (("--jobs", "abc"), ("--wait", "-1"), ("--output", good, "--no-save"),   # a bad value: the files known
                ("--jobs", "abc", "-h"), ("--jobs", "abc", "--hel"), ("--jobs", "abc", "--h")):      # (help after it: still refused, no help)
        result = run("apply", *bad, "--report", report, good)
        assert result.returncode == 2
        data = json.loads(report.read_text())
        assert [(r["file"], r["errors"]) for r in data["files"]] == [(str(good), [one_error_line(result).removeprefix(
            "jointlimit: error: ")])], bad
        report.unlink()
    result = run("aply", "--report", report, good)
    assert result.returncode == 2
    data = json.loads(report.read_text())
    assert (data["command"], data["exit_code"], data["files"]) == (None, 2, [])
    assert not run("apply", "--bogus", "--report", tmp_path / "report.txt", good).returncode == 0
    assert not (tmp_path / "report.txt").exists()      # a report path refused is not written


def test_report_of_ik_has_evaluated_tip_errors(run, scene, tmp_path):
    build_rig()
    path = save(tmp_path / "limb.blend")
    targets = tmp_path / "t.json"
    targets.write_text(json.dumps([{"frame": 2, "x": 0.5, "y": 0.3, "z": 2.5}, {"frame": 4, "x": 0, "y": 0, "z": 9}]))
    report = tmp_path / "r.json"
    ok(run("limb-ik", "--bone", "hand", "--targets", targets, "--report", report, path))
    record = json.loads(report.read_text())["files"][0]
    assert record["bones"] == ["upper", "lower"] and [e["frame"] for e in record["tip_errors"]] == [2, 4]
    reached, unreachable = (e["distance"] for e in record["tip_errors"])
    assert reached < 1e-4
    # out of reach: the limb points at the target at full extension, the rest of the way is the error
    assert unreachable == pytest.approx(8 - 1 - math.dist((0, 0, 2), (0, 0.1, 3)), abs=1e-6)


def test_a_worker_that_dies_is_that_files_failure(run, batch_env, scene, tmp_path):
    """A worker killed by a signal fails its own file; the other files finish."""
    obj = build_rig()
    obj.pose.bones["spine"].rotation_quaternion = axis_x(60)
    files = [save(tmp_path / f"{n}.blend") for n in ("a", "doomed", "c")]
    doomed_bytes = files[1].read_bytes()
    killer = tmp_path / "blender-that-dies"
    killer.write_text(f'#!/bin/sh\ncase "$*" in *--worker-file*doomed.blend*) kill -KILL $$ ;; esac\nexec "{launcher()}" "$@"\n')
    killer.chmod(killer.stat().st_mode | stat.S_IXUSR)
    env = dict(batch_env, JOINTLIMIT_BLENDER=str(killer))
    report = tmp_path / "r.json"
    # the launcher script would set $JOINTLIMIT_BLENDER to itself: start its Python file directly
    parent = [sys.executable, str(ROOT / "scripts" / "embedded_blender.py"), "-c", "jointlimit", "apply", "--jobs", "2",
              "--report", str(report), *map(str, files)]
    result = subprocess.run(parent, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"FAILED (exit -9)  {files[1]}: the worker died (SIGKILL)" in result.stdout
    assert "1 of 3 files failed" in one_error_line(result)
    assert files[1].read_bytes() == doomed_bytes
    for path in (files[0], files[2]):
        assert angle_of(rotation(load(path), "spine")) == pytest.approx(20.0, abs=1e-3)
    dead = json.loads(report.read_text())["files"][1]
    assert set(dead) == RECORD_KEYS and dead["status"] == "failed" and dead["errors"] == ["the worker died (SIGKILL)"]


@pytest.mark.parametrize("guard", ["workers", "one file"])
def test_the_stop_signal_guard_leaves_blenders_own_handlers_alone(addon, monkeypatch, guard, tmp_path):
    """In ``blender -b`` Blender's C handler holds SIGINT before Python starts, and Python reports
    it as ``None``: the guards of a --jobs run and of a one-file run must neither take it nor try
    to put ``None`` back (which raised TypeError after every multi-file run in a real Blender)."""
    import signal

    workers = importlib.import_module(f"{ADDON_MODULE}.cli.workers")
    safe_save = importlib.import_module(f"{ADDON_MODULE}.cli.safe_save")
    installed = []
    real_signal, real_get = signal.signal, signal.getsignal

    def fake_get(number):
        return None if number == signal.SIGINT else real_get(number)

    def fake_signal(number, handler):
        if handler is None:
            raise TypeError("signal handler must be signal.SIG_IGN, signal.SIG_DFL, or a callable object")
        installed.append((number, handler))
        return real_signal(number, handler)

    monkeypatch.setattr(signal, "getsignal", fake_get)
    monkeypatch.setattr(signal, "signal", fake_signal)
    before = real_get(signal.SIGTERM)
    guarding, handler = ((workers.stopping_workers_on_signals(tmp_path), workers._stop_workers) if guard == "workers"
                         else (safe_save.cleaning_up_on_signals(), safe_save._stopped))
    with guarding:
        assert real_get(signal.SIGTERM) is handler
    assert real_get(signal.SIGTERM) == before
    assert all(number != signal.SIGINT for number, _ in installed)


def test_a_system_without_posix_locks_gets_one_error_line(addon, monkeypatch, capsys, tmp_path):
    """On Windows the command line refuses to start, with one line and exit 2 (it imported
    ``fcntl`` and failed with a traceback; its process checks would end processes there), and it
    loads there: ``fcntl`` is imported only when a lock is taken."""
    import os

    runner = importlib.import_module(f"{ADDON_MODULE}.cli.runner")
    safe_save = importlib.import_module(f"{ADDON_MODULE}.cli.safe_save")
    assert "fcntl" not in vars(safe_save)
    monkeypatch.setattr(os, "name", "nt")
    code = runner.main(["info", str(tmp_path / "missing.blend")])
    monkeypatch.undo()
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert err[0].startswith("jointlimit: error: the command line runs on Linux and macOS") and "WSL" in err[0]
    assert runner.main(["info", str(tmp_path / "missing.blend")]) == 2
    assert "Linux and macOS" not in capsys.readouterr().err and not list(tmp_path.iterdir())


def test_skin_commands_refuse_bad_meshes_as_bad_input(run, scene, tmp_path):
    """A mesh without an Armature modifier, one scaled unevenly against its armature, and
    ``--mute-modifiers`` with ``--as meshes`` (the character stayed in its rest pose) are input to
    fix: exit 2 and one line (the first two exited 1), the file untouched."""
    import bpy

    arm = build_rig()
    skin = build_limb_mesh(arm)
    skin.modifiers.remove(skin.modifiers["Armature"])
    bare = save(tmp_path / "bare.blend")
    skin.modifiers.new("Armature", "ARMATURE").object = arm
    skin.scale = (1.0, 1.0, 2.0)
    bpy.context.view_layer.update()
    stretched = save(tmp_path / "stretched.blend")
    skin.scale = (1.0, 1.0, 1.0)
    good = save(tmp_path / "good.blend")
    ok(run("sdef-derive", good))
    for path, why in ((bare, "has no Armature modifier"), (stretched, "is scaled unevenly")):
        before = path.read_bytes()
        for command in ("deformer-add", "deformer-bake", "sdef-derive"):
            result = run(command, "--mesh", "Skin", path)
            assert result.returncode == 2 and why in one_error_line(result), (command, result.stderr)
        assert path.read_bytes() == before
    before = good.read_bytes()
    result = run("deformer-bake", "--as", "meshes", "--mute-modifiers", good)
    assert result.returncode == 2 and "--mute-modifiers works with --as shape-keys only" in one_error_line(result)
    assert good.read_bytes() == before
