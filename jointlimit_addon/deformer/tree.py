"""The geometry-nodes tree of the two-bone deformer (LBS / SBS / SDEF = SBS+ / Bezier) [002].

Placed after the mesh's Armature modifier, it recomputes the two-bone vertices and leaves every
other vertex as the Armature modifier made it (``Set Position`` with a selection).

Bone matrices reach the tree without Python: the *bone-frames* helper mesh has four points per
bone (head, head + unit local X, head - unit local Y (behind the head: a B-Bone's first segment
deforms it, as the others), head + unit local Z, of the rest frame, mesh space), each weighted 100 % to
its bone and deformed by an Armature modifier with the same armature, so its points move by the
skinning matrix ``M`` exactly; one more point per bone pair follows them (in no group, so the
Armature modifier leaves it). On the helper the tree rebuilds, per bone:

* ``M = F' F^-1``: ``F'`` from the deformed points (Combine Matrix), ``F^-1`` stored on the
  helper (``jl_rest_inv``);
* the rotation ``R = Rot(F') Rot(F)^-1``, ``Rot(F)^-1`` stored (``jl_rest_rot_inv``) and
  ``Rot(F')`` the polar rotation of the deformed axes, so that ``R`` is the polar rotation of
  ``M`` (``Rot(F)`` is orthogonal), as the core's SVD gives it: while every bone's deformed axes
  are orthogonal (uniform scale, or a bone's own per-axis scale), by *Axes to Rotation* from the
  deformed Y axis and ``Y x Z``; when some bone is sheared (turned under a parent's per-axis
  scale), by Newton steps on the columns (``_frame_rotation``). A mirrored bone keeps its
  reflection on its own X axis in ``S``, as the core does with its ``mirror_axes``;
* the stretch ``S = R^T M`` (its translation is ignored by Transform Direction), and the
  bone's scale ``sigma = |M Y|``, and ``shift = M h - sigma R h`` (``h`` the rest head, stored as
  ``jl_rest_head``). When
  every bone's stretch is ``sigma I`` to ``UNIFORM_TOL`` (its deformed X and Z axes are
  ``sigma Rot(F') e_x``, ``sigma Rot(F') e_z``: no non-uniform scale, shear or mirror anywhere; a
  single value from Attribute Statistic), the vertices take ``M p = sigma R p + shift`` and
  ``(t sigma0 + u sigma1) d`` instead of 4x4 matrices and ``(t S0 + u S1) d``; when every
  ``sigma`` is 1 too (no scale at all, the usual case), ``M p = R p + shift`` and ``d``. The
  Switches are single values, so the samples and transforms of the paths not taken are not
  evaluated. Each group of per-bone values (``M``; ``R``, ``sigma``, ``shift`` and the stretch
  checks; ``S``) is computed once per update by its own Capture Attribute, which the vertices
  then sample; a path evaluates only the groups it uses (LBS just ``M``, the rigid path just
  the second group). The per-pair rotation vector is captured after ``R``, sampling the
  captured ``R`` (a sample of an uncaptured field would evaluate its whole chain again).

Per vertex it samples those per-bone values at ``jl_def_i0`` / ``jl_def_i1`` (4 x bone index)
and evaluates LBS or one skinning field shared by SBS, SDEF and Bezier (their inputs ``wa``,
``a``, ``wx``, ``x`` and the rest centre picked by single-value Switches on the ``Mode`` input:
0 LBS, 1 SBS, 2 SDEF, 3 BEZIER; clamped), so only the chosen mode is computed:

* LBS: ``t M0 v + u M1 v`` [002 eq.3];
* SBS / SDEF: ``t M0 (C + k u dr) + u M1 (C - k t dr) + Q (t S0 + u S1) (v - C)`` with
  ``dr = R0 - R1``, ``k = 0`` for SBS and ``1 - s`` for SDEF [002 eq.14, 17-22];
* BEZIER: ``t² M0 r''_0 + 2tu M0 b + u² M1 r''_1`` around the rest centre
  ``t² r''_0 + 2tu b + u² r''_1`` (``r''_0 = C + u dr``, ``r''_1 = C - t dr``, ``b`` the rest
  joint) [002 eq.24-26]. As ``M0`` is affine, the first two terms are ``(1 - u²) M0 A0`` with
  ``A0 = (t r''_0 + 2u b) / (1 + u)``: the centre is a two-point blend like SDEF's, and the
  static ``A0``, ``u²`` and the offset ``v - rest centre`` are stored per vertex;

all of the form ``wa M0 a + wx M1 x + Q (t S0 + u S1) d``; with no scaled bone (the usual case)
it is evaluated as ``R0 (wa a + Rot(n, u phi) d) + wa shift0 + wx (R1 x + shift1)`` (three
rotations of vectors, no quaternion product per vertex);
with ``Q = slerp(R0, R1, u) = R0 Rot(n, u phi)`` [002 eq.6], ``u = 1 - t``, where the axis ``n``
and angle ``phi`` (shorter arc) of ``R0^-1 R1`` are computed once per bone pair on the helper's
pair points and sampled at ``jl_def_pair`` as one rotation vector ``phi n`` (the Mix node's
rotation mode and inverse trigonometry per vertex cost several times more). In LBS mode the
geometry passes through untouched (the Armature modifier's result is LBS) unless the helper's ``jl_lbs_through`` is off
(some vertex uses the two strongest of three or more groups); then the tree computes it. The static
products ``u dr``, ``t dr``, ``C`` and the Bezier rest centre are stored per vertex by the add
operator. ``v`` is ``jl_def_pre``: the position the vertex had when it reached the Armature
modifier (shape keys and earlier deforming modifiers applied), stored by the small *input* tree
(``build_input``) in a modifier right before the Armature modifier; attributes travel through
it. So a morph moves the vertex before skinning and its offset ``v - C`` turns with the blend,
as in MMD; LBS is the Armature modifier's own result.

When the helper's ``jl_skip`` is on, the Armature modifier itself skips the two-bone vertices
(they are in the vertex group ``SKIP_GROUP``, its inverted mask, as mmd_tools masks its SDEF
vertices): each vertex is then deformed once, the two-bone ones reach the tree where the Armature
modifier received them, and ``v`` is simply their position (no input stage); LBS is computed
here too.

The modifier's node group (``TREE_NAME``) only wraps the *core* group (``CORE_NAME``) that holds
all of the above: Blender logs every socket value of a modifier's own tree on each evaluation
(for the modifier panel), but those of a nested group only while a node editor shows it, which
saves a large part of the per-update cost of a small mesh.
"""

