"""Interactive dragging shared by the modal IK tools: view projection and a drag session.

The modal operators only translate events into calls on :class:`DragSession`; the session holds
the original pose for an exact cancel, maps mouse positions to a target on the view plane through
the start point, and re-solves on each change. Nothing here needs a window, so tests drive it with
constructed events.
"""

import math

import numpy as np

from . import animation, bone_limits

SWIVEL_STEP = math.radians(5.0)  # per mouse-wheel notch
SWIVEL_PER_PIXEL = math.radians(0.5)  # Ctrl+drag


class ViewProjection:
    """Maps region pixels to 3-D points using a view's perspective matrix (world -> clip)."""

    def __init__(self, perspective_matrix, width, height):
        self.persp = np.asarray(perspective_matrix, dtype=np.float64).reshape(4, 4)
        self.inverse = np.linalg.inv(self.persp)
        self.size = (float(width), float(height))

    @classmethod
    def from_region(cls, region, region_data):
        return cls(region_data.perspective_matrix, region.width, region.height)

    def _unproject(self, x, y, depth):
        ndc = np.array([2.0 * x / self.size[0] - 1.0, 2.0 * y / self.size[1] - 1.0, depth, 1.0])
        p = self.inverse @ ndc
        return p[:3] / p[3]

    def ray(self, x, y):
        near, far = self._unproject(x, y, -1.0), self._unproject(x, y, 1.0)
        d = far - near
        return near, d / np.linalg.norm(d)

    def view_direction(self):
        return self.ray(0.5 * self.size[0], 0.5 * self.size[1])[1]

    def project(self, point):
        """Pixel position of a world point."""
        p = self.persp @ np.append(np.asarray(point, dtype=np.float64), 1.0)
        ndc = p[:3] / p[3]
        return (0.5 * (ndc[0] + 1.0) * self.size[0], 0.5 * (ndc[1] + 1.0) * self.size[1])

    def mouse_to_plane(self, x, y, plane_point):
        """Where the mouse ray meets the view plane through ``plane_point`` (world space)."""
        origin, direction = self.ray(x, y)
        normal = self.view_direction()
        denom = float(direction @ normal)
        if abs(denom) < 1e-12:
            return np.asarray(plane_point, dtype=np.float64)
        t = float((np.asarray(plane_point) - origin) @ normal) / denom
        return origin + t * direction


def snapshot_pose(pose_bones):
    """Exact raw rotation values of each bone in its own mode (for restoring on cancel)."""
    return [
        (pb, pb.rotation_mode, tuple(pb.rotation_quaternion), tuple(pb.rotation_axis_angle), tuple(pb.rotation_euler))
        for pb in pose_bones
    ]


def restore_pose(snapshot):
    for pb, mode, q, aa, eul in snapshot:
        pb.rotation_mode = mode
        pb.rotation_quaternion, pb.rotation_axis_angle, pb.rotation_euler = q, aa, eul


class DragSession:
    """State of one interactive drag.

    ``solve(target_armature_space, swivel) -> (list of local quaternions, info dict)`` computes
    the chain's pose; the session writes it to ``bones`` (root to tip) in their rotation modes.
    """

    def __init__(self, obj, bones, view, start_target, solve, swivel=None):
        self.obj = obj
        self.bones = list(bones)
        # every pose bone the session or its solver reads (Limb IK's also the end bone), by address
        touched = {pb.as_pointer(): pb.name for pb in [*self.bones, *getattr(solve, "bones", ())]}
        self._addresses = [(name, address) for address, name in touched.items()]
        self.view = view
        self.solve = solve
        self.snapshot = snapshot_pose(self.bones)
        self.world = np.array(obj.matrix_world, dtype=np.float64)
        self.world_inv = np.linalg.inv(self.world)
        self.target = np.asarray(start_target, dtype=np.float64)
        self.plane_point = (self.world @ np.append(self.target, 1.0))[:3]
        self.swivel = swivel
        self.info = {}
        self.last_mouse = None

    def _update(self):
        quats, self.info = self.solve(self.target, self.swivel)
        if self.swivel is not None and "swivel" in self.info:
            self.swivel = self.info["swivel"]  # the next frame asks for this one: no elbow jumps
        for pb, q in zip(self.bones, quats):
            bone_limits.write_posed_rotation(pb, q)

    def mouse_move(self, x, y, ctrl=False):
        """Move the target with the mouse; with Ctrl held, horizontal motion turns the swivel."""
        if ctrl and self.swivel is not None and self.last_mouse is not None:
            self.swivel = _wrap(self.swivel + (x - self.last_mouse[0]) * SWIVEL_PER_PIXEL)
        else:
            world = self.view.mouse_to_plane(x, y, self.plane_point)
            self.target = (self.world_inv @ np.append(world, 1.0))[:3]
        self.last_mouse = (x, y)
        self._update()

    def wheel(self, steps):
        """Turn the swivel angle by ``steps`` notches (no effect for tools without a swivel)."""
        if self.swivel is None:
            return
        self.swivel = _wrap(self.swivel + steps * SWIVEL_STEP)
        self._update()

    def still_exists(self):
        """Whether the armature and every bone the drag reads are still there, at the addresses
        they had at the start: the armature deleted, an undo, or bones deleted in another window
        or by a script free them, and a freed pose bone must never be read."""
        try:
            bones = self.obj.pose.bones
        except (ReferenceError, AttributeError):    # the object freed, or no longer an armature
            return False
        return all((pb := bones.get(name)) is not None and pb.as_pointer() == address
                   for name, address in self._addresses)

    def cancel(self):
        restore_pose(self.snapshot)

    def key(self, context):
        """Auto-key the chain's rotations on confirm (``autokey``)."""
        autokey(context, self.bones)


