"""The program: arguments parsed, the command run, its exit status; a stop signal is exit 128 + N."""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
from collections.abc import Callable, Sequence

from cmp.cli._args import CONSOLE_PROG, build_parser, choices_of, command_in, subcommand
from cmp.cli._config import ConfigError, configure, settings_lines
from cmp.cli._output import EXIT_USAGE, Output, error_line, silence_stdout
from cmp.cli._signals import Stopped

# Each command's function, imported when it runs: a check loads no other command's modules.
_COMMANDS: dict[str, str] = {
    "check": "cmp.cli._check:run_check",
    "fmt": "cmp.cli._fmt:run_fmt",
    "conformance": "cmp.cli._conformance:run_conformance",
    "chain": "cmp.cli._chain:run_chain",
    "new": "cmp.cli._new:run_new",
    "example": "cmp.cli._new:run_example",
    "resume": "cmp.cli._resume:run_resume",
    "scrub": "cmp.cli._transform:run_scrub",
    "migrate": "cmp.cli._transform:run_migrate",
    "lint": "cmp.cli._lint:run_lint",
    "gate": "cmp.cli._gate:run_gate",
    "schema": "cmp.cli._schema:run_schema",
    "rules": "cmp.cli._rules:run_rules",
    "mcp": "cmp.cli._mcp:run_mcp",
    "audit": "cmp.cli._audit:run_audit",
    "baseline": "cmp.cli._baseline:run_baseline",
    "save": "cmp.cli._hooks:run_save",  # a packet, or a Claude Code hook's hand-off (--hook)
    "ls": "cmp.cli._store:run_ls",
    "show": "cmp.cli._store:run_show",
    "server": "cmp.cli._server:run_server",
    **{
        name: f"cmp.cli._remote:run_{name}"
        for name in ("auth", "whoami", "push", "pull", "rm", "teams", "invite", "join", "sync")
    },
}


def command_function(name: str) -> Callable[[argparse.Namespace, Output], int]:
    """The function that runs the command ``name``, its module imported now."""
    module, function = _COMMANDS[name].split(":")
    found: Callable[[argparse.Namespace, Output], int] = getattr(importlib.import_module(module), function)
    return found


def main(argv: Sequence[str] | None = None, prog: str = CONSOLE_PROG) -> int:
    """Run the command line ``argv`` (default: this process's arguments); the exit status."""
    out = Output(sys.stdout)
    line = sys.argv[1:] if argv is None else argv
    try:
        parser = build_parser(prog, only=command_in(line))
        try:
            args = parser.parse_args(line)
        except SystemExit as exc:
            return exc.code if isinstance(exc.code, int) else EXIT_USAGE
        if args.command is None:  # no subcommand was given
            parser.print_help()
            return EXIT_USAGE
        choices = choices_of(subcommand(parser, args.command))
        command = command_function(args.command)
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
