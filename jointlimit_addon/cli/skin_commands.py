"""Commands on skinned meshes: deformer-add, deformer-remove, deformer-bake, sdef-derive."""

import bpy

from .. import deformer
from ..deformer import derive
from .common import Outcome, UsageError
from .scene import active_in_mode, deformer_of, frame_progress, frames_of, pick_meshes, run_op, scene_objects


def has_deformer(obj):
    return deformer_of(obj)[0] is not None


def check_input(label, obj, kind, source="AUTO", strongest_two=False, taken_over=False, baking_keys=False, mode=None):
    """What the operator of ``kind`` (``add``, ``bake``, ``derive``) would refuse in ``obj`` as
    input the user must fix, as a usage error (exit 2) before any work: no Armature modifier with
    an armature, a scale the deformer cannot follow, no two-bone vertex; for Add and Bake also a
    modifier stack it cannot follow and SDEF data missing or not finite (Add derives what a mesh
    lacks with ``AUTO``; a Bake in ``mode`` LBS needs none: the Armature modifier's). A mesh whose
    mmd_tools binding is ``taken_over`` is checked as the operator finds it after unbinding it:
    unbound for the check, bound again right after."""
    bound = deformer.mmd.binding(obj) if taken_over else None
    state = None
    try:
        state = deformer.mmd.take_over(obj, bound) if bound is not None else None
        _check(label, obj, kind, source, strongest_two, baking_keys, mode)
    finally:
        if state is not None:
            deformer.mmd.restore(obj, state)


def _check(label, obj, kind, source, strongest_two, baking_keys=False, mode=None):
    data = deformer.data
    try:
        if kind == "add" or baking_keys:
            deformer.check_local(obj, baking_keys)
        elif kind == "derive":
            derive.check_local(obj)
        mod = data.require_armature(obj)
        data.check_uniform_scale(obj, mod.object)
        data.check_mmd_complete(obj, source)
        lacking = source == "AUTO" and data.lacks_sdef(obj)
        if kind == "add":
            data.check_not_mirrored(obj, mod.object)
        if kind == "derive" or (kind == "add" and lacking):
            if kind == "add":
                data.check_modifiers(obj, mod)
            data.two_bone_vertices(obj, mod.object, strongest_two)
        else:   # (as the operator asks)
            deformer.prepare(obj, source, strongest_two, need_sdef=data.bake_needs_sdef(obj, mode))
    except data.DataError as exc:
        raise UsageError(f"{label}: {exc}") from None


def cmd_deformer_add(args):
    meshes = pick_meshes(args.mesh)
    having = [o for o in meshes if has_deformer(o)]
    if having and (args.mesh or len(having) == len(meshes)):
        raise UsageError(f"{', '.join(repr(o.name) for o in having)} already "
                         f"{'has' if len(having) == 1 else 'have'} the JointLimit deformer "
                         f"({deformer_of(having[0])[0].name!r}); remove it first or name other meshes with --mesh")
    meshes = [o for o in meshes if o not in having]
    bound = [o for o in meshes if deformer.mmd.binding(o) is not None]
    if bound and not args.take_over:
        raise UsageError(f"{', '.join(repr(o.name) for o in bound)} {'is' if len(bound) == 1 else 'are'} bound by "
                         "mmd_tools' SDEF: pass --take-over to unbind it while the deformer is on")
    for obj in meshes:
        check_input(f"deformer-add {obj.name!r}", obj, "add", args.source.upper(), args.strongest_two, obj in bound)
    for obj in meshes:
        with active_in_mode(obj, "OBJECT"):
            run_op(bpy.ops.object.jointlimit_deformer_add, f"deformer-add {obj.name!r}", mode=args.mode.upper(),
                   source=args.source.upper(), blend=args.blend, take_over=args.take_over,
                   strongest_two=args.strongest_two, use_selected=False)
    skipped = f"; skipped {', '.join(o.name for o in having)} (already with the deformer)" if having else ""
    return Outcome(f"added the {args.mode.upper()} deformer to {', '.join(o.name for o in meshes)}{skipped}",
                   objects=[o.name for o in meshes])


