"""What every part of the command line shares: its two error kinds, its output and the result of a
command on one file."""

import contextlib
import dataclasses
import os
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


_worker_run = [None]    # in a worker: (process id, start time) of the run that started it


def process_started(pid):
    """The start time of process ``pid`` (Linux's /proc, clock ticks since boot): with the pid it
    tells one process from a later one with the same number; ``None`` where unknown."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            fields = f.read().rpartition(")")[2].split()
        return None if fields[0] in ("Z", "X") else int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def run_identity():
    """What a worker is given to recognise the run that started it: ``PID`` or ``PID:START``."""
    started = process_started(os.getpid())
    return f"{os.getpid()}" if started is None else f"{os.getpid()}:{started}"


def watch_run(identity):
    """This process is a worker of the run ``identity`` (``run_identity``): ``end_if_run_gone`` ends
    it once that run ends. A run this process cannot see (Blender started in a PID namespace of its
    own by a sandboxing launcher, or gone already) is not watched."""
    pid, _, started = str(identity).partition(":")
    pid, started = int(pid), int(started) if started else None
    if os.name == "posix" and _run_alive(pid, started):
        _worker_run[0] = (pid, started)


def _run_alive(pid, started):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    now = process_started(pid)
    if started is not None and now != started:    # reaped and the number reused, or dead (zombie)
        return False
    return not (started is None and now is None and os.path.isdir(f"/proc/{pid}"))     # a zombie


def end_if_run_gone():
    """In a worker whose run has ended (killed outright, through a launcher script that does not
    ``exec`` Blender, or on a system without ``PR_SET_PDEATHSIG``): end now, before writing
    anything (checked on every frame of the work and right before saving)."""
    watched = _worker_run[0]
    if watched is not None and not _run_alive(*watched):
        print(f"{ERROR_PREFIX} the run that started this worker has ended; nothing was saved", file=sys.stderr,
              flush=True)
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
