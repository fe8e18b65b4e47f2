"""Helpers shared by the operators (no operator classes here)."""

import bpy
import numpy as np

from .. import bone_limits, chains
from ..bone_limits import name_list  # noqa: F401  (the operators' one list of names)


def report_text(template, **values):
    """A report template translated (``pgettext_rpt``) before it is formatted."""
    return bpy.app.translations.pgettext_rpt(template).format(**values)


def report_count(one, many, count, **values):
    """``report_text`` of the template ``one`` when ``count`` is 1, else ``many`` (with ``count``):
    each a message of its own for translators ("1 bone", "{count} bones")."""
    return report_text(one if count == 1 else many, count=count, **values)


# Blender's float properties hold an infinity set from a script as the largest float32
FLOAT_MAX = 3.4028234e38


MECHANISM_ONLY = ("The limited bones here count as rig mechanism, which All Limited Bones leaves to the rig: select "
                  "them to work on them")


def real_numbers(*values):
    """Whether every value is a number of the scene (not NaN, not infinite, nor the largest
    float that Blender stores for an infinity)."""
    v = np.asarray(values, dtype=np.float64)
    return bool(np.all(np.abs(v) < FLOAT_MAX))


def pose_mode_problem(context):
    """Why a pose operator cannot run here, or ``None`` when it can."""
    obj = context.object
    if obj is None or obj.type != "ARMATURE":
        return "Select an armature"
    if context.mode != "POSE":
        return "Enter Pose Mode first"
    return None


def mesh_problem(context):
    """Why a mesh operator cannot run here, or ``None``."""
    obj = context.object
    if obj is None or obj.type != "MESH":
        return "Select a mesh object"
    if context.mode != "OBJECT":
        return "Switch to Object Mode first"
    return None


class PosePoll:
    """``poll()`` built on ``problem(context)``: a message saying why the operator cannot run
    (shown by Blender via ``poll_message_set``), or ``None``. Mix in before ``Operator``."""

    @classmethod
    def problem(cls, context):
        return pose_mode_problem(context)

    @classmethod
    def poll(cls, context):
        problem = cls.problem(context)
        if problem:
            cls.poll_message_set(problem)
        return problem is None


class ActiveBonePoll(PosePoll):
    """Pose Mode with an active bone."""

    @classmethod
    def problem(cls, context):
        return pose_mode_problem(context) or (None if context.active_pose_bone else "No active bone")


def pose_objects(context):
    """The armatures in Pose Mode, the active one first: as Blender's pose operators, ours act on
    the bones of each (several rigs are in Pose Mode together when they were selected as it was
    entered)."""
    active = context.object
    return [active, *(obj for obj in context.objects_in_mode or () if obj != active and obj.type == "ARMATURE")]


def target_bones(context, all_bones):
    """Limited pose bones of the armatures in Pose Mode: all of them, or only the selected ones."""
    return [pb for obj in pose_objects(context) for pb in bone_limits.limited_bones(obj, selected_only=not all_bones)]


def target_bones_skipping(context, all_bones):
    """``(bones, skipped names)``: as :func:`target_bones`, but *all bones* leaves rig mechanism
    alone (``bone_limits.animator_bones``); a selection is taken as it is."""
    bones = target_bones(context, all_bones)
    return bone_limits.animator_bones(bones) if all_bones else (bones, [])


def refuse_invalid_limits(operator, pose_bones):
    """Report Apply's one-line error and return ``True`` when a bone's limit settings are invalid
    (min above max, NaN, ...): operators that read settings refuse them instead of passing them on."""
    for pb in pose_bones:
        try:
            bone_limits.bone_limit(pb)
        except ValueError as exc:
            operator.report({"ERROR"}, str(exc))
            return True
    return False


def report_rest_pose(operator, bones):
    """Warn (``WARNING`` report) when the limit just set on any of ``bones`` leaves out the rest
    pose, naming the first such bone and how far Apply would move it."""
    hits = [(pb, bone_limits.rest_pose_warning(pb.jointlimit)) for pb in bones if pb.jointlimit.enabled]
    hits = [(pb, warning) for pb, warning in hits if warning]
    if not hits:
        return
    rpt = bpy.app.translations.pgettext_rpt
    pb, (template, values) = hits[0]
    text = rpt("Bone '{bone}': {warning}").format(bone=pb.name, warning=rpt(template).format(**values))
    if len(hits) > 1:
        text += " " + report_count("(1 more bone like this)", "({count} more bones like this)", len(hits) - 1)
    operator.report({"WARNING"}, text)


def selected_pose_bones(context):
    return list(context.selected_pose_bones or [])


def bone_labels(pose_bones):
    """A function naming a pose bone for a report: its name, followed by its rig's in brackets
    when ``pose_bones`` come from several rigs (two copies of a character in Pose Mode together
    have bones of one name)."""
    if len({pb.id_data for pb in pose_bones}) > 1:
        return lambda pb: f"{pb.name} ({pb.id_data.name})"
    return lambda pb: pb.name


def limitable_selection(context):
    """``(selected pose bones a limit may be set on, names of the rig mechanism bones left out)``:
    a bone named as Rigify's mechanism (``MCH-``, ``ORG-``, ``DEF-``) gets no limit from a preset,
    Copy or Mirror (the All Bones operations and Bake leave them out too), also when its
    collection was made visible and it was selected."""
    keep, skipped = [], []
    for pb in selected_pose_bones(context):
        (skipped if chains.mechanism_reason(pb) == "name" else keep).append(pb)
    return keep, [pb.name for pb in skipped]


class MeshPoll(PosePoll):
    """A mesh object in Object Mode."""

    @classmethod
    def problem(cls, context):
        return mesh_problem(context)


def target_meshes(context, use_selected):
    """The active mesh, then (with ``use_selected``) every other selected mesh."""
    active = context.object
    meshes = [active] if active is not None and active.type == "MESH" else []
    if use_selected:
        meshes += [o for o in context.selected_objects if o.type == "MESH" and o not in meshes]
    return meshes


def run_on_meshes(op, meshes, work, verb):
    """``work(obj)`` -> message for each mesh; errors (``ValueError``) are collected per mesh.

    Reports one INFO line per success, the failures as ERROR when nothing succeeded (the
    operator is cancelled) or as WARNING otherwise. Returns the operator's result set.
    """
    done, failed = [], []
    for obj in meshes:
        try:
            done.append(work(obj))
        except ValueError as exc:  # data.DataError included
            failed.append(f"'{obj.name}': {exc}" if len(meshes) > 1 else str(exc))
    for message in done:
        op.report({"INFO"}, message)
    if failed:
        op.report({"WARNING"} if done else {"ERROR"}, (f"Could not {verb}: " if len(meshes) > 1 else "")
                  + "; ".join(failed))
    return {"FINISHED"} if done else {"CANCELLED"}
