"""Copy, mirror and convert ``PoseBone.jointlimit`` settings."""

import math
import types

# A locked axis becomes this narrow range: the core needs min < max.
LOCKED_WIDTH = math.radians(0.1)
FREE = math.radians(179.0)
FULL_TURN = 2.0 * math.pi - 1e-5
# Swing-twist settings map to Euler ranges in this order. The middle axis of an Euler order is the
# one that breaks past ±90°, so it goes to the twist (Y), usually the narrowest range.
EULER_ORDER_FOR_SWING = "XYZ"

SCALAR_FIELDS = (
    "enabled", "kind", "shape", "correction", "swing_x_min", "swing_x_max", "swing_z_min", "swing_z_max",
    "exponent", "use_twist_limit", "twist_min", "twist_max", "fix_twist", "hinge_axis", "hinge_min", "hinge_max",
    "euler_order", "euler_min", "euler_max", "quat_swing_max", "fit",
)


def field_value(settings, field):
    """A setting as a plain value (vector properties as tuples)."""
    value = getattr(settings, field)
    return tuple(value) if hasattr(value, "__len__") and not isinstance(value, str) else value


def unkept_on_override(pb):
    """Whether limit settings set on ``pb`` are lost when the file is opened again: its rig is a
    library override whose library file stores no settings for the bone (saved without JointLimit;
    Blender records no override of data its reference never stored)."""
    override = pb.id_data.override_library
    reference = None if override is None else override.reference
    ref = None if reference is None or reference.pose is None else reference.pose.bones.get(pb.name)
    return ref is not None and not ref.is_property_set("jointlimit")


UNKEPT = ("Limits set here on {bones} are not kept when the file is opened again: the library file of this "
          "override stores no limit settings (it was saved without JointLimit); open and save it with JointLimit, "
          "then set them again here")


def is_default(settings):
    """Whether every setting of a bone is at its default (no limit, nothing typed, no outline)."""
    props = settings.bl_rna.properties
    for field in SCALAR_FIELDS:
        prop = props[field]
        default = tuple(prop.default_array) if getattr(prop, "is_array", False) else prop.default
        if field_value(settings, field) != default:
            return False
    return len(settings.outline) == 0


OUTLINE_OVERRIDE = ("the Polygon outline of '{bone}' cannot change here: its rig is a library override, whose "
                    "outline is the library's; edit it in the library's file")


def check_outline_editable(settings, points=None):
    """``ValueError`` when the outline of ``settings`` would change (to ``points``, ``(z, x,
    bulge)`` each; ``None``: any change) on a library override, where Blender keeps the library's
    (its overrides of an add-on's collection mix and lose the points)."""
    if settings.id_data.override_library is None:
        return
    if points is not None and [tuple(p) for p in points] == [(p.swing_z, p.swing_x, p.bulge) for p in settings.outline]:
        return
    bone = next((pb.name for pb in settings.id_data.pose.bones if pb.jointlimit == settings), "?")
    raise ValueError(OUTLINE_OVERRIDE.format(bone=bone))


def set_outline(settings, points):
    """Replace the outline by ``points`` (``(z, x, bulge)`` each); ``check_outline_editable`` first."""
    points = [tuple(p) for p in points]
    check_outline_editable(settings, points)
    if points == [(p.swing_z, p.swing_x, p.bulge) for p in settings.outline]:
        return
    settings.outline.clear()
    for z, x, bulge in points:
        new = settings.outline.add()
        new.swing_z, new.swing_x, new.bulge = z, x, bulge


def copy_settings(src, dst):
    """Copy every setting (outline included) from one bone's settings to another's
    (``ValueError`` before any change where the outline cannot change: ``check_outline_editable``)."""
    points = [(p.swing_z, p.swing_x, p.bulge) for p in src.outline]
    check_outline_editable(dst, points)
    _copy_scalars(src, dst)
    set_outline(dst, points)


