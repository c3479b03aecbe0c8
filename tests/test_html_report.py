"""The HTML report: escaping, self-containment, linked and embedded screenshots, and a real browser (Debian's chromium via Playwright).

The browser test needs ``/usr/bin/chromium`` (``apt-get install chromium``) and the
``playwright`` Python package (``pip install playwright``; no ``playwright install``:
it drives the system chromium). Without them it is skipped with the reason. It saves
a screenshot of the page into its tmp_path, or into ``$GUITEST_HTML_SCREENSHOTS`` when set.
"""

from __future__ import annotations

import base64
import io
import math
import os
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageChops, ImageDraw, ImageStat

from builders import n_rows, write_suite
from guitest.reporting import thumbnails
from guitest.reporting.html import render
from guitest.images import thumbnail

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]
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


def test_render_escapes_every_report_string() -> None:
    report = sample_report()
    page = render(report)
    assert EVIL_SCRIPT not in page and EVIL_IMG not in page
    assert "<script>window.__pwned" not in page and 'onerror="window' not in page
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=&quot;window.__pwned=2&quot;&gt;" in page
    assert "</pre><script>" not in page
    # Parsed as a browser would tokenize it: one script element (the page's own), no event handler
    # attributes, no img but thumbnails (none here).
    tags = parse_tags(page)
    assert [t for t, _ in tags].count("script") == 1
    assert [(t, a) for t, attrs in tags for a, _ in attrs if a.startswith("on")] == []
    assert "img" not in [t for t, _ in tags]
    for raw in ("toy<suite>", "evil-<b>model</b>", "/data/<root>", "<timeout>", '"<dialog>"'):
        assert raw not in page
    assert "close the &quot;&lt;dialog&gt;&quot; &amp; quit" in page
    assert "ModelError: &lt;timeout&gt; after 3 retries" in page


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
    ):
        assert needle in page, needle
    for case in report["cases"]:
        assert f'data-verdict="{case["verdict"]}"' in page
        assert case["id"] in page
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
    assert page.count(f'src="{uri}"') == 2
    assert "example.com" not in page and "javascript:" not in page
    tags = parse_tags(page)
    refs = [(t, a, v) for t, attrs in tags for a, v in attrs if a in ("src", "href", "action", "poster", "data", "srcset", "xlink:href")]
    assert refs and all(v.startswith("data:image/jpeg;base64,") for _, _, v in refs), refs
    assert not [v for _, _, v in refs if re.match(r"\s*(?:https?:)?//", v or "")]
    assert "@import" not in page and "url(" not in page
    assert "Content-Security-Policy" in page and "default-src &#x27;none&#x27;" in page
    # The overlay: viewBox in original pixels, the truth box and the predicted point.
    card = re.search(r'<article[^>]*data-text="icon-win-3[^"]*".*?</article>', page).group(0)
    assert 'viewBox="0 0 1920 1080"' in card
    assert '<rect class="truth" x="1200" y="300" width="200" height="80"/>' in card
    assert 'cx="300" cy="900"' in card


def _srcs(page: str) -> list[str]:
    return [dict(attrs)["src"] or "" for tag, attrs in parse_tags(page) if tag == "img"]


def _csp_images(page: str) -> str:
    return re.search(r"img-src ([^;]*);", page.replace("&#x27;", "'")).group(1)


def test_render_links_screenshot_files_relative_to_the_page(tmp_path: Path) -> None:
    report = sample_report()
    shots = tmp_path / "data" / "shots"
    odd = shots / "a b#1:javascript:x.png"  # a space, a '#' and colons: still one relative path, no scheme
    pictures = {"text-win-1": str(shots / "one.png"), "icon-win-3": str(odd), "icon-mac-4": "shots/relative.png", "text-mac-2": "https://example.com/x.png", "icon-win-5": thumbnail(screenshot())}
    page = render(report, pictures, tmp_path / "reports")
    srcs = _srcs(page)
    assert srcs[:2] == ["../data/shots/one.png", "../data/shots/a%20b%231%3Ajavascript%3Ax.png"]
    assert len(srcs) == 3 and srcs[2].startswith("data:image/jpeg;base64,")  # the relative path and the URL are dropped
    assert "example.com" not in page and "relative.png" not in page
    assert _csp_images(page) == "'self' file: data:"
    assert "2 screenshot(s) are shown from their files" in page and "--report-images=embed" in page
    card = re.search(r'<article[^>]*data-text="text-win-1[^"]*".*?</article>', page).group(0)
    assert 'width="1920" height="1080"' in card and '<rect class="truth"' in card  # shaped before it loads; the overlay as before
    # no page folder: absolute file URIs; only embedded pictures: data: images only, as before
    assert _srcs(render(report, {"text-win-1": str(shots / "one.png")}))[0] == (shots / "one.png").as_uri()
    assert _csp_images(render(report, {"icon-win-5": thumbnail(screenshot())})) == "data:"
    assert "self-contained" in render(report, {"icon-win-5": thumbnail(screenshot())})


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


