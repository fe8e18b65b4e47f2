"""Joint-limit presets: the built-in table (``presets_data``), user presets as JSON, and applying
them to pose bones with the side mirrored.

A preset entry is a dict of settings with angles in degrees (see ``FIELDS``), written for the LEFT
side. Applying it to a right-side bone (``flip_name`` changes the name, and where the two names
differ the bone's reads R: ``.R``, ``_R``, ``Right``) mirrors it with the rules of ``settings_io.mirror_settings``: Z and
twist ranges negated and swapped (also a hinge about Z, the Euler Y and Z ranges, polygon s and
bulge); an AXES fit follows the mirrored ranges. An entry without ``fit`` (presets saved before
the choice existed) means the paper's INSCRIBED fit.

Chain presets split the selected bones into parent-child chains and give each chain's bones the
listed joints from the root down, so selecting both arms and choosing *Arm* sets shoulder, elbow
and wrist on both sides in one go.

User presets live in ``extension_path_user(<add-on>, path="presets")`` as ``<name>.json``:
``{"format": "jointlimit-preset", "version": 1, "name": ..., "joint": {entry}}``.
"""

import json
import math
import pathlib
import re

import bpy
import numpy as np

from . import rig_frame, settings_io
from .chains import predecessor
from .presets_data import CHAINS, JOINTS

ADDON_PACKAGE = __package__
FORMAT = "jointlimit-preset"
VERSION = 1
MAX_NAME = 64
NAME_RE = re.compile(r"^[\w][\w \-().]*$")  # letters of any script, digits, _ - ( ) . and spaces

KINDS = ("SWING_TWIST", "HINGE", "EULER", "EULER_MULTI", "QUAT_SWING")
SHAPES = ("RECT", "ELLIPSE", "OVAL", "SUPERELLIPSE", "POLYGON")
CORRECTIONS = ("OPTIMAL", "SIMPLE")
FITS = ("INSCRIBED", "AXES")
EULER_ORDERS = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")
# field -> kind of value: "range" (lo, hi) degrees, "range3" [3] degrees, "angle" degrees,
# "twist" range or null, "bool", "enum" (allowed values), "exponent", "outline"
FIELDS = {
    "kind": KINDS, "shape": SHAPES, "correction": CORRECTIONS, "fit": FITS, "hinge_axis": ("X", "Z"), "euler_order": EULER_ORDERS,
    "swing_x": "range", "swing_z": "range", "hinge": "range", "twist": "twist", "fix_twist": "bool",
    "euler_min": "range3", "euler_max": "range3", "quat_swing_max": "angle", "exponent": "exponent",
    "outline": "outline",
}


class PresetError(ValueError):
    """A ``ValueError`` whose message is a translatable template plus values."""

    def __init__(self, template, **values):
        self.template = template
        self.values = values
        super().__init__(template.format(**values))

    def translated(self):
        return bpy.app.translations.pgettext_rpt(self.template).format(**self.values)


# --- names and sides ------------------------------------------------------------------------------


def check_name(name):
    """The preset name stripped, or ``PresetError`` saying why it cannot be a file name."""
    name = (name or "").strip()
    if not name:
        raise PresetError("The preset name is empty")
    if len(name) > MAX_NAME:
        raise PresetError("The preset name is longer than {limit} characters", limit=MAX_NAME)
    if not NAME_RE.match(name):
        raise PresetError("Invalid preset name '{name}': use letters, digits, spaces and _ - ( ) . only",
                          name=name)
    return name


def flip_name(name):
    """The name of the bone on the other side (``bpy.utils.flip_name``), also after a namespace
    prefix, which Blender's rule does not look past (Mixamo's ``mixamorig:RightArm``); the name
    itself when it has no side."""
    flipped = bpy.utils.flip_name(name)
    if flipped == name and ":" in name:
        prefix, _, rest = name.rpartition(":")
        other = bpy.utils.flip_name(rest)
        if other != rest:
            return f"{prefix}:{other}"
    return flipped


