"""Human arm and leg with the built-in presets, and targets made from limit-respecting poses
(shared by the limb IK and CCD benchmarks, issue 19).

The rig is Rigify's human meta-rig when Rigify is available (it ships with Blender), else a
plain arm and leg. The left arm (upper_arm, forearm, hand) gets the SHOULDER, ELBOW, WRIST presets
and the left leg (thigh, shin, foot) HIP, KNEE, ANKLE. A limit-respecting pose draws every limited
joint inside its limit: swing-twist limits by rejection sampling on the (s, t) plane and a twist
in range, hinges by an angle in range. The rest pose need not be inside a limit.
"""

import sys

import bpy
import numpy as np

LIMBS = {"arm": (("upper_arm.L", "SHOULDER"), ("forearm.L", "ELBOW"), ("hand.L", "WRIST")),
         "leg": (("thigh.L", "HIP"), ("shin.L", "KNEE"), ("foot.L", "ANKLE"))}


def _plain_rig():
    from _common import connected_armature

    return connected_armature("Human", [("upper_arm.L", (0.18, 0.0, 1.45), (0.45, 0.02, 1.2), None),
            ("forearm.L", (0.45, 0.02, 1.2), (0.68, -0.02, 1.0), "upper_arm.L"),
            ("hand.L", (0.68, -0.02, 1.0), (0.75, -0.02, 0.92), "forearm.L"),
            ("thigh.L", (0.1, 0.0, 0.95), (0.1, -0.02, 0.52), None),
            ("shin.L", (0.1, -0.02, 0.52), (0.1, 0.03, 0.1), "thigh.L"),
            ("foot.L", (0.1, 0.03, 0.1), (0.1, -0.12, 0.02), "shin.L")])


def human_rig(addon):
    """The rig in Pose Mode with the presets applied; returns (object, description)."""
    import addon_utils

    try:
        addon_utils.enable("rigify", default_set=True)
        bpy.ops.wm.read_homefile(use_empty=True)
        bpy.ops.object.armature_human_metarig_add()
        obj = bpy.context.object
        bpy.ops.object.mode_set(mode="POSE")
        what = "Rigify human meta-rig"
    except Exception:  # noqa: BLE001 - any failure: fall back to the plain rig
        obj = _plain_rig()
        what = "plain arm and leg"
    presets = sys.modules[addon.__name__ + ".presets"]
    for limb in LIMBS.values():
        for bone, key in limb:
            pb = obj.pose.bones[bone]
            pb.rotation_mode = "QUATERNION"
            presets.apply_entry(pb, presets.builtin_entry(key))
            pb.jointlimit.enabled = True
    bpy.context.view_layer.update()
    return obj, what


def limb_bones(obj, limb):
    return [obj.pose.bones[name] for name, _ in LIMBS[limb]]


def inside_rotation(limit, rng, core):
    """One random local rotation inside ``limit`` (a JointLimit or a HingeLimit)."""
    if isinstance(limit, core["euler_limits"].HingeLimit):
        return core["quat"].from_axis_angle(limit.axis, rng.uniform(*limit.angle))
    s0, s1, t0, t1 = limit.region.bounds
    lo, hi = limit.twist if limit.twist else (-np.pi, np.pi)
    while True:
        s, t = rng.uniform(s0, s1), rng.uniform(t0, t1)
        if limit.region.contains_st(np.array([s]), np.array([t]))[0]:
            psi = 0.0 if limit.fix_twist else rng.uniform(lo, hi)
            return core["projection"].from_swing_twist(s, t, psi)


def core_modules(addon):
    return {m: sys.modules[f"{addon.__name__}.core.{m}"] for m in ("quat", "projection", "euler_limits")}


def violates(limit, q, quat):
    """A limit violation after the pose is stored as float32 channels (tolerance 1e-6 rad)."""
    q32 = np.asarray(q, dtype=np.float32).astype(np.float64)
    q32 /= np.linalg.norm(q32)
    return bool(quat.angle_between(np.asarray(limit.clamp(q32)), q32) > 1e-6)
