"""Paths of findings: member names quoted by the language-neutral rule of specification clause 1.4."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cmp._messages import NAME_LIMIT, BoundedPath, member_step, path_join, quote, withheld


@pytest.mark.parametrize(
    ("name", "step"),
    [
        ("goal", ".goal"),
        ("_x", "._x"),
        ("x_1", ".x_1"),
        ("A", ".A"),
        ("a" * 32, "." + "a" * 32),
        ("a" * 33, "['" + "a" * 32 + "…']"),
        ("", "['']"),
        ("1st", "['1st']"),
        ("a b", "['a b']"),
        ("x-extra", "['x-extra']"),
        ("a.b", "['a.b']"),
        ("$", "['$']"),
        ("it's", "['it\\'s']"),
        ('say "hi"', "['say \"hi\"']"),
        ("a\\b", "['a\\\\b']"),
        ("\\u0041", "['\\\\u0041']"),
        ("\x00", "['\\u0000']"),
        ("a\tb", "['a\\u0009b']"),
        ("a\nb", "['a\\u000ab']"),
        ("\x1f", "['\\u001f']"),
        (" ", "[' ']"),
        ("~", "['~']"),
        ("\x7f", "['\\u007f']"),
        ("\x85", "['\\u0085']"),
        ("\x9f", "['\\u009f']"),
        ("\xa0", "['\xa0']"),
        ("\u2028\u2029", "['\\u2028\\u2029']"),
        ("\u202e", "['\u202e']"),
        ("é", "['é']"),
        ("café", "['café']"),  # str.isidentifier() says yes; the rule is ASCII only
        ("ａ", "['ａ']"),  # fullwidth a
        ("漢字", "['漢字']"),
        ("😀", "['😀']"),
        ("😀" * 33, "['" + "😀" * 32 + "…']"),  # code points, not UTF-16 units or bytes
        ("'" * 40, "['" + "\\'" * 32 + "…']"),  # cut first, then escaped
        ("a" * 32 + "\n", "['" + "a" * 32 + "…']"),  # the cut drops the escape past it
        ("a" * 31 + "\n", "['" + "a" * 31 + "\\u000a']"),
    ],
)
def test_member_step(name: str, step: str) -> None:
    assert member_step(name) == step
    assert path_join("$", name) == "$" + step
    assert BoundedPath().child(name).text == "$" + step


def test_items_and_nesting() -> None:
    assert path_join(path_join(path_join("$", "decisions"), 0), "why") == "$.decisions[0].why"
    assert BoundedPath().child("x").child(12).child("a b").text == "$.x[12]['a b']"


def test_quote_for_messages_is_unchanged() -> None:
    """Messages keep their own quoting; only paths follow clause 1.4."""
    assert quote("it's") == '"it\'s"'
    assert quote("a" * 40) == repr("a" * 32) + "…"


def _read_step(step: str) -> str:
    """The name a quoted step stands for (an independent reader of clause 1.4)."""
    assert step.startswith("['") and step.endswith("']"), step
    body, out, i = step[2:-2], [], 0
    while i < len(body):
        char = body[i]
        if char == "\\":
            if body[i + 1] == "u":
                assert re.fullmatch("[0-9a-f]{4}", body[i + 2 : i + 6]), step  # four lowercase hex digits
                out.append(chr(int(body[i + 2 : i + 6], 16)))
                i += 6
            else:
                out.append(body[i + 1])
                i += 2
        else:
            assert char != "'", f"an unescaped quote in {step!r}"
            out.append(char)
            i += 1
    return "".join(out)


@given(st.text(max_size=NAME_LIMIT))
def test_quoted_names_read_back_and_hold_nothing_that_breaks_a_line(name: str) -> None:
    step = member_step(name)
    if step.startswith("."):
        assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) and step == "." + name
    elif step.startswith("[<"):  # a name a redaction pattern matches is withheld, never quoted
        assert step == f"[<{withheld(name)}>]"
        assert _read_step(step) == name
        assert not re.search("[\x00-\x1f\x7f-\x9f\u2028\u2029]", step)


@given(st.text(min_size=NAME_LIMIT + 1, max_size=3 * NAME_LIMIT))
def test_long_names_are_cut_after_32_code_points(name: str) -> None:
    step = member_step(name)
    assert step.endswith("…']")
    assert _read_step(step[:-3] + "']") == name[:NAME_LIMIT]
