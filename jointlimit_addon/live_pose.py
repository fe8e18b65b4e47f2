"""Live limits on whole armatures at once: the array path of the live-limit handlers.

Per armature, the bones with an enabled limit are grouped by identical settings (one shared
limit object per group, ``bone_limits.cached_limit``). The groups are built once and rebuilt
only when a setting changed (``props.settings_generation``, bumped by the settings' update
callbacks), when the number of bones changed, when the limited bones' names no longer match
their places (checked after the armature's data was updated: ``recheck_bones``), or when
``invalidate`` was called (file load, undo). Each pass then

1. reads every rotation at once with ``foreach_get`` over ``pose.bones``, one call per rotation
   channel in use by limited bones (quaternion, Euler, axis-angle), plus the rotation modes;
2. finds the limited bones whose rotation or mode changed since the last pass (all of them on
   the playback clamp), and stops there when none did;
3. takes the values to store from ``results`` for the bones whose group, rotation mode and
   stored values were seen before (the values to store depend on those alone: playback that
   returns to the same frames, loops, scrubbing and held keys cost a lookup per bone);
4. converts the others to unit quaternions per rotation mode (as ``bone_limits.read_rotation``
   does) and clamps them with ``core.grouped.clamp_groups``: one shared check for all
   swing-twist groups, then each group's rotations outside its limit corrected by the
   vectorised core (a few of them one at a time by its single-rotation path, which is cheaper
   than numpy for a few dozen rotations and is exactly what the per-bone path computes);
5. writes back only the bones that moved (by more than ``bone_limits.storage_tol``), in their
   own rotation mode and continuous with their current values, with the same rules as
   ``bone_limits.write_rotation``: quaternions keep their sign hemisphere, axis-angle keeps the
   side of its axis and the turn of its angle, Euler angles are the equivalent triple nearest to
   the current one. Each
   channel in use is written with one ``foreach_set`` and the object gets one transform tag
   (``tag_written``): a write by RNA tags the armature's data too, which Blender then copies and
   evaluates again in that frame.

An armature with few limited bones (Rigify's 18 FK controls among 706 bones) takes the per-bone
path instead (``_clamp_few``): its limited bones are found by name, one at a time on Python
floats, with the groups' limits and, per group, a memo from stored values (mode included) to the
rotation to write, and nothing else of the armature is read.

The result equals the per-bone path (``handlers.clamp_object_per_bone``), which stays as the
reference the tests compare against.
"""

import math

import bpy
import numpy as np

from . import bone_limits, props
from .core import quat
from .core.grouped import clamp_groups

# Few limited bones (at most 1/FEW_RATIO of the armature's bones, or FEW_MAX): one bone at a
# time on Python floats, found by name (one lookup in the pose's hash) -- cheaper than reading
# every bone of a big rig (Rigify's 706) to clamp a few of them, and than numpy's per-call cost.
FEW_RATIO = 8
FEW_MAX = 8

QUATERNION, EULER, AXIS_ANGLE = 0, 1, 2
# channel -> (pose-bone property, values per bone)
CHANNELS = {QUATERNION: ("rotation_quaternion", 4), EULER: ("rotation_euler", 3), AXIS_ANGLE: ("rotation_axis_angle", 4)}

# A memo that grows past this many entries is emptied (playback of a long shot; ~150 bytes each).
MEMO_MAX = 1 << 15
_KEY = 48           # bytes of a key of ArmatureState.results
_UNSET = 1 << 20     # no rotation mode has this value
_armatures = {}     # Object.session_uid -> ArmatureState
_codes = {}         # filled on first use: lookup tables of Blender's rotation_mode enum values


def _mode_tables():
    """``(offset, channel per code, Euler order per code)`` for the integer rotation modes that
    ``foreach_get("rotation_mode")`` returns (index = code + offset)."""
    if not _codes:
        items = {i.identifier: i.value for i in bpy.types.PoseBone.bl_rna.properties["rotation_mode"].enum_items}
        offset = -min(items.values())
        channel = np.full(max(items.values()) + offset + 1, -1, dtype=np.int64)
        order = [None] * len(channel)
        for name, value in items.items():
            channel[value + offset] = QUATERNION if name == "QUATERNION" else AXIS_ANGLE if name == "AXIS_ANGLE" else EULER
            order[value + offset] = name if name in quat.EULER_ORDERS else None
        _codes.update(offset=offset, channel=channel, order=order, value=items)
    return _codes["offset"], _codes["channel"], _codes["order"]


