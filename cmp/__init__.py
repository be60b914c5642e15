"""core-memory-packet: validate, redact and canonically serialize Core Memory Packets.

The public API, all of it:

- :func:`check` — judge raw bytes or text; returns a :class:`Report`, never raises
  for bad packet content.
- :func:`loads` — bytes or text to a typed :class:`Packet`, or :class:`PacketError`.
- :func:`validate` — findings for a packet already parsed into Python data.
- :func:`redact` — redaction findings (:class:`Redaction`) for a typed packet.
- :func:`lint` — advice on the writing rules for a typed packet (``lint`` findings; never a verdict).
- :func:`dumps` — canonical bytes, byte-identical to the reference encoder.
- :func:`state_digest` — ``sha256:`` of the canonical bytes without id and created_at.
- The model: :class:`Packet`, :class:`Project`, :class:`Decision`, :class:`Method`,
  :class:`Attempt`, :class:`Provenance`.
- :class:`Finding` (``code``, ``path``, ``keyword``, ``message``) and :data:`FINDING_CODES`.
- :data:`SUPPORTED_VERSIONS`, :data:`MAX_PACKET_BYTES`, :data:`SCANNED_FIELDS`,
  :data:`REDACTION_CATEGORIES`.
"""

from __future__ import annotations

from cmp._canonical import dumps, state_digest
from cmp._intake import MAX_PACKET_BYTES
from cmp._lint import lint
from cmp._pipeline import Report, check, loads, validate
from cmp._redaction import CATEGORIES as REDACTION_CATEGORIES
from cmp._redaction import SCANNED_FIELDS, Redaction, redact
from cmp.findings import CODES as FINDING_CODES
from cmp.findings import Finding, PacketError
from cmp.model import Attempt, Decision, Method, Packet, Project, Provenance
from cmp.schema import SUPPORTED_VERSIONS

__version__ = "0.1.0"

__all__ = [
    "FINDING_CODES",
    "MAX_PACKET_BYTES",
    "REDACTION_CATEGORIES",
    "SCANNED_FIELDS",
    "SUPPORTED_VERSIONS",
    "Attempt",
    "Decision",
    "Finding",
    "Method",
    "Packet",
    "PacketError",
    "Project",
    "Provenance",
    "Redaction",
    "Report",
    "check",
    "dumps",
    "lint",
    "loads",
    "redact",
    "state_digest",
    "validate",
]
