"""Scene helpers of the commands: choosing objects and bones, running operators, modes, progress."""

import contextlib

import bpy

from .. import bone_limits, compat, deformer
from .common import BatchError, UsageError, end_if_run_gone, report_text, say


def run_op(op, label, **props):
    try:
        result = op(**props)
    except RuntimeError as exc:
        raise BatchError(f"{label}: {report_text(exc)}") from None
    if "FINISHED" not in result:
        raise BatchError(f"{label}: the operator was cancelled")


def scene_objects(kind):
    return [o for o in bpy.context.scene.objects if o.type == kind]


def elsewhere(kind):
    """``{scene name: [object names]}`` of ``kind`` in the file's other scenes (the commands work on
    the scene the file opens on)."""
    here = bpy.context.scene
    found = {}
    for scene in bpy.data.scenes:
        if scene != here:
            names = [o.name for o in scene.objects if o.type == kind and o.name not in here.objects]
            if names:
                found[scene.name] = names
    return found


def elsewhere_text(kind):
    """'; scene 'Scene2' has RigC (...)' for the objects of ``kind`` only in other scenes, or ''."""
    found = elsewhere(kind)
    if not found:
        return ""
    listed = "; ".join(f"scene {scene!r} has {', '.join(names)}" for scene, names in found.items())
    return f"; {listed} (the commands work on the scene the file opens on, {bpy.context.scene.name!r})"


def pick_armature(name):
    arms = scene_objects("ARMATURE")
    if name is not None:
        match = [o for o in arms if o.name == name]
        if not match:
            names = ", ".join(o.name for o in arms) or "none"
            raise UsageError(f"no armature {name!r} in the scene (armatures: {names}){elsewhere_text('ARMATURE')}")
        return match[0]
    active = bpy.context.view_layer.objects.active
    if active is not None and active.type == "ARMATURE":
        return active
    if len(arms) == 1:
        return arms[0]
    if not arms:
        raise UsageError("the scene has no armature" + elsewhere_text("ARMATURE"))
    raise UsageError(f"several armatures ({', '.join(o.name for o in arms)}): choose one with --armature")


def deformer_of(obj):
    """``(modifier, helper object)`` of the JointLimit deformer on ``obj``, or ``(None, None)``."""
    return deformer.find(obj)


def pick_meshes(names):
    meshes = scene_objects("MESH")
    if names:
        by_name = {o.name: o for o in meshes}
        for n in names:
            if n not in by_name:
                raise UsageError(f"no mesh object {n!r} in the scene")
        return [by_name[n] for n in names]
    helpers = {deformer_of(o)[1] for o in meshes} - {None}
    found = [o for o in meshes
             if any(m.type == "ARMATURE" for m in o.modifiers) and o not in helpers]
    if not found:
        raise UsageError("no mesh with an Armature modifier to work on; name one with --mesh")
    return found


def pose_bone(obj, name):
    pb = obj.pose.bones.get(name)
    if pb is None:
        raise UsageError(f"no bone {name!r} in armature {obj.name!r}")
    return pb


def not_editable(obj):
    """Why ``obj`` cannot be edited here (linked, or a library override that is not editable)."""
    if obj.library is not None:
        return (f"{obj.name!r} is linked from {obj.library.filepath!r}: make a library override of it (editable) "
                "or run the command on that file")
    return (f"{obj.name!r} is a library override that is not editable (a system override): make it editable "
            "(Outliner: Library Override > Make > Editable) or run the command on the library file")


