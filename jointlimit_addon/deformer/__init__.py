"""Two-bone skinning deformer (LBS / SBS / SDEF = SBS+ / Bezier, [002]) for Blender meshes.

``add(obj, ...)`` puts a geometry-nodes modifier (``tree.py``) right after the mesh's Armature
modifier, plus a *bone-frames* helper mesh (four points per bone, parented to the mesh with an
identity transform so its space is the mesh's space, deformed by an Armature modifier with the
same armature). The Armature modifier then skips the two-bone vertices (its inverted vertex-group
mask ``tree.SKIP_GROUP``, as mmd_tools masks its SDEF vertices), so each vertex is deformed once
and the two-bone ones reach the deformer as the Armature modifier received them (shape keys
included). Where the Armature modifier's own result on those vertices is not the linear blend of
their two straight bones (Preserve Volume, envelopes, B-Bone segments), and in LBS mode where the
deformer can pass the Armature modifier's result through (no *Two Strongest Groups* vertices),
it deforms every vertex instead and a small *input* modifier right before it stores the positions
it receives (``_configure``). Nothing runs in Python per frame: playback,
scrubbing and renders evaluate the tree. ``remove(obj)`` undoes all of it; ``upgrade(context)``
(run by ``add``) moves deformers saved with an older node-tree version to the current one. The
numpy fallback (``bake``) lives in the bake operator; ``data.py`` reads weights, SDEF parameters
and bone matrices for both; ``build.py`` writes the helper and the mesh's attributes (its
``prepare`` checks and reads their inputs, for the bake too); ``derive.py`` derives SDEF
parameters; ``mmd.py`` writes mmd_tools' layout and takes over its SDEF binding.
``watch.check_updates`` (after each depsgraph update) keeps a deformer right after what is done
to its character later (a copy gets a helper of its own, the Armature modifier's armature and
switches are followed) and switches it off where it would deform wrongly or twice.
"""

import math

import bpy
import numpy as np

from .. import compat
from ..core import skinning
from . import build, data, mmd, tree, watch
from .build import HELPER_SUFFIX, Prepared, prepare  # noqa: F401 (the package's API)

MODIFIER_NAME = "JointLimit Deformer"
INPUT_MODIFIER_NAME = "JointLimit Deformer Input"
AUTO_DERIVED_FLAG = "jl_auto_derived"  # on the helper: add() derived the jl_sdef_* attributes
HELPER_OPTIONS = "jl_options"  # on the helper: add()'s options, to add again on an upgrade
PREV_REST_FLAG = "jl_prev_rest_position"  # on helpers of tree version <= 3: the mesh's flag before add()


def find(obj):
    """``(modifier, helper object or None)`` of the deformer on ``obj``, or ``(None, None)``."""
    for mod in obj.modifiers:
        if mod.type == "NODES" and tree.is_deformer_tree(mod.node_group):
            return mod, compat.modifier_input(mod, tree.input_id(mod.node_group, tree.FRAMES_INPUT))
    return None, None


def _move_modifier(context, obj, mod, index):
    """Move ``mod`` to ``index`` (the watcher leaves the stack alone meanwhile: ``bpy.ops``
    evaluates the view layer first, with the modifier still where it was made, at the end)."""
    if list(obj.modifiers).index(mod) != index:
        with context.temp_override(object=obj, active_object=obj), watch.unchecked():
            bpy.ops.object.modifier_move_to_index(modifier=mod.name, index=index)


def can_skip(arm_mod, bones=()):
    """Whether the Armature modifier ``arm_mod`` may skip the two-bone vertices (see the module):
    only where its own result on them is linear blend skinning of their two groups, which the
    deformer's LBS mode reproduces (not with Preserve Volume, envelopes, or B-Bone segments on one
    of ``bones``), when it has no mask of its own and no bone has the group's name."""
    arm = arm_mod.object.data
    plain = all(arm.bones[name].bbone_segments <= 1 for name in bones if name in arm.bones)
    return (arm_mod.vertex_group in ("", tree.SKIP_GROUP) and arm_mod.use_vertex_groups
            and not arm_mod.use_bone_envelopes and not arm_mod.use_deform_preserve_volume
            and tree.SKIP_GROUP not in arm.bones and plain)


