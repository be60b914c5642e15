"""JSONTestSuite's 318 parsing cases through cmp.check (read from ../shared, never copied).

The suite is Nicolas Seriot's JSONTestSuite (github.com/nst/JSONTestSuite), its
test_parsing folder, placed at ../shared/jsontestsuite/test_parsing beside the
checkout (or wherever CMP_JSONTESTSUITE names). Without it these tests are skipped,
except under CI (CI set, as .ci/run does), where a missing suite fails the run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import cmp

ROOT = Path(__file__).resolve().parents[2]
SUITE = Path(os.environ.get("CMP_JSONTESTSUITE") or ROOT.parent / "shared" / "jsontestsuite" / "test_parsing")
FILES = sorted(SUITE.glob("*.json")) if SUITE.is_dir() else []
IN_CI = os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no"}
needs_suite = pytest.mark.skipif(
    not FILES and not IN_CI, reason=f"JSONTestSuite not found at {SUITE} (under CI this fails instead)"
)

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


@needs_suite
def test_suite_is_complete() -> None:
    assert len(FILES) == 318, (
        f"{len(FILES)} JSONTestSuite parsing cases at {SUITE}, not 318: put the test_parsing folder of"
        " github.com/nst/JSONTestSuite there (or name it in CMP_JSONTESTSUITE)"
    )


@needs_suite
@pytest.mark.parametrize("path", [p for p in FILES if p.name.startswith("n_")], ids=lambda p: p.name)
def test_n_cases_are_refused(path: Path) -> None:
    expected = ["size"] if path.stat().st_size > cmp.MAX_PACKET_BYTES else ["json"]
    assert codes(path) == expected


@needs_suite
@pytest.mark.parametrize("path", [p for p in FILES if p.name.startswith("y_")], ids=lambda p: p.name)
def test_y_cases_parse(path: Path) -> None:
    found = codes(path)
    assert "json" not in found and "size" not in found
    if "duplicate" in path.name:
        assert found == ["duplicate-key"]
    else:
        assert found and set(found) <= {"not-object", "version-missing"}


@needs_suite
@pytest.mark.parametrize("path", [p for p in FILES if p.name.startswith("i_")], ids=lambda p: p.name)
def test_i_cases_follow_our_documented_choice(path: Path) -> None:
    found = codes(path)
    if path.name in I_PARSED:
        assert "json" not in found and found
    else:
        assert found == ["json"]


@pytest.mark.slow
@pytest.mark.parametrize("ci", ["", "1", "true"], ids=["outside-ci", "ci-1", "ci-true"])
def test_a_missing_suite_is_skipped_outside_ci_and_fails_under_ci(tmp_path: Path, ci: str) -> None:
    env = {**os.environ, "CMP_JSONTESTSUITE": str(tmp_path / "absent"), "CI": ci}
    # This file without this test, run as a developer or CI would run it.
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rfs", __file__, "-k", "not missing_suite"]
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    if ci:
        assert result.returncode == 1, result.stdout
        assert "FAILED" in result.stdout and "0 JSONTestSuite parsing cases at" in result.stdout
    else:
        assert result.returncode == 0, result.stdout
        assert "FAILED" not in result.stdout and "JSONTestSuite not found at" in result.stdout