def is_right_side(name):
    """Whether a bone name is the right-side one of a mirrored pair (``.R``, ``_R``, ``Right``...):
    where it differs from its mirror's name, it reads R or r (so ``Bright.R`` is right, ``Bright.L``
    left)."""
    flipped = flip_name(name)
    if flipped == name:
        return False
    at = next((i for i, (a, b) in enumerate(zip(name, flipped)) if a != b), None)
    return at is not None and name[at] in "Rr"


# --- entries --------------------------------------------------------------------------------------


def _numbers(value, count, field):
    if not isinstance(value, (list, tuple)) or len(value) != count:
        raise PresetError("Field '{field}' must be a list of {count} numbers", field=field, count=count)
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise PresetError("Field '{field}' must be a list of {count} numbers", field=field, count=count)
        out.append(float(v))
    return out


def validate_entry(entry):
    """A checked copy of a preset entry; ``PresetError`` naming the first bad field."""
    if not isinstance(entry, dict):
        raise PresetError("A preset must be a JSON object of settings")
    if entry.get("kind") not in KINDS:
        raise PresetError("Field 'kind' must be one of {allowed}", allowed=", ".join(KINDS))
    out = {}
    for field, value in entry.items():
        spec = FIELDS.get(field)
        if spec is None:
            raise PresetError("Unknown preset field '{field}'", field=field)
        if isinstance(spec, tuple):
            if value not in spec:
                raise PresetError("Field '{field}' must be one of {allowed}", field=field, allowed=", ".join(spec))
        elif spec in ("range", "twist"):
            if value is None and spec == "twist":
                out[field] = None
                continue
            lo, hi = _numbers(value, 2, field)
            bound = 180.0 if field in ("twist", "hinge") else 179.0
            if not (-bound <= lo < hi <= bound or (spec == "twist" and -bound <= lo <= hi <= bound)):
                raise PresetError("Field '{field}' must have -{bound} <= min < max <= {bound} degrees",
                                  field=field, bound=int(bound))
            value = [lo, hi]
        elif spec == "range3":
            value = _numbers(value, 3, field)
            if any(abs(v) > 180.0 for v in value):
                raise PresetError("Field '{field}' must lie within -180 and 180 degrees", field=field)
        elif spec == "angle":
            (value,) = _numbers([value], 1, field)
            if not 0.0 <= value <= 179.0:
                raise PresetError("Field '{field}' must lie within 0 and 179 degrees", field=field)
        elif spec == "bool":
            if not isinstance(value, bool):
                raise PresetError("Field '{field}' must be true or false", field=field)
        elif spec == "exponent":
            value = _numbers(value, 2, field)
            if any(not 1.0 <= v <= 64.0 for v in value):
                raise PresetError("Field '{field}' must lie within 1 and 64", field=field)
        elif spec == "outline":
            if not isinstance(value, (list, tuple)):
                raise PresetError("Field '{field}' must be a list of [swing z, swing x, bulge] vertices", field=field)
            value = [_numbers(p, 3, field) for p in value]
            if any(abs(z) > 179.0 or abs(x) > 179.0 or abs(bulge) > 10.0 for z, x, bulge in value):
                raise PresetError("Field '{field}' must have swing angles within -179 and 179 degrees and bulges "
                                  "within -10 and 10", field=field)
        out[field] = value
    if "euler_min" in out and "euler_max" in out and any(a >= b for a, b in zip(out["euler_min"], out["euler_max"])):
        raise PresetError("Each value of 'euler_min' must be below the one of 'euler_max'")
    return out


def _neg_range(rng):
    return None if rng is None else [-rng[1], -rng[0]]


def mirror_entry(entry):
    """The entry for the other side, with the rules of ``settings_io.mirror_settings``."""
    out = dict(entry)
    for field in ("swing_z", "twist"):
        if field in out:
            out[field] = _neg_range(out[field])
    if out.get("hinge_axis") == "Z" and "hinge" in out:
        out["hinge"] = _neg_range(out["hinge"])
    if "euler_min" in out and "euler_max" in out:
        lo, hi = out["euler_min"], out["euler_max"]
        out["euler_min"], out["euler_max"] = [lo[0], -hi[1], -hi[2]], [hi[0], -lo[1], -lo[2]]
    if "outline" in out:
        out["outline"] = [[-z, x, -b] for z, x, b in out["outline"]]
    return out


