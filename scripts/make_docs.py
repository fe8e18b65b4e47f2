"""Render the documentation pictures in docs/ from the add-on's own code (Workbench, headless).

Run: .venv/bin/blender -b --factory-startup --python scripts/make_docs.py   (or `make docs`)
     ... --python scripts/make_docs.py -- --only regions,skinning --out /tmp/pics --quick

Each picture is one function registered with ``@figure(name)``; ``--only`` picks some, ``--out``
writes elsewhere, ``--quick`` renders at a third of the size (the test suite uses it).

- character.png     the demo character in one wild pose, without and with joint limits
- motion_strip.png  the demo character's three seconds of min-jerk motion, five frames
- ccd.png           the character's tail posed by CCD IK onto its two targets
- regions.png       the five shapes with the same ranges, on the (s, t) plane and on the sphere
- fits.png          the two fits of a smooth shape (Inscribed vs Axes) for one uneven range
- swivel.png        limb IK's swivel circle: where the shoulder limit holds, the requested and
                    the chosen (nearest feasible) swivel
- skinning.png      LBS / SDEF / Bezier on a forearm bent 90° and twisted 90°, volume measured
- overlay.png       the viewport overlay's geometry (core/overlay_geometry.py) on a posed arm
- motion.png        one channel through a via point: minimum-acceleration vs minimum-jerk
"""

import math
import os
import pathlib
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # Blender does not add the script's folder

import bpy  # noqa: E402
import numpy as np  # noqa: E402

import demo  # noqa: E402
import demo_scene  # noqa: E402
from bench._common import register_addon_from_source  # noqa: E402
from demo_scene import INK, label  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
FIGURES = {}
ORANGE, BLUE, GREEN, RED = (0.95, 0.45, 0.1, 1), (0.25, 0.5, 0.9, 1), (0.3, 0.72, 0.35, 1), (0.9, 0.25, 0.2, 1)


def figure(name):
    """Register a picture function ``fn(ctx) -> path`` under ``name``."""

    def register(fn):
        FIGURES[name] = fn
        return fn

    return register


class Context:
    """What every picture function gets: the registered add-on, the output folder, the scale."""

    def __init__(self, addon, out, scale):
        self.addon, self.out, self.scale = addon, pathlib.Path(out), scale

    def core(self, name):
        return sys.modules[f"{self.addon.__name__}.core.{name}"]

    def size(self, width, height):
        return int(width * self.scale), int(height * self.scale)


AA = {"level": "32"}  # Workbench anti-aliasing samples; --quick lowers it


def sharp(scene, width, height):
    """Workbench with the finest anti-aliasing, studio light, colours as given."""
    demo_scene.workbench(scene, width, height)
    scene.display.render_aa = AA["level"]
    scene.display.shading.show_cavity = False
    if scene.world is None:
        scene.world = bpy.data.worlds.new("DocsWorld")
    scene.world.color = (1.0, 1.0, 1.0)


def world_points(obj):
    """World positions ``(n, 3)`` of the evaluated (deformed) mesh of ``obj``, or the corners of
    its bounding box for other object types (text, curves)."""
    ev = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    if ev.type == "MESH":
        mesh = ev.to_mesh()
        co = np.empty(len(mesh.vertices) * 3)
        mesh.vertices.foreach_get("co", co)
        ev.to_mesh_clear()
    else:
        co = np.array([c[:] for c in ev.bound_box]).ravel()
    m = np.array(obj.matrix_world)
    return co.reshape(-1, 3) @ m[:3, :3].T + m[:3, 3]


def fit_camera(scene, objects, direction, margin=0.08, points=None):
    """An orthographic camera looking along ``direction`` that frames the evaluated ``objects``
    (and the world ``points (n, 3)`` if given)."""
    from mathutils import Vector

    points = np.concatenate([world_points(obj) for obj in objects] + ([] if points is None else [points]))
    d = Vector(direction).normalized()
    rot = d.to_track_quat("-Z", "Y" if abs(d.z) < 0.99 else "X")
    right, upv = rot @ Vector((1, 0, 0)), rot @ Vector((0, 1, 0))
    x, y = points @ np.array(right), points @ np.array(upv)
    centre = np.array(right) * (x.max() + x.min()) / 2 + np.array(upv) * (y.max() + y.min()) / 2
    width, height = x.max() - x.min(), y.max() - y.min()
    aspect = scene.render.resolution_x / scene.render.resolution_y
    scale = max(width, height * aspect) * (1 + 2 * margin)
    depth = points @ np.array(d)
    cam = demo_scene.camera(scene, centre + np.array(d) * (depth.min() - 20.0), centre + np.array(d) * depth.max(),
                            ortho_scale=scale)
    cam.data.clip_end = 200.0
    return cam


def curve(name, points, radius, colour, closed=False):
    """A round tube along ``points (n, 3)`` (a bevelled poly curve)."""
    data = bpy.data.curves.new(name, "CURVE")
    data.dimensions, data.bevel_depth, data.bevel_resolution = "3D", radius, 4
    spline = data.splines.new("POLY")
    spline.points.add(len(points) - 1)
    for p, co in zip(spline.points, points):
        p.co = (*co, 1.0)
    spline.use_cyclic_u = closed
    obj = bpy.data.objects.new(name, data)
    obj.color = colour
    bpy.context.scene.collection.objects.link(obj)
    return obj


