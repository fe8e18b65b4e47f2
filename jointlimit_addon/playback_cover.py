"""An armature the playback layer covers (``playback_layer``, whose docstring tells the whole):
which of its bones it keys, the values to store of the frames it computed, and the window of
keys it writes into the evaluated copy of the armature's action."""

import heapq

import bpy
import numpy as np

from . import bone_limits, compat, live_pose

MARK = "jointlimit_playback_layer"      # ID property of the evaluated action copies written (and of earlier versions' helper)
MEMO_FLOATS = 1 << 22    # values remembered per armature (32 MB): a longer shot forgets and computes again
AHEAD = 32      # frames computed together on a frame not seen before (see playback_layer)
WINDOW = 4 * AHEAD      # most frames keyed into the evaluated copies at once (see playback_layer)
FEW_MODES = 8   # covered bones checked by name when at most one bone in this many is covered


class Bone:
    """One covered bone: its rotation mode, the data path of its rotation channel and its limit."""

    __slots__ = ("name", "mode", "path", "width", "limit")

    def __init__(self, name, mode, path, width, limit):
        self.name, self.mode, self.path, self.width, self.limit = name, mode, path, width, limit


class Cover:
    """A covered armature: its bones, the frames computed, which bones the clamp moved, and what
    tells that its animation is still the one covered."""

    __slots__ = ("obj_name", "uid", "action_name", "action_uid", "bones", "animation", "frames", "codes", "kinds",
                 "groups", "used", "offsets", "moved", "batch", "drivers", "names", "shown", "count", "indices",
                 "window", "found", "channel_kinds", "layouts")

    def __init__(self, obj, bones):
        self.obj_name, self.uid, self.bones = obj.name, obj.session_uid, bones
        action = obj.animation_data.action
        self.action_name, self.action_uid = action.name, action.session_uid     # the action keyed
        self.found = {"object": obj, "action": action}     # the IDs as last found (``_found``)
        self.animation = animation_key(obj)
        self.frames = {}    # scene time -> values (a row of its batch), while the keys are unchanged
        self.codes, self.kinds = (np.array(a, dtype=np.int64).reshape(-1)
                                  for a in zip(*[live_pose.mode_code(bone.mode) for bone in bones]))
        self.channel_kinds = [int(kind) for kind in np.unique(self.kinds)]
        self.layouts = {}   # batch size -> ``_layout``
        by_limit = {}
        for i, bone in enumerate(bones):
            by_limit.setdefault(id(bone.limit), (bone.limit, []))[1].append(i)
        self.groups = [(limit, np.array(members)) for limit, members in by_limit.values()]
        widths = np.array([bone.width for bone in bones])
        self.used = np.arange(4) < widths[:, None]      # (bones, 4)
        self.offsets = (np.cumsum(widths) - widths).tolist()     # of each bone's values in a frame's
        self.moved = np.zeros(len(bones), dtype=bool)   # bones moved on a computed frame: their keys are written
        self.batch = 0      # windows chosen: an evaluated copy marked with an older one lacks keys
        self.window = {}    # the scene times whose keys the copies hold (a subset of frames), in order
        self.drivers = len(obj.animation_data.drivers)  # the user's drivers on the armature
        self.names = frozenset(bone.name for bone in bones)
        pose_bones = obj.pose.bones
        self.count = len(pose_bones)
        self.indices = np.array([pose_bones.find(bone.name) for bone in bones], dtype=np.int64)
        self.shown = None   # the layer's frame count when the frame evaluated (viewport) took its values from the latest window

    def _found(self, kind, uid):
        """The ID found last (``object`` or ``action``) while Python still holds it: Blender
        invalidates the Python object of an ID it frees (deleted, an undo or a file load made it
        anew), which then raises ``ReferenceError``; ``None`` then. (A lookup by name costs a
        pass over the file's IDs, on every frame.)"""
        try:
            found = self.found[kind]
            return found if found is not None and found.session_uid == uid else None
        except ReferenceError:
            return None

    def object(self):
        """The armature (found again when renamed), or ``None`` when it was deleted."""
        obj = self._found("object", self.uid)
        if obj is not None:
            return obj
        obj = bpy.data.objects.get(self.obj_name)
        if obj is None or obj.session_uid != self.uid:
            obj = next((o for o in bpy.data.objects if o.session_uid == self.uid), None)
        if obj is not None:
            self.obj_name = obj.name
        self.found["object"] = obj
        return obj

    def modes_changed(self, obj):
        """Whether a covered bone's rotation mode changed (or bones were added or removed): one
        ``foreach_get`` of every bone's mode, or each covered bone's by name when they are few
        among many (Rigify's 18 FK controls among 706 bones)."""
        bones = obj.pose.bones
        if len(self.bones) * FEW_MODES <= self.count:
            for bone in self.bones:
                pb = bones.get(bone.name)
                if pb is None or pb.rotation_mode != bone.mode:
                    return True
            return False
        modes = live_pose.read_modes(bones, self.count)
        return modes is None or bool((modes[self.indices] != self.codes).any())

    def animation_changed(self, obj):
        """Whether ``obj`` is no longer animated the way covered (another action or slot, blended
        otherwise, its action given to something else too, a driver added by the user: its
        channel may be one the layer keys)."""
        data = obj.animation_data
        return animation_key(obj, data) != self.animation or len(data.drivers) != self.drivers

    def values(self, frame, ahead=lambda count: [], check_modes=True):
        """The values of every covered bone at ``frame``, or ``None`` when the armature's
        animation is no longer the one covered (another action or slot, blended otherwise, a
        driver added, the armature gone, F-curves missing from a batch; with ``check_modes``, a
        covered bone's rotation mode changed: by a script right before the frame, with no
        update since, also while playing). Those of the frames
        ``ahead(AHEAD)`` (the ones playback is expected to show next; asked only when ``frame`` is
        not in the window) not remembered are computed with them, in one batch. A frame outside
        the window of keys gets a new window: it and the remembered ones of ``ahead(WINDOW)``, or
        with none expected (scrubbing) the ``WINDOW - 1`` remembered frames nearest it, so that
        scrubbing over frames seen before writes no key."""
        obj = self.object()
        if obj is None or self.animation_changed(obj):
            return None
        if check_modes and self.modes_changed(obj):
            return None
        out = self.frames.get(frame)
        if out is not None and frame in self.window:
            return out
        later = [f for f in ahead(WINDOW) if f != frame]
        if out is None:
            frames = [frame, *dict.fromkeys(f for f in later[:AHEAD - 1] if f not in self.frames)]
            curves = fcurves(obj)
            computed = None if curves is None else self._compute(curves, frames)
            if computed is None:
                return None
            if (len(self.frames) + len(frames)) * computed.shape[1] > MEMO_FLOATS:
                self.frames.clear()
            self.frames.update(zip(frames, computed))
            out = computed[0]
        window = {frame, *(f for f in later if f in self.frames)}
        if not later and len(self.frames) > 1:     # scrubbing: the remembered frames around it too
            window.update(heapq.nsmallest(WINDOW - 1, self.frames, key=lambda f: abs(f - frame)))
        self.window = dict.fromkeys(sorted(window))
        self.batch += 1
        return out

    def _compute(self, fcurves, frames):
        """Per frame of ``frames`` (rows), the values to store of every covered bone, channel
        after channel (``None`` when a channel lost its F-curve): each bone's keyed values where
        they are inside its limit, else the clamped rotation in the bone's mode, continuous with
        the keyed values -- the values the playback clamp writes (``live_pose.clamp_rows``). The
        bones moved on any of these frames get keys (``moved``). The F-curves are looked up
        anew: a reference kept from an earlier frame would point to freed memory once the F-curve
        is deleted."""
        n = len(frames)
        read = []
        find = fcurves.find
        for bone in self.bones:
            for i in range(bone.width):
                fc = find(bone.path, index=i)
                if fc is None:
                    return None
                read += map(fc.evaluate, frames)
        codes, kinds, rows, groups = self._layout(n)
        values = np.zeros((len(self.bones), 4, n))     # each bone's channels, unused ones 0
        values[self.used] = np.reshape(read, (-1, n))
        values = values.transpose(0, 2, 1).reshape(-1, 4)     # row b * n + j: bone b at frames[j]
        channels = {kind: values[:, :live_pose.CHANNELS[kind][1]] for kind in self.channel_kinds}
        stored, moved = live_pose.clamp_rows(codes, kinds, channels, rows, groups)
        values[moved] = stored
        self.moved |= moved.reshape(len(self.bones), n).any(axis=1)
        return values.reshape(len(self.bones), n, 4).transpose(1, 0, 2)[:, self.used]

    def _layout(self, n):
        """The rows of a batch of ``n`` frames (row ``b * n + j``: bone ``b`` at the ``j``-th
        frame): their rotation mode codes and channels, every row, and each limit's rows (kept
        per ``n``: a first play's batches are mostly of ``AHEAD`` frames)."""
        layout = self.layouts.get(n)
        if layout is None:
            layout = self.layouts[n] = (np.repeat(self.codes, n), np.repeat(self.kinds, n), np.arange(len(self.bones) * n),
                                        [(limit, (members[:, None] * n + np.arange(n)).ravel())
                                         for limit, members in self.groups])
        return layout

    def keyed_at(self, frame, scene):
        """Whether the evaluated copies of the action in ``scene``'s view layers hold the keys of
        ``frame`` (in the window, and every copy written with the latest one)."""
        if frame not in self.window:
            return False
        copies = self.copies(scene)
        return bool(copies) and all(copy.get(MARK) == self.batch for copy in copies)

    def action(self):
        """The covered action (found again when renamed), or ``None`` when it was deleted."""
        action = self._found("action", self.action_uid)
        if action is not None:
            return action
        action = bpy.data.actions.get(self.action_name)
        if action is None or action.session_uid != self.action_uid:
            action = next((a for a in bpy.data.actions if a.session_uid == self.action_uid), None)
        if action is not None:
            self.action_name = action.name
        self.found["action"] = action
        return action

    def copies(self, scene):
        """The evaluated copies of the covered action, one per view layer of ``scene`` whose
        depsgraph has one (also after the armature took another action)."""
        action = self.action()
        if action is None:
            return []
        return [copy for copy in (evaluated(action, view_layer) for view_layer in scene.view_layers)
                if copy is not None]

    def write_keys(self, copy):
        """Write the window's frames of each moved bone as keys into ``copy`` (an evaluated copy
        of the action): a key per frame, at the frame's time, with the value to store. The
        copy is marked first, so that ``remove`` has it made anew even when this stops halfway.
        ``False`` when a channel is missing from the copy (the layer then goes)."""
        copy[MARK] = -1
        if not self.moved.any() or not self.window:
            copy[MARK] = self.batch
            return True
        fcurves = compat.action_fcurve_collection(copy, self.object().animation_data.action_slot)
        if fcurves is None:
            return False
        times = list(self.window)
        co = np.empty((len(self.frames[times[0]]), len(times), 2), dtype=np.float32)   # per channel: its keys
        co[:, :, 0] = times
        co[:, :, 1] = np.array([self.frames[t] for t in times]).T
        find = fcurves.find
        for b in np.flatnonzero(self.moved).tolist():
            bone, offset = self.bones[b], self.offsets[b]
            for i in range(bone.width):
                fc = find(bone.path, index=i)
                if fc is None:
                    return False
                modifiers = fc.modifiers
                if modifiers:   # the values were computed with them
                    for modifier in list(modifiers):
                        modifiers.remove(modifier)
                points = fc.keyframe_points
                if len(points) > len(times):
                    points.clear()
                if len(points) < len(times):
                    points.add(len(times) - len(points))
                points.foreach_set("co", co[offset + i].ravel())
        copy[MARK] = self.batch
        return True


