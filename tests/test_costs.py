"""What a run cost: usage read from each API's wire shape, priced (genai-prices, a prices file), summed per case, per
category and per run; the response cache's replies cost nothing now and are reported at what they cost; numbers no
call can carry are set aside (never an error), failed calls are counted apart; budgets stop a run at once (exit 13)
with one figure of what it spent, and ``--lf`` finishes it with the same verdicts; a looping episode stops at its
token cap.

The end-to-end tests run real pytest processes against the loopback OpenAI-compatible server (tests/fakeserver.py),
which sends every kind of token OpenAI's chat completions report, different per request, and logs what it sent:
the totals are checked against those logs, serially and with ``-n 2``. The computer-use APIs' shapes (Anthropic,
the Responses API) are checked the same way in tests/test_cua_e2e.py.
"""

from __future__ import annotations

import json
from dataclasses import replace
import time
from pathlib import Path
from typing import Any

import pytest

import fakeserver
from builders import center_norm, write_suite
from guitest.errors import GuitestError
from guitest.live.actions import Action
from guitest.live.loop import Decision, run_episode
from guitest.cost.pricing import PricesError, make_pricer
from guitest.reporting import costs
from guitest.reporting import report as report_mod
from guitest.reporting.builder import same_run_kind
from guitest.cost.spending import SLOT, SPENT, Budget, Spending, worker_slot
from guitest.cost.usage import MAX_CALL_TOKENS, FailedCall, Usage, add, from_anthropic, from_chat, from_responses, total
from guitest.cost.usage import tokens as usage_tokens
from test_live_loop import TASK, FakeEnv, Scripted

MODEL = "gpt-4o-mini"  # priced by genai-prices (by the model's name: the loopback endpoint is no provider it knows)
RIGHT = {"open the file menu": ("desktop", 0), "open settings": ("desktop", 2), "sign in": ("mobile", 1)}


# -- usage as each API reports it ------------------------------------------------------------------------------