def mirror_settings(src, dst):
    """Copy ``src`` to ``dst`` mirrored across the armature's X axis.

    Mirroring a local rotation keeps its X component and negates Y and Z (Blender's flipped
    paste), so X ranges stay, Z and Y (twist) ranges are negated and swapped, and polygon
    outlines are reflected in s (which also reverses their arcs' bulge). The AXES fit takes its
    quadrants' half-axes from the ranges, so the s half-axes swap with the Z range.
    """
    mirrored = [(-p.swing_z, p.swing_x, -p.bulge) for p in src.outline]
    check_outline_editable(dst, mirrored)
    _copy_scalars(src, dst)
    set_outline(dst, mirrored)
    dst.swing_z_min, dst.swing_z_max = -src.swing_z_max, -src.swing_z_min
    dst.twist_min, dst.twist_max = -src.twist_max, -src.twist_min
    if src.hinge_axis == "Z":
        dst.hinge_min, dst.hinge_max = -src.hinge_max, -src.hinge_min
    lo, hi = list(src.euler_min), list(src.euler_max)
    dst.euler_min = (lo[0], -hi[1], -hi[2])
    dst.euler_max = (hi[0], -lo[1], -lo[2])


def _copy_scalars(src, dst):
    """Every setting but the outline."""
    for field in SCALAR_FIELDS:
        setattr(dst, field, field_value(src, field))


def _axis_range(use, lo, hi, locked=False):
    """A constraint's (use, min, max) as a swing range inside (-179°, 179°)."""
    if locked:
        return -LOCKED_WIDTH / 2, LOCKED_WIDTH / 2
    if not use or hi - lo >= FULL_TURN:  # a range of a full turn or more (±360°) is free
        return -FREE, FREE
    lo, hi = max(lo, -FREE), min(hi, FREE)
    if hi - lo < LOCKED_WIDTH:
        mid = 0.5 * (lo + hi)
        lo, hi = mid - LOCKED_WIDTH / 2, mid + LOCKED_WIDTH / 2
    return lo, hi


def settings_from_axes(settings, x, y, z):
    """Fill swing-twist settings from per-axis ``(use, min, max, locked)`` tuples [000 eq.5].

    X -> swing_x (t = tan(x/2)), Z -> swing_z (s = tan(z/2)), Y -> twist.
    """
    settings.enabled = True
    settings.kind = "SWING_TWIST"
    settings.shape = "RECT"
    settings.correction = "OPTIMAL"
    settings.swing_x_min, settings.swing_x_max = _axis_range(*x)
    settings.swing_z_min, settings.swing_z_max = _axis_range(*z)
    use_y, lo_y, hi_y, locked_y = y
    use_y = use_y and hi_y - lo_y < FULL_TURN  # ±360° (or any full turn) is free
    settings.use_twist_limit = use_y or locked_y
    settings.fix_twist = False
    if locked_y:
        settings.twist_min = settings.twist_max = 0.0
    elif use_y:
        lo_y, hi_y = max(lo_y, -math.pi), min(hi_y, math.pi)
        if hi_y - lo_y < LOCKED_WIDTH:     # (a minimum above its maximum: Blender holds one angle)
            mid = min(max(0.5 * (lo_y + hi_y), -math.pi + LOCKED_WIDTH / 2), math.pi - LOCKED_WIDTH / 2)
            lo_y, hi_y = mid - LOCKED_WIDTH / 2, mid + LOCKED_WIDTH / 2
        settings.twist_min, settings.twist_max = lo_y, hi_y


EULER_GUARD = math.radians(80.0)     # the Euler kind's bound on its middle axis (bone_limits.GIMBAL_GUARD)
EULER_ROTATION_MODES = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")


