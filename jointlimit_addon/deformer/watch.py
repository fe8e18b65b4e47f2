"""What the deformer watches after each depsgraph update (``check_updates``), so that what a rigger
does to a character after *Add* never tears its mesh.

- A copy of the mesh (Shift D, Alt D, with or without its rig) shares the original's bone-frames
  helper, parented to the original and deformed by the original's armature: the copy gets a
  helper of its own, parented to it and deformed by its own Armature modifier's armature.
- The Armature modifier given another armature (a new version of the rig): the helper follows
  when that armature has every bone the deformer uses.
- The Armature modifier switched off in the viewport or in renders (to see the rest shape): the
  deformer follows, and comes back with it. The deformer's own modifier found off while the
  Armature modifier is on and still skips the two-bone vertices (switched off by hand, or the
  follow flag lost over an override's reload) would leave them unskinned: it goes off wholly.
- Otherwise a deformer that would move its two-bone vertices wrongly is switched off, so that the
  Armature modifier alone deforms every vertex, and the console says why: its helper deleted, the
  mesh's vertices added or removed since *Add* (their per-vertex data is *Add*'s), the armature
  lacking one of its bones, a modifier stack changed so that the two-bone vertices would be
  moved wrongly (``stack_problem``: a modifier that changes vertices moved before the Armature
  modifier, one put between it and the deformer), or something else now deforming the two-bone
  vertices too (``binding_conflict``: mmd_tools bound its SDEF again, the Armature modifier's
  mask changed).
"""

import sys
from contextlib import contextmanager

import bpy

from .. import compat
from . import data, mmd, tree
from .build import HELPER_SUFFIX, hide

VERTEX_COUNT = "jl_vertex_count"    # on the helper: the mesh's vertices when the deformer was added
OFF_FOR_BONES = "jl_off_for_bones"  # on the helper: switched off because the armature lacked a bone
NO_ARMATURE = "the mesh has no Armature modifier with an armature"
FOLLOWS = {"show_viewport": "jl_off_with_armature", "show_render": "jl_off_in_render_with_armature"}

_suspended = [0]    # > 0 while our own code changes the mask for a moment (the bake's evaluation)


@contextmanager
def unchecked():
    """Within: :func:`check_updates` leaves every mesh alone (the caller restores the state it changes)."""
    _suspended[0] += 1
    try:
        yield
    finally:
        _suspended[0] -= 1


def binding_conflict(obj):
    """Why the deformer of ``obj``, while on, and what else now deforms its two-bone vertices would
    move them twice, or ``None``: mmd_tools bound its SDEF again (its skinning key playing: *Bind
    SDEF*, *Assemble All*), or the Armature modifier no longer skips the two-bone vertices the
    deformer expects it to skip (its mask changed: mmd_tools' *Use SDEF* off, or by hand)."""
    from . import _skips, find

    mod, helper = find(obj)
    if mod is None or not mod.show_viewport:
        return None
    bound = mmd.binding(obj)
    if bound is not None and not bound[0].mute:
        return f"mmd_tools' SDEF binding ('{mmd.SKINNING_KEY}') deforms its SDEF vertices again"
    if isinstance(helper, bpy.types.Object) and helper.type == "MESH" and _skips(helper):
        arm_mod = data.armature_modifier(obj)
        if arm_mod is not None and (arm_mod.vertex_group != tree.SKIP_GROUP or not arm_mod.invert_vertex_group):
            return f"the Armature modifier '{arm_mod.name}' no longer skips the two-bone vertices (its mask changed)"
    return None


def unusable(obj, helper):
    """Why the deformer of ``obj`` cannot move its two-bone vertices rightly, or ``None``: its helper
    deleted, the mesh's vertices changed since *Add*, no Armature modifier, or its armature lacking
    a bone the deformer uses."""
    if not isinstance(helper, bpy.types.Object) or helper.type != "MESH":
        return "its bone-frames helper was deleted"
    count = helper.get(VERTEX_COUNT)
    if count is not None and count != len(obj.data.vertices):
        return (f"the mesh has {len(obj.data.vertices)} vertices, {count} when the deformer was added (its "
                "per-vertex data is from then)")
    arm_mod = data.armature_modifier(obj)
    if arm_mod is None:
        return NO_ARMATURE
    if data.mirrored(obj, arm_mod.object):
        return f"the mesh is mirrored against its armature '{arm_mod.object.name}' (a negative scale on one of them)"
    if arm_mod.object.mode == "EDIT":
        return None     # (its bones are the edit bones' only when it leaves Edit Mode: a bone renamed there)
    missing = missing_bone(obj, helper)
    return None if missing is None else _no_bone(arm_mod, missing)


