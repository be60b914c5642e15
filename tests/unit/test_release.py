"""What a release rests on (docs/release.md): the workflows run what the README and pyproject.toml
promise, publishing is PyPI's trusted publishing alone, the published schemas keep their ``$id``s
and the catalog points editors at them, and the plugin's version is the package's."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import cmp
from tests.support.extras import require

yaml = require("yaml")

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
RAW = "https://raw.githubusercontent.com/core-memory-packet/core-memory-packet/main/"


def _workflow(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    # YAML 1.1 reads the key `on` as True.
    loaded["on"] = loaded.pop(True, loaded.get("on"))
    return loaded


def _runs(job: dict[str, Any]) -> str:
    return "\n".join(step.get("run", "") for step in job["steps"])


def _uses(job: dict[str, Any]) -> list[str]:
    return [step["uses"] for step in job["steps"] if "uses" in step]


def test_the_tests_workflow_runs_the_readme_command_on_every_claimed_python() -> None:
    tests = _workflow("tests.yml")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    claimed = [c.rpartition(":: ")[2] for c in project["classifiers"] if re.fullmatch(r".*Python :: 3\.\d+", c)]
    job = tests["jobs"]["tests"]
    assert job["strategy"]["matrix"]["python"] == claimed == ["3.10", "3.11", "3.12", "3.13"]
    # The command is read from the README the way .ci/run reads it, so the two cannot drift.
    marker = "awk '/<!-- test-command -->/ {getline; getline; print; exit}' README.md"
    assert marker in _runs(job) and marker in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "@anthropic-ai/claude-code" in _runs(job)
    checks = _runs(tests["jobs"]["checks"])
    for command in ("mypy --strict cmp", "ruff check .", "python -m cmp conformance", "generate_vectors.py --check"):
        assert command in checks
    assert tests["permissions"] == {"contents": "read"}


def test_the_release_workflow_publishes_a_tag_by_trusted_publishing() -> None:
    release = _workflow("release.yml")
    assert release["on"] == {"push": {"tags": ["v*"]}}
    assert release["permissions"] == {"contents": "read"}
    build, publish = release["jobs"]["build"], release["jobs"]["publish"]
    assert "python -m build" in _runs(build) and "twine check --strict" in _runs(build)
    assert publish["needs"] == "build" and publish["permissions"] == {"id-token": "write"}
    assert publish["environment"]["name"] == "pypi"
    assert _uses(publish)[-1] == "pypa/gh-action-pypi-publish@release/v1"
    # No token: trusted publishing needs none, and no step passes one.
    assert "password" not in json.dumps(release) and "secrets." not in json.dumps(release)


def test_the_docs_workflow_builds_the_site_strictly() -> None:
    docs = _workflow("docs.yml")
    assert "mkdocs build --strict" in _runs(docs["jobs"]["build"])
    assert docs["jobs"]["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}


def test_every_docs_page_is_on_the_site() -> None:
    # mkdocs.yml's python tag (the slug function) needs the full loader; only its nav is read here.
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = set(re.findall(r"^\s+- (?:[^:\n]+: )?([\w-]+\.md)$", text, re.MULTILINE))
    assert pages == {path.name for path in (ROOT / "docs").glob("*.md")}


def test_the_published_schemas_keep_their_ids() -> None:
    for version in ("0.1", "0.2"):
        published = ROOT / "schema" / f"core-memory.v{version}.json"
        # The format's own $id (the reference implementation's), the same bytes the package ships.
        assert json.loads(published.read_bytes())["$id"] == f"https://ltm-cli.dev/schema/core-memory.v{version}.json"
        assert published.read_bytes() == (ROOT / "cmp" / "schema" / published.name).read_bytes()
    vectors = ROOT / "conformance-vectors" / "vectors.schema.json"
    assert json.loads(vectors.read_bytes())["$id"] == RAW + "conformance-vectors/vectors.schema.json"


def test_the_catalog_entry_matches_packet_files_and_names_published_schemas() -> None:
    catalog = json.loads((ROOT / "schema" / "catalog.json").read_bytes())
    assert catalog["$schema"] == "https://json.schemastore.org/schema-catalog.json" and catalog["version"] == 1
    (entry,) = catalog["schemas"]
    assert entry["fileMatch"] == ["*.cmp.json", ".cmp/packets/*.json"]
    assert entry["url"] == entry["versions"]["0.2"]
    for version, url in entry["versions"].items():
        # The package's copy: schema/ holds links to it, and a raw URL of a link serves the link's text.
        assert url == f"{RAW}cmp/schema/core-memory.v{version}.json"
        published = ROOT / url.removeprefix(RAW)
        assert published.is_file() and not published.is_symlink()
        assert json.loads(published.read_bytes())["title"] == f"Core Memory Packet v{version}"


@pytest.mark.parametrize("name", ["plugin.json", "marketplace.json"])
def test_the_plugin_is_released_with_the_package(name: str) -> None:
    manifest = json.loads((ROOT / ".claude-plugin" / name).read_bytes())
    versions = {manifest.get("version"), *(plugin.get("version") for plugin in manifest.get("plugins", []))}
    assert versions - {None} == {cmp.__version__}
