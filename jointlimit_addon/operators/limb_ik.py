"""``pose.jointlimit_limb_ik``: analytic limb IK with swivel angle [001], modal and scriptable."""

import math

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, FloatProperty, FloatVectorProperty

from .. import autokey, bone_limits, chains, drag, evaluated
from ..core import ccd_steps, limb_ik, quat
from ._common import ActiveBonePoll, real_numbers
from ._modal import ModalDragMixin

# Limb IK corrects on the evaluated pose until the tip is this close (fraction of the limb length).
EVALUATED_TOLERANCE = 1e-5
ORIENTATION_TOLERANCE = math.radians(0.01)  # end bone this far from Target Rotation: said in the report
ORIENTATION_WARNING = math.radians(1.0)     # this far: a warning (the limits, or a swivel the search missed)
MISS_FRACTION = 1e-3     # of the limb's reach: a tip error above it is a miss the report warns of
RESIDUAL_ANGLE = 1e-9    # radians: a lower bone turned only about its hinge axis (to rounding) keeps no residual
HINGE_AXES = {"X": (1.0, 0.0, 0.0), "Z": (0.0, 0.0, 1.0), "NEG_X": (-1.0, 0.0, 0.0), "NEG_Z": (0.0, 0.0, -1.0)}


def limb_bones(end, selected=()):
    """``(upper, lower, end)`` pose bones of the logical chain ending at ``end`` (mechanism bones
    in between skipped, see ``chains``), or ``ValueError`` saying why the chain is unusable.
    ``selected``: names of the selected bones (a chain selected in order is taken as it is)."""
    try:
        return tuple(chains.logical_chain(end, 3, connected=True, selected=selected))
    except chains.ChainError as exc:
        raise ValueError(f"Limb IK needs an upper, a lower and an end bone that follow each other "
                         f"(a parent and a grandparent an animator poses): {exc}") from None


def build_chain(upper, lower, end, hinge_axis="AUTO", residual=None):
    """The core chain modelled on the evaluated pose (``evaluated.virtual_rests``); a
    ``ValueError`` names the three bones. ``residual``: the part of the lower bone's rotation
    the solve keeps (``lower_residual``), or ``None``."""
    try:
        return _core_chain(upper, lower, end, hinge_axis, residual)
    except ValueError as exc:
        raise ValueError(f"Limb IK cannot use {upper.name} > {lower.name} > {end.name} as upper, lower and end "
                         f"bone: {exc}") from None


def _core_chain(upper, lower, end, hinge_axis, residual):
    """With a ``residual`` R the chain's lower and end bones rest as turned by R about the
    lower bone's head (its hinge axis ``R^-1 a`` in the lower frame turned so): the hinge rotation
    ``q'`` solved there is the rotation ``R q'`` of the bone, which turns about ``a`` and keeps R
    (``LimbSolver.to_bone``/``to_model``)."""
    rests, parent_pose, parent_rest = evaluated.virtual_rests(upper.id_data, (upper, lower, end))
    rest_axis = limb_ik.rest_hinge_axis(rests[0], rests[1])
    axis = solver_hinge_axis(lower, hinge_axis, rest_axis)
    if residual is not None:
        axis = rest_axis if axis is None else np.asarray(axis, dtype=np.float64)
        turn = quat.to_matrix(residual)
        r_l, h_l = rests[1, :3, :3], rests[1, :3, 3]
        spin = np.eye(4)
        spin[:3, :3] = r_l @ turn @ r_l.T
        spin[:3, 3] = h_l - spin[:3, :3] @ h_l
        rests = np.concatenate((rests[:1], spin @ rests[1:]))
        axis = turn.T @ axis
    return limb_ik.LimbChain(
        rests[0], rests[1], rests[2],
        parent_pose=parent_pose,
        parent_rest=parent_rest,
        hinge_axis=axis,
        end_length=end.bone.length,
    )


def _hinge_limit_axis(lower):
    """The axis of the lower bone's enabled Hinge limit (local frame), or ``None``."""
    settings = lower.jointlimit
    if settings.enabled and settings.kind == "HINGE":
        return HINGE_AXES[settings.hinge_axis]
    return None


