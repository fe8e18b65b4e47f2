"""Two-bone skinning data read from Blender: vertex groups, SDEF parameters, bone matrices.

Sources of ``C``, ``R0``, ``R1`` (absolute rest positions in the mesh's space):

* ``MMD``: mmd_tools' shape keys ``mmd_sdef_c``, ``mmd_sdef_r0``, ``mmd_sdef_r1`` (absolute rest
  positions). A vertex is SDEF when it has exactly two deforming bone groups with non-zero
  weight and its ``mmd_sdef_c`` differs from its basis position (mmd_tools writes the basis
  position for other vertices and tests C alone). As in mmd_tools, ``R0`` belongs to the bone
  whose vertex group has the lower index.
* ``DERIVED``: the point attributes ``jl_sdef_c``, ``jl_sdef_r0``, ``jl_sdef_r1`` written by
  ``object.jointlimit_sdef_derive`` (every two-bone vertex; ``R0`` on the parent side).

Bone order: ``bone0`` is the parent side (the ancestor of the other bone; group order when the two
bones are unrelated) and ``t_v`` its weight normalised over the two (Blender's Armature modifier
normalises the same way). Swapping both bones, weights and ``R0``/``R1`` leaves SDEF unchanged, so
reordering an mmd vertex swaps its ``R0``/``R1`` with it.
"""

from dataclasses import dataclass

import numpy as np

from . import tree

MMD_KEYS = ("mmd_sdef_c", "mmd_sdef_r0", "mmd_sdef_r1")
MMD_MASK_GROUP = "mmd_sdef_mask"  # mmd_tools' SDEF binding masks the Armature modifier with it (mmd.py)
DERIVED_ATTRS = ("jl_sdef_c", "jl_sdef_r0", "jl_sdef_r1")
SOURCES = ("AUTO", "MMD", "DERIVED")


class DataError(ValueError):
    """Input the user has to fix; the message is shown in the operator report."""


def check_mesh_local(obj, written, instead):
    """``DataError`` when the mesh data of ``obj`` comes from a library (linked, or the linked data of
    a library override): what is ``written`` into it would be lost on saving; ``instead`` says what
    to do."""
    mesh = obj.data
    if mesh.library is not None or mesh.override_library is not None:
        raise DataError(f"the mesh data '{mesh.name}' of '{obj.name}' comes from a library: {written} would not be "
                        f"kept with this file; {instead}")


@dataclass
class TwoBone:
    """Two-bone vertices of a mesh (n of them) and the bones they use (K)."""

    index: np.ndarray  # (n,) vertex indices
    bones: list  # K bone names; bone0 / bone1 index into it
    bone0: np.ndarray  # (n,) parent-side bone
    bone1: np.ndarray  # (n,) child-side bone
    weight0: np.ndarray  # (n,) t_v
    swapped: np.ndarray  # (n,) True where bone0 is the higher vertex-group index
    many: int = 0  # vertices with three or more deforming groups (in ``index`` with strongest_two)


def armature_modifier(obj):
    """The first Armature modifier of ``obj`` that has an armature object, or ``None``."""
    for mod in obj.modifiers:
        if mod.type == "ARMATURE" and mod.object is not None and mod.object.type == "ARMATURE":
            return mod
    return None


def require_armature(obj):
    mod = armature_modifier(obj)
    if mod is None:
        raise DataError(f"'{obj.name}' has no Armature modifier with an armature object")
    if not mod.use_vertex_groups:
        raise DataError(f"Armature modifier '{mod.name}' does not use vertex groups")
    return mod


def check_uniform_scale(obj, arm):
    """Refuse a mesh whose space is a non-uniform scale of its armature's (``DataError``): the
    deformer works in the mesh's space, where the bones' motions must stay rotations (scaled
    alike on every axis) for SDEF and Bezier to turn the two-bone vertices about them. (Checked
    when the deformer is added, derived or baked; one an older version added stays on upgrade.)"""
    try:
        scales = np.linalg.svd(mesh_from_armature(obj, arm)[:3, :3], compute_uv=False)
    except np.linalg.LinAlgError:
        scales = np.zeros(3)
    if not (np.all(np.isfinite(scales)) and scales[-1] > 0.0):
        raise DataError(f"'{obj.name}' or its armature '{arm.name}' is scaled to 0 along an axis (flat): the "
                        "deformer needs the same scale on every axis; fix the scale first")
    if scales[0] - scales[-1] > 1e-5 * scales[0]:
        raise DataError(f"'{obj.name}' is scaled unevenly against its armature '{arm.name}' (along its axes by "
                        f"{' : '.join(f'{x:.4g}' for x in scales / scales.max())}): the deformer needs the same "
                        "scale on every axis; apply the scale of the mesh (or the armature) first")


