"""Commands on skinned meshes: deformer-add, deformer-bake, sdef-derive."""

import bpy

from .. import deformer
from .common import Outcome, UsageError
from .scene import active_in_mode, deformer_of, frame_progress, frames_of, pick_meshes, run_op


def has_deformer(obj):
    return deformer_of(obj)[0] is not None


def cmd_deformer_add(args):
    meshes = pick_meshes(args.mesh)
    having = [o for o in meshes if has_deformer(o)]
    if having and (args.mesh or len(having) == len(meshes)):
        raise UsageError(f"{', '.join(repr(o.name) for o in having)} already "
                         f"{'has' if len(having) == 1 else 'have'} the JointLimit deformer "
                         f"({deformer_of(having[0])[0].name!r}); remove it first or name other meshes with --mesh")
    meshes = [o for o in meshes if o not in having]
    for obj in meshes:
        with active_in_mode(obj, "OBJECT"):
            run_op(bpy.ops.object.jointlimit_deformer_add, f"deformer-add {obj.name!r}", mode=args.mode.upper(),
                   source=args.source.upper(), blend=args.blend, use_selected=False)
    return Outcome(f"added the {args.mode.upper()} deformer to {', '.join(o.name for o in meshes)}",
                   objects=[o.name for o in meshes])


def cmd_deformer_bake(args):
    meshes = pick_meshes(args.mesh)
    start, end = frames_of(args, 1)
    done = []
    for obj in meshes:
        mode = bake_mode(obj, args.mode)
        with active_in_mode(obj, "OBJECT"), frame_progress(f"deformer-bake {obj.name}", end - start + 1):
            run_op(bpy.ops.object.jointlimit_deformer_bake, f"deformer-bake {obj.name!r}", use_scene_range=False,
                   frame_start=start, frame_end=end, mode=mode, source=args.source.upper(), blend=args.blend,
                   output=args.bake_as.upper().replace("-", "_"), mute_modifiers=args.mute_modifiers,
                   use_selected=False)
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
            "use_selected": False}


def cmd_sdef_derive(args):
    meshes = pick_meshes(args.mesh)
    options = sdef_derive_options(args)
    for obj in meshes:
        with active_in_mode(obj, "OBJECT"):
            run_op(bpy.ops.object.jointlimit_sdef_derive, f"sdef-derive {obj.name!r}", **options)
    return Outcome(f"derived SDEF parameters of {', '.join(o.name for o in meshes)}",
                   objects=[o.name for o in meshes])