def solver_hinge_axis(lower, hinge_axis, rest_axis=None):
    """The solver's elbow/knee axis: the chosen one; for ``AUTO`` the Hinge limit's axis when the
    lower bone has one (so the solved hinge rotation is the one the limit measures), else the
    axis its Lock Rotation leaves it (``lock_hinge_axis``, signed as ``rest_axis``, the rest-pose
    bend's), else the rest-pose bend (``None``)."""
    if hinge_axis != "AUTO":
        return HINGE_AXES[hinge_axis]
    axis = _hinge_limit_axis(lower)
    if axis is not None:
        return axis
    axis = lock_hinge_axis(lower)
    return -axis if axis is not None and rest_axis is not None and float(np.dot(axis, rest_axis)) < 0.0 else axis


def lock_hinge_axis(lower):
    """The axis (local frame) that a lower bone's Lock Rotation leaves it to turn about: two
    Euler angles locked and X or Z free (the axis the free angle turns about, with the locked
    angles at their stored values), or a quaternion with 4D locks whose only free vector
    component is X or Z, the other two held at 0. ``None`` for any other bone."""
    locked = tuple(bool(v) for v in lower.lock_rotation)
    mode = lower.rotation_mode
    if mode == "AXIS_ANGLE" or sum(locked) != 2 or not locked[1]:
        return None     # (a free Y only twists the bone)
    free = locked.index(False)
    if mode == "QUATERNION" and lower.lock_rotations_4d:
        q = tuple(lower.rotation_quaternion)
        if lower.lock_rotation_w or any(abs(q[1 + i]) > 1e-6 for i in range(3) if locked[i]):
            return None
        axis = np.eye(3)[free]
    else:
        order = "XYZ" if mode == "QUATERNION" else mode
        angles = np.array(quat.to_euler(bone_limits.read_rotation(lower), order) if mode == "QUATERNION"
                          else tuple(lower.rotation_euler), dtype=np.float64)
        turned = angles.copy()
        turned[free] += 0.5
        step = quat.mul(quat.from_euler(turned, order), quat.conjugate(quat.from_euler(angles, order)))
        axis = quat.to_axis_angle(step)[0]
    return axis


def align_hinge_range(limits, lower, hinge_axis):
    """The hinge range measured about the solver's axis: the Hinge limit's range, negated for the
    opposite axis (-X for a limit about X). ``ValueError`` when the solver's axis is across the
    limit's: no rotation about it can satisfy the limit."""
    limit_axis = _hinge_limit_axis(lower)
    if limits is None or limits.hinge is None or limit_axis is None or hinge_axis == "AUTO":
        return limits
    dot = float(np.dot(limit_axis, HINGE_AXES[hinge_axis]))
    if dot > 0.5:
        return limits
    if dot < -0.5:
        lo, hi = limits.hinge
        return limits._replace(hinge=(-hi, -lo))
    raise ValueError(f"Hinge Axis {hinge_axis} is across the Hinge limit's axis {lower.jointlimit.hinge_axis} "
                     f"of '{lower.name}': use Auto or the limit's axis")


def _rpt(template, **values):
    return bpy.app.translations.pgettext_rpt(template).format(**values)


def ignored_middle_limit(lower):
    """The warning when the middle bone has an enabled limit Limb IK does not use (it uses only a
    Hinge there), else ``None``."""
    settings = lower.jointlimit
    if not settings.enabled or settings.kind == "HINGE":
        return None
    kind = settings.bl_rna.properties["kind"].enum_items[settings.kind].name
    return _rpt("Limb IK uses only a Hinge limit on the middle bone; the {kind} limit of '{bone}' is not applied: "
                "run Apply afterwards", kind=bpy.app.translations.pgettext_iface(kind), bone=lower.name)


