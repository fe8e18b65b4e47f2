"""Logical bone chains: the bones an animator poses, in order, not the parent links.

Production rigs (Rigify's generated rig above all) put mechanism bones between the controls an
animator poses: ``hand_fk.L`` is a child of ``MCH-hand_fk.L``, which is the child of
``forearm_fk.L``. A chain tool that walks parent links then solves through the mechanism, or
stops at it. Here bone B *follows* bone A when

- A is B's nearest ancestor that is not a mechanism bone, and
- B's evaluated head lies on A's evaluated tail (within ``FOLLOW_TOLERANCE`` of A's length),
  which holds through the rig's constraints; a plain parent link (no mechanism in between)
  keeps counting as before unless a tool asks for connected bones.

A mechanism bone is named ``MCH-``/``ORG-``/``DEF-``, sits only in hidden bone collections, or
is driven by a constraint that overrides its transform (Copy Transforms, Damped Track, IK, ...).
Bones the user selected are never treated as mechanism, and a chain the user selected in order
(each selected bone the posed parent of the next, or the bone it starts on) is taken as it is; a
selected ancestor further up (the torso) is not part of it.

Blender glue (reads pose bones); the solvers stay in ``core``.
"""

import numpy as np

from . import compat
from .wording import counted

MECHANISM_PREFIXES = ("MCH-", "ORG-", "DEF-")
# Constraints that set a bone's transform from elsewhere: such a bone is rig machinery. (Limit
# constraints and Child Of are left out: animators put those on the bones they pose.)
DRIVING_CONSTRAINTS = frozenset({
    "COPY_TRANSFORMS", "COPY_ROTATION", "COPY_LOCATION", "DAMPED_TRACK", "TRACK_TO", "LOCKED_TRACK",
    "IK", "SPLINE_IK", "STRETCH_TO", "ARMATURE", "ACTION", "TRANSFORM", "CLAMP_TO", "FOLLOW_PATH",
})
# B follows A when B's head is within this fraction of A's length from A's tail.
FOLLOW_TOLERANCE = 0.05


class ChainError(ValueError):
    """No sensible chain: the message says why."""


def mechanism_reason(pose_bone):
    """Why a bone is rig machinery (``"name"``, ``"hidden"``, ``"constraint"``), or ``None`` for a
    bone an animator poses."""
    if pose_bone.name.startswith(MECHANISM_PREFIXES):
        return "name"
    collections = list(pose_bone.bone.collections)
    if collections and not any(c.is_visible_effectively for c in collections):
        return "hidden"
    for con in pose_bone.constraints:
        if con.type in DRIVING_CONSTRAINTS and con.enabled and con.influence > 0.0:
            return "constraint"
    return None


def is_mechanism(pose_bone):
    return mechanism_reason(pose_bone) is not None


def split_mechanism(pose_bones):
    """``(posable bones, [(name, reason)] of the skipped mechanism bones)``, order kept."""
    keep, skipped = [], []
    for pb in pose_bones:
        reason = mechanism_reason(pb)
        if reason is None:
            keep.append(pb)
        else:
            skipped.append((pb.name, reason))
    return keep, skipped


def gap(a, b):
    """Distance from ``a``'s evaluated tail to ``b``'s evaluated head."""
    return float(np.linalg.norm(np.array(b.head) - np.array(a.tail)))


def follows(a, b):
    """Whether ``b``'s head stays on ``a``'s tail (evaluated pose)."""
    return gap(a, b) <= FOLLOW_TOLERANCE * max(a.length, 1e-9)


REASONS = {"name": "a mechanism name", "hidden": "only in hidden bone collections", "constraint": "driven by a constraint"}


def posable_ancestor(pose_bone, keep=frozenset()):
    """``(nearest ancestor that is not a mechanism bone, [(name, reason)] of the mechanism bones
    skipped on the way)``; bones named in ``keep`` count as posable whatever they look like."""
    parent, hopped = pose_bone.parent, []
    while parent is not None and parent.name not in keep and (reason := mechanism_reason(parent)) is not None:
        hopped.append((parent.name, reason))
        parent = parent.parent
    return parent, hopped


def predecessor(pose_bone, connected=False, keep=frozenset()):
    """``(bone that ``pose_bone`` follows or None, why not)``.

    Across mechanism bones, or when ``connected`` is asked, the head must be on the tail;
    a plain parent link counts otherwise.
    """
    parent, hopped = posable_ancestor(pose_bone, keep)
    if parent is None:
        return None, f"'{pose_bone.name}' has no parent bone an animator poses"
    if (hopped or connected) and not follows(parent, pose_bone):
        across = f" (across {', '.join(f'{name!r}: {REASONS[reason]}' for name, reason in hopped)})" if hopped else ""
        return None, (f"'{pose_bone.name}' is not connected to '{parent.name}'{across}: its head is "
                      f"{gap(parent, pose_bone):.3g} from that bone's tail")
    return parent, None


