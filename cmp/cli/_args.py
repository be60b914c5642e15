"""The command line's grammar: the parser, its help texts and examples, one-line usage errors."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from cmp import __version__
from cmp.cli._output import EXIT_USAGE, error_line
from cmp.cli.reporters import choices_help, offered, phrases_help
from cmp.schema import SUPPORTED_VERSIONS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CONSOLE_PROG = "core-memory-packet"
MODULE_PROG = "python -m cmp"

# What cmp.conformance.default_vector_dir does. Here, not there: importing the runner
# package loads all of it, and every check and fmt would pay for that at start-up.
DEFAULT_VECTORS_TEXT = (
    "the conformance-vectors folder beside the cmp package in a source checkout, "
    "else the copy installed with the package (cmp.vectors)"
)

_CHECK_EXAMPLES = (
    ("{prog} check packet.json", 'one line per finding, or "packet.json: ok"'),
    ("{prog} check a.json b.json --format json", "one JSON document with a result object per file"),
    ("cat packet.json | {prog} check -", "read the packet from stdin"),
    ("{prog} check --jsonl packets.jsonl --jobs 2", "one packet per line, results per line, both cores"),
    ("{prog} check --lenient old.json", "report schema errors as warnings, exit 0"),
    ("{prog} check --rule-set extended packet.json", "also look for API tokens, keys and passwords in URLs"),
)
_FMT_EXAMPLES = (
    ("{prog} fmt packet.json", "print the canonical bytes and one final newline"),
    ("{prog} fmt --check *.json", "list files that are not canonical (exit 1)"),
    ("{prog} fmt --diff packets/", "show how each file differs from its canonical form (exit 1 if any does)"),
    ("{prog} fmt --write packet.json", "rewrite in canonical form, atomically"),
)
_LINT_EXAMPLES = (
    ("{prog} lint packet.json", "one line per finding ending in its rule id, or 'packet.json: ok'"),
    ("{prog} lint --strict *.json", "exit 1 on lint findings too, as a CI gate"),
    ("{prog} lint --format json packet.json", "one JSON document: check's result objects, plus lint"),
)
_GATE_EXAMPLES = (
    ("{prog} gate packets/", "check, format check and lint every *.json below: each finding once"),
    ("{prog} gate --strict a.cmp.json", "lint's advice fails too (exit 1)"),
)
_CONFORMANCE_EXAMPLES = (
    ("{prog} conformance", "run the conformance vectors against this library"),
    ("{prog} conformance --impl 'go run ./x'", "run them against another implementation"),
    ("{prog} conformance --filter canonical --format json", "one area, one JSON document"),
    ("{prog} conformance --format junit > conformance.xml", "a JUnit XML report for a CI system"),
)
_CHAIN_EXAMPLES = (
    ("{prog} chain examples/chain", "the tree of every *.json below a folder, then the findings"),
    ("{prog} chain --jsonl packets.jsonl --format json", "findings, roots, heads and cycles as one JSON document"),
    ("{prog} chain --closed archive/", "the folder holds every packet: a parent_id naming none is a finding"),
)
_NEW_EXAMPLES = (
    ("{prog} new --goal 'Ship the export fix.' --next-step 'Time it on a snapshot.' -o next.json", "a fresh packet"),
    ("{prog} new --goal G --next-step N --tag export --parent last.json", "continue a packet: parent_id is its id"),
    ("{prog} new --draft handoff.json --parent latest | {prog} save -", "continue the store's latest packet, store it"),
    ("{prog} new --draft draft.json -o next.json", "the packet a model wrote to the draft schema"),
    ("{prog} example > packet.json", "an example of a good packet, to edit"),
)
_RESUME_EXAMPLES = (
    ("{prog} resume", "the block of the store's latest packet"),
    ("{prog} resume next.json --style xml", "a file's packet as tagged sections"),
    ("{prog} resume --max-chars 4000 01J9X8K2QZ7N4M0WXYZV3R8ABC", "a stored packet, within 4,000 characters"),
    ("{prog} resume --hook claude", "as a Claude Code SessionStart hook command"),
)
_SCRUB_EXAMPLES = (
    ("{prog} scrub leaky.json > clean.json", "the packet with each secret or path replaced by a placeholder"),
    ("{prog} scrub --write *.json", "rewrite the files that had something to replace, atomically"),
)
_MIGRATE_EXAMPLES = (
    ("{prog} migrate old.json --to 0.2", "a v0.1 packet as v0.2 (nothing else changes)"),
    ("{prog} migrate new.json --to 0.1 --drop", "down to v0.1, leaving out what v0.1 has no member for"),
)
_SCHEMA_EXAMPLES = (
    ("{prog} schema --annotated > packet.schema.json", "a schema with a description and examples for every member"),
    ("{prog} schema --version 0.1", "the normative v0.1 schema file, byte for byte"),
    ("{prog} schema --draft", "the schema a model fills through strict structured output (then new --draft)"),
)
_STORE_EXAMPLES = (
    ("{prog} new --goal G --next-step N | {prog} save -", "write a packet and store it: prints its id"),
    ("{prog} ls --tag export --limit 5", "the five newest stored packets tagged export"),
    ("{prog} show 01J9X8K2QZ7N4M0WXY00000001", "a summary of one stored packet"),
)
_STORE_HELP = (
    "the store's folder (default: $CMP_STORE, else .cmp/packets in the nearest folder up that holds "
    ".cmp, else the nearest that holds .git, else here)"
)
_LS_OUTPUT = """\
--format text: one line per packet, "ID  CREATED_AT  GOAL" (the goal cut at 72
characters), newest first. --format json: one document {"packets": [{id,
created_at, goal, tags, parent_id}], "problems": [{file, message}]}. Each file
the store does not serve (foreign, not canonical, not a packet) is one line on
stderr, "PATH: why". Exit status: 0, 1 if there were such files, 2 if the
store cannot be read.
"""
_WRITE_HELP = "rewrite the files in place, atomically (without it: one file, the result on stdout)"
_FORCE_HELP = "with --write: rewrite read-only files and files with other hard links too"


def _examples(prog: str, *groups: Sequence[tuple[str, str]]) -> str:
    lines = ["examples:"]
    for group in groups:
        for command, what in group:
            lines.append("  " + command.format(prog=prog))
            lines.append("      " + what)
    return "\n".join(lines) + "\n"


_CHECK_OUTPUT = """\
--format json prints one document {"results": [...]}: one result object per
packet, in input order, with the members file (and line, for --jsonl), ok,
conforming, accepted, version, errors [{code, path, keyword, message}],
redactions [{field, category, found, at, length, text}] and error: null, or
for a source that could not be read or checked, the one-line reason (ok,
conforming and accepted are then false, version null, errors and redactions
empty). A redaction hit's found is the credential's public prefix and "…"
(AKIA…), or with --show-found what it found, cut at 32 characters.
The document's first member is "version": 1; its JSON Schema ships in the
package, as cmp/cli/schemas/check-report.schema.json.
"""
_FMT_DESCRIPTION = """\
Print or rewrite packets in canonical form. A file is written as the canonical
bytes plus one final newline, as editors and pre-commit's end-of-file-fixer keep
files (cmp.dumps, and what goes over the wire, are the canonical bytes alone);
--check calls a file canonical only with exactly that one final newline (none
after a packet of the full 32,768 bytes, which a newline would make too large).
"""
_LINT_DESCRIPTION = """\
Advise on the format's writing rules (docs/specification.md, clause 14):
several sentences in a one-sentence field, transcripts, pasted code, local
state (local URLs, private addresses, ports, home and temporary paths,
environment variables), a decision that is a question, an attempt without
learned, a success criterion worded as a feeling, a locked decision without
consequences. Each file is checked first: one check does not accept is listed
with check's findings and fails (exit 1). Lint findings alone exit 0, or 1
with --strict; they never change check's verdict.
"""
_LINT_OUTPUT = """\
--format text: check's lines for a file check refuses, then one
"FILE: $.path: message [rule-id]" line per lint finding, or "FILE: ok".
--format json: one document {"version": 1, "results": [...]} with check's
result object per file and one more member, lint [{code, path, keyword,
message}] (code "lint", keyword the rule id). --format sarif: one SARIF 2.1.0
log, each lint finding a result of rule lint/<rule-id> (a warning, an error
with --strict). --format github: one workflow command per finding.
"""
_RULES_OUTPUT = """\
--format text: one line per rule, "ID  KIND  DESCRIPTION". --format json: one
document {"version": 1, "rules": [{id, kind, description, help, url}]}, a
redaction rule with rule_set and category, a lint rule with writing_rule.
--format markdown: the page docs/rules.md, as the project ships it.
"""
_RULES_EXAMPLES = (
    ("{prog} rules", "every rule id a result can carry, with its kind and description"),
    ("{prog} rules --format json", "the same as one JSON document, each rule with its help text and link"),
)
_GATE_DESCRIPTION = """\
Check, canonical form and lint in one pass: the recommended pre-commit hook.
Each file is checked once: one check refuses gets check's lines (findings,
redaction hits, masked) and fails; one it accepts fails if its bytes are not
what fmt --write writes, on one line that says where they first differ and why.
Lint's advice follows, and fails only with --strict. So a leaked key is one
line, where check, fmt --check and lint in a row say it three times.
"""
_GATE_OUTPUT = """\
--format text: one line per finding, redaction hit, non-canonical form and lint
finding, as check, fmt --check and lint print them ("FILE:LINE:COLUMN: ..."), or
"FILE: ok". --format json: lint's result objects, each with "canonical" (null
when check refuses the packet). github and sarif: as lint's, and a form that is
not canonical on rule "gate".
Exit status: 0 every file accepted and canonical, 1 any not (or lint advice with
--strict), 2 a usage error or a file that could not be read.
"""
_CONFORMANCE_OUTPUT = """\
--format text: one "FAIL id: problems" line per failing vector, then
"N passed, N failed". --format json: one document {"passed", "failed",
"failures": [{"id", "area", "problems"}]}. --format junit: a JUnit XML report,
a <testsuite> per area and a <testcase> per vector.
"""
_CHAIN_DESCRIPTION = """\
Check how packets link up through parent_id: ids unique, every parent_id naming
a packet of the set or one outside it (that packet is a root), no packet its
own ancestor, each packet newer than its parent, and a method whose how is the
parent's keeping its name. Packets that cannot be read or are not conforming
are reported on one line each and left out.
"""
_CHAIN_OUTPUT = """\
--format text: the tree, children indented under their parent (by created_at,
then id), then one line per packet left out and per finding, then a summary.
--format json: one document {"packets", "roots", "heads", "cycles",
"findings": [{file, id, code, path, keyword, message, other}], "left_out"}.
Exit status: 0 no findings, 1 findings or packets left out, 2 usage or I/O
errors.
"""
_CONFORMANCE_DESCRIPTION = (
    "Run the conformance vectors against this library, or against another implementation "
    f"(--impl). The vectors come from --vectors DIR, by default from {DEFAULT_VECTORS_TEXT}."
)


def terminal_columns() -> int:
    """How wide help text may be, as ``shutil.get_terminal_size().columns`` answers."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        columns = 0
    return columns or 80


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Text laid out in lines is kept as written; a one-paragraph description is wrapped."""

    def __init__(
        self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None
    ) -> None:
        # argparse's width comes from shutil, which loads bz2, lzma and zlib on every run;
        # terminal_columns gives shutil's answer from os (a test holds the two together).
        if width is None:
            width = terminal_columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text.strip("\n"):
            return super()._fill_text(text, width, indent)
        return argparse.HelpFormatter._fill_text(self, text, width, indent)


class _Parser(argparse.ArgumentParser):
    """One-line usage errors; options only by their full names: a prefix typo (``--al``,
    ``--json`` for ``--jsonl``) must not switch the redaction gate off or read JSON Lines.
    A word of the command line that an error quotes is withheld where a redaction rule matches
    it (a key pasted into the wrong place must not reach a CI log)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def parse_args(self, *args: Any, **kwargs: Any) -> Any:
        # argparse's own, but naming each word it did not take as every message names a value
        parsed, unknown = self.parse_known_args(*args, **kwargs)
        if unknown:
            from cmp._toolkit import unquoted  # loaded for the error alone

            self.error("unrecognized arguments: " + " ".join(unquoted(word) for word in unknown))
        return parsed

    def _check_value(self, action: argparse.Action, value: Any) -> None:  # a choice's error quotes the value
        try:
            super()._check_value(action, value)
        except argparse.ArgumentError as exc:
            raise _withholding(exc, value) from None

    def _get_value(self, action: argparse.Action, arg_string: str) -> Any:  # so does a type's (int, float, ...)
        try:
            return super()._get_value(action, arg_string)
        except argparse.ArgumentError as exc:
            raise _withholding(exc, arg_string) from None

    def error(self, message: str) -> Any:  # one line, exit 2, no usage dump
        error_line(message.splitlines()[0] if message else "usage error")
        raise SystemExit(EXIT_USAGE)


