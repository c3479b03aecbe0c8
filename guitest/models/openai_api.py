"""``openai:NAME``: any OpenAI-compatible chat-completions endpoint, through guitest's lean client
(:mod:`guitest.models.transport`, ``--http-client=stdlib``, the default) or the official ``openai``
client (``--http-client=openai``): the same request, the same reading of the reply; the lean
client needs about a quarter of the CPU per request, which decides whether one process keeps
up with a fast endpoint at high ``--concurrency`` (docs/bench.md).

Retries (with exponential backoff and jitter, honouring ``Retry-After``) on 408, 409,
429 and 5xx replies, timeouts, broken connections and malformed replies; other HTTP
errors fail at once with a message that says what to check. The API key is read from
the environment variable named by ``--api-key-env`` and never printed or stored.
"""

from __future__ import annotations

import json
import os
import random
import time
from typing import Any

import openai

from PIL import Image

from .. import __version__
from ..errors import ModelError

from ..images import as_file, data_uri, encode
from ..profiles import Profile
from .base import Case, Model, Prompt, Reply, SentImage, Settings, redact_url
from .transport import HTTPFailure, JSONPoster

RETRYABLE_STATUS = {408, 409, 429}
MAX_BACKOFF = 30.0


class Retryable(Exception):
    """A failure worth another try; carries the server's Retry-After when it gave one."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class OpenAIChat(Model):
    """Chat completions with one image per request."""

    def __init__(self, name: str, settings: Settings, model: str, profile: Profile | None = None, profile_reason: str = "", backoff: float = 0.5) -> None:
        super().__init__(name, settings, profile, profile_reason)
        if not model:
            raise ModelError("--model=openai:NAME needs the model name the endpoint serves, e.g. openai:qwen2.5-vl-7b")
        self.model = model
        self.backoff = backoff
        key = os.environ.get(settings.api_key_env)
        self.key_is_set = bool(key)
        self._secret = key or ""
        self.client = openai.OpenAI(
            api_key=key or "EMPTY",
            base_url=settings.base_url,
            timeout=settings.timeout,
            max_retries=0,  # retries are ours: counted, and also on malformed replies
        )
        self.base_url = settings.base_url or str(self.client.base_url)  # --base-url, else $OPENAI_BASE_URL, else OpenAI's
        self.poster: JSONPoster | None = None
        if settings.http_client == "stdlib":
            headers = {"Authorization": f"Bearer {key or 'EMPTY'}", "User-Agent": f"guitest/{__version__}"}
            # what the official client would send from $OPENAI_ORG_ID and $OPENAI_PROJECT_ID
            if self.client.organization:
                headers["OpenAI-Organization"] = self.client.organization
            if self.client.project:
                headers["OpenAI-Project"] = self.client.project
            try:
                self.poster = JSONPoster(self.base_url, settings.timeout, headers)
            except ValueError as exc:
                raise ModelError(f"--base-url: {exc}") from None

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info["api_key"] = f"from ${self.settings.api_key_env} ({'set' if self.key_is_set else 'not set'})"
        info["base_url"] = redact_url(self.base_url)
        info["http_client"] = self.settings.http_client
        if self.server_resizes():
            info["image_sizing"] = "smart_resize done by the model server's processor: screenshots sent as their files, sent_size is the size it makes (--resize=auto)"
        return info

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
        server = self.server_resizes()
        passthrough = as_file(image, image.size if server else case.sent_size, self.settings.max_image_bytes)
        if passthrough is not None:
            data, mime = passthrough
            return SentImage(image=None, size=case.sent_size if server else image.size, data=data, mime=mime)
        sent = super().preprocess(image, case)
        assert sent.image is not None
        data, mime, final = encode(sent.image, self.settings.max_image_bytes)
        return SentImage(image=final, size=final.size, data=data, mime=mime)

    def messages(self, prompt: Prompt, image: SentImage) -> list[dict[str, Any]]:
        """The chat messages: an optional system message, then the screenshot and the text
        (or, for a prompt with ``parts``, its texts and images in order)."""
        if prompt.parts:
            content = [_image_part(prompt.images[p]) if isinstance(p, int) else {"type": "text", "text": p} for p in prompt.parts]
        else:
            content = [_image_part(image), {"type": "text", "text": prompt.user}]
        out: list[dict[str, Any]] = [{"role": "system", "content": prompt.system}] if prompt.system else []
        out.append({"role": "user", "content": content})
        return out

    def generate(self, prompt: Prompt, image: SentImage, case: Case) -> Reply:
        messages = self.messages(prompt, image)
        last = ""
        tries = self.settings.retries + 1
        for attempt in range(1, tries + 1):
            try:
                text, finish = self._call(messages, case.attempt)
                return Reply(text=text, finish_reason=finish, attempts=attempt)
            except Retryable as exc:
                last = str(exc)
                if attempt < tries:
                    time.sleep(self._delay(attempt, exc.retry_after))
        raise ModelError(self._scrub(f"{self.model}: gave up after {tries} tries: {last}"))

    def _call(self, messages: list[dict[str, Any]], attempt: int = 0) -> tuple[str, str | None]:
        extra: dict[str, Any] = {}
        if self.settings.seed is not None:
            extra["seed"] = self.settings.seed + attempt  # each repeat its own sample
        if self.poster is not None:
            return self._call_stdlib({"model": self.model, "messages": messages, "temperature": self.settings.temperature, "max_tokens": self.settings.max_tokens, **extra})
        try:
            completion = self.client.chat.completions.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]
                temperature=self.settings.temperature,
                max_tokens=self.settings.max_tokens,
                **extra,
            )
        except openai.APITimeoutError:
            raise Retryable(f"timed out after {self.settings.timeout:g} s (--timeout)") from None
        except openai.APIConnectionError as exc:
            raise Retryable(f"cannot connect to {redact_url(str(self.client.base_url))}: {exc.__cause__ or exc}") from None
        except openai.APIStatusError as exc:
            raise self._status_error(exc.status_code, str(exc.message), exc.response.headers) from None
        except (openai.APIResponseValidationError, ValueError) as exc:
            raise Retryable(f"malformed reply: {type(exc).__name__}: {str(exc)[:200]}") from None
        choices = getattr(completion, "choices", None)
        if not choices or not isinstance(choices, list):
            raise self._no_choices((getattr(completion, "model_extra", None) or {}).get("error"))
        choice = choices[0]
        message = getattr(choice, "message", None)
        if message is None:
            raise Retryable("malformed reply: the first choice has no message")
        return _text(getattr(message, "content", None)), getattr(choice, "finish_reason", None)

    def _call_stdlib(self, payload: dict[str, Any]) -> tuple[str, str | None]:
        """The same request and the same reading of the reply through :mod:`guitest.models.transport`."""
        assert self.poster is not None
        try:
            response = self.poster.post("/chat/completions", json.dumps(payload, ensure_ascii=False).encode("utf-8"))
        except HTTPFailure as exc:
            if exc.timeout:
                raise Retryable(f"timed out after {self.settings.timeout:g} s (--timeout)") from None
            raise Retryable(f"cannot connect to {redact_url(self.base_url)}: {exc}") from None
        try:
            body = json.loads(response.body)
        except ValueError as exc:
            if response.status >= 400:
                raise self._status_error(response.status, response.body[:300].decode("utf-8", "replace"), response.headers) from None
            raise Retryable(f"malformed reply: {type(exc).__name__}: {str(exc)[:200]}") from None
        if response.status >= 400:
            error = body.get("error") if isinstance(body, dict) else None
            message = error.get("message") if isinstance(error, dict) else error
            raise self._status_error(response.status, str(message if message is not None else body), response.headers)
        choices = body.get("choices") if isinstance(body, dict) else None
        if not choices or not isinstance(choices, list):
            raise self._no_choices(body.get("error") if isinstance(body, dict) else None)
        choice = choices[0]
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            raise Retryable("malformed reply: the first choice has no message")
        return _text(message.get("content")), choice.get("finish_reason")

    def _status_error(self, status: int, message: str, headers: Any) -> Exception:
        """A retryable failure for 408, 409, 429 and 5xx; else a ModelError that says what to check."""
        body = self._scrub(message)[:300]
        if status in RETRYABLE_STATUS or status >= 500:
            return Retryable(f"HTTP {status}: {body}", _retry_after(headers))
        hint = {
            401: f"check the API key in ${self.settings.api_key_env} (--api-key-env)",
            403: f"check the API key in ${self.settings.api_key_env} and its permissions",
            404: f"check --base-url and that the endpoint serves model {self.model!r}",
        }.get(status, "the endpoint rejected the request")
        return ModelError(f"{self.model}: HTTP {status}: {body} ({hint})")

    def _no_choices(self, error: Any) -> Retryable:
        detail = f" (the body says: {self._scrub(str(error))[:200]})" if error else ""
        return Retryable(f"malformed reply: no choices{detail}")

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, MAX_BACKOFF)
        return min(self.backoff * 2 ** (attempt - 1), MAX_BACKOFF) * (0.5 + random.random() / 2)

    def _scrub(self, text: str) -> str:
        return text.replace(self._secret, "***") if self._secret else text

    def close(self) -> None:
        self.client.close()
        if self.poster is not None:
            self.poster.close()


def _text(content: Any) -> str:
    """A message's content as text (None is an empty reply); anything else is a malformed reply."""
    if content is None:
        return ""
    if not isinstance(content, str):
        raise Retryable("malformed reply: message content is not text")
    return content


def _image_part(image: SentImage) -> dict[str, Any]:
    if image.data is None or image.mime is None:
        raise ModelError("no image to send: preprocess() returned no encoded image")
    return {"type": "image_url", "image_url": {"url": data_uri(image.data, image.mime)}}


def _retry_after(headers: Any) -> float | None:
    try:
        value = float(headers.get("retry-after"))
    except (TypeError, ValueError):
        return None
    return value if value >= 0 else None