import math

import bpy

TREE_NAME = "JointLimit Two-Bone Deformer"
TREE_TAG = "jointlimit_deformer"  # ID property on the node group: its layout version
TREE_VERSION = 13  # 6: per-pair slerp angles on the helper, LBS passes through, mirrored bones;
#                   7: the pair's angle and axis as one rotation vector (one sample per vertex);
#                   8: the pair's rotation vector from the captured R (no second evaluation of R),
#                      R0 (wa a + Rot(n, u phi) d) + ... (no quaternion product per vertex), one
#                      skinning field for SBS, SDEF and Bezier (their inputs switched);
#                   9: a wrapper around the core group (no socket logging), the helper's axes by
#                      Sample Index, the Armature modifier may skip the two-bone vertices (jl_skip);
#                  10: each bone's rotation its polar factor (Newton steps), also when sheared;
#                  11: a zero scale on one axis completed by the cross product, on every axis the rest rotation
#                  12: Blend clamped to [0, 1] (a script or driver may set it outside)
#                  13: the helper's Y point behind the head (a B-Bone's first segment deforms it)
CORE_NAME = "JointLimit Two-Bone Deformer Core"
CORE_TAG = "jointlimit_deformer_core"  # its layout version (TREE_VERSION)

MODE_INPUT, BLEND_INPUT, FRAMES_INPUT = "Mode", "Blend", "Bone Frames"
MODE_VALUES = {"LBS": 0, "SBS": 1, "SDEF": 2, "BEZIER": 3}

# Attributes the add operator writes on the deformed mesh (removed with the deformer).
ATTR_MASK, ATTR_I0, ATTR_I1 = "jl_def_mask", "jl_def_i0", "jl_def_i1"  # two-bone?, 4 x bone0 / bone1
ATTR_T, ATTR_U = "jl_def_t", "jl_def_u"  # t_v and 1 - t_v
ATTR_C = "jl_def_c"  # the rest centre C
ATTR_UDR, ATTR_TDR = "jl_def_udr", "jl_def_tdr"  # u (R0 - R1) and t (R0 - R1)
# Bezier: the centre's points A0, A1 = r''_1, the weight u² and the rest centre
ATTR_BEZ_A0, ATTR_BEZ_A1, ATTR_BEZ_W1, ATTR_BEZ_C = "jl_def_bez_a0", "jl_def_bez_a1", "jl_def_bez_w1", "jl_def_bez_c"
ATTR_PAIR = "jl_def_pair"  # the helper point of the vertex's bone pair (its slerp angle and axis)
MESH_ATTRS = (ATTR_MASK, ATTR_I0, ATTR_I1, ATTR_T, ATTR_U, ATTR_C, ATTR_UDR, ATTR_TDR,
              ATTR_BEZ_A0, ATTR_BEZ_A1, ATTR_BEZ_W1, ATTR_BEZ_C, ATTR_PAIR)
