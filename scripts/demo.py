"""JointLimit demo, run headless by ``make demo``:

    blender -b --factory-startup --python scripts/demo.py [-- --quick]

Installs the built extension into this Blender (``make demo`` points Blender's user folder at
``out/blender-user`` so your own Blender set-up is untouched), builds a character on Rigify's
human meta-rig with a capsule body and a tail (``demo_character.py``), and drives it only through
JointLimit's public operators:

- limits from the presets (``pose.jointlimit_preset_apply``: arm, leg and spine chains, tail);
- the SDEF deformer on the arms (``object.jointlimit_sdef_derive``, ``object.jointlimit_deformer_add``);
- one wild pose, rendered as it is and after ``pose.jointlimit_apply``  -> ``out/demo_limits.png``;
- key poses: the arms by limb IK with limits (``pose.jointlimit_limb_ik``), the tail by CCD IK
  (``pose.jointlimit_ccd_ik``); smooth min-jerk in-betweens (``pose.jointlimit_motion``) over
  three seconds -> ``out/demo_motion.png`` (a strip of five frames);

then saves ``out/demo.blend`` and prints a summary table. ``-- --quick`` renders smaller pictures
(used by the test suite).
"""

import importlib
import math
import os
import pathlib
import sys
import time
import tomllib

import bpy
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "out"
MODULE = "bl_ext.user_default.jointlimit_addon"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # Blender does not add the script's folder

import demo_character  # noqa: E402
import demo_scene  # noqa: E402

ROWS = []
ADDON_MODULE = MODULE  # make_docs.py points this at the add-on it registered from the checkout
FRAMES = (1, 36, 72)  # key poses; 72 frames at 24 fps = 3 s of motion
STRIP = (1, 18, 36, 54, 72)
QUICK = "--quick" in sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else False


def step(name):
    """Timing of one demo step: ``with step('x') as row: row.append(result)``."""

    class _Step:
        def __enter__(self):
            self.start, self.result = time.perf_counter(), []
            return self.result

        def __exit__(self, *exc):
            if exc[0] is None:
                ROWS.append((name, "; ".join(self.result), f"{time.perf_counter() - self.start:.2f}"))
            return False

    return _Step()


def install():
    manifest = tomllib.loads((ROOT / "blender_manifest.toml").read_text())
    zip_path = ROOT / "dist" / f"{manifest['id']}-{manifest['version']}.zip"
    if not zip_path.is_file():
        sys.exit(f"demo: {zip_path} is missing; run 'make build'")
    bpy.ops.extensions.package_install_files(filepath=str(zip_path), repo="user_default", enable_on_install=True)
    return importlib.import_module(MODULE)


def object_mode():
    if bpy.context.object and bpy.context.object.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")


def pose_mode(rig, active, selected=()):
    """Pose Mode on ``rig`` with ``active`` (and ``selected``) the only selected bones."""
    object_mode()
    bpy.ops.object.select_all(action="DESELECT")
    bpy.context.view_layer.objects.active = rig
    rig.select_set(True)
    bpy.ops.object.mode_set(mode="POSE")
    chosen = {active, *selected}
    compat = importlib.import_module(f"{ADDON_MODULE}.compat")
    for pb in rig.pose.bones:
        compat.select_pose_bone(pb, pb.name in chosen)
    rig.data.bones.active = rig.data.bones[active]


def rest_pose(rig):
    for pb in rig.pose.bones:
        pb.rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
    bpy.context.view_layer.update()


# --- steps ------------------------------------------------------------------------------------


def apply_presets(rig, chains):
    """Limits from the built-in presets, through the operator a user would click."""
    applied = []
    for preset, groups in (("CHAIN:ARM", ("arm.L", "arm.R")), ("CHAIN:LEG", ("leg.L", "leg.R")),
                           ("CHAIN:SPINE", ("spine",)), ("JOINT:SPINE", ("tail",))):
        bones = [b for g in groups for b in chains[g]]
        pose_mode(rig, bones[0], bones)
        bpy.ops.pose.jointlimit_preset_apply(preset=preset)
        applied.append(f"{preset.split(':')[1].lower()} x{len(bones)} ({', '.join(groups)})")
    limited = sum(pb.jointlimit.enabled for pb in rig.pose.bones)
    return f"{limited} bones limited ({', '.join(applied)})"


