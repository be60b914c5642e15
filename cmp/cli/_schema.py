"""``schema``: the JSON Schema of a version, as shipped, annotated for editors and agents, or as a draft for models."""

from __future__ import annotations

import argparse
import json

from cmp.cli._output import EXIT_OK, Output
from cmp.schema import annotated_schema, draft_schema, schema_bytes


def run_schema(args: argparse.Namespace, out: Output) -> int:
    if args.draft:
        out.document(json.dumps(draft_schema(args.version), indent=2, ensure_ascii=False))
    elif args.annotated:
        out.document(json.dumps(annotated_schema(args.version), indent=2, ensure_ascii=False))
    else:
        out.write(schema_bytes(args.version))  # the normative file, byte for byte
    return EXIT_OK