def skip_group_taken(obj):
    """A vertex group named ``tree.SKIP_GROUP`` that is the user's, not the deformer's: the mesh has
    it, yet no Armature modifier of ``obj`` is masked by it, no other deformer uses the mesh and
    the deformer's attributes are not beside it (``_left_on_mesh``)."""
    return tree.SKIP_GROUP in obj.vertex_groups and not shares_deformer(obj) and not _masked(obj) and \
        not _left_on_mesh(obj)


def _left_on_mesh(obj):
    """Whether the mesh holds the deformer's skip group and per-vertex attributes with no deformer:
    what a mesh with the deformer leaves in another joined to it (Ctrl J); not while another
    object's deformer uses the same mesh."""
    return find(obj)[0] is None and tree.SKIP_GROUP in obj.vertex_groups and tree.ATTR_MASK in obj.data.attributes \
        and not shares_deformer(obj)


def _keep_active_group(obj, change):
    """Run ``change()`` (which adds or removes the skip group) keeping the user's active vertex group."""
    active = obj.vertex_groups.active
    name = active.name if active is not None and active.name != tree.SKIP_GROUP else None
    change()
    if name is not None and name in obj.vertex_groups:
        obj.vertex_groups.active_index = obj.vertex_groups[name].index


def _skip_on(obj, arm_mod, index):
    def change():
        group = obj.vertex_groups.get(tree.SKIP_GROUP)
        if group is not None:
            obj.vertex_groups.remove(group)
        obj.vertex_groups.new(name=tree.SKIP_GROUP).add(index.tolist(), 1.0, "REPLACE")

    _keep_active_group(obj, change)
    _mask(arm_mod)


def _mask(arm_mod):
    arm_mod.vertex_group, arm_mod.invert_vertex_group = tree.SKIP_GROUP, True


def _masked(obj):
    """The Armature modifiers of ``obj`` masked by the skip group (found by their mask, so a renamed
    modifier is found too)."""
    return [m for m in obj.modifiers if m.type == "ARMATURE" and m.vertex_group == tree.SKIP_GROUP]


def _unmask(obj):
    """Every Armature modifier of ``obj`` masked by the skip group deforms every vertex again."""
    for m in _masked(obj):
        m.vertex_group, m.invert_vertex_group = "", False


def _skip_off(obj):
    """Unmask the Armature modifier of ``obj`` and remove the skip group, unless another object
    with a deformer uses the mesh."""
    _unmask(obj)
    if not shares_deformer(obj):
        group = obj.vertex_groups.get(tree.SKIP_GROUP)
        if group is not None:
            _keep_active_group(obj, lambda: obj.vertex_groups.remove(group))


def shares_deformer(obj):
    """Another object with a deformer uses the mesh of ``obj`` (its attributes and skip group stay)."""
    return any(o is not obj and o.data is obj.data and find(o)[0] is not None
               for o in bpy.data.objects if o.type == "MESH")


def _flag(helper, name):
    values = np.zeros(len(helper.data.vertices), bool)
    helper.data.attributes[name].data.foreach_get("value", values)
    return bool(values[0])


def _skips(helper):
    """The helper's flag: the Armature modifier skips the two-bone vertices (see :func:`_configure`)."""
    return tree.ATTR_SKIP in helper.data.attributes and _flag(helper, tree.ATTR_SKIP)


def _helper_users(helper):
    """How many objects' deformers use ``helper`` (more than one: copies made with Shift D or Alt D)."""
    return sum(1 for o in bpy.data.objects if o.type == "MESH" and find(o)[1] == helper)


