"""``pose.jointlimit_motion``: smooth in-betweens between key poses, inside joint limits [004 §4]."""

import math

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, IntProperty

from .. import animation, bone_limits
from ..core import motion, quat
from ._common import PosePoll, bone_labels, name_list, report_count, selected_pose_bones
from ._common import report_text as _rpt
from .bake import DRIVEN, sample_rotations

# In-betweens further than this outside the range of their keys get a warning (degrees).
OVERSHOOT_WARNING_DEGREES = 3.0
KEY_MOVED_RADIANS = 1e-4   # a key pose the clamp moved further is named in the report
STEP_WARNING_DEGREES = 45.0     # per frame: a turn no joint makes in one frame of animation


def output_frames(keys, step):
    """Every ``step``-th whole frame between the first and last key, plus every key's own time
    (a key on a subframe keeps its time and pose)."""
    return sorted(set(range(math.ceil(keys[0]), math.floor(keys[-1]) + 1, step)) | set(keys))


def _keys_moved(scene, pose_bone, keys, inside, sampled):
    """Whether the key poses ``inside`` the limit differ from what the keys hold (read from the
    F-curves at the scene's ``keys``: with Clamp Playback on, the pose ``sampled`` at a key is
    clamped already), or from the pose ``sampled`` where the keys are not the pose (an action
    blended over the layers below it)."""
    if animation.action_blended(pose_bone.id_data):
        keyed = sampled
    else:
        keyed = [animation.keyed_rotation(pose_bone, animation.scene_time(scene, key)) for key in keys]
    return any(q is not None and quat.angle_between(np.asarray(q, dtype=np.float64), p) > KEY_MOVED_RADIANS
               for q, p in zip(keyed, inside))


def _largest_step_degrees(frames, quats, skip=()):
    """The largest turn between generated frames, per frame of time (degrees), leaving out the steps
    within the frame spans ``skip`` (``(start, end)``: where another warning says why). A key on a
    subframe counts in the step of whole frames around it (its turns there added up: 40° to the key
    and 40° on in half a frame each is a step of 80°)."""
    if len(frames) < 2:
        return 0.0
    frames = np.asarray(frames, dtype=np.float64)
    path = np.concatenate(([0.0], np.cumsum(quat.angle_between(np.asarray(quats[1:]), np.asarray(quats[:-1])))))
    ends = np.abs(frames - np.round(frames)) < 1e-6     # the whole frames, and the first and last time
    ends[[0, -1]] = True
    at = np.flatnonzero(ends)
    starts, stops = frames[at[:-1]], frames[at[1:]]
    turns = np.degrees(np.diff(path[at]) / np.maximum(stops - starts, 1.0))
    for start, end in skip:     # (a step reaching into such a span: a subframe key starts or ends it)
        turns[(stops > start) & (starts < end)] = 0.0
    return float(turns.max())


def _inside_locked(pb, limit, q, values):
    """The key pose ``q`` of a bone with Lock Rotation (its stored ``values`` there) inside its
    limit with its locked channels kept, or ``q`` itself where the lock holds it outside."""
    path, _ = bone_limits.rotation_path(pb)
    setattr(pb, path, values)
    return bone_limits.clamp_locked(pb, limit, q)[0]


def _locked_bone(pb):
    """Whether any rotation channel of ``pb`` is locked (Lock Rotation)."""
    return bone_limits.with_rotation_lock(pb, None) is not None


def _unkeyable_curves(pb):
    """Whether a rotation F-curve of ``pb`` is locked (itself or its group): Blender keys nothing there."""
    return any(animation.locked(fc) for fc in animation.rotation_fcurves(pb, muted=True).values())


def _modified_curves(pb):
    """Whether a rotation F-curve of ``pb`` has an F-curve modifier that changes its values (a
    Cycles modifier only repeats them): the key poses read with it would get it once more."""
    return any(m.type != "CYCLES" and not m.mute for fc in animation.rotation_fcurves(pb, muted=True).values()
               for m in fc.modifiers)


def _long_turn(pb, keys, stored):
    """``(key, next key, degrees)`` of the first two neighbouring keys whose keyed values turn the
    bone more than half a turn (an Euler angle; an axis-angle bone's angle about one axis, a key
    at angle 0 lying on any; quaternions in opposite hemispheres, which Blender's interpolation
    takes the long way round), which a rotation path takes the shorter way round; ``None``."""
    mode = pb.rotation_mode
    for k in range(len(keys) - 1):
        a, b = (np.asarray(values[0], dtype=np.float64) for values in (stored[k], stored[k + 1]))
        turn = _keyed_turn(mode, a, b)
        if turn is not None and turn > math.pi + 1e-6:
            return keys[k], keys[k + 1], math.degrees(turn)
    return None


