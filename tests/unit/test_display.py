"""When the extended table is asked about a text: only if it can match it (cmp._patterns.EXTENDED_SHORTEST),
for the parts of a file name shown on one line and for the texts a message quotes."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cmp import _display, _extended_patterns
from cmp._display import UNPRINTABLE, masked_name, visible
from cmp._patterns import EXTENDED_SHORTEST, extended_may_match

# Python's own regex parser, read here only to measure patterns (sre_parse before 3.11).
_parser: Any = getattr(re, "_parser", None) or importlib.import_module("sre_parse")
_SLASH = (_parser.LITERAL, ord("/"))


def _extended_regexes() -> list[tuple[str, str]]:
    """(category, regex) of every extended pattern and of every credential-like form of one."""
    patterns = _extended_patterns.EXTENDED_PATTERNS
    return [(p.category, p.regex) for p in patterns] + _extended_patterns.credential_like_forms(patterns)


def _shortest_and_slash(regex: str) -> tuple[int, bool]:
    """The fewest characters a match of ``regex`` has, and whether every match holds a "/"
    (a literal "/" in its top-level sequence), read by Python's parser: RE2's syntax for
    these patterns is Python's, and RE2 matches a character where Python does."""
    parsed = _parser.parse(regex)
    return parsed.getwidth()[0], any(item == _SLASH for item in parsed.data)


def test_no_extended_regex_matches_a_shorter_part_than_the_constant_says() -> None:
    measured = [(category, *_shortest_and_slash(regex)) for category, regex in _extended_regexes()]
    assert len(measured) == 2 * len(_extended_patterns.EXTENDED_PATTERNS)
    assert min(shortest for _, shortest, slash in measured if not slash) == EXTENDED_SHORTEST, measured
    # What the constant leaves out cannot match a part of a path: URLs, url-credentials among them
    # (a match of 8 characters, scheme://user:password@host).
    with_slash = {category for category, _, slash in measured if slash}
    assert "url-credentials" in with_slash and with_slash <= {"url-credentials", "slack-webhook", "discord-webhook"}


def test_the_measure_reads_what_re2_matches() -> None:
    """The parser's shortest match is one RE2 finds: a text of exactly that length matches,
    by the pattern and by its credential-like form, and one character less does not."""
    shortest_texts = {"putty-private-key": "PuTTY-User-Key-File-2:", "url-credentials": "a://:b@c"}
    for category, text in shortest_texts.items():
        lengths = {_shortest_and_slash(regex)[0] for name, regex in _extended_regexes() if name == category}
        assert lengths == {len(text)}
        assert _extended_patterns.first_category(text) == category
        assert _extended_patterns.credential_like(text) == category
        assert _extended_patterns.first_category(text[:-1]) is None


@pytest.mark.parametrize("name", ["packets/PuTTY-User-Key-File-2:x.json", "PuTTY-User-Key-File-3:.json"])
def test_a_part_at_the_shortest_length_is_still_masked(name: str) -> None:
    part = name.split("/")[-1]
    assert len(part) >= EXTENDED_SHORTEST
    assert masked_name(name).endswith(f"(not shown: {len(part)} characters matching putty-private-key)")


def test_a_text_the_extended_table_cannot_match_is_said_so() -> None:
    assert not extended_may_match("x" * (EXTENDED_SHORTEST - 1))
    assert extended_may_match("x" * EXTENDED_SHORTEST)
    assert extended_may_match("a://:b@c")  # shorter, and a URL
    assert _extended_patterns.first_category("a://:b@c") == "url-credentials"


def _loads_the_extended_table(statements: str) -> bool:
    """Whether running ``statements`` in a new interpreter loads cmp._extended_patterns."""
    probe = f"import sys\n{statements}\nprint('cmp._extended_patterns' in sys.modules)\n"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return {"True": True, "False": False}[result.stdout.strip()]


def test_short_names_are_masked_without_loading_the_extended_table() -> None:
    assert not _loads_the_extended_table(
        "from cmp._display import masked_name\n"
        "assert masked_name('examples/typical-v0.2.json') == 'examples/typical-v0.2.json'\n"
        "assert masked_name('AKIAIOSFODNN7EXAMPLE.json').startswith('(not shown: 25 characters matching aws-key')"
    )


def test_short_quotes_are_judged_without_loading_the_extended_table_and_long_ones_with_it() -> None:
    short = (
        "from cmp._messages import quote, withheld\n"
        "assert quote('Bad') == \"'Bad'\"\n"
        "assert withheld('AKIAIOSFODNN7EXAMPLE') == 'not shown: 20 characters matching aws-key'\n"
        "assert withheld('glpat-short') is None"
    )
    assert not _loads_the_extended_table(short)
    token = "glpat-" + "a1B2c3D4e5" * 2  # an extended-only credential, 26 characters
    expected = "not shown: 26 characters matching gitlab-token"
    assert _loads_the_extended_table(f"from cmp._messages import withheld\nassert withheld({token!r}) == {expected!r}")


def test_ascii_text_str_isprintable_takes_holds_nothing_to_escape() -> None:
    """cmp._display.visible's shortcut, for every ASCII character (and none beyond: see below)."""
    unprintable = re.compile(UNPRINTABLE)
    for code in range(128):
        char = chr(code)
        assert char.isprintable() == (unprintable.search(char) is None), hex(code)


@given(st.text(max_size=40) | st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=40))
def test_visible_is_the_class_escaped(text: str) -> None:
    assert visible(text) == re.sub(UNPRINTABLE, _display._escape, text)
