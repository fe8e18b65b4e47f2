"""Cost of live limits per frame, against Blender's Limit Rotation constraint and a rig without limits.

Run: .venv/bin/blender -b --factory-startup --python scripts/bench/live_limits.py [-- --rounds N]
(``-- --rigify-first-play --rounds 15``: only Rigify played, replayed and first play, ``rigify_focus``)

Measured in one run, on the same rigs and animations:

100-bone chain (4 swing shapes, twist limited), with two animations:
- keys outside the limits: random rotations, so every bone is corrected on every frame (the
  worst case: the cost of the correction math itself);
- keys inside the limits: the same keys clamped first (as when posed with live limits on), so
  the handler mostly checks;
and for each: playback without limits, with JointLimit's playback clamp (the array path and the
earlier per-bone path; what frame changes outside playback get with Fast Scrubbing off, and
renders), played (the playback layer: Blender's ``animation_playback_pre`` handlers are called,
as when the animation plays in the UI), frame changes with Fast Scrubbing on (the default:
the playback layer outside playback too), with a Limit Rotation constraint on each bone
(Blender's reference), the nine set-ups taking turns within each round, each the least of five
plays per round (a ratio to the constraints' tenth of a millisecond needs plays of the same
moment of a shared machine). Playback replays the same frames, whose clamped rotations the handlers
remember; the first-play rows empty those memos at the start of each play (frame 1), so that
every frame's rotations are checked and corrected anew, as on the first play after the keys or
limits were edited (the playback layer then computes frames ahead in batches).

The live-limit handler when nothing changed: on a depsgraph update that did not touch the
armature (selecting another object), and forced to re-read the armature (every rotation compared).

The same rig keyed outside its limits every 10 frames over a 500-frame shot: played without
limits, with the playback layer on its first play and replayed, and with Limit Rotation
constraints, taking turns within each round (the first play computes every frame, in batches, and
keys a window of frames at a time into the evaluated action).

Rigify's generated rig (706 bones) with limits on its FK controls and keys on them, the limits
either from ``RIGIFY_LIMITS`` (18 controls; ELLIPSE, OVAL and RECT with the paper's inscribed fit,
hinges) or from the shipped Arm, Leg and Spine chain presets with Fit to Rig (16 controls; OVAL
fitted to the axes, RECT, hinges), as an animator would apply them: frame
changes without limits against frame changes with live limits and the playback clamp on, played
with the playback layer, and frame changes with Fast Scrubbing (each replayed and first play),
the seven taking turns within
each round, each the least of five plays per round; the ratios are per round (the Rigify rig's
frame takes 2.3-3 ms, of which other jobs on a shared machine easily add a tenth).

"handler ms": the live-limit handlers' own CPU time per frame (this thread only), apart from
Blender's evaluation, which a written pose makes run a second time.
"""

import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # Blender does not add the script's folder

import _common  # noqa: E402,F401  (sets up the import path)
import bpy
import numpy as np  # noqa: E402

from _common import chain_armature, register_addon_from_source, table

N_BONES = 100
FRAMES = list(range(1, 21))
D = math.radians


