"""SDEF / SBS / Bezier deformer (issue 7): geometry nodes against the numpy core, mmd_tools data,
mode switching, remove, bake and derive, through real depsgraph evaluation."""

import importlib

import numpy as np
import pytest

from rigs import compat, make_armature, save_in_library

pytestmark = [pytest.mark.blender]

MODES = ["LBS", "SBS", "SDEF", "BEZIER"]
NAMES = ["upper", "lower"]  # bone0 (parent), bone1 (child) of every two-bone vertex
MODE_INPUT = {"LBS": 0, "SBS": 1, "SDEF": 2, "BEZIER": 3}


@pytest.fixture
def mods(addon):
    pkg = addon.__name__
    return {m: importlib.import_module(f"{pkg}.{m}") for m in ("core.skinning", "deformer", "deformer.tree")}


def _np(m):
    return np.array([list(r) for r in m], np.float64)


def build_limb(scene, group_order=("lower", "upper", "other"), nseg=36, nring=16):
    """A cylinder along a bent two-bone chain (+ a third bone) with known weights.

    z < 0.7: upper only; 0.7..1.3: blend upper (t) / lower; 1.3..1.9: lower only; >= 1.9: three bones.
    Non-identity object transforms on both objects. Returns (arm, obj, truth).
    """
    import bpy
    from mathutils import Euler, Matrix

    arm = make_armature([
        ("upper", (0, 0, 0), (0, 0, 1), None, 0.3),
        ("lower", (0, 0, 1), (0.1, 0, 2), "upper", -0.2),
        ("other", (0.1, 0, 2), (0.1, 0, 2.5), "lower", 0.0),
    ])
    bpy.ops.object.mode_set(mode="OBJECT")
    z = np.linspace(0, 2.2, nseg)
    ang = np.linspace(0, 2 * np.pi, nring, endpoint=False)
    zz, aa = np.meshgrid(z, ang, indexing="ij")
    co = np.stack([0.2 * np.cos(aa) + 0.05 * zz, 0.2 * np.sin(aa), zz], -1).reshape(-1, 3)  # armature space
    faces = [(i * nring + j, i * nring + (j + 1) % nring, (i + 1) * nring + (j + 1) % nring, (i + 1) * nring + j)
             for i in range(nseg - 1) for j in range(nring)]
    me = bpy.data.meshes.new("Limb")
    me.from_pydata(co.tolist(), [], faces)
    me.update()
    obj = bpy.data.objects.new("Limb", me)
    scene.collection.objects.link(obj)
    groups = {n: obj.vertex_groups.new(name=n) for n in group_order}
    t = np.clip((1.3 - co[:, 2]) / 0.6, 0.0, 1.0)
    three = co[:, 2] >= 1.9
    two = (t > 0) & (t < 1) & ~three
    for i in range(len(co)):
        if three[i]:
            for n, w in (("upper", 0.2), ("lower", 0.3), ("other", 0.5)):
                groups[n].add([i], w, "REPLACE")
        else:
            if t[i] > 0:
                groups["upper"].add([i], float(t[i]) * 0.8, "REPLACE")  # unnormalised on purpose
            if t[i] < 1:
                groups["lower"].add([i], float(1 - t[i]) * 0.8, "REPLACE")
    mod = obj.modifiers.new("Armature", "ARMATURE")
    mod.object = arm
    obj.matrix_world = Matrix.LocRotScale((0.3, -0.2, 0.5), Euler((0.2, 0.4, -0.3)), (1.5, 1.5, 1.5))
    arm.matrix_world = Matrix.LocRotScale((-0.1, 0.4, 0.2), Euler((-0.3, 0.1, 0.5)), (0.8, 0.8, 0.8))
    w = _np(obj.matrix_world.inverted() @ arm.matrix_world)
    co = co @ w[:3, :3].T + w[:3, 3]  # mesh space, around the bones
    me.vertices.foreach_set("co", co.astype(np.float32).ravel())
    me.update()
    co = co.astype(np.float32).astype(np.float64)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    bpy.context.view_layer.update()
    t32 = np.float32(t) * np.float32(0.8)
    truth = {"rest": co, "two": np.flatnonzero(two), "t": (t32 / (t32 + np.float32(1 - t) * np.float32(0.8)))[two]}
    return arm, obj, truth


def pose(arm, seed, scaling="NONUNIFORM"):
    """Random rotations and a translation; ``scaling``: NONUNIFORM (uniform scale on the parent,
    own non-uniform scale on the child), UNIFORM (uniform scales on both) or NONE (the deformer's
    three paths: full stretch, sigma I, rigid)."""
    import bpy
    from mathutils import Quaternion

    rng = np.random.default_rng(seed)
    for pb in arm.pose.bones:
        pb.rotation_mode = "QUATERNION"
        pb.rotation_quaternion = Quaternion(rng.normal(size=4)).normalized()
    arm.pose.bones["upper"].location = rng.normal(size=3) * 0.2
    if scaling != "NONE":
        arm.pose.bones["upper"].scale = (1.2,) * 3
        arm.pose.bones["lower"].scale = tuple(rng.uniform(0.8, 1.25, 3) if scaling == "NONUNIFORM" else (0.9,) * 3)
    bpy.context.view_layer.update()


def skin_matrices(obj, arm):
    """M = mesh_w^-1 @ arm_w @ pose_bone.matrix @ bone.matrix_local^-1 @ arm_w^-1 @ mesh_w."""
    mw, aw = obj.matrix_world, arm.matrix_world
    return np.array([_np(mw.inverted() @ aw @ arm.pose.bones[n].matrix @ arm.data.bones[n].matrix_local.inverted()
                         @ aw.inverted() @ mw) for n in NAMES])


def rest_heads(obj, arm):
    w = obj.matrix_world.inverted() @ arm.matrix_world
    return np.array([list(w @ arm.data.bones[n].head_local) for n in NAMES])


def evaluated(obj):
    import bpy

    dg = bpy.context.evaluated_depsgraph_get()
    mesh = obj.evaluated_get(dg).data
    co = np.empty(len(mesh.vertices) * 3, np.float32)
    mesh.vertices.foreach_get("co", co)
    return co.reshape(-1, 3).astype(np.float64)


def attribute(obj, name):
    out = np.empty(len(obj.data.vertices) * 3, np.float32)
    obj.data.attributes[name].data.foreach_get("vector", out)
    return out.reshape(-1, 3).astype(np.float64)


def derived(obj, truth):
    return [attribute(obj, n)[truth["two"]] for n in ("jl_sdef_c", "jl_sdef_r0", "jl_sdef_r1")]


def rest_x_axes(obj, arm):
    """The bones' rest X axes in the mesh's space (where a mirrored bone reflects)."""
    w = (obj.matrix_world.inverted() @ arm.matrix_world).to_3x3()
    axes = np.array([_np(w @ arm.data.bones[n].matrix_local.to_3x3())[:, 0] for n in NAMES])
    return axes / np.linalg.norm(axes, axis=1, keepdims=True)


def expected(mods, mode, obj, arm, truth, params, mirror=True):
    idx = truth["two"]
    n = len(idx)
    return mods["core.skinning"].deform(mode, truth["rest"][idx], np.zeros(n, int), np.ones(n, int), truth["t"],
                                        *params, matrices=skin_matrices(obj, arm), rest_heads=rest_heads(obj, arm),
                                        mirror_axes=rest_x_axes(obj, arm) if mirror else None)


def size(truth):
    rest = truth["rest"]
    return float(np.linalg.norm(rest.max(0) - rest.min(0)))


def set_mode(obj, mode):
    """Set the Mode input on the modifier directly, as a user does in the modifier panel."""
    mod = obj.modifiers["JointLimit Deformer"]
    key = mod.node_group.interface.items_tree["Mode"].identifier
    compat().set_modifier_input(mod, key, MODE_INPUT[mode])
    obj.update_tag()


@pytest.fixture
def limb(scene):
    return build_limb(scene)


def test_derive_puts_centres_on_the_bone_line_near_the_joint(limb):
    import bpy

    arm, obj, truth = limb
    assert bpy.ops.object.jointlimit_sdef_derive() == {"FINISHED"}
    c, r0, r1 = derived(obj, truth)
    # rest bone line in mesh space: head (0,0,0)->(0,0,1) upper, (0,0,1)->(0.1,0,2) lower (armature space)
    w = obj.matrix_world.inverted() @ arm.matrix_world
    joint = np.array(w @ arm.data.bones["lower"].head_local)
    u0 = np.array((w @ arm.data.bones["upper"].tail_local) - (w @ arm.data.bones["upper"].head_local))
    u1 = np.array(w @ arm.data.bones["lower"].tail_local) - joint
    rel = c - joint
    dist0 = np.linalg.norm(np.cross(rel, u0 / np.linalg.norm(u0)), axis=1)
    dist1 = np.linalg.norm(np.cross(rel, u1 / np.linalg.norm(u1)), axis=1)
    assert np.minimum(dist0, dist1).max() < 1e-5  # C on the core line
    assert np.linalg.norm(rel, axis=1).max() < 0.35 * np.linalg.norm(u0)  # within the blend zone (+-0.3 bone)
    # R0 on the parent side, R1 on the child side of the joint
    assert np.all((r0 - joint) @ u0 < 0) and np.all((r1 - joint) @ u1 > 0)
    # vertices off the two-bone zone keep their own position
    rest = truth["rest"]
    others = np.setdiff1d(np.arange(len(rest)), truth["two"])
    assert np.allclose(attribute(obj, "jl_sdef_c")[others], rest[others], atol=1e-6)


def sdef_limb(limb):
    """``limb`` with its SDEF parameters derived and the deformer added in SDEF mode:
    ``(arm, obj, truth, params)``."""
    import bpy

    arm, obj, truth = limb
    bpy.ops.object.jointlimit_sdef_derive()
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    return arm, obj, truth, derived(obj, truth)


def assert_every_mode_is_the_cores(mods, obj, arm, truth, params):
    """Each mode set on the modifier input deforms the two-bone vertices as the numpy core does,
    to 1e-5 of the limb; ``{mode: the deformed two-bone vertices}``."""
    results = {}
    for mode in MODES:
        set_mode(obj, mode)
        got = evaluated(obj)[truth["two"]]
        want = expected(mods, mode, obj, arm, truth, params)
        assert np.abs(got - want).max() < 1e-5 * size(truth), (mode, np.abs(got - want).max() / size(truth))
        results[mode] = got
    return results


@pytest.mark.parametrize("added", ["LBS", "SDEF"], ids=["input-stage", "armature-skips"])
@pytest.mark.parametrize("seed, scaling", [(0, "NONUNIFORM"), (1, "NONUNIFORM"), (2, "NONUNIFORM"),
                                           (3, "UNIFORM"), (4, "NONE"), (5, "NONE")])
def test_geometry_nodes_equal_numpy_core_in_every_mode(limb, mods, seed, scaling, added):
    """Every mode on the modifier input, with the input stage (added in LBS mode) and with the
    Armature modifier skipping the two-bone vertices (added in SDEF mode: LBS computed too)."""
    import bpy

    arm, obj, truth = limb
    bpy.ops.object.jointlimit_sdef_derive()
    assert bpy.ops.object.jointlimit_deformer_add(mode=added) == {"FINISHED"}
    assert (obj.modifiers["Armature"].vertex_group != "") == (added == "SDEF")
    params = derived(obj, truth)
    pose(arm, seed, scaling)
    results = assert_every_mode_is_the_cores(mods, obj, arm, truth, params)
    if scaling != "NONUNIFORM":
        return
    # the modes really differ on this pose (switching the input changes the result)
    for a in MODES:
        for b in MODES:
            if a < b:
                assert np.abs(results[a] - results[b]).max() > 1e-3, (a, b)


@pytest.mark.parametrize("mirrored", ["child", "both"])
def test_mirrored_bone_equals_the_numpy_core_in_every_mode(limb, mods, mirrored):
    """A bone scaled negatively on its X axis (and the parent mirrored too): the node tree and the
    numpy core both reflect it on its rest X axis, so its rotation stays its pose rotation."""
    import bpy

    arm, obj, truth, params = sdef_limb(limb)
    pose(arm, 6, "NONE")
    arm.pose.bones["lower"].scale = (-1.1, 0.9, 1.2)
    if mirrored == "both":
        arm.pose.bones["upper"].scale = (-1.0, 1.0, 1.0)
    bpy.context.view_layer.update()
    got = assert_every_mode_is_the_cores(mods, obj, arm, truth, params)["BEZIER"]
    # the rule matters: the SVD alone reflects the child on its smallest scale (Y), half a turn away
    assert np.abs(got - expected(mods, "BEZIER", obj, arm, truth, params, mirror=False)).max() > 1e-2


@pytest.mark.parametrize("parent_scale", [(1.4, 0.7, 1.1), (0.2, 3.0, 1.0)])
def test_sheared_bone_equals_the_numpy_core_in_every_mode(limb, mods, parent_scale):
    """A bone turned under a parent scaled per axis is sheared: the node tree takes the polar
    rotation of its matrix, as the numpy core (the bake) does, not the rotation of its deformed
    Y and X axes (up to 0.3 % of the limb apart before)."""
    import bpy

    arm, obj, truth, params = sdef_limb(limb)
    pose(arm, 7, "NONE")
    arm.pose.bones["upper"].scale = parent_scale
    bpy.context.view_layer.update()
    m = skin_matrices(obj, arm)[1, :3, :3]
    rest = _np(obj.matrix_world.inverted() @ arm.matrix_world @ arm.data.bones["lower"].matrix_local)[:3, :3]
    rest /= np.linalg.norm(rest, axis=0)
    stretch = rest.T @ m.T @ m @ rest
    assert np.abs(stretch - np.diag(np.diag(stretch))).max() > 0.05    # sheared: not diagonal in its own axes
    assert_every_mode_is_the_cores(mods, obj, arm, truth, params)


@pytest.mark.parametrize("scale", [(1.0, 0.0, 1.0), (0.0, 1.0, 1.0), (1.0, 1.0, 0.0), (0.0, 0.0, 0.0)])
def test_a_bone_scaled_to_zero_equals_the_numpy_core_in_every_mode(limb, mods, scale):
    """A turned bone scaled to zero on an axis (to hide a part): its rotation is the polar factor
    of its flat matrix, as the numpy core (the bake) takes it; scaled to zero on every axis, its
    rest rotation, as the core's SVD gives (a user trial in session 22: 0.05-0.15 of the limb
    apart before)."""
    import bpy

    arm, obj, truth, params = sdef_limb(limb)
    pose(arm, 7, "NONE")
    arm.pose.bones["lower"].scale = scale
    bpy.context.view_layer.update()
    assert_every_mode_is_the_cores(mods, obj, arm, truth, params)


