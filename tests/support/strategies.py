"""Hypothesis strategies for valid packets, shared by the property tests."""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import strategies as st

import cmp
from cmp import model

# Every code point but surrogates; control characters, U+2028/U+2029, <>& and
# astral characters are all in, and drawn often.
_SPECIAL = st.sampled_from(
    ["<", ">", "&", "\u2028", "\u2029", "\x00", "\x1f", "\x7f", "\t", "\n", '"', "\\", "😀", "é", "/"]
)
_CHAR = st.one_of(_SPECIAL, st.characters(blacklist_categories=("Cs",)))
# What JSON text carries without a backslash: no quote, backslash or control character.
_PLAIN_CHAR = st.one_of(
    st.sampled_from(["<", ">", "&", "\u2028", "😀", "é", "/", " ", ":", "\x7f"]),
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters='"\\'),
)


def _text(max_size: int = 24, min_size: int = 0, chars: st.SearchStrategy[str] = _CHAR) -> st.SearchStrategy[str]:
    return st.lists(chars, min_size=min_size, max_size=max_size).map("".join)


_SLUG = st.from_regex(r"\A[a-z0-9][a-z0-9-]{0,12}\Z")
_CONFIDENCE = st.sampled_from(["", "low", "medium", "high"])
_TIMES = st.sampled_from(
    [
        "2026-04-21T10:30:00Z",
        "2026-04-21T10:30:00.5Z",
        "2026-04-21T12:00:00.500+02:00",
        "2024-02-29T23:59:59.123456789-00:00",
        "2026-01-01T00:00:00+00:00",
        "1999-12-31T23:59:59.100-05:30",
    ]
)


@st.composite
def packets(draw: st.DrawFn, version: str | None = None, plain: bool = False) -> cmp.Packet:
    """Valid packets; ``plain`` ones have no string that JSON must escape."""
    version = version or draw(st.sampled_from(["0.1", "0.2"]))
    v2 = version == "0.2"
    chars = _PLAIN_CHAR if plain else _CHAR

    def text(max_size: int = 24, min_size: int = 0) -> st.SearchStrategy[str]:
        return _text(max_size, min_size, chars)

    small = st.lists(text(), max_size=3).map(tuple)
    decisions = st.lists(
        st.builds(
            cmp.Decision, what=text(), why=text(), consequences=text() if v2 else st.just(""), locked=st.booleans()
        ),
        max_size=3,
    ).map(tuple)
    attempts = st.lists(
        st.builds(
            cmp.Attempt,
            tried=text(),
            outcome=st.sampled_from(["succeeded", "failed", "partial"]),
            learned=text(),
            confidence=_CONFIDENCE if v2 else st.just(""),
        ),
        max_size=3,
    ).map(tuple)
    methods = st.lists(st.builds(cmp.Method, name=_SLUG, when_applicable=text(), how=text(48)), max_size=2).map(tuple)
    project = st.none() | st.builds(cmp.Project, name=text(), ref=text())
    provenance = st.none() | st.builds(
        cmp.Provenance,
        author_model=text(),
        author_human=text(),
        source_hash=st.just("") | st.from_regex(r"\Asha256:[a-f0-9]{64}\Z"),
        confidence=_CONFIDENCE,
    )
    return cmp.Packet(
        ltm_version=version,
        id=draw(st.from_regex(r"\A[0-9A-Z]{10,64}\Z")),
        created_at=draw(_TIMES),
        goal=draw(text(min_size=1)),
        next_step=draw(text(min_size=1)),
        parent_id=draw(st.just("") | st.from_regex(r"\A[0-9A-Z]{10,64}\Z")) if v2 else "",
        project=draw(project),
        success_criteria=draw(small) if v2 else (),
        constraints=draw(small),
        decisions=draw(decisions),
        methods=draw(methods) if v2 else (),
        attempts=draw(attempts),
        open_questions=draw(small),
        tags=tuple(draw(st.lists(_SLUG, max_size=4))),
        provenance=draw(provenance),
    )


def _shuffled(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: _shuffled(v, rng) for k, v in items}
    if isinstance(value, list):
        return [_shuffled(v, rng) for v in value]
    return value


@st.composite
def renderings(draw: st.DrawFn, packet: cmp.Packet) -> bytes:
    """The packet as some writer might have written it: any member order, any spacing, escapes or not."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    obj = _shuffled(model.to_obj(packet), rng)
    indent = draw(st.sampled_from([None, 0, 1, 2, 4, "\t"]))
    separators = draw(st.sampled_from([(",", ":"), (", ", ": "), (" ,", " : ")]))
    ascii_only = draw(st.booleans())
    text = json.dumps(obj, indent=indent, separators=separators, ensure_ascii=ascii_only)
    return (draw(st.sampled_from(["", " ", "\n", "\r\n\t"])) + text + draw(st.sampled_from(["", "\n", "  "]))).encode()


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A rendering of a valid packet, then flipped, cut, spliced, duplicated into."""
    packet = draw(packets(plain=draw(st.booleans())))
    raw = bytearray(draw(renderings(packet)))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "truncate", "splice", "duplicate", "delete", "insert"]))
        if not raw:
            break
        at = draw(st.integers(0, len(raw) - 1))
        if op == "flip":
            raw[at] ^= 1 << draw(st.integers(0, 7))
        elif op == "truncate":
            del raw[at:]
        elif op == "splice":
            end = draw(st.integers(at, len(raw)))
            raw[at:at] = raw[at:end]
        elif op == "delete":
            del raw[at : at + draw(st.integers(1, 8))]
        elif op == "insert":
            raw[at:at] = draw(
                st.sampled_from([b"{", b"}", b"[", b",", b'"', b"\\", b"\\ud800", b"\xff", b"\x00", b" "])
            )
        else:  # duplicate a member
            text = raw.decode("utf-8", "replace")
            if text.rstrip().endswith("}"):
                raw = bytearray(text.rstrip()[:-1].encode() + b', "goal": "again"}')
    return bytes(raw)