def best_of(fn, repeat=5, number=1):
    """Median CPU seconds of this process per call of ``fn`` over ``repeat`` rounds: CPU time,
    not wall time, so that other work on a shared machine does not count (the depsgraph's
    worker threads do, in both the reference and the measured case)."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(number):
            fn()
        times.append((time.process_time() - start) / number)
    return statistics.median(times)


def _args():
    """``(rounds, focused)``: ``--rounds N`` (3), ``--rigify-first-play`` (only ``rigify_focus``)."""
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    return int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 3, "--rigify-first-play" in argv


def build_rig():
    obj = chain_armature("Bench", N_BONES, (0, 0, 0.1))
    shapes = ("RECT", "ELLIPSE", "OVAL", "SUPERELLIPSE")
    for i, pb in enumerate(obj.pose.bones):
        s = pb.jointlimit
        s.enabled, s.shape = True, shapes[i % 4]
        s.swing_x_min, s.swing_x_max = D(-30), D(60)
        s.swing_z_min, s.swing_z_max = D(-40), D(20)
        s.use_twist_limit, s.twist_min, s.twist_max = True, D(-20), D(20)
    return obj


def _random_rotation(rng, amplitude):
    """A rotation by up to ``amplitude`` radians about a random axis."""
    axis = rng.normal(size=3)
    angle = rng.uniform(0.0, amplitude)
    return np.r_[math.cos(angle / 2), math.sin(angle / 2) * axis / np.linalg.norm(axis)]


def _toward_rest(q, f):
    """The rotation ``q`` with its angle scaled by ``f`` (same axis)."""
    q = q if q[0] >= 0 else -q
    angle = 2.0 * math.atan2(np.linalg.norm(q[1:]), q[0]) * f
    axis = q[1:] / max(np.linalg.norm(q[1:]), 1e-12)
    return np.r_[math.cos(angle / 2), math.sin(angle / 2) * axis]


def key_random(obj, bone_limits, names, inside, seed=0, amplitude=math.pi):
    """Key random rotations at frames 1, 10, 20. ``inside``: each key clamped into the bone's
    limit and then brought 20% toward the rest pose, as an animation posed with live limits on
    (the frames in between stay inside or close to the outline)."""
    rng = np.random.default_rng(seed)
    for name in names:
        pb = obj.pose.bones[name]
        pb.rotation_mode = "QUATERNION"
        limit = bone_limits.build_limit(pb.jointlimit)
        for frame in (1, 10, 20):
            q = _random_rotation(rng, amplitude)
            if inside:
                q = limit.clamp(_toward_rest(limit.clamp(q), 0.8))
            pb.rotation_quaternion = q
            pb.keyframe_insert("rotation_quaternion", frame=frame)


def interleaved(scene, rounds, setups, plays=5, frames=FRAMES, checks=None):
    """Ms per frame of playing ``frames`` for several set-ups played in turn within each round,
    the least of ``plays`` plays per set-up and round (other jobs on a shared machine only ever
    add time: the least is the steadiest figure); one list of values per set-up. ``checks``: per
    set-up, ``None`` or a function called after its plays of each round (what they measured)."""
    def play():
        for f in frames:
            scene.frame_set(f)

    def timed():
        start = time.process_time()
        play()
        return time.process_time() - start

    values = [[] for _ in setups]
    for _ in range(rounds):
        for setup, out, check in zip(setups, values, checks or [None] * len(setups)):
            setup()
            play()
            out.append(min(timed() for _ in range(plays)) / len(frames) * 1e3)
            if check is not None:
                check()
    return values


def add_constraints(obj, on):
    for pb in obj.pose.bones:
        if on:
            con = pb.constraints.new("LIMIT_ROTATION")
            con.owner_space = "LOCAL"
            con.use_limit_x = con.use_limit_y = con.use_limit_z = True
            con.min_x, con.max_x = D(-30), D(60)
            con.min_z, con.max_z = D(-40), D(20)
            con.min_y, con.max_y = D(-20), D(20)
        else:
            for con in list(pb.constraints):
                pb.constraints.remove(con)


def span(values):
    lo, hi = min(values), max(values)
    return f"{lo:.2f}" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f}–{hi:.2f}"


def added(values, base):
    return span([v - b for v, b in zip(values, base)])


def handler_ms(handlers, scene, rounds):
    """The live-limit handlers' own CPU time per frame (ms, this thread only: no depsgraph
    evaluation, little of the machine's load), one value per round of 3 plays."""
    spent = []
    clamp_scene = handlers.clamp_scene

    def timed(*args, **kwargs):
        start = time.thread_time()
        try:
            return clamp_scene(*args, **kwargs)
        finally:
            spent.append(time.thread_time() - start)

    handlers.clamp_scene = timed
    try:
        values = []
        for _ in range(rounds):
            spent.clear()
            for _ in range(3):
                for f in FRAMES:
                    scene.frame_set(f)
            values.append(sum(spent) / (3 * len(FRAMES)) * 1e3)
        return values
    finally:
        handlers.clamp_scene = clamp_scene


def forgetter(addon, first_frame):
    """A ``frame_change_pre`` handler that empties the live limits' and the playback layer's memos
    on ``first_frame``: every play is a first play."""
    live_pose = sys.modules[addon.__name__ + ".live_pose"]
    layer = sys.modules[addon.__name__ + ".playback_layer"]

    def forget(scene, *_args):
        if scene.frame_current == first_frame:
            live_pose.forget_results()
            layer.forget_results()
    return forget