# Written by older tree versions (2: jl_def_joint; 3: the rest offsets); removed with the deformer.
LEGACY_MESH_ATTRS = ("jl_def_joint", "jl_def_d", "jl_def_bez_d")
# The position each vertex had when it reached the Armature modifier (after shape keys and the
# modifiers before it), stored by the *input* node group right before the Armature modifier; the
# attribute travels through the Armature modifier to the deformer.
ATTR_PRE = "jl_def_pre"
INPUT_TREE_NAME = "JointLimit Deformer Input"
INPUT_TREE_TAG = "jointlimit_deformer_input"
INPUT_TREE_VERSION = 1
UNIFORM_TOL = 1e-5  # stretch taken as sigma I when the deformed unit axes are sigma R e_k to this x sigma
POLAR_STEPS = 6     # scaled Newton steps of a bone's polar rotation (float32: a stretch ratio of 1000 settles in 5)
# largest |cos| between a bone's deformed axes taken as orthogonal (no Newton steps): float32 noise
# of unit axes read from points 10 units from the origin, where skipping the steps moves a vertex
# by ~cos / 2 of its distance from the joint
ORTHOGONAL_TOL = 1e-5
SINGULAR_DET = 1e-30    # below it the steps do not scale (a bone scaled to zero on an axis stays finite)
FLAT_REL = 1e-6     # an axis shorter than this times the others' (geometric mean) is flat: a zero scale
ZERO_FRAME = 1e-12  # every axis' squared length below this: a bone scaled to zero on every axis
# Attributes of the helper mesh.
ATTR_REST_INV, ATTR_REST_ROT_INV, ATTR_REST_HEAD = "jl_rest_inv", "jl_rest_rot_inv", "jl_rest_head"
ATTR_BONE_FIRST = "jl_bone_first"  # each bone's first point (the pair points follow the bone points)
ATTR_PAIR_I0, ATTR_PAIR_I1 = "jl_pair_i0", "jl_pair_i1"  # on a pair point: 4 x bone0 / bone1 of the pair
ATTR_LBS_THROUGH = "jl_lbs_through"  # LBS mode may pass the Armature modifier's result through
ATTR_SKIP = "jl_skip"  # the Armature modifier skips the two-bone vertices (masked by SKIP_GROUP)
SKIP_GROUP = "jl_deformer_skip"  # vertex group of the two-bone vertices, the Armature modifier's inverted mask


class _Builder:
    """Terse node creation and linking; sockets by index or by name (first enabled match)."""

    def __init__(self, ng):
        self.ng = ng
        self.x = 0

    def node(self, kind, inputs=(), **props):
        node = self.ng.nodes.new(kind)
        for key, value in props.items():
            setattr(node, key, value)
        node.location = (self.x, 0)
        self.x += 40
        items = inputs.items() if isinstance(inputs, dict) else enumerate(inputs)
        for key, src in items:
            if src is None:
                continue
            sock = _socket(node.inputs, key)
            if isinstance(src, bpy.types.NodeSocket):
                self.ng.links.new(src, sock)
            else:
                sock.default_value = src
        return node

    def out(self, node, key=0):
        return _socket(node.outputs, key)

    # -- arithmetic shorthands returning output sockets --------------------------------------
    def math(self, op, a, b=None, c=None):
        return self.out(self.node("ShaderNodeMath", [a, b, c], operation=op))

    def vmath(self, op, a, b=None, c=None, scale=None):
        inputs = {0: a, 1: b, 2: c, "Scale": scale}
        node = self.node("ShaderNodeVectorMath", inputs, operation=op)
        return self.out(node, "Value" if op in ("DOT_PRODUCT", "LENGTH", "DISTANCE") else "Vector")

    def attr(self, name, data_type):
        return self.out(self.node("GeometryNodeInputNamedAttribute", {"Name": name}, data_type=data_type), "Attribute")

    def sample(self, geometry, value, index, data_type):
        node = self.node("GeometryNodeSampleIndex", {"Geometry": geometry, "Value": value, "Index": index},
                         data_type=data_type, domain="POINT")
        return self.out(node, "Value")


def _socket(sockets, key):
    if isinstance(key, int):
        return sockets[key]
    for sock in sockets:
        if (sock.name == key or sock.identifier == key) and sock.enabled:
            return sock
    raise KeyError(key)


def _interface(ng):
    iface = ng.interface
    iface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    iface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    mode = iface.new_socket(MODE_INPUT, in_out="INPUT", socket_type="NodeSocketInt")
    mode.description = "Skinning of the two-bone vertices: 0 LBS, 1 SBS, 2 SDEF (SBS+), 3 Bezier"
    mode.min_value, mode.max_value, mode.default_value = 0, 3, MODE_VALUES["SDEF"]
    blend = iface.new_socket(BLEND_INPUT, in_out="INPUT", socket_type="NodeSocketFloat")
    blend.description = "SDEF blend s of [002 eq.22] between the LBS centre (1) and the boundary line (0)"
    blend.min_value, blend.max_value, blend.default_value = 0.0, 1.0, 0.5
    frames = iface.new_socket(FRAMES_INPUT, in_out="INPUT", socket_type="NodeSocketObject")
    frames.description = "Helper mesh with four points per bone, deformed by the same armature"