def _configure(context, obj, helper, arm_mod, mode):
    """Who moves the two-bone vertices first: the Armature modifier skips them when it can
    (:func:`can_skip`), except in a mode whose LBS passes the Armature modifier's result through
    (then it is cheaper to let it deform every vertex); otherwise the input modifier right before
    it stores the positions it receives (``tree.ATTR_PRE``). Either way the result is the same."""
    bones = [g.name for g in helper.vertex_groups]
    skip = can_skip(arm_mod, bones) and not (mode == "LBS" and _flag(helper, tree.ATTR_LBS_THROUGH))
    skipped = _skips(helper)
    helper.data.attributes[tree.ATTR_SKIP].data.foreach_set("value", np.full(len(helper.data.vertices), skip))
    helper.data.update()
    pre = find_input(obj)
    if skip:
        mask = np.zeros(len(obj.data.vertices), bool)
        obj.data.attributes[tree.ATTR_MASK].data.foreach_get("value", mask)
        _skip_on(obj, arm_mod, np.flatnonzero(mask))
        if pre is not None:
            group = pre.node_group
            obj.modifiers.remove(pre)
            _remove_group(group, None)
        return
    if skipped:
        _skip_off(obj)
    if pre is None:
        pre = obj.modifiers.new(INPUT_MODIFIER_NAME, "NODES")
        pre.node_group = tree.get_input_tree()
        pre.show_in_editmode = True  # the deformer needs its attribute wherever it runs
        _move_modifier(context, obj, pre, list(obj.modifiers).index(arm_mod))


def is_enabled(obj):
    """Whether the deformer of ``obj`` is on (see :func:`set_enabled`)."""
    mod = find(obj)[0]
    return mod is not None and mod.show_viewport


def configuration_stale(obj, mod, helper):
    """Whether the Armature modifier skips the two-bone vertices while the deformer's mode and the
    Armature modifier's settings now ask otherwise, or the other way round (:func:`_configure`): a
    mode set in the modifier panel, Preserve Volume or B-Bone segments switched on after Add, which
    the LBS mode must pass through from the Armature modifier."""
    arm_mod = data.armature_modifier(obj)
    if not isinstance(helper, bpy.types.Object) or arm_mod is None or tree.ATTR_SKIP not in helper.data.attributes:
        return False
    bones = [g.name for g in helper.vertex_groups]
    want = can_skip(arm_mod, bones) and not (get_mode(mod) == "LBS" and _flag(helper, tree.ATTR_LBS_THROUGH))
    return want != _skips(helper)


def _reconfigure(obj, mod, helper):
    """:func:`_configure` for the deformer's current mode, where that is safe: not in Edit Mode
    (the mesh's attributes are not readable there) nor on a helper that copies of the object share
    (its skip flag is per helper); there the configuration stays, which gives the same result."""
    arm_mod = data.armature_modifier(obj)
    if (isinstance(helper, bpy.types.Object) and arm_mod is not None and obj.mode != "EDIT"
            and not tree.is_old_tree(mod.node_group) and tree.ATTR_SKIP in helper.data.attributes
            and _helper_users(helper) == 1):
        _configure(bpy.context, obj, helper, arm_mod, get_mode(mod))


def set_enabled(obj, enabled):
    """Switch the deformer of ``obj`` off or on again. Off: its modifiers' viewport and render
    switches off and the Armature modifier unmasked, so the Armature modifier alone deforms every
    vertex, in the viewport and in renders, as without the deformer. On: the switches on, an
    mmd_tools SDEF binding bound again meanwhile taken over again (:func:`binding_conflict`), and
    the Armature modifier masked again where it still can skip the two-bone vertices
    (:func:`_configure`: the input modifier takes over where it no longer can)."""
    check_own(obj)
    mod, helper = find(obj)
    if mod is None:
        raise data.DataError(f"'{obj.name}' has no JointLimit deformer")
    why = watch.unusable(obj, helper) if enabled else None
    if why is not None:
        raise data.DataError(f"the deformer of '{obj.name}' cannot be switched on: {why}; remove it and add it "
                             "again")
    why = watch.stack_problem(obj, data.armature_modifier(obj), mod) if enabled else None
    if why is not None:
        raise data.DataError(f"the deformer of '{obj.name}' cannot be switched on: {why}; move that modifier after "
                             "the deformer, or apply it")
    for m in (mod, find_input(obj)):
        if m is not None:
            m.show_viewport = m.show_render = bool(enabled)
    if isinstance(helper, bpy.types.Object):
        for flag in (*watch.FOLLOWS.values(), watch.OFF_FOR_BONES):     # switched by hand: no longer followed
            helper.pop(flag, None)
    if not enabled:
        _unmask(obj)
    else:
        bound = mmd.binding(obj)
        if bound is not None and not bound[0].mute:
            state = mmd.take_over(obj, bound)
            if isinstance(helper, bpy.types.Object) and mmd.STATE_PROP not in helper:
                helper[mmd.STATE_PROP] = state     # given back by remove()
        _reconfigure(obj, mod, helper)
        if isinstance(helper, bpy.types.Object) and helper.type == "MESH" and _skips(helper):
            # where _reconfigure left the configuration (Edit Mode, a helper shared by copies), the
            # skip group is still there: mask with it again
            arm_mod = data.armature_modifier(obj)
            if arm_mod is not None and arm_mod.vertex_group == "" and tree.SKIP_GROUP in obj.vertex_groups:
                _mask(arm_mod)
    obj.update_tag()