def _withholding(error: argparse.ArgumentError, value: object) -> argparse.ArgumentError:
    """``error``, its message naming ``value`` as :func:`cmp._messages.quote` does when a redaction rule matches it."""
    if isinstance(value, str) and value:
        from cmp._toolkit import quote, withheld  # loaded for the error alone

        if withheld(value) is not None:
            shown = quote(value)
            error.message = error.message.replace(repr(value), shown).replace(value, shown)
    return error


_SHOW_FOUND_HELP = (
    "show what each redaction hit found, cut at 32 characters (the format's echo); by default a "
    "credential shows only its public prefix, length and offset (AKIA… (20 chars) at 0)"
)


def _show_found(command: argparse.ArgumentParser) -> None:
    command.add_argument("--show-found", action="store_true", help=_SHOW_FOUND_HELP)


_RULE_SET_HELP = (
    "the redaction rule set: default (the format's ten patterns) or extended (those, then this "
    "library's opt-in rules for tokens, keys and credentials in URLs, over more members; "
    "their findings are marked (extended) and block like the others)"
)
_SCRUB_RULE_SET_HELP = "extended: replace the extended rules' matches too (see check --help)"


def _add_jobs(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="worker processes, each reading its own share of the input (0: one per core)",
    )
    command.add_argument(
        "--dask",
        metavar="SCHEDULER",
        help="judge the shares on a Dask cluster (its scheduler's address, e.g. tcp://host:8786); the "
        "files must be at the same absolute paths on its workers; needs the 'dask' extra",
    )


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"not a positive whole number: {text!r}")
    return value


