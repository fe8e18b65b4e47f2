"""Japanese UI: every operator, property, enum item, panel, menu and fixed UI/report text of the
installed add-on has a ja_JP translation in the registered dictionary (issue 10)."""

import ast
import importlib
import pathlib
import pkgutil
import re
import string

import pytest

pytestmark = [pytest.mark.blender]

# Texts that read the same in Japanese (axis names, acronyms, the product's name).
SAME_IN_JAPANESE = {"X", "Z", "-X", "-Z", "XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX", "LBS", "SBS", "SDEF (SBS+)", "CCD IK", "JointLimit"}


@pytest.fixture(scope="module")
def translations(addon):
    return importlib.import_module(f"{addon.__name__}.translations")


@pytest.fixture(scope="module")
def ja(translations):
    dictionary = translations.registered_dictionary()
    assert dictionary is not None, "the translations are not registered"
    return dictionary["ja_JP"]


def operator_classes(addon):
    """Every Operator subclass defined in any module of the operators package."""
    import bpy

    package = importlib.import_module(f"{addon.__name__}.operators")
    found = set(package.classes)
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, bpy.types.Operator) and obj.__module__ == module.__name__:
                found.add(obj)
    return sorted(found, key=lambda c: c.bl_idname)


def operator_rna(cls):
    import bpy

    category, name = cls.bl_idname.split(".")
    return getattr(getattr(bpy.ops, category), name).get_rna_type()


def property_messages(rna, skip=frozenset()):
    out = []
    for prop in rna.properties:
        if prop.identifier in skip or prop.identifier == "rna_type":
            continue
        where = f"{rna.identifier}.{prop.identifier}"
        out += [(prop.translation_context, prop.name, where), ("*", prop.description, where)]
        if prop.type == "ENUM":
            for item in prop.enum_items:
                out += [(prop.translation_context, item.name, where), ("*", item.description, where)]
    return [m for m in out if m[1]]


def addon_types(addon, base):
    return [c for c in base.__subclasses__() if c.__module__.startswith(addon.__name__)]


def test_operators_are_collected_dynamically(addon):
    """All operators of the package are found, and every one of them is registered."""
    import bpy

    classes = operator_classes(addon)
    ids = {c.bl_idname for c in classes}
    assert {"pose.jointlimit_apply", "pose.jointlimit_preset_apply", "pose.jointlimit_preset_save"} <= ids
    for cls in classes:
        assert operator_rna(cls).name == cls.bl_label, f"{cls.bl_idname} is not registered"
    assert bpy.app.translations.contexts.operator_default == "Operator"


def test_every_operator_label_and_tooltip_is_translated(addon, ja):
    missing = []
    for cls in operator_classes(addon):
        rna = operator_rna(cls)
        if ("Operator", rna.name) not in ja:
            missing.append(f"label of {cls.bl_idname}: {rna.name!r}")
        if ("*", rna.description) not in ja:
            missing.append(f"tooltip of {cls.bl_idname}: {rna.description!r}")
        missing += [f"{where}: {text!r}" for ctx, text, where in property_messages(rna) if (ctx, text) not in ja]
    assert missing == []


def test_every_setting_is_translated(addon, ja):
    import bpy

    base = set(bpy.types.PropertyGroup.bl_rna.properties.keys())  # Blender's own "name"
    messages = []
    for cls in addon_types(addon, bpy.types.PropertyGroup):
        messages += property_messages(cls.bl_rna, skip=base)
    for type_name in ("PoseBone", "Scene", "Object", "Mesh", "Armature"):
        for prop in getattr(bpy.types, type_name).bl_rna.properties:
            if prop.identifier.startswith("jointlimit"):
                messages += [("*", prop.name, type_name), ("*", prop.description, type_name)]
    assert len(messages) > 100
    assert [m for m in messages if m[:2] not in ja] == []


def test_panels_and_menus_are_translated(addon, ja):
    import bpy

    labels = [c.bl_label for base in (bpy.types.Panel, bpy.types.Menu) for c in addon_types(addon, base)]
    assert "Joint Limit Presets" in labels
    assert [label for label in labels if ("*", label) not in ja] == []


