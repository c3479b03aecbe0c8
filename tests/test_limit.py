"""--limit=N: a first try of N cases per suite, spread over its categories in proportion, the same on every worker, shard
and re-run (a pure function of the cases' ids, tags and the seed), chosen among what -k, -m and --lf left and split by
--shard after; every report says it is a subset, and so does the gate."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from builders import SHARED_DATA, write_suite
from guitest.plan import limiting, sharding
from guitest.formats import read_suite_samples
from guitest.plan.runconfig import ConfigError, from_values
from guitest.suite import load_suite

PRO = SHARED_DATA / "screenspot_pro"
PRO_TAGS = ("group", "application", "platform", "ui_type")
PRO_STRATA = limiting.strata(PRO_TAGS, [["group", "ui_type"], ["platform", "ui_type"]])  # its suite.yaml's tags and cross
#: 24 cases: 18 desktop, 6 mobile; a third of each icons; sources windows, macos (desktop), ios (mobile)
ROWS = [
    (split, f"shot{n}.png", (400, 300), [(10 * k, 10, 30, 30, f"target {n}-{k}", "icon" if k % 3 == 0 else "text", source) for k in range(6)])
    for n, (split, source) in enumerate([("desktop", "windows"), ("desktop", "windows"), ("desktop", "macos"), ("mobile", "ios")])
]


def pro_cases() -> list[tuple[str, str, tuple[str, ...]]]:
    """ScreenSpot-Pro's 1581 cases as the plugin hands them to the choice: node id, suite, category."""
    cases = []
    for path in sorted(PRO.glob("*.json")):
        for row in json.loads(path.read_text()):
            case_id = "-".join(str(row[t]) for t in (*PRO_TAGS, "id"))
            cases.append((f"suites/screenspot_pro/suite.yaml::{case_id}", "suites/screenspot_pro/suite.yaml", limiting.stratum(row, PRO_STRATA)))
    return cases