def mode_code(mode):
    """The integer of the rotation mode named ``mode`` (as ``foreach_get("rotation_mode")`` reads
    it) and its channel (``QUATERNION``, ``EULER`` or ``AXIS_ANGLE``)."""
    offset, channel, _ = _mode_tables()
    code = _codes["value"][mode]
    return code, int(channel[code + offset])


def invalidate(obj=None):
    """Forget the groups and the last seen rotations of one armature (or of all)."""
    if obj is None:
        _armatures.clear()
    else:
        _armatures.pop(obj.session_uid, None)


def found_no_limits(obj):
    """Whether the last pass over ``obj`` found no limited bone (the settings unchanged since)."""
    state = _armatures.get(obj.session_uid)
    return state is not None and state.generation == props.settings_generation() and not len(state.members)


def skips_every_bone(obj, skip):
    """Whether the last pass over ``obj`` (the settings and its bones unchanged since) found each
    of its limited bones named in ``skip``: a pass with that ``skip`` has nothing to clamp."""
    state = _armatures.get(obj.session_uid)
    if not skip or state is None or state.recheck or state.generation != props.settings_generation():
        return False
    if state.few:
        return all(name in skip for _, _, names in state.few_groups for _, name in names)
    if state.skip is skip:
        return bool(state.skip_mask.all())
    names = obj.pose.bones.keys()   # (not kept: the pass's own skip stays the one its mask is for)
    return all(names[i] in skip for i in state.members.tolist())


def forget_results():
    """Forget the remembered results of every armature (the next pass clamps every rotation again;
    the benchmark's first-play figures)."""
    for state in _armatures.values():
        state.results.clear()
        for memo in state.memos:
            memo.clear()


def limit_seen(obj, name):
    """The limit the last pass over ``obj`` clamped its bone ``name`` with (the one its pose
    shows, if a pass clamped it), or ``None``."""
    state = _armatures.get(obj.session_uid)
    index = obj.pose.bones.find(name)
    if state is None or index < 0:
        return None
    at = np.flatnonzero(state.members == index)
    if not len(at):
        return None
    names = dict(state.names) if not state.all_names else None
    if (state.all_names and (index >= len(state.names) or state.names[index] != name)) or \
            (names is not None and names.get(index) != name):
        return None     # the bones changed since
    return state.limits[int(state.group_of[at[0]])]


def recheck_bones():
    """The armatures' bones may have changed (their data was updated): before its next pass,
    each armature checks that its limited bones are still where its groups expect them."""
    for state in _armatures.values():
        state.recheck = True


