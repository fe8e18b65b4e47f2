"""Live limits on whole armatures (issue 22): the array path equals the per-bone path, and its
groups of bones follow setting, rotation-mode and bone changes."""

import importlib
import math

import numpy as np
import pytest

from rigs import compat, link_override, make_armature, overridden_rig, save_in_library, select_only

pytestmark = [pytest.mark.blender]

MODES = ["QUATERNION", "AXIS_ANGLE", "XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"]
D = math.radians
# (kind, shape, correction, bones): groups larger than core.grouped.SINGLE_MAX(_SMOOTH) take the
# vectorised core, the small ones its single-rotation path
GROUPS = [
    ("SWING_TWIST", "RECT", "OPTIMAL", 40),
    ("SWING_TWIST", "ELLIPSE", "OPTIMAL", 96),
    ("SWING_TWIST", "SUPERELLIPSE", "SIMPLE", 32),
    ("SWING_TWIST", "OVAL", "OPTIMAL", 8),
    ("SWING_TWIST", "POLYGON", "OPTIMAL", 8),
    ("SWING_TWIST", "ELLIPSE", "SIMPLE", 8),
    ("HINGE", None, None, 8),
    ("EULER", None, None, 8),
    ("EULER_MULTI", None, None, 8),
    ("QUAT_SWING", None, None, 8),
]


@pytest.fixture
def mods(addon):
    pkg = addon.__name__
    names = ("handlers", "live_pose", "bone_limits", "core.grouped", "core.quat", "compat")
    return {m: importlib.import_module(f"{pkg}.{m}") for m in names}


def configure(settings, kind, shape, correction, fix_twist=False):
    settings.enabled = True
    settings.kind = kind
    settings.shape = shape or "RECT"
    settings.correction = correction or "OPTIMAL"
    settings.swing_x_min, settings.swing_x_max = D(-20), D(110)
    settings.swing_z_min, settings.swing_z_max = D(-40), D(30)
    settings.use_twist_limit, settings.fix_twist = True, fix_twist
    settings.twist_min, settings.twist_max = D(-25), D(35)
    settings.hinge_min, settings.hinge_max = D(5), D(140)
    settings.euler_min = [D(a) for a in (-30, -20, -45)]
    settings.euler_max = [D(a) for a in (60, 20, 45)]
    settings.quat_swing_max = D(50)
    if shape == "POLYGON":
        settings.outline.clear()
        for z, x, bulge in ((-30, -15, 0.0), (25, -15, 0.3), (25, 90, 0.0), (-30, 90, -0.2)):
            p = settings.outline.add()
            p.swing_z, p.swing_x, p.bulge = D(z), D(x), bulge


def limited_rig(n_extra_free=3):
    """A chain with every group of ``GROUPS`` (bones interleaved, modes cycling) plus a few free
    bones and one bone whose settings are invalid."""
    kinds = [g[:3] for g in GROUPS for _ in range(g[3])]
    order = np.random.default_rng(0).permutation(len(kinds))
    n = len(kinds) + n_extra_free + 1
    obj = make_armature([(f"b{i:03d}", (0, 0, 0.1 * i), (0, 0, 0.1 * (i + 1)), f"b{i - 1:03d}" if i else None, 0.0)
                         for i in range(n)], "Live")
    bones = obj.pose.bones
    for i, j in enumerate(order):
        configure(bones[i].jointlimit, *kinds[j], fix_twist=bool(j % 7 == 3))
    bad = bones[len(kinds)].jointlimit
    configure(bad, "SWING_TWIST", "RECT", "OPTIMAL")
    bad.swing_x_min, bad.swing_x_max = D(50), D(10)      # invalid: min above max
    for i, pb in enumerate(bones):
        pb.rotation_mode = MODES[i % len(MODES)]
    return obj


def live_hinge_bone(scene, degrees):
    """The first bone of ``limited_rig`` made a Hinge and turned ``degrees`` about X, with live
    limits on, after one update."""
    import bpy

    pb = limited_rig().pose.bones[0]
    scene.jointlimit.live = True
    configure(pb.jointlimit, "HINGE", None, None)
    pb.rotation_mode = "XYZ"
    pb.rotation_euler = (D(degrees), 0.0, 0.0)
    bpy.context.view_layer.update()
    return pb


def random_pose(obj, seed):
    """Random stored values in every channel (Euler angles past ±180°, so the continuity of the
    written angles matters), some bones left at rest, one zero quaternion (not a rotation)."""
    rng = np.random.default_rng(seed)
    for i, pb in enumerate(obj.pose.bones):
        q = rng.normal(size=4)
        pb.rotation_quaternion = q / np.linalg.norm(q) * rng.uniform(0.5, 2.0)
        pb.rotation_euler = rng.uniform(-3 * math.pi, 3 * math.pi, 3)
        pb.rotation_axis_angle = (rng.uniform(-4.0, 4.0), *rng.normal(size=3))
        if i % 11 == 0:
            pb.rotation_quaternion, pb.rotation_euler, pb.rotation_axis_angle = (1, 0, 0, 0), (0, 0, 0), (0, 0, 1, 0)
    obj.pose.bones[5].rotation_quaternion = (0, 0, 0, 0)
    obj.pose.bones[5].rotation_mode = "QUATERNION"


def snapshot(obj):
    return [(pb.rotation_mode, tuple(pb.rotation_quaternion), tuple(pb.rotation_euler), tuple(pb.rotation_axis_angle))
            for pb in obj.pose.bones]


def restore(obj, snap):
    for pb, (mode, q, e, aa) in zip(obj.pose.bones, snap):
        pb.rotation_mode = mode
        pb.rotation_quaternion, pb.rotation_euler, pb.rotation_axis_angle = q, e, aa


