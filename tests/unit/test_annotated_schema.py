"""The annotated schema for editors and agents: words for every member, and the same verdicts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker

from cmp.cli import main
from cmp.conformance import vector_input
from cmp.schema import SUPPORTED_VERSIONS, annotated_schema, load_schema, schema_bytes
from tests.support.vectors import committed_vectors

ROOT = Path(__file__).resolve().parents[2]
WORDS = json.loads((ROOT / "cmp" / "schema" / "annotations.json").read_text(encoding="utf-8"))


def nodes(node: dict[str, Any], location: str = "$") -> list[tuple[str, dict[str, Any]]]:
    """Every object, member and array item of a schema, by location ($.decisions[].why)."""
    found = [(location, node)]
    for name, member in node.get("properties", {}).items():
        found += nodes(member, f"{location}.{name}")
    if "items" in node:
        found += nodes(node["items"], location + "[]")
    return found


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_every_node_has_words_and_the_bounds_spelt_out(version: str) -> None:
    annotated = dict(nodes(annotated_schema(version)))
    assert set(annotated) == {location for location, _ in nodes(load_schema(version))}
    for location, node in annotated.items():
        assert node["description"].startswith(WORDS[location]["description"]), location
        if "maxLength" in node:
            assert f"At most {node['maxLength']:,} characters." in node["description"], location
        if "enum" in node:
            assert all(json.dumps(value) in node["description"] for value in node["enum"]), location
    assert annotated["$.ltm_version"]["examples"] == [version]


def test_no_words_are_left_unused() -> None:
    used = {location for version in SUPPORTED_VERSIONS for location, _ in nodes(load_schema(version))}
    assert set(WORDS) == used


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_the_annotated_copy_is_a_valid_schema_and_its_examples_are_valid(version: str) -> None:
    annotated = annotated_schema(version)
    Draft202012Validator.check_schema(annotated)
    for location, node in nodes(annotated):
        for example in node.get("examples", []):
            validator = Draft202012Validator(node, format_checker=FormatChecker())
            assert validator.is_valid(example), (location, example)


def _verdict(schema: dict[str, Any], obj: Any) -> list[tuple[list[Any], str]]:
    validator = Draft202012Validator(schema, format_checker=FormatChecker())
    return sorted((list(error.absolute_path), str(error.validator)) for error in validator.iter_errors(obj))


@pytest.mark.slow
def test_the_annotated_copy_accepts_exactly_what_the_schema_accepts_over_every_vector() -> None:
    compared = 0
    for vector in committed_vectors():
        try:
            obj = json.loads(vector_input(vector))
        except (ValueError, RecursionError):
            continue  # not JSON: no schema sees it
        for version in SUPPORTED_VERSIONS:
            assert _verdict(annotated_schema(version), obj) == _verdict(load_schema(version), obj), vector["id"]
        compared += 1
    assert compared > 800


def test_the_schema_command(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    for version in SUPPORTED_VERSIONS:
        assert main(["schema", "--version", version]) == 0
        assert capsysbinary.readouterr().out == schema_bytes(version)  # the normative file, byte for byte
        assert main(["schema", "--version", version, "--annotated"]) == 0
        assert json.loads(capsysbinary.readouterr().out) == annotated_schema(version)
    assert main(["schema", "--version", "0.3"]) == 2
    err = capsysbinary.readouterr().err.decode()
    assert err.startswith("cmp: argument --version: invalid choice: '0.3'") and err.count("\n") == 1


def test_the_normative_files_are_left_alone() -> None:
    for version in SUPPORTED_VERSIONS:
        before = schema_bytes(version)
        annotated_schema(version)
        assert schema_bytes(version) == before and "description" not in load_schema(version)["properties"]["goal"]
