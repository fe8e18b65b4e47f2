"""Everything that differs between the Blender versions JointLimit supports (4.5 LTS, 5.0, 5.2 LTS).

Code elsewhere never checks ``bpy.app.version`` or probes for attributes that come and go between
releases; it calls these functions. Each one names the release that changed the API.
"""


def pose_bone_selected(pose_bone):
    """Whether a pose bone is selected (5.0 moved selection from ``Bone`` to ``PoseBone``)."""
    selected = getattr(pose_bone, "select", None)
    return pose_bone.bone.select if selected is None else bool(selected)


def select_pose_bone(pose_bone, value):
    """Select or deselect a pose bone (see :func:`pose_bone_selected`)."""
    if hasattr(pose_bone, "select"):
        pose_bone.select = bool(value)
    else:
        pose_bone.bone.select = bool(value)


def _modifier_inputs(mod):
    # 5.2 exposes node-group inputs as ``mod.properties.inputs.<identifier>.value``; writing the
    # modifier's ID properties (``mod[identifier] = value``) raises TypeError there.
    properties = getattr(mod, "properties", None)
    return getattr(properties, "inputs", None)


def modifier_input(mod, identifier, default=None):
    """Value of the geometry-nodes modifier input ``identifier`` (e.g. ``'Socket_2'``), or
    ``default`` when the modifier has no such input."""
    inputs = _modifier_inputs(mod)
    if inputs is None:
        return mod.get(identifier, default)
    socket = getattr(inputs, identifier, None)
    return default if socket is None else socket.value


def set_modifier_input(mod, identifier, value):
    """Set the geometry-nodes modifier input ``identifier`` to ``value`` (number, object, ...)."""
    inputs = _modifier_inputs(mod)
    if inputs is None:
        mod[identifier] = value
    else:
        getattr(inputs, identifier).value = value


def key_modifier_input(mod, identifier, frame):
    """Key the geometry-nodes modifier input ``identifier`` at ``frame``, as its field's Insert
    Keyframe does (5.2: on the input's ``value``; before: the modifier's ID property)."""
    inputs = _modifier_inputs(mod)
    if inputs is None:
        mod.keyframe_insert(f'["{identifier}"]', frame=frame)
    else:
        getattr(inputs, identifier).keyframe_insert("value", frame=frame)


def action_fcurve_collection(action, slot):
    """The one F-curve collection of ``action`` for ``slot`` (with ``find``), or ``None`` when
    there is none or more than one (several layers or strips)."""
    if action is None:
        return None
    layers = getattr(action, "layers", None)
    if not layers:
        return getattr(action, "fcurves", None)
    if slot is None or len(layers) != 1 or len(layers[0].strips) != 1:
        return None
    bag = layers[0].strips[0].channelbag(slot)
    return None if bag is None else bag.fcurves


def strip_fcurves(strip):
    """F-curves of an NLA strip's action for the strip's slot (strips have one from 4.4 on)."""
    return action_fcurves(strip.action, getattr(strip, "action_slot", None))


def strip_fcurve_count(strip):
    """``len(strip_fcurves(strip))`` without making the list."""
    return action_fcurve_count(strip.action, getattr(strip, "action_slot", None))


def action_fcurves(action, slot):
    """F-curves of ``action`` for ``slot``: layered (slotted) actions, or a legacy action's list
    (``Action.fcurves`` exists up to 4.5 and is gone in 5.0)."""
    if action is None:
        return []
    layers = getattr(action, "layers", None)
    if layers:
        if slot is None:
            return []
        curves = []
        for layer in layers:
            for strip in layer.strips:
                bag = strip.channelbag(slot)
                if bag is not None:
                    curves.extend(bag.fcurves)
        return curves
    return list(getattr(action, "fcurves", []))


def find_fcurve(action, slot, data_path, index):
    """The F-curve of ``action`` for ``slot`` animating ``data_path`` at ``index``, or ``None``:
    Blender's own lookup, with no Python loop over the action's curves (a keyed rig has thousands)."""
    if action is None:
        return None
    layers = getattr(action, "layers", None)
    if not layers:
        curves = getattr(action, "fcurves", None)
        return None if curves is None else curves.find(data_path, index=index)
    if slot is None:
        return None
    for layer in layers:
        for strip in layer.strips:
            bag = strip.channelbag(slot)
            found = None if bag is None else bag.fcurves.find(data_path, index=index)
            if found is not None:
                return found
    return None


def action_fcurve_count(action, slot):
    """``len(action_fcurves(action, slot))`` without making the list (a few property reads)."""
    if action is None:
        return 0
    layers = getattr(action, "layers", None)
    if layers:
        if slot is None:
            return 0
        bags = (strip.channelbag(slot) for layer in layers for strip in layer.strips)
        return sum(len(bag.fcurves) for bag in bags if bag is not None)
    return len(getattr(action, "fcurves", ()))


def running_version():
    """``(major, minor)`` of the running Blender."""
    import bpy

    return tuple(bpy.app.version[:2])


def newer_file_version():
    """``(major, minor)`` of the Blender that saved the open file when it is newer than the running
    one (which would write the file in its own, older format), else ``None``; the file's
    subversion counts, as in Blender's own warning."""
    import bpy

    saved = tuple(bpy.data.version)
    return saved[:2] if saved > tuple(bpy.app.version_file) else None
