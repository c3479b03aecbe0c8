"""The synthetic demo benchmark: format, exact boxes, determinism, staleness, concurrent callers."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image

from guitest.data import demo
from guitest import schema
from guitest.formats import read_suite_samples
from guitest.suite import load_suite

# The annotation files are part of the demo's contract: when they change, VERSION must change
# too (so existing copies regenerate). Update both together.
EXPECTED_VERSION = "guitest-demo 1"
SIZES = {(1170, 2532), (1080, 2400), (1920, 1080), (2560, 1440), (3840, 2160), (1280, 800), (1440, 900)}
MARGIN = 4


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo.ensure(tmp_path_factory.mktemp("demo") / "demo")


def rows_of(folder: Path) -> dict[str, list[dict]]:
    return {split: json.loads((folder / f"screenspot_{split}.json").read_text("utf-8")) for split in demo.SPLITS}


def all_rows(folder: Path) -> list[tuple[str, dict]]:
    return [(split, row) for split, rows in rows_of(folder).items() for row in rows]


def fingerprint(folder: Path) -> dict[str, str]:
    """sha256 of every file of a data set, by relative path (stamp included)."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


def json_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for name in demo.ANNOTATIONS:
        h.update((folder / name).read_bytes())
    return h.hexdigest()


def box_is_exact(image: Image.Image, bbox: list[int]) -> bool:
    """True when the box's outermost pixels all differ from a uniform background band around it.

    A box one pixel too large has background on its edge; one pixel too small leaves the
    element's edge in the band, which is then not uniform.
    """
    px = image.load()
    width, height = image.size
    x, y, w, h = bbox
    x2, y2 = x + w - 1, y + h - 1
    edge = [(i, y) for i in range(x, x2 + 1)] + [(i, y2) for i in range(x, x2 + 1)]
    edge += [(x, j) for j in range(y, y2 + 1)] + [(x2, j) for j in range(y, y2 + 1)]
    band = []
    for m in range(1, MARGIN + 1):
        band += [(i, y - m) for i in range(x - m, x2 + m + 1)] + [(i, y2 + m) for i in range(x - m, x2 + m + 1)]
        band += [(x - m, j) for j in range(y - m, y2 + m + 1)] + [(x2 + m, j) for j in range(y - m, y2 + m + 1)]
    band_colours = {px[q] for q in band if 0 <= q[0] < width and 0 <= q[1] < height}
    edge_colours = {px[q] for q in edge}
    return len(band_colours) == 1 and not band_colours & edge_colours


def test_version_is_the_expected_one() -> None:
    assert demo.VERSION == EXPECTED_VERSION


def test_version_pins_the_annotations(data: Path) -> None:
    # Changing the generated rows without bumping demo.VERSION would leave old copies in
    # place on every machine that ran the demo before: this test makes the bump explicit.
    pinned = {"guitest-demo 1": "f3297a6dfe58a3c252b34a5588c6d23adf138624f98d34a7224a2391beaaeb67"}
    assert demo.VERSION in pinned, f"new VERSION {demo.VERSION!r}: add its annotation digest here"
    assert json_digest(data) == pinned[demo.VERSION], f"the demo annotations changed (digest {json_digest(data)}): bump demo.VERSION and pin the new digest"


def test_layout_and_stamp(data: Path) -> None:
    assert sorted(p.name for p in data.iterdir()) == sorted([*demo.ANNOTATIONS, demo.IMAGES, demo.STAMP])
    assert (data / demo.STAMP).read_text("utf-8").strip() == demo.VERSION


