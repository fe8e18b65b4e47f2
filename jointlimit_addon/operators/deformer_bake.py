"""``object.jointlimit_deformer_bake``: the numpy fallback of the SDEF deformer, baked per frame."""

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty

from .. import animation, deformer
from ..core import skinning
from ..deformer import data, tree
from ._common import MeshPoll, report_text, run_on_meshes, target_meshes
from .deformer_add import MODE_ITEMS, SOURCE_ITEMS, selected_prop, strongest_two_prop

BAKE_SOURCE_ITEMS = [("AUTO", "Automatic", "mmd_tools SDEF shape keys if present, else the derived jl_sdef_* "
                      "attributes (derive them first with Derive SDEF Parameters, or add the deformer)"),
                     *SOURCE_ITEMS[1:]]

KEY_PREFIX = "jl_frame_"
SWITCHED_OFF = "jl_bake_switched_off"  # on the mesh object: what Disable Modifiers switched off (a bake again switches it on)
MAX_FRAMES = 100000
OUTPUT_ITEMS = [
    ("SHAPE_KEYS", "Shape Keys", "One shape key per frame (jl_frame_0001, ...), keyed to 1 on its frame and 0 on "
     "the neighbouring frames"),
    ("MESHES", "Meshes", "One new mesh data-block per frame (<mesh>_jl_frame_0001, ...), e.g. for export"),
]


MESHES_PLAY_NOTHING = ("Disable Modifiers works with shape keys only: baked meshes do not play on the object, "
                       "which would stay in its rest pose; bake as shape keys, or leave Disable Modifiers off")


def frame_name(frame):
    return f"{KEY_PREFIX}{frame:04d}"


def _read(context, obj, n, buf):
    mesh = obj.evaluated_get(context.evaluated_depsgraph_get()).data
    if len(mesh.vertices) != n:
        raise data.DataError(report_text("the modifiers before the Armature modifier change the vertex count"))
    mesh.vertices.foreach_get("co", buf)
    return buf.reshape(n, 3).astype(np.float64)


def _evaluate(context, obj, arm_mod, plans, two, frames):
    """Positions (F, N, 3) float32: the Armature modifier's result with the two-bone vertices from
    each frame's plan of ``plans`` (``None``: the Armature modifier's own, as the deformer's LBS mode
    passes it through, B-Bones included), evaluated on the positions the Armature modifier receives
    (shape keys and earlier modifiers; read with it switched off when the mesh has either). Modifiers
    after the Armature modifier, its skip mask of the deformer (``tree.SKIP_GROUP``) and earlier
    ``jl_frame_*`` keys are switched off meanwhile; the frame and every switch are restored."""
    mods = list(obj.modifiers)
    after = [(m, m.show_viewport) for m in mods[mods.index(arm_mod) + 1:]]
    morphed = obj.data.shape_keys is not None or mods.index(arm_mod) > 0
    keys = obj.data.shape_keys
    baked = [(kb, kb.mute) for kb in keys.key_blocks if kb.name.startswith(KEY_PREFIX)] if keys else []
    out = np.empty((len(frames), len(obj.data.vertices), 3), np.float32)
    with deformer.unchecked():     # the skip mask is off for a moment, on purpose
        _evaluate_frames(context, obj, arm_mod, plans, two, frames, out, after, morphed, baked)
    return out


