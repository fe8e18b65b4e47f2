"""Several files at once: one worker process per file, each the same Blender with the same add-on.

A worker is ``blender -b --python-expr BOOT -- <the same arguments> --worker-file F --worker-report R``.
Workers end with the run that started them: a run ended by a signal (a render farm cancelling the
job) stops them first; a run killed outright (``kill -9``) is noticed by each worker: on Linux the
kernel sends SIGTERM to a direct child when its parent dies (``PR_SET_PDEATHSIG``), and on every
POSIX system a worker checks a pipe whose write end only the run holds (``--worker-run
FD:DEV:INO:PID``, its inherited read end: end-of-file once the run has ended) on each frame of its
work and right before it saves (also through a launcher script that does not ``exec`` Blender, or
in a PID namespace of its own); a launcher that closes inherited descriptors leaves the worker the
run's process id to watch instead (not from a PID namespace of its own). So no worker writes its
file after the run is gone. (Windows: the stop signals only.)
BOOT uses the add-on if that Blender already has it enabled under the parent's module name, else it
registers the parent's copy of the add-on (the same folder) for that process only; nothing is
installed and nothing is written to Blender's user configuration.
"""

import concurrent.futures
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from .common import ERROR_PREFIX, BatchError, error_line, run_identity, say
from .safe_save import STOP_SIGNALS, note_session_folder, remove_session_folder, run_stop_hooks

ADDON = __package__.rpartition(".")[0]  # e.g. bl_ext.user_default.jointlimit_addon
ADDON_INIT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "__init__.py")

BOOT = """\\
import importlib, importlib.util, os, sys
if sys.platform.startswith("linux"):    # the kernel ends a direct child with its parent at once
    import ctypes, signal
    ctypes.CDLL(None).prctl(1, int(signal.SIGTERM))     # PR_SET_PDEATHSIG
name, init = {name!r}, {init!r}
module = sys.modules.get(name)
own = module is None
if own:
    spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[os.path.dirname(init)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    module.register()
try:
    code = importlib.import_module(name + ".cli.runner").main(sys.argv[sys.argv.index("--") + 1:])
finally:
    if own:
        module.unregister()
sys.exit(code)
"""


def blender_binary():
    import bpy

    blender = os.environ.get("JOINTLIMIT_BLENDER") or bpy.app.binary_path
    if not blender:
        raise BatchError("cannot start workers: neither $JOINTLIMIT_BLENDER nor bpy.app.binary_path is set")
    return blender


# Blender's own options the workers take from the run's command line: the same session settings
# (the files' scripts and drivers run or not, the user's preferences and add-ons loaded or not)
SESSION_OPTIONS = ("-y", "--enable-autoexec", "-Y", "--disable-autoexec", "--factory-startup")


def session_options(blender_argv):
    """The options of ``SESSION_OPTIONS`` among Blender's own arguments of ``blender_argv`` (the
    command line, ``sys.argv``: those before ``--`` and before ``-c``/``--command``, whose
    arguments are the command's)."""
    options = []
    for arg in blender_argv[1:]:
        if arg in ("--", "-c", "--command"):
            break
        if arg in SESSION_OPTIONS:
            options.append(arg)
    return options


def worker_command(blender, argv, path, report, run_fd=None, blender_argv=None):
    """The worker's command line; ``run_fd``: the read end of the run's pipe (``run_pipe``);
    ``blender_argv``: the run's own command line (``sys.argv``), whose session options the
    worker takes (``session_options``)."""
    boot = BOOT.format(name=ADDON, init=ADDON_INIT)
    watch = ("--worker-run", run_identity(run_fd)) if run_fd is not None else ()
    options = session_options(sys.argv if blender_argv is None else blender_argv)
    return [blender, "-b", *options, "--python-exit-code", "1", "--python-expr", boot, "--", *argv,
            "--worker-file", path, "--worker-report", report, *watch]


_run_pipe = []  # (read end, write end) of the pipe the workers watch while this run lives


@contextlib.contextmanager
def run_pipe():
    """A pipe whose write end only this run holds (POSIX): each worker inherits its read end and
    reads end-of-file once the run has ended, however it ended (killed outright) and whichever
    process namespace the worker runs in (a sandboxing launcher's)."""
    if os.name != "posix":
        yield None
        return
    read_end, write_end = os.pipe()     # (not inherited by the workers but for the read end: pass_fds)
    if read_end < 3:    # standard input closed: keep off the descriptors a worker's standard streams take
        import fcntl

        moved = fcntl.fcntl(read_end, fcntl.F_DUPFD_CLOEXEC, 3)
        os.close(read_end)
        read_end = moved
    _run_pipe[:] = [read_end, write_end]
    try:
        yield read_end
    finally:
        _run_pipe.clear()
        os.close(read_end)
        os.close(write_end)


def death_text(code):
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"the worker died ({name})"
    return f"the worker ended without a result (exit {code})"


