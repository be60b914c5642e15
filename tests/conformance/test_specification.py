"""docs/specification.md is the project's own statement of the format: every vector cites
it, it cites nothing outside the project, and the rules it lists agree with the code."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

import cmp
from cmp._intake import MAX_DEPTH, MAX_PACKET_BYTES
from cmp._redaction._scan import PATTERNS, SCANNED_FIELDS
from cmp.findings import CODES, MAX_FINDINGS
from tests.support.packets import encode, full

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "docs" / "specification.md"
VECTORS = ROOT / "conformance-vectors"
TEXT = SPEC.read_text(encoding="utf-8")

HEADING = re.compile(r"^#{2,3} (\d+(?:\.\d+)?) (\S.*)$", re.MULTILINE)
CLAUSES: dict[str, str] = {number: title for number, title in HEADING.findall(TEXT)}


def _clause_key(number: str) -> tuple[int, ...]:
    return tuple(int(part) for part in number.split("."))


def _section(number: str) -> str:
    """The text of one clause, from its heading to the next heading."""
    match = re.search(rf"^#{{2,3}} {re.escape(number)} .*$", TEXT, re.MULTILINE)
    assert match, number
    following = HEADING.search(TEXT, match.end())
    return TEXT[match.end() : following.start() if following else len(TEXT)]


def _vectors() -> list[dict[str, object]]:
    found = []
    for path in sorted(VECTORS.glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(document, dict) and "vectors" in document:
            found.extend(document["vectors"])
    return found


def test_clauses_are_numbered_in_order_and_once() -> None:
    numbers = HEADING.findall(TEXT)
    keys = [_clause_key(n) for n, _ in numbers]
    assert len(keys) == len(set(keys)), "a clause number is used twice"
    assert keys == sorted(keys), "clauses are out of order"
    # Sub-clauses follow their section without gaps: 2.1, 2.2, ... never 2.1, 2.3.
    for (section,) in {k[:1] for k in keys}:
        subs = sorted(k[1] for k in keys if len(k) == 2 and k[0] == section)
        assert subs == list(range(1, len(subs) + 1)), f"clause {section} skips a number: {subs}"


@pytest.mark.parametrize("vector", _vectors(), ids=lambda v: str(v["id"]))
def test_every_vector_cites_clauses_that_exist(vector: dict[str, object]) -> None:
    cited = str(vector["clause"]).split(", ")
    missing = [c for c in cited if c not in CLAUSES]
    assert not missing, f"{vector['id']} cites {missing}, which docs/specification.md does not have"


def test_the_checker_refuses_a_clause_that_does_not_exist() -> None:
    """The check above can fail: a made-up clause is not among the headings."""
    assert "14.2" not in CLAUSES and "2.99" not in CLAUSES
    assert {"1.4", "4.6", "9.8", "13"} <= CLAUSES.keys()


def test_cross_references_inside_the_specification_exist() -> None:
    refs = re.findall(r"\bclauses? (\d+(?:\.\d+)?)(?: (?:to|and) (\d+(?:\.\d+)?))?", TEXT)
    assert refs, "the specification refers to its own clauses"
    for first, second in refs:
        for number in filter(None, (first, second)):
            assert number in CLAUSES, f"the specification refers to clause {number}, which it does not have"


# Files that must not point outside the project: every tracked text file but the
# specification itself (which names the upstream documents without citing a path).
_OUTSIDE = re.compile(r"REFERENCE\.md|SPEC\.md|REFERENCE \d|SPEC \"|shared/spec|\.\./shared/(?!jsontestsuite)")
_SKIP_DIRS = {".git", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis", "build", "dist"}


def _project_text_files() -> list[Path]:
    files = []
    for folder, dirs, names in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.endswith(".egg-info")]
        for name in names:
            if name.endswith((".py", ".md", ".json", ".toml", ".txt", ".mjs", ".js", ".sh", ".yaml", ".yml", ".dict")):
                files.append(Path(folder) / name)
            elif name == "run" and Path(folder).name == ".ci":
                files.append(Path(folder) / name)
    return files


def test_nothing_in_the_project_cites_a_file_outside_it() -> None:
    offenders = []
    for path in _project_text_files():
        if path == Path(__file__).resolve():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if _OUTSIDE.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert not offenders, "\n".join(offenders)


def test_the_outside_citation_pattern_catches_what_it_must() -> None:
    for line in ("see REFERENCE.md section 4", "(REFERENCE 6.1)", "../shared/spec/SPEC.md", 'SPEC "Redaction"'):
        assert _OUTSIDE.search(line), line
    for line in ("read from ../shared/jsontestsuite", "specification 7.3", "the reference implementation"):
        assert not _OUTSIDE.search(line), line


# The rules the specification lists, held to the code that applies them.


def _table_column(number: str, column: int) -> list[str]:
    rows = [line for line in _section(number).splitlines() if line.startswith("| ") and not line.startswith("|---")]
    return [row.split("|")[column + 1].strip() for row in rows[1:]]


def test_scanned_fields_and_their_order() -> None:
    names: list[str] = []
    for cell in _table_column("8.1", 2):
        names.extend(re.findall(r"`([^`]+)`", cell))
    expected = [field.replace("[]", "[i]") for field in SCANNED_FIELDS]
    assert names == expected


def test_categories_and_their_order() -> None:
    categories = [re.match(r"`([a-z-]+)`", cell).group(1) for cell in _table_column("8.3", 0)]  # type: ignore[union-attr]
    assert categories == [p.category for p in PATTERNS]
    # The prose counts them in words: keep it true.
    assert (len(PATTERNS), len(set(categories))) == (10, 9)
    assert "Ten patterns in nine categories" in _section("8.3")


def test_member_order_is_what_dumps_writes() -> None:
    """Clause 9.2's lists, in order, against the canonical bytes of a packet with every member."""
    lists = dict(re.findall(r"^- ([a-z` ]+): (.*?)[;.]$", _section("9.2"), re.MULTILINE | re.DOTALL))
    written = json.loads(cmp.dumps(cmp.loads(encode(full()))), object_pairs_hook=lambda pairs: pairs)
    members = dict(written)
    expected = {
        "top level": [k for k, _ in written],
        "`project`": [k for k, _ in members["project"]],
        "a decision": [k for k, _ in members["decisions"][0]],
        "a method": [k for k, _ in members["methods"][0]],
        "an attempt": [k for k, _ in members["attempts"][0]],
        "`provenance`": [k for k, _ in members["provenance"]],
    }
    assert {name: re.findall(r"`([a-z_]+)`", text) for name, text in lists.items()} == expected


def test_finding_codes() -> None:
    listed = re.findall(r"`([a-z-]+)`", _table_column("1.3", 1)[0])
    assert set(listed) | {"truncated"} == set(CODES)
    assert "`truncated`" in _section("1.5")


def test_limits() -> None:
    assert f"{MAX_PACKET_BYTES:,} bytes" in _section("2.1")
    assert f"{MAX_DEPTH:,}" in _section("2.5")
    assert f"first {MAX_FINDINGS}" in _section("1.5")
    for version in cmp.SUPPORTED_VERSIONS:
        assert f"`{version}`" in _section("3.2")


def test_every_difference_in_clause_12_cites_clauses_that_say_what_the_reference_does() -> None:
    rows = [[c.strip() for c in cell.split(",")] for cell in _table_column("12", 0)]
    assert rows
    for cited in rows:
        assert all(number in CLAUSES for number in cited), cited
        assert any("**Reference:**" in _section(number) for number in cited), cited
