"""One run of the command line: parse, then one file in this process or many in workers, save,
report, and turn every failure into an exit code and one line."""

import contextlib
import json
import os
import signal
import time
import traceback

import bpy

from . import limits_commands, pose_commands, skin_commands, workers
from .blend_io import check_not_newer, open_blend, read_back, write_copy
from .common import (PROG, SUMMARY_PREFIX, BatchError, UsageError, end_if_run_gone, error_line, platform_problem, say,
                     say_aside, stdout_to_stderr, unreadable, watch_run)
from .parser import COMMANDS, parse, parse_refused
from .safe_save import (TargetLock, atomic_write_text, cleaning_up_on_signals, fingerprint, on_stop,
                        remove_stale_temporaries, verified_save)

REPORT_SCHEMA = 1

RUNS = {
    "info": limits_commands.cmd_info,
    "apply": limits_commands.cmd_apply,
    "bake": limits_commands.cmd_bake,
    "convert": limits_commands.cmd_convert,
    "to-constraints": limits_commands.cmd_to_constraints,
    "limb-ik": pose_commands.run_ik,
    "ccd": pose_commands.run_ik,
    "motion": pose_commands.cmd_motion,
    "deformer-add": skin_commands.cmd_deformer_add,
    "deformer-remove": skin_commands.cmd_deformer_remove,
    "deformer-bake": skin_commands.cmd_deformer_bake,
    "sdef-derive": skin_commands.cmd_sdef_derive,
}


def saves(args):
    return COMMANDS[args.command][2]


def output_path(args, source):
    """Where the result of ``source`` goes, or ``None`` for a dry run or a command that never saves.
    A symbolic link is followed: the file it points to is written (and locked), the link stays (a
    pipeline's ``shot_latest.blend``)."""
    if not saves(args) or args.no_save:
        return None
    if args.output:
        path = os.path.realpath(args.output)
    elif args.output_dir:
        path = os.path.realpath(os.path.join(os.path.abspath(args.output_dir), os.path.basename(source)))
    else:
        path = os.path.realpath(source)
    folder = os.path.dirname(path)
    if not path.endswith(".blend"):
        raise UsageError(f"output {path} must end with .blend")
    if not os.path.isdir(folder):
        raise UsageError(f"output folder {folder} does not exist")
    if not _writable(folder):
        raise UsageError(f"output folder {folder} is not writable")
    if os.path.isdir(path):
        raise UsageError(f"output {path} is a folder (give a .blend file's path, or the folder as --output-dir)")
    if os.path.exists(path) and not _writable(path):   # as Blender refuses to save over it
        raise UsageError(f"output {path} is read-only (not writable: a published or locked file?); "
                         f"write elsewhere with --output or --output-dir")
    return path


def _writable(path):
    """Writable, and not marked read-only: a file or folder with no write permission for anyone is
    refused also to root, who could write through it (the mark is its owner's word)."""
    return os.access(path, os.W_OK) and bool(os.stat(path).st_mode & 0o222)


def new_record(args, path):
    return {"file": path, "command": args.command, "status": "failed", "exit_code": 1, "output": None,
            "bones": [], "objects": [], "tip_errors": [], "errors": [], "summary": "", "seconds": 0.0}


def process_file(args, path, record):
    """Run the command on ``path`` (``None``: the file Blender opened) and save the result; fills ``record``."""
    source = os.path.abspath(path) if path else bpy.data.filepath
    if not source and args.command != "info":
        raise UsageError("no .blend file: give one after the command (or to Blender before -c)")
    if path and (not path.endswith(".blend") or not os.path.isfile(path)):
        raise UsageError(unreadable(path))
    target = output_path(args, source) if source else None
    lock = TargetLock(target, args.wait, lambda pid: say(f"waiting for {target}: being written by another run "
                                                        f"(pid {pid})")) if target else contextlib.nullcontext()
    # A file Blender opened before -c was read already: compare with the file as it is now, before
    # waiting for another run's lock; a file given after the command is read under the lock.
    opened = fingerprint(target) if target and not path else False
    with lock:
        if target:
            for name in remove_stale_temporaries(target):
                say(f"removed a temporary file left by an interrupted run: {name}")
        before = fingerprint(target) if target and path else opened
        if path:
            with stdout_to_stderr() if getattr(args, "json", False) else contextlib.nullcontext():
                open_blend(path)
        if target:
            check_not_newer(source)
        outcome = RUNS[args.command](args)
        record.update(bones=outcome.bones, objects=outcome.objects, tip_errors=outcome.tip_errors)
        summary = outcome.summary
        if saves(args):
            if target is None:
                summary += "; dry run, not saved"
            else:
                end_if_run_gone()
                verified_save(target, write_copy, read_back, expected=before, size_hint=_size(source))
                record["output"] = target
                summary += f"; saved {target}"
    record.update(summary=summary, status="ok", exit_code=0)
    return summary


