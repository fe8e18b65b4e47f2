"""Derived SDEF parameters ``C``, ``R0``, ``R1`` of an ordinary rig, written on the mesh.

``derive(obj)`` runs :func:`core.skinning.derive_sdef_params` on the two-bone vertices of the
mesh's Armature modifier and stores the result as the point attributes ``jl_sdef_c``,
``jl_sdef_r0``, ``jl_sdef_r1`` (parent first; other vertices get their own position), and, with
``write_mmd``, also in mmd_tools' shape-key layout (``mmd.write_layout``).
"""

import numpy as np

from ..core import skinning
from . import data, mmd


def check_local(obj):
    """``data.DataError`` when the mesh data of ``obj`` comes from a library: what ``derive``
    writes into it would be lost on saving."""
    data.check_mesh_local(obj, "SDEF parameters derived into it", "derive them in the library's file")


def derive(obj, centre="project", boundary="fit", pad=0.0, strongest_two=False, write_mmd=False):
    """Derive and store the SDEF parameters of ``obj``; returns the :class:`data.TwoBone` used and,
    with ``write_mmd``, how many vertices mmd_tools' PMX export would write with R0 and R1
    swapped (``mmd.export_swapped``; else 0).

    Raises :class:`data.DataError` (or ``ValueError`` from the core) before writing anything.
    """
    check_local(obj)
    arm = data.require_armature(obj).object
    data.check_uniform_scale(obj, arm)
    two = data.two_bone_vertices(obj, arm, strongest_two)
    rest = data.positions(obj.data)
    heads, tails = data.heads_tails(obj, arm, two.bones)
    params = skinning.derive_sdef_params(rest[two.index], two.bone0, two.bone1, two.weight0, heads, tails,
                                         centre=centre, boundary=boundary, pad=pad)
    attrs = obj.data.attributes
    for name, values in zip(data.DERIVED_ATTRS, params):
        full = rest.copy()
        full[two.index] = values
        if name in attrs:
            attrs.remove(attrs[name])
        attrs.new(name, "FLOAT_VECTOR", "POINT").data.foreach_set("vector", full.astype(np.float32).ravel())
    swapped = mmd.write_layout(obj, two, *params) if write_mmd else 0
    obj.data.update()
    return two, swapped
