"""``scrub``: every redaction match in a packet replaced by its category's placeholder."""

from __future__ import annotations

import argparse
import functools
from typing import TYPE_CHECKING

from cmp._scrub import placeholder, scrub
from cmp.cli._output import Output
from cmp.cli._transform import run_transform
from cmp.model import Packet

if TYPE_CHECKING:
    from cmp._redaction._rules import Rules


def _scrubbed(packet: Packet, rules: Rules) -> tuple[Packet, list[str]]:
    clean, replaced = scrub(packet, rules=rules)
    # What was found is not shown: the point of scrubbing is that it goes nowhere.
    return clean, [f"{r.field}: {r.category} replaced by {placeholder(r.category)}" for r in replaced]


def run_scrub(args: argparse.Namespace, out: Output) -> int:
    return run_transform(args, out, "scrub", functools.partial(_scrubbed, rules=args.rules))
