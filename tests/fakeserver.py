"""A fake OpenAI-compatible chat-completions server for tests (standard library only).

Run as its own process::

    python tests/fakeserver.py --port-file PATH [--port N] [--models JSON] [--latency S] [--script PATH] [--log PATH] [--max-seconds S]

It listens on 127.0.0.1 on an ephemeral port (or ``--port``), writes the port to ``--port-file`` once
listening (atomically: temp file + rename) and serves until killed. It bounds itself:
it exits after ``--max-seconds`` (default 600) and as soon as its parent process dies.

Endpoints: ``POST /v1/chat/completions`` (also ``/chat/completions``) and
``GET /v1/models``, which lists ``--models`` (JSON ``{id: root}``; a root of null leaves the
field out; default ``{"fake-model": null}``) as vLLM does: ``id``, ``root``, ``owned_by``.

Default reply: the text after ``ANSWER=`` up to the end of that line, searched in the
last user message's text; else ``Answer: [0.5, 0.5]``.

Script (``--script``, JSON): ``{KEY: [ACTION, ...], ...}``. For each chat request the
first KEY (in file order) that is a substring of the request's user text is chosen
(``"*"`` matches every request); that key's next unused action applies. When the chosen
key's list is exhausted the request is answered normally (later keys are NOT tried).
Counters are per key and thread-safe. An ACTION is an object; its fields combine:

* ``{"sleep": 5}``                sleep that long before answering (provokes client timeouts)
* ``{"hold": "NAME"}``            answer only once the test has called :meth:`Server.release` with NAME (a reply
  that comes late by as long as the test needs, whatever the machine's load, rather than after a guessed time)
* ``{"status": 500}``             HTTP error with an OpenAI-style ``{"error": {...}}`` body;
  ``"retry_after": 0`` adds a ``Retry-After`` header, ``"message": "..."`` sets the error
  message, ``"echo_key": true`` puts the received bearer key into the error message (to
  test that clients scrub it; the key is never logged)
* ``{"malformed": true}``         200, ``application/json``, a body that is not valid JSON
* ``{"no_choices": true}``        200, a chat.completion with ``"choices": []``
* ``{"drop": true}``              close the connection without any reply
* ``{"cut": 40}``                 the reply (as it would be) with its full Content-Length, but only its first 40 body
  bytes before the connection closes: a reply cut in its middle (its usage is in the log all the same)
* ``{"point": [x, y], "space": S, "render": R}``  answer the normalized point in space S with template R
  (``{x}``/``{y}``) for the image received; ``"processor": {"factor", "min_pixels", "max_pixels"}``
  makes ``pixel_sent`` the size after a Qwen-style smart_resize of the received image
* ``{"body": ANY_JSON}``          200 with exactly that JSON value as the body
* ``{"content": "...", "finish_reason": "length"}``  a fixed reply and/or finish reason (``null`` content too)
* ``{"pad": 5000000}``            that many characters of prose before the reply's answer
* ``{"point": [nx, ny], "space": "pixel_sent", "render": "click(start_box='({x},{y})')", "decimals": 0}``
  answer the normalized point in a coordinate space (``normalized``, ``grid1000``, or
  ``pixel_sent``: pixels of the image as received, so the server learns the size only
  from the request), written with ``render``
* ``{"p_correct": 0.6, "point": [nx, ny], "wrong_point": [wx, wy], ...}``  answer ``point`` with
  probability ``p_correct`` (the server's own seeded RNG), else ``wrong_point``; the log's
  ``fault`` records the choice as ``"correct": true|false``
* ``{"act": {"kind": "click", "point": [nx, ny]}, "convention": C, "space": S}``  a live step's reply in
  convention C (guitest, uitars, computer_use, pyautogui) with its point in space S (see :func:`render_action`)
* ``{"act": [act, ...], ...}``  a reply with several actions, in the convention's own way of writing several
* ``{"policy": [act, ...], "convention": C, "space": S}``  a scripted episode: answers the act (or list of acts) of
  the step the request is at (:func:`earlier_steps`: the earlier replies and history lines it shows), so one entry
  serves concurrent episodes of the same task
* ``{"usage": {...}}``             the reply's ``usage`` exactly (``null``: a reply without one, as some servers send)
* ``{}``                          answer normally (a placeholder to fail later requests only)

Usage: a reply carries :func:`usage_of`'s numbers for the request unless the action gives its own: every kind OpenAI
sends (``prompt_tokens``, ``completion_tokens``, ``prompt_tokens_details.cached_tokens``,
``completion_tokens_details.reasoning_tokens``), made from the request's words and images so that they differ from one
request to the next; the log records what was sent (``usage``).

Log (``--log``): one JSON object per line per request received, written before the reply
is sent (so a request the client gave up on is still logged)::

    {"time": float, "method": "POST", "path": "/v1/chat/completions", "model": str|None,
     "roles": [str], "texts": [str], "user_text": str, "image": bool,
     "image_mime": str|None, "image_size": [w, h]|None, "auth": bool,
     "params": {"temperature", "max_tokens", "seed"}, "key": str|None, "fault": dict|None,
     "in_flight": int}

``texts`` are the text parts of all messages in order (a string content counts as one
part); ``image_size`` is read from the PNG header when the image is a PNG; ``auth`` says
only whether an ``Authorization`` header was present (the key itself is never logged; ``auth_scheme``
is its first word, ``auth_sha256`` the SHA-256 of the whole header);
``openai_headers`` holds the ``OpenAI-Organization`` and ``OpenAI-Project`` headers received (names in lower case);
``key`` is the script key that matched and ``fault`` the action applied (None: normal);
``in_flight`` counts the chat requests being answered when this one arrived, itself included; ``usage`` is the
usage the reply carries (None: none; a request answered with an error carries it all the same in the log, unsent).
Records of ``GET`` requests and of unknown paths carry only ``time, method, path, auth,
openai_headers, model, key, fault``.

For tests, :func:`serve` starts the server as a subprocess and yields a :class:`Server`.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import itertools
import json
import math
import os
import random
import re
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

DEFAULT_ANSWER = "Answer: [0.5, 0.5]"
ANSWER_RE = re.compile(r"ANSWER=([^\r\n]*)")
STEP_LINE_RE = re.compile(r"^Step \d+: ", re.MULTILINE)  # a history line of a live step prompt (guitest's, Qwen's)
DATA_URI_RE = re.compile(r"^data:([^;,]+)(;base64)?,", re.IGNORECASE)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MALFORMED_BODY = b'{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{"index": 0, "mess'
ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "model_not_found"),
    408: ("timeout", None),
    409: ("conflict", None),
    429: ("requests", "rate_limit_exceeded"),
}


# --------------------------------------------------------------------------- server


class Script:
    """The fault script: per-key action lists, consumed in order under a lock."""

    def __init__(self, actions: dict[str, list[dict[str, Any]]] | None = None) -> None:
        actions = actions or {}
        if not isinstance(actions, dict) or not all(isinstance(v, list) for v in actions.values()):
            raise ValueError("script must be a JSON object mapping keys to lists of actions")
        for key, items in actions.items():
            for item in items:
                if not isinstance(item, dict):
                    raise ValueError(f"script key {key!r}: each action must be an object, got {item!r}")
        self.actions = actions
        self.used = {key: 0 for key in actions}
        self.lock = threading.Lock()

    def next(self, user_text: str, system_text: str = "") -> tuple[str | None, dict[str, Any] | None]:
        """The matching key and its next action (None once exhausted, or when nothing matches). A key is looked for in
        the user text, then in the system text (a runner that says the task there, as OSWorld's PromptAgent does)."""
        with self.lock:
            if not any(key == "*" or key in user_text for key in self.actions):
                user_text = f"{user_text}\n{system_text}"
            for key, items in self.actions.items():
                if key == "*" or key in user_text:
                    index = self.used[key]
                    if index >= len(items):
                        return key, None
                    self.used[key] = index + 1
                    return key, items[index]
        return None, None


class FakeServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, script: Script, latency: float, log_path: str | None, port: int = 0, models: dict[str, str | None] | None = None) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.models = models or {"fake-model": None}
        self.script = script
        self.latency = latency
        self.log_path = log_path
        self.log_lock = threading.Lock()
        self.ids = itertools.count(1)
        self.rng = random.Random(0)
        self.in_flight = 0  # chat requests received and not yet answered

    def log(self, record: dict[str, Any]) -> None:
        if not self.log_path:
            return
        line = json.dumps(record, ensure_ascii=False) + "\n"
        with self.log_lock, open(self.log_path, "a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()


def _png_size(data: bytes) -> list[int] | None:
    if data.startswith(PNG_SIGNATURE) and len(data) >= 24 and data[12:16] == b"IHDR":
        width, height = struct.unpack(">II", data[16:24])
        return [width, height]
    return None


def _jpeg_size(data: bytes) -> list[int] | None:
    if not data.startswith(b"\xff\xd8"):
        return None
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker, length = data[i + 1], struct.unpack(">H", data[i + 2 : i + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            height, width = struct.unpack(">HH", data[i + 5 : i + 9])
            return [width, height]
        i += 2 + length
    return None


def _render_point(action: dict[str, Any], size: list[int] | None) -> str:
    """A reply naming the normalized point ``action["point"]`` in ``action["space"]``, for the image size received."""
    nx, ny = action["point"]
    space = action.get("space", "normalized")
    if space == "pixel_sent":
        if not size:
            return "no image received"
        if action.get("processor"):  # a Qwen-style server: the model sees the image after its processor's smart_resize
            size = list(_processor_size(size, **action["processor"]))
        x, y = nx * size[0], ny * size[1]
    elif space == "grid1000":
        x, y = nx * 1000, ny * 1000
    else:
        x, y = nx, ny
    fmt = "{:.%df}" % int(action.get("decimals", 0))
    return str(action["render"]).replace("{x}", fmt.format(x)).replace("{y}", fmt.format(y))


def render_action(act: dict[str, Any] | list[dict[str, Any]], convention: str, space: str, size: list[int] | None) -> str:
    """A live step's reply in a model convention's own syntax, written here by hand from the model cards and OSWorld's
    prompts (not by guitest's renderers, so a reader bug is not mirrored): ``act`` is ``{"kind", "point" [nx, ny]
    normalized, "text", "keys"}``, or a list of them for a reply with several actions; points go out in ``space``
    (normalized, grid1000, grid999, or pixel_sent: pixels of the image received)."""
    acts = act if isinstance(act, list) else [act]
    calls = [_call(a, convention, space, size) for a in acts]
    if convention == "uitars":  # UI-TARS-1.5: one Action: line, the calls apart by a blank line
        return "Thought: I act on the screen.\nAction: " + "\n\n".join(calls)
    if convention == "computer_use":  # Qwen2.5-VL / Qwen3-VL: one <tool_call> block per call
        return "Action: act on the screen\n" + "\n".join(calls)
    if convention == "pyautogui":  # OSWorld's code: one block of code; WAIT, DONE, FAIL as blocks of their own
        if len(calls) == 1 and calls[0] in ("WAIT", "DONE", "FAIL"):
            return calls[0]
        blocks: list[str] = []
        code: list[str] = []
        for call in calls:
            if call in ("WAIT", "DONE", "FAIL"):
                blocks += ["```python\n" + "\n".join(code) + "\n```"] if code else []
                blocks.append(f"```{call}```")
                code = []
            else:
                code.append(call)
        blocks += ["```python\n" + "\n".join(code) + "\n```"] if code else []
        return "I act on the screen.\n" + "\n".join(blocks)
    return "I act on the screen.\nAction: " + "; ".join(calls)  # guitest's own format


def _call(act: dict[str, Any], convention: str, space: str, size: list[int] | None) -> str:
    """One action as a call of ``convention``."""
    kind = act["kind"]
    x = y = None
    if act.get("point") is not None:
        nx, ny = act["point"]
        if space == "pixel_sent":
            w, h = size or (1, 1)
            x, y = round(nx * w), round(ny * h)
        elif space == "grid1000":
            x, y = round(nx * 1000), round(ny * 1000)
        elif space == "grid999":
            x, y = round(nx * 999), round(ny * 999)
        else:
            x, y = round(nx, 4), round(ny, 4)
    text, keys = act.get("text", ""), act.get("keys", [])
    if convention == "uitars":  # UI-TARS-1.5 computer-use action space
        return {
            "click": f"click(start_box='({x},{y})')",
            "double_click": f"left_double(start_box='({x},{y})')",
            "type": "type(content='" + text.replace("\\", "\\\\").replace("'", "\\'").replace(chr(10), "\\n") + "')",
            "wait": "wait()",
            "key": f"hotkey(key='{' '.join(keys)}')",
            "done": "finished(content='done')",
            "fail": "call_user()",
        }[kind]
    if convention == "computer_use":  # Qwen2.5-VL / Qwen3-VL computer_use tool
        arguments = {
            "click": {"action": "left_click", "coordinate": [x, y]},
            "double_click": {"action": "double_click", "coordinate": [x, y]},
            "type": {"action": "type", "text": text},
            "wait": {"action": "wait", "time": 1},
            "key": {"action": "key", "keys": keys},
            "done": {"action": "terminate", "status": "success"},
            "fail": {"action": "terminate", "status": "failure"},
        }[kind]
        return "<tool_call>\n" + json.dumps({"name": "computer_use", "arguments": arguments}, ensure_ascii=False) + "\n</tool_call>"
    if convention == "pyautogui":  # OSWorld's code actions
        return {
            "click": f"pyautogui.click(x={x}, y={y})",
            "double_click": f"pyautogui.doubleClick(x={x}, y={y})",
            "type": f"pyautogui.write({text!r})",
            "wait": "WAIT",
            "key": f"pyautogui.hotkey({', '.join(repr(k) for k in keys)})",
            "done": "DONE",
            "fail": "FAIL",
        }[kind]
    return {  # guitest's own default format
        "click": f"click({x}, {y})",
        "double_click": f"double_click({x}, {y})",
        "type": f"type({json.dumps(text, ensure_ascii=False)})",
        "key": f"key({json.dumps('+'.join(keys))})",
        "wait": "wait(1)",
        "done": "done()",
        "fail": "fail()",
    }[kind]


def earlier_steps(roles: list[str], user_texts: list[str]) -> int:
    """How many earlier steps a live step's request shows: its assistant turns (the model's own earlier replies, as
    UI-TARS's, Qwen's and OSWorld's PromptAgent runners send them) plus the ``Step N:`` history lines of its user texts
    (guitest's own prompt lists every earlier step so; Qwen's runners list the steps older than their window). A
    runner that drops older steps altogether (PromptAgent keeps 3) is counted right up to that many."""
    return roles.count("assistant") + sum(len(STEP_LINE_RE.findall(t)) for t in user_texts)


def _processor_size(size: list[int], factor: int, min_pixels: int, max_pixels: int) -> tuple[int, int]:
    """The size a Qwen2-VL image processor resizes ``size`` (width, height) to: sides multiples of ``factor``,
    area within [min_pixels, max_pixels] (written from the transformers docstring, independent of guitest's code)."""
    width, height = size
    w = max(factor, factor * round(width / factor))
    h = max(factor, factor * round(height / factor))
    if w * h > max_pixels:
        shrink = ((width * height) / max_pixels) ** 0.5
        w = max(factor, factor * math.floor(width / shrink / factor))
        h = max(factor, factor * math.floor(height / shrink / factor))
    elif w * h < min_pixels:
        grow = (min_pixels / (width * height)) ** 0.5
        w = factor * math.ceil(width * grow / factor)
        h = factor * math.ceil(height * grow / factor)
    return w, h


def summarize(body: Any) -> dict[str, Any]:
    """What the log records of a chat request body (texts and image facts, never raw data)."""
    roles: list[str] = []
    texts: list[str] = []
    user_texts: list[str] = []
    system_texts: list[str] = []
    mime = None
    size = None
    image = False
    image_count = 0
    order: list[str] = []  # the user content in order: "text" and "image" (multi-image prompts)
    messages = body.get("messages") if isinstance(body, dict) else None
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        role = str(message.get("role"))
        roles.append(role)
        content = message.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        mine: list[str] = []
        for part in parts if isinstance(parts, list) else []:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "text" and isinstance(part.get("text"), str):
                mine.append(part["text"])
                if role == "user":
                    order.append("text")
            elif part.get("type") == "image_url":
                image_count += 1
                if role == "user":
                    order.append("image")
                url = part.get("image_url")
                url = url.get("url") if isinstance(url, dict) else url
                if isinstance(url, str) and not image:
                    image = True
                    match = DATA_URI_RE.match(url)
                    if match:
                        mime = match.group(1).lower()
                        if match.group(2):
                            try:
                                raw = base64.b64decode(url[match.end() : match.end() + 8192], validate=False)
                            except ValueError:
                                raw = b""
                            size = _png_size(raw) or _jpeg_size(raw)
        texts.extend(mine)
        if role == "user":
            user_texts.append("\n".join(mine))
        elif role == "system":
            system_texts.append("\n".join(mine))
    return {
        "roles": roles,
        "texts": texts,
        "user_texts": user_texts,
        "system_texts": system_texts,
        "image": image,
        "image_mime": mime,
        "image_size": size,
        "image_count": image_count,
        "user_order": order,
    }


def write_reply(handler: BaseHTTPRequestHandler, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
    """Send a JSON reply (status, headers, body) on ``handler``'s connection."""
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)
        handler.wfile.flush()
    except (BrokenPipeError, ConnectionResetError):
        handler.close_connection = True  # the client gave up (e.g. timed out) meanwhile


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # the head and the body of a reply are written apart: with Nagle's algorithm on, the body of
    # a reply on a kept-alive connection waits for the client's delayed ACK (40 ms on Linux)
    disable_nagle_algorithm = True
    server: FakeServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence per-request stderr lines
        pass

    # -- helpers

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send_raw(status, json.dumps(payload).encode("utf-8"), headers)

    def _send_raw(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
        self._answered()
        write_reply(self, status, data, headers)

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        kind, code = ERROR_TYPES.get(status, ("server_error" if status >= 500 else "invalid_request_error", None))
        self._send_json(status, {"error": {"message": message, "type": kind, "param": None, "code": code}}, headers)

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _base_record(self) -> dict[str, Any]:
        return {
            "time": time.time(),
            "method": self.command,
            "path": self.path,
            "auth": bool(self.headers.get("Authorization")),
            # the scheme and a digest of the whole header: a test can check which credentials came, none is logged
            "auth_scheme": (self.headers.get("Authorization") or " ").split(" ", 1)[0] or None,
            "auth_sha256": hashlib.sha256((self.headers.get("Authorization") or "").encode()).hexdigest(),
            "openai_headers": {k.lower(): v for k, v in self.headers.items() if k.lower() in ("openai-organization", "openai-project")},
        }

    # -- endpoints

    def do_GET(self) -> None:  # noqa: N802
        record = self._base_record()
        record.update(model=None, key=None, fault=None)
        self.server.log(record)
        if self.path.split("?", 1)[0].rstrip("/") in ("/v1/models", "/models"):
            self._send_json(
                200,
                {"object": "list", "data": [{"id": name, "object": "model", "created": 0, "owned_by": "fakeserver", **({"root": root} if root else {})} for name, root in self.server.models.items()]},
            )
        else:
            self._error(404, f"no such endpoint: GET {self.path}")

    def do_POST(self) -> None:  # noqa: N802
        raw = self._read_body()
        record = self._base_record()
        if self.path.split("?", 1)[0].rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            record.update(model=None, key=None, fault=None)
            self.server.log(record)
            self._error(404, f"no such endpoint: POST {self.path}")
            return
        try:
            body = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            body = None
        info = summarize(body)
        user_texts = info.pop("user_texts")
        user_text = "\n".join(user_texts)
        key, action = self.server.script.next(user_text, "\n".join(info.pop("system_texts")))
        if action and "p_correct" in action:  # resolved here, so the log is the ledger of right and wrong answers
            with self.server.log_lock:
                correct = self.server.rng.random() < float(action["p_correct"])
            action = {**action, "point": action["point"] if correct else action["wrong_point"], "correct": correct}
        model = body.get("model") if isinstance(body, dict) else None
        record.update(
            model=model,
            **info,
            user_text=user_text,
            params={name: body.get(name) for name in ("temperature", "max_tokens", "seed")} if isinstance(body, dict) else {},
            key=key,
            fault=action,
            usage=(action or {})["usage"] if "usage" in (action or {}) else usage_of(user_texts, int(info.get("image_count") or 0)),
        )
        with self.server.log_lock:
            self.server.in_flight += 1
            record["in_flight"] = self.server.in_flight
        self._counted = True
        try:
            self.server.log(record)
            if not isinstance(body, dict):
                self._error(400, "request body is not a JSON object")
                return
            self._answer(body, user_texts, action or {}, record["usage"])
        finally:
            self._answered()

    def _answered(self) -> None:
        """This request no longer counts as in flight: called before its reply is written (a client that
        has read the reply may send its next request before this thread would get to it afterwards)."""
        if getattr(self, "_counted", False):
            self._counted = False
            with self.server.log_lock:
                self.server.in_flight -= 1

    def _answer(self, body: dict[str, Any], user_texts: list[str], action: dict[str, Any], usage: Any = None) -> None:
        delay = self.server.latency + float(action.get("sleep", 0) or 0)
        if delay > 0:
            time.sleep(delay)
        if action.get("hold"):
            released = Path(self.server.hold_folder) / f"release-{action['hold']}"
            while not released.exists():
                time.sleep(0.02)
        if action.get("drop"):
            self.close_connection = True
            self._answered()
            with contextlib.suppress(OSError):
                self.connection.shutdown(2)
            return
        if "status" in action and int(action["status"]) != 200:
            status = int(action["status"])
            message = str(action.get("message") or f"fake server error {status}")
            if action.get("echo_key"):
                auth = self.headers.get("Authorization") or ""
                message += f" (received key {auth.split(' ', 1)[-1]})"
            headers = {"Retry-After": str(action["retry_after"])} if "retry_after" in action else None
            self._error(status, message, headers)
            return
        if action.get("malformed"):
            self._send_raw(200, MALFORMED_BODY)
            return
        if "body" in action:
            self._send_json(200, action["body"])
            return
        if "policy" in action:  # a whole scripted episode: the step is the number of earlier steps the prompt shows
            steps = action["policy"]
            step = min(earlier_steps(summarize(body)["roles"], user_texts), len(steps) - 1)
            content = render_action(steps[step], action.get("convention", "guitest"), action.get("space", "normalized"), summarize(body).get("image_size"))
        elif "act" in action:
            content = render_action(action["act"], action.get("convention", "guitest"), action.get("space", "normalized"), summarize(body).get("image_size"))
        elif "point" in action:
            content = _render_point(action, summarize(body).get("image_size"))
        elif "content" in action:
            content = action["content"]
        else:
            match = ANSWER_RE.search(user_texts[-1]) if user_texts else None
            content = match.group(1).strip() if match else DEFAULT_ANSWER
        if action.get("pad"):  # a huge reply: that many characters of prose before the answer
            content = ("thinking aloud " * (int(action["pad"]) // 15 + 1))[: int(action["pad"])] + "\n" + str(content or "")
        choices = (
            []
            if action.get("no_choices")
            else [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "logprobs": None,
                    "finish_reason": action.get("finish_reason", "stop"),
                }
            ]
        )
        reply: dict[str, Any] = {
            "id": f"chatcmpl-fake-{next(self.server.ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(body.get("model") or "fake-model"),
            "choices": choices,
        }
        if usage is not None:
            reply["usage"] = usage
        if action.get("cut"):
            self._send_cut(json.dumps(reply).encode("utf-8"), int(action["cut"]))
            return
        self._send_json(200, reply)

    def _send_cut(self, data: bytes, keep: int) -> None:
        """Announce ``data`` whole, send its first ``keep`` bytes, and close the connection."""
        self._answered()
        self.close_connection = True
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[:keep])
            self.wfile.flush()
            self.connection.shutdown(2)
        except OSError:
            pass


def usage_of(user_texts: list[str], images: int) -> dict[str, Any]:
    """The usage the server reports for a request of ``user_texts`` and ``images`` (see the module docstring)."""
    prompt_tokens = 1000 + 85 * images + sum(len(text.split()) for text in user_texts)
    reasoning = 3 + len(user_texts[-1]) % 7 if user_texts else 3
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": 20 + reasoning,
        "total_tokens": prompt_tokens + 20 + reasoning,
        "prompt_tokens_details": {"cached_tokens": 512},
        "completion_tokens_details": {"reasoning_tokens": reasoning},
    }


def _watchdog(max_seconds: float, parent: int) -> None:
    """Exit the whole process after max_seconds, or as soon as the parent process is gone."""
    deadline = time.monotonic() + max_seconds
    while time.monotonic() < deadline:
        if os.getppid() != parent:
            os._exit(0)
        time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))
    os._exit(0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fake OpenAI-compatible chat-completions server for tests.")
    parser.add_argument("--port-file", required=True, help="write the listening port here (atomically)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds to wait before every chat reply")
    parser.add_argument("--script", help="JSON fault script (see the module docstring)")
    parser.add_argument("--log", help="append one JSON line per request here")
    parser.add_argument("--max-seconds", type=float, default=600.0, help="exit by itself after this long")
    parser.add_argument("--port", type=int, default=0, help="listen on this port (default: an ephemeral one)")
    parser.add_argument("--models", default=None, help='JSON {id: root} listed by GET /v1/models (default {"fake-model": null})')
    args = parser.parse_args(argv)

    threading.Thread(target=_watchdog, args=(args.max_seconds, os.getppid()), daemon=True).start()
    actions = None
    if args.script:
        with open(args.script, encoding="utf-8") as fh:
            actions = json.load(fh)
    server = FakeServer(Script(actions), args.latency, args.log, args.port, json.loads(args.models) if args.models else None)
    return publish_and_serve(server, args.port_file)


def publish_and_serve(server: ThreadingHTTPServer, port_file: str) -> int:
    """Write the server's port to ``port_file`` (atomically: temp file + rename), then serve until killed. The folder
    of ``port_file`` is where :meth:`Server.release` drops the files that let held replies go."""
    server.hold_folder = os.path.dirname(os.path.abspath(port_file))  # type: ignore[attr-defined]
    tmp = f"{port_file}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(f"{server.server_address[1]}\n")
    os.replace(tmp, port_file)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


# --------------------------------------------------------------------------- test helpers


class Server:
    """A running fake server: its process, URLs and request log."""

    def __init__(self, process: subprocess.Popen[bytes], port: int, log_path: Path, directory: Path) -> None:
        self.process = process
        self.port = port
        self.log_path = log_path
        self.directory = directory
        self.url = f"http://127.0.0.1:{port}"
        self.base_url = f"{self.url}/v1"

    @property
    def pid(self) -> int:
        return self.process.pid

    def requests(self) -> list[dict[str, Any]]:
        """Every chat request received so far, oldest first (see the log format in the module docstring)."""
        return [r for r in self.all_requests() if r["method"] == "POST"]

    def all_requests(self) -> list[dict[str, Any]]:
        """Every request received so far, GET /v1/models included, oldest first."""
        if not self.log_path.exists():
            return []
        lines = self.log_path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def release(self, name: str) -> None:
        """Let the replies held by ``{"hold": name}`` go (those held now and any later)."""
        (self.directory / f"release-{name}").touch()

    def stderr(self) -> str:
        path = self.directory / "stderr.txt"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


@contextlib.contextmanager
def serve(
    tmp_path: Path | str,
    *,
    latency: float = 0.0,
    script: dict[str, list[dict[str, Any]]] | Path | str | None = None,
    max_seconds: float = 120.0,
    startup_timeout: float = 15.0,
    port: int = 0,
    models: dict[str, str | None] | None = None,
    program: str | None = None,
) -> Iterator[Server]:
    """Start the fake server as a subprocess; yield a :class:`Server`; kill it on exit.

    ``script`` is a fault script as a dict (written to a file) or the path of a JSON file; ``port`` a port to
    listen on (a second server on the port of a first one that ended); ``models`` what GET /v1/models lists;
    ``program``: another server script taking the same options (tests/fakecua.py), instead of this one.
    """
    directory = Path(tempfile.mkdtemp(prefix="fakeserver-", dir=str(tmp_path)))
    port_file = directory / "port"
    log_path = directory / "requests.jsonl"
    command = [
        sys.executable,
        program or os.path.abspath(__file__),
        "--port-file",
        str(port_file),
        "--log",
        str(log_path),
        "--latency",
        str(latency),
        "--max-seconds",
        str(max_seconds),
        "--port",
        str(port),
    ]
    if models is not None:
        command += ["--models", json.dumps(models)]
    if script is not None:
        if isinstance(script, dict):
            script_path = directory / "script.json"
            script_path.write_text(json.dumps(script), encoding="utf-8")
        else:
            script_path = Path(script)
        command += ["--script", str(script_path)]
    stderr_path = directory / "stderr.txt"
    with open(stderr_path, "wb") as stderr:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr)
    try:
        deadline = time.monotonic() + startup_timeout
        port = None
        while port is None:
            if port_file.exists():
                port = int(port_file.read_text(encoding="utf-8").strip())
                break
            code = process.poll()
            if code is not None:
                raise RuntimeError(f"fake server exited with code {code} before listening; stderr:\n" + stderr_path.read_text(encoding="utf-8", errors="replace"))
            if time.monotonic() > deadline:
                raise RuntimeError(f"fake server did not write {port_file} within {startup_timeout:g} s; stderr:\n" + stderr_path.read_text(encoding="utf-8", errors="replace"))
            time.sleep(0.01)
        yield Server(process, port, log_path, directory)
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)


if __name__ == "__main__":
    sys.exit(main())