def add(context, obj, source="AUTO", mode="SDEF", blend=0.5, strongest_two=False, take_over=False):
    """Add the deformer to ``obj``; returns ``(modifier, Prepared)``. All-or-nothing.

    The Armature modifier skips the two-bone vertices when it can; else an input modifier right
    before it stores the positions it receives (``tree.ATTR_PRE``: shape keys and earlier
    deforming modifiers included; see :func:`_configure`). The deformer right after it recomputes
    the two-bone vertices from those. A mesh without SDEF data gets derived parameters; an mmd_tools
    SDEF binding is unbound when ``take_over`` (and restored by :func:`remove`), refused
    otherwise.
    """
    upgrade(context)
    if find(obj)[0] is not None:
        raise data.DataError(f"'{obj.name}' already has a JointLimit deformer (remove it first)")
    check_local(obj)
    if mode not in tree.MODE_VALUES:
        raise data.DataError(f"unknown mode {mode!r}")
    if skip_group_taken(obj):
        raise data.DataError(f"'{obj.name}' has a vertex group of its own named '{tree.SKIP_GROUP}', the name the "
                             "deformer uses: rename it")
    blend = skinning.check_blend(blend)
    bound = mmd.binding(obj)
    if bound is not None and not take_over:
        raise data.DataError(f"'{obj.name}' is bound by mmd_tools' SDEF ('{mmd.SKINNING_KEY}' shape key); enable "
                             "Take Over mmd_tools SDEF to unbind it while the deformer is on")
    data.check_not_mirrored(obj, data.require_armature(obj).object)
    attrs_before = set(obj.data.attributes.keys())
    state = mmd.take_over(obj, bound) if bound is not None else None
    groups_before = {ng.session_uid for ng in bpy.data.node_groups}    # a removed group's address may be reused
    helper = mod = prep = None
    try:
        prep = build.prepare(obj, source, strongest_two, derive_missing=True, strict=not _upgrading)
        arm_mod, two = prep.arm_mod, prep.two
        pairs, pair = build.pairs(two)
        # LBS equals the Armature modifier unless some vertex uses two of its three or more groups
        helper = build.build_helper(obj, arm_mod.object, two.bones, pairs, not (strongest_two and two.many))
        if state is not None:
            helper[mmd.STATE_PROP] = state
        if prep.derived:
            helper[AUTO_DERIVED_FLAG] = True
        helper[HELPER_OPTIONS] = {"source": source, "strongest_two": bool(strongest_two)}
        build.write_mesh_attributes(obj, two, prep.c, prep.r0, prep.r1, prep.heads, pair)
        _configure(context, obj, helper, arm_mod, mode)
        ng = tree.get_tree()
        mod = obj.modifiers.new(MODIFIER_NAME, "NODES")
        mod.node_group = ng
        mod.show_in_editmode = arm_mod.show_in_editmode  # posed in Edit Mode exactly when the rest is
        compat.set_modifier_input(mod, tree.input_id(ng, tree.MODE_INPUT), tree.MODE_VALUES[mode])
        compat.set_modifier_input(mod, tree.input_id(ng, tree.BLEND_INPUT), blend)
        compat.set_modifier_input(mod, tree.input_id(ng, tree.FRAMES_INPUT), helper)
        _move_modifier(context, obj, mod, list(obj.modifiers).index(arm_mod) + 1)
        helper[watch.VERTEX_COUNT] = len(obj.data.vertices)
        build.hide(helper)
    except Exception:
        _cleanup(obj, mod, helper, find_input(obj), groups_before)
        if state is not None:
            mmd.restore(obj, state)
        for name in set(obj.data.attributes.keys()) - attrs_before:  # derived just now
            obj.data.attributes.remove(obj.data.attributes[name])
        raise
    remove_orphan_helpers()     # (a mesh with the deformer joined into this one left its helper)
    obj.update_tag()
    return mod, prep


