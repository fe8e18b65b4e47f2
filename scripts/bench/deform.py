"""SDEF deformer: Armature modifier alone vs Armature + the geometry-nodes deformer, and the numpy bake.

Run: .venv/bin/blender -b --factory-startup --python scripts/bench/deform.py

Cylinders of 20k and 100k vertices (``JL_BENCH_SIZES=20000,100000``) along a two-bone chain,
half of each in the blend zone (two-bone vertices). Printed: ms per depsgraph update while the
pose changes (fastest of 7 rounds, alternating with the Armature modifier alone), for the Armature modifier alone and with the deformer in each
mode (bones rotated and moved, not scaled: the usual case; also the deformer modifier's own
``execution_time``, 10th percentile), with SDEF again under a uniform and
a non-uniform scale of one bone (the slower stretch paths), with a shape key (ratio to the
Armature modifier alone with the same key), and the numpy core per frame on the largest mesh
(SkinPlan built once; ``deform`` and the bone matrices per frame). Other processes on the
machine may make the figures pessimistic.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # Blender does not add the script's folder

import _common  # noqa: E402,F401
import bpy  # noqa: E402
import numpy as np  # noqa: E402

from _common import best_of, new_armature_in_edit_mode, register_addon_from_source, table  # noqa: E402

RING = 250  # vertices per ring
SIZES = tuple(int(a) for a in os.environ.get("JL_BENCH_SIZES", "20000,100000").split(","))
UPDATES = 20
ROUNDS = 7


def build(rings):
    from mathutils import Euler, Matrix

    arm, data = new_armature_in_edit_mode("Rig")
    a = data.edit_bones.new("upper")
    a.head, a.tail = (0, 0, 0), (0, 0, 1)
    b = data.edit_bones.new("lower")
    b.head, b.tail, b.parent, b.use_connect = (0, 0, 1), (0, 0, 2), a, True
    bpy.ops.object.mode_set(mode="OBJECT")
    z = np.linspace(0, 2, rings)
    ang = np.linspace(0, 2 * np.pi, RING, endpoint=False)
    zz, aa = np.meshgrid(z, ang, indexing="ij")
    co = np.stack([0.2 * np.cos(aa), 0.2 * np.sin(aa), zz], -1).reshape(-1, 3)
    ring = np.arange(RING)
    quads = np.stack([ring, np.roll(ring, -1), np.roll(ring, -1) + RING, ring + RING], -1)
    faces = (np.arange(rings - 1)[:, None, None] * RING + quads[None]).reshape(-1, 4)
    me = bpy.data.meshes.new("Limb")
    me.vertices.add(len(co))
    me.vertices.foreach_set("co", co.astype(np.float32).ravel())
    me.loops.add(faces.size)
    me.loops.foreach_set("vertex_index", faces.ravel().astype(np.int32))
    me.polygons.add(len(faces))
    me.polygons.foreach_set("loop_start", np.arange(0, faces.size, 4, dtype=np.int32))
    me.update()
    obj = bpy.data.objects.new("Limb", me)
    bpy.context.scene.collection.objects.link(obj)
    g0, g1 = obj.vertex_groups.new(name="upper"), obj.vertex_groups.new(name="lower")
    t = np.clip((1.5 - z) / 1.0, 0.0, 1.0)  # blend zone z in [0.5, 1.5]: half of the vertices
    for i, tv in enumerate(t):
        ids = list(range(i * RING, (i + 1) * RING))
        if tv > 0:
            g0.add(ids, float(tv), "REPLACE")
        if tv < 1:
            g1.add(ids, float(1 - tv), "REPLACE")
    obj.modifiers.new("Armature", "ARMATURE").object = arm
    obj.matrix_world = Matrix.LocRotScale((0.3, 0, 0), Euler((0.1, 0.2, 0)), (1.2, 1.2, 1.2))
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    for pb in arm.pose.bones:
        pb.rotation_mode = "QUATERNION"
    return arm, obj, float(np.mean((t > 0) & (t < 1)))


def _round(arm, poses, own=None, obj=None):
    """Seconds per update; with ``own`` (a list) also appends the deformer modifier's own
    ``execution_time`` of each update (read after the timed loop's updates, outside the timing)."""
    start = time.perf_counter()
    total = 0.0
    for p in poses:
        for pb, q in zip(arm.pose.bones, p):
            pb.rotation_quaternion = q / np.linalg.norm(q)
        bpy.context.view_layer.update()
        if own is not None:
            pause = time.perf_counter()
            mod = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).modifiers["JointLimit Deformer"]
            own.append(mod.execution_time)
            total += time.perf_counter() - pause
    return (time.perf_counter() - start - total) / len(poses)


