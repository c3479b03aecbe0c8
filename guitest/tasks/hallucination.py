"""Hallucination (GUI-HalluBench): does the model point at a look-alike, or invent an element that is not there?

Two kinds of sample (``Sample.data["kind"]``):

- ``confusion``: the target has a look-alike distractor on screen. A hit is a point inside
  the target box (Localization Accuracy, LA); a point inside the distractor box is counted
  separately (``in_distractor``), whatever the verdict.
- ``fabrication``: the instruction names an element that is absent. A hit is a refusal
  ("the element does not exist" and its variants, English or Chinese); any coordinate is
  a miss (Rejection Rate, RR).

Points are read and mapped exactly as in grounding (:func:`guitest.tasks.grounding.judge`).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence
from ..verdict import CaseResult

from ..geometry import Box, center, clip, contains, is_proper
from ..exchange import Case, Prompt
from ..answers.region import is_refusal
from ..profiles import Profile
from ..sample import Sample
from ..verdict import ERROR, HIT, REFUSED, UNPARSED
from . import Task, grounding

CONFUSION, FABRICATION = "confusion", "fabrication"
KINDS = (CONFUSION, FABRICATION)

ORACLE_REFUSAL = "The element does not exist on this screen."


class Hallucination(Task):
    """Confusion (LA, distractor hits) and fabrication (RR) cases of GUI-HalluBench."""

    name = "hallucination"

    def truth(self, sample: Sample, size: tuple[int, int]) -> tuple[Any, list[str], str | None]:
        kind = sample.data.get("kind")
        if kind not in KINDS:
            return None, [], f"the sample's kind is {kind!r}; expected one of {', '.join(KINDS)}"
        out: dict[str, Any] = {"kind": kind, "target": None, "distractor": None}
        notes: list[str] = []
        for name in ("target", "distractor"):
            raw = sample.data.get(name)
            if raw is None:
                continue
            box, clipped = clip(tuple(raw), size)
            if not is_proper(box):
                if name == "target":
                    return None, [], f"target box {list(raw)} lies outside the {size[0]}x{size[1]} image"
                notes.append("distractor_outside_image")
                continue
            if clipped:
                notes.append("bbox_clipped" if name == "target" else "distractor_clipped")
            out[name] = [round(v, 2) for v in box]
        if kind == CONFUSION and out["target"] is None:
            return None, notes, "a confusion sample needs a target box"
        return out, notes, None

    def build_prompt(self, profile: Profile, case: Case, template: str | None) -> Prompt:
        return grounding.fill_prompt(profile, case, template or profile.prompt)

    def judge(self, text: str, finish_reason: str | None, case: Case, profile: Profile, sent_size: tuple[int, int]) -> tuple[str, dict[str, Any] | None]:
        truth = case.truth
        fabrication = truth["kind"] == FABRICATION
        target: Box = tuple(truth["target"]) if truth["target"] else (0.0, 0.0, 0.0, 0.0)
        verdict, prediction = grounding.judge(text, finish_reason, target, profile, sent_size, case.original_size, fabrication)
        if verdict == UNPARSED and is_refusal(text):
            verdict = HIT if fabrication else REFUSED
        if prediction is not None:
            pixel = tuple(prediction["pixel"])
            prediction["kind"] = truth["kind"]
            prediction["in_target"] = bool(truth["target"]) and contains(tuple(truth["target"]), pixel)
            prediction["in_distractor"] = bool(truth["distractor"]) and contains(tuple(truth["distractor"]), pixel)
        return verdict, prediction

    def oracle_text(self, case: Case, profile: Profile) -> str | None:
        if case.truth["kind"] == FABRICATION:
            return ORACLE_REFUSAL
        return grounding.point_text(center(tuple(case.truth["target"])), case, profile)

    rechecks = True

    def recheck(self, row: Mapping[str, Any]) -> str | None:
        """As grounding's (:func:`guitest.tasks.grounding.recheck_point`) against the target box, the row's truth saying
        whether the sample expects a refusal (a fabrication)."""
        truth = row.get("truth")
        if row.get("verdict") == ERROR:
            return None
        if not isinstance(truth, dict) or truth.get("kind") not in KINDS:
            return f"verdict {row.get('verdict')}, but its truth is not a GUI-HalluBench sample's ({{kind: {' or '.join(KINDS)}, target, distractor}})"
        return grounding.recheck_point(row, grounding.as_box(truth.get("target")), expect_refusal=truth["kind"] == FABRICATION)

    def summarize(self, cases: list[CaseResult]) -> dict[str, Any] | None:
        return summarize_hallucination(cases)

    def summary_lines(self, metrics: dict[str, Any]) -> list[str]:
        return hallucination_lines(metrics)


def _cell(cases: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Counts of one kind's cases (errors excluded): hits, pointed-at-distractor, refused, unparsed, and the rate of hits."""
    n = len(cases)
    hits = sum(c["verdict"] == HIT for c in cases)
    distractor = sum(bool((c.get("prediction") or {}).get("in_distractor")) for c in cases)
    pointed = sum(c.get("prediction") is not None for c in cases)
    return {
        "samples": n,
        "hits": hits,
        "rate": hits / n if n else None,
        "in_distractor": distractor,
        "distractor_rate": distractor / n if n else None,
        "pointed": pointed,
        "refused": sum(c["verdict"] == REFUSED for c in cases),
        "unparsed": sum(c["verdict"] == UNPARSED for c in cases),
    }


def _kinds(cases: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {kind: _cell([c for c in cases if (c.get("truth") or {}).get("kind") == kind]) for kind in KINDS}


def summarize_hallucination(cases: list[CaseResult]) -> dict[str, Any]:
    """Localization Accuracy (confusion hits), distractor hits, Rejection Rate (fabrication hits), overall and per language."""
    scored = [c for c in sorted(cases, key=lambda c: c["id"]) if c.get("verdict") != ERROR and isinstance(c.get("truth"), dict)]
    languages = sorted({str(lang) for c in scored if (lang := (c.get("tags") or {}).get("language")) is not None})
    return {
        "overall": _kinds(scored),
        "by_language": {lang: _kinds([c for c in scored if (c.get("tags") or {}).get("language") == lang]) for lang in languages},
    }


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _kind_line(label: str, kinds: dict[str, Any]) -> str:
    c, f = kinds[CONFUSION], kinds[FABRICATION]
    return (
        f"{label}: Localization Accuracy {_pct(c['rate'])} ({c['hits']}/{c['samples']}), on the distractor {_pct(c['distractor_rate'])} ({c['in_distractor']})"
        f"; Rejection Rate {_pct(f['rate'])} ({f['hits']}/{f['samples']}), pointed anyway {f['pointed']}"
    )


def hallucination_lines(metrics: dict[str, Any]) -> list[str]:
    """LA, distractor hits and RR as text lines: overall, then one line per language."""
    lines = ["hallucination (GUI-HalluBench): confusion -> Localization Accuracy, fabrication -> Rejection Rate"]
    lines.append(_kind_line("  overall", metrics["overall"]))
    for lang, kinds in metrics["by_language"].items():
        lines.append(_kind_line(f"  language {lang}", kinds))
    return lines


TASK = Hallucination
