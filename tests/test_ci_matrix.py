"""The Blender versions CI runs are the Makefile's, and the README's table says exactly those."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent


def makefile_versions():
    match = re.search(r"^SUPPORTED_BPY\s*:=\s*(.+)$", (ROOT / "Makefile").read_text(), re.M)
    return match.group(1).split()


def ci_versions():
    default = makefile_versions()[0]
    versions = []
    for line in (ROOT / ".ci" / "run").read_text().splitlines():
        match = re.match(r"^make test(?:\s+BPY_VERSION=(\S+))?\s*$", line.strip())
        if match:
            versions.append(match.group(1) or default)
    return versions


def readme_ci_versions():
    text = (ROOT / "README.md").read_text()
    table = text.split("## Supported Blender versions", 1)[1].split("\n## ", 1)[0]
    return [re.search(r"`bpy==([\d.]+)`", row).group(1) for row in table.splitlines()
            if row.startswith("|") and "tested in CI" in row]


def test_ci_runs_every_supported_blender_once():
    assert sorted(ci_versions()) == sorted(makefile_versions())
    assert len(set(ci_versions())) == len(ci_versions())


def test_readme_table_lists_exactly_what_ci_runs():
    assert sorted(readme_ci_versions()) == sorted(ci_versions())


def test_default_blender_is_5_2_lts_and_manifest_minimum_is_listed():
    assert makefile_versions()[0].startswith("5.2.")
    manifest = (ROOT / "blender_manifest.toml").read_text()
    minimum = re.search(r'^blender_version_min\s*=\s*"([\d.]+)"', manifest, re.M).group(1)
    assert f"`blender_version_min = \"{minimum}\"`" in (ROOT / "README.md").read_text()