def _add_store(command: argparse.ArgumentParser) -> None:
    command.add_argument("--store", metavar="PATH", help=_STORE_HELP)


def _add_rule_set(command: argparse.ArgumentParser, help_text: str = _RULE_SET_HELP) -> None:
    # None: not given; cmp.cli._config fills it from CMP_RULE_SET, the pyproject.toml table or "default".
    command.add_argument("--rule-set", choices=("default", "extended"), help=help_text)


def _add_walk(command: argparse.ArgumentParser) -> None:
    """--include and --exclude: which files a FOLDER argument stands for."""
    command.add_argument(
        "--include",
        action="append",
        metavar="GLOB",
        help="in a folder, check the files matching GLOB (repeatable; default: *.json); a GLOB without / "
        "matches the file's name, one with / its path from the project's folder",
    )
    command.add_argument(
        "--exclude", action="append", metavar="GLOB", help="in a folder, leave out the files matching GLOB (repeatable)"
    )


def _add_lint_rules(command: argparse.ArgumentParser) -> None:
    """--[no-]strict: lint's setting (lint-strict), for lint and gate."""
    command.add_argument("--strict", action=argparse.BooleanOptionalAction, help="lint findings fail too (exit 1)")


def _add_exit_zero(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--exit-zero", action="store_true", help="exit 0 even when packets fail (2 still for usage and I/O errors)"
    )


_IGNORE_HELP = (
    "leave out the findings of a redaction rule (redaction/aws-key; a prefix such as redaction/extended "
    "names all of its rules): they are neither reported nor fail the run (repeatable; CI output only)"
)
_IGNORE_LINT_HELP = (
    "leave out the findings of a rule: a redaction rule (redaction/aws-key) or a lint rule (lint/sentences); "
    "a prefix such as redaction/extended or lint names all of its rules (repeatable)"
)


def _add_ignore(command: argparse.ArgumentParser, help_text: str = _IGNORE_HELP) -> None:
    command.add_argument("--ignore", action="append", metavar="RULE", help=help_text)
    command.add_argument(
        "--select",
        action="append",
        metavar="RULE",
        help="report only the findings of these redaction rules (repeatable; ids and prefixes as for --ignore)",
    )


def _add_writer(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--writer",
        action="store_true",
        help="hold packets to the writer's rule, as new, save and gate do: a credential in any string of a "
        "packet (id, tags, project, provenance) fails it as a redaction finding, where without it is a warning",
    )


def _add_baseline(command: argparse.ArgumentParser) -> None:
    """--baseline, for check, lint and gate alike: a repository's hook must judge as its CI run does."""
    command.add_argument(
        "--baseline",
        metavar="PATH",
        help="a file the baseline command wrote: its redaction findings are reported as known and do not fail "
        "the run; only new ones do (entries no longer found are listed on stderr)",
    )


def _check_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    check_cmd = commands.add_parser(
        "check",
        help="validate and redaction-scan packets",
        description="Validate packets and scan them for secrets and personal paths.",
        epilog=_CHECK_OUTPUT + "\n" + _examples(prog, _CHECK_EXAMPLES),
        formatter_class=_HelpFormatter,
    )
    check_cmd.add_argument("files", nargs="*", metavar="FILE", help="packet files; - reads stdin")
    check_cmd.add_argument(
        "--jsonl", action="append", metavar="FILE", help="a JSON Lines file (- for stdin), one packet per line"
    )
    _add_jobs(check_cmd)
    check_cmd.add_argument("--format", choices=offered("check"), help=choices_help("check"))
    check_cmd.add_argument(
        "-q", "--quiet", action="store_true", help="print only what fails: nothing for a packet that is accepted"
    )
    check_cmd.add_argument(
        "--lenient",
        action=argparse.BooleanOptionalAction,
        help="schema errors are warnings (exit 0); intake errors still fail",
    )
    check_cmd.add_argument(
        "--allow-unredacted", action="store_true", help="redaction findings are warnings (whole-packet override)"
    )
    _show_found(check_cmd)
    _add_rule_set(check_cmd)
    _add_writer(check_cmd)
    _add_walk(check_cmd)
    _add_ignore(check_cmd)
    _add_baseline(check_cmd)
    _add_exit_zero(check_cmd)
    check_cmd.add_argument(
        "--show-config", action="store_true", help="print each setting, its value and where it came from; check nothing"
    )


