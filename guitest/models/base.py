"""The model adapter interface: four stages, each overridable.

``build_prompt -> preprocess -> generate -> postprocess``: a case calls them in this
order (see :func:`guitest.case.run_case`). Subclasses usually override ``generate``
only; profiles (image sizing, prompts, answer conventions) override the others.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from PIL import Image

from ..images import decode_rgb
from ..sample import Sample


@dataclass(frozen=True)
class Settings:
    """Generation and transport settings shared by all adapters (recorded in the report)."""

    temperature: float = 0.0
    max_tokens: int = 512
    timeout: float = 120.0
    retries: int = 3
    concurrency: int = 8
    seed: int | None = None
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"

    def public(self) -> dict[str, Any]:
        """The settings as plain builtins, safe to print and store (credentials in the URL removed)."""
        out = asdict(self)
        if self.base_url:
            out["base_url"] = redact_url(self.base_url)
        return out


@dataclass(frozen=True)
class Prompt:
    """What is said to the model for one case, besides the image."""

    user: str
    system: str | None = None


@dataclass(frozen=True)
class SentImage:
    """The image as it is sent to the model (None for models that never look at pixels) and its size."""

    image: Image.Image | None
    size: tuple[int, int]


@dataclass(frozen=True)
class Reply:
    """A model's raw reply: its text, why it stopped (``stop``, ``length``, ...) and how many tries it took."""

    text: str
    finish_reason: str | None = "stop"
    attempts: int = 1


@dataclass(frozen=True)
class Case:
    """What an adapter may know of the case it answers: the sample and its original image size."""

    sample: Sample
    original_size: tuple[int, int]
    truth: tuple[float, float, float, float]


class Model:
    """Base adapter. ``space`` declares the coordinate space of the answers this adapter's replies use."""

    name: str = "model"
    space: str = "normalized"

    def __init__(self, name: str, settings: Settings) -> None:
        self.name = name
        self.settings = settings

    def build_prompt(self, case: Case, template: str) -> Prompt:
        """Fill the task's prompt template with the case's instruction."""
        return Prompt(user=template.replace("{instruction}", case.sample.instruction))

    def preprocess(self, image: Image.Image, case: Case) -> SentImage:
        """The image to send, from the lazily opened original; the default decodes it once, unchanged, as RGB."""
        rgb = decode_rgb(image)
        return SentImage(image=rgb, size=rgb.size)

    def generate(self, prompt: Prompt, image: SentImage, case: Case) -> Reply:
        """Ask the model; raise :class:`~guitest.errors.ModelError` when it cannot answer."""
        raise NotImplementedError

    def postprocess(self, reply: Reply, case: Case) -> str:
        """The reply text the answer parser reads."""
        return reply.text

    def describe(self) -> dict[str, Any]:
        """What the report records about this model: name, class, answer space, settings."""
        return {"spec": self.name, "adapter": type(self).__name__, "space": self.space, "settings": self.settings.public()}

    def close(self) -> None:
        """Release connections or memory; called once at the end of a session."""


class Blind(Model):
    """A model that never looks at pixels (baselines, replayed replies): the image is not decoded."""

    def preprocess(self, image: Image.Image, case: Case) -> SentImage:
        return SentImage(image=None, size=image.size)


def redact_url(url: str) -> str:
    """A URL without any ``user:password@`` part."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    host, slash, path = rest.partition("/")
    if "@" in host:
        host = host.rsplit("@", 1)[1]
    return f"{scheme}://{host}{slash}{path}"
