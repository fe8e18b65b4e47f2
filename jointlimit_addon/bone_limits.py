"""Bridge between pose bones and the core: settings -> limit objects, rotations in every mode.

Pose-bone rotations are read as local quaternions ``(w, x, y, z)`` whatever the bone's rotation
mode, and written back in that same mode, continuous with the current value (no quaternion sign
flips, Euler angles nearest to the current ones) so F-curves stay smooth.
"""

import itertools
import math

import numpy as np

from . import chains, compat, props, settings_io
from .core import ccd_steps, grouped_shapes, locks, quat, regions
from .core.euler_limits import EulerLimit, EulerMultiLimit, HingeLimit, QuatSwingLimit
from .core.limits import MIN_SWING_WIDTHS, SMOOTH_SHAPES, JointLimit

EULER_MODES = quat.EULER_ORDERS
# Blender stores rotations as float32: a rotation clamped exactly onto a limit's boundary reads
# back up to 3 * 2^-24 * pi ~ 5.6e-7 rad away (three rounded Euler angles within one turn), and
# an Euler limit in another order than the bone's can see that as up to 1 / cos(middle angle)
# times more outside (5.8x at the 80° gimbal guard). Closer than this counts as inside; stored
# values beyond one turn round coarser, in proportion (``storage_tol``).
STORAGE_TOL = 5e-6
# A twist range this close to 360° (float32 -180°..180° included) is the full circle.
FULL_CIRCLE_TOL = 1e-5


def _range(lo, hi, what):
    _finite(lo, hi, what)
    if not lo < hi:
        raise ValueError(f"{what}: minimum ({math.degrees(lo):.1f}°) must be below maximum ({math.degrees(hi):.1f}°)")
    return (lo, hi)


def _finite(lo, hi, what):
    """A range set to NaN or infinity by a script (the sliders cannot) is named as such."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"{what}: minimum and maximum must be numbers of degrees (got {math.degrees(lo):.1f}° "
                         f"and {math.degrees(hi):.1f}°)")


def twist_range(lo, hi):
    """A stored twist range for the core: ``None`` (free) for the full circle, i.e. -180°..180°
    as Blender stores it (float32, a hair beyond pi) or wider; otherwise clipped into [-pi, pi]."""
    if hi - lo >= 2.0 * math.pi - FULL_CIRCLE_TOL:
        return None
    return max(lo, -math.pi), min(hi, math.pi)


def _swing_width(rng, what, shape):
    """A shape's range needs some width (``MIN_SWING_WIDTHS``), named in panel terms."""
    width = MIN_SWING_WIDTHS.get(shape, 0.0)
    if rng[1] - rng[0] < width * (1.0 - 1e-6):
        name = next((label for key, label, _ in props.SHAPE_ITEMS if key == shape), shape)
        raise ValueError(f"{what}: the {name} shape needs a range at least {math.degrees(width):.3g}° wide "
                         f"(got {math.degrees(rng[1] - rng[0]):.3g}°)")
    return rng


def _axes_range(rng, what):
    """The AXES fit measures the shape from the rest pose: the range must hold 0° strictly."""
    if not rng[0] < 0.0 < rng[1]:
        raise ValueError(f"{what}: the Axes fit needs a range around 0° (minimum below 0°, maximum above 0°)")
    return rng


def _twist(settings):
    """The twist range of the settings (``None``: free), the message in degrees when inverted."""
    _finite(settings.twist_min, settings.twist_max, "Twist")
    if settings.twist_min > settings.twist_max:
        raise ValueError(
            f"Twist: minimum ({math.degrees(settings.twist_min):.1f}°) is above maximum "
            f"({math.degrees(settings.twist_max):.1f}°)"
        )
    return twist_range(settings.twist_min, settings.twist_max)


