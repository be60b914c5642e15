"""How many examples a property test runs: the number it names, or CI's share of it.

Each property test names its count (``@settings(max_examples=examples(300))``). The whole
suite runs every count in full; CI's quick runs on the other Python versions set
``CMP_TEST_EXAMPLE_SHARE`` (a fraction, 0 < share <= 1) and run that share of each, at
least ``FEWEST`` (.ci/run says why). Every property is still asserted on every version.
"""

from __future__ import annotations

import os

SHARE_VARIABLE = "CMP_TEST_EXAMPLE_SHARE"
FEWEST = 10


def share_of(text: str | None) -> float:
    """The share ``text`` (the variable's value, or None when unset) names; a ValueError if none."""
    if text is None:
        return 1.0
    try:
        share = float(text)
    except ValueError:
        raise ValueError(f"{SHARE_VARIABLE}={text!r} is not a number") from None
    if not 0 < share <= 1:
        raise ValueError(f"{SHARE_VARIABLE}={text!r} is not a share: it is more than 0 and at most 1")
    return share


SHARE = share_of(os.environ.get(SHARE_VARIABLE))


def examples(count: int, share: float = SHARE) -> int:
    """``count`` examples, or ``share`` of them (at least FEWEST, never more than ``count``)."""
    return min(count, max(FEWEST, round(count * share)))