def _keyed_turn(mode, a, b):
    """The turn (radians) from the stored values ``a`` to ``b`` of one channel as keyed, where it
    is read from them alone, else ``None``."""
    if mode in bone_limits.EULER_MODES:
        return float(np.abs(b - a).max())
    if mode == "QUATERNION":
        na, nb = np.linalg.norm(a), np.linalg.norm(b)
        if na == 0.0 or nb == 0.0:
            return None
        return 2.0 * math.acos(max(-1.0, min(1.0, float(np.dot(a, b)) / (na * nb))))
    ua, ub = np.linalg.norm(a[1:]), np.linalg.norm(b[1:])
    if abs(a[0]) < 1e-9 or abs(b[0]) < 1e-9:    # (a key at angle 0 lies on any axis)
        return abs(float(b[0] - a[0]))
    if ua > 0.0 and ub > 0.0 and float(np.dot(a[1:], b[1:])) / (ua * ub) > 1.0 - 1e-9:
        return abs(float(b[0] - a[0]))
    return None


def _unstep(pb, frames, scene):
    """Keys of the bone's rotation curves from the first of ``frames`` up to the last (not on it:
    its interpolation leads out of the range) interpolated smoothly where they were Constant (a
    pose blocked in stepped keys, whose interpolation new keys copy); how many changed."""
    start, end = (animation.scene_time(scene, f) for f in (frames[0], frames[-1]))
    start, end = sorted(animation.action_time(pb.id_data, t) for t in (start, end))
    changed = 0
    for fc in animation.rotation_fcurves(pb, muted=True).values():
        stepped = [point for point in fc.keyframe_points
                   if start - 1e-4 <= point.co[0] < end - 1e-4 and point.interpolation == "CONSTANT"]
        for point in stepped:
            point.interpolation = "BEZIER"
        if stepped:
            fc.update()
        changed += len(stepped)
    return changed


