"""What ``add`` writes for the deformer: the bone-frames helper mesh and the per-vertex attributes
of the mesh (``tree`` reads both), from inputs ``prepare`` validates and reads (``data``, ``derive``).
"""

from dataclasses import dataclass

import bpy
import numpy as np

from ..core import quat
from . import data, derive, tree

HELPER_SUFFIX = " JL Bone Frames"


def set_attribute(mesh, name, data_type, values, key):
    if name in mesh.attributes:
        mesh.attributes.remove(mesh.attributes[name])
    attr = mesh.attributes.new(name, data_type, "POINT")
    attr.data.foreach_set(key, np.ascontiguousarray(values).ravel())


def pairs(two):
    """``(pairs (P, 2) bone indices, pair index per two-bone vertex)``."""
    pairs, inverse = np.unique(np.stack([two.bone0, two.bone1], axis=1), axis=0, return_inverse=True)
    return pairs, inverse.ravel()


def build_helper(obj, arm, names, pairs, lbs_through):
    """Four points per bone (head, head + its rest X axis, head - its rest Y axis, head + its rest
    Z axis), then one point per bone pair (see ``tree._pair_slerp``; not in any group, so the
    Armature modifier leaves it). The Y point lies behind the head, where a bone with B-Bone
    segments deforms it with its first segment as the other three (a unit ahead of the head it
    lay past the tail of a bone shorter than that, in a later segment)."""
    frames = data.rest_frames(obj, arm, names)
    k = len(names)
    pts = np.zeros((4 * k + len(pairs), 3))
    pts[:4 * k:4] = frames[:, :3, 3]
    for axis, sign in zip(range(3), (1.0, -1.0, 1.0)):
        pts[axis + 1:4 * k:4] = frames[:, :3, 3] + sign * frames[:, :3, axis]
    mesh = bpy.data.meshes.new(obj.name + HELPER_SUFFIX)
    mesh.vertices.add(len(pts))
    mesh.vertices.foreach_set("co", pts.astype(np.float32).ravel())
    def per_bone(values, width):
        out = np.zeros((len(pts), width), np.float32)
        out[:4 * k] = np.repeat(values.reshape(k, width), 4, axis=0)
        return out
    inv = np.linalg.inv(frames).transpose(0, 2, 1).reshape(k, 16)  # column-major storage
    set_attribute(mesh, tree.ATTR_REST_INV, "FLOAT4X4", per_bone(inv, 16), "value")
    rot_inv = quat.from_matrix(frames[:, :3, :3].transpose(0, 2, 1))
    set_attribute(mesh, tree.ATTR_REST_ROT_INV, "QUATERNION", per_bone(rot_inv, 4), "value")
    set_attribute(mesh, tree.ATTR_REST_HEAD, "FLOAT_VECTOR", per_bone(frames[:, :3, 3], 3), "vector")
    first = np.zeros(len(pts), bool)
    first[:4 * k:4] = True
    set_attribute(mesh, tree.ATTR_BONE_FIRST, "BOOLEAN", first, "value")
    for name, column in ((tree.ATTR_PAIR_I0, 0), (tree.ATTR_PAIR_I1, 1)):
        ids = np.zeros(len(pts), np.int32)
        ids[4 * k:] = 4 * pairs[:, column]
        set_attribute(mesh, name, "INT", ids, "value")
    set_attribute(mesh, tree.ATTR_LBS_THROUGH, "BOOLEAN", np.full(len(pts), bool(lbs_through)), "value")
    set_attribute(mesh, tree.ATTR_SKIP, "BOOLEAN", np.zeros(len(pts), bool), "value")  # see _configure
    mesh.update()
    helper = bpy.data.objects.new(obj.name + HELPER_SUFFIX, mesh)
    for i, name in enumerate(names):
        helper.vertex_groups.new(name=name).add(list(range(4 * i, 4 * i + 4)), 1.0, "REPLACE")
    mod = helper.modifiers.new("Armature", "ARMATURE")
    mod.object = arm
    mod.use_vertex_groups, mod.use_bone_envelopes, mod.use_deform_preserve_volume = True, False, False
    for coll in obj.users_collection:
        coll.objects.link(helper)
    helper.parent = obj
    helper.matrix_parent_inverse.identity()
    helper.matrix_basis.identity()
    helper.hide_render = True
    helper.hide_select = True
    helper.display_type = "WIRE"
    return helper


def hide(helper):
    """Hide the helper in the view layer (a new object is there before the view layer lists it)."""
    try:
        helper.hide_set(True)
    except RuntimeError:    # not in this view layer (its collection excluded): nothing shows it
        pass


