"""Hypothesis strategies for valid packets, shared by the property tests."""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import strategies as st

import cmp
from cmp import model

# Every code point but surrogates; control characters, U+2028/U+2029, <>& and
# astral characters are all in, and drawn often: a text is pieces, each one of these
# characters or a run of any. (Runs, not a character a draw: hypothesis draws a run of
# text in one step, and a packet holds some forty texts.)
_SPECIAL = st.sampled_from(
    ["<", ">", "&", "\u2028", "\u2029", "\x00", "\x1f", "\x7f", "\t", "\n", '"', "\\", "😀", "é", "/"]
)
_ANY = st.characters(blacklist_categories=("Cs",))
# What JSON text carries without a backslash: no quote, backslash or control character.
_PLAIN_SPECIAL = st.sampled_from(["<", ">", "&", "\u2028", "😀", "é", "/", " ", ":", "\x7f"])
_PLAIN = st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters='"\\')
_PIECES = {
    False: st.one_of(_SPECIAL, st.text(_ANY, min_size=1, max_size=8)),
    True: st.one_of(_PLAIN_SPECIAL, st.text(_PLAIN, min_size=1, max_size=8)),
}


def _text(max_size: int = 24, min_size: int = 0, plain: bool = False) -> st.SearchStrategy[str]:
    """Texts of ``min_size`` to ``max_size`` characters (``plain``: none that JSON escapes)."""
    pieces = st.lists(_PIECES[plain], min_size=min(min_size, 1), max_size=max(1, max_size // 3)).map("".join)
    return pieces.map(lambda text: text[:max_size]).filter(lambda text: len(text) >= min_size)


_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"
_SLUG = st.builds(str.__add__, st.sampled_from(_ALNUM), st.text(_ALNUM + "-", max_size=12))
_ID = st.text("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=10, max_size=64)
_SOURCE_HASH = st.text("0123456789abcdef", min_size=64, max_size=64).map("sha256:".__add__)
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


class _Members:
    """The strategies for one version's members, with plain text or any: built once, since a
    strategy hypothesis meets for the first time is validated and wrapped again each draw."""

    def __init__(self, v2: bool, plain: bool) -> None:
        def text(max_size: int = 24, min_size: int = 0) -> st.SearchStrategy[str]:
            return _text(max_size, min_size, plain)

        self.required = text(min_size=1)
        self.small = st.lists(text(), max_size=3).map(tuple)
        self.decisions = st.lists(
            st.builds(
                cmp.Decision, what=text(), why=text(), consequences=text() if v2 else st.just(""), locked=st.booleans()
            ),
            max_size=3,
        ).map(tuple)
        self.attempts = st.lists(
            st.builds(
                cmp.Attempt,
                tried=text(),
                outcome=st.sampled_from(["succeeded", "failed", "partial"]),
                learned=text(),
                confidence=_CONFIDENCE if v2 else st.just(""),
            ),
            max_size=3,
        ).map(tuple)
        self.methods = st.lists(
            st.builds(cmp.Method, name=_SLUG, when_applicable=text(), how=text(48)), max_size=2
        ).map(tuple)
        self.project = st.none() | st.builds(cmp.Project, name=text(), ref=text())
        self.provenance = st.none() | st.builds(
            cmp.Provenance,
            author_model=text(),
            author_human=text(),
            source_hash=st.just("") | _SOURCE_HASH,
            confidence=_CONFIDENCE,
        )


_MEMBERS = {(v2, plain): _Members(v2, plain) for v2 in (False, True) for plain in (False, True)}
_PARENT_ID = st.just("") | _ID
_TAGS = st.lists(_SLUG, max_size=4).map(tuple)


@st.composite
def packets(draw: st.DrawFn, version: str | None = None, plain: bool = False) -> cmp.Packet:
    """Valid packets; ``plain`` ones have no string that JSON must escape."""
    version = version or draw(st.sampled_from(["0.1", "0.2"]))
    v2 = version == "0.2"
    members = _MEMBERS[v2, plain]
    return cmp.Packet(
        ltm_version=version,
        id=draw(_ID),
        created_at=draw(_TIMES),
        goal=draw(members.required),
        next_step=draw(members.required),
        parent_id=draw(_PARENT_ID) if v2 else "",
        project=draw(members.project),
        success_criteria=draw(members.small) if v2 else (),
        constraints=draw(members.small),
        decisions=draw(members.decisions),
        methods=draw(members.methods) if v2 else (),
        attempts=draw(members.attempts),
        open_questions=draw(members.small),
        tags=draw(_TAGS),
        provenance=draw(members.provenance),
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
