"""Render the documentation pictures in docs/ from the add-on's own code (Workbench, headless).

Run: .venv/bin/blender -b --factory-startup --python scripts/make_docs.py   (or `make docs`)

- docs/regions.png   allowed swing region on the sphere for each shape (compare [000 Fig.12-21])
- docs/skinning.png  LBS / SDEF / Bezier on a bent cylinder with an asymmetric wide blend
                     (compare [002 Fig.42-49])
- docs/motion.png    one channel through a via point: minimum-acceleration vs minimum-jerk
- docs/fits.png      the two fits of a smooth shape (INSCRIBED vs AXES) for one asymmetric range
"""

import math
import os
import pathlib
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # Blender does not add the script's folder

import bpy  # noqa: E402
import numpy as np  # noqa: E402

import demo_scene  # noqa: E402
from bench._common import register_addon_from_source  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
# The paper's example ranges [000 Fig.13-15]: s in tan(-20°)..tan(10°), t in tan(-5°)..tan(55°),
# i.e. swing_z -40°..20° and swing_x -10°..110° (past 90°, where Euler limits fail).
PAPER = dict(swing_z=(math.radians(-40), math.radians(20)), swing_x=(math.radians(-10), math.radians(110)))


def region_limits(limits_mod):
    outline = [(math.tan(math.radians(a) / 2), math.tan(math.radians(b) / 2), bulge)
               for a, b, bulge in ((-40, -10, 0.0), (20, -10, 0.4), (20, 60, 0.0), (0, 110, 0.0), (-40, 80, 0.0))]
    return [
        ("RECT", limits_mod.JointLimit("RECT", **PAPER)),
        ("ELLIPSE", limits_mod.JointLimit("ELLIPSE", **PAPER)),
        ("OVAL", limits_mod.JointLimit("OVAL", **PAPER)),
        ("SUPERELLIPSE 4", limits_mod.JointLimit("SUPERELLIPSE", exponent=(4, 4), **PAPER)),
        ("POLYGON", limits_mod.JointLimit("POLYGON", outline=outline)),
    ]


def coloured_sphere(name, location, inside_fn):
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=6, radius=1.0, location=location)
    obj = bpy.context.object
    obj.name = name
    mesh = obj.data
    P = np.array([v.co for v in mesh.vertices])
    P /= np.linalg.norm(P, axis=1, keepdims=True)
    inside = inside_fn(P)
    colours = np.where(inside[:, None], [0.95, 0.45, 0.1, 1.0], [0.75, 0.75, 0.78, 1.0])
    attr = mesh.color_attributes.new("Region", "FLOAT_COLOR", "POINT")
    attr.data.foreach_set("color", colours.astype(np.float32).ravel())
    mesh.color_attributes.active_color = attr
    for poly in mesh.polygons:
        poly.use_smooth = True
    return obj


def label(text, location, size=0.35):
    """A text object facing the scene camera."""
    curve = bpy.data.curves.new(text, "FONT")
    curve.body, curve.size, curve.align_x = text, size, "CENTER"
    obj = bpy.data.objects.new(text, curve)
    obj.location = location
    obj.rotation_euler = bpy.context.scene.camera.rotation_euler
    bpy.context.scene.collection.objects.link(obj)
    return obj


def stick(start, end, radius=0.03):
    obj, _ = demo_scene.tube_mesh("Bone", start, end, radius, rings=2, segments=12)
    return obj


def regions_figure(addon):
    limits_mod = sys.modules[addon.__name__ + ".core.limits"]
    proj = sys.modules[addon.__name__ + ".core.projection"]
    scene = demo_scene.clear_scene()
    demo_scene.workbench(scene, 1500, 420)
    scene.display.shading.color_type = "VERTEX"
    view = np.array([0.0, 1.0, 0.8])  # from the bone's side (+Y) and above: the region faces us
    view /= np.linalg.norm(view)
    centre = np.array([-5.2, 0.0, -0.25])
    demo_scene.camera(scene, centre + 30 * view, centre, ortho_scale=14.0)
    for i, (name, limit) in enumerate(region_limits(limits_mod)):
        x = -2.6 * i  # looking from +Y, so -X is to the right

        def inside(P, limit=limit):
            s, t = proj.sphere_to_plane(P)
            return limit.region.contains_st(s, t) & np.isfinite(s)

        coloured_sphere(name, (x, 0, 0), inside)
        stick((x, 0, 0), (x, 1.45, 0))  # the bone at rest: local +Y
        label(name.title(), (x, 0, -1.5), 0.32)
    return demo_scene.render(scene, DOCS / "regions.png")