def _fmt_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    fmt_cmd = commands.add_parser(
        "fmt",
        help="print or rewrite packets in canonical form",
        description=_FMT_DESCRIPTION,
        epilog=_examples(prog, _FMT_EXAMPLES),
        formatter_class=_HelpFormatter,
    )
    fmt_cmd.add_argument("files", nargs="+", metavar="FILE", help="packet files; - reads stdin")
    mode = fmt_cmd.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="list files that are not canonical; exit 1 if any")
    mode.add_argument("--write", action="store_true", help="rewrite files in place, atomically")
    mode.add_argument(
        "--diff",
        action="store_true",
        help="print a unified diff of each file against its canonical bytes, writing nothing; exit 1 if any "
        "differs (a packet in which a redaction rule finds anything is never diffed)",
    )
    fmt_cmd.add_argument(
        "--force", action="store_true", help="with --write: rewrite read-only files and files with other hard links too"
    )
    fmt_cmd.add_argument("--allow-unredacted", action="store_true", help="format packets with redaction findings too")
    fmt_cmd.add_argument(
        "-q", "--quiet", action="store_true", help="no summary line on stderr after --check or --write"
    )
    _show_found(fmt_cmd)
    _add_rule_set(fmt_cmd)
    _add_walk(fmt_cmd)


def _lint_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    lint_cmd = commands.add_parser(
        "lint",
        help="advise on the writing rules (sentences, code, local state, ...)",
        description=_LINT_DESCRIPTION,
        epilog=_LINT_OUTPUT + "\n" + _examples(prog, _LINT_EXAMPLES),
        formatter_class=_HelpFormatter,
    )
    lint_cmd.add_argument("files", nargs="+", metavar="FILE", help="packet files; - reads stdin")
    lint_cmd.add_argument("-q", "--quiet", action="store_true", help="no summary line on stderr")
    lint_cmd.add_argument("--format", choices=offered("lint"), help=phrases_help("lint"))
    _add_lint_rules(lint_cmd)
    _show_found(lint_cmd)
    _add_rule_set(lint_cmd)
    _add_writer(lint_cmd)
    _add_walk(lint_cmd)
    _add_ignore(lint_cmd, _IGNORE_LINT_HELP)
    _add_baseline(lint_cmd)
    _add_exit_zero(lint_cmd)


def _baseline_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    baseline_cmd = commands.add_parser(
        "baseline",
        help="write the redaction findings packets hold now, for check --baseline",
        description="Check the packets and write each redaction finding as a fingerprint (a keyed hash of "
        "what matched, never the text itself) with its file, field, category and rule: a versioned JSON "
        "file that check --baseline reads, so that a CI run over a repository's packets reports those "
        "findings as known and fails only on new ones. Written to --output (or the baseline setting), "
        "else to stdout; the salt of a baseline already there is kept, so unchanged findings keep their "
        "fingerprints. Nothing is written when a source cannot be read (exit 2).",
        epilog="examples:\n  %(prog)s packets -o .cmp-baseline.json\n  "
        f"{prog} check --baseline .cmp-baseline.json packets",
        formatter_class=_HelpFormatter,
    )
    baseline_cmd.add_argument("files", nargs="*", metavar="FILE", help="packet files or folders; - reads stdin")
    baseline_cmd.add_argument(
        "--jsonl", action="append", metavar="FILE", help="a JSON Lines file (- for stdin), one packet per line"
    )
    baseline_cmd.add_argument(
        "-o", "--output", dest="baseline", metavar="PATH", help="the baseline file to write (default: stdout)"
    )
    baseline_cmd.add_argument("-q", "--quiet", action="store_true", help="no summary line on stderr")
    _add_rule_set(baseline_cmd)
    _add_walk(baseline_cmd)
    _add_ignore(baseline_cmd)


def _rules_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    rules_cmd = commands.add_parser(
        "rules",
        help="list every rule a result can name",
        description="List every rule a result of check, lint, chain or audit can name: the finding codes, "
        "the redaction categories of both rule sets (redaction/CATEGORY, redaction/extended/CATEGORY), the "
        "advice codes and the lint rules (lint/RULE), each with its kind, a description, its help text and "
        "a link to its section of docs/rules.md. The ids are the ones SARIF's ruleId and JSON's code carry.",
        epilog=_RULES_OUTPUT + "\n" + _examples(prog, _RULES_EXAMPLES),
        formatter_class=_HelpFormatter,
    )
    rules_cmd.add_argument(
        "--format",
        choices=("text", "json", "markdown"),
        default="text",
        help="text lines (default), one JSON document, or the Markdown page docs/rules.md",
    )


def _gate_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    gate_cmd = commands.add_parser(
        "gate",
        help="check, canonical form and lint in one pass (the pre-commit hook)",
        description=_GATE_DESCRIPTION,
        epilog=_GATE_OUTPUT + "\n" + _examples(prog, _GATE_EXAMPLES),
        formatter_class=_HelpFormatter,
    )
    gate_cmd.add_argument("files", nargs="+", metavar="FILE", help="packet files or folders; - reads stdin")
    gate_cmd.add_argument("-q", "--quiet", action="store_true", help="no summary line on stderr")
    gate_cmd.add_argument("--format", choices=offered("gate"), default="text", help=phrases_help("gate"))
    # The settings of check and lint that a repository keeps in its configuration: a hook
    # must judge as the repository's own check and lint runs do.
    _add_lint_rules(gate_cmd)
    _show_found(gate_cmd)
    _add_rule_set(gate_cmd)
    _add_walk(gate_cmd)
    _add_ignore(gate_cmd, _IGNORE_LINT_HELP)
    _add_baseline(gate_cmd)
    _add_exit_zero(gate_cmd)


def _conformance_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    conf_cmd = commands.add_parser(
        "conformance",
        help="run the conformance vectors against this library or another",
        description=_CONFORMANCE_DESCRIPTION,
        epilog=_CONFORMANCE_OUTPUT + "\n" + _examples(prog, _CONFORMANCE_EXAMPLES),
        formatter_class=_HelpFormatter,
    )
    conf_cmd.add_argument(
        "--impl",
        metavar="COMMAND",
        help="test another implementation over the JSON-lines protocol; COMMAND is split into words "
        "by POSIX shell rules and run without a shell (use sh -c '...' for pipes)",
    )
    conf_cmd.add_argument("--vectors", metavar="DIR", help=f"vector folder (default: {DEFAULT_VECTORS_TEXT})")
    conf_cmd.add_argument("--filter", metavar="AREA", action="append", help="only this area (repeatable)")
    conf_cmd.add_argument(
        "--format",
        choices=("text", "json", "junit"),
        default="text",
        help="text lines (default), one JSON document, or a JUnit XML report with a testcase per vector",
    )
    conf_cmd.add_argument(
        "--timeout", type=float, default=10.0, metavar="SECONDS", help="per-exchange limit for --impl (default: 10)"
    )
    conf_cmd.add_argument(
        "--impl-stderr",
        metavar="FILE",
        help="where the implementation's stderr goes: - for this command's stderr, or a file to append to "
        "(default: discarded)",
    )