class ArmatureState:
    """The limited bones of one armature grouped by limit, and the rotations last seen."""

    def __init__(self, obj, count):
        self.count = count
        self.generation = props.settings_generation()
        by_settings = {}
        for i, pb in enumerate(obj.pose.bones):
            settings = pb.jointlimit
            if settings.enabled:
                by_settings.setdefault(bone_limits.signature(settings), (settings, []))[1].append(i)
        # (limit, bone indices); bones with invalid settings are left alone (the panel says why)
        self.limits, self.sizes, members = [], [], []
        for key, (settings, indices) in by_settings.items():
            limit = bone_limits.cached_limit(settings, key)[0]
            if limit is not None:
                self.limits.append(limit)
                self.sizes.append(len(indices))
                members += indices
        self.members = np.array(members, dtype=np.int64)   # bone indices, group after group
        self.memos = [{} for _ in self.limits]      # few bones, per group: stored values -> rotation to write
        self.group_of = np.repeat(np.arange(len(self.limits)), self.sizes)   # per member
        self.results = {}   # (group, mode, stored values) -> values to store (b"": none)
        self.ends = np.cumsum(self.sizes)
        # what tells that the limited bones are still in place: the names of all bones (one C
        # call) when many are limited, else the names of the limited ones
        bones = obj.pose.bones
        self.few = len(members) * FEW_RATIO <= count or len(members) <= FEW_MAX
        self.all_names = not self.few
        self.names = bones.keys() if self.all_names else [(i, bones[i].name) for i in members]
        self.recheck = False
        self.modes = None       # rotation mode codes last seen
        self.seen = {}          # channel -> (count, width) rotations last seen
        # few bones: per group (limit, memo, bone names); per bone the raw rotation last seen
        starts = np.r_[0, self.ends[:-1]].astype(int)
        self.few_groups = [(limit, memo, self.names[a:b])
                           for limit, memo, a, b in zip(self.limits, self.memos, starts, self.ends)] if self.few else []
        self.few_seen = {}
        self.skip, self.skip_mask = None, None     # the last ``skip`` of ``clamp_armature``, as a mask over members

    def is_current(self, obj, count):
        if self.count != count or self.generation != props.settings_generation():
            return False
        if self.recheck:    # same count: bones removed and added, or reordered, in Edit Mode?
            if not self._same_bones(obj.pose.bones):
                return False
            self.recheck = False
        return True

    def _same_bones(self, bones):
        if self.all_names:
            return bones.keys() == self.names
        return all(bones[i].name == name for i, name in self.names)


def _current_few(obj):
    """The state of an armature on the few-bones path, if it is still valid (its bones are not
    counted: they are found by name)."""
    state = _armatures.get(obj.session_uid)
    if state is None or not state.few or state.generation != props.settings_generation():
        return None
    if state.recheck:
        bones = obj.pose.bones
        if len(bones) != state.count or not state._same_bones(bones):
            return None
        state.recheck = False
    return state


def _state(obj, count):
    state = _armatures.get(obj.session_uid)
    if state is None or not state.is_current(obj, count):
        state = _armatures[obj.session_uid] = ArmatureState(obj, count)
    return state


def read_modes(bones, count):
    """Rotation mode codes of every bone, or ``None`` unless the armature has ``count`` bones.

    One slot more than ``count`` tells (without counting the bones, which walks their list):
    ``foreach_get`` fills as many slots as there are bones, and fails or fills the extra one
    when there are more.
    """
    modes = np.full(count + 1, _UNSET, dtype=np.int32)
    try:
        bones.foreach_get("rotation_mode", modes)
    except (RuntimeError, TypeError):    # (TypeError: an armature without bones)
        return None
    if modes[count] != _UNSET or (count and modes[count - 1] == _UNSET):
        return None
    return modes[:count]


def _read_channel(bones, channel, count):
    attr, width = CHANNELS[channel]
    values = np.empty(count * width, dtype=np.float32)
    bones.foreach_get(attr, values)
    return values.reshape(count, width).astype(np.float64)


# --- rotations as unit quaternions (bone_limits.read_rotation, vectorised) -------------------


def _unit_rows(q):
    """``q / |q|`` per row and whether the row is a rotation (finite, non-zero)."""
    norm = quat.norms(q, keepdims=True)
    ok = np.isfinite(q).all(axis=-1) & (norm[:, 0] >= 1e-12) & np.isfinite(norm[:, 0])
    return q / np.where(ok[:, None], norm, 1.0), ok


def _from_quaternion(raw):
    # handlers._unit_quaternion: the plain-float norm, in the same order of operations
    w, x, y, z = raw.T
    norm = np.sqrt(((w * w + x * x) + y * y) + z * z)
    ok = (norm > 1e-12) & np.isfinite(norm)
    return raw / np.where(ok, norm, 1.0)[:, None], ok


def _from_axis_angle(raw):
    angle, axis = raw[:, 0], raw[:, 1:]
    zero = quat.norms(axis) < 1e-12
    with np.errstate(invalid="ignore", divide="ignore"):
        q = quat.from_axis_angle(np.where(zero[:, None], 1.0, axis), angle)
    q[zero] = quat.identity()
    return _unit_rows(q)