_upgrading = []  # non-empty while upgrade() adds deformers again (add() calls upgrade())


def upgrade(context):
    """Move every deformer of an older node-tree version (a file saved by an older version) to the
    current one: each is removed and added again with its mode, blend and options (so its mesh and
    helper get the attributes the current tree reads), then the old groups are deleted.
    Returns ``[(object, error message or None)]``; a mesh that cannot be added again keeps no
    deformer and its reason is returned."""
    if _upgrading or not any(tree.is_old_tree(ng) for ng in bpy.data.node_groups):
        return []
    redo = []
    # found first, removed after: remove() deletes helper objects, never while bpy.data.objects is walked
    for obj, mod, helper in [(o, *find(o)) for o in bpy.data.objects if o.type == "MESH" and o.library is None]:
        if mod is None or not tree.is_old_tree(mod.node_group):
            continue
        if from_library(obj, mod):
            continue    # the library's file moves it (remove() refuses it here): it keeps working as saved
        helper = helper if isinstance(helper, bpy.types.Object) else None
        options = helper.get(HELPER_OPTIONS) if helper is not None else None
        options = options.to_dict() if hasattr(options, "to_dict") else dict(options or {})
        bound = helper is not None and bool(helper.get(mmd.STATE_PROP))
        blend = compat.modifier_input(mod, tree.input_id(mod.node_group, tree.BLEND_INPUT))
        redo.append((obj, mod.name, get_mode(mod), blend, options, bound, mod.show_viewport))
        remove(obj)
    for old in ([ng for ng in bpy.data.node_groups if tree.is_old_tree(ng)],
                [ng for ng in tree.core_trees() if ng.get(tree.CORE_TAG) != tree.TREE_VERSION]):
        for ng in old:  # the wrappers first: their cores are free once they are gone
            if ng.users - int(ng.use_fake_user) == 0 and ng.library is None:
                bpy.data.node_groups.remove(ng)
    done = []
    _upgrading.append(True)
    try:
        for obj, name, mode, blend, options, bound, enabled in redo:
            blend = float(blend)
            try:
                mod, _ = add(context, obj, source=options.get("source", "AUTO"), mode=mode, blend=clamp_blend(blend),
                             strongest_two=bool(options.get("strongest_two", False)), take_over=bound)
                if clamp_blend(blend) != blend and not math.isnan(blend):
                    # a value set outside [0, 1] stays as set (the tree clamps it)
                    compat.set_modifier_input(mod, tree.input_id(mod.node_group, tree.BLEND_INPUT), blend)
            except (data.DataError, ValueError) as err:
                done.append((obj, str(err)))
                continue
            mod.name = name
            if not enabled:
                set_enabled(obj, False)  # switched off in the old file: stays off
            done.append((obj, None))
    finally:
        _upgrading.clear()
    return done


def _remove_group(ng, groups_before):
    if ng is not None and ng.users == 0 and (groups_before is None or ng.session_uid not in groups_before):
        bpy.data.node_groups.remove(ng)


