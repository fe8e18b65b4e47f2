"""Nothing lost: verified atomic saves, one writer per target file, and stale temporary files.

A save goes to a temporary file beside the target (``.NAME.jointlimit-PID-XXXXXXXX.tmp.blend``),
is flushed to disk and read back, and only then replaces the target with ``os.replace``. A lock file
beside the target (``.NAME.jointlimit-lock``, an ``fcntl.flock`` the OS releases when the process
ends, however it ends) keeps two runs from writing the same file at once, and a fingerprint of the
target taken under the lock refuses the replacement if anything else rewrote the file meanwhile.
"""

import contextlib
import errno
import hashlib
import os
import re
import secrets
import shutil
import signal
import tempfile
import time

from . import thumbnails
from .common import BatchError, UsageError, error_line, pid_alive

LOCK_SUFFIX = ".jointlimit-lock"
TEMP_INFIX = ".jointlimit-"
TEMP_SUFFIX = ".tmp.blend"
LEFTOVER_SUFFIXES = ("", "@", "1")  # Blender writes PATH@ and renames it; PATH1 is its backup copy
HASHED_BYTES = 1 << 16
LOW_SPACE = 1 << 16  # less free space than this (or than the file needs) after a failed write: the disk is full


STOP_SIGNALS = ("SIGTERM", "SIGHUP", "SIGINT")
_held = {}      # path -> what it is: the lock files this run holds and the temporary file it writes
_saved = []     # targets this run has replaced


@contextlib.contextmanager
def cleaning_up_on_signals():
    """A stop signal (Ctrl+C, ``kill``) ends the run with one line saying what became of the
    file and leaves no lock or temporary file of this run behind, then ends the process as the
    signal would (its exit status). Only where Python handles the signal (not where Blender
    installed its own, as a real Blender does for Ctrl+C), on the main thread."""
    kept = {}
    note_session_folder()
    for name in STOP_SIGNALS:
        number = getattr(signal, name, None)
        if number is None or signal.getsignal(number) is None:
            continue
        try:
            kept[number] = signal.signal(number, _stopped)
        except (ValueError, OSError):   # not the main thread
            pass
    try:
        yield
    finally:
        for number, handler in kept.items():
            with contextlib.suppress(TypeError, ValueError, OSError):
                signal.signal(number, handler)


_stop_hooks = []    # called with the signal's number when a stop signal ends the run (``on_stop``)


@contextlib.contextmanager
def on_stop(hook):
    """Have ``hook(signum)`` called when a stop signal ends the run, before it ends (the run's
    report says so)."""
    _stop_hooks.append(hook)
    try:
        yield
    finally:
        _stop_hooks.remove(hook)


def run_stop_hooks(signum):
    for hook in list(_stop_hooks):
        with contextlib.suppress(Exception):
            hook(signum)


def _stopped(signum, _frame):
    remove_held()
    done = f"{_saved[-1]} was saved before" if _saved else "the file on disk was not changed"
    run_stop_hooks(signum)
    with contextlib.suppress(OSError, ValueError):
        error_line(f"stopped by {signal.Signals(signum).name}: {done}")
    remove_session_folder()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def note_session_folder():
    """Note Blender's temporary folder of this process for ``remove_session_folder``: its
    ``bpy.app.tempdir`` when that is Blender's own ``blender_XXXXXX`` folder in the system's or
    the preferences' temporary folder. Read when the stop handlers are set, never in a signal
    handler (there Blender's data may be in the middle of a change: a worker hung reading it)."""
    _session.clear()
    try:
        import bpy
    except ImportError:
        return
    folder = os.path.normpath(bpy.app.tempdir or "")
    bases = {os.path.normpath(tempfile.gettempdir()),
             os.path.normpath(bpy.context.preferences.filepaths.temporary_directory or tempfile.gettempdir())}
    if SESSION_FOLDER.fullmatch(os.path.basename(folder)) and os.path.dirname(folder) in bases:
        _session.append(folder)


