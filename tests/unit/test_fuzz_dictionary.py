"""fuzz/cmp.dict is a well-formed libFuzzer dictionary holding the escape look-alikes."""

from __future__ import annotations

import re
from pathlib import Path

DICTIONARY = Path(__file__).resolve().parents[2] / "fuzz" / "cmp.dict"
_ENTRY = re.compile(r'^[A-Za-z0-9_]+="((?:[^"\\]|\\\\|\\"|\\x[0-9a-fA-F]{2})*)"$')


def tokens() -> list[bytes]:
    out = []
    for line in DICTIONARY.read_text("ascii").splitlines():
        if not line or line.startswith("#"):
            continue
        match = _ENTRY.match(line)
        assert match, f"not a libFuzzer dictionary entry: {line}"
        value = re.sub(
            rb"\\(x[0-9a-fA-F]{2}|\\|\")",
            lambda m: bytes([int(m.group(1)[1:], 16)]) if m.group(1)[:1] == b"x" else m.group(1),
            match.group(1).encode("ascii"),
        )
        out.append(value)
    return out


def test_dictionary_holds_the_escape_lookalikes_as_json_text() -> None:
    found = set(tokens())
    assert len(found) >= 20
    # As JSON text: an escaped backslash followed by the letters (literal text), and the escapes.
    for literal in (b"\\\\u007f", b"\\\\u2028", b"\\\\u003c", b"\\\\n", b"\\\\", b'\\"'):
        assert literal in found, literal
    assert b"\x7f" in found and "\u2028".encode() in found