@pytest.mark.parametrize("flat", [(0.0, 1.0, 1.0), (0.0, 1.0, 0.0), (1e-30, 1.0, 1.0), (0.0, 0.0, 0.0)])
def test_a_flat_bone_among_sheared_ones_stays_finite(limb, flat):
    """A bone scaled to zero on some axes while some bone is sheared (the Newton steps run for
    every bone; here its turned child): its flat frame gives finite positions. (A column exactly
    zero, as on a bone along the world's axes, made the steps scale the other two by 1e10 a step
    into NaN: seen in a float32 simulation of the steps; here the columns are ~1e-8.)"""
    import bpy

    arm, obj, truth = limb
    bpy.ops.object.jointlimit_sdef_derive()
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    pose(arm, 8, "NONE")
    upper = arm.pose.bones["upper"]
    upper.rotation_quaternion, upper.location = (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    upper.scale = flat      # its deformed axes (nearly) zero; the turned child sheared
    bpy.context.view_layer.update()
    for mode in MODES:
        set_mode(obj, mode)
        assert np.isfinite(evaluated(obj)).all(), mode


def test_lbs_mode_equals_the_armature_modifier_and_other_vertices_are_untouched(limb):
    import bpy

    arm, obj, truth = limb
    bpy.ops.object.jointlimit_sdef_derive()
    pose(arm, 5)
    alone = evaluated(obj)
    bpy.ops.object.jointlimit_deformer_add(mode="SDEF")
    sdef = evaluated(obj)
    others = np.setdiff1d(np.arange(len(alone)), truth["two"])
    assert np.array_equal(sdef[others], alone[others])  # bit for bit
    assert np.abs(sdef[truth["two"]] - alone[truth["two"]]).max() > 1e-3
    set_mode(obj, "LBS")
    lbs = evaluated(obj)
    assert np.abs(lbs - alone).max() < 1e-5 * size(truth)


def test_frames_change_without_python(limb, mods):
    """Keyframed pose: scrubbing re-evaluates the deformer (no handler involved)."""
    import bpy

    arm, obj, truth = limb
    bpy.ops.object.jointlimit_sdef_derive()
    bpy.ops.object.jointlimit_deformer_add(mode="BEZIER")
    params = derived(obj, truth)
    for frame, seed in ((1, 3), (5, 4)):
        pose(arm, seed)
        for pb in arm.pose.bones:
            pb.keyframe_insert("rotation_quaternion", frame=frame)
            pb.keyframe_insert("scale", frame=frame)
            pb.keyframe_insert("location", frame=frame)
    scene = bpy.context.scene
    for frame in (5, 1, 3):
        scene.frame_set(frame)
        got = evaluated(obj)[truth["two"]]
        want = expected(mods, "BEZIER", obj, arm, truth, params)
        assert np.abs(got - want).max() < 1e-5 * size(truth), frame


def mmd_keys(obj, truth, params, swap_rows):
    """mmd_tools layout: absolute C/R0/R1 in shape keys, basis elsewhere; R0 of the lower group index."""
    rest = truth["rest"]
    obj.shape_key_add(name="Basis", from_mix=False)
    c, r0, r1 = params
    if swap_rows:  # the child's group has the lower index: its boundary is R0 in the mmd data
        r0, r1 = r1, r0
    for name, values in zip(("mmd_sdef_c", "mmd_sdef_r0", "mmd_sdef_r1"), (c, r0, r1)):
        full = rest.copy()
        full[truth["two"]] = values
        kb = obj.shape_key_add(name=name, from_mix=False)
        kb.value = 0.0  # as mmd_tools adds them (Blender 5 starts new keys at 1)
        kb.data.foreach_set("co", full.astype(np.float32).ravel())


@pytest.mark.parametrize("group_order", [("lower", "upper", "other"), ("upper", "lower", "other")])
def test_mmd_tools_layout(scene, mods, group_order):
    import bpy

    arm, obj, truth = build_limb(scene, group_order)
    heads = rest_heads(obj, arm)
    skin = mods["core.skinning"]
    idx = truth["two"]
    w = obj.matrix_world.inverted() @ arm.matrix_world
    tails = np.array([list(w @ arm.data.bones[n].tail_local) for n in NAMES])
    params = skin.derive_sdef_params(truth["rest"][idx], np.zeros(len(idx), int), np.ones(len(idx), int),
                                     truth["t"], heads, tails, boundary="extent", pad=0.2)
    mmd_keys(obj, truth, params, swap_rows=group_order[0] == "lower")
    params = [np.float32(p).astype(np.float64) for p in params]
    assert bpy.ops.object.jointlimit_deformer_add(source="MMD", mode="SDEF") == {"FINISHED"}
    pose(arm, 7)
    for mode in ("SDEF", "BEZIER"):
        set_mode(obj, mode)
        got = evaluated(obj)[idx]
        assert np.abs(got - expected(mods, mode, obj, arm, truth, params)).max() < 1e-5 * size(truth), mode


def test_mmd_vertices_without_sdef_data_stay_lbs(scene, mods):
    import bpy

    arm, obj, truth = build_limb(scene)
    idx = truth["two"]
    rest = truth["rest"]
    params = [rest[idx] + (0.0, 0.0, 0.01), rest[idx] + (0.0, 0.0, 0.2), rest[idx] - (0.0, 0.0, 0.2)]
    plain = idx[::2]  # half of the two-bone vertices carry no SDEF data (C = R0 = R1 = basis)
    for p in params:
        p[::2] = rest[plain]
    mmd_keys(obj, truth, params, swap_rows=True)
    pose(arm, 8)
    alone = evaluated(obj)
    bpy.ops.object.jointlimit_deformer_add(source="MMD")
    got = evaluated(obj)
    assert np.array_equal(got[plain], alone[plain])
    assert np.abs(got[idx[1::2]] - alone[idx[1::2]]).max() > 1e-4


def snapshot(obj):
    import bpy

    return {
        "modifiers": [(m.name, m.type) for m in obj.modifiers],
        "objects": sorted(o.name for o in bpy.data.objects),
        "meshes": sorted(m.name for m in bpy.data.meshes),
        "node_groups": len(bpy.data.node_groups),
        "attributes": sorted(a.name for a in obj.data.attributes),
        "shape_keys": [k.name for k in obj.data.shape_keys.key_blocks] if obj.data.shape_keys else [],
        "rest_flag": obj.add_rest_position_attribute,
        "vertex_groups": [g.name for g in obj.vertex_groups],
        "masks": [(m.name, m.vertex_group, m.invert_vertex_group) for m in obj.modifiers if m.type == "ARMATURE"],
    }


def test_remove_leaves_the_object_as_before_add(limb):
    import bpy

    arm, obj, truth = limb
    bpy.ops.object.jointlimit_sdef_derive()
    pose(arm, 9)
    before, positions = snapshot(obj), evaluated(obj)
    bpy.ops.object.jointlimit_deformer_add()
    added = snapshot(obj)
    assert added != before and len(added["objects"]) == len(before["objects"]) + 1
    assert bpy.ops.object.jointlimit_deformer_remove() == {"FINISHED"}
    assert snapshot(obj) == before  # derived jl_sdef_* attributes (user data) stay
    assert np.array_equal(evaluated(obj), positions)
    with pytest.raises(RuntimeError, match="no JointLimit deformer"):
        bpy.ops.object.jointlimit_deformer_remove()



@pytest.mark.parametrize("how", ["convert", "apply"])
def test_remove_clears_what_a_converted_or_applied_deformer_left(limb, mods, capfd, how):
    """The README's two ways to keep the deformed mesh (Convert to Mesh; the Armature modifier and
    the deformer applied in stack order) leave the helper, the skip group and the deformer's mesh
    attributes: Remove clears them (it answered 'no JointLimit deformer'; a user trial). Applying
    the Armature modifier first, the console says to apply the deformer next (it said to undo)."""
    import bpy

    arm, obj, truth = limb
    pose(arm, 9)
    bpy.ops.object.jointlimit_deformer_add()
    positions = evaluated(obj)
    capfd.readouterr()
    with bpy.context.temp_override(object=obj, active_object=obj, selected_objects=[obj],
                                   selected_editable_objects=[obj]):
        if how == "convert":
            bpy.ops.object.convert(target="MESH")
        else:
            for name in [m.name for m in obj.modifiers if m.type in ("ARMATURE", "NODES")]:
                bpy.ops.object.modifier_apply(modifier=name)
            assert "if you applied the Armature modifier, apply the deformer next" in capfd.readouterr().err
    assert not [m for m in obj.modifiers if m.type == "NODES"] and mods["deformer"].has_leftovers(obj)
    assert np.abs(evaluated(obj) - positions).max() < 1e-6
    assert bpy.ops.object.jointlimit_deformer_remove() == {"FINISHED"}
    tree = mods["deformer.tree"]
    assert not obj.children and tree.SKIP_GROUP not in obj.vertex_groups
    assert not [name for name in tree.MESH_ATTRS if name in obj.data.attributes]
    assert not [o for o in bpy.data.objects if o.name.endswith(mods["deformer"].HELPER_SUFFIX)]
    assert np.abs(evaluated(obj) - positions).max() < 1e-6
    assert not mods["deformer"].has_leftovers(obj)

@pytest.mark.parametrize("then", ["remove", "add"])
def test_a_mesh_joined_from_one_with_the_deformer(limb, mods, then):
    """Ctrl J of a mesh with the deformer into one without: the joined mesh holds the deformer's
    skip group and attributes, and the other's helper is left without a mesh. Remove clears it all
    (it answered 'no JointLimit deformer'); Add takes the group for its own (it called it the
    user's and refused) and removes the helper no mesh uses."""
    import bpy

    arm, obj, truth = limb
    other = obj.copy()
    other.data = obj.data.copy()
    other.name = "Other"
    bpy.context.scene.collection.objects.link(other)
    other.location.x += 2.0
    select_only_object(obj)
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    for o in bpy.context.view_layer.objects:
        o.select_set(o in (obj, other))
    bpy.context.view_layer.objects.active = other
    assert bpy.ops.object.join() == {"FINISHED"}
    tree, deformer = mods["deformer.tree"], mods["deformer"]
    assert tree.SKIP_GROUP in other.vertex_groups and deformer.find(other)[0] is None
    helpers = [o.name for o in bpy.data.objects if o.name.endswith(deformer.HELPER_SUFFIX)]
    assert len(helpers) == 1 and bpy.data.objects[helpers[0]].parent is None
    if then == "remove":
        assert deformer.has_leftovers(other)
        assert bpy.ops.object.jointlimit_deformer_remove() == {"FINISHED"}
        assert tree.SKIP_GROUP not in other.vertex_groups
        assert not [name for name in tree.MESH_ATTRS if name in other.data.attributes]
        assert not [o for o in bpy.data.objects if o.name.endswith(deformer.HELPER_SUFFIX)]
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    assert deformer.find(other)[0] is not None and deformer.is_enabled(other)
    assert [o.name for o in bpy.data.objects if o.name.endswith(deformer.HELPER_SUFFIX)] == \
        [deformer.find(other)[1].name]


def test_remove_also_clears_attributes_of_an_older_deformer_version(limb):
    """A file saved with tree version 2 carries ``jl_def_joint``; removing the deformer clears it."""
    import bpy

    arm, obj, truth = limb
    bpy.ops.object.jointlimit_sdef_derive()
    bpy.ops.object.jointlimit_deformer_add()
    obj.data.attributes.new("jl_def_joint", "FLOAT_VECTOR", "POINT")
    assert bpy.ops.object.jointlimit_deformer_remove() == {"FINISHED"}
    assert not [a.name for a in obj.data.attributes if a.name.startswith("jl_def_")]

def test_add_upgrades_deformers_of_an_older_tree_version(scene, mods, tmp_path):
    """A file saved with an older node tree (tag 5, and without the mesh and helper attributes
    version 6 added): *Add* on another mesh moves the old deformer to the current group (mode,
    blend and name kept), deletes the old group, and never leaves a '.001' group."""
    import bpy

    arm, obj, truth = build_limb(scene)
    bpy.ops.object.jointlimit_sdef_derive()
    other = obj.copy()
    other.data = obj.data.copy()
    other.name = "Other"
    scene.collection.objects.link(other)
    bpy.ops.object.jointlimit_deformer_add(use_selected=False, mode="SBS", blend=0.3)
    tree = mods["deformer.tree"]
    mod = obj.modifiers["JointLimit Deformer"]
    mod.name = "My Deformer"
    old = mod.node_group
    old[tree.TREE_TAG] = tree.TREE_VERSION - 1  # what an older version saved
    helper = mods["deformer"].find(obj)[1]
    obj.data.attributes.remove(obj.data.attributes[tree.ATTR_PAIR])
    helper.data.attributes.remove(helper.data.attributes[tree.ATTR_BONE_FIRST])
    del helper[mods["deformer"].HELPER_OPTIONS]
    path, arm_name = str(tmp_path / "old.blend"), arm.name
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    obj, other, arm = bpy.data.objects["Limb"], bpy.data.objects["Other"], bpy.data.objects[arm_name]
    for o in bpy.context.selected_objects:
        o.select_set(False)
    other.select_set(True)
    bpy.context.view_layer.objects.active = other
    assert bpy.ops.object.jointlimit_deformer_add(use_selected=False, mode="SDEF") == {"FINISHED"}
    groups = [ng for ng in bpy.data.node_groups if tree.is_deformer_tree(ng)]
    assert [ng.name for ng in groups] == [tree.TREE_NAME]
    assert groups[0][tree.TREE_TAG] == tree.TREE_VERSION
    assert not [ng.name for ng in bpy.data.node_groups if ng.name.endswith(".001")]
    mod = obj.modifiers["My Deformer"]
    assert mod.node_group == groups[0] and other.modifiers["JointLimit Deformer"].node_group == groups[0]
    assert mods["deformer"].get_mode(mod) == "SBS"
    key = tree.input_id(mod.node_group, tree.BLEND_INPUT)
    assert compat().modifier_input(mod, key) == pytest.approx(0.3)
    pose(arm, 2)
    params = derived(obj, truth)
    got = evaluated(obj)[truth["two"]]
    assert np.abs(got - expected(mods, "SBS", obj, arm, truth, params)).max() < 1e-5 * size(truth)
    assert len([o for o in bpy.data.objects if o.name.endswith(mods["deformer"].HELPER_SUFFIX)]) == 2


def test_an_unused_old_group_makes_way_for_the_current_one(limb, mods):
    import bpy

    tree = mods["deformer.tree"]
    old = bpy.data.node_groups.new(tree.TREE_NAME, "GeometryNodeTree")
    old[tree.TREE_TAG] = tree.TREE_VERSION - 1
    old.use_fake_user = True
    bpy.ops.object.jointlimit_sdef_derive()
    assert bpy.ops.object.jointlimit_deformer_add() == {"FINISHED"}
    assert [ng.name for ng in bpy.data.node_groups if tree.is_deformer_tree(ng)] == [tree.TREE_NAME]
    assert limb[1].modifiers["JointLimit Deformer"].node_group[tree.TREE_TAG] == tree.TREE_VERSION


def test_two_deformers_share_one_node_group_and_remove_keeps_it_in_use(scene):
    import bpy

    arm, obj, _ = build_limb(scene)
    bpy.ops.object.jointlimit_sdef_derive()
    other = obj.copy()
    other.data = obj.data.copy()
    scene.collection.objects.link(other)
    bpy.ops.object.jointlimit_deformer_add(use_selected=False)
    bpy.context.view_layer.objects.active = other
    bpy.ops.object.jointlimit_deformer_add(use_selected=False)
    groups = len(bpy.data.node_groups)
    bpy.ops.object.jointlimit_deformer_remove(use_selected=False)
    assert len(bpy.data.node_groups) == groups  # still used by obj
    assert obj.modifiers["JointLimit Deformer"].node_group is not None


def test_add_errors_leave_the_object_unchanged(limb):
    import bpy

    arm, obj, truth = limb
    before = snapshot(obj)
    with pytest.raises(RuntimeError, match="no derived SDEF attributes"):
        bpy.ops.object.jointlimit_deformer_add(source="DERIVED")
    with pytest.raises(RuntimeError, match="no mmd_tools SDEF shape keys"):
        bpy.ops.object.jointlimit_deformer_add(source="MMD")
    assert snapshot(obj) == before
    bpy.ops.object.jointlimit_sdef_derive()
    bpy.ops.object.jointlimit_deformer_add()
    with pytest.raises(RuntimeError, match="already has"):
        bpy.ops.object.jointlimit_deformer_add()
    bpy.ops.object.jointlimit_deformer_remove()
    obj.modifiers.remove(obj.modifiers["Armature"])
    refused_by_add_derive_and_bake(obj, "no Armature modifier")


def refused_by_add_derive_and_bake(obj, message):
    """Add, Derive and Bake each refuse ``obj`` with ``message`` and leave it as it was."""
    import bpy

    before = snapshot(obj)
    for op in (bpy.ops.object.jointlimit_deformer_add, bpy.ops.object.jointlimit_sdef_derive,
               bpy.ops.object.jointlimit_deformer_bake):
        with pytest.raises(RuntimeError, match=message):
            op()
    assert snapshot(obj) == before


@pytest.mark.parametrize("blend", [float("nan"), float("inf"), 2.0, -0.5])
def test_blend_outside_0_1_is_refused_by_add_bake_and_the_python_api(limb, mods, blend):
    """NaN passes Blender's min/max of the Blend property: Add, Bake and ``deformer.add`` refuse
    it (and any value outside [0, 1]) with the core's message and change nothing."""
    import bpy

    arm, obj, truth = limb
    bpy.ops.object.jointlimit_sdef_derive()
    before = snapshot(obj)
    message = r"blend s must lie in \[0, 1\], got"
    with pytest.raises(ValueError, match=message):
        mods["deformer"].add(bpy.context, obj, mode="SDEF", blend=blend)
    assert snapshot(obj) == before
    if blend != blend:  # Blender clamps any other value into the property's [0, 1] itself
        with pytest.raises(RuntimeError, match=message):
            bpy.ops.object.jointlimit_deformer_add(mode="SDEF", blend=blend)
        assert snapshot(obj) == before and "JointLimit Deformer" not in obj.modifiers
        with pytest.raises(RuntimeError, match=message):
            bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=1, frame_end=1, blend=blend)
        assert snapshot(obj) == before and obj.data.shape_keys is None
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF", blend=1.0) == {"FINISHED"}
    assert np.isfinite(evaluated(obj)).all()


