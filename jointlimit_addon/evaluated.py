"""Solving on the evaluated pose: the chain model comes from the rig as Blender evaluates it, and
the solvers correct for whatever the model misses.

The core solvers (``core.limb_ik``, ``core.ccd``) model a chain as rest matrices plus the parent's
pose: child = parent_pose @ parent_rest^-1 @ rest @ R(local). On a production rig the bones of a
logical chain (``chains``) are joined through mechanism bones with constraints, so that formula is
wrong. Here the model is built from the evaluated pose instead:

- ``P_i``: the pose-space frame bone ``i``'s local channels act in, through its real parent and
  its parent's constraints (``Object.convert_space`` of the identity from LOCAL to POSE);
- ``C_i = M_{i-1}^-1 @ P_i``: that frame in the evaluated frame ``M_{i-1}`` of the previous chain
  bone, turned into *virtual rest matrices* ``rest_i = rest_{i-1} @ C_i`` with
  ``parent_pose = P_0``, ``parent_rest = rest_0``.

For rigid mechanism (Rigify's FK arms and legs) this model is exact; where the mechanism follows
only partly (a 50 % Copy Transforms between spine controls) it is exact at the current pose, and
:func:`solve_through_rig` repeats solve -> write -> depsgraph update -> measure a few times,
rebuilding the model each time. The error reported is always the one measured on the evaluated
pose, never the model's.
"""

import numpy as np
from mathutils import Matrix

from . import bone_limits

ROUNDS = 8  # outer correction iterations at most


def _rigid(m):
    """``(rigid 4x4, uniform scale)`` of an affine matrix (polar decomposition of the 3x3)."""
    m = np.asarray(m, dtype=np.float64)
    u, s, vt = np.linalg.svd(m[:3, :3])
    rot = u @ vt
    if np.linalg.det(rot) < 0:
        u[:, -1] *= -1
        rot = u @ vt
    out = np.eye(4)
    out[:3, :3], out[:3, 3] = rot, m[:3, 3]
    return out, float(np.cbrt(abs(np.prod(s))))


def channel_frame(obj, pose_bone):
    """Pose-space matrix that the bone's local channels act in (its frame for identity channels),
    through its evaluated parent and the parent's constraints."""
    return np.array(obj.convert_space(pose_bone=pose_bone, matrix=Matrix.Identity(4),
                                      from_space="LOCAL", to_space="POSE"))


def _plain_link(parent, pose_bone):
    """Whether ``pose_bone`` hangs directly off ``parent`` and inherits its rotation and scale:
    then the rest matrices give the link exactly (no float32 round trip through the pose)."""
    bone = pose_bone.bone
    return (pose_bone.parent is not None and pose_bone.parent.name == parent.name
            and bone.use_inherit_rotation and bone.inherit_scale == "FULL")


def _scaled_as_base(pose_bone, scale):
    """Whether the evaluated frame of ``pose_bone`` carries the chain base's uniform ``scale`` and no
    scale of its own (a scaled bone moves its children's heads: the rest matrices miss that)."""
    m = np.array(pose_bone.matrix)[:3, :3]
    return np.allclose(m.T @ m, scale * scale * np.eye(3), rtol=0.0, atol=1e-6 * max(1.0, scale * scale))


def mirrored_bone(bones):
    """The first of ``bones`` mirrored by a negative scale (its own channels, two negative axes
    included, or inherited: a frame that turns inside out), whose turns the rotation model cannot
    follow; ``None``."""
    return next((pb.name for pb in bones if min(pb.scale) < 0.0 or pb.matrix.determinant() < 0.0), None)


def unevenly_scaled_bone(bones, tolerance=1e-4):
    """The first of ``bones`` whose evaluated pose scales its axes unevenly (its own scale or its
    parents'), which the rigid rotation model cannot follow; ``None``."""
    for pb in bones:
        scale = pb.matrix.to_scale()
        if max(scale) - min(scale) > tolerance * max(abs(v) for v in scale):
            return pb.name
    return None


def model_lengths(bones, parent_pose, parent_rest):
    """Each bone's length on the evaluated pose (its pose scale included), in the units of the
    model of :func:`virtual_rests` (the chain base's uniform scale divided out)."""
    scale = 1.0 if parent_pose is None else _rigid(np.asarray(parent_pose) @ np.linalg.inv(parent_rest))[1]
    return np.array([(pb.tail - pb.head).length for pb in bones]) / max(scale, 1e-12)


def virtual_rests(obj, bones):
    """``(rest matrices (n, 4, 4), parent_pose, parent_rest)`` for the core solvers such that their
    forward kinematics equals Blender's evaluated pose at the bones' current channels. Plain
    parent links keep the real rest matrices."""
    first = bones[0]
    rest0 = np.array(first.bone.matrix_local)
    parent = first.parent
    if parent is not None and _plain_link(parent, first):
        parent_pose, parent_rest = np.array(parent.matrix), np.array(parent.bone.matrix_local)
        scale = _rigid(parent_pose @ np.linalg.inv(parent_rest))[1]
    elif parent is None and first.bone.use_inherit_rotation:
        parent_pose = parent_rest = None
        scale = 1.0
    else:
        rest0 = _rigid(rest0)[0]
        parent_pose, parent_rest = channel_frame(obj, first), rest0
        scale = _rigid(parent_pose)[1]
    rests = [rest0]
    for prev, pb in zip(bones[:-1], bones[1:]):
        if _plain_link(prev, pb) and _scaled_as_base(prev, scale):
            c = np.linalg.inv(np.array(prev.bone.matrix_local)) @ np.array(pb.bone.matrix_local)
        else:
            c = np.linalg.inv(_rigid(np.array(prev.matrix))[0]) @ _rigid(channel_frame(obj, pb))[0]
            c[:3, 3] /= max(scale, 1e-12)
        rests.append(rests[-1] @ c)
    return np.array(rests), parent_pose, parent_rest


def solve_through_rig(view_layer, written, solve_once, tip_of, target, tolerance, rounds=ROUNDS):
    """Outer correction loop: ``solve_once()`` -> ``(quats, info)`` solves on a model built from
    the current evaluated pose; the quats go to ``written`` (root first), the depsgraph is
    updated and ``tip_of()`` measured. Repeats until the evaluated error is within ``tolerance``
    or stops shrinking; keeps the best pose. Returns ``(quats, info)`` with
    ``info["evaluated_error"]``, ``info["rounds"]``.
    """
    target = np.asarray(target, dtype=np.float64)
    best = None
    for done in range(1, rounds + 1):
        quats, info = solve_once()
        for pb, q in zip(written, quats):
            bone_limits.write_posed_rotation(pb, q)
        view_layer.update()
        error = float(np.linalg.norm(np.asarray(tip_of(), dtype=np.float64) - target))
        improved = best is None or error < 0.9 * best[0]
        if best is None or error < best[0]:
            best = (error, quats, info)
        if error <= tolerance or not improved:
            break
    error, best_quats, info = best
    if best_quats is not quats:  # an earlier round was closer: put it back
        for pb, q in zip(written, best_quats):
            bone_limits.write_posed_rotation(pb, q)
        view_layer.update()
    return best_quats, dict(info, evaluated_error=error, rounds=done)
