"""The straightforward pipeline the issue measures against, kept here only as a yardstick.

json.loads, jsonschema's iter_errors with its stock format checker, then one google-re2
search per scanned field and pattern, then json.dumps with an indent. It is not a
correct CMP implementation (no duplicate, surrogate or RE2-pattern rules); it is what
a first attempt costs.
"""

from __future__ import annotations

import json
from typing import Any

import re2
from jsonschema import Draft202012Validator, FormatChecker

from cmp._redaction._scan import PATTERNS, texts
from cmp.schema import load_schema

_VALIDATORS = {v: Draft202012Validator(load_schema(v), format_checker=FormatChecker()) for v in ("0.1", "0.2")}
_SEARCHES = [re2.compile(p.regex).search for p in PATTERNS]


def run(raw: bytes) -> tuple[int, int]:
    obj: Any = json.loads(raw)
    validator = _VALIDATORS.get(obj.get("ltm_version")) if isinstance(obj, dict) else None
    errors = len(list(validator.iter_errors(obj))) if validator else 1
    hits = 0
    if isinstance(obj, dict):
        for _, text in texts(obj):
            for search in _SEARCHES:
                if search(text) is not None:
                    hits += 1
    if not errors:
        json.dumps(obj, indent=2, ensure_ascii=False).encode()
    return errors, hits
