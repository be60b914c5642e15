"""The public pipeline API: check, loads, validate and the Report they return."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cmp
from cmp import _quick
from cmp._pipeline import check_long
from cmp.conformance import vector_input
from tests.support.examples import examples
from tests.support.packets import encode, full, hand_built, minimal, put
from tests.support.strategies import mutated, packets, renderings
from tests.support.vectors import committed_vectors


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
    assert set(cmp.findings.CODES) == {
        "size",
        "json",
        "duplicate-key",
        "not-object",
        "version-missing",
        "version-unsupported",
        "schema",
        "truncated",
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
    packet = hand_built(goal="AKIAIOSFODNN7EXAMPLE \ud800", next_step="n")
    with pytest.raises(cmp.PacketError) as caught:
        cmp.dumps(packet)
    assert caught.value.findings[0].code == "json"
    with pytest.raises(cmp.PacketError, match="lone surrogate"):
        cmp.Packet.new(goal="\ud800", next_step="n")
    assert [str(r) for r in cmp.redact(packet)] == ["goal/aws-key: AKIA… (20 chars) at 0"]


def test_validate_survives_non_json_python_values() -> None:
    obj = {**full(), "tags": ("gpu",), "goal": b"bytes", "x": {1, 2}}
    found = {(f.path, f.keyword, f.message) for f in cmp.validate(obj)}
    assert found == {
        ("$.x", "additionalProperties", "unexpected member 'x'"),
        ("$.tags", "type", "expected array, got tuple"),
        ("$.goal", "type", "expected string, got bytes"),
    }


@pytest.mark.parametrize("name", [None, 1.5, b"goal", ("a", "b"), 7])
def test_validate_refuses_member_names_that_are_not_strings(name: Any) -> None:
    """YAML loaders make such names; JSON cannot hold them."""
    obj = full()
    obj["decisions"][0][name] = "x"
    (finding,) = cmp.validate(obj)
    assert (finding.code, finding.path) == ("json", "$")
    kind = type(name).__name__
    assert finding.message == f"invalid json: member name of type {kind} in $.decisions[0] is not a string"


def test_validate_refuses_reference_cycles_without_growing() -> None:
    obj = full()
    obj["decisions"][0]["self"] = obj["decisions"]
    looped: list[Any] = []
    looped.append(looped)
    obj["tags"] = looped
    found = [f.message for f in cmp.validate(obj)]
    assert found == [
        "invalid json: $.decisions[0].self holds itself (a reference cycle)",
        "invalid json: $.tags[0] holds itself (a reference cycle)",
    ]
    # Shared (not cyclic) containers are fine: JSON just writes them twice.
    shared = ["gpu"]
    assert cmp.validate({**full(), "tags": shared, "constraints": shared}) == []


def test_check_refuses_a_released_memoryview_with_a_type_error() -> None:
    view = memoryview(encode(full()))
    view.release()
    with pytest.raises(TypeError, match="released memoryview"):
        cmp.check(view)


# --- the quick path (one decode, one compiled walk) against the long way round ---


def both_ways(data: bytes, **options: Any) -> tuple[cmp.Report, cmp.Report, bool]:
    """(report as check() gives it, report of the long way alone, whether the quick path answered)."""
    raw = data if isinstance(data, bytes) else data.encode("utf-8")
    return cmp.check(data, **options), check_long(data, **options), isinstance(_quick.read(raw), tuple)


def assert_same_both_ways(data: bytes, **options: Any) -> bool:
    report, long_way, quick = both_ways(data, **options)
    assert report == long_way
    assert report.to_json() == long_way.to_json()
    if report.packet is not None:
        assert long_way.packet is not None
        assert cmp.dumps(report.packet) == cmp.dumps(long_way.packet)
        assert cmp.state_digest(report.packet) == cmp.state_digest(long_way.packet)
    return quick


@pytest.mark.slow
def test_quick_path_gives_the_same_report_on_every_vector() -> None:
    quick = 0
    vectors = committed_vectors()
    for vector in vectors:
        for options in ({}, {"lenient": True}, {"rule_set": "extended"}, {"lenient": True, "rule_set": "extended"}):
            quick += assert_same_both_ways(vector_input(vector), **options)
    assert quick > 800  # the vectors exercise it, not just the long way


@pytest.mark.slow
@settings(max_examples=examples(300))
@given(st.data())
def test_quick_path_gives_the_same_report_on_any_rendering(data: st.DataObject) -> None:
    packet = data.draw(packets(plain=data.draw(st.booleans())))
    assert_same_both_ways(data.draw(renderings(packet)), rule_set=data.draw(st.sampled_from(["default", "extended"])))


@pytest.mark.slow
@settings(max_examples=examples(300))
@given(mutated(), st.sampled_from(["default", "extended"]))
def test_quick_path_gives_the_same_report_on_mutated_text(data: bytes, rules: str) -> None:
    assert_same_both_ways(data, rule_set=rules)


# Extended hits planted in default and extra fields, built from parts (see tests/unit/test_extended.py).
_EXTENDED_HITS = [
    ("project.ref", "https://bot:" + "EXAMPLE-pw" + "@git.example.com"),
    ("provenance.author_human", "dop_v1_" + "0" * 64),
    ("goal", "-----BEGIN " + "DSA PRIVATE KEY-----"),
    ("project.name", "sk-ant-" + "api03-" + "EXAMPLE" * 13),
    ("constraints[0]", "AGE-SECRET-KEY-" + "1" + "Q" * 58),
]


@pytest.mark.parametrize(("path", "secret"), _EXTENDED_HITS)
def test_quick_path_gives_the_same_extended_findings(path: str, secret: str) -> None:
    raw = encode(put(full(), path, secret))
    assert assert_same_both_ways(raw, rule_set="extended")  # the quick path answered
    report = cmp.check(raw, rule_set="extended")
    assert [(r.field, r.profile) for r in report.redactions][-1] == (path, "extended")
    escaped = raw.replace(b'"next_step": "', b'"next_step": "\\u0041', 1)
    assert escaped != raw and assert_same_both_ways(escaped, rule_set="extended") is False  # the long way


def test_plain_rendering_takes_the_quick_path() -> None:
    assert both_ways(encode(full()))[2]
    assert both_ways(encode(full("0.1")))[2]


def test_escapes_other_than_backslash_u_take_the_quick_path_too() -> None:
    """With a backslash the quick path scans the fields (fact 3)."""
    obj = put(full(), "goal", 'Say "hi" on\ta new\nline.')
    obj = put(obj, "constraints[0]", "Paths like C:\\Work\\data.txt stay out.")
    raw = json.dumps(obj, ensure_ascii=False).encode()
    assert b"\\" in raw and b"\\u" not in raw
    report, long_way, quick = both_ways(raw)
    assert quick and report == long_way
    assert [r.category for r in report.redactions] == ["abs-path"]  # found in the field, not the text
    assert report.packet is not None
    assert cmp.dumps(report.packet) == cmp.dumps(long_way.packet)  # type: ignore[arg-type]


DUPLICATES = [
    ('"goal": "g",', '"goal": "g", "goal": "g",', "$.goal"),
    ('"what": "w",', '"what": "w", "what": "w",', "$.decisions[0].what"),
    ('"locked": true', '"locked": true, "locked": true', "$.decisions[0].locked"),
    ('"tags": [', '"tags": ["x"], "tags": [', "$.tags"),
    ('"project": {', '"project": {"name": "p"}, "project": {', "$.project"),
    ('"decisions": [', '"decisions": [], "decisions": [', "$.decisions"),
]


@pytest.mark.parametrize(("before", "after", "path"), DUPLICATES)
@pytest.mark.parametrize("next_step", ["plain", 'say "hi"'])
def test_a_dropped_duplicate_is_always_found(before: str, after: str, path: str, next_step: str) -> None:
    packet = full()
    packet["goal"] = "g"
    packet["decisions"][0] = {"what": "w", "why": "y", "locked": True}
    packet["next_step"] = next_step  # with a backslash too, the string count finds the duplicate
    text = json.dumps(packet, ensure_ascii=False)
    assert before in text
    report, long_way, quick = both_ways(text.replace(before, after, 1).encode())
    assert not quick and report == long_way
    assert [(f.code, f.path) for f in report.errors] == [("duplicate-key", path)]


@pytest.mark.parametrize(
    "escape",
    ["\\/", "\\u00e9", '\\"', "\\n", "\\t", "\\\\", "\\u0041", "\\ud83d\\ude00", "\\u2028", "\\u003c", "\\u0000"],
)
def test_escapes_take_either_path_to_the_same_bytes(escape: str) -> None:
    text = json.dumps(full(), ensure_ascii=False).replace('"goal": "', f'"goal": "{escape}', 1)
    assert_same_both_ways(text.encode())
    report = cmp.check(text.encode())
    assert report.packet is not None
    assert report.packet.goal.startswith(json.loads(f'"{escape}"'))


def test_a_checked_packet_is_marked_conforming_and_a_copy_is_not() -> None:
    packet = cmp.loads(encode(full()))
    assert packet._known.conforming
    copy = dataclasses.replace(packet)
    assert not copy._known.conforming
    assert cmp.dumps(copy) == cmp.dumps(packet)


def test_secret_in_an_unscanned_member_is_not_reported() -> None:
    # The one-pass scan of the whole text sees it; the field-by-field scan must decide.
    text = encode(put(full(), "project.ref", "AKIAIOSFODNN7EXAMPLE"))
    report, long_way, quick = both_ways(text)
    assert quick and report == long_way and report.redactions == ()
    scanned = encode(put(full(), "goal", "key AKIAIOSFODNN7EXAMPLE"))
    report, long_way, quick = both_ways(scanned)
    assert quick and report == long_way
    assert [r.line(show_found=True) for r in report.redactions] == ["goal/aws-key: AKIAIOSFODNN7EXAMPLE"]
    assert [str(r) for r in report.redactions] == ["goal/aws-key: AKIA… (20 chars) at 4"]


@pytest.mark.parametrize(("surrogates", "bad_tags"), [(0, 150), (30, 150), (99, 2), (100, 1), (150, 0), (150, 16)])
def test_validate_caps_surrogate_and_schema_findings_together(surrogates: int, bad_tags: int) -> None:
    obj: dict[str, Any] = full()
    obj["constraints"] = ["\ud800"] * min(surrogates, 32)
    obj["open_questions"] = ["\ud800"] * max(0, min(surrogates - 32, 32))
    obj["x"] = ["\ud800"] * max(0, surrogates - 64)  # also an additionalProperties finding
    if surrogates <= 64:
        del obj["x"]
    obj["tags"] = ["Bad"] * bad_tags
    expected = surrogates + bad_tags + (bad_tags > 16) + (surrogates > 64)
    found = cmp.validate(obj)
    if expected <= 100:
        assert len(found) == expected and all(f.code != "truncated" for f in found)
    else:
        assert len(found) == 101
        assert found[-1].code == "truncated"
        assert found[-1].message.startswith(f"{expected - 100:,} more findings")
    assert [f.code for f in found[: min(surrogates, 100)]] == ["json"] * min(surrogates, 100)


def test_validate_says_what_a_huge_version_number_is() -> None:
    (finding,) = cmp.validate({"ltm_version": 10**5000})
    assert finding.code == "version-missing"
    assert finding.message == 'ltm_version must be a string such as "0.2", found a number of about 5000 digits'


@pytest.mark.parametrize("kind", [bytearray, memoryview])
def test_the_long_way_reads_what_check_reads(kind: Any) -> None:
    """check_long, the tests' yardstick, takes the buffers check takes, as their bytes."""
    raw = encode(put(full(), "tags[0]", "Bad"))
    assert check_long(kind(raw)) == cmp.check(kind(raw)) == check_long(raw)
    assert not check_long(kind(raw)).conforming




