"""Canonical serialization (specification clause 9, idempotence 9.7)."""

from __future__ import annotations

import dataclasses
import json
import types
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cmp
from cmp import model
from cmp._writer import compile_writer, shipped_writer
from cmp.schema import Member, members
from tests.support.examples import examples
from tests.support.packets import GENERATOR, encode, full, hand_built, minimal
from tests.support.strategies import mutated, packets, renderings


def oracle(packet: cmp.Packet) -> bytes:
    """The conformance generator's encoder (json module plus Go's extra escapes): written apart."""
    text: str = GENERATOR.canonical(model.to_obj(packet))
    return text.encode("utf-8")


def encode_oracle(obj: dict[str, Any]) -> bytes:
    """The generator's canonical bytes of parsed data."""
    text: str = GENERATOR.canonical(obj)
    return text.encode("utf-8")


def test_exact_bytes_of_a_small_packet() -> None:
    packet = cmp.loads(
        '{"next_step":"n","goal":"a<b>&c\\u2028\\u2029\\u0001\\u001f\\u007f\\b\\f\\n\\r\\t\\"\\\\/é😀",'
        '"created_at":"2026-04-21T12:00:00.500+00:00","id":"0123456789","ltm_version":"0.2",'
        '"decisions":[{"locked":false,"why":"y","what":"w","consequences":""}],"project":{"name":""},'
        '"tags":[],"provenance":{}}'
    )
    assert (
        cmp.dumps(packet)
        == (
            "{\n"
            '  "ltm_version": "0.2",\n'
            '  "id": "0123456789",\n'
            '  "created_at": "2026-04-21T12:00:00.5Z",\n'
            '  "project": {},\n'
            '  "goal": "a\\u003cb\\u003e\\u0026c\\u2028\\u2029\\u0001\\u001f\x7f\\b\\f\\n\\r\\t\\"\\\\/é😀",\n'
            '  "decisions": [\n'
            "    {\n"
            '      "what": "w",\n'
            '      "why": "y"\n'
            "    }\n"
            "  ],\n"
            '  "next_step": "n",\n'
            '  "provenance": {}\n'
            "}"
        ).encode()
    )


@pytest.mark.parametrize("version", ["0.1", "0.2"])
def test_the_writers_member_order_is_the_schemas_property_order(version: str) -> None:
    """The canonical order is the order of each object's ``properties`` in the shipped schema.

    The writer is generated from the schemas' members; this reads the bytes it writes
    back and holds them to the schema file itself, object by object.
    """
    from cmp.schema import load_schema

    written = json.loads(cmp.dumps(cmp.loads(encode(full(version)))), object_pairs_hook=lambda pairs: pairs)
    top = dict(written)
    schema = load_schema(version)["properties"]
    objects = {
        "$": ([k for k, _ in written], schema),
        "project": ([k for k, _ in top["project"]], schema["project"]["properties"]),
        "decision": ([k for k, _ in top["decisions"][0]], schema["decisions"]["items"]["properties"]),
        "attempt": ([k for k, _ in top["attempts"][0]], schema["attempts"]["items"]["properties"]),
        "provenance": ([k for k, _ in top["provenance"]], schema["provenance"]["properties"]),
    }
    if version == "0.2":
        objects["method"] = ([k for k, _ in top["methods"][0]], schema["methods"]["items"]["properties"])
    for name, (keys, properties) in objects.items():
        assert keys == [p for p in properties if p in keys], name
        assert len(keys) == len(properties), f"{name}: full() should fill every member"


def test_member_order_of_every_object() -> None:
    data = cmp.dumps(cmp.loads(encode(full("0.2")))).decode()
    keys = [line.strip().split('"')[1] for line in data.splitlines() if '": ' in line]
    assert keys == [
        "ltm_version",
        "id",
        "parent_id",
        "created_at",
        "project",
        "name",
        "ref",
        "goal",
        "success_criteria",
        "constraints",
        "decisions",
        "what",
        "why",
        "consequences",
        "locked",
        "methods",
        "name",
        "when_applicable",
        "how",
        "attempts",
        "tried",
        "outcome",
        "learned",
        "confidence",
        "open_questions",
        "next_step",
        "tags",
        "provenance",
        "author_model",
        "author_human",
        "source_hash",
        "confidence",
    ]


