"""Hypothesis strategies for the documents a JSON Schema of the strict modes' subset accepts
(the draft schema): objects with every listed member, arrays, strings, booleans, enums, and
an ``anyOf``'s branches (a member or null). Nothing else is in that subset (tests/support/strict_modes.py),
so every document drawn is one the schema accepts, and the strings are drawn to keep and to
break the bounds the schema states only in words.

(hypothesis-jsonschema would do this for any schema; its release of the time reads
Hypothesis internals that Hypothesis 6.170 no longer has.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

# Text a model writes (short, with what JSON escapes), a slug (what the patterns take), the
# empty string (absent), and now and then text over the 1,024 characters most members allow.
_SHORT = st.text(max_size=30)
_SLUG = st.from_regex(r"\A[a-z0-9][a-z0-9-]{0,20}\Z")
_STRINGS = st.one_of(
    _SHORT,
    _SLUG,
    _SHORT,
    _SLUG,
    st.just(""),
    st.text(alphabet="ab ", min_size=1020, max_size=1030),
)
_SCALARS: dict[str, st.SearchStrategy[Any]] = {"string": _STRINGS, "boolean": st.booleans(), "null": st.none()}


def documents(schema: Mapping[str, Any], max_items: int = 3) -> st.SearchStrategy[Any]:
    """What ``schema`` accepts; arrays of at most ``max_items`` items."""
    if "anyOf" in schema:
        return st.one_of(*(documents(branch, max_items) for branch in schema["anyOf"]))
    kind = schema["type"]
    kinds = [kind] if isinstance(kind, str) else list(kind)
    choices = [_of(schema, name, max_items) for name in kinds]
    return st.one_of(*choices) if len(choices) > 1 else choices[0]


def _of(schema: Mapping[str, Any], kind: str, max_items: int) -> st.SearchStrategy[Any]:
    if kind == "null":
        return st.none()
    if "enum" in schema:
        return st.sampled_from([value for value in schema["enum"] if value is not None])
    if kind == "object":
        return st.fixed_dictionaries(
            {name: documents(member, max_items) for name, member in schema["properties"].items()}
        )
    if kind == "array":
        return st.lists(documents(schema["items"], max_items), max_size=max_items)
    return _SCALARS[kind]