def _swing_limit(settings):
    twist = None
    if settings.use_twist_limit and not settings.fix_twist:
        twist = _twist(settings)
    outline = None
    swing_x = swing_z = None
    if settings.shape == "POLYGON":
        outline = [(math.tan(p.swing_z / 2), math.tan(p.swing_x / 2), p.bulge) for p in settings.outline]
        try:
            regions.check_outline(outline)
        except ValueError as exc:
            raise ValueError(f"Polygon: the {exc}") from None
    else:
        swing_x = _swing_width(_range(settings.swing_x_min, settings.swing_x_max, "Swing X"), "Swing X", settings.shape)
        swing_z = _swing_width(_range(settings.swing_z_min, settings.swing_z_max, "Swing Z"), "Swing Z", settings.shape)
        if settings.fit == "AXES" and settings.shape in SMOOTH_SHAPES:
            _axes_range(swing_x, "Swing X")
            _axes_range(swing_z, "Swing Z")
    return JointLimit(
        shape=settings.shape,
        swing_x=swing_x,
        swing_z=swing_z,
        twist=twist,
        correction=settings.correction,
        exponent=tuple(settings.exponent),
        outline=outline,
        fix_twist=settings.fix_twist,
        fit=settings.fit,
    )


GIMBAL_GUARD = math.radians(80.0)   # the Euler kind's bound on its middle axis [003] (EulerLimit's default)
ANGLE_SLACK = 1e-6  # a stored ±180° (float32, a hair beyond pi) is ±180°


def _euler_ranges(settings):
    """The Euler ranges, each within ±180° (a stored ±180° taken as it), the middle axis of the
    Euler kind within its gimbal guard; ``ValueError`` naming the setting otherwise."""
    names = ("Euler X", "Euler Y", "Euler Z")
    out = []
    for lo, hi, name in zip(settings.euler_min, settings.euler_max, names):
        lo, hi = _range(lo, hi, name)
        if lo < -math.pi - ANGLE_SLACK or hi > math.pi + ANGLE_SLACK:
            raise ValueError(f"{name}: minimum and maximum must lie within ±180° (got {math.degrees(lo):.1f}° "
                             f"and {math.degrees(hi):.1f}°)")
        out.append((max(lo, -math.pi), min(hi, math.pi)))
    middle = settings.euler_order[1]
    lo, hi = out["XYZ".index(middle)]
    if settings.kind == "EULER" and (lo < -GIMBAL_GUARD - ANGLE_SLACK or hi > GIMBAL_GUARD + ANGLE_SLACK):
        raise ValueError(f"Euler {middle}: the middle axis of the {settings.euler_order} order must stay within ±80° "
                         f"(the Euler kind's gimbal guard; Euler (Equivalent Ranges) takes wider ranges), got "
                         f"{math.degrees(lo):.1f}° to {math.degrees(hi):.1f}°")
    if settings.kind == "EULER":
        out["XYZ".index(middle)] = (max(lo, -GIMBAL_GUARD), min(hi, GIMBAL_GUARD))
    return out


def _quat_swing_max(settings):
    m = settings.quat_swing_max
    if not (math.isfinite(m) and -ANGLE_SLACK <= m <= math.pi + ANGLE_SLACK):
        raise ValueError(f"Swing: the largest swing must lie between 0° and 180°, got {math.degrees(m):.1f}°")
    return min(max(m, 0.0), math.pi)


def _check_exponents(settings):
    if settings.kind == "SWING_TWIST" and settings.shape == "SUPERELLIPSE":
        m, n = settings.exponent
        if not (math.isfinite(m) and math.isfinite(n) and m >= 1.0 and n >= 1.0):
            raise ValueError(f"Superellipse: the exponents must be numbers of at least 1, got {m:g} and {n:g}")


def build_limit(settings):
    """The core limit object of a bone's settings; ``ValueError`` with a readable message if invalid."""
    kind = settings.kind
    if kind == "SWING_TWIST":
        _check_exponents(settings)
        return _swing_limit(settings)
    if kind == "HINGE":
        return HingeLimit(angle=_range(settings.hinge_min, settings.hinge_max, "Hinge"), axis=settings.hinge_axis)
    if kind in ("EULER", "EULER_MULTI"):
        x, y, z = _euler_ranges(settings)
        cls = EulerLimit if kind == "EULER" else EulerMultiLimit
        return cls(x=x, y=y, z=z, order=settings.euler_order)
    if kind == "QUAT_SWING":
        return QuatSwingLimit(max_swing=_quat_swing_max(settings), twist=_twist(settings) if settings.use_twist_limit else None)
    raise ValueError(f"unknown limit kind {kind!r}")