def write_mesh_attributes(obj, two, c, r0, r1, heads, pair):
    mesh = obj.data
    n = len(mesh.vertices)
    vec = np.zeros((n, 3), np.float32)
    full = {name: ("FLOAT_VECTOR", vec.copy(), "vector")
            for name in (tree.ATTR_C, tree.ATTR_UDR, tree.ATTR_TDR, tree.ATTR_BEZ_A0, tree.ATTR_BEZ_A1,
                         tree.ATTR_BEZ_C)}
    full[tree.ATTR_MASK] = ("BOOLEAN", np.zeros(n, bool), "value")
    for name in (tree.ATTR_I0, tree.ATTR_I1, tree.ATTR_PAIR):
        full[name] = ("INT", np.zeros(n, np.int32), "value")
    for name in (tree.ATTR_T, tree.ATTR_U, tree.ATTR_BEZ_W1):
        full[name] = ("FLOAT", np.zeros(n, np.float32), "value")
    idx, t = two.index, two.weight0
    u = 1.0 - t
    dr = r0 - r1
    a0, a1, w1, bez_c = _bezier_terms(t, c, dr, heads[two.bone1])
    for name, values in ((tree.ATTR_MASK, True), (tree.ATTR_I0, 4 * two.bone0), (tree.ATTR_I1, 4 * two.bone1),
                         (tree.ATTR_T, t), (tree.ATTR_U, u), (tree.ATTR_C, c),
                         (tree.ATTR_UDR, u[:, None] * dr), (tree.ATTR_TDR, t[:, None] * dr),
                         (tree.ATTR_BEZ_A0, a0), (tree.ATTR_BEZ_A1, a1), (tree.ATTR_BEZ_W1, w1),
                         (tree.ATTR_BEZ_C, bez_c), (tree.ATTR_PAIR, 4 * len(two.bones) + pair)):
        full[name][1][idx] = values
    for name, (data_type, values, key) in full.items():
        set_attribute(mesh, name, data_type, values, key)
    for name in tree.LEGACY_MESH_ATTRS:
        if name in mesh.attributes:
            mesh.attributes.remove(mesh.attributes[name])


def _bezier_terms(t, c, dr, joint):
    """Static parts of the Bezier centre [002 eq.24-26] as a two-point blend (see ``tree``):
    ``A0 = (t r''_0 + 2u b) / (1 + u)``, ``A1 = r''_1``, ``u²`` and the rest centre."""
    u = 1.0 - t
    r0c, r1c = c + u[:, None] * dr, c - t[:, None] * dr       # r''_0, r''_1
    a0 = (t[:, None] * r0c + 2.0 * u[:, None] * joint) / (1.0 + u)[:, None]
    w1 = u * u
    rest = (1.0 - w1)[:, None] * a0 + w1[:, None] * r1c
    return a0, r1c, w1, rest


@dataclass
class Prepared:
    """Validated inputs of :func:`add` and the bake (see :func:`prepare`)."""

    arm_mod: object
    two: data.TwoBone
    c: np.ndarray
    r0: np.ndarray
    r1: np.ndarray
    heads: np.ndarray
    derived: bool = False  # SDEF parameters were derived because the mesh had none
    axes: np.ndarray = None  # (K, 3) rest X axes: where a mirrored bone reflects (core.skinning.polar_decompose)


def prepare(obj, source, strongest_two=False, derive_missing=False, strict=True, need_sdef=True):
    """Validated inputs of :func:`add` (see :class:`Prepared`).

    With ``derive_missing`` and ``source='AUTO'``, a mesh without SDEF data gets derived
    parameters (``derive.derive``, written as ``jl_sdef_*`` attributes). Otherwise raises
    :class:`data.DataError` for anything the user must fix and changes nothing; with
    ``strict`` (all but an old file's upgrade, which keeps what it had) also for a mesh scaled
    unevenly against its armature (``data.check_uniform_scale``) and for derived SDEF data that
    left out some two-bone vertices (``data.check_derived_cover``). Without ``need_sdef`` (the bake's LBS mode) no SDEF data is
    read: ``c``, ``r0``, ``r1`` are ``None``.
    """
    arm_mod = data.require_armature(obj)
    if strict:
        data.check_uniform_scale(obj, arm_mod.object)
    data.check_modifiers(obj, arm_mod)
    derived = False
    data.check_mmd_complete(obj, source)
    if need_sdef and derive_missing and source == "AUTO" and data.lacks_sdef(obj):
        derive.derive(obj, strongest_two=strongest_two)
        derived = True
    two = data.two_bone_vertices(obj, arm_mod.object, strongest_two)
    multiplied = [name for name in two.bones if arm_mod.object.data.bones[name].use_envelope_multiply]
    if multiplied:
        raise data.DataError(f"bone '{multiplied[0]}' multiplies its vertex group weights by its envelope "
                             "(Multiply Vertex Group by Envelope), which the deformer cannot follow: switch that "
                             "off on the bone, or leave this mesh to the Armature modifier")
    c = r0 = r1 = None
    if need_sdef:
        two, c, r0, r1 = data.sdef_params(obj, two, source)
        if strict and data.resolve_source(obj, source) == "DERIVED":
            data.check_derived_cover(obj, two, c, r0, r1)
    heads, _ = data.heads_tails(obj, arm_mod.object, two.bones)
    axes = data.rest_frames(obj, arm_mod.object, two.bones)[:, :3, 0]
    return Prepared(arm_mod, two, c, r0, r1, heads, derived, axes)