def both_paths(mods, obj, only_changed):
    """Run the per-bone path, then the array path from the same start; return both results."""
    start = snapshot(obj)
    n_ref = mods["handlers"].clamp_object_per_bone(obj, only_changed)
    reference = snapshot(obj)
    restore(obj, start)
    n_new = mods["handlers"].clamp_object(obj, only_changed)
    return (n_ref, reference), (n_new, snapshot(obj))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_array_path_equals_per_bone_path(scene, mods, seed):
    obj = limited_rig()
    grouped = mods["core.grouped"]
    assert max(g[3] for g in GROUPS) >= grouped.SINGLE_MAX_SMOOTH and min(g[3] for g in GROUPS) < grouped.SINGLE_MAX
    random_pose(obj, seed)
    start = snapshot(obj)
    ellipses = [pb for pb in obj.pose.bones if pb.jointlimit.enabled and pb.jointlimit.shape == "ELLIPSE"
                and pb.jointlimit.correction == "OPTIMAL" and pb.jointlimit.kind == "SWING_TWIST" and pb != obj.pose.bones[5]]
    outside = sum(_outside_by(mods, pb) > 1e-6 for pb in ellipses)
    assert outside >= grouped.SINGLE_MAX_SMOOTH           # this group takes the vectorised core
    (n_ref, reference), (n_new, result) = both_paths(mods, obj, only_changed=False)
    assert not mods["live_pose"]._armatures[obj.session_uid].few    # the array path
    assert n_ref > 0.5 * len(obj.pose.bones)             # most bones were outside and moved
    assert (n_new, result) == (n_ref, reference)         # exactly the same stored values
    # the stored values are accepted: another pass writes nothing
    assert mods["handlers"].clamp_object(obj, False) == 0
    # the same pose again (as playback returns to a frame): answered from the remembered results
    restore(obj, start)
    state = mods["live_pose"]._armatures[obj.session_uid]
    assert len(state.results) >= len(result) // 2
    clamp_rows = mods["live_pose"]._clamp_rows
    mods["live_pose"]._clamp_rows = None        # not called: every stored rotation is remembered
    try:
        assert (mods["handlers"].clamp_object(obj, False), snapshot(obj)) == (n_ref, reference)
    finally:
        mods["live_pose"]._clamp_rows = clamp_rows


def test_array_path_equals_per_bone_path_with_few_limited_bones(scene, mods):
    obj = limited_rig()
    for pb in list(obj.pose.bones)[16:]:     # a few bones of each kind in small groups
        pb.jointlimit.enabled = False
    random_pose(obj, 9)
    start = snapshot(obj)
    (n_ref, reference), (n_new, result) = both_paths(mods, obj, only_changed=False)
    assert mods["live_pose"]._armatures[obj.session_uid].few       # one bone at a time, by name
    assert n_ref > 8
    assert (n_new, result) == (n_ref, reference)
    restore(obj, start)                                 # again: from the memos
    assert (mods["handlers"].clamp_object(obj, False), snapshot(obj)) == (n_ref, reference)


def test_few_limited_bones_follow_a_renamed_bone(scene, mods):
    import bpy

    obj = limited_rig()
    for pb in list(obj.pose.bones)[16:]:
        pb.jointlimit.enabled = False
    scene.jointlimit.live = True
    bpy.context.view_layer.update()
    hinge = next(pb for pb in obj.pose.bones if pb.jointlimit.enabled and pb.jointlimit.kind == "HINGE")
    hinge.name = "renamed"
    hinge = obj.pose.bones["renamed"]
    hinge.rotation_mode = "XYZ"
    hinge.rotation_euler = (D(170), 0.0, 0.0)
    bpy.context.view_layer.update()
    assert math.degrees(hinge.rotation_euler[0]) == pytest.approx(140, abs=1e-3)
    scene.jointlimit.live = False


def test_only_changed_bones_are_clamped_like_the_per_bone_path(scene, mods):
    obj = limited_rig()
    random_pose(obj, 4)
    mods["handlers"].clamp_object_per_bone(obj, False)
    mods["handlers"].clamp_object(obj, False)            # both paths have seen this pose
    rng = np.random.default_rng(5)
    for i in rng.choice(len(obj.pose.bones), 30, replace=False):
        pb = obj.pose.bones[int(i)]
        pb.rotation_mode = MODES[(int(i) + 3) % len(MODES)] if i % 3 == 0 else pb.rotation_mode
        pb.rotation_euler = rng.uniform(-math.pi, math.pi, 3)
        q = rng.normal(size=4)
        pb.rotation_quaternion = q / np.linalg.norm(q)
        pb.rotation_axis_angle = (rng.uniform(-3, 3), *rng.normal(size=3))
    (n_ref, reference), (n_new, result) = both_paths(mods, obj, only_changed=True)
    assert 0 < n_ref < 30
    assert (n_new, result) == (n_ref, reference)
    assert mods["handlers"].clamp_object(obj, True) == 0    # nothing changed since
    # the first pose again (its results remembered) with a few bones new: both kinds in one pass
    random_pose(obj, 4)
    for i in range(1, 60, 3):
        obj.pose.bones[i].rotation_euler = rng.uniform(-math.pi, math.pi, 3)
        obj.pose.bones[i].rotation_quaternion = quat_normalised(rng.normal(size=4))
        obj.pose.bones[i].rotation_axis_angle = (rng.uniform(-3, 3), *rng.normal(size=3))
    (n_ref, reference), (n_new, result) = both_paths(mods, obj, only_changed=False)
    assert n_ref > 0.5 * len(obj.pose.bones)
    assert (n_new, result) == (n_ref, reference)


def quat_normalised(q):
    return q / np.linalg.norm(q)


def _outside_by(mods, pb):
    limit = mods["bone_limits"].build_limit(pb.jointlimit)
    q = mods["bone_limits"].read_rotation(pb)
    return float(mods["bone_limits"].quat.angle_between(limit.clamp(q), q))


def test_array_path_follows_a_bone_count_change(scene, mods):
    import bpy

    obj = limited_rig()
    random_pose(obj, 7)
    mods["handlers"].clamp_object(obj, False)            # groups built for this armature
    bpy.ops.object.mode_set(mode="EDIT")
    for name in ("b000", "b003"):                        # limited bones before most others
        obj.data.edit_bones.remove(obj.data.edit_bones[name])
    bpy.ops.object.mode_set(mode="POSE")
    random_pose(obj, 8)
    (n_ref, reference), (n_new, result) = both_paths(mods, obj, only_changed=False)
    assert n_ref > 0.5 * len(obj.pose.bones)
    assert (n_new, result) == (n_ref, reference)


def test_live_limits_follow_setting_changes(scene, mods):
    import bpy

    pb = live_hinge_bone(scene, 170)
    assert math.degrees(pb.rotation_euler[0]) == pytest.approx(140, abs=1e-3)
    # a narrower range: the update callback regroups, the next update clamps to the new range
    pb.jointlimit.hinge_max = D(90)
    bpy.context.view_layer.update()
    assert math.degrees(pb.rotation_euler[0]) == pytest.approx(90, abs=1e-3)
    # another kind, through the same callback
    pb.jointlimit.kind = "EULER"
    bpy.context.view_layer.update()
    assert _outside_by(mods, pb) <= 1e-6
    assert math.degrees(pb.rotation_euler[0]) < 61     # euler_max X is 60°
    # a new rotation mode is read in its own channel
    pb.rotation_mode = "QUATERNION"
    pb.rotation_quaternion = (math.cos(D(40)), math.sin(D(40)), 0, 0)   # 80° about X
    bpy.context.view_layer.update()
    assert _outside_by(mods, pb) <= 1e-6
    assert 2 * math.degrees(math.atan2(pb.rotation_quaternion[1], pb.rotation_quaternion[0])) == pytest.approx(60, abs=1e-3)
    # disabling the limit frees the bone
    pb.jointlimit.enabled = False
    pb.rotation_quaternion = (math.cos(D(40)), math.sin(D(40)), 0, 0)
    bpy.context.view_layer.update()
    assert 2 * math.degrees(math.atan2(pb.rotation_quaternion[1], pb.rotation_quaternion[0])) == pytest.approx(80, abs=1e-3)
    scene.jointlimit.live = False