def test_counts_per_split_platform_and_type(data: Path) -> None:
    rows = all_rows(data)
    assert 36 <= len(rows) <= 48
    by_split = Counter(split for split, _ in rows)
    assert by_split == {"mobile": 16, "desktop": 16, "web": 16}
    sources = Counter(row["data_source"] for _, row in rows)
    assert set(sources) == {"ios", "android", "windows", "macos", "linux", "shop", "forum", "gitlab", "tool"}
    by_split_type = Counter((split, row["data_type"]) for split, row in rows)
    for split in demo.SPLITS:
        assert by_split_type[(split, "text")] >= 6 and by_split_type[(split, "icon")] >= 6
    per_image = Counter(row["img_filename"] for _, row in rows)
    assert len(per_image) == 12 and min(per_image.values()) >= 3
    assert len({(row["img_filename"], row["instruction"]) for _, row in rows}) == len(rows)


def test_rows_validate_against_the_screenspot_schema(data: Path) -> None:
    validator = schema.validator("formats/screenspot")
    for split, row in all_rows(data):
        assert validator.is_valid(row), (split, row, list(schema.iter_problems("formats/screenspot", row)))
        assert all(isinstance(v, int) for v in row["bbox"])
        prefix = {"mobile": "mobile_", "desktop": "pc_", "web": "web_"}[split]
        assert row["img_filename"].startswith(prefix) and row["img_filename"].endswith(".png")


def test_images_have_real_sizes_and_hold_their_boxes(data: Path) -> None:
    seen = set()
    for _, row in all_rows(data):
        with Image.open(data / demo.IMAGES / row["img_filename"]) as image:
            assert image.format == "PNG"
            width, height = image.size
        seen.add((width, height))
        x, y, w, h = row["bbox"]
        assert 0 <= x and 0 <= y and x + w <= width and y + h <= height, row
    assert seen == SIZES
    assert len(list((data / demo.IMAGES).iterdir())) == 12


def test_every_box_is_exactly_its_drawn_element(data: Path) -> None:
    images: dict[str, Image.Image] = {}
    for _, row in all_rows(data):
        name = row["img_filename"]
        if name not in images:
            images[name] = Image.open(data / demo.IMAGES / name).convert("RGB")
        image = images[name]
        assert box_is_exact(image, row["bbox"]), row
        # The check can fail: the same box moved or grown by one pixel is rejected.
        x, y, w, h = row["bbox"]
        for wrong in ([x + 1, y, w, h], [x, y - 1, w, h], [x, y, w + 1, h], [x - 1, y - 1, w + 2, h + 2], [x + 1, y + 1, w - 2, h - 2]):
            assert not box_is_exact(image, wrong), (row, wrong)


def test_targets_hold_something_drawn(data: Path) -> None:
    # Not an empty rectangle: text or a glyph inside each box has a second colour.
    images: dict[str, Image.Image] = {}
    for _, row in all_rows(data):
        name = row["img_filename"]
        if name not in images:
            images[name] = Image.open(data / demo.IMAGES / name).convert("RGB")
        x, y, w, h = row["bbox"]
        crop = images[name].crop((x + 2, y + 2, x + w - 2, y + h - 2))
        assert len(crop.getcolors(maxcolors=1 << 20)) >= 2, row


def test_the_reader_accepts_the_demo(data: Path, tmp_path: Path) -> None:
    suite_file = tmp_path / "suite.yaml"
    suite_file.write_text(
        "name: demo\nformat: screenspot\ndata: {dir: demo, annotations: 'screenspot_*.json', images: images, generator: demo}\ntask: grounding\ntags: [split, data_source, data_type]\n",
        encoding="utf-8",
    )
    samples = read_suite_samples(load_suite(suite_file), str(data))
    assert len(samples) == len(all_rows(data))
    assert Counter(s.tags["split"] for s in samples) == {"mobile": 16, "desktop": 16, "web": 16}
    assert all(os.path.isfile(s.image) for s in samples)


def test_generation_is_deterministic_across_processes(data: Path, tmp_path: Path) -> None:
    other = tmp_path / "again"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-c", "import sys; from guitest.data import demo; demo.ensure(sys.argv[1])", str(other)], check=True, env=env, timeout=120)
    assert fingerprint(other) == fingerprint(data)


