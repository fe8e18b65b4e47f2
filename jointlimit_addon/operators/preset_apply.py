"""``pose.jointlimit_preset_apply``: set joint limits on the selected bones from a preset."""

import bpy
from bpy.props import BoolProperty, EnumProperty, StringProperty

from .. import bone_limits, presets, rig_frame, settings_io
from ..chains import predecessor
from ._common import PosePoll, limitable_selection, name_list, report_count, report_rest_pose


def _rpt(template, **values):
    return bpy.app.translations.pgettext_rpt(template).format(**values)


def _axis_name(vector):
    """``+X`` ... ``-Z`` of an armature axis (the nearest)."""
    i = max(range(3), key=lambda k: abs(vector[k]))
    return ("+" if vector[i] > 0 else "-") + "XYZ"[i]


class POSE_OT_jointlimit_preset_apply(PosePoll, bpy.types.Operator):
    """Set the selected bones' joint limits from a preset (right-side bones get the mirrored ranges)"""

    bl_idname = "pose.jointlimit_preset_apply"
    bl_label = "Apply Joint Limit Preset"
    bl_options = {"REGISTER", "UNDO"}

    preset: StringProperty(
        name="Preset",
        description="JOINT:<key> or CHAIN:<key> of the built-in table, or USER:<name> of a saved preset",
        default="",
    )
    mirror_right: BoolProperty(
        name="Mirror Right Side",
        description="Give right-side bones (.R, _R, Right) the mirrored ranges of the left-side preset",
        default=True,
    )
    fit_rig: BoolProperty(
        name="Fit to Rig",
        description="Put flexion and abduction on the local axes that bend each bone that way in this rig "
                    "(from its rest pose: character front, bone roll, T- or A-pose) instead of local X and Z",
        default=True,
    )
    up: EnumProperty(
        name="Up",
        description="Which way is up for the character, in armature space (a Y-up import has its armature data Y-up "
                    "and its object turned)",
        items=(("AUTO", "Auto", "From the rig: the axis its legs (two or four) run against at rest, else +Z"),
               ("POS_Z", "+Z Up", "Up is +Z (Blender's convention)"),
               ("POS_Y", "+Y Up", "Up is +Y (a Y-up import, e.g. Mixamo's FBX)"),
               ("NEG_Y", "-Y Up", "Up is -Y"),
               ("NEG_Z", "-Z Up", "Up is -Z"),
               ("POS_X", "+X Up", "Up is +X"),
               ("NEG_X", "-X Up", "Up is -X")),
        default="AUTO",
    )
    front: EnumProperty(
        name="Front",
        description="Which way the character faces, in armature space (across Up)",
        items=(("AUTO", "Auto", "From the rig: where knees bend to and elbows away from, else (or where more feet say "
                                "the opposite) where the feet point"),
               ("NEG_Y", "Toward -Y", "The character faces -Y (Blender's convention)"),
               ("POS_Y", "Toward +Y", "The character faces +Y"),
               ("NEG_X", "Toward -X", "The character faces -X"),
               ("POS_X", "Toward +X", "The character faces +X"),
               ("POS_Z", "Toward +Z", "The character faces +Z (a Y-up import)"),
               ("NEG_Z", "Toward -Z", "The character faces -Z")),
        default="AUTO",
    )
    flip_x: BoolProperty(
        name="Flip Flexion",
        description="Reverse the bend about local X, for rigs whose bones bend the other way round X",
        default=False,
    )

    @classmethod
    def description(cls, context, properties):
        tip = presets.preset_label(properties.preset)[1] if properties.preset else cls.__doc__
        return bpy.app.translations.pgettext_tip(tip)

    def _plan(self, bones):
        """``[(pose bone, entry, built-in joint key or None)]``."""
        group, _, ident = self.preset.partition(":")
        if group == "JOINT":
            entry = presets.builtin_entry(ident)
            return [(pb, entry, ident) for pb in bones]
        if group == "CHAIN":
            return [(pb, presets.builtin_entry(key), key) for pb, key in presets.chain_plan(bones, ident)]
        if group == "USER":
            entry = presets.load_user_preset(ident)
            return [(pb, entry, None) for pb in bones]
        raise presets.PresetError("Unknown preset '{preset}'", preset=self.preset)

    def _warn_four_legged(self, plan, frames):
        """Say which elbows and knees rest bent against the flexion they were given (the joint
        bends the other way: a four-legged rig's front legs, a bird's backward 'knee'), and which
        human wrists and ankles stand as a four-legged rig's carpus or hock, whose hinges fit."""
        def label(key):
            return bpy.app.translations.pgettext_iface(presets.JOINTS[key]["label"])

        against, standing, knees_against = [], [], set()
        for pb, _, joint in plan:
            angle = presets.bent_against(pb, joint, self.mirror_right, *frames[pb.id_data])
            if angle and joint == "KNEE":
                knees_against.add(pb.name)
            if angle and not self.flip_x:
                against.append(f"{pb.name} ({label(joint)}, {angle:.0f}°)")
            four_legged = presets.four_legged_joint(pb, joint, frames[pb.id_data][1])
            if four_legged == "HOCK" and getattr(predecessor(pb)[0], "name", None) in knees_against:
                four_legged = "CARPUS"  # below a knee that bends like an elbow: a front foot
            if four_legged:
                standing.append(f"{pb.name} ({label(joint)} → {label(four_legged)})")
        if against:
            self.report({"WARNING"}, _rpt(
                "{bones} rest bent against the way the preset flexes them: they bend the other way. A four-legged "
                "rig's front legs take the Front Leg preset and its hind legs the Hind Leg preset (Four-Legged); a "
                "bird's backward 'knee', its ankle, takes the Hock preset on that bone alone; else set Front if the "
                "character does not face the front used", bones=name_list(against)))
        if standing:
            self.report({"WARNING"}, _rpt(
                "{bones} stand as a four-legged rig's carpus or hock, where the human ranges bend them far past "
                "straight: the Front Leg and Hind Leg presets (Four-Legged) give them the Carpus and Hock hinges",
                bones=name_list(standing)))

    def execute(self, context):
        bones, mechanism = limitable_selection(context)
        if not bones:
            self.report({"ERROR"}, _rpt("Select the bones to set") + bone_limits.skipped_text(mechanism))
            return {"CANCELLED"}
        rigs = {}   # each rig in Pose Mode: its bones, its own up and front
        for pb in bones:
            rigs.setdefault(pb.id_data, []).append(pb)
        frames = {}
        for rig in rigs:
            up = rig_frame.character_up(rig.data, self.up)[0]
            try:
                frames[rig] = (rig_frame.character_front(rig.data, self.front, up)[0] if self.fit_rig else None), up
            except ValueError:
                self.report({"ERROR"}, _rpt("Front and Up are the same axis of the rig: choose a front across its up "
                                            "axis"))
                return {"CANCELLED"}
        try:
            plan = [item for rig_bones in rigs.values() for item in self._plan(rig_bones)]
            for pb, entry, _ in plan:     # (before any change)
                if "outline" in entry and pb.id_data.override_library is not None:
                    settings_io.check_outline_editable(pb.jointlimit)
        except ValueError as exc:   # (PresetError included)
            self.report({"ERROR"}, exc.translated() if isinstance(exc, presets.PresetError) else str(exc))
            return {"CANCELLED"}
        try:
            mirrored = sum(presets.apply_entry(pb, entry, self.mirror_right, self.flip_x, joint, *frames[pb.id_data])
                           for pb, entry, joint in plan)
        except presets.PresetError as exc:
            self.report({"ERROR"}, exc.translated())
            return {"CANCELLED"}
        skipped = bone_limits.skipped_text(mechanism)
        label = bpy.app.translations.pgettext_iface(presets.preset_label(self.preset)[0])
        if self.preset.startswith("CHAIN:"):  # say which bone got which joint
            joints = ", ".join(f"{pb.name}: {bpy.app.translations.pgettext_iface(presets.JOINTS[key]['label'])}"
                               for pb, _, key in plan)
            self.report({"INFO"}, report_count(
                "Set 1 bone from '{preset}' ({mirrored} mirrored for the right side): {joints}",
                "Set {count} bones from '{preset}' ({mirrored} mirrored for the right side): {joints}", len(plan),
                preset=label, mirrored=mirrored, joints=joints) + skipped)
        elif len(plan) == 1:
            self.report({"INFO"}, _rpt("Set 1 bone from '{preset}' ({mirrored} mirrored for the right side)",
                                       preset=label, mirrored=mirrored) + skipped)
        else:
            self.report({"INFO"}, _rpt("Set {count} bones from '{preset}' ({mirrored} mirrored for the right side)",
                                       count=len(plan), preset=label, mirrored=mirrored) + skipped)
        if self.fit_rig and "AUTO" in (self.front, self.up):
            self.report({"INFO"}, _rpt("Fitted to the front and up found in each rig ({frames}): set Front or Up if "
                                       "that is not the character's",
                                       frames="; ".join(f"{rig.name}: front {_axis_name(front)}, up {_axis_name(up)}"
                                                        for rig, (front, up) in frames.items())))
        mechanism = bone_limits.animator_bones([pb for pb, _, _ in plan])[1]
        if mechanism:
            self.report({"WARNING"}, _rpt(
                "{bones} count as rig mechanism (a constraint of the rig turns them, or they are hidden): Clamp "
                "Playback clamps them, but All Limited Bones leaves them to the rig (select them for Apply and Bake)",
                bones=name_list(mechanism)))
        if self.fit_rig:
            self._warn_four_legged(plan, frames)
        unkept = [pb.name for pb, _, _ in plan if settings_io.unkept_on_override(pb)]
        if unkept:
            self.report({"WARNING"}, _rpt(settings_io.UNKEPT, bones=name_list(unkept)))
        report_rest_pose(self, [item[0] for item in plan])
        return {"FINISHED"}