def _per_bone(b, helper):
    """The per-bone values on the helper geometry, each group evaluated once per update by its
    own Capture Attribute (only the groups a mode's path uses are evaluated): returns
    ``(geometry with M, M)``, ``(geometry with R, sigma and shift, R, sigma, shift)``,
    ``(geometry with S, S)`` (fields valid at each bone's first point) and the single values
    "every bone's stretch is uniform" and "... is the identity" (see the module)."""
    pos = b.out(b.node("GeometryNodeInputPosition"))
    index = b.out(b.node("GeometryNodeInputIndex"))
    # Sample Index of the helper rather than Field at Index: its source is evaluated once, eagerly,
    # and it adds nothing to hash in the fields built on it
    points = [b.sample(helper, pos, b.math("ADD", index, float(k)), "FLOAT_VECTOR") for k in (1, 2, 3)]
    axes = [b.vmath("SUBTRACT", points[0], pos), b.vmath("SUBTRACT", pos, points[1]),   # (the Y point behind the head)
            b.vmath("SUBTRACT", points[2], pos)]
    # captured once: every group below reads them (and the bones' shear) instead of sampling again
    completed = _completed(b, axes)
    helper, captured = _capture(b, helper, (*((name, "VECTOR", axis) for name, axis in zip("xyz", axes)),
                                            *((f"{name}'", "VECTOR", axis) for name, axis in zip("xyz", completed)),
                                            ("skew", "FLOAT", _skew(b, completed))))
    axes, completed, skew = captured[:3], captured[3:6], captured[6]
    columns = {}
    for col, vec in enumerate(axes + [pos], start=1):
        sep = b.node("ShaderNodeSeparateXYZ", [vec])
        for row in range(3):
            columns[f"Column {col} Row {row + 1}"] = b.out(sep, row)
    frame = b.out(b.node("FunctionNodeCombineMatrix", columns))
    m = b.out(b.node("FunctionNodeMatrixMultiply", [frame, b.attr(ATTR_REST_INV, "FLOAT4X4")]))
    rot_pose = _frame_rotation(b, helper, completed, skew)
    # a bone scaled to zero on every axis has no rotation: its rest one, as the core's SVD gives
    zero = b.math("LESS_THAN", b.math("ADD", b.math("ADD", *(b.vmath("DOT_PRODUCT", a, a) for a in axes[:2])),
                                      b.vmath("DOT_PRODUCT", axes[2], axes[2])), ZERO_FRAME)
    rest_rot = b.out(b.node("FunctionNodeInvertRotation", [b.attr(ATTR_REST_ROT_INV, "QUATERNION")]))
    rot_pose = b.out(b.node("GeometryNodeSwitch", {"Switch": zero, "False": rot_pose, "True": rest_rot},
                            input_type="ROTATION"))
    r = b.out(b.node("FunctionNodeRotateRotation",
                     {"Rotation": b.attr(ATTR_REST_ROT_INV, "QUATERNION"), "Rotate By": rot_pose},
                     rotation_space="GLOBAL"))
    # uniformly scaled bones: M p = sigma R (p - h) + M h with h the rest head (stored)
    sigma = b.vmath("LENGTH", axes[1])
    turned = b.out(b.node("FunctionNodeRotateVector", {"Vector": b.attr(ATTR_REST_HEAD, "FLOAT_VECTOR"),
                                                        "Rotation": r}))
    shift = b.vmath("SUBTRACT", pos, b.vmath("SCALE", turned, scale=sigma))
    # S = R^T M (its translation is ignored by Transform Direction); only the general path uses it
    r_inv_m = b.out(b.node("FunctionNodeCombineTransform",
                           {"Rotation": b.out(b.node("FunctionNodeInvertRotation", [r]))}))
    s = b.out(b.node("FunctionNodeMatrixMultiply", [r_inv_m, m]))
    got_m, (m,) = _capture(b, helper, (("M", "MATRIX", m),))
    got_s, (s,) = _capture(b, helper, (("S", "MATRIX", s),))
    got_r, (r, sigma, shift, checks) = _capture(
        b, helper, (("R", "ROTATION", r), ("sigma", "FLOAT", sigma), ("shift", "VECTOR", shift),
                    ("checks", "VECTOR", _stretch_checks(b, axes, rot_pose, sigma))))
    # from the captured R: the pair's two samples read an attribute instead of evaluating the
    # whole chain of R again each
    got_r, (w,) = _capture(b, got_r, (("w", "VECTOR", _pair_slerp(b, got_r, r)),))
    stats = b.node("GeometryNodeAttributeStatistic", {"Geometry": got_r, "Selection": b.attr(ATTR_BONE_FIRST, "BOOLEAN"),
                                                      "Attribute": checks},
                   data_type="FLOAT_VECTOR", domain="POINT")
    worst = b.node("ShaderNodeSeparateXYZ", [b.out(stats, "Max")])
    uniform, unscaled = (b.out(b.node("FunctionNodeCompare", {"A": b.out(worst, axis), "B": UNIFORM_TOL},
                                      data_type="FLOAT", operation="LESS_EQUAL")) for axis in (0, 1))
    return (got_m, m), (got_r, r, sigma, shift, w), (got_s, s), uniform, unscaled


def _completed(b, axes):
    """The deformed axes with an axis a zero scale flattened (shorter than ``FLAT_REL`` times the
    other two's geometric mean) replaced by the cross product of the other two, in cyclic order:
    the frame's polar rotation is the same (the flat axis is the direction the cross product
    completes, [002 eq.7]), and unlike the flat frame's it is defined, as the core's SVD gives it
    (``core.skinning.polar_decompose``). A frame flattened on two or three axes keeps its axes."""
    out = []
    for p, q, r in zip(axes, axes[1:] + axes[:1], axes[2:] + axes[:2]):
        room = b.math("MULTIPLY", b.math("MULTIPLY", b.vmath("LENGTH", q), b.vmath("LENGTH", r)), FLAT_REL * FLAT_REL)
        flat = b.math("LESS_THAN", b.vmath("DOT_PRODUCT", p, p), room)
        out.append(b.vmath("ADD", p, b.vmath("SCALE", b.vmath("CROSS_PRODUCT", q, r), scale=flat)))
    return out


