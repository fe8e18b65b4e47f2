"""Target files of the IK commands (CSV or JSON, one target per frame) and frame numbers."""

import csv
import json
import math
import pathlib

from .common import UsageError

TARGET_KEYS = ("frame", "x", "y", "z")
# Blender's frame numbers (MAXFRAME): scene.frame_current's hard range; a test compares them.
FRAME_MIN, FRAME_MAX = -1048574, 1048574


def check_frame(frame, where=None):
    """``frame`` as an int inside Blender's frame range, else ``UsageError`` naming ``where`` (if
    given: argparse names the option itself)."""
    if not FRAME_MIN <= frame <= FRAME_MAX:
        shown = int(frame) if abs(frame) < 1e15 else f"{frame:g}"
        prefix = "" if where is None else f"{where}: "
        raise UsageError(f"{prefix}frame {shown} is outside Blender's frame range {FRAME_MIN}..{FRAME_MAX}")
    return int(frame)


def read_targets(path, with_swivel):
    """Target rows ``[(frame, (x, y, z), swivel_degrees or None)]`` sorted by frame; ``UsageError``
    naming the file and row for anything malformed."""
    try:
        text = pathlib.Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise UsageError(f"cannot read targets file {path}: no such file") from None
    except OSError as exc:
        raise UsageError(f"cannot read targets file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"cannot read targets file {path}: not UTF-8 text ({exc.reason})") from None
    is_json = path.lower().endswith(".json") or (not path.lower().endswith(".csv") and text.lstrip()[:1] in "[{")
    raw = _json_rows(path, text) if is_json else _csv_rows(path, text)
    allowed = set(TARGET_KEYS) | ({"swivel"} if with_swivel else set())
    rows, seen = [], set()
    for where, record in raw:
        unknown = sorted(set(record) - allowed)
        if unknown:     # (a CSV file's columns are named by its header)
            raise UsageError(f"{path} {where if is_json else 'header'}: unknown column {unknown[0]!r} "
                             f"(expected {', '.join(sorted(allowed))})")
        missing = [k for k in TARGET_KEYS if record.get(k) in (None, "")]
        if missing:
            raise UsageError(f"{path} {where}: missing {missing[0]!r}")
        frame = _number(path, where, "frame", record["frame"])
        if frame != int(frame):
            raise UsageError(f"{path} {where}: frame must be a whole number, got {record['frame']!r}")
        frame = check_frame(frame, f"{path} {where}")
        if frame in seen:
            raise UsageError(f"{path} {where}: frame {frame} appears twice")
        seen.add(frame)
        xyz = tuple(_number(path, where, k, record[k]) for k in "xyz")
        swivel = record.get("swivel")
        swivel = None if swivel in (None, "") else _number(path, where, "swivel", swivel)
        rows.append((frame, xyz, swivel))
    if not rows:
        raise UsageError(f"{path}: no targets in the file")
    return sorted(rows)


def _number(path, where, key, value):
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise UsageError(f"{path} {where}: {key} is not a number: {value!r}") from None
    if isinstance(value, bool) or not math.isfinite(number):
        raise UsageError(f"{path} {where}: {key} must be a finite number, got {value!r}")
    return number


def _json_rows(path, text):
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise UsageError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(data, list):
        raise UsageError(f"{path}: expected a JSON list of objects with keys frame, x, y, z")
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            raise UsageError(f"{path} item {i}: expected an object with keys frame, x, y, z")
    return [(f"item {i}", {str(k).lower(): v for k, v in item.items()}) for i, item in enumerate(data)]


def _csv_rows(path, text):
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    reader = csv.reader(lines)
    try:
        header = [h.strip().lower() for h in next(reader)]
    except StopIteration:
        raise UsageError(f"{path}: empty file (expected a header row: frame,x,y,z)") from None
    except csv.Error as exc:
        raise UsageError(f"{path}: not valid CSV: {exc}") from None
    if len(set(header)) != len(header) or "" in header:
        raise UsageError(f"{path}: bad header row {','.join(header)!r} (expected e.g. frame,x,y,z)")
    if not set(header) & set(TARGET_KEYS):
        raise UsageError(f"{path}: the first row {','.join(header)!r} is not a header: the first row names the "
                         "columns (frame,x,y,z)")
    rows = []
    try:
        for n, cells in enumerate(reader, start=2):
            if len(cells) != len(header):
                raise UsageError(f"{path} row {n}: {len(cells)} values for {len(header)} columns")
            rows.append((f"row {n}", {h: c.strip() for h, c in zip(header, cells)}))
    except csv.Error as exc:
        raise UsageError(f"{path}: not valid CSV: {exc}") from None
    return rows
