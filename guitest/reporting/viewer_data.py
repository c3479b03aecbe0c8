"""The report viewer's data: an index of every case (what the case list, its filters and its pictures need) and each
case's detail (reply, evidence, cost, an episode's steps), cut into chunks the page loads when a case is opened.

Everything here is plain builtins made once from the report; the viewer's script (``viewer/viewer.js``) only puts
them on the page as text (``textContent``, never markup), so a string from the report can never become markup.

The index (one JSON object)::

    {"format": 1, "token": str, "live": bool, "n": int,
     "verdicts": [str], "tags": [str], "values": [[str]],  # the names the entries number (values: per tag)
     "pictures": [src | [src, fallback]],                     # each distinct picture once
     "starts": [int],                                         # the index of each chunk's first case
     "cases": [{"id": str, "v": verdict number, "t": [value number per tag, -1 for none],
                "s": instruction, "r": the reply's last words (an episode: its last action),
                "p": picture number or -1, "g": [w, h, x1, y1, x2, y2, px, py] (the original's size, the truth
                box, the predicted point, each null where unknown; an episode: its screen's size; absent without a
                size), "k": steps and "sc": score (episodes)}]}

A chunk is a JSON list of consecutive cases' details (:func:`detail`), cut at about :data:`CHUNK_BYTES`. A
picture's source is a path relative to the page the data is built for (percent-encoded: it can only name a file; a
page elsewhere that shows a data folder, :func:`guitest.reporting.html.page_files`'s ``shown_by``, reads it from the
folder two levels above that data folder), a ``data:image/``
URI, or ``@name``: a file in the data folder (an embedded thumbnail written as a file). A picture outside the
report folder carries its absolute ``file:`` URI as a fallback, so the page still finds it when the report
folder has been moved on the same machine.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import math
import os
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import strictjson
from ..verdict import CaseResult
from .document import Report
from .thumbnails import THUMBNAIL_SUFFIX, is_embedded, link

FORMAT = 1
#: a chunk's size: large enough that a 50,000-case run needs no more than a few hundred files, small enough that
#: opening a case reads and parses it in a few milliseconds
CHUNK_BYTES = 256 << 10
#: how much of a reply the case list shows (its end: where the answer is)
TAIL_CHARS = 160
#: an embedded picture written into the data folder: ``@img/<digest>.<ext>``
IMAGE_FOLDER = "img"
#: the token's place while the data it names is digested (as long as a token)
UNSET = "0" * 16
MIME_EXTENSIONS = {"image/jpeg": "jpg", "image/png": "png", "image/webp": "webp", "image/gif": "gif"}


@dataclass
class ViewerData:
    """The viewer's data for one page: the index and the chunks as JSON texts, and the pictures written as files
    (``images``: a name in the data folder -> bytes; empty when pictures stay inline). ``token`` names this data
    (a digest of it): a page and the data folder it names must carry the same."""

    token: str
    index: str
    chunks: list[str]
    images: dict[str, bytes] = field(default_factory=dict)


def build(report: Report, pictures: Mapping[str, str], page_dir: Any, files_dir: Any, originals: Mapping[str, str] | None = None, *, as_files: bool = True, salt: str = "") -> ViewerData:
    """The viewer's data of ``report`` for a page in ``page_dir``.

    ``pictures``: case id -> its picture (a ``data:image/`` URI, or an absolute path to link); ``originals``: case id
    -> the screenshot's absolute path behind an embedded picture (the full screenshot, one click away). Episode
    screenshots are the report's references, relative to ``files_dir`` (the report folder). ``as_files``: embedded
    pictures become files of the data folder (else they stay ``data:`` URIs, for a page that carries everything).
    ``salt`` enters the token (the viewer's script: new code, new token)."""
    links = Links(page_dir, files_dir, as_files)
    cases = report["cases"]
    verdicts: Numbered = Numbered()
    tags = tag_names(report, cases)
    values = [Numbered() for _ in tags]
    shown = _Pictures()
    live = report["suite"].get("task") == "live"
    entries: list[dict[str, Any]] = []
    details: list[str] = []
    for case in cases:
        cid = str(case.get("id", ""))
        found = detail(case, links, (originals or {}).get(cid))
        src = links.picture(pictures.get(cid)) if pictures.get(cid) else None
        if src is None and found.get("episodes"):
            src = _episode_picture(found["episodes"][0])
        entries.append(_entry(case, cid, found, shown.number(src), verdicts, tags, values, live))
        details.append(strictjson.dumps(found))
    starts, chunks = cut(details, CHUNK_BYTES)
    index: dict[str, Any] = {
        "format": FORMAT,
        "token": UNSET,
        "live": live,
        "n": len(entries),
        "verdicts": verdicts.names,
        "tags": tags,
        "values": [v.names for v in values],
        "pictures": shown.sources,
        "starts": starts,
        "cases": entries,
    }
    text = strictjson.dumps(index)
    token = _token(salt, text, chunks, links.images)
    return ViewerData(token, text.replace(strictjson.dumps(UNSET), strictjson.dumps(token), 1), chunks, dict(links.images))


class _Pictures:
    """The index's pictures, each distinct source once, numbered in the order first seen."""

    def __init__(self) -> None:
        self.sources: list[Any] = []
        self._numbers: dict[str, int] = {}

    def number(self, src: Any) -> int:
        """The number of the picture ``src`` (a source, or a list of a source and its fallback); -1 for None."""
        if src is None:
            return -1
        key = src if isinstance(src, str) else "\n".join(src)
        if key not in self._numbers:
            self._numbers[key] = len(self.sources)
            self.sources.append(src)
        return self._numbers[key]


def _entry(case: CaseResult, cid: str, found: Mapping[str, Any], picture: int, verdicts: Numbered, tags: list[str], values: list[Numbered], live: bool) -> dict[str, Any]:
    """A case's entry in the index (see the module docstring), its names numbered by ``verdicts`` and ``values`` (one per tag of ``tags``)."""
    case_tags = given if isinstance(given := case.get("tags"), Mapping) else {}
    entry: dict[str, Any] = {
        "id": cid,
        "v": verdicts.number(str(case.get("verdict", ""))),
        "t": [values[i].number(str(case_tags[name])) if name in case_tags else -1 for i, name in enumerate(tags)],
        "s": str(case.get("instruction") or ""),
        "r": _tail(case, found),
        "p": picture,
    }
    shape = geometry(case)
    if shape is not None:
        entry["g"] = shape
    if live or case.get("episode"):
        entry["k"] = case.get("steps") if type(case.get("steps")) is int else None
        entry["sc"] = number(case.get("score"))
    return entry


def _token(salt: str, text: str, chunks: list[str], images: Mapping[str, bytes]) -> str:
    """The data's token: a digest of ``salt``, the index ``text`` (its token unset), the chunks and the pictures' names."""
    digest = hashlib.sha256(salt.encode("utf-8"))
    for part in (text, *chunks, *sorted(images)):
        digest.update(strictjson.encode(part))
    return digest.hexdigest()[: len(UNSET)]


def cut(details: list[str], budget: int) -> tuple[list[int], list[str]]:
    """``details`` (each a JSON text) joined into JSON lists of about ``budget`` characters each (a larger detail is a
    chunk of its own); the index of each chunk's first detail, and the chunks."""
    starts: list[int] = []
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for i, text in enumerate(details):
        if current and size + len(text) > budget:
            chunks.append("[" + ",".join(current) + "]")
            current, size = [], 0
        if not current:
            starts.append(i)
        current.append(text)
        size += len(text) + 1
    if current:
        chunks.append("[" + ",".join(current) + "]")
    return starts, chunks


class Numbered:
    """Names numbered in the order first seen."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._numbers: dict[str, int] = {}

    def number(self, name: str) -> int:
        """``name``'s number (a new one for a name not seen before)."""
        found = self._numbers.get(name)
        if found is None:
            found = self._numbers[name] = len(self.names)
            self.names.append(name)
        return found


def tag_names(report: Report, cases: Iterable[CaseResult]) -> list[str]:
    """The tags the viewer filters by: the report's breakdowns (not their crossings), then every other tag a case
    carries, in the order first seen."""
    names: list[str] = [n for n in report["breakdown"] if "/" not in n]
    seen = set(names)
    for case in cases:
        tags = case.get("tags")
        if isinstance(tags, Mapping):
            for key in tags:
                if str(key) not in seen:
                    seen.add(str(key))
                    names.append(str(key))
    return names


# -- where the pictures are ---------------------------------------------------------------------------------------------


class Links:
    """The sources a page in ``page_dir`` shows its pictures by (see the module docstring). Each folder's link is made
    once (a run names tens of thousands of files in a few folders)."""

    def __init__(self, page_dir: Any, files_dir: Any, as_files: bool) -> None:
        self.page_dir = page_dir
        self.files_dir = os.path.abspath(files_dir) if files_dir is not None else None
        self.as_files = as_files
        self.images: dict[str, bytes] = {}
        self._folders: dict[str, tuple[str | None, str, bool]] = {}
        self._listed: dict[str, frozenset[str]] = {}
        self._pictures: dict[str, str | list[str] | None] = {}

    def picture(self, value: Any) -> str | list[str] | None:
        """A case's picture (a ``data:image/`` URI or an absolute path) as a source; None for anything else (a URL, a
        relative path: the page never loads a resource from elsewhere)."""
        if not isinstance(value, str):
            return None
        if value in self._pictures:
            return self._pictures[value]
        found: str | list[str] | None
        if is_embedded(value):
            found = self._embedded(value)
        elif not os.path.isabs(value) or "\x00" in value:
            found = None
        else:
            folder, name = os.path.split(value)
            prefix, absolute, inside = self._folder(folder)
            if prefix is None:
                found = None
            elif self.page_dir is not None and not prefix.startswith("file:") and not inside:
                found = [prefix + _quote(name), absolute + _quote(name)]  # outside the report folder: its absolute place, should the folder move
            else:
                found = prefix + _quote(name)
        self._pictures[value] = found
        return found

    def episode(self, ref: Any) -> tuple[str, str | None] | None:
        """An episode screenshot the report names relative to the report folder (never outside it): its source and its
        thumbnail's (None when it has none); None when there is no such reference or no report folder."""
        if self.files_dir is None or not isinstance(ref, str) or not ref or os.path.isabs(ref) or "\x00" in ref:
            return None
        folder, name = os.path.split(os.path.normpath(os.path.join(self.files_dir, ref)))
        prefix, _, inside = self._folder(folder)
        if prefix is None or not inside:
            return None
        thumb = os.path.splitext(name)[0] + THUMBNAIL_SUFFIX
        return prefix + _quote(name), (prefix + _quote(thumb) if thumb in self._names(folder) else None)

    def _folder(self, folder: str) -> tuple[str | None, str, bool]:
        """A folder's link from the page (what :func:`~guitest.reporting.thumbnails.link` gives a file in it, less the
        file's name), its ``file:`` URI, and whether it is inside the report folder."""
        found = self._folders.get(folder)
        if found is None:
            probe = os.path.join(folder, "x")
            linked = link(probe, self.page_dir)
            found = self._folders[folder] = (None if linked is None else linked[:-1], Path(probe).as_uri()[:-1], self._inside(folder))
        return found

    def _names(self, folder: str) -> frozenset[str]:
        """The names of the thumbnails in ``folder``, listed once (an episode's folder holds all its steps)."""
        names = self._listed.get(folder)
        if names is None:
            try:
                names = frozenset(n for n in os.listdir(folder) if n.endswith(THUMBNAIL_SUFFIX))
            except OSError:
                names = frozenset()
            self._listed[folder] = names
        return names

    def _inside(self, path: str) -> bool:
        if self.files_dir is None:
            return False
        try:
            return os.path.commonpath([self.files_dir, os.path.abspath(path)]) == self.files_dir
        except ValueError:  # another drive
            return False

    def _embedded(self, uri: str) -> str | None:
        if not self.as_files:
            return uri
        head, _, data = uri.partition(",")
        mime = head[len("data:") :].split(";", 1)[0].lower()
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            return None
        name = f"{IMAGE_FOLDER}/{hashlib.sha256(raw).hexdigest()[:20]}.{MIME_EXTENSIONS.get(mime, 'img')}"
        self.images[name] = raw
        return "@" + name


# -- one case -------------------------------------------------------------------------------------------------------------


def detail(case: CaseResult, links: Links, original: str | None = None) -> dict[str, Any]:
    """What the viewer shows of one case when it is opened: its tags, instruction, reply, error, the score's evidence
    (``meta``: the truth, the prediction, sizes, notes), its cost, the full screenshot behind an embedded picture
    (``full``; the picture itself and what is drawn on it are the index's), other attempts, and each episode with
    every step."""
    tags = given if isinstance(given := case.get("tags"), Mapping) else {}
    out: dict[str, Any] = {
        "id": str(case.get("id", "")),
        "verdict": str(case.get("verdict", "")),
        "tags": [[str(k), str(v)] for k, v in tags.items()],
        "instruction": _text(case.get("instruction")),
        "reply": _text(case.get("response")),
        "error": _text(case.get("error")),
        "meta": meta(case),
        "cost": cost(case),
    }
    if original is not None:
        full = links.picture(original)
        if full is not None:
            out["full"] = full
    attempts = [a for a in case.get("attempts") or () if isinstance(a, Mapping)]
    episodes = []
    if attempts and any(isinstance(a.get("episode"), Mapping) for a in attempts):
        for number, attempt in enumerate(attempts, 1):
            if isinstance(attempt.get("episode"), Mapping):
                episodes.append(episode(attempt, links, f"attempt {number}", number))
    elif isinstance(case.get("episode"), Mapping):
        episodes.append(episode(case, links, None, 0))
    elif attempts:
        out["attempts"] = [{"verdict": str(a.get("verdict", "")), "reply": _text(a.get("response")), "error": _text(a.get("error")), "meta": _prediction_meta(a.get("prediction"))} for a in attempts]
    if episodes:
        out["episodes"] = episodes
    return out


def meta(case: CaseResult) -> list[str]:
    """The score's evidence in words: the truth, the predicted point and how it was read, the image's size and the size
    sent, the finish reason, the image file, the cache, the notes."""
    out = []
    truth = _box(case.get("truth"))
    if truth is not None:
        out.append("truth [" + ", ".join(f"{v:g}" for v in truth) + "]")
    elif case.get("truth") is not None:
        out.append("truth " + _fmt(case.get("truth")))
    out += _prediction_meta(case.get("prediction"))
    size = _point(case.get("size"))
    if size is not None:
        out.append(f"image {size[0]:g}×{size[1]:g}")
    sent = _point(case.get("sent_size"))
    if sent is not None and sent != size:
        out.append(f"sent {sent[0]:g}×{sent[1]:g}")
    if case.get("finish_reason"):
        out.append(f"finish {case['finish_reason']}")
    if case.get("image"):
        out.append(str(case["image"]))
    if case.get("cached"):
        recorded = case.get("cached_recorded")
        out.append("reply from the response cache" + (f" (recorded {recorded})" if recorded else ""))
    notes = case.get("notes")
    if isinstance(notes, list) and notes:
        out.append("notes: " + ", ".join(str(n) for n in notes))
    return out


def _prediction_meta(prediction: Any) -> list[str]:
    if not isinstance(prediction, Mapping):
        return []
    out = []
    pixel = _point(prediction.get("pixel"))
    if pixel is not None:
        out.append(f"predicted ({pixel[0]:g}, {pixel[1]:g})")
    if prediction.get("via"):
        out.append(f"via {prediction['via']}")
    return out


def cost(case: Mapping[str, Any]) -> str | None:
    """What the case's model calls used and cost, in words (:func:`guitest.reporting.costs.describe`), None when it made none."""
    if not (isinstance(case.get("usage"), Mapping) or isinstance(case.get("cached_usage"), Mapping)):
        return None
    from . import costs

    try:
        tally = costs.both(case)
        said = costs.describe(tally)
    except (TypeError, ValueError, KeyError, AttributeError):  # an old or hand-written report's odd usage: shown as it is
        return _fmt({k: case.get(k) for k in ("usage", "cached_usage") if case.get(k) is not None})
    if isinstance(case.get("cached_usage"), Mapping) and case["cached_usage"]:
        said += " (with replies the response cache answered, at what they cost when made)"
    return said


def episode(row: Mapping[str, Any], links: Links, label: str | None, attempt: int) -> dict[str, Any]:
    """One episode (a case's, or one attempt's with --repeats): how it ended and why (the evidence), and every step:
    its screenshot and thumbnail, the actions that ran drawn on it, the actions read, notes, the reply, and what the
    step took (time, tokens)."""
    record = row["episode"]
    prediction = row.get("prediction") if isinstance(row.get("prediction"), Mapping) else {}
    steps = [s for s in record.get("trajectory") or () if isinstance(s, Mapping)]
    out: dict[str, Any] = {
        "label": label,
        "attempt": attempt,
        "verdict": str(row.get("verdict", "")),
        "outcome": _outcome(record, len(steps)),
        "evidence": _evidence(record, prediction or {}),
    }
    size = _size(record.get("screen_size"))
    if size is not None:
        out["size"] = list(size)
    out["steps"] = [_step(step, links, i) for i, step in enumerate(steps, 1)]
    final = links.episode(record.get("final_screenshot"))
    if final is not None:
        out["final"] = {"src": final[0], "thumb": final[1], "end": _text(record.get("end"))}
    return out


def _outcome(record: Mapping[str, Any], steps: int) -> str:
    said = "success" if record.get("success") else "no success"
    return f"{said}, score {number3(record.get('score'))}, {steps} step(s), {number3(record.get('wall_seconds'))} s"


def _evidence(record: Mapping[str, Any], prediction: Mapping[str, Any]) -> list[str]:
    """Why the episode scored as it did: how it ended, the check's reason and who decided, the error, the machine's
    state, and where the time went."""
    out = []
    if record.get("end"):
        out.append(f"ended: {record['end']}")
    if record.get("reason"):
        out.append(f"check: {record['reason']}")
    if record.get("decided_by"):
        out.append(f"decided by: {record['decided_by']}")
    if record.get("error"):
        source = f" ({record['error_source']})" if record.get("error_source") else ""
        out.append(f"error{source}: {record['error']}")
    if prediction.get("reset"):
        out.append(f"machine: {prediction['reset']}" + (" (an unknown state: nothing reset it)" if prediction["reset"] == "none" else ""))
    where = [f"{name} {number3(record.get(key))} s" for name, key in (("environment", "env_seconds"), ("policy", "policy_seconds")) if number(record.get(key)) is not None]
    if where:
        out.append("time: " + ", ".join(where))
    if record.get("task") or record.get("seed") is not None:
        out.append(f"task {record.get('task') or '–'}, seed {_fmt(record.get('seed'))}" + (f", environment {record['env']}" if record.get("env") else ""))
    return out


def _step(step: Mapping[str, Any], links: Links, position: int) -> dict[str, Any]:
    actions = step_actions(step)
    executed = given if isinstance(given := step.get("executed"), int) and not isinstance(given, bool) else len(actions)
    read = _text(step.get("text")) or ("(no readable action)" if not actions else "; ".join(str(a.get("kind")) for a in actions))
    if executed < len(actions):
        read += f" (actions {executed + 1}-{len(actions)} not run)" if len(actions) - executed > 1 else f" (action {len(actions)} not run)"
    number = step.get("number")
    out: dict[str, Any] = {
        "n": number if isinstance(number, int) and not isinstance(number, bool) else position,
        "read": read,
        "marks": marks(actions[: max(executed, 0)], len(actions) > 1),
        "notes": ", ".join(str(n) for n in step.get("notes") or ()) if isinstance(step.get("notes"), list) else "",
        "reply": _text(step.get("reply")),
        "meta": _step_meta(step),
    }
    shot = links.episode(step.get("screenshot"))
    if shot is not None:
        out["src"], out["thumb"] = shot
    return out


def step_actions(step: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A step's actions in order: its ``actions`` list (a report from before several actions per step: its ``action``)."""
    actions = step.get("actions")
    if isinstance(actions, list):
        return [a for a in actions if isinstance(a, Mapping)]
    single = step.get("action")
    return [single] if isinstance(single, Mapping) else []


def marks(actions: list[Mapping[str, Any]], numbered: bool) -> list[list[Any]]:
    """The actions that ran, as marks on their screenshot (its pixels): ``[x, y]``, a drag ``[x, y, x2, y2]``, each
    with its number (1-based, in the step) last when the step read several actions: ``[x, y, None, None, 2]``."""
    out: list[list[Any]] = []
    for number, action in enumerate(actions, 1):
        point, end = _point(action.get("point")), _point(action.get("end"))
        if point is None:
            continue
        mark: list[Any] = [point[0], point[1]]
        if end is not None:
            mark += [end[0], end[1]]
        if numbered:
            mark += [None] * (4 - len(mark)) + [number]
        out.append(mark)
    return out


def _step_meta(step: Mapping[str, Any]) -> str:
    parts = []
    policy, env = number(step.get("policy_seconds")), number(step.get("env_seconds"))
    if policy is not None:
        parts.append(f"model {policy:.2f} s")
    if env is not None:
        parts.append(f"environment {env:.2f} s")
    usage = step.get("usage")
    if isinstance(usage, Mapping):
        tokens = [f"{k.removesuffix('_tokens').replace('_', ' ')} {v:,}" for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)]
        if tokens:
            parts.append("tokens: " + ", ".join(tokens))
    if step.get("finish_reason"):
        parts.append(f"finish {step['finish_reason']}")
    if step.get("cached"):
        parts.append("reply from the response cache")
    return " · ".join(parts)


def _episode_picture(found: Mapping[str, Any]) -> str | None:
    """The picture of an episode's card: its final screen, else its last step's (the thumbnail where there is one)."""
    final = found.get("final")
    candidates = ([final] if isinstance(final, Mapping) else []) + list(reversed(found.get("steps") or []))
    for shot in candidates:
        src = shot.get("thumb") or shot.get("src")
        if src:
            return str(src)
    return None


def _tail(case: CaseResult, found: Mapping[str, Any]) -> str:
    """The end of the reply (where the answer is), for the case list; an episode's: its last step's actions."""
    episodes = found.get("episodes")
    if episodes and episodes[0].get("steps"):
        text = str(episodes[0]["steps"][-1].get("read") or "")
    else:
        text = str(case.get("response") or "")
    text = " ".join(text[-4 * TAIL_CHARS :].split())
    return text if len(text) <= TAIL_CHARS else "…" + text[-TAIL_CHARS:]


def geometry(case: CaseResult) -> list[float | None] | None:
    """The card's picture's shape and what is drawn on it: the original's size, the truth box, the predicted point
    (an episode: its screen's size alone)."""
    size = _size(case.get("size"))
    if size is None:
        episode = case.get("episode")
        screen = _size(episode.get("screen_size")) if isinstance(episode, Mapping) else None
        return None if screen is None else [screen[0], screen[1], None, None, None, None, None, None]
    truth = _box(case.get("truth"))
    prediction = case.get("prediction")
    pixel = _point(prediction.get("pixel")) if isinstance(prediction, Mapping) else None
    return [size[0], size[1], *(truth if truth is not None else [None] * 4), *(pixel if pixel is not None else (None, None))]


# -- small helpers ------------------------------------------------------------------------------------------------------


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def number(value: Any) -> float | None:
    """A finite number as a float; None for anything else (a bool, a string, NaN)."""
    kind = type(value)  # not isinstance: a bool is no number here, and this runs some twenty times per case
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is int:
        return float(value)
    return None


def number3(value: Any) -> str:
    """A number to three decimals ('–' for none)."""
    found = number(value)
    return "–" if found is None else f"{found:.3f}"


def _fmt(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return strictjson.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def _box(value: Any) -> list[float] | None:
    if isinstance(value, (list, tuple)) and len(value) == 4:
        nums = [n for v in value if (n := number(v)) is not None]
        if len(nums) == 4:
            return nums
    return None


def _point(value: Any) -> tuple[float, float] | None:
    if isinstance(value, (list, tuple)) and len(value) == 2:
        x, y = number(value[0]), number(value[1])
        if x is not None and y is not None:
            return x, y
    return None


def _size(value: Any) -> tuple[float, float] | None:
    size = _point(value)
    return size if size is not None and size[0] > 0 and size[1] > 0 else None


def js(call: str, *arguments: str, data: str) -> bytes:
    """A script file that calls ``window.guitestViewer.<call>`` with ``arguments`` (each a JavaScript literal) and the
    JSON text ``data``, parsed by ``JSON.parse`` from a string literal: V8 reads a large object literal as code, which
    took 3.5 s for a 50,000-episode index in Chromium where ``JSON.parse`` of the same text took 0.4 s."""
    literal = "'" + data.replace("\\", "\\\\").replace("'", "\\'") + "'"  # JSON has no raw line break; U+2028 is allowed in a string since ES2019
    return strictjson.encode(f"window.guitestViewer.{call}({','.join(arguments)},JSON.parse({literal}));\n")


def folder_files(data: ViewerData, folder: Path, script: bytes) -> dict[Path, bytes]:
    """The data folder's files for ``data`` under ``folder`` (the page's ``<stem>_files/<token>/``): the viewer's
    ``script``, ``index.js``, ``c/<k>.js`` per chunk and the pictures written as files."""
    token = strictjson.dumps(data.token)
    out = {folder / "viewer.js": script, folder / "index.js": js("index", token, data=data.index)}
    for k, chunk in enumerate(data.chunks):
        out[folder / "c" / f"{k}.js"] = js("chunk", token, str(k), data=chunk)
    for name, raw in data.images.items():
        out[folder / name] = raw
    return out


def inline_blocks(data: ViewerData) -> str:
    """The index and the chunks as JSON blocks of a page that carries its data (``<script type="application/json">``:
    never run, read by the viewer when needed); ``<`` is written ``\\u003c``, so no text can end the block."""
    blocks = [f'<script type="application/json" id="gv-index">{_safe(data.index)}</script>']
    blocks += [f'<script type="application/json" id="gv-chunk-{k}">{_safe(chunk)}</script>' for k, chunk in enumerate(data.chunks)]
    return "".join(blocks)


def _quote(name: str) -> str:
    """A file's name in a link, as :func:`~guitest.reporting.thumbnails.link` writes it (percent-encoded)."""
    return urllib.parse.quote(name, safe="/")


def _safe(text: str) -> str:
    return text.replace("<", "\\u003c")
