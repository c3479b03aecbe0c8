"""guitest's own server of the OSWorld / Windows Agent Arena machine protocol, for a local X desktop.

Standard library ``ThreadingHTTPServer`` bound to 127.0.0.1 only (it runs any command it is sent:
never expose it). Every request must carry the desktop's secret, ``Authorization: Bearer <token>``, the token
being the contents of the file ``--token-file`` names (mode 0600, the desktop owner's; compared in constant
time): without it the answer is 401, with a wrong one 403, and nothing runs. The secret reaches the server
through that file, never its command line, and is not passed on to the commands it runs. The endpoints,
paths and fields as OSWorld's ``desktop_env/server/main.py``:

=====================================  ======================================  ==================================
endpoint                               request                                 reply
=====================================  ======================================  ==================================
GET /screenshot                                                                PNG, the cursor drawn in
POST /execute, /setup/execute          JSON ``{command, shell}``               ``{status, output, error, returncode}``
GET /accessibility                                                             ``{"AT": xml}`` (500 without pyatspi)
POST /file                             form ``file_path``                      the file's bytes (404 if missing)
POST /setup/upload                     multipart ``file_path``, ``file_data``  text
POST /setup/launch                     JSON ``{command, shell}``               text
POST /setup/open_file                  JSON ``{path}``                         text (xdg-open)
POST /setup/download_file              JSON ``{url, path}``                    text
POST /setup/activate_window            JSON ``{window_name, strict, by_class}``  text (wmctrl; 404 if no window)
POST /setup/close_window               JSON ``{window_name, strict, by_class}``  text
POST /screen_size                                                              ``{width, height}``
POST /window_size                      form ``app_class_name``                 ``{width, height}``
POST /desktop_path                                                             ``{desktop_path}``
POST /list_directory                   JSON ``{path}``                         ``{directory_tree}``
GET /platform, /cursor_position                                                ``Linux``, ``[x, y]``
GET /terminal                                                                  ``{output: null}`` (no a11y terminal)
GET /probe                                                                     ``{status}`` (WAA)
POST /run_python                       JSON ``{code}``                         ``{status, output, error, return_code}``
POST /run_bash_script                  JSON ``{script, timeout, working_dir}``  ``{status, output, error, returncode}``
POST /start_recording, /end_recording                                          mp4 (needs ffmpeg)
POST /guitest/reset                    (guitest's own)                         close what episodes opened, empty home
GET /guitest/info                      (guitest's own)                         ``{server, reset}``
=====================================  ======================================  ==================================

``--no-reset`` drops the two ``/guitest/*`` endpoints (404, as on OSWorld's and WAA's servers, which have no
reset): the desktop then keeps whatever each episode leaves, so it stands in for those servers in tests.

Commands run with the desktop's environment (``DISPLAY``, its D-Bus session, ``HOME`` = its own home
folder, where ``~/`` arguments expand) and a timeout (``--command-timeout``, 120 s as OSWorld): past it
the command's process group is killed and the answer is HTTP 500 ``{"status": "error", "message":
"... timed out ..."}``. ``python``/``python3`` as a command's program is this server's Python (it has
pyautogui). An action's ``["python", "-c", "import pyautogui; ..."]`` runs in a warm interpreter
(:mod:`.warm_python`) with the same result as a new one, in milliseconds instead of 0.3 s.
"""

from __future__ import annotations

import argparse
import email.parser
import email.policy
import hmac
import io
import json
import os
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from .warm_python import WarmPython, WarmTimeout
from .state import DesktopError, read_private
from .xvfb import HOME_MARK, MARKER_VAR, is_alive, marked_pids

APP_VAR = "GUITEST_DESKTOP_APP"
SYSTEM_PYTHON = "/usr/bin/python3"
A11Y_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "a11y_dump.py")
HOME_FOLDERS = ("Desktop", "Documents", "Downloads")


