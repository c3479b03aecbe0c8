"""Multiple choice about a screenshot (MMBench-GUI L1): the model names one of the lettered options.

A sample's ``data`` holds ``question``, ``options`` (letter -> text, A.. as many as the
row has, as published), ``answer`` (a letter) and ``question_id``.

Settings (``schemas/tasks/choice.schema.json``):

- ``option_weighted``: also report MMBench-GUI's option-weighted score: a correct answer on an
  n-option question counts (n-1)/n, renormalised per platform x difficulty cell by the cell's
  total weight (so an all-correct cell scores 1); every aggregate above a cell is the
  sample-weighted mean of its cells, as MMBench-GUI computes its level scores.
- ``circular``: circular evaluation. A case asks its question once per rotation of the
  options (:meth:`Choice.variants`: as many rotations as it has options, each its own model
  call; rotation 0 shows them as published, see :func:`rotate`), and it is a hit only when
  every rotation is answered right (:meth:`guitest.tasks.Task.combine`). The table, headline
  and gate therefore count questions; ``task_metrics.circular`` adds the share of rotations
  answered right, which beside the case accuracy shows how much the answers depend on where
  the options stand.

The case's ``truth`` holds the published answer letter and the option count.
"""

from __future__ import annotations

from fractions import Fraction
from ..verdict import CaseResult
from typing import Any, Iterable, Mapping

from ..answers.choices import read_choice
from ..reporting.tallies import group_key
from ..exchange import Case, Prompt
from ..profiles import Profile
from ..reporting.report import pct
from ..sample import Sample
from ..verdict import ERROR, HIT, MISS, TRUNCATED, UNPARSED
from . import Task

SYSTEM = "You are a GUI agent. You are given a screenshot of an application, a question and corresponding options. You need to choose one option as your answer for the question."
PROMPT = (
    "Question: {question}\n"
    "Options:\n{options}\n"
    "Please select the correct answer from the options above.\n"
    "End your reply with a final line of the form: Answer: X, where X is the letter of your choice."
)
#: the cells of the option-weighted score and of the rotation accuracy (tags; a case without them falls in the cell "all")
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
        """The published answer letter and the option count; an error when the answer is not one of the options."""
        options, answer = sample.data.get("options") or {}, sample.data.get("answer")
        if answer not in options:
            return None, [], f"answer {answer!r} is not one of the options {sorted(options)}"
        return {"answer": answer, "n_options": len(options)}, [], None

    def variants(self, case: Case) -> int:
        """One per rotation of the options with the ``circular`` setting, else 1."""
        return len(case.sample.data["options"]) if self.settings["circular"] else 1

    def build_prompt(self, profile: Profile, case: Case, template: str | None) -> Prompt:
        """MMBench-GUI's system prompt; the question and the options as rotated for ``case.variant``."""
        options, _ = asked(case)
        user = (template or PROMPT).replace("{options}", options_text(options))
        user = user.replace("{question}", case.sample.data["question"]).replace("{instruction}", case.sample.instruction)
        return Prompt(user=user, system=SYSTEM)

    def judge(self, text: str, finish_reason: str | None, case: Case, profile: Profile, sent_size: tuple[int, int]) -> tuple[str, dict[str, Any] | None]:
        """A hit when the reply names the letter the right text stands under in the options shown (``case.variant``'s rotation)."""
        if finish_reason == "length":
            return TRUNCATED, None
        options, answer = asked(case)
        choice = read_choice(text, options)
        if choice is None:
            return UNPARSED, None
        prediction: dict[str, Any] = {"choice": choice.letter, "via": choice.via}
        if choice.letter not in options:
            prediction["not_an_option"] = True
        return (HIT if choice.letter == answer else MISS), prediction

    def oracle_text(self, case: Case, profile: Profile) -> str | None:
        """The right letter of the options as ``case.variant`` shows them."""
        return f"Answer: {asked(case)[1]}"

    def summarize(self, cases: list[CaseResult]) -> dict[str, Any] | None:
        """The option-weighted score and the rotation accuracy, as the settings ask, over the cases not in error."""
        scored = [c for c in cases if c["verdict"] != ERROR and isinstance(c.get("truth"), dict)]
        out: dict[str, Any] = {}
        if self.settings["option_weighted"]:
            out["option_weighted"] = option_weighted(scored)
        if self.settings["circular"]:
            out["circular"] = rotation_accuracy(scored)
        return out or None

    def summary_lines(self, metrics: dict[str, Any]) -> list[str]:
        """One line per score, then its breakdowns indented."""
        lines = []
        weighted = metrics.get("option_weighted")
        if weighted:
            lines.append(f"option-weighted score (a right answer of n options counts (n-1)/n, renormalised per platform x difficulty): {pct(weighted['overall'])}%")
            lines.append("  by difficulty: " + _join(weighted["by"]["difficulty"]))
            lines.append("  by platform/difficulty: " + _join(weighted["by"]["platform/difficulty"]))
        circ = metrics.get("circular")
        if circ:
            lines.append(
                f"circular evaluation (a question is right only if every rotation of its options is): {circ['questions']} question(s); "
                f"single rotations answered right: {pct(circ['rotation_accuracy'])}% of {circ['rotations']}"
            )
            for by, label in (("platform/difficulty", "platform/difficulty"), ("rotation", "rotation (0 = as published)")):
                lines.append(f"  by {label}: " + _join({k: v["rotation_accuracy"] for k, v in circ["by"][by].items()}))
        return lines


