"""A loopback OpenAI-compatible chat-completions server for benchmarks (standard library only).

    python bench/server.py --port-file PATH [--latency 0.1] [--max-seconds 600]

It listens on 127.0.0.1 on an ephemeral port and writes the port to ``--port-file``
once listening (temp file + rename). Every ``POST .../chat/completions`` is answered
after ``--latency`` seconds with a chat.completion whose content is
``Answer: [0.5, 0.5]``; the request body is read in full but not parsed (the bench
measures the client, so the server spends as little CPU as it can). ``GET .../models``
lists one model. ``GET /stats`` returns ``{"requests", "inflight", "max_inflight",
"bytes_in", "connections", "max_connections", "span_s", "mean_inflight"}`` (``mean_inflight``:
the time-weighted number of requests in flight between the first request and the last reply) and ``POST /stats/reset`` zeroes
them, so the bench can check how many requests a client really had in flight.

It is a single-threaded asyncio server (HTTP/1.1 keep-alive, one coroutine per
connection, the latency is an ``asyncio.sleep``), so hundreds of concurrent
connections cost no threads; ``--self-test`` measures the rate it sustains.
It bounds itself: it exits after ``--max-seconds`` and as soon as its parent dies.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time

REPLY_TEXT = "Answer: [0.5, 0.5]"


class Stats:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.requests = 0
        self.inflight = 0
        self.max_inflight = 0
        self.bytes_in = 0
        self.connections = 0
        self.max_connections = 0
        self.inflight_seconds = 0.0  # the sum of every request's time in flight
        self.first_request: float | None = None
        self.last_reply: float | None = None

    def as_dict(self) -> dict[str, float | int]:
        out: dict[str, float | int] = {k: getattr(self, k) for k in ("requests", "inflight", "max_inflight", "bytes_in", "connections", "max_connections")}
        span = (self.last_reply - self.first_request) if self.first_request is not None and self.last_reply is not None else 0.0
        out["span_s"] = round(span, 4)  # first request received to last reply sent
        out["mean_inflight"] = round(self.inflight_seconds / span, 2) if span > 0 else 0.0
        return out


def _completion(model: str) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": REPLY_TEXT}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 8, "total_tokens": 9},
        }
    ).encode()


def _response(status: str, body: bytes, keep_alive: bool) -> bytes:
    head = f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: {'keep-alive' if keep_alive else 'close'}\r\n\r\n"
    return head.encode() + body


class Server:
    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.stats = Stats()
        self.completion = _completion("bench")

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        stats = self.stats
        stats.connections += 1
        stats.max_connections = max(stats.max_connections, stats.connections)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, path, version = (lines[0].split(" ") + ["", "", ""])[:3]
                headers = {}
                for line in lines[1:]:
                    name, sep, value = line.partition(":")
                    if sep:
                        headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length", "0") or 0)
                _body = await reader.readexactly(length) if length else b""  # read to reach the next request; not used
                keep_alive = headers.get("connection", "").lower() != "close" and version == "HTTP/1.1"
                path = path.split("?", 1)[0]
                if method == "POST" and path.endswith("/chat/completions"):
                    stats.requests += 1
                    stats.bytes_in += len(head) + length
                    stats.inflight += 1
                    stats.max_inflight = max(stats.max_inflight, stats.inflight)
                    t0 = time.monotonic()
                    if stats.first_request is None:
                        stats.first_request = t0
                    try:
                        if self.latency > 0:
                            await asyncio.sleep(self.latency)
                        out = _response("200 OK", self.completion, keep_alive)
                    finally:
                        stats.inflight -= 1
                        stats.last_reply = time.monotonic()
                        stats.inflight_seconds += stats.last_reply - t0
                elif method == "GET" and path.endswith("/models"):
                    out = _response("200 OK", json.dumps({"object": "list", "data": [{"id": "bench", "object": "model", "owned_by": "bench"}]}).encode(), keep_alive)
                elif method == "GET" and path == "/stats":
                    out = _response("200 OK", json.dumps(stats.as_dict()).encode(), keep_alive)
                elif method == "POST" and path == "/stats/reset":
                    stats.reset()
                    stats.connections = 1
                    stats.max_connections = 1
                    out = _response("200 OK", b"{}", keep_alive)
                else:
                    out = _response("404 Not Found", json.dumps({"error": {"message": f"no route {method} {path}", "type": "not_found"}}).encode(), keep_alive)
                writer.write(out)
                await writer.drain()
                if not keep_alive:
                    return
        finally:
            stats.connections -= 1
            writer.close()


async def _watch(max_seconds: float, parent: int) -> None:
    deadline = time.monotonic() + max_seconds
    while time.monotonic() < deadline:
        if os.getppid() != parent:
            return
        await asyncio.sleep(0.5)


async def serve(args: argparse.Namespace) -> None:
    server = Server(args.latency)
    srv = await asyncio.start_server(server.handle, "127.0.0.1", args.port, backlog=1024, limit=2**20)
    port = srv.sockets[0].getsockname()[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(str(port))
        os.replace(tmp, args.port_file)
    print(f"bench server on 127.0.0.1:{port}, latency {args.latency} s", file=sys.stderr, flush=True)
    async with srv:
        await _watch(args.max_seconds, os.getppid())


# -- self-test: can the server sustain the rate? -----------------------------------------------


async def _load(port: int, n: int, concurrency: int, body: bytes) -> float:
    request = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
    left = [n]

    async def conn() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        while left[0] > 0:
            left[0] -= 1
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            await reader.readexactly(length)
        writer.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(conn() for _ in range(concurrency)))
    return time.perf_counter() - t0


def self_test(latency: float, n: int, concurrency: int, body_bytes: int) -> dict[str, float]:
    """Start a server subprocess at ``latency`` and drive it with a raw-socket asyncio client."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        port_file = os.path.join(tmp, "port")
        proc = subprocess.Popen([sys.executable, __file__, "--port-file", port_file, "--latency", str(latency), "--max-seconds", "120"])
        try:
            port = wait_port(port_file)
            body = json.dumps({"model": "bench", "messages": [{"role": "user", "content": "x" * body_bytes}]}).encode()
            seconds = asyncio.run(_load(port, n, concurrency, body))
        finally:
            proc.terminate()
            proc.wait(10)
    ideal = n * latency / concurrency
    return {"latency": latency, "n": n, "concurrency": concurrency, "body_bytes": body_bytes, "seconds": seconds, "rps": n / seconds, "ideal": ideal}