def selected_ancestors(pose_bone, selected):
    """Ancestors of ``pose_bone`` whose names are in ``selected``, nearest first."""
    out, parent = [], pose_bone.parent
    while parent is not None:
        if parent.name in selected:
            out.append(parent)
        parent = parent.parent
    return out


def _picked_in_order(tip, selected):
    """The selected bones that continue ``tip``'s chain, nearest first: each the parent an animator
    poses of the one before (mechanism bones skipped), or a selected bone whose tail the one before
    starts on (an ancestor, or one a rig's mechanism makes it follow: Rigify's ``toe.L`` hangs off
    ``ORG-foot.L``, which follows ``foot_fk.L``). A selected bone that is neither (``torso``
    selected with an arm's bones) ends them: it is not part of the limb, and the tools must not
    turn it."""
    bones = tip.id_data.pose.bones
    out, bone, used = [], tip, {tip.name}
    while True:
        parent = posable_ancestor(bone, selected)[0]
        picked = [pb for pb in (parent, *selected_ancestors(bone, selected), *(bones[n] for n in sorted(selected) if n in bones))
                  if pb is not None and pb.name in selected and pb.name not in used]
        nxt = next((pb for pb in picked if follows(pb, bone)), None)   # the bone starts on its tail
        if nxt is None and parent is not None and picked and picked[0] == parent:
            nxt = parent    # (a plain parent link: a bone offset from its parent's tail)
        if nxt is None:
            return out
        out.append(nxt)
        used.add(nxt.name)
        bone = nxt


def logical_chain(tip, count=0, connected=False, selected=()):
    """Root-to-tip bones ending at ``tip``: ``count`` bones (0 = as many as follow each other).

    ``selected``: names of the selected bones. When the selection holds enough ancestors of the
    tip that continue its chain (``count - 1``, or one for an open count; ``_picked_in_order``),
    those are the chain, nearest first: the user picked the bones in order. Otherwise the chain
    follows the rig (:func:`predecessor`).
    Raises :class:`ChainError` when fewer than ``count`` bones follow each other.
    """
    chosen = set(selected)
    picked = _picked_in_order(tip, chosen) if tip.name in chosen else []
    if picked and len(picked) >= max(count - 1, 1):
        bones = [tip] + picked[: count - 1 if count else None]
    else:
        bones, why = [tip], None
        while not count or len(bones) < count:
            prev, why = predecessor(bones[-1], connected)
            if prev is None:
                break
            bones.append(prev)
        if count and len(bones) < count:
            raise ChainError(f"'{tip.name}' has only {counted(len(bones), 'bone')} in its chain, not {count}: {why}")
    for pb in bones[::-1]:
        if pb.length < 1e-6:
            raise ChainError(_zero_length(pb))
    return bones[::-1]


def _zero_length(pose_bone):
    """Why ``pose_bone`` has no length on the pose: its own or an ancestor's scale of zero, else
    its rest length."""
    if pose_bone.bone.length < 1e-6:
        return f"'{pose_bone.name}' has zero length"
    pb = pose_bone
    while pb is not None and min(abs(c) for c in pb.scale) >= 1e-6:
        pb = pb.parent
    if pb is None:
        return f"'{pose_bone.name}' has zero length on the pose"
    if pb == pose_bone:
        return f"'{pose_bone.name}' is scaled to zero"
    return f"'{pose_bone.name}' has zero length on the pose: '{pb.name}' is scaled to zero"


def selected_names(obj):
    return {pb.name for pb in obj.pose.bones if compat.pose_bone_selected(pb)}


def ik_switch_note(pose_bone):
    """For the FK control ``pose_bone`` of a Rigify limb (``upper_arm_fk.L``): when the limb's
    IK/FK switch (the ``IK_FK`` property of ``upper_arm_parent.L``) leaves the mesh following its
    IK controls, a note saying so (a freshly generated rig is in IK); else ``None``."""
    name = pose_bone.name
    if "_fk" not in name:
        return None
    limb = name.replace("_fk", "", 1)
    for pb in pose_bone.id_data.pose.bones:
        if "IK_FK" in pb.keys() and pb.name.replace("_parent", "", 1) == limb:
            try:
                value = float(pb["IK_FK"])
            except (TypeError, ValueError):
                return None
            if value < 1.0:
                import bpy

                return bpy.app.translations.pgettext_rpt(
                    "the mesh follows the limb's IK controls ({bone}'s IK_FK is {value:.2f}): set it to 1 for the FK "
                    "chain to move it").format(bone=pb.name, value=value)
            return None
    return None

