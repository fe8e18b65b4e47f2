"""Viewport overlay of the modal IK tools: the target point and the swivel circle."""

import math

import bpy
import numpy as np

_handles = []


def _draw(session):
    import gpu
    from gpu_extras.batch import batch_for_shader

    world = session.world
    target = (world @ np.append(session.target, 1.0))[:3]
    lines = [tuple(p) for p in swivel_circle_world(session)]
    shader = gpu.shader.from_builtin("POLYLINE_UNIFORM_COLOR")
    shader.uniform_float("viewportSize", gpu.state.viewport_get()[2:])
    shader.uniform_float("lineWidth", 2.0)
    gpu.state.blend_set("ALPHA")
    if len(lines) > 1:
        shader.uniform_float("color", (0.3, 0.8, 1.0, 0.8))
        batch_for_shader(shader, "LINE_STRIP", {"pos": lines}).draw(shader)
    size = 0.02 * max(session.info.get("reach", 1.0), 1e-3)
    cross = [tuple(target + d) for a in np.eye(3) * size for d in (a, -a)]
    shader.uniform_float("color", (1.0, 0.5, 0.1, 1.0))
    batch_for_shader(shader, "LINES", {"pos": cross}).draw(shader)
    gpu.state.blend_set("NONE")


def swivel_circle_world(session, segments=48):
    """Points (world space) of the circle the elbow/knee moves on as the swivel turns."""
    info = session.info
    if "root" not in info or "elbow" not in info:
        return []
    root, elbow, target = (np.asarray(info[k], dtype=np.float64) for k in ("root", "elbow", "wrist"))
    axis = target - root
    length = np.linalg.norm(axis)
    if length < 1e-9:
        return []
    n = axis / length
    centre = root + n * ((elbow - root) @ n)
    radial = elbow - centre
    radius = np.linalg.norm(radial)
    if radius < 1e-9:
        return []
    u = radial / radius
    v = np.cross(n, u)
    angles = np.linspace(0.0, 2.0 * math.pi, segments + 1)
    pts = centre + radius * (np.cos(angles)[:, None] * u + np.sin(angles)[:, None] * v)
    return (session.world @ np.c_[pts, np.ones(len(pts))].T).T[:, :3]


def add(session):
    handle = bpy.types.SpaceView3D.draw_handler_add(_draw_safe, (session,), "WINDOW", "POST_VIEW")
    _handles.append(handle)
    return handle


def _draw_safe(session):
    if not bpy.app.background:
        _draw(session)


def remove(handle):
    if handle in _handles:
        _handles.remove(handle)
        bpy.types.SpaceView3D.draw_handler_remove(handle, "WINDOW")


def register():
    pass


def unregister():
    for handle in list(_handles):
        remove(handle)
