"""One bounded memo for functions of short texts (member names, tags and ids repeat from packet to packet).

Only texts of at most TEXT_LIMIT code points are kept, at most ENTRIES of them (a full memo is emptied),
so its memory is bounded; a longer text is never hashed for the memo (it rarely repeats).
"""

from __future__ import annotations

from collections.abc import Callable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol, TypeVar

    Answer = TypeVar("Answer")

    class Remembered(Protocol[Answer]):
        """A function of one text whose answers for short texts are kept in ``memo``."""

        @property
        def memo(self) -> dict[str, Answer]: ...

        def __call__(self, text: str) -> Answer: ...


TEXT_LIMIT = 64
ENTRIES = 4096


def remembered(function: Callable[[str], Answer]) -> Remembered[Answer]:
    """``function``, which must be pure, with its answers for short texts kept (see the module docstring)."""
    memo: dict[str, Answer] = {}

    def answer(text: str) -> Answer:
        if len(text) > TEXT_LIMIT:
            return function(text)
        try:
            return memo[text]
        except KeyError:
            pass
        found = function(text)
        if len(memo) >= ENTRIES:
            memo.clear()
        memo[text] = found
        return found

    answer.__doc__ = function.__doc__
    answer.__name__ = function.__name__
    answer.__qualname__ = function.__qualname__
    answer.__wrapped__ = function  # type: ignore[attr-defined]
    answer.memo = memo  # type: ignore[attr-defined]
    return answer  # type: ignore[return-value]  # a Remembered now: it has its memo
