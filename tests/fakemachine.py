"""A fake OSWorld / Windows Agent Arena machine server for tests: the protocol's endpoint shapes, and faults on demand.

In-process (a thread), bound to 127.0.0.1 on an ephemeral port::

    with FakeMachine(screen=(1280, 720), shot=(2560, 1440)) as m:
        m.url                                   # http://127.0.0.1:PORT
        m.fault("POST /execute", {"status": 500, "message": "boom"})
        m.requests                              # [(method, path, json or form or None)] in arrival order
        m.authorizations                        # each request's Authorization header (None without one)

Faults (queued per "METHOD /path", each used once): ``{"status": N, "message": text}`` answers HTTP N
with ``{"status": "error", "message": text}`` (``{"status": N, "body": bytes}``: that body as it is, plain
text); ``{"drop": true}`` closes the connection without an
answer; ``{"sleep": s}`` waits that long first. ``files`` is the machine's file system (path -> bytes);
``/execute`` answers ``{"status": "success", "output": outputs.get(joined command, ""), ...}``.

``kind`` says how the server answers a route it does not have, as the three servers guitest meets do:

- ``osworld`` (the default): HTTP 404, as OSWorld's Flask server (desktop_env/server/main.py has no error handler);
- ``waa``: HTTP 500 ``{"message": "404 Not Found: ...", "status": "error"}``, as Windows Agent Arena's server, whose
  ``@app.errorhandler(Exception)`` turns every exception, Flask's own NotFound included, into a 500 (:data:`WAA_NOT_FOUND`);
- ``guitest``: a guitest desktop with its reset on: ``GET /guitest/info`` answers ``{"server": "guitest", "reset": true}``
  and ``POST /guitest/reset`` 200; other unknown routes 404.
"""

from __future__ import annotations

import email.parser
import email.policy
import io
import json
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from PIL import Image

from guitest.desktopenv.client import forget


#: what Windows Agent Arena's server answers for a route it does not have: its own main.py (src/win-arena-container/vm/setup/
#: server/main.py at microsoft/WindowsAgentArena a194956, read in the fork PaulJiangMS/WindowsAgentArena) run under Flask
#: 3.1.3 with its Windows-only modules stubbed, asked POST /guitest/reset, GET /guitest/info and GET /no/such/route
#: through Flask's test client: HTTP 500, application/json, this body, for all three.
WAA_NOT_FOUND = {
    "message": "404 Not Found: The requested URL was not found on the server. If you entered the URL manually please check your spelling and try again.",
    "status": "error",
}
KINDS = ("osworld", "waa", "guitest")


def png(size: tuple[int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (30, 30, 30)).save(out, "PNG")
    return out.getvalue()


class FakeMachine:
    def __init__(self, screen: tuple[int, int] = (1920, 1080), shot: tuple[int, int] | None = None, kind: str = "osworld") -> None:
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        self.kind = kind
        self.screen = screen
        self.shot = png(shot or screen)
        self.files: dict[str, bytes] = {}
        self.outputs: dict[str, str] = {}
        self.requests: list[tuple[str, str, Any]] = []
        self.authorizations: list[str | None] = []
        self._faults: dict[str, list[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def fault(self, route: str, *actions: dict[str, Any]) -> None:
        with self._lock:
            self._faults.setdefault(route, []).extend(actions)

    def paths(self) -> list[str]:
        return [f"{m} {p}" for m, p, _ in self.requests]

    def __enter__(self) -> "FakeMachine":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        forget(self.url)  # a later fake on the same port is another machine

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        machine = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, status: int, body: bytes, ctype: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _json(self, status: int, data: Any) -> None:
                self._reply(status, json.dumps(data).encode(), "application/json")

            def _parsed(self, body: bytes) -> Any:
                ctype = self.headers.get("Content-Type", "")
                if ctype.startswith("application/json"):
                    return json.loads(body or b"{}")
                if ctype.startswith("multipart/form-data"):
                    msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(f"Content-Type: {ctype}\r\n\r\n".encode() + body)
                    return {p.get_param("name", header="content-disposition"): p.get_payload(decode=True) for p in msg.iter_parts()}
                if ctype.startswith("application/x-www-form-urlencoded"):
                    return {k: v[0] for k, v in urllib.parse.parse_qs(body.decode()).items()}
                return None

            def _handle(self, method: str) -> None:
                path = urllib.parse.urlsplit(self.path).path
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                data = self._parsed(body)
                route = f"{method} {path}"
                with machine._lock:
                    machine.requests.append((method, path, data))
                    machine.authorizations.append(self.headers.get("Authorization"))
                    queue = machine._faults.get(route) or []
                    fault = queue.pop(0) if queue else None
                if fault:
                    if fault.get("sleep"):
                        time.sleep(fault["sleep"])
                    if fault.get("drop"):
                        self.close_connection = True
                        self.connection.close()
                        return
                    if fault.get("status") and "body" in fault:
                        self._reply(fault["status"], fault["body"], "text/plain")
                        return
                    if fault.get("status"):
                        self._json(fault["status"], {"status": "error", "message": fault.get("message", "fault")})
                        return
                self._answer(route, data)

            def _answer(self, route: str, data: Any) -> None:
                if route == "GET /screenshot":
                    self._reply(200, machine.shot, "image/png")
                elif route == "POST /screen_size":
                    self._json(200, {"width": machine.screen[0], "height": machine.screen[1]})
                elif route in ("POST /execute", "POST /setup/execute"):
                    command = data.get("command")
                    key = command if isinstance(command, str) else " ".join(command)
                    self._json(200, {"status": "success", "output": machine.outputs.get(key, ""), "error": "", "returncode": 0})
                elif route == "POST /file":
                    content = machine.files.get(data.get("file_path", ""))
                    if content is None:
                        self._json(404, {"error": "File not found"})
                    else:
                        self._reply(200, content, "application/octet-stream")
                elif route == "POST /setup/upload":
                    machine.files[data["file_path"].decode()] = data["file_data"]
                    self._reply(200, b"File Uploaded", "text/plain")
                elif route == "POST /desktop_path":
                    self._json(200, {"desktop_path": "C:\\Users\\Docker\\Desktop"})
                elif route == "GET /platform":
                    self._reply(200, b"Windows", "text/plain")
                elif route == "GET /accessibility":
                    self._json(200, {"AT": "<desktop/>"})
                elif route.startswith("POST /setup/"):
                    self._reply(200, b"ok", "text/plain")
                elif machine.kind == "guitest" and route == "GET /guitest/info":
                    self._json(200, {"server": "guitest", "reset": True})
                elif machine.kind == "guitest" and route == "POST /guitest/reset":
                    self._json(200, {"status": "success"})
                elif machine.kind == "waa":
                    self._json(500, WAA_NOT_FOUND)
                else:
                    self._json(404, {"error": "no such endpoint"})

            def do_GET(self) -> None:  # noqa: N802
                self._handle("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._handle("POST")

        return Handler