def unit_quaternions(modes, channels, rows):
    """Unit quaternions ``(len(rows), 4)`` of the bones ``rows`` and a mask of valid ones."""
    offset, channel_of, order_of = _mode_tables()
    codes = modes[rows] + offset
    kinds = channel_of[codes]
    if (kinds == QUATERNION).all():         # the common case, without masks
        return _from_quaternion(channels[QUATERNION][rows])
    q = np.zeros((len(rows), 4))
    ok = np.zeros(len(rows), dtype=bool)
    for kind in (QUATERNION, AXIS_ANGLE, EULER):
        here = kinds == kind
        if not here.any():
            continue
        raw = channels[kind][rows[here]]
        if kind == QUATERNION:
            q[here], ok[here] = _from_quaternion(raw)
        elif kind == AXIS_ANGLE:
            q[here], ok[here] = _from_axis_angle(raw)
        else:
            for code in np.unique(codes[here]):
                sub = np.flatnonzero(here & (codes == code))
                with np.errstate(invalid="ignore"):
                    q[sub], ok[sub] = _unit_rows(quat.from_euler(channels[EULER][rows[sub]], order_of[code]))
    return q, ok


# --- clamped quaternions -> stored values (bone_limits.write_rotation, vectorised) ----------


def _compatible_euler(q, order, previous):
    """Euler angles of ``q`` nearest to ``previous``, per row (``bone_limits._compatible_euler``)."""
    first = quat.to_euler(q, order)
    i, j, k = ("XYZ".index(c) for c in order)
    second = first.copy()
    second[:, i] += math.pi
    second[:, j] = math.pi - first[:, j]
    second[:, k] += math.pi
    first = first + 2 * math.pi * np.round((previous - first) / (2 * math.pi))
    second = second + 2 * math.pi * np.round((previous - second) / (2 * math.pi))
    take_second = np.abs(second - previous).sum(axis=-1) < np.abs(first - previous).sum(axis=-1)
    return np.where(take_second[:, None], second, first)


def stored_values(kind, code, clamped, current):
    """The values to store for the clamped rotations of bones in one channel (Euler: one
    ``code``), continuous with their ``current`` values."""
    if kind == QUATERNION:
        w, x, y, z = clamped.T
        cw, cx, cy, cz = current.T
        sign = np.where(((cw * w + cx * x) + cy * y) + cz * z < 0, -1.0, 1.0)
        return clamped * sign[:, None]
    if kind == AXIS_ANGLE:
        axis, angle = quat.to_axis_angle(clamped)
        flip = ((current[:, 1] * axis[:, 0] + current[:, 2] * axis[:, 1]) + current[:, 3] * axis[:, 2]) < 0
        sign = np.where(flip, -1.0, 1.0)
        angle = angle * sign
        angle = angle + 2.0 * np.pi * np.round((current[:, 0] - angle) / (2.0 * np.pi))    # the nearest turn
        return np.concatenate((angle[:, None], axis * sign[:, None]), axis=-1)
    offset, _, order_of = _mode_tables()
    return _compatible_euler(clamped, order_of[code + offset], current)


# --- one armature ---------------------------------------------------------------------------


def _changed(state, modes, channels, kinds):
    """Mask over all bones: rotation mode or value differs from the last seen."""
    if state.modes is None:
        return np.ones(len(modes), dtype=bool)
    changed = modes != state.modes
    for kind, values in channels.items():
        old = state.seen.get(kind)
        in_kind = kinds == kind
        changed |= in_kind if old is None else in_kind & (values != old).any(axis=-1)
    return changed


def _write(obj, channels, kinds, rows, values, count):
    """Store ``values`` for the bones ``rows`` (one ``foreach_set`` of each channel in use) and
    keep ``channels`` equal to what Blender now holds (float32)."""
    for kind in np.unique(kinds[rows]):
        here = kinds[rows] == kind
        attr, width = CHANNELS[kind]
        whole = channels[kind].copy()
        whole[rows[here]] = values[here][:, :width]
        whole = whole.astype(np.float32)
        _set_channel(obj, attr, whole, rows[here])
        channels[kind][rows[here]] = whole[rows[here]]
    tag_written(obj)


