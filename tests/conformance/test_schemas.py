"""Schema rules (specification clauses 4 to 6), for both versions, through the full pipeline."""

from __future__ import annotations

import json
from typing import Any

import pytest

import cmp
from tests.support.packets import encode, minimal, put
from tests.support.vectors import assert_passes, params

BOTH = ("0.1", "0.2")


@pytest.mark.parametrize("vector", params("schema-v0.1", "schema-v0.2", "versioning"))
def test_schema_vector(vector: dict[str, Any]) -> None:
    """Both sides of every bound (1- to 4-byte characters), every enum, pattern, required
    member, extra-member site, null and wrong type, for both versions: specification 4 to 6."""
    assert_passes(vector)


def findings(obj: Any) -> list[tuple[str, str, str | None]]:
    report = cmp.check(encode(obj))
    return [(f.code, f.path, f.keyword) for f in report.errors]


def test_ltm_version_is_const_in_v02_and_pattern_in_v01() -> None:
    from cmp.schema import load_schema

    assert load_schema("0.2")["properties"]["ltm_version"] == {"type": "string", "const": "0.2"}
    assert load_schema("0.1")["properties"]["ltm_version"]["pattern"] == r"^\d+\.\d+$"


def test_schema_ids_and_draft() -> None:
    from cmp.schema import load_schema

    for version in BOTH:
        schema = load_schema(version)
        assert schema["$id"] == f"https://ltm-cli.dev/schema/core-memory.v{version}.json"
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_the_top_level_schema_files_are_links_to_the_shipped_ones() -> None:
    """One copy of each schema: the package's (it ships in the wheel); schema/ at the top
    of the repository, where readers look for it, holds relative links to that copy."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    for version in BOTH:
        name = f"core-memory.v{version}.json"
        top = root / "schema" / name
        inside = root / "cmp" / "schema" / name
        assert top.is_symlink() and not inside.is_symlink(), name
        assert top.readlink().as_posix() == f"../cmp/schema/{name}"
        assert top.resolve() == inside.resolve()
    # Beside them, the catalog entry for editors (tests/unit/test_release.py).
    schemas = [f"core-memory.v{v}.json" for v in BOTH]
    assert sorted(p.name for p in (root / "schema").iterdir()) == ["catalog.json", *schemas]


def test_every_error_is_reported_not_just_the_first() -> None:
    obj = put(put(put(minimal(), "tags[0]", "Bad"), "goal", ""), "x", 1)
    assert findings(obj) == [
        ("schema", "$.goal", "minLength"),
        ("schema", "$.tags[0]", "pattern"),
        ("schema", "$.x", "additionalProperties"),
    ]


def test_messages_are_one_line_and_quote_at_most_32_characters() -> None:
    long_tag = "Q" * 5000 + "\n" + "R" * 100
    report = cmp.check(encode(put(minimal(), "tags[0]", long_tag)))
    (finding,) = report.errors
    assert "\n" not in finding.message
    assert finding.message.count("Q") == 32
    assert "R" not in finding.message


def test_deep_value_in_schema_error_does_not_recurse() -> None:
    deep = "[" * 5000 + '"x"' + "]" * 5000
    text = json.dumps(minimal())[:-1] + ', "tags": [' + deep + "]}"
    report = cmp.check(text)
    assert [(f.code, f.path, f.keyword) for f in report.errors] == [("schema", "$.tags[0]", "type")]


def _object(*names: str, required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": {n: {"type": "string"} for n in names}, "required": list(required)}


def test_the_layout_keeps_every_versions_order() -> None:
    """The members of both versions, each where its own version puts it (the writers' order)."""
    from cmp.schema import layout, load_schema, members

    older, newer = _object("a", "c", "e"), _object("a", "b", "c", "d", "e")
    assert [m.name for m in layout([older, newer])["$"]] == ["a", "b", "c", "d", "e"]
    assert [m.name for m in layout([newer, older])["$"]] == ["a", "b", "c", "d", "e"]
    for version in BOTH:
        for location, listed in layout([load_schema(version)]).items():
            union = [m.name for m in members()[location]]
            assert [union.index(m.name) for m in listed] == sorted(union.index(m.name) for m in listed)


@pytest.mark.parametrize(
    ("first", "second", "message"),
    [
        (_object("a", "b"), _object("b", "a"), "order the members of \\$ differently"),
        (_object("a", required=("a",)), _object("a"), "disagree about \\$.a"),
        (_object("a"), {"type": "object", "properties": {"a": {"type": "boolean"}}}, "disagree about \\$.a"),
    ],
)
def test_schemas_without_one_canonical_order_are_refused(
    first: dict[str, Any], second: dict[str, Any], message: str
) -> None:
    from cmp.schema import layout

    with pytest.raises(ValueError, match=message):
        layout([first, second])


def test_a_member_of_a_kind_the_writers_do_not_know_is_refused() -> None:
    from cmp.schema import layout

    with pytest.raises(ValueError, match=r"no member kind for \$\.n"):
        layout([{"type": "object", "properties": {"n": {"type": "integer"}}}])