def _chain_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    chain_cmd = commands.add_parser(
        "chain",
        help="check how packets link up through parent_id",
        description=_CHAIN_DESCRIPTION,
        epilog=_CHAIN_OUTPUT + "\n" + _examples(prog, _CHAIN_EXAMPLES),
        formatter_class=_HelpFormatter,
    )
    chain_cmd.add_argument(
        "paths",
        nargs="*",
        metavar="DIR|FILE",
        help="folders (every *.json below, sorted) or packet files; - reads stdin",
    )
    chain_cmd.add_argument(
        "--jsonl", action="append", metavar="FILE", help="a JSON Lines file (- for stdin), one packet per line"
    )
    chain_cmd.add_argument(
        "--format", choices=("text", "json"), default="text", help="the tree and findings as text, or one JSON document"
    )
    chain_cmd.add_argument(
        "--closed", action="store_true", help="the set holds every packet: a parent_id naming none of them is a finding"
    )
    _add_walk(chain_cmd)


def _new_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    new_cmd = commands.add_parser(
        "new",
        help="write a fresh packet from options",
        description="Write a fresh, conforming packet: a new id, created_at of now, the members given. "
        "Values the schema refuses are each reported on stderr (exit 2); a redaction hit stops it (exit 1).",
        epilog=_examples(prog, _NEW_EXAMPLES),
        formatter_class=_HelpFormatter,
    )
    new_cmd.add_argument("--goal", help="what the session is for, in one sentence (required without --draft)")
    new_cmd.add_argument(
        "--next-step", help="the first thing the next session does, in one sentence (required without --draft)"
    )
    new_cmd.add_argument(
        "--draft",
        metavar="FILE",
        help="the whole packet from a draft (a document of `schema --draft`; - is stdin), instead of the options",
    )
    for option, help_text in (
        ("--constraint", "a constraint (repeatable)"),
        ("--success-criterion", "an observable done-condition (repeatable; v0.2)"),
        ("--open-question", "an open question (repeatable)"),
        ("--tag", "a tag: lowercase letters, digits and dashes (repeatable)"),
    ):
        new_cmd.add_argument(option, action="append", metavar="TEXT", help=help_text)
    new_cmd.add_argument(
        "--parent",
        metavar="FILE|ID",
        help="the packet this one continues, parent_id its id (v0.2): a packet file, a stored id, or latest "
        "(the store's latest head)",
    )
    new_cmd.add_argument("--version", choices=SUPPORTED_VERSIONS, default="0.2", help="ltm_version (default: 0.2)")
    new_cmd.add_argument("-o", "--output", metavar="FILE", help="write a new file (default: stdout)")
    new_cmd.add_argument("--force", action="store_true", help="with -o: replace a file that exists")
    new_cmd.add_argument("--allow-unredacted", action="store_true", help="write the packet despite redaction hits")
    _add_store(new_cmd)


def _example_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    example_cmd = commands.add_parser(
        "example",
        help="print an example packet",
        description="Print an example packet of our own, canonical, that passes check: a model to edit.",
        epilog=_examples(prog, _NEW_EXAMPLES[3:]),
        formatter_class=_HelpFormatter,
    )
    example_cmd.add_argument("--version", choices=SUPPORTED_VERSIONS, default="0.2", help="ltm_version (default: 0.2)")


def _resume_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    resume_cmd = commands.add_parser(
        "resume",
        help="print the resume block the next session starts from",
        description="Print the resume block of a packet: a file, an id in the store, or (with neither) the "
        "store's latest head. Each field's text stays on its own escaped line, so no packet text can add a "
        "heading, item or tag of its own. The block's size goes to stderr. A packet with redaction hits is "
        "refused (exit 1) unless --allow-unredacted, which shows placeholders instead.",
        epilog=_examples(prog, _RESUME_EXAMPLES),
        formatter_class=_HelpFormatter,
    )
    resume_cmd.add_argument(
        "target",
        nargs="?",
        metavar="ID|FILE",
        help="a packet file (- is stdin) or a stored id (default: the latest head)",
    )
    resume_cmd.add_argument(
        "--style", choices=("markdown", "xml"), default="markdown", help="markdown (default) or xml"
    )
    resume_cmd.add_argument(
        "--max-chars",
        type=_positive_int,
        metavar="N",
        help="at most N characters: the middle sections are left out first, and the block says which",
    )
    resume_cmd.add_argument(
        "--hook",
        choices=("claude",),
        help="claude: answer a Claude Code SessionStart hook (its JSON on stdin; the block as additionalContext)",
    )
    resume_cmd.add_argument(
        "--allow-unredacted",
        action="store_true",
        help="render a packet with redaction hits, each shown as a placeholder",
    )
    resume_cmd.add_argument("-q", "--quiet", action="store_true", help="do not print the block's size on stderr")
    _add_rule_set(resume_cmd)
    _add_store(resume_cmd)


def _scrub_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    scrub_cmd = commands.add_parser(
        "scrub",
        help="replace what the redaction pre-flight finds with placeholders",
        description="Replace every match of every redaction pattern in the scanned fields with a placeholder "
        "naming its category ([redacted:aws-key]), until none is left. What was replaced is listed by field "
        "and category, never shown.",
        epilog=_examples(prog, _SCRUB_EXAMPLES),
        formatter_class=_HelpFormatter,
    )
    scrub_cmd.add_argument("files", nargs="+", metavar="FILE", help="packet files; - reads stdin")
    scrub_cmd.add_argument("--write", action="store_true", help=_WRITE_HELP)
    scrub_cmd.add_argument("--force", action="store_true", help=_FORCE_HELP)
    _add_rule_set(scrub_cmd, _SCRUB_RULE_SET_HELP)


def _migrate_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    migrate_cmd = commands.add_parser(
        "migrate",
        help="bring packets to another version",
        description="Bring packets to another supported version. Up is additive; down is refused, naming "
        "each member the older version lacks, unless --drop leaves them out.",
        epilog=_examples(prog, _MIGRATE_EXAMPLES),
        formatter_class=_HelpFormatter,
    )
    migrate_cmd.add_argument("files", nargs="+", metavar="FILE", help="packet files; - reads stdin")
    migrate_cmd.add_argument("--to", required=True, choices=SUPPORTED_VERSIONS, help="the version to migrate to")
    migrate_cmd.add_argument("--drop", action="store_true", help="leave out members the target version lacks")
    migrate_cmd.add_argument("--write", action="store_true", help=_WRITE_HELP)
    migrate_cmd.add_argument("--force", action="store_true", help=_FORCE_HELP)