def _no_bone(arm_mod, bone):
    return f"the armature '{arm_mod.object.name}' has no bone '{bone}'"


def missing_bone(obj, helper):
    """The first bone the deformer uses that the Armature modifier's armature lacks, or ``None``."""
    arm_mod = data.armature_modifier(obj)
    bones = arm_mod.object.data.bones
    return next((g.name for g in helper.vertex_groups if g.name not in bones), None)


def stack_problem(obj, arm_mod, mod):
    """Why the modifier stack, changed after *Add*, no longer suits the deformer ``mod``, or
    ``None``: a modifier before the Armature modifier that may change the vertices or their
    weights (as *Add* refuses: a Subdivision, a Mirror moved up), the deformer before the Armature
    modifier, or a modifier between the two (the Armature modifier skips the two-bone vertices, so
    they reach it still at rest: a Corrective Smooth, a Subdivision there)."""
    try:
        data.check_modifier_order(obj, arm_mod)
    except data.DataError as exc:
        return str(exc)
    mods = list(obj.modifiers)
    at, own = mods.index(arm_mod), mods.index(mod)
    if own < at:
        return f"it comes before the Armature modifier '{arm_mod.name}'"
    between = [m for m in mods[at + 1:own] if m.show_viewport or m.show_render]
    if between:
        return (f"modifier '{between[0].name}' sits between the Armature modifier '{arm_mod.name}' and the deformer "
                "(the two-bone vertices reach it still at rest)")
    return None


def _helper_armature(helper):
    return next((m for m in helper.modifiers if m.type == "ARMATURE"), None)


def _own_helper(obj, mod, helper):
    """Give ``obj`` a copy of ``helper`` of its own (parented to it) and read it."""

    copy = helper.copy()
    copy.data = helper.data.copy()
    copy.name = copy.data.name = obj.name + HELPER_SUFFIX
    for coll in obj.users_collection:
        coll.objects.link(copy)
    copy.parent = obj
    copy.matrix_parent_inverse.identity()
    copy.matrix_basis.identity()
    hide(copy)
    compat.set_modifier_input(mod, tree.input_id(mod.node_group, tree.FRAMES_INPUT), copy)
    return copy


def _follow_armature_modifier(obj, mod, helper):
    """The deformer (and its input modifier) off where the Armature modifier is off, viewport and
    render each, and on again with it (a flag on the helper remembers which). ``True`` when the
    deformer is off while the Armature modifier is on and still skips the two-bone vertices with
    no such flag (its own switch turned off by hand, or the flag lost: an override's helper keeps
    no custom property over a reload): those vertices would stay unskinned, so the caller
    switches it off wholly (``set_enabled``: the Armature modifier unmasked)."""
    from . import _masked, find_input

    arm_mod = data.armature_modifier(obj)
    torn = False
    for switch, flag in FOLLOWS.items():
        on = getattr(arm_mod, switch)
        if on == getattr(mod, switch):
            if on:
                helper.pop(flag, None)
            continue
        if not on or helper.get(flag):
            for m in (mod, find_input(obj)):
                if m is not None:
                    setattr(m, switch, on)
            if on:
                helper.pop(flag, None)
            else:
                helper[flag] = True
        elif _masked(obj):
            torn = True
    return torn