def _cleanup(obj, mod, helper, pre=None, groups_before=None):
    """Undo :func:`add` (also for deformers of older versions, which had no input modifier and
    switched on ``add_rest_position_attribute``). The mesh's attributes and skip group stay while
    another object with a deformer uses the same mesh."""
    shared = shares_deformer(obj)
    groups = [m.node_group for m in (mod, pre) if m is not None]
    for m in (mod, pre):
        if m is not None:
            obj.modifiers.remove(m)
    _skip_off(obj)  # add() refuses a user's group of the skip group's name
    if helper is not None and _helper_users(helper):
        helper = None  # a copy of this object (Shift D) still uses it
    if helper is not None:
        if PREV_REST_FLAG in helper:
            obj.add_rest_position_attribute = bool(helper[PREV_REST_FLAG])
        if helper.get(AUTO_DERIVED_FLAG) and not shared:
            for name in data.DERIVED_ATTRS:
                if name in obj.data.attributes:
                    obj.data.attributes.remove(obj.data.attributes[name])
        mesh = helper.data
        bpy.data.objects.remove(helper)
        if mesh.users == 0:
            bpy.data.meshes.remove(mesh)
    if mod is None:     # (the modifier deleted by hand: its group left without a user)
        groups += [ng for ng in bpy.data.node_groups if tree.is_deformer_tree(ng)]
    for ng in groups + tree.core_trees():  # the core once its wrappers are gone
        _remove_group(ng, groups_before)
    for name in () if shared else tree.MESH_ATTRS + tree.LEGACY_MESH_ATTRS + (tree.ATTR_PRE,):
        if name in obj.data.attributes:
            obj.data.attributes.remove(obj.data.attributes[name])


def find_input(obj):
    """The deformer's input modifier on ``obj`` (before the Armature modifier), or ``None``."""
    for mod in obj.modifiers:
        if mod.type == "NODES" and tree.is_input_tree(mod.node_group):
            return mod
    return None


def has_leftovers(obj):
    """``obj`` has no deformer, yet what it added is there: an Armature modifier that still skips
    the vertices of the skip group (the deformer's modifier deleted by hand), or its helper (with
    the mesh's attributes and skip group, after *Convert to Mesh* or the modifiers applied; a mesh
    baked from the deformed one carries the attributes but no helper): :func:`remove` clears them."""
    if find(obj)[0] is not None or obj.data.library is not None or obj.data.override_library is not None:
        return False    # (the library's data: a change would not be kept)
    return bool(_masked(obj)) or _leftover_helper(obj) is not None or _left_on_mesh(obj)


def _leftover_helper(obj):
    """A helper of ``obj``'s deformer that no deformer uses any more."""
    return next((c for c in obj.children if c.type == "MESH" and tree.ATTR_REST_INV in c.data.attributes
                 and not _helper_users(c)), None)


def check_local(obj, baking_keys=False):
    """``data.DataError`` unless what the deformer writes into ``obj`` stays with this file: Add
    writes attributes and a vertex group into the mesh and links a helper beside it (refused on a
    linked object or a library override: the mesh data is the library's); Bake into shape keys
    (``baking_keys``) writes into the mesh data."""
    mesh = obj.data
    if baking_keys:
        data.check_mesh_local(obj, "shape keys baked into it", "bake as Meshes, or in the library's file")
        return
    if obj.library is not None or obj.override_library is not None or mesh.library is not None:
        raise data.DataError(f"'{obj.name}' is linked or a library override: the deformer's data (mesh attributes, a "
                             "helper object) would not be kept with this file; add the deformer in the library's file")


def check_own(obj):
    """``data.DataError`` for an object linked from a library (not an override): its deformer is the
    library's, and what Remove or Toggle would change there comes back when the file is opened."""
    if obj.library is not None:
        raise data.DataError(f"'{obj.name}' is linked from the library '{obj.library.name}': its deformer is the "
                             "library's (changed here, it comes back when the file is opened again); make it a "
                             "library override or local first, or change it in the library's file")


def from_library(obj, mod):
    """Whether ``obj`` is a library override whose deformer ``mod`` comes from the library."""
    return obj.override_library is not None and mod.is_override_data


def remove(obj):
    """Remove the deformer of ``obj`` (both modifiers, unused node groups, helper, its attributes,
    auto-derived SDEF attributes) and give a taken-over mmd_tools SDEF binding back; with no
    deformer but what it left (:func:`has_leftovers`), clear that."""
    check_own(obj)
    mod, helper = find(obj)
    if mod is None:
        if has_leftovers(obj):  # the deformer's modifier deleted by hand, the mesh converted or joined: the rest goes
            helper = _leftover_helper(obj)
            state = _taken_over_state(helper)
            _cleanup(obj, None, helper, find_input(obj))
            if state:
                mmd.restore(obj, state)
            remove_orphan_helpers()
            obj.update_tag()
            return
        raise data.DataError(f"'{obj.name}' has no JointLimit deformer")
    if from_library(obj, mod):
        raise data.DataError(f"'{obj.name}' is a library override whose deformer comes from the library: removed "
                             "here it would come back when the file is opened again; switch it off with Toggle, "
                             "or remove it in the library's file")
    helper = helper if isinstance(helper, bpy.types.Object) else None
    state = _taken_over_state(helper)
    _cleanup(obj, mod, helper, find_input(obj))
    if state:
        mmd.restore(obj, state)
    obj.update_tag()


