"""The HTML report: escaping, self-containment, linked and embedded screenshots, and a real browser (Debian's chromium via Playwright).

The browser test needs ``/usr/bin/chromium`` (``apt-get install chromium``) and the
``playwright`` Python package (``pip install playwright``; no ``playwright install``:
it drives the system chromium). Without them it is skipped with the reason. It saves
a screenshot of the page into its tmp_path, or into ``$GUITEST_HTML_SCREENSHOTS`` when set.
"""

from __future__ import annotations

import base64
import hashlib
import io
import math
import os
import re
import shutil
import urllib.parse
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Iterator

import pytest
from PIL import Image, ImageChops, ImageDraw, ImageStat

import chromium
from builders import n_rows, write_suite
from guitest.images import thumbnail
from guitest.reporting import html as html_report
from guitest.reporting import thumbnails, writer
from guitest.reporting.html import render
from pages import data_folder, data_root, pictures, viewer_data

SCREENSHOT_ENV = "GUITEST_HTML_SCREENSHOTS"

EVIL_SCRIPT = "<script>window.__pwned = 1</script>"
EVIL_IMG = '<img src=x onerror="window.__pwned=2">'
VERDICTS = ("hit", "miss", "unparsed", "refused", "truncated", "error")


def _wilson(hits: int, n: int) -> list[float]:
    if n == 0:
        return [0.0, 0.0]
    z = 1.959963984540054
    p = hits / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return [round(max(0.0, c - h), 6), round(min(1.0, c + h), 6)]


def _counts(cases: list[dict[str, Any]]) -> dict[str, Any]:
    table = {v: sum(c["verdict"] == v for c in cases) for v in VERDICTS}
    scored = len(cases) - table["error"]
    return {"n": len(cases), **table, "accuracy": round(table["hit"] / scored, 6) if scored else None, "ci95": _wilson(table["hit"], scored)}