def _size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def check_many(args):
    if bpy.data.filepath:
        raise UsageError("give the .blend files either to Blender or after the command, not both")
    if getattr(args, "output", None):
        raise UsageError("--output takes one input file; use --output-dir with several")
    if getattr(args, "json", False):
        raise UsageError("--json prints one file's JSON document: run info on one file at a time")
    targets = {}
    for path in args.files:
        if not path.endswith(".blend") or not os.path.isfile(path):
            raise UsageError(unreadable(path))
        target = output_path(args, path)
        if target is None:
            continue
        key = os.path.normcase(os.path.realpath(target))
        if key in targets:
            raise UsageError(f"{targets[key]} and {path} would both be saved to {target}; give each input its "
                             f"own output (rename one, or run them separately)")
        targets[key] = path


def check_report_path(path):
    folder = os.path.dirname(os.path.abspath(path))
    if not path.endswith(".json"):
        raise UsageError(f"--report {path} must end with .json")
    if not os.path.isdir(folder) or not _writable(folder):
        raise UsageError(f"--report {path}: the folder {folder} does not exist or is not writable")


def write_report(args, records, code):
    if not args.report or args.worker_file:
        return
    data = {"schema": REPORT_SCHEMA, "tool": "jointlimit", "command": args.command, "exit_code": code,
            "files": records}
    atomic_write_text(args.report, json.dumps(data, indent=1) + "\n")


def _many_records(args):
    """The records of a run of many files stopped midway: those the workers finished, a new one
    for each other file."""
    done = workers.finished()
    return [done.get(path) or new_record(args, os.path.abspath(path)) for path in args.files]


def _stopped_report(args, records, signum):
    """The report of a run a stop signal ends (``--report``): its exit code that of the shell for
    the signal (128 + its number), each file not finished failed with the signal named (a report
    an earlier run left at that path said what that run did)."""
    name = signal.Signals(signum).name
    for record in records:
        if record["exit_code"] and not record["errors"]:
            record.update(status="failed", exit_code=128 + signum, errors=[f"stopped by {name}"])
    write_report(args, records, 128 + signum)


def write_worker_record(args, record):
    if args.worker_report:
        atomic_write_text(args.worker_report, json.dumps(record) + "\n")


def _refused(argv, prog):
    """``parse_refused``, when the report it names can be written (``None`` otherwise)."""
    args = parse_refused(argv, prog)
    try:
        if args is not None and args.report:
            check_report_path(args.report)
    except UsageError:
        return None
    return args


def run(argv, prog):
    """The exit code of one run; prints the summary or the one-line error."""
    args, records, record = None, [], None
    started = time.monotonic()
    try:
        args = parse(argv, prog)
        if getattr(args, "worker_run", None):
            watch_run(args.worker_run)
        if args.report and not args.worker_file:
            try:
                check_report_path(args.report)
            except UsageError:
                args.report = None      # a path refused is not written (it may be any file)
                raise
        if args.worker_file or not (len(args.files) > 1 or (args.files and args.jobs > 1)):
            path = args.worker_file or (args.files[0] if args.files else None)
            if args.files and not args.worker_file and bpy.data.filepath:
                raise UsageError("give the .blend file either to Blender or after the command, not both")
            record = new_record(args, os.path.abspath(path) if path else bpy.data.filepath)
            records.append(record)
            with cleaning_up_on_signals(), on_stop(lambda signum: _stopped_report(args, [record], signum)):
                summary = process_file(args, path, record)
        else:
            check_many(args)
            with on_stop(lambda signum: _stopped_report(args, _many_records(args), signum)):
                failed = workers.process_many(args, argv, records, new_record)
            if failed:
                kind = UsageError if set(failed) == {2} else BatchError
                raise kind(f"{len(failed)} of {len(args.files)} files failed")
            summary = f"{len(args.files)} files done"
        code = 0
    except (UsageError, BatchError) as exc:
        code, summary = (2 if isinstance(exc, UsageError) else 1), None
        message = str(exc)
    except Exception as exc:  # anything unexpected: the traceback, then the one-line error last
        traceback.print_exc()
        code, summary = 1, None
        message = f"unexpected {type(exc).__name__}: {exc}"
    if args is None and code == 2:
        args = _refused(argv, prog)     # its --report still says what went wrong
    if record is not None:
        record["seconds"] = round(time.monotonic() - started, 3)
        if code:
            record.update(status="failed", exit_code=code, errors=[*record["errors"], message.splitlines()[0]])
    elif code and not records and args is not None and args.files:     # refused before any file was run
        records = [dict(new_record(args, os.path.abspath(path)), exit_code=code, errors=[message.splitlines()[0]])
                   for path in args.files]
    if args is not None:
        try:
            write_worker_record(args, record) if args.worker_file else write_report(args, records, code)
        except BatchError as exc:
            if not code:
                code, summary, message = 1, None, str(exc)
    if code:
        error_line(message)
    else:
        (say_aside if getattr(args, "json", False) else say)(f"{SUMMARY_PREFIX} {summary}")
    return code


def main(argv, prog=PROG):
    """The command line's entry point: ``argv`` after the command name; returns the exit code."""
    problem = platform_problem()
    if problem:
        error_line(problem)
        return 2
    try:
        return run(list(argv), prog)
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