class POSE_OT_jointlimit_motion(PosePoll, bpy.types.Operator):
    """Replace the motion between the selected bones' key poses by a smooth, limit-respecting one, keyed on every frame"""

    bl_idname = "pose.jointlimit_motion"
    bl_label = "Smooth Motion"
    bl_options = {"REGISTER", "UNDO"}

    frame_start: IntProperty(name="Start Frame", description="First frame of the range to use", default=1)
    frame_end: IntProperty(name="End Frame", description="Last frame of the range to use", default=250)
    profile: EnumProperty(
        name="Profile",
        description="What the motion minimises",
        items=(
            ("MIN_ACCELERATION", "Minimum Acceleration", "Cubic: least integrated squared angular acceleration [004 eq.5]"),
            ("MIN_JERK", "Minimum Jerk", "Quintic: least integrated squared jerk (Flash & Hogan)"),
        ),
        default="MIN_ACCELERATION",
    )
    use_via_points: BoolProperty(
        name="Via Points", description="Pass through the keys between the first and the last (otherwise stop at each)",
        default=True,
    )
    via_velocity: EnumProperty(
        name="Via Velocities",
        description="How the motion passes the keys between the first and the last",
        items=(
            ("CLAMPED", "Clamped", "Never overshoot: the in-betweens stay within the range of the keys around them "
                                   "(like Auto Clamped handles)"),
            ("OPTIMAL", "Optimal", "The exact minimum of the profile: can swing far past unevenly spaced keys"),
        ),
        default="CLAMPED",
    )
    channels: EnumProperty(
        name="Channels",
        description="Which numbers are interpolated",
        items=(
            ("SWING_TWIST", "Swing & Twist", "Swing on the limit's (s, t) plane and twist angle: follows the limit region"),
            ("EULER", "Euler", "Euler angles in the bone's order (XYZ for quaternion bones), unwrapped across ±180°"),
        ),
        default="SWING_TWIST",
    )
    step: IntProperty(
        name="Step", description="Key every Nth frame (key poses are always kept); the keys are clamped by the limits, "
                                 "frames between them are Blender's interpolation and may leave the limits",
        default=1, min=1, max=100,
    )

    def invoke(self, context, event):
        self.frame_start, self.frame_end = context.scene.frame_start, context.scene.frame_end
        return self.execute(context)

    def _plan(self, context):
        """``(plans, skipped names, label)``: per bone (bone, key frames, limit), the bones with too
        few keys, and how reports name a bone (``bone_labels``); ValueError when nothing can be done."""
        if self.frame_end <= self.frame_start:
            raise ValueError(_rpt("End frame {end} must be after start frame {start}", end=self.frame_end,
                                  start=self.frame_start))
        bones = selected_pose_bones(context)
        if not bones:
            raise ValueError(_rpt("Select the bones to smooth"))
        plans, skipped, locked, modified, driven = [], [], [], [], []
        label = bone_labels(bones)
        for pb in bones:
            path, _ = bone_limits.rotation_path(pb)
            keys = animation.keyed_frames(pb.id_data, pb, path, self.frame_start, self.frame_end, scene=context.scene)
            if len(keys) < 2:
                skipped.append(label(pb))
            elif _unkeyable_curves(pb):
                locked.append(label(pb))
            elif animation.driven_rotation(pb):
                driven.append(label(pb))
            elif _modified_curves(pb):
                modified.append(label(pb))
            else:
                limit = bone_limits.bone_limit(pb) if pb.jointlimit.enabled else None
                plans.append((pb, keys, limit))
        self.refused = []
        if locked:
            self.refused.append(_rpt("Left {bones} as they are: a rotation F-curve of theirs (or its group) is locked "
                                     "(unlock it to key the motion)", bones=name_list(locked)))
        if driven:
            self.refused.append(_rpt(DRIVEN, bones=name_list(driven)))
        if modified:
            self.refused.append(_rpt("Left {bones} as they are: their rotation F-curves have modifiers (Noise, "
                                     "Generator, ...), which would act again on the keys of the motion: apply or "
                                     "remove them first", bones=name_list(modified)))
        if not plans:
            if self.refused:
                raise ValueError("; ".join(self.refused))
            raise ValueError(_rpt("None of the selected bones has two or more rotation keys in the frame range"))
        rigs = dict.fromkeys(pb.id_data for pb, _, _ in plans)
        refused = animation.unkeyable_message(rigs) or animation.repeated_tweak_message(rigs)
        if refused is not None:
            raise ValueError(refused)
        return plans, skipped, label

    def execute(self, context):
        try:
            plans, skipped, label = self._plan(context)
        except ValueError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        scene = context.scene
        original_frame = (scene.frame_current, scene.frame_subframe)     # (its subframe kept)
        written, overshoot, over_pole, jumps, held, moved_keys, long_turns = [], {}, {}, {}, [], [], {}
        unstepped = []
        for pb, keys, limit in plans:
            frames = output_frames(keys, self.step)
            order = pb.rotation_mode if pb.rotation_mode in bone_limits.EULER_MODES else "XYZ"
            options = dict(use_via_points=self.use_via_points, order=order, via=self.via_velocity)
            try:
                quats, stored = sample_rotations(scene, [pb], keys)     # a zero quaternion: names the bone
                quats = sampled = quats[:, 0]
                turn = _long_turn(pb, keys, stored)
                if turn is not None:
                    long_turns[label(pb)] = turn
                # locked channels keep the animation's value on each frame: read it there
                locked = sample_rotations(scene, [pb], frames)[1] if _locked_bone(pb) else None
                if limit is not None:   # the key poses inside the limit first (whether Clamp Playback clamped them)
                    quats = (np.asarray(limit.clamp(quats), dtype=np.float64) if locked is None else
                             np.array([_inside_locked(pb, limit, q, values[0]) for q, values in zip(quats, stored)]))
                    if _keys_moved(scene, pb, keys, quats, sampled):
                        moved_keys.append(label(pb))
                args = (np.array(keys, dtype=np.float64), quats, np.array(frames, dtype=np.float64), self.profile,
                        self.channels)
                try:    # (a locked bone's frames are clamped with its lock when written)
                    result = motion.interpolate_rotations(*args, limit=limit if locked is None else None, **options)
                    over = motion.overshoot_degrees(*args, **options)
                except ValueError as exc:
                    raise ValueError(f"Bone '{pb.name}': {exc}") from exc
            except ValueError as exc:
                self.report({"ERROR"}, str(exc))
                scene.frame_set(original_frame[0], subframe=original_frame[1])
                return {"CANCELLED"}
            written.append((pb, frames, result, stored[0][0], locked, limit))
            pairs = motion.swing_pole_segments(quats) if self.channels == motion.SWING_TWIST else []
            if pairs:
                over_pole[label(pb)] = (keys[pairs[0]], keys[pairs[0] + 1])
            jump = _largest_step_degrees(frames, result, [(keys[k], keys[k + 1]) for k in pairs])
            if jump > STEP_WARNING_DEGREES:     # (the pole's segments are said by the pole warning)
                jumps[label(pb)] = jump
            if over > OVERSHOOT_WARNING_DEGREES:
                overshoot[label(pb)] = over
        for pb, frames, result, first_key, locked, limit in written:
            path, _ = bone_limits.rotation_path(pb)
            setattr(pb, path, first_key)    # Euler turns and quaternion signs continue from the first key
            before = None   # a locked bone's rotation on the frame before
            for f, (frame, q) in enumerate(zip(frames, result)):
                if locked is not None:  # the locked channels keep the animation's value on this frame,
                    setattr(pb, path, locked[f][0])     # the others the nearest the limit then allows
                    if limit is not None:
                        q, _, met = bone_limits.clamp_locked(pb, limit, q, before)
                        before = q if met else None
                        if not met and label(pb) not in held:     # (the motion's own rotation, locked channels kept)
                            held.append(label(pb))
                bone_limits.write_posed_rotation(pb, q)
                pb.keyframe_insert(data_path=path, frame=animation.scene_time(scene, frame), group=pb.name)
            animation.remove_keys_between(pb, path, frames, scene=scene)
            if _unstep(pb, frames, scene):
                unstepped.append(label(pb))
        scene.frame_set(original_frame[0], subframe=original_frame[1])
        message = report_count("Smoothed 1 bone", "Smoothed {count} bones", len(written))
        if skipped:
            message += _rpt("; skipped (fewer than two keys): {bones}", bones=name_list(skipped))
        self.report({"INFO"}, message)
        for refused in self.refused:
            self.report({"WARNING"}, refused)
        if long_turns:
            name = sorted(long_turns)[0]
            a, b, angle = long_turns[name]
            self.report({"WARNING"}, _rpt(
                "The keys of {bones} turn more than half a turn about one axis from one key to the next ({angle:.0f}° "
                "between frames {a} and {b}): the motion takes the shorter way round and keys its values; key a pose "
                "in between to keep the longer turn", bones=name_list(sorted(long_turns)), angle=angle, a=a, b=b))
        if unstepped:
            self.report({"INFO"}, _rpt("The Constant (stepped) keys of {bones} in the range now interpolate "
                                       "smoothly", bones=name_list(unstepped)))
        if moved_keys:
            self.report({"INFO"}, _rpt("Key poses of {bones} were outside their limits: the motion passes through "
                                       "them clamped", bones=name_list(moved_keys)))
        if overshoot:
            self.report({"WARNING"}, _rpt(
                "The motion of {bones} leaves the range of its keys by up to {angle:.1f}°: "
                "set Via Velocities to Clamped to stay within the keys",
                bones=name_list(sorted(overshoot)), angle=max(overshoot.values())))
        if over_pole:
            name = sorted(over_pole)[0]
            self.report({"WARNING"}, _rpt(
                "Swing & Twist channels cannot pass the swing pole (180°), which the keys of {bones} pass "
                "(first between frames {a} and {b}): the motion goes the other way round there; use Euler channels",
                bones=name_list(sorted(over_pole)), a=over_pole[name][0], b=over_pole[name][1]))
        if jumps and self.channels == motion.SWING_TWIST:
            self.report({"WARNING"}, _rpt(
                "The motion of {bones} turns up to {angle:.0f}° from one frame to the next (a large swing on Swing & "
                "Twist channels, which runs fast near rest, keys far outside the limits, or a swing past "
                "180°): check those frames, use Euler channels or move the keys inside the limits",
                bones=name_list(sorted(jumps)), angle=max(jumps.values())))
        elif jumps:
            self.report({"WARNING"}, _rpt(
                "The motion of {bones} turns up to {angle:.0f}° from one frame to the next (keys far apart in angle "
                "and close in time, or keys far outside the limits): check those frames, space the keys further "
                "apart or move them inside the limits",
                bones=name_list(sorted(jumps)), angle=max(jumps.values())))
        if held:
            self.report({"WARNING"}, bone_limits.held_text(held))
        limited = sorted(label(pb) for pb, _, limit in plans if limit is not None)
        if self.step > 1 and limited:
            self.report({"WARNING"}, _rpt(
                "With Step {step}, frames between the keys are Blender's interpolation and may leave the joint "
                "limits of {bones}: use Step 1, or live limits' Clamp Playback",
                step=self.step, bones=name_list(limited)))
        return {"FINISHED"}
