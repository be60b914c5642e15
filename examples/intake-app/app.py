"""An example packet intake: a FastAPI app that takes packets the way a server should.

    pip install '.[fastapi]'   # from the checkout's root: FastAPI and uvicorn with the package
    uvicorn app:app            # from this folder

POST /packets            the raw-bytes intake (strict): 201, or problem+json (400 / 408 /
                         413 / 415 / 422, 507 when the store is full)
POST /packets/lenient    lenient: schema findings flagged, not refused (202)
POST /packets/typed      a typed body (cmp.Packet as the body type, through pydantic):
                         convenient, but the framework parsed the JSON first, so a
                         duplicated member is already gone and the size is not judged
GET  /packets/{id}       a stored packet's canonical bytes

The raw-bytes routes take ``application/json`` only (415 otherwise): a page on another
origin can make a browser post ``text/plain`` to any server without asking (a CORS simple
request), never ``application/json``. A body has 10 seconds to arrive (408 after).

It keeps packets in memory, at most ``CAPACITY`` of them (each at most 32 KB, so the store
stays under 33 MB): at the cap a new packet is refused with 507 and nothing stored is
dropped; a packet whose id is stored already replaces it. A real server stores them in a
database, and bounds that too.
"""

import json
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Response

import cmp
from cmp.integrations.starlette import BODY_DEADLINE, PROBLEM_TYPE, Received, install, packet_intake

CAPACITY = 1_000  # packets the store holds


class StoreFull(Exception):
    """The store holds ``capacity`` packets: a new one is refused, none is dropped for it."""

    def __init__(self, capacity: int) -> None:
        super().__init__(f"the store holds {capacity:,} packets, its most")
        self.capacity = capacity


class Store:
    """Packets in memory by id, at most ``capacity`` of them."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._packets: dict[str, bytes] = {}
        self._lenient_count = 0

    def put(self, key: str, body: bytes) -> None:
        if key not in self._packets and len(self._packets) >= self.capacity:
            raise StoreFull(self.capacity)
        self._packets[key] = body

    def put_lenient(self, body: bytes) -> str:
        """Store a packet that has no id we can trust (it does not fit the schema): under a key of ours."""
        if len(self._packets) >= self.capacity:
            raise StoreFull(self.capacity)
        self._lenient_count += 1
        key = f"lenient-{self._lenient_count}"
        self._packets[key] = body
        return key

    def get(self, key: str) -> bytes | None:
        return self._packets.get(key)


async def store_full_response(request: Any, exc: Exception) -> Response:
    assert isinstance(exc, StoreFull)
    problem = {
        "type": "about:blank",
        "title": "Store full",
        "status": 507,
        "detail": f"{exc}: nothing stored was dropped, and this packet was not stored",
        "capacity": exc.capacity,
    }
    return Response(json.dumps(problem).encode(), status_code=507, media_type=PROBLEM_TYPE)


def make_app(*, capacity: int = CAPACITY, body_deadline: float | None = BODY_DEADLINE) -> FastAPI:
    """The intake with a store of ``capacity`` packets and ``body_deadline`` seconds per body."""
    app = FastAPI(title="Core Memory Packet intake (example)")
    install(app)  # refusals as application/problem+json
    app.add_exception_handler(StoreFull, store_full_response)
    store = Store(capacity)
    strict = packet_intake(require_json=True, body_deadline=body_deadline)
    lenient = packet_intake(lenient=True, require_json=True, body_deadline=body_deadline)

    @app.post("/packets", status_code=201)
    async def receive(received: Annotated[Received, Depends(strict)]) -> dict[str, Any]:
        packet = received.packet
        assert packet is not None  # strict mode accepts conforming packets only
        store.put(packet.id, cmp.dumps(packet))
        return {"id": packet.id, "conforming": True}

    @app.post("/packets/lenient", status_code=202)
    async def receive_leniently(received: Annotated[Received, Depends(lenient)]) -> dict[str, Any]:
        # A lenient server stores the packet as it came, and says it does not conform.
        if received.packet is not None:
            key = received.packet.id
            store.put(key, received.body)
        else:
            key = store.put_lenient(received.body)
        return {
            "id": key,
            "conforming": received.conforming,
            "warnings": [finding.to_json() for finding in received.report.located().errors],
        }

    @app.post("/packets/typed", status_code=201)
    async def receive_typed(packet: cmp.Packet) -> dict[str, Any]:
        store.put(packet.id, cmp.dumps(packet))
        return {"id": packet.id, "conforming": True}

    @app.get("/packets/{packet_id}")
    async def fetch(packet_id: str) -> Response:
        stored = store.get(packet_id)
        if stored is None:
            raise HTTPException(status_code=404, detail="no such packet")
        return Response(stored, media_type="application/json")

    return app


app = make_app()