def _skew(b, axes):
    """The largest ``|cos|`` of the angles between a bone's deformed axes (0: orthogonal)."""
    cosines = [b.math("ABSOLUTE", b.math("DIVIDE", b.vmath("DOT_PRODUCT", p, q),
                                         b.math("MULTIPLY", b.vmath("LENGTH", p), b.vmath("LENGTH", q))))
               for p, q in zip(axes, axes[1:] + axes[:1])]
    return b.math("MAXIMUM", b.math("MAXIMUM", *cosines[:2]), cosines[2])


def _frame_rotation(b, helper, axes, skew):
    """``Rot(F')`` of each bone: the rotation of its deformed Y and X axes while every bone's
    deformed axes are orthogonal (``skew`` within ``ORTHOGONAL_TOL``, the usual case: then that is
    their polar rotation), else ``_polar_rotation`` (a single-value Switch: the Newton steps are
    evaluated only then)."""
    x, y, z = axes
    # X from Y x Z: the deformed X axis itself unless the bone is mirrored (a left-handed deformed
    # frame), which so keeps its reflection on its own X axis (as core.skinning.polar_decompose)
    gram = b.out(b.node("FunctionNodeAxesToRotation", {"Primary Axis": y, "Secondary Axis": b.vmath("CROSS_PRODUCT", y, z)},
                        primary_axis="Y", secondary_axis="X"))
    stats = b.node("GeometryNodeAttributeStatistic", {"Geometry": helper, "Selection": b.attr(ATTR_BONE_FIRST, "BOOLEAN"),
                                                      "Attribute": skew},
                   data_type="FLOAT", domain="POINT")
    sheared = b.out(b.node("FunctionNodeCompare", {"A": b.out(stats, "Max"), "B": ORTHOGONAL_TOL},
                           data_type="FLOAT", operation="GREATER_THAN"))
    return b.out(b.node("GeometryNodeSwitch", {"Switch": sheared, "False": gram, "True": _polar_rotation(b, axes)},
                        input_type="ROTATION"))


def _polar_rotation(b, axes):
    """``Rot(F')``: the rotation nearest the deformed frame ``X = [x y z]`` (its polar factor
    [002 eq.7], as ``core.skinning.polar_decompose``). A mirrored frame (``det X < 0``) is
    reflected on its own X axis first, as the core does with ``mirror_axes``; then ``POLAR_STEPS``
    scaled Newton steps ``X <- (g X + X^-T / g) / 2``, ``g = |det X|^(-1/3)``, with
    ``X^-T = [y x z, z x x, x x y] / det X`` (vector math on the columns, no matrix node; ``g = 1``
    for a flat frame, whose steps then stay finite)."""
    x, y, z = axes
    mirrored = b.math("LESS_THAN", b.vmath("DOT_PRODUCT", x, b.vmath("CROSS_PRODUCT", y, z)), 0.0)
    columns = [b.vmath("SCALE", x, scale=b.math("MULTIPLY_ADD", mirrored, -2.0, 1.0)), y, z]
    for _ in range(POLAR_STEPS):
        x, y, z = columns
        cofactors = [b.vmath("CROSS_PRODUCT", p, q) for p, q in ((y, z), (z, x), (x, y))]
        det = b.vmath("DOT_PRODUCT", x, cofactors[0])
        size = b.math("ABSOLUTE", det)
        g = b.math("POWER", b.math("MAXIMUM", size, SINGULAR_DET), -1.0 / 3.0)
        g = b.math("MULTIPLY_ADD", b.math("LESS_THAN", size, SINGULAR_DET), b.math("SUBTRACT", 1.0, g), g)  # flat: 1
        half_g, half_inverse = b.math("MULTIPLY", g, 0.5), b.math("DIVIDE", 0.5, b.math("MULTIPLY", g, det))
        columns = [b.vmath("MULTIPLY_ADD", column, half_g, b.vmath("SCALE", cofactor, scale=half_inverse))
                   for column, cofactor in zip(columns, cofactors)]
    return b.out(b.node("FunctionNodeAxesToRotation", {"Primary Axis": columns[1], "Secondary Axis": columns[0]},
                        primary_axis="Y", secondary_axis="X"))


def _pair_slerp(b, geometry, r):
    """Per bone pair (a field valid at the helper's pair points): the rotation vector
    ``w = phi n`` of ``R0^-1 R1`` on the shorter arc (angle ``phi`` in [-pi, pi], unit axis ``n``),
    so that ``slerp(R0, R1, u) = R0 Rot(n, u phi) = R0 Rot(w / |w|, u |w|)`` [002 eq.6] needs no
    inverse trigonometry per vertex (the Mix node's rotation mode costs several times more) and
    one sample per vertex (a negative ``phi`` flips the axis instead of the angle)."""
    q0, q1 = (b.sample(geometry, r, b.attr(name, "INT"), "QUATERNION") for name in (ATTR_PAIR_I0, ATTR_PAIR_I1))
    rel = b.out(b.node("FunctionNodeRotateRotation",
                       {"Rotation": q1, "Rotate By": b.out(b.node("FunctionNodeInvertRotation", [q0]))},
                       rotation_space="GLOBAL"))
    axis_angle = b.node("FunctionNodeRotationToAxisAngle", [rel])
    phi = b.math("WRAP", b.out(axis_angle, "Angle"), math.pi, -math.pi)  # the shorter arc
    return b.vmath("SCALE", b.out(axis_angle, "Axis"), scale=phi)


