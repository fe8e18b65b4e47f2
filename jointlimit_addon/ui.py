"""Panels (Bone properties, 3D viewport sidebar), the Pose menu entries and the Object menu's
deformer entries."""

import math

import bpy

from . import bone_limits, presets, settings_io
from .core.limits import SMOOTH_SHAPES
from .core.projection import swing_twist


def _iface(template):
    """A layout text's template translated before it is formatted (a formatted text matches no msgid)."""
    return bpy.app.translations.pgettext_iface(template)


def _deg(value):
    return f"{math.degrees(value):.1f}°"


def draw_readout(layout, pb):
    """The active bone's current (s, t, twist) and whether it is inside its limit."""
    try:
        q = bone_limits.read_rotation(pb)
    except ValueError as exc:
        layout.label(text=str(exc), icon="ERROR")
        return
    s, t, psi = (float(v) for v in swing_twist(q))
    col = layout.column(align=True)
    col.label(text=f"s {s:+.3f}   t {t:+.3f}   " + _iface("twist {twist}").format(twist=_deg(psi)), translate=False)
    limit, error = bone_limits.cached_limit(pb.jointlimit)
    if error:
        return
    inside = bone_limits.bone_inside(pb, limit, q)
    col.label(text="Inside the limit" if inside else "Outside the limit", icon="CHECKMARK" if inside else "ERROR")


def _range_row(layout, settings, lo, hi, label, show_tan):
    row = layout.row(align=True)
    row.prop(settings, lo, text=f"{label} Min")
    row.prop(settings, hi, text="Max")
    if show_tan:
        a, b = getattr(settings, lo), getattr(settings, hi)
        letter = "s" if "z" in lo else "t"
        layout.label(text=f"{letter}: {math.tan(a / 2):+.3f} … {math.tan(b / 2):+.3f}")


def draw_outline(layout, settings):
    box = layout.box()
    box.label(text=_iface("Outline ({count} vertices)").format(count=len(settings.outline)), translate=False)
    for i, point in enumerate(settings.outline):
        row = box.row(align=True)
        row.label(text=f"{i}", icon="RADIOBUT_ON" if i == settings.outline_index else "RADIOBUT_OFF")
        row.prop(point, "swing_z", text="Z")
        row.prop(point, "swing_x", text="X")
        row.prop(point, "bulge", text="Bulge")
    row = box.row(align=True)
    row.prop(settings, "outline_index", text="Active")
    row.operator("pose.jointlimit_outline_edit", text="", icon="ADD").action = "ADD"
    row.operator("pose.jointlimit_outline_edit", text="", icon="REMOVE").action = "REMOVE"
    box.operator("pose.jointlimit_outline_edit", text="Outline from Ranges").action = "FROM_RANGES"


def draw_settings(layout, pb):
    """The settings of one pose bone, with a visible message when they are invalid."""
    settings = pb.jointlimit
    layout.prop(settings, "enabled")
    col = layout.column()
    col.active = settings.enabled
    col.prop(settings, "kind")
    kind = settings.kind
    if kind == "SWING_TWIST":
        col.prop(settings, "shape")
        if settings.shape in SMOOTH_SHAPES:
            col.prop(settings, "fit")
        col.prop(settings, "correction")
        if settings.shape == "POLYGON":
            draw_outline(col, settings)
        else:
            _range_row(col, settings, "swing_x_min", "swing_x_max", "Swing X", True)
            _range_row(col, settings, "swing_z_min", "swing_z_max", "Swing Z", True)
        if settings.shape == "SUPERELLIPSE":
            col.prop(settings, "exponent")
    elif kind == "HINGE":
        col.prop(settings, "hinge_axis")
        _range_row(col, settings, "hinge_min", "hinge_max", "Hinge", False)
    elif kind in ("EULER", "EULER_MULTI"):
        col.prop(settings, "euler_order")
        col.prop(settings, "euler_min")
        col.prop(settings, "euler_max")
    else:
        col.prop(settings, "quat_swing_max")
    if kind in ("SWING_TWIST", "QUAT_SWING"):
        row = col.row(align=True)
        row.prop(settings, "use_twist_limit")
        if kind == "SWING_TWIST":
            row.prop(settings, "fix_twist")
        if settings.use_twist_limit and not settings.fix_twist:
            _range_row(col, settings, "twist_min", "twist_max", "Twist", False)
    error = bone_limits.settings_error(settings)
    if error:
        box = col.box()
        box.alert = True
        box.label(text=error, icon="ERROR")
    elif settings.enabled:
        draw_rest_warning(col, settings)


def draw_rest_warning(layout, settings):
    """The rest-pose warning of ``bone_limits.rest_pose_warning``, in red, when there is one."""
    text = bone_limits.rest_pose_message(settings, bpy.app.translations.pgettext_iface)
    if text:
        box = layout.box()
        box.alert = True
        box.label(text=text, icon="ERROR", translate=False)