def _pictures_of(page: Path) -> list[str]:
    return _srcs(page.read_text("utf-8"))


@pytest.mark.parametrize("mode", [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist")])
def test_a_run_links_every_screenshot_by_default_and_embeds_on_request(pytester: pytest.Pytester, mode: list[str], tmp_path: Path) -> None:
    suite = write_suite(pytester.path / "suites" / "tiny")
    extra = tmp_path / "elsewhere" / "{suite}.html"
    result = pytester.runpytest_subprocess("suites/tiny", "--model=oracle", f"--report-html={extra}", "-p", "no:cacheprovider", *mode)
    assert result.ret == 0, result.stdout.str()
    for page in (pytester.path / "reports" / "tiny.html", tmp_path / "elsewhere" / "tiny.html"):
        srcs = _pictures_of(page)
        assert len(srcs) == n_rows(), page  # every case has its picture
        files = sorted({(page.parent / s.replace("%20", " ")).resolve() for s in srcs})
        assert files == sorted((suite / "data" / "imgs").resolve().glob("*.png")), page  # relative links that reach the screenshots
    result = pytester.runpytest_subprocess("suites/tiny", "--model=oracle", "--report-images=embed", "-p", "no:cacheprovider", *mode)
    assert result.ret == 0, result.stdout.str()
    page = (pytester.path / "reports" / "tiny.html").read_text("utf-8")
    srcs = _srcs(page)
    assert len(srcs) == n_rows() and all(s.startswith("data:image/jpeg;base64,") for s in srcs)
    assert len(set(srcs)) == 3  # one thumbnail per screenshot (three screenshots, two rows each)
    assert _csp_images(page) == "data:"


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
    assert "gone-1" in page and "boom" in page and "<img" not in page
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")


# -- the browser ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Any:
    # tox installs both (tests/setup_browser.sh) and sets GUITEST_REQUIRE_BROWSER, so there a missing browser fails.
    missing = pytest.fail if os.environ.get("GUITEST_REQUIRE_BROWSER") else pytest.skip
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        missing(f"{CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium) to run the browser test")
    try:
        from playwright import sync_api
    except ImportError:
        missing("the playwright package is not installed (pip install playwright; no 'playwright install' needed)")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def _visible_cards(page: Any) -> list[str]:
    return page.evaluate("Array.from(document.querySelectorAll('#cards .card')).filter(e => e.offsetParent !== null).map(e => e.querySelector('.cid').textContent)")


def _open(browser: Any, path: Path) -> tuple[Any, list[str], list[str]]:
    """A new page showing the file at ``path``, loaded; the problems (page errors, console errors and warnings) and the URLs requested, as they come."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    requests: list[str] = []
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.on("console", lambda msg: problems.append(f"console {msg.type}: {msg.text}") if msg.type in ("error", "warning") else None)
    page.on("request", lambda req: requests.append(req.url))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page, problems, requests


def test_in_a_real_browser(browser: Any, tmp_path: Path) -> None:
    report = sample_report()
    thumbs = {c["id"]: thumbnail(screenshot(seed=i)) for i, c in enumerate(report["cases"]) if c["id"] != "text-mac-6"}
    path = tmp_path / "report.html"
    path.write_text(render(report, thumbs), "utf-8")

    page, problems, requests = _open(browser, path)

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
    card = page.locator("article[data-verdict='miss']").first
    img = card.locator("figure.shot img").bounding_box()
    truth = card.locator("rect.truth").bounding_box()
    sx, sy = img["width"] / 1920, img["height"] / 1080
    assert truth["x"] == pytest.approx(img["x"] + 1200 * sx, abs=2.5)
    assert truth["y"] == pytest.approx(img["y"] + 300 * sy, abs=2.5)
    assert truth["width"] == pytest.approx(200 * sx, abs=3)
    assert page.locator("article[data-verdict='refused'] figure.shot").count() == 0  # no thumbnail, no picture
    assert page.evaluate("Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)")

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
LOAD_EVERY_IMAGE = """() => {
    const images = Array.from(document.images);
    images.forEach(i => { i.loading = 'eager'; });
    const arrived = images.map(i => i.complete ? null : new Promise(done => {
        i.addEventListener('load', done, {once: true});
        i.addEventListener('error', done, {once: true});
    }));
    const late = new Promise((_, fail) => setTimeout(() => fail(new Error(
        images.filter(i => !i.complete).length + ' image(s) still loading after 20 s')), 20000));
    return Promise.race([Promise.all(arrived), late]).then(() => images.every(i => i.naturalWidth > 0));
}"""


def _load_every_image(page: Any) -> bool:
    """Ask for every lazily loaded picture now, wait for them; whether each arrived (decoded, not broken)."""
    return page.evaluate(LOAD_EVERY_IMAGE)


def test_linked_screenshots_in_a_real_browser(browser: Any, tmp_path: Path) -> None:
    report = sample_report()
    shots = tmp_path / "data" / "my shots"
    shots.mkdir(parents=True)
    pictures = {}
    for i, case in enumerate(report["cases"]):
        path = shots / (f"{case['id']} #{i}.png" if i % 2 else f"{case['id']}.png")
        screenshot(seed=i).save(path)
        pictures[case["id"]] = str(path)
    page_path = tmp_path / "reports" / "run.html"
    page_path.parent.mkdir()
    page_path.write_text(render(report, pictures, page_path.parent), "utf-8")

    page, problems, requests = _open(browser, page_path)
    assert page.locator("#cards figure.shot img").count() == len(report["cases"])
    assert _load_every_image(page)  # the policy lets the linked files in, and the links reach them
    assert sorted(u for u in requests if u != page_path.as_uri()) == sorted(Path(p).as_uri() for p in pictures.values())
    card = page.locator("article[data-verdict='miss']").first
    img = card.locator("figure.shot img").bounding_box()
    truth = card.locator("rect.truth").bounding_box()
    assert img["width"] / img["height"] == pytest.approx(1920 / 1080, rel=0.01)
    assert truth["x"] == pytest.approx(img["x"] + 1200 * img["width"] / 1920, abs=2.5)
    assert truth["y"] == pytest.approx(img["y"] + 300 * img["height"] / 1080, abs=2.5)
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert problems == []
    page.close()


def test_demo_run_writes_a_report_the_browser_shows(browser: Any, pytester: pytest.Pytester, tmp_path: Path) -> None:
    """A real run over the demo suite (replayed replies: half right, half hostile HTML) writes the page the browser checks."""
    import json

    from guitest.demo import ensure

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
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(out.as_uri())
    overall = page.evaluate("Array.from(document.querySelectorAll('tr')).find(r => r.textContent.trim().startsWith('overall')).textContent")
    assert f"{len(replies)}" in overall and f"{expect_hits}" in overall
    assert len(_visible_cards(page)) == len(replies)
    assert page.evaluate("document.querySelectorAll('#cards .card img').length") == len(replies)  # every case has its screenshot
    assert _load_every_image(page)  # linked from the demo's data folder, and there
    verdict_select = page.locator("select").first
    verdict_select.select_option(label=verdict_select.locator("option", has_text="unparsed").first.text_content().strip())
    assert len(_visible_cards(page)) == len(replies) - expect_hits
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert not errors, errors
    page.screenshot(path=str(Path(os.environ.get(SCREENSHOT_ENV, tmp_path)) / "demo-report.png"), full_page=False)
    page.close()


def test_an_episode_strip_draws_every_action_of_a_step_and_marks_those_not_run(tmp_path: Path) -> None:
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
    page = render(report, {}, tmp_path, tmp_path)
    figures = re.findall(r'<figure class="shot">.*?</figure>', page, re.S)
    circles = [re.findall(r'<circle class="pred" cx="([\d.]+)" cy="([\d.]+)"', f) for f in figures]
    assert circles[:3] == [[("10", "20"), ("30", "40")], [("50", "60")], [("5", "5")]]  # the third click of step 2 did not run
    assert [re.findall(r'<text class="pred-n"[^>]*>(\d)</text>', f) for f in figures[:3]] == [["1", "3"], ["1"], []]
    assert "click; done; click (action 3 not run)" in page


def test_a_large_step_screenshot_gets_its_thumbnail_beside_it_and_a_small_one_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The live flow's screenshot sink writes a large step's thumbnail beside it; a small screenshot (a MiniWoB++
    page) gets none and costs no decoding: its size is read from its header."""
    from PIL import PngImagePlugin

    from guitest.live.flow import _sink

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