def _keep(obj):
    """Keep the deformer of ``obj`` right (the module); ``(why, how to go on, whether it goes on
    again by itself)`` when it must go off, else ``None``."""
    from . import _masked, _reconfigure, configuration_stale, find

    mod, helper = find(obj)
    if mod is None:
        return None
    if isinstance(helper, bpy.types.Object) and helper.type == "MESH" and helper.parent is not obj:
        helper = _own_helper(obj, mod, helper)
    followed = isinstance(helper, bpy.types.Object) and any(helper.get(flag) for flag in FOLLOWS.values())
    if not (mod.show_viewport or mod.show_render) and not _masked(obj) and not followed:
        return None     # switched off (Toggle): nothing deforms twice or wrongly
    why = unusable(obj, helper)
    bone = missing_bone(obj, helper) if why is not None and isinstance(helper, bpy.types.Object) and \
        helper.type == "MESH" and arm_mod_ready(obj) else None
    if bone is not None and why == _no_bone(data.armature_modifier(obj), bone):
        return why, ("it switches on again by itself once the armature has that bone again (a rig generated anew), "
                     "or remove it and add it again"), True
    if why == NO_ARMATURE:
        return why, ("if you applied the Armature modifier, apply the deformer next (in stack order the two keep "
                     "the deformed mesh; on its own the Armature modifier leaves the two-bone vertices at rest), "
                     "or use Convert to Mesh; else give the Armature modifier back its armature, or undo, and switch "
                     "the deformer on again (Toggle JointLimit Deformer)"), False
    if why is not None:
        return why, "remove it and add it again, or undo that and switch it on again (Toggle JointLimit Deformer)", False
    arm_mod = data.armature_modifier(obj)
    why = stack_problem(obj, arm_mod, mod)
    if why is not None:
        return why, ("move that modifier after the deformer (or apply it), then switch the deformer on again "
                     "(Toggle JointLimit Deformer)"), False
    helper_arm = _helper_armature(helper)
    if helper_arm is not None and helper_arm.object is not arm_mod.object:
        helper_arm.object = arm_mod.object
    if _follow_armature_modifier(obj, mod, helper):
        return ("its modifier is off while the Armature modifier skips the two-bone vertices (they would stay "
                "unskinned)", "switch it on with Toggle JointLimit Deformer, not with the modifier's own switch", False)
    if mod.show_viewport and configuration_stale(obj, mod, helper):
        _reconfigure(obj, mod, helper)  # the mode set in the panel, Preserve Volume or B-Bones on after Add
    why = binding_conflict(obj)
    return None if why is None else (why, "switch it on again (Toggle JointLimit Deformer) to take the SDEF "
                                          "vertices over, or remove it", False)


def arm_mod_ready(obj):
    """Whether the mesh has an Armature modifier with an armature out of Edit Mode."""
    arm_mod = data.armature_modifier(obj)
    return arm_mod is not None and arm_mod.object.mode != "EDIT"


def _back_on(obj):
    """A deformer switched off because its armature lacked a bone (a rig generated anew deletes
    and makes its bones again) goes on again once the armature has every bone it uses and nothing
    else keeps it off; ``True`` when it did."""
    from . import find, set_enabled

    mod, helper = find(obj)
    if mod is None or not isinstance(helper, bpy.types.Object) or not helper.get(OFF_FOR_BONES):
        return False
    if unusable(obj, helper) is not None or stack_problem(obj, data.armature_modifier(obj), mod) is not None:
        return False
    set_enabled(obj, True)
    return True


def check_updates(depsgraph):
    """``depsgraph_update_post``: each updated mesh with a deformer is kept right (the module);
    one that would move its two-bone vertices wrongly or twice is switched off, and the console
    says why and how to go on; one switched off for a bone its armature lacked goes on again once
    the armature has it (``_back_on``)."""
    from . import find, set_enabled

    if _suspended[0]:
        return
    for update in depsgraph.updates:
        obj = update.id.original if isinstance(update.id, bpy.types.Object) else None
        if obj is None or obj.type != "MESH" or obj.library is not None or obj.mode == "EDIT":
            continue    # (Edit Mode keeps the configuration: see _reconfigure)
        if _back_on(obj):
            print(f"JointLimit: the deformer of '{obj.name}' is switched on again: its armature has every bone it "
                  "uses again", file=sys.stderr)
            continue
        off = _keep(obj)
        if off is not None:
            set_enabled(obj, False)
            if off[2]:
                find(obj)[1][OFF_FOR_BONES] = True    # (after the switch: it clears the mark)
            print(f"JointLimit: the deformer of '{obj.name}' is switched off: {off[0]}. To go on, {off[1]}",
                  file=sys.stderr)