@pytest.mark.parametrize("few_limited", [False, True])
def test_live_limits_follow_bones_added_in_edit_mode(scene, mods, few_limited):
    import bpy

    obj = limited_rig()
    if few_limited:     # the other way of checking the bones: only the limited ones' names
        for pb in list(obj.pose.bones)[12:]:
            pb.jointlimit.enabled = False
    scene.jointlimit.live = True
    bpy.context.view_layer.update()
    n_bones = len(obj.pose.bones)
    bpy.ops.object.mode_set(mode="EDIT")
    # one bone removed before the limited ones and one added: the same count, other bones
    obj.data.edit_bones.remove(obj.data.edit_bones["b000"])
    extra = obj.data.edit_bones.new("extra")
    extra.head, extra.tail = (1, 0, 0), (1, 0, 1)
    bpy.ops.object.mode_set(mode="POSE")
    assert len(obj.pose.bones) == n_bones
    random_pose(obj, 6)
    free = obj.pose.bones["extra"]
    free.rotation_mode = "QUATERNION"
    free.rotation_quaternion = (0, 1, 0, 0)     # unlimited: must stay
    limited = [pb for i, pb in enumerate(obj.pose.bones) if i != 5 and pb.jointlimit.enabled
               and mods["bone_limits"].settings_error(pb.jointlimit) is None]
    bpy.context.view_layer.update()
    assert tuple(free.rotation_quaternion) == (0, 1, 0, 0)
    assert max(_outside_by(mods, pb) for pb in limited) <= 1e-5
    scene.jointlimit.live = False


def test_undo_of_a_setting_regroups(scene, mods):
    import bpy

    pb = live_hinge_bone(scene, 100)
    bpy.ops.ed.undo_push(message="before")
    pb.jointlimit.hinge_max = D(60)
    bpy.context.view_layer.update()
    assert math.degrees(pb.rotation_euler[0]) == pytest.approx(60, abs=1e-3)
    bpy.ops.ed.undo_push(message="narrow")
    bpy.ops.ed.undo()               # back to hinge_max 140 (no update callback runs on undo)
    pb = bpy.data.objects["Live"].pose.bones[0]
    assert math.degrees(pb.jointlimit.hinge_max) == pytest.approx(140, abs=1e-3)
    pb.rotation_euler = (D(120), 0.0, 0.0)
    bpy.context.view_layer.update()
    assert math.degrees(pb.rotation_euler[0]) == pytest.approx(120, abs=1e-3)
    bpy.context.scene.jointlimit.live = False


def test_playback_clamp_follows_armatures_linked_and_excluded(scene, mods):
    """The playback clamp finds the armatures of the view layer being played (its list is
    remembered while the layer's object count stays the same): one linked between two frames
    is clamped on the next frame, in the evaluated pose."""
    import bpy

    def keyed_rig(name):
        obj = make_armature([("b", (0, 0, 0), (0, 0, 1), None, 0.0)], name)
        pb = obj.pose.bones["b"]
        configure(pb.jointlimit, "HINGE", None, None)
        pb.rotation_mode = "XYZ"
        pb.rotation_euler = (D(170), 0.0, 0.0)
        pb.keyframe_insert("rotation_euler", frame=1)
        return obj

    def evaluated_angle(obj):
        pb = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).pose.bones["b"]
        return math.degrees(pb.rotation_euler[0])

    first = keyed_rig("First")
    second = keyed_rig("Second")
    bpy.ops.object.mode_set(mode="OBJECT")
    for coll in list(second.users_collection):
        coll.objects.unlink(second)
    scene.jointlimit.clamp_playback = True
    scene.frame_set(1)
    assert evaluated_angle(first) == pytest.approx(140, abs=1e-3)
    assert second.pose.bones["b"].rotation_euler[0] == pytest.approx(D(170))     # not in the scene
    scene.collection.objects.link(second)
    scene.frame_set(2)
    assert evaluated_angle(second) == pytest.approx(140, abs=1e-3)
    scene.jointlimit.clamp_playback = False


