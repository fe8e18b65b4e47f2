"""Commands on joint limits: info, apply, bake, convert, to-constraints."""

import json
import math

import bpy

from .. import animation, bone_limits, deformer, settings_io
from ..wording import counted
from .common import Outcome, UsageError, refuse_unkeyable, say
from .scene import (active_in_mode, auto_keying_off, bone_selection, check_bones, check_limits, elsewhere, elsewhere_text, frame_progress,
                    frames_of, limited, pick_armature, rotation_state, run_op, scene_objects)


def cmd_info(args):
    arms = [pick_armature(args.armature)] if args.armature else scene_objects("ARMATURE")
    bones, invalid = [], 0
    for arm in arms:
        for pb in arm.pose.bones:
            s = pb.jointlimit
            if s.enabled:
                smooth = s.kind == "SWING_TWIST" and s.shape in ("ELLIPSE", "OVAL", "SUPERELLIPSE")
                error = bone_limits.settings_error(s)
                invalid += bool(error)
                bones.append({"armature": arm.name, "bone": pb.name, "kind": s.kind,
                              "shape": s.shape if s.kind == "SWING_TWIST" else "-", "fit": s.fit if smooth else "-",
                              "ranges": ranges_text(s), "problem": error or bone_limits.rest_pose_message(s) or ""})
    deformers = deformer_rows()
    others = elsewhere("ARMATURE")
    if args.json:
        say(json.dumps({"file": bpy.data.filepath, "scene": bpy.context.scene.name, "limits": bones,
                        "deformers": deformers, "other_scenes": others}, indent=1))
    else:
        say(table(["ARMATURE", "BONE", "KIND", "SHAPE", "FIT", "RANGES (deg)", "PROBLEM"],
                  [list(b.values()) for b in bones]) if bones else "no limited bones")
        say(table(["MESH", "MODIFIER", "MODE", "BLEND", "ON"], [list(d.values()) for d in deformers])
            if deformers else "no JointLimit deformers")
    limited_arms = len({b["armature"] for b in bones})
    where = counted(len(arms), "armature")
    if 0 < limited_arms < len(arms):
        where = f"{limited_arms} of {where}"
    invalid_text = f" ({invalid} with invalid settings)" if invalid else ""
    return Outcome(f"{counted(len(bones), 'limited bone')}{invalid_text} in {where}, "
                   f"{counted(len(deformers), 'deformer')}{elsewhere_text('ARMATURE')}")


def deg_range(lo, hi):
    return f"{math.degrees(lo):.1f}..{math.degrees(hi):.1f}"


def ranges_text(s):
    twist = ""
    if s.fix_twist and s.kind == "SWING_TWIST":
        twist = " twist fixed"
    elif s.use_twist_limit and s.kind in ("SWING_TWIST", "QUAT_SWING"):
        twist = f" twist {deg_range(s.twist_min, s.twist_max)}"
    if s.kind == "SWING_TWIST":
        if s.shape == "POLYGON":
            return f"outline {len(s.outline)} points" + twist
        return f"x {deg_range(s.swing_x_min, s.swing_x_max)} z {deg_range(s.swing_z_min, s.swing_z_max)}" + twist
    if s.kind == "HINGE":
        return f"{s.hinge_axis} {deg_range(s.hinge_min, s.hinge_max)}"
    if s.kind == "QUAT_SWING":
        return f"swing <= {math.degrees(s.quat_swing_max):.1f}" + twist
    return s.euler_order + "".join(f" {a} {deg_range(lo, hi)}" for a, lo, hi in zip("xyz", s.euler_min, s.euler_max))


def deformer_rows():
    """Each deformer of the scene: its mesh, modifier, mode and blend as it shows them, and whether
    it is on (off: switched off by Toggle, by a bake with Disable Modifiers, or by itself)."""
    rows = []
    for obj in scene_objects("MESH"):
        mod, _ = deformer.find(obj)
        if mod is not None:
            mode, blend, _ = deformer.settings(obj)
            rows.append({"mesh": obj.name, "modifier": mod.name, "mode": mode, "blend": round(blend, 4),
                         "on": deformer.is_enabled(obj)})
    return rows


def table(header, rows):
    rows = [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [header, *rows])