def mirrored(obj, arm):
    """Whether the mesh's space is a mirror image of its armature's (a negative scale on one of
    them, not on both)."""
    return bool(np.linalg.det(mesh_from_armature(obj, arm)[:3, :3]) < 0.0)


def check_not_mirrored(obj, arm):
    """Refuse a mesh mirrored against its armature (``DataError``): the live deformer's bone frames
    are rotations in the mesh's space, which a mirror turns into reflections (Bake, in numpy,
    follows it)."""
    if mirrored(obj, arm):
        raise DataError(f"'{obj.name}' is mirrored against its armature '{arm.name}' (a negative scale on one of "
                        "them): the deformer cannot follow a mirrored space; apply the scale of the mesh (or the "
                        "armature) first")


# Modifiers that only move vertices (they may come before the Armature modifier: the deformer
# starts from the positions the Armature modifier receives).
DEFORM_ONLY = {"ARMATURE", "CAST", "CURVE", "DISPLACE", "HOOK", "LAPLACIANDEFORM", "LATTICE", "MESH_DEFORM",
               "SHRINKWRAP", "SIMPLE_DEFORM", "SMOOTH", "CORRECTIVE_SMOOTH", "LAPLACIANSMOOTH", "SURFACE_DEFORM",
               "WARP", "WAVE", "MESH_CACHE"}


def check_modifier_order(obj, arm_mod):
    """``DataError`` for a modifier before the Armature modifier that may change the vertices or
    their weights (``check_modifiers``)."""
    mods = list(obj.modifiers)
    for mod in mods[:mods.index(arm_mod)]:
        if not (mod.show_viewport or mod.show_render) or mod.type in DEFORM_ONLY:
            continue
        if mod.type == "NODES" and tree.is_input_tree(mod.node_group):
            continue
        if mod.type == "MIRROR" and mod.use_mirror_vertex_groups:
            how = ("apply it (after it, the mirrored half would copy the other half's pose: its vertex groups "
                   "are mirrored)")
        else:
            how = "apply it or move it after the Armature modifier"
        raise DataError(f"modifier '{mod.name}' ({mod.type}) comes before the Armature modifier '{arm_mod.name}' "
                        f"and may change the vertices or their weights: {how}")


def check_modifiers(obj, arm_mod):
    """Refuse modifier stacks the deformer cannot follow (raises :class:`DataError`): a modifier
    before the Armature modifier that may change the vertices or their weights, an Armature
    modifier that blends with the previous one or masks vertices by a group of the user's (the
    deformer's own skip mask, ``tree.SKIP_GROUP``, is fine). Deforming modifiers
    before it are fine (their result is the deformer's input), any modifier after it too."""
    check_modifier_order(obj, arm_mod)
    if arm_mod.use_multi_modifier:
        raise DataError(f"Armature modifier '{arm_mod.name}' uses Multi Modifier (blends with the previous "
                        "modifier); turn it off")
    if arm_mod.vertex_group == MMD_MASK_GROUP:
        raise DataError(f"'{obj.name}' is bound by mmd_tools' SDEF (its Armature modifier '{arm_mod.name}' is masked "
                        f"by '{MMD_MASK_GROUP}'): add the JointLimit deformer with Take Over mmd_tools SDEF, or "
                        "unbind mmd_tools' SDEF")
    if arm_mod.vertex_group and arm_mod.vertex_group != tree.SKIP_GROUP:  # not the deformer's own skip mask
        raise DataError(f"Armature modifier '{arm_mod.name}' is masked by the vertex group '{arm_mod.vertex_group}'; "
                        "clear the mask")


def positions(mesh):
    co = np.empty(len(mesh.vertices) * 3, np.float32)
    mesh.vertices.foreach_get("co", co)
    return co.reshape(-1, 3).astype(np.float64)


ARMATURE_MIN_WEIGHT = 1e-4   # Blender's Armature modifier moves a vertex only when its weights add up to more