def draw_overlay_settings(layout, scene_settings):
    """The viewport overlay's toggles (Show Limits, which bones, cone, twist, opacity, size)."""
    box = layout.box()
    box.prop(scene_settings, "show_overlay", icon="HIDE_OFF" if scene_settings.show_overlay else "HIDE_ON")
    col = box.column(align=True)
    col.active = scene_settings.show_overlay
    col.row(align=True).prop(scene_settings, "overlay_bones", expand=True)
    row = col.row(align=True)
    row.prop(scene_settings, "overlay_cone", toggle=True)
    row.prop(scene_settings, "overlay_twist", toggle=True)
    col.prop(scene_settings, "overlay_opacity", slider=True)
    col.prop(scene_settings, "overlay_size")


def draw_operators(layout):
    layout.menu("POSE_MT_jointlimit_presets", icon="PRESET")
    col = layout.column(align=True)
    col.operator("pose.jointlimit_apply", icon="CON_ROTLIMIT")
    col.operator("pose.jointlimit_bake", icon="KEYINGSET")
    col.operator("pose.jointlimit_copy", icon="COPYDOWN")
    col.operator("pose.jointlimit_mirror", icon="MOD_MIRROR")
    col.operator("pose.jointlimit_from_constraints", icon="IMPORT")
    col.operator("pose.jointlimit_to_constraints", icon="EXPORT")


def draw_tools(layout):
    """The posing tools: IK on a limb or a chain, smooth motion between key poses."""
    col = layout.column(align=True)
    col.operator("pose.jointlimit_limb_ik", icon="CON_KINEMATIC")
    col.operator("pose.jointlimit_ccd_ik", icon="CON_SPLINEIK")
    col.operator("pose.jointlimit_motion", icon="IPO_EASE_IN_OUT")


def draw_deformer_operators(layout):
    col = layout.column(align=True)
    col.operator("object.jointlimit_sdef_derive", icon="MOD_VERTEX_WEIGHT")
    col.operator("object.jointlimit_deformer_add", icon="MOD_ARMATURE")
    col.operator("object.jointlimit_deformer_remove", icon="X")
    col.operator("object.jointlimit_deformer_toggle", icon="HIDE_OFF")
    col.operator("object.jointlimit_deformer_bake", icon="SHAPEKEY_DATA")


class BONE_PT_jointlimit(bpy.types.Panel):
    bl_label = "Joint Limit"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "bone"
    bl_options = {"DEFAULT_CLOSED"}

    @classmethod
    def poll(cls, context):
        return context.active_pose_bone is not None

    def draw(self, context):
        draw_settings(self.layout, context.active_pose_bone)


class VIEW3D_PT_jointlimit(bpy.types.Panel):
    bl_label = "Joint Limits"
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "JointLimit"

    @classmethod
    def poll(cls, context):
        return context.mode == "POSE"

    def draw(self, context):
        layout = self.layout
        scene_settings = context.scene.jointlimit
        row = layout.row(align=True)
        row.prop(scene_settings, "live", toggle=True)
        row.prop(scene_settings, "clamp_playback", toggle=True)
        if scene_settings.clamp_playback:
            layout.prop(scene_settings, "fast_scrubbing")
        if scene_settings.clamp_playback and not context.scene.render.use_lock_interface:
            warning = layout.row()
            warning.alert = True
            warning.prop(context.scene.render, "use_lock_interface", text="Lock Interface (renders are clamped only with it)")
        draw_overlay_settings(layout, scene_settings)
        pb = context.active_pose_bone
        if pb is None:
            layout.label(text="No active bone")
        else:
            layout.label(text=pb.name, icon="BONE_DATA")
            if settings_io.unkept_on_override(pb):
                box = layout.box()
                box.alert = True
                box.label(text="Not kept on reopening: the library file stores no limits", icon="ERROR")
                box.label(text="(saved without JointLimit): open and save it with JointLimit")
            draw_settings(layout, pb)
            if pb.jointlimit.enabled:
                draw_readout(layout.box(), pb)
        draw_operators(layout)
        draw_tools(layout)


class POSE_MT_jointlimit_presets(bpy.types.Menu):
    bl_label = "Joint Limit Presets"

    def draw(self, context):
        presets.draw_menu(self.layout)


class POSE_MT_jointlimit(bpy.types.Menu):
    bl_label = "Joint Limits"

    def draw(self, context):
        draw_operators(self.layout)
        self.layout.separator()
        draw_tools(self.layout)


class OBJECT_MT_jointlimit_deformer(bpy.types.Menu):
    bl_label = "JointLimit Deformer"

    def draw(self, context):
        draw_deformer_operators(self.layout)


def draw_pose_menu(self, context):
    self.layout.separator()
    self.layout.menu("POSE_MT_jointlimit")


def draw_object_menu(self, context):
    self.layout.separator()
    self.layout.menu("OBJECT_MT_jointlimit_deformer")


classes = (BONE_PT_jointlimit, VIEW3D_PT_jointlimit, POSE_MT_jointlimit_presets, POSE_MT_jointlimit,
           OBJECT_MT_jointlimit_deformer)
_register_classes, _unregister_classes = bpy.utils.register_classes_factory(classes)


def register():
    _register_classes()
    bpy.types.VIEW3D_MT_pose.append(draw_pose_menu)
    bpy.types.VIEW3D_MT_object.append(draw_object_menu)


def unregister():
    bpy.types.VIEW3D_MT_object.remove(draw_object_menu)
    bpy.types.VIEW3D_MT_pose.remove(draw_pose_menu)
    _unregister_classes()