def remove_session_folder():
    """Remove Blender's temporary folder of this process (``note_session_folder``), as Blender does
    when it exits: a process ended by the stop signal re-sent to it never gets there (a farm
    cancelling runs filled its /tmp)."""
    for folder in _session:
        shutil.rmtree(folder, ignore_errors=True)


_session = []   # Blender's temporary folder of this process (``note_session_folder``)
SESSION_FOLDER = re.compile(r"blender_[A-Za-z0-9_]{6}")    # Blender's own name for it (mkdtemp's six characters)


def remove_held():
    """Remove the lock files and the temporary file this run holds (the run is being stopped)."""
    for path in list(_held):
        with contextlib.suppress(OSError):
            os.unlink(path)
        _held.pop(path, None)


def temp_path(target):
    folder, name = os.path.split(target)
    return os.path.join(folder, f".{name}{TEMP_INFIX}{os.getpid()}-{secrets.token_hex(4)}{TEMP_SUFFIX}")


def temp_pattern(name):
    """The exact names of this tool's temporary files for the target ``name`` (group 1: the pid)."""
    return re.compile(rf"\.{re.escape(name)}{re.escape(TEMP_INFIX)}(\d+)-[0-9a-f]{{8}}"
                      rf"{re.escape(TEMP_SUFFIX)}(?:@|1)?\Z")


def conflict_path(target):
    stem = target[:-len(".blend")] if target.endswith(".blend") else target
    return f"{stem}.jointlimit-conflict-{os.getpid()}.blend"


def remove_stale_temporaries(target):
    """Remove temporary files a killed run of this tool left beside ``target``; their names."""
    folder, name = os.path.split(target)
    pattern = temp_pattern(name)
    removed = []
    try:
        entries = os.listdir(folder)
    except OSError:
        return removed
    for entry in entries:
        match = pattern.match(entry)
        if match and int(match.group(1)) != os.getpid() and not pid_alive(int(match.group(1))):
            try:
                os.unlink(os.path.join(folder, entry))
                removed.append(entry)
            except FileNotFoundError:
                pass
    return removed


def fingerprint(path):
    """``(size, mtime in ns, sha256 of the first 64 KiB)`` of ``path``, or ``None`` if it does not exist."""
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            return st.st_size, st.st_mtime_ns, hashlib.sha256(f.read(HASHED_BYTES)).hexdigest()
    except FileNotFoundError:
        return None


def os_error_text(exc):
    if exc.errno == errno.ENOSPC:
        return "no space left on device"
    if exc.errno == errno.EROFS:
        return "read-only file system"
    return exc.strerror or str(exc)


