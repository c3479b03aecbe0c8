"""``openai:NAME``: any OpenAI-compatible chat-completions endpoint, or several serving the same model,
through guitest's lean client (:mod:`guitest.models.transport`, ``--http-client=stdlib``, the
default) or the official ``openai`` client (``--http-client=openai``): the same request, the same
credentials, the same reading of the reply; the lean client needs about a quarter of the CPU per
request, which decides whether one process keeps up with a fast endpoint at high ``--concurrency``
(docs/bench.md).

Several endpoints (``--base-url`` given more than once, :mod:`guitest.models.endpoints`): each
request goes to the endpoint with the fewest requests in flight; a failed try is retried on
another endpoint at once. An endpoint that keeps failing is taken out for the rest of the run.

Retries (with exponential backoff and jitter, honouring ``Retry-After``) on 408, 409,
429 and 5xx replies, timeouts, broken connections, malformed and empty replies; other HTTP
errors fail at once with a message that says what to check. The API key is read from
the environment variable named by ``--api-key-env``; credentials in a base URL
(``http://user:password@host/v1``) are sent as HTTP Basic authentication instead. Neither is
ever printed or stored.
"""

from __future__ import annotations

import base64
import json
import os
import random
import threading
import time
from typing import TYPE_CHECKING, Any

from .. import __version__
from . import request_body
from ..errors import EndpointDown, ModelError
from ..profiles import Profile
from ..printable import printable
from ..secrets import Scrubber
from ..cost.usage import FailedCall, Usage, from_chat
from .base import Case, Model, Prompt, Reply, SentImage, Settings, redact_url
from .endpoints import Endpoint, EndpointPool, Retryable, connection_failure, credentials, status_hint
from .transport import HTTPFailure, JSONPoster

if TYPE_CHECKING:  # PIL (guitest.images) loads where a screenshot is sent: the xdist controller makes the model, never sends one
    from PIL import Image

RETRYABLE_STATUS = {408, 409, 429}
MAX_BACKOFF = 30.0
IDENTITY_TIMEOUT = 10.0
#: the model-entry fields of GET /v1/models that tell one served checkpoint from another (vLLM gives root and parent)
IDENTITY_FIELDS = ("id", "root", "parent")
#: the official client's default endpoint (what it uses without --base-url and $OPENAI_BASE_URL)
OPENAI_BASE_URL = "https://api.openai.com/v1"


