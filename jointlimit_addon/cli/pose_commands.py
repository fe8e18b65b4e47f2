"""Commands that key poses: limb-ik and ccd (targets from a file) and motion."""

import math

import bpy
from mathutils import Vector

from .. import animation, bone_limits
from ..operators import ccd_ik, limb_ik
from ..wording import counted
from .common import Outcome, UsageError, end_if_run_gone, refuse_unkeyable, say
from .scene import (active_in_mode, auto_keying_off, bone_selection, check_bones, check_limits, frames_of, pick_armature, pose_bone,
                    run_op)
from .targets import read_targets


def ik_chain(args, tip):
    """The bones the IK command writes and keys, root first; bad chains are bad input."""
    try:
        if args.command == "limb-ik":
            return list(limb_ik.limb_bones(tip)[:2])
        if args.chain_length < 0:
            raise ValueError("--chain-length must be 0 or more")
        return ccd_ik.chain_bones(tip, args.chain_length, False)
    except ValueError as exc:
        raise UsageError(f"bone {tip.name!r}: {exc}") from None


def run_ik(args):
    rows = read_targets(args.targets, with_swivel=args.command == "limb-ik")
    arm = pick_armature(args.armature)
    tip = pose_bone(arm, args.bone)
    chain = ik_chain(args, tip)
    refuse_unkeyable(arm)
    if not args.no_limits:
        check_limits(arm, [pb.name for pb in chain])
    scene = bpy.context.scene
    original_frame = scene.frame_current
    tip_errors = []
    with auto_keying_off(), active_in_mode(arm, "POSE"), bone_selection(arm, [tip.name], active=tip.name):
        try:
            for i, (frame, xyz, swivel) in enumerate(rows, start=1):
                end_if_run_gone()
                scene.frame_set(frame)
                target = Vector(xyz)
                if args.space == "world":
                    target = arm.matrix_world.inverted() @ target
                label = f"{args.command} frame {frame}"
                if args.command == "limb-ik":
                    run_op(bpy.ops.pose.jointlimit_limb_ik, label, target=target, use_limits=not args.no_limits,
                           swivel=math.radians(swivel or 0.0), hinge_axis=args.hinge_axis)
                else:
                    run_op(bpy.ops.pose.jointlimit_ccd_ik, label, target=target, use_limits=not args.no_limits,
                           chain_length=args.chain_length, iterations=args.iterations)
                for pb in chain:    # (at the scene's time of the frame: Time Stretching)
                    pb.keyframe_insert(data_path=bone_limits.rotation_path(pb)[0], frame=animation.scene_time(scene, frame),
                                       group=pb.name)
                bpy.context.view_layer.update()
                reached = tip.head if args.command == "limb-ik" else tip.tail
                tip_errors.append({"frame": frame, "distance": (reached - target).length})
                if i % max(1, len(rows) // 10) == 0 or i == len(rows):
                    say(f"{args.command}: frames {i}/{len(rows)}")
        finally:
            scene.frame_set(original_frame)
    names = ", ".join(pb.name for pb in chain)
    worst = max(e["distance"] for e in tip_errors)
    return Outcome(f"keyed {counted(len(rows), 'frame')} of {names} in {arm.name!r}; largest distance to target {worst:.3g}",
                   bones=[pb.name for pb in chain], objects=[arm.name], tip_errors=tip_errors)


def cmd_motion(args):
    arm = pick_armature(args.armature)
    check_bones(arm, args.bones)
    start, end = frames_of(args, 2)
    names = args.bones or [pb.name for pb in arm.pose.bones]
    keyed = [n for n in names
             if len(animation.keyed_frames(arm, arm.pose.bones[n], bone_limits.rotation_path(arm.pose.bones[n])[0],
                                           start, end)) >= 2]
    if not keyed:
        raise UsageError(f"no bone of {arm.name!r} has two or more rotation keys in frames {start}..{end}")
    check_limits(arm, keyed)
    refuse_unkeyable(arm)
    with active_in_mode(arm, "POSE"), bone_selection(arm, keyed):
        run_op(bpy.ops.pose.jointlimit_motion, "motion", frame_start=start, frame_end=end,
               profile=args.profile.upper().replace("-", "_"), channels=args.channels.upper().replace("-", "_"),
               step=args.step, use_via_points=not args.no_via_points, via_velocity=args.via_velocity.upper())
    skipped = [n for n in args.bones or () if n not in keyed]     # named, with fewer than two keys
    note = f"; left {', '.join(skipped)} (fewer than two rotation keys in the range)" if skipped else ""
    return Outcome(f"smoothed {counted(len(keyed), 'bone')} of {arm.name!r} over frames {start}..{end} ({args.profile}){note}",
                   bones=keyed, objects=[arm.name])