@pytest.mark.parametrize("lenient", [False, True])
@pytest.mark.parametrize("allow_unredacted", [False, True])
def test_a_conforming_report_made_the_quick_way_is_the_constructors(lenient: bool, allow_unredacted: bool) -> None:
    """_conforming_report sets every field the dataclass has, as its constructor sets them."""
    from cmp._pipeline import Policy, Report, _conforming_report

    raw = encode(put(full(), "goal", "key AKIAIOSFODNN7EXAMPLE"))
    packet = cmp.loads(raw)
    redactions = tuple(cmp.redact(packet, rule_set="extended"))
    policy = Policy(lenient, allow_unredacted, "extended")
    quick = _conforming_report("0.2", packet, redactions, policy, raw)
    slow = Report(version="0.2", errors=(), redactions=redactions, packet=packet, source=raw, policy=policy)
    assert type(quick) is Report
    for each in dataclasses.fields(Report):
        assert getattr(quick, each.name) is getattr(slow, each.name), each.name
    assert quick == slow and repr(quick) == repr(slow) and quick.to_json() == slow.to_json()
    assert (quick.ok, quick.accepted, quick.blocked) == (slow.ok, slow.accepted, slow.blocked)
    assert (quick.policy.lenient, quick.policy.allow_unredacted) == (lenient, allow_unredacted)
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.policy = Policy()  # type: ignore[misc]
