"""created_at: the RFC 3339 subset the reference accepts and round-trips unchanged."""

from __future__ import annotations

import datetime as _dt

import re2
from rfc3339_validator import validate_rfc3339

# Uppercase T and Z only, one to nine fraction digits, numeric offsets. RE2's `$`
# is end of text, so a trailing newline never slips through.
_SHAPE = re2.compile(
    r"^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})"
    r"(?:\.([0-9]{1,9}))?(Z|[+-]([0-9]{2}):([0-9]{2}))$"
)


def is_valid(text: str) -> bool:
    """True when ``text`` is a created_at the reference accepts and re-renders faithfully."""
    match = _SHAPE.search(text)
    if match is None:
        return False
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    if hour > 23 or minute > 59 or second > 59:
        return False
    if match.group(8) != "Z" and (int(match.group(9)) > 23 or int(match.group(10)) > 59):
        return False
    try:
        _dt.date(year, month, day) if year > 0 else _dt.date(2000, month, day)
    except ValueError:
        return False
    # The shape above is stricter than rfc3339-validator; asking it too keeps us
    # honest should either drift (it is the library the wider ecosystem trusts).
    return year == 0 or validate_rfc3339(text)


def canonical(text: str) -> str:
    """The reference's rendering: fraction without trailing zeros, a zero offset as Z."""
    match = _SHAPE.search(text)
    if match is None:
        return text
    head: str = match.group(0)[:19]
    fraction = (match.group(7) or "").rstrip("0")
    offset: str = match.group(8)
    if offset in ("+00:00", "-00:00"):
        offset = "Z"
    return head + ("." + fraction if fraction else "") + offset


def to_datetime(text: str) -> _dt.datetime:
    """A timezone-aware datetime; fractions past microseconds are truncated."""
    match = _SHAPE.search(text)
    if match is None or not is_valid(text):
        raise ValueError(f"not a valid created_at: {text[:64]!r}")
    fraction = (match.group(7) or "").ljust(6, "0")[:6]
    if match.group(8) == "Z":
        tz = _dt.timezone.utc
    else:
        sign = -1 if match.group(8)[0] == "-" else 1
        tz = _dt.timezone(sign * _dt.timedelta(hours=int(match.group(9)), minutes=int(match.group(10))))
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    return _dt.datetime(year, month, day, hour, minute, second, int(fraction), tzinfo=tz)
