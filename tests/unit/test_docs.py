"""The README stays a front door, and the documents it opens onto stay reachable.

README.md is short; every relative link in README.md, CHANGELOG.md and docs/*.md names a
file that exists (and, for an ``#anchor`` into one of our Markdown files, a heading it
has); and every page in docs/ is linked from the README.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = sorted((ROOT / "docs").glob("*.md"))
DOCUMENTS = [README, ROOT / "CHANGELOG.md", *PAGES]
assert len(PAGES) >= 8, "docs/ holds the manual: its pages must be there"

README_MAX_LINES = 250

_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_SPAN = re.compile(r"(`+).+?\1")
_LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def _links(path: Path) -> list[str]:
    """Every link target in the prose of ``path``, inline code left out."""
    text = path.read_text(encoding="utf-8")
    return [target for line in _prose_lines(text) for target in _LINK.findall(_CODE_SPAN.sub("", line))]


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for line in _prose_lines(path.read_text(encoding="utf-8")):
        match = _HEADING.match(line)
        if match:
            slug = _slug(match.group(2))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def _is_external(target: str) -> bool:
    return re.match(r"[a-z][a-z0-9+.-]*:", target) is not None


def test_the_readme_is_a_front_door() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move reference material to docs/"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_points_at_something_real(document: Path) -> None:
    assert document.is_file(), f"{document.relative_to(ROOT)} is missing"
    broken = []
    for target in _links(document):
        if _is_external(target):
            continue
        name, _, anchor = target.partition("#")
        linked = (document.parent / name).resolve() if name else document
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            broken.append(f"{target}: no heading #{anchor} in {linked.relative_to(ROOT).as_posix()}")
    assert not broken, "\n".join(broken)


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {(ROOT / target.partition("#")[0]).resolve() for target in _links(README) if not _is_external(target)}
    unlinked = [page.relative_to(ROOT).as_posix() for page in PAGES if page.resolve() not in linked]
    assert not unlinked, f"README.md links to none of {unlinked}"


def test_the_link_reader_finds_what_it_must() -> None:
    assert _slug("The extended rules (`--rule-set extended`)") == "the-extended-rules---rule-set-extended"
    assert _slug("1.3 Findings") == "13-findings"
    assert _slug("Writing packets: new, example, scrub, migrate") == "writing-packets-new-example-scrub-migrate"
    text = "See [a](docs/a.md#x), `[not](a link)`, [b [c]](b.md).\n```\n[in code](c.md)\n```\n"
    assert [t for line in _prose_lines(text) for t in _LINK.findall(_CODE_SPAN.sub("", line))] == [
        "docs/a.md#x",
        "b.md",
    ]


def test_the_cli_synopsis_names_every_command_with_options_it_has() -> None:
    """docs/cli.md opens with a synopsis: one line per command, every option on it one the
    command takes and every choice one it offers (issue 47, item 14)."""
    from cmp.cli._args import build_parser, subcommand

    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    synopsis = re.search(r"^```\n(core-memory-packet .*?)^```$", page, re.M | re.S)
    assert synopsis is not None, "docs/cli.md opens with a synopsis"
    lines = {line.split()[1]: line for line in synopsis.group(1).splitlines()}
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices  # type: ignore[union-attr]
    assert set(lines) == set(commands)
    for name, line in lines.items():
        actions = {flag: action for action in subcommand(parser, name)._actions for flag in action.option_strings}
        for flag, values in re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)(?: ([a-z0-9.]+(?:\|[a-z0-9.-]+)+))?", line):
            assert flag in actions, f"{name} has no {flag}"
            if values and actions[flag].choices is not None:
                assert set(values.split("|")) == set(actions[flag].choices), f"{name} {flag}"