def screenshot(size: tuple[int, int] = (1920, 1080), seed: int = 0) -> Image.Image:
    """A synthetic screenshot: a window with a title bar, a sidebar and some buttons."""
    im = Image.new("RGB", size, (236, 239, 243))
    d = ImageDraw.Draw(im)
    w, h = size
    d.rectangle([0, 0, w, h // 20], fill=(40, 44, 52))
    d.rectangle([0, h // 20, w // 6, h], fill=(250, 250, 252))
    for i in range(8):
        y = h // 10 + i * h // 12
        d.rectangle([w // 4 + seed * 7, y, w // 4 + w // 3, y + h // 24], fill=(60 + 20 * i, 110, 200 - 10 * i))
    return im


def make_case(cid: str, verdict: str, tags: dict[str, str], response: str | None, **extra: Any) -> dict[str, Any]:
    case = {
        "id": cid,
        "verdict": verdict,
        "tags": tags,
        "prediction": None,
        "response": response,
        "truth": [1200, 300, 1400, 380],
        "size": [1920, 1080],
        "sent_size": [1920, 1080],
        "image": f"{cid}.png",
        "notes": [],
    }
    if verdict in ("hit", "miss"):
        case["prediction"] = {"point": [0.5, 0.5], "pixel": [1300.0, 340.0] if verdict == "hit" else [300.0, 900.0], "space": "normalized", "via": "answer+pair"}
    case.update(extra)
    return case


def make_report(cases: list[dict[str, Any]], tag_names: tuple[str, ...] = ("ui_type", "platform")) -> dict[str, Any]:
    breakdown = {}
    for name in tag_names:
        values = sorted({c["tags"][name] for c in cases if name in c["tags"]})
        breakdown[name] = {v: _counts([c for c in cases if c["tags"].get(name) == v]) for v in values}
    overall = _counts(cases)
    return {
        "guitest": "0.1.0",
        "suite": {"name": "toy<suite>", "path": "suites/toy/suite.yaml", "format": "screenspot", "task": "grounding"},
        "model": {
            "spec": "openai:evil-<b>model</b>",
            "adapter": "OpenAI",
            "space": "normalized",
            "profile": {
                "name": "generic",
                "space": "normalized",
                "sizing": {"kind": "keep", "factor": 28, "min_pixels": None, "max_pixels": None},
                "prompt": "Find {instruction}. Answer: [x, y]",
                "system": None,
            },
            "profile_reason": "default for this model",
            "settings": {"temperature": 0.0, "max_tokens": 512, "seed": 7, "base_url": "http://gpu-box:8000/v1"},
        },
        "n_selected": len(cases),
        "n_results": len(cases),
        "complete": True,
        "missing": [],
        "headline": {"average": "micro", "over": None, "accuracy": overall["accuracy"], "micro": overall["accuracy"], "macro": None, "what": "hits over all scored cases"},
        "overall": overall,
        "breakdown": breakdown,
        "macro": {n: None for n in tag_names},
        "notes": {},
        "gate": {"thresholds": {"accuracy": 0.5}, "failures": ["overall accuracy 0.4000 < 0.5000"], "passed": False},
        "cases": cases,
        "run": {"data_root": "/data/<root>", "data_root_source": "--data-root", "started": "2025-01-01T00:00:00+0000", "seconds": 1.5, "workers": 0},
    }


def sample_report() -> dict[str, Any]:
    """Seven cases: 2 hits, 2 misses (one replying with markup), unparsed, refused, error. Accuracy 2/6."""
    cases = [
        make_case("text-win-1", "hit", {"ui_type": "text", "platform": "windows"}, "Answer: [0.677, 0.315]", instruction="open the File menu"),
        make_case("text-mac-2", "hit", {"ui_type": "text", "platform": "macos"}, "Answer: [0.677, 0.315]"),
        make_case("icon-win-3", "miss", {"ui_type": "icon", "platform": "windows"}, f"I will click here {EVIL_SCRIPT} {EVIL_IMG} Answer: [0.15, 0.83]", instruction='close the "<dialog>" & quit'),
        make_case("icon-mac-4", "miss", {"ui_type": "icon", "platform": "macos"}, "Answer: [0.15, 0.83]"),
        make_case("icon-win-5", "unparsed", {"ui_type": "icon", "platform": "windows"}, "I cannot tell </pre><script>window.__pwned=3</script>"),
        make_case("text-mac-6", "refused", {"ui_type": "text", "platform": "macos"}, "The element is not on the screen."),
        make_case("text-win-7", "error", {"ui_type": "text", "platform": "windows"}, None, error="ModelError: <timeout> after 3 retries"),
    ]
    return make_report(cases)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def parse_tags(page: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    """Every start tag of the page with its attributes (entity references decoded)."""
    parser = _Tags()
    parser.feed(page)
    parser.close()
    return parser.tags


# -- plain tests ----------------------------------------------------------------------------------


def test_thumbnail_is_a_small_jpeg_data_uri() -> None:
    big = screenshot((3840, 2160))
    before = big.tobytes()[:1000]
    uri = thumbnail(big)
    assert uri.startswith("data:image/jpeg;base64,")
    data = base64.b64decode(uri.split(",", 1)[1])
    assert len(data) < 15_000
    with Image.open(io.BytesIO(data)) as im:
        assert im.format == "JPEG" and im.size == (320, 180)
    assert big.size == (3840, 2160) and big.tobytes()[:1000] == before  # the input is left alone


@pytest.mark.parametrize("mode", ["RGBA", "LA", "P", "L", "I;16", "CMYK"])
def test_thumbnail_any_mode(mode: str) -> None:
    im = screenshot((1000, 2000)).convert(mode if mode not in ("LA", "I;16") else "L")
    if mode == "LA":
        im = im.convert("LA")
    elif mode == "I;16":
        im = Image.new("I;16", (1000, 2000), 300)
    uri = thumbnail(im, max_side=100, quality=50)
    with Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))) as out:
        assert out.size == (50, 100)


def test_thumbnail_never_enlarges() -> None:
    uri = thumbnail(screenshot((200, 100)), max_side=320)
    with Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))) as out:
        assert out.size == (200, 100)


def test_the_settings_name_where_the_suites_data_came_from() -> None:
    """Before: the demo's page named the data root (~/.local/share/guitest), though its data comes from suites/demo/data."""
    report = sample_report()
    report["run"] |= {"data_root": "/home/u/.local/share/guitest", "data": "/repo/suites/demo/data (its own data, beside the suite file)"}
    page = render(report)
    assert '<th scope="row">data</th><td>/repo/suites/demo/data (its own data, beside the suite file)</td>' in page
    assert ".local/share/guitest" not in page
    del report["run"]["data"]  # a Python suite: its data is the test's own, guitest knows only the data root
    assert '<th scope="row">data root</th><td>/home/u/.local/share/guitest (from --data-root)</td>' in render(report)


def test_the_settings_say_a_serial_run_is_serial_not_workers_0() -> None:
    report = sample_report()  # run.workers 0: pytest-xdist's -n was not given
    assert '<th scope="row">workers</th><td>serial (one process, no -n)</td>' in render(report)
    report["run"]["workers"] = 4
    assert '<th scope="row">workers</th><td>4 (pytest-xdist -n)</td>' in render(report)
    report["run"]["merged_shards"] = [{"path": "shard-1/toy.json", "shard": "1/2"}, {"path": "shard-2/toy.json", "shard": "2/2"}]
    assert '<th scope="row">workers</th><td>4 in all (the shards&#x27; -n, summed; a serial shard counts 0)</td>' in render(report)


def _blocks(page: str) -> list[str]:
    return re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', page, re.S)


def test_render_escapes_every_report_string() -> None:
    report = sample_report()
    page = render(report)
    assert EVIL_SCRIPT not in page and EVIL_IMG not in page
    assert "<script>window.__pwned" not in page and 'onerror="window' not in page
    assert "</pre><script>" not in page
    # Parsed as a browser would tokenize it: the cases' data blocks (JSON, never run) and the page's own script, no
    # event handler attributes, no img (the viewer makes them).
    tags = parse_tags(page)
    assert [dict(a).get("type") for t, a in tags if t == "script"] == ["application/json", "application/json", None]  # the index, one chunk, the viewer
    assert [(t, a) for t, attrs in tags for a, _ in attrs if a.startswith("on")] == []
    assert "img" not in [t for t, _ in tags]
    # No text in the data can end its block or open a tag: every '<' in it is written \u003c.
    assert all("<" not in block for block in _blocks(page)) and "\\u003cscript>window.__pwned = 1\\u003c/script>" in page
    for raw in ("toy<suite>", "evil-<b>model</b>", "/data/<root>", "<timeout>", '"<dialog>"'):
        assert raw not in page
    assert "/data/&lt;root&gt; (from --data-root)" in page  # the first screen is HTML, escaped
    # the data keeps every string as it is (the viewer sets each as text)
    index, details = viewer_data(page)
    by_id = {d["id"]: d for d in details}
    assert by_id["icon-win-3"]["instruction"] == 'close the "<dialog>" & quit' and EVIL_SCRIPT in by_id["icon-win-3"]["reply"]
    assert by_id["text-win-7"]["error"] == "ModelError: <timeout> after 3 retries"


def test_render_has_settings_tables_charts_and_filters() -> None:
    report = sample_report()
    page = render(report)
    for needle in (
        "temperature",
        "max_tokens",
        "generic",
        "keep",
        "0.1.0",
        "/data/&lt;root&gt;",
        "default for this model",
        'id="results-table"',
        'class="chart"',
        'id="f-verdict"',
        'data-tag="ui_type"',
        'data-tag="platform"',
        'id="f-text"',
        'id="cards"',
        'id="case-view"',
    ):
        assert needle in page, needle
    index, details = viewer_data(page)
    assert [c["id"] for c in index["cases"]] == [d["id"] for d in details] == [c["id"] for c in report["cases"]]
    assert [index["verdicts"][c["v"]] for c in index["cases"]] == [c["verdict"] for c in report["cases"]]
    assert index["tags"] == ["ui_type", "platform"] and sorted(index["values"][0]) == ["icon", "text"]
    assert [index["values"][1][c["t"][1]] for c in index["cases"]] == [c["tags"]["platform"] for c in report["cases"]]
    # overall: 7 cases, 2 hits, 6 scored -> 33.3%
    overall = re.search(r'<tr class="overall".*?</tr>', page).group(0)
    cells = dict(re.findall(r'data-col="(\w+)">([^<]*)<', overall))
    assert cells == {"n": "7", "hit": "2", "accuracy": "33.3", "ci95": "9.7–70.0", "unparsed": "1", "refused": "1", "truncated": "0", "error": "1"}
    # one option per verdict present, with its count
    assert '<option value="=miss">miss (2)</option>' in page
    assert "truncated (" not in page


def test_render_embeds_thumbnails_and_loads_nothing() -> None:
    report = sample_report()
    uri = thumbnail(screenshot())
    thumbs = {"text-win-1": uri, "icon-win-3": uri, "icon-mac-4": "https://example.com/x.jpg", "text-mac-2": "javascript:alert(1)"}
    page = render(report, thumbs)
    index, _ = viewer_data(page)
    assert index["pictures"] == [uri] and pictures(index) == {"text-win-1": uri, "icon-win-3": uri}  # carried once, shown twice
    assert "example.com" not in page and "javascript:" not in page
    tags = parse_tags(page)
    assert [(t, a, v) for t, attrs in tags for a, v in attrs if a in ("src", "href", "action", "poster", "data", "srcset", "xlink:href")] == [("a", "href", "#")]  # to the cases
    assert "@import" not in page and "url(" not in page
    assert "Content-Security-Policy" in page and "default-src &#x27;none&#x27;" in page
    assert _csp(page)["script-src"] == f"'sha256-{base64.b64encode(hashlib.sha256(html_report.asset('viewer.js')).digest()).decode()}'"
    # The overlay's geometry: the original's size, the truth box and the predicted point, in its pixels.
    entry = next(c for c in index["cases"] if c["id"] == "icon-win-3")
    assert entry["g"] == [1920, 1080, 1200, 300, 1400, 380, 300, 900]


def _csp(page: str) -> dict[str, str]:
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1).replace("&#x27;", "'")
    return dict(part.strip().split(" ", 1) for part in policy.split(";"))


