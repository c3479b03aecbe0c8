"""The case flow's task seams, without pytest around it: variants, decide, repair."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from PIL import Image

from guitest.run.case import RunOptions, run_case
from guitest.cache import ResponseCache
from guitest.errors import ModelError
from guitest.models.base import Blind, Case, Prompt, Reply, SentImage, Settings
from guitest.profiles import Profile
from guitest.sample import Sample
from guitest.tasks import Task
from guitest.verdict import ERROR, HIT, MISS, UNPARSED


class Echo(Task):
    """A task with three variants: variant v asks 'say v'; the reply 'v' is a hit."""

    name = "echo"

    def build_prompt(self, profile: Profile, case: Case, template: str | None) -> Prompt:
        return Prompt(user=f"say {case.variant}")

    def variants(self, case: Case) -> int:
        return 3

    def judge(self, text: str, finish_reason: str | None, case: Case, profile: Profile, sent_size: tuple[int, int]) -> tuple[str, dict[str, Any] | None]:
        if not text.isdigit():
            return UNPARSED, None
        return (HIT if int(text) == case.variant else MISS), {"said": int(text)}


class Scripted(Blind):
    """Answers each prompt from a table (a missing entry is a model failure); records what it was asked."""

    cacheable = True

    def __init__(self, answers: dict[str, str]) -> None:
        super().__init__("scripted", Settings())
        self.answers = answers
        self.asked: list[str] = []

    def generate(self, prompt: Prompt, image: SentImage, case: Case) -> Reply:
        self.asked.append(prompt.user)
        if prompt.user not in self.answers:
            raise ModelError(f"no answer for {prompt.user!r}")
        return Reply(text=self.answers[prompt.user])


def sample(tmp_path: Path) -> Sample:
    path = tmp_path / "shot.png"
    Image.new("RGB", (40, 30), "white").save(path)
    return Sample(id="c1", image=str(path), instruction="say the variant", box=None, tags={"kind": "x"}, source="test")


def test_every_variant_is_asked_and_all_right_is_a_hit(tmp_path: Path) -> None:
    model = Scripted({"say 0": "0", "say 1": "1", "say 2": "2"})
    result = run_case(sample(tmp_path), model, task=Echo())
    assert model.asked == ["say 0", "say 1", "say 2"]
    assert result["verdict"] == HIT
    assert [v["verdict"] for v in result["prediction"]["variants"]] == [HIT, HIT, HIT]
    assert result["prediction"]["hits"] == 3


def test_one_wrong_variant_makes_the_case_wrong_with_that_reply_as_evidence(tmp_path: Path) -> None:
    model = Scripted({"say 0": "0", "say 1": "7", "say 2": "what?"})
    result = run_case(sample(tmp_path), model, task=Echo())
    assert result["verdict"] == MISS and result["response"] == "7"
    assert [v["verdict"] for v in result["prediction"]["variants"]] == [HIT, MISS, UNPARSED]
    assert [v["response"] for v in result["prediction"]["variants"]] == ["0", "7", "what?"]


def test_a_failed_variant_makes_the_case_an_error_to_re_run(tmp_path: Path) -> None:
    model = Scripted({"say 0": "0", "say 2": "2"})
    result = run_case(sample(tmp_path), model, task=Echo())
    assert result["verdict"] == ERROR and "no answer for 'say 1'" in result["error"]


def test_variants_are_cached_apart_and_a_rerun_asks_nothing(tmp_path: Path) -> None:
    answers = {"say 0": "0", "say 1": "1", "say 2": "0"}
    cache = ResponseCache(tmp_path / "cache", "on")
    try:
        first = run_case(sample(tmp_path), Scripted(answers), task=Echo(), options=RunOptions(cache=cache))
        again_model = Scripted({})
        again = run_case(sample(tmp_path), again_model, task=Echo(), options=RunOptions(cache=cache))
    finally:
        cache.close()
    assert again_model.asked == []
    assert again["verdict"] == first["verdict"] == MISS and again.get("cached") is True
    assert [v["response"] for v in again["prediction"]["variants"]] == ["0", "1", "0"]


class Ruled(Echo):
    def variants(self, case: Case) -> int:
        return 1

    def decide(self, case: Case) -> tuple[str, dict[str, Any]] | None:
        return (HIT, {"decided_by": "rule"}) if case.sample.tags.get("kind") == "x" else None


def test_a_decided_case_asks_nothing_and_repeats_carry_the_rule(tmp_path: Path) -> None:
    model = Scripted({})
    result = run_case(sample(tmp_path), model, task=Ruled(), options=RunOptions(repeats=3))
    assert model.asked == []
    assert result["verdict"] == HIT and result["prediction"] == {"decided_by": "rule"}
    assert [a["verdict"] for a in result["attempts"]] == [HIT, HIT, HIT]


class Repaired(Ruled):
    def decide(self, case: Case) -> None:
        return None

    def repair_prompt(self, text: str, finish_reason: str | None, prompt: Prompt, case: Case) -> Prompt | None:
        return None if text.isdigit() else Prompt(user="digits only please")


def test_an_unreadable_reply_gets_one_repair_and_both_replies_are_kept(tmp_path: Path) -> None:
    model = Scripted({"say 0": "zero", "digits only please": "0"})
    result = run_case(sample(tmp_path), model, task=Repaired())
    assert model.asked == ["say 0", "digits only please"]
    assert result["verdict"] == HIT and result["first_response"] == "zero" and result["response"] == "0"


class SlotWatcher(Scripted):
    """Records, at every stage, whether the case held the request slot."""

    def __init__(self, answers: dict[str, str], slot: "threading.BoundedSemaphore") -> None:
        super().__init__(answers)
        self.slot = slot
        self.held: dict[str, list[bool]] = {}

    def _note(self, stage: str) -> None:
        free = self.slot.acquire(blocking=False)
        if free:
            self.slot.release()
        self.held.setdefault(stage, []).append(not free)

    def preprocess(self, image: Any, case: Case) -> SentImage:
        self._note("preprocess")
        return super().preprocess(image, case)

    def generate(self, prompt: Prompt, image: SentImage, case: Case) -> Reply:
        self._note("generate")
        return super().generate(prompt, image, case)

    def parse_response(self, text: str, case: Case) -> str:
        self._note("parse_response")
        return super().parse_response(text, case)


def test_the_request_slot_is_held_around_the_model_call_only(tmp_path: Path) -> None:
    import threading

    slot = threading.BoundedSemaphore(1)
    model = SlotWatcher({"say 0": "0", "say 1": "1", "say 2": "2"}, slot)
    result = run_case(sample(tmp_path), model, task=Echo(), options=RunOptions(slot=slot))
    assert result["verdict"] == HIT
    assert model.held == {"preprocess": [False], "generate": [True, True, True], "parse_response": [False, False, False]}
    assert slot.acquire(blocking=False)  # and given back
