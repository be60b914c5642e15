"""The rule catalog: every rule a result can name, read from the tables that define them, each with its help."""

from __future__ import annotations

import importlib.resources
import json
import re
import sys
from pathlib import Path

import pytest

from cmp._chain import RULES as CHAIN_RULES
from cmp._lint import RULES as LINT_RULES
from cmp._pipeline import check
from cmp._redaction._rules import DEFAULT, EXTENDED, finder
from cmp.cli._catalog import (
    DOCUMENTATION_URL,
    PROJECT_URL,
    by_id,
    catalog,
    catalog_json,
    catalog_lines,
    heading_anchor,
    redaction_rule_id,
)
from cmp.findings import ADVICE_CODES, CODES
from tests.support.packets import encode, full, put

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the oldest Python the project supports
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


def _project_urls() -> dict[str, str]:
    with (ROOT / "pyproject.toml").open("rb") as file:
        urls: dict[str, str] = tomllib.load(file)["project"]["urls"]
    return urls


def test_the_urls_in_code_are_pyprojects() -> None:
    urls = _project_urls()
    assert urls["Documentation"] == DOCUMENTATION_URL
    assert urls["Homepage"] == urls["Source"] == PROJECT_URL
    assert urls["Changelog"] == f"{PROJECT_URL}/blob/main/CHANGELOG.md"
    assert urls["Issues"] == f"{PROJECT_URL}/issues"


def test_the_catalog_holds_every_code_category_and_lint_rule_once() -> None:
    ids = [rule.id for rule in catalog()]
    assert len(ids) == len(set(ids))
    expected = [
        *CODES,
        *(f"redaction/{category}" for category in DEFAULT.categories),
        *(f"redaction/extended/{category}" for category in EXTENDED.categories),
        *ADVICE_CODES,
        "gate",  # gate's own result: a file that is not its packet's canonical form
        *(f"lint/{rule.id}" for rule in LINT_RULES),
    ]
    assert ids == expected
    kinds = {rule.id: rule.kind for rule in catalog()}
    assert {kinds[code] for code in CODES} == {"finding"} and {kinds[code] for code in ADVICE_CODES} == {"advice"}
    assert kinds["redaction/aws-key"] == kinds["redaction/extended/openai-key"] == "redaction"
    assert kinds["lint/sentences"] == "lint"


def test_every_rule_has_a_description_help_and_link_under_the_documentation() -> None:
    for rule in catalog():
        assert rule.description and rule.help and len(rule.help) > len("Fix it."), rule.id
        assert rule.help_uri == f"{DOCUMENTATION_URL}rules.md#{rule.anchor}"
        assert "\n" not in rule.description and "\n" not in rule.help
    # A redaction rule's help says what its category is, and how to get rid of a match.
    aws = by_id()["redaction/aws-key"]
    assert "AWS access key" in aws.help and "[redacted:aws-key]" in aws.help
    assert (aws.rule_set, aws.category) == ("default", "aws-key")
    extra = by_id()["redaction/extended/aws-key"]
    assert extra.rule_set == "extended" and "does not read" in extra.help, "a default credential in the extra fields"
    assert by_id()["lint/env-var"].writing_rule == 3
    # The chain rule ids come from the chain module.
    assert all(rule in by_id()["chain"].help for rule in CHAIN_RULES)


def test_every_category_is_worded_by_its_own_table() -> None:
    """A redaction rule's description starts with its pattern's description: one place words a category."""
    from cmp._redaction._hit import pattern_of

    for rule in catalog():
        if rule.kind == "redaction":
            assert rule.category is not None
            pattern = pattern_of(rule.category)
            assert pattern is not None and pattern.description
            assert rule.description.startswith(pattern.description + ", found by ")


def test_anchors_are_githubs_slugs_of_the_ids() -> None:
    assert heading_anchor("redaction/extended/openai-key") == "redactionextendedopenai-key"
    assert heading_anchor("lint/missing-learned") == "lintmissing-learned"
    assert by_id()["schema"].anchor == "schema"


@pytest.mark.parametrize(
    ("rules", "text", "rule_id"),
    [
        ("default", "Key AKIAIOSFODNN7EXAMPLE here.", "redaction/aws-key"),
        ("extended", "postgres://app:Zq8rW2mXk9@db.example.com", "redaction/extended/url-credentials"),
    ],
)
def test_a_hit_names_a_rule_of_the_catalog(rules: str, text: str, rule_id: str) -> None:
    report = check(encode(put(full(), "goal", text)), rule_set=rules)  # type: ignore[arg-type]
    ids = [redaction_rule_id(hit.category, finder(hit)) for hit in report.redactions]
    assert rule_id in ids and set(ids) <= set(by_id())


def test_the_json_document_and_the_text_lines() -> None:
    document = catalog_json()
    assert list(document) == ["version", "rules"] and document["version"] == 1
    assert [entry["id"] for entry in document["rules"]] == [rule.id for rule in catalog()]
    first = document["rules"][0]
    assert list(first) == ["id", "kind", "description", "help", "url"]
    lint_rule = next(entry for entry in document["rules"] if entry["id"] == "lint/code")
    assert lint_rule["writing_rule"] == 2
    lines = catalog_lines()
    assert len(lines) == len(catalog())
    assert lines[0].split()[:2] == ["size", "finding"]
    columns = [re.match(r"(\S+) +(\S+) +", line) for line in lines]
    assert [(m.group(1), m.group(2)) for m in columns if m] == [(rule.id, rule.kind) for rule in catalog()]
    assert len({(m.start(2), m.end()) for m in columns if m}) == 1, "id, kind and description are columns"


def test_the_shipped_schema_names_the_finding_codes() -> None:
    text = (importlib.resources.files("cmp.cli") / "schemas" / "check-report.schema.json").read_text(encoding="utf-8")
    schema = json.loads(text)
    assert schema["$defs"]["finding"]["properties"]["code"]["enum"] == list(CODES)
    assert schema["properties"]["version"] == {
        "const": 1,
        "description": schema["properties"]["version"]["description"],
    }
    assert list(schema["required"]) == ["version", "results"]
