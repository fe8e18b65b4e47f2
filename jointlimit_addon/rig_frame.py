"""The rig's own frame for presets: the character's front and each joint's axes and signs, derived
from the rest geometry instead of assuming that +X is flexion.

The built-in table (``presets_data``) is written for one convention: flexion positive about local
X, abduction positive about local Z on the left side, ranges measured from the anatomical neutral
pose (limbs hanging). Real rigs differ: on Rigify's legs +X swings the thigh backward, rolls put
the bend on Z, arms rest in a T- or A-pose. :func:`fit_entry` rewrites a table entry for one bone:

- the character frame: up = the armature axis the legs run against at rest (two legs or four; a
  Y-up import, Mixamo's, has its data Y-up and its object turned), else +Z;
  front = where the knees bend to and the elbows bend away from (their rest bend), else where the
  feet point (also where they outnumber knees and elbows that say the opposite: a bird's backward
  'knees' are its ankles), else Blender's -Y turned as +Z is to up; an explicit up or front overrides them
  (:func:`character_up`, :func:`character_front`);
- each joint moves its bone toward a body direction when it flexes (``JOINT_RULES``: the thigh
  toward the front, the shin toward the back, the foot up, the hand toward its palm: known from
  where its thumb sits, else down in a T- or A-pose with palms down, as rigs rest, the front when
  it hangs, the back when it stands on the floor (a four-legged rig's forefoot), ...). The rotation axis doing that,
  ``a = d x v`` for the bone direction ``d`` [000 §2: a swing is a rotation about an axis
  perpendicular to the bone], is expressed in the bone's rest frame and snapped to local ±X or ±Z:
  that is where the flexion range goes, negated for a minus sign; abduction (away from the body's
  midline, mirrored on the right side) takes the other axis;
- ball joints whose neutral pose hangs down (shoulder, hip) have their ranges shifted by the rest
  pose's angle from hanging (T-pose: about 90° of abduction), and hinges (elbow, knee, finger
  joints) by the rest bend from the bone they follow (``rest_bend``), so the rest pose is what it
  is on the body and a limb straightens; every fitted range contains the rest pose.
"""

import math
import re

import numpy as np

from .chains import MECHANISM_PREFIXES

UP = np.array([0.0, 0.0, 1.0])
AXES = {"POS_Z": (0.0, 0.0, 1.0), "NEG_Z": (0.0, 0.0, -1.0), "POS_Y": (0.0, 1.0, 0.0), "NEG_Y": (0.0, -1.0, 0.0),
        "POS_X": (1.0, 0.0, 0.0), "NEG_X": (-1.0, 0.0, 0.0)}
FRONTS = {key: AXES[key] for key in ("NEG_Y", "POS_Y", "NEG_X", "POS_X", "NEG_Z", "POS_Z")}
DEFAULT_FRONT = "NEG_Y"     # with up +Z (Blender's convention)