def add_deformer(arms):
    object_mode()
    bpy.ops.object.select_all(action="DESELECT")
    bpy.context.view_layer.objects.active = arms
    arms.select_set(True)
    bpy.ops.object.jointlimit_sdef_derive()
    bpy.ops.object.jointlimit_deformer_add(source="DERIVED", mode="SDEF")
    return f"SDEF on {arms.name} ({len(arms.data.vertices)} vertices)"


def _axis_angle(axis, degrees):
    half = math.radians(degrees) / 2
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    return (math.cos(half), *(math.sin(half) * a))


def _forward_sign(rig, bone):
    """+1 when a positive rotation about the bone's local X swings its tail forward (-Y, the way
    the character faces), else -1: so a wild pose reads the same on any bone roll."""
    pb = rig.pose.bones[bone]
    before = pb.tail.y
    pb.rotation_quaternion = _axis_angle((1, 0, 0), 20)
    bpy.context.view_layer.update()
    sign = 1.0 if pb.tail.y < before else -1.0
    pb.rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
    bpy.context.view_layer.update()
    return sign


def wild_pose(rig, chains):
    """What an unlimited rig lets a careless drag or a noisy capture do: elbows bent backwards,
    a knee bent forwards, the head twisted round, a wrist snapped and the tail tied in a knot."""
    f = {b: _forward_sign(rig, b) for b in ("forearm.L", "forearm.R", "shin.L", "hand.L", "upper_arm.R")}
    pose = {
        "forearm.L": ((f["forearm.L"], 0, 0), -75),  # backwards (hyperextension)
        "forearm.R": ((f["forearm.R"], 0, 0), -60),
        "hand.L": ((f["hand.L"], 0, 0), 130),
        "upper_arm.R": ((f["upper_arm.R"], 0, 0.3), -130),  # far behind the back
        "shin.L": ((f["shin.L"], 0, 0), 70),  # knee bent forwards
        "spine.004": ((0, 1, 0), 160),  # head turned round
        "spine.002": ((0, 1, 0.3), 70),
    }
    for name, (axis, degrees) in pose.items():
        rig.pose.bones[name].rotation_quaternion = _axis_angle(axis, degrees)
    for i, name in enumerate(chains["tail"]):
        rig.pose.bones[name].rotation_quaternion = _axis_angle((1, 0, 0.8 if i % 2 else -0.8), 55)
    bpy.context.view_layer.update()
    return len(pose) + len(chains["tail"])


def limits_picture(addon, rig, chains, size):
    """The same wild pose without and with ``pose.jointlimit_apply``, side by side: ``(picture
    array, summary)``; the rig is back in its rest pose afterwards."""
    bl = importlib.import_module(f"{addon.__name__}.bone_limits")
    scene = bpy.context.scene
    scene.frame_set(1)
    posed = wild_pose(rig, chains)

    def outside():
        return sum(not bl.is_inside(bl.build_limit(pb.jointlimit), bl.read_rotation(pb))
                   for pb in rig.pose.bones if pb.jointlimit.enabled)

    before = outside()
    demo_scene.character_view(scene, size)
    left = demo_scene.render_array(scene, "without limits")
    pose_mode(rig, chains["tail"][0])
    bpy.ops.pose.jointlimit_apply(all_bones=True)
    object_mode()
    after = outside()
    right = demo_scene.render_array(scene, "with JointLimit")
    rest_pose(rig)
    text = f"{posed} bones posed wildly: {before} outside their limits, {after} after pose.jointlimit_apply"
    return demo_scene.tile([left, right]), text


# Arm key poses as a rigger would block them (degrees about the upper arm's local X (flexion),
# Z (abduction, mirrored on the right) and Y (twist), and the elbow bend): a relaxed start, a
# wave with the left hand while the right reaches forward, both hands in front at the end.
ARM_INTENT = {
    "L": {1: (15, -10, 0, 25), 36: (95, 45, 10, 70), 72: (60, 5, 0, 100)},
    "R": {1: (15, -10, 0, 25), 36: (75, 10, 0, 30), 72: (45, 0, 0, 110)},
}