def test_operators_and_reports_name_the_jointlimit_deformer(limb, capfd):
    import bpy

    ops = bpy.ops.object
    assert [op.get_rna_type().name for op in (ops.jointlimit_deformer_add, ops.jointlimit_deformer_remove,
                                              ops.jointlimit_deformer_bake, ops.jointlimit_deformer_toggle)] == [
        "Add JointLimit Deformer", "Remove JointLimit Deformer", "Bake JointLimit Deformer",
        "Toggle JointLimit Deformer"]
    capfd.readouterr()
    ops.jointlimit_deformer_add()
    ops.jointlimit_deformer_remove()
    out = capfd.readouterr().out
    assert "Added 'JointLimit Deformer' to 'Limb'" in out and "Removed 'JointLimit Deformer' from 'Limb'" in out


def test_toggle_without_a_deformer_is_an_error(limb):
    import bpy

    with pytest.raises(RuntimeError, match="has no JointLimit deformer"):
        bpy.ops.object.jointlimit_deformer_toggle()


def test_no_two_bone_vertices_is_an_error(scene):
    import bpy

    arm, obj, _ = build_limb(scene)
    obj.vertex_groups.remove(obj.vertex_groups["upper"])
    obj.vertex_groups.remove(obj.vertex_groups["other"])
    with pytest.raises(RuntimeError, match="no vertices on exactly two"):
        bpy.ops.object.jointlimit_sdef_derive()
    assert "jl_sdef_c" not in obj.data.attributes


def test_poll_needs_a_mesh_in_object_mode(limb):
    import bpy

    arm, obj, _ = limb
    bpy.context.view_layer.objects.active = arm
    for op in ("deformer_add", "deformer_remove", "deformer_bake", "sdef_derive"):
        assert not getattr(bpy.ops.object, "jointlimit_" + op).poll()


def animate(arm, frames):
    for frame, seed in frames:
        pose(arm, seed)
        for pb in arm.pose.bones:
            for path in ("rotation_quaternion", "scale", "location"):
                pb.keyframe_insert(path, frame=frame)


def shown_frames(obj, frames):
    """``{frame: the evaluated mesh}`` over ``frames``."""
    import bpy

    shown = {}
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        shown[frame] = evaluated(obj)
    return shown


def assert_plays(obj, shown, truth):
    """Each frame of ``shown`` (``shown_frames``) evaluates to the same mesh again."""
    for frame, want in shown_frames(obj, shown).items():
        assert want.shape == shown[frame].shape
        assert np.abs(want - shown[frame]).max() < 1e-5 * size(truth), frame


def test_bake_shape_keys_reproduce_the_deformer(limb, mods):
    import bpy

    arm, obj, truth = limb
    scene = bpy.context.scene
    animate(arm, ((1, 11), (4, 12)))
    bpy.ops.object.jointlimit_sdef_derive()
    params = derived(obj, truth)
    bpy.ops.object.jointlimit_deformer_add(mode="SDEF")
    live = {}
    for f in (1, 2, 3, 4):
        scene.frame_set(f)
        live[f] = evaluated(obj)
    scene.frame_set(2)
    assert bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=1, frame_end=4,
                                                   mode="SDEF") == {"FINISHED"}
    assert scene.frame_current == 2 and obj.modifiers["JointLimit Deformer"].show_viewport
    keys = obj.data.shape_keys.key_blocks
    tol = 1e-5 * size(truth)
    for f in (1, 2, 3, 4):
        kb = keys[f"jl_frame_{f:04d}"]
        co = np.empty(len(kb.data) * 3, np.float32)
        kb.data.foreach_get("co", co)
        assert np.abs(co.reshape(-1, 3) - live[f]).max() < tol, f
        scene.frame_set(f)
        want = expected(mods, "SDEF", obj, arm, truth, params)
        assert np.abs(co.reshape(-1, 3)[truth["two"]] - want).max() < tol
        assert kb.value == 1.0 and all(keys[f"jl_frame_{g:04d}"].value == 0.0 for g in (1, 2, 3, 4) if g != f)
    # with the armature and the deformer off, the keys alone play the animation
    bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=1, frame_end=4, mute_modifiers=True)
    assert not obj.modifiers["Armature"].show_viewport
    assert scene.frame_current == 4 and np.abs(evaluated(obj) - live[4]).max() < tol     # before any frame change
    for f in (1, 3):
        scene.frame_set(f)
        assert np.abs(evaluated(obj) - live[f]).max() < tol


def test_baked_keys_play_with_the_modifiers_before_and_after_the_deformer(limb):
    """Bake with Disable Modifiers on a stack Displace, Armature, deformer, Mirror: the baked keys
    hold the Displace's work, so it goes off with the Armature modifier and the deformer (it stayed
    on and displaced the baked shapes once more), and the Mirror after the deformer stays on (it
    went off: half the character played)."""
    import bpy

    arm, obj, truth = limb
    bpy.ops.object.jointlimit_sdef_derive()
    disp = obj.modifiers.new("Displace", "DISPLACE")
    disp.strength = 0.04
    bpy.ops.object.modifier_move_to_index(modifier=disp.name, index=0)
    mirror = obj.modifiers.new("Mirror", "MIRROR")
    mirror.use_axis = (True, False, False)
    animate(arm, ((1, 51), (3, 52)))
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    assert [m.name for m in obj.modifiers] == ["Displace", "Armature", "JointLimit Deformer", "Mirror"]
    live = shown_frames(obj, (1, 2, 3))
    assert bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=1, frame_end=3,
                                                   mute_modifiers=True) == {"FINISHED"}
    assert [m.name for m in obj.modifiers if m.show_viewport] == ["Mirror"]
    assert_plays(obj, live, truth)


def test_bake_meshes(limb):
    import bpy

    arm, obj, truth = limb
    animate(arm, ((1, 13), (2, 14)))
    bpy.ops.object.jointlimit_sdef_derive()
    bpy.ops.object.jointlimit_deformer_add(mode="BEZIER")
    bpy.context.scene.frame_set(2)
    live = evaluated(obj)
    bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=1, frame_end=2, mode="BEZIER",
                                            output="MESHES")
    mesh = bpy.data.meshes["Limb_jl_frame_0002"]
    co = np.empty(len(mesh.vertices) * 3, np.float32)
    mesh.vertices.foreach_get("co", co)
    assert np.abs(co.reshape(-1, 3) - live).max() < 1e-5 * size(truth)
    assert mesh.shape_keys is None and obj.data.shape_keys is None


@pytest.mark.parametrize("change", ["preserve_volume", "bbone_segments"])
def test_lbs_set_in_the_panel_after_the_armature_changed_is_the_armature_modifiers(limb, change):
    """Added in SDEF mode (the Armature modifier skips the two-bone vertices), then Preserve Volume
    or B-Bone segments switched on, then the Mode input set to LBS in the modifier panel: the
    two-bone vertices are the Armature modifier's own result, as Bake's LBS and ``set_mode`` give
    (the tree's plain LBS before: a user trial in session 22)."""
    import bpy

    arm, obj, truth = limb
    bpy.ops.object.jointlimit_sdef_derive()
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    if change == "preserve_volume":
        obj.modifiers["Armature"].use_deform_preserve_volume = True
    else:
        arm.data.bones["lower"].bbone_segments = 6
    pose(arm, 5)
    set_mode(obj, "LBS")
    live = evaluated(obj)
    deformer, armature = obj.modifiers["JointLimit Deformer"], obj.modifiers["Armature"]
    deformer.show_viewport = False
    vertex_group, armature.vertex_group = armature.vertex_group, ""     # the Armature modifier alone
    alone = evaluated(obj)
    armature.vertex_group = vertex_group
    assert np.abs(live - alone).max() < 1e-5 * size(truth)


def test_bake_in_lbs_mode_needs_no_sdef_data(limb):
    """A mesh without SDEF data (no deformer, nothing derived) bakes in LBS mode, which reads none:
    the keys are the Armature modifier's result; SBS, which needs the centres, says to derive them
    (a user trial in session 22: LBS was refused too)."""
    import bpy

    arm, obj, truth = limb
    pose(arm, 3)
    armature_only = evaluated(obj)
    assert bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=1, frame_end=1,
                                                   mode="LBS") == {"FINISHED"}
    co = np.empty(len(obj.data.vertices) * 3, np.float32)
    obj.data.shape_keys.key_blocks["jl_frame_0001"].data.foreach_get("co", co)
    assert np.abs(co.reshape(-1, 3) - armature_only).max() < 1e-5 * size(truth)
    with pytest.raises(RuntimeError, match="no SDEF data.*Derive SDEF Parameters"):
        bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=1, frame_end=1, mode="SBS")


@pytest.mark.parametrize("source", ["AUTO", "MMD"])
def test_incomplete_mmd_tools_keys_are_named_and_not_passed_over(scene, mods, source):
    """mmd_tools SDEF shape keys with one missing (a broken import): Add refuses, naming the
    missing key, in the SDEF Data modes that read them (Automatic derived new parameters without
    a word before), and the mesh is left as it was; Derived still adds."""
    import bpy

    arm, obj, truth = build_limb(scene)
    mmd_keys(obj, truth, mods["core.skinning"].derive_sdef_params(
        truth["rest"][truth["two"]], np.zeros(len(truth["two"]), int), np.ones(len(truth["two"]), int), truth["t"],
        rest_heads(obj, arm), np.array([list(obj.matrix_world.inverted() @ arm.matrix_world @ arm.data.bones[n].tail_local)
                                        for n in NAMES]), boundary="extent", pad=0.2), swap_rows=False)
    obj.shape_key_remove(obj.data.shape_keys.key_blocks["mmd_sdef_r1"])
    before = snapshot(obj)
    with pytest.raises(RuntimeError, match="mmd_sdef_r1 missing"):
        bpy.ops.object.jointlimit_deformer_add(source=source, mode="SDEF")
    assert snapshot(obj) == before and "jl_sdef_c" not in obj.data.attributes
    assert bpy.ops.object.jointlimit_sdef_derive() == {"FINISHED"}
    assert bpy.ops.object.jointlimit_deformer_add(source="DERIVED", mode="SDEF") == {"FINISHED"}


def test_bake_bad_range_changes_nothing(limb):
    import bpy

    arm, obj, truth = limb
    bpy.ops.object.jointlimit_sdef_derive()
    before = snapshot(obj)
    with pytest.raises(RuntimeError, match="Bad frame range"):
        bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=5, frame_end=2)
    with pytest.raises(RuntimeError, match="Bad frame range 3..1"):
        bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=3, frame_end=1)
    assert snapshot(obj) == before and obj.data.shape_keys is None


def test_bake_uses_start_and_end_only_without_the_scene_range(limb):
    import bpy

    arm, obj, truth = limb
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 4, 5
    bpy.ops.object.jointlimit_sdef_derive()
    bpy.ops.object.jointlimit_deformer_bake(frame_start=3, frame_end=1)  # the scene's range: 4..5
    assert [k.name for k in obj.data.shape_keys.key_blocks] == ["Basis", "jl_frame_0004", "jl_frame_0005"]
    bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=2, frame_end=2)
    assert [k.name for k in obj.data.shape_keys.key_blocks][-1] == "jl_frame_0002"


def test_deformer_survives_save_and_reload(limb, tmp_path):
    import bpy

    arm, obj, truth = limb
    bpy.ops.object.jointlimit_sdef_derive()
    bpy.ops.object.jointlimit_deformer_add(mode="BEZIER")
    pose(arm, 21)
    before = evaluated(obj)
    path = tmp_path / "deformer.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.open_mainfile(filepath=str(path))
    assert np.abs(evaluated(bpy.data.objects["Limb"]) - before).max() < 1e-6 * size(truth)


def _render(scene, path):
    import bpy

    scene.render.filepath = str(path)
    bpy.ops.render.render(write_still=True)
    image = bpy.data.images.load(str(path))
    pixels = np.empty(len(image.pixels), np.float32)
    image.pixels.foreach_get(pixels)
    bpy.data.images.remove(image)
    return pixels.reshape(-1, 4)[:, :3]


def test_final_render_uses_the_deformer(limb, tmp_path):
    """A Workbench render (render depsgraph, hidden helper) of the deformed limb matches a
    render of a static copy of the viewport result, and differs from LBS."""
    import bpy
    from mathutils import Quaternion, Vector

    arm, obj, truth = limb
    scene = bpy.context.scene
    bpy.ops.object.jointlimit_sdef_derive()
    bpy.ops.object.jointlimit_deformer_add(mode="SDEF")
    arm.pose.bones["lower"].rotation_mode = "QUATERNION"
    arm.pose.bones["lower"].rotation_quaternion = Quaternion((1.0, 0.0, 0.0), 1.6)
    bpy.context.view_layer.update()
    copy = bpy.data.objects.new("Copy", obj.data.copy())
    copy.data.vertices.foreach_set("co", evaluated(obj).astype(np.float32).ravel())
    copy.matrix_world = obj.matrix_world
    scene.collection.objects.link(copy)
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.resolution_x, scene.render.resolution_y = 240, 240
    scene.display.shading.light = "FLAT"
    scene.display.shading.color_type = "SINGLE"
    scene.display.shading.single_color = (1.0, 0.1, 0.05)    # far from the grey background
    cam = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    scene.collection.objects.link(cam)
    centre = obj.matrix_world @ Vector(truth["rest"][truth["two"]].mean(0))
    cam.location = centre + Vector((0.0, -4.0, 0.5))
    cam.rotation_euler = (centre - cam.location).to_track_quat("-Z", "Y").to_euler()
    scene.camera = cam
    renders = {}
    for name, shown, mode in (("deformer", obj, "SDEF"), ("copy", copy, "SDEF"), ("lbs", obj, "LBS")):
        for o in (obj, copy):
            o.hide_render = o is not shown
        set_mode(obj, mode)
        renders[name] = _render(scene, tmp_path / f"{name}.png")
    silhouette = np.abs(renders["copy"] - renders["copy"][0]).max(1) > 0.05
    assert 100 < silhouette.sum() < 0.9 * len(silhouette)   # the limb is in the picture
    differ = lambda a, b: int((np.abs(renders[a] - renders[b]).max(1) > 0.05).sum())  # noqa: E731
    assert differ("deformer", "copy") <= 2
    assert differ("lbs", "copy") > 10


# ----------------------------------------------------------------------------------------------
# Issue 20: shape keys, mmd_tools both ways, several meshes, three-group vertices, modifier stacks


def add_morphs(obj, truth):
    """Two shape keys: ``bulge`` (+0.05 in x everywhere) and ``wave`` (random offsets)."""
    rest = truth["rest"]
    obj.shape_key_add(name="Basis", from_mix=False)
    rng = np.random.default_rng(31)
    offsets = {"bulge": np.tile((0.05, 0.0, 0.0), (len(rest), 1)), "wave": rng.normal(scale=0.03, size=rest.shape)}
    for name, offset in offsets.items():
        kb = obj.shape_key_add(name=name, from_mix=False)
        kb.value = 0.0
        kb.data.foreach_set("co", (rest + offset).astype(np.float32).ravel())
    return offsets


def morphed(obj, truth, offsets):
    """Rest positions with the current (evaluated) shape-key values."""
    import bpy

    keys = obj.data.shape_keys.evaluated_get(bpy.context.evaluated_depsgraph_get()).key_blocks
    out = truth["rest"].copy()
    for name, offset in offsets.items():
        kb = keys[name]
        full = np.empty(len(kb.data) * 3, np.float32)
        obj.data.shape_keys.key_blocks[name].data.foreach_get("co", full)
        out += keys[name].value * (full.reshape(-1, 3).astype(np.float64) - truth["rest"])
    return out


@pytest.mark.parametrize("skip", [True, False], ids=["armature-skips", "input-stage"])
def test_shape_keys_survive_with_animated_values(limb, mods, skip):
    """Per frame with animated key values: LBS equals the Armature modifier alone on every vertex,
    SBS / SDEF / Bezier equal the numpy core on the morphed positions; both when the Armature
    modifier skips the two-bone vertices and when it cannot (Preserve Volume: the input stage
    stores the positions it receives)."""
    import bpy

    arm, obj, truth = limb
    obj.modifiers["Armature"].use_deform_preserve_volume = not skip
    scene = bpy.context.scene
    offsets = add_morphs(obj, truth)
    bpy.ops.object.jointlimit_sdef_derive()
    params = derived(obj, truth)
    animate(arm, ((1, 41), (4, 42)))
    blocks = obj.data.shape_keys.key_blocks
    for frame, bulge, wave in ((1, 1.0, 0.0), (3, 0.2, 0.7), (4, 0.6, -0.5)):
        blocks["bulge"].value, blocks["wave"].value = bulge, wave
        blocks["bulge"].keyframe_insert("value", frame=frame)
        blocks["wave"].keyframe_insert("value", frame=frame)
    assert bpy.ops.object.jointlimit_deformer_add(mode="LBS") == {"FINISHED"}
    tree = mods["deformer.tree"]
    idx, tol = truth["two"], 1e-5 * size(truth)
    seen = []
    for frame in (1, 2, 4, 3):
        scene.frame_set(frame)
        v = morphed(obj, truth, offsets)
        seen.append(v[idx].copy())
        for mode in MODES:
            mods["deformer"].set_mode(obj, mode)
            # LBS passes the Armature modifier's result through; the other modes let it skip the
            # two-bone vertices unless it cannot (Preserve Volume)
            skipping = skip and mode != "LBS"
            assert (obj.modifiers["Armature"].vertex_group == tree.SKIP_GROUP) == skipping
            assert ("JointLimit Deformer Input" in obj.modifiers) != skipping
            got = evaluated(obj)
            if mode == "LBS":
                mods["deformer"].set_enabled(obj, False)
                alone = evaluated(obj)
                mods["deformer"].set_enabled(obj, True)
                assert np.abs(got - alone).max() < tol, frame
                if not skip:
                    continue  # Preserve Volume: the Armature modifier's LBS is dual-quaternion skinning
            want = mods["core.skinning"].deform(mode, v[idx], np.zeros(len(idx), int), np.ones(len(idx), int),
                                                truth["t"], *params, matrices=skin_matrices(obj, arm),
                                                rest_heads=rest_heads(obj, arm))
            assert np.abs(got[idx] - want).max() < tol, (frame, mode)
    assert np.abs(seen[0] - seen[1]).max() > 1e-2 and np.abs(seen[0] - truth["rest"][idx]).max() > 4e-2


