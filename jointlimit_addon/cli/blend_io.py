"""Reading and writing .blend files for the commands, through Blender's own reader and writer."""

import os

import bpy

from .. import compat
from .common import BatchError, UsageError, report_text, unreadable

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def open_blend(path):
    if not path.endswith(".blend") or not os.path.isfile(path):
        raise UsageError(unreadable(path))
    try:
        bpy.ops.wm.open_mainfile(filepath=os.path.abspath(path), load_ui=False)
    except RuntimeError as exc:
        raise UsageError(f"cannot read {path}: {report_text(exc)}") from None


def check_not_newer(path):
    """``UsageError`` when the open file was saved by a newer Blender than this one: saving it here
    would drop whatever this version does not know (Blender's own Save warns about the same)."""
    saved = compat.newer_file_version()
    if saved is not None:
        running = compat.running_version()
        raise UsageError(f"{path} was saved by Blender {saved[0]}.{saved[1]}, newer than this Blender "
                         f"{running[0]}.{running[1]}: saving it here could lose what this version does not know; "
                         f"run the command with Blender {saved[0]}.{saved[1]} or newer")


def write_copy(path):
    """Save the open file to ``path`` as a copy (the open file keeps its own path)."""
    try:
        bpy.ops.wm.save_as_mainfile(filepath=path, copy=True, check_existing=False)
    except RuntimeError as exc:
        raise BatchError(report_text(exc)) from None


def read_back(path):
    """``BatchError`` unless ``path`` is a complete .blend file: it must end exactly where its own
    structure says (the end block of an uncompressed file, the seek table of a compressed one), and
    Blender's blend-file reader must read it (as for linking)."""
    with open(path, "rb") as f:
        head = f.read(17)
        size = os.fstat(f.fileno()).st_size
        f.seek(max(0, size - TAIL))
        tail = f.read()
    if head.startswith(b"BLENDER"):
        problem = _uncompressed_end(head, tail)
    elif head.startswith(ZSTD_MAGIC):
        problem = _zstd_end(path, size, tail)
    else:
        problem = "it is not a .blend file"
    if problem:
        raise BatchError(f"the written file is incomplete: {problem}")
    try:
        with bpy.data.libraries.load(path) as (_found, _wanted):
            pass
    except (OSError, RuntimeError) as exc:
        raise BatchError(f"the written file does not read back: {report_text(exc)}") from None


TAIL = 64
ENDB = b"ENDB"
SEEKABLE_MAGIC = 0x8F92EAB1
SKIPPABLE_HEADER = 8
SEEK_FOOTER = 9


def _bhead_size(head):
    """Size of a block header: 'BLENDER17-01v0500' (Blender 5) or 'BLENDER-v405' / 'BLENDER_v405'."""
    if head[7:9] == b"17" and head[9:12] == b"-01":
        return 32
    return 24 if head[7:8] == b"-" else 20


def _uncompressed_end(head, tail):
    """The last block must be the empty end block, ending exactly at the end of the file."""
    size = _bhead_size(head)
    last = tail[-size:]
    if len(last) < size or last[:4] != ENDB or any(last[4:]):
        return "no end block at the end of the file"
    return None


def _zstd_end(path, size, tail):
    """Blender writes compressed files as seekable Zstandard: the seek table at the end lists every
    frame's compressed size, and together with the table they must fill the file exactly."""
    if len(tail) < SEEK_FOOTER or int.from_bytes(tail[-4:], "little") != SEEKABLE_MAGIC:
        return "no Zstandard seek table at the end of the file"
    frames = int.from_bytes(tail[-9:-5], "little")
    entry = 12 if tail[-5] & 0x80 else 8
    table = SKIPPABLE_HEADER + frames * entry + SEEK_FOOTER
    if table > size:
        return "the Zstandard seek table is larger than the file"
    with open(path, "rb") as f:
        f.seek(size - table + SKIPPABLE_HEADER)
        entries = f.read(frames * entry)
    compressed = sum(int.from_bytes(entries[i:i + 4], "little") for i in range(0, len(entries), entry))
    if compressed + table != size:
        return f"{size} bytes on disk, the file's own table says {compressed + table}"
    return None