# joint -> (direction the bone moves in flexion, direction of abduction, ranges from hanging down)
JOINT_RULES = {
    "NECK": ("FRONT", "OUT", False),
    "SPINE": ("FRONT", "OUT", False),
    "SHOULDER": ("FRONT", "OUT", True),
    "ELBOW": ("FRONT", "OUT", False),
    "FOREARM_TWIST": ("FRONT", "OUT", False),
    "WRIST": ("PALM", "THUMB", False),
    "HIP": ("FRONT", "OUT", True),
    "KNEE": ("BACK", "OUT", False),
    "ANKLE": ("UP", "OUT", False),
    "TOE": ("DOWN", "OUT", False),
    "CARPUS": ("BACK", "OUT", False),
    "HOCK": ("FRONT", "OUT", False),
    "FINGER_BASE": ("DOWN", "OUT", False),
    "FINGER_MIDDLE": ("DOWN", "OUT", False),
    "FINGER_TIP": ("DOWN", "OUT", False),
}
UP_CONE = 20.0  # degrees: the legs' mean direction this near an armature axis tells up (seated rest poses lean further)
LEG_RE = re.compile(r"thigh|up.?leg|shin|calf|low.?leg|lower.?leg", re.IGNORECASE)     # runs down at rest (also on four legs)
NOT_LEG_RE = re.compile(r"ik|pole|tweak|pivot|target|parent|root", re.IGNORECASE)
KNEE_RE = re.compile(r"shin|calf|lower.?leg|lowleg|knee", re.IGNORECASE)
ELBOW_RE = re.compile(r"fore.?arm|lower.?arm|lowarm|elbow", re.IGNORECASE)
FOOT_RE = re.compile(r"foot|toe", re.IGNORECASE)
NOT_FOOT_RE = re.compile(r"ik|heel|spin|roll|pole|tweak|pivot", re.IGNORECASE)
HANGS = 30.0  # degrees from straight down within which a foot bone hangs (a four-legged rig's metatarsus, 10-17°
#               on Rigify's; a human foot 58°, in high heels about 43°)
FLOOR = 0.05  # of the rig's height: a limb reaching this near the rig's lowest point stands on the floor
LIMIT = 179.0  # degrees, the widest swing range a setting takes
BENT_REST = 5.0  # degrees a hinge bone rests bent about the other axis than its rule's before that axis is taken
BENT_AGAINST = 10.0  # degrees an elbow or knee rests bent against its rule's flexion before it is said to bend the other way
LIMB_HINGES = ("ELBOW", "KNEE")  # the joints a four-legged rig's legs swap (``bent_against``)
REST_ROOM = 1.0  # degrees a fitted swing range reaches past the rest pose on each side (the Axes fit needs room)
_SNAP = 0.2  # below this an axis is degenerate (the bone points along the direction)


def _unit(v):
    n = float(np.linalg.norm(v))
    return None if n < 1e-9 else np.asarray(v, dtype=np.float64) / n


def _horizontal(v, up=UP):
    return np.asarray(v, dtype=np.float64) - np.dot(v, up) * up


def _rest(bone):
    return np.array(bone.head_local), np.array(bone.tail_local)


def _bend_votes(armature, up=UP):
    """Sum of unit front directions from the rest bends of knees (they bend toward the front)
    and elbows (they bend away from it), across ``up``."""
    votes = np.zeros(3)
    for bone in armature.bones:
        if bone.name.startswith(MECHANISM_PREFIXES) or bone.parent is None:
            continue
        sign = 1.0 if KNEE_RE.search(bone.name) else -1.0 if ELBOW_RE.search(bone.name) else 0.0
        if not sign:
            continue
        root, _ = _rest(bone.parent)
        joint, tip = _rest(bone)
        if np.linalg.norm(joint - _rest(bone.parent)[1]) > 0.05 * bone.parent.length:
            continue  # not a limb joint (the bone does not start at its parent's tail)
        axis = _unit(tip - root)
        if axis is None:
            continue
        bend = _unit(_horizontal((joint - root) - np.dot(joint - root, axis) * axis, up))
        if bend is not None and np.linalg.norm((joint - root) - np.dot(joint - root, axis) * axis) > 1e-3 * bone.length:
            votes += sign * bend
    return votes


def _foot_votes(armature, up=UP):
    votes = np.zeros(3)
    for bone in armature.bones:
        if bone.name.startswith(MECHANISM_PREFIXES) or not FOOT_RE.search(bone.name) or NOT_FOOT_RE.search(bone.name):
            continue
        head, tail = _rest(bone)
        d = _unit(_horizontal(tail - head, up))
        if d is not None:
            votes += d
    return votes


def _leg_votes(armature):
    """Sum of unit rest directions of the leg bones (thigh, shin: they run down)."""
    votes = np.zeros(3)
    for bone in armature.bones:
        if bone.name.startswith(MECHANISM_PREFIXES) or NOT_LEG_RE.search(bone.name) or not LEG_RE.search(bone.name):
            continue
        head, tail = _rest(bone)
        d = _unit(tail - head)
        if d is not None:
            votes += d
    return votes


