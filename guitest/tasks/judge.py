"""Trajectory judging: the model under test reads an agent's trajectory and says whether the request was done.

A case is one trajectory (:mod:`guitest.trajectory`, read by :mod:`guitest.formats.trajectory_logs`).
The prompt (guitest's own, :data:`SYSTEM`) asks for the request's sub-goals, a yes/no/unsure
evaluation of each, and ``complete``: yes/no/unsure, as one JSON object
(``schemas/judge_reply.schema.json``). A reply that is not that object is asked once more,
without images (:meth:`Judge.repair_prompt`); if the answer still is not, the case is ``unparsed``.

Screenshots (settings ``screenshots``, ``max_step_images``): ``all`` sends every step's
screenshot followed by that step's record, then the final screenshot; ``head_tail`` sends the
first and the final screenshot and the whole trajectory as text. Placeholders (missing, 1x1,
all black, an inline payload under 200 base64 characters) are dropped; at most
``max_step_images`` step screenshots are sent (the first and the most recent ones) plus the
final one; with none left the judge is told to judge from the text alone. The prompt says
exactly which screenshots it holds.

Verdicts: a labelled trajectory (a human verdict, or a rule score at or above
``label_threshold``) scores the judge: hit when ``complete`` equals the label. An unlabelled one
scores the agent: hit when the judge says complete. ``unsure`` is its own outcome in both. A run
whose last action is ``FAIL`` on a task of known feasibility is decided by the WAA rule
(:func:`guitest.trajectory.infeasible_rule`), not by the judge, and marked ``decided_by: rule``.

Task metrics (:meth:`Judge.summarize`): the judged success rate overall and per app; with
labels, agreement, precision and recall of complete = yes, Cohen's kappa and the unsure rate,
overall and per app.
"""

from __future__ import annotations

import json
from ..verdict import CaseResult
import re
from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .. import schema
from ..reporting.agreement import binary_confusion, cohen_kappa, precision, rate, recall
from ..errors import SuiteError
from ..reporting.tallies import wilson
from ..exchange import Case, Prompt, SentImage
from ..models.base import Blind, Model
from ..answers.region import strip_think
from ..profiles import Profile
from ..reporting.report import align_table, pct
from ..sample import Sample
from ..trajectory import Labels, Step, Trajectory, infeasible_rule, open_screenshot
from ..verdict import ERROR, HIT, MISS, TRUNCATED, UNPARSED, UNSURE
from . import Task

if TYPE_CHECKING:
    from PIL import Image

SYSTEM = """You are checking the work of a computer-use agent. A user gave the agent a request; the agent operated a computer to carry it out and logged each step (what it saw, what it thought, what it did). Your job is to decide whether the request was actually fulfilled.

Work like this:
1. Split the request into the sub-goals that must all hold for it to be fulfilled (for example: the right document is open, the value was changed, the change was saved).
2. For each sub-goal decide from the evidence: "yes" when the evidence shows it achieved, "no" when the evidence shows it was not achieved or was undone later, "unsure" when the evidence does not settle it.
3. The request is complete ("yes") only when every sub-goal is "yes"; "no" when any sub-goal is "no"; otherwise "unsure".

Screens show what happened; an agent's own words only show what it believes. When they disagree, believe the screens. If the request cannot be carried out at all, the agent fulfilled it only by stopping and saying so.

Reply with exactly one JSON object and nothing else:
{"reason": "<what the evidence shows, in a few sentences>", "sub_scores": [{"name": "<sub-goal>", "evaluation": "yes" | "no" | "unsure"}], "complete": "yes" | "no" | "unsure"}"""

CLOSING = 'Now judge the request. Reply with the JSON object only: {"reason": ..., "sub_scores": [{"name": ..., "evaluation": ...}], "complete": ...}.'