def _wrap(angle):
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


def autokey_enabled(context):
    return bool(context.scene.tool_settings.use_keyframe_insert_auto)


def autokey(context, pose_bones):
    """With Auto Keying on, key the rotation channel of each of ``pose_bones`` on the current
    frame, component by component as Blender's transform does: not a driven component, not into
    an action that cannot keep keys (a library's), and with *Only Insert Available* only the
    components that have an F-curve already. With *Only Active Keying Set* and a keying set
    active, what that set keys instead (``keying_set_channels``). Returns the names of the bones
    keyed ([] with Auto Keying off)."""
    if not autokey_enabled(context):
        return []
    only_available = context.preferences.edit.use_keyframe_insert_available
    active = context.scene.keying_sets_all.active
    if active is not None and context.scene.tool_settings.use_keyframe_insert_keyingset:
        return _key_channels(keying_set_channels(context, active, pose_bones), only_available)
    channels = []
    for pb in pose_bones:
        path, width = bone_limits.rotation_path(pb)
        channels += [(pb.id_data, pb.path_from_id(path), i, pb.name, set()) for i in range(width)]
    return _key_channels(channels, only_available)


def keying_set_channels(context, keying_set, pose_bones):
    """The channels ``(ID, data path, index, group, keyframe_insert options)`` that Blender's auto-keying keys with
    *Only Active Keying Set* when ``pose_bones`` moved: an absolute keying set's own paths, or
    those a relative one (Rotation, Whole Character, ...) generates for each bone (Blender's
    auto-keying gives it the moved bones as its sources: its poll, which looks at the selection
    and the area, is not asked)."""
    if keying_set.is_path_absolute:
        return _path_channels(keying_set, list(keying_set.paths))
    info = keying_set.type_info
    if info is None:
        return []
    paths = keying_set.paths
    before = len(paths)
    try:
        for pb in pose_bones:
            info.generate(context, keying_set, pb)
        return _path_channels(keying_set, list(paths)[before:])
    finally:
        for path in list(paths)[before:]:     # (a relative set's paths are made for one use)
            paths.remove(path)


def _path_channels(keying_set, paths):
    channels = []
    for path in paths:
        if path.id is None:
            continue
        group = {"NAMED": path.group, "KEYINGSET": keying_set.bl_label}.get(path.group_method)
        try:
            value = path.id.path_resolve(path.data_path)
        except ValueError:
            continue    # a path to nothing
        if not path.use_entire_array:
            indices = (path.array_index,)
        else:
            indices = range(len(value)) if hasattr(value, "__len__") and not isinstance(value, str) else (-1,)
        channels += [(path.id, path.data_path, i, group, _insert_options(keying_set, path)) for i in indices]
    return channels


def _insert_options(keying_set, path):
    """``Needed`` and ``Visual`` keying as the path, else the keying set, overrides them (the
    Visual keying sets key the visual transform)."""
    options = set()
    for flag, option in (("needed", "INSERTKEY_NEEDED"), ("visual", "INSERTKEY_VISUAL")):
        owner = next((o for o in (path, keying_set) if getattr(o, f"use_insertkey_override_{flag}")), None)
        if owner is not None and getattr(owner, f"use_insertkey_{flag}"):
            options.add(option)
    return options


def _key_channels(channels, only_available):
    """Key each channel ``(ID, data path, index, group, options)`` on the current frame (index -1: a
    single value), but driven ones, those of an ID whose action cannot keep keys and, with
    ``only_available``, those without an F-curve; the names of the bones (or IDs) keyed."""
    keyed, known = {}, {}
    for owner, path, index, group, options in channels:
        if not hasattr(owner, "animation_data") or not animation.keyable(owner):
            continue
        if owner not in known:
            data = owner.animation_data
            driven = set() if data is None else {(fc.data_path, fc.array_index) for fc in data.drivers}
            curves = {(fc.data_path, fc.array_index) for fc in animation.object_fcurves(owner)}
            known[owner] = driven, curves
        driven, curves = known[owner]
        channel = (path, max(index, 0))
        if channel in driven or (only_available and channel not in curves):
            continue
        try:
            owner.keyframe_insert(data_path=path, index=index, options=options, **({"group": group} if group else {}))
        except (TypeError, RuntimeError):
            continue    # not animatable (Blender's keying set skips it with a warning)
        keyed.setdefault(_bone_name(path) or owner.name)
    return list(keyed)


def _bone_name(path):
    """The bone a ``pose.bones["name"]...`` data path names, else ``None``."""
    prefix = 'pose.bones["'
    if not path.startswith(prefix):
        return None
    end = path.find('"]', len(prefix))
    return path[len(prefix):end].replace('\\"', '"') if end > 0 else None
