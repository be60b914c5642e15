"""The one bounded memo: answers of short texts kept, long texts never, memory bounded."""

from __future__ import annotations

import pytest

from cmp import _memo
from cmp._memo import remembered


def test_short_answers_are_kept_and_long_ones_never(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def length(text: str) -> int:
        calls.append(text)
        return len(text)

    measured = remembered(length)
    assert measured("abc") == 3
    assert measured("abc") == 3
    assert calls == ["abc"]  # the second answer came from the memo
    long_text = "x" * (_memo.TEXT_LIMIT + 1)
    assert measured(long_text) == _memo.TEXT_LIMIT + 1
    assert measured(long_text) == _memo.TEXT_LIMIT + 1
    assert calls == ["abc", long_text, long_text]
    assert long_text not in measured.memo
    assert measured.__wrapped__ is length  # type: ignore[attr-defined]
    assert measured.__name__ == "length"  # type: ignore[attr-defined]


def test_a_full_memo_starts_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_memo, "ENTRIES", 3)
    upper = remembered(str.upper)
    for word in ("a", "b", "c", "d", "e"):
        assert upper(word) == word.upper()
        assert len(upper.memo) <= 3
    assert "e" in upper.memo


def test_the_tables_and_messages_share_it() -> None:
    """The pattern tables and the withholding of messages use this memo, not copies of it."""
    from cmp import _extended_patterns, _messages, _patterns

    for function in (_patterns.categories_in, _extended_patterns.first_category, _messages._withholding_category):
        assert hasattr(function, "memo"), function
        assert hasattr(function, "__wrapped__"), function
