"""Schema rules of REFERENCE.md section 2, for both versions, through the full pipeline."""

from __future__ import annotations

import json
from typing import Any

import pytest

import cmp
from tests.packets import drop, encode, full, minimal, put

BOTH = ("0.1", "0.2")

# (path, min length, max length, versions). Written from REFERENCE.md, not read
# from our schema files, so a wrong schema fails these tests.
STRING_BOUNDS: list[tuple[str, int, int, tuple[str, ...]]] = [
    ("id", 10, 64, BOTH),
    ("parent_id", 10, 64, ("0.2",)),
    ("project.name", 0, 128, BOTH),
    ("project.ref", 0, 256, BOTH),
    ("goal", 1, 1024, BOTH),
    ("next_step", 1, 1024, BOTH),
    ("success_criteria[0]", 0, 1024, ("0.2",)),
    ("constraints[0]", 0, 1024, BOTH),
    ("decisions[0].what", 0, 1024, BOTH),
    ("decisions[0].why", 0, 1024, BOTH),
    ("decisions[0].consequences", 0, 1024, ("0.2",)),
    ("methods[0].when_applicable", 0, 1024, ("0.2",)),
    ("methods[0].how", 0, 2048, ("0.2",)),
    ("attempts[0].tried", 0, 1024, BOTH),
    ("attempts[0].learned", 0, 1024, BOTH),
    ("open_questions[0]", 0, 1024, BOTH),
    ("provenance.author_model", 0, 128, BOTH),
    ("provenance.author_human", 0, 128, BOTH),
]

# One code point each, of 1, 2, 3 and 4 UTF-8 bytes: lengths count code points.
CHARS = ("a", "é", "€", "😀")

ARRAY_BOUNDS: list[tuple[str, int, Any, tuple[str, ...]]] = [
    ("success_criteria", 16, "ok", ("0.2",)),
    ("constraints", 32, "ok", BOTH),
    ("decisions", 64, {"what": "w", "why": "y"}, BOTH),
    ("methods", 32, {"name": "m", "when_applicable": "w", "how": "h"}, ("0.2",)),
    ("attempts", 64, {"tried": "t", "outcome": "failed"}, BOTH),
    ("open_questions", 32, "q", BOTH),
    ("tags", 16, "t", BOTH),
]


def findings(obj: Any) -> list[tuple[str, str, str | None]]:
    report = cmp.check(encode(obj))
    return [(f.code, f.path, f.keyword) for f in report.errors]


def jsonpath(path: str) -> str:
    return "$." + path


def _cases() -> list[Any]:
    cases = []
    for path, low, high, versions in STRING_BOUNDS:
        for version in versions:
            for char in CHARS:
                cases.append(pytest.param(version, path, low, high, char, id=f"{version}-{path}-{char!a}"))
    return cases


@pytest.mark.parametrize(("version", "path", "low", "high", "char"), _cases())
def test_string_length_bounds(version: str, path: str, low: int, high: int, char: str) -> None:
    base = full(version)
    assert findings(put(base, path, char * high)) == []
    assert findings(put(base, path, char * (high + 1))) == [("schema", jsonpath(path), "maxLength")]
    if low > 0:
        assert findings(put(base, path, char * low)) == []
        assert findings(put(base, path, char * (low - 1))) == [("schema", jsonpath(path), "minLength")]
    else:
        assert findings(put(base, path, "")) == []


@pytest.mark.parametrize(
    ("version", "name", "limit", "item"),
    [pytest.param(v, n, lim, it, id=f"{v}-{n}") for n, lim, it, vs in ARRAY_BOUNDS for v in vs],
)
def test_array_item_bounds(version: str, name: str, limit: int, item: Any) -> None:
    base = minimal(version)
    if name == "tags":
        items = [f"t{i}" for i in range(limit + 1)]
    else:
        items = [item] * (limit + 1)
    assert findings({**base, name: items[:limit]}) == []
    assert findings({**base, name: items}) == [("schema", f"$.{name}", "maxItems")]
    assert findings({**base, name: []}) == []


ENUMS = [
    ("attempts[0].outcome", ("succeeded", "failed", "partial"), BOTH),
    ("attempts[0].confidence", ("low", "medium", "high"), ("0.2",)),
    ("provenance.confidence", ("low", "medium", "high"), BOTH),
]


