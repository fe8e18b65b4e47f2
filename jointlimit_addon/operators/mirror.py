"""``pose.jointlimit_mirror``: mirror joint limits to the bones of the other side."""

import math

import bpy
import numpy as np

from .. import bone_limits, presets, settings_io
from ._common import PosePoll, limitable_selection, refuse_invalid_limits, report_count, report_rest_pose, report_text

MIRROR_TOL_DEGREES = 2.0    # rest frames further than this from mirror images: the mirrored limit bends the bone otherwise
_FLIP_X = np.diag([-1.0, 1.0, 1.0])


class POSE_OT_jointlimit_mirror(PosePoll, bpy.types.Operator):
    """Copy the selected bones' joint limits to their mirror bones (.L/.R, _L/_R, Left/Right) with the signs mirrored across X"""

    bl_idname = "pose.jointlimit_mirror"
    bl_label = "Mirror Joint Limits"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        pairs, unmatched = [], []
        unlimited = []  # pairs without a limit on either side: nothing to mirror (their stored ranges stay)
        selection, mechanism = limitable_selection(context)
        for pb in selection:     # (each rig in Pose Mode: its own partners)
            other = pb.id_data.pose.bones.get(presets.flip_name(pb.name))
            if other is None or other == pb:
                unmatched.append(pb.name)
            elif not (pb.jointlimit.enabled or other.jointlimit.enabled):
                unlimited.append(pb.name)
            else:
                pairs.append((pb, other))
        if not pairs:
            self.report({"ERROR"}, (report_text("{bones} and their mirror bones have no joint limit to mirror",
                                                bones=", ".join(unlimited[:5])) if unlimited else
                                    report_text("No mirror bones found for the selection (names need .L/.R, _L/_R or "
                                                "Left/Right)"))
                        + bone_limits.skipped_text(mechanism))
            return {"CANCELLED"}
        active = context.active_pose_bone
        chosen = {(pb.id_data, pb.name) for pb, _ in pairs}
        # both sides selected: each pair from the side the animator set up (``_source``), once; one
        # side selected: from it, unless only its partner has a limit (never overwritten from none)
        pairs_used = [(src, dst) for src, dst in pairs
                      if (dst.id_data, dst.name) not in chosen or _source(src, dst, active) == src]
        pulled = [pb for pb, other in pairs_used
                  if (other.id_data, other.name) not in chosen and other.jointlimit.enabled and not pb.jointlimit.enabled]
        pairs_used = [(other, pb) if pb in pulled else (pb, other) for pb, other in pairs_used]
        pulled = [pb.name for pb in pulled]
        if refuse_invalid_limits(self, [src for src, _ in pairs_used]):
            return {"CANCELLED"}
        try:    # (before any change)
            for src, dst in pairs_used:
                settings_io.check_outline_editable(dst.jointlimit, [(-p.swing_z, p.swing_x, -p.bulge)
                                                                    for p in src.jointlimit.outline])
        except ValueError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        written = []
        for src, dst in pairs_used:
            settings_io.mirror_settings(src.jointlimit, dst.jointlimit)
            written.append(dst)
        message = report_count("Mirrored 1 joint limit", "Mirrored {count} joint limits", len(written))
        if unmatched:
            message += f"; no mirror bone for: {', '.join(unmatched[:5])}"
        if unlimited:
            message += f"; no joint limit on either side: {', '.join(unlimited[:5])}"
        message += bone_limits.skipped_text(mechanism)
        self.report({"INFO"}, message)
        if pulled:
            self.report({"INFO"}, report_text("{bones} had no joint limit: mirrored from the other side",
                                              bones=", ".join(pulled[:5])))
        uneven = [(dst.name, angle) for src, dst in pairs_used for angle in [_off_mirror_degrees(src, dst)]
                  if angle > MIRROR_TOL_DEGREES]
        if uneven:
            self.report({"WARNING"}, report_text(
                "The rest orientations of {bones} are not the mirror images of their partners' (up to {angle:.0f}° "
                "apart: a bone roll or direction differs), so the mirrored limits bend them otherwise in the world: "
                "apply a preset with Fit to Rig to both sides, or set those limits by hand",
                bones=", ".join(name for name, _ in uneven[:5]), angle=max(angle for _, angle in uneven)))
        report_rest_pose(self, written)
        return {"FINISHED"}


def _off_mirror_degrees(src, dst):
    """The angle between ``dst``'s rest orientation (armature space) and the mirror image of
    ``src``'s across the armature's X = 0 plane (Symmetrize makes ``S A S``)."""
    a = np.array(src.bone.matrix_local)[:3, :3]
    b = np.array(dst.bone.matrix_local)[:3, :3]
    a /= np.linalg.norm(a, axis=0)
    b /= np.linalg.norm(b, axis=0)
    r = b.T @ (_FLIP_X @ a @ _FLIP_X)
    return math.degrees(math.acos(min(max((np.trace(r) - 1.0) / 2.0, -1.0), 1.0)))


def _source(a, b, active):
    """Which of two mirror bones, both selected, is the one to copy: the only one with a limit (a
    limit is never overwritten from a bone without one, also when that one is active), else the
    active bone, else the one on the active bone's side, else the left one."""
    if a.jointlimit.enabled != b.jointlimit.enabled:
        return a if a.jointlimit.enabled else b
    if active in (a, b):
        return active
    if active is not None and presets.flip_name(active.name) != active.name:
        right = presets.is_right_side(active.name)
        return a if presets.is_right_side(a.name) == right else b
    return b if presets.is_right_side(a.name) else a