def mesh_object(name, verts, faces, colour, smooth=True):
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(np.asarray(verts, float).tolist(), [], faces)
    mesh.update()
    for poly in mesh.polygons:
        poly.use_smooth = smooth
    obj = bpy.data.objects.new(name, mesh)
    obj.color = colour
    bpy.context.scene.collection.objects.link(obj)
    return obj


def ring_patch(outline_st, centre_st, rings=24):
    """Quads filling a star-shaped plane region: rings shrinking from the outline ``(n, 2)`` to
    ``centre_st``; returns ``(vertices (m, 2), faces)``."""
    n = len(outline_st)
    f = np.linspace(1.0, 0.0, rings + 1)[:, None, None]
    verts = (centre_st + f * (outline_st - centre_st)).reshape(-1, 2)
    faces = [(r * n + k, r * n + (k + 1) % n, (r + 1) * n + (k + 1) % n, (r + 1) * n + k)
             for r in range(rings) for k in range(n)]
    return verts, faces


# --- the five shapes ----------------------------------------------------------------------------

# The same ranges for every shape: Swing Z -50°..40°, Swing X -40°..100° (past 90°, where Euler
# limits fail); the polygon's outline (swing z, swing x, bulge) keeps inside the same box.
RANGES = dict(swing_z=(math.radians(-50), math.radians(40)), swing_x=(math.radians(-40), math.radians(100)))
POLYGON = ((-50, -40, 0.0), (40, -40, -0.3), (40, 45, 0.0), (0, 100, 0.0), (-50, 100, 0.0))


def region_limits(limits_mod):
    outline = [(math.tan(math.radians(z) / 2), math.tan(math.radians(x) / 2), b) for z, x, b in POLYGON]
    return [
        ("Rectangle", limits_mod.JointLimit("RECT", **RANGES)),
        ("Ellipse", limits_mod.JointLimit("ELLIPSE", **RANGES)),
        ("Oval", limits_mod.JointLimit("OVAL", **RANGES)),
        ("Superellipse 4", limits_mod.JointLimit("SUPERELLIPSE", exponent=(4, 4), **RANGES)),
        ("Polygon + arc", limits_mod.JointLimit("POLYGON", outline=outline)),
    ]


SPACING = 2.7  # world units between the columns of both rows
PLANE_SCALE = 1.5  # world units per unit of s and t


def _plane_panel(limit, x0, box):
    """The region on the (s, t) plane in column ``x0``, drawn in the world XZ plane (s to the
    right, t up, seen from -Y): the region, its outline, the box of the ranges (grey), the s and t
    axes and the rest pose at the origin."""
    st = limit.region.boundary_points(256)
    verts, faces = ring_patch(st, st.mean(axis=0), rings=2)

    def to3(p, depth=0.0):
        p = np.asarray(p, float)
        return np.c_[x0 + PLANE_SCALE * p[:, 0], np.full(len(p), depth), PLANE_SCALE * p[:, 1]]

    mesh_object("plane_region", to3(verts), faces, ORANGE, smooth=False)
    curve("plane_outline", to3(st, -0.02), 0.022, (0.55, 0.2, 0.0, 1), closed=True)
    s0, s1, t0, t1 = box
    curve("plane_box", to3([(s0, t0), (s1, t0), (s1, t1), (s0, t1)], -0.04), 0.008, (0.35, 0.35, 0.38, 1), closed=True)
    curve("plane_axis_s", to3([(-0.75, 0.0), (0.7, 0.0)], -0.06), 0.007, (0.1, 0.1, 0.1, 1))
    curve("plane_axis_t", to3([(0.0, -0.55), (0.0, 1.4)], -0.06), 0.007, (0.1, 0.1, 0.1, 1))
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.05, location=(x0, -0.1, 0.0))
    bpy.context.object.name = "plane_origin"
    bpy.context.object.color = (0.05, 0.05, 0.05, 1)


def _sphere_panel(limit, centre3, proj):
    """The region on the unit sphere at ``centre3``: a grey ball, the region as a patch on the
    sphere, its outline as a tube, and the bone at rest (local +Y) as a dark stick."""
    bpy.ops.mesh.primitive_uv_sphere_add(segments=96, ring_count=48, radius=0.995, location=centre3)
    ball = bpy.context.object
    ball.name, ball.color = "sphere_ball", (0.8, 0.8, 0.83, 1)
    bpy.ops.object.shade_smooth()
    st = limit.region.boundary_points(256)
    verts, faces = ring_patch(st, st.mean(axis=0), rings=32)
    P = proj.plane_to_sphere(verts[:, 0], verts[:, 1]) * 1.003 + centre3
    mesh_object("sphere_region", P, faces, ORANGE)
    line = proj.plane_to_sphere(st[:, 0], st[:, 1]) * 1.01 + centre3
    curve("sphere_outline", line, 0.02, (0.55, 0.2, 0.0, 1), closed=True)
    curve("sphere_bone", np.array([centre3, centre3 + (0, 1.45, 0)]), 0.035, (0.12, 0.12, 0.12, 1))


