"""What every part of the command line shares: its two error kinds, its output and the result of a
command on one file."""

import contextlib
import dataclasses
import os
import select
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


_worker_run = [None]    # in a worker: the read end of the run's pipe (``workers.run_pipe``)


def watch_run(fd):
    """This process is a worker of a run whose pipe it reads at ``fd``: ``end_if_run_gone`` ends it
    once that run has ended."""
    try:
        fd = int(fd)
        os.fstat(fd)
    except (TypeError, ValueError, OSError):    # not given, or not inherited: not watched
        return
    _worker_run[0] = fd


def run_gone(fd):
    """Whether the pipe at ``fd`` reads end-of-file: its writer, the run, has ended."""
    try:
        readable, _, _ = select.select([fd], [], [], 0)
        return bool(readable) and os.read(fd, 1) == b""
    except OSError:
        return False


def end_if_run_gone():
    """In a worker whose run has ended (killed outright, through a launcher script that does not
    ``exec`` Blender, or on a system without ``PR_SET_PDEATHSIG``): end now, before writing
    anything (checked on every frame of the work and right before saving)."""
    fd = _worker_run[0]
    if fd is not None and run_gone(fd):
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
