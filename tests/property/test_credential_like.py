"""The credential-like forms masking reads (cmp._patterns, "what masking reads").

Each is its pattern without \\b and \\B, so it must match wherever its pattern does, in
texts made to match the pattern and in those texts glued to word characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
import re2
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from cmp._extended_patterns import EXTENDED_PATTERNS
from cmp._extended_patterns import credential_like as extended_like
from cmp._matcher import without_word_assertions
from cmp._patterns import PATTERNS, Pattern, credential_like, credential_like_forms, shows_echo
from tests.support.examples import examples

CREDENTIALS = [p for p in (*PATTERNS, *EXTENDED_PATTERNS) if not shows_echo(p.category)]


def test_every_credential_pattern_has_a_form_and_no_path_has_one() -> None:
    forms = credential_like_forms(PATTERNS) + credential_like_forms(EXTENDED_PATTERNS)
    assert [category for category, _ in forms] == [p.category for p in CREDENTIALS]
    assert "abs-path" not in dict(forms)
    assert all("\\b" not in regex and "\\B" not in regex for _, regex in forms)


def test_without_word_assertions_keeps_escaped_backslashes() -> None:
    assert without_word_assertions(r"\bAKIA[0-9A-Z]{16}\b") == "AKIA[0-9A-Z]{16}"
    assert without_word_assertions(r"a\\b") == r"a\\b", "an escaped backslash, then the letter b"
    assert without_word_assertions(r"a\\\bc") == r"a\\c"


def _like(pattern: Pattern) -> Callable[[str], str | None]:
    return extended_like if pattern in EXTENDED_PATTERNS else credential_like


@pytest.mark.property
@pytest.mark.parametrize("pattern", CREDENTIALS, ids=lambda p: p.category)
@settings(max_examples=examples(60), deadline=None)
@given(
    data=st.data(), before=st.sampled_from(["", " ", "x", "_", "9"]), after=st.sampled_from(["", " ", "x", "_", "9"])
)
def test_a_form_matches_wherever_its_pattern_does(
    pattern: Pattern, data: st.DataObject, before: str, after: str
) -> None:
    made = data.draw(st.from_regex(re.compile(pattern.regex, re.ASCII), fullmatch=True))
    assume(re2.search(pattern.regex, made) is not None)  # where Python's re and RE2 disagree, not ours to judge
    like = re2.compile(without_word_assertions(pattern.regex))
    assert like.search(made) is not None
    glued = before + made + after
    assert like.search(glued) is not None, glued
    assert _like(pattern)(glued) is not None, glued