def paired_times(arm, obj):
    """ms per depsgraph update after a pose change, ``(Armature modifier alone, with the
    deformer, the deformer modifier's own time)``: rounds alternate between the two (the
    deformer switched off and on: ``deformer.set_enabled``, so alone the Armature modifier
    deforms every vertex), and each takes its fastest round, the least disturbed by other
    processes on a shared machine; the deformer's own time (its ``execution_time``) is the 10th
    percentile of all its updates."""
    from jointlimit_addon import deformer

    rng = np.random.default_rng(0)
    poses = rng.normal(size=(UPDATES, 2, 4))
    best = [np.inf, np.inf]
    own = []
    for _ in range(ROUNDS):
        for on in (False, True):
            deformer.set_enabled(obj, on)
            _round(arm, poses[:2])  # settle after the switch
            best[on] = min(best[on], _round(arm, poses, own if on else None, obj))
    return 1e3 * best[0], 1e3 * best[1], 1e3 * float(np.percentile(own, 10))


def deformer_rows(arm, obj, size):
    """Update-time rows of one mesh size: each mode, scaled bones, a shape key; every ratio is
    against the Armature modifier alone measured in the same alternating rounds."""
    from jointlimit_addon import deformer
    from jointlimit_addon.core import skinning

    label = f"{size // 1000}k"
    rows = []
    bpy.ops.object.jointlimit_sdef_derive()
    bpy.ops.object.jointlimit_deformer_add()

    def row(what):
        alone, ms, own = paired_times(arm, obj)
        rows.append((f"{label}: {what}", f"{alone:.2f}", f"{ms:.2f}", f"{ms / alone:.2f}", f"{own:.2f}"))

    for mode in skinning.MODES:
        deformer.set_mode(obj, mode)
        row(mode)
    # scaled bones take the deformer's slower paths (sigma I, then the full stretch matrices)
    deformer.set_mode(obj, "SDEF")
    lower = arm.pose.bones["lower"]
    for what, scale in (("uniform", (1.2, 1.2, 1.2)), ("non-uniform", (1.2, 0.9, 1.0))):
        lower.scale = scale
        row(f"SDEF, {what} bone scale")
    lower.scale = (1.0, 1.0, 1.0)
    # a shape key at 0.5 on every vertex
    rest = np.empty(len(obj.data.vertices) * 3, np.float32)
    obj.data.vertices.foreach_get("co", rest)
    obj.shape_key_add(name="Basis", from_mix=False)
    key = obj.shape_key_add(name="bulge", from_mix=False)
    key.data.foreach_set("co", rest * np.float32(1.05))
    key.value = 0.5
    row("SDEF, shape key")
    bpy.ops.object.jointlimit_deformer_remove()
    obj.shape_key_clear()
    return rows


def main():
    addon = register_addon_from_source()
    from jointlimit_addon import deformer
    from jointlimit_addon.core import skinning
    from jointlimit_addon.deformer import data

    rows = []
    for size in SIZES:
        arm, obj, share = build(max(2, size // RING))
        n = len(obj.data.vertices)
        print(f"{n} vertices, {share:.0%} on two bones ({int(share * n)}), {UPDATES} pose updates x {ROUNDS} "
              "alternating rounds (fastest)")
        rows += deformer_rows(arm, obj, size)
    print(table(("mesh: deformer mode", "Armature alone ms", "with deformer ms", "ratio", "deformer's own ms"), rows))
    bpy.ops.object.jointlimit_sdef_derive()
    rows = []
    prep = deformer.prepare(obj, "AUTO")
    two, c, r0, r1, heads = prep.two, prep.c, prep.r0, prep.r1, prep.heads
    rest = data.positions(obj.data)[two.index]
    dg = bpy.context.evaluated_depsgraph_get()
    for mode in skinning.MODES:
        plan = skinning.SkinPlan(mode, rest, two.bone0, two.bone1, two.weight0, c, r0, r1, rest_heads=heads)
        core = best_of(lambda: plan.deform(data.bone_matrices(obj, arm, two.bones, dg)), repeat=7, number=3)
        per100k = core * 1e3 * 1e5 / len(two.index)
        rows.append((f"numpy core per frame, {mode}", f"{core * 1e3:.2f}", f"{per100k:.2f}"))
    print(table(("numpy fallback", "ms", "ms per 100k two-bone vertices"), rows))
    addon.unregister()


main()