def build_limits(upper, lower, end):
    """Joint limits of the upper and end bones, and the hinge range of the lower bone."""

    def limit(pb):
        return bone_limits.bone_limit(pb) if pb.jointlimit.enabled else None

    # the lower bone's settings are checked, whatever its kind, as apply and bake check them
    # (message in degrees): invalid settings are refused, not passed over as a limit not applied
    middle = limit(lower)
    hinge = middle.angle if middle is not None and lower.jointlimit.kind == "HINGE" else None
    return limb_ik.LimbLimits(upper=limit(upper), hinge=hinge, end=limit(end))


class LimbSolver:
    """Solves the limb for a target and swivel on the evaluated pose and reports positions for
    the overlay. With a ``view_layer`` each call writes the pose, evaluates it and corrects for
    the rig's mechanism (``evaluated.solve_through_rig``); ``tip_error`` is then the evaluated
    error."""

    def __init__(self, bones, limits, target_rotation=None, hinge_axis="AUTO", view_layer=None):
        self.bones, self.limits, self.target_rotation = bones, limits, target_rotation
        self.hinge_axis, self.view_layer = hinge_axis, view_layer
        self.ignored = ignored_middle_limit(bones[1]) if limits is not None else None
        self.switch = chains.ik_switch_note(bones[0])     # (Rigify: the mesh may follow the IK controls)
        self.chain = build_chain(*bones, hinge_axis=hinge_axis)
        self.residual = None if limits is not None and limits.hinge is not None else \
            lower_residual(self.chain, bone_limits.read_rotation(bones[1]))
        if self.residual is not None:
            self.chain = build_chain(*bones, hinge_axis=hinge_axis, residual=self.residual)
        self.end_local = bone_limits.read_rotation(bones[2])
        self.locks = [bone_limits.with_rotation_lock(pb, None) for pb in bones]
        for pb, lock in zip(bones, self.locks):
            if lock is not None:    # only a locked bone is corrected here; the solver keeps the limits
                lock.inner = self._own_limit(pb)

    def _own_limit(self, pb):
        """The bone's joint limit when limits are used (a locked bone stays inside it too)."""
        return bone_limits.bone_limit(pb) if self.limits is not None and pb.jointlimit.enabled else None

    def _keep_locks(self, quats):
        """The solved rotations with each bone's Lock Rotation kept, inside its limit (the closed
        form cannot keep a lock: the pose then misses the target by what the locks hold back); and
        the bones whose rotation that changed."""
        kept, changed = [], []
        for pb, lock, q in zip(self.bones, self.locks, quats):
            allowed = q if lock is None else np.array(ccd_steps.clamp_one(lock, tuple(float(c) for c in q)))
            if np.abs(allowed - q).max() > 1e-9 and np.abs(allowed + q).max() > 1e-9:
                changed.append(pb.name)
            kept.append(allowed)
        return kept, changed

    def to_bone(self, quats):
        """The bones' local rotations of the chain's (the lower bone's keeps the residual)."""
        quats = np.array(quats, dtype=np.float64)
        if self.residual is not None:
            quats[1] = quat.mul(self.residual, quats[1])
        return quats

    def to_model(self, quats):
        """The chain's rotations of the bones' local rotations (``to_bone`` undone)."""
        quats = np.array(quats, dtype=np.float64)
        if self.residual is not None:
            quats[1] = quat.mul(quat.conjugate(self.residual), quats[1])
        return quats

    def _model(self, target, swivel):
        if self.target_rotation is None:
            pose = limb_ik.solve_position(self.chain, target, swivel, limits=self.limits, end_local=self.end_local)
        else:
            pose = limb_ik.solve_pose(self.chain, target, self.target_rotation, swivel, limits=self.limits)
        written = 3 if self.target_rotation is not None else 2
        solved = list(self.to_bone(pose.quats))
        quats, locked = self._keep_locks(solved[:written])
        quats += solved[written:]
        model = self.to_model(quats)
        root, elbow, wrist, _ = limb_ik.forward(self.chain, model)
        info = {"status": pose.status, "locked": locked, "tip_error": float(pose.tip_error), "root": root, "elbow": elbow,
                "limits": self.limits is not None and (any(x is not None for x in self.limits) or bool(self.ignored)),
                "ignored": self.ignored, "switch": self.switch,
                "wrist": wrist, "reach": float(np.linalg.norm(target - root))}
        info.update(swivel_info(pose, self.bones))
        hinge = None if self.limits is None else self.limits.hinge
        info["max_reach"] = self.chain.distance_range(hinge)[1]     # armature space, as the reach
        info["folded"] = info["reach"] < info["max_reach"]    # nearer than the limb reaches
        low, high = self.chain.distance_range()
        info["hinge_bound"] = hinge is not None and low <= info["reach"] <= high   # the limb reaches it, the hinge not
        tolerance = EVALUATED_TOLERANCE * self.chain.reach * self.chain.base_scale
        if locked:
            info["tip_error"] = float(np.linalg.norm(wrist - target))
            if info["tip_error"] > tolerance and info["status"] not in ("OUT_OF_REACH", "TOO_CLOSE"):
                info["status"] = "LOCKED"   # the locks, not the target's distance, hold the limb back
        if self.target_rotation is not None:
            info["orientation_error"] = _orientation_error(self.target_rotation, limb_ik.pose_rotations(self.chain, model)[2])
        return quats, _reached(info, tolerance)

    def __call__(self, target, swivel):
        if self.view_layer is None:
            return self._model(target, swivel)

        def once():
            self.chain = build_chain(*self.bones, hinge_axis=self.hinge_axis, residual=self.residual)
            return self._model(target, swivel)

        written = self.bones if self.target_rotation is not None else self.bones[:2]
        tolerance = EVALUATED_TOLERANCE * self.chain.reach * self.chain.base_scale
        quats, info = evaluated.solve_through_rig(self.view_layer, written, once, lambda: self.bones[2].head,
                                                  target, tolerance)
        info["tip_error"] = info["evaluated_error"]
        info["mirrored"] = evaluated.mirrored_bone(self.bones if self.target_rotation is not None else self.bones[:2])
        info["uneven"] = evaluated.unevenly_scaled_bone(written)
        info["live"] = self.limits is None and bpy.context.scene.jointlimit.live and _moved_since(written, quats)
        if self.target_rotation is not None:   # as evaluated: the end bone's armature-space rotation
            info["orientation_error"] = _orientation_error(self.target_rotation, np.array(
                self.bones[2].matrix.to_3x3().normalized().to_quaternion()))
        return quats, _reached(info, tolerance)