def _row(scene, prefix, direction, centre, width, height):
    """Render only the objects named ``prefix…`` through an orthographic camera looking along
    ``direction`` at ``centre``, ``width`` world units across."""
    for obj in bpy.data.objects:
        obj.hide_render = not obj.name.startswith(prefix)
    scene.render.resolution_y = height
    d = np.asarray(direction, float) / np.linalg.norm(direction)
    demo_scene.camera(scene, np.asarray(centre) - 30 * d, centre, ortho_scale=width)
    scene.camera.data.clip_end = 100.0
    return demo_scene.render_array(scene)


@figure("regions")
def regions_figure(ctx):
    """Five shapes with the same ranges: the plane (s, t) above, the sphere below."""
    limits_mod, proj = ctx.core("limits"), ctx.core("projection")
    scene = demo_scene.clear_scene()
    width, _ = ctx.size(1500, 1)
    sharp(scene, width, 100)
    box = [math.tan(a / 2) for a in (*RANGES["swing_z"], *RANGES["swing_x"])]
    shapes = region_limits(limits_mod)
    sphere_row = np.array([0.0, 0.0, -40.0])
    for i, (name, limit) in enumerate(shapes):
        _plane_panel(limit, SPACING * i, box)
        _sphere_panel(limit, sphere_row + (-SPACING * i, 0.0, 0.0), proj)
    demo_scene.camera(scene, (0, -30, 0), (0, 0, 0), ortho_scale=1.0)  # labels face this view
    for i, (name, _) in enumerate(shapes):
        label(name, (SPACING * i, 0.0, -1.45), 0.36).name = f"plane_label_{name}"
    across = SPACING * len(shapes)
    middle = SPACING * (len(shapes) - 1) / 2
    rows = [
        _row(scene, "plane_", (0, 1, 0), (middle, 0.0, 0.45), across, int(width * 4.1 / across)),
        _row(scene, "sphere_", (0, -1, -0.8), sphere_row + (-middle, 0.2, 0.25), across, int(width * 2.9 / across)),
    ]
    return demo_scene.save_png(np.concatenate(rows), ctx.out / "regions.png")


# --- the two fits of a smooth shape -------------------------------------------------------------

# An uneven range (issue 17): swing X -20°..140°, swing Z -10°..100°.
NOTE = (0.8, 0.06, 0.04, 1)  # the deep red of a warning under a picture
UNEVEN = dict(swing_x=(math.radians(-20), math.radians(140)), swing_z=(math.radians(-10), math.radians(100)))
FITS = (("INSCRIBED", "Inscribed (paper)"), ("AXES", "Axes"))


def axis_limit_points(ranges, quat):
    """Unit swing points of a pure bend about X and about Z to each end of ``ranges``: ``(4, 3)``."""
    points = []
    for axis, key in (((1.0, 0.0, 0.0), "swing_x"), ((0.0, 0.0, 1.0), "swing_z")):
        for angle in ranges[key]:
            points.append(quat.rotate(quat.from_axis_angle(np.array(axis), angle), np.array([0.0, 1.0, 0.0])))
    return np.array(points)


@figure("fits")
def fits_figure(ctx):
    """The ellipse of one uneven range with both fits: the paper's inscribed ellipse leaves out
    the rest pose (+Y, the bone) and falls short of the limits; the AXES fit reaches all four
    (dark dots: a pure bend about X or Z to each limit) and holds the rest pose."""
    limits_mod, proj, quat = ctx.core("limits"), ctx.core("projection"), ctx.core("quat")
    scene = demo_scene.clear_scene()
    sharp(scene, *ctx.size(1000, 560))
    view = np.array([-0.85, 0.75, 0.6])  # the camera's side: the bone (+Y) and the bent-up limits face us
    view /= np.linalg.norm(view)
    right = np.cross(-view, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, -view)
    demo_scene.camera(scene, 30 * view, (0, 0, 0), ortho_scale=1.0)  # labels face this view
    dots = axis_limit_points(UNEVEN, quat)
    rest_inside = {}
    for i, (fit, text) in enumerate(FITS):
        limit = limits_mod.JointLimit("ELLIPSE", fit=fit, **UNEVEN)
        rest_inside[fit] = bool(limit.contains(np.array([1.0, 0.0, 0.0, 0.0])))
        centre = (2 * i - 1) * 1.3 * right
        _sphere_panel(limit, centre, proj)
        for k, P in enumerate(dots):
            bpy.ops.mesh.primitive_uv_sphere_add(radius=0.065, location=centre + 1.03 * P)
            bpy.context.object.name, bpy.context.object.color = f"fits_limit_{fit}_{k}", INK
        label(text, centre - 1.22 * up, 0.2)
        if not rest_inside[fit]:
            label("rest pose (the bone) outside", centre - 1.47 * up, 0.17, NOTE)
    print("fits: rest pose inside:", ", ".join(f"{fit} {inside}" for fit, inside in rest_inside.items()))
    # curves are left out: their bounding boxes are loose; the bone sticks out 0.45 past the ball
    fit_camera(scene, [o for o in bpy.data.objects if o.type in ("MESH", "FONT")], -view, margin=0.06)
    return demo_scene.save_png(demo_scene.render_array(scene), ctx.out / "fits.png")