def _capture(b, geometry, items):
    """One Capture Attribute of ``items`` ``(name, socket type, field)`` on ``geometry``:
    ``(geometry, [captured fields])``."""
    cap = b.node("GeometryNodeCaptureAttribute", domain="POINT")
    b.ng.links.new(geometry, _socket(cap.inputs, "Geometry"))
    out = []
    for name, kind, field in items:
        cap.capture_items.new(kind, name)
        b.ng.links.new(field, _socket(cap.inputs, name))
        out.append(_socket(cap.outputs, name))
    return b.out(cap, "Geometry"), out


def _stretch_checks(b, axes, rot_pose, sigma):
    """``(worst / sigma, max(worst, |sigma - 1|), 0)`` per bone, ``worst`` the larger of
    ``|Rot(F')^-1 ax - sigma e_x|`` and ``|Rot(F')^-1 az - sigma e_z|``: the deformed X and Z
    axes in the frame that *Axes to Rotation* built from the deformed Y and X axes (``sigma`` =
    ``|ay|``, so Y matches by construction). The deformed frame is ``sigma`` times ``Rot(F')``
    (uniform scale, no shear, no mirror) when the first is within ``UNIFORM_TOL``, and ``Rot(F')``
    itself (no scale) when the second is too."""
    ax, _, az = axes
    to_local = b.out(b.node("FunctionNodeInvertRotation", [rot_pose]))
    errors = []
    for axis, component in ((ax, 0), (az, 2)):
        local = b.out(b.node("FunctionNodeRotateVector", {"Vector": axis, "Rotation": to_local}))
        errors.append(b.vmath("DISTANCE", local, b.out(b.node("ShaderNodeCombineXYZ", {component: sigma}))))
    worst = b.math("MAXIMUM", *errors)
    return b.out(b.node("ShaderNodeCombineXYZ", [b.math("DIVIDE", worst, sigma),
                                                 b.math("MAXIMUM", worst,
                                                        b.math("ABSOLUTE", b.math("SUBTRACT", sigma, 1.0)))]))


def build(ng):
    """Fill the empty geometry node group ``ng`` with the deformer: a wrapper around the core group
    (see the module)."""
    b = _Builder(ng)
    _interface(ng)
    gin = b.node("NodeGroupInput")
    gout = b.node("NodeGroupOutput")
    core = b.node("GeometryNodeGroup", node_tree=get_core_tree())
    for name in ("Geometry", MODE_INPUT, BLEND_INPUT, FRAMES_INPUT):
        ng.links.new(_socket(gin.outputs, name), _socket(core.inputs, name))
    ng.links.new(_socket(core.outputs, "Geometry"), _socket(gout.inputs, "Geometry"))


