"""docs/rules.md is the catalog's page, as `core-memory-packet rules --format markdown` writes it."""

from __future__ import annotations

from pathlib import Path

from cmp.cli._catalog import catalog, rules_markdown
from tests.unit.test_docs import _anchors

PAGE = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def test_the_rules_page_is_what_the_catalog_generates() -> None:
    assert PAGE.read_text(encoding="utf-8") == rules_markdown(), (
        "docs/rules.md is generated: python -m cmp rules --format markdown > docs/rules.md"
    )


def test_every_rule_has_the_section_its_help_link_names() -> None:
    anchors = _anchors(PAGE)
    missing = [rule.id for rule in catalog() if rule.anchor not in anchors]
    assert not missing
    assert all(rule.help_uri.endswith(f"/docs/rules.md#{rule.anchor}") for rule in catalog())
