"""``pose.jointlimit_preset_save``: save the active bone's joint limit as a user preset (JSON)."""

import bpy
from bpy.props import StringProperty

from .. import bone_limits, presets
from ._common import ActiveBonePoll


def _rpt(template, **values):
    return bpy.app.translations.pgettext_rpt(template).format(**values)


class POSE_OT_jointlimit_preset_save(ActiveBonePoll, bpy.types.Operator):
    """Save the active bone's joint limit as a user preset, listed in the preset menu (kept for the left side: a right-side bone's limit is mirrored, so that the preset gives each side its own)"""

    bl_idname = "pose.jointlimit_preset_save"
    bl_label = "Save Joint Limit Preset"
    bl_options = {"REGISTER"}

    name: StringProperty(
        name="Name",
        description="Name of the preset (letters, digits, spaces and _ - ( ) .); a preset of the same name is replaced",
        default="",
    )

    def invoke(self, context, event):
        if not self.name:
            self.name = context.active_pose_bone.name
        return context.window_manager.invoke_props_dialog(self)

    def execute(self, context):
        pb = context.active_pose_bone
        try:    # (the one-line message every operator gives invalid settings)
            bone_limits.bone_limit(pb)
        except ValueError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        try:
            name = presets.check_name(self.name)
            replaced = name in presets.user_preset_names()
            entry = presets.entry_from_settings(pb.jointlimit)
            if presets.bone_on_right(pb):     # presets are written for the left side
                entry = presets.mirror_entry(entry)
            path = presets.save_user_preset(name, entry)
        except presets.PresetError as exc:
            self.report({"ERROR"}, exc.translated())
            return {"CANCELLED"}
        except OSError as exc:
            self.report({"ERROR"}, _rpt("Could not write the preset: {error}", error=exc.strerror or str(exc)))
            return {"CANCELLED"}
        template = "Replaced preset '{name}' ({path})" if replaced else "Saved preset '{name}' ({path})"
        self.report({"INFO"}, _rpt(template, name=name, path=str(path)))
        return {"FINISHED"}