def test_shape_keys_bake(limb):
    import bpy

    arm, obj, truth = limb
    add_morphs(obj, truth)
    obj.data.shape_keys.key_blocks["wave"].value = 0.8
    bpy.ops.object.jointlimit_deformer_add(mode="SDEF")
    pose(arm, 43)
    live = evaluated(obj)
    bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=1, frame_end=1, output="MESHES")
    mesh = bpy.data.meshes[f"{obj.data.name}_jl_frame_0001"]
    co = np.empty(len(mesh.vertices) * 3, np.float32)
    mesh.vertices.foreach_get("co", co)
    assert np.abs(co.reshape(-1, 3) - live).max() < 1e-5 * size(truth)


def test_baked_keys_play_alone_with_animated_morphs(limb):
    """Bake with Disable Modifiers: the baked keys hold each frame's whole shape, morphs included,
    so the morph keys are muted and playback equals the live deformer frame by frame."""
    import bpy

    arm, obj, truth = limb
    add_morphs(obj, truth)
    blocks = obj.data.shape_keys.key_blocks
    for frame, bulge in ((1, 1.0), (3, 0.2)):
        blocks["bulge"].value = bulge
        blocks["bulge"].keyframe_insert("value", frame=frame)
    animate(arm, ((1, 41), (3, 42)))
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    live = shown_frames(obj, (1, 2, 3))
    assert bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=1, frame_end=3,
                                                   mute_modifiers=True) == {"FINISHED"}
    assert blocks["bulge"].mute and blocks["wave"].mute and not blocks["jl_frame_0002"].mute
    assert_plays(obj, live, truth)
    # baked again: evaluated as before the first bake (modifiers on, morphs playing), so the same keys
    first = {f: np.array([v.co for v in blocks[f"jl_frame_{f:04d}"].data]) for f in (1, 2, 3)}
    assert bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=1, frame_end=3,
                                                   mute_modifiers=True) == {"FINISHED"}
    for f in (1, 2, 3):
        again = np.array([v.co for v in blocks[f"jl_frame_{f:04d}"].data])
        assert np.abs(again - first[f]).max() < 1e-6 * size(truth), f
    assert blocks["bulge"].mute and not obj.modifiers["Armature"].show_viewport
    assert bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=1, frame_end=1) == {"FINISHED"}
    assert not blocks["bulge"].mute and obj.modifiers["Armature"].show_viewport   # switched on again, kept on


def mmd_layout(obj):
    keys = obj.data.shape_keys.key_blocks
    out = {}
    for name in ("mmd_sdef_c", "mmd_sdef_r0", "mmd_sdef_r1"):
        co = np.empty(len(keys[name].data) * 3, np.float32)
        keys[name].data.foreach_get("co", co)
        out[name] = co.reshape(-1, 3).astype(np.float64)
        assert keys[name].relative_key == obj.data.shape_keys.reference_key and keys[name].value == 0.0
    return out


def test_derive_says_when_it_replaces_a_models_own_mmd_sdef_data(scene, mods):
    """A PMX model's own mmd_sdef_* keys replaced by Derive's Write as mmd_tools SDEF Data: the
    report says so (it said only 'also as mmd_tools shape keys')."""
    import bpy
    from modal_harness import OperatorStandIn

    arm, obj, truth = build_limb(scene)
    op = OperatorStandIn(bpy.types.OBJECT_OT_jointlimit_sdef_derive, write_mmd=True, use_selected=False)
    assert op.execute(bpy.context) == {"FINISHED"}
    assert not any("replacing" in text for _, text in op.reports), op.reports
    op = OperatorStandIn(bpy.types.OBJECT_OT_jointlimit_sdef_derive, write_mmd=True, use_selected=False)
    assert op.execute(bpy.context) == {"FINISHED"}
    assert any("replacing the SDEF data they held: undo to keep it" in text for _, text in op.reports), op.reports
    op = OperatorStandIn(bpy.types.OBJECT_OT_jointlimit_sdef_derive, write_mmd=False, use_selected=False)
    assert op.execute(bpy.context) == {"FINISHED"}      # (the mmd keys, read first by Automatic, stay)
    assert any("keep their values (Write as mmd_tools SDEF Data updates them)" in text for _, text in op.reports)


def test_derive_after_add_is_the_users_and_remove_keeps_it(limb, mods):
    """Derive run on a mesh whose deformer derived its parameters itself on Add: the report says the
    deformer keeps the parameters it was added with, and the new ones are the user's, which Remove
    then keeps (Remove deleted them as Add's own, and Add derived the defaults again)."""
    import bpy
    from modal_harness import OperatorStandIn

    arm, obj, truth = limb
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}    # (derives: no SDEF data)
    op = OperatorStandIn(bpy.types.OBJECT_OT_jointlimit_sdef_derive, centre="joint", use_selected=False)
    assert op.execute(bpy.context) == {"FINISHED"}
    assert any("Remove it and Add it again to use these" in text for _, text in op.reports), op.reports
    c = derived(obj, truth)[0]
    assert bpy.ops.object.jointlimit_deformer_remove() == {"FINISHED"}
    assert np.array_equal(derived(obj, truth)[0], c)

@pytest.mark.parametrize("group_order", [("lower", "upper", "other"), ("upper", "lower", "other")])
def test_derive_writes_mmd_layout_and_it_reads_back_the_same(scene, mods, group_order):
    """derive -> write mmd_tools layout -> read (source MMD) -> the same deformation as the derived
    attributes; R0 belongs to the lower group index, other vertices hold their basis position."""
    import bpy

    arm, obj, truth = build_limb(scene, group_order)
    assert bpy.ops.object.jointlimit_sdef_derive(write_mmd=True) == {"FINISHED"}
    layout = mmd_layout(obj)
    c, r0, r1 = derived(obj, truth)
    idx, rest = truth["two"], truth["rest"]
    others = np.setdiff1d(np.arange(len(rest)), idx)
    lower_first = group_order.index("upper") < group_order.index("lower")  # parent on the lower index
    assert np.allclose(layout["mmd_sdef_c"][idx], c, atol=1e-6)
    assert np.allclose(layout["mmd_sdef_r0"][idx], r0 if lower_first else r1, atol=1e-6)
    assert np.allclose(layout["mmd_sdef_r1"][idx], r1 if lower_first else r0, atol=1e-6)
    for values in layout.values():
        assert np.array_equal(values[others], rest[others].astype(np.float32))
    assert np.abs(layout["mmd_sdef_c"][idx] - rest[idx]).max(1).min() > 0.0  # every vertex reads as SDEF
    pose(arm, 44)
    results = {}
    for source in ("DERIVED", "MMD"):
        assert bpy.ops.object.jointlimit_deformer_add(source=source, mode="SDEF") == {"FINISHED"}
        results[source] = {}
        for mode in MODES:
            set_mode(obj, mode)
            results[source][mode] = evaluated(obj)
        bpy.ops.object.jointlimit_deformer_remove()
    for mode in MODES:
        assert np.abs(results["MMD"][mode] - results["DERIVED"][mode]).max() < 1e-6 * size(truth), mode
        want = expected(mods, mode, obj, arm, truth, (c, r0, r1))
        assert np.abs(results["MMD"][mode][idx] - want).max() < 1e-5 * size(truth), mode


@pytest.mark.parametrize("group_order", [("lower", "upper", "other"), ("upper", "lower", "other")])
def test_write_mmd_warns_when_pmx_export_would_swap_r0_and_r1(scene, mods, group_order, capfd):
    """mmd_tools' PMX export writes a vertex's bones in its bone order (MMD bone ID, then name) and
    keeps R0, which its layout gives the lower vertex-group index: where the two orders differ the
    export swaps R0 and R1, and Write as mmd_tools SDEF Data says so (the count)."""
    import bpy

    arm, obj, truth = build_limb(scene, group_order)
    mmd = importlib.import_module(mods["deformer"].__name__ + ".mmd")
    n = len(truth["two"])
    swapped = group_order.index("upper") < group_order.index("lower")   # by name "lower" goes first
    capfd.readouterr()
    assert bpy.ops.object.jointlimit_sdef_derive(write_mmd=True) == {"FINISHED"}
    out = capfd.readouterr().out
    assert (f"{n} SDEF vertices have their two vertex groups in the opposite order" in out) == swapped, out
    prep = mods["deformer"].prepare(obj, "MMD", False)
    assert mmd.export_swapped(obj, prep.two) == (n if swapped else 0)
    for i, name in enumerate(group_order[:2]):   # MMD bone IDs in the groups' order: nothing swaps
        arm.pose.bones[name]["mmd_bone"] = {"bone_id": i}
    assert mmd.export_swapped(obj, prep.two) == 0


def bind_like_mmd_tools(obj, arm):
    """mmd_tools' SDEF bind as its FnSDEF.bind builds it: a 'mmd_sdef_skinning' key (value 0,
    driven), the SDEF vertices (C differs from the basis) in 'mmd_sdef_mask', which masks the
    Armature modifier 'mmd_armature' (inverted) and the key. The driver's Python function is
    mmd_tools' own and absent here; the key holds the skinned positions of the current pose."""
    obj.modifiers["Armature"].name = "mmd_armature"
    keys = obj.data.shape_keys.key_blocks
    n = len(obj.data.vertices)
    c = np.empty(n * 3, np.float32)
    keys["mmd_sdef_c"].data.foreach_get("co", c)
    basis = np.empty(n * 3, np.float32)
    keys[0].data.foreach_get("co", basis)
    sdef = np.flatnonzero((c != basis).reshape(-1, 3).any(1))
    kb = obj.shape_key_add(name="mmd_sdef_skinning", from_mix=False)
    kb.value = 0.0
    obj.vertex_groups.new(name="mmd_sdef_mask").add(sdef.tolist(), 1.0, "REPLACE")
    mod = obj.modifiers["mmd_armature"]
    mod.vertex_group = "mmd_sdef_mask"
    mod.invert_vertex_group = True
    kb.vertex_group = "mmd_sdef_mask"
    fc = obj.data.shape_keys.driver_add('key_blocks["mmd_sdef_skinning"].value')
    fc.driver.type = "SCRIPTED"
    var = fc.driver.variables.new()
    var.name, var.type = "obj", "SINGLE_PROP"
    var.targets[0].id = obj
    var.targets[0].data_path = "name"
    fc.driver.use_self = True
    fc.driver.expression = "mmd_sdef_driver(self, obj, bulk_update=True, use_skip=True, use_scale=False)"
    return kb, fc, sdef


def bound_and_posed(scene, mods):
    """A limb with derived parameters in mmd_tools' layout, bound like mmd_tools binds it and posed,
    its skinning key holding what mmd_tools' driver would write (the SDEF positions, value 1):
    ``(arm, obj, truth, key block, driver F-curve, skinned positions)``."""
    import bpy

    arm, obj, truth = build_limb(scene)
    bpy.ops.object.jointlimit_sdef_derive(write_mmd=True)
    params = derived(obj, truth)
    kb, fc, sdef = bind_like_mmd_tools(obj, arm)
    assert set(sdef) == set(truth["two"])
    pose(arm, 45)
    skinned = truth["rest"].copy()
    skinned[truth["two"]] = expected(mods, "SDEF", obj, arm, truth, params)
    kb.data.foreach_set("co", skinned.astype(np.float32).ravel())
    fc.mute = True  # the driver function is mmd_tools' (absent); hold the value it returns
    kb.value = 1.0
    fc.mute = False
    return arm, obj, truth, kb, fc, skinned


def test_take_over_an_mmd_tools_binding_and_restore_it(scene, mods):
    import bpy

    arm, obj, truth, kb, fc, skinned = bound_and_posed(scene, mods)
    bound = evaluated(obj)
    before = snapshot(obj)
    with pytest.raises(RuntimeError, match="Take Over"):
        bpy.ops.object.jointlimit_deformer_add()
    assert snapshot(obj) == before and obj.modifiers["mmd_armature"].vertex_group == "mmd_sdef_mask"
    assert bpy.ops.object.jointlimit_deformer_add(take_over=True, mode="SDEF") == {"FINISHED"}
    mod = obj.modifiers["mmd_armature"]
    # mmd_tools' mask gives way to the deformer's own: the Armature modifier skips the two-bone vertices
    assert mod.vertex_group == mods["deformer.tree"].SKIP_GROUP and kb.mute and fc.mute
    got = evaluated(obj)
    tol = 1e-5 * size(truth)
    assert np.abs(got[truth["two"]] - skinned[truth["two"]]).max() < tol  # deformed once, not twice
    set_mode(obj, "LBS")
    lbs = evaluated(obj)
    mods["deformer"].set_enabled(obj, False)
    assert mod.vertex_group == ""
    assert np.abs(lbs - evaluated(obj)).max() < tol  # the Armature modifier alone moves every vertex
    assert bpy.ops.object.jointlimit_deformer_remove() == {"FINISHED"}
    assert snapshot(obj) == before
    assert mod.vertex_group == "mmd_sdef_mask" and mod.invert_vertex_group and not kb.mute and not fc.mute
    assert np.array_equal(evaluated(obj), bound)


def test_remove_after_the_modifier_was_deleted_gives_the_taken_over_binding_back(scene, mods):
    """The deformer's modifier deleted by hand after a take-over: Remove clears what is left and
    gives mmd_tools' binding back as Add found it (the leftover path deleted the helper that kept
    it; a review)."""
    import bpy

    arm, obj, truth, kb, fc, skinned = bound_and_posed(scene, mods)
    before = snapshot(obj)
    assert bpy.ops.object.jointlimit_deformer_add(take_over=True, mode="SDEF") == {"FINISHED"}
    obj.modifiers.remove(obj.modifiers["JointLimit Deformer"])
    assert mods["deformer"].has_leftovers(obj)
    assert bpy.ops.object.jointlimit_deformer_remove() == {"FINISHED"}
    mod = obj.modifiers["mmd_armature"]
    assert mod.vertex_group == "mmd_sdef_mask" and mod.invert_vertex_group and not kb.mute and not fc.mute
    assert snapshot(obj) == before

def test_mmd_tools_binding_again_switches_the_deformer_off(scene, mods, capfd):
    """After the take-over, mmd_tools' Bind SDEF (its key and driver playing, its mask back on
    the Armature modifier) and its Use SDEF off (the mask cleared) would let the SDEF vertices be
    deformed twice: the deformer switches itself off on the next update (saying why); Toggle
    takes over again; Remove gives back the binding as Add found it."""
    import bpy

    arm, obj, truth, kb, fc, skinned = bound_and_posed(scene, mods)
    bound = evaluated(obj)
    before = snapshot(obj)
    assert bpy.ops.object.jointlimit_deformer_add(take_over=True, mode="SDEF") == {"FINISHED"}
    ours = evaluated(obj)
    mod, tol = obj.modifiers["mmd_armature"], 1e-5 * size(truth)
    deformer = mods["deformer"]

    def bind():     # what mmd_tools' Bind SDEF (and Assemble All) does to the shared parts
        mod.vertex_group, mod.invert_vertex_group = "mmd_sdef_mask", True
        kb.mute = fc.mute = False

    bind()
    capfd.readouterr()
    assert np.abs(evaluated(obj) - bound).max() < tol  # deformed once, by mmd_tools' key
    assert not deformer.is_enabled(obj) and "switched off" in capfd.readouterr().err
    assert bpy.ops.object.jointlimit_deformer_toggle() == {"FINISHED"}  # on: takes over again
    assert deformer.is_enabled(obj) and kb.mute and fc.mute
    assert mod.vertex_group == mods["deformer.tree"].SKIP_GROUP
    assert np.abs(evaluated(obj) - ours).max() < tol
    mod.vertex_group, mod.invert_vertex_group = "", False  # mmd_tools' Use SDEF off: no mask, key muted
    deformer.set_enabled(obj, False)
    alone = evaluated(obj)      # the Armature modifier alone on every vertex
    deformer.set_enabled(obj, True)
    mod.vertex_group, mod.invert_vertex_group = "", False
    assert np.abs(evaluated(obj) - alone).max() < tol and not deformer.is_enabled(obj)
    assert bpy.ops.object.jointlimit_deformer_remove() == {"FINISHED"}
    assert snapshot(obj) == before and not kb.mute and mod.vertex_group == "mmd_sdef_mask"
    assert np.array_equal(evaluated(obj), bound)


