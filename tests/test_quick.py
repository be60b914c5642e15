"""cmp._quick's own rules: the anchoring guard on the pattern table, and parse_counted's count."""

from __future__ import annotations

import pytest

from cmp._extended import EXTENDED_PATTERNS
from cmp._quick import anchored, parse_counted
from cmp._redaction import PATTERNS
from tests.packets import encode, full


@pytest.mark.parametrize("regex", [r"^AKIA", r"key$", r"\AAKIA", r"x\z", r"(?m)x", r"(?im)x", r"a|^b", r"(?:x$)"])
def test_an_anchored_regex_is_seen(regex: str) -> None:
    assert anchored(regex)


@pytest.mark.parametrize(
    "regex", [r"[^a]x", r"\$5", r"\^", r"\B/home", r"\bAKIA[0-9A-Z]{16}\b", r"[$^]", r"\\A", r"(?i)x"]
)
def test_what_only_looks_anchored_is_not(regex: str) -> None:
    assert not anchored(regex)


def test_no_redaction_pattern_is_anchored() -> None:
    """The import-time guard, restated: fact 2 of cmp._quick holds for the shipped table."""
    assert not [p.category for p in PATTERNS if anchored(p.regex) or anchored(p.screened_by)]
    # The extended table too: the quick path rules a packet clean of it by one pass over its text.
    assert not [p.category for p in EXTENDED_PATTERNS if anchored(p.regex) or anchored(p.screened_by)]


def test_strings_are_half_the_quotes_and_a_backslash_opts_out() -> None:
    raw = encode(full())
    counted = parse_counted(raw)
    assert counted is not None and counted[1] == raw.count(b'"') // 2
    assert parse_counted(raw.replace(b"GPU", b"G\\u0050U")) is None


@pytest.mark.parametrize(
    "text", ["C:\\Users\\dev", 'a \\\\\\"b', 'say "hi"\\', "\\\\\\\\", "tab\there", "\\/ and \\\\", "u\\x\\"]
)
def test_escapes_are_counted_one_backslash_and_one_byte_at_a_time(text: str) -> None:
    """Escapes pair up from the start of each run of backslashes: the strings are counted right."""
    import cmp
    from cmp._pipeline import check_long

    raw = encode({**full(), "goal": text})
    counted = parse_counted(raw)
    assert counted is not None and counted[0]["goal"] == text
    assert counted[1] == _strings(counted[0])
    assert cmp.check(raw) == check_long(raw)


def _strings(value: object) -> int:
    """The member names and string values in parsed JSON."""
    if isinstance(value, str):
        return 1
    if isinstance(value, dict):
        return sum(1 + _strings(item) for item in value.values())
    if isinstance(value, list):
        return sum(_strings(item) for item in value)
    return 0
