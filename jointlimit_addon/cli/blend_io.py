"""Reading and writing .blend files for the commands, through Blender's own reader and writer."""

import os

import bpy

from .common import BatchError, UsageError, report_text

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def open_blend(path):
    if not path.endswith(".blend") or not os.path.isfile(path):
        raise UsageError(f"cannot read {path}: not an existing .blend file")
    try:
        bpy.ops.wm.open_mainfile(filepath=os.path.abspath(path), load_ui=False)
    except RuntimeError as exc:
        raise UsageError(f"cannot read {path}: {report_text(exc)}") from None


def write_copy(path):
    """Save the open file to ``path`` as a copy (the open file keeps its own path)."""
    try:
        bpy.ops.wm.save_as_mainfile(filepath=path, copy=True, check_existing=False)
    except RuntimeError as exc:
        raise BatchError(report_text(exc)) from None


def read_back(path):
    """``BatchError`` unless ``path`` is a complete .blend file: an uncompressed file must end with its
    ``ENDB`` block, and Blender's blend-file reader must read the whole file (as for linking)."""
    with open(path, "rb") as f:
        head = f.read(7)
        f.seek(max(0, os.fstat(f.fileno()).st_size - 64))
        tail = f.read()
    if head != b"BLENDER" and not head.startswith(ZSTD_MAGIC):
        raise BatchError("the written file is not a .blend file")
    if head == b"BLENDER" and b"ENDB" not in tail:
        raise BatchError("the written file is incomplete (no end block)")
    try:
        with bpy.data.libraries.load(path) as (_found, _wanted):
            pass
    except (OSError, RuntimeError) as exc:
        raise BatchError(f"the written file does not read back: {report_text(exc)}") from None