def test_binding_check_leaves_edit_mode_and_odd_inputs_alone(limb, mods, capfd):
    """Switched on in Edit Mode the deformer masks the Armature modifier again and stays on (also
    after leaving Edit Mode); a Bone Frames input that is not a mesh makes no handler fail."""
    import bpy

    arm, obj, truth = limb
    deformer = mods["deformer"]
    assert bpy.ops.object.jointlimit_sdef_derive() == {"FINISHED"}
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    pose(arm, 47)
    on = evaluated(obj)
    bpy.ops.object.mode_set(mode="EDIT")
    deformer.set_enabled(obj, False)
    bpy.context.evaluated_depsgraph_get()
    deformer.set_enabled(obj, True)
    assert obj.modifiers["Armature"].vertex_group == mods["deformer.tree"].SKIP_GROUP
    bpy.context.evaluated_depsgraph_get()
    bpy.ops.object.mode_set(mode="OBJECT")
    assert np.abs(evaluated(obj) - on).max() < 1e-6 * size(truth) and deformer.is_enabled(obj)
    mod = obj.modifiers["JointLimit Deformer"]
    empty = bpy.data.objects.new("Empty", None)
    frames = mods["deformer.tree"].input_id(mod.node_group, mods["deformer.tree"].FRAMES_INPUT)
    mods["deformer"].compat.set_modifier_input(mod, frames, empty)
    capfd.readouterr()
    assert deformer.binding_conflict(obj) is None
    obj.update_tag()
    bpy.context.evaluated_depsgraph_get()
    assert "Error" not in capfd.readouterr().err


def test_bake_of_a_mesh_bound_by_mmd_tools_says_what_to_do(scene):
    import bpy

    arm, obj, truth = build_limb(scene)
    bpy.ops.object.jointlimit_sdef_derive(write_mmd=True)
    bind_like_mmd_tools(obj, arm)
    with pytest.raises(RuntimeError, match="bound by mmd_tools' SDEF .*Take Over"):
        bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=1, frame_end=2)
    assert bpy.ops.object.jointlimit_deformer_add(take_over=True) == {"FINISHED"}
    assert bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=1, frame_end=2) == {"FINISHED"}


def test_add_remove_and_bake_on_several_meshes(scene):
    """Add on every selected mesh (deriving parameters where there are none), Remove and Bake too;
    a failing mesh is reported while the others proceed."""
    import bpy

    arm, obj, truth = build_limb(scene)
    others = []
    for i in range(2):
        other = obj.copy()
        other.data = obj.data.copy()
        other.name = f"Limb{i}"
        scene.collection.objects.link(other)
        others.append(other)
    plain = bpy.data.objects.new("Plain", bpy.data.meshes.new("Plain"))  # no Armature modifier
    scene.collection.objects.link(plain)
    meshes = [obj] + others
    before = {o.name: snapshot(o) for o in meshes}
    for o in meshes + [plain]:
        o.select_set(True)
    pose(arm, 46)
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    for o in meshes:
        assert "JointLimit Deformer" in o.modifiers and "jl_sdef_c" in o.data.attributes
    assert not plain.modifiers
    results = [evaluated(o) for o in meshes]
    assert all(np.abs(r - results[0]).max() < 1e-6 for r in results[1:])
    assert bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=1, frame_end=1,
                                                   output="MESHES") == {"FINISHED"}
    for o in meshes:
        assert f"{o.data.name}_jl_frame_0001" in bpy.data.meshes
    assert bpy.ops.object.jointlimit_deformer_remove() == {"FINISHED"}
    baked = {f"{o.data.name}_jl_frame_0001" for o in meshes}
    for o in meshes:
        now = snapshot(o)
        assert set(now.pop("meshes")) == set(before[o.name]["meshes"]) | baked
        assert now == {k: v for k, v in before[o.name].items() if k != "meshes"}  # derived-on-add attrs go too
    obj.select_set(False)
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.object.jointlimit_deformer_add(use_selected=False) == {"FINISHED"}
    assert "JointLimit Deformer" not in others[0].modifiers


def test_three_group_vertices_follow_the_armature_or_use_their_two_strongest(limb, mods):
    import bpy

    arm, obj, truth = limb
    rest = truth["rest"]
    three = np.flatnonzero(np.array([len(v.groups) for v in obj.data.vertices]) == 3)
    pose(arm, 47)
    alone = evaluated(obj)
    _, prep = mods["deformer"].add(bpy.context, obj, mode="SDEF")  # what the operator reports
    assert prep.two.many == len(three) > 0 and not set(prep.two.index) & set(three)
    assert np.array_equal(evaluated(obj)[three], alone[three])
    bpy.ops.object.jointlimit_deformer_remove()
    assert bpy.ops.object.jointlimit_deformer_add(mode="LBS", strongest_two=True) == {"FINISHED"}
    got = evaluated(obj)[three]
    # the two strongest of upper 0.2, lower 0.3, other 0.5: lower (3/8) and other (5/8)
    mw, aw = obj.matrix_world, arm.matrix_world
    m = [_np(mw.inverted() @ aw @ arm.pose.bones[n].matrix @ arm.data.bones[n].matrix_local.inverted()
             @ aw.inverted() @ mw) for n in ("lower", "other")]
    h = np.c_[rest[three], np.ones(len(three))]
    want = 0.375 * (h @ m[0].T)[:, :3] + 0.625 * (h @ m[1].T)[:, :3]
    assert np.abs(got - want).max() < 1e-5 * size(truth)
    assert np.abs(got - alone[three]).max() > 1e-3


def test_add_with_the_two_strongest_refuses_parameters_derived_without_them(limb, mods):
    """Derive without Two Strongest Groups leaves the vertices on three groups out (their C, R0, R1
    their own position); Add with it then left them to plain LBS while its report said they use
    their two strongest: it refuses, naming how many and what to do; derived with it, they get
    SDEF (they differ from LBS)."""
    import bpy

    from modal_harness import OperatorStandIn

    arm, obj, truth = limb
    three = np.flatnonzero(np.array([len(v.groups) for v in obj.data.vertices]) == 3)
    assert bpy.ops.object.jointlimit_sdef_derive() == {"FINISHED"}
    op = OperatorStandIn(bpy.types.OBJECT_OT_jointlimit_deformer_add, mode="SDEF", strongest_two=True)
    assert op.execute(bpy.context) == {"CANCELLED"}
    assert any(f"{len(three)} of its two-bone vertices" in text and "derive the SDEF parameters again" in text
               for _, text in op.reports), op.reports
    assert "JointLimit Deformer" not in obj.modifiers
    assert bpy.ops.object.jointlimit_sdef_derive(strongest_two=True) == {"FINISHED"}
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF", strongest_two=True) == {"FINISHED"}
    pose(arm, 80)
    sdef = evaluated(obj)[three]
    bpy.ops.object.jointlimit_deformer_remove()
    assert bpy.ops.object.jointlimit_deformer_add(mode="LBS", strongest_two=True) == {"FINISHED"}
    assert np.abs(sdef - evaluated(obj)[three]).max() > 1e-3 * size(truth)


def test_vertices_with_a_tiny_total_weight_stay_where_the_armature_modifier_leaves_them(limb, mods):
    """Weights adding up to no more than 1e-4 (4e-5 + 3e-5): Blender's Armature modifier leaves
    the vertex where it is, and so does the deformer (it normalised the weights and moved the
    vertex by a tenth of the limb)."""
    import bpy

    arm, obj, truth = limb
    tiny = truth["two"][:8]
    for name, weight in (("upper", 4e-5), ("lower", 3e-5)):
        obj.vertex_groups[name].add(tiny.tolist(), weight, "REPLACE")
    pose(arm, 21)
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    deformed, plain = evaluated(obj), plain_result(obj, mods)
    assert np.abs(deformed[tiny] - plain[tiny]).max() < 1e-6 * size(truth)
    others = np.setdiff1d(truth["two"], tiny)
    assert np.abs(deformed[others] - plain[others]).max() > 1e-3 * size(truth)     # the deformer at work there


def test_the_armature_modifier_skips_the_two_bone_vertices(limb, mods):
    """Each vertex is deformed once: the Armature modifier skips the two-bone vertices (an inverted
    mask with exactly them), the deformer moves them; switched off, the Armature modifier alone
    deforms every vertex again; Bake follows the Armature modifier, not the mask."""
    import bpy

    arm, obj, truth = limb
    tree, deformer = mods["deformer.tree"], mods["deformer"]
    bpy.ops.object.jointlimit_sdef_derive(strongest_two=True)
    pose(arm, 52)
    alone = evaluated(obj)
    three = np.flatnonzero(np.array([len(v.groups) for v in obj.data.vertices]) == 3)
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF", strongest_two=True) == {"FINISHED"}
    arm_mod, mod = obj.modifiers["Armature"], obj.modifiers["JointLimit Deformer"]
    assert (arm_mod.vertex_group, arm_mod.invert_vertex_group) == (tree.SKIP_GROUP, True)
    assert [m.name for m in obj.modifiers] == ["Armature", "JointLimit Deformer"]  # no input stage needed
    group = obj.vertex_groups[tree.SKIP_GROUP].index
    skipped = [v.index for v in obj.data.vertices for g in v.groups if g.group == group and g.weight == 1.0]
    assert set(skipped) == set(truth["two"]) | set(three)
    with_deformer = evaluated(obj)
    mod.show_viewport = False  # the modifier's own switch off: the skipped vertices would stay unskinned,
    bpy.context.view_layer.update()     # so the deformer goes off wholly (deformer.watch), as Toggle does
    assert not mod.show_viewport and arm_mod.vertex_group == ""
    assert np.abs(evaluated(obj) - alone).max() < 1e-6 * size(truth)
    assert bpy.ops.object.jointlimit_deformer_toggle() == {"FINISHED"}
    assert mod.show_viewport and arm_mod.vertex_group == tree.SKIP_GROUP
    assert bpy.ops.object.jointlimit_deformer_toggle() == {"FINISHED"}  # deformer.set_enabled(obj, False)
    assert not mod.show_viewport and arm_mod.vertex_group == ""
    assert np.abs(evaluated(obj) - alone).max() < 1e-6 * size(truth)
    assert bpy.ops.object.jointlimit_deformer_toggle() == {"FINISHED"}
    assert mod.show_viewport and arm_mod.vertex_group == tree.SKIP_GROUP
    assert np.array_equal(evaluated(obj), with_deformer)
    deformer.set_enabled(obj, False)
    deformer.set_enabled(obj, True)
    assert np.array_equal(evaluated(obj), with_deformer)
    # Bake with Two Strongest Groups off: the three-group vertices are the Armature modifier's
    assert bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=1, frame_end=1,
                                                   mode="SDEF", output="MESHES", strongest_two=False) == {"FINISHED"}
    baked = bpy.data.meshes["Limb_jl_frame_0001"]
    co = np.empty(len(baked.vertices) * 3, np.float32)
    baked.vertices.foreach_get("co", co)
    assert np.abs(co.reshape(-1, 3)[three] - alone[three]).max() < 1e-5 * size(truth)
    assert (arm_mod.vertex_group, arm_mod.invert_vertex_group) == (tree.SKIP_GROUP, True)
    assert bpy.ops.object.jointlimit_deformer_remove() == {"FINISHED"}
    assert arm_mod.vertex_group == "" and not arm_mod.invert_vertex_group
    assert tree.SKIP_GROUP not in obj.vertex_groups
    assert np.array_equal(evaluated(obj), alone)


def render_positions(obj, path):
    """The object's vertices as a render evaluates them (an OBJ export in render mode, world space)."""
    import bpy

    for o in bpy.context.view_layer.objects:
        o.select_set(o == obj)
    bpy.ops.wm.obj_export(filepath=str(path), apply_modifiers=True, export_eval_mode="DAG_EVAL_RENDER",
                          export_selected_objects=True, export_normals=False, export_uv=False,
                          export_materials=False, forward_axis="Y", up_axis="Z")
    return np.array([[float(x) for x in line.split()[1:4]] for line in open(path) if line.startswith("v ")])


def test_toggle_holds_for_renders_a_renamed_modifier_and_a_mixed_selection(limb, mods, tmp_path):
    """Off means the Armature modifier alone in renders too; the mask is found after the Armature
    modifier is renamed; one direction for the whole selection; the user's active vertex group
    stays active through Add and Remove."""
    import bpy

    arm, obj, truth = limb
    bpy.ops.object.jointlimit_sdef_derive()
    pose(arm, 53)
    plain = render_positions(obj, tmp_path / "plain.obj")
    obj.vertex_groups.active_index = 0
    active = obj.vertex_groups.active.name
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    assert obj.vertex_groups.active.name == active
    arm_mod = obj.modifiers["Armature"]
    assert obj.modifiers["JointLimit Deformer"].show_in_editmode == arm_mod.show_in_editmode
    arm_mod.name = "Armature.body"
    assert bpy.ops.object.jointlimit_deformer_toggle() == {"FINISHED"}
    assert arm_mod.vertex_group == ""
    assert np.abs(render_positions(obj, tmp_path / "off.obj") - plain).max() < 1e-5
    assert bpy.ops.object.jointlimit_deformer_toggle() == {"FINISHED"}
    assert arm_mod.vertex_group == mods["deformer.tree"].SKIP_GROUP
    assert np.abs(render_positions(obj, tmp_path / "on.obj") - plain).max() > 1e-3
    # a second mesh switched off, the first on: one toggle switches both the active one's way
    other = obj.copy()
    other.data = obj.data.copy()
    bpy.context.scene.collection.objects.link(other)
    bpy.context.view_layer.objects.active = other
    mods["deformer"].remove(other)
    assert bpy.ops.object.jointlimit_deformer_add(use_selected=False) == {"FINISHED"}
    mods["deformer"].set_enabled(other, False)
    obj.select_set(True)
    other.select_set(True)
    assert bpy.ops.object.jointlimit_deformer_toggle() == {"FINISHED"}
    assert mods["deformer"].is_enabled(obj) and mods["deformer"].is_enabled(other)
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.object.jointlimit_deformer_remove(use_selected=False) == {"FINISHED"}
    assert arm_mod.vertex_group == "" and not arm_mod.invert_vertex_group
    assert mods["deformer.tree"].SKIP_GROUP not in obj.vertex_groups
    assert obj.vertex_groups.active.name == active