REPAIR = """Your previous answer to the request below could not be read: {problem}.

The request: {request}

Your previous answer:
<<<
{reply}
>>>

Give the same judgement again as exactly one JSON object and nothing else:
{{"reason": "...", "sub_scores": [{{"name": "...", "evaluation": "yes" | "no" | "unsure"}}], "complete": "yes" | "no" | "unsure"}}"""

DROP_WORDS = {
    "missing": "missing",
    "tiny_payload": "an empty placeholder",
    "unreadable": "not a readable image",
    "1x1": "a 1x1 placeholder",
    "black": "all black",
    "size": "an image of unusable proportions",
}
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_COMPLETE = {"yes": HIT, "no": MISS, "unsure": UNSURE}


class Judge(Task):
    """The model under test judges whether an agent's trajectory fulfilled its request."""

    name = "judge"
    defaults: dict[str, Any] = {
        "screenshots": "all",
        "max_step_images": 40,
        "infeasible_rule": True,
        "evaluate": "auto",
        "label_threshold": 1.0,
        "repair": True,
        "waa_tasks": None,
    }

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        super().__init__(settings)
        # case id -> what inputs() sent (images, drops, notes), for judge() to record in the prediction;
        # both run in the worker that runs the case, and a case id is unique within a suite
        self._sent: dict[str, dict[str, Any]] = {}

    # -- the case ---------------------------------------------------------------------------------

    def truth(self, sample: Sample, size: tuple[int, int]) -> tuple[Any, list[str], str | None]:
        """The label (``yes``/``no``) of the trajectory, None when it has none."""
        row = sample.data.get("trajectory")
        if not isinstance(row, dict):
            return None, [], "the sample holds no trajectory: a judge suite reads format trajectory, ufo_log or waa_result"
        label = Labels(**row.get("labels", {})).complete(self.settings["label_threshold"])
        if label is None and self.settings["evaluate"] == "judge":
            return None, [], "the trajectory has no label, which evaluate: judge needs (result.txt, labels.json or labels in the file)"
        return label, [], None

    def decide(self, case: Case) -> tuple[str, dict[str, Any]] | None:
        """The verdict reached without the judge (the WAA FAIL rule), or None when the judge must decide."""
        if not self.settings["infeasible_rule"]:
            return None
        trajectory = _trajectory(case)
        rule = infeasible_rule(trajectory.infeasible, trajectory.last_action_is_fail)
        if rule is None:
            return None
        complete, name = rule
        return self._verdict(case, complete), {**self._facts(case), "complete": complete, "decided_by": "rule", "rule": name}

    def build_prompt(self, profile: Profile, case: Case, template: str | None) -> Prompt:
        raise SuiteError("the judge task builds its prompt with its images in inputs(); build_prompt alone cannot")

    def inputs(self, model: Model, case: Case, image: "Image.Image | None", template: str | None) -> tuple[Prompt, SentImage]:
        """The judge's prompt: the request, the steps and the usable screenshots, in the setting's order."""
        trajectory = _trajectory(case)
        view = _View(model, case, self.settings["max_step_images"])
        if self.settings["screenshots"] == "head_tail":
            parts, description = view.head_tail(trajectory)
        else:
            parts, description = view.all(trajectory)
        system = (template or SYSTEM).replace("{instruction}", trajectory.request)
        intro = f"The request given to the agent:\n{trajectory.request}\n\n{description}"
        parts = [intro, *parts, CLOSING]
        texts = [p for p in parts if isinstance(p, str)]
        self._sent[case.sample.id] = view.facts()
        prompt = Prompt(user="\n\n".join(texts), system=system, parts=tuple(parts), images=tuple(view.images))
        size = view.images[-1].size if view.images else (0, 0)
        return prompt, SentImage(image=None, size=size, data=b"", mime=None)

    def repair_prompt(self, text: str, finish_reason: str | None, prompt: Prompt, case: Case) -> Prompt | None:
        """One follow-up, text only, when the reply is not the JSON object asked for (never for a cut-off reply)."""
        if not self.settings["repair"] or finish_reason == "length":
            return None
        _, problem = parse_reply(text)
        if problem is None:
            return None
        user = REPAIR.format(problem=problem, request=case.sample.instruction, reply=text[-4000:])
        return Prompt(user=user, system=prompt.system, parts=(user,))

    def judge(self, text: str, finish_reason: str | None, case: Case, profile: Profile, sent_size: tuple[int, int]) -> tuple[str, dict[str, Any] | None]:
        """The verdict: the judge's ``complete`` read against the label, or as the agent's success (cases the FAIL rule
        settles never get here: :meth:`decide` settles them before the model is asked)."""
        sent = dict(self._sent.get(case.sample.id, {}))
        notes = sent.pop("notes", [])
        extra: dict[str, Any] = {"sent": sent} if sent else {}
        if case.attempt == 0 and notes:
            extra["notes"] = list(notes)
        facts = {**self._facts(case), "decided_by": "judge", **extra}
        if finish_reason == "length":
            return TRUNCATED, {**facts, "complete": None}
        reply, problem = parse_reply(text)
        if reply is None:
            return UNPARSED, {**facts, "complete": None, "problem": problem}
        prediction = {**facts, "complete": reply["complete"], "sub_scores": reply["sub_scores"], "reason": reply["reason"]}
        return self._verdict(case, reply["complete"]), prediction

    def oracle_text(self, case: Case, profile: Profile) -> str | None:
        """The right reply where the trajectory has a label; None (the oracle errs) where it has none."""
        if case.truth is None:
            return None
        return json.dumps({"reason": "the label says so", "sub_scores": [{"name": "the request", "evaluation": case.truth}], "complete": case.truth})

    def _mode(self, case: Case) -> str:
        return "judge" if case.truth is not None and self.settings["evaluate"] != "agent" else "agent"

    def _facts(self, case: Case) -> dict[str, Any]:
        """What summarize needs of every case, whoever decided it."""
        return {"mode": self._mode(case), "app": _trajectory(case).app or "unknown", "label": case.truth}

    def _verdict(self, case: Case, complete: str) -> str:
        if complete == "unsure":
            return UNSURE
        if self._mode(case) == "judge":
            return HIT if complete == case.truth else MISS
        return _COMPLETE[complete]

    # -- the run ----------------------------------------------------------------------------------

    def summarize(self, cases: list[CaseResult]) -> dict[str, Any] | None:
        """The judged success rate (overall, per app) and, over labelled cases the judge decided, its
        agreement with the labels (overall, per app). Integer counts: any order of cases gives the same."""
        agent: dict[str, Counter[str]] = {}
        pairs: dict[str, list[tuple[str, str | None]]] = {}
        rule: dict[str, Counter[str]] = {}
        errors = repair_asked = repaired = 0
        for case in cases:
            prediction = case.get("prediction") or {}
            if case.get("verdict") == ERROR or "decided_by" not in prediction:
                errors += 1
                continue
            if "first_response" in case:
                repair_asked += 1
                repaired += prediction.get("complete") is not None
            app = str(prediction.get("app") or case.get("tags", {}).get("app") or "unknown")
            complete, label = prediction.get("complete"), prediction.get("label")
            for key in ("(all)", app):
                tally = agent.setdefault(key, Counter())
                tally["n"] += 1
                tally[complete or "no_answer"] += 1
                if prediction["decided_by"] == "rule":
                    tally["rule"] += 1
                    if label is not None:
                        rule.setdefault(key, Counter()).update(n=1, agree=int(complete == label))
                elif label is not None:
                    pairs.setdefault(key, []).append((label, complete))
        if not agent and not errors:
            return None
        out: dict[str, Any] = {
            "agent": {app: _agent_stats(agent[app]) for app in _ordered(agent)},
            "errors": errors,
            "repair_requests": repair_asked,
            "repaired": repaired,
        }
        if pairs or rule:
            out["judge"] = {app: _judge_stats(pairs.get(app, [])) for app in _ordered(pairs)}
            out["rule_decided_with_label"] = {app: dict(rule[app]) for app in _ordered(rule)}
        return out

    def summary_lines(self, metrics: dict[str, Any]) -> list[str]:
        """The agent table (judged success per app) and, with labels, the judge table (agreement per app)."""
        lines = ["agent evaluation: judged success rate (the judge's complete = yes; decided by the FAIL rule counted in)"]
        cells = [("app", "n", "complete", "rate%", "95% CI", "not", "unsure", "no answer", "by rule")]
        for app, s in metrics["agent"].items():
            lo, hi = s["ci95"]
            cells.append((app, str(s["n"]), str(s["yes"]), pct(s["success_rate"]), f"{100 * lo:.1f}-{100 * hi:.1f}", str(s["no"]), str(s["unsure"]), str(s["no_answer"]), str(s["rule"])))
        lines += align_table(cells, left=(0,))
        if "judge" in metrics:
            lines.append("judge evaluation: the judge against the labels (cases decided by the FAIL rule left out; kappa over yes/no answers)")
            cells = [("app", "n", "agree", "agree%", "prec%", "recall%", "kappa", "unsure%", "no answer")]
            for app, s in metrics["judge"].items():
                kappa = "-" if s["kappa"] is None else f"{s['kappa']:.3f}"
                cells.append((app, str(s["n"]), str(s["agree"]), pct(s["agreement"]), pct(s["precision"]), pct(s["recall"]), kappa, pct(s["unsure_rate"]), str(s["no_answer"])))
            lines += align_table(cells, left=(0,))
        if metrics.get("repair_requests"):
            lines.append(f"repair requests (the first reply was not the JSON asked for): {metrics['repair_requests']}, readable after it: {metrics['repaired']}")
        return lines