def _schema_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    schema_cmd = commands.add_parser(
        "schema",
        help="print the JSON Schema of a version",
        description="Print the JSON Schema of a version: the normative file byte for byte, or with --annotated "
        "a copy that gives every member a description (what to write and its bounds) and examples, for "
        "editors and agents. The annotated copy accepts exactly what the normative one accepts. With --draft, "
        "the draft schema a model fills through strict structured output or strict tool use: no member the "
        "writer fills (ltm_version, id, created_at, parent_id), every member required and optional ones "
        "nullable, bounds in the descriptions (`new --draft FILE` makes the document a packet).",
        epilog=_examples(prog, _SCHEMA_EXAMPLES),
        formatter_class=_HelpFormatter,
    )
    schema_cmd.add_argument("--version", choices=SUPPORTED_VERSIONS, default="0.2", help="the version (default: 0.2)")
    schema_form = schema_cmd.add_mutually_exclusive_group()
    schema_form.add_argument("--annotated", action="store_true", help="descriptions and examples for every member")
    schema_form.add_argument("--draft", action="store_true", help="the draft schema for strict structured output")


def _audit_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    audit_cmd = commands.add_parser(
        "audit",
        help="re-check every packet a deployed store holds",
        description="Re-check every packet in the reference server's SQLite store, opened read-only (it may "
        "run while the server writes): what check finds in each body (schema findings, redaction hits), a "
        "body that is not canonical, and a row whose id, goal or created_at disagrees with its body. Then "
        "one summary line. Deleted packets only with --include-deleted. Exit 1 if anything was found.",
        formatter_class=_HelpFormatter,
    )
    audit_cmd.add_argument(
        "store", metavar="STORE", help="the server's SQLite database file, or a folder of *.json and *.jsonl exports"
    )
    audit_cmd.add_argument("--include-deleted", action="store_true", help="audit deleted packets too")
    audit_cmd.add_argument(
        "--by", choices=("owner", "team"), help="after the summary, the packets with findings per owner or team"
    )
    audit_cmd.add_argument("--format", choices=offered("audit"), default="text", help=phrases_help("audit"))
    audit_cmd.add_argument(
        "--deadline",
        type=float,
        metavar="SECONDS",
        help="stop after this many seconds, with one line and exit 2 (default: no deadline; a malformed "
        "store can make SQLite read for ever, so an unattended audit should set one)",
    )
    _add_jobs(audit_cmd)
    _show_found(audit_cmd)
    _add_rule_set(audit_cmd)


def _save_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    save_cmd = commands.add_parser(
        "save",
        help="store a packet in the local store",
        description="Check a packet and store it in the local store, a folder of canonical <id>.json files "
        "(its id must be a ULID, as new makes). Prints the id. A file is never overwritten: saving the "
        "same packet again is a no-op, a different packet with a stored id is refused (exit 1), as is one "
        "check refuses, with check's lines on stderr. Exit 2: the file or the store cannot be read or written.",
        epilog=_examples(prog, _STORE_EXAMPLES),
        formatter_class=_HelpFormatter,
    )
    save_cmd.add_argument("file", nargs="?", metavar="FILE", help="the packet file; - reads stdin")
    save_cmd.add_argument(
        "--hook",
        choices=("claude",),
        help="claude: as a Claude Code PreCompact, SessionEnd or Stop hook (its JSON on stdin), save the "
        "hand-off draft as a packet continuing the latest head; no draft is nothing to save (exit 0)",
    )
    save_cmd.add_argument(
        "--draft",
        metavar="FILE",
        help="with --hook claude: the hand-off draft (default: .cmp/handoff.json in the hook's folder)",
    )
    save_cmd.add_argument("--allow-unredacted", action="store_true", help="store the packet despite redaction hits")
    save_cmd.add_argument(
        "--push", action="store_true", help="then push it to the team server too (see push; the pre-flight runs first)"
    )
    _add_team(save_cmd, "with --push: into this team's scope (default: your personal scope)")
    _add_store(save_cmd)


def _ls_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    ls_cmd = commands.add_parser(
        "ls",
        help="list the packets in the local store",
        description="List the packets in the local store, newest first (by created_at, then id).",
        epilog=_LS_OUTPUT + "\n" + _examples(prog, _STORE_EXAMPLES[1:2]),
        formatter_class=_HelpFormatter,
    )
    ls_cmd.add_argument("--tag", metavar="TAG", help="only packets with this tag")
    ls_cmd.add_argument("--grep", metavar="TEXT", help="only packets whose goal holds TEXT (ignoring case)")
    ls_cmd.add_argument("--limit", type=int, metavar="N", help="at most N packets (--remote: 1 to 500, default 50)")
    ls_cmd.add_argument("--format", choices=("text", "json"), default="text", help="text lines, or one JSON document")
    ls_cmd.add_argument("--json", dest="format", action="store_const", const="json", help="--format json")
    ls_cmd.add_argument(
        "--remote", action="store_true", help="list the team server's packets instead (your personal scope, or -t's)"
    )
    _add_team(ls_cmd, "with --remote: this team's packets")
    ls_cmd.add_argument("--cursor", metavar="C", help="with --remote: go on from where a listing said more follow")
    _add_store(ls_cmd)


def _show_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    show_cmd = commands.add_parser(
        "show",
        help="summarise one packet of the local store",
        description="A summary of one stored packet, one field a line: id, goal, next step, how many "
        "decisions, attempts and open questions, tags, parent, created, author, version. Text a redaction "
        "rule matches is shown as scrub would write it. A missing id is one line, exit 2.",
        epilog=_examples(prog, _STORE_EXAMPLES[2:]),
        formatter_class=_HelpFormatter,
    )
    show_cmd.add_argument("id", metavar="ID", help="the packet's id")
    _add_store(show_cmd)


def _mcp_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    mcp_cmd = commands.add_parser(
        "mcp",
        help="serve the writer's tools to an agent (Model Context Protocol, stdio)",
        description="Run a Model Context Protocol server over stdin and stdout with tools for an agent that "
        "writes packets: check, lint, scrub, format, new, example, migrate, schema, and save, ls, show, "
        "resume on a local store. Needs the MCP SDK (the mcp extra): pip install 'mcp>=2.3,<3'. Register it "
        "with an MCP client as the command core-memory-packet mcp.",
        formatter_class=_HelpFormatter,
    )
    mcp_cmd.add_argument("--store", metavar="PATH", help=_STORE_HELP + "; for save, ls, show, resume")