def _literal_calls(source, names):
    """First-argument string literals of calls to ``names`` (or of keyword ``text=``)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        args = list(node.args)
        if name == "report" and len(args) > 1:
            args = args[1:]
        if name in names and args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str):
            out.append(args[0].value)
        for kw in node.keywords:
            if kw.arg == "text" and isinstance(kw.value, ast.Constant) and kw.value.value:
                out.append(kw.value.value)
    return out


def test_fixed_ui_texts_reports_and_preset_names_are_translated(addon, ja):
    root = pathlib.Path(addon.__file__).parent
    texts = []
    for path in [root / "ui.py", root / "presets.py", *sorted((root / "operators").glob("*.py"))]:
        texts += _literal_calls(path.read_text(), {"report", "_rpt", "_iface", "report_text", "PresetError", "poll_message_set",
                                                        "ValueError", "DataError"})
    texts += re.findall(r'return "([^"{]+)"', (root / "operators" / "_common.py").read_text())
    data = importlib.import_module(f"{addon.__name__}.presets_data")
    for table in (data.JOINTS, data.CHAINS):
        texts += [t for entry in table.values() for t in (entry["label"], entry["description"])]
    assert len(texts) > 60
    assert sorted({t for t in texts if ("*", t) not in ja}) == []


def test_translations_are_japanese_and_keep_placeholders(translations):
    fields = string.Formatter()
    for english, japanese in translations.MESSAGES.items():
        assert isinstance(japanese, str) and japanese.strip(), english
        assert english == translations.normalise(english)
        if english not in SAME_IN_JAPANESE:
            assert re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", japanese), f"not Japanese: {english!r} -> {japanese!r}"
        keys_en = sorted(f[1] for f in fields.parse(english) if f[1])
        keys_ja = sorted(f[1] for f in fields.parse(japanese) if f[1])
        assert keys_en == keys_ja, english


def test_translation_follows_the_ui_language(addon, ja):
    """With the UI in Japanese, Blender's lookup returns our text (skipped where this Blender build
    has no locales, as the ``bpy`` module from PyPI)."""
    import bpy

    view = bpy.context.preferences.view
    languages = {item.identifier for item in view.bl_rna.properties["language"].enum_items}
    if "ja_JP" not in languages:
        pytest.skip("this Blender has no ja_JP locale (built without international support)")
    old = (view.language, view.use_translate_interface, view.use_translate_tooltips)
    try:
        view.language = "ja_JP"
        view.use_translate_interface = view.use_translate_tooltips = True
        tr = bpy.app.translations
        assert tr.pgettext_iface("Apply Joint Limits", "Operator") == "関節制限を適用"
        assert tr.pgettext_iface("Show Limits") == ja[("*", "Show Limits")]
        assert tr.pgettext_tip("Keep the twist at zero") == "ひねりを常に 0 に保ちます"
    finally:
        view.language, view.use_translate_interface, view.use_translate_tooltips = old


def test_dictionary_has_operator_context_entries_and_verbatim_docstrings(addon, ja):
    """Multi-line docstrings are keyed exactly as Blender stores them (indentation included)."""
    multi = [c for c in operator_classes(addon) if "\n" in (c.__doc__ or "")]
    for cls in multi:
        assert ("*", cls.__doc__) in ja
    assert ja[("Operator", "Apply Joint Limit Preset")] == "関節制限プリセットを適用"


def test_long_name_lists_end_with_one_translated_more(addon, ja):
    """Reports cut a list of bone names at five, the rest counted by one translated "(+N more)"
    (the list of skipped rig mechanism bones said ", +N more" in English in every language)."""
    bone_limits = importlib.import_module(f"{addon.__name__}.bone_limits")
    common = importlib.import_module(f"{addon.__name__}.operators._common")
    names = [f"b{i}" for i in range(8)]
    assert bone_limits.skipped_text(names) == " (skipped 8 rig mechanism bones: b0, b1, b2, b3, b4 (+3 more))"
    assert common.name_list(names) == "b0, b1, b2, b3, b4 (+3 more)" and common.name_list(names[:5]) == "b0, b1, b2, b3, b4"
    assert ("*", "(+{count} more)") in ja