def two_bone_vertices(obj, arm, strongest_two=False):
    """Vertices with exactly two deforming bone groups of non-zero weight (see module doc); with
    ``strongest_two`` also those with more, on their two strongest groups (renormalised). A vertex
    whose weights add up to no more than ``ARMATURE_MIN_WEIGHT`` is left out, as the Armature
    modifier leaves it where it is."""
    bones = arm.data.bones
    deform = {g.index: g.name for g in obj.vertex_groups if g.name in bones and bones[g.name].use_deform}
    index, ga, gb, wa, wb = [], [], [], [], []
    many = 0
    for v in obj.data.vertices:
        groups = [(g.group, g.weight) for g in v.groups if g.weight > 0.0 and g.group in deform]
        if float(np.float32(sum(np.float32(w) for _, w in groups))) <= ARMATURE_MIN_WEIGHT:
            continue    # the Armature modifier leaves such a vertex as it is: so does the deformer
        if len(groups) > 2:
            many += 1
            if not strongest_two:
                continue
            groups = sorted(groups, key=lambda gw: -gw[1])[:2]
        if len(groups) == 2:
            (a, x), (b, y) = sorted(groups)
            index.append(v.index)
            ga.append(a)
            gb.append(b)
            wa.append(x)
            wb.append(y)
    if not index:
        raise DataError(f"'{obj.name}' has no vertices on exactly two deforming bones of '{arm.name}'")
    ga, gb = np.array(ga), np.array(gb)
    wa, wb = np.array(wa, np.float64), np.array(wb, np.float64)
    names = sorted({deform[g] for g in np.concatenate([ga, gb])}, key=lambda n: bones.find(n))
    slot = {deform[g]: names.index(deform[g]) for g in deform if deform[g] in names}
    pairs = {(a, b) for a, b in zip(ga.tolist(), gb.tolist())}
    swap_pair = {(a, b): bones[deform[b]] in bones[deform[a]].parent_recursive for a, b in pairs}
    swapped = np.array([swap_pair[p] for p in zip(ga.tolist(), gb.tolist())], bool)
    to_slot = np.vectorize(lambda g: slot[deform[g]], otypes=[np.intp])
    sa, sb = to_slot(ga), to_slot(gb)
    t = wa / (wa + wb)
    return TwoBone(
        index=np.array(index, np.intp),
        bones=names,
        bone0=np.where(swapped, sb, sa),
        bone1=np.where(swapped, sa, sb),
        weight0=np.where(swapped, 1.0 - t, t),
        swapped=swapped,
        many=many,
    )


def subset(two, keep):
    """``two`` restricted to the vertices where ``keep`` (n,) is True."""
    return TwoBone(two.index[keep], two.bones, two.bone0[keep], two.bone1[keep], two.weight0[keep],
                   two.swapped[keep], two.many)


def _key_positions(key_block):
    co = np.empty(len(key_block.data) * 3, np.float32)
    key_block.data.foreach_get("co", co)
    return co.reshape(-1, 3).astype(np.float64)


def has_mmd(obj):
    keys = obj.data.shape_keys
    return keys is not None and all(k in keys.key_blocks for k in MMD_KEYS)


def has_derived(obj):
    attrs = obj.data.attributes
    return all(a in attrs and attrs[a].domain == "POINT" and attrs[a].data_type == "FLOAT_VECTOR"
               for a in DERIVED_ATTRS)


def lacks_sdef(obj):
    """Whether the mesh has no SDEF data at all (neither mmd_tools' keys nor derived attributes)."""
    return not (has_mmd(obj) or has_derived(obj))


def bake_needs_sdef(obj, mode):
    """Whether baking ``obj`` in ``mode`` needs its SDEF data: LBS needs none (the Armature
    modifier's), but data a mesh has must be whole."""
    return mode != "LBS" or not lacks_sdef(obj)


def check_mmd_complete(obj, source):
    """Refuse (``DataError``) incomplete mmd_tools SDEF data where it would be read (``AUTO`` or
    ``MMD``): some of the ``mmd_sdef_*`` shape keys but not all (a broken import), which would
    otherwise be passed over for derived parameters without a word."""
    keys = obj.data.shape_keys
    present = [] if keys is None else [k for k in MMD_KEYS if k in keys.key_blocks]
    missing = [k for k in MMD_KEYS if k not in present]
    if source in ("AUTO", "MMD") and present and missing:
        raise DataError(f"'{obj.name}' has incomplete mmd_tools SDEF shape keys: {', '.join(missing)} missing "
                        f"(has {', '.join(present)}): complete them, or run Derive SDEF Parameters and set "
                        "SDEF Data to Derived")


def resolve_source(obj, source):
    check_mmd_complete(obj, source)
    if source == "AUTO":
        if has_mmd(obj):
            return "MMD"
        if has_derived(obj):
            return "DERIVED"
        raise DataError(f"'{obj.name}' has no SDEF data: no mmd_sdef_* shape keys and no jl_sdef_* "
                        "attributes (run Derive SDEF Parameters first)")
    if source == "MMD" and not has_mmd(obj):
        raise DataError(f"'{obj.name}' has no mmd_tools SDEF shape keys ({', '.join(MMD_KEYS)})")
    if source == "DERIVED" and not has_derived(obj):
        raise DataError(f"'{obj.name}' has no derived SDEF attributes (run Derive SDEF Parameters first)")
    return source


def read_attribute(mesh, name):
    out = np.empty(len(mesh.vertices) * 3, np.float32)
    mesh.attributes[name].data.foreach_get("vector", out)
    return out.reshape(-1, 3).astype(np.float64)


