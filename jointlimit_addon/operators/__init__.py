"""One operator per module; this package registers them all."""

import bpy

from .apply import POSE_OT_jointlimit_apply
from .bake import POSE_OT_jointlimit_bake
from .ccd_ik import POSE_OT_jointlimit_ccd_ik
from .copy import POSE_OT_jointlimit_copy
from .deformer_add import OBJECT_OT_jointlimit_deformer_add
from .deformer_bake import OBJECT_OT_jointlimit_deformer_bake
from .deformer_remove import OBJECT_OT_jointlimit_deformer_remove
from .deformer_toggle import OBJECT_OT_jointlimit_deformer_toggle
from .from_constraints import POSE_OT_jointlimit_from_constraints
from .info import WM_OT_jointlimit_info
from .limb_ik import POSE_OT_jointlimit_limb_ik
from .mirror import POSE_OT_jointlimit_mirror
from .motion import POSE_OT_jointlimit_motion
from .outline_edit import POSE_OT_jointlimit_outline_edit
from .preset_apply import POSE_OT_jointlimit_preset_apply
from .preset_save import POSE_OT_jointlimit_preset_save
from .sdef_derive import OBJECT_OT_jointlimit_sdef_derive
from .to_constraints import POSE_OT_jointlimit_to_constraints

classes = (
    WM_OT_jointlimit_info,
    POSE_OT_jointlimit_apply,
    POSE_OT_jointlimit_bake,
    POSE_OT_jointlimit_from_constraints,
    POSE_OT_jointlimit_to_constraints,
    POSE_OT_jointlimit_copy,
    POSE_OT_jointlimit_mirror,
    POSE_OT_jointlimit_outline_edit,
    POSE_OT_jointlimit_preset_apply,
    POSE_OT_jointlimit_preset_save,
    POSE_OT_jointlimit_limb_ik,
    POSE_OT_jointlimit_motion,
    POSE_OT_jointlimit_ccd_ik,
    OBJECT_OT_jointlimit_sdef_derive,
    OBJECT_OT_jointlimit_deformer_add,
    OBJECT_OT_jointlimit_deformer_remove,
    OBJECT_OT_jointlimit_deformer_toggle,
    OBJECT_OT_jointlimit_deformer_bake,
)
register, unregister = bpy.utils.register_classes_factory(classes)