def test_no_trailing_newline_and_two_space_indent() -> None:
    data = cmp.dumps(cmp.loads(encode(minimal())))
    assert not data.endswith(b"\n") and data.startswith(b'{\n  "ltm_version": "0.2",\n')


def test_always_written_members_even_when_empty() -> None:
    packet = cmp.loads(
        encode(
            {
                **minimal(),
                "decisions": [{"what": "", "why": ""}],
                "attempts": [{"tried": "", "outcome": "failed"}],
                "methods": [{"name": "m", "when_applicable": "", "how": ""}],
            }
        )
    )
    obj = json.loads(cmp.dumps(packet))
    assert obj["decisions"] == [{"what": "", "why": ""}]
    assert obj["attempts"] == [{"tried": "", "outcome": "failed"}]
    assert obj["methods"] == [{"name": "m", "when_applicable": "", "how": ""}]


@pytest.mark.slow
@settings(max_examples=examples(300))
@given(packets())
def test_matches_the_independent_oracle(packet: cmp.Packet) -> None:
    assert cmp.dumps(packet) == oracle(packet)


@pytest.mark.slow
@settings(max_examples=examples(300))
@given(st.data())
def test_idempotent_over_any_rendering(data: st.DataObject) -> None:
    packet = data.draw(packets())
    raw = data.draw(renderings(packet))
    loaded = cmp.loads(raw)
    assert loaded == packet
    first = cmp.dumps(loaded)
    assert cmp.dumps(cmp.loads(first)) == first
    assert cmp.dumps(cmp.loads(first)) == cmp.dumps(packet)
    assert cmp.check(first).conforming


@pytest.mark.slow
@settings(max_examples=examples(100))
@given(packets(version="0.1"))
def test_v01_never_gains_v02_members(packet: cmp.Packet) -> None:
    obj = json.loads(cmp.dumps(packet))
    assert obj["ltm_version"] == "0.1"
    assert not {"parent_id", "success_criteria", "methods"} & set(obj)
    assert all("consequences" not in d for d in obj.get("decisions", []))
    assert all("confidence" not in a for a in obj.get("attempts", []))


def test_v01_model_with_v02_members_is_refused() -> None:
    packet = dataclasses.replace(cmp.loads(encode(full("0.1"))), parent_id="01J9X3K2QZ7N4M0WXYZV3R8Z01")
    with pytest.raises(cmp.PacketError) as caught:
        cmp.dumps(packet)
    assert [(f.path, f.keyword) for f in caught.value.findings] == [("$.parent_id", "additionalProperties")]


def test_maximal_members() -> None:
    obj = full("0.2")
    obj["goal"] = "😀" * 1024
    obj["methods"][0]["how"] = "é" * 2048
    obj["tags"] = [f"t{i}" for i in range(16)]
    packet = cmp.loads(encode(obj))
    assert cmp.loads(cmp.dumps(packet)) == packet


def test_compact_packet_that_grows_past_the_limit_is_refused_when_checked() -> None:
    """Specification 9.6: `ok` must always mean that dumps succeeds."""
    obj = {**minimal(), "constraints": ["<" * 1024] * 6}
    raw = json.dumps(obj, separators=(",", ":")).encode()
    assert len(raw) < cmp.MAX_PACKET_BYTES
    report = cmp.check(raw)
    assert not report.ok and report.packet is None
    (finding,) = report.errors
    size = len(encode_oracle(obj))
    assert size > cmp.MAX_PACKET_BYTES
    assert (finding.code, finding.path) == ("size", "$")
    assert (
        finding.message == f"canonical form is {size} bytes, max is 32768 (the packet as written is {len(raw)} bytes)"
    )
    with pytest.raises(cmp.PacketError):
        cmp.loads(raw)
    # A hand-built model of the same packet is refused by dumps itself, and by Packet.new.
    packet = hand_built(goal="g", next_step="n", constraints=["<" * 1024] * 6)
    with pytest.raises(cmp.PacketError) as caught:
        cmp.dumps(packet)
    assert caught.value.findings[0].code == "size"
    assert packet.findings() == list(caught.value.findings)
    with pytest.raises(cmp.PacketError) as refused:
        cmp.Packet.new(goal="g", next_step="n", constraints=["<" * 1024] * 6)
    assert [(f.code, f.path) for f in refused.value.findings] == [("size", "$")]


