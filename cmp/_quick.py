"""The quick path: a conforming packet written without a ``\\u`` escape, read in one C
decode and one compiled walk, scanned in one pass, and, when it holds no backslash at
all, written with no escaping pass.

Most writers escape nothing in ordinary text, or only the odd backslash, quote or line
break, so this is the common case. It only ever says "conforming, and here is the
packet": anything else (a ``\\u`` escape, a dropped duplicate, a schema error, a
canonical form too large) goes the long way (:func:`cmp._pipeline.check_long`), which
alone writes findings; a text the long way's intake would read to the object decoded
here, refusing nothing, is handed over as that object (fact 5). So no verdict depends
on this module; the tests hold the two ways to identical reports and bytes over every
vector and over generated, re-rendered and mutated packets.

It rests on five facts about JSON text, stated here once:

1. **Taking out every escape (a backslash and the byte after it) leaves exactly the
   quotes that open or close strings.** So the strings in the document (member names
   and string values) number half of those quotes. The C decoder keeps the last of two
   duplicate members silently; the compiled builder counts the strings it met, and a
   shortfall means a member was dropped: the long way reports the duplicate.
   (:func:`parse_counted`, the count checked in :func:`read`.)
2. **Without a ``\\u`` escape, nothing the long way refuses for its escapes is there.**
   Only ``\\u`` writes a lone surrogate (clause 2.7); every other escape stands for a
   quote, a backslash, a slash or a control character, and no conforming member name or
   ``created_at`` holds one, so no member that conforms was written with an escape
   (clause 7.3).
3. **In a text with no backslash, if no redaction pattern matches the text, none
   matches a scanned field.** Each string sits in the text verbatim between quotes; a
   quote, like the edge of a field, is not a word character, so every ``\\b`` a pattern
   needs at a field's edge it finds in the text too; and no pattern is anchored (``^``,
   ``$``, ``\\A``, ``\\z``), so none needs a field's start or end. The last condition is
   asserted for each pattern table when it loads (:mod:`cmp._redaction._rules`).
   (:func:`read` skips the scan of the fields; with a backslash, escapes may
   hide a match, and the fields are scanned.)
4. **A string holds a quote, a backslash or a control character only where an escape
   wrote it**, since JSON text cannot hold one in a string as it is. So the characters
   the canonical writer must escape are among those the text's escapes write: in a text
   with no backslash, none (it need not escape the packet's strings, only rewrite Go's
   extra characters ``<``, ``>``, ``&``, U+2028, U+2029); in ``C:\\Users``, only the
   backslash. The packet knows them as ``escaped`` (:class:`cmp.model.Known`), which
   :mod:`cmp._canonical` reads.
5. **A text without a ``\\u`` escape that the C decoder reads to an object holding
   every string (fact 1: no duplicate dropped), no number but finite floats and
   integers within 2**53 either way, and no container deeper than a packet's schema
   nests, is one the long way's intake** (:func:`cmp._intake.parse_packet`) **reads to
   an equal object, refusing nothing.** What the intake refuses beyond the C decoder's
   syntax errors is a byte order mark, UTF-16 or UTF-32 (none of which the decoder
   reads as an object), NaN, Infinity and a number no finite double holds (both read
   numbers with float() and int(); these are finite), a duplicate member (none), a
   lone surrogate (only ``\\u`` writes one: fact 2), nesting past MAX_DEPTH (far
   deeper) and a top level that is no object. (:func:`read` hands such a text over
   decoded; the tests hold it to the intake's answer.)
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import replace

from cmp import _intake, _validation
from cmp._canonical import growth_finding
from cmp._compiler import most_strings
from cmp._redaction._hit import Redaction
from cmp._redaction._rules import DEFAULT, RuleSet
from cmp.model import CONFORMING, Known, Packet
from cmp.schema import SUPPORTED_VERSIONS, load_schema

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# What each escape the quick path reads writes (every JSON escape but \u, fact 2), said
# by JSON itself: the characters a packet's strings may hold that need escaping (fact 4).
_WRITES = {
    escape: json.loads(b'"' + escape + b'"')
    for escape in (b'\\"', b"\\\\", b"\\/", b"\\b", b"\\f", b"\\n", b"\\r", b"\\t")
}
# The facts a packet read here carries, by the characters escaped (at most 2**8 sets):
# each made once, not per packet.
_KNOWN: dict[str, Known] = {}

# Text with more backslashes than this, and more than one in this many bytes, goes the
# long way: taking out thousands of escapes to count the strings costs more than the
# long way's own decoder (benchmarks/run.py, near-miss: 6,000 backslashes in 32 KB).
_ESCAPE_DENSITY = 64


# A JSON escape: a backslash and the byte after it (fact 1); an escaped backslash with a
# u after it, if one follows.
@functools.cache
def _escape() -> re.Pattern[bytes]:
    return re.compile(rb"\\(?:\\u|.)", re.DOTALL)  # on first use: a packet without escapes needs none


def _most_strings() -> float:
    """The most strings a conforming packet of any version holds (every array of the
    schemas has maxItems, every object names its members): a text with more, such as
    thousands of unknown or repeated members, cannot conform, and goes the long way
    without being decoded here first."""
    found = [most_strings(load_schema(version)) for version in SUPPORTED_VERSIONS]
    return math.inf if None in found else max(count for count in found if count is not None)


_MOST_STRINGS = _most_strings()


def parse_counted(raw: bytes) -> tuple[dict[str, object], int] | None:
    """(object, strings) for JSON text without ``\\u`` whose top level is an object, else None.

    ``strings`` is half the quotes left when the escapes are taken out (fact 1). None
    also for anything the C decoder will not take; the long way says why. Numbers,
    ``NaN`` and ``Infinity`` are read as :func:`json.loads` reads them, refused by no
    hook: no schema admits a number, so the builder refuses every packet holding one
    and the long way refuses what it must (:func:`cmp._intake.decode_plain`).
    """
    read = _read(raw)
    return None if read is None else (read[0], read[1])


def _read(raw: bytes) -> tuple[dict[str, object], int, str] | None:
    """:func:`parse_counted`'s answer and the characters the text's escapes write (fact 4)."""
    if len(raw) > _intake.MAX_PACKET_BYTES:
        return None
    first = raw.find(b"\\")  # what comes before it holds no escape: counting starts here
    if first >= 0:
        if raw.count(b"\\", first) > max(_ESCAPE_DENSITY, len(raw) // _ESCAPE_DENSITY):
            return None
        # Fact 1, in C: in JSON text a run of backslashes pairs up from its start, so a
        # search from the first backslash for a backslash and the byte after it finds
        # exactly the escapes; of those, the quotes are the \\" ones. An escaped
        # backslash is taken with a u after it, if one follows.
        escapes = _escape().findall(raw, first)
        if b"\\u" in escapes or b"\\\\u" in escapes:
            return None  # fact 2 (an escaped backslash before a u, as in C:\\\\users, goes the long way too)
        quotes = raw.count(b'"') - escapes.count(b'\\"')
    else:
        escapes = []
        quotes = raw.count(b'"')
    if quotes % 2 or quotes // 2 > _MOST_STRINGS:
        return None
    value = _intake.decode_plain(raw)
    if type(value) is not dict:
        return None
    # The decoder took the text, so every escape is one of JSON's: _WRITES knows it.
    escaped = "".join(sorted({_WRITES[escape] for escape in escapes})) if escapes else ""
    return value, quotes // 2, escaped


def read(raw: bytes, rules: RuleSet = DEFAULT) -> tuple[str, Packet, tuple[Redaction, ...]] | dict[str, Any] | None:
    """(version, packet, the findings of ``rules``) of a conforming packet read the quick
    way; for a text the long way's intake reads to the object decoded here, refusing
    nothing (fact 5), that object; else None."""
    decoded = _read(raw)
    if decoded is None:
        return None
    obj, strings, escaped = decoded
    routed = _validation.route(obj)
    if type(routed) is not str or (built := _validation.builder(routed)(obj)) is None:  # refused
        return obj if _as_the_intake_reads(obj, strings) else None
    if built[1] != strings:  # fact 1: a duplicate was dropped
        return None
    packet = built[0]
    known = _KNOWN.get(escaped)
    if known is None:
        known = _KNOWN.setdefault(escaped, replace(CONFORMING, escaped=escaped))
    object.__setattr__(packet, "_known", known)  # fact 4
    plain = not escaped  # every backslash starts an escape, and every escape writes a character
    if growth_finding(packet, len(raw)) is not None:
        return None  # the long way reports the size
    return routed, packet, rules.redact_quick(raw, packet, plain)  # fact 3, for each rule set


# A value this many levels below the top object, or deeper, and the intake reads the text
# itself (fact 5 needs no more: a packet's schema nests three levels, and the intake's
# own limit, MAX_DEPTH, is far past it).
_DEEPEST = 8
# Integers no larger than this either way surely fit a finite double (fact 5).
_EXACT = 2**53
# The values (strings, numbers, literals, containers) a handed-over object holds beyond
# two for each of its strings: a packet's members are each a name and a value.
_SPARE_VALUES = 64


def _as_the_intake_reads(obj: dict[str, Any], strings: int) -> bool:
    """Whether fact 5 holds for ``obj``, decoded from a text of ``strings`` strings: every
    string there, no number the intake might refuse, no value _DEEPEST levels down."""
    counted = 0
    level: list[Any] = [obj]
    # Values past this many are no packet a writer meant (ten thousand [] in 32 KB): the
    # intake reads such a text itself, and the walk stops before it costs what that does.
    values = 2 * strings + _SPARE_VALUES
    for _ in range(_DEEPEST):
        values -= len(level)
        if values < 0:
            return False
        below: list[Any] = []
        for value in level:
            kind = type(value)
            if kind is dict:
                counted += len(value)
                below += value.values()
            elif kind is list:
                below += value
            elif kind is str:
                counted += 1
            elif kind is int:
                if not -_EXACT <= value <= _EXACT:
                    return False  # the intake says whether a double holds it
            elif kind is float:
                if not math.isfinite(value):
                    return False  # NaN, Infinity or 1e999: the intake refuses it
        if not below:
            return counted == strings
        level = below
    return False
