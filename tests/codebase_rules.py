"""Static checks of the add-on's code rules (DEVELOPERS.md), usable on any source text.

Each ``check_*`` function takes ``(path, source)`` and returns a list of violation strings, so the
tests can run them on the package and on planted violations alike.
"""

import ast
import re

PROPERTY_FUNCS = {
    "BoolProperty", "BoolVectorProperty", "IntProperty", "IntVectorProperty", "FloatProperty",
    "FloatVectorProperty", "StringProperty", "EnumProperty", "PointerProperty", "CollectionProperty",
}
CLASS_SUFFIX = {"Operator": "OT", "Panel": "PT", "Menu": "MT", "UIList": "UL", "AddonPreferences": None}
IDNAME_RE = re.compile(r"^(pose|object|wm|view3d|armature|mesh|scene|anim)\.jointlimit_[a-z0-9_]+$")
BLENDER_MODULES = {"bpy", "mathutils", "bmesh", "gpu", "gpu_extras", "bpy_extras", "addon_utils", "bl_ui", "blf"}


def _base_names(node):
    names = []
    for base in node.bases:
        if isinstance(base, ast.Attribute):
            names.append(base.attr)
        elif isinstance(base, ast.Name):
            names.append(base.id)
    return names


def _class_kind(node):
    for name in _base_names(node):
        if name in CLASS_SUFFIX:
            return name
    return None


def _class_attr(node, attr):
    for stmt in node.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == attr for t in stmt.targets):
            if isinstance(stmt.value, ast.Constant):
                return stmt.value.value
    return None


def check_class_names(path, source):
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef):
            kind = _class_kind(node)
            suffix = CLASS_SUFFIX.get(kind)
            if suffix and not re.match(rf"^[A-Z0-9]+_{suffix}_[a-z0-9_]+$", node.name):
                out.append(f"{path}:{node.lineno}: {kind} class {node.name} must be named PREFIX_{suffix}_name")
    return out


def check_operators(path, source):
    """bl_idname prefix, class name matching the idname, a description, poll_message_set in poll."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.ClassDef) and _class_kind(node) == "Operator"):
            continue
        idname = _class_attr(node, "bl_idname")
        where = f"{path}:{node.lineno}: {node.name}"
        if not idname or not IDNAME_RE.match(idname):
            out.append(f"{where}: bl_idname {idname!r} must be like 'pose.jointlimit_name'")
        else:
            category, name = idname.split(".")
            if node.name != f"{category.upper()}_OT_{name}":
                out.append(f"{where}: class name must be {category.upper()}_OT_{name}")
        if not (ast.get_docstring(node) or _class_attr(node, "bl_description")):
            out.append(f"{where}: operator needs a docstring or bl_description (its tooltip)")
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and item.name == "poll":
                calls = [n for n in ast.walk(item) if isinstance(n, ast.Attribute) and n.attr == "poll_message_set"]
                if not calls:
                    out.append(f"{where}: poll() must explain failures with cls.poll_message_set")
    return out


def check_properties(path, source):
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in PROPERTY_FUNCS:
                keys = {kw.arg for kw in node.keywords}
                missing = {"name", "description"} - keys
                if missing:
                    out.append(f"{path}:{node.lineno}: {name} without {', '.join(sorted(missing))}")
    return out


def check_core_imports(path, source):
    out = []
    for node in ast.walk(ast.parse(source)):
        modules = []
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        for module in modules:
            if module.split(".")[0] in BLENDER_MODULES:
                out.append(f"{path}:{node.lineno}: core must not import {module}")
    return out


def check_bare_except(path, source):
    return [
        f"{path}:{node.lineno}: bare 'except:'"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ExceptHandler) and node.type is None
    ]


def _is_bpy_types_target(target):
    # bpy.types.X.attr = ...
    return (
        isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Attribute)
        and isinstance(target.value.value, ast.Attribute)
        and target.value.value.attr == "types"
        and isinstance(target.value.value.value, ast.Name)
        and target.value.value.value.id == "bpy"
    )


def check_bpy_types_assignment(path, source):
    out = []
    tree = ast.parse(source)

    def visit(node, func_name):
        for child in ast.iter_child_nodes(node):
            name = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else func_name
            if isinstance(child, (ast.Assign, ast.AnnAssign)):
                targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                if any(_is_bpy_types_target(t) for t in targets) and name != "register":
                    out.append(f"{path}:{child.lineno}: bpy.types attribute assigned outside register()")
            visit(child, name)

    visit(tree, None)
    return out


def check_extension_rules(path, source):
    """Relative imports only, no bl_info, no sys.path edits."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "jointlimit_addon":
            out.append(f"{path}:{node.lineno}: use relative imports inside the package")
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "jointlimit_addon" for a in node.names):
            out.append(f"{path}:{node.lineno}: use relative imports inside the package")
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "bl_info" for t in node.targets):
            out.append(f"{path}:{node.lineno}: extensions have no bl_info (the manifest replaces it)")
        if isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name) and node.value.id == "sys":
            out.append(f"{path}:{node.lineno}: extensions must not touch sys.path")
    return out


def check_one_operator_per_file(path, source):
    ops = [n.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ClassDef) and _class_kind(n) == "Operator"]
    return [f"{path}: more than one operator in one file: {', '.join(ops)}"] if len(ops) > 1 else []


# Attributes that appear or disappear between the supported Blender versions: probing them with
# hasattr/getattr, or reading bpy.app.version, belongs in jointlimit_addon/compat.py only.
VERSION_VARYING_ATTRS = {"select", "properties", "layers", "fcurves", "channelbag", "action_slot"}
COMPAT_MODULE = "jointlimit_addon/compat.py"


def check_version_branches(path, source):
    """No Blender version checks outside the compatibility module."""
    if path.replace("\\", "/").endswith(COMPAT_MODULE):
        return []
    out = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Attribute) and node.attr in ("version", "version_string", "version_file")
                and isinstance(node.value, ast.Attribute) and node.value.attr == "app"):
            out.append(f"{path}:{node.lineno}: Blender version check outside {COMPAT_MODULE}")
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("hasattr", "getattr")
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
                and node.args[1].value in VERSION_VARYING_ATTRS):
            out.append(f"{path}:{node.lineno}: {node.func.id}(..., {node.args[1].value!r}) probes an API that differs "
                       f"between Blender versions: use {COMPAT_MODULE}")
        if (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name)
                and node.value.id in ("mod", "modifier")):
            out.append(f"{path}:{node.lineno}: set modifier inputs with compat.set_modifier_input (5.2 refuses mod[key] = value)")
    return out


PACKAGE_CHECKS = (
    check_class_names,
    check_operators,
    check_properties,
    check_bare_except,
    check_bpy_types_assignment,
    check_extension_rules,
    check_one_operator_per_file,
    check_version_branches,
)