def flip_flexion(entry):
    """The entry with the bend about local X reversed (for rigs whose X axis points the other way)."""
    out = dict(entry)
    if "swing_x" in out:
        out["swing_x"] = _neg_range(out["swing_x"])
    if out.get("hinge_axis", "X") == "X" and "hinge" in out:
        out["hinge"] = _neg_range(out["hinge"])
    if "euler_min" in out and "euler_max" in out:
        lo, hi = out["euler_min"], out["euler_max"]
        out["euler_min"], out["euler_max"] = [-hi[0], lo[1], lo[2]], [-lo[0], hi[1], hi[2]]
    if "outline" in out:
        out["outline"] = [[z, -x, -b] for z, x, b in out["outline"]]
    return out


def _set_range(settings, field, rng):
    lo, hi = (math.radians(v) for v in rng)
    setattr(settings, f"{field}_min", lo)
    setattr(settings, f"{field}_max", hi)


def write_entry(settings, entry):
    """Enable the limit and set the entry's fields (degrees) on ``PoseBone.jointlimit``."""
    entry = validate_entry(entry)
    settings.enabled = True
    settings.kind = entry["kind"]
    for field in ("shape", "correction", "hinge_axis", "euler_order", "fix_twist"):
        if field in entry:
            setattr(settings, field, entry[field])
    if entry["kind"] == "SWING_TWIST":
        settings.fit = entry.get("fit", "INSCRIBED")   # presets saved before the fit existed
    for field in ("swing_x", "swing_z", "hinge"):
        if field in entry:
            _set_range(settings, field, entry[field])
    if entry["kind"] in ("SWING_TWIST", "QUAT_SWING"):
        twist = entry.get("twist")
        settings.use_twist_limit = twist is not None
        if twist is not None:
            _set_range(settings, "twist", twist)
        if "fix_twist" not in entry:
            settings.fix_twist = False
    for field in ("euler_min", "euler_max"):
        if field in entry:
            setattr(settings, field, [math.radians(v) for v in entry[field]])
    if "quat_swing_max" in entry:
        settings.quat_swing_max = math.radians(entry["quat_swing_max"])
    if "exponent" in entry:
        settings.exponent = entry["exponent"]
    if "outline" in entry:
        settings_io.set_outline(settings, [(math.radians(z), math.radians(x), bulge) for z, x, bulge in entry["outline"]])
        settings.outline_index = 0


def _deg(angle):
    """Degrees of a stored angle, to 1e-4° (a float32 angle typed as -40° reads -39.9999993°)."""
    return round(math.degrees(angle), 4) + 0.0     # (+ 0.0: no -0.0)


def _deg_pair(lo, hi):
    return [_deg(lo), _deg(hi)]


def entry_from_settings(settings):
    """The settings of ``PoseBone.jointlimit`` that its kind and shape use, as a preset entry
    (degrees): a range left over from another kind (an inverted Swing X on a Hinge bone) is
    neither saved nor checked."""
    every = {
        "kind": settings.kind,
        "shape": settings.shape,
        "correction": settings.correction,
        "fit": settings.fit,
        "swing_x": _deg_pair(settings.swing_x_min, settings.swing_x_max),
        "swing_z": _deg_pair(settings.swing_z_min, settings.swing_z_max),
        "twist": _deg_pair(settings.twist_min, settings.twist_max) if settings.use_twist_limit else None,
        "fix_twist": settings.fix_twist,
        "hinge_axis": settings.hinge_axis,
        "hinge": _deg_pair(settings.hinge_min, settings.hinge_max),
        "euler_order": settings.euler_order,
        "euler_min": [_deg(v) for v in settings.euler_min],
        "euler_max": [_deg(v) for v in settings.euler_max],
        "quat_swing_max": _deg(settings.quat_swing_max),
        "exponent": list(settings.exponent),
        "outline": [[_deg(p.swing_z), _deg(p.swing_x), round(p.bulge, 6) + 0.0]
                    for p in settings.outline],
    }
    return {field: every[field] for field in _used_fields(settings)}