def set_forgetting(forget, on):
    """``forget`` first among the ``frame_change_pre`` handlers, or not there."""
    pre = bpy.app.handlers.frame_change_pre
    if on and forget not in pre:
        pre.insert(0, forget)
    elif not on and forget in pre:
        pre.remove(forget)


def chain_rows(addon, rounds, inside):
    """The 100-bone rig's set-ups taking turns within each round (``interleaved``: a ratio to the
    constraints' small cost compares plays of the same moment of a shared machine), then the
    handlers' own thread time in separate plays."""
    handlers = sys.modules[addon.__name__ + ".handlers"]
    bone_limits = sys.modules[addon.__name__ + ".bone_limits"]
    layer = sys.modules[addon.__name__ + ".playback_layer"]
    obj = build_rig()
    key_random(obj, bone_limits, [pb.name for pb in obj.pose.bones], inside)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = FRAMES[0], FRAMES[-1]     # the range played
    settings = scene.jointlimit
    forget = forgetter(addon, FRAMES[0])    # as on a first play: nothing remembered
    array_path = handlers.clamp_object

    def setup(clamp=False, forgetting=False, scrubbing=False, playing=False, per_bone=False, constraints=False):
        def apply():
            if layer._layer["playing"]:
                handlers.on_playback_stop(scene, None)
            settings.clamp_playback, settings.fast_scrubbing = clamp, scrubbing
            set_forgetting(forget, forgetting)
            handlers.clamp_object = handlers.clamp_object_per_bone if per_bone else array_path
            if constraints != any(pb.constraints for pb in obj.pose.bones):
                add_constraints(obj, constraints)
            if playing:
                handlers.on_playback_start(scene)   # Blender's animation_playback_pre handlers: the playback layer
        return apply

    def play():
        for f in FRAMES:
            scene.frame_set(f)

    def covered():     # the layer timed, not the playback clamp
        assert layer.covers(obj)

    setups = {"base": setup(), "ours": setup(True), "first": setup(True, forgetting=True),
              "per_bone": setup(True, per_bone=True),
              "playing": setup(True, scrubbing=True, playing=True),     # (Fast Scrubbing on: the default)
              "playing_first": setup(True, forgetting=True, scrubbing=True, playing=True),
              "scrubbing": setup(True, scrubbing=True), "scrubbing_first": setup(True, forgetting=True, scrubbing=True),
              "blender": setup(constraints=True)}
    checks = [covered if name.startswith(("playing", "scrubbing")) else None for name in setups]
    try:
        measured = dict(zip(setups, interleaved(scene, rounds, list(setups.values()), checks=checks)))
        handler_rows = {}
        for name in ("ours", "first", "per_bone"):
            setups[name]()
            play()      # (warm: the set-up before may have emptied the memos)
            handler_rows[name] = handler_ms(handlers, scene, rounds)
    finally:
        setups["base"]()
    ours_handler, first_handler, per_bone_handler = handler_rows.values()
    base, ours, first, per_bone, playing, playing_first, scrubbing, scrubbing_first, blender = measured.values()
    where = "inside" if inside else "outside"
    ratio = [(o - b) / (c - b) for o, b, c in zip(ours, base, blender) if c - b > 0.02]
    ratio_first = [(o - b) / (c - b) for o, b, c in zip(first, base, blender) if c - b > 0.02]
    ratio_playing = [(o - b) / (c - b) for o, b, c in zip(playing, base, blender) if c - b > 0.02]
    ratio_playing_first = [(o - b) / (c - b) for o, b, c in zip(playing_first, base, blender) if c - b > 0.02]
    ratio_scrubbing = [(o - b) / (c - b) for o, b, c in zip(scrubbing, base, blender) if c - b > 0.02]
    ratio_scrubbing_first = [(o - b) / (c - b) for o, b, c in zip(scrubbing_first, base, blender) if c - b > 0.02]
    rows = [
        (f"keys {where}: frame change, no limits", span(base), "-", "-"),
        (f"keys {where}: + JointLimit playback clamp (Fast Scrubbing off)", span(ours), added(ours, base),
         span(ours_handler)),
        (f"keys {where}: + same, first play (memos emptied before each play)", span(first), added(first, base),
         span(first_handler)),
        (f"keys {where}: + same, earlier per-bone path", span(per_bone), added(per_bone, base), span(per_bone_handler)),
        (f"keys {where}: + same, playing (playback layer)", span(playing), added(playing, base), "-"),
        (f"keys {where}: + same, playing, first play", span(playing_first), added(playing_first, base), "-"),
        (f"keys {where}: + same, frame changes, Fast Scrubbing (playback layer)", span(scrubbing),
         added(scrubbing, base), "-"),
        (f"keys {where}: + same, frame changes, Fast Scrubbing, first play", span(scrubbing_first),
         added(scrubbing_first, base), "-"),
        (f"keys {where}: + Limit Rotation constraints", span(blender), added(blender, base), "-"),
    ]
    return rows, (ratio, ratio_first, ratio_playing, ratio_playing_first, ratio_scrubbing, ratio_scrubbing_first), obj


