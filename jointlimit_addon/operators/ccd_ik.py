"""``pose.jointlimit_ccd_ik``: length-weighted CCD IK with joint limits [004 §2-3], modal and scriptable."""

import math

import bpy
import numpy as np
from bpy.props import BoolProperty, FloatProperty, FloatVectorProperty, IntProperty

from .. import autokey, bone_limits, chains, drag, evaluated
from ..core import ccd
from ._common import ActiveBonePoll, real_numbers
from ._modal import ModalDragMixin


def chain_bones(tip, chain_length, stop_at_unconnected, selected=()):
    """Root-to-tip pose bones of the logical chain ending at ``tip`` (mechanism bones skipped,
    see ``chains``): ``chain_length`` bones (0 = as far as the bones follow each other)."""
    try:
        return chains.logical_chain(tip, chain_length, connected=stop_at_unconnected, selected=selected)
    except chains.ChainError as exc:
        raise ValueError(str(exc)) from None


def build_chain(bones):
    """The core chain modelled on the evaluated pose (``evaluated.virtual_rests``, the bones'
    lengths as posed); a ``ValueError`` names the chain."""
    rests, parent_pose, parent_rest = evaluated.virtual_rests(bones[0].id_data, bones)
    try:
        return ccd.Chain.from_rest_matrices(rests, evaluated.model_lengths(bones, parent_pose, parent_rest),
                                            parent_pose=parent_pose, parent_rest=parent_rest)
    except ValueError as exc:
        raise ValueError(f"CCD IK cannot use the chain from '{bones[0].name}' to '{bones[-1].name}': {exc}") from None


def chain_limits(bones, use_limits=True):
    """Per bone its joint limit (with ``use_limits``) followed by its Lock Rotation (``None``: a
    free joint)."""
    out = []
    for pb in bones:
        limit = None
        if use_limits and pb.jointlimit.enabled:
            try:
                limit = bone_limits.build_limit(pb.jointlimit)
            except ValueError as exc:
                raise ValueError(f"Bone '{pb.name}': {exc}") from exc
        out.append(bone_limits.with_rotation_lock(pb, limit))
    return out


STORAGE_SLACK = 1e-6  # of the chain length


class CCDSolver:
    """Solves from the chain's current pose on every call (so dragging is continuous). With a
    ``view_layer`` each call writes the pose, evaluates it and corrects for the rig's mechanism
    (``evaluated.solve_through_rig``); ``error`` is then the evaluated error."""

    def __init__(self, bones, options, view_layer=None):
        self.bones, self.options, self.view_layer = bones, options, view_layer
        self.chain = build_chain(bones)
        self.current = np.array([bone_limits.read_rotation(pb) for pb in bones])
        self.stuck = False  # restarts found nothing: no restarts until a target is reached again

    def _model(self, target, iterations=None):
        options = dict(self.options, restarts=0) if self.stuck else dict(self.options)
        if iterations is not None:
            options["iterations"] = iterations
        result = ccd.solve(self.chain, self.current, target, **options)
        self.current = result.local_quats
        # While dragging over targets the limits keep out of reach, every frame would restart in
        # vain: after restarts that found nothing, warm-start only until a target is reached.
        self.stuck = not result.reached and (self.stuck or result.restarts > 0)
        info = {"error": result.error, "iterations": result.iterations, "reached": result.reached,
                "length": self.chain.length, "restarts": result.restarts}
        return list(result.local_quats), info

    def __call__(self, target, swivel=None):
        if self.view_layer is None:
            return self._model(target)
        sweeps, restarts = [], []
        budget = self.options.get("iterations")     # the sweeps of every round together

        def once():
            self.chain = build_chain(self.bones)
            self.current = np.array([bone_limits.read_rotation(pb) for pb in self.bones])
            quats, info = self._model(target, None if budget is None else max(0, budget - sum(sweeps)))
            sweeps.append(info["iterations"])
            restarts.append(info["restarts"])
            return quats, info

        # the model stops just inside its tolerance; float32 storage may add a few 1e-7
        tolerance = (self.options.get("tolerance") or ccd.DEFAULT_TOLERANCE * self.chain.length) \
            + STORAGE_SLACK * self.chain.length
        quats, info = evaluated.solve_through_rig(self.view_layer, self.bones, once, lambda: self.bones[-1].tail,
                                                  target, tolerance)
        self.current = np.array(quats)
        info.update(error=info["evaluated_error"], reached=info["evaluated_error"] <= tolerance,
                    iterations=sum(sweeps), restarts=sum(restarts), mirrored=evaluated.mirrored_bone(self.bones))
        return quats, info