def _set_channel(obj, attr, whole, rows):
    """Store ``whole`` (every bone's values of channel ``attr``), of which ``rows`` changed. A linked
    rig's pose, or a system override's (not editable), takes assignments (in memory, like the pose
    its action gives it on every frame) but ``foreach_set`` leaves it as it is."""
    bones = obj.pose.bones
    override = obj.override_library
    if obj.library is None and (override is None or not override.is_system_override):
        bones.foreach_set(attr, whole.ravel())
        return
    for row in np.asarray(rows).tolist():
        setattr(bones[row], attr, whole[row])


def tag_written(obj):
    """Make Blender evaluate the pose written with ``foreach_set`` (which alone only copies the
    values to the evaluated object: its bone matrices would stay those of the stored rotations).

    The transform tag re-evaluates the object and everything after it (its pose, the meshes it
    deforms) like the pose's own update (``rna_Pose_update``: a geometry tag), without also
    tagging the armature's data, whose copy and evaluation made a written frame of Rigify's rig
    cost about 0.8 of a frame more (docs/benchmarks.md)."""
    obj.update_tag(refresh={"OBJECT"})


def _groups_of(state, selected):
    """``(limit, rows)`` per group: rows into the selected bones (``state.members[selected]``)."""
    position = np.cumsum(selected) - 1          # row of each member among the selected ones
    groups, start = [], 0
    for limit, end in zip(state.limits, state.ends):
        rows = position[start:end][selected[start:end]]
        start = end
        if len(rows):
            groups.append((limit, rows))
    return groups


def clamp_armature(obj, only_changed, skip=None):
    """Clamp the limited bones of one armature; returns how many were written. ``skip``: a
    frozenset of names of bones left as they are (their values are clamped already: the playback
    layer's keys)."""
    state = _current_few(obj)
    if state is not None:
        try:
            return _clamp_few(obj, state, only_changed, skip)
        except KeyError:            # a limited bone was renamed or removed: regroup
            invalidate(obj)
    bones = obj.pose.bones
    state = _armatures.get(obj.session_uid)
    # (the bones may have changed: counted first, as a probe finding more bones than it has slots
    # for makes Blender print an error line, 'Array length mismatch')
    modes = None if state is None or (state.recheck and len(bones) != state.count) else read_modes(bones, state.count)
    if modes is None:                   # first pass, or bones were added or removed
        modes = read_modes(bones, len(bones))
        if modes is None:
            return 0    # an armature without bones
    state = _state(obj, len(modes))
    if not len(state.members):
        return 0
    if state.few:
        return _clamp_few(obj, state, only_changed, skip)
    if skip and _skipped(state, bones, skip).all():
        return 0    # (the rotations last seen stay those of the pass before: the next pass compares with them)
    offset, channel_of, _ = _mode_tables()
    kinds = channel_of[modes + offset]
    used = kinds[state.members]
    channels = {k: _read_channel(bones, k, state.count) for k in (QUATERNION, EULER, AXIS_ANGLE) if (used == k).any()}
    selected = _changed(state, modes, channels, kinds)[state.members] if only_changed else np.ones(len(state.members), bool)
    if skip:
        selected &= ~_skipped(state, bones, skip)
    written = 0
    if selected.any():
        written = _clamp_selected(obj, state, modes, kinds, channels, selected)
    state.modes = modes
    state.seen = channels
    return written


def _skipped(state, bones, skip):
    """Mask over the members: named in ``skip`` (kept for the next call with the same set)."""
    if state.skip is not skip:
        names = bones.keys()
        state.skip, state.skip_mask = skip, np.array([names[i] in skip for i in state.members.tolist()], dtype=bool)
    return state.skip_mask


def _result_keys(state, modes, kinds, channels, selected, rows):
    """Per row: its group, rotation mode and stored values, as bytes (the key of ``results``)."""
    raw = np.zeros((len(rows), 6))
    raw[:, 0] = state.group_of[selected]
    raw[:, 1] = modes[rows]
    row_kinds = kinds[rows]
    for kind, values in channels.items():
        here = row_kinds == kind
        if here.any():
            raw[here, 2:2 + values.shape[1]] = values[rows[here]]
    data = raw.tobytes()
    return [data[i:i + _KEY] for i in range(0, len(data), _KEY)]


