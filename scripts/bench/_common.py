"""Shared helpers of the benchmark scripts: repository import path, timing, tables."""

import pathlib
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def best_of(fn, repeat=5, number=1):
    """Median seconds per call of ``fn`` over ``repeat`` rounds of ``number`` calls."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times)


def table(headers, rows):
    """Render rows as a Markdown table (docs/benchmarks.md quotes it as printed)."""
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(headers)]
    line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"  # noqa: E731
    out = [line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [line(r) for r in rows]
    return "\n".join(out)


def register_addon_from_source():
    """Register the add-on from this checkout (benchmarks only; tests use the installed zip)."""
    import jointlimit_addon

    jointlimit_addon.register()
    return jointlimit_addon


def new_armature_in_edit_mode(name):
    """A fresh empty file holding one new armature object, active and in Edit Mode."""
    import bpy

    bpy.ops.wm.read_homefile(use_empty=True)
    data = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, data)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    return obj, data


def connected_armature(name, spec):
    """A fresh file with one armature built from ``[(bone, head, tail, parent or None)]`` (each
    bone connected to its parent), quaternion rotation mode, in Pose Mode."""
    import bpy

    obj, data = new_armature_in_edit_mode(name)
    for bone, head, tail, parent in spec:
        eb = data.edit_bones.new(bone)
        eb.head, eb.tail = head, tail
        if parent:
            eb.parent, eb.use_connect = data.edit_bones[parent], True
    bpy.ops.object.mode_set(mode="POSE")
    for pb in obj.pose.bones:
        pb.rotation_mode = "QUATERNION"
    return obj


def chain_armature(name, n, step):
    """A fresh file with one armature: ``n`` connected bones, each ``step`` (a 3-vector) long,
    quaternion rotation mode, in Pose Mode."""
    import bpy

    obj, data = new_armature_in_edit_mode(name)
    parent = None
    for i in range(n):
        eb = data.edit_bones.new(f"{name[0].lower()}{i:03d}")
        eb.head, eb.tail = tuple(c * i for c in step), tuple(c * (i + 1) for c in step)
        eb.parent, eb.use_connect = parent, parent is not None
        parent = eb
    bpy.ops.object.mode_set(mode="POSE")
    for pb in obj.pose.bones:
        pb.rotation_mode = "QUATERNION"
    return obj
