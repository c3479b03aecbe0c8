"""What the two computer-use adapters share: the API key, the endpoint, retries, and the official client's errors.

:class:`ComputerUseModel` is a :class:`~guitest.models.base.Model` whose ``generate`` sends one request of a
computer-use conversation (built by :mod:`guitest.live.cua.policy`, carried in a
:class:`~guitest.exchange.Prompt` so the response cache keys it) through the provider's official client, and
returns the provider's reply as JSON text. Around the call:

- the API key comes from the environment variable ``--api-key-env`` names (``$ANTHROPIC_API_KEY`` for
  ``anthropic:`` unless another is named, ``$OPENAI_API_KEY`` for ``openai-cua:``); it is never printed,
  and every text that leaves the adapter (errors, replies) is scrubbed of it;
- retries (``--retries``, backoff from ``--retry-backoff`` doubling, ``Retry-After`` honoured) on a timeout, a
  dropped connection, 408, 409, 429 (rate limits) and 5xx (Anthropic's 529 ``overloaded_error`` among them)
  and a reply the client cannot parse; any other HTTP error is a :class:`~guitest.errors.ModelError` at once,
  with a hint (401: the key), so the episode is an error that ``--lf`` runs again;
- the endpoint is taken out after ``--retries`` + 1 failures in a row without a reply
  (:class:`~guitest.models.endpoints.EndpointPool`), so a dead endpoint stops the run's other episodes before
  they start an environment;
- the official client is made without its own retries, its HTTP client with guitest's request deadline
  (:mod:`guitest.models.httpx_deadline`: ``--timeout`` bounds the whole request).

A grounding (non-live) suite cannot use these models: ``generate`` says so for its first case and every other
(:data:`NOT_LIVE`), as :func:`guitest.live.agent.not_an_agent` does the other way round.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from ...errors import EndpointDown, ModelError, PaidError
from ...exchange import Case, Prompt, Reply, SentImage
from ...models.base import Model, Settings, redact_url
from ...models.endpoints import Endpoint, EndpointPool, Retryable, connection_failure, credentials, status_hint
from ...printable import printable
from ...profiles import Profile
from ...secrets import Scrubber
from ...report_parts import RunnerRecord
from ...cost.usage import FailedCall, Usage
from .display import Display

#: the settings' defaults, which these adapters read as "not given"
DEFAULT_KEY_ENV = Settings.api_key_env
DEFAULT_MAX_TOKENS = Settings.max_tokens
#: the reply token limit of both reference runners (OSWorld's AnthropicAgent and Anthropic's demo loop), used when
#: --max-tokens is left at its grounding default
AGENT_MAX_TOKENS = 4096
RETRYABLE_STATUS = {408, 409, 429}
MAX_BACKOFF = 30.0
#: the marker of a prompt that carries a computer-use request (see guitest.live.cua.policy)
REQUEST_MARKER = "guitest-computer-use-request"
NOT_LIVE = (
    "--model={spec} is a computer-use agent: it runs live suites (task: live) through {api}; for a grounding or "
    "choice suite use a chat model, e.g. --model=openai:NAME with --base-url (docs/live_cua.md)"
)
#: the safety-check policies (OpenAI's pending_safety_checks): acknowledge them, or end the episode there
SAFETY_POLICIES = ("acknowledge", "stop")


@dataclass(frozen=True)
class ToolLoop:
    """A computer-use adapter's runner as the report records it (beside the prompt runners of
    :mod:`guitest.live.runners`, whose ``describe`` it mirrors): the provider's own tool loop, its sources, the tool
    that declares the action space, and what the conversation keeps of earlier screenshots. ``sleep_after_execution``:
    the seconds OSWorld's run of this API waits after each action before the next screenshot (as
    :attr:`guitest.live.runners.runner.Runner.sleep_after_execution`; a desktop suite with ``settle: runner`` waits it),
    ``evaluate_after`` the seconds it waits from the last action to the evaluation (``evaluate_after: runner``)."""

    name: str
    source: str
    convention: str
    history: str
    reference: dict[str, Any] = field(default_factory=dict)
    sleep_after_execution: float | None = None
    evaluate_after: float | None = None

    def describe(self, history_images: int | None = None) -> RunnerRecord:
        """Plain builtins (``history_images`` does not apply: the conversation keeps what the provider's loop keeps)."""
        return {
            "name": self.name,
            "source": self.source,
            "convention": self.convention,
            "space": "pixel_sent (the declared display)",
            "history_images": self.history,
            "reference": dict(self.reference),
        }


class ComputerUseModel(Model):
    """Base of the ``anthropic:`` and ``openai-cua:`` adapters (see the module docstring). A subclass sets
    ``provider``, ``api`` (what the errors call it), ``key_env`` (its default key variable), ``base_url_env`` and
    ``default_base_url``, ``example`` (a spec for messages) and ``reply_fields``, and implements :meth:`client_class`,
    :meth:`create`, :meth:`finish`, :meth:`refusal` and :meth:`images`."""

    provider = ""
    api = ""
    example = ""
    key_env = ""
    base_url_env = ""
    default_base_url = ""
    uses = ("max_tokens", "timeout", "retries", "concurrency", "base_url", "api_key_env", "safety_checks", "computer_tool")

    def __init__(self, name: str, settings: Settings, model: str, profile: Profile | None = None, profile_reason: str = "", backoff: float = 0.5) -> None:
        super().__init__(name, settings, profile, profile_reason)
        if not model:
            raise ModelError(f"--model={self.provider}:MODEL needs the model's name, e.g. {self.example}")
        if settings.safety_checks not in SAFETY_POLICIES:
            raise ModelError(f"--safety-checks={settings.safety_checks}: expected one of {', '.join(SAFETY_POLICIES)}")
        self.model = model
        self.backoff = backoff
        self.key_variable = settings.api_key_env if settings.api_key_env != DEFAULT_KEY_ENV else self.key_env
        key = os.environ.get(self.key_variable) or ""
        self.key_is_set = bool(key)
        self.scrub = Scrubber([key])
        urls = list(settings.base_urls or ([settings.base_url] if settings.base_url else []))
        if len(urls) > 1:
            raise ModelError(f"--model={name}: give --base-url once ({self.api} is one endpoint; for several, put a load balancer in front)")
        url = urls[0] if urls else os.environ.get(self.base_url_env) or self.default_base_url
        auth, secrets, kind = credentials(url, key)
        self.scrub.add(*secrets)
        self.base_url = redact_url(url)
        if not self.base_url.startswith(("http://", "https://")):
            raise ModelError(f"--base-url={self.base_url}: not an http:// or https:// URL")
        self.auth = auth if kind == "basic" else None  # HTTP Basic from the URL's user and password, sent in place of the key
        self.key = key
        self.max_tokens_given = settings.max_tokens != DEFAULT_MAX_TOKENS
        self.max_tokens = settings.max_tokens if self.max_tokens_given else AGENT_MAX_TOKENS
        self.settings = replace(settings, max_tokens=self.max_tokens)  # what the report records is what is sent
        self.pool = EndpointPool([Endpoint(index=0, base_url=self.base_url, auth=auth, auth_kind=kind, client=None)], settings.retries + 1)
        self._client_lock = threading.Lock()

    @classmethod
    def make(cls, spec: str, arg: str, settings: Settings, profile: Profile, profile_reason: str, backoff: float = 0.5) -> "ComputerUseModel":
        """The model registry's factory: ``--model=<provider>:MODEL`` with ``arg`` the model's name."""
        return cls(spec, settings, arg, profile, profile_reason, backoff=backoff)

    # -- what a subclass implements ---------------------------------------------------------------------------

    def client_class(self) -> Any:
        """The provider's official client class (``anthropic.Anthropic``, ``openai.OpenAI``), imported when first used."""
        raise NotImplementedError

    def make_client(self) -> Any:
        """The official client for :attr:`base_url`: no retries of its own (guitest's are counted, and take a dead
        endpoint out), its HTTP client ending each request within ``--timeout``
        (:class:`~guitest.models.httpx_deadline.DeadlineTransport`; both SDKs are built on the same HTTP library), HTTP
        Basic from a ``--base-url`` with a user and password sent in place of the key."""
        from ...models.httpx_deadline import DeadlineTransport, httpx

        http = httpx.Client(transport=DeadlineTransport(self.settings.timeout, self.base_url), timeout=self.settings.timeout, follow_redirects=True)
        return self.client_class()(
            api_key=self.key or "EMPTY",  # a missing key is the API's 401, whose message names the variable to set
            base_url=self.base_url,
            timeout=self.settings.timeout,
            max_retries=0,
            default_headers={"Authorization": self.auth} if self.auth else {},
            http_client=http,
        )

    #: the fields of a reply the conversation reads (the rest of the provider's reply is not kept)
    reply_fields: tuple[str, ...] = ()

    def create(self, client: Any, request: dict[str, Any]) -> Any:
        """The client's call for ``request`` (the provider's request body, images in place): its reply object."""
        raise NotImplementedError

    def explain(self, failure: Exception, exc: Exception, request: dict[str, Any]) -> Exception:
        """``failure`` (from :meth:`failure`) with what this request adds to it; as it is by default."""
        return failure

    def send(self, client: Any, request: dict[str, Any]) -> dict[str, Any]:
        """Send ``request`` and return the reply's :attr:`reply_fields` as plain builtins; raise
        :class:`~guitest.models.endpoints.Retryable` or :class:`~guitest.errors.ModelError` (see :meth:`failure`)."""
        try:
            response = self.create(client, request)
        except Exception as exc:
            failure = self.failure(self.client_module(), exc)
            if failure is exc:
                raise  # not a failure of the API: a bug, with its traceback
            raise self.explain(failure, exc, request) from None
        reply = response.model_dump(mode="json", exclude_none=True)
        out = {key: reply[key] for key in self.reply_fields if key in reply}
        if "usage" in reply:  # read by generate, never part of the reply's text
            out["usage"] = reply["usage"]
        return out

    def read_usage(self, usage: Any) -> Usage | None:
        """The reply's ``usage`` in guitest's terms (:mod:`guitest.cost.usage`), as this API reports it."""
        raise NotImplementedError

    def client_module(self) -> Any:
        """The official client's package (its error classes)."""
        return __import__(self.client_class().__module__.split(".")[0])

    def finish(self, reply: dict[str, Any]) -> str | None:
        """The reply's finish reason (``stop_reason``, the response's ``status``), for the step record."""
        raise NotImplementedError

    def refusal(self, reply: dict[str, Any]) -> str | None:
        """Why the model refused, when the reply is a refusal (None otherwise)."""
        raise NotImplementedError

    def image_part(self, image: SentImage) -> Any:
        """The provider's form of a screenshot in a request (a base64 source, a data URI)."""
        raise NotImplementedError

    def tool_record(self) -> dict[str, Any]:
        """What the report records of the computer tool this adapter declares (its type, and the provider's own settings)."""
        raise NotImplementedError

    def images(self, request: Any, images: tuple[SentImage, ...]) -> Any:
        """``request`` with each ``{"$image": n}`` placeholder replaced by the provider's form of ``images[n]`` (:meth:`image_part`)."""
        return substitute(request, images, self.image_part)

    # -- the Model interface ----------------------------------------------------------------------------------

    def generate(self, prompt: Prompt, image: SentImage, case: Case) -> Reply:
        """One request of a computer-use conversation (``prompt.user`` holds it, see :mod:`guitest.live.cua.policy`):
        the reply as JSON text. A refusal is a :class:`~guitest.errors.ModelError` (never cached: ``--lf`` asks again)."""
        request = _request(prompt)
        if request is None:
            raise ModelError(NOT_LIVE.format(spec=self.name, api=self.api))
        body = self.images(request, prompt.images)
        calls: list[FailedCall] = []  # the tries that gave no usable reply, counted apart (guitest.cost.usage)
        reply, attempts = self._with_retries(lambda client: self.send(client, body), calls)
        usage = self.read_usage(reply.pop("usage", None))
        refused = self.refusal(reply)
        if refused is not None:  # a refusal is paid for all the same: the error carries the call's usage
            raise PaidError(self.scrub(f"{self.model} refused (step not cached; --lf asks again): {printable(refused[:300])}"), usage).with_failed(calls)
        return Reply(text=json.dumps(reply, ensure_ascii=False), finish_reason=self.finish(reply), attempts=attempts, usage=usage, failed=tuple(calls))

    def _with_retries(self, call: Callable[[Any], dict[str, Any]], calls: list[FailedCall]) -> tuple[dict[str, Any], int]:
        """``call``'s reply and the try it came at; each try that gave no usable reply is added to ``calls``."""
        tries = self.settings.retries + 1
        last = ""
        for attempt in range(1, tries + 1):
            endpoint = self.pool.pick()
            if endpoint is None:
                raise self._down().with_failed(calls)
            with self._client_lock:  # episodes of a worker share the client; the first one makes it
                if endpoint.client is None:
                    endpoint.client = self.make_client()
            began = time.perf_counter()
            try:
                with self.pool.using(endpoint):
                    return call(endpoint.client), attempt
            except Retryable as exc:
                calls.append(FailedCall(exc.why, time.perf_counter() - began, exc.usage))
                last = str(exc)
                if attempt < tries:
                    time.sleep(self._delay(attempt, exc.retry_after))
            except ModelError as exc:  # an HTTP error a retry does not cure
                calls.append(FailedCall("http_error", time.perf_counter() - began))
                raise exc.with_failed(calls) from None
        raise ModelError(self.scrub(f"{self.model}: gave up after {tries} tries: {last}")).with_failed(calls)

    def failure(self, sdk: Any, exc: Exception) -> Exception:
        """The failure an exception of the official client (module ``sdk``: ``anthropic`` or ``openai``, whose error
        classes share their names) stands for: :class:`Retryable` or :class:`ModelError`, scrubbed."""
        if isinstance(exc, sdk.APITimeoutError):
            return Retryable(f"timed out after {self.settings.timeout:g} s (--timeout)", no_reply=True, why="timeout")
        if isinstance(exc, sdk.APIConnectionError):
            return Retryable(f"cannot connect to {self.base_url}: {self.scrub(str(exc.__cause__ or exc))}", no_reply=True, why=connection_failure(exc))
        if isinstance(exc, sdk.APIStatusError):
            status = exc.status_code
            message = printable(self.scrub(_error_text(exc))[:300])
            if status in RETRYABLE_STATUS or status >= 500:
                return Retryable(f"HTTP {status}: {message}", _retry_after(exc.response.headers), server_error=status >= 500, why="server_error" if status >= 500 else "http_error")
            where = "the user and password in --base-url" if self.auth else f"the API key in ${self.key_variable} (--api-key-env)"
            hint = status_hint(status, where, f"{self.api} serves model {self.model!r}")
            return ModelError(f"{self.model}: HTTP {status} from {self.base_url}: {message} ({hint})")
        if isinstance(exc, (sdk.APIResponseValidationError, ValueError)):
            return Retryable(f"malformed reply: {type(exc).__name__}: {printable(self.scrub(str(exc)))[:200]}")
        return exc

    def _down(self) -> EndpointDown:
        url, state, reason = self.pool.why_down()
        return EndpointDown(self.scrub(f"not asked: {url} is {state} ({reason}); start the endpoint and re-run with --lf"), url, state, self.scrub(reason))

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, MAX_BACKOFF)
        return min(self.backoff * 2 ** (attempt - 1), MAX_BACKOFF) * (0.5 + random.random() / 2)

    def scrub_reply(self, text: str) -> str:
        return self.scrub.known(text)

    def unavailable(self) -> EndpointDown | None:
        return self._down() if self.pool.all_down() else None

    def generation_settings(self) -> dict[str, Any]:
        s = self.settings  # no sampling settings: neither client takes a temperature for these models (see docs/live_cua.md)
        return {"max_tokens": self.max_tokens, "safety_checks": s.safety_checks, "computer_tool": s.computer_tool}

    def identity(self) -> dict[str, Any]:
        return {"endpoints": [self.base_url], "api": self.api}

    def endpoint_stats(self) -> list[dict[str, Any]]:
        return self.pool.stats()

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info["api"] = self.api
        info["api_key"] = f"from ${self.key_variable} ({'set' if self.key_is_set else 'not set'})"
        info["base_url"] = self.base_url
        info["computer_tool"] = self.tool_record()
        return info

    def close(self) -> None:
        for endpoint in self.pool.endpoints:
            if endpoint.client is not None:
                endpoint.client.close()


