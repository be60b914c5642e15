"""An example packet intake: a FastAPI app that takes packets the way a server should.

    pip install 'core-memory-packet[server]' uvicorn
    uvicorn app:app            # from this folder

POST /packets            the raw-bytes intake (strict): 201, or 413 / 422 problem+json
POST /packets/lenient    lenient: schema findings flagged, not refused (202)
POST /packets/typed      a typed body (cmp.Packet as the body type, through pydantic):
                         convenient, but the framework parsed the JSON first, so a
                         duplicated member is already gone and the size is not judged
GET  /packets/{id}       a stored packet's canonical bytes

It keeps packets in memory; a real server stores them.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Response

import cmp
from cmp.server import Received, install, packet_intake

app = FastAPI(title="Core Memory Packet intake (example)")
install(app)  # refusals as application/problem+json
STORED: dict[str, bytes] = {}
Strict = Annotated[Received, Depends(packet_intake())]
Lenient = Annotated[Received, Depends(packet_intake(lenient=True))]


@app.post("/packets", status_code=201)
async def receive(received: Strict) -> dict[str, Any]:
    packet = received.packet
    assert packet is not None  # strict mode accepts conforming packets only
    STORED[packet.id] = cmp.dumps(packet)
    return {"id": packet.id, "conforming": True}


@app.post("/packets/lenient", status_code=202)
async def receive_leniently(received: Lenient) -> dict[str, Any]:
    # A lenient server stores the packet as it came, and says it does not conform.
    key = received.packet.id if received.packet is not None else f"lenient-{len(STORED)}"
    STORED[key] = received.body
    return {
        "id": key,
        "conforming": received.conforming,
        "warnings": [finding.to_json() for finding in received.report.located().errors],
    }


@app.post("/packets/typed", status_code=201)
async def receive_typed(packet: cmp.Packet) -> dict[str, Any]:
    STORED[packet.id] = cmp.dumps(packet)
    return {"id": packet.id, "conforming": True}


@app.get("/packets/{packet_id}")
async def fetch(packet_id: str) -> Response:
    if packet_id not in STORED:
        raise HTTPException(status_code=404, detail="no such packet")
    return Response(STORED[packet_id], media_type="application/json")