class Desktop:
    """What the handlers act on: the X display, the home folder, the launched processes, the warm interpreter."""

    def __init__(self, display: str, home: str, command_timeout: float) -> None:
        self.display = display
        self.home = home
        self.command_timeout = command_timeout
        os.environ["DISPLAY"] = display
        os.environ["HOME"] = home
        self.env = {**os.environ, APP_VAR: "1"}
        self.launched: list[subprocess.Popen[bytes]] = []
        self.launched_lock = threading.Lock()
        self.warm = WarmPython(sys.executable, env=self.env, cwd=home)
        self._x_lock = threading.Lock()
        self._x: Any = None
        self._xfixes = False
        self.recording: subprocess.Popen[bytes] | None = None
        self.recording_path = os.path.join(tempfile.gettempdir(), f"guitest-recording-{os.getpid()}.mp4")

    # -- X -------------------------------------------------------------------------------------------

    def _display(self) -> Any:
        if self._x is None:
            from Xlib import display as xdisplay

            x = xdisplay.Display(self.display)
            self._xfixes = False
            if x.has_extension("XFIXES"):
                try:
                    x.xfixes_query_version()  # XFixes answers nothing before its version is negotiated
                    self._xfixes = True
                except AttributeError:
                    pass  # python3-xlib 0.15 (pyautogui's dependency) has no XFixes: the cursor is drawn as an arrow
            self._x = x
        return self._x

    def screen_size(self) -> tuple[int, int]:
        with self._x_lock:
            screen = self._display().screen()
            return int(screen.width_in_pixels), int(screen.height_in_pixels)

    def cursor(self) -> tuple[int, int, Any]:
        """Where to paste the cursor and its image (RGBA): the X server's own cursor via XFixes when
        python-xlib has it, else an arrow at the pointer."""
        from PIL import Image

        with self._x_lock:
            d = self._display()
            if not self._xfixes:
                pointer = d.screen().root.query_pointer()
                return int(pointer.root_x), int(pointer.root_y), _arrow()
            ci = d.xfixes_get_cursor_image(d.screen().root)
        data = struct.pack(f"<{len(ci.cursor_image)}I", *(v & 0xFFFFFFFF for v in ci.cursor_image))
        image = Image.frombytes("RGBA", (ci.width, ci.height), data, "raw", "BGRA")
        return int(ci.x) - int(ci.xhot), int(ci.y) - int(ci.yhot), image

    def screenshot(self) -> bytes:
        from PIL import ImageGrab

        shot = ImageGrab.grab(xdisplay=self.display)
        try:
            x, y, image = self.cursor()
            if image is not None:
                shot.paste(image, (x, y), image)
        except Exception:  # noqa: BLE001 - a screenshot without its cursor beats none
            pass
        out = io.BytesIO()
        shot.save(out, "PNG", compress_level=1)
        return out.getvalue()

    # -- commands ------------------------------------------------------------------------------------

    def argv(self, command: Any, shell: bool) -> Any:
        """A request's command as Popen takes it: split when a string without shell, ``~/`` expanded,
        ``python``/``python3`` mapped to this server's Python."""
        if shell:
            return command if isinstance(command, str) else " ".join(shlex.quote(str(c)) for c in command)
        if isinstance(command, str):
            command = shlex.split(command)
        argv = [os.path.expanduser(str(a)) if str(a).startswith("~/") else str(a) for a in command]
        if argv and argv[0] in ("python", "python3"):
            argv[0] = sys.executable
        return argv

    def run(self, command: Any, shell: bool, timeout: float | None = None) -> tuple[int, dict[str, Any]]:
        """Run a command to its end: (HTTP status, OSWorld's execute reply)."""
        timeout = timeout or self.command_timeout
        argv = self.argv(command, shell)
        if not shell and len(argv) == 3 and argv[0] == sys.executable and argv[1] == "-c" and argv[2].lstrip().startswith("import pyautogui"):
            try:
                result = self.warm.try_run(argv[2], timeout)
            except WarmTimeout as exc:
                return 500, {"status": "error", "message": f"the command timed out: {exc}"}
            except (OSError, EOFError, ValueError):
                result = None  # the warm interpreter cannot start: a new one does the job
            if result is not None:
                return 200, {"status": "success", **result}
        try:
            proc = subprocess.Popen(
                argv,
                shell=shell,
                env=self.env,
                cwd=self.home,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except (OSError, ValueError) as exc:
            return 500, {"status": "error", "message": f"cannot run {argv!r}: {exc}"}
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            return 500, {"status": "error", "message": f"the command timed out after {timeout:g} s: {argv!r}"}
        return 200, {
            "status": "success",
            "output": out.decode("utf-8", "replace"),
            "error": err.decode("utf-8", "replace"),
            "returncode": proc.returncode,
        }

    def launch(self, command: Any, shell: bool) -> subprocess.Popen[bytes]:
        """Start a program without waiting for it (it is closed by :meth:`reset`)."""
        proc = subprocess.Popen(
            self.argv(command, shell),
            shell=shell,
            env=self.env,
            cwd=self.home,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        with self.launched_lock:
            self.launched = [p for p in self.launched if p.poll() is None] + [proc]
        return proc

    def reset(self) -> int:
        """Close everything episodes started (launched programs, their windows, whatever commands left
        behind), empty the home folder; how many processes were ended."""
        with self.launched_lock:
            procs, self.launched = self.launched, []
        marker = os.environ.get(MARKER_VAR, "")
        keep = {os.getpid(), self.warm.pid}
        apps = [p for p in marked_pids(marker) if p not in keep and _has_app_var(p)] if marker else []
        for proc in procs:
            _kill_group(proc, wait=False)
        for pid in apps:
            _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline and any(is_alive(p) for p in apps):
            time.sleep(0.05)
        for pid in apps:
            _signal(pid, signal.SIGKILL)
        for proc in procs:
            try:
                proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                pass
        if os.path.isfile(os.path.join(self.home, HOME_MARK)):  # only ever a home folder guitest made
            for name in os.listdir(self.home):
                if name == HOME_MARK:
                    continue
                path = os.path.join(self.home, name)
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    try:
                        os.remove(path)
                    except OSError:
                        pass
            for name in HOME_FOLDERS:
                os.makedirs(os.path.join(self.home, name), exist_ok=True)
        return len(procs) + len(apps)

    def close(self) -> None:
        self.warm.close()
        with self.launched_lock:
            procs, self.launched = self.launched, []
        for proc in procs:
            _kill_group(proc)


def _arrow() -> Any:
    """A plain arrow cursor (hot spot at its top left), white with a black outline."""
    from PIL import Image, ImageDraw

    image = Image.new("RGBA", (14, 22), (0, 0, 0, 0))
    ImageDraw.Draw(image).polygon([(0, 0), (0, 17), (4, 13), (7, 20), (10, 19), (7, 12), (12, 12)], fill=(255, 255, 255, 255), outline=(0, 0, 0, 255))
    return image


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _has_app_var(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return f"{APP_VAR}=1".encode() in f.read().split(b"\0")
    except OSError:
        return False


def _kill_group(proc: subprocess.Popen[bytes], wait: bool = True) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if wait:
        try:
            proc.communicate(timeout=5)
        except (subprocess.TimeoutExpired, ValueError, OSError):
            pass


def _directory_tree(path: str) -> dict[str, Any]:
    tree: dict[str, Any] = {"type": "directory", "name": os.path.basename(path), "children": []}
    try:
        for entry in sorted(os.listdir(path)):
            full = os.path.join(path, entry)
            tree["children"].append(_directory_tree(full) if os.path.isdir(full) else {"type": "file", "name": entry})
    except OSError as exc:
        return {"error": str(exc)}
    return tree


def _expand(path: str) -> str:
    return os.path.expandvars(os.path.expanduser(path))


Route = Callable[["Handler"], None]


class Handler(BaseHTTPRequestHandler):
    """One request; the routes below, by method and path."""

    protocol_version = "HTTP/1.1"
    server: "DesktopServer"

    # -- plumbing --------------------------------------------------------------------------------------

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        sys.stderr.write(f"[desktop server {time.strftime('%H:%M:%S')}] {format % args}\n")

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json_reply(self, status: int, data: Any) -> None:
        self._send(status, json.dumps(data).encode("utf-8"), "application/json")

    def _text(self, status: int, text: str) -> None:
        self._send(status, text.encode("utf-8"), "text/plain; charset=utf-8")

    def _json_body(self) -> dict[str, Any]:
        try:
            data = json.loads(self._body() or b"{}")
        except ValueError:
            raise _BadRequest("the body is not JSON") from None
        if not isinstance(data, dict):
            raise _BadRequest("the body must be a JSON object")
        return data

    def _form(self) -> dict[str, Any]:
        """Form fields (urlencoded or multipart): name -> str, or (filename, bytes) for a file."""
        ctype = self.headers.get("Content-Type", "")
        body = self._body()
        if ctype.startswith("multipart/form-data"):
            message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(f"Content-Type: {ctype}\r\nMIME-Version: 1.0\r\n\r\n".encode() + body)
            out: dict[str, Any] = {}
            for part in message.iter_parts():
                name = part.get_param("name", header="content-disposition")
                if not isinstance(name, str) or not name:  # absent, or an RFC 2231 (charset, language, value) triple
                    continue
                data = part.get_payload(decode=True)
                data = data if isinstance(data, bytes) else b""
                filename = part.get_filename()
                out[name] = (filename, data) if filename is not None else data.decode("utf-8", "replace")
            return out
        return {k: v[0] for k, v in urllib.parse.parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}

    def _authorized(self) -> bool:
        """Whether the request carries the desktop's secret; if not, it was answered 401 or 403 (the body says
        where the secret is) and the connection closes (its body is left unread)."""
        scheme, _, given = (self.headers.get("Authorization") or "").strip().partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode("utf-8", "replace"), self.server.token):
            return True
        self.close_connection = True
        status = 403 if given else 401
        what = "a wrong secret" if given else "no secret"
        self.send_response(status)
        self.send_header("WWW-Authenticate", 'Bearer realm="guitest desktop"')
        body = json.dumps(
            {
                "status": "error",
                "message": (
                    f"this guitest desktop takes requests only with its secret, and this one came with {what}: send "
                    f"'Authorization: Bearer <token>', the token being the contents of {self.server.token_file} (readable by the "
                    "desktop's owner only). guitest run by that user finds it itself; other clients set GUITEST_DESKTOP_TOKEN"
                ),
            }
        ).encode()
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        return False

    def _route(self, method: str) -> None:
        if not self._authorized():
            return
        path = urllib.parse.urlsplit(self.path).path.rstrip("/") or "/"
        route = self.server.routes.get((method, path))
        if route is None:
            self._json_reply(404, {"status": "error", "message": f"no endpoint {method} {path}"})
            return
        try:
            route(self)
        except _BadRequest as exc:
            self._json_reply(400, {"status": "error", "message": str(exc)})
        except Exception as exc:  # noqa: BLE001 - a failing handler answers 500 with its reason, as OSWorld's does
            self._json_reply(500, {"status": "error", "message": f"{type(exc).__name__}: {exc}"})

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self._route("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._route("POST")

    @property
    def desktop(self) -> Desktop:
        return self.server.desktop

    # -- endpoints -------------------------------------------------------------------------------------

    def screenshot(self) -> None:
        self._send(200, self.desktop.screenshot(), "image/png")

    def _command(self) -> tuple[Any, bool]:
        """A request's ``{command, shell}`` (400 when the command is missing)."""
        data = self._json_body()
        shell = bool(data.get("shell", False))
        command = data.get("command", "" if shell else [])
        if not command:
            raise _BadRequest("command is required")
        return command, shell

    def execute(self) -> None:
        command, shell = self._command()
        status, reply = self.desktop.run(command, shell)
        self._json_reply(status, reply)

    def accessibility(self) -> None:
        if not os.path.exists(SYSTEM_PYTHON):
            self._json_reply(500, {"status": "error", "message": f"{SYSTEM_PYTHON} is missing (python3-pyatspi needs the system Python)"})
            return
        env = {k: v for k, v in self.desktop.env.items() if not k.startswith("PYTHON")}
        try:
            done = subprocess.run([SYSTEM_PYTHON, A11Y_SCRIPT], env=env, capture_output=True, timeout=60)
        except subprocess.TimeoutExpired:
            self._json_reply(500, {"status": "error", "message": "reading the accessibility tree timed out after 60 s"})
            return
        if done.returncode != 0:
            reason = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
            self._json_reply(500, {"status": "error", "message": f"no accessibility tree: {reason[0]} (install python3-pyatspi and at-spi2-core)"})
            return
        self._json_reply(200, {"AT": done.stdout.decode("utf-8", "replace")})

    def file(self) -> None:
        form = self._form()
        path = form.get("file_path")
        if not isinstance(path, str) or not path:
            self._json_reply(400, {"error": "file_path is required"})
            return
        path = _expand(path)
        if not os.path.isfile(path):
            self._json_reply(404, {"error": "File not found"})
            return
        with open(path, "rb") as f:
            self._send(200, f.read(), "application/octet-stream")

    def upload(self) -> None:
        form = self._form()
        path, data = form.get("file_path"), form.get("file_data")
        if not isinstance(path, str) or not isinstance(data, tuple):
            self._json_reply(400, {"error": "file_path and file_data are required"})
            return
        path = _expand(path)
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "wb") as f:
            f.write(data[1])
        self._text(200, "File Uploaded")

    def launch(self) -> None:
        command, shell = self._command()
        try:
            self.desktop.launch(command, shell)
        except (OSError, ValueError) as exc:
            self._json_reply(500, {"status": "error", "message": str(exc)})
            return
        self._text(200, f"{command if shell else ' '.join(map(str, command)) if isinstance(command, list) else command} launched successfully")

    def open_file(self) -> None:
        path = self._json_body().get("path")
        if not path:
            self._text(400, "Path not supplied!")
            return
        full = _expand(str(path))
        if not os.path.exists(full):
            self._text(404, f"File not found: {full}")
            return
        opener = shutil.which("xdg-open")
        if opener is None:
            self._text(500, "xdg-open is missing (Debian: xdg-utils)")
            return
        self.desktop.launch([opener, full], False)
        self._text(200, "File opened successfully")

    def download_file(self) -> None:
        data = self._json_body()
        url, path = data.get("url"), data.get("path")
        if not url or not path:
            self._text(400, "Path or URL not supplied!")
            return
        full = _expand(str(path))
        os.makedirs(os.path.dirname(full) or ".", exist_ok=True)
        try:
            with urllib.request.urlopen(str(url), timeout=self.desktop.command_timeout) as resp, open(full, "wb") as out:  # noqa: S310
                shutil.copyfileobj(resp, out)
        except (OSError, ValueError) as exc:
            self._text(500, f"Failed to download {url}. Error: {exc}")
            return
        self._text(200, "File downloaded successfully")

    def _window(self, action: str) -> None:
        data = self._json_body()
        name = data.get("window_name")
        if not name:
            self._text(400, "window_name required")
            return
        flags = "-" + ("x" if data.get("by_class") else "") + ("F" if data.get("strict") else "") + action
        done = subprocess.run(["wmctrl", flags, str(name)], env=self.desktop.env, capture_output=True, timeout=10)
        if done.returncode != 0:
            self._text(404, f"Window {name} not found")
            return
        self._text(200, "Window activated successfully" if action == "a" else "Window closed successfully.")

    def activate_window(self) -> None:
        self._window("a")

    def close_window(self) -> None:
        self._window("c")

    def screen_size(self) -> None:
        width, height = self.desktop.screen_size()
        self._json_reply(200, {"width": width, "height": height})

    def window_size(self) -> None:
        name = self._form().get("app_class_name")
        if not isinstance(name, str) or not name:
            self._json_reply(400, {"error": "app_class_name is required"})
            return
        found = subprocess.run(["xdotool", "search", "--class", name], env=self.desktop.env, capture_output=True, text=True, timeout=10)
        for wid in found.stdout.split():
            geo = subprocess.run(["xdotool", "getwindowgeometry", "--shell", wid], env=self.desktop.env, capture_output=True, text=True, timeout=10)
            values = dict(line.split("=", 1) for line in geo.stdout.splitlines() if "=" in line)
            if "WIDTH" in values and "HEIGHT" in values:
                self._json_reply(200, {"width": int(values["WIDTH"]), "height": int(values["HEIGHT"])})
                return
        self._json_reply(404, {"error": f"no window of class {name}"})

    def desktop_path(self) -> None:
        self._json_reply(200, {"desktop_path": os.path.join(self.desktop.home, "Desktop")})

    def list_directory(self) -> None:
        path = self._json_body().get("path")
        if not path:
            self._json_reply(400, {"error": "Missing 'path' parameter"})
            return
        full = _expand(str(path))
        if not os.path.isdir(full):
            self._json_reply(400, {"error": "The provided path is not a directory"})
            return
        self._json_reply(200, {"directory_tree": _directory_tree(full)})

    def platform(self) -> None:
        self._text(200, "Linux")

    def cursor_position(self) -> None:
        x, y, _ = self.desktop.cursor()
        self._json_reply(200, [x, y])

    def terminal(self) -> None:
        self._json_reply(200, {"output": None, "status": "success"})

    def probe(self) -> None:
        self._json_reply(200, {"status": "Probe successful", "message": "the guitest desktop server is running"})

    def run_python(self) -> None:
        code = self._json_body().get("code")
        if not isinstance(code, str):
            raise _BadRequest("code is required")
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False, dir=self.desktop.home) as f:
            f.write(code)
        try:
            status, reply = self.desktop.run([sys.executable, f.name], False)
        finally:
            os.remove(f.name)
        if status != 200:
            self._json_reply(status, reply)
            return
        ok = reply["returncode"] == 0
        self._json_reply(
            200,
            {
                "status": "success" if ok else "error",
                "message": reply["output"] if ok else reply["error"],
                "output": reply["output"],
                "error": reply["error"],
                "return_code": reply["returncode"],
            },
        )

    def run_bash_script(self) -> None:
        data = self._json_body()
        script = data.get("script")
        if not isinstance(script, str):
            raise _BadRequest("script is required")
        timeout = float(data.get("timeout") or 30)
        cwd = _expand(str(data.get("working_dir") or self.desktop.home))
        try:
            done = subprocess.run(["bash", "-c", script], env=self.desktop.env, cwd=cwd, capture_output=True, timeout=timeout, text=True)
        except subprocess.TimeoutExpired:
            self._json_reply(500, {"status": "error", "output": "", "error": f"Script execution timed out after {timeout:g} seconds", "returncode": -1})
            return
        self._json_reply(200, {"status": "success" if done.returncode == 0 else "error", "output": done.stdout, "error": done.stderr, "returncode": done.returncode})

    def start_recording(self) -> None:
        if self.desktop.recording is not None:
            self._json_reply(400, {"status": "error", "message": "Recording is already in progress."})
            return
        if shutil.which("ffmpeg") is None:
            self._json_reply(500, {"status": "error", "message": "recording needs ffmpeg (Debian: ffmpeg)"})
            return
        width, height = self.desktop.screen_size()
        self.desktop.recording = subprocess.Popen(
            ["ffmpeg", "-y", "-f", "x11grab", "-draw_mouse", "1", "-s", f"{width}x{height}", "-i", self.desktop.display, "-c:v", "libx264", "-r", "30", self.desktop.recording_path],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=self.desktop.env,
        )
        self._json_reply(200, {"status": "success", "message": "Started recording."})

    def end_recording(self) -> None:
        proc, self.desktop.recording = self.desktop.recording, None
        if proc is None:
            self._json_reply(400, {"status": "error", "message": "No recording in progress to stop."})
            return
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
        if not os.path.exists(self.desktop.recording_path):
            self._json_reply(404, {"status": "error", "message": "Recording failed"})
            return
        with open(self.desktop.recording_path, "rb") as f:
            self._send(200, f.read(), "video/mp4")

    def guitest_reset(self) -> None:
        ended = self.desktop.reset()
        self._json_reply(200, {"status": "success", "ended": ended})

    def guitest_info(self) -> None:
        self._json_reply(200, {"server": "guitest", "reset": True})


class _BadRequest(Exception):
    """The request lacks a field or is not the JSON it should be (HTTP 400)."""


ROUTES: dict[tuple[str, str], Route] = {
    ("GET", "/screenshot"): Handler.screenshot,
    ("POST", "/execute"): Handler.execute,
    ("POST", "/setup/execute"): Handler.execute,
    ("GET", "/accessibility"): Handler.accessibility,
    ("POST", "/file"): Handler.file,
    ("POST", "/setup/upload"): Handler.upload,
    ("POST", "/setup/launch"): Handler.launch,
    ("POST", "/setup/open_file"): Handler.open_file,
    ("POST", "/setup/download_file"): Handler.download_file,
    ("POST", "/setup/activate_window"): Handler.activate_window,
    ("POST", "/setup/close_window"): Handler.close_window,
    ("POST", "/screen_size"): Handler.screen_size,
    ("POST", "/window_size"): Handler.window_size,
    ("POST", "/desktop_path"): Handler.desktop_path,
    ("POST", "/list_directory"): Handler.list_directory,
    ("GET", "/platform"): Handler.platform,
    ("GET", "/cursor_position"): Handler.cursor_position,
    ("GET", "/terminal"): Handler.terminal,
    ("GET", "/probe"): Handler.probe,
    ("POST", "/run_python"): Handler.run_python,
    ("POST", "/run_bash_script"): Handler.run_bash_script,
    ("POST", "/start_recording"): Handler.start_recording,
    ("POST", "/end_recording"): Handler.end_recording,
    ("POST", "/guitest/reset"): Handler.guitest_reset,
    ("GET", "/guitest/info"): Handler.guitest_info,
}
#: the routes of a server without its reset (``--no-reset``): what OSWorld's and WAA's servers answer
NO_RESET_ROUTES = {k: v for k, v in ROUTES.items() if not k[1].startswith("/guitest/")}


class DesktopServer(ThreadingHTTPServer):
    """The HTTP server, bound to 127.0.0.1, with the :class:`Desktop` it serves and the secret (read from
    ``token_file``, shown in the refusals) every request must carry."""

    daemon_threads = True

    def __init__(self, port: int, desktop: Desktop, token: bytes, token_file: str, reset: bool = True) -> None:
        self.desktop = desktop
        self.routes = ROUTES if reset else NO_RESET_ROUTES
        self.token = token
        self.token_file = token_file
        super().__init__(("127.0.0.1", port), Handler)


def read_token(path: str) -> bytes:
    """The secret in the token file ``path`` (a private file of this user's, not empty); DesktopError otherwise."""
    try:
        token = read_private(path).strip()
    except OSError as exc:
        raise DesktopError(f"cannot read the desktop's token file {path}: {exc}") from None
    if not token:
        raise DesktopError(f"the desktop's token file {path} is empty")
    return token


def serve(
    display: str,
    port: int,
    home: str,
    token_file: str,
    command_timeout: float = 120.0,
    ready_file: str | None = None,
    reset: bool = True,
) -> None:
    """Serve the desktop on ``display`` at ``http://127.0.0.1:port`` (0: any free port) until SIGTERM, to requests
    carrying the secret in ``token_file``; ``ready_file`` gets ``{"port": N}`` once requests are accepted;
    ``reset`` False: no ``/guitest/*`` endpoints."""
    token = read_token(token_file)  # before anything starts: no secret, no server
    desktop = Desktop(display, home, command_timeout)
    server = DesktopServer(port, desktop, token, token_file, reset)
    stop = threading.Event()

    def on_term(signum: int, frame: Any) -> None:
        stop.set()
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    if ready_file:
        tmp = f"{ready_file}.tmp"
        with open(tmp, "w") as f:
            json.dump({"port": server.server_address[1], "pid": os.getpid()}, f)
        os.replace(tmp, ready_file)
    try:
        threading.Thread(target=desktop.warm.try_run, args=("import pyautogui", 60.0), daemon=True).start()  # warm it up now
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        desktop.close()


def main(argv: list[str] | None = None) -> int:
    """``python -m guitest.localdesktop.server --display :99 [--port P] --home DIR --token-file FILE``."""
    parser = argparse.ArgumentParser(prog="python -m guitest.localdesktop.server", description="guitest's desktop protocol server (127.0.0.1 only)")
    parser.add_argument("--display", required=True, help="the X display, e.g. :99")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free one)")
    parser.add_argument("--home", required=True, help="the desktop's home folder")
    parser.add_argument("--command-timeout", type=float, default=120.0, help="seconds a command may run")
    parser.add_argument("--token-file", required=True, help="the file holding the secret every request must carry (mode 0600)")
    parser.add_argument("--ready-file", help="write {port, pid} here once serving")
    parser.add_argument("--no-reset", action="store_true", help="answer 404 to /guitest/reset and /guitest/info, as OSWorld's server does")
    args = parser.parse_args(argv)
    try:
        serve(args.display, args.port, os.path.abspath(args.home), args.token_file, args.command_timeout, args.ready_file, reset=not args.no_reset)
    except DesktopError as exc:
        print(f"guitest desktop server: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
