"""Viewport overlay of joint limits in Pose Mode (sidebar: *Show Limits*).

For each selected (or every) limited bone it draws, like [000 Fig.4, 12-21]: the outline of the
allowed swing on a sphere at the joint (radius = bone length x *Size*), optionally a translucent
cone from the joint to the outline, the bone's current swing point joined to the joint, and the
twist range as an arc around the bone with a tick at the current twist. Green when the pose is
inside the limit, red when outside.

The geometry comes from ``core.overlay_geometry`` (pure numpy) and is cached per bone until its
settings change. The draw handler is only added when Blender has a UI (not in background mode);
``gpu`` is imported inside the draw callback.
"""

import bpy
import numpy as np

from . import bone_limits
from .core import overlay_geometry as og
from .core import quat

COLOR_INSIDE = (0.25, 0.9, 0.35)
COLOR_OUTSIDE = (1.0, 0.3, 0.2)
COLOR_TWIST = (0.35, 0.75, 1.0)
OUTLINE_POINTS = 64
TWIST_RADIUS = 0.15  # of the overlay radius
TWIST_HEIGHT = 0.5

_state = {"handle": None}
# (object name, bone name) -> (settings signature, limit, SwingOutline, twist range)
_cache = {}


def limit_geometry(obj, pb):
    """``(limit, SwingOutline, twist range)`` of a bone, cached; ``None`` for invalid settings."""
    key = (obj.name, pb.name)
    signature = bone_limits.signature(pb.jointlimit)
    entry = _cache.get(key)
    if entry is not None and entry[0] == signature:
        return entry[1:] if entry[1] is not None else None
    limit = bone_limits.cached_limit(pb.jointlimit, signature)[0]
    try:
        outline = None if limit is None else og.swing_outline(limit, OUTLINE_POINTS)
    except ValueError:
        outline = None
    if outline is None:
        _cache[key] = (signature, None, None, None)
        return None
    _cache[key] = (signature, limit, outline, og.twist_range(limit))
    return limit, outline, og.twist_range(limit)


def joint_matrix(obj, pb):
    """World matrix (numpy 4x4) of the bone's joint frame: its rest orientation in its posed parent."""
    world = np.array(obj.matrix_world, dtype=np.float64)
    rest = np.array(pb.bone.matrix_local, dtype=np.float64)
    parent = pb.parent
    if parent is None:
        return og.joint_matrix(world, rest)
    return og.joint_matrix(world, rest, np.array(parent.bone.matrix_local, dtype=np.float64),
                           np.array(parent.matrix, dtype=np.float64))


def bone_draw_data(obj, pb, scene_settings):
    """World-space geometry of one bone's overlay (numpy arrays), or ``None`` when its limit is
    invalid or its rotation unreadable."""
    geometry = limit_geometry(obj, pb)
    if geometry is None:
        return None
    limit, outline, twist = geometry
    try:
        q = bone_limits.read_rotation(pb)
    except ValueError:
        return None
    matrix = joint_matrix(obj, pb)
    world = np.array(obj.matrix_world, dtype=np.float64)
    head = (world @ np.append(np.array(pb.head, dtype=np.float64), 1.0))[:3]
    scale = pb.bone.length * scene_settings.overlay_size
    inside = bone_limits.bone_inside(pb, limit, q)     # as the panel says it (float32 storage)
    swing = quat.rotate(q, og.Y_AXIS)

    def place(points):
        return og.to_world(matrix, points, scale, head)

    ring = place(outline.points)
    data = {
        "inside": inside,
        "color": COLOR_INSIDE if inside else COLOR_OUTSIDE,
        "outline": ring,
        "closed": outline.closed,
        "head": head,
        "swing_point": place(swing[None])[0],
        "cone": og.cone_triangles(head, ring) if outline.closed and scene_settings.overlay_cone else None,
        "twist_arc": None,
        "twist_marker": None,
    }
    if twist is not None and scene_settings.overlay_twist:
        arc = og.twist_arc(*twist, n=24, radius=TWIST_RADIUS, height=TWIST_HEIGHT)
        data["twist_arc"] = place(quat.rotate(og.swing_only(q), arc))
        marker = og.twist_marker(q, radius=TWIST_RADIUS, height=TWIST_HEIGHT)
        axis_point = quat.rotate(q, np.array([0.0, TWIST_HEIGHT, 0.0]))
        data["twist_marker"] = place(np.stack((axis_point, marker)))
    return data


def overlay_bones(context):
    """``(object, pose bone)`` pairs the overlay draws in this context."""
    settings = context.scene.jointlimit
    if not settings.show_overlay or context.mode != "POSE":
        return []
    objects = getattr(context, "objects_in_mode", None) or [context.object]
    pairs = []
    for obj in objects:
        if obj is None or obj.type != "ARMATURE" or obj.pose is None:
            continue
        bones = bone_limits.limited_bones(obj, selected_only=settings.overlay_bones == "SELECTED")
        pairs.extend((obj, pb) for pb in bones if not pb.bone.hide)
    return pairs


def _draw():
    context = bpy.context
    if context.scene is None or not hasattr(context.scene, "jointlimit"):
        return
    pairs = overlay_bones(context)
    if not pairs:
        return
    import gpu
    from gpu_extras.batch import batch_for_shader

    settings = context.scene.jointlimit
    alpha = settings.overlay_opacity
    line = gpu.shader.from_builtin("POLYLINE_UNIFORM_COLOR")
    line.uniform_float("viewportSize", gpu.state.viewport_get()[2:])
    line.uniform_float("lineWidth", 2.0)
    fill = gpu.shader.from_builtin("UNIFORM_COLOR")
    gpu.state.blend_set("ALPHA")

    def lines(points, color, kind="LINE_STRIP"):
        line.uniform_float("color", (*color, min(1.0, 0.4 + alpha * 2.0)))
        batch_for_shader(line, kind, {"pos": [tuple(p) for p in points]}).draw(line)

    for obj, pb in pairs:
        data = bone_draw_data(obj, pb, settings)
        if data is None:
            continue
        color = data["color"]
        if data["cone"] is not None and alpha > 0.0:
            fill.uniform_float("color", (*color, alpha))
            batch_for_shader(fill, "TRIS", {"pos": [tuple(p) for p in data["cone"]]}).draw(fill)
        lines(data["outline"], color)
        lines((data["head"], data["swing_point"]), color, "LINES")
        if data["twist_arc"] is not None:
            lines(data["twist_arc"], COLOR_TWIST)
            lines(data["twist_marker"], color, "LINES")
    gpu.state.blend_set("NONE")


def _draw_safe():
    try:
        _draw()
    except (ValueError, ReferenceError, AttributeError):
        pass  # a bone or object removed mid-draw; the next redraw starts afresh


def register():
    if not bpy.app.background and _state["handle"] is None:
        _state["handle"] = bpy.types.SpaceView3D.draw_handler_add(_draw_safe, (), "WINDOW", "POST_VIEW")


def unregister():
    handle = _state["handle"]
    if handle is not None:
        bpy.types.SpaceView3D.draw_handler_remove(handle, "WINDOW")
        _state["handle"] = None
    _cache.clear()