def fcurves(obj):
    data = obj.animation_data
    return compat.action_fcurve_collection(data.action, data.action_slot)


def evaluated(action, view_layer):
    """``action``'s evaluated copy in ``view_layer``'s depsgraph, if there is one (Blender gives
    ``frame_change_pre`` no depsgraph; its evaluation of the new frame has not started)."""
    depsgraph = view_layer.depsgraph
    if depsgraph is None:
        return None
    copy = action.evaluated_get(depsgraph)
    return copy if copy.is_evaluated else None


def animation_key(obj, data=None):
    """What decides how an armature's action animates it, to tell a change each frame: the
    action, its slot, its number of users (another rig given it would play the layer's keys), and
    how it is blended (influence, blend type, tweak mode, NLA tracks playing). F-curves added or
    removed tag the action, whose copy the frame's evaluation then makes anew (``after_frame``).
    ``data``: ``obj.animation_data``, if read already."""
    data = obj.animation_data if data is None else data
    action = data.action if data is not None else None
    if action is None:
        return None
    slot = data.action_slot
    return (action.session_uid, None if slot is None else slot.identifier, action.users, data.action_influence,
            data.action_blend_type, data.use_tweak_mode, sum(map(track_plays, data.nla_tracks)))


def track_plays(track):
    """Whether Blender evaluates an NLA track: unmuted, or solo (a solo track plays even muted,
    and the action then does not)."""
    return not track.mute or track.is_solo