def test_each_wire_shape_reads_into_one_meaning() -> None:
    # OpenAI's prompt_tokens include the cached ones; Anthropic's input_tokens leave out the cache's reads and writes
    chat = {"prompt_tokens": 1200, "completion_tokens": 80, "prompt_tokens_details": {"cached_tokens": 1024}, "completion_tokens_details": {"reasoning_tokens": 64}}
    assert from_chat(chat) == Usage(input_tokens=1200, output_tokens=80, cache_read_tokens=1024, reasoning_tokens=64)
    responses = {"input_tokens": 900, "output_tokens": 30, "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 12}}
    assert from_responses(responses) == Usage(input_tokens=900, output_tokens=30, cache_read_tokens=0, reasoning_tokens=12)
    anthropic = {"input_tokens": 5, "output_tokens": 40, "cache_read_input_tokens": 3000, "cache_creation_input_tokens": 200}
    assert from_anthropic(anthropic) == Usage(input_tokens=3205, output_tokens=40, cache_read_tokens=3000, cache_write_tokens=200)
    assert from_anthropic({"input_tokens": 5, "output_tokens": 40}) == Usage(input_tokens=5, output_tokens=40)
    for read in (from_chat, from_responses, from_anthropic):
        assert read(None) is None and read({}) is None and read({"input_tokens": None, "prompt_tokens": None}) is None


def test_a_sum_keeps_unknown_apart_from_zero() -> None:
    known = {"calls": 1, "seconds": 0.5, "input_tokens": 10, "output_tokens": 2, "cost": 0.25}
    unknown = {"calls": 1, "seconds": 0.25, "unreported": 1}
    summed = total([known, None, unknown, {"calls": 1, "seconds": 0.25, "input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0}])
    assert summed == {"calls": 3, "seconds": 1.0, "unreported": 1, "input_tokens": 10, "output_tokens": 2, "cache_read_tokens": 0, "cost": 0.25}
    assert "reasoning_tokens" not in summed  # no call reported it: unknown, not 0
    assert add({}, None) == {} and total([]) == {}


HOSTILE = [
    # (the chat usage a server sent, what guitest reads, the field the warning names)
    ({"prompt_tokens": float("nan"), "completion_tokens": 5}, Usage(output_tokens=5), "prompt_tokens nan"),
    ({"prompt_tokens": 10, "completion_tokens": float("inf")}, Usage(input_tokens=10), "completion_tokens inf"),
    ({"prompt_tokens": 1e308, "completion_tokens": 5}, Usage(output_tokens=5), "prompt_tokens 1e+308"),
    ({"prompt_tokens": 10**30, "completion_tokens": 5}, Usage(output_tokens=5), "prompt_tokens ~1e30 (an integer)"),
    ({"prompt_tokens": 10**5000, "completion_tokens": 5}, Usage(output_tokens=5), "prompt_tokens ~1e5000 (an integer)"),  # no repr: 5,001 digits
    ({"prompt_tokens": MAX_CALL_TOKENS + 1, "completion_tokens": 5}, Usage(output_tokens=5), f"prompt_tokens {MAX_CALL_TOKENS + 1}"),
    ({"prompt_tokens": -3, "completion_tokens": 5}, Usage(output_tokens=5), "prompt_tokens -3"),
    ({"prompt_tokens": 2.5, "completion_tokens": 5}, Usage(output_tokens=5), "prompt_tokens 2.5"),
    ({"prompt_tokens": True, "completion_tokens": 5}, Usage(output_tokens=5), "prompt_tokens True"),
    ({"prompt_tokens": "12", "completion_tokens": 5}, Usage(output_tokens=5), "prompt_tokens '12'"),
    ({"prompt_tokens": [1], "completion_tokens": 5}, Usage(output_tokens=5), "prompt_tokens (a JSON array)"),
    ({"prompt_tokens": 1000, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 2000}}, Usage(1000, 5), "prompt_tokens_details.cached_tokens 2000 (more than prompt_tokens 1000)"),
    ({"prompt_tokens": 10, "completion_tokens": 5, "completion_tokens_details": {"reasoning_tokens": 6}}, Usage(10, 5), "completion_tokens_details.reasoning_tokens 6 (more than completion_tokens 5)"),
    ({"prompt_tokens": 10, "completion_tokens": 5, "reasoning_tokens": 9}, Usage(10, 5), "reasoning_tokens 9 (more than completion_tokens 5)"),  # SGLang's place for it
]


@pytest.mark.parametrize(("sent", "read", "named"), HOSTILE, ids=[h[2].split(" (")[0] for h in HOSTILE])
def test_a_number_no_call_can_carry_is_set_aside_by_name_and_never_raises(tmp_path: Path, sent: dict[str, Any], read: Usage, named: str) -> None:
    usage = from_chat(sent)
    assert usage is not None and replace(usage, set_aside=()) == read and usage.set_aside == (named,)
    # priced, tallied and charged to a budget (the one 64-bit slot per process) without raising: the number counts nothing
    spending = Spending(make_pricer(MODEL, "http://127.0.0.1:9/v1", None), Budget(tmp_path, max_cost=None, max_tokens=10))
    tally = spending.call(usage, 0.5, 1.8e9)
    assert tally["set_aside"] == 1 and {k: tally.get(k) for k in ("input_tokens", "output_tokens")} == {"input_tokens": read.input_tokens, "output_tokens": read.output_tokens}
    assert spending.budget is not None and spending.budget.spent()[1] == (read.total or 0)
    assert spending.take_warning() == named and spending.take_warning() is None  # once per process


def test_the_other_apis_and_stored_tallies_set_aside_the_same_numbers(tmp_path: Path) -> None:
    assert from_responses({"input_tokens": float("nan"), "output_tokens": 3, "output_tokens_details": {"reasoning_tokens": 4}}) == Usage(
        output_tokens=3, set_aside=("input_tokens nan", "output_tokens_details.reasoning_tokens 4 (more than output_tokens 3)")
    )
    assert from_anthropic({"input_tokens": 5, "output_tokens": 2, "cache_read_input_tokens": -1}) == Usage(input_tokens=5, output_tokens=2, set_aside=("cache_read_input_tokens -1",))
    huge = from_anthropic({"input_tokens": MAX_CALL_TOKENS, "output_tokens": 2, "cache_read_input_tokens": 1})  # each a count; together more than a call holds
    assert huge == Usage(output_tokens=2, set_aside=(f"input_tokens + cache_read_input_tokens + cache_creation_input_tokens {MAX_CALL_TOKENS + 1}",))
    # a tally stored by an older guitest (the cache's rows) with numbers no sum can hold: left out, never summed
    assert add({"calls": 1, "input_tokens": 5}, {"calls": 1, "input_tokens": 10**309, "output_tokens": -2, "cost": float("nan"), "seconds": float("inf")}) == {"calls": 2, "input_tokens": 5}
    assert Usage.from_dict({"input_tokens": 10**309, "output_tokens": float("nan")}) == Usage()
    # a slot of the budget holds any sum without raising (struct would refuse a count beyond 64 bits)
    budget = Budget(tmp_path, max_cost=None, max_tokens=10)
    budget.charge({"calls": 1, "input_tokens": 10**30})
    assert budget.reached() == "--max-total-tokens=10 reached" and Budget(tmp_path, None, 10, slot=1).spent()[1] == 2**63 - 1


def test_a_failed_call_is_counted_by_kind_with_what_it_reported_and_charged_for_that(tmp_path: Path) -> None:
    spending = Spending(make_pricer(MODEL, "http://127.0.0.1:9/v1", None), Budget(tmp_path, max_cost=None, max_tokens=10_000))
    timeout = spending.failed(FailedCall("timeout", 2.0), 1.8e9)
    empty = spending.failed(FailedCall("empty", 0.5, Usage(input_tokens=900, output_tokens=7)), 1.8e9)
    assert timeout == {"calls": 1, "seconds": 2.0, "unreported": 1, "why": {"timeout": 1}}
    assert empty["why"] == {"empty": 1} and empty["input_tokens"] == 900 and empty["cost"] > 0
    assert total([timeout, empty])["why"] == {"empty": 1, "timeout": 1}
    assert spending.budget is not None and spending.budget.spent() == (pytest.approx(empty["cost"]), 907)  # what it reported is spent
    line = costs.not_in_totals({"paid": {}, "cached": {}, "failed": total([timeout, empty])})
    assert line == f"NOT in these totals: 2 failed call(s) (1 empty, 1 timeout; 907 tokens reported, {costs.dollars(empty['cost'])})"


# -- prices ------------------------------------------------------------------------------------------------------


def test_genai_prices_price_each_kind_of_token_at_its_rate() -> None:
    from genai_prices import Usage as PricedUsage
    from genai_prices import calc_price

    pricer = make_pricer(MODEL, "http://127.0.0.1:9/v1", None)
    assert pricer.source["source"].startswith("genai-prices ") and pricer.source["model"] == MODEL and pricer.source["provider"] == "openai"
    assert pricer.source["matched_by"].startswith("model name")
    rates = calc_price(PricedUsage(input_tokens=1, output_tokens=1), MODEL).model_price
    usage = Usage(input_tokens=10_000, output_tokens=500, cache_read_tokens=4_000, reasoning_tokens=200)
    by_hand = (6_000 * float(rates.input_mtok) + 4_000 * float(rates.cache_read_mtok) + 500 * float(rates.output_mtok)) / 1e6
    assert pricer.price(usage, 1.8e9) == pytest.approx(by_hand, rel=1e-12)
    assert float(rates.cache_read_mtok) < float(rates.input_mtok)  # so a cached token counted as plain input would fail above
    assert make_pricer(MODEL, "https://api.openai.com/v1", None).source["matched_by"] == "endpoint"
    unknown = make_pricer("my-own-qwen", "http://127.0.0.1:9/v1", None)
    assert unknown.source["source"] == "none" and "--prices" in unknown.source["why"] and unknown.price(usage, 0) is None
    assert make_pricer(MODEL, None, "off").price(usage, 0) is None


def test_a_prices_file_names_its_own_models(tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text("my-own-qwen:\n  input: 0.2\n  output: 0.6\n  cache_read: 0.05\n  as_of: 2026-11-01\n")
    pricer = make_pricer("my-own-qwen", "http://127.0.0.1:9/v1", str(prices))
    assert pricer.source == {"source": f"--prices={prices}", "model": "my-own-qwen", "as_of": "2026-11-01"}
    usage = Usage(input_tokens=1_000_000, output_tokens=100_000, cache_read_tokens=400_000)
    assert pricer.price(usage, 0) == pytest.approx(600_000 * 0.2e-6 + 400_000 * 0.05e-6 + 100_000 * 0.6e-6)
    assert make_pricer(MODEL, "https://api.openai.com/v1", str(prices)).source["source"].startswith("genai-prices")  # a model it does not name
    assert make_pricer("another-local-model", None, str(prices)).source["why"] == f"a model run on this machine that --prices={prices} does not name"
    for text, named in (
        ("my-own-qwen:\n  input: cheap\n  output: 1\n", "field 'input'"),
        ("my-own-qwen:\n  input: 1\n", "give input and output"),
        ("my-own-qwen:\n  input: 1\n  output: 1\n  currency: EUR\n", "unknown field(s) currency"),
        ("- a list\n", "expected a mapping"),
        ("my-own-qwen:\n  input: .nan\n  output: 1\n", "field 'input': expected a finite number of dollars >= 0, got nan"),
        ("my-own-qwen:\n  input: 1\n  output: .inf\n", "field 'output': expected a finite number of dollars >= 0, got inf"),
        ("my-own-qwen:\n  input: 1\n  output: 1\n  cache_read: -.inf\n", "field 'cache_read': expected a finite number of dollars >= 0, got -inf"),
        ("my-own-qwen:\n  per_hour: 1" + "0" * 400 + "\n", "field 'per_hour': expected a finite number of dollars >= 0, got ~1e400 (an integer)"),
    ):
        prices.write_text(text)
        with pytest.raises(PricesError) as info:
            make_pricer("my-own-qwen", None, str(prices))
        assert str(prices) in str(info.value) and named in str(info.value), info.value
    assert isinstance(info.value, GuitestError)
    for text, named in (('{"my-own-qwen": {"input": NaN, "output": 1}}', "field 'input'"), ('{"my-own-qwen": {"input": 1, "output": Infinity}}', "field 'output'")):
        (tmp_path / "prices.json").write_text(text)  # Python's json reads NaN and Infinity; a price they are not
        with pytest.raises(PricesError, match=f"prices.json, model 'my-own-qwen', {named}: expected a finite number"):
            make_pricer("my-own-qwen", None, str(tmp_path / "prices.json"))
    # a price so large that a call's dollars overflow to infinity: the call's cost is unknown, never inf in a sum
    prices.write_text("my-own-qwen:\n  input: 1.0e+308\n  output: 1\n")
    spending = Spending(make_pricer("my-own-qwen", None, str(prices)))
    assert "cost" not in spending.call(Usage(input_tokens=MAX_CALL_TOKENS, output_tokens=1), 0.1, 0)


# -- budgets -----------------------------------------------------------------------------------------------------


def test_the_budget_is_every_process_spending_together(tmp_path: Path) -> None:
    one = Budget(tmp_path, max_cost=1.0, max_tokens=None, slot=0)
    two = Budget(tmp_path, max_cost=1.0, max_tokens=None, slot=worker_slot("gw1"))
    one.charge({"calls": 1, "cost": 0.6, "input_tokens": 10})
    assert two.reached() is None
    two.charge({"calls": 1, "cost": 0.3})
    assert two.reached() is None and one.spent() == (pytest.approx(0.9), 10)
    one.charge({"calls": 1, "cost": 0.15})
    assert two.reached() == "--max-cost=1 reached" and two.spent() == (pytest.approx(1.05), 10)
    # a slot read half-written fails its check: the last whole reading of it counts
    with open(tmp_path / SPENT, "r+b") as spent:
        spent.seek(SLOT.size * 0 + 8)
        spent.write(b"\xff")
    assert two.spent() == (pytest.approx(1.05), 10)
    assert [worker_slot(w) for w in (None, "", "gw0", "gw7", "master")] == [0, 0, 1, 8, 0]
    (tmp_path / "t").mkdir()
    tokens = Budget(tmp_path / "t", max_cost=None, max_tokens=100)
    tokens.charge({"calls": 1, "input_tokens": 90, "output_tokens": 10, "cache_read_tokens": 80})  # cached input counts once
    assert tokens.reached() == "--max-total-tokens=100 reached" and tokens.spent()[1] == 100


def test_a_self_hosted_endpoint_is_charged_its_rate_per_hour(tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"my-own-qwen": {"per_hour": 3600}}))  # a dollar a second
    pricer = make_pricer("my-own-qwen", None, str(prices))
    assert pricer.per_hour == 3600 and pricer.price(Usage(input_tokens=10, output_tokens=1), 0) is None  # no token price
    budget = Budget(tmp_path, max_cost=5.0, max_tokens=None, per_hour=pricer.per_hour, started=time.time() - 2)
    assert budget.reached() is None and 2 <= budget.spent()[0] < 5
    budget.started -= 4  # six seconds of the endpoint's time
    assert budget.reached() == "--max-cost=5 reached" and 6 <= budget.spent()[0] < 7
    usage = {"paid": {"calls": 2, "seconds": 1.5, "input_tokens": 20, "output_tokens": 2}, "cached": {}, "all": {"calls": 2, "input_tokens": 20, "output_tokens": 2}, "cases": 2}
    run = {"usage": {"paid": usage["paid"], "cached": {}, "endpoint": {"seconds": 6.0, "per_hour": 3600.0, "cost": 6.0}}, "price": pricer.source}
    assert costs.summary_line(usage, run) == (
        f"cost: 22 tokens (input 20; output 2), 2 calls, 1.5 s of model time; the endpoint's time $6.00 (6 s at $3,600.00/hour) [prices: --prices={prices}, my-own-qwen]"
    )


def test_an_episode_stops_at_its_token_cap_and_is_evaluated() -> None:
    looping = Decision(reply="Action: click(50, 40)", actions=(Action("click", point=(50, 40), space="screen"),), usage={"input_tokens": 700, "output_tokens": 50})
    episode = run_episode(FakeEnv(), TASK, 0, Scripted([looping]), max_steps=10, max_tokens=2000)
    assert episode.end == "token_cap" and len(episode.steps) == 3  # 750, 1500, 2250 >= 2000: no fourth step
    assert episode.evaluation is not None and not episode.success  # the environment's check still scores it
    assert episode.to_dict()["trajectory"][0]["usage"] == {"input_tokens": 700, "output_tokens": 50}
    assert run_episode(FakeEnv(), TASK, 0, Scripted([looping]), max_steps=10).end == "budget"  # no cap: the step budget


# -- whole runs against the loopback server, serial and -n 2 -----------------------------------------------------


def _answers() -> dict[str, list[dict[str, Any]]]:
    script: dict[str, list[dict[str, Any]]] = {}
    for instruction, (split, row) in RIGHT.items():
        x, y = center_norm(split, row)
        script[instruction] = [{"content": f"Answer: [{x:.4f}, {y:.4f}]"}] * 10
    return script


def _run(pytester: pytest.Pytester, url: str, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    result = pytester.runpytest_subprocess("suites/tiny", f"--model=openai:{MODEL}", f"--base-url={url}", "--api-key-env=GUITEST_COST_KEY", "--concurrency=1", *args)
    return result, json.loads((pytester.path / "reports" / "tiny.json").read_text())


def _sent(record: dict[str, Any]) -> dict[str, int]:
    """What the server logged as sent, by OpenAI's documented meanings (prompt_tokens include the cached ones)."""
    u = record["usage"]
    return {
        "input_tokens": u["prompt_tokens"],
        "output_tokens": u["completion_tokens"],
        "cache_read_tokens": u["prompt_tokens_details"]["cached_tokens"],
        "reasoning_tokens": u["completion_tokens_details"]["reasoning_tokens"],
    }


KINDS = ("input_tokens", "output_tokens", "cache_read_tokens", "reasoning_tokens")


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_usage_and_dollars_per_case_and_run_equal_what_the_server_sent(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mode: list[str]) -> None:
    from genai_prices import Usage as PricedUsage
    from genai_prices import calc_price

    write_suite(pytester.path / "suites" / "tiny")
    monkeypatch.setenv("GUITEST_COST_KEY", "sk-cost-test-key")
    with fakeserver.serve(tmp_path, script=_answers(), port=0) as server:
        first, report = _run(pytester, server.base_url, *mode)
        sent = server.requests()
        again, cached = _run(pytester, server.base_url, "--cache=on", *mode)  # every reply read back from the cache
        asked_again = len(server.requests()) - len(sent)
    assert first.ret == 0 and again.ret == 0, first.stdout.str()
    by_instruction = {r["user_text"]: _sent(r) for r in sent}
    assert len(sent) == len(report["cases"]) == 6
    rates = calc_price(PricedUsage(input_tokens=1, output_tokens=1), MODEL).model_price
    for case in report["cases"]:
        (own,) = [u for text, u in by_instruction.items() if case["instruction"] in text]
        assert {k: case["usage"][k] for k in KINDS} == own and case["usage"]["calls"] == 1 and "unreported" not in case["usage"]
        by_hand = (
            (own["input_tokens"] - own["cache_read_tokens"]) * float(rates.input_mtok) + own["cache_read_tokens"] * float(rates.cache_read_mtok) + own["output_tokens"] * float(rates.output_mtok)
        ) / 1e6
        assert case["usage"]["cost"] == pytest.approx(by_hand, rel=1e-9)
    sums = {k: sum(u[k] for u in by_instruction.values()) for k in KINDS}
    paid = report["usage"]["paid"]
    assert {k: paid[k] for k in KINDS} == sums and paid["calls"] == 6 and report["usage"]["cached"] == {}
    assert paid["cost"] == pytest.approx(sum(c["usage"]["cost"] for c in report["cases"]))
    assert report["run"]["usage"] == {"paid": paid, "cached": {}} and report["run"]["price"]["source"].startswith("genai-prices")
    # per category: the split table's values add up to the whole
    split = report["usage"]["by"]["split"]
    assert set(split) == {"desktop", "mobile"} and sum(v["input_tokens"] for v in split.values()) == sums["input_tokens"]
    assert split["mobile"]["calls"] == 2 and split["desktop"]["calls"] == 4
    first.stdout.fnmatch_lines([f"cost: {sums['input_tokens'] + sums['output_tokens']:,} tokens (input {sums['input_tokens']:,} (*cache read); output*6 calls*genai-prices*"])
    # the re-run pays nothing: the cache answered every call, reported at what it cost when it was made
    assert asked_again == 0
    assert cached["usage"]["paid"] == {} and {k: cached["usage"]["cached"][k] for k in KINDS} == sums
    assert cached["usage"]["cached"]["cost"] == pytest.approx(paid["cost"])
    assert all(c.get("cached") and "usage" not in c and c["cached_usage"]["calls"] == 1 for c in cached["cases"])
    assert {c["id"]: c["verdict"] for c in cached["cases"]} == {c["id"]: c["verdict"] for c in report["cases"]}
    again.stdout.fnmatch_lines(["cost: nothing paid (every reply came from the response cache); the cache answered 6 call(s) that cost $0.000* when made*"])


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_hostile_usage_is_set_aside_and_said_once_and_failed_calls_are_counted_apart(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mode: list[str]) -> None:
    """Before: NaN in a usage block made every case an error, 1e308 overflowed the budget's slot, and failed calls
    were counted nowhere. Each worker carries the first warning it saw; the run says one."""
    write_suite(pytester.path / "suites" / "tiny")
    monkeypatch.setenv("GUITEST_COST_KEY", "sk-cost-test-key")
    script = _answers()
    billed = {"prompt_tokens": 900, "completion_tokens": 7}  # an empty reply the server generated and bills
    for instruction, usage in (
        ("open the file menu", {"prompt_tokens": float("nan"), "completion_tokens": 9}),
        ("open settings", {"prompt_tokens": 1200, "completion_tokens": 1e308}),
        ("sign in", {"prompt_tokens": 1000, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 2000}}),
    ):
        script[instruction] = [{**script[instruction][0], "usage": usage}]
    script["close the dialog"] = [{"status": 500}, {"content": None, "usage": billed}]
    with fakeserver.serve(tmp_path, script=script, port=0) as server:
        result, report = _run(pytester, server.base_url, "--max-total-tokens=100000000", "--retry-backoff=0.01", *mode)
    assert result.ret == 0, result.stdout.str()
    verdicts = {c["id"]: c["verdict"] for c in report["cases"]}
    assert {i for i, v in verdicts.items() if v == "hit"} == {"desktop-windows-text-0", "desktop-macos-icon-2", "mobile-android-text-1"} and "error" not in verdicts.values()
    assert report_mod.validate(report) == []
    paid, failed = report["usage"]["paid"], report["usage"]["failed"]
    assert paid["calls"] == 6 and paid["set_aside"] == 3 and "unreported" not in paid  # each still told something usable
    by_id = {c["id"]: c for c in report["cases"]}
    assert by_id["desktop-windows-text-0"]["usage"]["output_tokens"] == 9 and "input_tokens" not in by_id["desktop-windows-text-0"]["usage"]
    assert by_id["mobile-android-text-1"]["usage"]["input_tokens"] == 1000 and "cache_read_tokens" not in by_id["mobile-android-text-1"]["usage"]
    assert max(v for c in report["cases"] for v in (c.get("usage") or {}).values()) < MAX_CALL_TOKENS  # no 309-digit count
    # the failed calls: counted by kind, with the tokens the empty reply reported, in the report and the run's record, not in paid
    assert failed == report["run"]["usage"]["failed"] == by_id["desktop-windows-icon-1"]["failed_usage"]
    assert failed["calls"] == 2 and failed["why"] == {"empty": 1, "server_error": 1} and (failed["input_tokens"], failed["output_tokens"]) == (900, 7)
    assert report["run"]["budget"]["spent"]["tokens"] == usage_tokens(paid) + 907  # what the budget counted: the answers and what the failed calls reported
    result.stdout.fnmatch_lines(
        ["cost: *6 calls*3 call(s) reported numbers that cannot be counts (set aside)*NOT in these totals: 2 failed call(s) (1 empty, 1 server_error; 907 tokens reported, $*)*"]
    )
    # the warning, once for the run, names the field as the API named it
    out = result.stdout.str()
    assert out.count("reported token counts that cannot be counts") == 1
    warning = report["run"]["usage"]["warning"]
    assert warning in ("prompt_tokens nan", "completion_tokens 1e+308", "prompt_tokens_details.cached_tokens 2000 (more than prompt_tokens 1000)") and warning in out


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_budget_stops_the_run_at_once_and_lf_finishes_it_with_the_same_verdicts(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mode: list[str]) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    monkeypatch.setenv("GUITEST_COST_KEY", "sk-cost-test-key")
    with fakeserver.serve(tmp_path, script=_answers(), port=0) as server:
        stopped, report = _run(pytester, server.base_url, "--max-total-tokens=3000", *mode)
        before = server.requests()
        lastfailed = json.loads((pytester.path / ".pytest_cache" / "v" / "cache" / "lastfailed").read_text())
        pages = [(pytester.path / "reports" / f"tiny.{kind}").read_text() for kind in ("md", "html")]
        # --lf asked at another speed (--concurrency, --timeout, --retries) still finishes the same run
        finished, full = _run(pytester, server.base_url, "--lf", "--concurrency=2", "--timeout=60", "--retries=1", *mode)
        after = server.requests()[len(before) :]
    assert stopped.ret == 13, stopped.stdout.str()
    # each call uses about 1,160 tokens: the third reaches 3,000 and no later one is asked (serially exactly three; with
    # two workers each may have one call in flight when the other reaches the limit)
    sent = [_sent(r)["input_tokens"] + _sent(r)["output_tokens"] for r in before]
    assert (len(before) == 3) if not mode else (3 <= len(before) <= 4)
    assert sum(sent) >= 3000 and sum(sent) - max(sent) * (1 if not mode else 2) < 3000
    # the stop is at once: the cases not asked are no failures, only missing (one line), and every answer is reported
    budget = report["run"]["budget"]
    answered = len(report["cases"])
    assert answered == len(before) and budget["cases_not_asked"] == 6 - answered and sorted(report["missing"]) == sorted(set(lastfailed_ids(lastfailed)))
    assert budget["max_total_tokens"] == 3000 and budget["reached"] == "--max-total-tokens=3000 reached"
    out = stopped.stdout.str()
    assert "not asked: the run's budget is spent" not in out and "FAILED" not in out and "= FAILURES =" not in out
    assert out.count("BUDGET REACHED") == 1
    # one figure of what was spent, everywhere: every call the server answered, as the report, the summary, the
    # Markdown and the HTML say it
    assert budget["spent"]["tokens"] == sum(sent) == usage_tokens(report["usage"]["paid"])
    assert budget["spent"]["cost"] == pytest.approx(report["usage"]["paid"]["cost"])
    said = f"--max-total-tokens=3000 reached: {sum(sent):,} tokens spent ({costs.dollars(budget['spent']['cost'])})"
    assert costs.budget_text(budget) == said
    stopped.stdout.fnmatch_lines([f"BUDGET REACHED: {said}: {6 - answered} case(s) not asked, missing from the report (exit status 13); raise the limit*--lf*"])
    assert all(said in page for page in pages)
    assert report_mod.validate(report) == []
    # --lf asks only the cases not asked, pays nothing twice, and the report is the whole suite's, folded into the first
    assert finished.ret == 0, finished.stdout.str()
    assert len(after) == 6 - answered and not {r["user_text"] for r in after} & {r["user_text"] for r in before}
    assert full["complete"] and len(full["cases"]) == 6 and full["usage"]["paid"]["calls"] == 6 and full["run"]["merged_into_report_of"] == report["run"]["started"]
    verdicts = {c["id"]: c["verdict"] for c in full["cases"]}
    assert sorted(verdicts.values()) == ["hit"] * 3 + ["miss"] * 3
    assert {i for i, v in verdicts.items() if v == "hit"} == {"desktop-windows-text-0", "desktop-macos-icon-2", "mobile-android-text-1"}


def test_lf_folds_into_a_report_asked_at_another_speed_but_never_of_another_model() -> None:
    """Before: --lf compared the whole model record, so a re-run with another --concurrency was reported on its own,
    complete, and the earlier answers were in no report. What may differ is guitest.scale.merge's (one definition)."""
    settings = {"temperature": 0.0, "max_tokens": 512, "seed": None, "concurrency": 1, "timeout": 120.0, "retries": 3, "base_url": "http://a:8000/v1", "http_client": "stdlib"}
    model = {"spec": f"openai:{MODEL}", "adapter": "OpenAIChat", "base_url": "http://a:8000/v1", "http_client": "stdlib", "settings": settings}
    previous: Any = {"model": model, "suite": {"path": "suites/tiny/suite.yaml"}, "run": {}}
    faster = {**model, "base_url": "http://b:8000/v1", "settings": {**settings, "concurrency": 32, "timeout": 30.0, "retries": 1, "base_url": "http://b:8000/v1", "http_client": "openai"}}
    assert same_run_kind(previous, faster, "suites/tiny/suite.yaml", {}) is previous
    for other in ({**model, "settings": {**settings, "temperature": 0.7}}, {**model, "spec": "openai:another"}):
        assert same_run_kind(previous, other, "suites/tiny/suite.yaml", {}) is None


def lastfailed_ids(lastfailed: dict[str, Any]) -> list[str]:
    """The case ids of pytest's record of the last failures (node ids ``suites/tiny/suite.yaml::ID``)."""
    return [nodeid.split("::", 1)[1] for nodeid in lastfailed if nodeid.startswith("suites/tiny/suite.yaml::")]


def test_max_cost_needs_a_price_and_a_prices_file_gives_one(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    monkeypatch.setenv("GUITEST_COST_KEY", "sk-cost-test-key")
    prices = pytester.path / "prices.yaml"
    prices.write_text("fake-vl:\n  input: 100\n  output: 400\n  cache_read: 10\n")
    with fakeserver.serve(tmp_path, script=_answers(), port=0) as server:
        base = ["suites/tiny", "--model=openai:fake-vl", f"--base-url={server.base_url}", "--api-key-env=GUITEST_COST_KEY", "--concurrency=1"]
        refused = pytester.runpytest_subprocess(*base, "--max-cost=0.5")
        assert server.requests() == []
        result = pytester.runpytest_subprocess(*base, "--max-cost=0.2", f"--prices={prices}")
        sent = server.requests()
    assert refused.ret == 4
    refused.stderr.fnmatch_lines(["*--max-cost=0.5: no price is known for openai:fake-vl*--prices FILE*, or cap tokens with --max-total-tokens"])
    assert refused.stderr.str().count("--prices FILE") == 1  # the reason says how to give a price; the message not again
    # about $0.08 a call at these rates: the third reaches $0.20, and no fourth is asked
    dollars = [((u["input_tokens"] - u["cache_read_tokens"]) * 100 + u["cache_read_tokens"] * 10 + u["output_tokens"] * 400) / 1e6 for u in map(_sent, sent)]
    assert result.ret == 13 and len(sent) == 3 and sum(dollars[:2]) < 0.2 <= sum(dollars)
    report = json.loads((pytester.path / "reports" / "tiny.json").read_text())
    assert report["usage"]["paid"]["cost"] == pytest.approx(sum(dollars)) and report["run"]["price"] == {"source": f"--prices={prices}", "model": "fake-vl", "as_of": None}
    assert report["run"]["budget"]["reached"] == "--max-cost=0.2 reached" and report["run"]["budget"]["spent"]["cost"] == pytest.approx(sum(dollars))
    result.stdout.fnmatch_lines([f"BUDGET REACHED: --max-cost=0.2 reached: {costs.dollars(report['run']['budget']['spent']['cost'])} spent (*tokens): 3 case(s) not asked*"])


def test_repeats_report_the_cost_of_pass_at_k(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    monkeypatch.setenv("GUITEST_COST_KEY", "sk-cost-test-key")
    with fakeserver.serve(tmp_path, script=_answers(), port=0) as server:
        result, report = _run(pytester, server.base_url, "--repeats=3")
        sent = server.requests()
    assert result.ret == 0, result.stdout.str()
    usage = report["usage"]
    assert len(sent) == 18 and usage["paid"]["calls"] == 18 and all(c["usage"]["calls"] == 3 for c in report["cases"])
    tokens = sum(_sent(r)["input_tokens"] + _sent(r)["output_tokens"] for r in sent)
    # a case's three attempts: what pass@3 costs per case; and per attempt, a third of it
    assert usage["per_case"]["calls"] == 3 and usage["per_attempt"]["calls"] == 1
    assert usage["per_case"]["input_tokens"] + usage["per_case"]["output_tokens"] == pytest.approx(tokens / 6, abs=0.01)
    assert usage["per_attempt"]["cost"] == pytest.approx(usage["all"]["cost"] / 18)