def wait_port(port_file: str, timeout: float = 20.0) -> int:
    """The port the server wrote to ``port_file``, once it has."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(port_file) as f:
                return int(f.read())
        except (OSError, ValueError):
            time.sleep(0.02)
    raise TimeoutError(f"no port in {port_file} after {timeout} s")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port-file", help="write the port here once listening")
    parser.add_argument("--port", type=int, default=0, help="port (default: an ephemeral one)")
    parser.add_argument("--latency", type=float, default=0.1, help="seconds before each chat reply (default 0.1)")
    parser.add_argument("--max-seconds", type=float, default=600.0, help="exit after this long (default 600)")
    parser.add_argument("--self-test", action="store_true", help="measure the rate the server sustains, then exit")
    args = parser.parse_args(argv)
    if args.self_test:
        for latency, n, conc, body in ((0.0, 3000, 32, 20_000), (0.1, 1000, 32, 20_000), (0.1, 2000, 64, 20_000), (0.1, 2000, 128, 20_000)):
            r = self_test(latency, n, conc, body)
            print(f"latency {latency} s, {conc} connections, {n} requests of {body} B: {r['seconds']:.3f} s, {r['rps']:.0f} req/s (ideal {r['ideal']:.3f} s)")
        return
    try:
        asyncio.run(serve(args))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