@pytest.mark.parametrize(
    ("version", "path", "allowed"), [pytest.param(v, p, a, id=f"{v}-{p}") for p, a, vs in ENUMS for v in vs]
)
def test_enums(version: str, path: str, allowed: tuple[str, ...]) -> None:
    base = full(version)
    for value in allowed:
        assert findings(put(base, path, value)) == []
    for value in ("", allowed[0].upper(), allowed[0] + " ", "other", allowed[0] + "\n"):
        assert findings(put(base, path, value)) == [("schema", jsonpath(path), "enum")]


TAG_OK = ["a", "0", "gpu", "video-encoding", "a-", "a" * 32, "0-0", "x" + "-" * 31]
TAG_BAD = ["", "-a", "A", "gpu\n", "gpu ", " gpu", "a" * 33, "a_b", "é", "٣", "a.b", "gpu\x00"]
METHOD_OK = ["a", "fedora-mesa", "0", "a" * 128, "a-"]
METHOD_BAD = ["", "-a", "Fedora", "a b", "a\n", "a" * 129, "a_b", "ä"]
HASH = "sha256:" + "a" * 64


@pytest.mark.parametrize("version", BOTH)
@pytest.mark.parametrize("tag", TAG_OK)
def test_tag_pattern_accepts(version: str, tag: str) -> None:
    assert findings(put(minimal(version), "tags[0]", tag)) == []


@pytest.mark.parametrize("version", BOTH)
@pytest.mark.parametrize("tag", TAG_BAD)
def test_tag_pattern_refuses(version: str, tag: str) -> None:
    assert findings(put(minimal(version), "tags[0]", tag)) == [("schema", "$.tags[0]", "pattern")]


@pytest.mark.parametrize("name", METHOD_OK)
def test_method_name_pattern_accepts(name: str) -> None:
    assert findings(put(full("0.2"), "methods[0].name", name)) == []


@pytest.mark.parametrize("name", METHOD_BAD)
def test_method_name_pattern_refuses(name: str) -> None:
    result = findings(put(full("0.2"), "methods[0].name", name))
    assert ("schema", "$.methods[0].name", "pattern") in result
    # 129 characters also break maxLength; nothing else may be reported
    assert {k for _, _, k in result} <= {"pattern", "maxLength"}


@pytest.mark.parametrize("version", BOTH)
@pytest.mark.parametrize(
    "value",
    [HASH, "sha256:" + "0123456789abcdef" * 4],
)
def test_source_hash_accepts(version: str, value: str) -> None:
    assert findings(put(full(version), "provenance.source_hash", value)) == []


@pytest.mark.parametrize("version", BOTH)
@pytest.mark.parametrize(
    "value",
    [
        "",
        "sha256:" + "a" * 63,
        "sha256:" + "a" * 65,
        "SHA256:" + "a" * 64,
        "sha256:" + "A" * 64,
        HASH + "\n",
        "sha1:" + "a" * 40,
    ],
)
def test_source_hash_refuses(version: str, value: str) -> None:
    assert findings(put(full(version), "provenance.source_hash", value)) == [
        ("schema", "$.provenance.source_hash", "pattern")
    ]


REQUIRED_TOP = ("ltm_version", "id", "created_at", "goal", "next_step")
REQUIRED_NESTED = [
    ("decisions[0].what", BOTH),
    ("decisions[0].why", BOTH),
    ("methods[0].name", ("0.2",)),
    ("methods[0].when_applicable", ("0.2",)),
    ("methods[0].how", ("0.2",)),
    ("attempts[0].tried", BOTH),
    ("attempts[0].outcome", BOTH),
]


@pytest.mark.parametrize("version", BOTH)
@pytest.mark.parametrize("name", REQUIRED_TOP[1:])
def test_required_top_level(version: str, name: str) -> None:
    assert findings(drop(full(version), name)) == [("schema", f"$.{name}", "required")]


@pytest.mark.parametrize(
    ("version", "path"), [pytest.param(v, p, id=f"{v}-{p}") for p, vs in REQUIRED_NESTED for v in vs]
)
def test_required_nested(version: str, path: str) -> None:
    assert findings(drop(full(version), path)) == [("schema", jsonpath(path), "required")]


