"""``ocr``: a baseline that reads the screen's text and clicks the best match. No download.

:class:`OCRModel` runs RapidOCR (``rapidocr-onnxruntime``: PaddleOCR's PP-OCRv4 text
detector and recogniser as ONNX models shipped inside the wheel, run by onnxruntime on
the CPU, fully offline) on the screenshot *as sent* (the base ``preprocess`` sizes it
by the profile), matches the instruction against every recognised line of text, and
answers the centre of the best-matching text box, in its profile's syntax and space
exactly like the weightless baselines. When no text matches well enough
(score < :data:`THRESHOLD`) it refuses: ``I cannot find ... on the screen``.

It grounds labelled targets (buttons, menu items, list rows) and is blind to icons:
that is the point, a floor any real GUI agent must beat. On the demo suite
(``pytest suites/demo --model=ocr``) it hits 23/24 text targets and 1/24 icon targets
(a close button's glyph read as ``X``), refusing 17 icon instructions: 24/48 overall.
Those numbers are in-sample: the word lists and stem rules below were written while
looking at the demo's instructions (a first version scored 19/24 and 1/24).

Speed, measured here (2 vCPU AMD EPYC, onnxruntime 1.32, rapidocr-onnxruntime 1.4.4,
other jobs keeping the load at about 6): 2.5-4 s of CPU per 1920x1080 screenshot,
3-9 s wall; expect roughly 1.5-3 s wall on an idle 2-core machine. The text detector
costs most on sparse screens, the recogniser on text-dense ones. RapidOCR first shrinks screenshots to 2000 px on the long side, so a
3840x2160 one costs about the same as 1920x1080. The engine loads once per process,
lazily, on the first case (0.4-2 s). Results are cached in memory per screenshot (by
pixel hash, the last :data:`CACHE_SIZE` images), so a screenshot with several
instructions is read once. onnxruntime uses every core for one image; the engine is
guarded by a lock, so the thread pool's concurrent cases queue on it instead of
oversubscribing the CPU (RapidOCR does not promise thread safety either).

Matching (:func:`score`, :func:`best_match`), on text normalised to lower case, NFKC,
``&`` as ``and``, every other run of punctuation one space:

* each word of the instruction has a weight: instruction verbs and fillers
  (``click``, ``tap``, ``open``, ``select``, ``the``, ``to`` ... :data:`FILLERS`) 0,
  element-type words (``button``, ``tab``, ``icon``, ``menu``, ``settings`` ...
  :data:`TYPE_WORDS`) 0.3, numbers 1.5 (``select shoe size 9``), any other word 1, and
  a word the instruction capitalises (``open the Go menu``) at least 1;
* a box whose text is exactly the instruction's weighted words (``sign in`` /
  ``Sign in``) scores 1.0; one that is exactly a quoted or parenthesised hint
  (``cancel saving (Cancel button)`` / ``Cancel``) 0.98;
* otherwise 0.9 x (0.75 recall + 0.25 precision), plus 0.1 when the box's whole text
  is a phrase of the instruction (``tap Edit at the top right``). Recall is the
  weighted share of the instruction's words found in the box, precision the share of
  the box's words found in the instruction; a word is found exactly (1), inside the
  other side's text with its spaces removed (1: OCR merges words, ``BlueBackpack``),
  by a shared stem (0.9: ``conversion``/``Convert``, ``forgotten``/``Forgot``), or by
  a :class:`difflib.SequenceMatcher` ratio of at least 0.75 (that ratio). A box that
  shares no word with the instruction scores 0. For Chinese, Japanese and Korean
  instructions (no spaces), a box whose text occurs in the instruction gets the share
  of its characters as recall.

The best box wins (ties: higher OCR confidence, then reading order); below
:data:`THRESHOLD` the model refuses.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import threading
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass
from typing import AbstractSet as Set, Any

from ..errors import ModelError
from ..geometry import from_original_pixels
from ..answers.region import parse_answer
from ..profiles import Profile
from .base import Case, Model, Prompt, Reply, SentImage, Settings, takes_no_argument

INSTALL_HINT = "pip install 'guitest[ocr]'  (or: pip install rapidocr-onnxruntime)"

THRESHOLD = 0.5
"""A best score below this is a refusal. A box naming exactly one of the instruction's
content words, as a phrase of it, scores 0.66 when the instruction has two content
words, 0.55 with three, 0.49 with four (refused); a box sharing no word with the
instruction scores 0. On the demo suite, text targets' best boxes score 0.56-1.0 and
most icon instructions' best boxes under 0.5."""

MIN_CONFIDENCE = 0.5
"""OCR lines recognised with a lower confidence are ignored."""

CACHE_SIZE = 32