def euler_settings_from_limit_rotation(settings, con, rotation_mode):
    """Fill Euler settings with a Limit Rotation constraint's own region: its ranges in its Euler
    order (``AUTO``: the bone's ``rotation_mode`` when it is an Euler order, else XYZ, as the
    constraint takes it). The Euler kind, or Euler (Equivalent Ranges) when the middle axis
    reaches past the Euler kind's 80° guard; a free axis is -180..180°, an axis narrower than
    ``LOCKED_WIDTH`` (0..0: locked) that wide about its middle. Returns the kind."""
    order = con.euler_order if con.euler_order != "AUTO" else (
        rotation_mode if rotation_mode in EULER_ROTATION_MODES else "XYZ")
    ranges = []
    for use, lo, hi, _locked in axes_from_limit_rotation(con):
        if not use or hi - lo >= FULL_TURN:
            lo, hi = -math.pi, math.pi
        lo, hi = max(lo, -math.pi), min(hi, math.pi)
        if hi - lo < LOCKED_WIDTH:
            mid = min(max(0.5 * (lo + hi), -math.pi + LOCKED_WIDTH), math.pi - LOCKED_WIDTH)
            lo, hi = mid - LOCKED_WIDTH / 2, mid + LOCKED_WIDTH / 2
        ranges.append((lo, hi))
    lo, hi = ranges["XYZ".index(order[1])]
    kind = "EULER" if -EULER_GUARD <= lo and hi <= EULER_GUARD else "EULER_MULTI"
    settings.enabled = True
    settings.kind = kind
    settings.euler_order = order
    settings.euler_min = [lo for lo, _ in ranges]
    settings.euler_max = [hi for _, hi in ranges]
    return kind


def axes_from_limit_rotation(con):
    """``(use, min, max, locked)`` of each axis of a Limit Rotation constraint. With Use Legacy
    Behavior the constraint clamps the angles as read (within ±180°, never wrapped): a range past
    ±180° allows only its part within (0..360° allows 0..180°)."""
    legacy = con.use_legacy_behavior
    return tuple((use, max(lo, -math.pi), min(hi, math.pi), False) if legacy and use else (use, lo, hi, False)
                 for use, lo, hi in ((con.use_limit_x, con.min_x, con.max_x), (con.use_limit_y, con.min_y, con.max_y),
                                     (con.use_limit_z, con.min_z, con.max_z)))


def merged_limit_rotation(cons):
    """The local Limit Rotation constraints ``cons`` of a bone as one (their fields), evaluated one
    after the other: an axis limited by any, within every range that limits it; ``None`` when
    they cannot be one (``merge_problem``)."""
    if merge_problem(cons) is not None:
        return None
    first = cons[0]
    fields = {"euler_order": first.euler_order, "use_legacy_behavior": first.use_legacy_behavior}
    for axis in "xyz":
        used = [c for c in cons if getattr(c, f"use_limit_{axis}")]
        fields[f"use_limit_{axis}"] = bool(used)
        fields[f"min_{axis}"] = max((getattr(c, f"min_{axis}") for c in used), default=getattr(first, f"min_{axis}"))
        fields[f"max_{axis}"] = min((getattr(c, f"max_{axis}") for c in used), default=getattr(first, f"max_{axis}"))
    return types.SimpleNamespace(**fields)


def merge_problem(cons):
    """Why the Limit Rotation constraints ``cons`` cannot be one limit, or ``None``: ``"ORDER"``
    when they read the rotation otherwise (another Euler order or behaviour), ``"DISJOINT"`` when
    two of them limit an axis to ranges that do not overlap (``disjoint_axis``)."""
    first = cons[0]
    if any((c.euler_order, c.use_legacy_behavior) != (first.euler_order, first.use_legacy_behavior) for c in cons):
        return "ORDER"
    return "DISJOINT" if disjoint_axis(cons) is not None else None


