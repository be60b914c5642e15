"""The rule catalog: every rule a result can name, each with its id, kind, description and help.

One list for the ``rules`` command, SARIF's driver rules and docs/rules.md. Ids are a
stable contract; help texts are not. The rules are read from where they are defined, and
import-time checks hold the prose to them: a new rule without help text fails at once.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Literal

from cmp._toolkit import CHAIN_RULES, DEFAULT, EXTENDED, LINT_RULES, RuleSet, pattern_of
from cmp.cli._policy import redaction_rule_id
from cmp.findings import ADVICE_CODES, CODES, Finding

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cmp.findings import AdviceCode, Code

# As [project.urls] in pyproject.toml names them (a test holds them together).
PROJECT_URL = "https://github.com/core-memory-packet/core-memory-packet"
DOCUMENTATION_URL = f"{PROJECT_URL}/blob/main/docs/"
RULES_PAGE = "rules.md"

# The version of the ``rules --format json`` document; it changes only when a member's
# meaning changes or one is removed.
CATALOG_VERSION = 1

Kind = Literal["finding", "redaction", "advice", "lint"]


@dataclass(frozen=True, slots=True)
class CatalogRule:
    """One rule: ``id`` as results carry it, its ``kind``, a one-line ``description`` and the
    full ``help``; ``rule_set`` and ``category`` for a redaction rule, ``writing_rule`` for a lint rule."""

    id: str
    kind: Kind
    description: str
    help: str
    rule_set: str | None = None
    category: str | None = None
    writing_rule: int | None = None

    @property
    def anchor(self) -> str:
        """The anchor of the rule's section in docs/rules.md: the id as a heading, as GitHub slugs it."""
        return heading_anchor(self.id)

    @property
    def help_uri(self) -> str:
        return f"{DOCUMENTATION_URL}{RULES_PAGE}#{self.anchor}"

    def to_json(self) -> dict[str, Any]:
        """``id``, ``kind``, ``description``, ``help``, ``url``, then what only some kinds have."""
        out: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "description": self.description,
            "help": self.help,
            "url": self.help_uri,
        }
        if self.rule_set is not None:
            out["rule_set"] = self.rule_set
            out["category"] = self.category
        if self.writing_rule is not None:
            out["writing_rule"] = self.writing_rule
        return out


def heading_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation but ``-`` and ``_`` dropped, spaces as ``-``."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def lint_rule_id(rule: str) -> str:
    """``lint/sentences``: a lint rule (a lint finding's keyword) as a rule id."""
    return f"lint/{rule}"


def advice_rule_id(finding: Finding) -> str:
    """The rule of a finding of ``lint``: ``lint/<keyword>``, or its own code (``truncated``)."""
    return lint_rule_id(finding.keyword) if finding.code == "lint" and finding.keyword else finding.code


# --- the prose ------------------------------------------------------------------------------------

_CODE_HELP: dict[Code, str] = {
    "size": "A packet is at most 32,768 bytes as it travels. Cut what the next session does not need "
    "(transcripts, pasted code, long lists) and check again.",
    "json": "The file must be strict JSON (RFC 8259) in UTF-8: no comments, no trailing commas, no NaN, "
    "no byte order mark, no lone surrogates. The finding's position says where the reader stopped.",
    "duplicate-key": "An object names the same member twice, which JSON readers resolve differently. Keep one of them.",
    "not-object": "A packet is one JSON object; the file holds an array, a string, a number or null at "
    "the top. Wrap the members in one object.",
    "version-missing": 'Every packet names its version first: "ltm_version": "0.2" (or "0.1"). '
    "Add it, as a non-empty string.",
    "version-unsupported": "ltm_version names a version this library does not know (it knows 0.1 and "
    "0.2). Migrate the packet to a supported version, or update the library.",
    "schema": "The packet breaks its version's JSON Schema: the keyword says which rule (required, "
    "maxLength, pattern, additionalProperties, ...) and the path which member. Fix the member; "
    "`core-memory-packet schema --annotated` shows every member's bounds.",
    "truncated": "A report lists at most 100 findings; this one stands for the rest and says how many "
    "there were. Fix the first ones and check again.",
}