LONG_SHOT = list(range(1, 501))


def long_shot_rows(addon, rounds):
    """The 100-bone rig keyed outside its limits every 10 frames over ``LONG_SHOT``, played:
    without limits, with the playback layer on its first play (nothing remembered at frame 1) and
    replayed, and with Limit Rotation constraints, taking turns within each round; a first play
    that wrote every remembered frame's keys grew with the shot."""
    handlers = sys.modules[addon.__name__ + ".handlers"]
    layer = sys.modules[addon.__name__ + ".playback_layer"]
    obj = build_rig()
    rng = np.random.default_rng(2)
    for pb in obj.pose.bones:
        pb.rotation_mode = "QUATERNION"
        for frame in LONG_SHOT[::10]:
            pb.rotation_quaternion = _random_rotation(rng, math.pi)
            pb.keyframe_insert("rotation_quaternion", frame=frame)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = LONG_SHOT[0], LONG_SHOT[-1]
    settings = scene.jointlimit

    forget = forgetter(addon, LONG_SHOT[0])

    def setup(clamp, forgetting=False, constraints=False):
        def apply():
            if layer._layer["playing"]:
                handlers.on_playback_stop(scene, None)
            settings.clamp_playback = clamp
            add_constraints(obj, False)
            if constraints:
                add_constraints(obj, True)
            set_forgetting(forget, forgetting)
            if clamp:
                handlers.on_playback_start(scene)
        return apply

    base, first, replay, blender = interleaved(
        scene, rounds, (setup(False), setup(True, forgetting=True), setup(True), setup(False, constraints=True)),
        plays=3, frames=LONG_SHOT)
    setup(False)()
    n = len(LONG_SHOT)
    rows = [
        (f"{n}-frame shot, keys outside every 10 frames: no limits", span(base), "-", "-"),
        ("+ JointLimit, playing, first play (playback layer)", span(first), added(first, base), "-"),
        ("+ same, replayed", span(replay), added(replay, base), "-"),
        ("+ Limit Rotation constraints", span(blender), added(blender, base), "-"),
    ]
    ratios = {what: [(o - b) / (c - b) for o, b, c in zip(values, base, blender) if c - b > 0.02]
              for what, values in (("first play", first), ("replayed", replay))}
    return rows, ratios


