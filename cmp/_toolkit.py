"""The declared internal interface: what :mod:`cmp.cli` and :mod:`cmp.integrations` use from the core's
private modules (tests/unit/test_layers.py holds them to it). Nothing here is public. Each name is
imported on first use, so a command loads only what it uses.
"""

from __future__ import annotations

from cmp import _module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from cmp._audit.reference_db import (
        DatabaseChanged,
        DatabaseDeadline,
        DatabaseError,
        DatabaseStopped,
        Identity,
        Limits,
        ReferenceDatabase,
        database_rows,
        open_database,
    )
    from cmp._audit.rules import Audited, audited_row, exported_file, exported_line
    from cmp._canonical import file_bytes
    from cmp._chain import RULES as CHAIN_RULES
    from cmp._display import describe, display_name, file_kind, one_line, visible
    from cmp._example import example_packet
    from cmp._files import sync_folder, write_synced
    from cmp._intake import decode_text, nesting, parse_json, parse_packet, size_finding
    from cmp._lint import RULE_IDS as LINT_RULE_IDS
    from cmp._lint import RULES as LINT_RULES
    from cmp._matcher import without_lone_surrogates
    from cmp._messages import quote, unquoted, withheld
    from cmp._pipeline import DEFAULT_POLICY, Policy, judge, policy_of
    from cmp._positions import locate_both, located_in_text, source_text
    from cmp._redaction._hit import pattern_of
    from cmp._redaction._rules import (
        DEFAULT,
        EXTENDED,
        RuleSet,
        checked_rule_set,
        finder,
        placeholder,
        placeholder_in,
    )
    from cmp._redaction._rules import RuleSetName as RuleSetName  # a type: mypy's alone
    from cmp._redaction._scan import replace_matches, scan
    from cmp._resume import STYLES, escaped_line, estimate_tokens, left_out
    from cmp._timestamps import instant

# Each name: the module that defines it, and its name there.
_DEFINED_IN: dict[str, tuple[str, str]] = {
    **{
        name: ("cmp._audit.reference_db", name)
        for name in (
            "DatabaseChanged",
            "DatabaseDeadline",
            "DatabaseError",
            "DatabaseStopped",
            "Identity",
            "Limits",
            "ReferenceDatabase",
            "database_rows",
            "open_database",
        )
    },
    **{name: ("cmp._audit.rules", name) for name in ("Audited", "audited_row", "exported_file", "exported_line")},
    "file_bytes": ("cmp._canonical", "file_bytes"),
    "CHAIN_RULES": ("cmp._chain", "RULES"),
    **{name: ("cmp._display", name) for name in ("describe", "display_name", "file_kind", "one_line", "visible")},
    "example_packet": ("cmp._example", "example_packet"),
    **{name: ("cmp._files", name) for name in ("sync_folder", "write_synced")},
    **{
        name: ("cmp._intake", name) for name in ("decode_text", "nesting", "parse_json", "parse_packet", "size_finding")
    },
    "LINT_RULE_IDS": ("cmp._lint", "RULE_IDS"),
    "LINT_RULES": ("cmp._lint", "RULES"),
    "without_lone_surrogates": ("cmp._matcher", "without_lone_surrogates"),
    **{name: ("cmp._messages", name) for name in ("quote", "unquoted", "withheld")},
    **{name: ("cmp._pipeline", name) for name in ("DEFAULT_POLICY", "Policy", "judge", "policy_of")},
    **{name: ("cmp._positions", name) for name in ("locate_both", "located_in_text", "source_text")},
    "pattern_of": ("cmp._redaction._hit", "pattern_of"),
    **{
        name: ("cmp._redaction._rules", name)
        for name in ("DEFAULT", "EXTENDED", "RuleSet", "checked_rule_set", "finder", "placeholder", "placeholder_in")
    },
    **{name: ("cmp._redaction._scan", name) for name in ("replace_matches", "scan")},
    **{name: ("cmp._resume", name) for name in ("STYLES", "escaped_line", "estimate_tokens", "left_out")},
    "instant": ("cmp._timestamps", "instant"),
}


def __getattr__(name: str) -> Any:
    where = _DEFINED_IN.get(name)
    if where is None:
        raise AttributeError(f"module 'cmp._toolkit' has no attribute {name!r}")
    value = getattr(_module(where[0]), where[1])
    globals()[name] = value
    return value


__all__ = [
    "CHAIN_RULES",
    "DEFAULT",
    "DEFAULT_POLICY",
    "EXTENDED",
    "LINT_RULES",
    "LINT_RULE_IDS",
    "STYLES",
    "Audited",
    "DatabaseChanged",
    "DatabaseDeadline",
    "DatabaseError",
    "DatabaseStopped",
    "Identity",
    "Limits",
    "Policy",
    "ReferenceDatabase",
    "RuleSet",
    "audited_row",
    "checked_rule_set",
    "database_rows",
    "decode_text",
    "describe",
    "display_name",
    "escaped_line",
    "estimate_tokens",
    "example_packet",
    "exported_file",
    "exported_line",
    "file_bytes",
    "file_kind",
    "finder",
    "instant",
    "judge",
    "left_out",
    "locate_both",
    "located_in_text",
    "nesting",
    "one_line",
    "open_database",
    "parse_json",
    "parse_packet",
    "pattern_of",
    "placeholder",
    "placeholder_in",
    "policy_of",
    "quote",
    "replace_matches",
    "scan",
    "size_finding",
    "source_text",
    "sync_folder",
    "unquoted",
    "visible",
    "withheld",
    "without_lone_surrogates",
    "write_synced",
]