# --- which armatures the layer covers --------------------------------------------------------


def covered_bones(obj, peers=()):
    """The bones the layer would key on ``obj`` (``[]``: none moves), or ``None`` when the
    armature's rotations do not come from its action alone (see the module). ``peers``: other
    armatures that may play the same action (``shared``; a render's, ``render_peers``)."""
    data = obj.animation_data
    if obj.library is not None or data is None or data.action is None:
        return None
    if (data.use_tweak_mode or data.action_blend_type != "REPLACE" or data.action_influence != 1.0
            or any(map(track_plays, data.nla_tracks)) or data.action.library is not None
            or shared(data.action, obj, peers)):
        return None     # (a linked action's evaluated copy is read-only: keys would be written as zeros)
    collection = fcurves(obj)
    if collection is None:
        return None
    curves = {(fc.data_path, fc.array_index): fc for fc in collection}
    driven = {(fc.data_path, fc.array_index) for fc in data.drivers}
    bones = []
    for pb in obj.pose.bones:
        settings = pb.jointlimit
        if not settings.enabled:
            continue
        limit = bone_limits.cached_limit(settings)[0]
        if limit is None:
            continue    # invalid settings: left alone (the panel says why)
        attr, width = bone_limits.rotation_path(pb)
        path = pb.path_from_id(attr)
        keyed = [curves.get((path, i)) for i in range(width)]
        if any(fc is not None and len(fc.sampled_points) for fc in keyed):
            return None     # baked to samples: no keys to write among
        keyed = [None if fc is None or is_empty(fc) else fc for fc in keyed]
        if (pb.path_from_id("rotation_mode"), 0) in curves or any((path, i) in driven for i in range(width)):
            return None
        if all(fc is None for fc in keyed):
            continue    # not animated: clamped once on install
        if any(fc is None or fc.mute or (fc.group is not None and fc.group.mute) for fc in keyed):
            return None     # a muted channel: Blender leaves it alone, keys the layer writes included
        bones.append(Bone(pb.name, pb.rotation_mode, path, width, limit))
    return bones


