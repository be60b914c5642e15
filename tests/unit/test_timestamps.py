"""created_at (specification clause 7, and the canonical rendering of 9.5)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cmp
from cmp import _timestamps as timestamps
from tests.support.examples import examples
from tests.support.packets import encode, full, put
from tests.support.vectors import assert_passes, packet_of, params


@pytest.mark.parametrize("vector", params("created-at"))
def test_created_at_vector(vector: dict[str, Any]) -> None:
    assert_passes(vector)
    value = packet_of(vector)["created_at"]
    if isinstance(value, str) and "bad-escaped-" not in vector["id"]:
        assert timestamps.is_valid(value) is vector["expect"]["conforming"]
    elif isinstance(value, str):  # decodes to a valid date-time; refused for its raw text
        assert timestamps.is_valid(value) and not vector["expect"]["conforming"]


@pytest.mark.parametrize(
    ("given", "rendered"),
    [
        ("2026-04-21T12:00:00.500+02:00", "2026-04-21T12:00:00.5+02:00"),
        ("2026-04-21T12:00:00.000Z", "2026-04-21T12:00:00Z"),
        ("2026-04-21T12:00:00+00:00", "2026-04-21T12:00:00Z"),
        ("2026-04-21T12:00:00.120-00:00", "2026-04-21T12:00:00.12Z"),
        ("2026-04-21T12:00:00.123456789-05:00", "2026-04-21T12:00:00.123456789-05:00"),
        ("2026-04-21T12:00:00Z", "2026-04-21T12:00:00Z"),
    ],
)
def test_canonical_rendering(given: str, rendered: str) -> None:
    assert timestamps.canonical(given) == rendered
    assert timestamps.canonical(rendered) == rendered


@settings(max_examples=examples(1000))
@given(
    st.sampled_from(["2026-04-21T12:00:00", "2026-04-21T12:00:10", "2026-04-21T12:00:07", "2026-04-21 12:00:00", ""]),
    st.sampled_from(["", ".", ".5", ".50", ".120", ".1", ".0", ".000000000", ".123456789", ".1234567890"]),
    st.sampled_from(["Z", "z", "", "+00:00", "-00:00", "+02:00", "-05:30", "+10:00", "+0000", "00:00", "0Z", "0"]),
    st.text(alphabet="0Z:+-.T1", max_size=3),
)
def test_canonical_at_a_glance_is_canonical_the_long_way(head: str, fraction: str, zone: str, tail: str) -> None:
    """Whatever the text, valid or not, the three slices that pass it as its own rendering
    agree with the shape and its fields."""
    for text in (head + fraction + zone, head + fraction + zone + tail, fraction + zone, zone + tail):
        assert timestamps.canonical(text) == timestamps._canonical_by_shape(text), text


def test_datetime_view() -> None:
    value = timestamps.to_datetime("2026-04-21T12:00:00.123456789+02:00")
    assert value == dt.datetime(2026, 4, 21, 10, 0, 0, 123456, tzinfo=dt.timezone.utc)
    with pytest.raises(ValueError):
        timestamps.to_datetime("2026-02-30T00:00:00Z")
    with pytest.raises(ValueError):  # valid RFC 3339, but Python's datetime has no year 0
        timestamps.to_datetime("0000-01-01T00:00:00Z")


def _expected(year: int, month: int, day: int, hms: tuple[int, int, int], sep: str, fraction: str, zone: str) -> bool:
    """The accepted subset, worked out with the calendar instead of a pattern."""
    try:
        dt.datetime(year or 2000, month, day, *hms)  # year 0 is leap, like 2000
    except ValueError:
        return False
    if zone not in ("Z",) and not (zone[0] in "+-" and int(zone[1:3]) < 24 and int(zone[4:6]) < 60):
        return False
    return sep == "T" and len(fraction) != 1  # "." alone is no fraction


@pytest.mark.slow
@settings(max_examples=examples(1000))
@given(
    st.integers(0, 9999),
    st.integers(0, 13),
    st.integers(0, 32),
    st.tuples(st.integers(0, 24), st.integers(0, 60), st.integers(0, 61)),
    st.sampled_from(["T", "t", " "]),
    st.sampled_from(["", ".", ".5", ".120", ".123456789", ".1234567890"]),
    st.sampled_from(["Z", "z", "+00:00", "-05:30", "+23:59", "+24:00", "-01:60", "+0100"]),
)
def test_is_valid_is_the_calendar_subset(
    year: int, month: int, day: int, hms: tuple[int, int, int], sep: str, fraction: str, zone: str
) -> None:
    text = f"{year:04d}-{month:02d}-{day:02d}{sep}{hms[0]:02d}:{hms[1]:02d}:{hms[2]:02d}{fraction}{zone}"
    expected = len(fraction) <= 10 and zone in ("Z", "+00:00", "-05:30", "+23:59") and hms[2] < 60
    expected = expected and _expected(year, month, day, hms, sep, fraction, zone)
    assert timestamps.is_valid(text) is expected, text
    if expected and year:
        assert timestamps.is_rfc3339(text)  # a subset of RFC 3339, as rfc3339-validator reads it


def test_leap_days() -> None:
    assert timestamps.is_valid("2024-02-29T00:00:00Z") and timestamps.is_valid("2000-02-29T00:00:00Z")
    assert not timestamps.is_valid("2100-02-29T00:00:00Z") and not timestamps.is_valid("2026-02-29T00:00:00Z")
    assert timestamps.is_valid("0000-02-29T00:00:00Z")  # year 0 is a leap year in the proleptic calendar
    assert not timestamps.is_valid("2026-04-31T00:00:00Z") and timestamps.is_valid("2026-05-31T00:00:00Z")


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("2026-04-21T10:30:00.1234567890Z", "is RFC 3339 but outside the subset packets use"),
        ("2026-04-21t10:30:00z", "is RFC 3339 but outside the subset packets use"),  # RFC 3339 5.6
        ("2026-02-30T10:30:00Z", "is not an RFC 3339 date-time"),
        ("yesterday", "is not an RFC 3339 date-time"),
    ],
)
def test_refusal_says_whether_it_is_rfc3339_at_all(value: str, reason: str) -> None:
    report = cmp.check(encode(put(full(), "created_at", value)))
    assert [f.keyword for f in report.errors] == ["format"]
    assert reason in report.errors[0].message


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("2026-04-21T10:30:00Z\n", "is not an RFC 3339 date-time"),
        ("2026-04-21T10:30:00.1234567890Z", "is RFC 3339 but outside the subset packets use"),
        ("2026-04-21 10:30:00Z", "is not an RFC 3339 date-time"),
    ],
)
def test_format_messages_say_whether_it_is_rfc3339_at_all(value: str, reason: str) -> None:
    """RFC 3339 allows lowercase t and z and no final newline (only the message depends on it)."""
    import cmp
    from tests.support.packets import minimal, put

    (finding,) = cmp.validate(put(minimal(), "created_at", value))
    assert finding.keyword == "format" and reason in finding.message
