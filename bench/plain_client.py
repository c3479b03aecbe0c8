"""The plain-client reference: what any harness must do for a grounding benchmark, and nothing more.

    python bench/plain_client.py SUITE_DIR --base-url URL [--concurrency 32] [--client openai|httpx|threads] [--json OUT]

For every row of the ScreenSpot-Pro annotation files under ``SUITE_DIR/data/annotations``
(as ``bench/make_pro.py`` writes them): read the screenshot file, base64 it, send it with
the row's instruction to the chat-completions endpoint, read the reply and find its
``Answer:`` line. At most ``--concurrency`` requests are in flight: in one asyncio loop
(an asyncio semaphore) with the official ``openai.AsyncOpenAI`` client (what a user of the
endpoint would write) or ``httpx.AsyncClient`` (a leaner one), or (``threads``) in
``--concurrency`` threads, each with its own keep-alive ``http.client`` connection (the
standard library, as guitest's default client; threads also take more of a machine that
other programs share than one asyncio loop does). There is no scoring, no report and no
cache: it is the floor a harness is compared with.

Prints (and writes to ``--json``) ``{"client", "n", "concurrency", "seconds", "cpu_s",
"bytes_sent", "answers"}``: ``seconds`` is the request loop (reading the annotations
included), ``cpu_s`` the CPU of the whole process; the bench times the process from the
outside too, so its start-up and imports count as they do for pytest.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import time
from pathlib import Path
from typing import Any

PROMPT = "Output the point to click for this instruction: {instruction}. Answer with one line: Answer: [x, y], coordinates normalized to 0..1."


def rows(suite: Path) -> list[tuple[Path, str]]:
    """(screenshot path, instruction) of every annotation row, in file order."""
    data = suite / "data"
    out = []
    for f in sorted((data / "annotations").glob("*.json")):
        for row in json.loads(f.read_text()):
            out.append((data / "images" / row["img_filename"], row["instruction"]))
    return out


def request(path: Path, instruction: str) -> list[dict[str, Any]]:
    """The chat messages of one case: the screenshot as a data URI (read and base64'd here) and the instruction."""
    mime = "image/png" if path.suffix.lower() == ".png" else "image/jpeg"
    uri = f"data:{mime};base64," + base64.b64encode(path.read_bytes()).decode("ascii")
    return [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": uri}}, {"type": "text", "text": PROMPT.format(instruction=instruction)}]}]


def body(messages: list[dict[str, Any]]) -> bytes:
    """The chat-completions request body."""
    return json.dumps({"model": "bench", "messages": messages, "temperature": 0, "max_tokens": 512}).encode("utf-8")


def run_threads(suite: Path, base_url: str, concurrency: int) -> dict[str, Any]:
    """The same requests from ``concurrency`` threads over ``http.client`` (one kept-alive connection per thread)."""
    import http.client
    import threading
    import urllib.parse
    from concurrent.futures import ThreadPoolExecutor

    t0 = time.perf_counter()
    cases = rows(suite)
    url = urllib.parse.urlsplit(base_url.rstrip("/") + "/chat/completions")
    local = threading.local()
    sent = []

    def one(case: tuple[Path, str]) -> bool:
        messages = request(*case)
        sent.append(len(messages[0]["content"][0]["image_url"]["url"]))
        conn = getattr(local, "conn", None)
        if conn is None:
            conn = local.conn = http.client.HTTPConnection(url.hostname, url.port, timeout=120)
        conn.request("POST", url.path, body(messages), {"Content-Type": "application/json"})
        reply = conn.getresponse()
        data = reply.read()
        if reply.status != 200:
            raise RuntimeError(f"HTTP {reply.status}: {data[:200]!r}")
        return "Answer:" in json.loads(data)["choices"][0]["message"]["content"]

    with ThreadPoolExecutor(concurrency) as pool:
        answers = list(pool.map(one, cases))
    return {"client": "threads", "n": len(cases), "concurrency": concurrency, "seconds": time.perf_counter() - t0, "bytes_sent": sum(sent), "answers": sum(answers)}


async def run(suite: Path, base_url: str, concurrency: int, client_name: str) -> dict[str, Any]:
    """Send every case, ``concurrency`` at a time; the figures of the module docstring."""
    t0 = time.perf_counter()
    cases = rows(suite)
    sem = asyncio.Semaphore(concurrency)
    sent = [0]
    base = base_url.rstrip("/")
    if client_name == "openai":
        import openai

        client: Any = openai.AsyncOpenAI(api_key="EMPTY", base_url=base, max_retries=0)

        async def ask(messages: list[dict[str, Any]]) -> str:
            r = await client.chat.completions.create(model="bench", messages=messages, temperature=0, max_tokens=512)  # type: ignore[arg-type]
            return r.choices[0].message.content or ""

        close = client.close
    else:
        try:
            import httpx2 as httpx  # what this openai release ships with
        except ImportError:
            import httpx  # type: ignore[no-redef]
        client = httpx.AsyncClient(limits=httpx.Limits(max_connections=concurrency), timeout=120)

        async def ask(messages: list[dict[str, Any]]) -> str:
            r = await client.post(base + "/chat/completions", content=body(messages), headers={"Content-Type": "application/json"})
            r.raise_for_status()
            return r.json()["choices"][0]["message"]["content"]

        close = client.aclose

    async def one(path: Path, instruction: str) -> bool:
        async with sem:
            messages = request(path, instruction)
            sent[0] += len(messages[0]["content"][0]["image_url"]["url"])
            reply = await ask(messages)
            return "Answer:" in reply

    try:
        answers = await asyncio.gather(*(one(p, i) for p, i in cases))
    finally:
        await close()
    return {"client": client_name, "n": len(cases), "concurrency": concurrency, "seconds": time.perf_counter() - t0, "bytes_sent": sent[0], "answers": sum(answers)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suite", type=Path, help="suite folder written by bench/make_pro.py")
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--client", choices=("openai", "httpx", "threads"), default="openai")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    c0 = time.process_time()
    if args.client == "threads":
        out = run_threads(args.suite, args.base_url, args.concurrency)
    else:
        out = asyncio.run(run(args.suite, args.base_url, args.concurrency, args.client))
    out["cpu_s"] = time.process_time() - c0
    text = json.dumps(out)
    if args.json:
        args.json.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