def shared(action, obj, peers=()):
    """Whether anything but ``obj``'s own animation (and that of the armatures ``peers``) uses
    ``action`` (another armature, an Action constraint): they would read the same evaluated copy,
    keys included. (An NLA strip holding it reads nothing: only a rig without a track playing is
    covered; the action stashed in a muted track and assigned again is.)"""
    if any(con.type == "ACTION" and con.action == action
           for owner in (obj, *obj.pose.bones) for con in owner.constraints):
        return True
    if action.users - int(action.use_fake_user) <= 1:
        return False
    users = bpy.data.user_map(subset=[action]).get(action, ())
    return any(user != obj and user not in peers and hasattr(user, "animation_data") for user in users)


def render_peers(obj, objects):
    """``(bones, peers)`` for a rig of a render whose action other rigs of ``objects`` play too (a
    character duplicated with its action, a crowd given one action): when every other user of
    the action is one of them, playing the same slot alone as ``obj`` does, with the same covered
    bones in the same rotation modes under the same limit settings, the keys a render writes once
    into its copy of the action are each rig's own: ``obj``'s covered bones and those peers.
    ``None`` otherwise (the rigs disagree: the render leaves their animation as it is)."""
    data = obj.animation_data
    action = None if data is None else data.action
    if action is None or action.users - int(action.use_fake_user) <= 1:
        return None
    slot = _slot_of(data)
    peers = tuple(o for o in objects if o != obj and o.animation_data is not None
                  and o.animation_data.action == action and _slot_of(o.animation_data) == slot)
    bones = covered_bones(obj, peers) if peers else None
    if not bones:
        return None
    key = _bones_key(obj, bones)
    for peer in peers:
        others = (obj, *(p for p in peers if p != peer))
        peer_bones = covered_bones(peer, others)
        if peer_bones is None or _bones_key(peer, peer_bones) != key:
            return None
    return bones, peers


def _slot_of(data):
    slot = data.action_slot
    return None if slot is None else slot.identifier


def _bones_key(obj, bones):
    pose_bones = obj.pose.bones
    return [(bone.name, bone.mode, bone.path, bone.width, bone_limits.signature(pose_bones[bone.name].jointlimit))
            for bone in bones]


def is_empty(fc):
    """An F-curve that Blender's animation leaves alone: no keys and no modifier making a curve."""
    return len(fc.keyframe_points) == 0 and not any(m.type in ("GENERATOR", "FNGENERATOR") for m in fc.modifiers)
