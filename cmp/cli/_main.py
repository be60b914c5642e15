"""The program: arguments parsed, the command run, its exit status; a stop signal is exit 128 + N."""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Sequence

from cmp.cli._check import run_check
from cmp.cli._command_line import CHOICES, CONSOLE_PROG, plain_check
from cmp.cli._config import ConfigError, configure, settings_lines
from cmp.cli._output import EXIT_USAGE, Output, error_line, silence_stdout
from cmp.cli._signals import Stopped

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

# Commands other than check are imported when they run: the conformance runner
# brings subprocess, selectors and the vector loader, and the writer's commands the
# writer's toolkit, which every check would otherwise load at start-up.


def _run_fmt(args: argparse.Namespace, out: Output) -> int:
    from cmp.cli._fmt import run_fmt

    return run_fmt(args, out)


def _run_conformance(args: argparse.Namespace, out: Output) -> int:
    from cmp.cli._conformance import run_conformance

    return run_conformance(args, out)


def _run_chain(args: argparse.Namespace, out: Output) -> int:
    from cmp.cli._chain import run_chain

    return run_chain(args, out)


def _run_lint(args: argparse.Namespace, out: Output) -> int:
    from cmp.cli._lint import run_lint

    return run_lint(args, out)


def _run_rules(args: argparse.Namespace, out: Output) -> int:
    from cmp.cli._rules import run_rules

    return run_rules(args, out)


def _run_gate(args: argparse.Namespace, out: Output) -> int:
    from cmp.cli._gate import run_gate

    return run_gate(args, out)


def _run_schema(args: argparse.Namespace, out: Output) -> int:
    from cmp.cli._schema import run_schema

    return run_schema(args, out)


def _run_new(args: argparse.Namespace, out: Output) -> int:
    from cmp.cli._new import run_new

    return run_new(args, out)


def _run_example(args: argparse.Namespace, out: Output) -> int:
    from cmp.cli._new import run_example

    return run_example(args, out)


def _run_resume(args: argparse.Namespace, out: Output) -> int:
    from cmp.cli._resume import run_resume

    return run_resume(args, out)


def _run_scrub(args: argparse.Namespace, out: Output) -> int:
    from cmp.cli._transform import run_scrub

    return run_scrub(args, out)


def _run_migrate(args: argparse.Namespace, out: Output) -> int:
    from cmp.cli._transform import run_migrate

    return run_migrate(args, out)


def _run_baseline(args: argparse.Namespace, out: Output) -> int:
    from cmp.cli._baseline import run_baseline

    return run_baseline(args, out)


def _run_audit(args: argparse.Namespace, out: Output) -> int:
    from cmp.cli._audit import run_audit

    return run_audit(args, out)


def _run_mcp(args: argparse.Namespace, out: Output) -> int:
    from cmp.cli._mcp import run_mcp

    return run_mcp(args, out)


def _run_save(args: argparse.Namespace, out: Output) -> int:
    if args.hook is not None:  # the hand-off of a Claude Code hook
        from cmp.cli._hooks import run_save_hook

        return run_save_hook(args, out)
    from cmp.cli._store import run_save

    return run_save(args, out)


def _run_ls(args: argparse.Namespace, out: Output) -> int:
    from cmp.cli._store import run_ls

    return run_ls(args, out)


def _run_show(args: argparse.Namespace, out: Output) -> int:
    from cmp.cli._store import run_show

    return run_show(args, out)


_COMMANDS: dict[str, Callable[[argparse.Namespace, Output], int]] = {
    "check": run_check,
    "fmt": _run_fmt,
    "conformance": _run_conformance,
    "chain": _run_chain,
    "new": _run_new,
    "example": _run_example,
    "resume": _run_resume,
    "scrub": _run_scrub,
    "migrate": _run_migrate,
    "lint": _run_lint,
    "gate": _run_gate,
    "schema": _run_schema,
    "rules": _run_rules,
    "mcp": _run_mcp,
    "audit": _run_audit,
    "baseline": _run_baseline,
    "save": _run_save,
    "ls": _run_ls,
    "show": _run_show,
}


def main(argv: Sequence[str] | None = None, prog: str = CONSOLE_PROG) -> int:
    """Run the command line ``argv`` (default: this process's arguments); the exit status."""
    out = Output(sys.stdout)
    line = sys.argv[1:] if argv is None else argv
    try:
        args = plain_check(line)  # check FILE...: the parser's arguments, without argparse
        choices = CHOICES
        if args is None:
            from cmp.cli._args import build_parser, choices_of, command_in, subcommand

            parser = build_parser(prog, only=command_in(line))
            try:
                args = parser.parse_args(line)
            except SystemExit as exc:
                return exc.code if isinstance(exc.code, int) else EXIT_USAGE
            if args.command is None:  # no subcommand was given
                parser.print_help()
                return EXIT_USAGE
            choices = choices_of(subcommand(parser, args.command))
        command = _COMMANDS[args.command]
        try:
            settings = configure(args, choices)
        except ConfigError as exc:
            error_line(str(exc))
            return EXIT_USAGE
        if getattr(args, "show_config", False):
            if args.files or args.jsonl:  # an argument it does not take is an error, not ignored
                error_line("--show-config checks nothing: give it no FILE or --jsonl")
                return EXIT_USAGE
            for line in settings_lines(settings, args.config_file):
                out.line(line)
            return 0
        status = command(args, out)
    except KeyboardInterrupt:
        error_line("interrupted")
        return 128 + signal.SIGINT
    except Stopped as exc:
        error_line("interrupted" if exc.signum == signal.SIGINT else f"stopped by {signal.Signals(exc.signum).name}")
        return 128 + exc.signum
    if out.lost:
        error_line("standard output is closed; results were not all written")
        if sys.stdout is not None:
            silence_stdout()
        return max(status, EXIT_USAGE)
    return status