_SERVER_EXAMPLES = (
    ("{prog} server init", "make the database and its first user, root; print root's token (once)"),
    ("{prog} server --addr :8080 --external-url https://packets.example.org", "serve every interface"),
    ("{prog} server --db postgresql://cmp@db.internal/cmp migrate", "bring a PostgreSQL schema up to date"),
    ("{prog} server issue-token laptop --user root --expires-in 90", "a second token for root"),
)
_SERVER_DB_HELP = (
    "the database: a file path or sqlite:///PATH (default: $CMP_SERVER_DB, else server.db in the user's data "
    "folder, e.g. ~/.local/share/core-memory-packet), or postgresql://USER:PASSWORD@HOST/NAME"
)


def _server_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    server_cmd = commands.add_parser(
        "server",
        help="serve packets to a team: the ltm protocol on SQLite or PostgreSQL",
        description="Serve the ltm HTTP protocol (what the reference ltm server serves: push, pull, list, "
        "delete, teams, invites), every push judged by check. Without an action it serves; the database must "
        "be initialized (server init) and at the newest schema (server migrate). Needs the server extra. "
        "See docs/server.md.",
        epilog=_examples(prog, _SERVER_EXAMPLES),
        formatter_class=_HelpFormatter,
    )
    server_cmd.add_argument("--db", metavar="DB", help=_SERVER_DB_HELP)
    server_cmd.add_argument(
        "--addr", metavar="HOST:PORT", help="where to listen (default 127.0.0.1:8080; :8080 listens on every interface)"
    )
    server_cmd.add_argument(
        "--external-url",
        metavar="URL",
        help="the server's public base URL, for invite links (default: $CMP_SERVER_EXTERNAL_URL, else the "
        "request's own scheme and Host)",
    )
    server_cmd.add_argument(
        "--trust-proxy",
        action="store_true",
        help="read X-Forwarded-Proto and X-Forwarded-Host (only behind a reverse proxy that sets them)",
    )
    server_cmd.add_argument(
        "--redaction",
        choices=("on", "flag", "off"),
        default="on",
        help="on (default): refuse a packet with a redaction hit, the hit masked in the answer; flag: store it "
        "flagged (clients read the flag); off: store it",
    )
    server_cmd.add_argument(
        "--metrics",
        action="store_true",
        help="serve Prometheus metrics at GET /metrics (no auth: expose it to the scraper alone)",
    )
    server_cmd.add_argument(
        "--lenient",
        action="store_true",
        help="store a packet whose only errors are schema errors, as it came, flagged not-conforming",
    )
    server_cmd.add_argument(
        "--workers",
        type=_positive_int,
        default=1,
        metavar="N",
        help="serve from N processes on the one address (default 1; on PostgreSQL, one per core)",
    )
    actions = server_cmd.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser)
    described = (
        ("migrate", "apply the schema migrations the database lacks"),
        ("init", "migrate, then make the first user, root, and print its token (refused once the database has users)"),
        ("issue-token", "print a new token: for a new user NAME, or with --user for an existing one"),
        ("tokens", "list the tokens: hash prefix, user, display, label, created, expiry (never the token)"),
        ("revoke-token", "revoke a token by its hash prefix (8+ hex digits) or its label"),
        ("export", "print the whole database as JSON Lines (a backup, or the way to another engine)"),
        ("import", "load an export into a new database (migrated, no users yet): all rows or none"),
    )
    made = {
        name: actions.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        for name, text in described
    }
    for action in made.values():
        # SUPPRESS: a --db given before the action is not reset by the action's default.
        action.add_argument("--db", metavar="DB", default=argparse.SUPPRESS, help=_SERVER_DB_HELP)
    issue = made["issue-token"]
    issue.add_argument("name", metavar="NAME", help="the new user's display name, and the token's label")
    issue.add_argument("--email", metavar="EMAIL", help="the user with this email gets the token (made if none has it)")
    issue.add_argument("--user", metavar="USER", help="an existing user (id, email or display name) gets the token")
    issue.add_argument("--label", metavar="LABEL", help="the token's name in 'server tokens' (default: NAME)")
    issue.add_argument("--expires-in", type=_positive_int, metavar="DAYS", help="the token stops working after DAYS")
    made["import"].add_argument("file", metavar="FILE", help="the export, as server export wrote it")
    made["revoke-token"].add_argument("ref", metavar="REF", help="the token's hash prefix or its label")


def _add_team(command: argparse.ArgumentParser, help_text: str, *, required: bool = False) -> None:
    command.add_argument("-t", "--team", metavar="TEAM", required=required, help=help_text)


_REMOTE_EXAMPLES = (
    ("{prog} auth https://packets.example.org", "read a token on stdin, check it, keep it (mode 0600)"),
    ("{prog} push next.json -t backend", "check, then send a packet into the team backend"),
    ("{prog} ls --remote -t backend", "the team's packets on the server"),
    ("{prog} pull 01J9X8K2QZ7N4M0WXY00000001 -o next.json", "a packet from the server, checked on arrival"),
    ("{prog} sync -t backend", "push what the store has and the server lacks, pull the team's packets"),
)
_SERVER_NOTE = (
    "The server and token: CMP_SERVER and CMP_TOKEN, else what `auth` kept, else the reference ltm "
    "client's (read only). See docs/client.md."
)


def _remote_parser(
    commands: argparse._SubParsersAction[_Parser], prog: str, name: str, summary: str, description: str
) -> argparse.ArgumentParser:
    made: argparse.ArgumentParser = commands.add_parser(
        name,
        help=summary,
        description=f"{description} {_SERVER_NOTE}",
        epilog=_examples(prog, _REMOTE_EXAMPLES),
        formatter_class=_HelpFormatter,
    )
    return made


def _auth_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    auth = _remote_parser(
        commands,
        prog,
        "auth",
        "log in to a team server: check the token, keep it",
        "Check that the server answers and takes the token, then keep the token for that server in the "
        "credentials file (mode 0600) and make it the default server. Without TOKEN: the token kept for "
        "that server, else one line read from stdin (a prompt on a terminal), so it is in no shell history. "
        "The token is never printed.",
    )
    auth.add_argument("url", metavar="URL", help="the server's base URL, e.g. https://packets.example.org")
    auth.add_argument("token", nargs="?", metavar="TOKEN", help="the token (default: read from stdin)")


def _whoami_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    _remote_parser(
        commands,
        prog,
        "whoami",
        "the server, and whether it takes the token",
        "Print the server, where it was configured, and the first 8 hex digits of the token's SHA-256 "
        "(never the token), once the server has taken the token.",
    )