def _nearest_axis(v):
    """The armature axis (a unit vector of ``AXES``) nearest the direction ``v``."""
    i = int(np.argmax(np.abs(v)))
    axis = np.zeros(3)
    axis[i] = math.copysign(1.0, v[i])
    return axis


def character_up(armature, up="AUTO"):
    """``(up unit vector in armature space, where it came from)``: the armature axis nearest the
    way the legs run down at rest (``"LEGS"``: two legs or four; a trunk may run along any axis,
    a fish's or a quadruped's), else +Z (``"DEFAULT"``), or the explicit ``up`` key of ``AXES``."""
    if up in AXES:
        return np.array(AXES[up]), up
    votes = -_leg_votes(armature)
    if np.linalg.norm(votes) > 0.5:
        axis = _nearest_axis(votes)
        if np.dot(axis, votes) >= math.cos(math.radians(UP_CONE)) * np.linalg.norm(votes):
            return axis, "LEGS"
    return UP.copy(), "DEFAULT"     # (no legs, or legs at rest far from any axis: a seated rest pose)


def _default_front(up):
    """Blender's front (-Y with up +Z) turned by the shortest turn from +Z to ``up`` (-Z: half a
    turn about X): a Y-up import's data faces +Z."""
    c = float(np.dot(UP, up))
    if c < -0.5:
        return np.array([0.0, 1.0, 0.0])
    axis = np.cross(UP, up)
    front = np.array(FRONTS[DEFAULT_FRONT])
    # Rodrigues' formula for the turn taking UP to up (unit axis * sin, cos)
    return front * c + np.cross(axis, front) + axis * np.dot(axis, front) / (1.0 + c)


def character_front(armature, front="AUTO", up=UP):
    """``(front unit vector in armature space, where it came from)``: ``"KNEES_ELBOWS"``,
    ``"FEET"``, ``"DEFAULT"`` or the explicit ``front`` key of ``FRONTS``, across ``up``
    (``character_up``). Where the knees and elbows and the feet disagree, the more votes win.
    ``ValueError`` for an explicit front along ``up``."""
    up = np.asarray(up, dtype=np.float64)
    if front in FRONTS:
        if abs(float(np.dot(FRONTS[front], up))) > 0.5:
            raise ValueError(f"the front {front} is the rig's up axis (or its opposite): choose one across it")
        return np.array(FRONTS[front]), front
    bends, feet = _bend_votes(armature, up), _foot_votes(armature, up)
    v_bends, v_feet = _unit(_horizontal(bends, up)), _unit(_horizontal(feet, up))
    if (v_bends is not None and v_feet is not None and float(np.dot(v_bends, v_feet)) < 0.0
            and np.linalg.norm(feet) > max(np.linalg.norm(bends), 0.5)):
        return v_feet, "FEET"   # more toes than knees against them: a bird's backward 'knee' is its ankle
    for v, votes, source in ((v_bends, bends, "KNEES_ELBOWS"), (v_feet, feet, "FEET")):
        if v is not None and np.linalg.norm(votes) > 0.5:
            return v, source
    return _default_front(up), "DEFAULT"


def _neg(rng):
    return None if rng is None else [-rng[1], -rng[0]]


def _signed(rng, sign):
    return None if rng is None else (list(rng) if sign > 0 else _neg(rng))


def _contain_rest(rng, hinge=False):
    """The range clipped to the widest setting and widened to hold 0 (the rest pose); a swing
    range keeps ``REST_ROOM`` on each side of 0, so every fit (Axes included) has a half-axis
    there, while a hinge range may start at the rest pose."""
    room = 0.0 if hinge else REST_ROOM
    lo, hi = max(rng[0], -LIMIT), min(rng[1], LIMIT)
    lo, hi = min(lo, -room), max(hi, room)
    return [round(lo, 6), round(hi, 6)]


