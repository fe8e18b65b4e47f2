"""mmd_tools both ways: its SDEF shape-key layout written from derived parameters, and its SDEF
binding taken over by the deformer (and given back on removal).

Layout (as mmd_tools' PMX importer writes and its exporter and SDEF driver read it): a ``Basis``
key and the keys ``mmd_sdef_c``, ``mmd_sdef_r0``, ``mmd_sdef_r1`` relative to it, value 0, each
holding absolute rest positions in the mesh's space; a vertex is SDEF where its C differs from
its basis position (every other vertex holds its basis position in all three); ``R0`` belongs to
the vertex group with the lower index (the exporter writes a vertex's bones in that order when
the groups follow the bone order, as on imported models).

Binding (mmd_tools' "SDEF bind"): a shape key ``mmd_sdef_skinning`` whose value is a Python
driver that writes the SDEF vertices' skinned positions into it each frame, restricted to the
vertex group ``mmd_sdef_mask``, which also masks (inverted) the Armature modifier so it leaves
those vertices alone. Taking over mutes the key and its driver and clears the mask, so the
Armature modifier and the deformer move every vertex once; the previous state is kept and
restored by ``restore``.
"""

import numpy as np

from . import data

SKINNING_KEY = "mmd_sdef_skinning"
MASK_GROUP = data.MMD_MASK_GROUP
STATE_PROP = "jl_mmd_binding"  # on the deformer's helper: the binding's state before take-over


# mmd_tools' PMX export (at its default scale 12.5) takes a C nearer its vertex than 0.001 PMX
# units for "not SDEF" and writes the vertex as BDEF2: a centre that near is moved along the core
# line to twice that (the deformation changes by far less than the distance: see ``_apart``).
EXPORT_APART = 2 * 0.001 / 12.5


def write_layout(obj, two, c, r0, r1):
    """Write parent-first ``C``, ``R0``, ``R1`` (n, 3) of the vertices ``two`` as mmd_tools' SDEF
    shape keys (existing ones are overwritten); every other vertex gets its basis position.
    Returns how many of the vertices mmd_tools' PMX export would write with ``R0`` and ``R1``
    swapped (:func:`export_swapped`)."""
    if obj.data.shape_keys is None:
        obj.shape_key_add(name="Basis", from_mix=False)
    keys = obj.data.shape_keys
    basis = keys.reference_key
    rest = np.empty(len(basis.data) * 3, np.float32)
    basis.data.foreach_get("co", rest)
    rest = rest.reshape(-1, 3)
    sw = two.swapped[:, None]  # bone0 on the higher group index: its boundary is R1 there
    c = _apart(np.asarray(c, dtype=np.float64), rest[two.index], np.asarray(r1, dtype=np.float64) - r0)
    for name, values in zip(data.MMD_KEYS, (c, np.where(sw, r1, r0), np.where(sw, r0, r1))):
        kb = keys.key_blocks.get(name) or obj.shape_key_add(name=name, from_mix=False)
        kb.relative_key = basis
        kb.value = 0.0
        full = rest.copy()
        full[two.index] = values
        kb.data.foreach_set("co", full.ravel())
    return export_swapped(obj, two)


def _apart(c, rest, core):
    """``c`` (float32) with each centre nearer its vertex than ``EXPORT_APART`` (a vertex on or
    next to the bones' core line) moved along the core line ``core`` (R1 - R0; X where that is
    zero) to ``EXPORT_APART`` from it: mmd_tools tells SDEF vertices by C differing from the basis
    position, and its PMX export by C lying at least 0.001 PMX units away. On the core line the
    centre's position changes SDEF's result by about the distance moved times the rotation
    difference between the blend and the bones' average, tiny at this distance."""
    gap = c - rest
    near = np.linalg.norm(gap, axis=1) < EXPORT_APART
    length = np.linalg.norm(core, axis=1, keepdims=True)
    direction = np.where(length > 1e-12, core / np.where(length > 1e-12, length, 1.0), [1.0, 0.0, 0.0])
    out = c.copy()
    out[near] = rest[near] + EXPORT_APART * direction[near]
    return out.astype(np.float32)


def export_order(pose_bone):
    """Where mmd_tools' PMX export puts the bone: by its ``mmd_bone.bone_id`` when set, then by
    name (read from the ID properties, so also without mmd_tools installed)."""
    bone_id = -1
    group = pose_bone.get("mmd_bone")
    if group is not None and hasattr(group, "get"):
        bone_id = group.get("bone_id", -1)
    return (bone_id if bone_id >= 0 else float("inf"), pose_bone.name)


def export_swapped(obj, two):
    """How many two-bone vertices of ``two`` have their bone of the lower vertex-group index
    (whose boundary mmd_tools' layout calls ``R0``) after the other in mmd_tools' PMX bone order:
    its exporter writes each vertex's bones in that order and keeps ``R0`` as it is, so these
    would be exported with ``R0`` and ``R1`` swapped."""
    bones = data.require_armature(obj).object.pose.bones
    groups = {g.name: g.index for g in obj.vertex_groups}
    pairs, counts = np.unique(np.stack([two.bone0, two.bone1], axis=1), axis=0, return_counts=True)
    swapped = 0
    for (a, b), count in zip(pairs.tolist(), counts.tolist()):
        first, second = sorted((two.bones[a], two.bones[b]), key=lambda name: groups[name])  # R0's bone first
        if first in bones and second in bones and export_order(bones[first]) > export_order(bones[second]):
            swapped += count
    return swapped


def binding(obj):
    """mmd_tools' SDEF binding of ``obj``: ``(skinning key block, Armature modifier or None)``, or
    ``None`` when there is none."""
    keys = obj.data.shape_keys
    if keys is None or SKINNING_KEY not in keys.key_blocks:
        return None
    masked = next((m for m in obj.modifiers if m.type == "ARMATURE" and m.vertex_group == MASK_GROUP), None)
    return keys.key_blocks[SKINNING_KEY], masked


def _driver(obj):
    anim = obj.data.shape_keys.animation_data
    if anim is None:
        return None
    return anim.drivers.find(f'key_blocks["{SKINNING_KEY}"].value')


def take_over(obj, bound):
    """Unbind mmd_tools' SDEF of ``obj`` (see module doc); returns the state for :func:`restore`."""
    kb, mod = bound
    driver = _driver(obj)
    state = {"key_mute": kb.mute, "driver_mute": driver.mute if driver is not None else False}
    if mod is not None:
        state.update(modifier=mod.name, vertex_group=mod.vertex_group, invert=mod.invert_vertex_group)
        mod.vertex_group = ""
        mod.invert_vertex_group = False
    kb.mute = True
    if driver is not None:
        driver.mute = True
    return state


def restore(obj, state):
    """Give the binding back as :func:`take_over` found it (parts that vanished meanwhile are skipped)."""
    bound = binding(obj)
    if bound is None:
        return
    kb, _ = bound
    kb.mute = bool(state.get("key_mute", False))
    driver = _driver(obj)
    if driver is not None:
        driver.mute = bool(state.get("driver_mute", False))
    mod = obj.modifiers.get(state.get("modifier", ""))
    if mod is not None and mod.type == "ARMATURE":
        mod.vertex_group = state.get("vertex_group", "")
        mod.invert_vertex_group = bool(state.get("invert", False))
