"""created_at: the RFC 3339 subset the reference accepts and round-trips unchanged."""

from __future__ import annotations

from cmp._matcher import Matcher
from cmp._messages import quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime as _dt

# Uppercase T and Z only, one to nine fraction digits, numeric offsets. RE2's `$` is end
# of text, so a trailing newline never slips through. Fields are then read by slicing.
_SHAPE = Matcher(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?(?:Z|[+-][0-9]{2}:[0-9]{2})$")
# The same shape with every field in range, so only days 29 to 31 need arithmetic.
_IN_RANGE = Matcher(
    r"^[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])"
    r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,9})?"
    r"(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])$"
)
_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _split(text: str) -> tuple[str, str, str]:
    """(``YYYY-MM-DDTHH:MM:SS``, fraction digits, offset) of a text of the right shape."""
    offset = "Z" if text[-1] == "Z" else text[-6:]
    fraction = text[20 : len(text) - len(offset)]
    return text[:19], fraction, offset


def is_valid(text: str) -> bool:
    """True when ``text`` is a created_at the reference accepts and re-renders faithfully: a
    stricter subset of RFC 3339 (no leap second, no lowercase ``t``/``z``, no space for ``T``)."""
    if not _IN_RANGE(text):
        return False
    if text[8:10] <= "28":
        return True
    month, day = int(text[5:7]), int(text[8:10])
    if day > _DAYS[month - 1]:
        return False
    return not (month == 2 and day == 29 and not _leap(int(text[0:4])))


def is_rfc3339(text: str) -> bool:
    """Whether ``text`` is an RFC 3339 date-time at all (only to explain why is_valid said no).
    Lowercase ``t``/``z`` are allowed (rfc3339-validator refuses them), a final newline is not."""
    # Imported here: only a refused created_at needs it, and it costs about 5 ms of start-up.
    from rfc3339_validator import validate_rfc3339

    return not text.endswith("\n") and validate_rfc3339(text.replace("t", "T").replace("z", "Z")) is True


def canonical(text: str) -> str:
    """The reference's rendering: fraction without trailing zeros, a zero offset as Z."""
    # Most packets hold the reference's own rendering: no fraction (20 characters with Z, 25
    # with an offset) or no trailing zero before Z or the offset, and no zero offset. Any
    # other shape the long way returns as it is.
    if text[-1:] == "Z":
        unchanged = len(text) == 20 or text[-2:-1] != "0"
    else:
        unchanged = (len(text) == 25 or text[-7:-6] != "0") and text[-5:] != "00:00"
    if unchanged:
        return text
    return _canonical_by_shape(text)


def _canonical_by_shape(text: str) -> str:
    """:func:`canonical` the long way: the shape, then its fields."""
    if not _SHAPE(text):
        return text
    head, fraction, offset = _split(text)
    fraction = fraction.rstrip("0")
    if offset in ("+00:00", "-00:00"):
        offset = "Z"
    return head + ("." + fraction if fraction else "") + offset


def to_datetime(text: str) -> _dt.datetime:
    """A timezone-aware datetime; digits past microseconds are dropped (year 0 cannot be shown)."""
    import datetime as _dt  # here: a check never asks for one, and the import costs its start-up 2 ms
    if not is_valid(text) or text.startswith("0000"):
        raise ValueError(f"not a created_at a datetime can hold: {quote(text)}")
    head, fraction, offset = _split(text)
    tz = _dt.timezone.utc
    if offset != "Z":
        sign = -1 if offset[0] == "-" else 1
        tz = _dt.timezone(sign * _dt.timedelta(hours=int(offset[1:3]), minutes=int(offset[4:6])))
    naive = _dt.datetime.strptime(head, "%Y-%m-%dT%H:%M:%S")
    return naive.replace(microsecond=int(fraction.ljust(6, "0")[:6]), tzinfo=tz)


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to a date of the proleptic Gregorian calendar (year 0 included)."""
    year -= month <= 2  # count years from March, so that a leap day ends the year
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146_097 + day_of_era - 719_468


def instant(text: str) -> int | None:
    """A valid created_at as the exact instant it names: nanoseconds since 1970-01-01T00:00:00Z.
    All nine fraction digits and the offset count (``12:00:00.5+02:00`` is ``10:00:00.500Z``);
    None for a text that is not valid. A datetime would drop digits and cannot hold year 0.
    """
    if not is_valid(text):
        return None
    head, fraction, offset = _split(text)
    days = _days_from_civil(int(head[0:4]), int(head[5:7]), int(head[8:10]))
    seconds = ((days * 24 + int(head[11:13])) * 60 + int(head[14:16])) * 60 + int(head[17:19])
    if offset != "Z":
        shift = int(offset[1:3]) * 3600 + int(offset[4:6]) * 60
        seconds -= shift if offset[0] == "+" else -shift
    return seconds * 1_000_000_000 + int(fraction.ljust(9, "0"))