def _evaluate_frames(context, obj, arm_mod, plans, two, frames, out, after, morphed, baked):
    """``_evaluate``'s frames into ``out``, every switch restored."""
    scene = context.scene
    arm_shown = arm_mod.show_viewport
    mask = (arm_mod.vertex_group, arm_mod.invert_vertex_group)
    frame, subframe = scene.frame_current, scene.frame_subframe
    n = len(obj.data.vertices)
    buf = np.empty(n * 3, np.float32)
    try:
        for m, _ in after:
            m.show_viewport = False
        if arm_mod.vertex_group == tree.SKIP_GROUP:
            arm_mod.vertex_group, arm_mod.invert_vertex_group = "", False
        for kb, _ in baked:
            kb.mute = True
        for i, (f, plan) in enumerate(zip(frames, plans)):
            scene.frame_set(f)
            pre = None
            if morphed and plan is not None:
                arm_mod.show_viewport = False
                pre = _read(context, obj, n, buf)[two.index]
                arm_mod.show_viewport = arm_shown
            out[i] = _read(context, obj, n, buf)
            if plan is not None:
                matrices = data.bone_matrices(obj, arm_mod.object, two.bones, context.evaluated_depsgraph_get())
                out[i, two.index] = plan.deform(matrices, pre)
    finally:
        arm_mod.show_viewport = arm_shown
        arm_mod.vertex_group, arm_mod.invert_vertex_group = mask
        for m, shown in after:
            m.show_viewport = shown
        for kb, mute in baked:
            kb.mute = mute
        scene.frame_set(frame, subframe=subframe)


def _write_shape_keys(obj, frames, positions, current, scene):
    """One key per frame, keyed 1 on its frame and 0 on the frames either side, at the scene's
    time of each (``animation.scene_time``: Time Stretching); each value is left as its keys give
    it on the ``current`` frame (what the viewport shows before the next frame change)."""
    if obj.data.shape_keys is None:
        obj.shape_key_add(name="Basis", from_mix=False)
    blocks = obj.data.shape_keys.key_blocks
    for f, pos in zip(frames, positions):
        kb = blocks.get(frame_name(f)) or obj.shape_key_add(name=frame_name(f), from_mix=False)
        kb.data.foreach_set("co", pos.ravel())
        for at, value in ((f - 1, 0.0), (f + 1, 0.0), (f, 1.0)):
            kb.value = value
            kb.keyframe_insert("value", frame=animation.scene_time(scene, at))
        kb.value = float(f == current)


def _older_frames(obj, frames):
    """The frames outside ``frames`` whose ``jl_frame_*`` keys an earlier bake left on ``obj``."""
    keys, done = obj.data.shape_keys, set(frames)
    older = []
    for kb in keys.key_blocks if keys is not None else ():
        try:
            f = int(kb.name[len(KEY_PREFIX):]) if kb.name.startswith(KEY_PREFIX) else None
        except ValueError:
            continue
        if f is not None and f not in done:
            older.append(f)
    return sorted(older)


def _runs(frames, most=4):
    """Sorted whole ``frames`` as runs, ``"1, 4..5"`` (the first ``most`` runs, then "…")."""
    runs = []
    for f in frames:
        if runs and f == runs[-1][1] + 1:
            runs[-1][1] = f
        else:
            runs.append([f, f])
    text = ", ".join(str(a) if a == b else f"{a}..{b}" for a, b in runs[:most])
    return text + (", …" if len(runs) > most else "")


def _mute_other_keys(obj):
    """Mute every shape key but the basis and the baked ones: the baked keys hold the whole
    shape of their frame, morphs included, and play alone (a morph still playing would count
    twice). Returns the names muted."""
    keys = obj.data.shape_keys
    muted = [kb.name for kb in keys.key_blocks[1:] if not kb.name.startswith(KEY_PREFIX) and not kb.mute]
    for name in muted:
        keys.key_blocks[name].mute = True
    return muted


def _switch(obj, modifiers, keys, on):
    """Switch the named modifiers on (or off) and unmute (or mute) the named shape keys, those
    still there."""
    for name in modifiers:
        mod = obj.modifiers.get(name)
        if mod is not None:
            mod.show_viewport = mod.show_render = on
    blocks = obj.data.shape_keys.key_blocks if obj.data.shape_keys is not None else {}
    for name in keys:
        kb = blocks.get(name)
        if kb is not None:
            kb.mute = not on


def _switched_off(obj):
    """``(modifiers, shape keys)`` an earlier bake with Disable Modifiers switched off."""
    record = obj.get(SWITCHED_OFF)
    if record is None:
        return [], []
    return [str(n) for n in record.get("modifiers", ())], [str(n) for n in record.get("keys", ())]