def _ordered(table: dict[str, Any]) -> list[str]:
    """``(all)`` first, then the apps by name."""
    return sorted(table, key=lambda k: (k != "(all)", k))


def _agent_stats(t: Counter[str]) -> dict[str, Any]:
    n = t["n"]
    return {
        "n": n,
        "yes": t["yes"],
        "no": t["no"],
        "unsure": t["unsure"],
        "no_answer": t["no_answer"],
        "rule": t["rule"],
        "success_rate": rate(t["yes"], n),
        "ci95": wilson(t["yes"], n),
        "unsure_rate": rate(t["unsure"], n),
    }


def _judge_stats(pairs: list[tuple[str, str | None]]) -> dict[str, Any]:
    n = len(pairs)
    decided = [(label, judged) for label, judged in pairs if judged in ("yes", "no")]
    confusion = binary_confusion(decided)
    return {
        "n": n,
        "agree": sum(label == judged for label, judged in pairs),
        "agreement": rate(sum(label == judged for label, judged in pairs), n),
        "unsure": sum(judged == "unsure" for _, judged in pairs),
        "unsure_rate": rate(sum(judged == "unsure" for _, judged in pairs), n),
        "no_answer": sum(judged is None for _, judged in pairs),
        **confusion,
        "precision": precision(confusion),
        "recall": recall(confusion),
        "kappa": cohen_kappa(decided),
        "kappa_n": len(decided),
    }