def _moved_since(bones, quats):
    """Whether one of ``bones`` no longer holds the rotation the solve wrote (``quats``): Live
    Limits clamped it."""
    for pb, q in zip(bones, quats):
        tol = float(bone_limits.storage_tol(bone_limits.stored_magnitude(pb)))
        if float(quat.angle_between(bone_limits.read_rotation(pb), np.asarray(q, dtype=np.float64))) > 10 * tol:
            return True
    return False


def lower_residual(chain, rotation):
    """What the lower bone's local ``rotation`` holds besides its turn about the chain's hinge
    axis (a twist about the bone, a bend about another axis: ``core.limb_ik.hinge_residual``), or
    ``None`` when that is nothing. The solve keeps it, so that the tools started and confirmed in
    place leave the pose as it was (a pure hinge would untwist the forearm)."""
    residual = limb_ik.hinge_residual(chain, rotation)
    return None if float(quat.angle_between(residual, quat.identity())) < RESIDUAL_ANGLE else residual


def _orientation_error(target_rotation, rotation):
    """Angle (radians) between the Target Rotation and the end bone's armature-space rotation."""
    return float(quat.angle_between(np.asarray(rotation, dtype=np.float64), target_rotation))


def _reached(info, tolerance):
    """``info`` with the status ``OK`` when the wrist is on the target within ``tolerance``: the
    model's out-of-reach and limited verdicts hold to 1e-9 of the limb, and a target read from
    Blender's float32 pose (a hand posed at the elbow's hinge limit) may lie that far outside
    what the limits allow and still be reached."""
    if info["status"] in ("OUT_OF_REACH", "LIMITED") and info["tip_error"] <= tolerance:
        info["status"] = "OK"
    if info.get("swivel_note") == OUT_OF_RANGE and info["tip_error"] <= tolerance:
        info["swivel_note"] = AT_EDGE
    return info


