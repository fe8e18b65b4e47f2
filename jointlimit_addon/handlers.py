"""Live limits: app handlers that keep limited bones inside their limits.

``depsgraph_update_post`` clamps bones whose rotation changed since the handler last saw them
(posing with R, trackball, typed values); ``frame_change_post`` clamps every limited bone on each
frame when playback clamping is on. Both are cheap when nothing changed, never recurse (writing a
rotation triggers one more update, which finds nothing to do), and are removed on unregister.
"""

import math

import bpy

from . import bone_limits

_state = {"busy": False}
# (object name, bone name) -> (settings signature, rotation tuple) when last seen
_cache = {}


def _raw_rotation(pb):
    mode = pb.rotation_mode
    if mode == "QUATERNION":
        return tuple(pb.rotation_quaternion)
    if mode == "AXIS_ANGLE":
        return tuple(pb.rotation_axis_angle)
    return (mode, *pb.rotation_euler)


def _unit_quaternion(pb, raw):
    """The bone's rotation as a unit quaternion tuple (plain floats: one rotation is cheaper
    without numpy), or ``None`` when it is not a rotation (zero or non-finite)."""
    if pb.rotation_mode != "QUATERNION":
        try:
            return tuple(bone_limits.read_rotation(pb))
        except ValueError:
            return None
    norm = math.sqrt(sum(c * c for c in raw))
    if not (norm > 1e-12 and math.isfinite(norm)):
        return None
    return tuple(c / norm for c in raw)


def clamp_object(obj, only_changed):
    """Clamp the limited bones of one armature; returns how many were written."""
    written = 0
    for pb in obj.pose.bones:
        settings = pb.jointlimit
        if not settings.enabled:
            continue
        raw = _raw_rotation(pb)
        signature = bone_limits.signature(settings)
        key = (obj.name, pb.name)
        entry = _cache.get(key)
        if only_changed and entry is not None and entry[0] == signature and entry[1] == raw:
            continue
        limit = bone_limits.cached_limit(settings, signature)[0]  # None: invalid, the panel says why
        q = _unit_quaternion(pb, raw) if limit is not None else None
        if q is not None:
            clamped = limit.clamp(q)
            if any(abs(a - b) > bone_limits.STORAGE_TOL for a, b in zip(clamped, q)):
                bone_limits.write_rotation(pb, clamped)
                written += 1
                raw = _raw_rotation(pb)
        _cache[key] = (signature, raw)
    return written


def _armatures(scene):
    return [o for o in scene.objects if o.type == "ARMATURE" and o.pose is not None]


def clamp_scene(scene, only_changed):
    if _state["busy"]:
        return 0
    _state["busy"] = True
    try:
        return sum(clamp_object(obj, only_changed) for obj in _armatures(scene))
    finally:
        _state["busy"] = False


@bpy.app.handlers.persistent
def on_depsgraph_update(scene, depsgraph=None):
    if scene.jointlimit.live:
        clamp_scene(scene, only_changed=True)


@bpy.app.handlers.persistent
def on_frame_change(scene, depsgraph=None):
    if scene.jointlimit.clamp_playback:
        clamp_scene(scene, only_changed=False)


HANDLERS = (
    (bpy.app.handlers.depsgraph_update_post, on_depsgraph_update),
    (bpy.app.handlers.frame_change_post, on_frame_change),
)


def register():
    for handler_list, func in HANDLERS:
        if func not in handler_list:
            handler_list.append(func)


def unregister():
    for handler_list, func in HANDLERS:
        while func in handler_list:
            handler_list.remove(func)
    _cache.clear()
    bone_limits.clear_cache()