# --- limb IK: the swivel circle under limits ---------------------------------------------------

# A left arm along +X (the character faces -Y), elbow slightly back; the hand reaches forward and
# down. Shoulder limit: Rectangle, swing X -60°..60°, swing Z -30°..80°, twist -40°..40°.
ARM = {"shoulder": (0.0, 0.0, 0.0), "elbow": (0.30, 0.03, 0.0), "wrist": (0.57, 0.0, 0.0), "tip": (0.66, 0.0, 0.0)}
SWIVEL_TARGET = (0.32, -0.30, -0.12)
SWIVEL_LIMIT = dict(swing_x=(-60, 60), swing_z=(-30, 80), twist=(-40, 40))
SWIVEL_REQUESTED = math.radians(110.0)
SWIVEL_VIEW = (-1.0, 1.0, 0.5)  # the camera's side: along the shoulder->target axis, in front, up
FEASIBLE, BLOCKED = GREEN, RED


def bone_matrix(head, tail):
    """A 4x4 rest matrix of a bone from ``head`` to ``tail`` (local +Y along it, local Z near world Z)."""
    y = np.subtract(tail, head) / np.linalg.norm(np.subtract(tail, head))
    x = np.cross(y, (0.0, 0.0, 1.0))
    x /= np.linalg.norm(x)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = x, y, np.cross(x, y), head
    return m


def swivel_arcs(limb_ik, swivel_limits, chain, target, limit, requested, samples=721):
    """The swivel circle of ``chain`` reaching ``target``, cut where ``limit`` (the upper joint's)
    starts or stops holding, as the solver cuts it (``swivel_limits.Family.crossings`` about the
    root->wrist axis in the upper bone's rest frame, one ``contains`` per arc).

    Returns ``(arcs, chosen)``: ``arcs`` a list of ``(feasible, elbow points (k, 3))`` and
    ``chosen`` the swivel the limb solve with the limit uses for ``requested``."""
    rest = chain.upper_rest
    n = rest[:3, :3].T @ (np.asarray(target) - rest[:3, 3])
    free = limb_ik.solve_position(chain, target, requested)
    family = swivel_limits.Family(limit, n / np.linalg.norm(n), free.upper)
    cuts = sorted(c % (2 * math.pi) for c in family.crossings()) or [0.0]
    arcs = []
    for a, b in zip(cuts, cuts[1:] + [cuts[0] + 2 * math.pi]):
        delta = np.linspace(a, b, max(2, int(samples * (b - a) / (2 * math.pi))))
        poses = limb_ik.solve_position(chain, np.broadcast_to(target, delta.shape + (3,)), requested + delta)
        feasible = family.contains1(0.5 * (a + b))
        points = limb_ik.forward(chain, poses.quats)[:, 1]
        if arcs and arcs[-1][0] == feasible:  # an edge crossed, but the limit still holds (or fails)
            arcs[-1] = (feasible, np.concatenate([arcs[-1][1], points[1:]]))
        else:
            arcs.append((feasible, points))
    if len(arcs) > 1 and arcs[0][0] == arcs[-1][0]:
        arcs = [(arcs[0][0], np.concatenate([arcs.pop()[1], arcs[0][1][1:]]))] + arcs[1:]
    solved = limb_ik.solve_position(chain, target, requested, limits=limb_ik.LimbLimits(upper=limit))
    return arcs, float(solved.swivel)


def arm_objects(tag, points, radius, colour):
    """Tubes for the three bones (shoulder-elbow-wrist-tip) and balls at the joints."""
    for k, name in enumerate(("upper", "forearm", "hand")):
        curve(f"{tag}_{name}", points[k:k + 2], radius * (0.8 if k == 2 else 1.0), colour)
    for k in (0, 1, 2):
        bpy.ops.mesh.primitive_uv_sphere_add(radius=1.5 * radius, location=points[k])
        bpy.context.object.name, bpy.context.object.color = f"{tag}_joint_{k}", colour


