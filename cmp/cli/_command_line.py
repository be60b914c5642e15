"""The program's names, and the command line a pre-commit hook runs, read without argparse.

A hook runs ``core-memory-packet check`` followed by the names of the files it was given.
argparse's import (with gettext, and locale once a parser is made) and the check parser
are about a seventh of that run's start-up, for a command line that needs none of it:
``check``, then operands, each a file name or ``-``, never an option. :func:`plain_check`
reads exactly that shape; any other command line is the parser's (cmp.cli._args).

The invariant: for a command line it takes, :func:`plain_check` gives the arguments the
check parser gives (its answer for the other members, generated into cmp/_precompiled.py
by tools/generate_precompiled.py from the parser itself, and the operands as ``files``),
and it takes no command line the parser would read otherwise. tests/cli/test_plain_check.py
holds the two together on generated command lines, and the generated answer to the parser.
"""

from __future__ import annotations

from cmp._precompiled import CHECK_CHOICES, CHECK_OTHER_ARGUMENTS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace
    from collections.abc import Mapping, Sequence
else:
    # What argparse.Namespace is to a command: names with values (argparse's import is the cost).
    from types import SimpleNamespace as Namespace

CONSOLE_PROG = "core-memory-packet"
MODULE_PROG = "python -m cmp"

# The check command's own choices for an option, by argument (what cmp.cli._config checks
# a value against): argparse's, as the parser states them.
CHOICES: Mapping[str, tuple[str, ...]] = CHECK_CHOICES


def plain_check(argv: Sequence[str]) -> Namespace | None:
    """The arguments of ``check FILE...`` (operands only), as the check parser reads them;
    None for any other command line."""
    if len(argv) < 2 or argv[0] != "check":
        return None
    for operand in argv[1:]:
        # argparse reads "-" as an operand, and anything else that starts with "-" as an
        # option (or, with no option like it, as a negative number): the parser's to read.
        if operand[:1] == "-" and operand != "-":
            return None
    return Namespace(**CHECK_OTHER_ARGUMENTS, files=list(argv[1:]))