FILLERS = frozenset(
    """
    a an the this that these those to of in on at for from with by into onto and or
    your my its it me please then now
    click tap press hit select choose pick open go show view display navigate switch toggle
    use find locate enter type check uncheck visit access bring up get
    start begin launch run do make perform want need would like about how
    """.split()
)
TYPE_WORDS = frozenset(
    """
    button buttons btn tab tabs icon icons link links menu menus item items field fields option options
    folder window page screen settings setting bar dialog panel box checkbox list section label entry
    top bottom left right corner
    """.split()
)
TYPE_WEIGHT = 0.3
NUMBER_WEIGHT = 1.5
FUZZY_TOKEN = 0.75
STEM_MATCH = 0.9
FUZZY_CAP = 0.9
RECALL_SHARE = 0.75
PHRASE_BONUS = 0.1
HINT_MATCH = 0.98
_CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff]")

_ENGINE: Any = None
_ENGINE_LOCK = threading.Lock()
_CACHE: OrderedDict[str, list[TextBox]] = OrderedDict()


@dataclass(frozen=True)
class TextBox:
    """One recognised line: its text, OCR confidence, and axis-aligned box in pixels of the image read."""

    text: str
    confidence: float
    box: tuple[float, float, float, float]

    @property
    def center(self) -> tuple[float, float]:
        x1, y1, x2, y2 = self.box
        return ((x1 + x2) / 2, (y1 + y2) / 2)


def engine() -> Any:
    """The process's RapidOCR engine, created on first use; a ModelError with the install command when missing."""
    global _ENGINE
    with _ENGINE_LOCK:
        if _ENGINE is None:
            try:
                from rapidocr_onnxruntime import RapidOCR
            except ImportError as exc:
                raise ModelError(f"--model=ocr needs the OCR engine rapidocr-onnxruntime ({exc}); install it with: {INSTALL_HINT}") from exc
            _ENGINE = RapidOCR()
        return _ENGINE


def read_text(image: Any) -> list[TextBox]:
    """The text lines of a PIL image (RGB), cached by pixel content; boxes in pixels of ``image``."""
    import numpy as np

    rgb = image if image.mode == "RGB" else image.convert("RGB")
    key = hashlib.sha1(f"{rgb.size}".encode() + rgb.tobytes()).hexdigest()
    ocr = engine()
    with _ENGINE_LOCK:  # one image at a time: onnxruntime already uses every core for it
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
        bgr = np.ascontiguousarray(np.asarray(rgb)[:, :, ::-1])  # RapidOCR takes arrays as OpenCV BGR
        result, _elapsed = ocr(bgr, use_cls=False)  # screenshots have no upside-down text
        boxes = []
        for points, text, score in result or []:
            xs = [float(p[0]) for p in points]
            ys = [float(p[1]) for p in points]
            boxes.append(TextBox(str(text), float(score), (min(xs), min(ys), max(xs), max(ys))))
        _CACHE[key] = boxes
        while len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
        return boxes


# --- matching -------------------------------------------------------------------------


def normalize(text: str) -> str:
    """Lower case, NFKC, ``&`` as ``and``, apostrophes dropped, every run of other non-alphanumerics one space."""
    text = unicodedata.normalize("NFKC", text).lower().replace("&", " and ").replace("'", "").replace("’", "")
    return " ".join(re.findall(r"[^\W_]+", text))


def tokens(text: str) -> list[str]:
    return normalize(text).split()


def named(instruction: str) -> set[str]:
    """Words the instruction capitalises (not as its first word): names of elements (``the Go menu``, ``Other Locations``)."""
    words = re.findall(r"[^\W_]+", unicodedata.normalize("NFKC", instruction).replace("'", "").replace("’", ""))
    return {w.lower() for w in words[1:] if w[0].isupper()}


def weight(token: str, names: Set[str] = frozenset()) -> float:
    """A word's weight in the instruction: fillers 0, element-type words 0.3, numbers 1.5, others 1; a capitalised word 1 at least."""
    if any(ch.isdigit() for ch in token):
        return NUMBER_WEIGHT
    if token in names:
        return 1.0
    if token in FILLERS:
        return 0.0
    if token in TYPE_WORDS:
        return TYPE_WEIGHT
    return 1.0


def hints(instruction: str) -> list[str]:
    """Quoted or parenthesised phrases of the instruction without spaces or type words: ``(Cancel button)`` -> ``cancel``."""
    found = re.findall(r'"([^"]+)"|“([^”]+)”|\(([^)]+)\)|\[([^\]]+)\]', instruction)
    out = []
    for groups in found:
        phrase = next(g for g in groups if g)
        kept = [t for t in tokens(phrase) if weight(t) >= 1.0] or tokens(phrase)
        if kept:
            out.append("".join(kept))
    return out


def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def _token_match(token: str, others: list[str], compact: str) -> float:
    """How well ``token`` is found among ``others``: 1 when exact or inside ``compact`` (OCR merges words),
    0.9 for a shared stem (common prefix of 5+ letters, or the whole shorter word of 4+), else a difflib
    ratio >= FUZZY_TOKEN, else 0."""
    if token in others or ((len(token) >= 3 or _CJK.search(token)) and token in compact):
        return 1.0
    if len(token) >= 6 and token[: max(5, len(token) - 3)] in compact:
        return STEM_MATCH
    best = 0.0
    for other in others:
        prefix = len(os.path.commonprefix([token, other]))
        if prefix >= 5 or (prefix >= 4 and prefix == min(len(token), len(other))):
            best = max(best, STEM_MATCH)
        ratio = _ratio(token, other)
        if ratio >= FUZZY_TOKEN:
            best = max(best, ratio)
    return best


