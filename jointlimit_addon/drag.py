"""Interactive dragging shared by the modal IK tools: view projection and a drag session.

The modal operators only translate events into calls on :class:`DragSession`; the session holds
the original pose for an exact cancel, maps mouse positions to a target on the view plane through
the start point, and re-solves on each change. Nothing here needs a window, so tests drive it with
constructed events.
"""

import math

import numpy as np

from . import autokey, bone_limits

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
        autokey.autokey(context, self.bones)


def _wrap(angle):
    return (angle + math.pi) % (2.0 * math.pi) - math.pi
