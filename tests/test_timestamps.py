"""created_at (REFERENCE.md sections 3 and 6.3, and the canonical rendering of section 5)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from cmp import timestamps
from tests.vectors import assert_passes, packet_of, params


@pytest.mark.parametrize("vector", params("created-at"))
def test_created_at_vector(vector: dict[str, Any]) -> None:
    assert_passes(vector)
    value = packet_of(vector)["created_at"]
    if isinstance(value, str):
        assert timestamps.is_valid(value) is vector["expect"]["conforming"]


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
    with pytest.raises(ValueError):  # valid RFC 3339, but Python's datetime has no year 0
        timestamps.to_datetime("0000-01-01T00:00:00Z")
