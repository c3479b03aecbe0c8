"""Agent trajectories: the data model every trajectory reader produces and the judge task reads.

A trajectory is one attempt of an agent at one request: its steps in order (each with
the screenshot the agent saw before acting, and what it thought and did), the screenshot
after the last action, and optional labels (a rule-based score, a human verdict). On disk
it is the ``trajectory`` format, ``schemas/trajectory.schema.json``; in a
:class:`~guitest.sample.Sample` it travels as plain builtins (:meth:`Trajectory.to_dict`).

A screenshot is referenced by a file path or a ``data:image/...;base64,`` URI. Placeholders
(a missing file, a 1x1 image, an all-black image, an inline payload under 200 base64
characters) carry no evidence: :func:`open_screenshot` says why it refuses one.
"""

from __future__ import annotations

import base64
import binascii
import io
import os
from dataclasses import asdict, dataclass, field
from typing import Any, cast

from PIL import Image

from .images import open_image

#: the step fields shown to a judge, in this order (besides the step number)
STEP_TEXT_FIELDS = ("subtask", "observation", "thought", "plan", "action", "status", "application", "comment")
#: an inline screenshot whose base64 payload is shorter than this is a placeholder, not a screen
MIN_PAYLOAD_CHARS = 200
#: what an agent's last action is when it declares the task impossible (the WAA/OSWorld convention)
FAIL = "FAIL"
LABEL_VALUES = ("yes", "no")


@dataclass(frozen=True)
class Step:
    """One step: what the agent saw (``screenshot``, before acting), thought and did. Empty text means not recorded."""

    number: int
    action: str = ""
    thought: str = ""
    observation: str = ""
    subtask: str = ""
    plan: str = ""
    status: str = ""
    application: str = ""
    comment: str = ""
    screenshot: str = ""

    def record(self) -> dict[str, Any]:
        """The step as a judge reads it: its number and the non-empty text fields, in a fixed order."""
        out: dict[str, Any] = {"step": self.number}
        out.update((name, getattr(self, name)) for name in STEP_TEXT_FIELDS if getattr(self, name))
        return out

    @property
    def is_fail(self) -> bool:
        """Whether this step declares the task infeasible: its action (or status) is exactly ``FAIL``."""
        return self.action.strip() == FAIL or self.status.strip() == FAIL


@dataclass(frozen=True)
class Labels:
    """What is known about the outcome besides the judge: a rule-based score (0..1) and a human verdict."""

    score: float | None = None
    human: str | None = None
    source: str = ""

    def complete(self, threshold: float = 1.0) -> str | None:
        """``yes``/``no`` from the human verdict when there is one, else from the score (``yes`` at or above
        ``threshold``), else None (unlabelled)."""
        if self.human in LABEL_VALUES:
            return self.human
        if self.score is None:
            return None
        return "yes" if self.score >= threshold else "no"


@dataclass(frozen=True)
class Trajectory:
    """One agent run on one request. ``infeasible`` is None when unknown (then no FAIL rule applies)."""

    id: str
    request: str
    steps: tuple[Step, ...]
    final_screenshot: str = ""
    app: str = ""
    evaluator: str = ""
    infeasible: bool | None = None
    labels: Labels = field(default_factory=Labels)

    @property
    def last_action_is_fail(self) -> bool:
        """Whether the agent ended by declaring the task infeasible."""
        return bool(self.steps) and self.steps[-1].is_fail

    def to_dict(self) -> dict[str, Any]:
        """The trajectory as plain builtins in the ``trajectory`` format (empty fields left out)."""
        out: dict[str, Any] = {"id": self.id, "request": self.request, "steps": [_compact(asdict(s)) for s in self.steps]}
        for name in ("final_screenshot", "app", "evaluator"):
            if getattr(self, name):
                out[name] = getattr(self, name)
        if self.infeasible is not None:
            out["infeasible"] = self.infeasible
        labels = _compact(asdict(self.labels))
        if labels:
            out["labels"] = labels
        return out

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> "Trajectory":
        """A trajectory from a row valid against ``schemas/trajectory.schema.json`` (steps numbered from 1 when they are not)."""
        steps = tuple(Step(number=int(s.get("number", i + 1)), **{k: str(v) for k, v in s.items() if k != "number" and v is not None}) for i, s in enumerate(row["steps"]))
        labels = row.get("labels") or {}
        return cls(
            id=str(row["id"]),
            request=row["request"],
            steps=steps,
            final_screenshot=row.get("final_screenshot") or "",
            app=row.get("app") or "",
            evaluator=row.get("evaluator") or "",
            infeasible=row.get("infeasible"),
            labels=Labels(score=labels.get("score"), human=labels.get("human"), source=labels.get("source", "")),
        )


def _compact(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v not in ("", None)}


def is_inline(ref: str) -> bool:
    """Whether a screenshot reference is an inline ``data:`` URI rather than a file path."""
    return ref.startswith("data:")


def open_screenshot(ref: str) -> tuple[Image.Image | None, str | None]:
    """The screenshot ``ref`` names, decoded, or None and why it is no evidence.

    Reasons: ``missing`` (no reference, or no such file), ``tiny_payload`` (inline base64 under
    :data:`MIN_PAYLOAD_CHARS` characters), ``unreadable`` (not an image), ``1x1``, ``black``
    (every pixel black). Never raises for bad input. The caller closes the image.
    """
    if not ref:
        return None, "missing"
    image: Image.Image
    try:
        if is_inline(ref):
            header, _, payload = ref.partition(",")
            if not header.endswith(";base64") or len(payload.strip()) < MIN_PAYLOAD_CHARS:
                return None, "tiny_payload"
            image = Image.open(io.BytesIO(base64.b64decode(payload, validate=False)))
        else:
            if not os.path.isfile(ref):
                return None, "missing"
            image = open_image(ref)
        image.load()
    except (OSError, ValueError, binascii.Error, Image.DecompressionBombError):
        return None, "unreadable"
    problem = placeholder_reason(image)
    if problem is not None:
        image.close()
        return None, problem
    return image, None


def placeholder_reason(image: Image.Image) -> str | None:
    """``1x1`` or ``black`` when a decoded image is a stand-in for a screenshot that was never taken, else None."""
    if image.size == (1, 1):
        return "1x1"
    rgb = image if image.mode == "RGB" else image.convert("RGB")
    bands = cast("tuple[tuple[int, int], ...]", rgb.getextrema())  # an RGB image has one (low, high) per band
    if all(high == 0 for _, high in bands):
        return "black"
    return None


def infeasible_rule(infeasible: bool | None, last_action_is_fail: bool) -> tuple[str, str] | None:
    """The WAA harness's verdict on a run that ended in ``FAIL``, decided without any judge.

    ``("yes", "fail_on_infeasible")`` when the task is infeasible, ``("no", "fail_on_feasible")``
    when it is feasible; None when the run did not end in FAIL or the task's feasibility is unknown.
    """
    if not last_action_is_fail or infeasible is None:
        return None
    return ("yes", "fail_on_infeasible") if infeasible else ("no", "fail_on_feasible")
