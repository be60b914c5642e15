"""created_at (REFERENCE.md sections 3 and 6.3, and the canonical rendering of section 5)."""

from __future__ import annotations

import datetime as dt

import pytest

import cmp
from cmp import timestamps
from tests.packets import encode, minimal, put

VALID = [
    "2026-04-21T10:30:00Z",
    "2026-04-21T10:30:00.5Z",
    "2026-04-21T10:30:00.123456789Z",
    "2026-04-21T10:30:00+02:00",
    "2026-04-21T10:30:00-11:30",
    "2026-04-21T23:59:59+23:59",
    "2024-02-29T00:00:00Z",
    "2000-02-29T00:00:00Z",
    "0000-01-01T00:00:00Z",
    "9999-12-31T23:59:59.999999999-00:00",
]

INVALID = [
    "2026-04-21t10:30:00Z",
    "2026-04-21T10:30:00z",
    "2026-04-21 10:30:00Z",
    "2026-04-21T10:30:00",
    "2026-04-21T10:30:00Z\n",
    " 2026-04-21T10:30:00Z",
    "2026-04-21T10:30:00Z ",
    "2026-04-21T10:30Z",
    "2026-04-21T10:30:00.Z",
    "2026-04-21T10:30:00,5Z",
    "2026-04-21T10:30:00.1234567890Z",
    "2026-04-21T10:30:60Z",
    "2026-04-21T24:00:00Z",
    "2026-04-21T10:60:00Z",
    "2026-04-21T10:30:00+24:00",
    "2026-04-21T10:30:00+12:60",
    "2026-04-21T10:30:00+0200",
    "2026-02-30T00:00:00Z",
    "2023-02-29T00:00:00Z",
    "1900-02-29T00:00:00Z",
    "2026-13-01T00:00:00Z",
    "2026-00-01T00:00:00Z",
    "2026-04-00T00:00:00Z",
    "2026-04-31T00:00:00Z",
    "26-04-21T10:30:00Z",
    "2026-4-21T10:30:00Z",
    "２026-04-21T10:30:00Z",
    "",
]


@pytest.mark.parametrize("value", VALID)
def test_valid_created_at(value: str) -> None:
    assert timestamps.is_valid(value)
    assert cmp.check(encode(put(minimal(), "created_at", value))).ok


@pytest.mark.parametrize("value", INVALID)
def test_invalid_created_at(value: str) -> None:
    assert not timestamps.is_valid(value)
    report = cmp.check(encode(put(minimal(), "created_at", value)))
    assert [(f.path, f.keyword) for f in report.errors] == [("$.created_at", "format")]


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


def test_datetime_view() -> None:
    value = timestamps.to_datetime("2026-04-21T12:00:00.123456789+02:00")
    assert value == dt.datetime(2026, 4, 21, 10, 0, 0, 123456, tzinfo=dt.timezone.utc)
    with pytest.raises(ValueError):
        timestamps.to_datetime("2026-02-30T00:00:00Z")