def _used_fields(settings):
    """The entry fields ``bone_limits.build_limit`` reads for the settings' kind and shape."""
    kind = settings.kind
    if kind == "SWING_TWIST":
        fields = ["kind", "shape", "correction", "fit", "twist", "fix_twist"]
        fields += ["outline"] if settings.shape == "POLYGON" else ["swing_x", "swing_z"]
        return fields + (["exponent"] if settings.shape == "SUPERELLIPSE" else [])
    if kind == "HINGE":
        return ["kind", "hinge_axis", "hinge"]
    if kind == "QUAT_SWING":
        return ["kind", "quat_swing_max", "twist"]
    return ["kind", "euler_order", "euler_min", "euler_max"]


def builtin_entry(key):
    joint = JOINTS.get(key)
    if joint is None:
        raise PresetError("Unknown joint preset '{key}'", key=key)
    return {k: v for k, v in joint.items() if k not in ("label", "description")}


def bone_on_right(pose_bone, front=None, up=rig_frame.UP):
    """Whether ``pose_bone`` is on the character's right: as its name says (``is_right_side``), or
    for a name without a side (MMD's ``右腕``) where it sits, its middle on the right of the rig's
    midplane (halfway across its bones) by more than a quarter of its length (the character's
    ``front`` and ``up``, armature space; Blender's convention without them: facing -Y, its left
    on +X)."""
    name = pose_bone.name
    if flip_name(name) != name:
        return is_right_side(name)
    bone = pose_bone.bone
    left = np.cross(up, front) if front is not None else np.array((1.0, 0.0, 0.0))
    ends = np.array([(b.head_local, b.tail_local) for b in bone.id_data.bones]).reshape(-1, 3) @ left
    midplane = 0.5 * (ends.min() + ends.max())     # (the rig's bones need not lie about its origin)
    middle = 0.5 * (np.array(bone.head_local) + np.array(bone.tail_local))
    return float(np.dot(middle, left)) - midplane < -0.25 * bone.length


def apply_entry(pose_bone, entry, mirror_right=True, flip_x=False, joint=None, front=None, up=rig_frame.UP):
    """Write a LEFT-side entry to a bone, mirrored when it is on the right (``bone_on_right``);
    returns whether it was mirrored. With a built-in ``joint`` key and the character's ``front``
    and ``up`` (armature space), the entry is first fitted to the bone's rest frame
    (``rig_frame.fit_entry``: axes, signs and the right side from the rig's geometry)."""
    right = bone_on_right(pose_bone, front, up)
    mirrored = mirror_right and right
    if flip_x:
        entry = flip_flexion(entry)
    if joint is not None and front is not None:
        thumb = rig_frame.thumb_offset(pose_bone.bone, right, front, up) if joint == "WRIST" else None
        entry = rig_frame.fit_entry(entry, joint, pose_bone.bone.matrix_local, front, mirrored,
                                    *_followed(pose_bone), up=up, thumb=thumb)
    elif mirrored:
        entry = mirror_entry(entry)
    write_entry(pose_bone.jointlimit, entry)
    return mirrored


def four_legged_joint(pose_bone, joint, up=rig_frame.UP):
    """``rig_frame.four_legged_joint`` of a pose bone: the four-legged joint its rig's geometry
    says the human ``joint`` stands for, or ``None``."""
    return rig_frame.four_legged_joint(joint, pose_bone.bone, up)


def _followed(pose_bone):
    """The rest matrices of the bones ``pose_bone`` follows in its chain (``predecessor``: rig
    mechanism in between skipped), its parent's and grandparent's, each ``None`` where there is none."""
    parent = predecessor(pose_bone)[0]
    grandparent = None if parent is None else predecessor(parent)[0]
    return tuple(None if pb is None else pb.bone.matrix_local for pb in (parent, grandparent))


def bent_against(pose_bone, joint, mirror_right=True, front=None, up=rig_frame.UP):
    """Degrees ``pose_bone`` rests bent against the flexion of the built-in elbow or knee
    ``joint`` as ``apply_entry`` fits it there (``rig_frame.bent_against``), or 0 (other joints
    are not looked at: no side or chain read for them)."""
    if front is None or joint not in rig_frame.LIMB_HINGES:
        return 0.0
    right = mirror_right and bone_on_right(pose_bone, front, up)
    return rig_frame.bent_against(joint, pose_bone.bone.matrix_local, _followed(pose_bone)[0], front, right, up)


