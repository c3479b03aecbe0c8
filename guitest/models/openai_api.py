"""``openai:NAME``: any OpenAI-compatible chat-completions endpoint through the official client.

Retries (with exponential backoff and jitter, honouring ``Retry-After``) on 408, 409,
429 and 5xx replies, timeouts, broken connections and malformed replies; other HTTP
errors fail at once with a message that says what to check. The API key is read from
the environment variable named by ``--api-key-env`` and never printed or stored.
"""

from __future__ import annotations

import os
import random
import time
from typing import Any

import openai

from ..errors import ModelError
from PIL import Image

from ..images import as_file, data_uri, encode
from ..profiles import Profile
from .base import Case, Model, Prompt, Reply, SentImage, Settings, redact_url

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

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info["api_key"] = f"from ${self.settings.api_key_env} ({'set' if self.key_is_set else 'not set'})"
        info["base_url"] = redact_url(self.settings.base_url or str(self.client.base_url))
        return info

    def preprocess(self, image: Image.Image, case: Case) -> SentImage:
        """The screenshot file itself when it is sent at its own size as PNG or JPEG (no decode, no encode);
        else decode, resize and encode once; over --max-image-bytes, re-encode as JPEG, then downscale."""
        passthrough = as_file(image, case.sent_size, self.settings.max_image_bytes)
        if passthrough is not None:
            data, mime = passthrough
            return SentImage(image=None, size=image.size, data=data, mime=mime)
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
            status = exc.status_code
            body = self._scrub(str(exc.message))[:300]
            if status in RETRYABLE_STATUS or status >= 500:
                raise Retryable(f"HTTP {status}: {body}", _retry_after(exc.response.headers)) from None
            hint = {
                401: f"check the API key in ${self.settings.api_key_env} (--api-key-env)",
                403: f"check the API key in ${self.settings.api_key_env} and its permissions",
                404: f"check --base-url and that the endpoint serves model {self.model!r}",
            }.get(status, "the endpoint rejected the request")
            raise ModelError(f"{self.model}: HTTP {status}: {body} ({hint})") from None
        except (openai.APIResponseValidationError, ValueError) as exc:
            raise Retryable(f"malformed reply: {type(exc).__name__}: {str(exc)[:200]}") from None
        choices = getattr(completion, "choices", None)
        if not choices or not isinstance(choices, list):
            error = (getattr(completion, "model_extra", None) or {}).get("error")
            detail = f" (the body says: {self._scrub(str(error))[:200]})" if error else ""
            raise Retryable(f"malformed reply: no choices{detail}")
        choice = choices[0]
        message = getattr(choice, "message", None)
        if message is None:
            raise Retryable("malformed reply: the first choice has no message")
        text = getattr(message, "content", None)
        if text is None:
            text = ""
        if not isinstance(text, str):
            raise Retryable("malformed reply: message content is not text")
        return text, getattr(choice, "finish_reason", None)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, MAX_BACKOFF)
        return min(self.backoff * 2 ** (attempt - 1), MAX_BACKOFF) * (0.5 + random.random() / 2)

    def _scrub(self, text: str) -> str:
        return text.replace(self._secret, "***") if self._secret else text

    def close(self) -> None:
        self.client.close()


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