def bone_limit(pose_bone):
    """``build_limit`` of a pose bone's settings; the ``ValueError`` names the bone
    (``Bone 'forearm.L': Hinge: minimum (100.0°) must be below maximum (10.0°)``)."""
    try:
        return build_limit(pose_bone.jointlimit)
    except ValueError as exc:
        raise ValueError(f"Bone '{pose_bone.name}': {exc}") from exc


def settings_error(settings):
    """``None`` when the settings make a valid limit, else the message to show the user."""
    return cached_limit(settings)[1]


# settings signature -> (limit or None, error message or None). Limits are immutable, so bones
# with equal settings share one; the panel, the overlay and the live-limit handlers all read it
# (a smooth shape takes milliseconds to build: the panel redraws far more often than that).
_limits = {}
_LIMITS_MAX = 1024


def signature(settings):
    """Hashable snapshot of every setting (outline included): equal signatures, equal limits."""
    values = [settings_io.field_value(settings, field) for field in settings_io.SCALAR_FIELDS]
    values.append(tuple((p.swing_z, p.swing_x, p.bulge) for p in settings.outline))
    return tuple(values)


def cached_limit(settings, key=None):
    """``(limit, None)`` or ``(None, error message)`` for a bone's settings, built once per
    distinct settings (``key``: their ``signature`` if the caller has it already)."""
    key = signature(settings) if key is None else key
    hit = _limits.get(key)
    if hit is None:
        try:
            hit = (build_limit(settings), None)
        except ValueError as exc:
            hit = (None, str(exc))
        if len(_limits) >= _LIMITS_MAX:
            del _limits[next(iter(_limits))]    # the oldest entry
        _limits[key] = hit
    return hit


def clear_cache():
    _limits.clear()
    _rest_offsets.clear()
    grouped_shapes.forget_tables()


def rest_pose_offset(limit):
    """How far (radians) Apply moves the rest pose (the identity rotation) into ``limit``:
    0 when the rest pose is inside."""
    rest = quat.identity()
    return 0.0 if is_inside(limit, rest) else float(quat.angle_between(limit.clamp(rest), rest))


_rest_offsets = {}
REST_WARNING = "The rest pose is outside this limit: it will be moved {angle}° by Apply"


def rest_pose_warning(settings, key=None):
    """``(template, values)`` of the warning that the rest pose lies outside the bone's limit
    (``REST_WARNING``), or ``None`` when it is inside or the settings are invalid. Cached per
    distinct settings like ``cached_limit``."""
    key = signature(settings) if key is None else key
    if key not in _rest_offsets:
        limit, error = cached_limit(settings, key)
        if len(_rest_offsets) >= _LIMITS_MAX:
            del _rest_offsets[next(iter(_rest_offsets))]
        _rest_offsets[key] = None if error or not settings.enabled else rest_pose_offset(limit)
    offset = _rest_offsets[key]
    if not offset:
        return None
    degrees = math.degrees(offset)
    return REST_WARNING, {"angle": f"{degrees:.0f}" if degrees >= 9.95 else f"{degrees:.1f}"}


def rest_pose_message(settings, translate=None):
    """The rest-pose warning as text (``translate``: e.g. ``pgettext_rpt``), or ``None``."""
    warning = rest_pose_warning(settings)
    if warning is None:
        return None
    template, values = warning
    return (translate(template) if translate else template).format(**values)


def storage_tol(magnitude=0.0):
    """How far a stored rotation may read outside a limit it was clamped onto, for channels whose
    largest value is ``magnitude`` (radians, scalar or array): compatible Euler angles may run to
    many turns, where float32 rounds coarser."""
    return STORAGE_TOL * np.maximum(1.0, np.abs(magnitude) / math.pi)


def stored_magnitude(pose_bone):
    """The largest stored angle of the bone's rotation channels (0 for quaternions)."""
    mode = pose_bone.rotation_mode
    if mode == "QUATERNION":
        return 0.0
    if mode == "AXIS_ANGLE":
        return abs(pose_bone.rotation_axis_angle[0])
    return max(abs(v) for v in pose_bone.rotation_euler)


def is_inside(limit, q, tol=STORAGE_TOL):
    """Whether a stored rotation is inside ``limit``, allowing ``tol`` for float32 storage
    (``storage_tol(stored_magnitude(pose_bone))`` for a bone's own channels)."""
    return bool(limit.contains(q)) or quat.angle_between(limit.clamp(q), q) <= tol