class POSE_OT_jointlimit_ccd_ik(ModalDragMixin, ActiveBonePoll, bpy.types.Operator):
    """Drag the tip of a chain (tail, spine, hair) with length-weighted CCD IK that respects joint limits"""

    bl_idname = "pose.jointlimit_ccd_ik"
    bl_label = "CCD IK"
    bl_options = {"REGISTER", "UNDO", "BLOCKING"}

    target: FloatVectorProperty(
        name="Target", description="Where the active bone's tail goes, in armature space", size=3, subtype="TRANSLATION"
    )
    chain_length: IntProperty(name="Chain Length", description="Bones in the chain, ending at the active bone (0 = up to the root)", default=0, min=0)
    stop_at_unconnected: BoolProperty(
        name="Stop at Unconnected", description="End the chain at the first bone not connected to its parent", default=False
    )
    iterations: IntProperty(name="Iterations", description="Most CCD sweeps (tip to root)", default=1000, min=1, max=10000)
    tolerance: FloatProperty(
        name="Tolerance", description="Stop when the tip is this close to the target (0 = 0.09% of the chain length)",
        default=0.0, min=0.0, subtype="DISTANCE",
    )
    use_weights: BoolProperty(
        name="Length Weights", description="Damp each joint by the length of the chain beyond it [004 eq.1]", default=True
    )
    use_limits: BoolProperty(name="Use Limits", description="Respect the bones' joint limits", default=True)
    unit_angle: FloatProperty(
        name="Unit Angle", description="Largest rotation of a joint per sweep, as in MMD (0 = no cap)",
        default=0.0, min=0.0, max=math.pi, subtype="ANGLE",
    )

    def _solver(self, context):
        context.view_layer.update()
        bones = chain_bones(context.active_pose_bone, self.chain_length, self.stop_at_unconnected,
                            chains.selected_names(context.object))
        options = dict(
            iterations=self.iterations,
            tolerance=self.tolerance or None,
            use_weights=self.use_weights,
            limits=chain_limits(bones, self.use_limits),
            unit_angle=self.unit_angle or None,
        )
        return CCDSolver(bones, options, context.view_layer)

    def execute(self, context):
        target = np.array(self.target, dtype=np.float64)
        if not real_numbers(*target):
            self.report({"ERROR"}, "Target must be finite numbers")
            return {"CANCELLED"}
        try:
            solver = self._solver(context)
            quats, info = solver(target)
        except ValueError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        for pb, q in zip(solver.bones, quats):
            bone_limits.write_posed_rotation(pb, q)
        autokey.autokey(context, solver.bones)
        self.report({"INFO"} if info["reached"] else {"WARNING"}, status_text(info))
        return {"FINISHED"}

    def begin_session(self, context, view):
        solver = self._solver(context)
        start = np.array(solver.bones[-1].tail, dtype=np.float64)
        session = drag.DragSession(context.object, solver.bones, view, start, solver)
        session.info = {"error": 0.0, "iterations": 0, "reached": True, "length": solver.chain.length}
        return session

    def confirmed(self, session):
        self.target = session.target.tolist()
        self.report({"INFO"} if session.info["reached"] else {"WARNING"}, status_text(session.info))

    @staticmethod
    def header_text(session):
        return f"CCD IK  {status_text(session.info)}   LMB/Enter: confirm   RMB/Esc: cancel"


def status_text(info):
    state = "reached" if info["reached"] else "not reached"
    if not info["reached"] and info.get("mirrored"):
        state += f" ('{info['mirrored']}' is mirrored by a negative scale)"
    restarts = info.get("restarts", 0)
    more = f", {restarts} restarts" if restarts else ""
    return (f"{state}: error {info['error']:.2e} ({info['error'] / info['length']:.1e} of chain), "
            f"{info['iterations']} sweeps{more}")
