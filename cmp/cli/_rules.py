"""``rules``: the rule catalog (:mod:`cmp.cli._catalog`) as text lines, one JSON document, or docs/rules.md."""

from __future__ import annotations

import argparse
import json

from cmp.cli._catalog import catalog_json, catalog_lines, rules_markdown
from cmp.cli._output import EXIT_OK, Output


def run_rules(args: argparse.Namespace, out: Output) -> int:
    if args.format == "json":
        out.document(json.dumps(catalog_json(), ensure_ascii=False, indent=2))
    elif args.format == "markdown":
        out.write(rules_markdown().encode("utf-8"))
    else:
        for line in catalog_lines():
            out.line(line)
    return EXIT_OK