THUMB_RE = re.compile(r"thumb", re.IGNORECASE)
INDEX_RE = re.compile(r"index", re.IGNORECASE)
PINKY_RE = re.compile(r"pinky|little", re.IGNORECASE)


def _nearest_finger(bone, pattern, right_side):
    """Head (armature space) of the bone ``pattern`` names on the hand ``bone``'s side nearest the
    hand's head, within two hand lengths (a finger's base), or ``None``."""
    head = np.array(bone.head_local)
    best = None
    for other in bone.id_data.bones:
        if other.name.startswith(MECHANISM_PREFIXES) or not pattern.search(other.name):
            continue
        if _on_other_side(other.name, right_side):
            continue
        at = np.array(other.head_local)
        if np.linalg.norm(at - head) <= 2.0 * bone.length and (best is None or np.linalg.norm(at - head) < np.linalg.norm(best - head)):
            best = at
    return best


def stands_on_floor(bone, up=UP):
    """Whether the limb from ``bone`` down (it and every bone after it) reaches the rig's floor,
    its lowest point along ``up``, within ``FLOOR`` of the rig's height: a four-legged rig's
    forefoot stands on it, a hand hangs above it. Only on a rig with legs (``character_up`` finds
    its up from them): a rig without legs has its hands lowest."""
    if character_up(bone.id_data)[1] != "LEGS":
        return False

    def heights(bones):
        return [float(np.dot(point, up)) for b in bones for point in (b.head_local, b.tail_local)]

    rig = heights(bone.id_data.bones)
    floor, height = min(rig), max(rig) - min(rig)
    return height > 0.0 and min(heights([bone, *bone.children_recursive])) - floor <= FLOOR * height


def four_legged_joint(joint, bone, up=UP):
    """``"CARPUS"`` or ``"HOCK"`` where the human ``joint`` fitted to ``bone`` (armature data)
    stands as a four-legged rig's does: a Wrist on a forefoot whose limb stands on the floor
    (``stands_on_floor``: a hand hangs above it), an Ankle on a foot bone hanging within
    ``HANGS`` of straight down (a metatarsus: a human foot runs forward); else ``None``."""
    if joint == "WRIST":
        return "CARPUS" if stands_on_floor(bone, up) else None
    if joint == "ANKLE":
        d = _unit(np.array(bone.tail_local) - np.array(bone.head_local))
        return "HOCK" if d is not None and float(np.dot(d, -np.asarray(up))) >= math.cos(math.radians(HANGS)) else None
    return None


def thumb_offset(bone, right_side, front=None, up=UP):
    """Toward the radial (thumb) side of the hand ``bone`` (armature data), or ``None``: across
    the knuckles, from the little finger's base to the index finger's (it lies across the palm),
    else from the hand's head to the thumb's base (which also sits toward the palm); without
    those, and with the character's ``front``, medial for a forefoot that stands on the floor
    (``stands_on_floor``): a four-legged rig's forelimb stands pronated, its palm back and its
    thumb (a dog's dewclaw) on the inside."""
    index, pinky = (_nearest_finger(bone, pattern, right_side) for pattern in (INDEX_RE, PINKY_RE))
    if index is not None and pinky is not None:
        return index - pinky
    thumb = _nearest_finger(bone, THUMB_RE, right_side)
    if thumb is not None:
        return thumb - np.array(bone.head_local)
    if front is None or not stands_on_floor(bone, up):
        return None
    return (1.0 if right_side else -1.0) * np.cross(up, front)     # toward the midline


def _on_other_side(name, right_side):
    """Whether a bone's name says it is on the other side than ``right_side`` (a name without a
    side says nothing: the hand's own fingers are the ones nearest it)."""
    from .presets import flip_name, is_right_side     # (presets imports this module)

    return flip_name(name) != name and is_right_side(name) != right_side


