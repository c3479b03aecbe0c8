"""Element parsing: the model lists every UI element it sees; its list is matched against the truth.

The prompt asks for a JSON list of ``{"type", "description", "box": [x1, y1, x2, y2]}`` with
the box in the profile's coordinate space; boxes are mapped back to pixels of the original
image and matched as GUI-HalluBench does (:mod:`guitest.tasks.matching`). A case is a hit when its
F1 reaches the suite's ``case_f1``; the suite's headline is the micro precision, recall and
F1 over all samples and the mean description similarity over all matched pairs.

A sample keeps its truth in ``Sample.data``: ``elements`` (``type``, ``description``, ``box``)
and ``space``, the unit of those boxes (``pixel``, or ``grid999`` for ScreenAI's 0-999 grid,
which needs the image size and is converted when the case runs).

Settings (``schemas/tasks/parsing.schema.json``): ``iou_threshold`` (0.5), ``case_f1`` (0.5),
``similarity`` (``difflib``, or ``embedding`` with the optional extra installed).
"""

from __future__ import annotations

import json
from ..verdict import CaseResult
import math
from typing import Any, Mapping

from . import matching
from ..answers.elements import find_list
from ..errors import SuiteError
from ..geometry import clip, from_original_pixels, guess_space, is_proper, to_original_pixels
from ..exchange import Case, Prompt
from ..profiles import Profile
from ..sample import Sample
from ..verdict import ERROR, HIT, MISS, TRUNCATED, UNPARSED
from . import Task

SPACE_WORDS = {
    "normalized": "as fractions of the image width and height, each between 0 and 1, where (0, 0) is the top-left corner and (1, 1) the bottom-right corner",
    "grid1000": "on a 0-1000 grid, where (0, 0) is the top-left corner and (1000, 1000) the bottom-right corner of the image",
    "pixel_sent": "in pixels of this {width}x{height} image, where (0, 0) is the top-left corner",
    "pixel_original": "in pixels of the original {original_width}x{original_height} screenshot, where (0, 0) is the top-left corner",
}

PROMPT = (
    "You are given a {width}x{height} screenshot of a graphical user interface.\n"
    "List every UI element you can see: each icon, text, button, image and input field.\n"
    "For each element give its type (icon, text, button, image or input), a short description "
    "(its text, or what it shows or does), and its bounding box [x1, y1, x2, y2] {space}.\n"
    'Answer with a JSON list only, like: [{{"type": "button", "description": "Sign in", "box": [x1, y1, x2, y2]}}, ...]'
)

BOX_KEYS = ("box", "bbox", "bbox_2d", "coordinates", "bounding_box", "position")
DESCRIPTION_KEYS = ("description", "text", "label", "content", "name")


class Parsing(Task):
    """Element parsing scored by greedy IoU matching (GUI-HalluBench)."""

    name = "parsing"
    defaults = {"iou_threshold": matching.DEFAULT_IOU, "case_f1": 0.5, "similarity": "difflib"}

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        super().__init__(settings)
        if self.settings["similarity"] == "embedding" and not matching.embedding_available():
            raise SuiteError(f"task parsing, setting 'similarity: embedding' needs the optional sentence-embedding model: {matching.EMBEDDING_INSTALL}")

    def truth(self, sample: Sample, size: tuple[int, int]) -> tuple[Any, list[str], str | None]:
        if "elements" not in sample.data:
            return None, [], "the sample has no element list (data.elements)"
        return truth_elements(sample.data["elements"], sample.data.get("space", "pixel"), size)

    def build_prompt(self, profile: Profile, case: Case, template: str | None) -> Prompt:
        space = "normalized" if profile.space == "auto" else profile.space
        text = template or PROMPT.replace("{space}", SPACE_WORDS[space])
        width, height = case.sent_size
        ow, oh = case.original_size
        for key, value in (("{width}", width), ("{height}", height), ("{original_width}", ow), ("{original_height}", oh), ("{instruction}", case.sample.instruction)):
            text = text.replace(key, str(value))
        return Prompt(user=text)

    def judge(self, text: str, finish_reason: str | None, case: Case, profile: Profile, sent_size: tuple[int, int]) -> tuple[str, dict[str, Any] | None]:
        cut = finish_reason == "length"
        found = find_list(text)
        if found is None:
            return (TRUNCATED if cut else UNPARSED), None
        predicted, space, notes = read_elements(found.items, profile.space, sent_size, case.original_size)
        skipped = len(found.items) - len(predicted)
        notes = found.notes + notes
        if cut:
            if not found.items:
                return TRUNCATED, None
            notes.append("reply_truncated")
        elif found.truncated:
            notes.append("list_not_closed")
        scores = matching.score(predicted, case.truth, self.settings["iou_threshold"], self.settings["similarity"])
        prediction: dict[str, Any] = {"n_pred": len(predicted), "n_true": len(case.truth), **scores, "space": space, "similarity_method": self.settings["similarity"]}
        if self.settings["similarity"] != "difflib":
            pairs = scores["pairs"]
            prediction["difflib_sum"] = math.fsum(matching.difflib_similarity(predicted[i]["description"], case.truth[j]["description"]) for i, j, _ in pairs)
        if skipped or found.unreadable:
            prediction["skipped_items"] = skipped + found.unreadable  # not objects, no readable box, or not JSON
        if notes:
            prediction["notes"] = notes
        return (HIT if scores["f1"] >= self.settings["case_f1"] else MISS), prediction

    def oracle_text(self, case: Case, profile: Profile) -> str | None:
        space = "normalized" if profile.space == "auto" else profile.space
        out = []
        for element in case.truth:
            x1, y1, x2, y2 = element["box"]
            a = from_original_pixels((x1, y1), space, case.sent_size, case.original_size)
            b = from_original_pixels((x2, y2), space, case.sent_size, case.original_size)
            box = [round(v, profile.decimals) for v in (*a, *b)]
            out.append({"type": element["type"], "description": element["description"], "box": box})
        return "```json\n" + json.dumps(out, ensure_ascii=False) + "\n```"

    def summarize(self, cases: list[CaseResult]) -> dict[str, Any] | None:
        return summarize_parsing(cases, self.settings)

    def summary_lines(self, metrics: dict[str, Any]) -> list[str]:
        return parsing_lines(metrics)