def cmd_apply(args):
    arm = pick_armature(args.armature)
    check_bones(arm, args.bones)
    targets = limited(arm, args.bones)
    if not targets:
        raise UsageError(f"no limited bones to clamp in {arm.name!r}" + (" among --bones" if args.bones else ""))
    check_limits(arm, targets, animator_only=args.bones is None)
    before = rotation_state(arm)
    with auto_keying_off(), active_in_mode(arm, "POSE"), bone_selection(arm, args.bones):
        run_op(bpy.ops.pose.jointlimit_apply, "apply", all_bones=args.bones is None,
               warn_animated=False)     # (the outcome's note says it for a batch run)
    moved = [n for n, v in rotation_state(arm).items() if v != before[n]]
    keyed = animation.animated_rotations(arm, [arm.pose.bones[n] for n in moved])
    unkeyable = animation.unkeyable_message([arm]) if keyed else None
    todo = "use bake to clamp the animation" if unkeyable is None else unkeyable   # (bake refuses such an action)
    note = (f"; {len(keyed)} of them animated ({', '.join(keyed)}): their keys or drivers set the rotation again "
            f"when the file opens, {todo}") if keyed else ""
    return Outcome(f"clamped {len(moved)} of {len(targets)} limited bones of {arm.name!r}{note}", bones=moved,
                   objects=[arm.name])


def cmd_bake(args):
    arm = pick_armature(args.armature)
    check_bones(arm, args.bones)
    start, end = frames_of(args, 1)
    targets = limited(arm, args.bones)
    if not targets:
        raise UsageError(f"no limited bones to bake in {arm.name!r}")
    check_limits(arm, targets, animator_only=args.bones is None)
    refuse_unkeyable(arm)
    with active_in_mode(arm, "POSE"), bone_selection(arm, args.bones), frame_progress("bake", end - start + 1):
        run_op(bpy.ops.pose.jointlimit_bake, "bake", frame_start=start, frame_end=end, all_bones=args.bones is None)
    if args.bones is None:  # the operator bakes the bones an animator poses
        targets = [pb.name for pb in bone_limits.animator_bones([arm.pose.bones[n] for n in targets])[0]]
    baked = set(animation.animated_limited_bones(arm))
    left = [n for n in targets if n not in baked]   # no rotation keys and inside: the operator keys none
    note = f"; left {len(left)} without rotation keys unkeyed (inside their limits)" if left else ""
    return Outcome(f"baked {len(targets) - len(left)} limited bones of {arm.name!r} over frames {start}..{end}{note}",
                   bones=[n for n in targets if n in baked], objects=[arm.name])


def cmd_convert(args):
    arm = pick_armature(args.armature)
    check_bones(arm, args.bones)
    source = args.source.upper().replace("-", "_")
    candidates = ([arm.pose.bones[name] for name in args.bones] if args.bones is not None
                  else bone_limits.animator_bones(list(arm.pose.bones))[0])
    if not any(settings_io.convertible(pb, source) for pb in candidates):
        raise UsageError(f"none of the bones {'named' if args.bones is not None else 'an animator poses'} in "
                         f"{arm.name!r} has a local-space Limit Rotation constraint or IK limits to convert")
    had = {pb.name for pb in candidates if pb.jointlimit.enabled and settings_io.convertible(pb, source)}
    if had and not args.replace_limits and all(pb.name in had for pb in candidates if settings_io.convertible(pb, source)):
        raise UsageError(f"every bone to convert in {arm.name!r} has a joint limit already ({', '.join(sorted(had)[:5])}): "
                         "pass --replace-limits to replace them")
    before = set(limited(arm, None))
    with active_in_mode(arm, "POSE"), bone_selection(arm, args.bones):
        run_op(bpy.ops.pose.jointlimit_from_constraints, "convert", source=source,
               old_constraints=args.old_constraints.upper(), all_bones=args.bones is None,
               replace_limits=args.replace_limits, limit_kind=args.limit_kind.upper().replace("-", "_"))
    new = sorted(set(limited(arm, None)) - before)
    replaced = sorted(had) if args.replace_limits else []
    kept = [] if args.replace_limits else sorted(had)
    note = (f"; replaced the joint limits of {counted(len(replaced), 'bone')} ({', '.join(replaced[:5])})" if replaced
            else f"; kept the joint limits of {counted(len(kept), 'bone')} that have one ({', '.join(kept[:5])}; "
                 "--replace-limits converts them too)" if kept else "")
    return Outcome(f"converted constraints of {arm.name!r}: {counted(len(new), 'newly limited bone')}, old constraints: "
                   f"{args.old_constraints}{note}", bones=sorted(set(new) | set(replaced)), objects=[arm.name])


def cmd_to_constraints(args):
    arm = pick_armature(args.armature)
    check_bones(arm, args.bones)
    targets = limited(arm, args.bones)
    if not targets:
        raise UsageError(f"no limited bones to convert in {arm.name!r}")
    check_limits(arm, targets, animator_only=args.bones is None)
    with active_in_mode(arm, "POSE"), bone_selection(arm, args.bones):
        run_op(bpy.ops.pose.jointlimit_to_constraints, "to-constraints", all_bones=args.bones is None,
               disable_limits=args.disable_limits)
    return Outcome(f"added Limit Rotation constraints to {counted(len(targets), 'bone')} of {arm.name!r}", bones=targets,
                   objects=[arm.name])