def _palm(d, front, up, side=1.0, thumb=None):
    """Where the palm of a hand along ``d`` faces: from where its thumb sits (``thumb``: offset
    from the hand's head, ``thumb_offset``), else down (a T- or A-pose, palms down, as the
    fingers' rule has it), or the front for a hand hanging (the anatomical pose)."""
    if thumb is not None:
        radial = _unit(thumb - np.dot(thumb, d) * d)
        if radial is not None:
            return side * np.cross(d, radial)
    down = -up - np.dot(-up, d) * d
    n = float(np.linalg.norm(down))
    return down / n if n >= _SNAP else front


def _direction(key, front, lateral, up=UP, d=None, side=1.0, thumb=None):
    """The body direction of a rule's ``key`` for a bone along ``d`` on the ``side`` (1 left, -1
    right): the hand's palm, and its thumb side (radial deviation: the lateral side in the
    anatomical pose, the front in a T-pose with palms down)."""
    if key == "PALM":
        return _palm(d, front, up, side, thumb)
    if key == "THUMB":
        return side * np.cross(_palm(d, front, up, side, thumb), d)
    return {"FRONT": front, "BACK": -front, "UP": up, "DOWN": -up, "OUT": lateral}[key]


# joint -> the direction its bone points in the anatomical pose; flexion there turns it toward the
# rule's direction, and a joint flexes the same way round the lateral axis whichever way its bone
# points (a hock's metatarsal hanging a little forward or back, a horizontal spine tilted up or down)
REFERENCE = {"NECK": "UP", "SPINE": "UP", "SHOULDER": "DOWN", "ELBOW": "DOWN", "FOREARM_TWIST": "DOWN",
             "HIP": "DOWN", "KNEE": "DOWN", "ANKLE": "FRONT", "TOE": "FRONT", "CARPUS": "DOWN", "HOCK": "DOWN"}
_OPPOSED = -0.5     # the rule's axis this far against the reference one (cos): the bone points past it


def _flexion_axis(joint, d, v_flex, front, up):
    """The axis ``d x v_flex`` flexion turns the bone about [000 §2], or ``None`` where the bone
    points along ``v_flex`` and the joint has no reference. For joints that flex in the body's
    sagittal plane (``REFERENCE``) its sense is the anatomical pose's: the rule's own axis turns
    round as the bone passes through ``v_flex`` (a cat's hock hanging a little back got the
    wolf's dorsiflexion reversed, a horse's spine segments flexed up or down by their tilt), so
    where it opposes the reference axis, or vanishes, the reference axis is taken. A spine or
    neck bone pointing away from the head (a tail) keeps the rule's axis."""
    a_flex = np.cross(d, v_flex)
    ref_key = REFERENCE.get(joint)
    a_ref = None
    if ref_key is not None and not (joint in ("SPINE", "NECK") and float(np.dot(d, front) + np.dot(d, up)) <= 0.0):
        ref = {"UP": up, "DOWN": -up, "FRONT": front}[ref_key]
        a_ref = np.cross(ref, v_flex)
        a_ref = a_ref / np.linalg.norm(a_ref) if np.linalg.norm(a_ref) > _SNAP else None
    norm = float(np.linalg.norm(a_flex))
    if norm < _SNAP:
        return a_ref
    if a_ref is not None and float(np.dot(a_flex / norm, a_ref)) < _OPPOSED:
        return -a_flex
    return a_flex


