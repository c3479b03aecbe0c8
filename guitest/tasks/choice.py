"""Multiple choice about a screenshot (MMBench-GUI L1): the model names one of the lettered options.

A sample's ``data`` holds ``question``, ``options`` (letter -> text, A.. as many as the
row has), ``answer`` (a letter), ``question_id`` (the same for every rotation of one
question) and ``rotation`` (0 = the options as published; see :func:`rotate`).

Settings (``schemas/tasks/choice.schema.json``):

- ``option_weighted``: also report MMBench-GUI's option-weighted score: a correct answer on an
  n-option question counts (n-1)/n, renormalised per platform x difficulty cell by the cell's
  total weight (so an all-correct cell scores 1); every aggregate above a cell is the
  sample-weighted mean of its cells, as MMBench-GUI computes its level scores.
- ``circular``: circular evaluation. The reader makes one case per rotation of the options
  (as many rotations as the question has options), each its own model call; a question
  counts as right only when every one of its rotations is a hit. The plain table then counts
  rotations; the circular accuracy per platform x difficulty is in ``task_metrics``.

The case's ``truth`` carries what :meth:`Choice.summarize` needs: the answer letter, the
option count, the question id and the rotation (present for every result, errors included).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Iterable

from ..choices import read_choice
from ..metrics import group_key
from ..models.base import Case, Prompt
from ..profiles import Profile
from ..sample import Sample
from ..verdict import ERROR, HIT, MISS, TRUNCATED, UNPARSED
from . import Task

SYSTEM = (
    "You are a GUI agent. You are given a screenshot of an application, a question and corresponding options. "
    "You need to choose one option as your answer for the question."
)
PROMPT = (
    "Question: {question}\n"
    "Options:\n{options}\n"
    "Please select the correct answer from the options above.\n"
    "End your reply with a final line of the form: Answer: X, where X is the letter of your choice."
)
#: the cells of the weighted and circular scores (tags; a case without them falls in the cell "all")
CELL = ("platform", "difficulty")


def rotate(options: dict[str, str], answer: str, shift: int) -> tuple[dict[str, str], str]:
    """The options moved ``shift`` places (option text at letter i comes from letter i + shift), and where the answer lands.

    Rotation 0 is the identity; ``len(options)`` rotations put the right text under every letter once.
    """
    letters = sorted(options)
    n = len(letters)
    texts = [options[k] for k in letters]
    moved = {letters[i]: texts[(i + shift) % n] for i in range(n)}
    return moved, letters[(letters.index(answer) - shift) % n]


def options_text(options: dict[str, str]) -> str:
    """The options as the prompt shows them: one ``A. text`` line each, in letter order."""
    return "\n".join(f"{k}. {options[k]}" for k in sorted(options))


class Choice(Task):
    """Multiple choice: a hit is the right letter; a reply naming no option is unparsed."""

    name = "choice"
    defaults = {"option_weighted": False, "circular": False}

    def truth(self, sample: Sample, size: tuple[int, int]) -> tuple[Any, list[str], str | None]:
        data = sample.data
        options, answer = data.get("options") or {}, data.get("answer")
        if answer not in options:
            return None, [], f"answer {answer!r} is not one of the options {sorted(options)}"
        truth = {"answer": answer, "n_options": len(options), "question": data.get("question_id", sample.id), "rotation": data.get("rotation", 0)}
        return truth, [], None

    def build_prompt(self, profile: Profile, case: Case, template: str | None) -> Prompt:
        data = case.sample.data
        user = (template or PROMPT).replace("{options}", options_text(data["options"]))
        user = user.replace("{question}", data["question"]).replace("{instruction}", case.sample.instruction)
        return Prompt(user=user, system=SYSTEM)

    def judge(self, text: str, finish_reason: str | None, case: Case, profile: Profile, sent_size: tuple[int, int]) -> tuple[str, dict[str, Any] | None]:
        if finish_reason == "length":
            return TRUNCATED, None
        options = case.sample.data["options"]
        choice = read_choice(text, options)
        if choice is None:
            return UNPARSED, None
        prediction: dict[str, Any] = {"choice": choice.letter, "via": choice.via}
        if choice.letter not in options:
            prediction["not_an_option"] = True
        return (HIT if choice.letter == case.truth["answer"] else MISS), prediction

    def oracle_text(self, case: Case, profile: Profile) -> str | None:
        return f"Answer: {case.truth['answer']}"

    def summarize(self, cases: list[dict[str, Any]]) -> dict[str, Any] | None:
        scored = [c for c in cases if c["verdict"] != ERROR and isinstance(c.get("truth"), dict)]
        out: dict[str, Any] = {}
        if self.settings["option_weighted"]:
            out["option_weighted"] = option_weighted(scored)
        if self.settings["circular"]:
            out["circular"] = circular(cases)
        return out or None

    def summary_lines(self, metrics: dict[str, Any]) -> list[str]:
        lines = []
        weighted = metrics.get("option_weighted")
        if weighted:
            lines.append(f"option-weighted score (a right answer of n options counts (n-1)/n, renormalised per platform x difficulty): {_pct(weighted['overall'])}%")
            lines.append("  by difficulty: " + _join(weighted["by"]["difficulty"]))
            lines.append("  by platform/difficulty: " + _join(weighted["by"]["platform/difficulty"]))
        circ = metrics.get("circular")
        if circ:
            lines.append(
                f"circular accuracy (a question is right only if all its rotations are): {_pct(circ['accuracy'])}% "
                f"of {circ['questions']} complete question(s), {circ['hit']} right"
                + (f"; {circ['incomplete']} question(s) left out: a rotation errored or was not run" if circ["incomplete"] else "")
            )
            lines.append("  by platform/difficulty: " + _join({k: v["accuracy"] for k, v in circ["by"]["platform/difficulty"].items()}))
        return lines


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _join(values: dict[str, float | None]) -> str:
    return ", ".join(f"{k} {_pct(v)}%" for k, v in values.items()) or "-"


def _cell(case: dict[str, Any], tags: Iterable[str] = CELL) -> str:
    return group_key({"tags": {t: case["tags"].get(t, "all") for t in tags}}, tuple(tags)) or "all"


def _hit_share(case: dict[str, Any]) -> Fraction:
    """A case's share of hits: 1 or 0, or with --repeats the share of its scored attempts that hit (avg@k)."""
    attempts = [a["verdict"] for a in case.get("attempts") or [] if a["verdict"] != ERROR]
    if attempts:
        return Fraction(sum(v == HIT for v in attempts), len(attempts))
    return Fraction(int(case["verdict"] == HIT))