def test_switching_keeps_the_armature_modifier_consistent(limb, mods):
    """set_mode while off stays off; on again re-checks whether the Armature modifier may skip
    (a user's mask or Preserve Volume added meanwhile); set_mode on a copy sharing the helper, or
    in Edit Mode, leaves the configuration; a deformer modifier deleted by hand leaves a mask that
    Remove clears; a user's group with the skip group's name is refused."""
    import bpy

    arm, obj, truth = limb
    deformer, tree = mods["deformer"], mods["deformer.tree"]
    tol = 1e-5 * size(truth)
    bpy.ops.object.jointlimit_sdef_derive()
    pose(arm, 56)
    alone = evaluated(obj)
    arm_mod = obj.modifiers["Armature"]
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    sdef = evaluated(obj)
    deformer.set_enabled(obj, False)
    for mode in ("LBS", "SDEF"):
        deformer.set_mode(obj, mode)
        assert arm_mod.vertex_group == "" and np.abs(evaluated(obj) - alone).max() < tol
    deformer.set_enabled(obj, True)
    assert arm_mod.vertex_group == tree.SKIP_GROUP and np.abs(evaluated(obj) - sdef).max() < tol
    # Preserve Volume switched on while off: on again, the input stage takes over
    deformer.set_enabled(obj, False)
    arm_mod.use_deform_preserve_volume = True
    alone_pv = evaluated(obj)
    deformer.set_enabled(obj, True)
    assert arm_mod.vertex_group == "" and "JointLimit Deformer Input" in obj.modifiers
    set_mode(obj, "LBS")  # as in the modifier panel
    assert np.abs(evaluated(obj) - alone_pv).max() < tol
    arm_mod.use_deform_preserve_volume = False
    deformer.set_mode(obj, "SDEF")
    assert arm_mod.vertex_group == tree.SKIP_GROUP and np.abs(evaluated(obj) - sdef).max() < tol
    # a mask of the user's set while off stays
    deformer.set_enabled(obj, False)
    arm_mod.vertex_group = "upper"
    deformer.set_enabled(obj, True)
    assert arm_mod.vertex_group == "upper" and not arm_mod.invert_vertex_group
    arm_mod.vertex_group = ""
    deformer.set_mode(obj, "SDEF")
    assert arm_mod.vertex_group == tree.SKIP_GROUP
    # a copy sharing the helper: its set_mode leaves the (shared) configuration
    copy = obj.copy()
    bpy.context.scene.collection.objects.link(copy)
    deformer.set_mode(copy, "LBS")
    assert arm_mod.vertex_group == tree.SKIP_GROUP and np.abs(evaluated(obj) - sdef).max() < tol
    bpy.data.objects.remove(copy)
    # Edit Mode: the mode changes, the configuration waits
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    deformer.set_mode(obj, "LBS")
    bpy.ops.object.mode_set(mode="OBJECT")
    deformer.set_mode(obj, "SDEF")
    assert np.abs(evaluated(obj) - sdef).max() < tol
    # the deformer's modifier deleted by hand: Remove clears the leftover mask
    obj.modifiers.remove(obj.modifiers["JointLimit Deformer"])
    assert deformer.has_leftovers(obj)
    assert bpy.ops.object.jointlimit_deformer_remove() == {"FINISHED"}
    assert arm_mod.vertex_group == "" and tree.SKIP_GROUP not in obj.vertex_groups
    assert not obj.children and "jl_def_mask" not in obj.data.attributes  # the helper and attributes too
    assert np.abs(evaluated(obj) - alone).max() < tol
    # a group of the user's with the skip group's name
    for m in [m for m in obj.modifiers if m.type == "NODES"]:
        obj.modifiers.remove(m)
    obj.vertex_groups.new(name=tree.SKIP_GROUP).add([0, 1, 2], 0.5, "REPLACE")
    with pytest.raises(RuntimeError, match="vertex group of its own named 'jl_deformer_skip'"):
        bpy.ops.object.jointlimit_deformer_add()
    assert tree.SKIP_GROUP in obj.vertex_groups and arm_mod.vertex_group == ""


def test_b_bone_segments_keep_the_armature_modifier_on_every_vertex(limb, mods, capfd):
    """With B-Bone segments the Armature modifier's LBS is not the straight bones' LBS, so it keeps
    deforming every vertex and LBS mode (even set on the modifier input) passes its result through;
    Add says which bones have segments."""
    import bpy

    arm, obj, truth = limb
    arm.data.bones["lower"].bbone_segments = 8
    bpy.ops.object.jointlimit_sdef_derive()
    pose(arm, 54)
    alone = evaluated(obj)
    capfd.readouterr()
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    assert "1 bone with B-Bone segments (lower)" in capfd.readouterr().out
    assert obj.modifiers["Armature"].vertex_group == "" and "JointLimit Deformer Input" in obj.modifiers
    set_mode(obj, "LBS")  # as in the modifier panel
    assert np.abs(evaluated(obj) - alone).max() < 1e-6 * size(truth)
    # an LBS bake is what LBS mode shows: the Armature modifier's result, bent segments included
    frame = bpy.context.scene.frame_current
    assert bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=frame, frame_end=frame,
                                                   mode="LBS") == {"FINISHED"}
    kb = obj.data.shape_keys.key_blocks[f"jl_frame_{frame:04d}"]
    co = np.empty(len(kb.data) * 3, np.float32)
    kb.data.foreach_get("co", co)
    assert np.abs(co.reshape(-1, 3) - alone).max() < 1e-6 * size(truth)


def test_remove_keeps_what_another_object_on_the_same_mesh_needs(limb, mods):
    import bpy

    arm, obj, truth = limb
    bpy.ops.object.jointlimit_sdef_derive()
    pose(arm, 55)
    other = obj.copy()  # the same mesh
    bpy.context.scene.collection.objects.link(other)
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}  # both selected
    assert "JointLimit Deformer" in other.modifiers
    before = evaluated(other)
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.object.jointlimit_deformer_remove(use_selected=False) == {"FINISHED"}
    assert np.array_equal(evaluated(other), before)
    assert obj.modifiers["Armature"].vertex_group == ""
    bpy.context.view_layer.objects.active = other
    assert bpy.ops.object.jointlimit_deformer_remove(use_selected=False) == {"FINISHED"}
    assert mods["deformer.tree"].SKIP_GROUP not in obj.vertex_groups and "jl_def_mask" not in obj.data.attributes


def test_modifier_stack_deforming_modifiers_work_others_are_refused(limb, mods):
    import bpy

    arm, obj, truth = limb
    bpy.ops.object.jointlimit_sdef_derive()
    pose(arm, 48)
    sub = obj.modifiers.new("Subdivision", "SUBSURF")
    bpy.ops.object.modifier_move_to_index(modifier=sub.name, index=0)
    before = snapshot(obj)
    with pytest.raises(RuntimeError, match="'Subdivision'.*before the Armature modifier"):
        bpy.ops.object.jointlimit_deformer_add()
    assert snapshot(obj) == before
    with pytest.raises(RuntimeError, match="apply it or move it after"):
        bpy.ops.object.jointlimit_deformer_add()
    obj.modifiers.remove(sub)
    mirror = obj.modifiers.new("Mirror", "MIRROR")     # mirroring vertex groups: moved after, the mirrored
    bpy.ops.object.modifier_move_to_index(modifier=mirror.name, index=0)    # half would copy the other's pose
    with pytest.raises(RuntimeError, match=r"'Mirror'.*: apply it \(after it, the mirrored half"):
        bpy.ops.object.jointlimit_deformer_add()
    mirror.use_mirror_vertex_groups = False
    with pytest.raises(RuntimeError, match="'Mirror'.*apply it or move it after"):
        bpy.ops.object.jointlimit_deformer_add()
    obj.modifiers.remove(mirror)
    arm_mod = obj.modifiers["Armature"]
    arm_mod.use_multi_modifier = True
    with pytest.raises(RuntimeError, match="Multi Modifier"):
        bpy.ops.object.jointlimit_deformer_add()
    arm_mod.use_multi_modifier = False
    # a deforming modifier first (not the Armature modifier), a topology change after it
    disp = obj.modifiers.new("Displace", "DISPLACE")
    disp.strength = 0.04
    bpy.ops.object.modifier_move_to_index(modifier=disp.name, index=0)
    obj.modifiers.new("Subdivision after", "SUBSURF").levels = 1
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    assert [m.name for m in obj.modifiers] == ["Displace", "Armature", "JointLimit Deformer", "Subdivision after"]
    sdef = evaluated(obj)
    mods["deformer"].set_enabled(obj, False)
    alone = evaluated(obj)
    assert np.abs(sdef - alone).max() > 1e-3
    mods["deformer"].set_enabled(obj, True)
    assert np.array_equal(evaluated(obj), sdef)
    # LBS: the Armature modifier deforms every vertex and the deformer passes its result through
    mods["deformer"].set_mode(obj, "LBS")
    stack = ["Displace", "JointLimit Deformer Input", "Armature", "JointLimit Deformer", "Subdivision after"]
    assert [m.name for m in obj.modifiers] == stack
    assert np.abs(evaluated(obj) - alone).max() < 1e-5 * size(truth)
    mods["deformer"].set_mode(obj, "SDEF")
    assert np.abs(evaluated(obj) - sdef).max() < 1e-5 * size(truth)
    # an Armature modifier with Preserve Volume deforms every vertex: the input stage stores what it receives
    assert bpy.ops.object.jointlimit_deformer_remove() == {"FINISHED"}
    arm_mod.use_deform_preserve_volume = True
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    assert [m.name for m in obj.modifiers] == stack
    assert arm_mod.vertex_group == "" and mods["deformer.tree"].SKIP_GROUP not in obj.vertex_groups
    set_mode(obj, "LBS")
    lbs = evaluated(obj)
    mods["deformer"].set_enabled(obj, False)
    alone = evaluated(obj)
    assert np.abs(lbs - alone).max() < 1e-5 * size(truth)
    # the input stage switched off: the deformer leaves the Armature modifier's result alone
    mods["deformer"].set_enabled(obj, True)
    obj.modifiers["JointLimit Deformer Input"].show_viewport = False
    set_mode(obj, "SDEF")
    assert np.array_equal(evaluated(obj), alone)


def test_a_vertex_on_the_bones_line_stays_sdef_in_the_mmd_layout(scene, mods):
    """A two-bone vertex whose centre C is its own position (a vertex on the bones' line, as at the
    joint) would be written with C equal to its basis position, which mmd_tools reads as "not
    SDEF" (its vectors compare equal within one float32 step): C is moved four steps, so mmd_tools
    and the deformer read it as SDEF."""
    import importlib

    import bpy
    from mathutils import Vector

    arm, obj, truth = build_limb(scene)
    assert bpy.ops.object.jointlimit_sdef_derive() == {"FINISHED"}
    prep = mods["deformer"].prepare(obj, "DERIVED", False)
    rest = np.array([v.co for v in obj.data.vertices], np.float32)
    c = np.array(prep.c, np.float64)
    k = len(prep.two.index) // 2
    i = int(prep.two.index[k])
    c[k] = rest[i]
    mmd = importlib.import_module(mods["deformer"].__name__ + ".mmd")
    mmd.write_layout(obj, prep.two, c, prep.r0, prep.r1)
    layout = mmd_layout(obj)
    gap = layout["mmd_sdef_c"][i].astype(np.float64) - rest[i]
    assert Vector(layout["mmd_sdef_c"][i]) != Vector(rest[i])                  # mmd_tools' test
    assert np.linalg.norm(gap) * 12.5 >= 0.001     # its PMX export's (at its default scale)
    assert np.linalg.norm(gap) < 2e-4
    core = prep.r1[k] - prep.r0[k]
    assert np.linalg.norm(np.cross(gap, core)) < 1e-3 * np.linalg.norm(gap) * np.linalg.norm(core)   # along it
    sdef = np.flatnonzero((layout["mmd_sdef_c"] != rest).any(axis=1))
    assert i in sdef and len(sdef) == len(prep.two.index)


# --- what is done to the character after Add (deformer.watch) ------------------------------------------------------


def plain_result(obj, mods):
    """The mesh as the Armature modifier alone deforms it (the deformer switched off a moment)."""
    deformer = mods["deformer"]
    on = deformer.is_enabled(obj)
    deformer.set_enabled(obj, False)
    out = evaluated(obj)
    if on:
        deformer.set_enabled(obj, True)
    return out


def select_only_object(obj):
    import bpy

    for o in bpy.context.view_layer.objects:
        o.select_set(False)
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj


@pytest.mark.parametrize("with_rig", [True, False], ids=["mesh_and_rig", "mesh_only"])
def test_a_copy_of_the_character_gets_a_helper_of_its_own(limb, mods, with_rig):
    """Shift D of a character: the copy's deformer reads a bone-frames helper of its own, parented
    to it and deformed by its own armature. Mesh and rig copied and moved away together, posed as
    the original: the copy's mesh as the original's; the mesh alone copied, the original then
    deleted: the copy as before."""
    import bpy

    arm, obj, truth = limb
    deformer = mods["deformer"]
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    helper = deformer.find(obj)[1]
    assert helper.hide_get() and not helper.visible_get()       # hidden from Add on
    for o in bpy.context.view_layer.objects:
        o.select_set(o in ((obj, arm) if with_rig else (obj,)))
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.object.duplicate() == {"FINISHED"}
    copy = bpy.context.view_layer.objects.active
    arm2 = next(o for o in bpy.context.selected_objects if o.type == "ARMATURE") if with_rig else arm
    bpy.context.view_layer.update()
    own = deformer.find(copy)[1]
    assert own is not helper and own.parent is copy and own.hide_get()
    assert next(m for m in own.modifiers if m.type == "ARMATURE").object is arm2
    assert deformer.find(obj)[1] is helper and helper.parent is obj
    if with_rig:
        for o in (copy, arm2):
            o.location.x += 3.0
        pose(arm, 7)
        pose(arm2, 7)
        assert np.abs(evaluated(copy) - evaluated(obj)).max() < 1e-5 * size(truth)
    else:
        pose(arm, 7)
        before = evaluated(copy)
        bpy.data.objects.remove(obj)
        bpy.context.view_layer.update()
        assert deformer.is_enabled(copy)
        assert np.abs(evaluated(copy) - before).max() < 1e-6 * size(truth)


def test_the_deformer_follows_the_armature_modifier_switches(limb, mods):
    """The Armature modifier switched off (to see the rest shape) switches the deformer off with
    it, viewport and render each, and on again with it; one switched off by Toggle stays off."""
    import bpy

    arm, obj, truth = limb
    deformer = mods["deformer"]
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    pose(arm, 3)
    posed = evaluated(obj)
    arm_mod, mod = obj.modifiers["Armature"], deformer.find(obj)[0]
    arm_mod.show_viewport = False
    bpy.context.view_layer.update()
    assert not mod.show_viewport and mod.show_render
    assert np.abs(evaluated(obj) - truth["rest"]).max() < 1e-6 * size(truth)     # the rest shape, whole
    arm_mod.show_render = False
    bpy.context.view_layer.update()
    assert not mod.show_render
    arm_mod.show_viewport = arm_mod.show_render = True
    bpy.context.view_layer.update()
    assert mod.show_viewport and mod.show_render
    assert np.abs(evaluated(obj) - posed).max() < 1e-6 * size(truth)
    assert bpy.ops.object.jointlimit_deformer_toggle() == {"FINISHED"}     # off by hand
    arm_mod.show_viewport = False
    bpy.context.view_layer.update()
    arm_mod.show_viewport = True
    bpy.context.view_layer.update()
    assert not deformer.is_enabled(obj)
    # followed off, then the flag lost (an override's helper keeps no custom property over a
    # reload): on again with the Armature modifier, the deformer goes off wholly, the mesh whole
    assert bpy.ops.object.jointlimit_deformer_toggle() == {"FINISHED"}
    arm_mod.show_viewport = False
    bpy.context.view_layer.update()
    helper = deformer.find(obj)[1]
    for flag in deformer.watch.FOLLOWS.values():
        helper.pop(flag, None)
    arm_mod.show_viewport = True
    bpy.context.view_layer.update()
    assert not deformer.is_enabled(obj) and arm_mod.vertex_group == ""
    assert np.abs(evaluated(obj) - plain_result(obj, mods)).max() == 0.0


def _delete_helper(obj, arm, deformer):
    import bpy

    bpy.data.objects.remove(deformer.find(obj)[1])


def _subdivide(obj, arm, deformer):
    import bpy

    select_only_object(obj)
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.ops.mesh.select_all(action="SELECT")
    bpy.ops.mesh.subdivide(number_cuts=1)
    bpy.ops.object.mode_set(mode="OBJECT")


def _delete_bone(obj, arm, deformer):
    import bpy

    select_only_object(arm)
    bpy.ops.object.mode_set(mode="EDIT")
    arm.data.edit_bones.remove(arm.data.edit_bones["lower"])
    bpy.ops.object.mode_set(mode="OBJECT")
    select_only_object(obj)


def _another_rig_without_its_bones(obj, arm, deformer):
    import bpy

    other = bpy.data.objects.new("OtherRig", bpy.data.armatures.new("OtherRig"))
    bpy.context.scene.collection.objects.link(other)
    obj.modifiers["Armature"].object = other


def _modifier_moved(kind, where):
    """An edit adding a modifier of ``kind`` and moving it ``where`` in the stack: "top" (before the
    Armature modifier), "between" (after it, before the deformer)."""
    def edit(obj, arm, deformer):
        obj.modifiers.new(kind.title(), kind)
        mods = list(obj.modifiers)
        at = mods.index(next(m for m in mods if m.type == "ARMATURE"))
        obj.modifiers.move(len(mods) - 1, 0 if where == "top" else at + 1)
        order = [m.type for m in obj.modifiers]
        assert order.index(kind) < order.index("ARMATURE") if where == "top" else \
            order.index("ARMATURE") < order.index(kind) < order.index("NODES")
    return edit


def _deformer_moved_up(obj, arm, deformer):
    mod = deformer.find(obj)[0]
    obj.modifiers.move(list(obj.modifiers).index(mod), 0)