@pytest.mark.parametrize("few_limited", [False, True])
def test_playback_clamp_shows_in_the_evaluated_bone_matrices(scene, mods, few_limited):
    """The clamp written in ``frame_change_post`` is evaluated in that frame: the evaluated bone
    matrices (children included) are those of the clamped pose evaluated as a still, on the
    array path and on the few-bones path."""
    import bpy

    obj = limited_rig(n_extra_free=200 if few_limited else 3)
    bones = obj.pose.bones
    if few_limited:
        for pb in bones[4:]:
            pb.jointlimit.enabled = False
    rng = np.random.default_rng(7)
    for pb in bones:
        pb.rotation_mode = "QUATERNION"
        q = rng.normal(size=4)
        pb.rotation_quaternion = q / np.linalg.norm(q)
        pb.keyframe_insert("rotation_quaternion", frame=3)
    scene.jointlimit.clamp_playback = True
    scene.frame_set(3)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    played = [np.array(pb.matrix) for pb in obj.evaluated_get(depsgraph).pose.bones]
    stored = snapshot(obj)
    assert mods["handlers"].clamp_object_per_bone(obj, False) == 0      # the stored pose is clamped
    scene.jointlimit.clamp_playback = False
    obj.animation_data_clear()
    restore(obj, stored)
    bpy.context.view_layer.update()
    still = [np.array(pb.matrix) for pb in obj.evaluated_get(depsgraph).pose.bones]
    assert any(not np.allclose(m, np.eye(4)) for m in still)
    for a, b in zip(played, still):
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_clamp_playback_and_renders_from_the_interface(scene, mods, capfd, tmp_path, monkeypatch):
    """Switching Clamp Playback on switches Lock Interface on. A frame handler called from
    another thread (a render started from the interface) changes nothing while the interface is
    not locked, and says so once; with it locked it clamps. A render in the foreground (a script,
    ``blender -b``) clamps either way."""
    import threading

    import bpy

    handlers = mods["handlers"]
    obj = make_armature([("b", (0, 0, 0), (0, 0, 1), None, 0.0)], "Hinge")
    pb = obj.pose.bones["b"]
    configure(pb.jointlimit, "HINGE", None, None)
    pb.rotation_mode = "XYZ"
    pb.rotation_euler = (D(170), 0.0, 0.0)
    pb.keyframe_insert("rotation_euler", frame=1)
    bpy.context.view_layer.update()     # (the key's update: Clamp Playback would clamp the pose then)
    scene.render.use_lock_interface = False
    scene.jointlimit.clamp_playback = True
    assert scene.render.use_lock_interface

    def from_render_thread():
        pb.rotation_euler = (D(170), 0.0, 0.0)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        thread = threading.Thread(target=handlers.on_frame_change, args=(scene, depsgraph))
        thread.start()
        thread.join()
        return math.degrees(pb.rotation_euler[0])

    scene.render.use_lock_interface = False
    monkeypatch.setitem(handlers._state, "warned", False)   # said once a session
    capfd.readouterr()
    assert from_render_thread() == pytest.approx(170)
    assert from_render_thread() == pytest.approx(170)
    assert capfd.readouterr().err.count("Lock Interface") == 1
    scene.render.use_lock_interface = True
    assert from_render_thread() == pytest.approx(140, abs=1e-4)
    scene.render.use_lock_interface = False
    pb.rotation_euler = (D(170), 0.0, 0.0)
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.resolution_x = scene.render.resolution_y = 16
    scene.frame_start = scene.frame_end = 1
    scene.render.filepath = str(tmp_path / "frame_")
    scene.camera = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    scene.collection.objects.link(scene.camera)
    bpy.ops.render.render(animation=True)
    assert math.degrees(pb.rotation_euler[0]) == pytest.approx(140, abs=1e-4)
    # a file saved with Clamp Playback on and the interface not locked gets it locked on load
    assert not scene.render.use_lock_interface
    path = str(tmp_path / "clamped.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    loaded = bpy.context.scene
    assert loaded.jointlimit.clamp_playback and loaded.render.use_lock_interface
    loaded.jointlimit.clamp_playback = False


@pytest.mark.parametrize("few_limited", [False, True])
def test_a_linked_rig_is_clamped_like_a_local_one(scene, mods, tmp_path, few_limited):
    """A rig linked from another file (no library override) takes the playback clamp in memory,
    as its action poses it: ``foreach_set`` leaves linked data as it is, so its bones are written
    one by one; stored and evaluated poses equal those of the same rig local."""
    import bpy

    obj = limited_rig(n_extra_free=200 if few_limited else 3)
    if few_limited:
        for pb in obj.pose.bones[4:]:
            pb.jointlimit.enabled = False
    random_pose(obj, 4)
    for pb in obj.pose.bones:
        pb.keyframe_insert({"QUATERNION": "rotation_quaternion", "AXIS_ANGLE": "rotation_axis_angle"}.get(
            pb.rotation_mode, "rotation_euler"), frame=1)

    def played():
        scene.jointlimit.clamp_playback = True
        scene.frame_set(2)
        scene.frame_set(1)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        matrices = [np.array(pb.matrix) for pb in rig.evaluated_get(depsgraph).pose.bones]
        stored = snapshot(rig)
        assert mods["handlers"].clamp_object_per_bone(rig, False) == 0     # the stored pose is clamped
        scene.jointlimit.clamp_playback = False     # (a local rig's bones get their keys back)
        return stored, matrices

    rig = obj
    stored, matrices = played()
    library = str(tmp_path / "library.blend")
    bpy.ops.wm.save_as_mainfile(filepath=library, copy=True)
    name = obj.name
    bpy.data.objects.remove(obj)
    with bpy.data.libraries.load(library, link=True) as (_found, wanted):
        wanted.objects = [name]
    rig = wanted.objects[0]
    scene.collection.objects.link(rig)
    assert rig.library is not None
    linked_stored, linked_matrices = played()
    assert linked_stored == stored
    for a, b in zip(linked_matrices, matrices):
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_a_system_override_rig_is_clamped(scene, mods, tmp_path):
    """A rig brought in as a library override that is not editable (a system override, what
    Blender makes of the objects of a linked collection that are not made editable) is clamped
    too; an editable override also."""
    import bpy

    obj = make_armature([("b", (0, 0, 0), (0, 0, 1), None, 0.0)], "Hinge")
    pb = obj.pose.bones["b"]
    configure(pb.jointlimit, "HINGE", None, None)
    pb.rotation_mode = "XYZ"
    pb.rotation_euler = (D(170), 0.0, 0.0)
    rig = overridden_rig(scene, obj, str(tmp_path / "library.blend"), fully_editable=False)
    assert rig.library is None and rig.override_library.is_system_override
    assert mods["handlers"].clamp_object(rig, False) == 1
    assert math.degrees(rig.pose.bones["b"].rotation_euler[0]) == pytest.approx(140, abs=1e-4)
    rig.override_library.is_system_override = False
    rig.pose.bones["b"].rotation_euler = (D(170), 0.0, 0.0)
    assert mods["handlers"].clamp_object(rig, False) == 1
    assert math.degrees(rig.pose.bones["b"].rotation_euler[0]) == pytest.approx(140, abs=1e-4)


def test_limits_edited_on_an_override_are_saved_with_the_shot(scene, mods, tmp_path):
    """A character library's rig with a hinge on "b" and no limit on "a", linked into a shot and
    overridden: the hinge narrowed and a limit switched on for "a" in the shot survive saving and
    reopening (the settings were not overridable: the library's came back, and a farm render or a
    batch bake of the shot clamped with them)."""
    import bpy

    obj = make_armature([("a", (0, 0, 0), (0, 0, 1), None, 0.0), ("b", (0, 0, 1), (0, 0, 2), "a", 0.0)], "Arm")
    configure(obj.pose.bones["b"].jointlimit, "HINGE", None, None)
    rig = overridden_rig(scene, obj, str(tmp_path / "library.blend"))
    rig.pose.bones["b"].jointlimit.hinge_max = D(45)
    a = rig.pose.bones["a"].jointlimit
    a.enabled, a.kind = True, "HINGE"
    shot = str(tmp_path / "shot.blend")
    bpy.ops.wm.save_as_mainfile(filepath=shot)
    bpy.ops.wm.open_mainfile(filepath=shot)
    rig = next(o for o in bpy.data.objects if o.type == "ARMATURE" and o.override_library is not None)
    assert math.degrees(rig.pose.bones["b"].jointlimit.hinge_max) == pytest.approx(45)
    assert rig.pose.bones["a"].jointlimit.enabled and rig.pose.bones["a"].jointlimit.kind == "HINGE"


def test_a_polygon_outline_on_an_override_is_refused_cleanly(scene, mods, tmp_path):
    """On an overridden rig the Polygon outline is the library's (Blender's overrides of an
    add-on's collection mix and lose its points): its vertices' fields cannot be edited, Copy of another outline onto it, the outline
    editor and a preset with an outline refuse in one line before any change (a TypeError came
    out of the operator); Copy of a limit without an outline works there."""
    import bpy

    obj = make_armature([("a", (0, 0, 0), (0, 0, 1), None, 0.0), ("b", (1, 0, 0), (1, 0, 1), None, 0.0),
                         ("c", (2, 0, 0), (2, 0, 1), None, 0.0)], "Arm")
    for name, size in (("a", 20), ("b", 30)):
        s = obj.pose.bones[name].jointlimit
        s.enabled, s.kind, s.shape = True, "SWING_TWIST", "POLYGON"
        for z, x in ((-size, -size), (size, -size), (size, size), (-size, size)):
            p = s.outline.add()
            p.swing_z, p.swing_x = D(z), D(x)
    configure(obj.pose.bones["c"].jointlimit, "HINGE", None, None)
    rig = overridden_rig(scene, obj, str(tmp_path / "library.blend"))
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="POSE")
    before = [(p.swing_z, p.swing_x) for p in rig.pose.bones["b"].jointlimit.outline]
    for field in ("swing_z", "swing_x", "bulge"):    # the panel's vertex fields: greyed out (an edit was used, then lost on saving)
        assert rig.pose.bones["b"].jointlimit.outline[0].is_property_readonly(field)
    assert not rig.pose.bones["b"].jointlimit.is_property_readonly("swing_x_max")
    select_only(rig, {"a", "b"}, active="a")
    with pytest.raises(RuntimeError, match="the Polygon outline of 'b' cannot change here: its rig is a library override"):
        bpy.ops.pose.jointlimit_copy()
    select_only(rig, {"b"}, active="b")
    with pytest.raises(RuntimeError, match="the Polygon outline of 'b' cannot change here"):
        bpy.ops.pose.jointlimit_outline_edit(action="FROM_RANGES")
    assert [(p.swing_z, p.swing_x) for p in rig.pose.bones["b"].jointlimit.outline] == before
    select_only(rig, {"c", "b"}, active="c")
    with pytest.raises(RuntimeError, match="cannot change here"):      # b's outline would go
        bpy.ops.pose.jointlimit_copy()
    rig.pose.bones["b"].jointlimit.kind = "HINGE"
    select_only(rig, {"c"}, active="c")
    assert bpy.ops.pose.jointlimit_preset_apply(preset="JOINT:ELBOW") == {"FINISHED"}