_ADVICE_HELP: dict[AdviceCode, str] = {
    "lint": "Advice from the `lint` command: the packet breaks one of the format's writing rules. The "
    "keyword names the rule; each lint rule below has its own entry (`lint/<rule>`). Lint never changes "
    "check's verdict; `lint --strict` makes its findings fail a run.",
    "chain": "From the `chain` command: packets do not link up through parent_id as a chain should. "
    "The keyword says how: " + "; ".join(f"{rule}: {meaning}" for rule, meaning in CHAIN_RULES.items()) + ".",
    "audit": "From the `audit` command: a stored packet's row or body is not what the store should hold "
    "(the keyword says what disagrees: not-canonical, row-id, row-goal, row-created_at, row-body, row-text). "
    "Rewrite the body with its canonical bytes, or fix the row.",
    "credential": "From `check` and `lint`: a credential pattern of the rule set matches a string its pre-flight "
    "does not read (id, project, tags, provenance, method names); the keyword names the category. The packet "
    "still conforms, but the commands that write or send a packet (new, save, gate, fmt, the hooks, MCP's new "
    "and save; `check --writer`, `lint --writer`) refuse it unless --allow-unredacted. Move the secret out of "
    "the packet and rotate it; `core-memory-packet scrub` replaces it with a placeholder.",
}


def _description(category: str) -> str:
    """What a match of ``category`` is: its pattern's ``description``."""
    pattern = pattern_of(category)
    assert pattern is not None, f"the redaction rule sets name a category of their tables, not {category}"
    return pattern.description


# The format's writing rules (docs/specification.md, clause 14) that lint applies, by number.
_WRITING_RULES: dict[int, str] = {
    1: "one sentence per field: goal and next_step are one sentence each, an array holds one statement per item",
    2: "no code: name a file or a symbol instead of pasting its body; a method's how may hold a short command",
    3: "no local state: nothing that means something only on the writer's machine or network",
    5: "decisions close questions: a choice that may still be revisited is an open question",
    6: "an attempt's learned is the payload: an attempt that taught nothing is noise",
    8: "success criteria are observable: the receiver can check them without asking anyone",
    9: "consequences say what breaks if a decision is revisited",
}

_LINT_FIX: dict[str, str] = {
    "sentences": "Keep the one statement the field is for and move the rest to a field of its own, or drop it.",
    "transcript": "Write what the conversation established, not the conversation.",
    "code": "Name the file or the symbol (ApiClient.send) and leave its body in the repository.",
    "local-url": "Name the service (the staging API) instead of this machine's address.",
    "private-ip": "Name the host's role instead of its address on this network.",
    "host-port": "Name the service instead of its host and port.",
    "local-path": "Write paths relative to the project, and a repository or URL in project.ref.",
    "env-var": "Say what the variable holds (the deploy token) rather than its name on this machine.",
    "decision-question": "Make it an open question, or write the decision that was taken.",
    "missing-learned": "Add what the attempt taught, or leave the attempt out.",
    "unobservable-criterion": "Write a criterion the receiver can check: a command, a status, a number.",
    "missing-consequences": "Add what breaks if the locked decision is revisited.",
}


def _redaction_rule(category: str, rules: RuleSet) -> CatalogRule:
    what = _description(category)
    if rules.named is None:
        found_by = "the format's redaction pre-flight (the default rules)"
        where = "in the fields the format scans"
    else:
        found_by = f"the {rules.named} rules (--rule-set {rules.name})"
        # A default category under the extended rules: its pattern over the members the format leaves out.
        where = (
            "in a member the format's pre-flight does not read (id, project, tags, provenance, method names)"
            if category in DEFAULT.categories
            else "in the fields the format scans or the members the extended rules add"
        )
    return CatalogRule(
        id=redaction_rule_id(category, rules),
        kind="redaction",
        description=f"{what}, found by {found_by}",
        help=(
            f"The packet holds {what} {where}. A packet that holds a credential or a personal path must not "
            "travel: it is refused until the text is gone. Remove or rotate the secret; `core-memory-packet scrub` "
            f"replaces every match with [redacted:{category}]. Output shows a credential masked (its public "
            "prefix, length and offset), never the secret."
        ),
        rule_set=rules.name,
        category=category,
    )


