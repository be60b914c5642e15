#!/usr/bin/env python3
"""Writes the conformance vector files of conformance-vectors/.

The committed JSON files are the contract; this script is how they were made, and a
test fails when the two disagree. Expectations are stated here from the numbered
clauses of docs/specification.md, never computed by the `cmp` library: error codes,
paths and keywords and redaction strings are written out by hand, and canonical bytes
come from the small, separate encoder below. Standard library only.

Usage: python tools/generate_vectors.py [--check]
"""

from __future__ import annotations

import base64
import json
import re
import sys
from pathlib import Path
from typing import Any

# The vector folder: the wheel ships it as cmp.vectors, data only; this script stays behind.
VECTORS = Path(__file__).resolve().parent.parent / "conformance-vectors"
MAX = 32768
ULID = "01J9X8K2QZ7N4M0WXYZV3R8ABC"
PARENT = "01J9X3K2QZ7N4M0WXYZV3R8Z01"
AWS = "AKIAIOSFODNN7EXAMPLE"

# ---------------------------------------------------------------- packets


def minimal(version: str = "0.2") -> dict[str, Any]:
    return {
        "ltm_version": version,
        "id": ULID,
        "created_at": "2026-04-21T10:30:00Z",
        "goal": "Get GPU video encoding working for replay captures.",
        "next_step": "Bring up the encode queue on Fedora.",
    }


def full(version: str = "0.2") -> dict[str, Any]:
    obj = minimal(version)
    obj["project"] = {"name": "replay", "ref": "github.com/example/replay"}
    obj["constraints"] = ["Linux only."]
    obj["decisions"] = [{"what": "Drop macOS.", "why": "No encode queue.", "locked": True}]
    obj["attempts"] = [{"tried": "MoltenVK.", "outcome": "failed", "learned": "Extension absent."}]
    obj["open_questions"] = ["AMD fallback?"]
    obj["tags"] = ["gpu", "video-encoding"]
    obj["provenance"] = {
        "author_model": "model-1",
        "author_human": "someone",
        "source_hash": "sha256:" + "0" * 64,
        "confidence": "high",
    }
    if version == "0.2":
        obj["parent_id"] = PARENT
        obj["success_criteria"] = ["A clip renders in under 2s."]
        obj["decisions"][0]["consequences"] = "Mac cannot test this."
        obj["methods"] = [{"name": "fedora-mesa", "when_applicable": "Need Vulkan video.", "how": "dnf install mesa"}]
        obj["attempts"][0]["confidence"] = "high"
    return obj


def keys_of(path: str) -> list[str | int]:
    out: list[str | int] = []
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        out.append(int(part[1:-1]) if part.startswith("[") else part)
    return out