class OpenAIChat(Model):
    """Chat completions with one image per request, over one or more endpoints serving the same model."""

    uses = ("temperature", "max_tokens", "timeout", "retries", "concurrency", "seed", "base_url", "base_urls", "api_key_env", "min_pixels", "max_pixels", "max_image_bytes", "http_client", "resize")

    def __init__(self, name: str, settings: Settings, model: str, profile: Profile | None = None, profile_reason: str = "", backoff: float = 0.5) -> None:
        super().__init__(name, settings, profile, profile_reason)
        if not model:
            raise ModelError("--model=openai:NAME needs the model name the endpoint serves, e.g. openai:qwen2.5-vl-7b")
        self.model = model
        self.backoff = backoff
        key = os.environ.get(settings.api_key_env)
        self.key_is_set = bool(key)
        urls = list(settings.base_urls or ([settings.base_url] if settings.base_url else []))
        self.scrub = Scrubber([key or ""])
        endpoints = []
        for index, url in enumerate(urls or [None]):
            endpoints.append(self._endpoint(index, url, key))
        self.base_url = endpoints[0].base_url  # --base-url, else $OPENAI_BASE_URL, else OpenAI's
        self.pool = EndpointPool(endpoints, settings.retries + 1)
        self._identity: dict[str, Any] | None = None
        self._identity_lock = threading.Lock()

    def _endpoint(self, index: int, url: str | None, key: str | None) -> Endpoint:
        """One endpoint: the Authorization header both clients send, and its client: the lean one, or the official one
        (made without credentials in its URL, so its logger never prints them; imported only when it is used)."""
        plain = redact_url(url) if url else None
        auth, secrets, kind = credentials(url, key)
        self.scrub.add(*secrets)
        base_url = plain or redact_url(os.environ.get("OPENAI_BASE_URL") or OPENAI_BASE_URL)  # as the official client
        endpoint = Endpoint(index=index, base_url=base_url, auth=auth, auth_kind=kind, client=None)
        if self.settings.http_client == "stdlib":
            lean = {"Authorization": auth, "User-Agent": f"guitest/{__version__}"}
            # what the official client sends from $OPENAI_ORG_ID and $OPENAI_PROJECT_ID
            if os.environ.get("OPENAI_ORG_ID"):
                lean["OpenAI-Organization"] = os.environ["OPENAI_ORG_ID"]
            if os.environ.get("OPENAI_PROJECT_ID"):
                lean["OpenAI-Project"] = os.environ["OPENAI_PROJECT_ID"]
            try:
                endpoint.poster = JSONPoster(base_url, self.settings.timeout, lean)
            except ValueError as exc:
                raise ModelError(f"--base-url: {exc}") from None
        else:
            endpoint.client = self._official(endpoint, key)
        return endpoint

    def _official(self, endpoint: Endpoint, key: str | None) -> Any:
        """The official client for ``endpoint`` (importing ``openai`` costs about a second, so only when it is used)."""
        import openai

        from .httpx_deadline import DeadlineTransport, httpx

        return openai.OpenAI(
            api_key=key or "EMPTY",
            base_url=endpoint.base_url,
            timeout=self.settings.timeout,
            max_retries=0,  # retries are ours: counted, also on malformed replies, and over several endpoints
            default_headers={"Authorization": endpoint.auth},
            # --timeout is the whole request's deadline, not each read's (httpx_deadline)
            http_client=httpx.Client(transport=DeadlineTransport(self.settings.timeout, endpoint.base_url), timeout=self.settings.timeout, follow_redirects=True),
        )

    @property
    def client(self) -> Any:
        """The official client of the first endpoint (made on first use with the lean client)."""
        endpoint = self.pool.endpoints[0]
        if endpoint.client is None:
            endpoint.client = self._official(endpoint, os.environ.get(self.settings.api_key_env))
        return endpoint.client

    def scrub_reply(self, text: str) -> str:
        return self.scrub.known(text)

    def unavailable(self) -> EndpointDown | None:
        return self._down() if self.pool.all_down() else None

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info["api_key"] = f"from ${self.settings.api_key_env} ({'set' if self.key_is_set else 'not set'})"
        info["base_url"] = self.base_url
        if len(self.pool.endpoints) > 1:
            info["base_urls"] = [e.base_url for e in self.pool.endpoints]
        if any(e.auth_kind == "basic" for e in self.pool.endpoints):
            info["auth"] = "HTTP Basic from the credentials in --base-url" + (f" (${self.settings.api_key_env} not sent)" if self.key_is_set else "")
        info["http_client"] = self.settings.http_client
        if self.server_resizes():
            info["image_sizing"] = "smart_resize done by the model server's processor: screenshots sent as their files, sent_size is the size it makes (--resize=auto)"
        return info

    def identity(self) -> dict[str, Any]:
        """The endpoints (base URLs without credentials) and, per endpoint, what GET /models says of this model:
        its ``id`` and, where the server gives them (vLLM), ``root`` (the weights it loaded) and ``parent``.
        Asked once per process; an endpoint that cannot say is recorded as such (never an error)."""
        with self._identity_lock:
            if self._identity is None:
                served = [self._served(e) for e in self.pool.endpoints]
                self._identity = {"endpoints": [e.base_url for e in self.pool.endpoints], "served": served}
            return self._identity

    def _served(self, endpoint: Endpoint) -> dict[str, Any]:
        poster = endpoint.poster or JSONPoster(endpoint.base_url, min(self.settings.timeout, IDENTITY_TIMEOUT), {"Authorization": endpoint.auth})
        try:
            response = poster.get("/models")
        except HTTPFailure:
            return {"unknown": "unreachable"}
        finally:
            if endpoint.poster is None:
                poster.close()
        if response.status >= 400:
            return {"unknown": f"HTTP {response.status}"}
        try:
            body = json.loads(response.body)
            entries = [e for e in body.get("data", []) if isinstance(e, dict)]
        except (ValueError, AttributeError):
            return {"unknown": "malformed"}
        for entry in entries:
            if entry.get("id") == self.model:
                return {k: entry[k] for k in IDENTITY_FIELDS if entry.get(k) is not None}
        return {"unknown": "not listed", "listed": sorted(str(e.get("id")) for e in entries)[:20]}

    def endpoint_stats(self) -> list[dict[str, Any]]:
        return self.pool.stats()

    def server_resizes(self) -> bool:
        """Whether the model server's own processor makes the planned size from the original (``--resize=auto``
        with a smart_resize profile at its processor's own pixel limits), so the screenshot goes as it is."""
        s = self.settings
        return s.resize == "auto" and self.profile.sizing.kind == "smart_resize" and s.min_pixels is None and s.max_pixels is None

    def preprocess(self, image: Image.Image, case: Case) -> SentImage:
        """The screenshot file itself when it is sent at its own size as PNG or JPEG (no decode, no encode), or
        when the server's processor does the planned smart_resize (:meth:`server_resizes`; the recorded sent size
        is then the one the model sees); else decode, resize and encode once; over --max-image-bytes, re-encode as
        JPEG, then downscale."""
        from ..images import as_file, encode

        server = self.server_resizes()
        passthrough = as_file(image, image.size if server else case.sent_size, self.settings.max_image_bytes)
        if passthrough is not None:
            data, mime = passthrough
            return SentImage(image=None, size=case.sent_size if server else image.size, data=data, mime=mime)
        sent = super().preprocess(image, case)
        assert sent.image is not None
        data, mime, final = encode(sent.image, self.settings.max_image_bytes)
        return SentImage(image=final, size=final.size, data=data, mime=mime)

    def messages(self, prompt: Prompt, image: SentImage, verbatim: bool = False) -> list[dict[str, Any]]:
        """The chat messages: an optional system message, then the screenshot and the text (or, for a prompt with
        ``parts``, its texts and images in order; for a conversation, each of its ``turns`` as a message); with
        ``verbatim``, each screenshot as the bytes the lean client sends (:func:`_image_part`)."""
        if prompt.turns:
            said: list[dict[str, Any]] = [{"role": "system", "content": prompt.system}] if prompt.system else []
            for role, parts in prompt.turns:
                if role == "assistant" and all(isinstance(p, str) for p in parts):
                    said.append({"role": role, "content": "".join(str(p) for p in parts)})
                else:
                    said.append({"role": role, "content": [_image_part(prompt.images[p], verbatim) if isinstance(p, int) else {"type": "text", "text": p} for p in parts]})
            return said
        if prompt.parts:
            content = [_image_part(prompt.images[p], verbatim) if isinstance(p, int) else {"type": "text", "text": p} for p in prompt.parts]
        else:
            content = [_image_part(image, verbatim), {"type": "text", "text": prompt.user}]
        out: list[dict[str, Any]] = [{"role": "system", "content": prompt.system}] if prompt.system else []
        out.append({"role": "user", "content": content})
        return out

    def generate(self, prompt: Prompt, image: SentImage, case: Case) -> Reply:
        messages = self.messages(prompt, image, verbatim=self.settings.http_client == "stdlib")  # the lean client's body takes bytes
        last = ""
        tries = self.settings.retries + 1
        failed: Endpoint | None = None
        calls: list[FailedCall] = []  # the tries that gave no usable reply, counted apart (guitest.cost.usage)
        for attempt in range(1, tries + 1):
            endpoint = self.pool.pick(avoid=failed)
            if endpoint is None:
                raise self._down().with_failed(calls)
            began = time.perf_counter()
            try:
                with self.pool.using(endpoint):
                    text, finish, usage = self._call(endpoint, messages, case.attempt)
                return Reply(text=text, finish_reason=finish, attempts=attempt, usage=usage, failed=tuple(calls))
            except Retryable as exc:
                calls.append(FailedCall(exc.why, time.perf_counter() - began, exc.usage))
                last = str(exc)
                failed = endpoint
                if attempt < tries and not self.pool.has_other(endpoint):
                    time.sleep(self._delay(attempt, exc.retry_after))
            except ModelError as exc:  # an HTTP error a retry does not cure (401, 404, 400)
                calls.append(FailedCall("http_error", time.perf_counter() - began))
                raise exc.with_failed(calls) from None
        raise ModelError(self.scrub(f"{self.model}: gave up after {tries} tries: {last}")).with_failed(calls)

    def _down(self) -> EndpointDown:
        url, state, reason = self.pool.why_down()
        several = len(self.pool.endpoints) > 1
        what = f"every endpoint ({len(self.pool.endpoints)}) is unreachable or failing; the last, {url}, is {state}" if several else f"{url} is {state}"
        return EndpointDown(self.scrub(f"not asked: {what} ({reason}); start the endpoint and re-run with --lf"), url, state, self.scrub(reason))

    def _call(self, endpoint: Endpoint, messages: list[dict[str, Any]], attempt: int = 0) -> tuple[str, str | None, Usage | None]:
        """One request: the reply's text, finish reason and usage (:func:`guitest.cost.usage.from_chat`)."""
        extra: dict[str, Any] = {}
        if self.settings.seed is not None:
            extra["seed"] = self.settings.seed + attempt  # each repeat its own sample
        if endpoint.poster is not None:
            payload = {"model": self.model, "messages": messages, "temperature": self.settings.temperature, "max_tokens": self.settings.max_tokens, **extra}
            return self._call_stdlib(endpoint, payload)
        import openai

        try:
            completion = endpoint.client.chat.completions.create(
                model=self.model,
                messages=messages,
                temperature=self.settings.temperature,
                max_tokens=self.settings.max_tokens,
                **extra,
            )
        except openai.APITimeoutError:
            raise Retryable(f"timed out after {self.settings.timeout:g} s (--timeout)", no_reply=True, why="timeout") from None
        except openai.APIConnectionError as exc:
            raise Retryable(f"cannot connect to {endpoint.base_url}: {self.scrub(str(exc.__cause__ or exc))}", no_reply=True, why=connection_failure(exc)) from None
        except openai.APIStatusError as exc:
            raise self._status_error(endpoint, exc.status_code, str(exc.message), exc.response.headers) from None
        except (openai.APIResponseValidationError, ValueError) as exc:
            raise Retryable(f"malformed reply: {type(exc).__name__}: {str(exc)[:200]}") from None
        used = getattr(completion, "usage", None)
        usage = from_chat(used.model_dump(warnings=False) if used is not None and hasattr(used, "model_dump") else used)
        try:
            choices = getattr(completion, "choices", None)
            if not choices or not isinstance(choices, list):
                raise self._no_choices((getattr(completion, "model_extra", None) or {}).get("error"))
            choice = choices[0]
            message = getattr(choice, "message", None)
            if message is None:
                raise Retryable("malformed reply: the first choice has no message")
            calls = [c.model_dump() if hasattr(c, "model_dump") else c for c in (getattr(message, "tool_calls", None) or [])]
            finish = getattr(choice, "finish_reason", None)
            return reply_text(getattr(message, "content", None), calls, finish), finish, usage
        except Retryable as exc:  # a reply that came but cannot be used: what it said it used is counted with it
            exc.usage = usage
            raise

    def _call_stdlib(self, endpoint: Endpoint, payload: dict[str, Any]) -> tuple[str, str | None, Usage | None]:
        """The same request and the same reading of the reply through :mod:`guitest.models.transport`."""
        assert endpoint.poster is not None
        try:
            # the bytes json.dumps would give, the screenshots' base64 spliced in rather than escaped character by
            # character (the encoder held the interpreter lock for most of a full-size run: docs/bench.md)
            response = endpoint.poster.post("/chat/completions", request_body.dumps(payload))
        except HTTPFailure as exc:
            if exc.timeout:
                raise Retryable(f"timed out after {self.settings.timeout:g} s (--timeout)", no_reply=True, why="timeout") from None
            raise Retryable(f"cannot connect to {endpoint.base_url}: {self.scrub(str(exc))}", no_reply=True, why="cut" if exc.cut else "connection") from None
        try:
            body = json.loads(response.body)
        except ValueError as exc:
            if response.status >= 400:
                raise self._status_error(endpoint, response.status, response.body[:300].decode("utf-8", "replace"), response.headers) from None
            raise Retryable(f"malformed reply: {type(exc).__name__}: {str(exc)[:200]}") from None
        if response.status >= 400:
            error = body.get("error") if isinstance(body, dict) else None
            message = error.get("message") if isinstance(error, dict) else error
            raise self._status_error(endpoint, response.status, str(message if message is not None else body), response.headers)
        usage = from_chat(body.get("usage")) if isinstance(body, dict) else None
        try:
            choices = body.get("choices") if isinstance(body, dict) else None
            if not choices or not isinstance(choices, list):
                raise self._no_choices(body.get("error") if isinstance(body, dict) else None)
            choice = choices[0]
            message = choice.get("message") if isinstance(choice, dict) else None
            if not isinstance(message, dict):
                raise Retryable("malformed reply: the first choice has no message")
            finish = choice.get("finish_reason")
            return reply_text(message.get("content"), message.get("tool_calls") or [], finish), finish, usage
        except Retryable as exc:  # a reply that came but cannot be used: what it said it used is counted with it
            exc.usage = usage
            raise

    def _status_error(self, endpoint: Endpoint, status: int, message: str, headers: Any) -> Exception:
        """A retryable failure for 408, 409, 429 and 5xx; else a ModelError that says what to check."""
        body = printable(self.scrub(message)[:300])
        if status in RETRYABLE_STATUS or status >= 500:
            return Retryable(f"HTTP {status}: {body}", _retry_after(headers), server_error=status >= 500, why="server_error" if status >= 500 else "http_error")
        where = "the user and password in --base-url" if endpoint.auth_kind == "basic" else f"the API key in ${self.settings.api_key_env} (--api-key-env)"
        hint = status_hint(status, where, f"the endpoint serves model {self.model!r}")
        return ModelError(f"{self.model}: HTTP {status} from {endpoint.base_url}: {body} ({hint})")

    def _no_choices(self, error: Any) -> Retryable:
        detail = f" (the body says: {printable(self.scrub(str(error))[:200])})" if error else ""
        return Retryable(f"malformed reply: no choices{detail}")

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, MAX_BACKOFF)
        return min(self.backoff * 2 ** (attempt - 1), MAX_BACKOFF) * (0.5 + random.random() / 2)

    def close(self) -> None:
        for endpoint in self.pool.endpoints:
            if endpoint.client is not None:
                endpoint.client.close()
            if endpoint.poster is not None:
                endpoint.poster.close()