def _clamp_selected(obj, state, modes, kinds, channels, selected):
    """Clamp and store the selected members; the values to store for stored values seen before
    come from ``state.results`` (they depend on the limit, the mode and those values only)."""
    rows = state.members[selected]
    keys = _result_keys(state, modes, kinds, channels, selected, rows)
    results = state.results
    found = list(map(results.get, keys))
    hits = [j for j, value in enumerate(found) if value]      # b"": stays as it is
    out_rows = hits
    out_values = [np.frombuffer(b"".join([found[j] for j in hits])).reshape(-1, 4)] if hits else []
    if None in found:
        new = [j for j, value in enumerate(found) if value is None]
        sub = selected.copy()
        sub[selected] = [value is None for value in found]
        stored, moved = _clamp_rows(state, modes, kinds, channels, sub, rows[new])
        if len(results) + len(new) > MEMO_MAX:
            results.clear()
        remembered = [b""] * len(new)
        data = stored.tobytes()
        moved = np.flatnonzero(moved).tolist()
        for k, slot in enumerate(moved):
            remembered[slot] = data[32 * k:32 * k + 32]
        results.update(zip([keys[j] for j in new], remembered))
        out_rows = hits + [new[slot] for slot in moved]
        out_values.append(stored)
    if not out_rows:
        return 0
    _write(obj, channels, kinds, rows[out_rows], np.concatenate(out_values), state.count)
    return len(out_rows)


def _clamp_rows(state, modes, kinds, channels, selected, rows):
    """Values to store ``(moved, 4)`` for the members ``selected`` (bones ``rows``), and which
    of them moved."""
    return clamp_rows(modes, kinds, channels, rows, _groups_of(state, selected))


def clamp_rows(modes, kinds, channels, rows, groups):
    """Values to store ``(moved, 4)`` for the rows ``rows`` of ``channels`` (rotation mode codes
    ``modes``, channels ``kinds``, indexed like ``channels``), and which of them moved; ``groups``:
    ``[(limit, positions into rows)]``. Rows that are not rotations stay."""
    q, ok = unit_quaternions(modes, channels, rows)
    clamped = clamp_groups(q, [(limit, at[ok[at]]) for limit, at in groups])
    tol = bone_limits.storage_tol(_stored_magnitude(kinds[rows], channels, rows))[:, None]
    moved = ok & (np.abs(clamped - q) > tol).any(axis=-1) & np.isfinite(clamped).all(axis=-1)
    return _stored(modes, channels, rows[moved], clamped[moved]), moved


def _stored_magnitude(kinds, channels, rows):
    """Largest stored angle of each row's channels (``bone_limits.stored_magnitude``, vectorised)."""
    magnitude = np.zeros(len(rows))
    for kind, values in ((EULER, lambda v: np.abs(v).max(axis=-1)), (AXIS_ANGLE, lambda v: np.abs(v[:, 0]))):
        here = kinds == kind
        if here.any():
            magnitude[here] = values(channels[kind][rows[here]])
    return magnitude


def _stored(modes, channels, rows, clamped):
    """The values to store ``(n, 4)`` for the clamped rotations of the bones ``rows`` in their
    own modes (``[:3]`` for Euler)."""
    offset, channel_of, _ = _mode_tables()
    stored = np.zeros((len(rows), 4))
    codes = modes[rows]
    for code in np.unique(codes):
        here = codes == code
        kind = int(channel_of[code + offset])
        width = CHANNELS[kind][1]
        stored[here, :width] = stored_values(kind, int(code), clamped[here], channels[kind][rows[here]])
    return stored


# --- few limited bones: one at a time on floats (the per-bone path, with groups and memos) ---


def raw_rotation(pb):
    """The stored rotation in the bone's mode (what tells that it changed)."""
    mode = pb.rotation_mode
    if mode == "QUATERNION":
        return pb.rotation_quaternion[:]
    if mode == "AXIS_ANGLE":
        return pb.rotation_axis_angle[:]
    return (mode, *pb.rotation_euler)


