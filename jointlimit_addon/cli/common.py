"""What every part of the command line shares: its two error kinds, its output and the result of a
command on one file."""

import contextlib
import dataclasses
import os
import select
import stat
import sys

PROG = "blender -c jointlimit"
ERROR_PREFIX = "jointlimit: error:"
SUMMARY_PREFIX = "summary:"


class UsageError(Exception):
    """Bad command line or bad input: exit code 2."""


class BatchError(Exception):
    """The work failed: exit code 1."""


@dataclasses.dataclass
class Outcome:
    """What a command did to one file: the summary line and the report's per-file facts."""

    summary: str
    bones: list = dataclasses.field(default_factory=list)
    objects: list = dataclasses.field(default_factory=list)
    tip_errors: list = dataclasses.field(default_factory=list)


_worker_run = [None]    # in a worker: ("pipe", fd) or ("pid", process id) of the run that started it


def run_identity(read_end):
    """What a worker is given to watch its run: ``FD:DEV:INO:PID``, the read end of the run's pipe
    (``workers.run_pipe``), that pipe's identity and the run's process id."""
    st = os.fstat(read_end)
    return f"{read_end}:{st.st_dev}:{st.st_ino}:{os.getpid()}"


def watch_run(identity):
    """This process is a worker of the run ``identity`` (``run_identity``): ``end_if_run_gone``
    ends it once that run has ended. It reads the run's pipe when it holds it (the launcher passed
    the inherited descriptor on); else it watches the run's process id where it can see it (not
    from a PID namespace of its own)."""
    try:
        fd, dev, ino, pid = (int(part) for part in str(identity).split(":"))
    except ValueError:
        return
    try:
        st = os.fstat(fd)
        if stat.S_ISFIFO(st.st_mode) and (st.st_dev, st.st_ino) == (dev, ino):
            _worker_run[0] = ("pipe", fd)
            return
    except OSError:
        pass
    if os.name == "posix" and not _process_gone(pid):
        _worker_run[0] = ("pid", pid)


def platform_problem():
    """Why the command line cannot run on this system, or ``None``: it locks its files with
    ``fcntl`` and watches its runs and workers through POSIX pipes and process ids (on Windows
    ``os.kill(pid, 0)`` would end the process it asks about)."""
    if os.name != "posix":
        return (f"the command line runs on Linux and macOS, not on this system ({sys.platform}); on Windows "
                f"run it in WSL, or use the operators from a script (README, Batch runs)")
    return None


def pid_alive(pid):
    """Whether a process ``pid`` exists (a zombie too; one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _process_gone(pid):
    if not pid_alive(pid):
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rpartition(")")[2].split()[0] in ("Z", "X")     # dead, not yet reaped
    except (OSError, IndexError):
        return False


def _pipe_ended(fd):
    """Whether the pipe at ``fd`` reads end-of-file (nobody writes to it: readable means ended)."""
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLHUP)
        return bool(poller.poll(0)) and os.read(fd, 1) == b""
    except (OSError, ValueError, AttributeError):
        return False


def end_if_run_gone():
    """In a worker whose run has ended (killed outright, through a launcher script that does not
    ``exec`` Blender, or on a system without ``PR_SET_PDEATHSIG``): end now, before writing
    anything (checked on every frame of the work and right before saving)."""
    watched = _worker_run[0]
    if watched is None:
        return
    kind, value = watched
    if _pipe_ended(value) if kind == "pipe" else _process_gone(value):
        try:    # (nobody may be reading: the run's end of the worker's output is gone too)
            print(f"{ERROR_PREFIX} the run that started this worker has ended; nothing was saved", file=sys.stderr,
                  flush=True)
        except (OSError, ValueError):
            pass
        os._exit(1)


def say(*parts):
    print(*parts, flush=True)


def say_aside(*parts):
    """``say`` on stderr: beside a JSON document, which has stdout to itself."""
    print(*parts, file=sys.stderr, flush=True)


@contextlib.contextmanager
def stdout_to_stderr():
    """Whatever is written to standard output meanwhile, Blender's own lines included (its file
    reader's ``Read blend: ...``), goes to standard error."""
    sys.stdout.flush()
    kept = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(kept, 1)
        os.close(kept)


def unreadable(path):
    """Why ``path`` is not an input file: its name or its absence."""
    if not path.endswith(".blend"):
        return f"cannot read {path}: not a .blend file name (it must end with .blend)"
    if os.path.isdir(path):
        return f"cannot read {path}: a folder, not a .blend file"
    return f"cannot read {path}: no such file"


def refuse_unkeyable(obj):
    """``UsageError`` when ``obj``'s action cannot keep keys (linked or a library override's:
    Blender skips the keys with a console warning, and the command would report work it never
    did)."""
    from .. import animation

    message = animation.unkeyable_message([obj])
    if message is not None:
        raise UsageError(message[:1].lower() + message[1:])


def error_line(message):
    """Print the one-line error that ends every failed run."""
    print(f"{ERROR_PREFIX} {message}".splitlines()[0], file=sys.stderr, flush=True)


def report_text(exc):
    """The first line of an operator's error report, without Blender's 'Error: ' prefix."""
    line = (str(exc).strip().splitlines() or ["unknown error"])[0]
    return line.split(": ", 1)[1] if line.startswith(("Error: ", "Warning: ")) else line