def build_core(ng):
    """Fill the empty geometry node group ``ng`` with the deformer's core (see the module)."""
    b = _Builder(ng)
    _interface(ng)
    gin = b.node("NodeGroupInput")
    gout = b.node("NodeGroupOutput")
    info = b.node("GeometryNodeObjectInfo", {"Object": b.out(gin, FRAMES_INPUT)}, transform_space="RELATIVE")
    helper = b.out(info, "Geometry")
    skip = b.sample(helper, b.attr(ATTR_SKIP, "BOOLEAN"), 0, "BOOLEAN")  # a single value
    (geo_m, m_f), (geo_r, r_f, sigma_f, shift_f, w_f), (geo_s, s_f), uniform, unscaled = _per_bone(b, helper)

    mode = b.math("MINIMUM", b.math("MAXIMUM", b.out(gin, MODE_INPUT), 0.0), 3.0)  # out of range: clamped
    s = b.math("MINIMUM", b.math("MAXIMUM", b.out(gin, BLEND_INPUT), 0.0), 1.0)  # set outside [0, 1] by a script or driver: clamped
    k = b.math("SUBTRACT", 1.0, s)  # SDEF's 1 - s (single value)
    is_sbs, is_bezier = (b.out(b.node("FunctionNodeCompare", {"A": mode, "B": MODE_VALUES[name]}, data_type="INT",
                                      operation="EQUAL")) for name in ("SBS", "BEZIER"))
    k = b.out(b.node("GeometryNodeSwitch", {"Switch": is_sbs, "False": k, "True": 0.0}, input_type="FLOAT"))

    # Per-vertex data (static products stored by the add operator).
    # the morphed rest vertex, as the Armature modifier received it: left where it was when the
    # Armature modifier skips it, else stored by the input stage
    pre = b.node("GeometryNodeInputNamedAttribute", {"Name": ATTR_PRE}, data_type="FLOAT_VECTOR")
    v = b.out(b.node("GeometryNodeSwitch", {"Switch": skip, "False": b.out(pre, "Attribute"),
                                            "True": b.out(b.node("GeometryNodeInputPosition"))},
                     input_type="VECTOR"))
    c = b.attr(ATTR_C, "FLOAT_VECTOR")
    t, u = b.attr(ATTR_T, "FLOAT"), b.attr(ATTR_U, "FLOAT")
    i0, i1 = b.attr(ATTR_I0, "INT"), b.attr(ATTR_I1, "INT")
    m0, m1 = b.sample(geo_m, m_f, i0, "FLOAT4X4"), b.sample(geo_m, m_f, i1, "FLOAT4X4")
    pair = b.attr(ATTR_PAIR, "INT")

    def point(mat, p):
        return b.out(b.node("FunctionNodeTransformPoint", {"Vector": p, "Transform": mat}))

    def blend(a, wa, x, wx):
        return b.vmath("MULTIPLY_ADD", x, wx, b.vmath("SCALE", a, scale=wa))

    def rotate(p, q):
        return b.out(b.node("FunctionNodeRotateVector", {"Vector": p, "Rotation": q}))

    def turn(d, w):
        """``Rot(n, u phi) d`` for the pair's rotation vector ``w = phi n`` [002 eq.6]."""
        turn = b.node("FunctionNodeAxisAngleToRotation",
                      {"Axis": w, "Angle": b.math("MULTIPLY", b.vmath("LENGTH", w), u)})
        return rotate(d, b.out(turn))

    def pick(bezier_value, sdef_value, kind="VECTOR"):
        return b.out(b.node("GeometryNodeSwitch", {"Switch": is_bezier, "False": sdef_value, "True": bezier_value},
                            input_type=kind))

    # SBS (k = 0) and SDEF (k = 1 - s): r''_0 = c + u (r0 - r1), r''_1 = c - t (r0 - r1),
    # centre' = t M0 (c + k u dr) + u M1 (c - k t dr), rest centre c [002 eq.14, 17-22].
    # Bezier [002 eq.24-26]: (1 - u²) M0 A0 + u² M1 r''_1 around the stored rest centre.
    # Both are wa M0 a + wx M1 x + slerp(R0, R1, u) (t S0 + u S1) (v - rest centre) [002 eq.6, 8]:
    # one field, its inputs picked by single-value switches.
    w1 = b.attr(ATTR_BEZ_W1, "FLOAT")
    a = pick(b.attr(ATTR_BEZ_A0, "FLOAT_VECTOR"), b.vmath("MULTIPLY_ADD", b.attr(ATTR_UDR, "FLOAT_VECTOR"), k, c))
    x = pick(b.attr(ATTR_BEZ_A1, "FLOAT_VECTOR"),
             b.vmath("MULTIPLY_ADD", b.attr(ATTR_TDR, "FLOAT_VECTOR"), b.math("MULTIPLY", k, -1.0), c))
    wa = pick(b.math("SUBTRACT", 1.0, w1), t, "FLOAT")
    wx = pick(w1, u, "FLOAT")
    d = b.vmath("SUBTRACT", v, pick(b.attr(ATTR_BEZ_C, "FLOAT_VECTOR"), c))
    # Three paths (single-value switches): no bone scaled, M p = R p + shift, so the sum is
    # R0 (wa a + Rot(n, u phi) d) + wa shift0 + wx (R1 x + shift1); uniform scales,
    # M p = sigma R p + shift and S = sigma I; otherwise matrices per vertex.
    q0, q1 = b.sample(geo_r, r_f, i0, "QUATERNION"), b.sample(geo_r, r_f, i1, "QUATERNION")
    shift0, shift1 = b.sample(geo_r, shift_f, i0, "FLOAT_VECTOR"), b.sample(geo_r, shift_f, i1, "FLOAT_VECTOR")
    w = b.sample(geo_r, w_f, pair, "FLOAT_VECTOR")
    turned_d = turn(d, w)
    turned_x = rotate(x, q1)

    def similarity(a0, turned, x1):
        return b.vmath("MULTIPLY_ADD", b.vmath("ADD", x1, shift1), wx,
                       b.vmath("MULTIPLY_ADD", shift0, wa, rotate(b.vmath("MULTIPLY_ADD", a0, wa, turned), q0)))

    rigid = similarity(a, turned_d, turned_x)
    sigma0, sigma1 = b.sample(geo_r, sigma_f, i0, "FLOAT"), b.sample(geo_r, sigma_f, i1, "FLOAT")
    sigma = b.math("MULTIPLY_ADD", sigma1, u, b.math("MULTIPLY", sigma0, t))
    scaled = similarity(b.vmath("SCALE", a, scale=sigma0), b.vmath("SCALE", turned_d, scale=sigma),
                        b.vmath("SCALE", turned_x, scale=sigma1))
    s0, s1 = b.sample(geo_s, s_f, i0, "FLOAT4X4"), b.sample(geo_s, s_f, i1, "FLOAT4X4")
    d0 = b.out(b.node("FunctionNodeTransformDirection", {"Direction": d, "Transform": s0}))
    d1 = b.out(b.node("FunctionNodeTransformDirection", {"Direction": d, "Transform": s1}))
    general = b.vmath("MULTIPLY_ADD", point(m1, x), wx,
                      b.vmath("MULTIPLY_ADD", point(m0, a), wa, rotate(turn(blend(d0, t, d1, u), w), q0)))
    general = b.out(b.node("GeometryNodeSwitch", {"Switch": uniform, "False": general, "True": scaled},
                           input_type="VECTOR"))
    sdef = b.out(b.node("GeometryNodeSwitch", {"Switch": unscaled, "False": general, "True": rigid},
                        input_type="VECTOR"))
    # LBS [002 eq.3]: t M0 v + u M1 v.
    lbs = blend(point(m0, v), t, point(m1, v), u)
    # The switch is a single value, so only the chosen mode's field is evaluated.
    final = b.out(b.node("GeometryNodeSwitch", {"Switch": b.out(b.node(
        "FunctionNodeCompare", {"A": mode, "B": MODE_VALUES["LBS"]}, data_type="INT", operation="EQUAL")),
        "False": sdef, "True": lbs}, input_type="VECTOR"))
    # without the input stage (its modifier switched off) leave the Armature modifier's result
    have_v = b.out(b.node("FunctionNodeBooleanMath", [skip, b.out(pre, "Exists")], operation="OR"))
    mask = b.out(b.node("FunctionNodeBooleanMath", [b.attr(ATTR_MASK, "BOOLEAN"), have_v], operation="AND"))
    setpos = b.node("GeometryNodeSetPosition",
                    {"Geometry": b.out(gin, "Geometry"), "Selection": mask, "Position": final})
    # LBS is the Armature modifier's own result unless it skips the two-bone vertices or some vertex
    # uses its two strongest of more groups (the helper says, as single values): then pass the
    # geometry through untouched. Only the chosen mode's item is evaluated, so the other modes do
    # not pay for this test.
    through = b.out(b.node("FunctionNodeBooleanMath", [
        b.sample(helper, b.attr(ATTR_LBS_THROUGH, "BOOLEAN"), 0, "BOOLEAN"), skip], operation="NIMPLY"))
    lbs_result = b.node("GeometryNodeSwitch", {"Switch": through, "False": b.out(setpos, "Geometry"),
                                               "True": b.out(gin, "Geometry")}, input_type="GEOMETRY")
    result = b.node("GeometryNodeIndexSwitch", data_type="GEOMETRY")
    result.index_switch_items.new()
    result.index_switch_items.new()
    ng.links.new(mode, _socket(result.inputs, "Index"))
    for item in range(4):
        ng.links.new(b.out(lbs_result) if item == MODE_VALUES["LBS"] else b.out(setpos, "Geometry"),
                     _socket(result.inputs, f"Item_{item}"))
    ng.links.new(b.out(result), _socket(gout.inputs, "Geometry"))