def parse_reply(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """The judge's JSON object from a reply, valid against ``schemas/judge_reply.schema.json``, or None and
    what is wrong with it. Reasoning in ``<think>`` is skipped; a fenced block or the outermost braces are read."""
    body = strip_think(text).strip()
    fenced = _FENCE.findall(body)
    if fenced:
        body = fenced[-1].strip()
    start, end = body.find("{"), body.rfind("}")
    if start < 0:
        return None, "it holds no JSON object"
    try:
        value = json.loads(body[start : end + 1] if end > start else body[start:])
    except json.JSONDecodeError as exc:
        return None, f"it is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
    except RecursionError:
        return None, "it nests deeper than Python's JSON reader follows"
    if not isinstance(value, dict):
        return None, "it is not a JSON object"
    problems = [f"field '{f or '(top level)'}' {m}" for f, m in schema.iter_problems("judge_reply", value)]
    if problems:
        return None, "; ".join(problems[:3])
    return value, None


def _trajectory(case: Case) -> Trajectory:
    return Trajectory.from_dict(case.sample.data["trajectory"])


class _View:
    """Which screenshots of a trajectory go to the judge, opened, checked and preprocessed one at a time."""

    def __init__(self, model: Model, case: Case, max_steps: int) -> None:
        self.model = model
        self.case = case
        self.max_steps = max_steps
        self.images: list[SentImage] = []
        self.dropped: Counter[str] = Counter()
        self.why: dict[int, str] = {}  # step index -> why it has no screenshot in the prompt
        self.sent: list[int] = []  # indices of the steps whose screenshot is sent
        self.final = False
        self.steps: tuple[Step, ...] = ()

    def _take(self, ref: str) -> SentImage | str:
        """The screenshot preprocessed for sending, or why it is not sent (a placeholder)."""
        image, problem = open_screenshot(ref)
        if image is None:
            self.dropped[problem or "missing"] += 1
            return problem or "missing"
        with image:
            try:
                sized = replace(self.case, original_size=image.size, sent_size=self.model.plan_size(image.size))
            except ValueError:
                self.dropped["size"] += 1
                return "size"
            sent = self.model.preprocess(image, sized)
        if sent.data is None and not isinstance(self.model, Blind):
            raise SuiteError(f"the judge task sends several images per request, which the {type(self.model).__name__} adapter cannot encode")
        return replace(sent, image=None) if sent.data is not None else sent

    def _step_images(self, steps: tuple[Step, ...], limit: int) -> dict[int, SentImage]:
        """Up to ``limit`` usable step screenshots: the first one, then the most recent ones."""
        chosen: dict[int, SentImage] = {}
        if limit <= 0:
            self.why = {i: "over_limit" if s.screenshot else "missing" for i, s in enumerate(steps)}
            return chosen
        first = None
        for index, step in enumerate(steps):
            got = self._take(step.screenshot) if step.screenshot else "missing"
            if isinstance(got, SentImage):
                chosen[index], first = got, index
                break
            self.why[index] = got
            if not step.screenshot:
                self.dropped["missing"] += 1
        if first is None:
            return chosen
        for index in range(len(steps) - 1, first, -1):
            if len(chosen) >= limit:
                break
            step = steps[index]
            got = self._take(step.screenshot) if step.screenshot else "missing"
            if isinstance(got, SentImage):
                chosen[index] = got
            else:
                self.why[index] = got
                if not step.screenshot:
                    self.dropped["missing"] += 1
        for index in range(first + 1, len(steps)):
            if index not in chosen and index not in self.why:
                self.why[index] = "over_limit"
        return dict(sorted(chosen.items()))

    def _add(self, image: SentImage) -> int:
        self.images.append(image)
        return len(self.images) - 1

    def all(self, trajectory: Trajectory) -> tuple[list[str | int], str]:
        """Every step's screenshot (capped) followed by its record, then the final screenshot."""
        steps = self.steps = trajectory.steps
        chosen = self._step_images(steps, self.max_steps)
        parts: list[str | int] = []
        for index, step in enumerate(steps):
            record = json.dumps(step.record(), ensure_ascii=False)
            if index in chosen:
                parts.append(self._add(chosen[index]))
                self.sent.append(index)
                parts.append(f"Step {step.number} (the screenshot above is the screen before this step's action): {record}")
            else:
                parts.append(f"Step {step.number} (no screenshot: {self._reason(index)}): {record}")
        if not steps:
            parts.append("The agent took no step.")
        parts += self._final(trajectory, fallback=False)
        return parts, self._describe("each step's screenshot comes before that step's record")

    def head_tail(self, trajectory: Trajectory) -> tuple[list[str | int], str]:
        """The first and the final screenshot, then the whole trajectory as text."""
        steps = self.steps = trajectory.steps
        chosen = self._step_images(steps, min(self.max_steps, 1))
        parts: list[str | int] = []
        for index, image in chosen.items():
            parts += [f"The first screenshot: the screen before step {steps[index].number}'s action.", self._add(image)]
            self.sent.append(index)
        parts += self._final(trajectory, fallback=True)
        lines = "\n".join(json.dumps(s.record(), ensure_ascii=False) for s in steps) or "(the agent took no step)"
        parts.append(f"The agent's steps, one JSON record per line:\n{lines}")
        return parts, self._describe("the steps follow as text")

    def _final(self, trajectory: Trajectory, fallback: bool) -> list[str | int]:
        """The final screenshot; in head_tail mode, when it is unusable, the latest usable step screenshot instead."""
        got = self._take(trajectory.final_screenshot) if trajectory.final_screenshot else "missing"
        if not trajectory.final_screenshot:
            self.dropped["missing"] += 1
        if isinstance(got, SentImage):
            self.final = True
            return ["The final screen, after the agent's last action:", self._add(got)]
        if fallback and self.max_steps > 0:
            first = self.sent[0] if self.sent else -1  # the steps up to the first sent one were all examined already
            for index in range(len(trajectory.steps) - 1, first, -1):
                step = trajectory.steps[index]
                if not step.screenshot:
                    continue
                latest = self._take(step.screenshot)
                if isinstance(latest, SentImage):
                    self.sent.append(index)
                    return [f"No usable final screenshot ({DROP_WORDS.get(got, got)}). The latest usable screenshot, the screen before step {step.number}'s action:", self._add(latest)]
        return [f"No final screenshot: it is {DROP_WORDS.get(got, got)}."]

    def _reason(self, index: int) -> str:
        why = self.why.get(index, "missing")
        if why == "over_limit":
            return f"left out, at most {self.max_steps} step screenshots are shown"
        return f"it is {DROP_WORDS.get(why, why)}"

    def _describe(self, order: str) -> str:
        """What the prompt holds, in words: how many screenshots and which, or that it holds none."""
        if not self.images:
            return (
                "No usable screenshot exists for this trajectory (each one is missing or a placeholder), so none is shown: "
                "judge from the text of the steps alone, and say unsure for any sub-goal the text cannot settle."
            )
        which = []
        if self.sent:
            which.append("the screens before steps " + _ranges(sorted({self.steps[i].number for i in self.sent})))
        if self.final:
            which.append("the final screen after the last action")
        text = f"You are shown {len(self.images)} screenshot(s): {' and '.join(which)}; {order}."
        if self.dropped:
            text += f" {sum(self.dropped.values())} screenshot(s) were left out as missing or placeholders."
        return text

    def facts(self) -> dict[str, Any]:
        """What was sent, for the prediction; ``notes`` (one per dropped screenshot, and text-only judging) for the report."""
        notes = [f"screenshot_dropped_{reason}" for reason in sorted(self.dropped) for _ in range(self.dropped[reason])]
        if not self.images:
            notes.append("judged_text_only")
        return {
            "images": len(self.images),
            "step_images": sorted(self.steps[i].number for i in self.sent),
            "final_image": self.final,
            "dropped": dict(sorted(self.dropped.items())),
            "text_only": not self.images,
            "notes": notes,
        }


def _ranges(numbers: list[int]) -> str:
    """``1-3, 7, 9-10`` for [1, 2, 3, 7, 9, 10]."""
    out: list[str] = []
    start = prev = numbers[0]
    for n in numbers[1:] + [None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ", ".join(out)


TASK = Judge
