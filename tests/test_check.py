"""The public pipeline API: check, loads, validate and the Report they return."""

from __future__ import annotations

import pytest

import cmp
from tests.packets import encode, full, minimal, put


def test_conforming_clean_packet() -> None:
    report = cmp.check(encode(full()))
    assert report.conforming and report.ok and report.accepted
    assert report.errors == () and report.redactions == ()
    assert isinstance(report.packet, cmp.Packet) and report.version == "0.2"


def test_str_and_bytes_agree() -> None:
    text = encode(full()).decode()
    assert cmp.check(text) == cmp.check(text.encode())


def test_non_conforming_has_no_packet() -> None:
    report = cmp.check(encode(put(full(), "tags[0]", "Bad")))
    assert not report.conforming and not report.ok and not report.accepted
    assert report.packet is None and report.version == "0.2"


def test_lenient_accepts_schema_errors_only() -> None:
    lenient = cmp.check(encode(put(full(), "tags[0]", "Bad")), lenient=True)
    assert lenient.accepted and not lenient.ok and not lenient.conforming
    assert not cmp.check(b"{", lenient=True).accepted
    assert not cmp.check(encode(put(full(), "ltm_version", "9.9")), lenient=True).accepted


def test_loads_raises_packet_error_with_findings() -> None:
    with pytest.raises(cmp.PacketError) as caught:
        cmp.loads(encode(put(put(full(), "tags[0]", "Bad"), "goal", "")))
    assert isinstance(caught.value, ValueError)
    assert [f.path for f in caught.value.findings] == ["$.goal", "$.tags[0]"]
    assert "(and 1 more)" in str(caught.value)


def test_loads_returns_packet() -> None:
    assert cmp.loads(encode(minimal())).goal == minimal()["goal"]


def test_validate_parsed_data() -> None:
    assert cmp.validate(full()) == []
    assert [f.code for f in cmp.validate([])] == ["not-object"]
    assert [f.code for f in cmp.validate({"goal": "x"})] == ["version-missing"]
    assert [f.code for f in cmp.validate({"ltm_version": "7.0"})] == ["version-unsupported"]
    (finding,) = cmp.validate(put(full(), "tags[0]", "Bad"))
    assert (finding.code, finding.path, finding.keyword) == ("schema", "$.tags[0]", "pattern")


def test_finding_codes_are_documented() -> None:
    assert set(cmp.FINDING_CODES) == {
        "size",
        "json",
        "duplicate-key",
        "not-object",
        "version-missing",
        "version-unsupported",
        "schema",
    }


def test_finding_json_shape() -> None:
    (finding,) = cmp.check(encode(put(full(), "tags[0]", "Bad"))).errors
    assert finding.to_json() == {
        "code": "schema",
        "path": "$.tags[0]",
        "keyword": "pattern",
        "message": "'Bad' does not match ^[a-z0-9][a-z0-9-]{0,31}$",
    }


def test_paths_quote_odd_member_names() -> None:
    obj = put(full(), "x y", 1)
    (finding,) = cmp.check(encode(obj)).errors
    assert finding.path == "$['x y']"


def test_validate_flags_lone_surrogates_in_caller_data() -> None:
    obj = put(full(), "goal", "bad \ud800 text")
    obj["\udc00"] = 1
    found = [(f.code, f.message) for f in cmp.validate(obj)]
    assert ("json", "invalid json: lone surrogate (not a Unicode character) in $.goal") in found
    assert ("json", "invalid json: lone surrogate in a member name in $") in found


def test_hand_built_packet_with_lone_surrogate() -> None:
    packet = cmp.Packet.new(goal="AKIAIOSFODNN7EXAMPLE \ud800", next_step="n")
    with pytest.raises(cmp.PacketError) as caught:
        cmp.dumps(packet)
    assert caught.value.findings[0].code == "json"
    assert [str(r) for r in cmp.redact(packet)] == ["goal/aws-key: AKIAIOSFODNN7EXAMPLE"]


def test_validate_survives_non_json_python_values() -> None:
    obj = {**full(), 1: "x", "tags": ("gpu",), "goal": b"bytes"}
    found = {(f.path, f.keyword) for f in cmp.validate(obj)}
    assert found == {("$[1]", "additionalProperties"), ("$.tags", "type"), ("$.goal", "type")}