def within_share(chosen: set[str], cases: list[tuple[str, str, tuple[str, ...]]], depth: int, n: int) -> None:
    """Every category of the first ``depth`` tags holds its share of the n chosen, rounded down or up."""
    sizes = Counter(category[:depth] for _, _, category in cases)
    got = Counter(category[:depth] for case_id, _, category in cases if case_id in chosen)
    for category, size in sizes.items():
        share = size * n / len(cases)
        assert int(share) <= got[category] <= -int(-share // 1), (category, size, got[category], share)


@pytest.mark.skipif(not PRO.is_dir(), reason=f"real annotations not found at {PRO} (see ../shared/data/README.md)")
def test_a_first_try_of_screenspot_pro_spreads_over_its_groups_and_applications_in_proportion() -> None:
    cases = pro_cases()
    assert len(cases) == 1581 and PRO_STRATA == ("group", "ui_type", "application", "platform")
    for n in (20, 50):
        chosen = limiting.choose(cases, n, 0)
        assert len(chosen) == n
        for depth in (1, 2, 3):  # each group, each group's text and icon cases (the leaderboard's cells), each application's
            within_share(chosen, cases, depth, n)
    assert len({category[2] for case_id, _, category in cases if case_id in chosen}) >= 24  # of 26 applications
    # the first 50 cases in the order they are read are one application's: a first-N limit would try android_studio alone
    assert {category[2] for _, _, category in cases[:50]} == {"android_studio"}
    # a pure function of the ids, the tags and the seed: any order of collection, any process
    shuffled = cases[:]
    random.Random(1).shuffle(shuffled)
    assert limiting.choose(shuffled, 50, 0) == chosen
    assert limiting.choose(cases, 50, 1) != chosen
    assert limiting.choose(cases, 5000, 0) == {case_id for case_id, _, _ in cases}


def test_each_category_gets_its_share_and_each_suite_its_own_n() -> None:
    rng = random.Random(7)
    for _ in range(200):
        sizes = [rng.randint(1, 40) for _ in range(rng.randint(1, 9))]
        cases = [(f"s.yaml::c{k}-{i}", "s.yaml", (f"v{k}",)) for k, size in enumerate(sizes) for i in range(size)]
        n = rng.randint(1, len(cases))
        chosen = limiting.choose(cases, n, rng.randint(0, 99))
        assert len(chosen) == n
        within_share(chosen, cases, 1, n)
        # another suite beside it takes its own n and leaves this suite's choice as it was
        other = [(f"t.yaml::c{i}", "t.yaml", ("x",)) for i in range(30)]
        both = limiting.choose(cases + other, n, 3)
        assert {c for c in both if c.startswith("s.yaml")} == limiting.choose(cases, n, 3) and sum(c.startswith("t.yaml") for c in both) == min(n, 30)


def test_limit_must_be_a_count_and_its_seed_is_the_runs() -> None:
    with pytest.raises(ConfigError, match="--limit must be at least 1"):
        from_values({"limit": 0})
    assert limiting.seed_of(None) == 0 and limiting.seed_of(9) == 9
    assert limiting.narrowing("icon", "guitest(split='web')", ["a", "b"], True) == ("-k 'icon'", "-m \"guitest(split='web')\"", "--deselect (2)", "node ids")


def expected(folder: Path, n: int, seed: int, keyword: str | None = None) -> set[str]:
    """The case ids --limit=n chooses in the suite at ``folder`` (after -k ``keyword``, a tag value here)."""
    suite = load_suite(folder / "suite.yaml")
    samples = read_suite_samples(suite, str(folder / "data"))
    key = "suites/tiny/suite.yaml"
    cases = [(f"{key}::{s.id}", key, limiting.stratum(s.tags, limiting.strata(suite.tables, suite.cross))) for s in samples if keyword is None or keyword in s.tags.values()]
    return {node.split("::")[1] for node in limiting.choose(cases, n, seed)}


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_limited_run_is_the_same_labelled_subset_serial_and_under_xdist(pytester: pytest.Pytester, mode: list[str]) -> None:
    folder = write_suite(pytester.path / "suites" / "tiny", rows=ROWS)
    result = pytester.runpytest_subprocess("suites/tiny", "--model=oracle", "--limit=8", "--seed=5", "--min-accuracy=0.5", "-p", "no:cacheprovider", *mode)
    assert result.ret == 0, result.stdout.str()[-3000:]
    report = json.loads((pytester.path / "reports" / "tiny.json").read_text())
    chosen = {c["id"] for c in report["cases"]}
    assert chosen == expected(folder, 8, 5)  # every worker chose the cases the pure function chooses
    assert Counter(c["tags"]["split"] for c in report["cases"]) == {"desktop": 6, "mobile": 2}  # 18 and 6 of 24
    assert report["n_selected"] == 8 and report["complete"]
    assert report["selection"] == {"n_suite": 24, "subset": True, "by": [], "limit": {"n": 8, "seed": 5, "strata": ["split", "data_type", "data_source"]}}
    said = "SUBSET: 8 of the suite's 24 cases (--limit=8: spread over split, data_type, data_source, seed 5): its figures are not the whole suite's"
    result.stdout.fnmatch_lines(
        [said, "gate note: gated on a subset: 8 of the suite's 24 cases; a pass says nothing of the other 16", "gate passed on a SUBSET (8 of the suite's 24 cases): accuracy >= 0.5000"]
    )
    assert report["gate"]["passed"] is True and report["gate"]["notes"] == ["gated on a subset: 8 of the suite's 24 cases; a pass says nothing of the other 16"]
    assert f"- **{said}**" in (pytester.path / "reports" / "tiny.md").read_text()
    page = (pytester.path / "reports" / "tiny.html").read_text()
    assert said.replace("'", "&#x27;") in page and "gate passed on a SUBSET (8 of the suite&#x27;s 24 cases)" in page
    assert not (pytester.path / "reports" / "tiny.passed.json").exists()  # a first try passed: not the suite's last passed run


def test_limit_chooses_after_k_and_lf_before_the_shard(pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    from guitest.cli import main

    folder = write_suite(pytester.path / "suites" / "tiny", rows=ROWS)
    chosen = expected(folder, 4, 0, keyword="text")  # 16 text cases: 12 desktop, 4 mobile
    parts = []
    for k in (1, 2):
        run = pytester.runpytest_subprocess("suites/tiny", "--model=oracle", "-k", "text", "--limit=4", f"--shard={k}/2", f"--report-dir=s{k}", "-p", "no:cacheprovider")
        assert run.ret == 0, run.stdout.str()[-3000:]
        report = json.loads((pytester.path / f"s{k}" / "tiny.json").read_text())
        parts.append({c["id"] for c in report["cases"]})
        assert parts[-1] == {i for i in chosen if sharding.part_of(f"suites/tiny/suite.yaml::{i}", 2) == k}
        assert report["selection"]["by"] == ["-k 'text'"] and report["selection"]["subset"]
    assert parts[0] | parts[1] == chosen and len(chosen) == 4
    capsys.readouterr()
    assert main(["merge", "s1/tiny.json", "s2/tiny.json", f"--rootdir={pytester.path}", f"--report-dir={pytester.path / 'merged'}"]) == 0
    merged = json.loads((pytester.path / "merged" / "tiny.json").read_text())
    assert merged["n_selected"] == 4 and merged["selection"] == {"n_suite": 24, "subset": True, "by": ["-k 'text'"], "limit": {"n": 4, "seed": 0, "strata": ["split", "data_type", "data_source"]}}
    assert "SUBSET: 4 of the suite's 24 cases" in (pytester.path / "merged" / "tiny.md").read_text()
    assert "SUBSET: 4 of the suite's 24 cases (--limit=4: spread over split, data_type, data_source, seed 0; -k 'text')" in capsys.readouterr().out

    # the cases a limited run left failed: --lf runs them (--limit, given again, chooses among them: all two), and its
    # report folds into the limited run's, which it covers
    first = expected(folder, 6, 0)
    replies = pytester.path / "replies.jsonl"
    answered = sorted(first)[:4]
    replies.write_text("".join(json.dumps({"id": i, "response": "Answer: [0.5, 0.5]"}) + "\n" for i in answered))
    run = pytester.runpytest_subprocess("suites/tiny", f"--model=replay:{replies}", "--limit=6", "--report-dir=lf")
    assert run.ret == 1, run.stdout.str()[-3000:]  # two cases have no reply: errors
    replies.write_text("".join(json.dumps({"id": i, "response": "Answer: [0.5, 0.5]"}) + "\n" for i in sorted(first)))
    again = pytester.runpytest_subprocess("suites/tiny", f"--model=replay:{replies}", "--limit=6", "--lf", "--report-dir=lf")
    assert again.ret == 0, again.stdout.str()[-3000:]
    again.stdout.fnmatch_lines(["*, 2 missed in *"])  # the two that failed, of the six --limit chose
    report = json.loads((pytester.path / "lf" / "tiny.json").read_text())
    assert {c["id"] for c in report["cases"]} == first and report["complete"] and report["run"]["merged_into_report_of"]
    assert report["selection"] == {"n_suite": 24, "subset": True, "by": [], "limit": {"n": 6, "seed": 0, "strata": ["split", "data_type", "data_source"]}}