def unit_quaternion(pb, raw, mode=None):
    """The bone's rotation as a unit quaternion tuple (plain floats: one rotation is cheaper
    without numpy), or ``None`` when it is not a rotation (zero or non-finite). ``mode``: the
    bone's rotation mode, if read already."""
    mode = mode or pb.rotation_mode
    if mode != "QUATERNION":
        raw = pb.rotation_axis_angle if mode == "AXIS_ANGLE" else pb.rotation_euler
    return unit_quaternion_of(mode, raw, pb.name)


def unit_quaternion_of(mode, values, bone_name):
    """``unit_quaternion`` of the stored ``values`` of a bone in rotation mode ``mode``."""
    if mode != "QUATERNION":
        try:
            return tuple(bone_limits.rotation_of_values(mode, values, bone_name))
        except ValueError:
            return None
    w, x, y, z = values
    norm = math.sqrt(w * w + x * x + y * y + z * z)
    if not (norm > 1e-12 and math.isfinite(norm)):
        return None
    return w / norm, x / norm, y / norm, z / norm


def _clamp1(limit, q):
    clamp1 = getattr(limit, "clamp1", None)     # a float path (swing-twist, hinge), else the core's own
    return clamp1(q) if clamp1 is not None else tuple(limit.clamp(q).tolist())


def _storage_tol(mode, values):
    """``bone_limits.storage_tol(bone_limits.stored_magnitude(pb))`` of the stored values."""
    magnitude = 0.0 if mode == "QUATERNION" else abs(values[0]) if mode == "AXIS_ANGLE" else max(map(abs, values))
    return bone_limits.STORAGE_TOL * max(1.0, magnitude / math.pi)


def _clamp_few(obj, state, only_changed, skip=None):
    """``handlers.clamp_object_per_bone`` on the armature's groups: bones found by name, limits
    and memos shared per group, no settings read; the moved bones are stored together
    (``_store_few``). Bones named in ``skip`` are left alone."""
    bones = obj.pose.bones
    seen = state.few_seen
    pending = {}    # channel -> [(bone index, values)]
    for limit, memo, names in state.few_groups:
        for index, name in names:
            if skip and name in skip:
                continue
            pb = bones[name]
            mode = pb.rotation_mode
            key = (mode, *(pb.rotation_quaternion if mode == "QUATERNION" else
                           pb.rotation_axis_angle if mode == "AXIS_ANGLE" else pb.rotation_euler))
            if only_changed and seen.get(name) == key:
                continue
            clamped = memo.get(key)     # the rotation to write (False: none) for these values
            if clamped is None:
                clamped = memo[key] = moved(limit, name, mode, key[1:])
                if len(memo) > MEMO_MAX:
                    memo.clear()
            if clamped:
                attr, values = bone_limits.rotation_values(pb, clamped)
                values = np.asarray(values, dtype=np.float64).astype(np.float32)
                pending.setdefault(attr, []).append((index, values))
                key = (mode, *values.tolist())     # what Blender holds once written
            seen[name] = key
    if pending:
        _store_few(obj, pending)
    return sum(map(len, pending.values()))


def _store_few(obj, pending):
    """Write ``{channel: [(bone index, float32 values)]}`` with one ``foreach_set`` per channel
    and one ``tag_written``."""
    bones = obj.pose.bones
    count = len(bones)
    for attr, writes in pending.items():
        width = len(writes[0][1])
        whole = np.empty(count * width, dtype=np.float32)
        bones.foreach_get(attr, whole)
        whole = whole.reshape(count, width)
        for index, values in writes:
            whole[index] = values
        _set_channel(obj, attr, whole, [index for index, _ in writes])
    tag_written(obj)


def moved(limit, bone_name, mode, raw):
    """The clamped rotation of a bone (rotation mode ``mode``) whose stored values are ``raw``,
    or ``False`` when it stays (inside, within float32 storage, or not a rotation)."""
    q = unit_quaternion_of(mode, raw, bone_name)
    if q is None:
        return False
    clamped = _clamp1(limit, q)
    tol = _storage_tol(mode, raw)
    w, x, y, z = q
    cw, cx, cy, cz = clamped
    return clamped if abs(cw - w) > tol or abs(cx - x) > tol or abs(cy - y) > tol or abs(cz - z) > tol else False