def truth_elements(raw: list[dict[str, Any]], unit: str, size: tuple[int, int]) -> tuple[list[dict[str, Any]], list[str], str | None]:
    """The true elements in pixels of an image of ``size``, clipped to it; elements left without area are dropped (noted)."""
    w, h = size
    scale = (w / 999, h / 999) if unit == "grid999" else (1.0, 1.0)
    out: list[dict[str, Any]] = []
    clipped_any = False
    dropped = 0
    for element in raw:
        x1, y1, x2, y2 = (float(v) for v in element["box"])
        box = (min(x1, x2) * scale[0], min(y1, y2) * scale[1], max(x1, x2) * scale[0], max(y1, y2) * scale[1])
        box, clipped = clip(box, size)
        clipped_any |= clipped
        if not is_proper(box):
            dropped += 1
            continue
        out.append({"type": str(element.get("type", "")), "description": str(element.get("description", "")), "box": [round(v, 2) for v in box]})
    notes = (["bbox_clipped"] if clipped_any else []) + (["true_elements_without_area"] if dropped else [])
    return out, notes, None


def _box(value: Any) -> tuple[float, float, float, float] | None:
    """Four finite numbers from a box value: ``[x1, y1, x2, y2]``, ``[[x1, y1], [x2, y2]]`` or ``{x1, y1, x2, y2}``; else None."""
    if isinstance(value, dict):
        value = [value.get(k) for k in ("x1", "y1", "x2", "y2")]
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, (list, tuple)) and len(v) == 2 for v in value):
        value = [*value[0], *value[1]]
    if not isinstance(value, (list, tuple)) or len(value) != 4:
        return None
    try:
        numbers = tuple(float(v) for v in value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an integer too large for a float
        return None
    if not all(math.isfinite(v) for v in numbers) or any(isinstance(v, bool) for v in value):
        return None
    return numbers  # type: ignore[return-value]


def read_elements(items: list[Any], space: str, sent_size: tuple[int, int], original_size: tuple[int, int]) -> tuple[list[dict[str, Any]], str, list[str]]:
    """Predicted elements in original pixels from a reply's list items, the space they were read in, and notes.

    Items that are not objects or have no readable box are skipped (noted). In
    the ``auto`` space one guess is made for the whole list from its largest corner (noted).
    """
    raw: list[tuple[dict[str, Any], tuple[float, float, float, float]]] = []
    skipped = 0
    for item in items:
        box = None
        if isinstance(item, dict):
            box = next((b for b in (_box(item.get(k)) for k in BOX_KEYS if k in item) if b is not None), None)
        if box is None:
            skipped += 1
            continue
        raw.append((item, box))
    notes = ["elements_without_box"] if skipped else []
    if space == "auto":
        corner = (max((max(b[0], b[2]) for _, b in raw), default=0.0), max((max(b[1], b[3]) for _, b in raw), default=0.0))
        space = guess_space(corner, sent_size)
        notes.append(f"auto_space={space}")
    out = []
    for item, (x1, y1, x2, y2) in raw:
        a = to_original_pixels((x1, y1), space, sent_size, original_size)
        b = to_original_pixels((x2, y2), space, sent_size, original_size)
        description = next((item[k] for k in DESCRIPTION_KEYS if isinstance(item.get(k), str)), "")
        out.append({"type": str(item.get("type", "")), "description": description, "box": [*a, *b]})
    return out, space, notes


def _counts(case: Mapping[str, Any]) -> tuple[int, int, int, float, float | None, dict[str, list[int]]] | None:
    """``(tp, fp, fn, sim_sum, difflib_sum, by_type)`` of one reported case; None for an error (excluded).

    A case without a scored prediction (unparsed, truncated) found nothing: all its truths are misses.
    """
    if case.get("verdict") == ERROR:
        return None
    p = case.get("prediction")
    if isinstance(p, dict) and "tp" in p:
        return p["tp"], p["fp"], p["fn"], p["sim_sum"], p.get("difflib_sum"), p["by_type"]
    truth = case.get("truth") or []
    by_type: dict[str, list[int]] = {}
    for element in truth:
        by_type.setdefault(str(element.get("type", "")), [0, 0])[1] += 1
    return 0, 0, len(truth), 0.0, None, by_type


def _group(rows: list[tuple[int, int, int, float, float | None, dict[str, list[int]]]]) -> dict[str, Any]:
    """Micro P/R/F1 and mean similarity of a group of cases' counts; with no case scored, nothing was measured (None, n/a)."""
    tp, fp, fn = sum(r[0] for r in rows), sum(r[1] for r in rows), sum(r[2] for r in rows)
    precision, recall, f1 = matching.prf(tp, fp, fn) if rows else (None, None, None)
    sim = math.fsum(r[3] for r in rows)
    out: dict[str, Any] = {"samples": len(rows), "tp": tp, "fp": fp, "fn": fn, "precision": precision, "recall": recall, "f1": f1, "similarity": sim / tp if tp else None}
    diff = [r[4] for r in rows if r[4] is not None]
    if diff:
        out["difflib_similarity"] = math.fsum(diff) / tp if tp else None
    return out


def summarize_parsing(cases: list[CaseResult], settings: dict[str, Any]) -> dict[str, Any]:
    """Micro P/R/F1 and similarity overall and per language, recall per element type; independent of case order."""
    rows: list[tuple[str | None, tuple[int, int, int, float, float | None, dict[str, list[int]]]]] = []
    for case in sorted(cases, key=lambda c: c["id"]):
        counts = _counts(case)
        if counts is not None:
            rows.append(((case.get("tags") or {}).get("language"), counts))
    by_type: dict[str, list[int]] = {}
    for _, r in rows:
        for kind, (matched, total) in r[5].items():
            cell = by_type.setdefault(kind, [0, 0])
            cell[0] += matched
            cell[1] += total
    languages = sorted({lang for lang, _ in rows if lang is not None})
    return {
        "iou_threshold": settings["iou_threshold"],
        "case_f1": settings["case_f1"],
        "similarity_method": settings["similarity"],
        "overall": _group([r for _, r in rows]),
        "by_language": {lang: _group([r for g, r in rows if g == lang]) for lang in languages},
        "by_type": {k: {"matched": m, "total": t, "recall": m / t if t else None} for k, (m, t) in sorted(by_type.items())},
    }


SIMILARITY_NAMES = {"difflib": "difflib SequenceMatcher ratio, lowercased", "embedding": "all-MiniLM-L6-v2 cosine"}


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _line(label: str, g: dict[str, Any]) -> str:
    extra = f"  (difflib {_num(g['difflib_similarity'])})" if "difflib_similarity" in g else ""
    return f"{label}: P {_num(g['precision'])}  R {_num(g['recall'])}  F1 {_num(g['f1'])}  similarity {_num(g['similarity'])}{extra}  [{g['samples']} samples, TP {g['tp']} FP {g['fp']} FN {g['fn']}]"


def parsing_lines(metrics: dict[str, Any]) -> list[str]:
    """The parsing metrics as text lines: the headline, one line per language, recall per element type."""
    method = SIMILARITY_NAMES.get(metrics["similarity_method"], metrics["similarity_method"])
    lines = [f"element parsing: greedy matching at IoU >= {metrics['iou_threshold']}, description similarity = {method}"]
    lines.append(_line("  micro overall", metrics["overall"]))
    for lang, g in metrics["by_language"].items():
        lines.append(_line(f"  language {lang}", g))
    if metrics["by_type"]:
        cells = [f"{k or '(none)'} {_num(v['recall'])} ({v['matched']}/{v['total']})" for k, v in metrics["by_type"].items()]
        lines.append("  recall by element type: " + ", ".join(cells))
    return lines


TASK = Parsing