def _intent_target(rig, side, flex, spread, twist, bend):
    """Where the hand is when the arm takes the blocked pose clamped by its limits (a target the
    limb can reach within its limits, whatever the presets allow), and that pose: the upper arm's
    and the forearm's rotations."""
    z = spread if side == "L" else -spread
    upper, fore = rig.pose.bones[f"upper_arm.{side}"], rig.pose.bones[f"forearm.{side}"]
    q = [np.array(_axis_angle(axis, deg)) for axis, deg in (((1, 0, 0), flex), ((0, 0, 1), z), ((0, 1, 0), twist))]
    upper.rotation_quaternion = _qmul(_qmul(q[0], q[1]), q[2])
    fore.rotation_quaternion = _axis_angle((_forward_sign(rig, fore.name), 0, 0), bend)
    pose_mode(rig, upper.name, (fore.name,))
    bpy.ops.pose.jointlimit_apply()
    bpy.context.view_layer.update()
    pose = [np.array(pb.rotation_quaternion) for pb in (upper, fore)]
    return np.array(rig.pose.bones[f"hand.{side}"].head), pose


def _qmul(p, q):
    w1, x1, y1, z1 = p
    w2, x2, y2, z2 = q
    return (w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2)


SWIVELS = np.radians(np.arange(-180, 180, 30))


def _limb_ik_best_swivel(rig, chain, target, pose):
    """``pose.jointlimit_limb_ik`` with limits on, turning the swivel (where the elbow points) as a
    user turns the mouse wheel until the hand reaches the target, and of the swivels that reach it
    the one nearest the blocked ``pose`` (several reach it to rounding: the nearest makes the choice
    the same on every Blender); returns the hand's error."""

    def solve(swivel):
        bpy.ops.pose.jointlimit_limb_ik(target=target, swivel=float(swivel), use_limits=True)
        bpy.context.view_layer.update()
        error = float(np.linalg.norm(np.array(rig.pose.bones[chain[-1]].head) - target))
        away = sum(1.0 - abs(float(np.dot(rig.pose.bones[name].rotation_quaternion, q)))
                   for name, q in zip(chain, pose))
        return error, away

    solved = [solve(swivel) for swivel in SWIVELS]
    reach = min(error for error, _ in solved) + 1e-4
    best = min(range(len(SWIVELS)), key=lambda i: (solved[i][0] > reach, solved[i][1]))
    return solve(SWIVELS[best])[0]


def arm_keys(rig):
    """Key poses of both arms by limb IK with limits on: each target is where the hand of a blocked
    pose lands inside the limits (``ARM_INTENT``, found before the arm has keys); the IK solves
    the arm for it from the rest pose."""
    scene = bpy.context.scene
    errors = []
    for side, poses in ARM_INTENT.items():
        chain = (f"upper_arm.{side}", f"forearm.{side}", f"hand.{side}")
        intents = {}
        for frame, intent in poses.items():
            scene.frame_set(frame)
            intents[frame] = _intent_target(rig, side, *intent)
        for frame, (target, pose) in intents.items():
            scene.frame_set(frame)
            for name in chain:
                rig.pose.bones[name].rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
            pose_mode(rig, chain[-1])
            errors.append(_limb_ik_best_swivel(rig, chain, target, pose))
            for name in chain:
                rig.pose.bones[name].keyframe_insert("rotation_quaternion", frame=frame)
    return f"both arms: {len(errors)} targets keyed, hand error median {np.median(errors) * 1000:.1f} mm, " \
           f"max {max(errors) * 1000:.1f} mm"


TAIL_TARGETS = {36: (-9.0, 11.0), 72: (5.0, -11.0)}  # each tail joint's turn about its X and Z (degrees)


def tail_target(rig, chains, frame):
    """Where the tail tip is when each of its joints takes the turn ``TAIL_TARGETS[frame]``
    clamped by its limit: a target the tail can reach within its limits. The pose is left as
    it was."""
    tail = [rig.pose.bones[name] for name in chains["tail"]]
    kept = [tuple(pb.rotation_quaternion) for pb in tail]
    x, z = TAIL_TARGETS[frame]
    for pb in tail:
        pb.rotation_quaternion = _qmul(_axis_angle((1, 0, 0), x), _axis_angle((0, 0, 1), z))
    pose_mode(rig, tail[-1].name, [pb.name for pb in tail])
    bpy.ops.pose.jointlimit_apply()
    bpy.context.view_layer.update()
    target = np.array(tail[-1].tail)
    for pb, q in zip(tail, kept):
        pb.rotation_quaternion = q
    bpy.context.view_layer.update()
    return target


