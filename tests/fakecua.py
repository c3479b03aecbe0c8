"""A fake of the two computer-use APIs for tests (standard library only): Anthropic's Messages API with the
``computer`` tool and OpenAI's Responses API with the computer-use tool, on one loopback server.

Run as its own process (``fakeserver.serve(tmp, script=..., program=fakecua.__file__)``), with fakeserver's
options: ``--port-file``, ``--log``, ``--script``, ``--latency``, ``--max-seconds``, ``--port``.

Endpoints: ``POST /v1/messages`` (Anthropic) and ``POST /v1/responses`` (OpenAI). The key may come as Anthropic's
documented ``x-api-key`` or as ``Authorization: Bearer`` (what the anthropic client 2.x sends). Each request is checked
against the wire shapes the providers document (the SDK types of anthropic 2.x, ``anthropic.types.beta``, and of
openai, ``openai.types.responses``), written here from them, not from guitest's code; a request that breaks one
gets HTTP 400 with a message starting ``fakecua:`` (which guitest reports as the episode's error):

- Anthropic: a key, ``anthropic-version``, the ``anthropic-beta`` header of the tool version
  (``computer-use-2025-01-24`` for ``computer_20250124``, ``computer-use-2025-11-24`` for ``computer_20251124``), one
  tool ``{"type", "name": "computer", "display_width_px", "display_height_px"}`` (``enable_zoom`` only in
  20251124), ``max_tokens``, user/assistant turns alternating from a user turn; the first holds the instruction
  text and the screenshot (base64 PNG of exactly the declared display's size); every later user turn answers each
  ``tool_use`` of the assistant turn before it, in order, with a ``tool_result`` (an image of the display's size,
  or ``is_error`` and a text);
- OpenAI: a bearer ``Authorization``; the tool ``{"type": "computer_use_preview", "display_width",
  "display_height", "environment"}`` with ``truncation: "auto"`` (required for the preview), or ``{"type":
  "computer"}``; the first input a user message with an ``input_image`` (PNG data URI) and ``input_text``; every
  later request a ``previous_response_id`` this server issued and one ``computer_call_output`` per
  ``computer_call`` of that response, in order, with a ``computer_screenshot`` of the display's size and
  ``acknowledged_safety_checks`` equal to the call's ``pending_safety_checks``.

Script (``--script``, JSON): ``{KEY: [ENTRY, ...]}``. A request belongs to the first KEY that is a substring of its
instruction (the first user text; OpenAI's later requests: the key of their ``previous_response_id``); each request
of a key takes its next ENTRY (an episode's first request starts nothing over: entries run on across episodes and
retries). An ENTRY:

* ``{"calls": [CALL, ...], "text": "..."}``: a reply calling the tool; Anthropic's CALL is the ``computer`` tool's
  input (``{"action": "left_click", "coordinate": {"frac": [fx, fy]}}``: ``{"frac": [fx, fy]}`` becomes the integer
  pixel of the declared display at those fractions of its width and height); OpenAI's CALL is
  ``{"action": ACTION}`` (preview) or ``{"actions": [ACTION, ...]}`` (GA), with ``"pending_safety_checks": [...]``
  optionally, an ACTION's ``"at": [fx, fy]`` becoming its ``x``, ``y`` and a drag's ``"path": [[fx, fy], ...]`` its
  points;
* ``{"text": "..."}``: a reply without a tool call (``end_turn`` / a message);
* ``{"status": N}``: an HTTP error in the provider's shape (429 ``rate_limit_error``, 529 ``overloaded_error``, 5xx
  ``api_error``/``server_error``), ``"retry_after": S`` adds the header, ``"echo_key": true`` puts the received key
  into the message;
* ``{"refusal": "..."}``: Anthropic ``stop_reason: "refusal"``; OpenAI a ``refusal`` content item;
* ``{"truncated": true}``: Anthropic ``stop_reason: "max_tokens"``; OpenAI ``status: "incomplete"``.

A key with no entry left answers with a text reply (``end_turn``). Log (``--log``): one JSON line per request:
``{"api", "path", "key", "entry", "kind", "instruction", "display", "images": [[w, h], ...], "results": [{"id",
"images", "sha256" (of each image's bytes), "text" | "error" | "acknowledged"}], "beta", "tool", "previous_response_id",
"auth_sha256", "in_flight", "error", "usage"}`` (never a key); ``usage`` is the reply's usage as sent, every kind the
API documents (Anthropic's ``input_tokens``, ``output_tokens``, ``cache_read_input_tokens``,
``cache_creation_input_tokens``; the Responses API's ``input_tokens``, ``output_tokens`` and their ``*_details``),
different from one reply to the next.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import itertools
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fakeserver import _png_size, _watchdog, publish_and_serve, write_reply  # noqa: E402

BETAS = {"computer_20250124": "computer-use-2025-01-24", "computer_20251124": "computer-use-2025-11-24"}
ANTHROPIC_ERRORS = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}
OPENAI_ERRORS = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    429: ("requests", "rate_limit_exceeded"),
    500: ("server_error", None),
    503: ("server_error", None),
}


class Bad(Exception):
    """A request that breaks the wire shape: HTTP 400."""


class State:
    """The script's entries per key and the responses issued (OpenAI), under one lock."""

    def __init__(self, script: dict[str, list[dict[str, Any]]]) -> None:
        self.script = script
        self.used = {key: 0 for key in script}
        self.responses: dict[str, dict[str, Any]] = {}  # OpenAI response id -> {"key", "calls", "display"}
        self.ids = itertools.count(1)
        self.lock = threading.Lock()
        self.in_flight = 0

    def key_of(self, text: str) -> str | None:
        return next((key for key in self.script if key in text), None)

    def next(self, key: str | None) -> tuple[int | None, dict[str, Any] | None]:
        with self.lock:
            if key is None or key not in self.script or self.used[key] >= len(self.script[key]):
                return None, None
            index = self.used[key]
            self.used[key] += 1
            return index, self.script[key][index]


