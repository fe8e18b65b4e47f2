"""Per-bone joint-limit settings: ``PoseBone.jointlimit`` (saved in the .blend)."""

import math

import bpy
from bpy.props import (
    BoolProperty,
    CollectionProperty,
    EnumProperty,
    FloatProperty,
    FloatVectorProperty,
    IntProperty,
    PointerProperty,
)

ANGLE_LIMIT = math.radians(179.0)

KIND_ITEMS = (
    ("SWING_TWIST", "Swing & Twist", "Swing limited on the stereographic (s, t) plane, twist about the bone"),
    ("HINGE", "Hinge", "One axis only (local X or Z: Hinge Axis), like an elbow or a knee"),
    ("EULER", "Euler", "Conventional per-axis Euler limits, with a gimbal guard on the middle axis"),
    ("EULER_MULTI", "Euler (Equivalent Ranges)", "Euler limits that accept any equivalent Euler triple"),
    ("QUAT_SWING", "Quaternion Swing", "Limit on the swing quaternion's components"),
)
SHAPE_ITEMS = (
    ("RECT", "Rectangle", "Rectangle on the (s, t) plane"),
    ("ELLIPSE", "Ellipse", "Ellipse fitted to the swing ranges (see Fit)"),
    ("OVAL", "Oval", "Stadium: two half circles joined by straight edges"),
    ("SUPERELLIPSE", "Superellipse", "Between the ellipse and the rectangle, set by the exponents"),
    ("POLYGON", "Polygon", "Outline of straight segments and circular arcs"),
)
FIT_ITEMS = (
    ("INSCRIBED", "Inscribed", "The paper's fit: the shape inside the rectangle of the ranges "
     "(with uneven ranges it misses the limits you typed and can leave out the rest pose)"),
    ("AXES", "Axes", "Each quarter has its own half-axes: the outline passes through all four axis limits "
     "and always holds the rest pose (ranges must contain 0°)"),
)
CORRECTION_ITEMS = (
    ("OPTIMAL", "Optimal", "Nearest allowed direction on the sphere (geodesic)"),
    ("SIMPLE", "Simple", "The paper's cheap correction on the plane (can jump for wide ranges)"),
)
OVERLAY_BONE_ITEMS = (
    ("SELECTED", "Selected", "Draw the limits of the selected limited bones"),
    ("ALL", "All", "Draw the limits of every limited bone of the armature"),
)
EULER_ORDER_ITEMS = tuple((o, o, f"Euler order {o}") for o in ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"))


def _angle(name, description, default=0.0, lo=-ANGLE_LIMIT, hi=ANGLE_LIMIT):
    return FloatProperty(
        name=name,
        description=description,
        default=default,
        min=lo,
        max=hi,
        subtype="ANGLE",
        unit="ROTATION",
        precision=1,
        step=100,
    )


class JointLimitOutlinePoint(bpy.types.PropertyGroup):
    """One vertex of a POLYGON outline, given as swing angles (s = tan(z/2), t = tan(x/2))."""

    swing_z: _angle("Swing Z", "Bend about local Z at this outline vertex (sets s)")
    swing_x: _angle("Swing X", "Bend about local X at this outline vertex (sets t)")
    bulge: FloatProperty(
        name="Bulge",
        description="Arc of the edge to the next vertex: 0 straight, 1 half circle, negative bends the other way",
        default=0.0,
        min=-10.0,
        max=10.0,
    )


class JointLimitSettings(bpy.types.PropertyGroup):
    """Limit settings of one pose bone."""

    enabled: BoolProperty(name="Enabled", description="Limit this bone's rotation", default=False)
    kind: EnumProperty(name="Kind", description="How the rotation is limited", items=KIND_ITEMS, default="SWING_TWIST")
    shape: EnumProperty(name="Shape", description="Shape of the allowed swing region", items=SHAPE_ITEMS, default="ELLIPSE")
    fit: EnumProperty(
        name="Fit",
        description="How an Ellipse, Oval or Superellipse meets the swing ranges",
        items=FIT_ITEMS,
        default="INSCRIBED",
    )
    correction: EnumProperty(
        name="Correction", description="How a rotation outside the limit is brought back", items=CORRECTION_ITEMS, default="OPTIMAL"
    )
    swing_x_min: _angle("Swing X Min", "Smallest bend about the bone's local X axis", math.radians(-45.0))
    swing_x_max: _angle("Swing X Max", "Largest bend about the bone's local X axis", math.radians(45.0))
    swing_z_min: _angle("Swing Z Min", "Smallest bend about the bone's local Z axis", math.radians(-45.0))
    swing_z_max: _angle("Swing Z Max", "Largest bend about the bone's local Z axis", math.radians(45.0))
    exponent: FloatVectorProperty(
        name="Exponent",
        description="Superellipse exponents (m for s, n for t); 2 is an ellipse, large values approach the rectangle",
        size=2,
        default=(4.0, 4.0),
        min=1.0,
        max=64.0,
    )
    use_twist_limit: BoolProperty(name="Limit Twist", description="Limit the twist about the bone's own axis", default=False)
    twist_min: _angle("Twist Min", "Smallest twist about the bone's local Y axis", math.radians(-30.0), -math.pi, math.pi)
    twist_max: _angle("Twist Max", "Largest twist about the bone's local Y axis", math.radians(30.0), -math.pi, math.pi)
    fix_twist: BoolProperty(name="Fix Twist", description="Keep the twist at zero", default=False)
    hinge_axis: EnumProperty(
        name="Hinge Axis",
        description="Local axis of a hinge joint",
        items=(("X", "X", "Bend about local X"), ("Z", "Z", "Bend about local Z")),
        default="X",
    )
    hinge_min: _angle("Hinge Min", "Smallest hinge angle about the Hinge Axis", math.radians(0.0), -math.pi, math.pi)
    hinge_max: _angle("Hinge Max", "Largest hinge angle about the Hinge Axis", math.radians(150.0), -math.pi, math.pi)
    euler_order: EnumProperty(name="Euler Order", description="Order of the Euler angles", items=EULER_ORDER_ITEMS, default="ZXY")
    euler_min: FloatVectorProperty(
        name="Euler Min",
        description="Smallest Euler angles (X, Y, Z)",
        size=3,
        subtype="EULER",
        unit="ROTATION",
        default=(math.radians(-45.0), math.radians(-30.0), math.radians(-45.0)),
        min=-math.pi,
        max=math.pi,
    )
    euler_max: FloatVectorProperty(
        name="Euler Max",
        description="Largest Euler angles (X, Y, Z)",
        size=3,
        subtype="EULER",
        unit="ROTATION",
        default=(math.radians(45.0), math.radians(30.0), math.radians(45.0)),
        min=-math.pi,
        max=math.pi,
    )
    outline: CollectionProperty(
        type=JointLimitOutlinePoint, name="Outline", description="Vertices of the POLYGON outline, in order"
    )
    outline_index: IntProperty(name="Active Outline Vertex", description="Selected outline vertex", default=0, min=0)
    quat_swing_max: _angle("Swing Max", "Largest swing angle of the quaternion-swing cone", math.radians(60.0), 0.0, ANGLE_LIMIT)


# Bumped by every change of any bone's limit settings, so the live-limit handlers rebuild their
# groups of bones only when something changed instead of comparing every setting on every update.
_generation = [0]


def settings_generation():
    return _generation[0]


def settings_changed(settings=None, context=None):
    """The update callback of every limit setting (also called after undo and file loads). With
    Clamp Playback on, the frame shown shows the edited limit (``handlers.show_limit_edit``)."""
    _generation[0] += 1
    scene = None if context is None else context.scene
    if settings is not None and scene is not None and scene.jointlimit.clamp_playback:
        from . import handlers     # (it imports this module)

        handlers.show_limit_edit(settings, scene, getattr(context, "active_pose_bone", None))


def _also_notify(update):
    def both(self, context):
        settings_changed(self, context)
        return update(self, context)

    return both


OVERRIDABLE = {"LIBRARY_OVERRIDABLE"}


def _notify_changes(cls, overridable=True):
    """Give every property of ``cls`` (collections have no update) the ``settings_changed``
    callback, before its own update callback if it has one, and make it overridable: a limit
    edited on a library override of a rig is saved with the shot (else the library's comes back
    on reopening, and a farm render or batch bake clamps with it). A polygon's outline is not
    (``bone_limits``: edited on an override, refused), nor are its vertices' values
    (``overridable`` off: Blender then keeps them from being edited there, where a change was
    used at once and lost on saving)."""
    for field, prop in cls.__annotations__.items():
        if prop.function is CollectionProperty:
            continue    # a polygon's outline: Blender's insertion overrides lose and mix its nameless items
        own = prop.keywords.get("update")
        update = settings_changed if own is None else _also_notify(own)
        override = {"override": OVERRIDABLE} if overridable else {}
        cls.__annotations__[field] = prop.function(**{**prop.keywords, "update": update, **override})


_notify_changes(JointLimitOutlinePoint, overridable=False)
_notify_changes(JointLimitSettings)


def _clamp_playback_changed(settings, _context):
    """Switched on: the frame shown is clamped now (not on the next frame change), and a render from
    the interface, which calls the clamp from its own thread, may change the pose only with the
    interface locked (``handlers.unsafe_render``). Switched off: partly animated bones get back
    what the animator posed in their other components (``handlers.restore_posed``), and bones the
    clamp moved their keys' values (``handlers.show_keyed``)."""
    from . import handlers     # (it imports this module)

    scene = settings.id_data
    if settings.clamp_playback:
        scene.render.use_lock_interface = True
        handlers.clamp_scene(scene, only_changed=False)
    else:
        handlers.show_keyed(scene)
        handlers.restore_posed(scene)


class JointLimitSceneSettings(bpy.types.PropertyGroup):
    """Scene-wide JointLimit options."""

    live: BoolProperty(
        name="Live Limits",
        description="Keep limited bones inside their limits while you pose them (R, trackball, typed values)",
        default=False,
    )
    clamp_playback: BoolProperty(
        name="Clamp Playback",
        description="Clamp limited bones on every frame during playback and rendering (a render clamps the "
                    "animation of rigs animated by their action alone; bake the limits of others before "
                    "rendering). Switching it on also switches on Render > Lock Interface, without which a "
                    "render started from the interface cannot be clamped safely",
        default=False,
        update=_clamp_playback_changed,
    )
    fast_scrubbing: BoolProperty(
        name="Fast Scrubbing",
        description="Outside playback too (scrubbing, stepping frames, a script's frame changes), Blender "
                    "evaluates the clamped rotations of rigs animated by their action alone in the frame's one "
                    "evaluation, as during playback. Off: each frame is clamped after Blender evaluated it, which "
                    "makes Blender evaluate it a second time, but also clamps keyed bones that another add-on's "
                    "frame handlers turn after Blender evaluated the frame",
        default=True,
    )
    show_overlay: BoolProperty(
        name="Show Limits",
        description="Draw the joint limits in the 3D Viewport in Pose Mode",
        default=False,
    )
    overlay_bones: EnumProperty(
        name="Bones",
        description="Which limited bones the viewport overlay draws",
        items=OVERLAY_BONE_ITEMS,
        default="SELECTED",
    )
    overlay_cone: BoolProperty(
        name="Cone",
        description="Fill the cone from the joint to the outline of the allowed swing",
        default=True,
    )
    overlay_twist: BoolProperty(
        name="Twist Arc",
        description="Draw the allowed twist as an arc around the bone",
        default=True,
    )
    overlay_opacity: FloatProperty(
        name="Opacity",
        description="Opacity of the overlay's cone (lines are drawn more opaque)",
        default=0.25,
        min=0.0,
        max=1.0,
        subtype="FACTOR",
    )
    overlay_size: FloatProperty(
        name="Size",
        description="Radius of the overlay sphere as a multiple of the bone length",
        default=1.0,
        min=0.05,
        soft_max=3.0,
        max=10.0,
    )


classes = (JointLimitOutlinePoint, JointLimitSettings, JointLimitSceneSettings)
_register_classes, _unregister_classes = bpy.utils.register_classes_factory(classes)


def register():
    _register_classes()
    bpy.types.PoseBone.jointlimit = PointerProperty(
        type=JointLimitSettings, name="Joint Limit", description="JointLimit settings of this bone", override=OVERRIDABLE
    )
    bpy.types.Scene.jointlimit = PointerProperty(
        type=JointLimitSceneSettings, name="JointLimit", description="Scene-wide JointLimit options"
    )


def unregister():
    del bpy.types.Scene.jointlimit
    del bpy.types.PoseBone.jointlimit
    _unregister_classes()