def tail_keys(rig, chains):
    """Key poses of the tail by CCD IK (limits on): rest on the first frame, ``TAIL_TARGETS``."""
    scene = bpy.context.scene
    tail = chains["tail"]
    pose_mode(rig, tail[-1])
    errors = []
    for frame in (FRAMES[0], *TAIL_TARGETS):
        scene.frame_set(frame)
        if frame in TAIL_TARGETS:
            target = tail_target(rig, chains, frame)
            pose_mode(rig, tail[-1])
            bpy.ops.pose.jointlimit_ccd_ik(target=target, chain_length=len(tail))
            bpy.context.view_layer.update()
            errors.append(np.linalg.norm(np.array(rig.pose.bones[tail[-1]].tail) - target))
        for name in tail:
            rig.pose.bones[name].keyframe_insert("rotation_quaternion", frame=frame)
    return f"{len(tail)}-bone tail: 2 targets keyed, tip error {', '.join(f'{e * 100:.1f} cm' for e in errors)}"


def smooth_motion(rig, chains):
    bones = chains["arm.L"] + chains["arm.R"] + chains["tail"]
    pose_mode(rig, bones[0], bones)
    bpy.ops.pose.jointlimit_motion(frame_start=FRAMES[0], frame_end=FRAMES[-1], profile="MIN_JERK",
                                   channels="SWING_TWIST")
    object_mode()
    fps = bpy.context.scene.render.fps
    return f"min-jerk in-betweens for {len(bones)} bones, frames {FRAMES[0]}-{FRAMES[-1]} ({FRAMES[-1] / fps:.0f} s)"


def motion_picture(size, frames=STRIP):
    """Renders of the animated character on ``frames``, side by side."""
    scene = bpy.context.scene
    demo_scene.character_view(scene, size)
    pictures = []
    for frame in frames:
        scene.frame_set(frame)
        pictures.append(demo_scene.render_array(scene, f"frame {frame}"))
    return demo_scene.tile(pictures)


def build_character():
    demo_scene.clear_scene(FRAMES[-1])
    character = demo_character.build()
    return character, demo_character.bone_chains(character["rig"])


def main():
    start = time.perf_counter()
    size = (240, 300) if QUICK else (420, 520)
    OUT.mkdir(exist_ok=True)
    with step("install extension") as row:
        addon = install()
        row.append(addon.__name__)
    with step("build character") as row:
        character, chains = build_character()
        rig = character["rig"]
        body, arms = (len(character[k].data.vertices) for k in ("body", "arms"))
        row.append(f"Rigify human meta-rig + tail ({len(rig.data.bones)} bones), body {body} + arms {arms} vertices, "
                   "automatic weights")
    with step("limits from presets") as row:
        row.append(apply_presets(rig, chains))
    with step("SDEF deformer on the arms") as row:
        row.append(add_deformer(character["arms"]))
    with step("wild pose vs limits") as row:
        picture, text = limits_picture(addon, rig, chains, size)
        path = demo_scene.save_png(picture, OUT / "demo_limits.png")
        row.append(f"{text} -> {path.relative_to(ROOT)}")
    with step("limb IK (arms)") as row:
        row.append(arm_keys(rig))
    with step("CCD IK (tail)") as row:
        row.append(tail_keys(rig, chains))
    with step("smooth motion") as row:
        row.append(smooth_motion(rig, chains))
    with step("save out/demo.blend") as row:
        object_mode()
        bpy.ops.wm.save_as_mainfile(filepath=str(OUT / "demo.blend"))
        row.append(str((OUT / "demo.blend").relative_to(ROOT)))
    with step("motion strip (Workbench)") as row:
        path = demo_scene.save_png(motion_picture(size), OUT / "demo_motion.png")
        row.append(str(path.relative_to(ROOT)))
    widths = [max(len(r[i]) for r in ROWS + [("step", "result", "s")]) for i in range(3)]
    print("\nJointLimit demo")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(("step", "result", "s"), widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in ROWS:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |")
    print(f"total {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
