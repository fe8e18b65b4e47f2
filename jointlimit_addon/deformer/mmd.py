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


def write_layout(obj, two, c, r0, r1):
    """Write parent-first ``C``, ``R0``, ``R1`` (n, 3) of the vertices ``two`` as mmd_tools' SDEF
    shape keys (existing ones are overwritten); every other vertex gets its basis position."""
    if obj.data.shape_keys is None:
        obj.shape_key_add(name="Basis", from_mix=False)
    keys = obj.data.shape_keys
    basis = keys.reference_key
    rest = np.empty(len(basis.data) * 3, np.float32)
    basis.data.foreach_get("co", rest)
    rest = rest.reshape(-1, 3)
    sw = two.swapped[:, None]  # bone0 on the higher group index: its boundary is R1 there
    c = _apart(np.asarray(c, dtype=np.float32), rest[two.index])
    for name, values in zip(data.MMD_KEYS, (c, np.where(sw, r1, r0), np.where(sw, r0, r1))):
        kb = keys.key_blocks.get(name) or obj.shape_key_add(name=name, from_mix=False)
        kb.relative_key = basis
        kb.value = 0.0
        full = rest.copy()
        full[two.index] = values
        kb.data.foreach_set("co", full.ravel())


def _apart(c, rest):
    """``c`` with each centre that equals its vertex (a vertex on the bones' line) moved four
    float32 steps in X: mmd_tools tells SDEF vertices by C differing from the basis position, and
    its vectors compare equal within one step."""
    step = np.spacing(np.abs(rest)).astype(np.float32)
    same = np.all(np.abs(c - rest) <= 2 * step, axis=1)
    c = c.copy()
    c[same, 0] = rest[same, 0] + 4 * step[same, 0]
    return c


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