def bone_inside(pose_bone, limit, q):
    """Whether the bone's rotation ``q`` (read from its channels) is inside ``limit`` as stored:
    a pose clamped onto the outline reads back a hair outside in float32 (``is_inside``)."""
    return is_inside(limit, q, storage_tol(stored_magnitude(pose_bone)))


def with_rotation_lock(pose_bone, limit):
    """``limit`` (or ``None``) followed by the bone's Lock Rotation as ``core.locks`` applies it
    (``limit`` itself when nothing is locked): Euler bones lock their angles, quaternion bones
    their components with 4D locks (a new bone's default), else their XYZ Euler angles. An
    axis-angle bone with 4D locks is held whole by any lock."""
    locked = tuple(bool(v) for v in pose_bone.lock_rotation)
    mode = pose_bone.rotation_mode
    if mode in ("QUATERNION", "AXIS_ANGLE") and pose_bone.lock_rotations_4d:
        locked4 = (bool(pose_bone.lock_rotation_w), *locked)
        if not any(locked4):
            return limit
        if mode == "AXIS_ANGLE":
            return locks.EulerLock(read_rotation(pose_bone), "XYZ", (True,) * 3, (0.0,) * 3, inner=limit)
        return locks.ComponentLock(tuple(pose_bone.rotation_quaternion), locked4, inner=limit)
    if not any(locked):
        return limit
    current = read_rotation(pose_bone)
    if mode in ("QUATERNION", "AXIS_ANGLE"):
        return locks.EulerLock(current, "XYZ", locked, tuple(quat.to_euler(current, "XYZ")), inner=limit)
    return locks.EulerLock(current, mode, locked, tuple(pose_bone.rotation_euler), inner=limit)


def write_posed_rotation(pose_bone, q):
    """``write_rotation`` for the IK tools, which keep Lock Rotation: locked channels keep their
    stored values exactly (a quaternion with 4D locks is scaled to them, an Euler bone takes the
    triple whose locked angles are the stored ones) and a fully locked bone is not written."""
    lock = with_rotation_lock(pose_bone, None)
    if lock is None:
        write_rotation(pose_bone, q)
        return
    if lock.fixed:
        return
    allowed = lock.lock1(tuple(float(c) for c in q))
    if isinstance(lock, locks.ComponentLock):
        pose_bone.rotation_quaternion = lock.stored_values(allowed)
    elif pose_bone.rotation_mode not in ("QUATERNION", "AXIS_ANGLE"):
        euler = locks.locked_euler_branch1(allowed, lock.order, lock.locked, lock.stored)
        pose_bone.rotation_euler = [s if lk else a for a, s, lk in zip(euler, lock.stored, lock.locked)]
    else:
        write_rotation(pose_bone, allowed)


def read_rotation(pose_bone):
    """The local rotation of a pose bone as a unit quaternion, in any rotation mode."""
    mode = pose_bone.rotation_mode
    values = (pose_bone.rotation_quaternion if mode == "QUATERNION" else
              pose_bone.rotation_axis_angle if mode == "AXIS_ANGLE" else pose_bone.rotation_euler)
    return rotation_of_values(mode, values, pose_bone.name)


def rotation_of_values(mode, values, bone_name):
    """``read_rotation`` of the stored ``values`` of a bone whose rotation mode is ``mode``."""
    if mode == "QUATERNION":
        q = np.array(values, dtype=np.float64)
    elif mode == "AXIS_ANGLE":
        angle, *axis = values
        axis = np.array(axis, dtype=np.float64)
        if np.linalg.norm(axis) < 1e-12:
            return quat.identity()
        q = quat.from_axis_angle(axis, angle)
    else:
        q = quat.from_euler(np.array(values, dtype=np.float64), mode)
    return quat.as_unit_quats(q, f"rotation of bone '{bone_name}'")


def _compatible_euler(q, order, previous):
    """Euler angles of ``q`` nearest to ``previous`` (the two triples, shifted by whole turns)."""
    first = quat.to_euler(q, order)
    i, j, k = ("XYZ".index(c) for c in order)
    second = first.copy()
    second[i] += math.pi
    second[j] = math.pi - first[j]
    second[k] += math.pi
    best = None
    for cand in (first, second):
        cand = cand + 2 * math.pi * np.round((previous - cand) / (2 * math.pi))
        if best is None or np.abs(cand - previous).sum() < np.abs(best - previous).sum():
            best = cand
    return best