def _csp_images(page: str) -> str:
    return _csp(page)["img-src"]


def test_render_links_screenshot_files_relative_to_the_page(tmp_path: Path) -> None:
    report = sample_report()
    shots = tmp_path / "data" / "shots"
    odd = shots / "a b#1:javascript:x.png"  # a space, a '#' and colons: still one relative path, no scheme
    pictures_in = {"text-win-1": str(shots / "one.png"), "icon-win-3": str(odd), "icon-mac-4": "shots/relative.png", "text-mac-2": "https://example.com/x.png", "icon-win-5": thumbnail(screenshot())}
    page = render(report, pictures_in, tmp_path / "reports")
    shown = pictures(viewer_data(page)[0])
    # outside the report folder: the link, then the file's absolute place (the page finds it when the report folder moves)
    assert shown["text-win-1"] == ["../data/shots/one.png", (shots / "one.png").as_uri()]
    assert shown["icon-win-3"] == ["../data/shots/a%20b%231%3Ajavascript%3Ax.png", odd.as_uri()]
    assert shown["icon-win-5"].startswith("data:image/jpeg;base64,") and set(shown) == {"text-win-1", "icon-win-3", "icon-win-5"}  # the relative path and the URL are dropped
    assert "example.com" not in page and "relative.png" not in page
    assert _csp_images(page) == "'self' file: data:"
    assert "2 screenshot(s) are shown from their files" in page and "--report-images=embed" in page
    # inside the report folder: a relative link alone; no page folder: absolute file URIs; only embedded pictures: data: images only
    inside = tmp_path / "reports" / "shots" / "in.png"
    assert pictures(viewer_data(render(report, {"text-win-1": str(inside)}, tmp_path / "reports"))[0]) == {"text-win-1": "shots/in.png"}
    assert pictures(viewer_data(render(report, {"text-win-1": str(shots / "one.png")}))[0]) == {"text-win-1": (shots / "one.png").as_uri()}
    assert _csp_images(render(report, {"icon-win-5": thumbnail(screenshot())})) == "data:"
    assert "it carries its pictures" in render(report, {"icon-win-5": thumbnail(screenshot())})


def test_page_files_write_the_page_and_its_data_folder_and_prune_what_no_page_names(tmp_path: Path) -> None:
    """The page is its first screen; its cases' data is in script files of ``<stem>_files/<token>/``; an embedded
    picture is a file there (the folder carries it); the full screenshot behind it is linked; a data folder no page
    names any more is removed, one a copy of a page still names is kept."""
    report = sample_report()
    shots = tmp_path / "data"
    shots.mkdir()
    screenshot().save(shots / "one.png")
    uri = thumbnail(screenshot())
    reports = tmp_path / "reports"
    page_path = reports / "toy.html"
    files = html_report.page_files(report, {"text-win-1": uri, "icon-win-3": uri}, [page_path], reports, {"text-win-1": str(shots / "one.png")})
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    page = page_path.read_text("utf-8")
    folder = data_folder(page_path)
    assert folder is not None and folder.parent == reports / "toy_files" and len(folder.name) == 16
    assert sorted(str(p.relative_to(folder)) for p in files if p != page_path) == sorted(["viewer.js", "index.js", "c/0.js", *(f"img/{p.name}" for p in (folder / "img").iterdir())])
    assert (folder / "viewer.js").read_bytes() == html_report.asset("viewer.js")
    assert [dict(a) for t, a in parse_tags(page) if t == "script"] == [{"src": f"toy_files/{folder.name}/viewer.js", "defer": None}]  # no inline script
    assert _csp(page)["script-src"] == "'self'" and _csp_images(page) == "'self'"  # the thumbnails are files of the data folder
    assert "text-win-1" not in page and EVIL_SCRIPT.replace("<", "&lt;") not in page  # the cases are in the data folder alone
    index, details = viewer_data(page_path)
    (picture,) = set(pictures(index).values())
    assert picture.startswith("@img/") and (folder / picture[1:]).read_bytes() == base64.b64decode(uri.split(",", 1)[1])
    assert details[0]["full"] == ["../data/one.png", (shots / "one.png").as_uri()]
    # the same report again: the same token; another: a new folder, and the old one goes once no page names it
    assert html_report.page_files(report, {"text-win-1": uri, "icon-win-3": uri}, [page_path], reports, {"text-win-1": str(shots / "one.png")}) == files
    (reports / "toy.passed.html").write_bytes(files[page_path])  # a copy of this page, as a passed run's
    report["cases"][0]["response"] = "changed"
    again = html_report.page_files(report, {}, [page_path], reports)
    for path, data in again.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    newer = data_folder(page_path)
    assert newer is not None and newer != folder
    assert html_report.prune(page_path) == [] and folder.is_dir()  # toy.passed.html still names it
    (reports / "toy.passed.html").unlink()
    assert html_report.prune(page_path) == [folder] and not folder.exists() and newer.is_dir()


def test_picture_never_decodes_on_the_request_path(tmp_path: Path) -> None:
    path = tmp_path / "shot.png"
    screenshot((800, 600)).save(path)
    with Image.open(path) as lazy:
        assert thumbnails.picture(str(path), lazy, "link") == str(path)
        assert thumbnails.picture(str(path), lazy, "embed") == str(path)  # not decoded yet: made when the report is written
        assert lazy.tile and not thumbnails.is_decoded(lazy)
        lazy.load()
        assert thumbnails.picture(str(path), lazy, "link") == str(path)
        uri = thumbnails.picture(str(path), lazy, "embed")  # the model path decoded it: the thumbnail is made from those pixels
    assert thumbnails.is_embedded(uri)
    os.chdir(tmp_path)
    assert thumbnails.picture("shot.png", None, "link") == str(path)  # always absolute: the report is written elsewhere


