"""The evaluator metrics of OSWorld and Windows Agent Arena that guitest implements, standard library only.

A metric is called as the harness calls it: ``metric(result, expected, **options)`` when the task has
an expected value, else ``metric(result, **options)``; ``result`` and ``expected`` are what the getters
gave (a value, or the path of a local copy of a file). It returns a score in 0..1. Each function's
docstring says what it checks; the semantics follow desktop-env's own functions of the same name
(``desktop_env/evaluators/metrics/general.py``, ``docs.py``, ``vscode.py``), and where a file cannot be
read the score is 0, as there. ``infeasible`` is not here: :mod:`.evaluate` applies its rule.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from typing import Any, Callable

Metric = Callable[..., float]


def _read_text(path: Any) -> str | None:
    if not path or not isinstance(path, str):
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def exact_match(result: Any, rules: dict[str, Any]) -> float:
    """1 when ``result`` equals ``rules["expected"]`` (same type and value: ``"true"`` is not ``True``)."""
    return 1.0 if result == rules["expected"] else 0.0


def check_include_exclude(result: Any, rules: dict[str, Any]) -> float:
    """1 when the text ``result`` contains every string of ``rules["include"]`` and none of ``rules["exclude"]``."""
    if result is None:
        return 0.0
    include = rules.get("include", [])
    exclude = rules.get("exclude", [])
    return 1.0 if all(r in result for r in include) and all(r not in result for r in exclude) else 0.0


def is_in_list(result: Any, rules: dict[str, Any]) -> float:
    """1 when ``rules["expected"]`` is in ``result`` (an item of a list, a substring of a text)."""
    if result is None:
        return 0.0
    return 1.0 if rules["expected"] in result else 0.0


def literal_match(result: Any, expected: Any, **options: Any) -> float:
    """1 when ``str(result) == str(expected)``; ``type: list`` compares item by item; ``ignore_case``."""
    ignore_case = options.get("ignore_case", False)

    def norm(v: Any) -> str:
        return str(v).lower() if ignore_case else str(v)

    kind = options.get("type", "str")
    if kind == "str":
        return float(norm(result) == norm(expected))
    if kind == "list":
        if not isinstance(result, (list, tuple)) or not isinstance(expected, (list, tuple)) or len(result) != len(expected):
            return 0.0
        return float([norm(v) for v in result] == [norm(v) for v in expected])
    raise ValueError(f"literal_match: unknown type {kind!r} (str or list)")


def indel_ratio(a: str, b: str) -> float:
    """rapidfuzz's ``fuzz.ratio`` / 100: 2 * LCS(a, b) / (len(a) + len(b)), LCS the longest common subsequence
    (bit-parallel, Hyyro 2004, so long texts stay fast); 1.0 for two empty strings."""
    if not a and not b:
        return 1.0
    masks: dict[str, int] = {}
    for i, ch in enumerate(a):
        masks[ch] = masks.get(ch, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for ch in b:
        u = v & masks.get(ch, 0)
        v = ((v + u) | (v - u)) & full
    lcs = len(a) - bin(v).count("1")
    return 2.0 * lcs / (len(a) + len(b))


def fuzzy_match(result: Any, rules: dict[str, Any]) -> float:
    """The similarity of the text ``result`` to ``rules["expected"]`` in 0..1 (rapidfuzz's ratio, partial credit)."""
    if result is None:
        return 0.0
    return indel_ratio(str(result), str(rules["expected"]))


def _blanks(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[\t\n]", " ", text).strip())


def compare_text_file(actual: Any, expected: Any, **options: Any) -> float:
    """1 when the two text files are equal; ``ignore_blanks`` folds runs of white space, ``ignore_case`` case."""
    a, b = _read_text(actual), _read_text(expected)
    if a is None or b is None:
        return 0.0
    if options.get("ignore_blanks", False):
        a, b = _blanks(a), _blanks(b)
    if options.get("ignore_case", False):
        a, b = a.lower(), b.lower()
    return 1.0 if a == b else 0.0


def diff_text_file(result: Any, expected: Any, **options: Any) -> float:
    """How alike two text files are, line by line (difflib's ratio over their lines), partial credit."""
    a, b = _read_text(result), _read_text(expected)
    if a is None or b is None:
        return 0.0
    return difflib.SequenceMatcher(a=a.splitlines(), b=b.splitlines()).ratio()


def _load_json(path: Any, skip_first_line: bool = False) -> Any:
    text = _read_text(path)
    if text is None:
        return None
    if skip_first_line:
        text = text.split("\n", 1)[1] if "\n" in text else ""
    try:
        return json.loads(text)
    except ValueError:
        return None


def check_json_settings(actual: Any, expected: dict[str, Any], **options: Any) -> float:
    """1 when the JSON object in file ``actual`` has every key of ``expected["expected"]`` with that value."""
    data = _load_json(actual)
    if not isinstance(data, dict):
        return 0.0
    merged = copy.deepcopy(data)
    merged.update(expected["expected"])
    return 1.0 if merged == data else 0.0


def check_json_keybindings(actual: Any, expected: dict[str, Any], **options: Any) -> float:
    """1 when the JSON list in file ``actual`` (VS Code's keybindings.json, whose first line may be a
    comment) holds ``expected["expected"]`` as one of its entries."""
    for skip in (False, True):
        data = _load_json(actual, skip_first_line=skip)
        if isinstance(data, list):
            return 1.0 if expected["expected"] in data else 0.0
    return 0.0


def is_extension_installed(actual: Any, rules: dict[str, Any], **options: Any) -> float:
    """``rules["type"]`` ``contain``: 1 when the text ``actual`` contains ``rules["expected"]``; ``not_contain``: when it does not."""
    if actual is None:
        return 0.0
    kind = rules.get("type")
    if kind == "contain":
        return 1.0 if rules["expected"] in actual else 0.0
    if kind == "not_contain":
        return 1.0 if rules["expected"] not in actual else 0.0
    raise ValueError(f"is_extension_installed: unknown rule type {kind!r} (contain or not_contain)")


METRICS: dict[str, Metric] = {
    f.__name__: f
    for f in (
        exact_match,
        check_include_exclude,
        is_in_list,
        literal_match,
        fuzzy_match,
        compare_text_file,
        diff_text_file,
        check_json_settings,
        check_json_keybindings,
        is_extension_installed,
    )
}
#: decided by the FAIL rule, not by a function (see :mod:`.evaluate`)
INFEASIBLE = "infeasible"


def supported_metrics() -> list[str]:
    """The metric names guitest implements, ``infeasible`` included, sorted."""
    return sorted([*METRICS, INFEASIBLE])
