"""Boolean RE2 matching: RE2 semantics, lone surrogates, and the bounded memo."""

from __future__ import annotations

import pytest

from cmp import _memo
from cmp._matcher import Matcher

TAG = "^[a-z0-9][a-z0-9-]{0,31}$"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("gpu", True), ("gpu\n", False), ("Gpu", False), ("٣", False), ("a" * 32, True), ("a" * 33, False), ("", False)],
)
def test_re2_semantics(text: str, expected: bool) -> None:
    matcher = Matcher(TAG)
    assert matcher(text) is expected
    assert matcher(text) is expected  # and again, from the memo


def test_search_not_fullmatch() -> None:
    assert Matcher("b+")("abbbc")
    assert not Matcher("^b+$")("abbbc")


def test_lone_surrogate_never_matches() -> None:
    assert not Matcher(".")("\ud800")


def test_bad_pattern_is_refused() -> None:
    with pytest.raises(Exception):  # noqa: B017 - google-re2 raises its own error type
        Matcher("(?<=x)y")


def test_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_memo, "ENTRIES", 3)
    matcher = Matcher(TAG)
    for word in ("a", "b", "c", "d", "e"):
        assert matcher(word)
        assert len(matcher.matches.memo) <= 3
    long_text = "a" * 100
    assert not matcher(long_text)
    assert long_text not in matcher.matches.memo
