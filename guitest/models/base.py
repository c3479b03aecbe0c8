"""The model adapter interface: four stages, each overridable.

``build_prompt -> preprocess -> generate -> postprocess``: a case calls them in this
order (see :func:`guitest.run.case.run_case`). Subclasses usually override ``generate``
only; the model's profile (:mod:`guitest.profiles`) supplies the prompt, the image
sizing and the answer convention that the default stages use. The data the stages pass
(Case, Prompt, SentImage, Reply) lives in :mod:`guitest.exchange` and is re-exported here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Sequence

from ..profiles import PROFILES, Profile
from ..errors import EndpointDown, ModelError
from ..secrets import redact_urls
from ..exchange import Case, Prompt, Reply, SentImage  # noqa: F401  (re-exported: adapters import them from here)

if TYPE_CHECKING:  # PIL (guitest.images) loads where an image is first read or sized, not when the plugin does
    from PIL import Image

    from ..sample import Sample


#: the settings that say where and how fast a model was asked, not what it was asked: two runs that differ only in these
#: got the same answers, so the shards of one run merge, an --lf run folds into the report it finishes, and guitest
#: compare does not name them (which model answered is compared as the spec and the model its server says it served)
ASKED = ("base_url", "base_urls", "api_key_env", "concurrency", "retries", "timeout", "http_client")


@dataclass(frozen=True)
class Settings:
    """Generation, transport and image settings shared by all adapters (recorded in the report)."""

    temperature: float = 0.0
    max_tokens: int = 512
    timeout: float = 120.0
    retries: int = 3
    concurrency: int = 8
    seed: int | None = None
    base_url: str | None = None
    base_urls: tuple[str, ...] = ()  # every --base-url given (base_url is the first); one model served by several
    api_key_env: str = "OPENAI_API_KEY"
    min_pixels: int | None = None
    max_pixels: int | None = None
    max_image_bytes: int | None = None
    device: str = "cpu"
    dtype: str = "auto"
    batch_size: int = 1
    http_client: str = "stdlib"
    resize: str = "auto"
    safety_checks: str = "acknowledge"  # computer-use agents: what a pending safety check does (guitest.live.cua)
    computer_tool: str = "auto"  # anthropic: the computer tool's version (auto: by the model's name)
    screenshot_chunk: int = 10  # anthropic: old tool-result screenshots dropped this many at a time (OSWorld: 10 on Bedrock, 20 on the API)

    def public(self) -> dict[str, Any]:
        """The settings as plain builtins, safe to print and store (credentials in the URL removed)."""
        out = asdict(self)
        if self.base_url:
            out["base_url"] = redact_url(self.base_url)
        out["base_urls"] = [redact_url(u) for u in self.base_urls]
        return out


class Model:
    """Base adapter; ``profile`` holds the conventions of the model family.

    ``cacheable``: its replies go through the response cache (False for models that cost nothing).
    ``metered``: its calls are counted (tokens, model time, dollars: :mod:`guitest.cost.usage`) and kept to the run's
    budget (False for models that spend no tokens: the baselines, replayed replies, the OCR baseline).
    ``needs_screenshot``: False for a model that reads no pixel and no file of the screenshot (replayed answers): a
    case whose annotation gives the image's size then runs on that size and never opens the screenshot.
    """

    cacheable = True
    metered = True
    needs_screenshot = True
    #: the settings this adapter reads, the ones its report lists (None: all of them, for an adapter that does not say)
    uses: tuple[str, ...] | None = None

    def __init__(self, name: str, settings: Settings, profile: Profile | None = None, profile_reason: str = "") -> None:
        self.name = name
        self.settings = settings
        self.profile = profile or PROFILES["generic"]
        self.profile_reason = profile_reason or ("--model-profile" if profile else "default")

    @property
    def space(self) -> str:
        return self.profile.space

    def plan_size(self, original: tuple[int, int]) -> tuple[int, int]:
        """The size the screenshot will be sent at: the profile's sizing, with --min-pixels/--max-pixels applied."""
        from ..images import target_size

        sizing = self.profile.sizing
        return target_size(
            original,
            sizing.kind,
            sizing.factor,
            self.settings.min_pixels or sizing.min_pixels,
            self.settings.max_pixels or sizing.max_pixels,
        )

    def build_prompt(self, case: Case, template: str | None) -> Prompt:
        """The task's prompt for this model's profile (for grounding: the suite's prompt or the profile's,
        with ``{instruction}``, ``{width}``, ``{height}`` of the image sent filled in)."""
        return case.task.build_prompt(self.profile, case, template)

    def preprocess(self, image: Image.Image, case: Case) -> SentImage:
        """The image to send, from the lazily opened original: decoded once as RGB, resized once to the planned size."""
        from ..images import decode_rgb, resized

        sent = resized(decode_rgb(image), case.sent_size)
        return SentImage(image=sent, size=sent.size)

    def generate(self, prompt: Prompt, image: SentImage, case: Case) -> Reply:
        """Ask the model; raise :class:`~guitest.errors.ModelError` when it cannot answer."""
        raise NotImplementedError

    def postprocess(self, reply: Reply, case: Case) -> str:
        """The answer text, from the raw reply (strip a wrapper, decode a format)."""
        return reply.text

    def parse_response(self, answer: str, case: Case) -> str:
        """The text the task's judge reads, from the answer text: a model with its own output format
        rewrites it here into the form the task's prompt asked for. Identity by default."""
        return answer

    def read_samples(self, samples: Sequence[Sample], images_dir: str) -> None:
        """Called with every sample of each suite file this process collects, before any case runs (``images_dir``:
        the folder their screenshot paths are under): a model answering from a file of its own matches the file to
        them here, raising :class:`~guitest.errors.ModelError` for what does not fit. Nothing by default."""

    def generation_settings(self) -> dict[str, Any]:
        """The settings a reply depends on (part of the response cache's key)."""
        s = self.settings
        return {"temperature": s.temperature, "max_tokens": s.max_tokens, "seed": s.seed, "max_image_bytes": s.max_image_bytes}

    def unavailable(self) -> "EndpointDown | None":
        """Why no case can ask this model any more (every endpoint taken out), or None: a live episode checks it
        before it starts an environment, so a dead endpoint costs no browser page or desktop machine."""
        return None

    def scrub_reply(self, text: str) -> str:
        """A reply with this model's credentials (an API key, a password of its endpoint URL) replaced by ``***``,
        before it is read, cached or reported: a model that echoes its prompt's headers must not leak them. Identity
        for models without credentials."""
        return text

    def identity(self) -> dict[str, Any]:
        """Who answers: the endpoint(s) and what they report of the model they serve (part of the response
        cache's key, so replies of one server or checkpoint never answer for another). Plain builtins, no
        credentials; empty for a model that is only its name (a local model names its weights in ``name``)."""
        return {}

    def endpoint_stats(self) -> list[dict[str, Any]]:
        """Per endpoint, what this process sent it: ``url``, ``replies``, ``failures``, ``down`` (why it was
        taken out, or None). Empty for models without endpoints."""
        return []

    def describe(self) -> dict[str, Any]:
        """What the report records about this model: name, class, profile (and why), settings."""
        return {
            "spec": self.name,
            "adapter": type(self).__name__,
            "space": self.space,
            "profile": self.profile.describe(),
            "profile_reason": self.profile_reason,
            "settings": {k: v for k, v in self.settings.public().items() if self.uses is None or k in self.uses},
        }

    def close(self) -> None:
        """Release connections or memory; called once at the end of a session."""


class Blind(Model):
    """A model that never looks at pixels (baselines, replayed replies): the image is not decoded, nothing is cached."""

    cacheable = False
    metered = False

    def preprocess(self, image: Image.Image, case: Case) -> SentImage:
        return SentImage(image=None, size=case.sent_size)


def takes_no_argument(spec: str, arg: str) -> None:
    """A ModelError for ``--model=NAME:ARG`` when the model ``NAME`` takes no argument; nothing when ``arg`` is empty."""
    if arg:
        raise ModelError(f"--model={spec}: {spec.partition(':')[0]} takes no argument; use --model={spec.partition(':')[0]}")


def redact_url(url: str) -> str:
    """A URL without any ``user:password@`` part."""
    return redact_urls(url)
