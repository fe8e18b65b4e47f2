"""Drive modal operators headless: constructed events, a view, and an operator stand-in.

Headless Blender has no window, so ``INVOKE`` runs ``execute``. The tests therefore call the
operator class's own ``invoke``/``modal`` functions directly with an object that carries the
operator's property values and collects reports, a context that forwards to the real
``bpy.context`` but supplies a 3-D view, and event objects built here. Everything they touch
(pose bones, keyframes, draw handlers) is real.
"""

import inspect
import types

import numpy as np


class Event(types.SimpleNamespace):
    def __init__(self, type, value="NOTHING", x=0, y=0, ctrl=False, shift=False):
        super().__init__(type=type, value=value, mouse_region_x=x, mouse_region_y=y, ctrl=ctrl, shift=shift)


def front_ortho_view(centre, half_size, pixels=1000):
    """A front orthographic view (looking along +Y) centred on ``centre`` (world space)."""
    cx, cy, cz = centre
    h = float(half_size)
    persp = np.array([
        [1 / h, 0, 0, -cx / h],
        [0, 0, 1 / h, -cz / h],
        [0, 1 / (10 * h), 0, -cy / (10 * h)],
        [0, 0, 0, 1],
    ])
    region = types.SimpleNamespace(width=pixels, height=pixels)
    region_data = types.SimpleNamespace(perspective_matrix=persp.tolist())

    def to_pixels(world):
        x, _, z = world
        return (round((x - cx) / h * pixels / 2 + pixels / 2), round((z - cz) / h * pixels / 2 + pixels / 2))

    return region, region_data, to_pixels


class ViewContext:
    """The real ``bpy.context`` with a 3-D view region attached (and no window)."""

    def __init__(self, region, region_data):
        self.region, self.region_data, self.window, self.area = region, region_data, None, None

    def __getattr__(self, name):
        import bpy

        return getattr(bpy.context, name)


def _defaults(cls):
    """``{name: default}`` of the properties the operator class declares (annotations made by
    ``bpy.props``), those with a default."""
    out = {}
    for klass in reversed(cls.__mro__):
        for name, prop in vars(klass).get("__annotations__", {}).items():
            keywords = getattr(prop, "keywords", None)
            if isinstance(keywords, dict) and "default" in keywords:
                out[name] = keywords["default"]
    return out


class OperatorStandIn:
    """Carries property values and reports; the operator class's methods run bound to it. A
    property not given has its default, as on a real operator: a property the operator gains
    later reads as Blender would give it."""

    def __init__(self, cls, **props):
        self._cls = cls
        self.reports = []
        for key, value in {**_defaults(cls), **props}.items():
            setattr(self, key, value)

    def report(self, kind, message):
        self.reports.append((set(kind), message))

    def __getattr__(self, name):
        raw = inspect.getattr_static(self._cls, name)
        if isinstance(raw, (staticmethod, classmethod)):
            return getattr(self._cls, name)
        value = getattr(self._cls, name)
        if isinstance(value, types.FunctionType):
            return types.MethodType(value, self)
        return value