class Conversation:
    """One episode's conversation with a computer-use API: the adapter, the environment it is told it acts in, and the
    display the last request declared (a provider's subclass adds how it holds the turns)."""

    def __init__(self, model: ComputerUseModel, environment: str) -> None:
        self.model = model
        self.environment = environment
        self.display: Display | None = None


def substitute(request: Any, images: tuple[SentImage, ...], form: Callable[[SentImage], Any]) -> Any:
    """``request`` with each ``{"$image": n}`` replaced by ``form(images[n])``: the body a provider's client sends."""
    if isinstance(request, dict):
        if set(request) == {"$image"} and isinstance(request["$image"], int) and 0 <= request["$image"] < len(images):
            return form(images[request["$image"]])
        return {k: substitute(v, images, form) for k, v in request.items()}
    if isinstance(request, list):
        return [substitute(v, images, form) for v in request]
    return request


def _request(prompt: Prompt) -> Any:
    """The computer-use request a prompt carries (None for any other prompt: a grounding case)."""
    if prompt.system != REQUEST_MARKER:
        return None
    try:
        return json.loads(prompt.user)
    except ValueError:
        return None


def _error_text(exc: Any) -> str:
    """``type: message`` from an API error body (Anthropic's client keeps ``{"type": "error", "error": {"type",
    "message"}}``, OpenAI's the inner ``{"type", "code", "message"}``), else the exception's own message."""
    body = getattr(exc, "body", None)
    error = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("message"):
        kind = error.get("type") or error.get("code")
        return f"{kind}: {error['message']}" if kind else str(error["message"])
    return str(getattr(exc, "message", None) or exc)


def _retry_after(headers: Any) -> float | None:
    try:
        value = float(headers.get("retry-after"))
    except (TypeError, ValueError, AttributeError):
        return None
    return value if value >= 0 else None