# An uneven range (issue 17): swing X -20°..140°, swing Z -10°..100°.
UNEVEN = dict(swing_x=(math.radians(-20), math.radians(140)), swing_z=(math.radians(-10), math.radians(100)))


def marker(name, location, colour, radius=0.07):
    """A small sphere of one colour (vertex colours, as the region spheres)."""
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=2, radius=radius, location=location)
    obj = bpy.context.object
    obj.name = name
    attr = obj.data.color_attributes.new("Region", "FLOAT_COLOR", "POINT")
    attr.data.foreach_set("color", np.tile(colour, len(obj.data.vertices)).astype(np.float32))
    obj.data.color_attributes.active_color = attr
    return obj


def fits_figure(addon):
    """The ellipse of one uneven range with both fits: the paper's inscribed ellipse leaves out
    the rest pose (+Y, the bone) and falls short of the limits; the AXES fit reaches all four
    (dark dots: a pure bend about X or Z to each limit) and holds the rest pose."""
    limits_mod = sys.modules[addon.__name__ + ".core.limits"]
    proj = sys.modules[addon.__name__ + ".core.projection"]
    quat = sys.modules[addon.__name__ + ".core.quat"]
    scene = demo_scene.clear_scene()
    demo_scene.workbench(scene, 1000, 560)
    scene.display.shading.color_type = "VERTEX"
    view = np.array([-0.7, 0.85, 0.75])
    view /= np.linalg.norm(view)
    centre = np.array([0.0, 0.3, 0.1])
    demo_scene.camera(scene, centre + 30 * view, centre, ortho_scale=5.4)
    right = np.cross(-view, [0.0, 0.0, 1.0])     # to the right on the picture
    right /= np.linalg.norm(right)
    up = np.cross(right, -view)
    limits = [limits_mod.JointLimit("ELLIPSE", fit=fit, **UNEVEN) for fit in ("INSCRIBED", "AXES")]
    texts = ("Inscribed (paper)", "Axes")
    for i, (limit, text) in enumerate(zip(limits, texts)):
        x = (2 * i - 1) * 1.35 * right

        def inside(P, limit=limit):
            s, t = proj.sphere_to_plane(P)
            return limit.region.contains_st(s, t) & np.isfinite(s)

        coloured_sphere(text, tuple(x), inside)
        stick(tuple(x), tuple(x + [0.0, 1.6, 0.0]), 0.045)  # the bone at rest: local +Y
        for axis, rng in (((1.0, 0.0, 0.0), UNEVEN["swing_x"]), ((0.0, 0.0, 1.0), UNEVEN["swing_z"])):
            for angle in rng:
                q = quat.from_axis_angle(np.array(axis), angle)
                P = quat.rotate(q, np.array([0.0, 1.0, 0.0]))
                marker("limit", tuple(x + 1.0 * P), (0.1, 0.1, 0.12, 1.0))
        rest_in = bool(limit.contains(np.array([1.0, 0.0, 0.0, 0.0])))
        label(text + ("" if rest_in else ": rest pose outside"), tuple(x - 1.3 * up), 0.2)
    return demo_scene.render(scene, DOCS / "fits.png")