# --- chains ---------------------------------------------------------------------------------------


def split_chains(pose_bones):
    """The bones as logical chains (``chains.predecessor``: mechanism bones in between are
    skipped), each from its root down; ``PresetError`` when a selected
    bone has two selected children (a branch: select one limb or finger per chain)."""
    chosen = {pb.name: pb for pb in pose_bones}
    previous = {pb.name: predecessor(pb, keep=chosen)[0] for pb in pose_bones}
    children = {}
    for pb in pose_bones:
        parent = previous[pb.name]
        if parent is not None and parent.name in chosen:
            children.setdefault(parent.name, []).append(pb)
    for name, kids in children.items():
        if len(kids) > 1:
            raise PresetError("Bone '{name}' has several selected children: select separate chains",
                              name=name)
    chains = []
    for pb in pose_bones:
        if previous[pb.name] is not None and previous[pb.name].name in chosen:
            continue
        chain = [pb]
        while chain[-1].name in children:
            chain.append(children[chain[-1].name][0])
        chains.append(chain)
    return sorted(chains, key=lambda c: c[0].name)


# Bone names that say which joint a bone is (for chains that are not the preset's full length).
JOINT_NAMES = {
    "SHOULDER": r"upper.?arm|uparm|humerus|^arm|front.?thigh",
    "ELBOW": r"fore.?arm|lower.?arm|lowarm|elbow|front.?shin",
    "FOREARM_TWIST": r"twist",
    "WRIST": r"hand|wrist",
    "HIP": r"thigh|upper.?leg|upleg|femur",
    "KNEE": r"shin|calf|lower.?leg|lowleg|knee",
    "ANKLE": r"foot|ankle",
    "CARPUS": r"carpus|fore.?foot|front.?foot|hand",
    "HOCK": r"hock|tarsus|foot",
    "TOE": r"toe",
    "SPINE": r"spine|chest|torso|hips|pelvis|waist",
    "NECK": r"neck",
}


def recognised_joints(name):
    """The joint keys a bone's name points to (empty when it says nothing)."""
    return {key for key, pattern in JOINT_NAMES.items() if re.search(pattern, name, re.IGNORECASE)}


def _names_say_shifted(names, joints):
    """Whether the joints the bone ``names`` point to (``recognised_joints`` of each) fit the
    preset's ``joints`` better shifted by some bones than in order: more named bones at a joint
    their name says (``shoulder, upper_arm, forearm`` for *Arm*: two at one bone further on, none
    in order). Equal counts keep the order (the meta-rig's ``spine.004`` neck, Mixamo's
    ``LeftHandIndex1``: names that say nothing better elsewhere)."""
    def fits(shift):
        return sum(0 <= i + shift < len(joints) and joints[i + shift] in n for i, n in enumerate(names))

    in_order = fits(0)
    return any(fits(shift) > in_order for shift in range(1 - len(joints), len(joints)) if shift)


def _match_chain(chain, joints):
    """The joints for a chain: all of them in order when the counts agree, unless the bones' names
    fit the joints better shifted (``_names_say_shifted``: ``shoulder, upper_arm, forearm`` is not
    an arm from the collarbone on); for a shorter chain the one window of consecutive joints its
    bone names point to; ``None`` when nothing fits."""
    if len(chain) > len(joints):
        return None
    names = [recognised_joints(pb.name) for pb in chain]
    if len(chain) == len(joints):
        return list(joints) if not _names_say_shifted(names, joints) else None
    windows = [joints[i:i + len(chain)] for i in range(len(joints) - len(chain) + 1)]
    fits = [w for w in windows if all(j in n for j, n in zip(w, names))]
    return list(fits[0]) if fits and all(list(f) == list(fits[0]) for f in fits) else None


