"""``migrate``: a packet as another supported version."""

from __future__ import annotations

import argparse
import functools

from cmp._migrate import migrate
from cmp.cli._output import Output
from cmp.cli._transform import run_transform
from cmp.findings import PacketError
from cmp.model import Packet


def _migrated(packet: Packet, *, to: str, drop: bool) -> tuple[Packet, list[str]]:
    dropped: list[str] = []
    if drop:
        try:
            migrate(packet, to)
        except PacketError as exc:  # the members the target version lacks, which drop leaves out
            dropped = [f"dropped {f.path} (version {to} has no such member)" for f in exc.findings]
    moved = migrate(packet, to, drop=drop)
    if moved.ltm_version == packet.ltm_version:
        return moved, dropped
    return moved, [f"version {packet.ltm_version} -> {to}", *dropped]


def run_migrate(args: argparse.Namespace, out: Output) -> int:
    return run_transform(args, out, "migrate", functools.partial(_migrated, to=args.to, drop=args.drop))