def idle_rows(addon, rounds):
    """Time the real depsgraph handler inside real updates that do not touch the armature, and
    a pass that re-reads the armature (every rotation compared with the last seen)."""
    handlers = sys.modules[addon.__name__ + ".handlers"]
    scene = bpy.context.scene
    scene.jointlimit.live = True
    other = bpy.data.objects.new("Other", None)
    scene.collection.objects.link(other)
    bpy.context.view_layer.update()
    handlers.clamp_scene(scene, only_changed=True)  # everything seen once
    times = []

    def timed(scene, depsgraph=None):
        start = time.process_time()
        handlers.on_depsgraph_update(scene, depsgraph)
        times.append(time.process_time() - start)

    post = bpy.app.handlers.depsgraph_update_post
    post.remove(handlers.on_depsgraph_update)
    post.append(timed)
    try:
        update = []
        for _ in range(rounds):
            times.clear()
            for _ in range(100):
                other.location.x += 0.01   # another object moves
                bpy.context.view_layer.update()
            update.append(sorted(times)[len(times) // 2] * 1e3)
    finally:
        post.remove(timed)
        post.append(handlers.on_depsgraph_update)
    live_pose = sys.modules[addon.__name__ + ".live_pose"]

    def reread_armature():      # what an update that touched the armature costs
        live_pose.recheck_bones()
        handlers.clamp_scene(scene, only_changed=True)

    reread = [best_of(reread_armature, repeat=5, number=20) * 1e3 for _ in range(rounds)]
    scene.jointlimit.live = False
    return [
        ("live-limit handler, update not touching the armature", "-", span(update), "-"),
        ("live-limit handler, armature re-read, nothing changed", "-", span(reread), "-"),
    ]


RIGIFY_LIMITS = {   # plausible human ranges: (kind, swing X, swing Z, twist) in degrees
    "upper_arm_fk": ("SWING_TWIST", "ELLIPSE", (-60, 90), (-80, 40), (-60, 60)),
    "forearm_fk": ("HINGE", None, (0, 145), None, None),
    "hand_fk": ("SWING_TWIST", "ELLIPSE", (-70, 70), (-25, 35), (-10, 10)),
    "thigh_fk": ("SWING_TWIST", "OVAL", (-30, 110), (-35, 40), (-40, 40)),
    "shin_fk": ("HINGE", None, (0, 150), None, None),
    "foot_fk": ("SWING_TWIST", "RECT", (-45, 30), (-20, 20), (-25, 25)),
    "toe_fk": ("HINGE", None, (-40, 60), None, None),
    "spine_fk": ("SWING_TWIST", "ELLIPSE", (-25, 35), (-25, 25), (-20, 20)),
}


PRESET_CHAINS = (   # what an animator selects for each chain preset (README, Rigify how-to)
    ("CHAIN:ARM", [f"{b}.{side}" for side in "LR" for b in ("upper_arm_fk", "forearm_fk", "hand_fk")]),
    ("CHAIN:LEG", [f"{b}.{side}" for side in "LR" for b in ("thigh_fk", "shin_fk", "foot_fk", "toe_fk")]),
    ("CHAIN:SPINE", ["spine_fk.002", "spine_fk.003"]),
)


def _limit_key(name):
    return name.split(".")[0]


def rigify_rig(addon, presets=False):
    """Rigify's generated rig with limits on its FK controls: from ``RIGIFY_LIMITS``, or with
    ``presets`` from the shipped chain presets (Fit to Rig), applied as an animator would."""
    import addon_utils

    addon_utils.enable("rigify", default_set=True)
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.object.armature_human_metarig_add()
    bpy.ops.pose.rigify_generate()
    rig = bpy.data.objects["rig"]
    if presets:
        names = _apply_presets(addon, rig)
    else:
        names = _apply_table(addon, rig)
    for pb in rig.pose.bones:   # the limbs follow their FK chains
        if "IK_FK" in pb.keys():
            pb["IK_FK"] = 1.0
    return rig, names


def _apply_presets(addon, rig):
    compat = sys.modules[addon.__name__ + ".compat"]
    bpy.ops.object.select_all(action="DESELECT")
    bpy.context.view_layer.objects.active = rig
    rig.select_set(True)
    bpy.ops.object.mode_set(mode="POSE")
    for preset, bones in PRESET_CHAINS:
        for pb in rig.pose.bones:
            compat.select_pose_bone(pb, pb.name in bones)
        rig.data.bones.active = rig.data.bones[bones[0]]
        bpy.ops.pose.jointlimit_preset_apply(preset=preset)
    bpy.ops.object.mode_set(mode="OBJECT")
    return [pb.name for pb in rig.pose.bones if pb.jointlimit.enabled]


def _apply_table(addon, rig):
    mirror = sys.modules[addon.__name__ + ".settings_io"].mirror_settings
    names = []
    for pb in rig.pose.bones:
        key = _limit_key(pb.name)
        if key not in RIGIFY_LIMITS or pb.name.endswith(".R"):
            continue
        kind, shape, x, z, twist = RIGIFY_LIMITS[key]
        s = pb.jointlimit
        s.enabled, s.kind = True, kind
        if kind == "HINGE":
            s.hinge_min, s.hinge_max = D(x[0]), D(x[1])
        else:
            s.shape = shape
            s.swing_x_min, s.swing_x_max = D(x[0]), D(x[1])
            s.swing_z_min, s.swing_z_max = D(z[0]), D(z[1])
            s.use_twist_limit, s.twist_min, s.twist_max = True, D(twist[0]), D(twist[1])
        names.append(pb.name)
        right = rig.pose.bones.get(pb.name[:-2] + ".R") if pb.name.endswith(".L") else None
        if right is not None:
            mirror(s, right.jointlimit)
            names.append(right.name)
    return names


def rigify_rows(addon, rounds, presets=False):
    bone_limits = sys.modules[addon.__name__ + ".bone_limits"]
    handlers = sys.modules[addon.__name__ + ".handlers"]
    rig, names = rigify_rig(addon, presets)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = FRAMES[0], FRAMES[-1]     # the range played
    layer = sys.modules[addon.__name__ + ".playback_layer"]

    forget = forgetter(addon, FRAMES[0])

    def setup(live, forgetting, playing=False, scrubbing=False):
        """Live limits on or off, memos forgotten at the start of each play, played (the playback
        layer: Blender's animation_playback_pre handlers) or stepped frame by frame (scrubbing,
        rendering, frame_set: the playback clamp, or with ``scrubbing`` the playback layer)."""
        def apply():
            scene.jointlimit.live = scene.jointlimit.clamp_playback = live
            scene.jointlimit.fast_scrubbing = scrubbing
            set_forgetting(forget, forgetting)
            if playing:
                handlers.on_playback_start(scene)
            elif layer.is_installed() or layer._layer["playing"]:
                handlers.on_playback_stop(scene, None)
        return apply

    rows = []
    ratios = {}
    for inside in (True, False):
        rig.animation_data_clear()
        key_random(rig, bone_limits, names, inside, seed=1, amplitude=D(120))
        # the three cases take turns in each round (a big rig's frame varies with the load of
        # the machine, which a block of rounds per case would count as a difference)
        base, ours, first, playing, playing_first, scrubbing, scrubbing_first = interleaved(
            scene, 2 * rounds, (setup(False, False), setup(True, False), setup(True, True), setup(True, False, True),
                                setup(True, True, True), setup(True, False, scrubbing=True),
                                setup(True, True, scrubbing=True)))
        setup(True, False)()
        ours_handler = handler_ms(handlers, scene, rounds)
        setup(True, True)()
        first_handler = handler_ms(handlers, scene, rounds)
        setup(False, False)()
        where = "inside" if inside else "outside"
        rows += [
            (f"Rigify ({len(rig.pose.bones)} bones), keys {where}: no limits", span(base), "-", "-"),
            (f"Rigify, keys {where}: + live limits on {len(names)} FK controls, playback clamp (Fast Scrubbing off)",
             span(ours), added(ours, base),
             span(ours_handler)),
            (f"Rigify, keys {where}: + same, first play", span(first), added(first, base), span(first_handler)),
            (f"Rigify, keys {where}: + same, playing (playback layer)", span(playing), added(playing, base), "-"),
            (f"Rigify, keys {where}: + same, playing, first play", span(playing_first), added(playing_first, base), "-"),
            (f"Rigify, keys {where}: + same, frame changes, Fast Scrubbing", span(scrubbing), added(scrubbing, base),
             "-"),
            (f"Rigify, keys {where}: + same, frame changes, Fast Scrubbing, first play", span(scrubbing_first),
             added(scrubbing_first, base), "-"),
        ]
        ratios[where] = [o / b - 1 for o, b in zip(ours, base)]
        ratios[where + ", first play"] = [o / b - 1 for o, b in zip(first, base)]
        ratios[where + ", playing"] = [o / b - 1 for o, b in zip(playing, base)]
        ratios[where + ", playing, first play"] = [o / b - 1 for o, b in zip(playing_first, base)]
        ratios[where + ", Fast Scrubbing"] = [o / b - 1 for o, b in zip(scrubbing, base)]
        ratios[where + ", Fast Scrubbing, first play"] = [o / b - 1 for o, b in zip(scrubbing_first, base)]
    return rows, ratios, len(names)


def rigify_focus(addon, rounds):
    """Rigify, keys outside, played: no limits, replayed and first play in turn (``rounds`` rounds
    of five plays each), for each source of limits: the one case at the limit of issue 22, which
    the whole benchmark's seven set-ups a round resolve less finely."""
    bone_limits = sys.modules[addon.__name__ + ".bone_limits"]
    handlers = sys.modules[addon.__name__ + ".handlers"]
    layer = sys.modules[addon.__name__ + ".playback_layer"]
    for presets, limits in ((False, "limits of RIGIFY_LIMITS"), (True, "limits from the chain presets")):
        rig, names = rigify_rig(addon, presets)
        scene = bpy.context.scene
        scene.frame_start, scene.frame_end = FRAMES[0], FRAMES[-1]
        rig.animation_data_clear()
        key_random(rig, bone_limits, names, False, seed=1, amplitude=D(120))
        forget = forgetter(addon, FRAMES[0])

        def setup(live, forgetting):
            def apply():
                if layer._layer["playing"]:
                    handlers.on_playback_stop(scene, None)
                scene.jointlimit.live = scene.jointlimit.clamp_playback = live
                set_forgetting(forget, forgetting)
                if live:
                    handlers.on_playback_start(scene)
            return apply

        base, replay, first = interleaved(scene, rounds, (setup(False, False), setup(True, False), setup(True, True)))
        setup(False, False)()
        for what, values in (("replayed", replay), ("first play", first)):
            ratios = [o / b - 1 for o, b in zip(values, base)]
            print(f"Rigify, {limits}, keys outside, played, {what}: median {statistics.median(ratios) * 100:+.1f} % "
                  f"(rounds {min(ratios) * 100:+.0f} to {max(ratios) * 100:+.0f} %; no limits {span(base)} ms)")


def main():
    rounds, focused = _args()
    addon = register_addon_from_source()
    if focused:
        rigify_focus(addon, rounds)
        addon.unregister()
        return
    rows, ratio_out, _ = chain_rows(addon, rounds, inside=False)
    more, ratio_in, _ = chain_rows(addon, rounds, inside=True)
    rows += more
    rows += idle_rows(addon, rounds)
    print(table(("per frame, 100-bone rig (ms, range over rounds)", "total ms", "added ms", "handler ms"), rows))
    ratios = [f"keys {k} {span(v)}×" if v else f"keys {k}: n/a (the constraints' cost is within timing noise)"
              for k, v in (("outside", ratio_out[0]), ("inside", ratio_in[0]),
                           ("outside, first play", ratio_out[1]), ("inside, first play", ratio_in[1]),
                           ("outside, playing", ratio_out[2]), ("inside, playing", ratio_in[2]),
                           ("outside, playing, first play", ratio_out[3]), ("inside, playing, first play", ratio_in[3]),
                           ("outside, Fast Scrubbing", ratio_out[4]), ("inside, Fast Scrubbing", ratio_in[4]),
                           ("outside, Fast Scrubbing, first play", ratio_out[5]),
                           ("inside, Fast Scrubbing, first play", ratio_in[5]))]
    print("JointLimit / Limit Rotation added cost: " + ", ".join(ratios))
    rows, ratios = long_shot_rows(addon, rounds)
    print(table(("per frame, 100-bone rig, a long shot (ms, range over rounds)", "total ms", "added ms", "handler ms"),
                rows))
    print("JointLimit / Limit Rotation added cost, long shot: "
          + ", ".join(f"{k} {span(v)}×" if v else f"{k}: n/a" for k, v in ratios.items()))
    for presets, limits in ((False, "limits of RIGIFY_LIMITS"), (True, "limits from the chain presets")):
        rows, ratios, n = rigify_rows(addon, rounds, presets)
        print(table((f"per frame, Rigify rig, {limits}", "total ms", "added ms", "handler ms"), rows))
        print(f"Rigify playback with live limits on {n} FK controls ({limits}): "
              + ", ".join(f"keys {k} +{span([r * 100 for r in v])} % (median {statistics.median(v) * 100:+.0f} %)"
                          for k, v in ratios.items()))
    addon.unregister()


if __name__ == "__main__":
    main()