def _override_of_a_library_without_limits(scene, tmp_path):
    """A library override of a rig (bones a, b: b a hinge) from a file saved as a Blender without
    JointLimit (or an older version) saves it: no settings stored for ``a``."""
    import bpy

    obj = make_armature([("a", (0, 0, 0), (0, 0, 1), None, 0.0), ("b", (0, 0, 1), (0, 0, 2), "a", 0.0)], "Arm")
    configure(obj.pose.bones["b"].jointlimit, "HINGE", None, None)
    obj.pose.bones["a"].property_unset("jointlimit")
    pre = bpy.app.handlers.save_pre
    ours = [h for h in pre if getattr(h, "__name__", "") == "on_save_pre"]
    for handler in ours:
        pre.remove(handler)
    try:
        library = str(tmp_path / "library.blend")
        collection = save_in_library(scene, obj, "RigCollection", library)
    finally:
        pre.extend(ours)
    bpy.data.objects.remove(obj)
    bpy.data.collections.remove(collection)
    return link_override(scene, library, "RigCollection").objects[0]


def test_an_override_of_a_rig_saved_without_jointlimit_opens_without_errors(scene, mods, tmp_path, capfd):
    """A library saved by an older version stores no settings for a bone without a limit; the shot
    reads them (the panel, the handlers): saved and reopened, the shot printed one 'expected ID
    type' error per such bone on every opening (the whole settings recorded as one override);
    edits of the bones the library stores are kept."""
    import bpy

    rig = _override_of_a_library_without_limits(scene, tmp_path)
    assert [pb.jointlimit.enabled for pb in rig.pose.bones] == [False, True]    # read, as the panel does
    rig.pose.bones["b"].jointlimit.hinge_max = D(45)
    shot = str(tmp_path / "shot.blend")
    bpy.ops.wm.save_as_mainfile(filepath=shot)
    capfd.readouterr()
    for _ in range(2):
        bpy.ops.wm.open_mainfile(filepath=shot)
        out = capfd.readouterr()
        assert "expected ID type" not in out.out + out.err
    rig = next(o for o in bpy.data.objects if o.type == "ARMATURE" and o.override_library is not None)
    assert math.degrees(rig.pose.bones["b"].jointlimit.hinge_max) == pytest.approx(45)


def test_a_preset_on_an_override_whose_library_stores_no_limits_warns_they_are_not_kept(scene, mods, tmp_path):
    """A rig library saved without JointLimit, linked and overridden: a preset set on its bone is
    lost when the shot is opened again in Blender 5.x (it records no override of settings its
    library never stored; only the console said so, on saving): the preset warns, naming the bone,
    exactly when the saved and reopened shot has lost it; a bone the library stores settings for
    is kept and not named."""
    import bpy

    from modal_harness import OperatorStandIn

    rig = _override_of_a_library_without_limits(scene, tmp_path)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="POSE")
    select_only(rig, {"a", "b"}, active="a")
    op = OperatorStandIn(bpy.types.POSE_OT_jointlimit_preset_apply, preset="JOINT:ELBOW")
    assert op.execute(bpy.context) == {"FINISHED"}
    warned = [text for kind, text in op.reports if kind == {"WARNING"} and "not kept" in text]
    shot = str(tmp_path / "shot.blend")
    bpy.ops.wm.save_as_mainfile(filepath=shot)
    bpy.ops.wm.open_mainfile(filepath=shot)
    rig = next(o for o in bpy.data.objects if o.type == "ARMATURE" and o.override_library is not None)
    kept = {pb.name: pb.jointlimit.kind == "HINGE" and pb.jointlimit.enabled for pb in rig.pose.bones}
    assert kept["b"]
    assert bool(warned) == (not kept["a"]), (warned, kept)      # (5.x loses it; 4.5 keeps it, and says nothing)
    assert not warned or "on a are" in warned[0]


