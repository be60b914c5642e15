"""``mcp``: the MCP server (:mod:`cmp.integrations.mcp`) over stdio, on the store ``--store`` names."""

from __future__ import annotations

import argparse
import os

import cmp
from cmp._toolkit import display_name
from cmp.cli._output import EXIT_USAGE, Output, error_line
from cmp.integrations.mcp import build_server, serve_stdio


def run_mcp(args: argparse.Namespace, out: Output) -> int:
    """Serve over stdio until the client closes the connection."""
    store = cmp.Store(args.store or None)  # an empty --store is none named, as for save, ls and show
    # Refused before serving: a server that stops at once is plainer than every call's error.
    if os.path.exists(store.path) and not os.path.isdir(store.path):
        error_line(f"--store {display_name(str(store.path))}: not a folder")
        return EXIT_USAGE
    try:
        server = build_server(store)
    except ImportError:
        error_line("mcp needs the MCP SDK (the mcp extra): pip install 'mcp>=2.3,<3'")
        return EXIT_USAGE
    serve_stdio(server)
    return 0
