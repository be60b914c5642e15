"""The example packet of each version, shown by the CLI's ``example`` command and the MCP ``example`` tool."""

from __future__ import annotations

from cmp._migrate import migrate
from cmp.model import Packet


def example_packet(version: str) -> Packet:
    """An example packet of our own: what a good one says, field by field (conforming, clean, lint-free)."""
    packet = Packet.new(
        goal="Make the nightly export job finish within its two-hour window.",
        next_step="Run the export with the batched writer against last night's snapshot and time it.",
        id="01JD4S7M3G8X2Q5V9B6N1K0T7W",
        created_at="2026-11-30T09:15:00Z",
        project={"name": "nightly-export", "ref": "git.example.org/data/nightly-export"},
        success_criteria=[
            "The export of a full snapshot completes in under 120 minutes on the production runner.",
            "Row counts in the export match the snapshot's row counts for every table.",
        ],
        constraints=["The export must not hold table locks that block the morning ingest."],
        decisions=[
            {
                "what": "Write rows in batches of 5,000 instead of one insert per row.",
                "why": "Per-row inserts spent most of the run waiting on round trips to the database.",
                "consequences": "A failed batch is retried whole, so the writer must stay idempotent.",
                "locked": True,
            }
        ],
        methods=[
            {
                "name": "time-a-snapshot-export",
                "when_applicable": "Any change to the export path needs a timing on realistic data.",
                "how": "make export-timing SNAPSHOT=latest",
            }
        ],
        attempts=[
            {
                "tried": "Raised the database connection pool from 4 to 16 connections.",
                "outcome": "failed",
                "learned": "The job is bound by round trips per row, not by the number of connections.",
                "confidence": "high",
            }
        ],
        open_questions=["Should the export skip tables that did not change since the previous night?"],
        tags=["export", "performance"],
        provenance={"author_model": "example-model", "confidence": "medium"},
    )
    return packet if version == packet.ltm_version else migrate(packet, version, drop=True)