@pytest.mark.parametrize("way", ["frames", "fast_scrubbing", "playing"])
@pytest.mark.parametrize("mode", ["XYZ", "AXIS_ANGLE"])
def test_a_partly_keyed_bone_shows_the_same_pose_on_a_frame_whatever_came_before(scene, mods, way, mode):
    """An Euler bone with only X keyed (0° to 80°) and Z posed by hand at 20°, or an axis-angle
    bone with only its angle keyed about a posed axis, a RECT limit of ±30°: each frame is clamped
    from its keyed values and the posed ones, so frame 3 shows the same pose before and after
    frame 10 (frame 10's correction stayed in the unkeyed channels and changed frame 3, for good);
    switching Clamp Playback off gives the posed values back."""
    import bpy

    obj = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
    scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    bone = obj.data.edit_bones.new("Bone")
    bone.tail = (0.0, 0.0, 1.0)
    bpy.ops.object.mode_set(mode="POSE")
    pb = obj.pose.bones["Bone"]
    s = pb.jointlimit
    s.enabled, s.kind, s.shape = True, "SWING_TWIST", "RECT"
    s.swing_x_min, s.swing_x_max, s.swing_z_min, s.swing_z_max = D(-30), D(30), D(-30), D(30)
    pb.rotation_mode = mode
    attr = "rotation_euler" if mode == "XYZ" else "rotation_axis_angle"
    posed = (0.0, 0.0, D(20)) if mode == "XYZ" else (0.0, 0.94, 0.0, 0.34)
    setattr(pb, attr, posed)
    for frame, x in ((1, 0.0), (10, 80.0)):
        getattr(pb, attr)[0] = D(x)
        pb.keyframe_insert(attr, index=0, frame=frame)
    scene.jointlimit.clamp_playback = True
    scene.jointlimit.fast_scrubbing = way != "frames"
    if way == "playing":
        mods["handlers"].on_playback_start(scene)
    limit = mods["bone_limits"].build_limit(s)

    def shown(frame):
        scene.frame_set(frame)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        return np.array(obj.evaluated_get(depsgraph).pose.bones["Bone"].matrix_basis.to_quaternion())

    first = shown(3)
    at_10 = shown(10)
    assert mods["bone_limits"].is_inside(limit, at_10, 1e-5)        # clamped (the angle alone keyed too)
    again = shown(3)
    assert min(np.abs(again - first).max(), np.abs(again + first).max()) < 1e-5
    if way == "playing":
        mods["handlers"].on_playback_stop(scene, None)
    scene.jointlimit.clamp_playback = False
    np.testing.assert_allclose(list(getattr(pb, attr))[1:], posed[1:], atol=1e-6)     # the posed values back
    last = shown(3)
    assert min(np.abs(last - first).max(), np.abs(last + first).max()) < 1e-5


def test_a_partly_keyed_bone_follows_its_action_slot(scene, mods):
    """The components a slot animates are read again when the rig plays another slot of its action
    (the first slot's held components stayed, and the bone stayed outside its limit)."""
    import bpy

    obj = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
    scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    obj.data.edit_bones.new("Bone").tail = (0.0, 0.0, 1.0)
    bpy.ops.object.mode_set(mode="POSE")
    pb = obj.pose.bones["Bone"]
    pb.rotation_mode = "XYZ"
    configure(pb.jointlimit, "SWING_TWIST", "RECT", "OPTIMAL")
    for frame, x in ((1, 0.0), (20, 30.0)):
        pb.rotation_euler = (D(x), 0.0, 0.0)
        pb.keyframe_insert("rotation_euler", index=0, frame=frame)
    data = obj.animation_data
    action = data.action
    slot = action.slots.new(id_type="OBJECT", name="Other")     # a second slot: all three angles keyed
    bag = action.layers[0].strips[0].channelbags.new(slot)
    for i, value in enumerate((0.0, 0.0, D(80))):
        fc = bag.fcurves.new(pb.path_from_id("rotation_euler"), index=i)
        fc.keyframe_points.insert(1, value)
        fc.keyframe_points.insert(20, value)
    scene.jointlimit.fast_scrubbing = False
    scene.jointlimit.clamp_playback = True
    scene.frame_set(10)
    data.action_slot = slot
    scene.frame_set(11)
    limit = mods["bone_limits"].build_limit(pb.jointlimit)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    q = mods["bone_limits"].read_rotation(obj.evaluated_get(depsgraph).pose.bones["Bone"])
    assert mods["bone_limits"].is_inside(limit, q, 1e-5)


@pytest.mark.parametrize("on_strip", [False, True], ids=["action", "nla_strip"])
@pytest.mark.parametrize("playing", [False, True])
def test_a_bone_keyed_in_every_channel_by_a_script_is_no_longer_held(scene, mods, playing, on_strip):
    """A hinge bone keyed in X only with Y and Z posed off the axis plays clamped onto the hinge;
    a script then keys Y and Z at 0 right before the next frames (no update in between): the
    frames show the keys (inside) instead of clamping them from the earlier posed Y and Z, which
    the components read before still held (X 9.42° shown where the key is 10°)."""
    import bpy

    obj = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
    scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    obj.data.edit_bones.new("Bone").tail = (0.0, 0.0, 1.0)
    bpy.ops.object.mode_set(mode="POSE")
    pb = obj.pose.bones["Bone"]
    pb.rotation_mode = "XYZ"
    s = pb.jointlimit
    s.enabled, s.kind, s.hinge_axis, s.hinge_min, s.hinge_max = True, "HINGE", "X", D(-20), D(120)
    for frame, x in ((1, 10.0), (10, 100.0)):
        pb.rotation_euler = (D(x), 0.0, 0.0)
        pb.keyframe_insert("rotation_euler", index=0, frame=frame)
    data = obj.animation_data
    action, slot = data.action, data.action_slot
    if on_strip:    # the action plays from an NLA strip: a script's F-curves go into the strip's action
        data.nla_tracks.new().strips.new("Strip", 1, action)
        data.action = None
    pb.rotation_euler = (0.3, 0.2, 0.1)
    scene.frame_start, scene.frame_end = 1, 10
    scene.jointlimit.clamp_playback = True

    def play():
        if playing:
            mods["handlers"].on_playback_start(scene)
        shown = []
        for frame in range(1, 11):
            scene.frame_set(frame)
            shown.append(math.degrees(pb.rotation_euler[0]))
        if playing:
            mods["handlers"].on_playback_stop(scene, None)
        return shown

    assert play()[0] == pytest.approx(9.42, abs=0.01)      # posed Y and Z: off the hinge, clamped
    if on_strip:
        slot = data.nla_tracks[0].strips[0].action_slot
        bag = mods["compat"].action_fcurve_collection(action, slot)
        for index in (1, 2):
            fc = bag.new(pb.path_from_id("rotation_euler"), index=index)
            for frame in (1, 10):
                fc.keyframe_points.insert(frame, 0.0)
    else:
        for frame in (1, 10):
            scene.frame_set(frame)
            pb.rotation_euler[1] = pb.rotation_euler[2] = 0.0
            pb.keyframe_insert("rotation_euler", index=1, frame=frame)
            pb.keyframe_insert("rotation_euler", index=2, frame=frame)
    shown = play()
    assert shown[0] == pytest.approx(10.0, abs=1e-4) and shown[-1] == pytest.approx(100.0, abs=1e-4)