def _push_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    push = _remote_parser(
        commands,
        prog,
        "push",
        "send a packet to the team server (checked first)",
        "Check a packet as a writer (check's rules, and a credential in any string blocks it too), then "
        "send its canonical bytes; nothing is sent when the check refuses (exit 1). Prints the id.",
    )
    push.add_argument("source", metavar="FILE|ID|-", help="a packet file, a stored packet's id, or - for stdin")
    _add_team(push, "into this team's scope (default: your personal scope)")
    push.add_argument("--allow-unredacted", action="store_true", help="send it despite redaction hits (not advised)")
    _add_store(push)


def _pull_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    pull = _remote_parser(
        commands,
        prog,
        "pull",
        "get a packet from the team server (checked on arrival)",
        "Get a packet and check it: one that does not conform, is another packet, or holds a redaction "
        "hit is refused (exit 2). Prints its canonical text, or writes it to -o FILE.",
    )
    pull.add_argument("id", metavar="ID", help="the packet's id")
    pull.add_argument("-o", "--output", metavar="FILE", help="write it to FILE (the canonical bytes and a newline)")
    pull.add_argument("--save", action="store_true", help="also keep it in the local store")
    _add_store(pull)


def _rm_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    rm = _remote_parser(
        commands,
        prog,
        "rm",
        "delete a packet on the team server",
        "Delete a packet on the server (yours, or one in a team you own). The local store is not touched: "
        "its files are never deleted.",
    )
    rm.add_argument("id", metavar="ID", help="the packet's id")


def _teams_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    teams = _remote_parser(
        commands, prog, "teams", "create, list, delete, leave teams; list members", "Teams on the team server."
    )
    actions = teams.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser, required=True)
    for name, text in (
        ("create", "create a team; you are its owner"),
        ("rm", "delete a team and its packets (its owner)"),
        ("members", "list a team's members: display name, role, joined, user id"),
        ("leave", "leave a team"),
    ):
        actions.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".").add_argument(
            "name", metavar="NAME", help="the team's name"
        )
    listing = actions.add_parser("ls", help="the teams you are in", description="The teams you are in.")
    for made in (listing, actions.choices["members"]):
        made.add_argument("--json", action="store_true", help="one JSON document")
    remove = actions.add_parser("remove", help="remove a member (the owner)", description="Remove a member.")
    remove.add_argument("name", metavar="NAME", help="the team's name")
    remove.add_argument("user", metavar="USER_ID", help="the member's user id (teams members lists it)")


def _invite_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    invite = _remote_parser(
        commands,
        prog,
        "invite",
        "make an invite into a team",
        "Make a single-use invite into a team (valid 7 days): its URL on stdout, when it expires on stderr.",
    )
    _add_team(invite, "the team", required=True)


def _join_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    join = _remote_parser(
        commands,
        prog,
        "join",
        "join a team by invite",
        "Accept an invite (its URL, or its code for the configured server). A token is sent only to the "
        "server it is kept for: an invite of another server is refused, unless --new-identity joins there "
        "as a new user, whose token is then kept for that server (and it becomes the default).",
    )
    join.add_argument("invite", metavar="URL|CODE", help="the invite's URL, or its code")
    join.add_argument("--new-identity", action="store_true", help="join as a new user, without sending any token")
    join.add_argument("--display", metavar="NAME", help="with a new identity: the new user's display name")


def _sync_command(commands: argparse._SubParsersAction[_Parser], prog: str) -> None:
    sync = _remote_parser(
        commands,
        prog,
        "sync",
        "push what the local store has and the server lacks, pull what it lacks",
        "Compare the local store with a scope on the server (your personal scope, or -t's): push each "
        "stored packet the server lacks (checked first), then pull each of the server's packets the store "
        "lacks (checked, then saved). One line a packet, then what it did. Exit 1 if any was not moved.",
    )
    _add_team(sync, "this team's scope (default: your personal scope)")
    _add_store(sync)


# A run makes only the parser of the command it runs (see build_parser): all of them
# would slow every CLI start-up.
_PARSERS: dict[str, Callable[[argparse._SubParsersAction[_Parser], str], None]] = {
    "check": _check_command,
    "fmt": _fmt_command,
    "lint": _lint_command,
    "baseline": _baseline_command,
    "rules": _rules_command,
    "gate": _gate_command,
    "conformance": _conformance_command,
    "chain": _chain_command,
    "new": _new_command,
    "example": _example_command,
    "resume": _resume_command,
    "scrub": _scrub_command,
    "migrate": _migrate_command,
    "schema": _schema_command,
    "audit": _audit_command,
    "save": _save_command,
    "ls": _ls_command,
    "show": _show_command,
    "mcp": _mcp_command,
    "server": _server_command,
    "auth": _auth_command,
    "whoami": _whoami_command,
    "push": _push_command,
    "pull": _pull_command,
    "rm": _rm_command,
    "teams": _teams_command,
    "invite": _invite_command,
    "join": _join_command,
    "sync": _sync_command,
}


def build_parser(prog: str = CONSOLE_PROG, *, only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; ``prog`` names the program in usage, help and examples. The
    subcommand is ``command`` in the parsed arguments; with ``only``, that command is the
    one choice, read exactly as the whole parser reads it.
    """
    parser = _Parser(
        prog=prog,
        description="Validate, redact and canonically format Core Memory Packets (v0.1, v0.2).",
        epilog=_examples(
            prog, _CHECK_EXAMPLES, _FMT_EXAMPLES[:3], _STORE_EXAMPLES[:1], _RESUME_EXAMPLES[:1], _CONFORMANCE_EXAMPLES
        ),
        formatter_class=_HelpFormatter,
    )
    # The version names the package, however the program was started.
    parser.add_argument("-V", "--version", action="version", version=f"{CONSOLE_PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    for name, populate in _PARSERS.items():
        if only is None or name == only:
            populate(commands, prog)

    return parser


def command_in(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs, if its first word that is not an option names one (-h, -V take no value)."""
    word = next((arg for arg in argv if not arg.startswith("-")), None)
    return word if word in _PARSERS else None


def subcommand(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    """The parser of the command ``name`` in ``parser`` (build_parser's)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found: argparse.ArgumentParser = action.choices[name]
            return found
    raise KeyError(name)


def choices_of(command: argparse.ArgumentParser) -> dict[str, tuple[str, ...]]:
    """A command's own choices for an option, by argument (its --format's, --rule-set's)."""
    return {action.dest: tuple(action.choices) for action in command._actions if action.choices is not None}