def _contains_phrase(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))


def score(instruction: str, text: str) -> float:
    """How well the recognised ``text`` matches ``instruction``, 0..1 (see the module docstring)."""
    q_all = tokens(instruction)
    b_all = tokens(text)
    b_compact = "".join(b_all)
    if not b_compact or not q_all:
        return 0.0
    names = named(instruction)
    q_content = [t for t in q_all if weight(t, names) > 0] or q_all
    weights = [weight(t, names) or 1.0 for t in q_content]
    q_compact = "".join(q_content)
    if b_compact == q_compact:
        return 1.0
    if b_compact in hints(instruction):
        return HINT_MATCH
    recall = sum(w * _token_match(t, b_all, b_compact) for t, w in zip(q_content, weights, strict=True)) / sum(weights)
    if recall == 0 and _CJK.search(q_compact) and len(b_compact) >= 2 and b_compact in q_compact:
        recall = len(b_compact) / len(q_compact)  # unspaced scripts: one "token" per clause, so count characters
    if recall == 0:
        return 0.0
    b_content = [t for t in b_all if weight(t, names) > 0] or b_all
    q_joined = "".join(q_all)
    precision = sum(_token_match(t, q_all, q_joined) for t in b_content) / len(b_content)
    value = FUZZY_CAP * (RECALL_SHARE * recall + (1 - RECALL_SHARE) * precision)
    if _contains_phrase(q_all, b_all) or (_CJK.search(b_compact) and b_compact in q_compact):
        value += PHRASE_BONUS
    return min(value, HINT_MATCH)


def best_match(instruction: str, boxes: list[TextBox]) -> tuple[TextBox | None, float]:
    """The box that best matches ``instruction`` and its score (None, 0.0 when there are no usable boxes)."""
    best: TextBox | None = None
    best_key = (-1.0, -1.0)
    for box in boxes:
        if box.confidence < MIN_CONFIDENCE:
            continue
        key = (round(score(instruction, box.text), 6), box.confidence)
        if key > best_key:
            best, best_key = box, key
    return best, max(best_key[0], 0.0)


# --- the adapter ----------------------------------------------------------------------


class OCRModel(Model):
    """Click the centre of the recognised text that best matches the instruction; refuse below :data:`THRESHOLD`.

    Looks at pixels: the base ``preprocess`` decodes and sizes the screenshot, and OCR
    reads that sent image. Answers in the profile's syntax and space, like the baselines.
    """

    threshold = THRESHOLD
    uses = ("concurrency", "min_pixels", "max_pixels")
    metered = False  # it reads text off the screen: no tokens, no price
    # Cached like any model (a re-run of the demo is free); the key carries the OCR package's
    # version and this matcher's, so a change of either never serves a stale answer.
    MATCHER_VERSION = 1

    def generation_settings(self) -> dict[str, Any]:
        from importlib.metadata import PackageNotFoundError, version

        try:
            engine = version("rapidocr-onnxruntime")
        except PackageNotFoundError:
            engine = "unknown"
        return {**super().generation_settings(), "threshold": self.threshold, "engine": engine, "matcher": self.MATCHER_VERSION}

    def generate(self, prompt: Prompt, image: SentImage, case: Case) -> Reply:
        if image.image is None:
            raise ModelError("the ocr model needs the screenshot's pixels, but preprocess gave none")
        boxes = read_text(image.image)
        box, value = best_match(case.sample.instruction, boxes)
        if box is None or value < self.threshold:
            return Reply(text=self.refusal(case))
        sw, sh = image.image.size
        ow, oh = case.original_size
        cx, cy = box.center
        pixel = (cx * ow / sw, cy * oh / sh)  # sent-image pixels -> original-image pixels
        space = "normalized" if self.space == "auto" else self.space
        x, y = from_original_pixels(pixel, space, case.sent_size, case.original_size)
        return Reply(text=self.profile.answer_text(x, y))

    def refusal(self, case: Case) -> str:
        """A refusal naming the instruction, unless naming it would make the reply parse as a point."""
        named = f'I cannot find "{case.sample.instruction}" on the screen: no recognised text matches it.'
        if parse_answer(named, self.profile.styles) is None:
            return named
        return "I cannot find the target on the screen: no recognised text matches the instruction."


def make(spec: str, arg: str, settings: Settings, profile: Profile, profile_reason: str) -> OCRModel:
    """``--model=ocr`` (it takes no argument)."""
    takes_no_argument(spec, arg)
    return OCRModel(spec, settings, profile, profile_reason)
