"""The demo character and the pictures (issue 23): the character is rigged and skinned, the demo's
steps run through the public operators, and `make docs` and the demo produce pictures whose pixels
show their subject (not a blank frame)."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

pytestmark = [pytest.mark.blender]

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))


def launcher():
    here = pathlib.Path(sys.executable).parent / "blender"
    return here if here.is_file() else ROOT / ".venv" / "bin" / "blender"


def load_png(path):
    """``(h, w, 4)`` floats of a PNG, top row first (read by Blender)."""
    import bpy

    image = bpy.data.images.load(str(path))
    try:
        w, h = image.size
        pixels = np.empty(w * h * 4, np.float32)
        image.pixels.foreach_get(pixels)
    finally:
        bpy.data.images.remove(image)
    return pixels.reshape(h, w, 4)[::-1]


def subject(img, tol=0.08):
    """Pixels that differ from the background (the colour of the top-left corner)."""
    return np.abs(img[..., :3] - img[0, 0, :3]).max(axis=-1) > tol


def srgb(linear):
    """Display value of a linear colour (the pictures use the Standard view transform)."""
    x = np.asarray(linear, float)
    return np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.power(np.maximum(x, 0.0), 1 / 2.4) - 0.055)


def colour_mask(img, rgb, tol=0.2):
    """Pixels whose hue is close to the linear colour ``rgb`` (compared after normalising brightness)."""
    c = img[..., :3] / np.maximum(img[..., :3].max(axis=-1, keepdims=True), 1e-6)
    ref = srgb(rgb)
    return np.abs(c - ref / ref.max()).max(axis=-1) < tol


def skin(img):
    r, g, b = img[..., 0], img[..., 1], img[..., 2]
    return (r > 0.6) & (r - b > 0.2) & (g > b)


@pytest.fixture
def character(addon):
    import demo
    import demo_character

    assert demo.ADDON_MODULE == addon.__name__
    built, chains = demo.build_character()
    return demo, demo_character, built, chains


def test_character_is_rigged_and_skinned(character):
    import bpy

    demo, demo_character, built, chains = character
    rig, body, arms = built["rig"], built["body"], built["arms"]
    names = {b.name for b in rig.data.bones}
    assert {"spine", "spine.006", "upper_arm.L", "forearm.R", "hand.L", "thigh.R", "shin.L", "foot.R"} <= names
    assert len(chains["tail"]) == demo_character.TAIL_BONES and all(n in names for n in chains["tail"])
    assert not any(n.startswith(("f_", "lip", "palm", "thumb", "breast")) for n in names)
    for mesh in (body, arms):
        assert mesh.parent is rig and mesh.modifiers[0].type == "ARMATURE" and mesh.modifiers[0].object is rig
        assert len(mesh.data.vertices) > 500
        weighted = sum(1 for v in mesh.data.vertices if any(g.weight > 0 for g in v.groups))
        assert weighted == len(mesh.data.vertices), f"{mesh.name}: vertices without weights"
    counts = [sum(g.weight > 0 for g in v.groups) for v in arms.data.vertices]
    assert max(counts) <= 2 and counts.count(2) > 100  # two-bone vertices for the SDEF deformer
    # the automatic weights follow the bones: the left forearm moves the left arm's skin only
    def arm_points():
        ev = arms.evaluated_get(bpy.context.evaluated_depsgraph_get())
        return np.array([v.co[:] for v in ev.data.vertices])

    before = arm_points()
    rig.pose.bones["forearm.L"].rotation_quaternion = (0.7071, 0.7071, 0.0, 0.0)
    bpy.context.view_layer.update()
    moved = np.linalg.norm(arm_points() - before, axis=1) > 1e-3
    assert moved.any() and not moved[before[:, 0] < -0.1].any()  # the right arm (x < 0) stays


def test_demo_steps_and_pictures(character, tmp_path):
    """The demo's steps on the character (presets, deformer, wild pose, IK, CCD, motion) through the
    operators, and its two pictures at a small size."""
    demo, _, built, chains = character
    rig = built["rig"]
    text = demo.apply_presets(rig, chains)
    limited = [pb.name for pb in rig.pose.bones if pb.jointlimit.enabled]
    assert set(chains["arm.L"] + chains["leg.R"] + chains["tail"]) <= set(limited), text
    assert "SDEF" in demo.add_deformer(built["arms"])
    assert any(m.type == "NODES" for m in built["arms"].modifiers)

    picture, text = demo.limits_picture(demo_addon(), rig, chains, (160, 200))
    assert text.endswith("0 after pose.jointlimit_apply"), text
    assert not text.split(":")[1].strip().startswith("0 outside"), text
    left, right = picture[:, :160], picture[:, -160:]
    for half in (left, right):
        assert skin(half).mean() > 0.03, "no character in the picture"
    assert (skin(left) != skin(right)).mean() > 0.01, "the limits changed nothing visible"

    demo.arm_keys(rig)
    tail = demo.tail_keys(rig, chains)
    errors = [float(e) for e in tail.split("tip error ")[1].replace(" cm", "").split(", ")]
    assert len(errors) == 2 and max(errors) < 0.1, tail     # the tail tip on its targets (the pictures say so)
    demo.smooth_motion(rig, chains)
    strip = demo.motion_picture((120, 150), frames=(1, 36))
    first, middle = strip[:, :120], strip[:, -120:]
    assert skin(first).mean() > 0.03 and skin(middle).mean() > 0.03
    assert (skin(first) != skin(middle)).mean() > 0.005, "the character did not move"
    out = demo.demo_scene.save_png(strip, tmp_path / "strip.png")
    assert np.allclose(load_png(out)[..., :3], strip[..., :3], atol=2 / 255)


def demo_addon():
    return sys.modules[__import__("demo").ADDON_MODULE]


@pytest.fixture(scope="module")
def docs_pictures(tmp_path_factory):
    """``make docs`` at a third of the size (``--quick``) into a temporary folder, in a separate
    embedded Blender (it registers the add-on from the checkout, as ``make docs`` does)."""
    tmp = tmp_path_factory.mktemp("docs")
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(tmp / "blender"), XDG_CACHE_HOME=str(tmp / "cache"))
    cmd = [str(launcher()), "-b", "--factory-startup", "--python-exit-code", "1", "--python",
           str(ROOT / "scripts" / "make_docs.py"), "--", "--quick", "--out", str(tmp / "out")]
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return tmp / "out", result.stdout


def test_make_docs_writes_every_picture(docs_pictures):
    import make_docs

    out, _ = docs_pictures
    for name in make_docs.FIGURES:
        path = out / f"{name}.png"
        assert path.is_file() and path.stat().st_size > 1000, name
        fraction = subject(load_png(path)).mean()
        assert 0.02 < fraction < 0.95, f"{name}: {fraction:.3f} of the pixels show something"


def test_regions_picture_shows_five_shapes(docs_pictures):
    import make_docs

    img = load_png(docs_pictures[0] / "regions.png")
    orange = colour_mask(img, make_docs.ORANGE[:3])
    columns = np.array_split(orange, 5, axis=1)
    areas = [c.mean() for c in columns]
    assert min(areas) > 0.02, areas
    # same ranges, different shapes: the rectangle covers the most, the ellipse the least of the
    # four smooth-or-straight shapes drawn in the box of the ranges
    assert areas[0] > areas[3] > areas[2] > areas[1], areas


def test_skinning_picture_and_volumes(docs_pictures):
    import make_docs

    out, stdout = docs_pictures
    img = load_png(out / "skinning.png")
    thirds = np.array_split(img, 3, axis=1)
    for (mode, _, colour), part in zip(make_docs.SKIN_MODES, thirds):
        assert colour_mask(part, colour[:3]).mean() > 0.02, mode
    line = next(l for l in stdout.splitlines() if l.startswith("skinning volume change:"))
    loss = {k: float(v.rstrip("%")) for k, v in (p.split() for p in line.split(":")[1].split(","))}
    assert loss["LBS"] < loss["SDEF"] < 0 and loss["LBS"] < loss["BEZIER"] < 0, line  # LBS collapses most


def test_overlay_picture_inside_and_outside(docs_pictures):
    img = load_png(docs_pictures[0] / "overlay.png")
    left, right = np.array_split(img, 2, axis=1)
    green, red = (0.25, 0.9, 0.35), (1.0, 0.3, 0.2)
    assert colour_mask(left, green, 0.15).mean() > 0.002 and colour_mask(right, red, 0.15).mean() > 0.002
    assert colour_mask(left, red, 0.1).mean() < colour_mask(right, red, 0.1).mean()


def test_ccd_picture_shows_the_target(docs_pictures):
    img = load_png(docs_pictures[0] / "ccd.png")
    for half in np.array_split(img, 2, axis=1):
        assert skin(half).mean() > 0.03 and colour_mask(half, (0.1, 0.35, 1.0), 0.15).sum() >= 12


def test_fits_picture_shows_both_fits(docs_pictures):
    import make_docs

    out, stdout = docs_pictures
    img = load_png(out / "fits.png")
    inscribed, axes = np.array_split(img, 2, axis=1)
    area = [colour_mask(half, make_docs.ORANGE[:3]).mean() for half in (inscribed, axes)]
    assert area[0] > 0.02 and area[1] > area[0], area  # the axes fit reaches out to all four limits
    for half in (inscribed, axes):
        assert (half[..., :3].max(axis=-1) < 0.3).sum() >= 12  # dark: the dots at the limits, the bone, the label
    line = next(l for l in stdout.splitlines() if l.startswith("fits: rest pose inside:"))
    inside = {k: v == "True" for k, v in (p.split() for p in line.rsplit(":", 1)[1].split(","))}
    assert inside["AXES"], line  # the axes fit always holds the rest pose
    labels = img[int(0.75 * img.shape[0]):, :, :3]  # under the spheres: the names and the note in deep red
    red = [(half[..., 0] - half[..., 1:].max(axis=-1) > 0.25).sum() for half in np.array_split(labels, 2, axis=1)]
    assert (red[0] >= 8) == (not inside["INSCRIBED"]) and red[1] < 8, (line, red)  # the note where it is outside


def test_swivel_picture_feasible_and_blocked_arcs(docs_pictures, addon):
    import make_docs

    out, stdout = docs_pictures
    img = load_png(out / "swivel.png")
    for colour in (make_docs.FEASIBLE, make_docs.BLOCKED):
        assert colour_mask(img, colour[:3]).mean() > 0.002, colour
    assert colour_mask(img, make_docs.BLUE[:3], 0.15).sum() >= 12  # the target
    line = next(l for l in stdout.splitlines() if l.startswith("swivel:"))
    chosen = float(line.split("chosen ")[1].split("°")[0])
    feasible_arcs = int(line.split("feasible arcs ")[1].split()[0])
    # independent brute force on the same arm: free solves all round the circle, the limit tested
    limb_ik, limits = (sys.modules[f"{addon.__name__}.core.{name}"] for name in ("limb_ik", "limits"))
    A = {k: np.array(v) for k, v in make_docs.ARM.items()}
    pairs = (("shoulder", "elbow"), ("elbow", "wrist"), ("wrist", "tip"))
    bones = [make_docs.bone_matrix(A[a], A[b]) for a, b in pairs]
    chain = limb_ik.LimbChain(*bones)
    limit = limits.JointLimit("RECT", **{k: tuple(np.radians(v)) for k, v in make_docs.SWIVEL_LIMIT.items()})
    scan = np.linspace(-np.pi, np.pi, 7201)[1:]
    poses = limb_ik.solve_position(chain, np.broadcast_to(make_docs.SWIVEL_TARGET, scan.shape + (3,)), scan)
    ok = limit.contains(poses.upper)
    assert ok.any() and not ok.all(), "the picture should show both feasible and blocked swivels"
    assert feasible_arcs == np.count_nonzero(ok & ~np.roll(ok, 1)), line
    gap = np.abs((scan[ok] - make_docs.SWIVEL_REQUESTED + np.pi) % (2 * np.pi) - np.pi)
    nearest = scan[ok][np.argmin(gap)]
    assert abs(np.degrees(nearest) - chosen) < 0.2, (line, np.degrees(nearest))
    assert gap.min() > 0.1, "the requested swivel should be blocked, so the chosen one differs"