def _baked_in(obj, arm_mod):
    """The modifiers whose work the baked keys hold: those before the Armature modifier (a
    Displace: left on, it would deform the baked shapes once more), the Armature modifier and the
    deformer (with what lies between them); the ones after the deformer (Mirror, Subdivision,
    Corrective Smooth) go on working on the baked shapes, as on the deformed ones."""
    mods = list(obj.modifiers)
    last = mods.index(arm_mod)
    mod = deformer.find(obj)[0]
    if mod is not None:
        last = max(last, mods.index(mod))
    return mods[:last + 1]


def _write_meshes(obj, frames, positions):
    for f, pos in zip(frames, positions):
        name = f"{obj.data.name}_{frame_name(f)}"
        old = bpy.data.meshes.get(name)
        if old is not None and old.users <= int(old.use_fake_user):
            bpy.data.meshes.remove(old)
        mesh = bpy.data.meshes.new_from_object(obj)
        mesh.name = name
        mesh.vertices.foreach_set("co", pos.ravel())
        mesh.update()
        mesh.use_fake_user = True


class OBJECT_OT_jointlimit_deformer_bake(MeshPoll, bpy.types.Operator):
    """Bake SDEF / SBS / Bezier skinning with the numpy core for a frame range, as shape keys or
    meshes (a fallback where geometry nodes are not available, e.g. for export); Mode, Blend and
    Two Strongest Groups not set here are the mesh's deformer's"""

    bl_idname = "object.jointlimit_deformer_bake"
    bl_label = "Bake JointLimit Deformer"
    bl_options = {"REGISTER", "UNDO"}

    use_scene_range: BoolProperty(name="Scene Frame Range", description="Bake the scene's frame range; Start "
                                  "and End are used only when this is off", default=True)
    frame_start: IntProperty(name="Start", description="First frame to bake when Scene Frame Range is off",
                              default=1)
    frame_end: IntProperty(name="End", description="Last frame to bake when Scene Frame Range is off",
                            default=250)
    mode: EnumProperty(name="Mode", description="Skinning of the two-bone vertices", items=MODE_ITEMS,
                       default="SDEF")
    source: EnumProperty(name="SDEF Data", description="Where the C, R0, R1 parameters come from",
                         items=BAKE_SOURCE_ITEMS, default="AUTO")
    blend: FloatProperty(name="Blend", description="SDEF blend s [002 eq.22]: 1 = LBS centre, 0 = boundary line",
                         default=0.5, min=0.0, max=1.0)
    output: EnumProperty(name="Output", description="What to write per frame", items=OUTPUT_ITEMS,
                         default="SHAPE_KEYS")
    mute_modifiers: BoolProperty(name="Disable Modifiers", description="Turn off the Armature modifier, the "
                                 "deformer and the modifiers before them, and mute the other shape keys (the baked "
                                 "keys include their work), so the baked shape keys play the animation; modifiers "
                                 "after the deformer (Mirror, Subdivision) stay on",
                                 default=False)

    strongest_two: strongest_two_prop()
    use_selected: selected_prop()

    def execute(self, context):
        scene = context.scene
        start, end = (scene.frame_start, scene.frame_end) if self.use_scene_range else (self.frame_start,
                                                                                       self.frame_end)
        if end < start or end - start + 1 > MAX_FRAMES:
            self.report({"ERROR"}, f"Bad frame range {start}..{end}: End must not be before Start "
                        f"(at most {MAX_FRAMES} frames)")
            return {"CANCELLED"}
        if self.mute_modifiers and self.output == "MESHES":
            self.report({"ERROR"}, MESHES_PLAY_NOTHING)
            return {"CANCELLED"}
        try:
            skinning.check_blend(self.blend)  # NaN passes Blender's min/max
        except ValueError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        frames = list(range(start, end + 1))
        return run_on_meshes(self, target_meshes(context, self.use_selected),
                             lambda obj: self._bake(context, obj, frames), "bake")

    def _settings(self, obj):
        """Mode, Blend and Two Strongest Groups of the bake: each as set on the operator, else as
        the mesh's deformer has it (the bake reproduces what the viewport shows), else the
        operator's default."""
        props, kept = self.properties, deformer.settings(obj)
        if kept is None:
            return self.mode, self.blend, self.strongest_two
        return tuple(getattr(self, name) if props.is_property_set(name) else value
                     for name, value in zip(("mode", "blend", "strongest_two"), kept))

    def _frame_settings(self, context, obj, frames):
        """``([(mode, blend)] per frame, strongest_two)``: ``_settings`` on each frame when the
        deformer's inputs are animated or driven (the deformer follows them: the bake too), else
        the current frame's for all."""
        mode, blend, strongest_two = self._settings(obj)
        if not deformer.inputs_animated(obj):
            return [(mode, skinning.check_blend(blend))] * len(frames), strongest_two
        scene, out = context.scene, []
        frame, subframe = scene.frame_current, scene.frame_subframe
        try:
            for f in frames:
                scene.frame_set(f)
                mode, blend, _ = self._settings(obj)
                out.append((mode, skinning.check_blend(blend)))
        finally:
            scene.frame_set(frame, subframe=subframe)
        return out, strongest_two

    def _bake(self, context, obj, frames):
        if self.output == "SHAPE_KEYS":
            deformer.check_local(obj, baking_keys=True)
        off = _switched_off(obj)
        _switch(obj, *off, True)     # an earlier bake's Disable Modifiers: evaluate as before it
        try:
            settings, strongest_two = self._frame_settings(context, obj, frames)
            modes = list(dict.fromkeys(mode for mode, _ in settings))
            need_sdef = any(data.bake_needs_sdef(obj, mode) for mode in modes)
            prep = deformer.prepare(obj, self.source, strongest_two, need_sdef=need_sdef)
            two, arm_mod = prep.two, prep.arm_mod
            rest = data.positions(obj.data)[two.index]
            plans = {}
            for mode, blend in dict.fromkeys(settings):
                lbs_through = mode == "LBS" and not (strongest_two and two.many)     # as the deformer's LBS
                plans[mode, blend] = None if lbs_through else skinning.SkinPlan(
                    mode, rest, two.bone0, two.bone1, two.weight0, prep.c, prep.r0, prep.r1, rest_heads=prep.heads,
                    blend=blend, mirror_axes=prep.axes)
            positions = _evaluate(context, obj, arm_mod, [plans[key] for key in settings], two, frames)
        except Exception:
            _switch(obj, *off, False)
            raise
        obj.pop(SWITCHED_OFF, None)
        if self.output == "SHAPE_KEYS":
            _write_shape_keys(obj, frames, positions, context.scene.frame_current, context.scene)
        else:
            _write_meshes(obj, frames, positions)
        muted = []
        if self.mute_modifiers:
            baked_in = _baked_in(obj, arm_mod)
            switched = [m.name for m in baked_in if m.show_viewport or m.show_render]
            for m in baked_in:
                m.show_viewport = m.show_render = False
            if self.output == "SHAPE_KEYS":
                muted = _mute_other_keys(obj)
            obj[SWITCHED_OFF] = {"modifiers": switched, "keys": muted}
        note = f"; muted {len(muted)} other shape keys (the baked keys include them)" if muted else ""
        older = _older_frames(obj, frames) if self.output == "SHAPE_KEYS" else []
        if older:
            note += (f"; kept the keys of {len(older)} frames an earlier bake made outside these ({_runs(older)}): "
                     "they play as baked then (bake them again, or remove them, if the animation or settings changed)")
        if self.output == "SHAPE_KEYS" and not self.mute_modifiers:
            which = ("the Armature modifier and the deformer still deform" if deformer.find(obj)[0] is not None
                     else "the Armature modifier still deforms")
            note += (f"; {which} the mesh on top of the baked keys (Disable Modifiers, --mute-modifiers in a batch "
                     "run, to play the keys alone)")
        return (f"Baked frames {frames[0]}..{frames[-1]} of '{obj.name}' ({', '.join(modes)}, {len(two.index)} "
                f"two-bone vertices){note}")
