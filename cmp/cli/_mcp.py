"""``mcp``: the Model Context Protocol server (:mod:`cmp.integrations.mcp`) over stdio
(its bounded transport, :mod:`cmp.integrations._mcp_stdio`)."""

from __future__ import annotations

import argparse

from cmp.cli._output import EXIT_USAGE, Output, error_line
from cmp.integrations.mcp import build_server, serve_stdio


def run_mcp(args: argparse.Namespace, out: Output) -> int:
    """Serve over stdio until the client closes the connection."""
    try:
        server = build_server()
    except ImportError:
        error_line("mcp needs the MCP SDK: pip install 'core-memory-packet[mcp]'")
        return EXIT_USAGE
    serve_stdio(server)
    return 0
