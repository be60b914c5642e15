"""Receiving packets over HTTP: the raw-bytes intake for Starlette and FastAPI apps.

The public name of :mod:`cmp.integrations.starlette`, where the intake and its
documentation are; the ``server`` extra installs Starlette.
"""

from cmp.integrations.starlette import (
    BODY_DEADLINE,
    PROBLEM_TYPE,
    PacketRejected,
    Received,
    check_content_type,
    declared_length,
    install,
    packet_intake,
    read_body,
)

# The two handlers install() registers: public too, for an app that registers them itself.
from cmp.integrations.starlette import problem_response as problem_response
from cmp.integrations.starlette import validation_response as validation_response

__all__ = [
    "BODY_DEADLINE",
    "PROBLEM_TYPE",
    "PacketRejected",
    "Received",
    "check_content_type",
    "declared_length",
    "install",
    "packet_intake",
    "read_body",
]