def skinning_figure(addon):
    scene = demo_scene.clear_scene()
    demo_scene.workbench(scene, 1200, 520)
    skin = sys.modules[addon.__name__ + ".deformer"]  # noqa: F841  (ensures the deformer is loaded)
    colours = {"LBS": (0.8, 0.35, 0.3, 1), "SDEF": (0.35, 0.6, 0.9, 1), "BEZIER": (0.4, 0.8, 0.45, 1)}
    demo_scene.camera(scene, (3.6, -14, 0.9), (3.6, 0, 0.9), ortho_scale=8.5)
    for i, mode in enumerate(("LBS", "SDEF", "BEZIER")):
        rig = demo_scene.armature(f"Rig{mode}", [("lower", (0, 0, 0), (0, 0, 1), None, 0.0),
                                                  ("upper", (0, 0, 1), (0, 0, 2), "lower", 0.0)], (3.0 * i, 0, 0))
        mesh, along = demo_scene.tube_mesh(f"Hose{mode}", (0, 0, 0), (0, 0, 2), 0.35, rings=80, segments=40)
        demo_scene.skin_two_bones(mesh, rig, "lower", "upper", along * 2.0, 0.4, 1.15)  # wide, asymmetric blend
        mesh.color = colours[mode]
        bpy.context.view_layer.objects.active = mesh
        bpy.ops.object.jointlimit_sdef_derive()
        bpy.ops.object.jointlimit_deformer_add(source="DERIVED", mode=mode)
        rig.pose.bones["upper"].rotation_mode = "QUATERNION"
        # bend 90° about the bone's local Z (the view plane), not its own axis
        rig.pose.bones["upper"].rotation_quaternion = (math.cos(math.pi / 4), 0, 0, math.sin(math.pi / 4))
        label({"LBS": "LBS", "SDEF": "SDEF (SBS+)", "BEZIER": "Bezier"}[mode], (3.0 * i + 0.3, 0, -0.6), 0.3)
    return demo_scene.render(scene, DOCS / "skinning.png")


def polyline(name, points, radius, colour):
    curve = bpy.data.curves.new(name, "CURVE")
    curve.dimensions, curve.bevel_depth = "3D", radius
    spline = curve.splines.new("POLY")
    spline.points.add(len(points) - 1)
    for p, (x, y) in zip(spline.points, points):
        p.co = (x, 0.0, y, 1.0)
    obj = bpy.data.objects.new(name, curve)
    obj.color = colour
    bpy.context.scene.collection.objects.link(obj)
    return obj


def motion_figure(addon):
    motion = sys.modules[addon.__name__ + ".core.motion"]
    scene = demo_scene.clear_scene()
    demo_scene.workbench(scene, 1000, 560)
    demo_scene.camera(scene, (4.0, -20, 1.8), (4.0, 0, 1.8), ortho_scale=10.5)
    keys_t, keys_v = np.array([0.0, 0.4, 1.0]), np.array([[0.0], [60.0], [20.0]])
    t = np.linspace(0, 1, 400)
    sx, sy = 8.0, 4.0 / 70.0  # plot units: 8 wide, 70 degrees -> 4 high
    colours = {"MIN_ACCELERATION": (0.2, 0.45, 0.9, 1), "MIN_JERK": (0.9, 0.4, 0.1, 1)}
    for profile, colour in colours.items():
        v = motion.evaluate(profile, keys_t, keys_v, t)[:, 0]
        polyline(profile, np.c_[t * sx, v * sy], 0.035, colour)
    polyline("axis_t", [(0, 0), (sx, 0)], 0.015, (0.2, 0.2, 0.2, 1))
    polyline("axis_v", [(0, 0), (0, 70 * sy)], 0.015, (0.2, 0.2, 0.2, 1))
    for kt, kv in zip(keys_t, keys_v[:, 0]):
        bpy.ops.mesh.primitive_uv_sphere_add(radius=0.09, location=(kt * sx, -0.1, kv * sy))
        bpy.context.object.color = (0.1, 0.1, 0.1, 1)
    label("minimum acceleration (cubic, [004 eq.5])", (2.2, 0, 4.9), 0.28).color = colours["MIN_ACCELERATION"]
    label("minimum jerk (quintic)", (6.6, 0, 4.9), 0.28).color = colours["MIN_JERK"]
    label("time", (sx / 2, 0, -0.55), 0.28)
    label("angle: 0° -> 60° (via point at 0.4 T) -> 20°", (sx / 2, 0, -0.95), 0.28)
    return demo_scene.render(scene, DOCS / "motion.png")


def main():
    addon = register_addon_from_source()
    DOCS.mkdir(exist_ok=True)
    for make in (regions_figure, skinning_figure, motion_figure, fits_figure):
        print("wrote", make(addon).relative_to(ROOT))
    addon.unregister()


main()