def test_embed_makes_each_file_once_in_threads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = []
    for i in range(4):
        paths.append(tmp_path / f"s{i}.png")
        screenshot((1600, 900), seed=i).save(paths[-1])
    made: list[str] = []
    real = thumbnails.thumbnail_of_file
    monkeypatch.setattr(thumbnails, "thumbnail_of_file", lambda p: made.append(p) or real(p))
    inline = thumbnail(screenshot((100, 50)))
    pictures = {"a": str(paths[0]), "b": str(paths[0]), "c": str(paths[1]), "d": str(paths[2]), "e": str(paths[3]), "gone": str(tmp_path / "missing.png"), "inline": inline}
    out = thumbnails.embed(pictures, threads=3)
    assert sorted(made) == sorted(str(p) for p in [*paths, tmp_path / "missing.png"])  # each file once
    assert set(out) == {"a", "b", "c", "d", "e", "inline"} and out["inline"] == inline and out["a"] == out["b"]
    for key in "acde":
        with Image.open(io.BytesIO(base64.b64decode(out[key].split(",", 1)[1]))) as im:
            assert im.format == "JPEG" and im.size == (320, 180)
    assert out["c"] != out["d"]


def test_thumbnail_of_a_jpeg_uses_reduced_decoding_and_looks_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from PIL import JpegImagePlugin

    big = screenshot((4000, 2250), seed=3)
    big.save(tmp_path / "s.jpg", quality=92)
    big.save(tmp_path / "s.png")
    decoded: list[tuple[int, int]] = []
    real_load = JpegImagePlugin.JpegImageFile.load
    monkeypatch.setattr(JpegImagePlugin.JpegImageFile, "load", lambda self: decoded.append(self.size) or real_load(self))
    pictures = [thumbnails.thumbnail_of_file(str(tmp_path / name)) for name in ("s.jpg", "s.png")]
    assert decoded and decoded[0][0] <= 1000  # the JPEG was decoded at 1/4 scale (DCT scaling), not at 4000 px
    jpeg, png = (Image.open(io.BytesIO(base64.b64decode(p.split(",", 1)[1]))).convert("L") for p in pictures)  # type: ignore[union-attr]
    assert jpeg.size == png.size == (320, 180)
    diff = ImageStat.Stat(ImageChops.difference(jpeg, png)).mean[0]
    assert diff < 4, diff  # the same picture, grey levels within a few units
    assert thumbnails.thumbnail_of_file(str(tmp_path / "nope.jpg")) is None
    (tmp_path / "bad.png").write_bytes(b"not a png")
    assert thumbnails.thumbnail_of_file(str(tmp_path / "bad.png")) is None