def bone_axes(rest_matrix, joint, front, right_side, up=UP, thumb=None):
    """How the table's axes land on a bone: ``(flexion axis "X"/"Z", flexion sign, abduction sign,
    flexion shift°, abduction shift°)``; the shifts are the rest pose's angles from hanging down
    (only for joints whose table ranges start there). ``up``: the character's (``character_up``);
    ``thumb``: a hand's ``thumb_offset``."""
    flex_key, abd_key, from_hanging = JOINT_RULES[joint]
    up = np.asarray(up, dtype=np.float64)
    rot = np.asarray(rest_matrix, dtype=np.float64)[:3, :3]
    d = rot[:, 1]
    side = -1.0 if right_side else 1.0
    lateral = side * np.cross(up, front)  # away from the midline
    v_flex = _direction(flex_key, front, lateral, up, d, side, thumb)
    a_flex = _flexion_axis(joint, d, v_flex, front, up)
    if a_flex is None:
        return "X", 1.0, -1.0 if right_side else 1.0, 0.0, 0.0  # degenerate: the table's axes
    local = rot.T @ a_flex
    flex_axis = "X" if abs(local[0]) >= abs(local[2]) else "Z"
    flex_sign = float(np.sign(local[0] if flex_axis == "X" else local[2]))
    v_abd = _direction(abd_key, front, lateral, up, d, side, thumb)
    if np.linalg.norm(np.cross(d, v_abd)) < _SNAP:
        v_abd = up  # a limb pointing sideways (T-pose) abducts upward
    local_abd = rot.T @ np.cross(d, v_abd)
    comp = local_abd[2] if flex_axis == "X" else local_abd[0]
    abd_sign = float(np.sign(comp)) if abs(comp) > 1e-6 else (-1.0 if right_side else 1.0)
    flex_shift = abd_shift = 0.0
    if from_hanging:  # the rest direction as flexion out of the frontal plane, then abduction in it
        flex_shift = math.degrees(math.asin(float(np.clip(np.dot(d, v_flex), -1.0, 1.0))))
        abd_shift = math.degrees(math.atan2(np.dot(d, lateral), -np.dot(d, up)))
    return flex_axis, flex_sign, abd_sign, flex_shift, abd_shift


def rest_bend(rest_matrix, parent_matrix, flex_axis, flex_sign):
    """The rest pose's flexion of a hinge bone in degrees: the angle about its flexion axis
    (local ``flex_axis`` times ``flex_sign``) from the direction of the bone it follows
    (``parent_matrix``, its rest matrix) to its own; 0 when there is none. A hinge's table range
    counts from the limb straight (an elbow's 0 to 145 of flexion), and rigs rest with the elbows
    and knees a little bent (Rigify's human: about 21° and 10°)."""
    if parent_matrix is None:
        return 0.0
    rot = np.asarray(rest_matrix, dtype=np.float64)[:3, :3]
    d_parent, d = np.asarray(parent_matrix, dtype=np.float64)[:3, 1], rot[:, 1]
    axis = flex_sign * rot[:, 0 if flex_axis == "X" else 2]
    return math.degrees(math.atan2(float(np.dot(axis, np.cross(d_parent, d))), float(np.dot(d_parent, d))))


def _hinge_axis(rest_matrix, parent_matrix, flex_axis, flex_sign, grandparent_matrix=None):
    """A hinge's flexion axis and sign: the rule's (``bone_axes``), unless the bone rests bent
    (more than ``BENT_REST``°) about the other local axis: a rig's own bend is the way the joint
    bends (Rigify's thumb curls about its X, which the fingers' rule, down, does not give). With
    ``grandparent_matrix`` (a finger's last joint, nearly straight at rest) the bend of the joint
    before it counts too: the two curl in one plane."""
    if parent_matrix is None:
        return flex_axis, flex_sign
    rot = np.asarray(rest_matrix, dtype=np.float64)[:3, :3]
    d_parent = np.asarray(parent_matrix, dtype=np.float64)[:3, 1]
    bend = rot.T @ np.cross(d_parent, rot[:, 1])  # |bend| = sin of the bend
    if grandparent_matrix is not None:
        bend = bend + rot.T @ np.cross(np.asarray(grandparent_matrix, dtype=np.float64)[:3, 1], d_parent)
    axis = "X" if abs(bend[0]) >= abs(bend[2]) else "Z"
    component = bend[0 if axis == "X" else 2]
    if axis == flex_axis or np.linalg.norm(bend) < math.sin(math.radians(BENT_REST)):
        return flex_axis, flex_sign
    return axis, float(np.sign(component))