@functools.cache
def catalog() -> tuple[CatalogRule, ...]:
    """Every rule: the finding codes, each rule set's redaction categories, the advice codes, the lint rules."""
    out = [CatalogRule(code, "finding", CODES[code], _CODE_HELP[code]) for code in CODES]
    for rules in EXTENDED.tables:  # every rule set's own table, the format's first
        out.extend(_redaction_rule(category, rules) for category in rules.categories)
    out.extend(CatalogRule(code, "advice", ADVICE_CODES[code], _ADVICE_HELP[code]) for code in ADVICE_CODES)
    for rule in LINT_RULES:
        writing = _WRITING_RULES[rule.writing_rule]
        out.append(
            CatalogRule(
                id=lint_rule_id(rule.id),
                kind="lint",
                description=f"{rule.summary} (writing rule {rule.writing_rule})",
                help=(
                    f"Lint advice: {rule.summary}. Writing rule {rule.writing_rule} of the format: {writing}. "
                    f"{_LINT_FIX[rule.id]} Advice, not a verdict: `lint --strict` makes it fail a run."
                ),
                writing_rule=rule.writing_rule,
            )
        )
    anchors = [rule.anchor for rule in out]
    assert len(set(anchors)) == len(anchors), "every rule has its own section in docs/rules.md"
    return tuple(out)


@functools.cache
def by_id() -> dict[str, CatalogRule]:
    return {rule.id: rule for rule in catalog()}


def catalog_json() -> dict[str, Any]:
    """The ``rules --format json`` document: ``{"version": 1, "rules": [...]}``."""
    return {"version": CATALOG_VERSION, "rules": [rule.to_json() for rule in catalog()]}


def catalog_lines() -> list[str]:
    """The ``rules`` text output: one line per rule, ``ID  KIND  DESCRIPTION``, in columns."""
    rules = catalog()
    width = max(len(rule.id) for rule in rules)
    return [f"{rule.id:<{width}}  {rule.kind:<9}  {rule.description}" for rule in rules]


_SECTIONS: tuple[tuple[Kind, str, str], ...] = (
    ("finding", "Finding codes", "Why a packet is not conforming: each finding's `code`."),
    (
        "redaction",
        "Redaction rules",
        "What the redaction pre-flight finds, one rule per category of each rule set: `redaction/<category>` "
        "for the format's rules, `redaction/extended/<category>` for those `--rule-set extended` adds. "
        "A redaction hit refuses the packet unless `--allow-unredacted`.",
    ),
    ("advice", "Advice codes", "Findings of `lint`, `chain` and `audit`, which never change check's verdict."),
    ("lint", "Lint rules", "The writing rules `lint` applies; a lint finding's `keyword` is the rule after `lint/`."),
)


def rules_markdown() -> str:
    """docs/rules.md: an introduction, then one section per rule (its heading the rule's id), by kind."""
    lines = [
        "# Rules",
        "",
        "<!-- Generated from cmp/cli/_catalog.py by `core-memory-packet rules --format markdown`; do not edit. -->",
        "",
        "Every rule a result of `check`, `lint`, `chain` or `audit` can name, with the id its",
        "results carry (the `ruleId` of `--format sarif`, the `code` or `keyword` of `--format json`).",
        "`core-memory-packet rules` lists them; `rules --format json` prints them as one document.",
        "Ids are stable; the descriptions are not.",
    ]
    for kind, title, intro in _SECTIONS:
        lines += ["", f"## {title}", "", intro]
        for rule in catalog():
            if rule.kind != kind:
                continue
            lines += ["", f"### `{rule.id}`", "", f"{rule.kind.capitalize()}: {rule.description}.", "", rule.help]
    return "\n".join(lines) + "\n"


# The prose covers what the tables define, no more and no less.
assert set(_CODE_HELP) == set(CODES) and set(_ADVICE_HELP) == set(ADVICE_CODES)
assert set(_LINT_FIX) == {rule.id for rule in LINT_RULES}
assert {rule.writing_rule for rule in LINT_RULES} <= set(_WRITING_RULES)
