"""Boolean RE2 matching at C++ speed.

google-re2's ``search`` builds a match object and maps byte offsets back to
characters in Python (about 8 µs a call); a one-pattern ``re2.Set`` answers "does it
match" in about 1 µs. Validation only needs the answer, so it uses this.
"""

from __future__ import annotations

import re2


class Matcher:
    """Whether RE2 ``pattern`` matches somewhere in a string (``search`` semantics)."""

    __slots__ = ("_set", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._set = re2.Set.SearchSet(re2.Options())
        if self._set.Add(pattern) != 0:
            raise ValueError(f"bad RE2 pattern {pattern!r}")
        self._set.Compile()

    def __call__(self, text: str) -> bool:
        try:
            return self._set.Match(text) is not None
        except UnicodeEncodeError:
            # A lone surrogate cannot be UTF-8: no CMP pattern can match such text.
            return False
