"""Event handling shared by the modal IK operators (a mixin, not an operator)."""

import math

from .. import drag, ik_draw

CONFIRM = {"LEFTMOUSE", "RET", "NUMPAD_ENTER"}
CANCEL = {"RIGHTMOUSE", "ESC"}
WHEEL = {"WHEELUPMOUSE": 1, "WHEELDOWNMOUSE": -1}


def view_from_context(context):
    region, rv3d = getattr(context, "region", None), getattr(context, "region_data", None)
    if region is None or rv3d is None or not hasattr(rv3d, "perspective_matrix"):
        return None
    return drag.ViewProjection.from_region(region, rv3d)


class ModalDragMixin:
    """``invoke``/``modal`` for a drag tool; subclasses provide ``begin_session(context, view)`` and
    ``confirmed(session)``: the drag's result into the operator's properties (what *Adjust Last
    Operation* shows and runs again) and its status into the Info log."""

    _session = None
    _handle = None

    def invoke(self, context, event):
        view = view_from_context(context)
        if view is None:
            self.report({"ERROR"}, "Run this tool from a 3D Viewport")
            return {"CANCELLED"}
        try:
            self._session = self.begin_session(context, view)
        except ValueError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        self._handle = ik_draw.add(self._session)
        if getattr(context, "window", None) is not None:
            context.window_manager.modal_handler_add(self)
        self._header(context)
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        session = self._session
        if not session.still_exists():
            return self._finish(context, {"CANCELLED"})
        kind, pressed = event.type, event.value == "PRESS"
        if kind == "MOUSEMOVE":
            session.mouse_move(event.mouse_region_x, event.mouse_region_y, ctrl=event.ctrl)
        elif kind in WHEEL:
            session.wheel(WHEEL[kind] * (-1 if getattr(event, "shift", False) else 1))
        elif kind in CONFIRM and pressed:
            session.key(context)
            self.confirmed(session)
            return self._finish(context, {"FINISHED"})
        elif kind in CANCEL and pressed:
            session.cancel()
            return self._finish(context, {"CANCELLED"})
        else:
            return {"PASS_THROUGH"} if kind in {"MIDDLEMOUSE", "TRACKPADPAN", "TRACKPADZOOM"} else {"RUNNING_MODAL"}
        self._header(context)
        return {"RUNNING_MODAL"}

    def cancel(self, context):
        """Blender ends the drag itself (the area closed, a file loaded): the overlay goes and the
        pose is put back as on Esc, unless its bones are gone."""
        if self._session.still_exists():
            self._session.cancel()
        self._finish(context, None)

    def _finish(self, context, result):
        ik_draw.remove(self._handle)
        self._handle = None
        area = getattr(context, "area", None)
        if area is not None:
            area.header_text_set(None)
        return result

    def _header(self, context):
        area = getattr(context, "area", None)
        if area is not None:
            area.header_text_set(self.header_text(self._session))
            area.tag_redraw()

    @staticmethod
    def swivel_text(session):
        return "" if session.swivel is None else f"Swivel {math.degrees(session.swivel):.1f}°  "
