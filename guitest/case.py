"""The flow of one case, from sample to verdict, without pytest.

image -> truth in pixels of the image as found -> build_prompt -> preprocess ->
generate -> postprocess -> judge. Every failure of the harness or the endpoint
becomes an ``error`` result with a message; nothing here raises for bad input.
"""

from __future__ import annotations

import os
from typing import Any

from .errors import GuitestError
from .geometry import clip, is_proper
from .images import open_image
from .models.base import Case, Model
from .sample import Sample
from .tasks import grounding
from .verdict import ERROR, case_result


def run_case(sample: Sample, model: Model, prompt_template: str | None = None) -> dict[str, Any]:
    """Run one grounding case and return its result (see :func:`guitest.verdict.case_result`)."""
    notes = list(sample.notes)
    try:
        image = open_image(sample.image)
    except FileNotFoundError:
        return case_result(sample.id, ERROR, sample.tags, error=f"image file missing: {sample.image}", notes=notes)
    except OSError as exc:
        return case_result(sample.id, ERROR, sample.tags, error=f"image file unreadable: {sample.image}: {exc}", notes=notes)
    with image:
        size = image.size
        if sample.size is not None and tuple(sample.size) != size:
            notes.append("image_size_mismatch")
        truth, clipped = clip(sample.box, size)
        if clipped:
            notes.append("bbox_clipped")
        if not is_proper(truth):
            return case_result(sample.id, ERROR, sample.tags, error=f"truth box {list(sample.box)} lies outside the {size[0]}x{size[1]} image", notes=notes)
        try:
            case = Case(sample=sample, original_size=size, truth=truth, sent_size=model.plan_size(size))
            prompt = model.build_prompt(case, prompt_template)
            sent = model.preprocess(image, case)
        except OSError as exc:
            return case_result(sample.id, ERROR, sample.tags, error=f"image file unreadable: {sample.image}: {exc}", notes=notes, size=list(size))
        except Exception as exc:  # an adapter's bug must not stop the other cases
            return case_result(sample.id, ERROR, sample.tags, error=f"{type(exc).__name__}: {exc}", notes=notes, size=list(size))
    try:
        reply = model.generate(prompt, sent, case)
        text = model.postprocess(reply, case)
    except GuitestError as exc:
        return case_result(sample.id, ERROR, sample.tags, error=str(exc), notes=notes, size=list(size))
    except Exception as exc:  # an adapter's bug must not stop the other cases
        return case_result(sample.id, ERROR, sample.tags, error=f"{type(exc).__name__}: {exc}", notes=notes, size=list(size))
    verdict, prediction = grounding.judge(text, reply.finish_reason, truth, model.profile, sent.size, size, sample.expect_refusal)
    if prediction and prediction.get("space_guessed"):
        notes.append(f"auto_space={prediction['space']}")
    if prediction and prediction.get("outside_image"):
        notes.append("outside_image")
    return case_result(
        sample.id,
        verdict,
        sample.tags,
        prediction=prediction,
        response=reply.text,
        finish_reason=reply.finish_reason,
        truth=[round(v, 2) for v in truth],
        size=list(size),
        sent_size=list(sent.size),
        image=os.path.basename(sample.image),
        notes=notes,
    )