def write_rotation(pose_bone, q):
    """Write a unit quaternion into the pose bone in its own rotation mode (continuous values)."""
    attr, values = rotation_values(pose_bone, q)
    setattr(pose_bone, attr, values)


def rotation_values(pose_bone, q):
    """``(channel, values)`` that ``write_rotation`` stores for the unit quaternion ``q``: the
    bone's own rotation mode, continuous with its current values."""
    w, x, y, z = (float(c) for c in q)
    if not all(map(math.isfinite, (w, x, y, z))):
        raise ValueError(f"refusing to write a non-finite rotation to bone '{pose_bone.name}'")
    mode = pose_bone.rotation_mode
    current = (pose_bone.rotation_quaternion if mode == "QUATERNION" else
               pose_bone.rotation_axis_angle if mode == "AXIS_ANGLE" else pose_bone.rotation_euler)
    return values_for_mode(mode, (w, x, y, z), current)


def values_for_mode(mode, q, current):
    """``rotation_values`` for a bone in rotation mode ``mode`` whose stored values are
    ``current``: ``(channel, values)`` of the unit quaternion ``q`` (finite)."""
    if mode == "QUATERNION":  # the hot path of live limits and IK drags: plain floats
        w, x, y, z = q
        cw, cx, cy, cz = current
        sign = -1.0 if cw * w + cx * x + cy * y + cz * z < 0 else 1.0
        return "rotation_quaternion", (sign * w, sign * x, sign * y, sign * z)
    q = np.array(q, dtype=np.float64)
    if mode == "AXIS_ANGLE":    # the axis on the current axis's side, the angle the nearest turn to the current
        axis, angle = quat.to_axis_angle(q)
        if np.dot(np.array(current[1:]), axis) < 0:
            axis, angle = -axis, -angle
        angle += 2.0 * math.pi * round((float(current[0]) - angle) / (2.0 * math.pi))
        return "rotation_axis_angle", (float(angle), *axis)
    return "rotation_euler", _compatible_euler(q, mode, np.array(current))


def rotation_path(pose_bone):
    """The data path and array length of the pose bone's rotation channel in its mode."""
    mode = pose_bone.rotation_mode
    if mode == "QUATERNION":
        return "rotation_quaternion", 4
    if mode == "AXIS_ANGLE":
        return "rotation_axis_angle", 4
    return "rotation_euler", 3


def limited_bones(obj, selected_only):
    """Pose bones of ``obj`` with an enabled limit (only the selected ones if asked)."""
    bones = [pb for pb in obj.pose.bones if pb.jointlimit.enabled]
    if selected_only:
        bones = [pb for pb in bones if compat.pose_bone_selected(pb)]
    return bones


def animator_bones(pose_bones):
    """``(bones an animator poses, names of the skipped rig mechanism bones)``: what *All Bones*
    style operations (from/to constraints, apply, bake, batch ``convert``) work on, see
    ``chains.mechanism_reason``."""
    keep, skipped = chains.split_mechanism(pose_bones)
    return keep, [name for name, _ in skipped]


def skipped_text(skipped, shown=5):
    """`` (skipped N rig mechanism bones: a, b, ...)`` for a report (translated), or ``""``."""
    if not skipped:
        return ""
    import bpy

    template = "(skipped 1 rig mechanism bone: {names})" if len(skipped) == 1 else \
        "(skipped {count} rig mechanism bones: {names})"
    return " " + bpy.app.translations.pgettext_rpt(template).format(count=len(skipped), names=name_list(skipped, shown))


def name_list(names, most=5):
    """``a, b, c`` of the first ``most`` names, with ``(+N more)`` (translated) when there are more."""
    import bpy

    names = list(names)
    shown = ", ".join(names[:most])
    if len(names) <= most:
        return shown
    return shown + " " + bpy.app.translations.pgettext_rpt("(+{count} more)").format(count=len(names) - most)


