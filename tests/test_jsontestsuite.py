"""JSONTestSuite's 318 parsing cases through cmp.check (read from ../shared, never copied)."""

from __future__ import annotations

from pathlib import Path

import pytest

import cmp

SUITE = Path(__file__).resolve().parent.parent.parent / "shared" / "jsontestsuite" / "test_parsing"
FILES = sorted(SUITE.glob("*.json")) if SUITE.is_dir() else []
pytestmark = pytest.mark.skipif(not FILES, reason="JSONTestSuite not found at ../shared/jsontestsuite/test_parsing")

# Implementation-defined cases we parse: finite numbers (underflow becomes 0, big
# integers fit a double) and 500 levels of nesting. Every other i_ case is refused as
# `json`: overflowing numbers, lone surrogates, invalid UTF-8, UTF-16 and BOMs.
I_PARSED = {
    "i_number_double_huge_neg_exp.json",
    "i_number_real_underflow.json",
    "i_number_too_big_neg_int.json",
    "i_number_too_big_pos_int.json",
    "i_number_very_big_negative_int.json",
    "i_structure_500_nested_arrays.json",
}


def codes(path: Path) -> list[str]:
    return [f.code for f in cmp.check(path.read_bytes()).errors]


def test_suite_is_complete() -> None:
    assert len(FILES) == 318


@pytest.mark.parametrize("path", [p for p in FILES if p.name.startswith("n_")], ids=lambda p: p.name)
def test_n_cases_are_refused(path: Path) -> None:
    expected = ["size"] if path.stat().st_size > cmp.MAX_PACKET_BYTES else ["json"]
    assert codes(path) == expected


@pytest.mark.parametrize("path", [p for p in FILES if p.name.startswith("y_")], ids=lambda p: p.name)
def test_y_cases_parse(path: Path) -> None:
    found = codes(path)
    assert "json" not in found and "size" not in found
    if "duplicate" in path.name:
        assert found == ["duplicate-key"]
    else:
        assert found and set(found) <= {"not-object", "version-missing"}


@pytest.mark.parametrize("path", [p for p in FILES if p.name.startswith("i_")], ids=lambda p: p.name)
def test_i_cases_follow_our_documented_choice(path: Path) -> None:
    found = codes(path)
    if path.name in I_PARSED:
        assert "json" not in found and found
    else:
        assert found == ["json"]