def with_value(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = json.loads(json.dumps(obj))
    keys = keys_of(path)
    node: Any = out
    for key in keys[:-1]:
        node = node[key]
    node[keys[-1]] = value
    return out


def without(obj: dict[str, Any], path: str) -> dict[str, Any]:
    out = json.loads(json.dumps(obj))
    keys = keys_of(path)
    node: Any = out
    for key in keys[:-1]:
        node = node[key]
    del node[keys[-1]]
    return out


def text_of(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


# ---------------------------------------------------------------- the separate canonical encoder

TOP = [
    "ltm_version",
    "id",
    "parent_id",
    "created_at",
    "project",
    "goal",
    "success_criteria",
    "constraints",
    "decisions",
    "methods",
    "attempts",
    "open_questions",
    "next_step",
    "tags",
    "provenance",
]
MEMBERS = {
    "project": (["name", "ref"], set()),
    "provenance": (["author_model", "author_human", "source_hash", "confidence"], set()),
    "decisions": (["what", "why", "consequences", "locked"], {"what", "why"}),
    "methods": (["name", "when_applicable", "how"], {"name", "when_applicable", "how"}),
    "attempts": (["tried", "outcome", "learned", "confidence"], {"tried", "outcome"}),
}
TIME = re.compile(r"(.{19})(?:\.([0-9]+))?(Z|[+-][0-9]{2}:[0-9]{2})")


def canonical_time(text: str) -> str:
    match = TIME.fullmatch(text)
    assert match, text
    fraction = (match.group(2) or "").rstrip("0")
    offset = "Z" if match.group(3) in ("+00:00", "-00:00") else match.group(3)
    return match.group(1) + ("." + fraction if fraction else "") + offset


def _members(kind: str, item: dict[str, Any]) -> dict[str, Any]:
    order, always = MEMBERS[kind]
    return {m: item[m] for m in order if m in item and (m in always or item[m] not in ("", False))}


def canonical(obj: dict[str, Any]) -> str:
    out: dict[str, Any] = {}
    for key in TOP:
        if key not in obj:
            continue
        value = obj[key]
        if key == "created_at":
            out[key] = canonical_time(value)
        elif key in ("project", "provenance"):
            out[key] = _members(key, value)
        elif key in MEMBERS:
            if value:
                out[key] = [_members(key, item) for item in value]
        elif isinstance(value, list):
            if value:
                out[key] = value
        elif key == "parent_id":
            if value:
                out[key] = value
        else:
            out[key] = value
    text = json.dumps(out, indent=2, ensure_ascii=False)
    for char, escape in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, escape)
    return text


# ---------------------------------------------------------------- vector builders

FILES: dict[str, list[dict[str, Any]]] = {}


def _input(raw: bytes | str) -> dict[str, str]:
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    try:
        return {"input": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"input_base64": base64.b64encode(data).decode("ascii")}


def _add(area: str, vid: str, description: str, clause: str, raw: bytes | str, expect: dict[str, Any]) -> None:
    vector = {"id": f"{area}/{vid}", "description": description, "clause": clause, **_input(raw), "expect": expect}
    FILES.setdefault(area, []).append(vector)


def accept(
    area: str,
    vid: str,
    description: str,
    clause: str,
    packet: dict[str, Any] | str,
    redactions: list[str] | None = None,
) -> None:
    raw = packet if isinstance(packet, str) else text_of(packet)
    obj = json.loads(raw) if isinstance(packet, str) else packet
    _add(
        area,
        vid,
        description,
        clause,
        raw,
        {"conforming": True, "redactions": redactions or [], "canonical": canonical(obj)},
    )


Error = tuple[str, str, str | None]


def _findings(errors: list[Error]) -> list[dict[str, str | None]]:
    return [{"code": c, "path": p, "keyword": k} for c, p, k in errors]


def refuse(
    area: str,
    vid: str,
    description: str,
    clause: str,
    raw: bytes | str | dict[str, Any],
    errors: list[Error],
    optional: list[Error] | None = None,
    choices: list[list[Error]] | None = None,
) -> None:
    """A refused packet: every one of ``errors`` MUST be reported; each of ``optional``
    MAY be (at most once); of each group in ``choices`` at least one MUST be and the
    others MAY be (each at most once); nothing else may be (clause 4.6)."""
    if isinstance(raw, dict):
        raw = text_of(raw)
    optional, choices = optional or [], choices or []
    assert errors or choices, f"{vid}: a refusal needs a finding that must be reported"
    places = [*set(errors), *optional, *(e for group in choices for e in group)]
    assert len(places) == len(set(places)), f"{vid}: a finding is listed in two places"
    assert all(len(group) >= 2 for group in choices), f"{vid}: a choice of one is a required finding"
    # Paths compare exactly; a reader may shorten paths past 200 characters for display.
    assert all(len(path) <= 200 for _, path, _ in places), f"{vid}: a path too long to compare"
    expect: dict[str, Any] = {"conforming": False, "errors": _findings(errors)}
    if optional:
        expect["optional_errors"] = _findings(optional)
    if choices:
        expect["error_choices"] = [_findings(group) for group in choices]
    _add(area, vid, description, clause, raw, expect)


def schema_error(path: str, keyword: str) -> list[Error]:
    return [("schema", path, keyword)]


JSON_ERR: list[Error] = [("json", "$", None)]


# Member names that are not plain identifiers, each with its step in a path as clause 1.4
# writes it, by hand: `.name` for ^[A-Za-z_][A-Za-z0-9_]*$ up to 32 characters, else
# ['name'] with \ and ' backslashed, U+0000-U+001F, U+007F-U+009F, U+2028 and U+2029
# as \u and four lowercase hex digits, and the name cut after 32 code points with an
# ellipsis inside the quotes. They appear in paths of extra members and duplicates.
ODD_NAMES: list[tuple[str, str, str]] = [
    ("space", "a b", "['a b']"),
    ("apostrophe", "it's", r"['it\'s']"),
    ("double-quote", 'say "hi"', """['say "hi"']"""),
    ("backslash", "a\\b", r"['a\\b']"),
    ("backslash-u", "\\u0041", r"['\\u0041']"),
    ("control", "a\x01b", r"['a\u0001b']"),
    ("nul", "\x00", r"['\u0000']"),
    ("tab", "a\tb", r"['a\u0009b']"),
    ("newline", "a\nb", r"['a\u000ab']"),
    ("escape", "\x1b[31m", r"['\u001b[31m']"),
    ("del", "a\x7fb", r"['a\u007fb']"),
    ("next-line", "a\x85b", r"['a\u0085b']"),
    ("c1-last", "a\x9fb", r"['a\u009fb']"),
    ("no-break-space", "a\xa0b", "['a\xa0b']"),
    ("line-separator", "a\u2028b", r"['a\u2028b']"),
    ("paragraph-separator", "a\u2029b", r"['a\u2029b']"),
    ("non-ascii-letter", "é", "['é']"),
    ("non-ascii-identifier", "café", "['café']"),
    ("cjk", "漢字", "['漢字']"),
    ("emoji", "😀", "['😀']"),
    ("digit-first", "1st", "['1st']"),
    ("empty", "", "['']"),
    ("hyphen", "x-extra", "['x-extra']"),
    ("dot", "a.b", "['a.b']"),
    ("brackets", "a[0]", "['a[0]']"),
    ("dollar", "$", "['$']"),
    ("underscore-first", "_x", "._x"),
    ("32-chars", "n" * 32, "." + "n" * 32),
    ("33-chars", "n" * 33, "['" + "n" * 32 + "…']"),
    ("33-emoji", "😀" * 33, "['" + "😀" * 32 + "…']"),
    ("40-apostrophes", "'" * 40, "['" + "\\'" * 32 + "…']"),
    ("cut-before-escape", "n" * 32 + "\n", "['" + "n" * 32 + "…']"),
]


# ---------------------------------------------------------------- intake


def intake() -> None:
    a = "intake"
    base = text_of(minimal())
    accept(
        a,
        "size-32768",
        "exactly 32,768 bytes with padding whitespace passes",
        "2.1",
        base + " " * (MAX - len(base.encode())),
    )
    refuse(
        a,
        "size-32769",
        "32,769 bytes is refused before parsing",
        "2.1",
        base + " " * (MAX + 1 - len(base.encode())),
        [("size", "$", None)],
    )
    refuse(
        a,
        "size-32769-newlines",
        "padding newlines count too",
        "2.1",
        base + "\n" * (MAX + 1 - len(base.encode())),
        [("size", "$", None)],
    )
    refuse(
        a,
        "size-before-json",
        "an over-long non-JSON body is a size error, not a json error",
        "1.2, 2.1",
        "x" * (MAX + 1),
        [("size", "$", None)],
    )
    refuse(
        a,
        "size-counts-bytes",
        "size counts UTF-8 bytes, not characters",
        "2.1",
        text_of(with_value(minimal(), "goal", "€" * 11000)),
        [("size", "$", None)],
    )

    body = base.encode()
    encodings = {
        "bom-utf8": b"\xef\xbb\xbf" + body,
        "utf16le-bom": base.encode("utf-16"),
        "utf16le": base.encode("utf-16-le"),
        "utf16be": base.encode("utf-16-be"),
        "utf32le-bom": base.encode("utf-32"),
        "utf32be": base.encode("utf-32-be"),
        "invalid-ff": body.replace(b"GPU", b"GP\xff"),
        "invalid-fe": body.replace(b"GPU", b"\xfeGPU"),
        "invalid-truncated": body.replace(b"GPU", b"GP\xc3"),
        "invalid-lone-continuation": body.replace(b"GPU", b"G\x80U"),
        "invalid-overlong-slash": body.replace(b"GPU", b"\xc0\xafPU"),
        "invalid-encoded-surrogate": body.replace(b"GPU", b"\xed\xa0\x80U"),
        "invalid-above-10ffff": body.replace(b"GPU", b"\xf4\x90\x80\x80"),
        "invalid-in-key": body.replace(b'"goal"', b'"go\xffal"'),
    }
    for name, raw in encodings.items():
        refuse(
            a,
            name,
            "only UTF-8 without a byte order mark is accepted; nothing is replaced silently",
            "2.2",
            raw,
            JSON_ERR,
        )
    for name, escape in {
        "lone-high": "\\ud800",
        "lone-low": "\\udc00",
        "reversed-pair": "\\ude00\\ud83d",
        "high-then-text": "\\ud83dx",
        "high-at-end": "\\udbff",
    }.items():
        refuse(
            a,
            f"surrogate-{name}",
            "a lone surrogate escape is not a Unicode character",
            "2.7",
            base.replace("GPU", "GPU" + escape),
            JSON_ERR,
        )
    refuse(
        a,
        "surrogate-in-key",
        "a lone surrogate escape in a member name",
        "2.7",
        base[:-1] + ', "\\ud800": 1}',
        JSON_ERR,
    )
    accept(
        a,
        "surrogate-pair-escape",
        "an escaped surrogate pair is one astral character",
        "2.7",
        base.replace("GPU", "GPU \\ud83d\\ude00"),
    )
    accept(
        a,
        "escaped-backslash-u",
        "an escaped backslash before ud800 is plain text",
        "2.7",
        base.replace("GPU", "GPU \\\\ud800"),
    )

    for name, literal in {
        "nan": "NaN",
        "infinity": "Infinity",
        "neg-infinity": "-Infinity",
        "overflow": "1e400",
        "neg-overflow": "-1e400",
        "long-integer": "1" * 400,
        "huge-integer": "9" * 5000,
        "plus-sign": "+1",
        "hex": "0x10",
        "leading-dot": ".5",
        "trailing-dot": "1.",
        "leading-zero": "01",
        "bare-minus": "-",
    }.items():
        refuse(
            a,
            f"number-{name}",
            "numbers are RFC 8259 numbers that fit a finite double",
            "2.4",
            base[:-1] + f', "x": {literal}}}',
            JSON_ERR,
        )
    for name, literal in {
        "underflow": "1e-400",
        "big-but-finite": "123456789012345678901234567890",
        "negative-zero": "-0",
        "exponent": "0.5E+10",
    }.items():
        refuse(
            a,
            f"number-{name}",
            "a finite number parses, then fails the schema as an extra member",
            "2.4",
            base[:-1] + f', "x": {literal}}}',
            schema_error("$.x", "additionalProperties"),
        )

    for name, tail in {
        "word": " x",
        "brace": "}",
        "comma": ",",
        "object": " {}",
        "nul": "\x00",
        "comment": " /* c */",
        "second-packet": base,
    }.items():
        refuse(
            a,
            f"trailing-{name}",
            "trailing non-whitespace after the value is invalid",
            "2.3",
            base + tail,
            JSON_ERR,
        )
    for name, space in {"space": " ", "newline": "\n", "crlf": "\r\n", "tab": "\t", "mixed": " \n\t\r "}.items():
        accept(a, f"whitespace-{name}", "JSON whitespace around the value is fine", "2.3", space + base + space)
    for name, space in {
        "vtab": "\x0b",
        "formfeed": "\x0c",
        "nbsp": "\u00a0",
        "line-separator": "\u2028",
        "ideographic-space": "\u3000",
    }.items():
        refuse(
            a,
            f"non-json-whitespace-{name}",
            "only space, tab, CR and LF are JSON whitespace",
            "2.3",
            space + base,
            JSON_ERR,
        )
    malformed = {
        "empty": "",
        "blank": " ",
        "open-brace": "{",
        "trailing-comma-object": '{"a":1,}',
        "trailing-comma-array": '{"a":[1,]}',
        "single-quotes": "{'a': 1}",
        "missing-colon": '{"a" 1}',
        "bad-literal": '{"a": tru}',
        "control-in-string": '{"a": "x\x01y"}',
        "bad-escape": '{"a":"\\x"}',
        "unquoted-key": "{a: 1}",
        "line-comment": '{"a": 1} // c',
        "unterminated-string": '{"a": "x',
        "short-unicode-escape": '{"a": "\\u12"}',
        "uppercase-literal": '{"a": True}',
        "newline-in-string": '{"a": "x\ny"}',
        "missing-value": '{"a":}',
        "double-comma": '{"a":1,,"b":2}',
    }
    for name, text in malformed.items():
        refuse(a, f"malformed-{name}", "not JSON", "2.3", text, JSON_ERR)
    for name, text in {
        "array": "[]",
        "string": '"x"',
        "number": "1",
        "null": "null",
        "true": "true",
        "array-of-packet": "[" + base + "]",
    }.items():
        refuse(
            a,
            f"not-object-{name}",
            "the top-level value must be an object",
            "2.8",
            text,
            [("not-object", "$", None)],
        )

    def nested(depth: int) -> str:  # depth counts the top-level object
        return base[:-1] + ', "x": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"

    refuse(
        a,
        "depth-10000",
        "nesting of exactly 10,000 parses (then fails the schema)",
        "2.5",
        nested(10000),
        schema_error("$.x", "additionalProperties"),
    )
    refuse(a, "depth-10001", "nesting deeper than 10,000 is invalid JSON", "2.5", nested(10001), JSON_ERR)
    refuse(a, "depth-unclosed", "16,000 open brackets", "2.5", "[" * 16000, JSON_ERR)
    refuse(
        a,
        "depth-900",
        "900 levels: no recursion limit may fire",
        "2.5",
        nested(900),
        schema_error("$.x", "additionalProperties"),
    )

    refuse(
        a,
        "duplicate-top",
        "duplicate member names are refused (the reference keeps the last)",
        "2.6",
        base[:-1] + ', "goal": "again"}',
        [("duplicate-key", "$.goal", None)],
    )
    refuse(
        a,
        "duplicate-hides-secret",
        "a secret in an earlier duplicate would travel unscanned",
        "2.6",
        base.replace('"goal": "', f'"goal": "key {AWS}", "goal": "'),
        [("duplicate-key", "$.goal", None)],
    )
    refuse(
        a,
        "duplicate-same-value",
        "duplicates are refused even when the values agree",
        "2.6",
        base[:-1] + ', "ltm_version": "0.2"}',
        [("duplicate-key", "$.ltm_version", None)],
    )
    nested_dupes = text_of(full())[:-1] + ', "extra": 1}'
    nested_dupes = nested_dupes.replace('"locked": true', '"locked": true, "locked": false')
    nested_dupes = nested_dupes.replace('"name": "replay"', '"name": "replay", "name": "other"')
    refuse(
        a,
        "duplicate-nested",
        "duplicates inside nested objects are reported with their paths",
        "2.6",
        nested_dupes,
        [("duplicate-key", "$.decisions[0].locked", None), ("duplicate-key", "$.project.name", None)],
    )
    refuse(
        a,
        "duplicate-deep",
        "a duplicate far inside an extra member",
        "2.6",
        base[:-1] + ', "x": [[{"a": 1, "a": 2}]]}',
        [("duplicate-key", "$.x[0][0].a", None)],
    )
    for name, member, written in ODD_NAMES:
        key = json.dumps(member, ensure_ascii=False)
        refuse(
            a,
            f"duplicate-name-{name}",
            "a duplicate's path quotes a name that is not a plain identifier",
            "1.4, 2.6",
            base[:-1] + f", {key}: 1, {key}: 2}}",
            [("duplicate-key", "$" + written, None)],
        )
    refuse(
        a,
        "duplicate-name-nested",
        "an odd duplicated name inside an array inside an extra member",
        "1.4, 2.6",
        base[:-1] + ', "x-extra": [{"a b": 1, "a b": 2}]}',
        [("duplicate-key", "$['x-extra'][0]['a b']", None)],
    )


# ---------------------------------------------------------------- versioning


def versioning() -> None:
    a = "versioning"
    missing = [("version-missing", "$.ltm_version", None)]
    refuse(a, "absent", "ltm_version absent", "3.1", without(minimal(), "ltm_version"), missing)
    for name, value in {
        "null": None,
        "number": 0.2,
        "integer": 2,
        "true": True,
        "array": ["0.2"],
        "object": {"v": "0.2"},
        "empty": "",
    }.items():
        refuse(
            a,
            f"missing-{name}",
            "ltm_version not a non-empty string counts as missing",
            "3.1",
            with_value(minimal(), "ltm_version", value),
            missing,
        )
    unsupported = [("version-unsupported", "$.ltm_version", None)]
    for name, value in {
        "0.3": "0.3",
        "v-prefix": "v0.2",
        "patch": "0.2.0",
        "leading-space": " 0.2",
        "trailing-space": "0.2 ",
        "1.0": "1.0",
        "newline": "0.2\n",
        "leading-zero": "00.2",
        "0.10": "0.10",
        "major-only": "0",
        "fullwidth": "０.２",
        "arabic-digits": "٠.٢",
        "0.0": "0.0",
        "long": "9" * 300,
    }.items():
        refuse(
            a,
            f"unsupported-{name}",
            "versions are never trimmed or coerced",
            "3.2",
            with_value(minimal(), "ltm_version", value),
            unsupported,
        )
    refuse(
        a,
        "routing-before-schema",
        "an unsupported version hides schema errors",
        "1.2, 3.2, 3.3",
        with_value(with_value(minimal(), "ltm_version", "0.3"), "goal", 5),
        unsupported,
    )
    refuse(
        a,
        "missing-before-schema",
        "a missing version hides schema errors",
        "1.2, 3.1, 3.3",
        with_value(without(minimal(), "ltm_version"), "goal", 5),
        missing,
    )
    for version in ("0.1", "0.2"):
        accept(a, f"minimal-{version}", f"a minimal v{version} packet", "3.3", minimal(version))
        accept(a, f"full-{version}", f"every v{version} member once", "3.3", full(version))
    for path, value in {
        "parent_id": PARENT,
        "success_criteria": ["done"],
        "methods": [{"name": "m", "when_applicable": "w", "how": "h"}],
        "decisions[0].consequences": "c",
        "attempts[0].confidence": "low",
    }.items():
        refuse(
            a,
            f"v01-refuses-{path.replace('[0]', '')}",
            "a v0.1 packet is judged by v0.1 only",
            "3.3",
            with_value(full("0.1"), path, value),
            schema_error("$." + path, "additionalProperties"),
        )


# ---------------------------------------------------------------- schemas

BOTH = ("0.1", "0.2")
STRINGS = [
    ("id", 10, 64, BOTH),
    ("parent_id", 10, 64, ("0.2",)),
    ("project.name", 0, 128, BOTH),
    ("project.ref", 0, 256, BOTH),
    ("goal", 1, 1024, BOTH),
    ("next_step", 1, 1024, BOTH),
    ("success_criteria[0]", 0, 1024, ("0.2",)),
    ("constraints[0]", 0, 1024, BOTH),
    ("decisions[0].what", 0, 1024, BOTH),
    ("decisions[0].why", 0, 1024, BOTH),
    ("decisions[0].consequences", 0, 1024, ("0.2",)),
    ("methods[0].when_applicable", 0, 1024, ("0.2",)),
    ("methods[0].how", 0, 2048, ("0.2",)),
    ("attempts[0].tried", 0, 1024, BOTH),
    ("attempts[0].learned", 0, 1024, BOTH),
    ("open_questions[0]", 0, 1024, BOTH),
    ("provenance.author_model", 0, 128, BOTH),
    ("provenance.author_human", 0, 128, BOTH),
]
CHARS = {"ascii": "a", "latin": "é", "euro": "€", "astral": "😀"}
ARRAYS = [
    ("success_criteria", 16, "ok", ("0.2",)),
    ("constraints", 32, "ok", BOTH),
    ("decisions", 64, {"what": "w", "why": "y"}, BOTH),
    ("methods", 32, {"name": "m", "when_applicable": "w", "how": "h"}, ("0.2",)),
    ("attempts", 64, {"tried": "t", "outcome": "failed"}, BOTH),
    ("open_questions", 32, "q", BOTH),
    ("tags", 16, None, BOTH),
]
ENUMS = [
    ("attempts[0].outcome", ("succeeded", "failed", "partial"), BOTH),
    ("attempts[0].confidence", ("low", "medium", "high"), ("0.2",)),
    ("provenance.confidence", ("low", "medium", "high"), BOTH),
]
TAGS_OK = {
    "one-letter": "a",
    "digit": "0",
    "hyphenated": "video-encoding",
    "trailing-hyphen": "a-",
    "32-chars": "a" * 32,
}
TAGS_BAD = {
    "empty": "",
    "leading-hyphen": "-a",
    "uppercase": "A",
    "trailing-newline": "gpu\n",
    "trailing-space": "gpu ",
    "33-chars": "a" * 33,
    "underscore": "a_b",
    "non-ascii": "é",
    "arabic-digit": "٣",
    "dot": "a.b",
}
NAMES_OK = {"one-letter": "a", "hyphenated": "fedora-mesa", "128-chars": "a" * 128}
NAMES_BAD = {
    "empty": "",
    "leading-hyphen": "-a",
    "uppercase": "Fedora",
    "space": "a b",
    "trailing-newline": "a\n",
    "underscore": "a_b",
}
HASHES_BAD = {
    "empty": "",
    "63-hex": "sha256:" + "a" * 63,
    "65-hex": "sha256:" + "a" * 65,
    "uppercase-prefix": "SHA256:" + "a" * 64,
    "uppercase-hex": "sha256:" + "A" * 64,
    "trailing-newline": "sha256:" + "a" * 64 + "\n",
    "sha1": "sha1:" + "a" * 40,
}
REQUIRED = [
    ("id", BOTH),
    ("created_at", BOTH),
    ("goal", BOTH),
    ("next_step", BOTH),
    ("decisions[0].what", BOTH),
    ("decisions[0].why", BOTH),
    ("methods[0].name", ("0.2",)),
    ("methods[0].when_applicable", ("0.2",)),
    ("methods[0].how", ("0.2",)),
    ("attempts[0].tried", BOTH),
    ("attempts[0].outcome", BOTH),
]
SITES = ["", "project.", "decisions[0].", "methods[0].", "attempts[0].", "provenance."]
MEMBER_PATHS = [
    "id",
    "created_at",
    "goal",
    "next_step",
    "parent_id",
    "project",
    "project.name",
    "project.ref",
    "success_criteria",
    "success_criteria[0]",
    "constraints",
    "constraints[0]",
    "decisions",
    "decisions[0]",
    "decisions[0].what",
    "decisions[0].why",
    "decisions[0].consequences",
    "decisions[0].locked",
    "methods",
    "methods[0]",
    "methods[0].name",
    "methods[0].when_applicable",
    "methods[0].how",
    "attempts",
    "attempts[0]",
    "attempts[0].tried",
    "attempts[0].outcome",
    "attempts[0].learned",
    "attempts[0].confidence",
    "open_questions",
    "open_questions[0]",
    "tags",
    "tags[0]",
    "provenance",
    "provenance.author_model",
    "provenance.author_human",
    "provenance.source_hash",
    "provenance.confidence",
]
V02_ONLY = ("parent_id", "success_criteria", "methods", "decisions[0].consequences", "attempts[0].confidence")


def _v02_only(path: str) -> bool:
    return any(path == p or path.startswith(p + "[") or path.startswith(p + ".") for p in V02_ONLY)


def schema(version: str) -> None:
    a = f"schema-v{version}"
    clause = "5" if version == "0.1" else "6"
    for path, low, high, versions in STRINGS:
        if version not in versions:
            continue
        for cname, char in CHARS.items():
            accept(
                a,
                f"{path}-{high}-{cname}",
                f"{path} at its maximum, {high} code points",
                f"4.2, {clause}",
                with_value(full(version), path, char * high),
            )
            refuse(
                a,
                f"{path}-{high + 1}-{cname}",
                f"{path} one code point over its maximum",
                f"4.2, {clause}",
                with_value(full(version), path, char * (high + 1)),
                schema_error("$." + path, "maxLength"),
            )
        if low:
            accept(
                a,
                f"{path}-{low}",
                f"{path} at its minimum",
                f"4.2, {clause}",
                with_value(full(version), path, "x" * low),
            )
            refuse(
                a,
                f"{path}-{low - 1}",
                f"{path} under its minimum",
                f"4.2, {clause}",
                with_value(full(version), path, "x" * (low - 1)),
                schema_error("$." + path, "minLength"),
            )
        else:
            accept(
                a,
                f"{path}-empty",
                f"{path} may be empty (no minLength)",
                f"4.2, {clause}",
                with_value(full(version), path, ""),
            )
    for name, limit, item, versions in ARRAYS:
        if version not in versions:
            continue
        items = [f"t{i}" for i in range(limit + 1)] if item is None else [item] * (limit + 1)
        accept(
            a,
            f"{name}-{limit}-items",
            f"{name} at its maximum item count",
            f"4.2, {clause}",
            {**minimal(version), name: items[:limit]},
        )
        refuse(
            a,
            f"{name}-{limit + 1}-items",
            f"{name} over its maximum item count",
            f"4.2, {clause}",
            {**minimal(version), name: items},
            schema_error(f"$.{name}", "maxItems"),
        )
        accept(
            a,
            f"{name}-empty",
            f"{name} may be empty (left out when written)",
            f"4.2, {clause}",
            {**minimal(version), name: []},
        )
    for path, allowed, versions in ENUMS:
        if version not in versions:
            continue
        for value in allowed:
            accept(a, f"{path}-{value}", f"{path} {value}", clause, with_value(full(version), path, value))
        for name, value in {
            "empty": "",
            "uppercase": allowed[0].upper(),
            "padded": allowed[0] + " ",
            "other": "other",
            "newline": allowed[0] + "\n",
        }.items():
            refuse(
                a,
                f"{path}-bad-{name}",
                f"{path} outside its enum",
                clause,
                with_value(full(version), path, value),
                schema_error("$." + path, "enum"),
            )
    for name, value in TAGS_OK.items():
        accept(
            a,
            f"tag-ok-{name}",
            "tag pattern ^[a-z0-9][a-z0-9-]{0,31}$ with RE2 semantics",
            f"4.3, {clause}",
            with_value(minimal(version), "tags", [value]),
        )
    for name, value in TAGS_BAD.items():
        refuse(
            a,
            f"tag-bad-{name}",
            "tag pattern with RE2 semantics: $ is end of text",
            f"4.3, {clause}",
            with_value(minimal(version), "tags", [value]),
            schema_error("$.tags[0]", "pattern"),
        )
    if version == "0.2":
        for name, value in NAMES_OK.items():
            accept(
                a,
                f"method-name-ok-{name}",
                "method name pattern",
                f"4.3, {clause}",
                with_value(full(version), "methods[0].name", value),
            )
        for name, value in NAMES_BAD.items():
            refuse(
                a,
                f"method-name-bad-{name}",
                "method name pattern",
                f"4.3, {clause}",
                with_value(full(version), "methods[0].name", value),
                schema_error("$.methods[0].name", "pattern"),
            )
        # A string of the right type that breaks two keywords (clause 4.6, case 2): a
        # validator that stops at the first failing keyword reports one of them, and
        # which one depends on the order it checks them in. At least one is required.
        refuse(
            a,
            "method-name-129-chars",
            "method name over 128 breaks both maxLength and pattern: at least one is reported",
            f"4.3, {clause}",
            with_value(full(version), "methods[0].name", "a" * 129),
            [],
            choices=[[("schema", "$.methods[0].name", "maxLength"), ("schema", "$.methods[0].name", "pattern")]],
        )
    accept(
        a,
        "source-hash-ok",
        "source_hash sha256 with 64 lowercase hex digits",
        f"4.3, {clause}",
        with_value(full(version), "provenance.source_hash", "sha256:" + "0123456789abcdef" * 4),
    )
    for name, value in HASHES_BAD.items():
        refuse(
            a,
            f"source-hash-bad-{name}",
            "source_hash pattern",
            f"4.3, {clause}",
            with_value(full(version), "provenance.source_hash", value),
            schema_error("$.provenance.source_hash", "pattern"),
        )
    for path, versions in REQUIRED:
        if version in versions:
            refuse(
                a,
                f"required-{path}",
                f"{path} is required",
                f"4.1, {clause}",
                without(full(version), path),
                schema_error("$." + path, "required"),
            )
    for site in SITES:
        if version == "0.1" and site == "methods[0].":
            continue
        refuse(
            a,
            f"extra-member-{site or 'top'}",
            "no extra members in any object",
            f"4.1, {clause}",
            with_value(full(version), site + "x_extra", "v"),
            schema_error("$." + site + "x_extra", "additionalProperties"),
        )
    # A value of the wrong type (clause 4.6, case 1): `type` is required. `enum` applies
    # to values of every type, so null or a number in an enum member fails it too, but a
    # validator that stops at a value's first failing keyword never gets there: optional.
    # The other keywords (lengths, pattern, format, items, members) ignore a value of
    # another type, so they must not be reported.
    if version == "0.2":
        for name, member, written in ODD_NAMES:
            refuse(
                a,
                f"extra-member-name-{name}",
                "an extra member's path quotes a name that is not a plain identifier",
                "1.4, 4.1",
                {**full(version), member: "v"},
                schema_error("$" + written, "additionalProperties"),
            )
        for site, member, path in [
            ("project", "a b", "$.project['a b']"),
            ("decisions[0]", "it's", r"$.decisions[0]['it\'s']"),
            ("provenance", "é", "$.provenance['é']"),
        ]:
            refuse(
                a,
                f"extra-member-name-in-{site.replace('[0]', '')}",
                "an odd extra member name inside a nested object",
                "1.4, 4.1",
                with_value(full(version), f"{site}.{member}", "v"),
                schema_error(path, "additionalProperties"),
            )
    for path in MEMBER_PATHS:
        if version == "0.1" and _v02_only(path):
            continue
        enum = path.endswith(("outcome", "confidence"))
        refuse(
            a,
            f"null-{path}",
            "null is never a valid value" + ("; enum is optional beside type" if enum else ""),
            f"4.4, 4.6, {clause}",
            with_value(full(version), path, None),
            schema_error("$." + path, "type"),
            optional=schema_error("$." + path, "enum") if enum else None,
        )
    for name, (path, value) in {
        "goal-number": ("goal", 1),
        "goal-bool": ("goal", True),
        "tags-string": ("tags", "gpu"),
        "locked-string": ("decisions[0].locked", "true"),
        "project-array": ("project", []),
        "decision-string": ("decisions[0]", "x"),
        "constraint-number": ("constraints[0]", 1.5),
        "id-array": ("id", ["x"] * 10),
        "provenance-string": ("provenance", "p"),
        "locked-number": ("decisions[0].locked", 1),
        "outcome-number": ("attempts[0].outcome", 0),
    }.items():
        enum = path == "attempts[0].outcome"
        refuse(
            a,
            f"type-{name}",
            "members have one JSON type" + ("; enum is optional beside type" if enum else ""),
            f"4.4, 4.6, {clause}",
            with_value(full(version), path, value),
            schema_error("$." + path, "type"),
            optional=schema_error("$." + path, "enum") if enum else None,
        )
    accept(
        a,
        "locked-false",
        "locked false is valid and left out when written",
        clause,
        with_value(full(version), "decisions[0].locked", False),
    )
    accept(a, "optional-members-absent", "only the five required members", clause, minimal(version))
    refuse(
        a,
        "every-error-reported",
        "all violations are reported, not only the first",
        f"1.3, {clause}",
        with_value(with_value(with_value(minimal(version), "goal", ""), "tags", ["Bad"]), "x", 1),
        [
            ("schema", "$.goal", "minLength"),
            ("schema", "$.tags[0]", "pattern"),
            ("schema", "$.x", "additionalProperties"),
        ],
    )


# ---------------------------------------------------------------- created_at

TIMES_OK = [
    "2026-04-21T10:30:00Z",
    "2026-04-21T10:30:00.5Z",
    "2026-04-21T10:30:00.123456789Z",
    "2026-04-21T10:30:00+02:00",
    "2026-04-21T10:30:00-11:30",
    "2026-04-21T23:59:59+23:59",
    "2024-02-29T00:00:00Z",
    "2000-02-29T00:00:00Z",
    "0000-01-01T00:00:00Z",
    "9999-12-31T23:59:59.999999999-00:00",
    "2026-04-21T12:00:00.500+02:00",
    "2026-04-21T12:00:00.000Z",
    "2026-04-21T12:00:00+00:00",
    "2026-04-21T12:00:00.120-00:00",
    "2026-04-21T12:00:00.100000000Z",
]
TIMES_BAD = {
    "lowercase-t": "2026-04-21t10:30:00Z",
    "lowercase-z": "2026-04-21T10:30:00z",
    "space-separator": "2026-04-21 10:30:00Z",
    "no-offset": "2026-04-21T10:30:00",
    "trailing-newline": "2026-04-21T10:30:00Z\n",
    "leading-space": " 2026-04-21T10:30:00Z",
    "trailing-space": "2026-04-21T10:30:00Z ",
    "no-seconds": "2026-04-21T10:30Z",
    "empty-fraction": "2026-04-21T10:30:00.Z",
    "comma-fraction": "2026-04-21T10:30:00,5Z",
    "ten-digit-fraction": "2026-04-21T10:30:00.1234567890Z",
    "leap-second": "2026-04-21T10:30:60Z",
    "hour-24": "2026-04-21T24:00:00Z",
    "minute-60": "2026-04-21T10:60:00Z",
    "offset-24": "2026-04-21T10:30:00+24:00",
    "offset-minute-60": "2026-04-21T10:30:00+12:60",
    "offset-no-colon": "2026-04-21T10:30:00+0200",
    "feb-30": "2026-02-30T00:00:00Z",
    "feb-29-non-leap": "2023-02-29T00:00:00Z",
    "feb-29-1900": "1900-02-29T00:00:00Z",
    "month-13": "2026-13-01T00:00:00Z",
    "month-0": "2026-00-01T00:00:00Z",
    "day-0": "2026-04-00T00:00:00Z",
    "april-31": "2026-04-31T00:00:00Z",
    "two-digit-year": "26-04-21T10:30:00Z",
    "one-digit-month": "2026-4-21T10:30:00Z",
    "fullwidth-digit": "２026-04-21T10:30:00Z",
    "empty": "",
    "date-only": "2026-04-21",
    "unix-seconds": "1776767400",
    "one-digit-hour": "2026-04-21T1:00:00Z",
}
# created_at written with a JSON escape, as JSON text (clause 7.3: the reference reads
# the raw token without unescaping it, so each of these is refused though it decodes
# to a valid date-time).
TIMES_ESCAPED = {
    "start-u0032": "\\u0032026-04-21T12:00:00Z",
    "middle-u002e": "2026-04-21T12:00:00\\u002e5Z",
    "end-u005a": "2026-04-21T12:00:00\\u005a",
    "middle-u003a": "2026-04-21T12\\u003a00:00Z",
    "every-char": "".join(f"\\u{ord(c):04x}" for c in "2026-04-21T12:00:00Z"),
}


def created_at() -> None:
    a = "created-at"
    for value in TIMES_OK:
        accept(
            a,
            f"ok-{value}",
            "valid RFC 3339 the reference round-trips; written in canonical form",
            "7.1, 7.2, 9.5",
            with_value(minimal(), "created_at", value),
        )
    for name, value in TIMES_BAD.items():
        refuse(
            a,
            f"bad-{name}",
            "not the RFC 3339 form the reference accepts and round-trips",
            "7.1, 7.2",
            with_value(minimal(), "created_at", value),
            schema_error("$.created_at", "format"),
        )
    plain = text_of(minimal())
    assert '"2026-04-21T10:30:00Z"' in plain
    for name, escaped in TIMES_ESCAPED.items():
        refuse(
            a,
            f"bad-escaped-{name}",
            "created_at written with a JSON escape: the reference reads its raw text, unescaped",
            "7.3",
            plain.replace('"2026-04-21T10:30:00Z"', f'"{escaped}"'),
            schema_error("$.created_at", "format"),
        )
    accept(
        a,
        "ok-escaped-member-name",
        "an escape in the member name is fine: only the value is read raw",
        "7.3",
        plain.replace('"created_at"', '"created\\u005fat"'),
    )
    refuse(
        a,
        "not-a-string",
        "created_at must be a string",
        "4.4, 7.1",
        with_value(minimal(), "created_at", 1776767400),
        schema_error("$.created_at", "type"),
    )


# ---------------------------------------------------------------- redaction

GH = "ghp_" + "a1B2" * 9
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"
GOOGLE = "AIza" + "SyA-example_key0123456789abcdefghij"
STRIPE = "sk_live_" + "0123456789abcdefghij"
WHSEC = "whsec_" + "0123456789abcdef" * 2
SSH = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA"


def cut(text: str) -> str:
    return text if len(text) <= 32 else text[:32] + "…"


# (name, text in goal, expected finding strings)
REDACTION_TABLE: list[tuple[str, str, list[str]]] = [
    ("posix-dot", "./home/x", ["goal/abs-path: /home/x"]),
    ("posix-tilde", "~/home/x", ["goal/abs-path: /home/x"]),
    ("posix-after-non-ascii", "é/home/x", ["goal/abs-path: /home/x"]),
    ("posix-in-parens", "(/var/log)", ["goal/abs-path: /var/log"]),
    ("posix-users", "/Users/dennis/src", ["goal/abs-path: /Users/dennis/src"]),
    ("posix-first-only", "see /opt/app and /etc/hosts", ["goal/abs-path: /opt/app"]),
    ("posix-root", "/root/.ssh/id", ["goal/abs-path: /root/.ssh/id"]),
    ("posix-after-letter", "x/home/y", []),
    ("posix-after-underscore", "_/home/y", []),
    ("posix-after-digit", "1/home/y", []),
    ("posix-nothing-after", "/home/", []),
    ("posix-tmp", "/tmp/x", []),
    ("posix-uppercase", "/HOME/x", []),
    ("posix-homes", "/homes/x", []),
    ("posix-non-ascii-after", "/home/ö", []),
    ("windows-backslash", "C:\\Users\\me", ["goal/abs-path: C:\\Users\\me"]),
    ("windows-slash", "d:/work/repo", ["goal/abs-path: d:/work/repo"]),
    (
        "windows-run-with-spaces",
        "C:\\x\\y and /Users/q/r",
        ["goal/abs-path: /Users/q/r", "goal/abs-path: C:\\x\\y and /Users/q/r"],
    ),
    ("windows-after-hyphen-word", "project-C:later", []),
    ("windows-after-letter", "xC:\\x", []),
    ("windows-drive-only", "C:", []),
    ("windows-root-only", "C:\\", []),
    ("windows-no-separator", "C:x", []),
    ("windows-digit-drive", "1:/x", []),
    ("aws", AWS, [f"goal/aws-key: {AWS}"]),
    ("aws-asia", "ASIA" + "A" * 16, ["goal/aws-key: ASIA" + "A" * 16]),
    ("aws-acca", "ACCA" + "7" * 16, ["goal/aws-key: ACCA" + "7" * 16]),
    ("aws-15", "AKIA" + "A" * 15, []),
    ("aws-17", "AKIA" + "A" * 17, []),
    ("aws-lowercase", "AKIA" + "a" * 16, []),
    ("aws-after-non-ascii", "ÅAKIA" + "B" * 16, ["goal/aws-key: AKIA" + "B" * 16]),
    ("aws-after-letter", "xAKIA" + "B" * 16, []),
    ("aws-before-non-ascii", "AKIA" + "B" * 16 + "é", ["goal/aws-key: AKIA" + "B" * 16]),
    ("aws-before-underscore", "AKIA" + "B" * 16 + "_", []),
    ("aws-before-hyphen", "AKIA" + "B" * 16 + "-", ["goal/aws-key: AKIA" + "B" * 16]),
    ("aws-leftmost", "AKIA" + "Z" * 16 + " " + AWS, ["goal/aws-key: AKIA" + "Z" * 16]),
    ("gh", GH, [f"goal/gh-token: {cut(GH)}"]),
    ("gh-no-boundaries", "xx" + GH + "yy", [f"goal/gh-token: {cut(GH + 'yy')}"]),
    ("gh-35", "ghp_" + "a" * 35, []),
    ("gh-bad-kind", "ghx_" + "a" * 40, []),
    ("gh-oauth", "gho_" + "a" * 36, ["goal/gh-token: " + cut("gho_" + "a" * 36)]),
    ("jwt", JWT, [f"goal/jwt: {cut(JWT)}"]),
    ("jwt-short", "eyJa.b.c", ["goal/jwt: eyJa.b.c"]),
    ("jwt-empty-header", "eyJ.a.b", []),
    ("jwt-two-parts", "eyJa.b", []),
    ("jwt-empty-middle", "eyJa..c", []),
    ("key-rsa", "-----BEGIN RSA PRIVATE KEY-----", ["goal/private-key: -----BEGIN …"]),
    ("key-plain", "-----BEGIN PRIVATE KEY-----", ["goal/private-key: -----BEGIN …"]),
    ("key-openssh", "-----BEGIN OPENSSH PRIVATE KEY-----", ["goal/private-key: -----BEGIN …"]),
    ("key-ec", "-----BEGIN EC PRIVATE KEY-----", ["goal/private-key: -----BEGIN …"]),
    ("key-dsa", "-----BEGIN DSA PRIVATE KEY-----", []),
    ("key-public", "-----BEGIN PUBLIC KEY-----", []),
    ("key-four-dashes", "----BEGIN PRIVATE KEY-----", []),
    ("google", GOOGLE, [f"goal/google-api-key: {cut(GOOGLE)}"]),
    ("google-34", GOOGLE[:-1], []),
    ("google-36", GOOGLE + "x", []),
    ("google-then-hyphen", GOOGLE + "-", [f"goal/google-api-key: {cut(GOOGLE)}"]),
    ("google-after-letter", "x" + GOOGLE, []),
    ("slack", "xoxb-1234567890", ["goal/slack-token: xoxb-1234567890"]),
    ("slack-9", "xoxb-123456789", []),
    ("slack-bad-kind", "xoxq-1234567890", []),
    ("slack-after-letter", "axoxb-1234567890", []),
    ("slack-trailing-hyphen", "xoxp-1234567890-", ["goal/slack-token: xoxp-1234567890"]),
    ("stripe", STRIPE, [f"goal/stripe-key: {STRIPE}"]),
    ("stripe-restricted-test", "rk_test_" + "a" * 20, ["goal/stripe-key: rk_test_" + "a" * 20]),
    ("stripe-19", "sk_live_" + "a" * 19, []),
    ("stripe-publishable", "pk_live_" + "a" * 30, []),
    ("stripe-webhook", WHSEC, [f"goal/stripe-key: {cut(WHSEC)}"]),
    ("stripe-webhook-31", "whsec_" + "a" * 31, []),
    ("stripe-after-letter", "x" + STRIPE, []),
    ("stripe-before-underscore", STRIPE + "_", []),
    ("stripe-grows", STRIPE + "x7", [f"goal/stripe-key: {cut(STRIPE + 'x7')}"]),
    ("ssh", SSH, [f"goal/ssh-public-key: {cut(SSH)}"]),
    ("ssh-mixed-space", "ssh-rsa\t\n AAAA" + "B" * 20, ["goal/ssh-public-key: " + cut("ssh-rsa\t\n AAAA" + "B" * 20)]),
    ("ssh-19", "ssh-rsa AAAA" + "B" * 19, []),
    ("ssh-no-space", "ssh-rsaAAAA" + "B" * 30, []),
    ("ssh-vertical-tab", "ssh-rsa\vAAAA" + "B" * 30, []),
    ("ssh-bad-kind", "ssh-foo AAAA" + "B" * 30, []),
    ("ssh-after-letter", "xssh-rsa AAAA" + "B" * 30, []),
    ("ssh-after-non-ascii", "éssh-rsa AAAA" + "B" * 20, ["goal/ssh-public-key: " + cut("ssh-rsa AAAA" + "B" * 20)]),
    (
        "every-category-in-order",
        f"{SSH} {STRIPE} xoxb-1234567890 {GOOGLE} -----BEGIN PRIVATE KEY----- {JWT} {GH} {AWS} C:\\x /home/y",
        [
            "goal/abs-path: /home/y",
            "goal/abs-path: " + cut("C:\\x /home/y"),
            f"goal/aws-key: {AWS}",
            f"goal/gh-token: {cut(GH)}",
            f"goal/jwt: {cut(JWT)}",
            "goal/private-key: -----BEGIN …",
            f"goal/google-api-key: {cut(GOOGLE)}",
            "goal/slack-token: xoxb-1234567890",
            f"goal/stripe-key: {STRIPE}",
            f"goal/ssh-public-key: {cut(SSH)}",
        ],
    ),
]
SCANNED = [
    "goal",
    "next_step",
    "success_criteria[0]",
    "constraints[0]",
    "decisions[0].what",
    "decisions[0].why",
    "decisions[0].consequences",
    "methods[0].when_applicable",
    "methods[0].how",
    "attempts[0].tried",
    "attempts[0].learned",
    "open_questions[0]",
]
UNSCANNED = {
    "id": "AKIAIOSFODNN7EXAMPL1",
    "parent_id": "AKIAIOSFODNN7EXAMPL1",
    "project.name": f"{AWS} /home/x",
    "project.ref": f"{AWS} /home/x",
    "methods[0].name": "akia-home",
    "tags[0]": "ghp-token",
    "provenance.author_model": f"{AWS} /home/x",
    "provenance.author_human": f"{AWS} /home/x",
}


def _redaction_clause(name: str) -> str:
    """The clauses a REDACTION_TABLE row tests: every row a category's matching, some more."""
    if name.startswith("key-"):  # private-key findings are masked
        return "8.2, 8.3, 8.5"
    if name.endswith(("-first-only", "-leftmost")) or name == "every-category-in-order":
        return "8.2, 8.3, 8.4"
    return "8.2, 8.3"


def redaction() -> None:
    a = "redaction"
    for name, text, expected in REDACTION_TABLE:
        accept(
            a,
            name,
            "category acceptance sets, boundaries and reporting",
            _redaction_clause(name),
            with_value(minimal(), "goal", text),
            expected,
        )
    for path in SCANNED:
        accept(
            a,
            f"scanned-{path}",
            f"{path} is scanned",
            "8.1",
            with_value(full(), path, f"uses {AWS}"),
            [f"{path}/aws-key: {AWS}"],
        )
    for version in ("0.1",):
        for path in ("goal", "decisions[0].why", "attempts[0].learned"):
            accept(
                a,
                f"scanned-v01-{path}",
                f"{path} is scanned in v0.1 too",
                "8.1",
                with_value(full(version), path, f"uses {AWS}"),
                [f"{path}/aws-key: {AWS}"],
            )
    for path, value in UNSCANNED.items():
        accept(a, f"unscanned-{path}", f"{path} is not scanned", "8.1", with_value(full(), path, value))
    order = full()
    order["goal"] = f"g {AWS}"
    order["constraints"] = [AWS, "clean", AWS]
    order["decisions"] = [
        {"what": f"a {AWS}", "why": f"b {AWS}", "consequences": f"c {AWS}"},
        {"what": f"d {AWS}", "why": "clean"},
    ]
    order["methods"] = [
        {"name": "m", "when_applicable": "/home/u/a", "how": "/home/u/b"},
        {"name": "n", "when_applicable": "w", "how": "C:\\tmp"},
    ]
    accept(
        a,
        "scan-order",
        "fields in the reference's order, array items one at a time",
        "8.6",
        order,
        [
            f"goal/aws-key: {AWS}",
            f"constraints[0]/aws-key: {AWS}",
            f"constraints[2]/aws-key: {AWS}",
            f"decisions[0].what/aws-key: {AWS}",
            f"decisions[0].why/aws-key: {AWS}",
            f"decisions[0].consequences/aws-key: {AWS}",
            f"decisions[1].what/aws-key: {AWS}",
            "methods[0].when_applicable/abs-path: /home/u/a",
            "methods[0].how/abs-path: /home/u/b",
            "methods[1].how/abs-path: C:\\tmp",
        ],
    )
    accept(
        a,
        "escaped-in-json",
        "the scan sees decoded text, not JSON escapes",
        "8.2",
        text_of(minimal()).replace("Get GPU", "Get \\u0041KIAIOSFODNN7EXAMPLE"),
        [f"goal/aws-key: {AWS}"],
    )
    accept(
        a,
        "cut-at-32",
        "found text is cut to 32 characters followed by …",
        "8.5",
        with_value(minimal(), "next_step", "/home/" + "d" * 100),
        ["next_step/abs-path: " + cut("/home/" + "d" * 100)],
    )


# ---------------------------------------------------------------- canonical


def canonical_area() -> None:
    a = "canonical"
    accept(
        a,
        "escapes",
        "quote, backslash, short escapes, \\u00XX lowercase, HTML-safe, U+2028/9, raw DEL and non-ASCII",
        "9.1, 9.4",
        text_of(minimal())[:-1].replace(
            '"Get GPU', '"a<b>&c\\u2028\\u2029\\u0001\\u001f\\u007f\\b\\f\\n\\r\\t\\"\\\\/é😀 Get GPU'
        )
        + "}",
    )
    for code in (0, 1, 8, 9, 10, 12, 13, 27, 31, 127):
        accept(
            a,
            f"control-{code:02x}",
            "control characters escaped as Go does",
            "9.1, 9.4",
            with_value(minimal(), "goal", f"a{chr(code)}b"),
        )
    for name, char in {
        "lt": "<",
        "gt": ">",
        "amp": "&",
        "u2028": "\u2028",
        "u2029": "\u2029",
        "slash": "/",
        "astral": "😀",
        "cjk": "漢",
        "nbsp": "\u00a0",
        "bom-char": "\ufeff",
    }.items():
        accept(
            a,
            f"char-{name}",
            "HTML-safe and line-separator escapes; everything else raw",
            "9.1, 9.4",
            with_value(minimal(), "goal", f"x{char}y"),
        )
    accept(
        a,
        "ascii-escaped-input",
        "an input with every non-ASCII character escaped writes the same bytes",
        "9.1, 9.4",
        json.dumps(with_value(full(), "goal", "é😀<\u2028"), ensure_ascii=True),
    )
    shuffled = full()
    accept(
        a,
        "member-order",
        "input member order never matters",
        "9.2",
        json.dumps(dict(reversed(list(shuffled.items()))), ensure_ascii=False),
    )
    nested = full()
    nested["decisions"][0] = dict(reversed(list(nested["decisions"][0].items())))
    nested["provenance"] = dict(reversed(list(nested["provenance"].items())))
    accept(a, "nested-member-order", "nested member order never matters", "9.2", nested)
    accept(
        a, "compact-input", "compact input", "9.1, 9.7", json.dumps(full(), separators=(",", ":"), ensure_ascii=False)
    )
    accept(a, "pretty-input", "tab-indented input", "9.1, 9.7", json.dumps(full(), indent="\t", ensure_ascii=False))
    omissions = {
        "empty-project": ("project", {}),
        "empty-project-members": ("project", {"name": "", "ref": ""}),
        "empty-provenance": ("provenance", {}),
        "empty-provenance-members": ("provenance", {"author_model": "", "author_human": ""}),
        "empty-success-criteria": ("success_criteria", []),
        "empty-constraints": ("constraints", []),
        "empty-decisions": ("decisions", []),
        "empty-methods": ("methods", []),
        "empty-attempts": ("attempts", []),
        "empty-open-questions": ("open_questions", []),
        "empty-tags": ("tags", []),
        "empty-consequences": ("decisions[0].consequences", ""),
        "locked-false": ("decisions[0].locked", False),
        "empty-learned": ("attempts[0].learned", ""),
        "empty-what-kept": ("decisions[0].what", ""),
        "empty-tried-kept": ("attempts[0].tried", ""),
        "empty-how-kept": ("methods[0].how", ""),
        "empty-constraint-item-kept": ("constraints[0]", ""),
    }
    for name, (path, value) in omissions.items():
        accept(
            a, name, "what is left out when empty, and what is always written", "9.3", with_value(full(), path, value)
        )
    accept(
        a,
        "confidence-absent",
        "absent confidences stay absent",
        "9.3",
        without(without(full(), "attempts[0].confidence"), "provenance.confidence"),
    )
    lookalikes = {
        "u007f": "\\u007f",
        "u2028": "\\u2028",
        "u003c": "\\u003c",
        "n": "\\n",
        "backslash": "\\",
        "quote": '\\"',
        "all": '\\u007f \\u2028 \\u003c \\n \\ \\"',
    }
    for name, literal in lookalikes.items():
        for script, extra in (("ascii", ""), ("non-ascii", " é 漢 😀")):
            accept(
                a,
                f"literal-{name}-{script}",
                f"literal text {literal!r} (a backslash and letters, not an escape) is written as text",
                "9.4",
                with_value(with_value(full(), "goal", f"DEL is {literal} in Go{extra}"), "constraints[0]", literal),
            )
    accept(
        a,
        "literal-u007f-with-del",
        "literal \\u007f text beside a raw DEL",
        "9.4",
        with_value(full(), "goal", "\\u007f and \x7f"),
    )
    growth_clause = "9.6"
    refuse(
        a,
        "growth-escapes-over",
        "6,280 bytes as written, 37,058 in canonical form: six constraints of 1,024 `<`",
        growth_clause,
        compact(with_value(minimal(), "constraints", ["<" * 1024] * 6)),
        [("size", "$", None)],
    )
    for extra in (0, 1):
        verdict = "at" if extra == 0 else "one byte over"
        escaped = grown_to(MAX + extra, escapes=True)
        indented = grown_to(MAX + extra, escapes=False)
        for name, obj in (("escapes", escaped), ("indentation", indented)):
            description = f"canonical form {verdict} the limit, grown by {name} alone from a compact text"
            if extra == 0:
                accept(a, f"growth-{name}-at-limit", description, growth_clause, compact(obj))
            else:
                refuse(a, f"growth-{name}-over-limit", description, growth_clause, compact(obj), [("size", "$", None)])
    accept(a, "v01-full", "a v0.1 packet writes as v0.1", "9.1, 9.2, 9.3", full("0.1"))
    accept(
        a,
        "v01-time-offset",
        "created_at re-rendering in v0.1",
        "9.5",
        with_value(full("0.1"), "created_at", "2026-04-21T12:00:00.250+00:00"),
    )


def compact(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def grown_to(size: int, escapes: bool) -> dict[str, Any]:
    """A packet whose canonical form is exactly ``size`` bytes while its compact text is
    well under the limit: grown by `<` escapes (six bytes each), or by the layout alone
    (many short items, then plain constraints)."""
    obj = minimal()
    obj["constraints"] = []
    if not escapes:
        obj["decisions"] = [{"what": "w", "why": "y"}] * 64
        obj["attempts"] = [{"tried": "t", "outcome": "failed"}] * 64
        obj["tags"] = ["a"] * 16
    room = 6 * 1024 if escapes else 1024  # what one more constraint can add
    while True:
        base = len(canonical({**obj, "constraints": [*obj["constraints"], ""]}).encode())
        need = size - base
        if need <= room:
            break
        obj["constraints"].append("<" * 1024 if escapes else "c" * 1024)
    last = "<" * (need // 6) + "c" * (need % 6) if escapes else "c" * need
    obj["constraints"].append(last)
    assert len(canonical(obj).encode()) == size and len(compact(obj).encode()) < MAX
    assert len(obj["constraints"]) <= 32
    return obj


def build() -> dict[str, dict[str, Any]]:
    FILES.clear()
    intake()
    versioning()
    schema("0.1")
    schema("0.2")
    created_at()
    redaction()
    canonical_area()
    return {area: {"area": area, "vectors": vectors} for area, vectors in FILES.items()}


def render(document: dict[str, Any]) -> str:
    """One vector per line, so a change to a vector is a one-line diff."""
    lines = [json.dumps(v, ensure_ascii=False) for v in document["vectors"]]
    return '{"area": ' + json.dumps(document["area"]) + ', "vectors": [\n' + ",\n".join(lines) + "\n]}\n"


def main(argv: list[str]) -> int:
    documents = build()
    stale = []
    for area, document in documents.items():
        path = VECTORS / f"{area}.json"
        text = render(document)
        if "--check" in argv:
            if not path.exists() or path.read_text("utf-8") != text:
                stale.append(path.name)
        else:
            path.write_text(text, "utf-8")
    if stale:
        print("stale vector files: " + ", ".join(stale), file=sys.stderr)
        return 1
    total = sum(len(d["vectors"]) for d in documents.values())
    print(f"{total} vectors in {len(documents)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