@contextlib.contextmanager
def active_in_mode(obj, mode):
    """``obj`` active (and visible) in ``mode``; the previous active object, mode and visibility return."""
    layer = bpy.context.view_layer
    if obj.name not in layer.objects:
        raise UsageError(f"{obj.name!r} is not in the active view layer")
    if mode != "OBJECT" and (obj.library is not None or (obj.override_library is not None
                                                         and obj.override_library.is_system_override)):
        raise UsageError(not_editable(obj))     # (Pose Mode's poll refuses it)
    previous = layer.objects.active
    previous_mode = previous.mode if previous is not None else "OBJECT"
    previous_uid = previous.session_uid if previous is not None else None     # the object may be gone after
    hidden, hidden_viewport = obj.hide_get(), obj.hide_viewport
    if previous is not None and previous.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    obj.hide_viewport = False
    obj.hide_set(False)
    layer.objects.active = obj
    if mode != "OBJECT":
        bpy.ops.object.mode_set(mode=mode)
    try:
        yield obj
    finally:
        if obj.mode != "OBJECT":
            bpy.ops.object.mode_set(mode="OBJECT")
        obj.hide_set(hidden)
        obj.hide_viewport = hidden_viewport
        previous = next((o for o in layer.objects if o.session_uid == previous_uid), None)
        layer.objects.active = previous
        if previous is not None and previous_mode != "OBJECT":
            with contextlib.suppress(RuntimeError):
                bpy.ops.object.mode_set(mode=previous_mode)


@contextlib.contextmanager
def bone_selection(obj, names, active=None):
    """Select exactly the bones ``names`` (all if ``None``); restore the selection afterwards."""
    bones = obj.pose.bones
    before = {pb.name: compat.pose_bone_selected(pb) for pb in bones}
    active_before = obj.data.bones.active
    wanted = set(before) if names is None else set(names)
    try:
        for pb in bones:
            compat.select_pose_bone(pb, pb.name in wanted)
        if active is not None:
            obj.data.bones.active = obj.data.bones[active]
        yield
    finally:
        for pb in bones:
            compat.select_pose_bone(pb, before[pb.name])
        obj.data.bones.active = active_before


@contextlib.contextmanager
def auto_keying_off():
    """Auto Keying off while a command poses bones (a file saved with it on): the command keys what
    it means to, where it means to (``apply`` nothing; ``limb-ik`` and ``ccd`` at the time each
    frame is shown, where Blender's auto-keying keys the frame number)."""
    tools = bpy.context.scene.tool_settings
    kept = tools.use_keyframe_insert_auto
    tools.use_keyframe_insert_auto = False
    try:
        yield
    finally:
        tools.use_keyframe_insert_auto = kept


@contextlib.contextmanager
def frame_progress(label, total):
    """Print ``label: frames done/total`` about ten times while operators step through frames."""
    done = [0]
    every = max(1, total // 10)

    def on_frame(scene, *_):
        end_if_run_gone()
        done[0] += 1
        if done[0] <= total and (done[0] % every == 0 or done[0] == total):
            say(f"{label}: frames {done[0]}/{total}")

    bpy.app.handlers.frame_change_post.append(on_frame)
    try:
        yield
    finally:  # a handler left behind makes Blender 4.5's Python module hang at exit
        bpy.app.handlers.frame_change_post.remove(on_frame)


def frames_of(args, minimum):
    scene = bpy.context.scene
    start, end = args.frames or (scene.frame_start, scene.frame_end)
    if end - start + 1 < minimum:
        need = "after" if minimum > 1 else "at or after"
        raise UsageError(f"bad frame range {start}..{end}: END must be {need} START")
    return start, end


def check_bones(obj, names):
    for name in names or ():
        pose_bone(obj, name)


def check_limits(obj, names, animator_only=False):
    """Bad input (``UsageError`` naming the bone): a limited bone among ``names`` whose stored
    settings make no valid limit (NaN, minimum above maximum, ...). ``animator_only``: rig
    mechanism bones are skipped, as the *All Bones* operators skip them."""
    bones = [obj.pose.bones[n] for n in names if obj.pose.bones[n].jointlimit.enabled]
    if animator_only:
        bones = bone_limits.animator_bones(bones)[0]
    for pb in bones:
        problem = bone_limits.settings_error(pb.jointlimit)
        if problem:
            raise UsageError(f"bone {pb.name!r} of {obj.name!r} has invalid joint-limit settings: {problem}")


def rotation_state(obj):
    return {pb.name: (tuple(pb.rotation_quaternion), tuple(pb.rotation_euler), tuple(pb.rotation_axis_angle))
            for pb in obj.pose.bones}


def limited(obj, names):
    return [pb.name for pb in obj.pose.bones if pb.jointlimit.enabled and (names is None or pb.name in names)]
