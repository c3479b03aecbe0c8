"""``--child harness``: guitest's own CPU per case in process (read the screenshot, build the request, judge the reply,
write the cache), the model answered by the loopback server.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any


def child_harness(args: argparse.Namespace) -> dict[str, Any]:
    """Per-case harness time over the large screenshots: run_case in-process, the model's generate faked.

    Stages are timed by wrapping the functions the case path calls, where it calls them
    (module attributes), with time.perf_counter; decodes are counted by wrapping
    PIL's ImageFile.load (a call that finds tiles to decode is one decode).
    """
    import inspect
    from collections import Counter

    from PIL import ImageFile

    import guitest.run.case as case_mod
    import guitest.models.base as base_mod
    import guitest.models.openai_api as oa_mod
    import guitest.tasks.grounding as grounding_mod
    from guitest import images as images_mod
    from guitest.datapath import locate
    from guitest.formats import read_suite_samples
    from guitest.models import load_model
    from guitest.models.base import Reply, Settings
    from guitest.suite import load_suite

    timings: dict[str, float] = Counter()
    decodes: Counter[str] = Counter()

    def timed(module: Any, name: str, label: str) -> None:
        fn = getattr(module, name, None)
        if fn is None:
            return

        def wrapper(*a: Any, **k: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                timings[label] += time.perf_counter() - t

        setattr(module, name, wrapper)

    # where the case path calls them: a tree that imports them at the top of case, base and openai_api, or one that
    # imports them from guitest.images where they are used (each call reads the images module's attribute)
    for module in (case_mod, images_mod):
        timed(module, "open_image", "open")
    for module in (base_mod, images_mod):
        timed(module, "decode_rgb", "decode")
        timed(module, "resized", "resize")
    for module in (oa_mod, images_mod):
        timed(module, "as_file", "file as is")
        timed(module, "encode", "encode")
        timed(module, "data_uri", "base64")
    timed(grounding_mod, "parse_answer", "parse")
    timed(grounding_mod, "judge", "parse+score")
    thumb = getattr(images_mod, "thumbnail", None)

    load = ImageFile.ImageFile.load

    def counting_load(self: Any) -> Any:
        if getattr(self, "tile", None):
            decodes[getattr(self, "filename", "?")] += 1
        return load(self)

    ImageFile.ImageFile.load = counting_load  # type: ignore[method-assign]

    suite = load_suite(Path(args.suite) / "suite.yaml")
    data_dir = locate(str(suite.folder), suite.data, args.suite, "bench", str(suite.path))
    samples = read_suite_samples(suite, data_dir)
    if args.only_size:  # e.g. the 3840x2160 rows of the full-size suite
        w, h = (int(v) for v in args.only_size.lower().split("x"))
        samples = [s for s in samples if s.size == (w, h)][: args.n] or samples[:0]
        if not samples:
            raise SystemExit(f"no rows of size {args.only_size} in {args.suite}")
    sizing = {"resize": args.resize} if "resize" in Settings.__dataclass_fields__ else {}
    model = load_model(args.model, Settings(base_url="http://127.0.0.1:9/v1", **sizing), profile=args.profile)

    # the body as the tree's lean client makes it: request_body.dumps where openai_api uses it, else json.dumps
    body_module = getattr(oa_mod, "request_body", None)
    encode_body = body_module.dumps if body_module is not None else (lambda p: json.dumps(p, ensure_ascii=False).encode("utf-8"))

    def fake_generate(prompt: Any, image: Any, case: Any) -> Any:
        messages = model.messages(prompt, image)
        t = time.perf_counter()
        encode_body({"model": "bench", "messages": messages, "temperature": 0, "max_tokens": 512})
        timings["request json"] += time.perf_counter() - t
        return Reply(text="Answer: [0.5, 0.5]")

    model.generate = fake_generate  # type: ignore[method-assign]
    takes_thumb = "thumbnail" in inspect.signature(case_mod.run_case).parameters

    def thumbnail_cb(path: str, image: Any) -> str:
        t = time.perf_counter()
        try:
            return thumb(image)  # type: ignore[misc]
        finally:
            timings["thumbnail"] += time.perf_counter() - t

    # warm up (imports, first-call caches) on one case, then measure
    case_mod.run_case(samples[0], model, None)
    timings.clear()
    decodes.clear()
    per_case = []
    sent_sizes = set()
    c0, t0 = time.process_time(), time.perf_counter()
    for sample in samples:
        t = time.perf_counter()
        if args.thumbnails and takes_thumb and thumb is not None:
            result = case_mod.run_case(sample, model, None, thumbnail=thumbnail_cb)
        else:
            result = case_mod.run_case(sample, model, None)
        per_case.append(time.perf_counter() - t)
        assert result["verdict"] != "error", result
        sent_sizes.add(tuple(result.get("sent_size") or ()))
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    n = len(samples)
    images_used = Counter(s.image for s in samples)
    return {
        "request_body": body_module is not None,
        "resize": args.resize,
        "model": args.model,
        "profile": model.profile.name,
        "thumbnails": bool(args.thumbnails and takes_thumb and thumb is not None),
        "n": n,
        "ms_per_case": 1000 * wall / n,
        "cpu_ms_per_case": 1000 * cpu / n,
        "max_ms": 1000 * max(per_case),
        "stages_ms": {k: round(1000 * v / n, 1) for k, v in sorted(timings.items(), key=lambda kv: -kv[1])},
        "decodes_per_case": sum(decodes.values()) / n,
        "max_decodes_of_one_image_per_use": max(decodes[p] / images_used[p] for p in images_used),
        "sent_sizes": sorted(sent_sizes),
    }