def test_clamp_playback_clamps_the_frame_shown_without_a_frame_change(scene, mods, tmp_path):
    """Live Limits off, Clamp Playback on: the frame shown is clamped when Clamp Playback is
    switched on, when a key is edited, and when the file is opened (each showed the keys'
    unclamped pose until the next frame change)."""
    import bpy

    obj = limited_rig()
    pb = next(pb for pb in obj.pose.bones if pb.jointlimit.enabled)
    configure(pb.jointlimit, "SWING_TWIST", "RECT", "OPTIMAL")
    limit = mods["bone_limits"].build_limit(pb.jointlimit)
    pb.rotation_mode = "QUATERNION"
    for frame, angle in ((1, 0.0), (10, 150.0)):     # the limit's Swing X ends at 110°
        pb.rotation_quaternion = (math.cos(D(angle) / 2), math.sin(D(angle) / 2), 0.0, 0.0)
        pb.keyframe_insert("rotation_quaternion", frame=frame)
    scene.jointlimit.live = False
    scene.frame_set(10)
    names = obj.name, pb.name

    def shown_inside():
        depsgraph = bpy.context.evaluated_depsgraph_get()
        shown = bpy.data.objects[names[0]].evaluated_get(depsgraph).pose.bones[names[1]]
        return mods["bone_limits"].is_inside(limit, mods["bone_limits"].read_rotation(shown), 1e-5)

    assert not shown_inside()
    scene.jointlimit.clamp_playback = True
    assert shown_inside()
    data = obj.animation_data
    for fc in compat().action_fcurves(data.action, data.action_slot):
        if fc.array_index == 1:
            for point in fc.keyframe_points[-1:]:       # the key at frame 10 turned further out
                point.co.y += 0.05
                point.handle_left.y += 0.05
                point.handle_right.y += 0.05
            fc.update()
    bpy.context.view_layer.update()
    assert shown_inside()
    path = tmp_path / "clamped.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path))
    assert bpy.context.scene.jointlimit.clamp_playback and not bpy.context.scene.jointlimit.live
    assert shown_inside()
    bpy.context.scene.jointlimit.clamp_playback = False


@pytest.mark.parametrize("fast_scrubbing", [False, True])
def test_switching_clamp_playback_off_shows_the_keys_at_once(scene, mods, fast_scrubbing):
    """Clamp Playback switched off gives each bone the clamp moved its keys' values on the frame
    shown at once (the clamped values stayed until the frame changed: a bone keyed on X only showed
    the clamped X with the posed Y and Z), and the posed values of components nothing animates come
    back as before; a bone posed since, limited or not, keeps its pose (the whole animation
    evaluated again took it)."""
    import bpy

    obj = make_armature([("b", (0, 0, 0), (0, 0, 1), None, 0.0), ("c", (0, 0, 1), (0, 0, 2), "b", 0.0),
                         ("d", (0, 0, 2), (0, 0, 3), "c", 0.0), ("e", (0, 0, 3), (0, 0, 4), "d", 0.0)], "Keyed")
    whole, part, posed, free = (obj.pose.bones[n] for n in "bcde")
    for pb in (whole, part, posed, free):
        pb.rotation_mode = "XYZ"
    for pb in (whole, part, posed):
        configure(pb.jointlimit, "HINGE", None, None)
    for pb, x in ((whole, 170), (posed, 10), (free, 5)):
        pb.rotation_euler = (D(x), 0.0, 0.0)
        pb.keyframe_insert("rotation_euler", frame=1)
        pb.keyframe_insert("rotation_euler", frame=5)
    part.rotation_euler = (D(170), 0.0, D(50))
    part.keyframe_insert("rotation_euler", index=0, frame=1)
    bpy.ops.object.mode_set(mode="OBJECT")
    scene.jointlimit.fast_scrubbing = fast_scrubbing
    scene.jointlimit.clamp_playback = True
    for frame in (2, 3):    # (the playback layer is set up from the second frame outside playback)
        scene.frame_set(frame)
    assert math.degrees(whole.rotation_euler[0]) == pytest.approx(140, abs=1e-3)
    assert math.degrees(part.rotation_euler[0]) == pytest.approx(140, abs=1e-3)
    posed.rotation_euler[0], free.rotation_euler[0] = D(30), D(25)     # posed since, not keyed
    bpy.context.view_layer.update()
    scene.jointlimit.clamp_playback = False
    bpy.context.view_layer.update()
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).pose.bones
    for pb in (whole, part, evaluated["b"], evaluated["c"]):
        assert math.degrees(pb.rotation_euler[0]) == pytest.approx(170, abs=1e-3)
    assert math.degrees(part.rotation_euler[2]) == pytest.approx(50, abs=1e-3)
    for pb, x in ((posed, 30), (free, 25), (evaluated["d"], 30), (evaluated["e"], 25)):
        assert math.degrees(pb.rotation_euler[0]) == pytest.approx(x, abs=1e-3), pb.name