def cmd_deformer_remove(args):
    if args.mesh:
        meshes = pick_meshes(args.mesh)
    else:   # (also a deformer whose Armature modifier was deleted)
        meshes = [o for o in scene_objects("MESH") if has_deformer(o) or deformer.has_leftovers(o)]
        if not meshes:
            raise UsageError("no mesh in the scene has the JointLimit deformer")
    without = [o for o in meshes if not has_deformer(o) and not deformer.has_leftovers(o)]
    if without and (args.mesh or len(without) == len(meshes)):
        raise UsageError(f"{', '.join(repr(o.name) for o in without)} "
                         f"{'has' if len(without) == 1 else 'have'} no JointLimit deformer")
    meshes = [o for o in meshes if o not in without]
    for obj in meshes:
        with active_in_mode(obj, "OBJECT"):
            run_op(bpy.ops.object.jointlimit_deformer_remove, f"deformer-remove {obj.name!r}", use_selected=False)
    return Outcome(f"removed the deformer from {', '.join(o.name for o in meshes)}", objects=[o.name for o in meshes])


def mmd_bound(obj):
    """mmd_tools' SDEF binding of ``obj`` deforms its SDEF vertices (its skinning key plays, or its
    mask keeps them from the Armature modifier)."""
    bound = deformer.mmd.binding(obj)
    return bound is not None and (not bound[0].mute or bound[1] is not None)


def cmd_deformer_bake(args):
    meshes = pick_meshes(args.mesh)
    bound = [o for o in meshes if mmd_bound(o)]
    if bound:
        raise UsageError(f"{', '.join(repr(o.name) for o in bound)} {'is' if len(bound) == 1 else 'are'} bound by "
                         "mmd_tools' SDEF: run deformer-add --take-over first (or unbind it in mmd_tools)")
    if args.mute_modifiers and args.bake_as == "meshes":
        raise UsageError("--mute-modifiers works with --as shape-keys only: baked meshes do not play on the object, "
                         "which would stay in its rest pose")
    start, end = frames_of(args, 1)
    for obj in meshes:
        kept = deformer.settings(obj)
        check_input(f"deformer-bake {obj.name!r}", obj, "bake", args.source.upper(),
                    args.strongest_two or (kept is not None and kept[2]), baking_keys=args.bake_as == "shape-keys",
                    mode=bake_mode(obj, args.mode))
    done = []
    chosen = {name: value for name, value in (("mode", args.mode and args.mode.upper()), ("blend", args.blend),
                                              ("strongest_two", args.strongest_two or None)) if value is not None}
    for obj in meshes:      # (what is not given, the operator takes from the mesh's deformer)
        mode = bake_mode(obj, args.mode)
        with active_in_mode(obj, "OBJECT"), frame_progress(f"deformer-bake {obj.name}", end - start + 1):
            run_op(bpy.ops.object.jointlimit_deformer_bake, f"deformer-bake {obj.name!r}", use_scene_range=False,
                   frame_start=start, frame_end=end, source=args.source.upper(),
                   output=args.bake_as.upper().replace("-", "_"), mute_modifiers=args.mute_modifiers,
                   use_selected=False, **chosen)
        done.append(f"{obj.name} ({mode})")
    return Outcome(f"baked frames {start}..{end} of {', '.join(done)} as {args.bake_as}",
                   objects=[o.name for o in meshes])


def bake_mode(obj, mode):
    if mode:
        return mode.upper()
    mod = deformer_of(obj)[0]
    return deformer.get_mode(mod) if mod is not None else "SDEF"


def sdef_derive_options(args):
    """The operator's properties from the command line (one place to add an option)."""
    return {"centre": args.centre, "boundary": args.boundary, "pad": args.pad, "write_mmd": args.write_mmd,
            "strongest_two": args.strongest_two, "use_selected": False}


def cmd_sdef_derive(args):
    meshes = pick_meshes(args.mesh)
    options = sdef_derive_options(args)
    for obj in meshes:
        check_input(f"sdef-derive {obj.name!r}", obj, "derive", strongest_two=args.strongest_two)
    for obj in meshes:
        with active_in_mode(obj, "OBJECT"):
            run_op(bpy.ops.object.jointlimit_sdef_derive, f"sdef-derive {obj.name!r}", **options)
    return Outcome(f"derived SDEF parameters of {', '.join(o.name for o in meshes)}",
                   objects=[o.name for o in meshes])