def test_current_data_is_left_alone(data: Path, tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    demo.ensure(folder)
    marker = folder / demo.IMAGES / "marker.txt"
    marker.write_text("still here")
    assert demo.ensure(folder) == folder
    assert marker.exists()


@pytest.mark.parametrize("spoil", ["old-stamp", "no-stamp", "missing-annotation"])
def test_stale_or_incomplete_data_is_regenerated(data: Path, tmp_path: Path, spoil: str) -> None:
    folder = tmp_path / "demo"
    demo.ensure(folder)
    (folder / "screenspot_web.json").write_text("[]")
    marker = folder / demo.IMAGES / "marker.txt"
    marker.write_text("from the old version")
    if spoil == "old-stamp":
        (folder / demo.STAMP).write_text("guitest-demo 0\n")
    elif spoil == "no-stamp":
        (folder / demo.STAMP).unlink()
    else:
        (folder / "screenspot_mobile.json").unlink()
    demo.ensure(folder)
    assert fingerprint(folder) == fingerprint(data)
    assert not marker.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".demo.") and not p.name.endswith(".lock")] == []


def test_a_foreign_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "thesis.tex").write_text("precious")
    with pytest.raises(FileExistsError, match="not a guitest demo folder"):
        demo.ensure(folder)
    assert (folder / "thesis.tex").read_text() == "precious"
    assert not (folder / demo.STAMP).exists()


def test_a_file_in_the_way_is_refused(tmp_path: Path) -> None:
    (tmp_path / "demo").write_text("a file")
    with pytest.raises(FileExistsError, match="not a folder"):
        demo.ensure(tmp_path / "demo")
    assert (tmp_path / "demo").read_text() == "a file"


def test_an_empty_folder_is_filled(data: Path, tmp_path: Path) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    demo.ensure(folder)
    assert fingerprint(folder) == fingerprint(data)


def test_leftovers_of_a_killed_generation_are_removed(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    (tmp_path / ".demo.tmp-dead").mkdir()
    (tmp_path / ".demo.tmp-dead" / "half.png").write_bytes(b"\x89PNG")
    (tmp_path / ".demo.old-dead").mkdir()
    demo.ensure(folder)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".demo.lock", "demo"]


def _ensure_after(barrier, folder: str) -> None:
    barrier.wait(timeout=60)
    demo.ensure(folder)


def test_concurrent_processes_end_with_one_complete_set(data: Path, tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    demo.ensure(folder)
    (folder / demo.STAMP).write_text("guitest-demo 0\n")  # stale: every caller wants to regenerate
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(3)
    workers = [ctx.Process(target=_ensure_after, args=(barrier, str(folder))) for _ in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
    assert [w.exitcode for w in workers] == [0, 0, 0]
    assert fingerprint(folder) == fingerprint(data)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".demo.lock", "demo"]


def _run_threads(count: int, folder: Path) -> list[BaseException]:
    barrier = threading.Barrier(count)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            _ensure_after(barrier, str(folder))
        except BaseException as exc:  # noqa: BLE001 - reported by the caller's assertion
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return errors


def test_concurrent_callers_generate_once(data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Path] = []
    generate = demo._generate

    def counting(dest: Path) -> None:
        calls.append(dest)
        generate(dest)

    monkeypatch.setattr(demo, "_generate", counting)
    folder = tmp_path / "demo"
    assert _run_threads(3, folder) == []
    assert len(calls) == 1
    assert fingerprint(folder) == fingerprint(data)


def test_concurrent_threads_without_flock_end_with_one_complete_set(data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Where fcntl is missing, every caller generates and the atomic rename picks one set.
    calls: list[Path] = []
    generate = demo._generate

    def counting(dest: Path) -> None:
        calls.append(dest)
        generate(dest)

    monkeypatch.setattr(demo, "_generate", counting)
    monkeypatch.setattr(demo, "fcntl", None)
    folder = tmp_path / "demo"
    assert _run_threads(2, folder) == []
    assert len(calls) == 2  # both really raced
    assert fingerprint(folder) == fingerprint(data)
    assert [p.name for p in tmp_path.iterdir()] == ["demo"]
