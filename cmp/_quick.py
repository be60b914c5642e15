"""The quick path: a conforming packet written without a ``\\u`` escape, read in one C
decode and one compiled walk, and, when it holds no backslash at all, scanned in one pass.

It only ever says "conforming, and here is the packet"; anything else goes the long way
(:func:`cmp._pipeline.check_long`), which alone writes findings. So no verdict depends on
this module; the tests hold the two ways to identical reports and bytes.

It rests on these facts about JSON text, stated here once:

1. **Taking out every escape (a backslash and the byte after it) leaves exactly the
   quotes that open or close strings.** So the strings (member names and string values)
   number half of those quotes. The C decoder keeps the last of two duplicate members
   silently; a shortfall in the compiled builder's count of strings means one was
   dropped, and the long way reports it. (:func:`parse_counted`, checked in :func:`read`.)
2. **Without a ``\\u`` escape, nothing the long way refuses for its escapes is there.**
   Only ``\\u`` writes a lone surrogate (clause 2.7); every other escape stands for a
   quote, a backslash, a slash or a control character, which no conforming member name
   or ``created_at`` holds (clause 7.3).
3. **In a text with no backslash, if no redaction pattern matches the text, none
   matches a scanned field.** Each string sits in the text verbatim between quotes; a
   quote, like a field's edge, is not a word character, so every ``\\b`` a pattern needs
   at a field's edge it finds in the text too; and no pattern is anchored (asserted as
   each table loads, :mod:`cmp._redaction._rules`). (:func:`read` skips the field scan.)
4. **A text without a ``\\u`` escape that the C decoder reads to an object holding
   every string (fact 1), no number but finite floats and integers within 2**53 either
   way, and no container deeper than a packet's schema nests, is one the long way's
   intake** (:func:`cmp._intake.parse_packet`) **reads to an equal object, refusing
   nothing.** Beyond the decoder's syntax errors the intake refuses only a byte order
   mark, UTF-16 or UTF-32 (never read as an object), NaN, Infinity and numbers no finite
   double holds, a duplicate member, a lone surrogate (fact 2), nesting past MAX_DEPTH
   and a top level that is no object. (:func:`as_the_intake_reads`: a packet the quick way
   refuses is not decoded twice, keeping the invalid packet's check within its floor,
   10x json.loads: docs/performance.md.)
5. **In a text with no backslash, no string holds a quote, a backslash or a control
   character**, since JSON text writes each of them in a string only as an escape. A
   packet read from one is marked ``escape_free`` (:class:`cmp.model.Known`), and the
   canonical writer does not look for characters to escape (keeping the typical packet's
   check+dumps within its floor, 5x json.loads).
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import replace

from cmp import _intake, _validation
from cmp._canonical import growth_finding
from cmp._compiler import most_strings
from cmp._redaction._hit import Redaction
from cmp._redaction._rules import DEFAULT, RuleSet
from cmp.model import CONFORMING, Packet
from cmp.schema import SUPPORTED_VERSIONS, load_schema

# Text with more backslashes than this, and more than one in this many bytes, goes the long
# way: taking out thousands of escapes costs more than the long way's own decoder.
_ESCAPE_DENSITY = 64


# A JSON escape: a backslash and the byte after it (fact 1); an escaped backslash with a
# u after it, if one follows.
@functools.cache
def _escape() -> re.Pattern[bytes]:
    return re.compile(rb"\\(?:\\u|.)", re.DOTALL)  # on first use: a packet without escapes needs none


def _most_strings() -> float:
    """The most strings a conforming packet of any version holds: a text with more cannot
    conform, and goes the long way without being decoded here first."""
    found = [most_strings(load_schema(version)) for version in SUPPORTED_VERSIONS]
    return math.inf if None in found else max(count for count in found if count is not None)


_MOST_STRINGS = _most_strings()


def parse_counted(raw: bytes) -> tuple[dict[str, object], int] | None:
    """(object, strings) for JSON text without ``\\u`` whose top level is an object, else None.
    ``strings`` is half the quotes left when the escapes are taken out (fact 1). Numbers are read as
    :func:`json.loads` reads them: no schema admits one, so the builder refuses every packet holding
    one (:func:`cmp._intake.decode_plain`)."""
    if len(raw) > _intake.MAX_PACKET_BYTES:
        return None
    first = raw.find(b"\\")  # what comes before it holds no escape: counting starts here
    quotes = raw.count(b'"')
    if first >= 0:
        if raw.count(b"\\", first) > max(_ESCAPE_DENSITY, len(raw) // _ESCAPE_DENSITY):
            return None
        # Fact 1, in C: a run of backslashes pairs up from its start, so searching from the
        # first backslash finds exactly the escapes; the quotes among them are the \\" ones.
        escapes = _escape().findall(raw, first)
        if b"\\u" in escapes or b"\\\\u" in escapes:
            return None  # fact 2 (an escaped backslash before a u, as in C:\\\\users, goes the long way too)
        quotes -= escapes.count(b'\\"')
    if quotes % 2 or quotes // 2 > _MOST_STRINGS:
        return None
    value = _intake.decode_plain(raw)
    if type(value) is not dict:
        return None
    return value, quotes // 2


def read(raw: bytes, rules: RuleSet = DEFAULT) -> tuple[str, Packet, tuple[Redaction, ...]] | None:
    """(version, packet, the findings of ``rules``) of a conforming packet read the quick
    way; None for anything else (the long way judges it)."""
    counted = parse_counted(raw)
    return None if counted is None else conforming(raw, counted, rules)


def conforming(
    raw: bytes, counted: tuple[dict[str, object], int], rules: RuleSet = DEFAULT
) -> tuple[str, Packet, tuple[Redaction, ...]] | None:
    """:func:`read` for ``raw`` once :func:`parse_counted` read it as ``counted``."""
    obj, strings = counted
    routed = _validation.route(obj)
    if type(routed) is not str or (built := _validation.builder(routed)(obj)) is None:
        return None
    if built[1] != strings:  # fact 1: a duplicate was dropped
        return None
    packet = built[0]
    if growth_finding(packet, len(raw)) is not None:
        return None  # the long way reports the size
    plain = b"\\" not in raw
    if plain:
        object.__setattr__(packet, "_known", _ESCAPE_FREE)  # fact 5
    return routed, packet, rules.redact_quick(raw, packet, plain)  # fact 3


_ESCAPE_FREE = replace(CONFORMING, escape_free=True)


# A value this many levels below the top object, or deeper, and the intake reads the text
# itself (a packet's schema nests three levels; MAX_DEPTH is far past it).
_DEEPEST = 8
# Integers no larger than this either way surely fit a finite double (fact 4).
_EXACT = 2**53
# The values an object may hold beyond two for each of its strings (a member is a name and
# a value). Past that (ten thousand [] in 32 KB) the intake reads the text, and the walk stops early.
_SPARE_VALUES = 64


def as_the_intake_reads(obj: dict[str, object], strings: int) -> bool:
    """Whether fact 4 holds for ``obj``, read by :func:`parse_counted` from a text of
    ``strings`` strings: every string there, no number the intake might refuse, no value
    _DEEPEST levels down. Then the long way reads ``obj`` instead of the text again."""
    counted = 0
    level: list[object] = [obj]
    values = 2 * strings + _SPARE_VALUES
    for _ in range(_DEEPEST):
        values -= len(level)
        if values < 0:
            return False
        below: list[object] = []
        for value in level:
            if type(value) is dict:
                counted += len(value)
                below += value.values()
            elif type(value) is list:
                below += value
            elif type(value) is str:
                counted += 1
            elif type(value) is int:
                if not -_EXACT <= value <= _EXACT:
                    return False  # the intake says whether a double holds it
            elif type(value) is float:
                if not math.isfinite(value):
                    return False  # NaN, Infinity or 1e999: the intake refuses it
        if not below:
            return counted == strings
        level = below
    return False