OUT_OF_RANGE = "out of range of the limits"
AT_EDGE = "at the edge of the limits"


def swivel_info(pose, bones):
    """What the feasible-swivel choice did, for the header and the report: the swivel used and a
    note (``swivel 35° → 62° to respect the upper_arm limit``, ``out of range of the limits``, or
    ``at the edge of the limits`` when no swivel is strictly inside but the tip reached the target)."""
    note = ""
    if bool(pose.no_feasible_swivel):
        note = AT_EDGE if bool(pose.reached) else OUT_OF_RANGE
    elif bool(pose.swivel_moved):
        names = [pb.name for pb, blocked in ((bones[0], pose.upper_blocked), (bones[2], pose.end_blocked)) if blocked]
        asked, used = _degrees_apart(float(pose.swivel_requested), float(pose.swivel))
        note = f"swivel {asked}° → {used}° to respect the {' and '.join(names)} limit"
    return {"swivel": float(pose.swivel), "swivel_note": note}


def _degrees_apart(a, b):
    """Two angles (radians) in whole degrees, or with the decimals (up to two) that tell them
    apart; never ``-0``."""
    for digits in (0, 1, 2):
        shown = [f"{math.degrees(v):.{digits}f}" for v in (a, b)]
        shown = [text.lstrip("-") if not text.strip("-0.") else text for text in shown]
        if shown[0] != shown[1]:
            break
    return shown


class POSE_OT_jointlimit_limb_ik(ModalDragMixin, ActiveBonePoll, bpy.types.Operator):
    """Pose an arm or leg by its end bone with exact analytic IK: drag the target, wheel or Ctrl+drag turns the elbow/knee"""

    bl_idname = "pose.jointlimit_limb_ik"
    bl_label = "Limb IK"
    bl_options = {"REGISTER", "UNDO", "BLOCKING"}

    target: FloatVectorProperty(
        name="Target", description="Where the end bone's head goes, in armature space", size=3, subtype="TRANSLATION"
    )
    swivel: FloatProperty(
        name="Swivel", description="Rotation of the elbow/knee about the root-to-target axis", subtype="ANGLE", default=0.0
    )
    use_orientation: BoolProperty(name="Use Orientation", description="Also rotate the end bone to Target Rotation", default=False)
    target_rotation: FloatVectorProperty(
        name="Target Rotation",
        description="Armature-space rotation of the end bone (w, x, y, z)",
        size=4,
        subtype="QUATERNION",
        default=(1.0, 0.0, 0.0, 0.0),
    )
    use_limits: BoolProperty(name="Use Limits", description="Respect the bones' joint limits and hinge range", default=True)
    hinge_axis: EnumProperty(
        name="Hinge Axis",
        description="Axis of the middle joint in the lower bone's space",
        items=(("AUTO", "Auto", "The middle bone's Hinge limit axis if it has one, else the axis its Lock Rotation leaves "
                                "free, else from the rest-pose bend (local X when straight)"),
               ("X", "X", "Local +X"), ("NEG_X", "-X", "Local -X"), ("Z", "Z", "Local +Z"), ("NEG_Z", "-Z", "Local -Z")),
        default="AUTO",
    )

    def _solver(self, context, use_orientation):
        context.view_layer.update()
        bones = limb_bones(context.active_pose_bone, chains.selected_names(context.object))
        limits = build_limits(*bones) if self.use_limits else None
        limits = align_hinge_range(limits, bones[1], self.hinge_axis)
        rotation = None
        if use_orientation:
            rotation = np.array(self.target_rotation, dtype=np.float64)
            if not np.all(np.isfinite(rotation)) or np.linalg.norm(rotation) < 1e-9:
                raise ValueError(_rpt("Target Rotation must be a non-zero quaternion"))
            rotation = rotation / np.linalg.norm(rotation)     # (Blender's field keeps what is typed)
        return LimbSolver(bones, limits, rotation, self.hinge_axis, context.view_layer)

    def execute(self, context):
        target = np.array(self.target, dtype=np.float64)
        if not real_numbers(*target, self.swivel):
            self.report({"ERROR"}, "Target and swivel must be finite numbers")
            return {"CANCELLED"}
        try:
            solver = self._solver(context, self.use_orientation)
            quats, info = solver(target, self.swivel)
        except ValueError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        written = solver.bones if self.use_orientation else solver.bones[:2]
        for pb, q in zip(written, quats):
            bone_limits.write_posed_rotation(pb, q)
        autokey.autokey(context, written)
        self.report(_report_kind(info), status_text(info))     # (the status says what is ignored)
        return {"FINISHED"}

    def begin_session(self, context, view):
        solver = self._solver(context, False)
        bones = solver.bones
        current = np.array([bone_limits.read_rotation(pb) for pb in bones])
        swivel = float(limb_ik.get_swivel(solver.chain, solver.to_model(current)))
        start = np.array(bones[2].head, dtype=np.float64)
        session = drag.DragSession(context.object, bones[:2], view, start, solver, swivel=swivel)
        session.info = solver(start, swivel)[1]
        if solver.ignored:      # (said before the drag; the confirmed status says it again)
            self.report({"WARNING"}, solver.ignored)
        return session

    def confirmed(self, session):
        self.target, self.swivel, self.use_orientation = session.target.tolist(), session.swivel, False
        self.report(_report_kind(session.info), status_text(session.info))

    @staticmethod
    def header_text(session):
        return f"Limb IK  {ModalDragMixin.swivel_text(session)}{status_text(session.info)}   " \
               "Wheel/Ctrl+drag: swivel   LMB/Enter: confirm   RMB/Esc: cancel"