def reply_text(content: Any, tool_calls: list[Any], finish_reason: str | None) -> str:
    """A message as the text the parsers read: its content, then each tool call as
    ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (how vLLM returns Qwen's tool calls with a tool
    parser on: content null, the call in ``tool_calls``). A reply with neither is an endpoint fault (retried,
    then an error; never cached), unless it was cut off by the token limit (a truncated reply, scored as such)."""
    if content is not None and not isinstance(content, str):
        raise Retryable("malformed reply: message content is not text")
    parts = [content] if content else []
    for call in tool_calls if isinstance(tool_calls, list) else []:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            continue
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                pass  # kept as the string the server sent; the parser says what it can read
        parts.append("<tool_call>\n" + json.dumps({"name": function.get("name"), "arguments": arguments}, ensure_ascii=False) + "\n</tool_call>")
    text = "\n".join(parts)
    if not text.strip() and finish_reason != "length":
        raise Retryable(f"empty reply: no text and no tool calls (finish_reason {finish_reason!r})", why="empty")
    return text


def _image_part(image: SentImage, verbatim: bool = False) -> dict[str, Any]:
    """The message part of a screenshot: its data URI as a ``str``, or with ``verbatim`` as the bytes the lean client
    puts in the request body as they are (:class:`~guitest.models.request_body.Verbatim`: the same body, byte for byte)."""
    if image.data is None or image.mime is None:
        raise ModelError("no image to send: preprocess() returned no encoded image")
    if verbatim:
        return {"type": "image_url", "image_url": {"url": request_body.Verbatim(f"data:{image.mime};base64,".encode("ascii"), base64.b64encode(image.data))}}
    from ..images import data_uri

    return {"type": "image_url", "image_url": {"url": data_uri(image.data, image.mime)}}


def _retry_after(headers: Any) -> float | None:
    try:
        value = float(headers.get("retry-after"))
    except (TypeError, ValueError):
        return None
    return value if value >= 0 else None


def make(spec: str, arg: str, settings: Settings, profile: Profile, profile_reason: str, backoff: float = 0.5) -> OpenAIChat:
    """``--model=openai:NAME``: the model NAME behind the OpenAI-compatible endpoint(s) of ``--base-url``."""
    return OpenAIChat(spec, settings, arg, profile, profile_reason, backoff=backoff)