def sdef_params(obj, two, source):
    """``(two', C, R0, R1)`` for the SDEF vertices of ``two`` (a subset for MMD), bone order applied."""
    source = resolve_source(obj, source)
    mesh = obj.data
    if source == "MMD":
        blocks = mesh.shape_keys.key_blocks
        c, r0, r1 = (_key_positions(blocks[k]) for k in MMD_KEYS)
        differs = ~(np.abs(c - positions(mesh)) <= 0.0).all(axis=1)  # mmd_tools' rule: C alone (NaN differs)
        keep = differs[two.index]
        if not keep.any():
            raise DataError(f"'{obj.name}': no two-bone vertex has SDEF data in the mmd_sdef_* shape keys")
        two = subset(two, keep)
    else:
        c, r0, r1 = (read_attribute(mesh, a) for a in DERIVED_ATTRS)
    c, r0, r1 = c[two.index], r0[two.index], r1[two.index]
    _check_finite(obj, source, two, (c, r0, r1))
    if source == "DERIVED":  # written in parent-first order already
        return two, c, r0, r1
    sw = two.swapped[:, None]
    return two, c, np.where(sw, r1, r0), np.where(sw, r0, r1)


def check_derived_cover(obj, two, c, r0, r1):
    """Refuse (``DataError``) derived SDEF data that left out some of the two-bone vertices ``two``
    (its ``C``, ``R0`` and ``R1`` their own position, as Derive writes for the vertices it skips):
    derived without *Two Strongest Groups* for vertices on three or more groups, or weights
    changed since. The deformer would leave those vertices to plain LBS while saying otherwise."""
    rest = positions(obj.data)[two.index]
    left = (c == rest).all(axis=1) & (r0 == rest).all(axis=1) & (r1 == rest).all(axis=1)
    if left.any():
        raise DataError(f"'{obj.name}': {int(left.sum())} of its two-bone vertices (vertex {int(two.index[left][0])} "
                        "first) have no derived SDEF parameters: Derive left them out (on three or more groups "
                        "without Two Strongest Groups, or their weights changed since): derive the SDEF parameters "
                        "again with the same options")


def _check_finite(obj, source, two, values):
    """Refuse NaN or infinite SDEF data (``DataError`` naming the shape key or attribute and the
    first vertex): it would make the vertex NaN in the deformed mesh."""
    names = MMD_KEYS if source == "MMD" else DERIVED_ATTRS
    where = "shape key" if source == "MMD" else "attribute"
    for name, v in zip(names, values):
        bad = ~(np.abs(v) < 1e30).all(axis=1)     # (Blender stores an infinite float as FLT_MAX: 3.4e38)
        if bad.any():
            raise DataError(f"'{obj.name}': the SDEF {where} '{name}' holds NaN or infinite values at "
                            f"{int(bad.sum())} two-bone vertices (vertex {int(two.index[bad][0])} first): fix or "
                            "derive the SDEF data again")


def _matrix(m):
    return np.array([list(row) for row in m], np.float64)


def mesh_from_armature(obj, arm):
    """``mesh_world^-1 @ arm_world`` (4, 4) of the given (original or evaluated) objects."""
    return np.linalg.inv(_matrix(obj.matrix_world)) @ _matrix(arm.matrix_world)


def rest_frames(obj, arm, names):
    """Rest bone frames (K, 4, 4) in the mesh's space, orthonormalised (heads kept)."""
    w = mesh_from_armature(obj, arm)
    frames = np.array([w @ _matrix(arm.data.bones[n].matrix_local) for n in names])
    q, r = np.linalg.qr(frames[:, :3, :3])
    q *= np.sign(np.diagonal(r, axis1=1, axis2=2))[:, None, :]  # keep each axis' direction
    frames[:, :3, :3] = q
    return frames


def heads_tails(obj, arm, names):
    """Rest heads and tails (K, 3) in the mesh's space."""
    w = mesh_from_armature(obj, arm)
    bones = arm.data.bones
    head = np.array([[*bones[n].head_local, 1.0] for n in names]) @ w.T
    tail = np.array([[*bones[n].tail_local, 1.0] for n in names]) @ w.T
    return head[:, :3], tail[:, :3]


def bone_matrices(obj, arm, names, depsgraph):
    """Skinning matrices (K, 4, 4) in the mesh's space, as Blender's Armature modifier builds them:
    ``mesh_w^-1 @ arm_w @ pose_bone.matrix @ bone.matrix_local^-1 @ arm_w^-1 @ mesh_w``."""
    arm_eval = arm.evaluated_get(depsgraph)
    obj_eval = obj.evaluated_get(depsgraph)
    w = mesh_from_armature(obj_eval, arm_eval)
    w_inv = np.linalg.inv(w)
    pose = np.array([_matrix(arm_eval.pose.bones[n].matrix) for n in names])
    rest_inv = np.linalg.inv(np.array([_matrix(arm_eval.data.bones[n].matrix_local) for n in names]))
    return w @ pose @ rest_inv @ w_inv