@pytest.mark.parametrize("extra", range(-3, 4))
def test_growth_by_indentation_alone_on_both_sides_of_the_limit(extra: int) -> None:
    """Nothing to escape: the canonical layout alone (line breaks, indents) takes a compact
    packet of well under 32,768 bytes to `extra` bytes around the limit."""
    obj: dict[str, Any] = {
        **minimal(),
        "decisions": [{"what": "w", "why": "y"}] * 64,
        "attempts": [{"tried": "t", "outcome": "failed"}] * 64,
        "tags": ["a"] * 16,
        "constraints": [],
    }
    target = cmp.MAX_PACKET_BYTES + extra
    while len(encode_oracle(obj)) + 1024 + 16 < target:
        obj["constraints"].append("c" * 1000)
    obj["goal"] = "g" * (len(obj["goal"]) + target - len(encode_oracle(obj)))
    raw = json.dumps(obj, separators=(",", ":")).encode()
    assert len(encode_oracle(obj)) == target
    assert len(raw) < cmp.MAX_PACKET_BYTES - 3000
    report = cmp.check(raw)
    assert report.ok is (extra <= 0)
    if report.ok:
        assert report.packet is not None and len(cmp.dumps(report.packet)) == target
    else:
        assert [f.code for f in report.errors] == ["size"]


def test_dumps_refuses_non_conforming_models() -> None:
    packet = hand_built(goal="", next_step="n", tags=["Bad"])
    with pytest.raises(cmp.PacketError) as caught:
        cmp.dumps(packet)
    assert [f.path for f in caught.value.findings] == ["$.goal", "$.tags[0]"]
    assert packet.findings() == list(caught.value.findings)
    with pytest.raises(TypeError):
        dataclasses.replace(packet, goal="g", tags=(), project={"name": "x"})  # type: ignore[arg-type]
    for not_a_packet in (None, {"goal": "g"}, b"{}"):
        with pytest.raises(TypeError, match=r"takes a cmp\.Packet"):
            cmp.dumps(not_a_packet)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=r"takes a cmp\.Packet"):
            cmp.state_digest(not_a_packet)  # type: ignore[arg-type]


def test_state_digest_ignores_id_and_created_at_only() -> None:
    first = cmp.Packet.new(goal="g", next_step="n", tags=["a"])
    second = cmp.Packet.new(goal="g", next_step="n", tags=["a"])
    assert first.id != second.id
    assert cmp.state_digest(first) == cmp.state_digest(second)
    assert cmp.state_digest(first).startswith("sha256:") and len(cmp.state_digest(first)) == 71
    assert cmp.state_digest(first) != cmp.state_digest(dataclasses.replace(first, goal="h"))
    assert cmp.state_digest(first) != cmp.state_digest(dataclasses.replace(first, parent_id="0123456789"))


@pytest.mark.slow
@settings(max_examples=examples(300))
@given(st.data())
def test_every_writing_path_matches_the_oracle(data: st.DataObject) -> None:
    """Hand-built, read from escape-free text (no escaping pass) and read from escaped text."""
    packet = data.draw(packets(plain=data.draw(st.booleans())))
    expected = oracle(packet)
    assert cmp.dumps(packet) == expected
    loaded = cmp.loads(data.draw(renderings(packet)))
    assert cmp.dumps(loaded) == expected
    assert cmp.state_digest(loaded) == cmp.state_digest(packet)


def test_hand_built_lists_are_escaped_too() -> None:
    packet = cmp.Packet.new(
        goal='say "hi"\n',
        next_step="a\\b",
        decisions=[cmp.Decision(what='"w"', why="tab\there")],
        tags=["gpu"],
    )
    assert isinstance(packet.decisions, tuple)
    listed = dataclasses.replace(packet, decisions=[cmp.Decision(what='"w"', why="tab\there")])
    for each in (packet, listed):
        data = cmp.dumps(each)
        assert json.loads(data)["decisions"] == [{"what": '"w"', "why": "tab\there"}]
        assert data == oracle(packet)