def _report_kind(info):
    return ({"WARNING"} if info["status"] in ("OUT_OF_REACH", "TOO_CLOSE", "LOCKED") or missed(info) or info.get("ignored")
            or info.get("switch") or info.get("orientation_error", 0.0) > ORIENTATION_WARNING else {"INFO"})


def missed(info):
    """Whether the evaluated end bone stops visibly short of the target (more than a thousandth
    of the limb's reach: the limits, a constraint or a driver held it back)."""
    return info["tip_error"] > MISS_FRACTION * info["max_reach"]


def status_text(info):
    reach = f"reach {info['reach']:.3f}/{info['max_reach']:.3f}"
    out = "folded toward target" if info.get("folded") else "stretched toward target"
    beyond = "out of reach of the hinge limit" if info.get("hinge_bound") else "out of reach"
    labels = {"OK": "exact", "LIMITED": "nearest pose inside the joint limits", "OUT_OF_REACH": f"{beyond}: {out}",
              "TOO_CLOSE": "target too close to the shoulder/hip", "LOCKED": "target missed: locked channels hold the limb back"}
    if info["status"] == "OK" and missed(info):
        labels["OK"] = "target missed on the evaluated pose (a constraint or driver holds the limb?)"
        if info.get("mirrored"):
            labels["OK"] = f"target missed on the evaluated pose: '{info['mirrored']}' is mirrored by a negative scale"
        elif info.get("uneven"):
            labels["OK"] = (f"target missed on the evaluated pose: '{info['uneven']}' is scaled unevenly (the solve "
                            f"takes the bones as rigid)")
        elif info.get("live"):
            labels["OK"] = "target missed on the evaluated pose: Live Limits held the limb inside its joint limits"
    limits = "limits on" if info.get("limits") else "limits off"
    locked = info.get("locked") and f"locked rotation channels kept on {', '.join(info['locked'])}"
    turned = info.get("orientation_error", 0.0) > ORIENTATION_TOLERANCE and \
        f"end bone {math.degrees(info['orientation_error']):.1f}° from Target Rotation"
    note = "".join(f"{text}; " for text in (info.get("ignored"), info.get("switch"), info.get("swivel_note"), locked,
                                            turned) if text)
    return f"{note}{labels.get(info['status'], info['status'])} ({reach}, tip error {info['tip_error']:.2e}, {limits})"