OPTIONAL = [
    "parent_id",
    "project",
    "project.name",
    "project.ref",
    "success_criteria",
    "constraints",
    "decisions",
    "decisions[0].consequences",
    "decisions[0].locked",
    "methods",
    "attempts",
    "attempts[0].learned",
    "attempts[0].confidence",
    "open_questions",
    "tags",
    "provenance",
    "provenance.author_model",
    "provenance.author_human",
    "provenance.source_hash",
    "provenance.confidence",
]


@pytest.mark.parametrize("path", OPTIONAL)
def test_optional_members_may_be_absent(path: str) -> None:
    assert findings(drop(full("0.2"), path)) == []


OBJECT_SITES = ["", "project.", "decisions[0].", "methods[0].", "attempts[0].", "provenance."]


@pytest.mark.parametrize(
    ("version", "site"), [(v, s) for v in BOTH for s in OBJECT_SITES if not (v == "0.1" and s == "methods[0].")]
)
def test_extra_members_refused_everywhere(version: str, site: str) -> None:
    assert findings(put(full(version), site + "x_extra", "v")) == [
        ("schema", jsonpath(site + "x_extra"), "additionalProperties")
    ]


V02_ONLY = [
    ("parent_id", "01J9X3K2QZ7N4M0WXYZV3R8Z01"),
    ("success_criteria", ["done"]),
    ("methods", [{"name": "m", "when_applicable": "w", "how": "h"}]),
    ("decisions[0].consequences", "c"),
    ("attempts[0].confidence", "low"),
]


@pytest.mark.parametrize(("path", "value"), V02_ONLY)
def test_v02_members_are_extra_in_v01(path: str, value: Any) -> None:
    assert findings(put(full("0.2"), path, value)) == []
    assert findings(put(full("0.1"), path, value)) == [("schema", jsonpath(path), "additionalProperties")]


MEMBER_PATHS = [
    "ltm_version",
    "id",
    "parent_id",
    "created_at",
    "project",
    "project.name",
    "project.ref",
    "goal",
    "success_criteria",
    "success_criteria[0]",
    "constraints",
    "constraints[0]",
    "decisions",
    "decisions[0]",
    "decisions[0].what",
    "decisions[0].why",
    "decisions[0].consequences",
    "decisions[0].locked",
    "methods",
    "methods[0]",
    "methods[0].name",
    "methods[0].when_applicable",
    "methods[0].how",
    "attempts",
    "attempts[0]",
    "attempts[0].tried",
    "attempts[0].outcome",
    "attempts[0].learned",
    "attempts[0].confidence",
    "open_questions",
    "open_questions[0]",
    "next_step",
    "tags",
    "tags[0]",
    "provenance",
    "provenance.author_model",
    "provenance.author_human",
    "provenance.source_hash",
    "provenance.confidence",
]


@pytest.mark.parametrize("path", MEMBER_PATHS)
def test_null_is_never_valid(path: str) -> None:
    report = cmp.check(encode(put(full("0.2"), path, None)))
    assert not report.conforming
    assert report.errors[0].path == jsonpath(path)


WRONG_TYPES = [
    ("goal", 1),
    ("goal", True),
    ("tags", "gpu"),
    ("decisions[0].locked", "true"),
    ("project", []),
    ("decisions[0]", "x"),
    ("constraints[0]", 1.5),
    ("provenance", "p"),
    ("id", ["x"] * 10),
]


@pytest.mark.parametrize(("path", "value"), WRONG_TYPES)
def test_wrong_types(path: str, value: Any) -> None:
    assert findings(put(full("0.2"), path, value)) == [("schema", jsonpath(path), "type")]


def test_ltm_version_is_const_in_v02_and_pattern_in_v01() -> None:
    from cmp.schemas import load_schema

    assert load_schema("0.2")["properties"]["ltm_version"] == {"type": "string", "const": "0.2"}
    assert load_schema("0.1")["properties"]["ltm_version"]["pattern"] == r"^\d+\.\d+$"


def test_schema_ids_and_draft() -> None:
    from cmp.schemas import load_schema

    for version in BOTH:
        schema = load_schema(version)
        assert schema["$id"] == f"https://ltm-cli.dev/schema/core-memory.v{version}.json"
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_shipped_schemas_equal_top_level_copies() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    for version in BOTH:
        name = f"core-memory.v{version}.json"
        top = root / "schema" / name
        inside = root / "cmp" / "schema" / name
        assert top.read_bytes() == inside.read_bytes(), name


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