def _digest(data: str) -> str:
    """The SHA-256 of an image's decoded bytes (what a test compares with the screenshots it made)."""
    try:
        return hashlib.sha256(base64.b64decode(data, validate=False)).hexdigest()
    except ValueError:
        return ""


def _image_size(data: str) -> list[int] | None:
    try:
        raw = base64.b64decode(data[:8192] + "=" * (-len(data[:8192]) % 4), validate=False)
    except ValueError:
        return None
    return _png_size(raw)


def _uri_size(url: Any) -> list[int] | None:
    if not isinstance(url, str) or not url.startswith("data:image/png;base64,"):
        return None
    return _image_size(url.split(",", 1)[1])


def _frac(value: Any, display: list[int]) -> Any:
    """``{"frac": [fx, fy]}`` anywhere in ``value`` as the display's integer pixel at those fractions."""
    if isinstance(value, dict):
        if set(value) == {"frac"}:
            fx, fy = value["frac"]
            return [int(fx * display[0]), int(fy * display[1])]
        return {k: _frac(v, display) for k, v in value.items()}
    if isinstance(value, list):
        return [_frac(v, display) for v in value]
    return value


def _openai_action(action: dict[str, Any], display: list[int]) -> dict[str, Any]:
    out = {k: v for k, v in action.items() if k not in ("at", "path")}
    if "at" in action:
        out["x"], out["y"] = int(action["at"][0] * display[0]), int(action["at"][1] * display[1])
    if "path" in action:
        out["path"] = [{"x": int(fx * display[0]), "y": int(fy * display[1])} for fx, fy in action["path"]]
    return out


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, state: State, latency: float, log_path: str | None, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.state = state
        self.latency = latency
        self.log_path = log_path
        self.log_lock = threading.Lock()

    def log(self, record: dict[str, Any]) -> None:
        if self.log_path:
            with self.log_lock, open(self.log_path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        write_reply(self, status, json.dumps(payload).encode("utf-8"), headers)

    def do_POST(self) -> None:  # noqa: N802
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path = self.path.split("?", 1)[0].rstrip("/")
        api = {"/v1/messages": "anthropic", "/v1/responses": "openai"}.get(path)
        # the key: Anthropic's documented x-api-key, or the bearer token the anthropic client 2.x and openai's send
        secret = (self.headers.get("x-api-key") if api == "anthropic" else None) or (self.headers.get("Authorization") or "").removeprefix("Bearer ")
        record: dict[str, Any] = {"time": time.time(), "method": "POST", "api": api, "path": self.path, "auth_sha256": hashlib.sha256((secret or "").encode()).hexdigest()}
        state = self.server.state
        with state.lock:
            state.in_flight += 1
            record["in_flight"] = state.in_flight
        try:
            if api is None:
                record["error"] = "no such endpoint"
                self.server.log(record)
                self._send(404, {"error": {"type": "not_found_error", "message": f"no such endpoint: POST {self.path}"}})
                return
            try:
                body = json.loads(raw.decode("utf-8"))
                if not isinstance(body, dict):
                    raise Bad("the body is not a JSON object")
                if not secret:
                    raise Bad("no API key (x-api-key or Authorization: Bearer)")
                reply = self._anthropic(body, record) if api == "anthropic" else self._openai(body, record)
            except Bad as exc:
                record["error"] = str(exc)
                self.server.log(record)
                self._fail(api, 400, f"fakecua: {exc}")
                return
            self.server.log(record)
            if self.server.latency:
                time.sleep(self.server.latency)
            status, payload, headers = reply
            self._send(status, payload, headers)
        finally:
            with state.lock:
                state.in_flight -= 1

    def _fail(self, api: str, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        if api == "anthropic":
            self._send(status, {"type": "error", "error": {"type": ANTHROPIC_ERRORS.get(status, "api_error"), "message": message}}, headers)
        else:
            kind, code = OPENAI_ERRORS.get(status, ("server_error", None))
            self._send(status, {"error": {"message": message, "type": kind, "param": None, "code": code}}, headers)

    def _fault(self, api: str, entry: dict[str, Any], secret: str) -> tuple[int, Any, dict[str, str]]:
        status = int(entry["status"])
        message = str(entry.get("message") or f"fake {status}") + (f" (received key {secret})" if entry.get("echo_key") else "")
        headers = {"retry-after": str(entry["retry_after"])} if "retry_after" in entry else {}
        if api == "anthropic":
            return status, {"type": "error", "error": {"type": ANTHROPIC_ERRORS.get(status, "api_error"), "message": message}}, headers
        kind, code = OPENAI_ERRORS.get(status, ("server_error", None))
        return status, {"error": {"message": message, "type": kind, "param": None, "code": code}}, headers

    @staticmethod
    def _usage(record: dict[str, Any], api: str, n: int) -> dict[str, Any]:
        """The usage of reply ``n`` in the API's own shape (every kind it documents, different from reply to reply),
        recorded in the log as sent."""
        if api == "anthropic":  # input_tokens leaves out the cache's reads and writes, as Anthropic counts
            usage: dict[str, Any] = {"input_tokens": 100 + 7 * n, "output_tokens": 10 + n % 5, "cache_read_input_tokens": 50, "cache_creation_input_tokens": 20 + n % 3}
        else:  # the Responses API: input_tokens counts the cached ones too
            reasoning = 5 + n % 3
            usage = {
                "input_tokens": 200 + 11 * n,
                "input_tokens_details": {"cached_tokens": 64},
                "output_tokens": 15 + reasoning,
                "output_tokens_details": {"reasoning_tokens": reasoning},
                "total_tokens": 200 + 11 * n + 15 + reasoning,
            }
        record["usage"] = usage
        return usage

    # -- Anthropic Messages ---------------------------------------------------------------------------------------

    def _anthropic(self, body: dict[str, Any], record: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        if not self.headers.get("anthropic-version"):
            raise Bad("no anthropic-version header")
        tools = body.get("tools")
        if not isinstance(tools, list) or len(tools) != 1 or not isinstance(tools[0], dict):
            raise Bad("expected exactly one tool, the computer tool")
        tool = tools[0]
        version = tool.get("type")
        if version not in BETAS or tool.get("name") != "computer":
            raise Bad(f"not a computer tool: {tool}")
        display = [tool.get("display_width_px"), tool.get("display_height_px")]
        if not all(isinstance(v, int) and v > 0 for v in display):
            raise Bad(f"display_width_px/display_height_px must be positive integers: {display}")
        if "enable_zoom" in tool and version != "computer_20251124":
            raise Bad("enable_zoom is only a field of computer_20251124")
        beta = self.headers.get("anthropic-beta") or ""
        if BETAS[version] not in [b.strip() for b in beta.split(",")]:
            raise Bad(f"the {version} tool needs the anthropic-beta header {BETAS[version]!r}, got {beta!r}")
        if not isinstance(body.get("max_tokens"), int) or not isinstance(body.get("model"), str):
            raise Bad("model and max_tokens are required")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages or len(messages) % 2 != 1:
            raise Bad("messages must alternate user/assistant from a user turn and end with a user turn")
        for n, message in enumerate(messages):
            if not isinstance(message, dict) or message.get("role") != ("user" if n % 2 == 0 else "assistant") or not isinstance(message.get("content"), list):
                raise Bad(f"message {n} must be a {'user' if n % 2 == 0 else 'assistant'} turn with a content list")
        first = messages[0]["content"]
        kinds = [b.get("type") for b in first if isinstance(b, dict)]
        if kinds != ["text", "image"]:
            raise Bad(f"the first user turn must be the instruction text and the screenshot, got {kinds}")
        instruction = str(first[0].get("text") or "")
        images = [self._anthropic_image(first[1], display)]
        results = []
        if len(messages) > 1:
            uses = [b for b in messages[-2]["content"] if isinstance(b, dict) and b.get("type") == "tool_use"]
            asked = [b.get("id") for b in uses]
            zooms = {b.get("id") for b in uses if isinstance(b.get("input"), dict) and b["input"].get("action") == "zoom"}
            answered = [b for b in messages[-1]["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
            if [b.get("tool_use_id") for b in answered] != asked or len(answered) != len(messages[-1]["content"]):
                raise Bad(f"the last user turn must answer the tool_use ids {asked} in order with tool_result blocks only")
            for block in answered:
                content = block.get("content")
                if block.get("is_error"):
                    if not isinstance(content, str) or not content:
                        raise Bad("an is_error tool_result must say what went wrong")
                    results.append({"id": block["tool_use_id"], "error": content})
                    continue
                parts = content if isinstance(content, list) else []
                zoom = block["tool_use_id"] in zooms  # a zoom shows a region at its own size; any other result the display
                pictures = [p for p in parts if isinstance(p, dict) and p.get("type") == "image"]
                shots = [self._anthropic_image(p, display, zoom=zoom) for p in pictures]
                texts = [p.get("text") for p in parts if isinstance(p, dict) and p.get("type") == "text"]
                if not shots and not texts:
                    raise Bad(f"tool_result {block['tool_use_id']} holds neither a screenshot nor a text")
                results.append({"id": block["tool_use_id"], "images": shots, "sha256": [_digest(p["source"]["data"]) for p in pictures], "text": " ".join(map(str, texts))})
            for message in messages[2::2]:  # every earlier tool_result image too (the kept ones)
                for block in message["content"]:
                    for part in block.get("content") if isinstance(block.get("content"), list) else []:
                        if isinstance(part, dict) and part.get("type") == "image":
                            images.append(_image_size((part.get("source") or {}).get("data") or ""))
        state = self.server.state
        key = state.key_of(instruction)
        index, entry = state.next(key)
        record.update(
            key=key,
            entry=index,
            instruction=instruction,
            display=display,
            images=images,
            results=results,
            beta=beta,
            tool=tool,
            turns=len(messages) // 2,
            temperature=body.get("temperature"),
            system=body.get("system"),
        )
        entry = entry or {"text": "Finished."}
        record["kind"] = next((k for k in ("status", "refusal", "truncated", "calls") if k in entry), "text")
        if "status" in entry:
            return self._fault("anthropic", entry, self.headers.get("x-api-key") or (self.headers.get("Authorization") or "").removeprefix("Bearer "))
        n = next(state.ids)
        content: list[dict[str, Any]] = [{"type": "text", "text": entry["text"]}] if entry.get("text") else []
        stop = "end_turn"
        if "refusal" in entry:
            content, stop = [{"type": "text", "text": entry["refusal"]}], "refusal"
        elif entry.get("truncated"):
            content, stop = [{"type": "text", "text": "I will now click the"}], "max_tokens"
        elif "calls" in entry:
            content += [{"type": "tool_use", "id": f"toolu_{n:04d}_{k}", "name": "computer", "input": _frac(call, display)} for k, call in enumerate(entry["calls"])]
            stop = "tool_use"
        return (
            200,
            {
                "id": f"msg_{n:04d}",
                "type": "message",
                "role": "assistant",
                "model": body["model"],
                "content": content,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": self._usage(record, "anthropic", n),
            },
            {},
        )

    @staticmethod
    def _anthropic_image(block: Any, display: list[int], zoom: bool = False) -> list[int] | None:
        source = block.get("source") if isinstance(block, dict) else None
        if not isinstance(source, dict) or source.get("type") != "base64" or source.get("media_type") != "image/png" or not isinstance(source.get("data"), str):
            raise Bad("an image must be {'type': 'base64', 'media_type': 'image/png', 'data': ...}")
        size = _image_size(source["data"])
        if size is None:
            raise Bad("an image is not a PNG")
        if size != display and not zoom:
            raise Bad(f"a screenshot of {size[0]}x{size[1]} for a display declared {display[0]}x{display[1]}")
        return size

    # -- OpenAI Responses -----------------------------------------------------------------------------------------

    def _openai(self, body: dict[str, Any], record: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        if not (self.headers.get("Authorization") or "").startswith("Bearer "):
            raise Bad("no bearer Authorization header")
        tools = body.get("tools")
        if not isinstance(tools, list) or len(tools) != 1 or not isinstance(tools[0], dict):
            raise Bad("expected exactly one tool, the computer-use tool")
        tool = tools[0]
        state = self.server.state
        items = body.get("input")
        if not isinstance(items, list) or not items:
            raise Bad("input must be a non-empty list")
        previous = body.get("previous_response_id")
        results: list[dict[str, Any]] = []
        if previous is None:
            message = items[0]
            parts = message.get("content") if isinstance(message, dict) and message.get("role") == "user" else None
            kinds = [p.get("type") for p in parts or [] if isinstance(p, dict)]
            if len(items) != 1 or kinds != ["input_image", "input_text"]:
                raise Bad(f"the first input must be one user message with an input_image and an input_text, got {kinds}")
            shot = _uri_size(parts[0].get("image_url"))
            if shot is None or parts[0].get("detail") not in ("auto", "original", "high", "low"):
                raise Bad("the input_image must be a PNG data URI with a detail level")
            instruction = str(parts[1].get("text") or "")
            key = state.key_of(instruction)
            display = shot
            images = [shot]
        else:
            with state.lock:
                chain = state.responses.get(previous)
            if chain is None:
                raise Bad(f"previous_response_id {previous!r} is not a response of this server")
            key, display, calls = chain["key"], chain["display"], chain["calls"]
            outputs = [i for i in items if isinstance(i, dict) and i.get("type") == "computer_call_output"]
            if len(outputs) != len(items) or [o.get("call_id") for o in outputs] != [c["call_id"] for c in calls]:
                raise Bad(f"the input must be one computer_call_output per computer_call of {previous}, in order: {[c['call_id'] for c in calls]}")
            images = []
            for output, call in zip(outputs, calls, strict=True):
                shot = output.get("output") if isinstance(output.get("output"), dict) else {}
                size = _uri_size(shot.get("image_url"))
                if shot.get("type") != "computer_screenshot" or size is None:
                    raise Bad("a computer_call_output's output must be a computer_screenshot with a PNG data URI")
                if size != display:
                    raise Bad(f"a screenshot of {size[0]}x{size[1]} for a display of {display[0]}x{display[1]}")
                if list(output.get("acknowledged_safety_checks") or []) != call["pending_safety_checks"]:
                    raise Bad(f"computer_call {call['call_id']}: the pending safety checks were not acknowledged")
                images.append(size)
                results.append({"id": call["call_id"], "images": [size], "sha256": [_digest(shot["image_url"].split(",", 1)[1])], "acknowledged": output.get("acknowledged_safety_checks") or []})
            instruction = None
        if tool.get("type") == "computer_use_preview":
            declared = [tool.get("display_width"), tool.get("display_height")]
            if declared != display or tool.get("environment") not in ("windows", "mac", "linux", "ubuntu", "browser"):
                raise Bad(f"the preview tool must declare the screenshot's size {display} and an environment: {tool}")
            if body.get("truncation") != "auto":
                raise Bad("computer-use-preview requires truncation: auto")
        elif tool != {"type": "computer"}:
            raise Bad(f"not a computer-use tool: {tool}")
        index, entry = state.next(key)
        record.update(key=key, entry=index, instruction=instruction, display=display, images=images, results=results, tool=tool, previous_response_id=previous)
        entry = entry or {"text": "Finished."}
        record["kind"] = next((k for k in ("status", "refusal", "truncated", "calls") if k in entry), "text")
        if "status" in entry:
            return self._fault("openai", entry, (self.headers.get("Authorization") or "").removeprefix("Bearer "))
        n = next(state.ids)
        output: list[dict[str, Any]] = []
        calls_out = []
        status = "completed"
        if entry.get("text") and "refusal" not in entry:
            output.append({"type": "reasoning", "id": f"rs_{n:04d}", "summary": [{"type": "summary_text", "text": entry["text"]}]})
        if "refusal" in entry:
            output.append({"type": "message", "id": f"msg_{n:04d}", "role": "assistant", "status": "completed", "content": [{"type": "refusal", "refusal": entry["refusal"]}]})
        elif entry.get("truncated"):
            status = "incomplete"
        elif "calls" in entry:
            for k, call in enumerate(entry["calls"]):
                item = {"type": "computer_call", "id": f"cu_{n:04d}_{k}", "call_id": f"call_{n:04d}_{k}", "status": "completed", "pending_safety_checks": call.get("pending_safety_checks", [])}
                if "actions" in call:
                    item["actions"] = [_openai_action(a, display) for a in call["actions"]]
                else:
                    item["action"] = _openai_action(call["action"], display)
                output.append(item)
                calls_out.append({"call_id": item["call_id"], "pending_safety_checks": item["pending_safety_checks"]})
        else:
            output.append(
                {"type": "message", "id": f"msg_{n:04d}", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": entry.get("text") or "Finished.", "annotations": []}]}
            )
        response_id = f"resp_{n:04d}"
        with state.lock:
            state.responses[response_id] = {"key": key, "display": display, "calls": calls_out}
        return (
            200,
            {
                "id": response_id,
                "object": "response",
                "created_at": int(time.time()),
                "status": status,
                "model": body.get("model"),
                "output": output,
                "parallel_tool_calls": True,
                "tool_choice": "auto",
                "tools": tools,
                "error": None,
                "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
                "usage": self._usage(record, "openai", n),
            },
            {},
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fake computer-use APIs (Anthropic Messages, OpenAI Responses) for tests.")
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--script")
    parser.add_argument("--log")
    parser.add_argument("--max-seconds", type=float, default=600.0)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--models", default=None)  # fakeserver's option, unused here
    args = parser.parse_args(argv)
    threading.Thread(target=_watchdog, args=(args.max_seconds, os.getppid()), daemon=True).start()
    script = {}
    if args.script:
        with open(args.script, encoding="utf-8") as fh:
            script = json.load(fh)
    return publish_and_serve(Server(State(script), args.latency, args.log, args.port), args.port_file)


if __name__ == "__main__":
    sys.exit(main())