@pytest.mark.parametrize("char", ["\u00a0", "\u2028", "\u200b", "\x7f", "é", "😀"])
def test_characters_that_need_no_escape_are_written_as_the_oracle_writes_them(char: str) -> None:
    packet = cmp.loads(encode(dict(full(), goal=f"a{char}b")))
    assert cmp.dumps(packet) == oracle(packet) == cmp.dumps(dataclasses.replace(packet))


def test_strings_holding_the_separator_are_escaped_one_by_one() -> None:
    packet = cmp.Packet.new(goal='a\x7f"b"', next_step="line\nbreak\x7f", tags=["gpu"])
    assert cmp.dumps(packet) == oracle(packet)
    assert json.loads(cmp.dumps(packet))["goal"] == 'a\x7f"b"'


@pytest.mark.parametrize("accent", ["", "é"])
def test_ascii_and_wider_text_escape_alike(accent: str) -> None:
    packet = cmp.Packet.new(
        goal=f'"{accent}"\x00\x1f\t', next_step="\\\n", constraints=("<&>", "x\x7fy" if accent else "plain")
    )
    assert cmp.dumps(packet) == oracle(packet)


# Literal text that looks like an escape (a backslash, then `u007f`) must be written as
# text; the escaper once split its output at the escape DEL becomes in ASCII text.
ESCAPE_LOOKALIKES = ["\\u007f", "\\u2028", "\\u003c", "\\n", "\\\\", '\\"', "\\", "\x7f", "\u2028", "<", "é", "u007f"]


@pytest.mark.slow
@settings(max_examples=examples(400))
@given(
    st.lists(st.lists(st.sampled_from(ESCAPE_LOOKALIKES), max_size=6).map("".join), min_size=3, max_size=3),
    st.booleans(),
)
def test_literal_escape_lookalikes_are_written_as_text(texts: list[str], ascii_input: bool) -> None:
    obj = {**minimal(), "goal": "DEL is " + texts[0], "constraints": texts[1:], "next_step": "n" + texts[0]}
    report = cmp.check(json.dumps(obj, ensure_ascii=ascii_input))
    assert report.ok and report.packet is not None
    data = cmp.dumps(report.packet)
    assert data == encode_oracle(obj)
    again = cmp.check(data)
    assert again.ok and again.packet == report.packet


def test_the_reported_crash() -> None:
    """An ASCII packet whose goal holds the six characters backslash, u, 0, 0, 7, f."""
    raw = json.dumps({**minimal(), "goal": "DEL is \\u007f in Go"}).encode()
    assert b'"DEL is \\\\u007f in Go"' in raw
    packet = cmp.loads(raw)
    assert cmp.dumps(packet) == encode_oracle({**minimal(), "goal": "DEL is \\u007f in Go"})
    assert cmp.state_digest(packet).startswith("sha256:")


@pytest.mark.slow
@settings(max_examples=examples(300))
@given(st.data())
def test_whatever_check_calls_conforming_dumps_writes_and_check_accepts_again(data: st.DataObject) -> None:
    """`ok` (indeed `conforming`) always means dumps succeeds, and its bytes conform."""
    raw = data.draw(st.one_of(mutated(), packets().flatmap(renderings)))
    report = cmp.check(raw)
    if not report.conforming:
        return
    assert report.packet is not None
    written = cmp.dumps(report.packet)
    again = cmp.check(written)
    assert again.conforming and again.packet is not None
    assert cmp.dumps(again.packet) == written


def test_large_packets_keep_the_bytes_check_wrote_to_measure_them() -> None:
    """check writes a packet over 32,768 / MAX_GROWTH bytes once to measure it; dumps
    returns those bytes, which must be what a fresh write gives."""
    from cmp._canonical import MAX_GROWTH
    from cmp._canonical import encode as write

    obj = {**full(), "constraints": ["c<é\\u2028" * 100] * 10}
    raw = json.dumps(obj, ensure_ascii=False).encode()
    assert len(raw) * MAX_GROWTH > cmp.MAX_PACKET_BYTES
    packet = cmp.check(raw).packet
    assert packet is not None and packet._known.canonical is not None
    assert cmp.dumps(packet) == encode_oracle(obj) == write(dataclasses.replace(packet))
    assert dataclasses.replace(packet)._known.canonical is None  # a changed copy writes afresh
    small = cmp.check(encode(full())).packet
    assert small is not None and small._known.canonical is None