@pytest.mark.parametrize("mode", [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist")])
def test_a_run_links_every_screenshot_by_default_and_embeds_on_request(pytester: pytest.Pytester, mode: list[str], tmp_path: Path) -> None:
    suite = write_suite(pytester.path / "suites" / "tiny")
    extra = tmp_path / "elsewhere" / "{suite}.html"
    result = pytester.runpytest_subprocess("suites/tiny", "--model=oracle", f"--report-html={extra}", "-p", "no:cacheprovider", *mode)
    assert result.ret == 0, result.stdout.str()
    for page in (pytester.path / "reports" / "tiny.html", tmp_path / "elsewhere" / "tiny.html"):
        shown = pictures(viewer_data(page)[0])
        assert len(shown) == n_rows(), page  # every case has its picture
        files = sorted({(data_root(page) / urllib.parse.unquote(s[0])).resolve() for s in shown.values()})
        assert files == sorted((suite / "data" / "imgs").resolve().glob("*.png")), page  # relative links that reach the screenshots
        assert sorted({Path(urllib.parse.unquote(s[1].removeprefix("file://"))) for s in shown.values()}) == files  # and their absolute places
    result = pytester.runpytest_subprocess("suites/tiny", "--model=oracle", "--report-images=embed", "-p", "no:cacheprovider", *mode)
    assert result.ret == 0, result.stdout.str()
    page = pytester.path / "reports" / "tiny.html"
    folder = data_folder(page)
    shown = pictures(viewer_data(page)[0])
    assert len(shown) == n_rows() and all(s.startswith("@img/") for s in shown.values())  # thumbnails, written into the data folder
    assert len(set(shown.values())) == 3  # one thumbnail per screenshot (three screenshots, two rows each)
    for name in set(shown.values()):
        with Image.open(folder / name[1:]) as im:
            assert im.format == "JPEG" and max(im.size) == 320
    assert _csp_images(page.read_text("utf-8")) == "'self'"
    # the data is the run folder's, once; the top of the report folder holds none
    assert data_root(page).parent == pytester.path / "reports" / "runs" / "tiny" and not (pytester.path / "reports" / "tiny_files").exists()


def test_the_details_are_cut_into_chunks_of_about_the_budget() -> None:
    import json

    from guitest.reporting.viewer_data import cut

    details = ['{"id": "%d"}' % i for i in range(10)] + ['"' + "x" * 100 + '"', '{"id": "last"}']
    starts, chunks = cut(details, 40)
    assert sum((json.loads(c) for c in chunks), []) == [json.loads(d) for d in details]  # every detail once, in order
    assert [len(json.loads(c)) for c in chunks] == [b - a for a, b in zip(starts, [*starts[1:], len(details)], strict=True)]  # each chunk starts where the index says
    assert all(len(c) <= 40 or len(json.loads(c)) == 1 for c in chunks) and "[" + details[10] + "]" in chunks  # a larger detail: a chunk of its own
    assert len(chunks) == 6 and cut([], 40) == ([], [])


def test_render_minimal_report() -> None:
    report = {
        "guitest": "0.1.0",
        "suite": {"name": "s", "path": "p", "format": "f", "task": "t"},
        "model": {"spec": "oracle", "adapter": "Oracle", "space": "normalized", "settings": {}},
        "n_selected": 1,
        "n_results": 1,
        "complete": False,
        "missing": ["gone-1"],
        "headline": {"average": "micro", "accuracy": None, "micro": None, "macro": None, "what": "w"},
        "overall": _counts([]),
        "breakdown": {},
        "macro": {},
        "notes": {},
        "gate": {},
        "cases": [{"id": "x", "verdict": "error", "tags": {}, "prediction": None, "response": None, "error": "boom"}],
        "run": {},
    }
    page = render(report, {"x": "not a uri"})
    assert "gone-1" in page and "<img" not in page
    index, details = viewer_data(page)
    assert index["cases"][0]["p"] == -1 and details[0]["error"] == "boom" and details[0]["reply"] is None
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")


def test_the_viewer_script_can_be_carried_in_a_page() -> None:
    """Inline, the viewer must not end its own script element, nor open a comment the HTML parser would read."""
    script = html_report.asset("viewer.js").lower()
    assert b"</script" not in script and b"<!--" not in script and b"innerhtml" not in script and b"eval(" not in script


# -- the browser ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium.launched() as b:
        yield b


def _visible_cards(page: Any) -> list[str]:
    return page.evaluate("Array.from(document.querySelectorAll('#cards .card')).filter(e => e.offsetParent !== null).map(e => e.querySelector('.cid').textContent)")


def _open(browser: Any, path: Path, fragment: str = "") -> tuple[Any, list[str], list[str]]:
    """A new page showing the file at ``path`` (at ``#fragment``), its case list ready; the problems (page errors,
    console errors and warnings) and the URLs requested, as they come."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    requests: list[str] = []
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.on("console", lambda msg: problems.append(f"console {msg.type}: {msg.text}") if msg.type in ("error", "warning") else None)
    page.on("request", lambda req: requests.append(req.url))
    page.goto(path.as_uri() + (f"#{fragment}" if fragment else ""))
    page.wait_for_selector("#cards[data-ready]", state="attached")
    return page, problems, requests


def _to_the_cases(page: Any) -> None:
    page.locator("#gallery").scroll_into_view_if_needed()
    page.evaluate("new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")  # the viewer places the cards in view


def test_in_a_real_browser(browser: Any, tmp_path: Path) -> None:
    report = sample_report()
    thumbs = {c["id"]: thumbnail(screenshot(seed=i)) for i, c in enumerate(report["cases"]) if c["id"] != "text-mac-6"}
    path = tmp_path / "report.html"
    path.write_text(render(report, thumbs), "utf-8")

    page, problems, requests = _open(browser, path)
    _to_the_cases(page)

    # Nothing from the replies ran, nothing was fetched but the page and its data URIs.
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert [u for u in requests if not (u.startswith("file://") or u.startswith("data:"))] == []
    assert page.locator("#cards script, #cards img[src='x']").count() == 0

    # The reply is shown as text, markup and all.
    reply = page.locator("article[data-verdict='miss'] pre.reply").first.inner_text()
    assert EVIL_SCRIPT in reply and EVIL_IMG in reply

    # The tables show the report's numbers.
    def cells(selector: str) -> dict[str, str]:
        return {c: page.locator(f"{selector} td[data-col='{c}']").inner_text() for c in ("n", "hit", "accuracy", "ci95", "unparsed", "refused", "error")}

    assert cells("tr.overall") == {"n": "7", "hit": "2", "accuracy": "33.3", "ci95": "9.7–70.0", "unparsed": "1", "refused": "1", "error": "1"}
    assert cells("tr[data-category='ui_type'][data-value='icon']") == {"n": "3", "hit": "0", "accuracy": "0.0", "ci95": "0.0–56.1", "unparsed": "1", "refused": "0", "error": "0"}
    assert cells("tr[data-category='ui_type'][data-value='text']")["accuracy"] == "66.7"
    assert page.locator("#headline-accuracy").inner_text().replace("\n", "") == "33.3%"
    assert page.locator("svg.chart").count() == 2

    # Filters: every case at first; a verdict; a verdict and a tag; free text; reset.
    ids = [c["id"] for c in report["cases"]]
    assert sorted(_visible_cards(page)) == sorted(ids)
    page.select_option("#f-verdict", "=miss")
    assert sorted(_visible_cards(page)) == ["icon-mac-4", "icon-win-3"]
    assert page.locator("#f-count").inner_text() == "2 of 7 cases shown"
    page.select_option("select[data-tag='platform']", "=windows")
    assert _visible_cards(page) == ["icon-win-3"]
    page.select_option("#f-verdict", "")
    assert sorted(_visible_cards(page)) == ["icon-win-3", "icon-win-5", "text-win-1", "text-win-7"]
    page.fill("#f-text", "FILE MENU")
    assert _visible_cards(page) == ["text-win-1"]
    page.click("#f-reset")
    assert len(_visible_cards(page)) == 7

    # The overlay sits on the thumbnail at the original-to-thumbnail scale.
    assert _load_every_image(page)
    card = page.locator("article[data-verdict='miss']").first
    img = card.locator("figure.shot img").bounding_box()
    truth = card.locator("rect.truth").bounding_box()
    sx, sy = img["width"] / 1920, img["height"] / 1080
    assert truth["x"] == pytest.approx(img["x"] + 1200 * sx, abs=2.5)
    assert truth["y"] == pytest.approx(img["y"] + 300 * sy, abs=2.5)
    assert truth["width"] == pytest.approx(200 * sx, abs=3)
    assert page.locator("article[data-verdict='refused'] figure.shot").count() == 0  # no thumbnail, no picture

    assert problems == []
    out = Path(os.environ.get(SCREENSHOT_ENV) or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(out / "html_report.png"), full_page=True)
    assert (out / "html_report.png").stat().st_size > 10_000
    page.close()


# Waits on the page are promises inside one evaluate: the report's CSP has no 'unsafe-eval', and
# Playwright's wait_for_function polls with eval, which the page then refuses once the first check
# (made inside the evaluate, where DevTools allows it) is not yet true.
LOAD_EVERY_IMAGE = """(selector) => {
    const images = Array.from(document.querySelectorAll(selector || 'img'));
    images.forEach(i => { i.loading = 'eager'; });
    const arrived = images.map(i => i.complete ? null : new Promise(done => {
        i.addEventListener('load', done, {once: true});
        i.addEventListener('error', () => { if (i.classList.contains('broken')) { done(); } else { i.addEventListener('load', done, {once: true}); i.addEventListener('error', done, {once: true}); } }, {once: true});
    }));
    const late = new Promise((_, fail) => setTimeout(() => fail(new Error(
        images.filter(i => !i.complete).length + ' image(s) still loading after 20 s')), 20000));
    return Promise.race([Promise.all(arrived), late]).then(() => images.length > 0 && images.every(i => i.naturalWidth > 0));
}"""


def _load_every_image(page: Any, selector: str = "img") -> bool:
    """Ask for every lazily loaded picture (of ``selector``) now, wait for them (a picture tried at its next source
    after its first failed is waited for once more); whether each arrived (decoded, not broken)."""
    return page.evaluate(LOAD_EVERY_IMAGE, selector)


def test_linked_screenshots_in_a_real_browser_also_when_the_report_folder_moved(browser: Any, tmp_path: Path) -> None:
    report = sample_report()
    shots = tmp_path / "data" / "my shots"
    shots.mkdir(parents=True)
    pictures_in = {}
    for i, case in enumerate(report["cases"]):
        path = shots / (f"{case['id']} #{i}.png" if i % 2 else f"{case['id']}.png")
        screenshot(seed=i).save(path)
        pictures_in[case["id"]] = str(path)
    reports = tmp_path / "reports"
    for path, data in html_report.page_files(report, pictures_in, [reports / "run.html"], reports).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    page, problems, requests = _open(browser, reports / "run.html")
    _to_the_cases(page)
    assert page.locator("#cards figure.shot img").count() == len(report["cases"])
    assert _load_every_image(page)  # the policy lets the linked files in, and the links reach them
    data = data_folder(reports / "run.html")
    assert data is not None
    ours = {(reports / "run.html").as_uri(), *(p.as_uri() for p in (data / "viewer.js", data / "index.js"))}
    assert sorted(u for u in requests if u not in ours) == sorted(Path(p).as_uri() for p in pictures_in.values())
    card = page.locator("article[data-verdict='miss']").first
    img = card.locator("figure.shot img").bounding_box()
    truth = card.locator("rect.truth").bounding_box()
    assert img["width"] / img["height"] == pytest.approx(1920 / 1080, rel=0.01)
    assert truth["x"] == pytest.approx(img["x"] + 1200 * img["width"] / 1920, abs=2.5)
    assert truth["y"] == pytest.approx(img["y"] + 300 * img["height"] / 1080, abs=2.5)
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert problems == []
    page.close()

    # The report folder moved away from the data: the relative links no longer reach the screenshots, their absolute
    # places do (a missing link's request fails; the viewer then asks the next source).
    moved = tmp_path / "elsewhere" / "deeper" / "reports"
    shutil.move(str(reports), str(moved))
    page, problems, requests = _open(browser, moved / "run.html")
    _to_the_cases(page)
    assert _load_every_image(page, "#cards img")
    assert sorted({u for u in requests if u.endswith(".png") and Path(urllib.parse.unquote(u.removeprefix("file://"))).is_file()}) == sorted(Path(p).as_uri() for p in pictures_in.values())
    assert [p for p in problems if "ERR_FILE_NOT_FOUND" not in p] == []  # the first tries that failed, nothing else
    page.close()


def test_demo_run_writes_a_report_the_browser_shows(browser: Any, pytester: pytest.Pytester, tmp_path: Path) -> None:
    """A real run over the demo suite (replayed replies: half right, half hostile HTML) writes the page the browser checks."""
    import json

    from guitest.data.demo import ensure

    repo = Path(__file__).resolve().parents[1]
    data = ensure(repo / "suites" / "demo" / "data")
    replies, expect_hits = [], 0
    for split in ("desktop", "mobile", "web"):
        rows = json.loads((data / f"screenspot_{split}.json").read_text())
        for row, r in enumerate(rows):
            case_id = f"{split}-{r['data_source']}-{r['data_type']}-{row}"
            if row % 2 == 0:
                w, h = Image.open(data / "images" / r["img_filename"]).size
                x, y, bw, bh = r["bbox"]
                replies.append({"id": case_id, "response": f"Answer: [{(x + bw / 2) / w:.6f}, {(y + bh / 2) / h:.6f}]"})
                expect_hits += 1
            else:
                replies.append({"id": case_id, "response": f"{EVIL_SCRIPT} {EVIL_IMG} no idea"})
    (tmp_path / "replies.jsonl").write_text("\n".join(json.dumps(r) for r in replies))
    out = tmp_path / "demo.html"
    result = pytester.runpytest_subprocess(str(repo / "suites" / "demo"), f"--model=replay:{tmp_path / 'replies.jsonl'}", f"--report-html={out}", f"--report-dir={tmp_path}", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()[-2000:]
    assert f"{data} (its own data, beside the suite file)" in out.read_text()
    page, errors, _ = _open(browser, out)
    overall = page.evaluate("Array.from(document.querySelectorAll('tr')).find(r => r.textContent.trim().startsWith('overall')).textContent")
    assert f"{len(replies)}" in overall and f"{expect_hits}" in overall
    assert page.locator("#f-count").inner_text() == f"{len(replies)} of {len(replies)} cases shown"
    _to_the_cases(page)
    cards = len(_visible_cards(page))
    assert 0 < cards < len(replies) and page.locator("#cards .card img").count() == cards  # the cards near the view, each with its screenshot
    assert _load_every_image(page, "#cards img")  # linked from the demo's data folder, and there
    verdict_select = page.locator("select").first
    verdict_select.select_option(label=verdict_select.locator("option", has_text="unparsed").first.text_content().strip())
    assert page.locator("#f-count").inner_text() == f"{len(replies) - expect_hits} of {len(replies)} cases shown"
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert not errors, errors
    page.screenshot(path=str(Path(os.environ.get(SCREENSHOT_ENV, tmp_path)) / "demo-report.png"), full_page=False)
    page.close()


def test_an_episodes_steps_carry_every_action_that_ran_and_mark_those_not_run(tmp_path: Path) -> None:
    steps = [
        {
            "number": 1,
            "reply": "r1",
            "text": "click; type",
            "notes": [],
            "screenshot": "ep/step-01.png",
            "actions": [{"kind": "click", "point": [10, 20], "space": "screen"}, {"kind": "type", "text": "x"}, {"kind": "click", "point": [30, 40], "space": "screen"}],
        },
        {
            "number": 2,
            "reply": "r2",
            "text": "click; done; click",
            "notes": ["not_run:1"],
            "screenshot": "ep/step-02.png",
            "executed": 2,
            "actions": [{"kind": "click", "point": [50, 60], "space": "screen"}, {"kind": "done"}, {"kind": "click", "point": [70, 80], "space": "screen"}],
        },
        {"number": 3, "reply": "old", "text": "click", "notes": [], "screenshot": "ep/step-03.png", "action": {"kind": "click", "point": [5, 5], "space": "screen"}},
    ]
    episode = {"screen_size": [160, 210], "trajectory": steps, "final_screenshot": "ep/final.png", "end": "done", "success": True, "score": 1.0, "wall_seconds": 1.0}
    report = make_report([make_case("ep-1", "hit", {"ui_type": "text"}, "r2", episode=episode)])
    _, (case,) = viewer_data(render(report, {}, tmp_path, tmp_path))
    (shown,) = case["episodes"]
    # the actions that ran, in the screenshot's pixels, numbered when the step read several: the third click of step 2 did not run
    assert [s["marks"] for s in shown["steps"]] == [[[10, 20, None, None, 1], [30, 40, None, None, 3]], [[50, 60, None, None, 1]], [[5, 5]]]
    assert [s["read"] for s in shown["steps"]] == ["click; type", "click; done; click (action 3 not run)", "click"]
    assert [s["src"] for s in shown["steps"]] == ["ep/step-01.png", "ep/step-02.png", "ep/step-03.png"] and shown["final"]["src"] == "ep/final.png"
    assert shown["size"] == [160, 210] and shown["outcome"] == "success, score 1.000, 3 step(s), 1.000 s"


def test_a_large_step_screenshot_gets_its_thumbnail_beside_it_and_a_small_one_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The live flow's screenshot sink writes a large step's thumbnail beside it; a small screenshot (a MiniWoB++
    page) gets none and costs no decoding: its size is read from its header."""
    from PIL import PngImagePlugin

    from guitest.run.live_case import _sink

    def png(size: tuple[int, int]) -> bytes:
        buffer = io.BytesIO()
        screenshot(size).save(buffer, "PNG")
        return buffer.getvalue()

    big, small = png((1920, 1080)), png((480, 630))
    save = _sink(str(tmp_path / "episodes" / "case-1"), str(tmp_path))
    assert save("step-01", big) == os.path.join("episodes", "case-1", "step-01.png")
    with Image.open(tmp_path / "episodes" / "case-1" / "step-01.thumb.jpg") as im:
        assert im.format == "JPEG" and im.size == (320, 180)
    decoded: list[tuple[int, int]] = []
    real_load = PngImagePlugin.PngImageFile.load
    monkeypatch.setattr(PngImagePlugin.PngImageFile, "load", lambda self: decoded.append(self.size) or real_load(self))
    save("step-02", small)
    assert decoded == [] and sorted(p.name for p in (tmp_path / "episodes" / "case-1").iterdir()) == ["step-01.png", "step-01.thumb.jpg", "step-02.png"]
    assert thumbnails.step_thumbnail(b"not an image") is None


HOSTILE_ID = "ep \"1\" #&<b>é 'q\\n' \u2028"  # quotes, a backslash, a line separator: each must survive the data files' string literals
SCREEN = (960, 600)


def live_report(reports: Path) -> dict[str, Any]:
    """Three episodes of four steps (a hit, a miss whose id, instruction and replies are hostile, an error), their
    screenshots and thumbnails in a run folder under ``reports``, as a live run leaves them."""
    cases = []
    for k, (cid, verdict) in enumerate([("ep-a", "hit"), (HOSTILE_ID, "miss"), ("ep-c", "error")]):
        folder = reports / "runs" / "live" / "20260101-000000-abcd" / "episodes" / f"e{k}"
        folder.mkdir(parents=True)
        steps = []
        for n in range(1, 5):
            buffer = io.BytesIO()
            screenshot(SCREEN, seed=n).save(buffer, "PNG")
            (folder / f"step-0{n}.png").write_bytes(buffer.getvalue())
            thumbnails.save_step_thumbnail(str(folder / f"step-0{n}.png"), buffer.getvalue())
            steps.append(
                {
                    "number": n,
                    "reply": f"I click at {100 * n}. {EVIL_SCRIPT} {EVIL_IMG}",
                    "text": f"click ({100 * n}, 200)",
                    "notes": [],
                    "actions": [{"kind": "click", "point": [100 * n, 200], "space": "screen"}],
                    "policy_seconds": 0.5,
                    "env_seconds": 0.1,
                    "usage": {"input_tokens": 1000, "output_tokens": 20},
                    "screenshot": (folder / f"step-0{n}.png").relative_to(reports).as_posix(),
                }
            )
        episode = {"task": f"t{k}", "env": "webapp", "seed": 0, "end": "done", "success": verdict == "hit", "score": 1.0 if verdict == "hit" else 0.0, "reason": f"the check said <{verdict}>"}
        episode |= {"steps": 4, "wall_seconds": 3.0, "env_seconds": 0.4, "policy_seconds": 2.0, "screen_size": list(SCREEN), "trajectory": steps}
        case = {"id": cid, "verdict": verdict, "tags": {"task": f"t{k}", "family": "web"}, "prediction": {"success": verdict == "hit", "reset": "reset"}, "response": steps[-1]["reply"]}
        case |= {"instruction": f"do <task> {k}", "success": verdict == "hit", "score": episode["score"], "steps": 4, "episode": episode}
        case["usage"] = {"calls": 4, "seconds": 2.0, "input_tokens": 4000, "output_tokens": 80, "cost": 0.0123}
        if verdict == "error":
            case["error"] = "step 4: environment failed: <gone>"
        cases.append(case)
    report = make_report(cases, ("task",))
    report["suite"] = {"name": "live", "path": "suites/live/suite.yaml", "format": "webtask", "task": "live", "env": "webapp", "max_steps": 5}
    report["headline"] |= {"figure": "success_rate"}
    return report


def _write(files: dict[Path, bytes]) -> None:
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _ready(page: Any) -> None:
    page.wait_for_selector("#case-view[data-ready]", state="attached")


def test_the_viewer_opens_a_case_and_a_step_from_their_links_keeps_filters_in_the_address_and_opens_moved(browser: Any, tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    report = live_report(reports)
    page_path = reports / "live.html"
    _write(html_report.page_files(report, {}, [page_path], reports))

    # A step opened from its link: the case (its hostile id in the address), every step, the step the link names in view.
    page, problems, requests = _open(browser, page_path, urllib.parse.urlencode({"case": HOSTILE_ID, "step": 3}))
    _ready(page)
    assert page.locator("#case-view").get_attribute("data-case") == HOSTILE_ID
    assert page.locator("#case-view h2 .cid").inner_text() == HOSTILE_ID
    assert page.locator("#case-view li.step").count() == 4
    target = page.locator("li.step.target")
    assert target.get_attribute("id") == "step-0-3" and 0 <= target.bounding_box()["y"] < 900
    # The lazily loaded part is text: the replies, the instruction, the check's reason; nothing of them ran.
    assert target.locator("pre.reply").inner_text() == f"I click at 300. {EVIL_SCRIPT} {EVIL_IMG}"
    text = page.locator("#case-view").inner_text()
    assert "do <task> 1" in text and "check: the check said <miss>" in text and "cost: 4,080 tokens" in text and "$0.0123" in text
    assert "tokens: input 1,000, output 20" in text  # what the step took
    assert page.locator("#case-view script, #case-view img[src='x']").count() == 0
    assert page.evaluate("typeof window.__pwned") == "undefined"
    # Each step shows its thumbnail with the action drawn where it acted.
    assert _load_every_image(page, "#case-view img")
    shown = page.evaluate("Array.from(document.querySelectorAll('#case-view li.step img')).map(i => [i.getAttribute('src'), i.naturalWidth])")
    assert [src.rsplit("/", 1)[-1] for src, _ in shown] == [f"step-0{n}.thumb.jpg" for n in range(1, 5)] and {w for _, w in shown} == {320}
    img, circle = target.locator("img").bounding_box(), target.locator("circle.pred").bounding_box()
    assert circle["x"] + circle["width"] / 2 == pytest.approx(img["x"] + 300 * img["width"] / SCREEN[0], abs=2)
    # The full screenshot, one click away (the action drawn on it too); Esc closes it, then the case.
    target.locator("figure.shot").click()
    assert _load_every_image(page, "#lightbox img")
    assert page.evaluate("[document.querySelector('#lightbox img').getAttribute('src').split('/').pop(), document.querySelector('#lightbox img').naturalWidth]") == ["step-03.png", SCREEN[0]]
    assert page.locator("#lightbox circle.pred").count() == 1
    page.keyboard.press("Escape")
    assert page.locator("#lightbox").is_hidden()
    # A step's own link: the same case, another step in view.
    page.locator("#step-0-1 .act a").click()
    page.wait_for_selector("#step-0-1.target")  # the address changed: the viewer follows it (an event of its own, after the click)
    assert "step=1" in page.url and page.locator("li.step.target").count() == 1
    page.keyboard.press("Escape")
    page.wait_for_selector("#case-view", state="hidden")
    assert "case=" not in page.url

    # A filter is kept in the address: a reload keeps it; a case opened from the list keeps it too, and so does the way back.
    page.select_option("#f-verdict", "=miss")
    assert page.url.endswith("#verdict=miss")
    page.reload()
    page.wait_for_selector("#cards[data-ready]", state="attached")
    assert page.locator("#f-verdict").input_value() == "=miss" and page.locator("#f-count").inner_text() == "1 of 3 cases shown"
    page.click("#to-cases")  # the header's link to the list: the filters stay
    assert page.url.endswith("#verdict=miss") and page.evaluate("window.scrollY > 0 && document.getElementById('gallery').getBoundingClientRect().top < 900")
    _to_the_cases(page)
    page.locator("#cards .card .instruction").first.click()
    _ready(page)
    params = urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).fragment)
    assert params == {"verdict": ["miss"], "case": [HOSTILE_ID]}
    assert page.locator("#case-view nav a").first.get_attribute("href") == "#verdict=miss"
    assert problems == [] and [u for u in requests if not u.startswith("file://")] == []
    page.close()

    # The report folder zipped as a whole and unpacked elsewhere: the same links open the same case, its steps' pictures come.
    archive = shutil.make_archive(str(tmp_path / "report"), "zip", root_dir=tmp_path, base_dir="reports")
    shutil.rmtree(reports)
    shutil.unpack_archive(archive, tmp_path / "unpacked" / "here")
    page, problems, requests = _open(browser, tmp_path / "unpacked" / "here" / "reports" / "live.html", "case=ep-a&step=2")
    _ready(page)
    assert page.locator("li.step.target").get_attribute("id") == "step-0-2"
    assert _load_every_image(page, "#case-view img")
    assert problems == [] and all(u.startswith((tmp_path / "unpacked").as_uri()) for u in requests)
    page.close()


def test_the_latest_and_passed_pages_show_the_run_folder_also_zipped_and_unpacked(browser: Any, tmp_path: Path) -> None:
    """The report written as a run writes it (runs kept): the top pages hold no data of their own, they show the run
    folder's (its cases, a step from its link, its screenshots), and so does the run folder's page; the folder zipped
    as a whole and unpacked elsewhere still opens, loading nothing from outside it."""
    reports = tmp_path / "reports"
    report = live_report(reports)
    stamp = "20260101-000000-abcd"  # live_report's episodes are this run's
    paths = ([reports / "live.json"], [reports / "live.md"], [reports / "live.html"])
    writer.write(report, {}, paths, report_dir=reports, keep_runs=20, stamp=stamp)
    report["overall"]["error"], report["gate"] = 0, {"thresholds": {}, "failures": [], "passed": None}  # and again, as a run that passed
    writer.write(report, {}, paths, report_dir=reports, keep_runs=20, stamp=stamp)
    assert not (reports / "live_files").exists() and (reports / "live.passed.html").read_bytes() == (reports / "live.html").read_bytes()
    assert [p.parent.name for p in reports.rglob("index.js")] == [data_folder(reports / "live.html").name]  # the first write's data: no page names it
    for top in ("live.html", "live.passed.html", f"runs/live/{stamp}/live.html"):
        page, problems, requests = _open(browser, reports / top, urllib.parse.urlencode({"case": HOSTILE_ID, "step": 3}))
        _ready(page)
        assert page.locator("#case-view h2 .cid").inner_text() == HOSTILE_ID and page.locator("li.step.target").get_attribute("id") == "step-0-3", top
        assert _load_every_image(page, "#case-view img"), top  # each step's thumbnail, from the run folder's episodes
        page.keyboard.press("Escape")
        page.wait_for_selector("#case-view", state="hidden")
        _to_the_cases(page)
        assert sorted(_visible_cards(page)) == sorted(c["id"] for c in report["cases"]), top
        assert problems == [] and all(u.startswith((reports / "runs" / "live" / stamp).as_uri()) or u == (reports / top).as_uri() for u in requests), top
        page.close()
    archive = shutil.make_archive(str(tmp_path / "report"), "zip", root_dir=tmp_path, base_dir="reports")
    shutil.rmtree(reports)
    shutil.unpack_archive(archive, tmp_path / "unpacked")
    page, problems, requests = _open(browser, tmp_path / "unpacked" / "reports" / "live.html", "case=ep-a&step=2")
    _ready(page)
    assert page.locator("li.step.target").get_attribute("id") == "step-0-2" and _load_every_image(page, "#case-view img")
    assert problems == [] and all(u.startswith((tmp_path / "unpacked").as_uri()) for u in requests)
    page.close()


def test_the_case_list_puts_only_the_cards_in_view_on_the_page(browser: Any, tmp_path: Path) -> None:
    """3,000 cases: some dozens of cards on the page wherever the list is scrolled, every case reachable (the page had
    put all 3,000 cards in its document, some 60,000 elements)."""
    verdicts = ("hit", "miss", "unparsed")
    cases = [make_case(f"case-{i:05d}", verdicts[i % 3], {"ui_type": ("text", "icon")[i % 2], "platform": ("windows", "macos")[i % 2]}, f"Answer: [{i}, 0]") for i in range(3000)]
    reports = tmp_path / "reports"
    _write(html_report.page_files(make_report(cases), {}, [reports / "big.html"], reports))
    page, problems, _ = _open(browser, reports / "big.html")
    _to_the_cases(page)
    cards = page.locator("#cards .card").count()
    assert 0 < cards <= 60 and page.evaluate("document.getElementsByTagName('*').length") < 2000
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    page.evaluate("new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
    assert "case-02999" in _visible_cards(page) and page.locator("#cards .card").count() <= 60
    index, _ = viewer_data(reports / "big.html")
    assert len(index["starts"]) > 3  # the details come in several chunks: the last case's is read when it is opened
    page.locator("article.card", has_text="case-02999").locator(".instruction, pre.reply").first.click()
    _ready(page)
    assert page.locator("#case-view h2 .cid").inner_text() == "case-02999" and page.locator("#case-view pre.reply").inner_text() == "Answer: [2999, 0]"
    assert page.locator("#case-view nav .where").inner_text() == "case 3000 of 3000 shown"
    page.keyboard.press("ArrowLeft")  # the previous case the filters show
    page.wait_for_selector("#case-view[data-case='case-02998'][data-ready]", state="attached")
    page.keyboard.press("Escape")
    page.wait_for_selector("#case-view", state="hidden")
    page.fill("#f-text", "CASE-01234")
    assert page.locator("#f-count").inner_text() == "1 of 3000 cases shown"
    _to_the_cases(page)
    assert _visible_cards(page) == ["case-01234"]
    assert problems == []
    page.close()
