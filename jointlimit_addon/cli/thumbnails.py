"""The thumbnails Blender's save leaves for a temporary file.

Saving a .blend writes a thumbnail of it into the user's thumbnail cache (the freedesktop
``$XDG_CACHE_HOME/thumbnails``, ``~/.thumbnails`` elsewhere), named after the file's URI. A
verified save writes a temporary file and renames it over the target, so that thumbnail names a
file that is gone: one orphan per save. ``drop_made_for`` removes it; the file browser makes the
target's own thumbnail from the preview the .blend carries when it next shows it.
"""

import os
import struct
import sys
import urllib.parse

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
URI_KEY = b"Thumb::URI"
FOLDERS = ("normal", "large", "x-large", "xx-large", os.path.join("fail", "blender"))


def cache_folder():
    """Where Blender keeps thumbnails on this system (POSIX), or ``None``."""
    home = os.path.expanduser("~")
    if sys.platform.startswith("linux") or sys.platform.startswith("freebsd"):
        return os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(home, ".cache"), "thumbnails")
    if sys.platform == "darwin":
        return os.path.join(home, ".thumbnails")
    return None


def thumbnail_uri(path):
    """The ``Thumb::URI`` text of the PNG thumbnail at ``path`` (bytes), or ``None``."""
    try:
        with open(path, "rb") as f:
            if f.read(8) != PNG_SIGNATURE:
                return None
            while True:
                head = f.read(8)
                if len(head) < 8:
                    return None
                length, kind = struct.unpack(">I4s", head)
                if kind == b"IDAT" or kind == b"IEND":
                    return None     # (the text of a thumbnail comes before its image)
                body = f.read(length)
                f.seek(4, os.SEEK_CUR)  # the chunk's CRC
                if kind == b"tEXt" and body.startswith(URI_KEY + b"\0"):
                    return body[len(URI_KEY) + 1:]
    except OSError:
        return None


def drop_made_for(path, since):
    """Remove the cached thumbnails written since ``since`` (a ``time.time()``) for the file
    ``path`` (absolute). Returns how many went."""
    root = cache_folder()
    if root is None:
        return 0
    uri = "file://" + path
    dropped = 0
    for folder in FOLDERS:
        try:
            entries = list(os.scandir(os.path.join(root, folder)))
        except OSError:
            continue
        for entry in entries:
            try:
                if not entry.name.endswith(".png") or entry.stat().st_mtime < since - 1.0:
                    continue
            except OSError:
                continue
            found = thumbnail_uri(entry.path)
            if found is not None and urllib.parse.unquote_to_bytes(found) == os.fsencode(uri):
                try:
                    os.unlink(entry.path)
                    dropped += 1
                except OSError:
                    pass
    return dropped