@pytest.mark.parametrize("edit", [_delete_helper, _subdivide, _delete_bone, _another_rig_without_its_bones,
                                  _modifier_moved("SUBSURF", "top"), _modifier_moved("MIRROR", "top"),
                                  _modifier_moved("CORRECTIVE_SMOOTH", "between"), _modifier_moved("SUBSURF", "between"),
                                  _deformer_moved_up],
                         ids=["helper_deleted", "vertices_added", "bone_deleted", "rig_without_its_bones",
                              "subdivision_moved_to_the_top", "mirror_moved_to_the_top",
                              "corrective_smooth_between", "subdivision_between", "deformer_moved_up"])
def test_a_deformer_that_would_deform_wrongly_switches_off(limb, mods, capfd, edit):
    """After an edit that leaves the deformer's data wrong, the Armature modifier alone deforms
    every vertex (the deformer switched off, the console says why), and Toggle refuses to switch
    it on with the reason."""
    import bpy

    arm, obj, truth = limb
    deformer = mods["deformer"]
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    pose(arm, 5)
    capfd.readouterr()
    edit(obj, arm, deformer)
    bpy.context.view_layer.update()
    assert not deformer.is_enabled(obj) and "is switched off" in capfd.readouterr().err
    assert np.isfinite(evaluated(obj)).all()
    assert np.abs(evaluated(obj) - plain_result(obj, mods)).max() == 0.0
    with pytest.raises(RuntimeError, match="cannot be switched on"):
        bpy.ops.object.jointlimit_deformer_toggle()
    assert not deformer.is_enabled(obj)


@pytest.mark.parametrize("toggled", [False, True])
def test_a_deformer_off_for_a_deleted_bone_goes_on_again_when_the_bone_is_back(limb, mods, capfd, toggled):
    """A rig generated anew deletes its bones and makes them again: the deformer switched off for
    the missing bone goes on again by itself once the bone is back (it stayed off for good, and
    its message said to remove and add it again), unless it was switched off by hand meanwhile."""
    import bpy

    arm, obj, truth = limb
    deformer = mods["deformer"]
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    pose(arm, 5)
    want = evaluated(obj)
    capfd.readouterr()
    select_only_object(arm)
    bpy.ops.object.mode_set(mode="EDIT")
    lower = arm.data.edit_bones["lower"]
    kept = (lower.head.copy(), lower.tail.copy(), lower.roll, lower.parent.name, lower.use_connect)
    arm.data.edit_bones.remove(lower)
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.context.view_layer.update()
    assert not deformer.is_enabled(obj) and "switches on again by itself" in capfd.readouterr().err
    if toggled:
        select_only_object(obj)
        deformer.set_enabled(obj, False)
    select_only_object(arm)
    bpy.ops.object.mode_set(mode="EDIT")
    lower = arm.data.edit_bones.new("lower")
    lower.head, lower.tail, lower.roll = kept[:3]
    lower.parent, lower.use_connect = arm.data.edit_bones[kept[3]], kept[4]
    arm.data.edit_bones["other"].parent = lower
    bpy.ops.object.mode_set(mode="OBJECT")
    pose(arm, 5)
    bpy.context.view_layer.update()
    assert deformer.is_enabled(obj) != toggled
    assert ("is switched on again" in capfd.readouterr().err) != toggled
    if not toggled:
        assert np.abs(evaluated(obj) - want).max() < 1e-5 * size(truth)


def test_modifiers_after_the_deformer_and_deforming_ones_before_the_armature_keep_it_on(limb, mods, capfd):
    """A Corrective Smooth after the deformer and a Displace before the Armature modifier (the
    stacks the deformer follows) leave it on and say nothing."""
    import bpy

    arm, obj, truth = limb
    deformer = mods["deformer"]
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    pose(arm, 5)
    capfd.readouterr()
    obj.modifiers.new("Smooth", "CORRECTIVE_SMOOTH")
    obj.modifiers.new("Displace", "DISPLACE")
    obj.modifiers.move(len(obj.modifiers) - 1, 0)
    bpy.context.view_layer.update()
    assert deformer.is_enabled(obj) and "switched off" not in capfd.readouterr().err


def test_another_rig_with_the_same_bones_is_followed(limb, mods):
    """The Armature modifier given a copy of the rig (a new version with the same bones) posed as
    the original was: the helper follows it, the mesh is as it was on the original."""
    import bpy

    arm, obj, truth = limb
    deformer = mods["deformer"]
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    pose(arm, 11)
    want = evaluated(obj)
    other = arm.copy()
    other.data = arm.data.copy()
    bpy.context.scene.collection.objects.link(other)
    obj.modifiers["Armature"].object = other
    for pb in arm.pose.bones:   # the old rig at rest: a helper still reading it would show
        pb.rotation_quaternion, pb.location, pb.scale = (1, 0, 0, 0), (0, 0, 0), (1, 1, 1)
    bpy.context.view_layer.update()
    assert deformer.is_enabled(obj)
    assert np.abs(evaluated(obj) - want).max() < 1e-5 * size(truth)


def test_bones_multiplying_weights_by_their_envelope_are_refused(limb, mods):
    import bpy

    arm, obj, truth = limb
    arm.data.bones["upper"].use_envelope_multiply = True
    before = snapshot(obj)
    with pytest.raises(RuntimeError, match="Multiply Vertex Group by Envelope"):
        bpy.ops.object.jointlimit_deformer_add(mode="SDEF")
    assert snapshot(obj) == before


def overridden_character(scene, arm, obj, tmp_path):
    """Save ``obj`` (with its rig ``arm``) as a character library, open an empty file and bring
    the character in as an editable library override; the overridden mesh."""
    import bpy

    scene.collection.objects.unlink(arm)
    collection = save_in_library(scene, obj, "Character", str(tmp_path / "character.blend"))
    collection.objects.link(arm)
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "character.blend"), copy=True)
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    with bpy.data.libraries.load(str(tmp_path / "character.blend"), link=True) as (_found, wanted):
        wanted.collections = ["Character"]
    override = wanted.collections[0].override_hierarchy_create(scene, bpy.context.view_layer, do_fully_editable=True)
    return next(o for o in override.objects if o.type == "MESH" and o.override_library is not None)


def test_add_bake_and_derive_refuse_what_a_library_override_would_not_keep(limb, mods, tmp_path):
    """An overridden character's mesh (its mesh data the library's): Add refuses in one line (it
    raised a traceback linking its helper into the overridden collection); Bake into shape keys
    refuses (the keys went into the linked mesh and were gone on reopening, while Disable
    Modifiers' switches stayed: the skin at rest); Bake as Meshes works."""
    import bpy

    arm, obj, truth = limb
    bpy.ops.object.jointlimit_sdef_derive()
    mesh = overridden_character(bpy.context.scene, arm, obj, tmp_path)
    select_only_object(mesh)
    with pytest.raises(RuntimeError, match="is linked or a library override: the deformer's data"):
        bpy.ops.object.jointlimit_deformer_add(mode="SDEF")
    assert mods["deformer"].find(mesh)[0] is None
    shown = [m.show_viewport for m in mesh.modifiers]
    with pytest.raises(RuntimeError, match="comes from a library: shape keys baked into it would not be kept"):
        bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=1, frame_end=2, mute_modifiers=True)
    assert mesh.data.shape_keys is None and [m.show_viewport for m in mesh.modifiers] == shown
    assert bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=1, frame_end=2, mode="LBS",
                                                   output="MESHES") == {"FINISHED"}
    keys_before = [k.name for k in mesh.data.shape_keys.key_blocks] if mesh.data.shape_keys else None
    with pytest.raises(RuntimeError, match="comes from a library: SDEF parameters derived into it would not be kept"):
        bpy.ops.object.jointlimit_sdef_derive(write_mmd=True)     # (it said it derived them: gone on reopening)
    assert (mesh.data.shape_keys and [k.name for k in mesh.data.shape_keys.key_blocks]) == keys_before


def test_remove_refuses_a_deformer_that_comes_from_the_library(limb, mods, tmp_path):
    """A library-overridden character whose deformer comes from the library: Remove refuses (the
    library would bring the deformer back on the next load, onto an Armature modifier no longer
    masked: deformed twice); Toggle switches it off, and that lasts."""
    import bpy

    arm, obj, truth = limb
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    mesh = overridden_character(bpy.context.scene, arm, obj, tmp_path)
    select_only_object(mesh)
    with pytest.raises(RuntimeError, match="comes from the library"):
        bpy.ops.object.jointlimit_deformer_remove()
    assert mods["deformer"].find(mesh)[0] is not None
    assert bpy.ops.object.jointlimit_deformer_toggle() == {"FINISHED"}
    path = str(tmp_path / "shot.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    mesh = next(o for o in bpy.data.objects if o.type == "MESH" and o.override_library is not None)
    assert not mods["deformer"].is_enabled(mesh)
    assert mesh.modifiers["Armature"].vertex_group == ""    # unmasked: the Armature modifier alone


def test_a_bake_keeping_the_modifiers_says_they_deform_on_top(limb, capfd):
    """Baked shape keys with the modifiers left on play under the Armature modifier and the
    deformer (the mesh deformed twice): the report says so; with Disable Modifiers it does not."""
    import bpy

    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    capfd.readouterr()
    assert bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=1, frame_end=2) == {"FINISHED"}
    assert "on top of the baked keys" in capfd.readouterr().out
    assert bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=1, frame_end=2,
                                                   mute_modifiers=True) == {"FINISHED"}
    assert "on top of the baked keys" not in capfd.readouterr().out


def test_a_bake_of_fewer_frames_says_which_earlier_baked_frames_it_kept(limb, capfd):
    """Baking a shot in pieces keeps the keys of the frames baked before; a re-bake of a shorter
    range names the earlier keys left outside it (they still play, as baked then)."""
    import bpy

    bpy.ops.object.jointlimit_sdef_derive()
    assert bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=1, frame_end=5) == {"FINISHED"}
    assert "earlier bake" not in capfd.readouterr().out
    assert bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=2, frame_end=3) == {"FINISHED"}
    out = capfd.readouterr().out
    assert "kept the keys of 3 frames an earlier bake made outside these (1, 4..5)" in out
    assert [k.name for k in limb[1].data.shape_keys.key_blocks][1:] == [f"jl_frame_000{f}" for f in range(1, 6)]


def test_add_leaves_an_overridden_older_deformer_to_its_library(scene, mods, tmp_path):
    """A shot with a library-overridden character whose deformer has an older node tree: *Add* on
    another mesh moves the local older deformers to the current tree but leaves that one as saved
    (removing it there would not last: the library brings it back), instead of failing halfway."""
    import bpy

    tree = mods["deformer.tree"]
    arm, obj, truth = build_limb(scene)
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    obj.modifiers["JointLimit Deformer"].node_group[tree.TREE_TAG] = tree.TREE_VERSION - 1
    character = overridden_character(scene, arm, obj, tmp_path)
    scene = bpy.context.scene
    old = character.modifiers["JointLimit Deformer"].node_group
    assert tree.is_old_tree(old)
    _arm, other, _truth = build_limb(scene)
    select_only_object(other)
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    assert character.modifiers["JointLimit Deformer"].node_group == old
    assert not tree.is_old_tree(other.modifiers["JointLimit Deformer"].node_group)


def test_sdef_data_that_is_not_finite_is_refused_by_add_and_bake(limb):
    """NaN in the SDEF data (a derived attribute, an mmd_tools shape key) made Add leave a NaN
    vertex in the deformed mesh (and a file saved so), while Bake refused it without saying where:
    both refuse it, naming the attribute or key and the vertex, and change nothing."""
    import bpy

    arm, obj, truth = limb
    bpy.ops.object.jointlimit_sdef_derive(write_mmd=True)
    vertex = int(truth["two"][3])
    kept = tuple(obj.data.attributes["jl_sdef_c"].data[vertex].vector)
    obj.data.attributes["jl_sdef_c"].data[vertex].vector = (float("nan"), 0.0, 0.0)
    before = snapshot(obj)
    for op in (bpy.ops.object.jointlimit_deformer_add, bpy.ops.object.jointlimit_deformer_bake):
        with pytest.raises(RuntimeError, match=f"'jl_sdef_c' holds NaN or infinite values .*vertex {vertex} first"):
            op(source="DERIVED")
    obj.data.attributes["jl_sdef_c"].data[vertex].vector = kept
    obj.data.shape_keys.key_blocks["mmd_sdef_r0"].data[vertex].co = (0.0, float("inf"), 0.0)   # (stored as 3.4e38)
    for op in (bpy.ops.object.jointlimit_deformer_add, bpy.ops.object.jointlimit_deformer_bake):
        with pytest.raises(RuntimeError, match=f"shape key 'mmd_sdef_r0' holds NaN .*vertex {vertex} first"):
            op(source="MMD")
    assert snapshot(obj) == before
    bpy.ops.object.jointlimit_deformer_add(source="DERIVED")
    assert np.isfinite(evaluated(obj)).all()


@pytest.mark.parametrize("who", ["mesh", "armature"])
def test_a_mesh_scaled_unevenly_against_its_armature_is_refused(limb, who):
    """SDEF and Bezier work in the mesh's space: where it is a non-uniform scale of the armature's,
    the bones' motions there are no rotations and the elbow's section came out oval (and Bake
    differed from the viewport): Derive, Add and Bake refuse it; a uniform scale works."""
    import bpy

    arm, obj, truth = limb
    bpy.ops.object.jointlimit_sdef_derive()
    (obj if who == "mesh" else arm).scale = (1.5, 1.5, 3.0) if who == "mesh" else (0.8, 1.6, 0.8)
    bpy.context.view_layer.update()
    refused_by_add_derive_and_bake(obj, "is scaled unevenly against its armature 'Rig'")
    (obj if who == "mesh" else arm).scale = (2.0, 2.0, 2.0)
    bpy.context.view_layer.update()
    bpy.ops.object.jointlimit_deformer_add()


def test_bake_as_meshes_with_disable_modifiers_is_refused(limb):
    """Disable Modifiers with Output Meshes switched the Armature modifier off and wrote meshes that
    do not play on the object: the character stayed in its rest pose. Refused, nothing changes."""
    import bpy

    arm, obj, truth = limb
    bpy.ops.object.jointlimit_sdef_derive()
    bpy.ops.object.jointlimit_deformer_add()
    meshes = len(bpy.data.meshes)
    with pytest.raises(RuntimeError, match="Disable Modifiers works with shape keys only"):
        bpy.ops.object.jointlimit_deformer_bake(output="MESHES", mute_modifiers=True)
    assert len(bpy.data.meshes) == meshes and all(m.show_viewport and m.show_render for m in obj.modifiers)


def test_upgrade_of_an_older_deformer_on_a_mesh_scaled_unevenly_keeps_it(scene, mods, tmp_path):
    """A deformer an older version added to a mesh scaled unevenly (allowed then) keeps working as
    saved when Add on another mesh upgrades it (the scale check removed it: the review of session
    20)."""
    import bpy

    arm, obj, truth = build_limb(scene)
    bpy.ops.object.jointlimit_sdef_derive()
    other = obj.copy()
    other.data = obj.data.copy()
    other.name = "Other"
    scene.collection.objects.link(other)
    bpy.ops.object.jointlimit_deformer_add(use_selected=False, mode="SBS")
    tree = mods["deformer.tree"]
    mod = obj.modifiers["JointLimit Deformer"]
    mod.node_group[tree.TREE_TAG] = tree.TREE_VERSION - 1  # what an older version saved
    obj.scale = (1.5, 1.5, 3.0)     # an older version accepted this
    bpy.context.view_layer.update()
    for o in bpy.context.selected_objects:
        o.select_set(False)
    other.select_set(True)
    bpy.context.view_layer.objects.active = other
    assert bpy.ops.object.jointlimit_deformer_add(use_selected=False, mode="SDEF") == {"FINISHED"}
    # the old deformer of 'Limb' was working; it must still be there after an Add on 'Other'
    assert mods["deformer"].find(obj)[0] is not None, [m.name for m in obj.modifiers]


def test_nan_in_mmd_sdef_c_is_refused_like_other_keys(scene, mods):
    """A NaN in mmd_sdef_c is refused like one in the other keys (mmd_tools' rule, C differs from
    the basis, dropped the vertex to LBS without a word)."""
    import bpy

    arm, obj, truth = build_limb(scene)
    bpy.ops.object.jointlimit_sdef_derive(write_mmd=True)
    vertex = int(truth["two"][3])
    obj.data.shape_keys.key_blocks["mmd_sdef_c"].data[vertex].co = (float("nan"), 0.0, 0.0)
    with pytest.raises(RuntimeError, match="mmd_sdef_c"):
        bpy.ops.object.jointlimit_deformer_add(source="MMD")


@pytest.mark.parametrize("case", ["child-of-nonuniform-armature", "mirrored-mesh", "parent-inverse-mmd-scale",
                                  "fbx-like-rot90-scale001", "deep-hierarchy"])
