"""Version routing, with exactly the reference's messages (specification clause 3)."""

from __future__ import annotations

from typing import Any

import pytest

import cmp
from tests.support.packets import drop, encode, full, minimal, put


def only(report: cmp.Report) -> tuple[str, str, str]:
    (finding,) = report.errors
    return finding.code, finding.path, finding.message


@pytest.mark.parametrize(
    ("value", "found"),
    [
        (None, "null"),
        (2, "the number 2"),
        (0.2, "the number 0.2"),
        (True, "true"),
        ([], "an array"),
        ({}, "an object"),
        (int("9" * 40), "the number " + "9" * 32 + "…"),
    ],
)
def test_non_string_version_says_what_was_found(value: Any, found: str) -> None:
    """The reference says "missing required field" for all of these; the code is the same,
    the message says what is wrong."""
    report = cmp.check(encode(put(minimal(), "ltm_version", value)))
    message = f'ltm_version must be a string such as "0.2", found {found}'
    assert only(report) == ("version-missing", "$.ltm_version", message)


def test_empty_version() -> None:
    report = cmp.check(encode(put(minimal(), "ltm_version", "")))
    message = 'ltm_version is empty; it must name a version such as "0.2"'
    assert only(report) == ("version-missing", "$.ltm_version", message)


def test_absent_version() -> None:
    report = cmp.check(encode(drop(minimal(), "ltm_version")))
    assert only(report) == ("version-missing", "$.ltm_version", "missing required field 'ltm_version'")


@pytest.mark.parametrize("value", ["0.3", "v0.2", "0.2.0", " 0.2", "0.2 ", "1.0", "0.2\n", "00.2", "0.10", "０.２"])
def test_unsupported_versions_are_never_coerced(value: str) -> None:
    import json

    report = cmp.check(encode(put(minimal(), "ltm_version", value)))
    shown = json.dumps(value, ensure_ascii=False)
    assert only(report) == (
        "version-unsupported",
        "$.ltm_version",
        f"unsupported ltm_version {shown} (supported: 0.1, 0.2)",
    )


def test_unsupported_version_message_quotes_at_most_32_characters() -> None:
    report = cmp.check(encode(put(minimal(), "ltm_version", "9" * 5000)))
    (finding,) = report.errors
    assert finding.message.count("9") == 32 and "…" in finding.message


def test_routing_comes_before_schema() -> None:
    obj = put(put(minimal(), "ltm_version", "0.3"), "tags", [1])
    assert [f.code for f in cmp.check(encode(obj)).errors] == ["version-unsupported"]


@pytest.mark.parametrize("version", ["0.1", "0.2"])
def test_each_version_routes_to_its_own_schema(version: str) -> None:
    report = cmp.check(encode(full(version)))
    assert report.ok and report.version == version
    assert report.packet is not None and report.packet.ltm_version == version


def test_v01_packet_never_judged_by_v02() -> None:
    obj = put(full("0.1"), "parent_id", "01J9X3K2QZ7N4M0WXYZV3R8Z01")
    report = cmp.check(encode(obj))
    assert [(f.path, f.keyword) for f in report.errors] == [("$.parent_id", "additionalProperties")]
    assert report.version == "0.1"


def test_supported_versions_constant() -> None:
    assert cmp.SUPPORTED_VERSIONS == ("0.1", "0.2")
