"""The draft schema: what a model fills through strict structured output or strict tool use."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

import cmp
from cmp.schema import DRAFT_KEYWORDS, SUPPORTED_VERSIONS, WRITER_FILLED, annotated_schema, draft_schema, load_schema
from tests.support.strict_modes import nullable, violations


def nodes(schema: Mapping[str, Any], where: str = "$") -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each node by location; a nullable one (an anyOf with null) as its value's schema, with its description."""
    yield where, schema
    if "anyOf" in schema:
        schema = schema["anyOf"][0]
    for name, member in schema.get("properties", {}).items():
        yield from nodes(member, f"{where}.{name}")
    if "items" in schema:
        yield from nodes(schema["items"], where + "[]")


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_the_draft_schema_keeps_every_rule_of_the_strict_modes(version: str) -> None:
    assert violations(draft_schema(version)) == []


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_the_checker_refuses_the_shipped_and_annotated_schemas(version: str) -> None:
    # The checker can fail: the schemas a strict mode cannot take break several of its rules.
    for schema in (load_schema(version), annotated_schema(version)):
        said = "\n".join(violations(schema))
        assert "every property is in required" in said
        assert "'maxLength' is not in the strict modes' common subset" in said


def test_the_checker_names_each_broken_rule() -> None:
    good = draft_schema()
    cases = {
        "$.goal: keyword 'minLength'": lambda s: s["properties"]["goal"].update(minLength=1),
        "$.project.anyOf[0]: an object has additionalProperties false": lambda s: s["properties"]["project"]["anyOf"][
            0
        ].pop("additionalProperties"),
        "$.decisions.anyOf[0][]: every property is in required": lambda s: s["properties"]["decisions"]["anyOf"][0][
            "items"
        ]["required"].pop(),
        "$.provenance.anyOf[0].confidence: anyOf is used only as one schema or null": lambda s: s["properties"][
            "provenance"
        ]["anyOf"][0]["properties"]["confidence"]["anyOf"].pop(),
        "$.goal: a type is one type, or one type and null": lambda s: s["properties"]["goal"].update(
            type=["string", "boolean"]
        ),
    }
    for expected, spoil in cases.items():
        schema = json.loads(json.dumps(good))
        spoil(schema)
        assert any(v.startswith(expected) for v in violations(schema)), expected


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_a_draft_has_every_member_but_those_the_writer_fills_in_schema_order(version: str) -> None:
    shipped = dict(nodes(load_schema(version)))
    drafted = dict(nodes(draft_schema(version)))
    writer = {f"$.{name}" for name in WRITER_FILLED}
    assert list(drafted) == [where for where in shipped if where not in writer]
    for where, node in drafted.items():
        original = shipped[where]
        assert set(node) <= DRAFT_KEYWORDS
        value = node["anyOf"][0] if "anyOf" in node else node
        required_in_shipped = where == "$" or where.rsplit(".", 1)[-1] in _required_of(shipped, where)
        assert nullable(node) == (not required_in_shipped), where
        if "enum" in original or "const" in original:
            values = original.get("enum", [original.get("const")])
            assert value["enum"] == values


def _required_of(shipped: Mapping[str, Mapping[str, Any]], where: str) -> list[str]:
    if where.endswith("[]"):
        return [where.rsplit(".", 1)[-1]]  # an array's items are always there
    parent = shipped[where.rsplit(".", 1)[0]]
    return list(parent.get("required", ()))


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_every_bound_the_draft_leaves_out_is_said_in_words(version: str) -> None:
    drafted = dict(nodes(draft_schema(version)))
    for where, node in nodes(load_schema(version)):
        if where not in drafted:
            continue
        words = drafted[where]["description"]
        if "maxLength" in node:
            assert f"At most {node['maxLength']:,} characters." in words, where
        if "maxItems" in node:
            assert f"At most {node['maxItems']:,} items." in words, where
        if "pattern" in node:
            assert f"Matches the pattern {node['pattern']}." in words, where
        if node.get("minLength") == 1:
            assert "Not empty." in words, where


def test_the_root_says_what_the_writer_fills_and_names_no_member_it_leaves_out() -> None:
    schema = draft_schema()
    for name in WRITER_FILLED:
        assert name in schema["description"]
        assert name not in schema["properties"]
    assert "Required members" not in json.dumps(schema)  # every member is: the shipped sentence would mislead


def test_the_draft_schema_is_a_fresh_copy_and_refuses_an_unknown_version() -> None:
    first = cmp.draft_schema()
    first["properties"].clear()
    assert cmp.draft_schema()["properties"]
    with pytest.raises(ValueError, match=r"supported: 0\.1, 0\.2"):
        cmp.draft_schema("9.9")


def test_the_patterns_stated_in_words_are_the_ones_checked() -> None:
    # A draft that keeps to the words keeps to the schema: each pattern spelt out is a real regex.
    for _, node in nodes(draft_schema()):
        for pattern in re.findall(r"Matches the pattern (\S+)\.", node["description"]):
            re.compile(pattern)


def _without_type_beside_enum(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_type_beside_enum(v) for k, v in node.items() if not (k == "type" and "enum" in node)}
    if isinstance(node, list):
        return [_without_type_beside_enum(item) for item in node]
    return node


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_anthropics_sdk_takes_the_draft_schema_as_it_is(version: str) -> None:
    # anthropic.transform_schema rewrites a schema into what strict tool use and JSON
    # outputs take: a keyword they refuse is dropped into the description as "{minLength: 1}",
    # a type list is refused. The draft comes back whole; only the type beside an enum goes
    # (an enum says it alone).
    anthropic = pytest.importorskip("anthropic")
    schema = draft_schema(version)
    assert anthropic.transform_schema(schema) == _without_type_beside_enum(schema)
    # And it can tell: the annotated schema does not come back whole.
    annotated = annotated_schema(version)
    assert "{minLength: 1" in json.dumps(anthropic.transform_schema(annotated))