def remove_orphan_helpers():
    """Remove the bone-frames helpers with no mesh left to deform (the mesh deleted, or joined into
    another): no parent, and no deformer uses them."""
    for helper in [o for o in bpy.data.objects if o.type == "MESH" and o.parent is None and o.library is None
                   and tree.ATTR_REST_INV in o.data.attributes and not _helper_users(o)]:
        mesh = helper.data
        bpy.data.objects.remove(helper)
        if mesh.users == 0:
            bpy.data.meshes.remove(mesh)


def _taken_over_state(helper):
    """The mmd_tools SDEF binding ``add`` took over, as kept on the helper (``None``)."""
    state = helper.get(mmd.STATE_PROP) if helper is not None else None
    return state.to_dict() if hasattr(state, "to_dict") else state


def set_mode(obj, mode):
    """Switch the deformer's mode input (``'LBS'``, ``'SBS'``, ``'SDEF'``, ``'BEZIER'``) and, while
    it is on, let the Armature modifier skip the two-bone vertices or not, whichever is cheaper in
    that mode (:func:`_configure`; editing the input in the modifier panel gives the same result)."""
    mod, helper = find(obj)
    if mod is None:
        raise data.DataError(f"'{obj.name}' has no JointLimit deformer")
    if mode not in tree.MODE_VALUES:
        raise data.DataError(f"unknown mode {mode!r}")
    compat.set_modifier_input(mod, tree.input_id(mod.node_group, tree.MODE_INPUT), tree.MODE_VALUES[mode])
    if mod.show_viewport:
        _reconfigure(obj, mod, helper)
    obj.update_tag()


def get_mode(mod):
    """The deformer's Mode as the tree takes it: a value a script or driver set outside the modes
    is the nearest end (LBS below, Bezier above)."""
    value = compat.modifier_input(mod, tree.input_id(mod.node_group, tree.MODE_INPUT))
    value = min(max(int(value), min(tree.MODE_VALUES.values())), max(tree.MODE_VALUES.values()))
    return {v: k for k, v in tree.MODE_VALUES.items()}[value]


def inputs_animated(obj):
    """Whether the deformer's inputs on ``obj`` (Mode, Blend) are keyed or driven."""
    mod = find(obj)[0]
    data = obj.animation_data
    if mod is None or data is None:
        return False
    prefix = f'modifiers["{bpy.utils.escape_identifier(mod.name)}"]'
    curves = [*compat.action_fcurves(data.action, data.action_slot), *data.drivers]
    return any(fc.data_path.startswith(prefix) for fc in curves)


def settings(obj):
    """``(mode, blend, strongest_two)`` of the deformer on ``obj`` (what it shows: a Blend a script
    or driver set outside [0, 1] clamped as the tree clamps it; a tree of an older version, which
    extrapolated it, gives it as set), or ``None``."""
    mod, helper = find(obj)
    if mod is None:
        return None
    blend = compat.modifier_input(mod, tree.input_id(mod.node_group, tree.BLEND_INPUT))
    options = helper.get(HELPER_OPTIONS) if helper is not None else None
    two = bool(options.get("strongest_two", False)) if options is not None else False
    blend = float(blend)
    if not tree.is_old_tree(mod.node_group):
        blend = clamp_blend(blend)
    return get_mode(mod), blend, two


def clamp_blend(blend):
    """A Blend input as the tree takes it: clamped to [0, 1] (NaN stays NaN)."""
    return blend if math.isnan(blend) else min(max(blend, 0.0), 1.0)


binding_conflict, check_updates, unchecked = watch.binding_conflict, watch.check_updates, watch.unchecked
