"""scrub(): every match in the scanned fields replaced by its category's placeholder."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import cmp
from cmp._redaction import _scan
from cmp._redaction._scan import PATTERNS
from cmp._scrub import placeholder
from tests.support.packets import encode, full, hand_built, minimal, put
from tests.support.strategies import packets
from tests.unit.test_redaction import AWS, GH, GOOGLE, JWT, SLACK, SSH, STRIPE

# One synthetic secret of each category (the AWS key is AWS's documented example).
SECRETS: dict[str, str] = {
    "abs-path": "/home/someone/project",
    "aws-key": AWS,
    "gh-token": GH,
    "jwt": JWT,
    "private-key": "-----BEGIN RSA PRIVATE KEY-----",
    "google-api-key": GOOGLE,
    "slack-token": SLACK,
    "stripe-key": STRIPE,
    "ssh-public-key": SSH,
}
# A path to one scanned field of each shape in full(): plain, array of strings, member of an item.
FIELDS = [
    "goal",
    "next_step",
    "constraints[0]",
    "success_criteria[0]",
    "open_questions[0]",
    "decisions[0].why",
    "decisions[0].consequences",
    "methods[0].how",
    "methods[0].when_applicable",
    "attempts[0].learned",
]


def test_every_category_covers_the_whole_table_of_patterns() -> None:
    assert set(SECRETS) == {p.category for p in PATTERNS}


def test_no_placeholder_matches_any_pattern() -> None:
    """What makes the repeated passes end: each pass consumes text the writer gave."""
    for category in cmp.REDACTION_CATEGORIES:
        assert not _scan.matches_anywhere(placeholder(category)), category


@pytest.mark.parametrize("category", sorted(SECRETS))
@pytest.mark.parametrize("field", FIELDS)
def test_a_secret_in_any_scanned_field_becomes_its_placeholder(category: str, field: str) -> None:
    secret = SECRETS[category]
    obj = put(full(), field, f"before {secret} after")
    report = cmp.check(encode(obj))
    assert report.packet is not None and [r.category for r in report.redactions] == [category]
    clean, replaced = cmp.scrub(report.packet)
    assert [(r.field, r.category) for r in replaced] == [(field, category)]
    assert cmp.redact(clean) == []
    assert cmp.check(cmp.dumps(clean)).ok
    expected = cmp.loads(encode(put(full(), field, f"before {placeholder(category)} after")))
    assert clean == expected  # nothing else changed


def test_every_match_is_replaced_not_only_the_first() -> None:
    other = "AKIA" + "Z" * 16
    packet = hand_built(goal=f"{AWS} and {other} and {AWS}", next_step="n")
    clean, replaced = cmp.scrub(packet)
    assert clean.goal == "[redacted:aws-key] and [redacted:aws-key] and [redacted:aws-key]"
    assert [r.found for r in replaced] == [AWS, other, AWS]


def test_a_replacement_that_makes_a_new_match_is_scrubbed_again() -> None:
    # `/home/…` right after a word character is no path (\B); after `]` it is.
    packet = hand_built(goal=f"{AWS}/home/someone", next_step="n")
    assert [r.category for r in cmp.redact(packet)] == ["aws-key"]
    clean, replaced = cmp.scrub(packet)
    assert clean.goal == "[redacted:aws-key][redacted:abs-path]"
    assert [r.category for r in replaced] == ["aws-key", "abs-path"]


def test_key_headers_are_recorded_masked() -> None:
    clean, replaced = cmp.scrub(hand_built(goal="-----BEGIN OPENSSH PRIVATE KEY-----", next_step="n"))
    assert clean.goal == "[redacted:private-key]" and replaced[0].found == "-----BEGIN …"


def test_a_placeholder_that_breaks_a_length_bound_is_a_packet_error_naming_the_field() -> None:
    goal = " ".join(["/home/a"] * 128)  # 1,023 characters; each path grows into 19
    packet = cmp.loads(encode(put(minimal(), "goal", goal)))
    with pytest.raises(cmp.PacketError) as caught:
        cmp.scrub(packet)
    assert [(f.path, f.keyword) for f in caught.value.findings] == [("$.goal", "maxLength")]


def test_a_clean_packet_comes_back_equal_and_a_broken_one_is_refused() -> None:
    packet = cmp.loads(encode(full()))
    assert cmp.scrub(packet) == (packet, [])
    with pytest.raises(cmp.PacketError):
        cmp.scrub(hand_built(goal="", next_step="n"))
    with pytest.raises(TypeError, match=r"takes a cmp\.Packet"):
        cmp.scrub(full())  # type: ignore[arg-type]


@pytest.mark.slow
@given(packets(plain=True), st.data())
def test_scrub_leaves_nothing_to_redact_and_changes_only_the_matches(packet: cmp.Packet, data: st.DataObject) -> None:
    """Plant secrets in random scanned fields of a random packet: scrubbing gives exactly the
    packet with each planted secret replaced by its placeholder, and nothing to redact."""
    obj = packet.to_dict()
    planted = dict(obj)
    expected = dict(obj)
    for field in data.draw(st.lists(st.sampled_from(["goal", "next_step"]), max_size=2, unique=True)):
        category = data.draw(st.sampled_from(sorted(SECRETS)))
        planted[field] = f"{obj[field][:200]}\n{SECRETS[category]}"  # a line break joins no pattern across it
        expected[field] = f"{obj[field][:200]}\n{placeholder(category)}"
    if cmp.redact(cmp.Packet.from_dict({**obj})) or not cmp.check(encode(planted)).conforming:
        return  # generated text that already matches, or grew past a bound: other tests cover those
    clean, _ = cmp.scrub(cmp.check(encode(planted)).packet)  # type: ignore[arg-type]
    assert cmp.redact(clean) == []
    assert clean.to_dict() == cmp.Packet.from_dict(expected).to_dict()