def _round(value: Fraction | None) -> float | None:
    return None if value is None else round(float(value), 6)


def option_weighted(cases: list[dict[str, Any]]) -> dict[str, Any]:
    """MMBench-GUI's option-weighted score: per platform x difficulty cell sum(hit * w) / sum(w) with w = (n-1)/n;
    per difficulty and overall the sample-weighted mean of the cells' scores. Exact fractions, any order of cases."""
    sizes: dict[str, int] = {}
    scores: dict[str, Fraction] = {}
    for key in sorted({_cell(c) for c in cases}):
        members = [c for c in cases if _cell(c) == key]
        weights = [Fraction(c["truth"]["n_options"] - 1, c["truth"]["n_options"]) for c in members]
        total = sum(weights, Fraction(0))
        scores[key] = sum((w * _hit_share(c) for w, c in zip(weights, members)), Fraction(0)) / total if total else Fraction(0)
        sizes[key] = len(members)

    def mean_of(keys: list[str]) -> Fraction | None:
        n = sum(sizes[k] for k in keys)
        return sum((scores[k] * sizes[k] for k in keys), Fraction(0)) / n if n else None

    by_difficulty: dict[str, list[str]] = {}
    for key in scores:
        by_difficulty.setdefault(key.rsplit("/", 1)[-1], []).append(key)
    return {
        "what": "per platform x difficulty: sum(hit x (n-1)/n) / sum((n-1)/n); above a cell: the sample-weighted mean of its cells (MMBench-GUI's level score)",
        "overall": _round(mean_of(list(scores))),
        "by": {
            "difficulty": {d: _round(mean_of(keys)) for d, keys in sorted(by_difficulty.items())},
            "platform/difficulty": {k: _round(v) for k, v in scores.items()},
        },
    }


def circular(cases: list[dict[str, Any]]) -> dict[str, Any]:
    """Circular evaluation over the rotations of each question: right only when every rotation is a hit.

    A question with an errored rotation, or with fewer rotations than options among the
    results (a ``-k`` subset, a crashed worker), is left out and counted as incomplete.
    """
    questions: dict[str, list[dict[str, Any]]] = {}
    for case in cases:
        truth = case.get("truth")
        if isinstance(truth, dict) and "question" in truth:
            questions.setdefault(truth["question"], []).append(case)
    complete: dict[str, bool] = {}
    cell_of: dict[str, str] = {}
    for qid, members in sorted(questions.items()):
        rotations = {m["truth"]["rotation"] for m in members}
        if any(m["verdict"] == ERROR for m in members) or len(rotations) < members[0]["truth"]["n_options"]:
            continue
        complete[qid] = all(m["verdict"] == HIT for m in members)
        cell_of[qid] = _cell(members[0])
    by_cell: dict[str, dict[str, Any]] = {}
    for key in sorted(set(cell_of.values())):
        right = [complete[q] for q in complete if cell_of[q] == key]
        by_cell[key] = {"questions": len(right), "hit": sum(right), "accuracy": round(sum(right) / len(right), 6)}
    n = len(complete)
    hits = sum(complete.values())
    return {
        "what": "a question is right only if every rotation of its options was answered right (one model call per rotation)",
        "questions": n,
        "hit": hits,
        "accuracy": round(hits / n, 6) if n else None,
        "incomplete": len(questions) - n,
        "by": {"platform/difficulty": by_cell},
        "rotations_per_question": "as many as the question has options",
    }


TASK = Choice