def disjoint_axis(cons):
    """The first axis (``"x"``, ``"y"``, ``"z"``) two of the Limit Rotation constraints ``cons``
    limit to ranges (each the right way round) that do not overlap, else ``None``: one after the
    other they hold it at an end of the later one, which no single limit does."""
    for axis in "xyz":
        ranges = [(getattr(c, f"min_{axis}"), getattr(c, f"max_{axis}")) for c in cons if getattr(c, f"use_limit_{axis}")]
        proper = [(lo, hi) for lo, hi in ranges if lo <= hi]
        if proper and max(lo for lo, _ in proper) > min(hi for _, hi in proper):
            return axis
    return None


def local_limit_rotations(pb):
    """The bone's Limit Rotation constraints in local space that the conversion reads: those that
    act (on, with some influence), or all of them when none does (muted ones converted again)."""
    cons = [c for c in pb.constraints if c.type == "LIMIT_ROTATION" and c.owner_space == "LOCAL"]
    acting = [c for c in cons if c.enabled and c.influence > 0.0]
    return acting or cons


def axes_from_ik_limits(pb):
    return tuple(
        (getattr(pb, f"use_ik_limit_{a}"), getattr(pb, f"ik_min_{a}"), getattr(pb, f"ik_max_{a}"), getattr(pb, f"lock_ik_{a}"))
        for a in "xyz"
    )


def euler_ranges(settings):
    """``(order, [(use, min, max) for x, y, z])``: the Euler approximation of any limit kind."""
    kind = settings.kind
    if kind in ("EULER", "EULER_MULTI"):
        return settings.euler_order, [(True, lo, hi) for lo, hi in zip(settings.euler_min, settings.euler_max)]
    if kind == "HINGE":
        hinge = (True, settings.hinge_min, settings.hinge_max)
        locked = (True, 0.0, 0.0)
        return "XYZ", [hinge, locked, locked] if settings.hinge_axis == "X" else [locked, locked, hinge]
    twist = (settings.use_twist_limit or settings.fix_twist, *(
        (0.0, 0.0) if settings.fix_twist else (settings.twist_min, settings.twist_max)))
    if kind == "QUAT_SWING":
        m = settings.quat_swing_max
        return EULER_ORDER_FOR_SWING, [(True, -m, m), twist, (True, -m, m)]
    if settings.shape == "POLYGON" and len(settings.outline):
        xs = [p.swing_x for p in settings.outline]
        zs = [p.swing_z for p in settings.outline]
        return EULER_ORDER_FOR_SWING, [(True, min(xs), max(xs)), twist, (True, min(zs), max(zs))]
    return EULER_ORDER_FOR_SWING, [
        (True, settings.swing_x_min, settings.swing_x_max),
        twist,
        (True, settings.swing_z_min, settings.swing_z_max),
    ]


def made_from(settings, con, tol=1e-6):
    """Whether the (merged) Limit Rotation constraint ``con`` holds exactly the Euler ranges of
    ``settings`` (``euler_ranges``): *Joint Limits to Constraints* made it from that limit."""
    order, axes = euler_ranges(settings)
    if con.euler_order != order or con.use_legacy_behavior:
        return False
    for axis, (use, lo, hi) in zip("xyz", axes):
        if getattr(con, f"use_limit_{axis}") != bool(use):
            return False
        if use and (abs(getattr(con, f"min_{axis}") - lo) > tol or abs(getattr(con, f"max_{axis}") - hi) > tol):
            return False
    return True


def convertible(pb, source):
    """Whether the bone has what ``source`` (``AUTO``, ``LIMIT_ROTATION``, ``IK_LIMITS``) converts: a
    local-space Limit Rotation constraint, or IK limits or locks."""
    cons = any(c.type == "LIMIT_ROTATION" and c.owner_space == "LOCAL" for c in pb.constraints)
    if source == "LIMIT_ROTATION" or (source == "AUTO" and cons):
        return cons
    return any(getattr(pb, f"use_ik_limit_{a}") or getattr(pb, f"lock_ik_{a}") for a in "xyz")