# The canonical writer's generator, over layouts the shipped schemas do not have: an
# optional member first, booleans first and last, objects with nothing written, arrays of
# objects inside objects. For ASCII text without escapes, the canonical layout is exactly
# what json.dumps(indent=2) writes.

_NAMES = st.sampled_from(["a", "b", "c", "d", "e"])


@st.composite
def _layouts(draw: st.DrawFn) -> dict[str, tuple[Member, ...]]:
    objects: dict[str, tuple[Member, ...]] = {}

    def obj(location: str, depth: int) -> None:
        names = draw(st.lists(_NAMES, min_size=0 if depth else 1, max_size=4, unique=True))
        kinds = ["string", "boolean", "strings"] + (["object", "objects"] if depth < 2 else [])
        listed = []
        for name in names:
            kind = draw(st.sampled_from(kinds))
            required = kind == "string" and draw(st.booleans())
            nested = {"object": f"{location}.{name}", "objects": f"{location}.{name}[]"}.get(kind, "")
            if nested:
                obj(nested, depth + 1)
            listed.append(Member(name, kind, required, nested))
        objects[location] = tuple(listed)

    obj("$", 0)
    return objects


def _value(draw: st.DrawFn, objects: dict[str, tuple[Member, ...]], location: str) -> tuple[Any, dict[str, Any]]:
    """(the object the writer reads, the JSON data it should write)."""
    words = st.text("xyz ", max_size=3)
    attributes: dict[str, Any] = {}
    data: dict[str, Any] = {}
    for member in objects[location]:
        if member.kind == "string":
            value = expected = draw(words)
        elif member.kind == "boolean":
            value = expected = draw(st.booleans())
        elif member.kind == "strings":
            value = tuple(draw(st.lists(words, max_size=3)))
            expected = list(value)
        elif member.kind == "object":
            pair = draw(st.none() | st.just(True))
            value, expected = (None, None) if pair is None else _value(draw, objects, member.location)
        else:
            pairs = [_value(draw, objects, member.location) for _ in range(draw(st.integers(0, 3)))]
            value, expected = tuple(p[0] for p in pairs), [p[1] for p in pairs]
        attributes[member.name] = value
        if member.required or value:
            data[member.name] = expected
    return types.SimpleNamespace(**attributes), data


@pytest.mark.slow
@settings(max_examples=examples(300))
@given(st.data())
def test_the_generated_writer_lays_out_any_layout_as_json_indent_2(data: st.DataObject) -> None:
    objects = data.draw(_layouts())
    write = compile_writer(objects)
    value, expected = _value(data.draw, objects, "$")
    pieces = write(value, True)
    assert "".join(pieces) == json.dumps(expected, indent=2)
    strings = pieces[1::2]  # pieces alternate layout and string, strings at odd places
    assert len(pieces) % 2 == 1 and all(type(text) is str for text in strings)


def test_the_writer_refuses_a_rule_it_does_not_know() -> None:
    """Required members are always strings in the schemas; anything else needs a decision first."""
    for kind in ("boolean", "strings", "object", "objects"):
        location = "$.x" if kind == "object" else "$.x[]" if kind == "objects" else ""
        objects = {"$": (Member("x", kind, True, location),), "$.x": (), "$.x[]": ()}
        with pytest.raises(ValueError, match=f"required {kind}"):
            compile_writer(objects)  # type: ignore[arg-type]


def test_the_writers_generated_source_can_be_read_back() -> None:
    import inspect

    write = shipped_writer()
    source = inspect.getsource(write).lstrip()
    assert source.startswith("def write(packet, identity, ")
    assert write.__code__.co_filename.startswith("<cmp compiled canonical writer #")
    assert '"next_step": "' in source and "if identity:" in source
    compiled_again = compile_writer(members())
    assert compiled_again.__code__.co_filename != write.__code__.co_filename
    assert inspect.getsource(compiled_again) == inspect.getsource(write)