@figure("swivel")
def swivel_figure(ctx):
    """Limb IK's swivel circle (where the elbow can go with the hand on the target) in green where
    the shoulder limit holds and red where it is blocked; the requested swivel (grey arm) and the
    nearest feasible one the solver chose (dark arm)."""
    limb_ik, swivel_limits, limits_mod = ctx.core("limb_ik"), ctx.core("swivel_limits"), ctx.core("limits")
    A = {k: np.array(v) for k, v in ARM.items()}
    chain = limb_ik.LimbChain(bone_matrix(A["shoulder"], A["elbow"]), bone_matrix(A["elbow"], A["wrist"]),
                              bone_matrix(A["wrist"], A["tip"]),
                              end_length=float(np.linalg.norm(A["tip"] - A["wrist"])))
    limit = limits_mod.JointLimit("RECT", **{k: tuple(math.radians(a) for a in v) for k, v in SWIVEL_LIMIT.items()})
    target = np.array(SWIVEL_TARGET)
    arcs, chosen = swivel_arcs(limb_ik, swivel_limits, chain, target, limit, SWIVEL_REQUESTED)
    print(f"swivel: requested {math.degrees(SWIVEL_REQUESTED):.0f}°, chosen {math.degrees(chosen):.1f}°, "
          f"feasible arcs {sum(f for f, _ in arcs)} of {len(arcs)}")  # arcs alternate: feasible, blocked

    scene = demo_scene.clear_scene()
    sharp(scene, *ctx.size(900, 620))
    n = target / np.linalg.norm(target)
    front = np.cross(n, (0.0, 0.0, 1.0))  # horizontal, across the axis, in front of the character
    front /= np.linalg.norm(front)
    view = np.array(SWIVEL_VIEW) @ np.array([n, front, (0.0, 0.0, 1.0)])  # the camera's side
    view /= np.linalg.norm(view)
    demo_scene.camera(scene, 30 * view, (0, 0, 0), ortho_scale=1.0)  # labels face this view
    for i, (feasible, points) in enumerate(arcs):
        curve(f"arc_{i}", points, 0.0065, FEASIBLE if feasible else BLOCKED)
    curve("axis", np.array([A["shoulder"], target]), 0.002, (0.35, 0.35, 0.38, 1))
    free = limb_ik.solve_position(chain, np.stack([target, target]), np.array([SWIVEL_REQUESTED, chosen]))
    joints = limb_ik.forward(chain, free.quats)
    arm_objects("requested", joints[0], 0.007, (0.7, 0.7, 0.73, 1))
    arm_objects("chosen", joints[1], 0.009, (0.15, 0.15, 0.17, 1))
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.018, location=target)
    bpy.context.object.name, bpy.context.object.color = "target", BLUE

    centre = np.concatenate([p for _, p in arcs]).mean(axis=0)
    ahead = 0.3 * view  # labels in front of the tubes

    def outward(point, distance):
        """``point`` moved ``distance`` away from the circle's centre, across the view."""
        d = point - centre
        d -= (d @ view) * view
        return point + distance * d / np.linalg.norm(d) + ahead

    size = 0.026
    grey = (0.45, 0.45, 0.48, 1)
    label(f"requested {math.degrees(SWIVEL_REQUESTED):.0f}°", outward(joints[0][1], 0.075), size, grey)
    label(f"chosen {math.degrees(chosen):.0f}°", outward(joints[1][1], 0.06), size)
    label("(nearest feasible)", outward(joints[1][1], 0.06) - 0.032 * _screen_up(view), 0.8 * size)
    up = _screen_up(view)
    right = np.cross(-view, up)
    label("target", target - 0.05 * up + ahead, size, BLUE)
    label("shoulder", A["shoulder"] - 0.03 * right - 0.01 * up + ahead, size, align="RIGHT")
    green = np.concatenate([p for f, p in arcs if f] or [np.zeros((1, 3))])
    red = np.concatenate([p for f, p in arcs if not f] or [np.zeros((1, 3))])
    left, low = green[np.argmin(green @ up)], red[np.argmin(red @ up)]  # label the arcs at their lowest points
    label("shoulder limit holds", left - 0.035 * right - 0.01 * up + ahead, size, FEASIBLE, align="RIGHT")
    label("blocked", low - 0.055 * up + ahead, size, BLOCKED)
    tips = np.concatenate([joints.reshape(-1, 3)] + [p for _, p in arcs])
    fit_camera(scene, [o for o in bpy.data.objects if o.type in ("MESH", "FONT")], -view, margin=0.04, points=tips)
    return demo_scene.save_png(demo_scene.render_array(scene), ctx.out / "swivel.png")


def _screen_up(view):
    """The camera's up direction for a camera looking along ``-view`` (world Z kept upright)."""
    right = np.cross(-view, [0.0, 0.0, 1.0])
    return np.cross(right / np.linalg.norm(right), -view)


# --- skinning: bend and twist -------------------------------------------------------------------

SKIN_MODES = (("LBS", "LBS", RED), ("SDEF", "SDEF (SBS+)", BLUE), ("BEZIER", "Bezier", GREEN))


def capped_tube(name, length, radius, rings, segments):
    """A closed tube along +Z from 0 to ``length`` (caps are n-gons) and each vertex's position
    along it in [0, 1]."""
    obj, along = demo_scene.tube_mesh(name, (0, 0, 0), (0, 0, length), radius, rings=rings, segments=segments)
    mesh = obj.data
    bm_faces = [tuple(range(segments))[::-1], tuple(range((rings - 1) * segments, rings * segments))]
    verts = [v.co[:] for v in mesh.vertices]
    faces = [tuple(p.vertices) for p in mesh.polygons] + bm_faces
    mesh.clear_geometry()
    mesh.from_pydata(verts, [], faces)
    for poly in mesh.polygons:
        poly.use_smooth = True
    return obj, along


def mesh_volume(obj):
    """Volume enclosed by the evaluated (deformed) closed mesh of ``obj`` (divergence theorem)."""
    ev = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    mesh = ev.to_mesh()
    mesh.calc_loop_triangles()
    co = np.empty(len(mesh.vertices) * 3)
    mesh.vertices.foreach_get("co", co)
    tri = np.empty(len(mesh.loop_triangles) * 3, np.int64)
    mesh.loop_triangles.foreach_get("vertices", tri)
    ev.to_mesh_clear()
    p = co.reshape(-1, 3)[tri.reshape(-1, 3)]
    return abs(np.einsum("ij,ij->i", p[:, 0], np.cross(p[:, 1], p[:, 2])).sum()) / 6.0