def asked(case: Case) -> tuple[dict[str, str], str]:
    """The options as ``case`` shows them (rotated ``case.variant`` places; 0 = as published) and the right letter among them."""
    return rotate(case.sample.data["options"], case.truth["answer"], case.variant)


def _join(values: dict[str, float | None]) -> str:
    return ", ".join(f"{k} {pct(v)}%" for k, v in values.items()) or "-"


def _cell(case: Mapping[str, Any], tags: Iterable[str] = CELL) -> str:
    return group_key({"tags": {t: case["tags"].get(t, "all") for t in tags}}, tuple(tags)) or "all"


def _hit_share(case: Mapping[str, Any]) -> Fraction:
    """A case's share of hits: 1 or 0, or with --repeats the share of its scored attempts that hit (avg@k)."""
    attempts = [a["verdict"] for a in case.get("attempts") or [] if a["verdict"] != ERROR]
    if attempts:
        return Fraction(sum(v == HIT for v in attempts), len(attempts))
    return Fraction(int(case["verdict"] == HIT))


def _round(value: Fraction | None) -> float | None:
    return None if value is None else round(float(value), 6)


def option_weighted(cases: list[CaseResult]) -> dict[str, Any]:
    """MMBench-GUI's option-weighted score: per platform x difficulty cell sum(hit * w) / sum(w) with w = (n-1)/n;
    per difficulty and overall the sample-weighted mean of the cells' scores. Exact fractions, any order of cases."""
    sizes: dict[str, int] = {}
    scores: dict[str, Fraction] = {}
    for key in sorted({_cell(c) for c in cases}):
        members = [c for c in cases if _cell(c) == key]
        weights = [Fraction(c["truth"]["n_options"] - 1, c["truth"]["n_options"]) for c in members]
        total = sum(weights, Fraction(0))
        scores[key] = sum((w * _hit_share(c) for w, c in zip(weights, members, strict=True)), Fraction(0)) / total if total else Fraction(0)
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


def _rotations(case: Mapping[str, Any]) -> list[tuple[int, str]]:
    """``(rotation, verdict)`` of every rotation a case asked, over its attempts (an errored attempt left out)."""
    out: list[tuple[int, str]] = []
    for attempt in case.get("attempts") or [case]:
        if attempt["verdict"] == ERROR:
            continue
        variants = (attempt.get("prediction") or {}).get("variants")  # absent when only one rotation was asked
        out.extend(enumerate([v["verdict"] for v in variants] if variants else [attempt["verdict"]]))
    return out


def _share(verdicts: list[str]) -> dict[str, Any]:
    right = verdicts.count(HIT)
    return {"rotations": len(verdicts), "right": right, "rotation_accuracy": round(right / len(verdicts), 6) if verdicts else None}


def rotation_accuracy(cases: list[CaseResult]) -> dict[str, Any]:
    """Over scored circular cases: the share of single rotations answered right, overall, per platform x difficulty
    and per rotation (0 = the options as published, which a run without circular evaluation asks alone).

    The cases' own verdicts are the circular result (a hit only when every rotation is); a
    rotation accuracy well above the case accuracy means answers that change when the options move.
    """
    overall: list[str] = []
    by_cell: dict[str, list[str]] = {}
    by_rotation: dict[int, list[str]] = {}
    for case in cases:
        for rotation, verdict in _rotations(case):
            overall.append(verdict)
            by_cell.setdefault(_cell(case), []).append(verdict)
            by_rotation.setdefault(rotation, []).append(verdict)
    return {
        "what": "share of single rotations answered right; the case verdicts are the circular result (right only if every rotation is)",
        "questions": len(cases),
        **_share(overall),
        "by": {
            "platform/difficulty": {k: _share(v) for k, v in sorted(by_cell.items())},
            "rotation": {str(k): _share(v) for k, v in sorted(by_rotation.items())},
        },
    }


TASK = Choice
