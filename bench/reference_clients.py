"""``--child reference``: the plain clients guitest's throughput is measured against (the official openai client and
httpx, the same requests at the same concurrency, no harness).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any


def child_reference(args: argparse.Namespace) -> dict[str, Any]:
    """A plain asyncio client doing the same requests: the physical reference."""
    import asyncio
    import base64
    import glob

    images = sorted(glob.glob(os.path.join(args.suite, "data", "imgs", "*.png")))
    uris = ["data:image/png;base64," + base64.b64encode(Path(p).read_bytes()).decode() for p in images]
    base = args.base_url.rstrip("/")

    def messages(i: int) -> list[dict[str, Any]]:
        return [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": uris[i % len(uris)]}}, {"type": "text", "text": f"Where to click: control {i}? Answer: [x, y]"}]}]

    async def timed(one: Any) -> float:
        """Seconds for the N requests ``one(i)`` makes, all started at once (the client's semaphore bounds them)."""
        t = time.perf_counter()
        out = await asyncio.gather(*(one(i) for i in range(args.n)))
        dt = time.perf_counter() - t
        assert all("Answer" in o for o in out)
        return dt

    async def with_openai() -> float:
        import openai

        client = openai.AsyncOpenAI(api_key="EMPTY", base_url=base, max_retries=0)
        sem = asyncio.Semaphore(args.concurrency)

        async def one(i: int) -> str:
            async with sem:
                r = await client.chat.completions.create(model="bench", messages=messages(i), temperature=0, max_tokens=512)  # type: ignore[arg-type]
                return r.choices[0].message.content or ""

        try:
            return await timed(one)
        finally:
            await client.close()

    async def with_httpx() -> float:
        try:
            import httpx2 as httpx  # what this openai release ships with
        except ImportError:
            import httpx  # type: ignore[no-redef]
        client = httpx.AsyncClient(limits=httpx.Limits(max_connections=args.concurrency), timeout=60)
        sem = asyncio.Semaphore(args.concurrency)

        async def one(i: int) -> str:
            async with sem:
                r = await client.post(base + "/chat/completions", json={"model": "bench", "messages": messages(i), "temperature": 0, "max_tokens": 512})
                return r.json()["choices"][0]["message"]["content"]

        try:
            return await timed(one)
        finally:
            await client.aclose()

    c0 = time.process_time()
    seconds = asyncio.run(with_openai() if args.client == "openai" else with_httpx())
    return {"client": args.client, "n": args.n, "concurrency": args.concurrency, "seconds": seconds, "cpu_s": time.process_time() - c0}