def _shared_group(name, tag, version, fill, modifier=True):
    """The node group ``name`` of layout ``version``, built by ``fill`` on first use. A group of
    that name from another version (an older file) makes way: removed when nothing uses it,
    else renamed ``"<name> v<version>"`` (``deformer.upgrade`` moves its users first), so the
    current one always has the plain name (never ``.001``)."""
    ng = bpy.data.node_groups.get(name)
    if ng is not None and ng.bl_idname == "GeometryNodeTree" and ng.get(tag) == version:
        return ng
    if ng is not None and ng.get(tag) is not None and ng.library is None:
        if ng.users - int(ng.use_fake_user) == 0:
            bpy.data.node_groups.remove(ng)
        else:
            ng.name = f"{name} v{ng.get(tag)}"
    ng = bpy.data.node_groups.new(name, "GeometryNodeTree")
    ng.is_modifier = modifier
    fill(ng)
    ng[tag] = version
    return ng


def get_tree():
    """The shared deformer node group, built on first use (see ``_shared_group``)."""
    return _shared_group(TREE_NAME, TREE_TAG, TREE_VERSION, build)


def get_core_tree():
    """The core group the deformer node group wraps, built on first use."""
    return _shared_group(CORE_NAME, CORE_TAG, TREE_VERSION, build_core, modifier=False)


def core_trees():
    """Every deformer core group in the file (any version)."""
    return [ng for ng in bpy.data.node_groups if ng.get(CORE_TAG) is not None]


def is_old_tree(ng):
    """A deformer node group of another layout version (from a file saved by an older version)."""
    return is_deformer_tree(ng) and ng.get(TREE_TAG) != TREE_VERSION


def build_input(ng):
    """Fill the empty node group ``ng`` with the deformer's input stage: store the position as
    ``jl_def_pre`` (placed right before the Armature modifier)."""
    b = _Builder(ng)
    iface = ng.interface
    iface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    iface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    gin = b.node("NodeGroupInput")
    gout = b.node("NodeGroupOutput")
    store = b.node("GeometryNodeStoreNamedAttribute",
                   {"Geometry": b.out(gin, "Geometry"), "Name": ATTR_PRE,
                    "Value": b.out(b.node("GeometryNodeInputPosition"))},
                   data_type="FLOAT_VECTOR", domain="POINT")
    ng.links.new(b.out(store, "Geometry"), _socket(gout.inputs, "Geometry"))


def get_input_tree():
    """The shared input-stage node group (see ``ATTR_PRE``), built on first use."""
    return _shared_group(INPUT_TREE_NAME, INPUT_TREE_TAG, INPUT_TREE_VERSION, build_input)


def is_input_tree(ng):
    return ng is not None and ng.get(INPUT_TREE_TAG) is not None


def is_deformer_tree(ng):
    return ng is not None and ng.get(TREE_TAG) is not None


def input_id(ng, name):
    """Identifier of a group input (the modifier's key: ``compat.modifier_input(mod, input_id(ng, 'Mode'))``)."""
    return ng.interface.items_tree[name].identifier