def stripes(mesh, colour, segments, bands=8):
    """Two materials (``colour`` and a darker shade) in ``bands`` stripes along the tube, so a
    twist shows (Workbench's *Material* colour)."""
    for name, shade in (("base", 1.0), ("stripe", 0.55)):
        mat = bpy.data.materials.new(f"{mesh.name}_{name}")
        mat.diffuse_color = (*(c * shade for c in colour[:3]), 1.0)
        mesh.materials.append(mat)
    first = np.empty(len(mesh.polygons), np.int64)
    mesh.polygons.foreach_get("loop_start", first)
    corner = np.empty(len(mesh.loops), np.int64)
    mesh.loops.foreach_get("vertex_index", corner)
    index = (corner[first] % segments) * bands // segments % 2
    index[-2:] = 0  # the caps
    mesh.polygons.foreach_set("material_index", index.astype(np.int32))


def bend_and_twist(bend_deg=90.0, twist_deg=90.0):
    """Child bone rotation: twist about its own axis (local Y), then bend about local Z."""
    b, t = math.radians(bend_deg) / 2, math.radians(twist_deg) / 2
    bend = np.array([math.cos(b), 0, 0, math.sin(b)])
    twist = np.array([math.cos(t), 0, math.sin(t), 0])
    w1, x1, y1, z1 = bend
    w2, x2, y2, z2 = twist
    return (w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2)


def skinning_setup(bend=90.0, twist=90.0, segments=48):
    """Three capped forearm tubes (upper arm -> forearm across an elbow blend) with the deformer
    in LBS, SDEF and Bezier mode, the forearm bent and twisted; ``[(mode, text, mesh, volume
    loss)]`` measured on the evaluated meshes."""
    out = []
    for i, (mode, text, colour) in enumerate(SKIN_MODES):
        rig = demo_scene.armature(f"Rig{mode}", [("upper", (0, 0, 0), (0, 0, 1), None, 0.0),
                                                  ("fore", (0, 0, 1), (0, 0, 2), "upper", 0.0)], (2.6 * i, 0, 0))
        rig.rotation_euler.z = math.radians(-30)  # the bend seen a little from the side
        mesh, along = capped_tube(f"Arm{mode}", 2.0, 0.25, 81, segments)
        demo_scene.skin_two_bones(mesh, rig, "upper", "fore", along * 2.0, 0.5, 1.5)
        stripes(mesh.data, colour, segments)
        bpy.context.view_layer.objects.active = mesh
        bpy.ops.object.select_all(action="DESELECT")
        mesh.select_set(True)
        bpy.ops.object.jointlimit_sdef_derive()
        bpy.ops.object.jointlimit_deformer_add(source="DERIVED", mode=mode)
        bpy.context.view_layer.update()
        rest = mesh_volume(mesh)
        rig.pose.bones["fore"].rotation_quaternion = bend_and_twist(bend, twist)
        bpy.context.view_layer.update()
        out.append((mode, text, mesh, 1.0 - mesh_volume(mesh) / rest))
    return out


@figure("skinning")
def skinning_figure(ctx):
    """Three forearms bent 90° and twisted 90° (LBS, SDEF, Bezier), striped so the twist shows,
    labelled with the volume change measured on the deformed meshes."""
    scene = demo_scene.clear_scene()
    sharp(scene, *ctx.size(1200, 600))
    tubes = skinning_setup()
    view = (0.0, 1.0, -0.3)  # from the front and a little above
    fit_camera(scene, [t[2] for t in tubes], view, margin=0.06)
    bottom = min(p[2] for t in tubes for p in world_points(t[2]))
    texts = []
    for mode, text, mesh, loss in tubes:
        centre = world_points(mesh).mean(axis=0)
        texts.append(label(f"{text}\nvolume {-100 * loss:+.0f}%", (centre[0], centre[1], bottom - 0.5), 0.3))
    fit_camera(scene, [t[2] for t in tubes] + texts, view, margin=0.04)
    for t in texts:
        t.rotation_euler = scene.camera.rotation_euler
    print("skinning volume change: " + ", ".join(f"{m} {-100 * loss:+.1f}%" for m, _, _, loss in tubes))
    # The stripes are materials; the text has none, so render the labels in a second pass.
    for t in texts:
        t.hide_render = True
    scene.display.shading.color_type = "MATERIAL"
    shapes = demo_scene.render_array(scene)
    for obj in bpy.data.objects:
        obj.hide_render = obj.type != "FONT"
    scene.display.shading.color_type = "OBJECT"
    words = demo_scene.render_array(scene)
    return demo_scene.save_png(np.minimum(shapes, words), ctx.out / "skinning.png")


# --- the overlay on a posed arm -------------------------------------------------------------------

OVERLAY_BONES = ("upper_arm.L", "forearm.L")


