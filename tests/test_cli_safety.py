"""Nothing lost (issue 16, items 1-5), each fault injected for real: a full disk during the save (a
small tmpfs), two inputs with one output name, two runs on one file, a file rewritten by someone
else during a run, a killed run, ten runs at once, frames outside Blender's range and a read-only
output folder."""

import contextlib
import fcntl
import importlib
import json
import os
import pathlib
import signal
import subprocess

import numpy as np
import pytest

from cli_helpers import batch_env, command, launcher, ok, one_error_line, run, tree_state  # noqa: F401
from conftest import ADDON_MODULE
from test_batch import angle_of, axis_x, build_rig, load, rotation, sampled, save

pytestmark = [pytest.mark.blender]

LONG_BAKE = 3000  # frames: a bake that runs long enough for a file to be replaced meanwhile
# Frames of a bake that is killed midway: ~0.1 ms each on the test rig (3000 took 0.3 s, and a worker
# that started that much before the other finished and saved before the kill on a loaded machine).
KILLED_BAKE = 200_000


@contextlib.contextmanager
def mounted_tmpfs(path, options):
    """A tmpfs at ``path`` (root only); skips the test with the reason when mounting is impossible."""
    path.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root and mount rights): {result.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def spine_rig():
    obj = build_rig()
    obj.pose.bones["spine"].rotation_quaternion = axis_x(60)
    return obj


def keyed_spine_rig(last_frame):
    """The test rig with its spine keyed from 0 degrees at frame 1 to 60 at ``last_frame``."""
    obj = build_rig()
    pb = obj.pose.bones["spine"]
    for frame, angle in ((1, 0), (last_frame, 60)):
        pb.rotation_quaternion = axis_x(angle)
        pb.keyframe_insert("rotation_quaternion", frame=frame)
    return obj


def start(*args, env):
    return subprocess.Popen(command(*args), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_line(proc, text):
    """Read the process's output up to a line containing ``text``; the lines read."""
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if text in line:
            return lines
    raise AssertionError(f"{text!r} never printed:\n{''.join(lines)}{proc.stderr.read()}")


def finish(proc, before=()):
    out, err = proc.communicate(timeout=600)
    return subprocess.CompletedProcess(proc.args, proc.returncode, "".join(before) + out, err)


# --- 1. a full disk ------------------------------------------------------------------------------------------


def test_full_disk_keeps_the_original_and_says_why(run, scene, tmp_path):
    with mounted_tmpfs(tmp_path / "small", "size=4m") as disk:
        spine_rig()
        rig = save(disk / "rig.blend")
        original = rig.read_bytes()
        filler = disk / "filler"
        with contextlib.suppress(OSError), open(filler, "wb", buffering=0) as f:
            while True:
                f.write(b"\0" * 4096)
        os.truncate(filler, filler.stat().st_size - len(original) // 2)  # room for half the file
        result = run("apply", rig)
        assert result.returncode == 1, result.stdout + result.stderr
        line = one_error_line(result)
        assert "no space left on device" in line and "not changed" in line
        assert "saved" not in result.stdout.replace("Saved copy", "")
        assert rig.read_bytes() == original
        assert sorted(p.name for p in disk.iterdir()) == ["filler", "rig.blend"]
        filler.unlink()  # with room again, the same run saves
        ok(run("apply", rig))
        assert angle_of(rotation(load(rig), "spine")) == pytest.approx(20.0, abs=1e-3)


def test_a_full_disk_under_an_output_folder_is_named_too(run, scene, tmp_path):
    """--output-dir on a full disk, where no file of that name exists yet: "no space left on
    device" (the size of the file read tells what the new file needs; "No such file or directory"
    before: a user trial in session 22)."""
    import bpy

    with mounted_tmpfs(tmp_path / "small", "size=8m") as disk:
        spine_rig()
        mesh = bpy.data.meshes.new("Ground")      # a file of some MB: more room left than a little
        mesh.from_pydata(np.random.default_rng(0).random((120_000, 3)).tolist(), [], [])   # (random: no compression)
        bpy.context.scene.collection.objects.link(bpy.data.objects.new("Ground", mesh))
        rig = save(tmp_path / "rig.blend")
        assert rig.stat().st_size > 1_000_000
        filler = disk / "filler"
        with contextlib.suppress(OSError), open(filler, "wb", buffering=0) as f:
            while True:
                f.write(b"\0" * 4096)
        os.truncate(filler, filler.stat().st_size - rig.stat().st_size // 2)  # room for half the file
        result = run("apply", "--output-dir", disk, rig)
        assert result.returncode == 1, result.stdout + result.stderr
        line = one_error_line(result)
        assert "no space left on device" in line and "not changed" in line
        assert sorted(p.name for p in disk.iterdir()) == ["filler"]


def test_a_short_write_is_caught_by_the_read_back(addon, scene, tmp_path):
    """The check itself, on compressed and uncompressed files: every cut is refused, the whole file passes."""
    import bpy

    blend_io = importlib.import_module(f"{addon.__name__}.cli.blend_io")
    common = importlib.import_module(f"{addon.__name__}.cli.common")
    spine_rig()
    for compress in (True, False):
        path = tmp_path / f"whole-{compress}.blend"
        bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True, compress=compress)
        whole = path.read_bytes()
        blend_io.read_back(str(path))
        for cut in (0, 7, len(whole) // 2, len(whole) - 200, len(whole) - 8, len(whole) - 1):
            short = tmp_path / "short.blend"
            short.write_bytes(whole[:cut])
            with pytest.raises(common.BatchError, match="incomplete"):
                blend_io.read_back(str(short))


# --- 2. two inputs, one output name --------------------------------------------------------------------------


def test_two_inputs_with_one_output_name_are_refused_before_any_work(run, scene, tmp_path):
    spine_rig()
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir(), (tmp_path / "out").mkdir()
    a, b = save(tmp_path / "a" / "rig.blend"), save(tmp_path / "b" / "rig.blend")
    before = a.read_bytes(), b.read_bytes()
    result = run("apply", "--output-dir", tmp_path / "out", a, b)
    assert result.returncode == 2
    line = one_error_line(result)
    assert str(a) in line and str(b) in line and str(tmp_path / "out" / "rig.blend") in line
    assert "files done" not in result.stdout and not list((tmp_path / "out").iterdir())
    assert (a.read_bytes(), b.read_bytes()) == before
    same = run("apply", a, tmp_path / "a" / ".." / "a" / "rig.blend")  # one file twice: one output too
    assert same.returncode == 2 and "would both be saved" in one_error_line(same)


# --- 3. two runs on one file ---------------------------------------------------------------------------------


def test_a_run_waits_for_the_lock_or_refuses(run, batch_env, scene, tmp_path):
    spine_rig()
    rig = save(tmp_path / "rig.blend")
    original = rig.read_bytes()
    with holding_lock(rig):  # another run (this test) writes rig.blend
        refused = run("apply", "--wait", 0, rig)
        assert refused.returncode == 2
        assert f"being written by another run (pid {os.getpid()})" in one_error_line(refused)
        assert rig.read_bytes() == original
        waiting = start("apply", "--wait", 600, rig, env=batch_env)
        before = wait_for_line(waiting, "being written by another run")
    result = finish(waiting, before)
    assert result.returncode == 0, result.stdout + result.stderr
    assert angle_of(rotation(load(rig), "spine")) == pytest.approx(20.0, abs=1e-3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rig.blend"]  # the lock file went with the lock


@contextlib.contextmanager
def holding_lock(target):
    """This test process writes ``target`` (holds its lock, as a run does)."""
    lock_path = target.parent / f".{target.name}.jointlimit-lock"
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.write(fd, f"{os.getpid()}\n".encode())
    try:
        yield
    finally:
        os.unlink(lock_path)
        os.close(fd)


def test_a_file_saved_through_a_symbolic_link_is_the_one_it_points_to(run, scene, tmp_path):
    """``shot_latest.blend -> shot_v003.blend``: a run on the link locks and writes the file it
    points to (a run on that file waits for it) and the link stays a link; its group is kept."""
    spine_rig()
    real = save(tmp_path / "shot_v003.blend")
    link = tmp_path / "shot_latest.blend"
    link.symlink_to(real.name)
    group = next((g for g in (65534, 1, 2) if g != real.stat().st_gid), None)
    try:
        os.chown(real, -1, group)
    except (OSError, TypeError):
        group = None    # not allowed here: the group part is not checked
    with holding_lock(real):
        result = run("apply", "--wait", 0, link)
    assert result.returncode == 2 and "being written by another run" in one_error_line(result)
    out = ok(run("apply", link))
    assert f"saved {real}" in out
    assert link.is_symlink() and os.readlink(link) == real.name
    assert angle_of(rotation(load(real), "spine")) == pytest.approx(20.0, abs=1e-3)
    if group is not None:
        assert real.stat().st_gid == group
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shot_latest.blend", "shot_v003.blend"]


def test_a_bake_and_an_ik_run_on_one_file_at_once_both_count(batch_env, scene, tmp_path):
    """Both runs are under way at the same time (both waiting while the file is busy): one waits for
    the other, both exit 0 and the file has both results, whichever went first."""
    frames = 300
    obj = keyed_spine_rig(frames)
    rig = save(tmp_path / "rig.blend")
    targets = tmp_path / "t.json"
    targets.write_text(json.dumps([{"frame": 7, "x": 0.8, "y": 0.5, "z": 2.6}]))
    with holding_lock(rig):
        bake = start("bake", "--frames", 1, frames, "--wait", 600, rig, env=batch_env)
        bake_out = wait_for_line(bake, "being written by another run")
        ik = start("ccd", "--bone", "hand", "--chain-length", 3, "--targets", targets, "--wait", 600, rig, env=batch_env)
        ik_out = wait_for_line(ik, "being written by another run")
    ik_result, bake_result = finish(ik, ik_out), finish(bake, bake_out)
    assert bake_result.returncode == 0, bake_result.stdout + bake_result.stderr
    assert ik_result.returncode == 0, ik_result.stdout + ik_result.stderr
    obj = load(rig)
    animation = importlib.import_module(f"{ADDON_MODULE}.animation")
    keys = {name: animation.keyed_frames(obj, obj.pose.bones[name], "rotation_quaternion", 0, frames + 1)
            for name in ("spine", "hand")}
    assert keys == {"spine": list(range(1, frames + 1)), "hand": [7]}  # the bake and the IK key
    assert max(angle_of(q) for q in sampled(obj, "spine", (1, frames // 2, frames))) <= 20.0 + 1e-3


def test_a_file_rewritten_during_the_run_is_not_replaced(batch_env, scene, tmp_path):
    obj = keyed_spine_rig(LONG_BAKE)
    rig = save(tmp_path / "rig.blend")
    obj.pose.bones["tail"].rotation_quaternion = axis_x(33)
    theirs = save(tmp_path / "theirs.blend")
    bake = start("bake", "--frames", 1, LONG_BAKE, rig, env=batch_env)
    out = wait_for_line(bake, "bake: frames")
    os.replace(theirs, rig)  # someone saves rig.blend from Blender meanwhile (no lock)
    theirs_bytes = rig.read_bytes()
    result = finish(bake, out)
    assert result.returncode == 1, result.stdout + result.stderr
    side = tmp_path / f"rig.jointlimit-conflict-{bake.pid}.blend"
    line = one_error_line(result)
    assert "changed by someone else" in line and str(side) in line
    assert rig.read_bytes() == theirs_bytes
    assert angle_of(rotation(load(rig), "tail")) == pytest.approx(33.0, abs=1e-3)
    baked = load(side)
    assert max(angle_of(q) for q in sampled(baked, "spine", (1, LONG_BAKE))) == pytest.approx(20.0, abs=1e-3)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["rig.blend", side.name])


def test_a_killed_run_frees_the_file_and_its_leftovers_go(run, batch_env, scene, tmp_path):
    keyed_spine_rig(KILLED_BAKE)
    rig = save(tmp_path / "rig.blend")
    original = rig.read_bytes()
    bake = start("bake", "--frames", 1, KILLED_BAKE, rig, env=batch_env)
    wait_for_line(bake, "bake: frames")
    bake.send_signal(signal.SIGKILL)  # kill -9 mid-run
    bake.communicate()
    assert rig.read_bytes() == original
    dead = bake.pid
    stale = [f".rig.blend.jointlimit-{dead}-0123abcd.tmp.blend", f".rig.blend.jointlimit-{dead}-0123abcd.tmp.blend@"]
    not_ours = [f".rig.blend.jointlimit-{dead}-notours.tmp.blend", f".other.blend.jointlimit-{dead}-0123abcd.tmp.blend",
                "rig.blend1"]
    for name in stale + not_ours:
        (tmp_path / name).write_bytes(b"partial")
    out = ok(run("apply", "--wait", 0, rig))  # the OS released the killed run's lock
    assert all(f"left by an interrupted run: {name}" in out for name in stale)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["rig.blend", *not_ours])


def _children(pid):
    """The process ids whose parent is ``pid`` (Linux's /proc)."""
    found = []
    for task in pathlib.Path(f"/proc/{pid}/task").glob("*/children"):
        found += [int(c) for c in task.read_text().split()]
    return found


def _gone(pids, seconds=30):
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        alive = [p for p in pids if pathlib.Path(f"/proc/{p}").exists()
                 and "Z" not in pathlib.Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[:1]]
        if not alive:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.skipif(not pathlib.Path("/proc/self/task").exists(), reason="reads Linux's /proc")
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["term", "kill"])
def test_workers_end_with_a_stopped_run_and_write_nothing(batch_env, scene, tmp_path, how):
    """A farm cancels a --jobs run (SIGTERM) or kills it: its workers end too, before they write
    their files (they went on and replaced the files seconds later); stopped, no process leaves
    its Blender temporary folder."""
    keyed_spine_rig(KILLED_BAKE)
    files = [save(tmp_path / f"{name}.blend") for name in ("a", "b")]
    before = [f.read_bytes() for f in files]
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    job = start("bake", "--frames", 1, KILLED_BAKE, "--jobs", 2, *files, env={**batch_env, "TMPDIR": str(scratch)})
    assert f"frames {KILLED_BAKE}/" not in "".join(wait_for_line(job, "bake: frames"))
    workers = _children(job.pid)
    assert len(workers) == 2, workers
    job.send_signal(how)
    _out, err = job.communicate(timeout=60)
    assert job.returncode == -how
    assert _gone(workers), "workers outlived the run"
    assert [f.read_bytes() for f in files] == before
    left = sorted(p.name for p in tmp_path.iterdir() if p.name != "scratch")
    if how == signal.SIGTERM:   # stopped: no lock, temporary or worker folder left, and one line says so
        assert left == ["a.blend", "b.blend"] and not list(scratch.glob("jointlimit-*"))
        assert not list(scratch.glob("blender_*"))     # Blender's session folders (one per process stayed)
        assert err.strip().splitlines()[-1] == ("jointlimit: error: stopped by SIGTERM: the files not reported done "
                                                "were not changed")
    else:   # killed: the locks stay (the OS released them) for the next run to take
        assert [name for name in left if not name.startswith(".")] == ["a.blend", "b.blend"]


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT], ids=["term", "ctrl-c"])
def test_a_stopped_run_says_so_and_leaves_nothing(batch_env, scene, tmp_path, how):
    """Ctrl+C or a farm's SIGTERM on a one-file run: one line says the file was not changed (a
    Python traceback and "bake: Python: Traceback" with Ctrl+C before), its lock file is gone (it
    stayed), and so is Blender's temporary folder of the process, the file is as it was, and the
    exit status is the signal's."""
    keyed_spine_rig(KILLED_BAKE)
    rig = save(tmp_path / "rig.blend")
    original = rig.read_bytes()
    scratch = tmp_path.parent / f"{tmp_path.name}-scratch"
    scratch.mkdir()
    bake = start("bake", "--frames", 1, KILLED_BAKE, rig, env={**batch_env, "TMPDIR": str(scratch)})
    wait_for_line(bake, "bake: frames")
    bake.send_signal(how)
    _out, err = bake.communicate(timeout=60)
    assert bake.returncode == -how
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == f"jointlimit: error: stopped by {how.name}: the file on disk was not changed"
    assert rig.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rig.blend"]
    assert not list(scratch.iterdir())      # Blender's session folder too (it stayed)


def _descendants(pid):
    found = []
    for child in _children(pid):
        found += [child, *_descendants(child)]
    return found


@pytest.mark.skipif(not pathlib.Path("/proc/self/task").exists(), reason="reads Linux's /proc")
@pytest.mark.parametrize("site", ["shell", "python", "stdin-closed"])
def test_workers_through_a_launcher_that_does_not_exec(batch_env, scene, tmp_path, site):
    """$JOINTLIMIT_BLENDER a site launcher that runs Blender without ``exec`` (the worker's parent
    is the launcher): a shell script, or a Python one whose subprocess closes inherited descriptors
    (the run's pipe does not reach the worker: it watches the run's process id instead); or a run
    started with standard input closed (the pipe took descriptor 0 and was not passed). The workers
    run (a parent check made them quit at once), and a run killed outright saves nothing."""
    import sys
    import time

    wrapper = tmp_path / "site-blender"
    if site == "python":
        wrapper.write_text(f"#!{sys.executable}\nimport subprocess, sys\n"
                           f"sys.exit(subprocess.run([{str(launcher())!r}, *sys.argv[1:]]).returncode)\n")
    else:
        wrapper.write_text(f'#!/bin/sh\n"{launcher()}" "$@"\n')
    wrapper.chmod(0o755)
    stdin = subprocess.DEVNULL if site != "stdin-closed" else None
    closed = (lambda: os.close(0)) if site == "stdin-closed" else None
    env = dict(batch_env, JOINTLIMIT_BLENDER=str(wrapper))
    parent = [sys.executable, str(pathlib.Path(__file__).resolve().parent.parent / "scripts" / "embedded_blender.py"),
              "-c", "jointlimit"]
    spine_rig()
    files = [save(tmp_path / f"{name}.blend") for name in ("a", "b")]
    result = subprocess.run([*parent, "apply", "--jobs", "2", *map(str, files)], env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert all(f"ok  {f}" in result.stdout for f in files)
    keyed_spine_rig(KILLED_BAKE)
    files = [save(tmp_path / f"{name}.blend") for name in ("c", "d")]
    before = [f.read_bytes() for f in files]
    job = subprocess.Popen([*parent, "bake", "--frames", "1", str(KILLED_BAKE), "--jobs", "2", *map(str, files)], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=stdin, preexec_fn=closed)
    seen = set()    # both workers at work (one still starting up when its run is killed cannot tell that
    for line in job.stdout:     # from a sandbox where the launcher closed the pipe: README)
        seen |= {name for name in ("[c.blend] bake: frames", "[d.blend] bake: frames") if name in line}
        assert f"frames {KILLED_BAKE}/" not in line     # (neither has finished: the kill comes midway)
        if len(seen) == 2:
            break
    workers = _descendants(job.pid)
    assert len(workers) >= 2, workers      # two Blenders (and their launchers, unless the shell execs them)
    job.send_signal(signal.SIGKILL)
    job.communicate(timeout=60)
    assert _gone(workers), "workers outlived the run"
    time.sleep(1.0)
    assert [f.read_bytes() for f in files] == before


def test_workers_in_a_pid_namespace_of_their_own_run(batch_env, scene, tmp_path):
    """A sandboxing launcher (bwrap, firejail, ``unshare --pid``) starts Blender in a PID
    namespace of its own, where the run's process id means nothing: the workers cannot watch the
    run and work as before (they failed, saying the run had ended)."""
    import shutil
    import sys

    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "--pid", "--fork", "--mount-proc", "true"],
                                         capture_output=True).returncode != 0:
        pytest.skip("no unshare --pid here (needs root or user namespaces)")
    wrapper = tmp_path / "sandboxed-blender"
    wrapper.write_text(f'#!/bin/sh\nexec {unshare} --pid --fork --mount-proc "{launcher()}" "$@"\n')
    wrapper.chmod(0o755)
    env = dict(batch_env, JOINTLIMIT_BLENDER=str(wrapper))
    spine_rig()
    files = [save(tmp_path / f"{name}.blend") for name in ("a", "b")]
    result = subprocess.run([sys.executable, str(pathlib.Path(__file__).resolve().parent.parent / "scripts" /
                                                 "embedded_blender.py"), "-c", "jointlimit", "apply", "--jobs", "2",
                             *map(str, files)], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert all(angle_of(rotation(load(f), "spine")) == pytest.approx(20.0, abs=1e-3) for f in files)


# --- 4. no writes to the user's configuration, ten runs at once ------------------------------------------------


def test_ten_runs_at_once_on_ten_files(batch_env, scene, tmp_path):
    spine_rig()
    files = [save(tmp_path / f"rig{i}.blend") for i in range(10)]
    user = pathlib.Path(batch_env["BLENDER_USER_RESOURCES"])
    before = tree_state(user)
    procs = [start("apply", path, env=batch_env) for path in files]
    results = [finish(p) for p in procs]
    for result in results:
        assert result.returncode == 0, result.stdout + result.stderr
    for path in files:
        assert angle_of(rotation(load(path), "spine")) == pytest.approx(20.0, abs=1e-3)
    assert tree_state(user) == before  # nothing written into Blender's user folder


# --- 5. frames outside Blender's range, a read-only output folder ----------------------------------------------


def test_frame_limits_are_blenders(addon):
    import bpy

    targets = importlib.import_module(f"{addon.__name__}.cli.targets")
    prop = bpy.types.Scene.bl_rna.properties["frame_current"]
    assert (targets.FRAME_MIN, targets.FRAME_MAX) == (prop.hard_min, prop.hard_max)


@pytest.mark.parametrize("args", [
    ("bake", "--frames", "1", "99999999999"),
    ("bake", "--frames", "-99999999999", "1"),
    ("ccd", "--bone", "hand", "--targets", "CSV"),
    ("limb-ik", "--bone", "hand", "--targets", "JSON"),
])
def test_frames_outside_blenders_range_are_bad_input(run, scene, tmp_path, args):
    spine_rig()
    rig = save(tmp_path / "rig.blend")
    before = rig.read_bytes()
    csv_path, json_path = tmp_path / "t.csv", tmp_path / "t.json"
    csv_path.write_text("frame,x,y,z\n1000000000000,0,0,2\n")
    json_path.write_text('[{"frame": 1e300, "x": 0, "y": 0, "z": 2}]')
    args = [{"CSV": str(csv_path), "JSON": str(json_path)}.get(a, a) for a in args]
    result = run(*args, rig)
    assert result.returncode == 2, result.stdout + result.stderr
    line = one_error_line(result)
    assert "outside Blender's frame range" in line
    assert line.count("--frames") <= 1 and line.count("--targets") <= 1     # the option named once
    assert rig.read_bytes() == before


def test_a_folder_marked_read_only_is_refused_also_to_root(run, scene, tmp_path):
    spine_rig()
    rig = save(tmp_path / "rig.blend")
    out = tmp_path / "published"
    out.mkdir()
    out.chmod(0o555)
    try:
        result = run("apply", "--output-dir", out, rig)
        assert result.returncode == 2 and f"output folder {out} is not writable" in one_error_line(result)
        assert not list(out.iterdir())
    finally:
        out.chmod(0o755)


def test_read_only_output_folder_is_one_line(run, scene, tmp_path):
    spine_rig()
    rig = save(tmp_path / "rig.blend")
    out = tmp_path / "out"
    if os.geteuid() == 0:  # root writes through permissions: make the folder a read-only file system
        stack = contextlib.ExitStack()
        stack.enter_context(mounted_tmpfs(out, "size=1m"))
        remount = subprocess.run(["mount", "-o", "remount,ro", str(out)], capture_output=True, text=True)
        if remount.returncode != 0:
            stack.close()
            pytest.skip(f"cannot remount read-only: {remount.stderr.strip()}")
    else:
        out.mkdir()
        out.chmod(0o555)
        stack = contextlib.ExitStack()
    with stack:
        result = run("apply", "--output-dir", out, rig)
        assert result.returncode == 2, result.stdout + result.stderr
        assert f"output folder {out} is not writable" in one_error_line(result)
        assert not list(out.iterdir())


def newer_version_copy(path):
    """A copy of the uncompressed ``path`` whose header says a Blender one major version newer."""
    from rigs import compat

    data = bytearray(path.read_bytes())
    major, minor = compat().running_version()
    old, new = ((f"v{major:02d}{minor:02d}", f"v{major + 1:02d}{minor:02d}") if data.startswith(b"BLENDER17")
                else (f"v{major}{minor:02d}", f"v{major + 1}{minor:02d}"))
    at = bytes(data[:24]).find(old.encode())
    assert at > 0, bytes(data[:24])
    data[at:at + len(old)] = new.encode()
    out = path.with_name("newer.blend")
    out.write_bytes(bytes(data))
    return out, major + 1


def test_a_file_from_a_newer_blender_is_not_rewritten(run, scene, tmp_path):
    """A file saved by a newer Blender is refused (exit 2, one line) by a command that saves, before
    any work, and left as it is; reading commands still run on it."""
    import bpy

    spine_rig()
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "rig.blend"), copy=True, compress=False)
    newer, major = newer_version_copy(tmp_path / "rig.blend")
    before = newer.read_bytes()
    result = run("apply", newer)
    assert result.returncode == 2, result.stdout + result.stderr
    line = one_error_line(result)
    assert f"saved by Blender {major}." in line and str(newer) in line
    assert newer.read_bytes() == before
    (tmp_path / "out").mkdir()
    assert run("apply", "--output-dir", tmp_path / "out", newer).returncode == 2
    assert not list((tmp_path / "out").iterdir())
    assert "summary:" in ok(run("info", newer))
    assert ok(run("apply", tmp_path / "rig.blend"))      # this version's own file


def test_a_report_path_refused_is_not_written(run, scene, tmp_path):
    """``--report`` naming a file that is not .json (a typo: the .blend itself) is refused with
    exit 2 and that file is left as it is (it was overwritten with the JSON report before)."""
    spine_rig()
    rig = save(tmp_path / "rig.blend")
    victim = save(tmp_path / "victim.blend")
    before = victim.read_bytes()
    result = run("info", rig, "--report", victim)
    assert result.returncode == 2 and "must end with .json" in one_error_line(result)
    assert victim.read_bytes() == before


def test_an_output_that_is_a_folder_or_read_only_is_refused_in_one_line(run, batch_env, scene, tmp_path):
    """``--output`` naming an existing folder, and a read-only target file (Blender refuses to save
    over one), are refused with exit 2 and one line, nothing written; an input that is a folder
    is named as one."""
    spine_rig()
    rig = save(tmp_path / "rig.blend")
    before = rig.read_bytes()
    (tmp_path / "out.blend").mkdir()
    result = run("apply", rig, "--output", tmp_path / "out.blend")
    assert result.returncode == 2 and "is a folder" in one_error_line(result)
    assert "cannot read" in one_error_line(run("info", tmp_path / "out.blend")) and "a folder" in one_error_line(
        run("info", tmp_path / "out.blend"))
    rig.chmod(0o444)
    prefix = []
    if os.geteuid() == 0:   # root writes through permissions: without the capability that lets it
        prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search",
                  "--inh-caps=-dac_override,-dac_read_search"]
        if subprocess.run([*prefix, "true"], capture_output=True).returncode != 0:
            pytest.skip("setpriv cannot drop the capability here")
    result = subprocess.run([*prefix, *command("apply", rig)], env=batch_env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 2 and "is read-only" in one_error_line(result)
    assert rig.read_bytes() == before
    result = run("apply", rig)     # as whoever runs the tests: root too (a user trial saved over it as root)
    assert result.returncode == 2 and "is read-only" in one_error_line(result)
    assert rig.read_bytes() == before
    rig.chmod(0o644)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_stopped_run_writes_its_report(batch_env, scene, tmp_path, jobs):
    """A run stopped by a signal replaces the report at --report with its own: exit code 143 (128
    + SIGTERM) and each file not finished failed, stopped by SIGTERM (the report of an earlier run
    at that path stayed, saying every file was done)."""
    keyed_spine_rig(KILLED_BAKE)
    files = [save(tmp_path / f"{name}.blend") for name in ("a", "b")[:jobs]]
    report = tmp_path / "out" / "report.json"
    report.parent.mkdir()
    report.write_text(json.dumps({"schema": 1, "exit_code": 0, "files": []}))    # an earlier run's
    job = start("bake", "--frames", 1, KILLED_BAKE, "--jobs", jobs, "--report", report, *files, env=batch_env)
    wait_for_line(job, "bake: frames")
    job.send_signal(signal.SIGTERM)
    job.communicate(timeout=60)
    assert job.returncode == -signal.SIGTERM
    data = json.loads(report.read_text())
    assert data["exit_code"] == 128 + signal.SIGTERM and len(data["files"]) == jobs
    for record in data["files"]:
        assert record["status"] == "failed" and record["errors"] == ["stopped by SIGTERM"], record
