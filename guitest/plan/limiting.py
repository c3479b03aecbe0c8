"""``--limit=N``: a first try of N cases of each suite, spread over the suite's categories as the whole suite is.

Per suite file, among the cases every other selection left (``-k``, ``-m``, ``--deselect``, node ids, and pytest's
``--lf``, which keeps the cases that failed), before ``--shard`` splits them, the N cases are a systematic sample of the
cases ordered by category (:func:`strata`: the tags of the suite's first cross breakdown, the table the benchmark
publishes, then its other breakdown tags; ScreenSpot-Pro: group, ui_type, application, platform), and within one
category by a hash of the seed and the case's id. Every value of the first tag, and every combination of the first
tags (each group, each group's text and icon cases, ...), then gets its share of the N in proportion to its size,
rounded down or up (a category of a tenth of the cases gets a tenth of the N, give or take one), the later tags nearly
so; which of a category's cases come out is the seed's. Every case is chosen with the same chance, N in the number
selected, so a first try's accuracy estimates the whole selection's.
The choice is a pure function of the cases' ids, their tags, N and the seed (``--seed``, 0 when not given), never of
their order or of the process: every xdist worker, every shard and a re-run pick the same cases.

lmms-eval and evalscope take the first N rows instead (docs/selection.md): where a data set's rows come grouped, as
ScreenSpot-Pro's files come one application each, that tries one application and says nothing of the rest.
"""

from __future__ import annotations

import hashlib
from typing import Any, Iterable, Mapping, Sequence

#: the seed of the choice when ``--seed`` is not given
DEFAULT_SEED = 0


def seed_of(seed: int | None) -> int:
    """The seed the choice uses: ``--seed``, else :data:`DEFAULT_SEED`."""
    return DEFAULT_SEED if seed is None else seed


def strata(tables: Sequence[str], cross: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """The tags a suite's cases are ordered by: its first ``cross`` breakdown's (ScreenSpot-Pro's group x text/icon,
    ScreenSpot's split x text/icon, MMBench-GUI L2's basic/advanced x platform), then its other breakdown ``tables``."""
    first = tuple(cross[0]) if cross else ()
    return first + tuple(tag for tag in tables if tag not in first)


def stratum(tags: Mapping[str, str], strata: Sequence[str]) -> tuple[str, ...]:
    """A case's category: its values of the tags ``strata`` in that order (a tag it lacks counts as the empty value)."""
    return tuple(str(tags.get(tag) or "") for tag in strata)


def choose(cases: Iterable[tuple[str, str, tuple[str, ...]]], n: int, seed: int) -> set[str]:
    """The ids of the cases kept by ``--limit=n``: ``cases`` are ``(case id, suite, category)``; per suite, ``n`` of its
    cases (all of them when it has no more), spread over its categories in proportion to their sizes (module docstring)."""
    salt = hashlib.sha256(f"{seed}\x00".encode("utf-8"))
    suites: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for case_id, suite, category in cases:
        suites.setdefault(suite, []).append((category, case_id))
    kept: set[str] = set()
    for suite, members in suites.items():
        # one integer per case, its category's rank above a hash of its id: sorted as (category, hash), ties by id
        rank = {category: r for r, category in enumerate(sorted({category for category, _ in members}))}
        order = sorted(((rank[category] << 64) | _hash(salt, case_id), case_id) for category, case_id in members)
        m = len(order)
        k = min(n, m)
        # one start in [0, m), then every m/k-th case: positions floor((start + i * m) / k), i < k, all distinct and
        # below m; a run of s consecutive cases (one category) holds floor or ceil of s * k / m of them
        start = _hash(salt, suite) % m
        kept.update(order[(start + i * m) // k][1] for i in range(k))
    return kept


def _hash(salt: Any, text: str) -> int:
    """64 bits of SHA-256 of the seed and ``text``."""
    h = salt.copy()
    h.update(text.encode("utf-8"))
    return int.from_bytes(h.digest()[:8], "big")


def narrowing(keyword: str, markexpr: str, deselect: Sequence[str], node_ids: bool) -> tuple[str, ...]:
    """pytest's own selections a run was given, as a report names them: ``-k``, ``-m``, ``--deselect``, node ids."""
    out = [f"-k {keyword!r}"] if keyword else []
    out += [f"-m {markexpr!r}"] if markexpr else []
    out += [f"--deselect ({len(deselect)})"] if deselect else []
    out += ["node ids"] if node_ids else []
    return tuple(out)