def clamp_bones(pose_bones):
    """Clamp each bone's current rotation to its limit; returns the bones that moved and those
    whose Lock Rotation keeps them outside their limit (left as they are): pose bones (rigs in
    Pose Mode together may have bones of one name). A bone with
    Lock Rotation goes to the nearest rotation that both its limit and its lock allow
    (``clamp_locked``): its locked channels keep their values, as the IK tools keep them.

    Raises ``ValueError`` naming the bone when its settings are invalid (nothing is written then).
    """
    work = [(pb, bone_limit(pb), read_rotation(pb)) for pb in pose_bones]
    moved, held = [], []
    for pb, limit, q in work:
        clamped, locked, met = clamp_locked(pb, limit, q)
        if not met:
            held.append(pb)
        elif quat.angle_between(clamped, q) > storage_tol(stored_magnitude(pb)):
            (write_posed_rotation if locked else write_rotation)(pb, clamped)
            moved.append(pb)
    return moved, held


def clamp_locked(pose_bone, limit, q, near=None):
    """``(limit.clamp(q), False, True)``; for a bone with Lock Rotation (read from its stored
    values) the nearest rotation both allow, ``True`` and whether there is one: where none is (a
    locked channel holds the bone outside), ``q`` itself and ``False``, so that nothing moves that
    neither asked. Euler locks (Euler bones, quaternion bones without 4D locks): the nearest
    rotation to ``q`` over the free angles (``_nearest_euler_locked``); 4D component locks: the
    limit and the lock in turn (``ccd_steps.clamp_one``), back toward the lock's rotation with its
    free components at rest where that does not meet. ``near``: the result of the frame before in
    an animation (Bake, Smooth Motion), which an Euler lock's search starts from, so that the
    result moves on with the pose instead of jumping to another nearest rotation."""
    lock = with_rotation_lock(pose_bone, limit)
    if lock is limit:
        return np.asarray(limit.clamp(q), dtype=np.float64), False, True
    q = np.asarray(q, dtype=np.float64)
    if isinstance(lock, locks.EulerLock) and not lock.fixed:
        out = _nearest_euler_locked(lock, limit, q, near)
        return (q, True, False) if out is None else (out, True, True)
    q1 = tuple(float(c) for c in q)
    tol = storage_tol(stored_magnitude(pose_bone))
    out = np.array(ccd_steps.clamp_one(lock, q1))
    if is_inside(limit, out, tol):
        return out, True, True
    rest = None if lock.fixed else lock.free_at_rest()
    if rest is not None and limit.contains(np.array(rest)):
        lock.current = rest
        out = np.array(ccd_steps.clamp_one(lock, q1))
        if is_inside(limit, out, tol):
            return out, True, True
    return q, True, False


LOCK_GRID_DEGREES = 10.0    # the free Euler angles' grid where the lock's rotations inside a limit are looked for
LOCK_STEP_MIN = 1e-7    # radians: the pattern search's last step
LOCK_CELLS = 4  # the best grid points whose cells are searched at 1°