def run_worker(blender, argv, base, lock, tmp, run_fd=None):
    """Run one file in its own Blender; returns the file's report record (``base`` filled in by the
    worker, or marked failed with the reason when the worker gave none)."""
    path = base["file"]
    name = os.path.basename(path)
    started = time.monotonic()
    report = os.path.join(tmp, f"{abs(hash(path))}-{name}.json")
    with _LIVE_LOCK:
        if _stopping.is_set():
            raise BatchError("the run was stopped")
        proc = subprocess.Popen(worker_command(blender, argv, path, report, run_fd), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, errors="replace",
                                pass_fds=(run_fd,) if run_fd is not None else ())
        _live.add(proc)
    try:
        return _collect(proc, report, base, lock, name, started)
    finally:
        with _LIVE_LOCK:
            _live.discard(proc)


def _collect(proc, report, base, lock, name, started):
    """Wait for the worker ``proc``, echoing its lines; its report record."""
    errors = []
    reader = threading.Thread(target=lambda: errors.extend(proc.stderr))
    reader.start()
    for line in proc.stdout:
        with lock:
            say(f"[{name}] {line.rstrip(chr(10))}")
    code = proc.wait()
    reader.join()
    try:
        with open(report, encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, ValueError):
        record = None
    if record is None or record.get("exit_code") != code:
        ours = [e.strip() for e in errors if e.startswith(ERROR_PREFIX)]
        last = ours[-1][len(ERROR_PREFIX):].strip() if ours else death_text(code)
        record = {**base, "seconds": round(time.monotonic() - started, 3), **(record or {})}
        record.update(status="failed", exit_code=code or 1, errors=[*record["errors"], last])
    return record


_live = set()   # the workers running
_LIVE_LOCK = threading.Lock()
_stopping = threading.Event()
_folder = []    # the run's folder of worker reports, removed when a signal stops the run
_finished = {}  # path -> record of the files the workers finished (``finished``)


def finished():
    """``{path: record}`` of the files the workers of the run finished so far."""
    return dict(_finished)
STOPPED_WAIT = 5.0  # seconds the stopped workers get to remove their lock and temporary files


def _stop_workers(signum, _frame):
    """A signal that ends the run ends its workers first (each removes its lock and temporary
    files and says what became of its file), then the run's folder of worker reports (and
    Blender's temporary folder of this process), then the run as the signal would, after one
    line."""
    _stopping.set()
    with _LIVE_LOCK:
        running = list(_live)
    for proc in running:
        with contextlib.suppress(OSError):
            proc.terminate()
    deadline = time.monotonic() + STOPPED_WAIT
    for proc in running:
        with contextlib.suppress(subprocess.TimeoutExpired, OSError):
            proc.wait(max(0.0, deadline - time.monotonic()))
    for folder in _folder:
        shutil.rmtree(folder, ignore_errors=True)
    run_stop_hooks(signum)
    with contextlib.suppress(OSError, ValueError):
        error_line(f"stopped by {signal.Signals(signum).name}: the files not reported done were not changed")
    remove_session_folder()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


@contextlib.contextmanager
def stopping_workers_on_signals(folder):
    """``_stop_workers`` for the stop signals while the workers run (main thread only); ``folder``:
    the run's folder of worker reports."""
    _folder[:] = [folder]
    note_session_folder()
    kept = {}
    for name in STOP_SIGNALS:
        number = getattr(signal, name, None)
        if number is None or signal.getsignal(number) is None:    # None: Blender's own handler (its Ctrl+C), left alone
            continue
        try:
            kept[number] = signal.signal(number, _stop_workers)
        except (ValueError, OSError):   # not the main thread, or not allowed here
            pass
    try:
        yield
    finally:
        _folder.clear()
        for number, handler in kept.items():
            with contextlib.suppress(TypeError, ValueError, OSError):
                signal.signal(number, handler)


def process_many(args, argv, records, new_record):
    """Run every file of ``args.files`` in a worker, at most ``args.jobs`` at once; fills ``records``
    in the order of the files and prints one line per file."""
    blender = blender_binary()
    lock = threading.Lock()
    results = _finished
    results.clear()
    with tempfile.TemporaryDirectory(prefix="jointlimit-workers-") as tmp, stopping_workers_on_signals(tmp), \
            run_pipe() as run_fd:
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = {pool.submit(run_worker, blender, argv, new_record(args, os.path.abspath(p)), lock, tmp, run_fd): p
                       for p in args.files}
            for done, future in enumerate(concurrent.futures.as_completed(futures), start=1):
                results[futures[future]] = future.result()
                with lock:
                    say(f"files done {done}/{len(args.files)}")
    for path in args.files:
        record = results[path]
        records.append(record)
        code = record["exit_code"]
        text = record.get("summary") if code == 0 else (record.get("errors") or ["failed"])[-1]
        say(f"{'ok' if code == 0 else f'FAILED (exit {code})'}  {path}: {text}")
    return [r["exit_code"] for r in records if r["exit_code"]]

