"""One operator per module; this package registers them all."""

import bpy

from .info import WM_OT_jointlimit_info

classes = (WM_OT_jointlimit_info,)
register, unregister = bpy.utils.register_classes_factory(classes)