def overlay_objects(addon, rig, bone_names, tag):
    """Render objects of the viewport overlay of ``bone_names``: the very arrays the draw handler
    draws (``overlay.bone_draw_data`` built on ``core/overlay_geometry.py``) as tubes and a
    translucent cone."""
    overlay = sys.modules[f"{addon.__name__}.overlay"]
    settings = bpy.context.scene.jointlimit
    objects, inside = [], []
    for name in bone_names:
        data = overlay.bone_draw_data(rig, rig.pose.bones[name], settings)
        colour = (*data["color"], 1.0)
        inside.append(data["inside"])
        objects.append(curve(f"{tag}_outline_{name}", data["outline"], 0.008, colour, closed=data["closed"]))
        objects.append(curve(f"{tag}_swing_{name}", np.array([data["head"], data["swing_point"]]), 0.006, colour))
        bpy.ops.mesh.primitive_uv_sphere_add(radius=0.02, location=data["swing_point"])
        dot = bpy.context.object
        dot.name, dot.color = f"{tag}_point_{name}", colour
        objects.append(dot)
        if data["cone"] is not None:
            tris = data["cone"]
            faces = [(3 * i, 3 * i + 1, 3 * i + 2) for i in range(len(tris) // 3)]
            cone = mesh_object(f"{tag}_cone_{name}", tris, faces, (*data["color"], 0.2 + settings.overlay_opacity),
                               smooth=False)
            objects.append(cone)
        if data["twist_arc"] is not None:
            twist = (*overlay.COLOR_TWIST, 1.0)
            objects.append(curve(f"{tag}_twist_{name}", data["twist_arc"], 0.008, twist))
            objects.append(curve(f"{tag}_twistmark_{name}", data["twist_marker"], 0.005, colour))
    return objects, inside


def _arm_pose(rig, demo_mod, flex, spread, twist, bend):
    """The left arm: shoulder flexion/abduction/twist and elbow bend (degrees, local axes)."""
    q = demo_mod._axis_angle
    a, b, c = (np.array(q(axis, deg)) for axis, deg in (((1, 0, 0), flex), ((0, 0, 1), spread), ((0, 1, 0), twist)))
    rig.pose.bones["upper_arm.L"].rotation_quaternion = _qmul(_qmul(a, b), c)
    rig.pose.bones["forearm.L"].rotation_quaternion = q((1, 0, 0), bend)
    bpy.context.view_layer.update()


def _qmul(p, q):
    w1, x1, y1, z1 = p
    w2, x2, y2, z2 = q
    return np.array((w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2))


@figure("overlay")
def overlay_figure(ctx):
    """The limit overlay on the demo character's left arm: a pose clamped into the limits (green)
    and one outside them (red), rendered from the overlay's own geometry."""
    character, chains = demo.build_character()
    rig = character["rig"]
    demo.apply_presets(rig, chains)
    scene = bpy.context.scene
    scene.jointlimit.overlay_opacity = 0.25
    scene.jointlimit.overlay_size = 1.5
    pictures = []
    for tag, pose, clamp in (("in", (50, 10, 30, 70), True), ("out", (-95, 55, 120, 40), False)):
        demo.pose_mode(rig, "upper_arm.L", OVERLAY_BONES)
        _arm_pose(rig, demo, *pose)
        if clamp:
            bpy.ops.pose.jointlimit_apply()
        demo.object_mode()
        for obj in bpy.data.objects:
            if obj.name.startswith(("in_", "out_")):
                obj.hide_render = True
        objects, inside = overlay_objects(ctx.addon, rig, OVERLAY_BONES, tag)
        demo_scene.character_view(scene, ctx.size(600, 560), location=(1.25, -1.75, 1.85), target=(0.3, 0.0, 1.42),
                                  lens=50.0)
        scene.display.render_aa = "16"
        bpy.data.objects["Floor"].hide_render = True
        for obj in (character["body"], character["arms"]):
            obj.color = (*obj.color[:3], 0.3)  # see-through, so the joint shows
        state = "inside" if all(inside) else "outside"
        pictures.append(demo_scene.render_array(scene, f"pose {state} the limits"))
    return demo_scene.save_png(demo_scene.tile(pictures), ctx.out / "overlay.png")


# --- the demo character ---------------------------------------------------------------------------


@figure("character")
def character_figure(ctx):
    """The demo character in one wild pose, without and with joint limits (README's first picture)."""
    character, chains = demo.build_character()
    demo.apply_presets(character["rig"], chains)
    demo.add_deformer(character["arms"])
    picture, text = demo.limits_picture(ctx.addon, character["rig"], chains, ctx.size(420, 520))
    print("character:", text)
    return demo_scene.save_png(picture, ctx.out / "character.png")


@figure("ccd")
def ccd_figure(ctx):
    """The tail posed by CCD IK on the demo's two key frames, its target as a ball."""
    character, chains = demo.build_character()
    rig = character["rig"]
    demo.apply_presets(rig, chains)
    print("ccd:", demo.tail_keys(rig, chains))
    demo.object_mode()
    scene = bpy.context.scene
    pictures = []
    for frame in demo.TAIL_TARGETS:
        scene.frame_set(frame)
        for obj in bpy.data.objects:
            if obj.name.startswith("Target"):
                obj.hide_render = True
        target = demo.tail_target(rig, chains, frame)
        demo.object_mode()
        bpy.ops.mesh.primitive_uv_sphere_add(radius=0.06, location=target)
        ball = bpy.context.object
        ball.name, ball.color = f"Target{frame}", (0.1, 0.35, 1.0, 1.0)
        demo_scene.character_view(scene, ctx.size(420, 420), location=(0.9, 3.3, 2.3), target=(0.0, 0.35, 0.95),
                                  lens=45.0)
        pictures.append(demo_scene.render_array(scene, f"frame {frame}: tail tip on the blue target"))
    return demo_scene.save_png(demo_scene.tile(pictures), ctx.out / "ccd.png")


@figure("motion_strip")
def motion_strip_figure(ctx):
    """Five frames of the demo's three seconds: limb IK and CCD key poses, min-jerk in between."""
    character, chains = demo.build_character()
    rig = character["rig"]
    demo.apply_presets(rig, chains)
    demo.add_deformer(character["arms"])
    print("motion strip:", demo.arm_keys(rig), demo.tail_keys(rig, chains), demo.smooth_motion(rig, chains))
    return demo_scene.save_png(demo.motion_picture(ctx.size(300, 380)), ctx.out / "motion_strip.png")


# --- motion graph -----------------------------------------------------------------------------


@figure("motion")
def motion_figure(ctx):
    motion = ctx.core("motion")
    scene = demo_scene.clear_scene()
    sharp(scene, *ctx.size(1000, 560))
    demo_scene.camera(scene, (4.0, -20, 1.8), (4.0, 0, 1.8), ortho_scale=10.5)
    keys_t, keys_v = np.array([0.0, 0.4, 1.0]), np.array([[0.0], [60.0], [20.0]])
    t = np.linspace(0, 1, 400)
    sx, sy = 8.0, 4.0 / 70.0  # plot units: 8 wide, 70 degrees -> 4 high
    colours = {"MIN_ACCELERATION": (0.2, 0.45, 0.9, 1), "MIN_JERK": (0.9, 0.4, 0.1, 1)}
    flat = lambda p: np.c_[p[:, 0], np.zeros(len(p)), p[:, 1]]  # noqa: E731
    for profile, colour in colours.items():
        v = motion.evaluate(profile, keys_t, keys_v, t, via=motion.VIA_OPTIMAL)[:, 0]  # as the figure shows
        curve(profile, flat(np.c_[t * sx, v * sy]), 0.035, colour)
    curve("axis_t", flat(np.array([(0, 0), (sx, 0)])), 0.015, (0.2, 0.2, 0.2, 1))
    curve("axis_v", flat(np.array([(0, 0), (0, 70 * sy)])), 0.015, (0.2, 0.2, 0.2, 1))
    for kt, kv in zip(keys_t, keys_v[:, 0]):
        bpy.ops.mesh.primitive_uv_sphere_add(radius=0.09, location=(kt * sx, -0.1, kv * sy))
        bpy.context.object.color = (0.1, 0.1, 0.1, 1)
    label("minimum acceleration (cubic, [004 eq.5])", (2.2, 0, 4.9), 0.28, colours["MIN_ACCELERATION"])
    label("minimum jerk (quintic)", (6.6, 0, 4.9), 0.28, colours["MIN_JERK"])
    label("time", (sx / 2, 0, -0.55), 0.28)
    label("angle: 0° -> 60° (via point at 0.4 T) -> 20°", (sx / 2, 0, -0.95), 0.28)
    fit_camera(scene, [o for o in bpy.data.objects if o.type != "CAMERA"], (0, 1, 0), margin=0.04)
    return demo_scene.save_png(demo_scene.render_array(scene), ctx.out / "motion.png")


# --- main -----------------------------------------------------------------------------------------


def parse_args(argv):
    args = argv[argv.index("--") + 1:] if "--" in argv else []
    opts = {"out": DOCS, "only": list(FIGURES), "scale": 1.0}
    i = 0
    while i < len(args):
        if args[i] == "--out":
            opts["out"], i = pathlib.Path(args[i + 1]), i + 2
        elif args[i] == "--only":
            opts["only"], i = [n.strip() for n in args[i + 1].split(",") if n.strip()], i + 2
        elif args[i] == "--quick":
            opts["scale"], i = 1.0 / 3.0, i + 1
            AA["level"] = "8"
        else:
            sys.exit(f"make_docs: unknown argument {args[i]!r} (use --out DIR, --only a,b, --quick)")
    unknown = [n for n in opts["only"] if n not in FIGURES]
    if unknown:
        sys.exit(f"make_docs: unknown picture {', '.join(unknown)}; known: {', '.join(FIGURES)}")
    return opts


def main():
    opts = parse_args(sys.argv)
    addon = register_addon_from_source()
    demo.ADDON_MODULE = addon.__name__
    opts["out"].mkdir(parents=True, exist_ok=True)
    ctx = Context(addon, opts["out"], opts["scale"])
    for name in opts["only"]:
        print("wrote", FIGURES[name](ctx))
    addon.unregister()


if __name__ == "__main__":
    main()
