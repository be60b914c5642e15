"""What a file name shown on one line and a quoted text show of a credential of either rule set,
and cmp._display.visible's escapes."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cmp import _display, _extended_patterns
from cmp._display import UNPRINTABLE, masked_name, visible
from cmp._messages import quote, withheld


@pytest.mark.parametrize("name", ["packets/PuTTY-User-Key-File-2:x.json", "PuTTY-User-Key-File-3:.json"])
def test_a_part_holding_an_extended_credential_is_masked(name: str) -> None:
    part = name.split("/")[-1]
    assert masked_name(name).endswith(f"(not shown: {len(part)} characters matching putty-private-key)")


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("PuTTY-User-Key-File-2:", "putty-private-key"),  # the shortest match of a pattern without a "/"
        ("a://:b@c", "url-credentials"),  # a URL's password: 8 characters
        ("glpat-" + "a1B2c3D4e5" * 2, "gitlab-token"),  # an extended-only credential
        ("xglpat-" + "a1B2c3D4e5" * 2, "gitlab-token"),  # glued to a word character: its credential-like form
    ],
)
def test_a_short_extended_credential_is_never_quoted(text: str, category: str) -> None:
    expected = f"not shown: {len(text)} characters matching {category}"
    assert withheld(text) == expected
    assert quote(text) == f"({expected})"
    if "/" not in text:  # a file name's parts are its "/"-separated ones
        assert masked_name(f"dir/{text}") == f"dir/({expected})"
    assert _extended_patterns.first_category(text) == category or _extended_patterns.credential_like(text) == category


def test_short_quotes_and_names_without_a_credential_are_shown() -> None:
    assert quote("Bad") == "'Bad'" and withheld("glpat-short") is None
    assert masked_name("examples/typical-v0.2.json") == "examples/typical-v0.2.json"
    assert masked_name("AKIAIOSFODNN7EXAMPLE.json") == "(not shown: 25 characters matching aws-key)"


def test_a_message_loads_the_extended_table_when_it_needs_it() -> None:
    """Importing the message module does not load the extended table; judging a quote does."""
    probe = (
        "import sys\n"
        "import cmp._messages as m\n"
        "before = 'cmp._extended_patterns' in sys.modules\n"
        "token = 'glpat-' + 'a1B2c3D4e5' * 2\n"
        "assert m.withheld(token) == 'not shown: 26 characters matching gitlab-token'\n"
        "print(before, 'cmp._extended_patterns' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "True"]


def test_ascii_text_str_isprintable_takes_holds_nothing_to_escape() -> None:
    """cmp._display.visible's shortcut, for every ASCII character (and none beyond: see below)."""
    unprintable = re.compile(UNPRINTABLE)
    for code in range(128):
        char = chr(code)
        assert char.isprintable() == (unprintable.search(char) is None), hex(code)


@given(st.text(max_size=40) | st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=40))
def test_visible_is_the_class_escaped(text: str) -> None:
    assert visible(text) == re.sub(UNPRINTABLE, _display._escape, text)