def hinge_bend(rest_matrix, parent_matrix, flex_axis, flex_sign, grandparent_matrix=None):
    """A hinge bone's ``(flexion axis, flexion sign, rest bend°)``: the axis of its rest bend
    (``_hinge_axis``) and the bend about it (``rest_bend``), from the rule's ``flex_axis`` and
    ``flex_sign`` (``bone_axes``)."""
    flex_axis, flex_sign = _hinge_axis(rest_matrix, parent_matrix, flex_axis, flex_sign, grandparent_matrix)
    return flex_axis, flex_sign, rest_bend(rest_matrix, parent_matrix, flex_axis, flex_sign)


def bent_against(joint, rest_matrix, parent_matrix, front, right_side, up=UP):
    """Degrees an elbow or knee bone (``joint``) rests bent against the flexion ``fit_entry``
    gives it (the same ``bone_axes`` and ``hinge_bend``), when more than ``BENT_AGAINST``; else
    0. A four-legged rig's front legs bend like arms (Rigify's horse, cat, wolf: a Knee fitted
    there rests 18-31 degrees against its flexion), its hind legs like legs; human rigs rest with
    both a little bent their own way."""
    if joint not in LIMB_HINGES or parent_matrix is None:
        return 0.0
    bend = hinge_bend(rest_matrix, parent_matrix, *bone_axes(rest_matrix, joint, front, right_side, up)[:2])[2]
    return -bend if bend < -BENT_AGAINST else 0.0


def fit_entry(entry, joint, rest_matrix, front, right_side, parent_matrix=None, grandparent_matrix=None, up=UP,
              thumb=None):
    """The table entry of ``joint`` (LEFT side, SPEC convention) fitted to one bone's rest frame:
    ranges on the local axes that flex and abduct this bone, signs from the rig's geometry, the
    right side mirrored by geometry (twist ranges negated), every range holding the rest pose; a
    hinge's range shifted by the rest bend from the bone it follows (``parent_matrix``, its rest
    matrix; ``rest_bend``), so that the limb straightens, and bending about the axis of its rest
    bend (``_hinge_axis``; a finger's last joint with the one before, ``grandparent_matrix``).
    Joints without a rule are returned unchanged. ``up``: the character's (``character_up``);
    ``thumb``: a hand's ``thumb_offset``."""
    if joint not in JOINT_RULES:
        return dict(entry)
    flex_axis, s_f, s_a, shift_f, shift_a = bone_axes(rest_matrix, joint, front, right_side, up, thumb)
    bend = 0.0
    if entry.get("kind") == "HINGE" and parent_matrix is not None:
        flex_axis, s_f, bend = hinge_bend(rest_matrix, parent_matrix, flex_axis, s_f,
                                          grandparent_matrix if joint == "FINGER_TIP" else None)
    out = dict(entry)
    flex, abd = entry.get("swing_x"), entry.get("swing_z")
    if flex is not None:
        flex = _contain_rest([flex[0] - shift_f, flex[1] - shift_f])
    if abd is not None:
        abd = _contain_rest([abd[0] - shift_a, abd[1] - shift_a])
    flex, abd = _signed(flex, s_f), _signed(abd, s_a)
    out.pop("swing_x", None)
    out.pop("swing_z", None)
    x_range, z_range = (flex, abd) if flex_axis == "X" else (abd, flex)
    if x_range is not None:
        out["swing_x"] = x_range
    if z_range is not None:
        out["swing_z"] = z_range
    if entry.get("kind") == "HINGE":
        out["hinge_axis"] = flex_axis
        out["hinge"] = _contain_rest(_signed([entry["hinge"][0] - bend, entry["hinge"][1] - bend], s_f), hinge=True)
    if "outline" in entry:
        det = s_f * s_a * (1.0 if flex_axis == "X" else -1.0)
        points = []
        for z, x, bulge in entry["outline"]:
            fx, az = s_f * (x - shift_f), s_a * (z - shift_a)
            points.append([az, fx, bulge * det] if flex_axis == "X" else [fx, az, bulge * det])
        out["outline"] = points
    if right_side and entry.get("twist") is not None:
        out["twist"] = _neg(entry["twist"])
    return out