def test_uniform_setups_pass_the_scale_check(scene, mods, case):
    """Set-ups whose mesh space is a uniform (possibly mirrored) scale of the armature's pass
    check_uniform_scale, also with float32 matrices (scale 0.08, Euler 90 degree rotations)."""
    import math

    import bpy
    from mathutils import Euler, Matrix

    arm, obj, truth = build_limb(scene)
    data = importlib.import_module(mods["deformer"].__name__ + ".data")
    if case == "child-of-nonuniform-armature":
        arm.matrix_world = Matrix.LocRotScale((1, 2, 3), Euler((0.3, 0.2, 0.1)), (0.8, 1.6, 0.8))
        obj.parent = arm
        obj.matrix_parent_inverse.identity()
        obj.matrix_basis.identity()
    elif case == "mirrored-mesh":
        obj.scale = (-1.5, 1.5, 1.5)
    elif case == "parent-inverse-mmd-scale":
        root = bpy.data.objects.new("root", None)
        scene.collection.objects.link(root)
        root.rotation_euler = (math.radians(90), 0, 0)
        root.scale = (0.08,) * 3
        arm.parent = root
        arm.matrix_basis = Matrix.LocRotScale((0.3, 1.7, -2), Euler((math.radians(90), 0, math.radians(90))),
                                              (1, 1, 1))
        bpy.context.view_layer.update()
        obj.parent = arm
        obj.matrix_parent_inverse = arm.matrix_world.inverted()
        obj.matrix_basis = Matrix.LocRotScale((5, -3, 2), Euler((math.radians(-90), math.radians(90), 0)),
                                              (12.5, 12.5, 12.5))
    elif case == "fbx-like-rot90-scale001":
        arm.matrix_world = Matrix.LocRotScale((0, 0, 0), Euler((math.radians(90), 0, 0)), (0.01,) * 3)
        obj.matrix_world = Matrix.LocRotScale((1000, 2000, -300), Euler((math.radians(90), 0, math.radians(270))),
                                              (0.01,) * 3)
    elif case == "deep-hierarchy":
        parent = None
        for i in range(12):
            e = bpy.data.objects.new(f"e{i}", None)
            scene.collection.objects.link(e)
            e.parent = parent
            e.matrix_basis = Matrix.LocRotScale((i * 37.1, -i * 11.3, 1e3), Euler((math.radians(90), 0.7 * i, 1.1)),
                                                (0.08 if i % 2 else 12.5,) * 3)
            parent = e
        obj.parent = parent
        arm.parent = bpy.data.objects["e5"]
    bpy.context.view_layer.update()
    data.check_uniform_scale(obj, arm)


def test_bake_takes_the_deformers_mode_blend_and_groups_unless_set(limb, mods):
    """Bake without Mode, Blend or Two Strongest Groups set reproduces what the deformer shows
    (it baked SDEF at blend 0.5 without the strongest two whatever the deformer did); set ones win."""
    import bpy

    arm, obj, truth = limb
    scene = bpy.context.scene
    animate(arm, ((1, 11), (2, 12)))
    bpy.ops.object.jointlimit_sdef_derive(strongest_two=True)
    bpy.ops.object.jointlimit_deformer_add(mode="BEZIER", blend=0.3)
    scene.frame_set(2)
    live = evaluated(obj)

    def baked(**settings):
        bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=2, frame_end=2, **settings)
        kb = obj.data.shape_keys.key_blocks["jl_frame_0002"]
        co = np.empty(len(kb.data) * 3, np.float32)
        kb.data.foreach_get("co", co)
        return co.reshape(-1, 3)

    assert np.abs(baked() - live).max() < 1e-5 * size(truth)
    assert np.abs(baked(mode="LBS") - live).max() > 1e-3 * size(truth)
    bpy.ops.object.jointlimit_deformer_remove()
    bpy.ops.object.jointlimit_deformer_add(mode="SDEF", blend=0.7, strongest_two=True)
    assert np.array_equal(baked(), baked(mode="SDEF", blend=0.7, strongest_two=True))
    assert not np.array_equal(baked(), baked(strongest_two=False))


@pytest.mark.parametrize("outside, edge", [(1.5, 1.0), (-0.5, 0.0)])
def test_blend_set_outside_0_1_on_the_modifier_is_clamped_live_and_by_bake(limb, mods, addon, outside, edge):
    """A script or driver may set the deformer's Blend input outside [0, 1] (Blender's min and max
    bind the interface only): the deformer shows the nearest end of the range, as it clamps Mode,
    instead of extrapolating the blend, and Bake, reproducing what the deformer shows, bakes the
    same instead of refusing."""
    import bpy

    compat = importlib.import_module(f"{addon.__name__}.compat")
    tree = mods["deformer.tree"]
    arm, obj, truth = limb
    animate(arm, ((1, 11), (2, 12)))
    bpy.ops.object.jointlimit_sdef_derive()
    bpy.ops.object.jointlimit_deformer_add(mode="SDEF", blend=0.5)
    bpy.context.scene.frame_set(2)
    mod = obj.modifiers["JointLimit Deformer"]
    key = tree.input_id(mod.node_group, tree.BLEND_INPUT)

    def live(value):
        compat.set_modifier_input(mod, key, value)
        obj.update_tag()
        return evaluated(obj)

    at_edge, middle = live(edge), live(0.5)
    assert np.abs(at_edge - middle).max() > 1e-3 * size(truth)     # the blend matters here
    shown = live(outside)
    assert np.abs(shown - at_edge).max() < 1e-6 * size(truth)
    # a tree of an older version, which extrapolated such a Blend: Bake refuses it (it would bake
    # something else than the viewport shows), and the next Add moves the deformer to the current
    # tree with the Blend kept as set (it removed the deformer and failed to add it again)
    mod.node_group[tree.TREE_TAG] = tree.TREE_VERSION - 1
    assert mods["deformer"].settings(obj)[1] == pytest.approx(outside)
    with pytest.raises(RuntimeError, match=r"blend s must lie in \[0, 1\]"):
        bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=2, frame_end=2)
    other = obj.copy()
    other.data = obj.data.copy()
    other.modifiers.remove(other.modifiers["JointLimit Deformer"])
    bpy.context.scene.collection.objects.link(other)
    for o in bpy.context.selected_objects:
        o.select_set(False)
    other.select_set(True)
    bpy.context.view_layer.objects.active = other
    assert bpy.ops.object.jointlimit_deformer_add(use_selected=False, mode="SDEF") == {"FINISHED"}
    mod = obj.modifiers["JointLimit Deformer"]
    assert not tree.is_old_tree(mod.node_group)
    assert compat.modifier_input(mod, tree.input_id(mod.node_group, tree.BLEND_INPUT)) == pytest.approx(outside)
    assert np.abs(evaluated(obj) - at_edge).max() < 1e-6 * size(truth)
    for o in bpy.context.selected_objects:
        o.select_set(False)
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=2, frame_end=2)
    assert np.abs(baked_positions(obj, 2) - shown).max() < 1e-5 * size(truth)


@pytest.mark.parametrize("outside, edge", [(7, "BEZIER"), (-1, "LBS")])
def test_mode_set_outside_the_modes_is_the_nearest_end_live_and_for_bake(limb, mods, addon, outside, edge):
    """A script or driver may set the Mode input outside 0..3: the deformer shows the nearest
    end, and ``settings`` and Bake take the same (they took SDEF: a bake 0.17 of the mesh off
    what the viewport showed)."""
    import bpy

    compat, tree, obj, truth, mod = animated_sdef_limb(limb, mods, addon, ((1, 13), (2, 14)))
    bpy.context.scene.frame_set(2)
    set_mode(obj, edge)
    at_edge = evaluated(obj)
    compat.set_modifier_input(mod, tree.input_id(mod.node_group, tree.MODE_INPUT), outside)
    obj.update_tag()
    shown = evaluated(obj)
    assert np.abs(shown - at_edge).max() < 1e-6 * size(truth)
    assert mods["deformer"].settings(obj)[0] == edge
    bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=2, frame_end=2)
    assert np.abs(baked_positions(obj, 2) - shown).max() < 1e-5 * size(truth)


def animated_sdef_limb(limb, mods, addon, frames):
    """``limb`` posed on ``frames`` (``animate``) with the deformer added in SDEF mode: ``(compat,
    deformer.tree, mesh, truth, the deformer's modifier)``."""
    import bpy

    arm, obj, truth = limb
    animate(arm, frames)
    bpy.ops.object.jointlimit_sdef_derive()
    bpy.ops.object.jointlimit_deformer_add(mode="SDEF")
    compat = importlib.import_module(f"{addon.__name__}.compat")
    return compat, mods["deformer.tree"], obj, truth, obj.modifiers["JointLimit Deformer"]


def baked_positions(obj, frame):
    """The positions the bake's shape key of ``frame`` holds."""
    kb = obj.data.shape_keys.key_blocks[f"jl_frame_{frame:04d}"]
    co = np.empty(len(kb.data) * 3, np.float32)
    kb.data.foreach_get("co", co)
    return co.reshape(-1, 3)


def test_bake_follows_a_keyed_mode_and_blend(limb, mods, addon):
    """Mode and Blend keyed on the deformer (SDEF at Blend 0 to Bezier at 1): each frame is baked
    with the values the deformer shows on it (every frame was baked with the current frame's: up
    to 0.07 of the mesh off)."""
    import bpy

    compat, tree, obj, truth, mod = animated_sdef_limb(limb, mods, addon, ((1, 15), (5, 16)))
    blend, mode = (tree.input_id(mod.node_group, name) for name in (tree.BLEND_INPUT, tree.MODE_INPUT))
    for frame, blend_value, mode_value in ((1, 0.0, MODE_INPUT["SDEF"]), (5, 1.0, MODE_INPUT["BEZIER"])):
        compat.set_modifier_input(mod, blend, blend_value)
        compat.key_modifier_input(mod, blend, frame)
        compat.set_modifier_input(mod, mode, mode_value)
        compat.key_modifier_input(mod, mode, frame)
    assert mods["deformer"].inputs_animated(obj)
    live = shown_frames(obj, range(1, 6))
    bpy.context.scene.frame_set(1)
    assert bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=1, frame_end=5,
                                                   mute_modifiers=True) == {"FINISHED"}
    assert_plays(obj, live, truth)


def test_baked_shape_keys_play_on_their_frames_with_time_stretching(limb, mods):
    """With Time Stretching (Old 100, New 50: frame 2 shows the animation's 4), each frame's shape
    key is keyed at the time the frame is shown, so the keys alone play what the deformer showed
    (they were keyed at the frame numbers: off by up to the mesh's whole motion)."""
    import bpy

    arm, obj, truth = limb
    scene = bpy.context.scene
    animate(arm, ((1, 11), (8, 12)))
    bpy.ops.object.jointlimit_sdef_derive()
    bpy.ops.object.jointlimit_deformer_add(mode="SDEF")
    scene.render.frame_map_old, scene.render.frame_map_new = 100, 50
    live = {}
    for f in (1, 2, 3, 4):
        scene.frame_set(f)
        live[f] = evaluated(obj)
    assert np.abs(live[2] - live[3]).max() > 10 * 1e-5 * size(truth)    # (the frames differ)
    assert bpy.ops.object.jointlimit_deformer_bake(use_scene_range=False, frame_start=1, frame_end=4,
                                                   mute_modifiers=True) == {"FINISHED"}
    for f in (1, 2, 3, 4):
        scene.frame_set(f)
        assert np.abs(evaluated(obj) - live[f]).max() < 1e-5 * size(truth), f


@pytest.mark.parametrize("scale", [(-1.0, 1.0, 1.0), (-1.0, -1.0, -1.0)])
def test_a_mesh_mirrored_against_its_armature_is_refused(limb, mods, scale):
    """A mesh whose space mirrors its armature's (a negative scale): Add refuses it in one line
    (the live deformer read the mirror as a bone mirror: 0.13 of the mesh's size off in the rest
    pose); mirrored after Add, the deformer switches off and says why."""
    import bpy

    arm, obj, truth = limb
    obj.scale = scale
    bpy.context.view_layer.update()
    with pytest.raises(RuntimeError, match="is mirrored against its armature"):
        bpy.ops.object.jointlimit_deformer_add(mode="SDEF")
    assert mods["deformer"].find(obj)[0] is None
    obj.scale = (1.0, 1.0, 1.0)
    bpy.context.view_layer.update()
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    obj.scale = scale
    bpy.context.view_layer.update()
    assert not mods["deformer"].is_enabled(obj)


def test_renaming_a_used_bone_in_edit_mode_keeps_the_deformer_on(limb, mods):
    """A bone the deformer uses renamed in the armature's Edit Mode (F2): the deformer stays on and
    follows the new name (it was switched off, 'has no bone', and stayed off)."""
    import bpy

    arm, obj, truth = limb
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    arm.data.edit_bones["lower"].name = "forearm"
    bpy.context.view_layer.update()
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.context.view_layer.update()
    assert "forearm" in arm.data.bones and mods["deformer"].is_enabled(obj)


def test_remove_and_toggle_refuse_a_linked_object(limb, mods, tmp_path):
    """A mesh linked from a library with its deformer (not an override): Remove and Toggle refuse
    (Remove deleted the linked helper and node groups for the session, and all came back on
    reopening)."""
    import bpy

    arm, obj, truth = limb
    assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF") == {"FINISHED"}
    names, name = [o.name for o in bpy.data.objects], obj.name
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "lib.blend"), copy=True)
    bpy.ops.wm.read_homefile(use_empty=True)
    with bpy.data.libraries.load(str(tmp_path / "lib.blend"), link=True) as (_found, wanted):
        wanted.objects = names
    for o in wanted.objects:
        bpy.context.scene.collection.objects.link(o)
    mesh = next(o for o in wanted.objects if o.name == name)
    select_only_object(mesh)
    for op in (bpy.ops.object.jointlimit_deformer_remove, bpy.ops.object.jointlimit_deformer_toggle):
        with pytest.raises(RuntimeError, match="is linked from the library"):
            op()
    assert mods["deformer"].find(mesh)[0] is not None and mods["deformer"].is_enabled(mesh)


def _bbone_limb(scene, length, name):
    """Two bones of ``length`` along X with 6 B-Bone segments each and a tube round them (radius a
    tenth of the length) blending from 0.7 to 1.3 lengths; returns (armature, mesh)."""
    import bpy

    arm = make_armature([("upper", (0, 0, 0), (length, 0, 0), None, 0.0),
                         ("lower", (length, 0, 0), (2 * length, 0, 0), "upper", 0.0)], name)
    bpy.ops.object.mode_set(mode="OBJECT")
    for bone in arm.data.bones:
        bone.bbone_segments = 6
    x = np.linspace(0.0, 2.0, 61)
    ang = np.linspace(0, 2 * np.pi, 12, endpoint=False)
    xx, aa = np.meshgrid(x, ang, indexing="ij")
    co = length * np.stack([xx, 0.1 * np.cos(aa), 0.1 * np.sin(aa)], -1).reshape(-1, 3)
    me = bpy.data.meshes.new(name + "Skin")
    me.from_pydata(co.tolist(), [], [])
    obj = bpy.data.objects.new(name + "Skin", me)
    scene.collection.objects.link(obj)
    t = np.clip((1.3 - co[:, 0] / length) / 0.6, 0.0, 1.0)
    for group, weights in ((obj.vertex_groups.new(name="upper"), t), (obj.vertex_groups.new(name="lower"), 1.0 - t)):
        for i in np.flatnonzero(weights > 0.0):
            group.add([int(i)], float(weights[i]), "REPLACE")
    obj.modifiers.new("Armature", "ARMATURE").object = arm
    return arm, obj


def test_b_bone_segments_deform_the_same_at_any_size(scene, mods):
    """The same limb with 6 B-Bone segments built at bone lengths 0.25 and 4 and bent 120°: SDEF
    gives the same shape, scaled (the helper's Y point lay a unit ahead of the bone's head, past
    the tail of a bone shorter than that, where a later segment moved it: half a bone length
    apart, the mesh torn on short bones)."""
    import bpy

    shapes = []
    for length, name in ((0.25, "Small"), (4.0, "Large")):
        arm, obj = _bbone_limb(scene, length, name)
        for o in bpy.context.view_layer.objects:
            o.select_set(o is obj)
        bpy.context.view_layer.objects.active = obj
        assert bpy.ops.object.jointlimit_deformer_add(mode="SDEF", use_selected=False) == {"FINISHED"}
        lower = arm.pose.bones["lower"]
        lower.rotation_mode = "XYZ"
        lower.rotation_euler = (0.0, 0.0, np.radians(120.0))
        bpy.context.view_layer.update()
        shapes.append(evaluated(obj) / length)
    assert np.abs(shapes[0] - shapes[1]).max() < 1e-4