def chain_plan(pose_bones, chain_key):
    """``[(pose bone, joint key)]`` for a chain preset applied to the selected bones. A chain gets
    the preset's joints in order when it has as many bones and their names do not fit them better
    shifted; a shorter one only when its bone names say which joints they are (``thigh, shin, foot`` of
    *Leg*); anything else is refused, never shifted."""
    chain_preset = CHAINS.get(chain_key)
    if chain_preset is None:
        raise PresetError("Unknown chain preset '{key}'", key=chain_key)
    joints = tuple(chain_preset["joints"])
    plan = []
    for chain in split_chains(pose_bones):
        if len(chain) > len(joints):
            raise PresetError("The chain from '{root}' has {count} bones; '{preset}' sets at most {most}",
                              root=chain[0].name, count=len(chain), preset=chain_preset["label"], most=len(joints))
        matched = _match_chain(chain, joints)
        if matched is None:
            raise PresetError("The chain from '{root}' ({bones}) does not match '{preset}': select its {most} bones "
                              "in a chain, or bones whose names say which joints they are",
                              root=chain[0].name, bones=", ".join(pb.name for pb in chain),
                              preset=chain_preset["label"], most=len(joints))
        plan.extend(zip(chain, matched))
    return plan


# --- user presets ---------------------------------------------------------------------------------


def user_dir(create=False):
    return pathlib.Path(bpy.utils.extension_path_user(ADDON_PACKAGE, path="presets", create=create))


def user_preset_names():
    """Names of the saved user presets, sorted (none when the folder does not exist yet)."""
    try:
        folder = user_dir(create=False)
    except ValueError:  # not running as an installed extension
        return []
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.json"))


def save_user_preset(name, entry):
    """Write ``entry`` as the user preset ``name``; returns the file path."""
    name = check_name(name)
    entry = validate_entry(entry)
    path = user_dir(create=True) / f"{name}.json"
    data = {"format": FORMAT, "version": VERSION, "name": name, "joint": entry}
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def load_user_preset(name):
    """The checked entry of a saved user preset; ``PresetError`` for a missing file, bad JSON or
    bad settings, naming the preset."""
    name = check_name(name)
    path = user_dir(create=False) / f"{name}.json"
    if not path.is_file():
        raise PresetError("No user preset named '{name}'", name=name)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise PresetError("Preset '{name}' is not UTF-8 text", name=name) from None
    except json.JSONDecodeError as exc:
        raise PresetError("Preset '{name}' is not valid JSON: {error} (line {line}, column {column})",
                          name=name, error=exc.msg, line=exc.lineno, column=exc.colno) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or "joint" not in data:
        raise PresetError("Preset '{name}' is not a JointLimit preset (expected \"format\": \"{format}\" "
                          "and a \"joint\" object)", name=name, format=FORMAT)
    try:
        return validate_entry(data["joint"])
    except PresetError as exc:
        raise PresetError("Preset '{name}': {problem}", name=name, problem=exc.translated()) from None


# --- menu -----------------------------------------------------------------------------------------

APPLY_OP = "pose.jointlimit_preset_apply"


def preset_label(key):
    """The menu label and tooltip of a preset key (``JOINT:NECK``, ``CHAIN:ARM``, ``USER:name``)."""
    group, _, ident = key.partition(":")
    table = {"JOINT": JOINTS, "CHAIN": CHAINS}.get(group, {})
    if ident in table:
        return table[ident]["label"], table[ident]["description"]
    return ident, "A preset you saved (applied to every selected bone)"


def draw_menu(layout):
    """The preset menu: joints, chains, user presets and *Save Preset*."""
    layout.label(text="Joints")
    for key, joint in JOINTS.items():
        layout.operator(APPLY_OP, text=joint["label"]).preset = f"JOINT:{key}"
    layout.separator()
    layout.label(text="Chains")
    for key, chain in CHAINS.items():
        layout.operator(APPLY_OP, text=chain["label"]).preset = f"CHAIN:{key}"
    names = user_preset_names()
    if names:
        layout.separator()
        layout.label(text="User Presets")
        for name in names:
            layout.operator(APPLY_OP, text=name, translate=False).preset = f"USER:{name}"
    layout.separator()
    layout.operator("pose.jointlimit_preset_save", icon="ADD")
