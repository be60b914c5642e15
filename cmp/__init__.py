"""core-memory-packet: validate, redact and canonically serialize Core Memory Packets.

The public API, all of it:

- :func:`check` — judge raw bytes or text: a :class:`Report`; never raises for bad content.
- :func:`loads` — bytes or text to a typed :class:`Packet`, or :class:`PacketError`.
- :func:`validate` — findings for a packet already parsed into Python data.
- :func:`redact` — redaction findings (:class:`Redaction`) for a typed packet (default or extended rules).
- :func:`scrub` — a typed packet with every redaction match replaced by a placeholder.
- :func:`migrate` — a typed packet as another supported version.
- :func:`lint` — advice on the writing rules for a typed packet (``lint`` findings; never a verdict).
- :func:`dumps` — canonical bytes, byte-identical to the reference encoder.
- :func:`state_digest` — ``sha256:`` of the canonical bytes without id and created_at.
- :func:`source_hash` — ``sha256:`` of source material, for ``provenance.source_hash``.
- :func:`chain` — how packets link up through ``parent_id``: a :class:`ChainReport` (:class:`ChainFinding`).
- The model, stdlib frozen dataclasses: :class:`Packet` (``Packet.new``, ``from_dict``,
  ``to_dict``, ``from_draft``, ``to_draft``, ``replace``, ``findings`` for writers),
  :class:`Project`, :class:`Decision`, :class:`Method`, :class:`Attempt`, :class:`Provenance`.
- :class:`Finding` (``code``, ``path``, ``keyword``, ``message``, :class:`Position`); codes in :mod:`cmp.findings`.
- :func:`locate` — findings of any kind with their line and column (:meth:`Report.located` for a report).
- :func:`resume_block` — a packet as a :class:`ResumeBlock` (markdown or xml) for the next session.
- :class:`RedactionError` — raised by :func:`resume_block` and ``Store.save`` for redaction findings.
- :func:`draft_schema` — a JSON Schema for a model's strict structured output (see :meth:`Packet.from_draft`).
- :class:`Client` (:mod:`cmp.client`, needs httpx) — a team server's client: ``push`` (checked first),
  ``pull`` (checked on arrival), ``ls``, ``rm``, ``move``, teams, invites, ``join``, ``whoami``.
- :class:`Store` (:mod:`cmp.store`) — a local store: a folder of canonical packet files (``save``, ``get``,
  ``list``, ``heads``, ``latest``, ``problems``); :class:`StoreError` for what it refuses.
- :data:`SUPPORTED_VERSIONS`, :data:`MAX_PACKET_BYTES`, :data:`SCANNED_FIELDS`,
  :data:`REDACTION_CATEGORIES`.
"""

from __future__ import annotations

import sys

# typing.TYPE_CHECKING, without loading typing (about 6 ms, with re and enum): ``import cmp``
# loads nothing but the package itself; the first name used loads what it needs.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from cmp._authoring import draft_schema, source_hash
    from cmp._canonical import dumps, state_digest
    from cmp._chain import ChainFinding, ChainReport, chain
    from cmp._intake import MAX_PACKET_BYTES
    from cmp._lint import lint
    from cmp._migrate import migrate
    from cmp._pipeline import Report, check, loads, redact, validate
    from cmp._positions import locate
    from cmp._redaction._hit import Redaction, RedactionError
    from cmp._redaction._scan import CATEGORIES as REDACTION_CATEGORIES
    from cmp._redaction._scan import SCANNED_FIELDS
    from cmp._resume import ResumeBlock, resume_block
    from cmp._scrub import scrub
    from cmp.client import Client
    from cmp.findings import Finding, PacketError, Position
    from cmp.model import Attempt, Decision, Method, Packet, Project, Provenance
    from cmp.schema import SUPPORTED_VERSIONS
    from cmp.store import Store, StoreError

__version__ = "0.1.0"

# Every name is imported on first use (PEP 562): a program pays for what it uses, and the
# command line can take a Ctrl-C while the package loads. Name: (module, name there).
_DEFINED_IN: dict[str, tuple[str, str]] = {
    "MAX_PACKET_BYTES": ("cmp._intake", "MAX_PACKET_BYTES"),
    "REDACTION_CATEGORIES": ("cmp._redaction._scan", "CATEGORIES"),
    "SCANNED_FIELDS": ("cmp._redaction._scan", "SCANNED_FIELDS"),
    "SUPPORTED_VERSIONS": ("cmp.schema", "SUPPORTED_VERSIONS"),
    **{name: ("cmp.model", name) for name in ("Attempt", "Decision", "Method", "Packet", "Project", "Provenance")},
    **{name: ("cmp._chain", name) for name in ("ChainFinding", "ChainReport", "chain")},
    **{name: ("cmp.findings", name) for name in ("Finding", "PacketError", "Position")},
    **{name: ("cmp._resume", name) for name in ("ResumeBlock", "resume_block")},
    **{name: ("cmp._redaction._hit", name) for name in ("Redaction", "RedactionError")},
    **{name: ("cmp._pipeline", name) for name in ("Report", "check", "loads", "redact", "validate")},
    **{name: ("cmp._canonical", name) for name in ("dumps", "state_digest")},
    "lint": ("cmp._lint", "lint"),
    **{name: ("cmp.store", name) for name in ("Store", "StoreError")},
    "Client": ("cmp.client", "Client"),  # loads httpx: only when used
    "locate": ("cmp._positions", "locate"),
    "migrate": ("cmp._migrate", "migrate"),
    "scrub": ("cmp._scrub", "scrub"),
    "source_hash": ("cmp._authoring", "source_hash"),
    "draft_schema": ("cmp._authoring", "draft_schema"),  # a version it has no schema for named as values are
}


def _module(name: str) -> Any:
    """The module ``name``, imported by an import statement, not importlib (which would load
    warnings, and hide from ``python -X importtime`` what a name loads)."""
    __import__(name)
    return sys.modules[name]


def __getattr__(name: str) -> Any:
    where = _DEFINED_IN.get(name)
    if where is None:
        # A submodule (cmp.model, cmp.cli), not found by importlib.util.find_spec (which would
        # load warnings). Only the submodule's own absence is no attribute; a module it cannot
        # import is that module's error.
        if not name.startswith("__"):
            try:
                return _module(f"cmp.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"cmp.{name}":
                    raise
        raise AttributeError(f"module 'cmp' has no attribute {name!r}")
    value = getattr(_module(where[0]), where[1])
    globals()[name] = value  # found directly from now on
    return value


def __dir__() -> list[str]:
    # The public API, not the private modules that using it loaded.
    return sorted({*__all__, "__version__"})


__all__ = [
    "MAX_PACKET_BYTES",
    "REDACTION_CATEGORIES",
    "SCANNED_FIELDS",
    "SUPPORTED_VERSIONS",
    "Attempt",
    "ChainFinding",
    "ChainReport",
    "Client",
    "Decision",
    "Finding",
    "Method",
    "Packet",
    "PacketError",
    "Position",
    "Project",
    "Provenance",
    "Redaction",
    "RedactionError",
    "Report",
    "ResumeBlock",
    "Store",
    "StoreError",
    "chain",
    "check",
    "draft_schema",
    "dumps",
    "lint",
    "loads",
    "locate",
    "migrate",
    "redact",
    "resume_block",
    "scrub",
    "source_hash",
    "state_digest",
    "validate",
]