@pytest.mark.parametrize("mode", ["QUATERNION", "XYZ", "AXIS_ANGLE"])
@pytest.mark.parametrize("auto_keying, clamp_playback", [(True, False), (True, True), (False, False)])
def test_live_limits_with_auto_keying_key_the_clamped_rotation(scene, mods, mode, auto_keying, clamp_playback):
    """Live Limits on, Auto Keying on: a bone rotated past its limit by Blender's transform shows
    the clamped rotation and its key on the frame holds that rotation (it held the rotation before
    the clamp: 100° where 60° showed, and the next frame change showed 100°), also with Clamp
    Playback on; with Auto Keying off the keys stay as they were; another frame's key is left
    alone."""
    import bpy

    obj = make_armature([("b", (0, 0, 0), (0, 0, 1), None, 0.0)], "Keyed")
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="POSE")
    pb = obj.pose.bones["b"]
    pb.rotation_mode = mode
    settings = pb.jointlimit
    settings.enabled, settings.kind, settings.shape = True, "SWING_TWIST", "RECT"
    settings.swing_x_min, settings.swing_x_max = D(-60), D(60)    # (Blender 4.5 turns the other way)
    settings.swing_z_min, settings.swing_z_max = D(-20), D(40)
    attr, _ = mods["bone_limits"].rotation_path(pb)
    for frame in (1, 10):
        pb.keyframe_insert(attr, frame=frame)
    select_only(obj, {"b"}, active="b")
    scene.frame_set(1)
    scene.jointlimit.live = True
    scene.jointlimit.clamp_playback = clamp_playback
    scene.tool_settings.use_keyframe_insert_auto = auto_keying
    before = mods["bone_limits"].read_rotation(pb)
    try:
        bpy.ops.transform.rotate(value=D(100), orient_axis="X", orient_type="LOCAL")
        bpy.context.view_layer.update()
        shown = mods["bone_limits"].read_rotation(pb)
        limit = mods["bone_limits"].build_limit(settings)
        assert mods["bone_limits"].is_inside(limit, shown, 1e-5)
        assert mods["core.quat"].angle_between(shown, before) > D(50)
        scene.jointlimit.clamp_playback = False     # (the keys as they are)
        scene.frame_set(2)
        scene.frame_set(1)
        again = mods["bone_limits"].read_rotation(pb)
        assert mods["core.quat"].angle_between(again, shown if auto_keying else before) < 1e-5
        scene.frame_set(10)
        assert mods["core.quat"].angle_between(mods["bone_limits"].read_rotation(pb), before) < 1e-6
    finally:
        scene.tool_settings.use_keyframe_insert_auto = False
        scene.jointlimit.live = scene.jointlimit.clamp_playback = False


def test_live_limits_with_auto_keying_leave_the_keys_of_bones_not_posed_alone(scene, mods):
    """Live Limits and Auto Keying on, keys outside the limit on the frame (mocap): keying another
    bone (the action edited, the rig's animation evaluated again, Live Limits clamping what it
    shows) leaves the keys of the limited bone nobody posed as they are."""
    import bpy

    obj = make_armature([("b", (0, 0, 0), (0, 0, 1), None, 0.0), ("c", (1, 0, 0), (1, 0, 1), None, 0.0)], "Mocap")
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="POSE")
    pb, other = obj.pose.bones["b"], obj.pose.bones["c"]
    configure(pb.jointlimit, "SWING_TWIST", "RECT", "OPTIMAL")
    outside = mods["core.quat"].from_axis_angle([1, 0, 0], D(150))     # the limit's Swing X ends at 110°
    pb.rotation_mode = "QUATERNION"
    mods["bone_limits"].write_rotation(pb, outside)
    pb.keyframe_insert("rotation_quaternion", frame=1)
    select_only(obj, {"c"}, active="c")
    scene.frame_set(1)
    scene.jointlimit.live = True
    scene.tool_settings.use_keyframe_insert_auto = True
    try:
        other.location = (0.0, 0.2, 0.0)
        other.keyframe_insert("location", frame=1)      # (I on another bone)
        bpy.context.view_layer.update()
        data = obj.animation_data
        keys = [fc.evaluate(1) for fc in compat().action_fcurves(data.action, data.action_slot)
                if fc.data_path == 'pose.bones["b"].rotation_quaternion']
        assert np.allclose(keys, outside, atol=1e-6)
    finally:
        scene.tool_settings.use_keyframe_insert_auto = False
        scene.jointlimit.live = False


@pytest.mark.parametrize("mode", ["QUATERNION", "XYZ"])
@pytest.mark.parametrize("fast_scrubbing", [True, False])
def test_clamp_playback_shows_an_edited_limit_at_once(scene, mods, mode, fast_scrubbing):
    """Clamp Playback on, keys outside the limit: editing the limit shows the keys clamped by the
    edited limit at once (the frame kept the old clamp until the frame changed: widened, narrowed
    even outside the new limit, switched off), switching it off shows the keys; a bone posed since
    keeps its pose."""
    import bpy

    obj = make_armature([("b", (0, 0, 0), (0, 0, 1), None, 0.0)], "Keyed")
    pb = obj.pose.bones["b"]
    pb.rotation_mode = mode
    settings = pb.jointlimit
    settings.enabled, settings.kind, settings.shape = True, "SWING_TWIST", "RECT"
    settings.swing_x_min, settings.swing_x_max = D(-30), D(60)
    settings.swing_z_min, settings.swing_z_max = D(-20), D(40)
    attr, _ = mods["bone_limits"].rotation_path(pb)
    keyed = mods["core.quat"].from_axis_angle([1, 0, 0], D(100))
    for frame in (1, 10):
        mods["bone_limits"].write_rotation(pb, keyed)
        pb.keyframe_insert(attr, frame=frame)
    scene.jointlimit.fast_scrubbing = fast_scrubbing
    scene.jointlimit.clamp_playback = True
    for frame in (4, 5):
        scene.frame_set(frame)

    def shown():
        rotation = mods["bone_limits"].read_rotation(pb)
        return math.degrees(mods["core.quat"].angle_between(rotation, (1, 0, 0, 0)))

    try:
        assert shown() == pytest.approx(60, abs=1e-3)
        for edit, angle in ((("swing_x_max", D(80)), 80), (("swing_x_max", D(30)), 30), (("swing_x_max", D(170)), 100),
                            (("swing_x_max", D(60)), 60), (("enabled", False), 100), (("enabled", True), 60)):
            setattr(settings, *edit)
            assert shown() == pytest.approx(angle, abs=1e-3), edit
        mods["bone_limits"].write_rotation(pb, mods["core.quat"].from_axis_angle([1, 0, 0], D(20)))     # posed since
        settings.swing_x_max = D(50)
        assert shown() == pytest.approx(20, abs=1e-3)
        scene.frame_set(6)
        assert shown() == pytest.approx(50, abs=1e-3)
    finally:
        scene.jointlimit.clamp_playback = False


def test_bones_added_in_edit_mode_print_no_error_line(scene, mods, capfd):
    """Bones added in Edit Mode with Live Limits on: the next pass counts the bones first (its
    probe of the rotation modes found more bones than slots, and Blender printed
    'ERROR Array length mismatch' on the console)."""
    import bpy

    obj = limited_rig()
    scene.jointlimit.live = True
    try:
        bpy.context.view_layer.update()
        bpy.ops.object.mode_set(mode="EDIT")
        for i in range(3):
            extra = obj.data.edit_bones.new(f"extra{i}")
            extra.head, extra.tail = (1, i, 0), (1, i, 1)
        capfd.readouterr()
        bpy.ops.object.mode_set(mode="POSE")
        random_pose(obj, 7)
        bpy.context.view_layer.update()
        out, err = capfd.readouterr()
        assert "Array length mismatch" not in out + err
    finally:
        scene.jointlimit.live = False