def _nearest_euler_locked(lock, limit, q, near=None):
    """The rotation nearest ``q`` (geodesically) whose locked Euler angles are the lock's and which
    is inside ``limit``, or ``None``. From ``near`` (the frame before's) when given, else from the
    nearest of the limit and the lock in turn (``ccd_steps.clamp_one``), the free angles'
    ``LOCK_GRID_DEGREES`` grid and a 1° grid around its ``LOCK_CELLS`` best points: a pattern
    search over the free angles (axis and diagonal steps) that stays inside, halving its step down
    to ``LOCK_STEP_MIN``."""
    free = [i for i, locked in enumerate(lock.locked) if not locked]
    stored = np.array(lock.stored)

    def rotations(free_angles):
        angles = np.tile(stored, (len(free_angles), 1))
        angles[:, free] = free_angles
        return quat.from_euler(angles, lock.order)

    def free_angles(rotation):
        return np.array(locks.locked_euler_branch1(tuple(rotation), lock.order, lock.locked, lock.stored))[free]

    if len(free) == 1:
        return _nearest_on_one_angle(limit, q, rotations, free_angles(q)[0])
    fine = np.radians(np.arange(-LOCK_GRID_DEGREES, LOCK_GRID_DEGREES + 0.5, 1.0))
    offsets = np.stack(np.meshgrid(*[fine] * len(free), indexing="ij"), axis=-1).reshape(-1, len(free))

    def nearest_in(points):
        """The point of ``points`` nearest ``q`` whose rotation is inside, or ``None``."""
        turned = rotations(points)
        distance = np.where(limit.contains(turned), quat.angle_between(turned, q), np.inf)
        return points[np.argmin(distance)] if np.isfinite(distance.min()) else None

    x = None
    if near is not None:    # the frame before's, or the nearest in its cell (the region moved on)
        x = free_angles(near)
        if not limit.contains(rotations(x[None]))[0]:
            x = nearest_in(x + offsets)
    if x is None:
        grid = np.radians(np.arange(-180.0, 180.0, LOCK_GRID_DEGREES))
        starts = np.vstack((free_angles(ccd_steps.clamp_one(lock, tuple(float(c) for c in q))),
                            np.stack(np.meshgrid(*[grid] * len(free), indexing="ij"), axis=-1).reshape(-1, len(free))))
        candidates = rotations(starts)
        inside = np.flatnonzero(limit.contains(candidates))
        if not inside.size:
            return None
        order = np.argsort(quat.angle_between(candidates[inside], q))[:LOCK_CELLS]    # the best cells at 1°
        x = nearest_in((starts[inside[order]][:, None, :] + offsets[None]).reshape(-1, len(free)))
    best = float(quat.angle_between(rotations(x[None])[0], q))
    moves = np.array([m for m in itertools.product((-1.0, 0.0, 1.0), repeat=len(free)) if any(m)])  # (diagonals:
    # along a limit's edge that crosses the angles' axes)
    step = math.radians(LOCK_GRID_DEGREES) / 2.0
    while step > LOCK_STEP_MIN:
        tries = x + step * moves
        rots = rotations(tries)
        ok = limit.contains(rots)
        d = np.where(ok, quat.angle_between(rots, q), np.inf)
        if d.min() < best:
            x, best = tries[np.argmin(d)], float(d.min())
        else:
            step /= 2.0
    return rotations(x[None])[0]


ONE_ANGLE_GRID = 1.0    # degrees: the circle of one free Euler angle is searched on this grid, then refined
ONE_ANGLE_SPLITS = 64   # points per refining round (each shrinks the bracket as much)


def _nearest_on_one_angle(limit, q, rotations, x_q):
    """``_nearest_euler_locked`` with one free Euler angle, exactly and at the cost of a few
    vectorised checks: turning one Euler angle by ``d`` turns the rotation by ``|d|`` (the turn
    about that axis, conjugated by the other two), so the nearest rotation inside ``limit`` is
    the one whose free angle is nearest ``q``'s own ``x_q`` (on the circle): the inside grid point
    nearest it, then the boundary between it and its outside neighbour toward ``x_q``, bracketed
    down to ``LOCK_STEP_MIN``. ``None`` when no grid point is inside."""
    offsets = np.radians(np.arange(-180.0, 180.0 + 0.5 * ONE_ANGLE_GRID, ONE_ANGLE_GRID))
    inside = limit.contains(rotations((x_q + offsets)[:, None]))
    if not inside.any():
        return None
    k = int(np.argmin(np.where(inside, np.abs(offsets), np.inf)))
    if offsets[k] == 0.0:
        return rotations(np.array([[x_q]]))[0]
    good, bad = offsets[k], offsets[k] - np.sign(offsets[k]) * math.radians(ONE_ANGLE_GRID)    # inside, outside
    while abs(good - bad) > LOCK_STEP_MIN:
        between = np.linspace(bad, good, ONE_ANGLE_SPLITS + 1)[1:-1]
        ok = limit.contains(rotations((x_q + between)[:, None]))
        first = int(np.argmax(ok)) if ok.any() else len(between)     # the first inside, from the outside end
        good = between[first] if first < len(between) else good
        bad = between[first - 1] if first > 0 else bad
    return rotations(np.array([[x_q + good]]))[0]


def held_text(names):
    """The warning for bones whose Lock Rotation keeps them outside their limit (``clamp_locked``)."""
    return (f"{', '.join(names[:5])}{' …' if len(names) > 5 else ''}: Lock Rotation keeps "
            f"{'it' if len(names) == 1 else 'them'} outside the joint limit (left as keyed or posed; "
            "unlock the channel, or widen the limit)")