def test_the_writer_extends_its_pieces_once_for_each_run_of_one_block() -> None:
    """Adjacent ``out += (...)`` lines at one indent run one after the other and are one
    extend; a line between them, or another indent (another block), keeps them apart."""
    from cmp._writer import _one_extend_each

    lines = [
        "    out += ('a', x)",
        "    out += ('b', y)",
        "    out += ('c', z)",
        "    if c:",
        "        out += ('d', w)",
        "    out += ('e', v)",
        "    p = 'f'",
        "    out += (p, u)",
    ]
    assert _one_extend_each(lines) == [
        "    out += ('a', x, 'b', y, 'c', z)",
        "    if c:",
        "        out += ('d', w)",
        "    out += ('e', v)",
        "    p = 'f'",
        "    out += (p, u)",
    ]
    import inspect
    import re

    # In the shipped writer, a decision's what and why are one extend.
    assert re.search(r"out \+= \(.*\.what, '.*\"why\": \"', \w+\.why\)$", inspect.getsource(shipped_writer()), re.M)


# --- strings holding characters JSON escapes ---


@settings(max_examples=examples(300))
@given(st.data())
def test_the_backslash_only_escape_is_the_escaping_pass(data: st.DataObject) -> None:
    """cmp._canonical._joined doubles the backslashes of the whole text when the strings need
    no other escape: the same text as escaping each string on its own, since the layout
    holds no backslash."""
    from json.encoder import encode_basestring

    from cmp._canonical import _joined

    packet = data.draw(packets(plain=data.draw(st.booleans())))  # plain: no string JSON must escape
    chars = st.sampled_from(["\\", "\\\\", "C:\\Users", "/", "é", " ", "a", "\u2028", '"', "\n", "\x01", "\t", "\x7f"])
    text = st.lists(chars, max_size=8).map("".join)
    packet = dataclasses.replace(packet, goal="g" + data.draw(text), next_step="n" + data.draw(text))
    for identity in (True, False):
        pieces = shipped_writer()(packet, identity)
        assert not any("\\" in layout for layout in pieces[0::2])
        expected = "".join(encode_basestring(piece)[1:-1] if odd else piece for odd, piece in _alternating(pieces))
        assert _joined(list(pieces), False) == expected


def _alternating(pieces: list[str]) -> list[tuple[bool, str]]:
    return [(index % 2 == 1, piece) for index, piece in enumerate(pieces)]

_ESCAPED_CHAR = st.sampled_from(["\\", "\t", "\r", "\b", "\f", "/", "a", "é", "<", " ", "\u2028", "😀", '"', "\n"])


@pytest.mark.slow
@settings(max_examples=examples(300))
@given(st.data())
def test_strings_holding_characters_to_escape_write_the_oracles_bytes(data: st.DataObject) -> None:
    """A packet read from text with escapes writes what the oracle writes, and what a copy
    that knows nothing of its reading writes."""
    text = st.lists(_ESCAPED_CHAR, max_size=12).map("".join)
    obj = full()
    obj["goal"] = "g" + data.draw(text)
    obj["constraints"] = data.draw(st.lists(text, max_size=4))
    obj["decisions"][0]["why"] = data.draw(text)
    obj["project"]["name"] = data.draw(text)
    raw = json.dumps(obj, ensure_ascii=False)
    if data.draw(st.booleans()):
        raw = raw.replace("/", "\\/")  # an escape that writes a character needing none
    packet = cmp.loads(raw.encode())
    assert cmp.dumps(packet) == oracle(packet) == cmp.dumps(dataclasses.replace(packet))
    assert cmp.state_digest(packet) == cmp.state_digest(dataclasses.replace(packet))


@pytest.mark.parametrize("before", ["", "<&>\u2028", 'say "hi"\n\\'])
def test_a_lone_surrogate_is_placed_in_the_text_as_written(before: str) -> None:
    """The canonical writer escapes UTF-8 bytes; a text it cannot encode is still reported
    at the surrogate's index in the text as written, Go's escapes included."""
    from cmp._canonical import encode

    packet = cmp.Packet.new(goal="g", next_step="n", tags=["gpu"])
    packet = dataclasses.replace(packet, goal=f"{before}x\ud800y")
    written: str = GENERATOR.canonical(model.to_obj(packet))
    with pytest.raises(cmp.PacketError) as caught:
        encode(packet)
    assert caught.value.findings[0].message == f"invalid json: lone surrogate at index {written.index(chr(0xD800))}"
