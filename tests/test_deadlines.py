"""--timeout is a deadline for the whole request, in both HTTP clients: a server that drips its reply (each piece
well within the timeout of a single read) cannot stretch a request past it.

Against a real loopback server that sends a complete, valid chat completion in 8 pieces 0.15 s apart (1.2 s in all)
while the timeout is 0.5 s: before, each read waited at most 0.5 s and so the request succeeded after 1.2 s; now it
fails as a timeout. No timed assertion: the outcome (a timeout, not a reply) is the proof.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from guitest.models.transport import HTTPFailure, JSONPoster

BODY = json.dumps(
    {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [{"index": 0, "message": {"role": "assistant", "content": "Answer: [0.5, 0.5]"}, "finish_reason": "stop"}]}
).encode()
PIECES = 8
GAP = 0.15


@pytest.fixture
def dripping() -> Iterator[str]:
    """A base URL whose server answers every request with BODY in PIECES pieces, GAP seconds apart."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    stop = threading.Event()

    def serve(conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(5)
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, rest = data.partition(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")), 0)
                while len(rest) < length:
                    rest += conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(BODY))
                size = -(-len(BODY) // PIECES)
                for i in range(0, len(BODY), size):
                    if stop.is_set():
                        return
                    time.sleep(GAP)
                    conn.sendall(BODY[i : i + size])
            except OSError:
                pass

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}/v1"
    stop.set()
    server.close()


def test_the_lean_client_ends_a_dripping_request_at_its_deadline(dripping: str) -> None:
    with pytest.raises(HTTPFailure) as info:
        JSONPoster(dripping, 0.5, {}).post("/chat/completions", b"{}")
    assert info.value.timeout
    # the same server within a longer deadline: the reply is whole, so the failure above was the deadline's
    assert json.loads(JSONPoster(dripping, 10.0, {}).post("/chat/completions", b"{}").body)["choices"][0]["message"]["content"] == "Answer: [0.5, 0.5]"


def test_the_official_client_ends_a_dripping_request_at_its_deadline(dripping: str) -> None:
    import openai

    from guitest.models.httpx_deadline import DeadlineTransport, httpx

    def client(timeout: float) -> openai.OpenAI:
        return openai.OpenAI(api_key="EMPTY", base_url=dripping, timeout=timeout, max_retries=0, http_client=httpx.Client(transport=DeadlineTransport(timeout, dripping), timeout=timeout))

    with pytest.raises(openai.APITimeoutError):
        client(0.5).chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    reply = client(10.0).chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert reply.choices[0].message.content == "Answer: [0.5, 0.5]"
