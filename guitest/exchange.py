"""The data of one exchange with a model: what a case may know (Case), what is said (Prompt),
the image as sent (SentImage) and the raw reply (Reply), and what a model may ask of the case's
task (CaseTask).

Models, tasks and the live loop all use these; this module imports none of them, so none
of them needs another to name these types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from .sample import Sample
from .cost.usage import FailedCall, Usage

if TYPE_CHECKING:
    from PIL import Image  # a type only: PIL loads where an image is read (guitest.images)

    from .profiles import Profile


class CaseTask(Protocol):
    """What a model adapter may ask of its case's task. :class:`guitest.tasks.Task` is the one
    implementation; naming it here by what it offers keeps this module free of the tasks."""

    name: str

    def build_prompt(self, profile: "Profile", case: "Case", template: str | None) -> "Prompt":
        """The task's prompt of ``case`` for a model of ``profile`` (``template``: the suite's prompt, if any)."""
        ...

    def oracle_text(self, case: "Case", profile: "Profile") -> str | None:
        """A reply in the profile's syntax that answers ``case`` right, or None when the task has none to give."""
        ...


@dataclass(frozen=True)
class Prompt:
    """What is said to the model for one case, besides the image.

    Most cases send one screenshot and ``user``. A case that sends several images
    (a trajectory) also gives ``parts``: the user message in order, each a text or the
    index of an image in ``images`` (already preprocessed); ``user`` then holds the
    whole text, for adapters and cache keys that read text only.

    A conversation (a live runner's step: earlier screenshots, the model's own earlier replies as
    assistant turns) gives ``turns`` instead: ``(role, parts)`` in order, ``role`` ``user`` or
    ``assistant``, ``parts`` as above; ``user`` then holds the whole conversation as text, each turn's
    role and each image's place marked (:func:`conversation` makes one).
    """

    user: str
    system: str | None = None
    parts: tuple[str | int, ...] = ()
    images: tuple["SentImage", ...] = ()
    turns: tuple[tuple[str, tuple[str | int, ...]], ...] = ()


def conversation(system: str | None, turns: "list[tuple[str, tuple[str | int, ...]]]", images: "tuple[SentImage, ...]") -> Prompt:
    """A :class:`Prompt` holding ``turns`` (their image indexes into ``images``), its ``user`` the whole conversation
    as text: each turn as ``[role]`` and its parts, an image as ``<image N>`` with its size."""
    lines = []
    for role, parts in turns:
        said = [p if isinstance(p, str) else f"<image {p} {images[p].size[0]}x{images[p].size[1]}>" for p in parts]
        lines.append(f"[{role}]\n" + "\n".join(said))
    return Prompt(user="\n".join(lines), system=system, images=tuple(images), turns=tuple((r, tuple(p)) for r, p in turns))


@dataclass(frozen=True)
class SentImage:
    """The image as it is sent: pixels (None for models that never look at them), size, and encoded bytes when an adapter encodes."""

    image: Image.Image | None
    size: tuple[int, int]
    data: bytes | None = None
    mime: str | None = None


@dataclass(frozen=True)
class Recorded:
    """An answer another harness recorded as data, replayed as it is (:mod:`guitest.models.replay`): ``point`` in
    pixels of the original screenshot, or None when the harness recorded no point. The task judges it without reading
    any text, so no profile's syntax or coordinate space takes part in its verdict."""

    point: tuple[float, float] | None


@dataclass(frozen=True)
class Reply:
    """A model's raw reply: its text, why it stopped (``stop``, ``length``, ...), how many tries it took, the
    tokens its API reported (:mod:`guitest.cost.usage`; None when it reported none), and the tries before it that gave no
    usable reply (``failed``: counted apart, never in the reply's usage). ``recorded``: an answer another harness
    recorded, which the task judges instead of the text (the text is then the evidence shown beside it)."""

    text: str
    finish_reason: str | None = "stop"
    attempts: int = 1
    usage: Usage | None = None
    recorded: Recorded | None = None
    failed: tuple[FailedCall, ...] = ()


@dataclass(frozen=True)
class Case:
    """What an adapter may know of the case it answers: the sample, its original image size, the planned sent size,
    the task (:mod:`guitest.tasks`; a live step's case carries the live task), which attempt this is (0-based;
    with --repeats each attempt is its own model call), and which variant of the question (0-based; a task
    asking several, as circular evaluation asks every rotation of the options). ``truth`` is what the task's
    judge reads: a box in original pixels for grounding."""

    sample: Sample
    original_size: tuple[int, int]
    truth: Any
    sent_size: tuple[int, int]
    task: CaseTask
    attempt: int = 0
    variant: int = 0
