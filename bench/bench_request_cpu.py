"""The CPU one request costs on a 4K screenshot: guitest's request path beside a minimal client.

    python bench/bench_request_cpu.py [--images 8] [--rounds 4] [--out DIR]

Screenshots: ``--images`` 3840x2160 PNGs from the bench's tiled generator (bench/make_pro.py, the entropy of the real
ScreenSpot-Pro files: about 3.3 MB each), written once to ``--out``. The endpoint: a loopback HTTP server in another
process that reads each request and answers a fixed chat completion (its CPU is not counted). Each client sends every
screenshot ``--rounds`` times, one request at a time on one kept-alive connection, and the CPU of this process
(user + system, ``time.process_time``) is divided by the requests:

- ``minimal``: read the file, base64-encode it, join the JSON body around it, send it with ``http.client``, read the
  reply (the least a client can do);
- ``guitest``: what a case of an ``openai:`` model does at default settings (the lean client): ``open_image`` (the one
  read), ``preprocess`` (the file sent as it is), ``generate`` (the messages, the request body, the post, the reply
  read);
- ``guitest, str body``: the same with the screenshot's data URI built as a ``str`` and the body's splicing scanning
  it, as before the body took the base64 bytes as they are (guitest/request_body.py ``Verbatim``).

Then it checks that both guitest variants sent the same bytes. Serial; under ``-n 2`` each worker process pays the
same per request, on its own core.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import http.server
import json
import multiprocessing
import statistics
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

REPLY = json.dumps({"id": "x", "object": "chat.completion", "model": "m", "choices": [{"index": 0, "message": {"role": "assistant", "content": "(100, 200)"}, "finish_reason": "stop"}]}).encode()
INSTRUCTION = "Click the Save button in the toolbar."


def _serve(port: Any, bodies: Any) -> None:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 - the library's name
            body = self.rfile.read(int(self.headers["Content-Length"]))
            if bodies is not None:
                bodies.put(body)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(REPLY)))
            self.end_headers()
            self.wfile.write(REPLY)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port.value = server.server_port
    server.serve_forever()


def screenshots(out: Path, count: int) -> list[Path]:
    from make_pro import compose

    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        path = out / f"shot-{i}.png"
        if not path.exists():
            compose((3840, 2160), seed=1000 + i).save(path)
        paths.append(path)
    return paths


def minimal(paths: list[Path], port: int, rounds: int) -> float:
    conn = http.client.HTTPConnection("127.0.0.1", port)
    start = time.process_time()
    for _ in range(rounds):
        for path in paths:
            data = path.read_bytes()
            b64 = base64.b64encode(data)
            body = b"".join(
                (
                    b'{"model": "m", "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,',
                    b64,
                    b'"}}, {"type": "text", "text": "',
                    INSTRUCTION.encode(),
                    b'"}]}], "temperature": 0.0, "max_tokens": 512}',
                )
            )
            conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
            json.loads(conn.getresponse().read())
    used = time.process_time() - start
    conn.close()
    return used / (rounds * len(paths))


def guitest_case(paths: list[Path], port: int, rounds: int, verbatim: bool) -> float:
    from guitest.exchange import Prompt
    from guitest.images import open_image
    from guitest.models import load_model
    from guitest.models.base import Settings
    from guitest.models.openai_api import OpenAIChat

    model = load_model("openai:m", Settings(base_url=f"http://127.0.0.1:{port}/v1"))
    if not verbatim:  # before: the data URI as a str, scanned by the body's splicing
        plain = OpenAIChat.messages
        model.messages = lambda prompt, image, verbatim=False: plain(model, prompt, image, False)  # type: ignore[method-assign]
    prompt = Prompt(user=INSTRUCTION)
    start = time.process_time()
    for _ in range(rounds):
        for path in paths:
            image = open_image(str(path))
            case = types.SimpleNamespace(sent_size=image.size, attempt=0)
            sent = model.preprocess(image, case)  # type: ignore[arg-type]
            model.generate(prompt, sent, case)  # type: ignore[arg-type]
    used = time.process_time() - start
    model.close()
    return used / (rounds * len(paths))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "guitest-bench-4k")
    opts = parser.parse_args()
    paths = screenshots(opts.out, opts.images)
    sizes = [p.stat().st_size for p in paths]
    print(f"{len(paths)} screenshots 3840x2160, {statistics.mean(sizes) / 1e6:.2f} MB mean ({min(sizes) / 1e6:.2f}-{max(sizes) / 1e6:.2f})")
    ctx = multiprocessing.get_context("spawn")
    port = ctx.Value("i", 0)
    bodies = ctx.Queue()
    server = ctx.Process(target=_serve, args=(port, None), daemon=True)
    server.start()
    while not port.value:
        time.sleep(0.01)
    results: dict[str, list[float]] = {"minimal": [], "guitest": [], "guitest, str body": []}
    for _ in range(opts.repeats):  # alternated: a change in the machine's load falls on all three
        results["minimal"].append(minimal(paths, port.value, opts.rounds))
        results["guitest"].append(guitest_case(paths, port.value, opts.rounds, verbatim=True))
        results["guitest, str body"].append(guitest_case(paths, port.value, opts.rounds, verbatim=False))
    server.terminate()
    base = statistics.median(results["minimal"])
    print(f"CPU ms per request, {opts.repeats} repeats of {opts.rounds * len(paths)} requests (median; each repeat)")
    print("| client | ms per request | x minimal |")
    print("|---|---|---|")
    for name, values in results.items():
        med = statistics.median(values)
        print(f"| {name} | {med * 1000:.1f} ({', '.join(f'{v * 1000:.1f}' for v in values)}) | {med / base:.2f} |")
    # the same bytes either way: one request each to a server that keeps the bodies
    port2 = ctx.Value("i", 0)
    keeper = ctx.Process(target=_serve, args=(port2, bodies), daemon=True)
    keeper.start()
    while not port2.value:
        time.sleep(0.01)
    guitest_case(paths[:1], port2.value, 1, verbatim=True)
    guitest_case(paths[:1], port2.value, 1, verbatim=False)
    first, second = bodies.get(timeout=30), bodies.get(timeout=30)
    keeper.terminate()
    print(f"request bodies identical: {first == second} ({len(first)} bytes)")


if __name__ == "__main__":
    main()