class TargetLock:
    """An exclusive OS lock on ``.NAME.jointlimit-lock`` beside ``target`` for one writing run."""

    def __init__(self, target, wait, on_wait=None):
        folder, name = os.path.split(os.path.abspath(target))
        self.target, self.wait, self.on_wait, self.fd = target, wait, on_wait, None
        self.path = os.path.join(folder, f".{name}{LOCK_SUFFIX}")

    def __enter__(self):
        import fcntl    # (POSIX: the command line refuses other systems first, common.platform_problem)

        deadline = time.monotonic() + self.wait
        announced = False
        while True:
            fd = self._open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = self._holder(fd)
                os.close(fd)
                if time.monotonic() >= deadline:
                    raise UsageError(f"{self.target} is being written by another run (pid {holder}); "
                                     f"try again later or wait longer with --wait SECONDS") from None
                if not announced and self.on_wait is not None:
                    self.on_wait(holder)
                    announced = True
                time.sleep(0.05)
                continue
            if self._same_file(fd):
                break
            os.close(fd)  # the previous holder removed this lock file after we opened it: take the new one
        try:  # who holds the lock, for the message of a waiting run; a full disk only loses the pid
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except OSError:
            pass
        self.fd = fd
        _held[self.path] = "lock"
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            try:
                os.unlink(self.path)  # while still holding the lock, so a waiting run re-opens a fresh file
            except FileNotFoundError:
                pass
            _held.pop(self.path, None)
            os.close(self.fd)
            self.fd = None

    def _open(self):
        try:
            return os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise BatchError(f"cannot lock {self.target}: cannot create {self.path}: {os_error_text(exc)}") from None

    def _same_file(self, fd):
        try:
            return os.stat(self.path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            return False

    @staticmethod
    def _holder(fd):
        try:
            text = os.pread(fd, 32, 0).decode(errors="replace").strip()
        except OSError:
            text = ""
        return text if text.isdigit() else "unknown"


def verified_save(target, writer, verify, expected=False, size_hint=0):
    """Write ``target`` through ``writer(temporary path)``, check it, then ``os.replace`` it over ``target``.

    ``verify(path)`` raises ``BatchError`` unless the file reads back completely. ``expected`` is the
    :func:`fingerprint` of ``target`` when this run read it (``False``: do not compare); if the file
    on disk differs, the target is left alone and the result is kept under :func:`conflict_path`.
    On any failure ``target`` is untouched, the temporary file is gone and ``BatchError`` says why.
    ``size_hint``: about how large the file will be (the file read), for telling a full disk when
    there is no target yet. Returns the path written (``target``)."""
    target = os.path.abspath(target)
    folder = os.path.dirname(target)
    tmp = temp_path(target)
    _held.update({tmp + suffix: "temporary" for suffix in LEFTOVER_SUFFIXES})
    began = time.time()
    try:
        try:
            writer(tmp)
            _complete(tmp)
            verify(tmp)
        except (BatchError, OSError) as exc:
            raise BatchError(f"cannot save {target}: {_cause(target, tmp, exc, size_hint)}; the file on disk was "
                             "not changed") from None
        try:
            if os.path.exists(target):
                shutil.copymode(target, tmp)
                _keep_group(target, tmp)
            if expected is not False and fingerprint(target) != expected:
                side = conflict_path(target)
                os.replace(tmp, side)
                raise BatchError(f"{target} was changed by someone else while this run worked; it was left as it "
                                 f"is and this run's result was saved as {side}")
            os.replace(tmp, target)
            _saved.append(target)
            _sync_folder(folder)
        except OSError as exc:
            raise BatchError(f"cannot save {target}: {os_error_text(exc)}; the file on disk was not changed") from None
    finally:
        for suffix in LEFTOVER_SUFFIXES:
            _held.pop(tmp + suffix, None)
            if os.path.lexists(tmp + suffix):
                os.unlink(tmp + suffix)
        thumbnails.drop_made_for(tmp, began)    # (Blender's thumbnail of the temporary file)
    return target


def _keep_group(target, tmp):
    """Give ``tmp`` the group of ``target`` (a shared project folder's), where the OS lets this
    user (a member of that group, or root)."""
    group = os.stat(target).st_gid
    if os.stat(tmp).st_gid != group:
        try:
            os.chown(tmp, -1, group)
        except OSError:
            pass


def _complete(path):
    """The written file exists, is not empty and is on disk (``fsync`` reports late write errors)."""
    if not os.path.isfile(path):
        raise BatchError("saving wrote nothing")
    with open(path, "rb") as f:
        os.fsync(f.fileno())
        if os.fstat(f.fileno()).st_size == 0:
            raise BatchError("saving wrote an empty file")


def _cause(target, tmp, exc, size_hint=0):
    """The reason of a failed write. A full disk is named as such: less room left than the file
    needs (the size of the file it replaces, or of the file read when there is none yet; Blender
    may already have removed its partial file)."""
    if isinstance(exc, OSError):
        if exc.errno == errno.ENOSPC:
            return os_error_text(exc)
        exc = os_error_text(exc)
    needed = max(LOW_SPACE, size_hint)
    for path in (target, tmp):
        with contextlib.suppress(OSError):
            needed = max(needed, os.path.getsize(path))
    try:
        free = shutil.disk_usage(os.path.dirname(target)).free
    except OSError:
        free = None
    if free is not None and free < needed:
        return "no space left on device"   # (what failed then, e.g. the partial file gone, says less)
    return str(exc)


def _sync_folder(folder):
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_text(path, text):
    """Write a small text file (the JSON report) atomically."""
    path = os.path.abspath(path)
    tmp = temp_path(path)
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        raise BatchError(f"cannot write {path}: {os_error_text(exc)}") from None
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)
