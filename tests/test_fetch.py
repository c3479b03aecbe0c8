"""``guitest data fetch``: download (faked: a local folder laid out like the hub repository), unpack, verify.

No network: every test passes ``download=`` a :class:`FakeHub` that copies a folder the
test builds (the real annotation files from ../shared/data plus blank placeholder
images) the way ``huggingface_hub.snapshot_download(local_dir=...)`` would, honouring
``allow_patterns`` and ``force_download``. Tests needing ../shared/data skip with a
reason when it is absent.
"""

from __future__ import annotations

import fnmatch
import importlib
import importlib.util
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from guitest.datapath import ENV_VAR
from guitest.data.fetch import EXPECTED, FetchError, fetch, main, unpack
from guitest.data.placeholders import make_placeholders

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
PRO_REPO = "likaixin/ScreenSpot-Pro"
V2_REPO = "OS-Copilot/ScreenSpot-v2"
V1_REPO = "KevinQHLin/ScreenSpot"


def shared(folder: str) -> list[Path]:
    files = sorted((SHARED / folder).glob("*.json"))
    if not files:
        pytest.skip(f"needs the real annotation files in {SHARED / folder} (the shared reference data is not on this machine)")
    return files


class FakeHub:
    """Stands in for ``snapshot_download``: copies local folders laid out like hub repositories."""

    def __init__(self, repos: dict[str, Path], omit: set[str] = frozenset(), error: BaseException | None = None) -> None:
        self.repos, self.omit, self.error = repos, set(omit), error
        self.calls: list[dict[str, Any]] = []

    def __call__(self, repo_id: str, *, repo_type: str, revision: str | None = None, local_dir: str, allow_patterns: list[str] | None = None, force_download: bool = False) -> str:
        self.calls.append({"repo_id": repo_id, "repo_type": repo_type, "revision": revision, "allow_patterns": allow_patterns, "force_download": force_download})
        if self.error is not None:
            raise self.error
        source = self.repos[repo_id]
        for path in sorted(source.rglob("*")):
            rel = path.relative_to(source).as_posix()
            if not path.is_file() or rel in self.omit:
                continue
            if allow_patterns and not any(fnmatch.fnmatch(rel, p) for p in allow_patterns):
                continue
            target = Path(local_dir) / rel
            if target.exists() and not force_download:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        return local_dir


@pytest.fixture(scope="module")
def pro_hub(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of likaixin/ScreenSpot-Pro: the real annotations, placeholder images, and files fetch skips."""
    files = shared("screenspot_pro")
    hub = tmp_path_factory.mktemp("hub-pro")
    (hub / "annotations").mkdir()
    for f in files:
        shutil.copyfile(f, hub / "annotations" / f.name)
    make_placeholders("screenspot_pro", sorted((hub / "annotations").glob("*.json")), hub / "images")
    (hub / "README.md").write_text("# ScreenSpot-Pro\n")
    (hub / "annotate.html").write_text("<html></html>\n")
    (hub / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")
    return hub


def pro_images(hub: Path) -> list[str]:
    return sorted(p.relative_to(hub).as_posix() for p in (hub / "images").rglob("*.png"))


def test_fetch_verifies_and_pytest_collects_1581(pro_hub: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "data"
    hub = FakeHub({PRO_REPO: pro_hub})
    assert main(["screenspot_pro", "--data-root", str(root), "--revision", "v1.0"], download=hub) == 0
    out = capsys.readouterr().out
    dest = root / "ScreenSpot-Pro"
    assert f"downloading dataset {PRO_REPO} (revision v1.0)" in out
    assert f"verified {dest}: 1581 samples (expected 1581), 1581 images, all present" in out
    assert f"pytest suites/screenspot_pro --data-root={root}" in out
    assert hub.calls == [{"repo_id": PRO_REPO, "repo_type": "dataset", "revision": "v1.0", "allow_patterns": ["annotations/*.json", "images/*", "README.md"], "force_download": False}]
    assert len(list((dest / "images").rglob("*.png"))) == 1581
    assert not (dest / "annotate.html").exists() and not (dest / ".DS_Store").exists()

    result = subprocess.run(
        [sys.executable, "-m", "pytest", str(REPO / "suites" / "screenspot_pro"), "--model=oracle", f"--data-root={root}", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "1581 tests collected" in result.stdout


def test_verified_copy_left_alone_unless_force(pro_hub: Path, tmp_path: Path) -> None:
    hub = FakeHub({PRO_REPO: pro_hub})
    lines: list[str] = []
    first = fetch("screenspot_pro", data_root=str(tmp_path), download=hub, echo=lines.append)
    assert first.downloaded and first.verification.ok and len(hub.calls) == 1

    image = first.data_dir / pro_images(pro_hub)[0]
    image.write_bytes(b"edited locally")
    again = fetch("screenspot_pro", data_root=str(tmp_path), download=hub, echo=lines.append)
    assert not again.downloaded and again.verification.samples == 1581
    assert len(hub.calls) == 1, "a verified copy must not be downloaded again"
    assert "left alone (--force downloads it again)" in lines[-1]
    assert image.read_bytes() == b"edited locally"

    forced = fetch("screenspot_pro", data_root=str(tmp_path), force=True, download=hub, echo=lines.append)
    assert forced.downloaded and hub.calls[-1]["force_download"] is True
    assert image.read_bytes() == (pro_hub / pro_images(pro_hub)[0]).read_bytes()

    image.unlink()  # an incomplete copy is completed without --force
    resumed = fetch("screenspot_pro", data_root=str(tmp_path), download=hub, echo=lines.append)
    assert resumed.downloaded and resumed.verification.ok and hub.calls[-1]["force_download"] is False
    assert any("is incomplete (1 of 1581 images missing" in line for line in lines)


def test_missing_images_fail_verification_by_name(pro_hub: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gone = pro_images(pro_hub)[100:112]
    hub = FakeHub({PRO_REPO: pro_hub}, omit=set(gone))
    assert main(["screenspot_pro", "--data-root", str(tmp_path)], download=hub) == 2
    err = capsys.readouterr().err
    assert err.startswith("guitest data fetch: screenspot_pro: the data downloaded from likaixin/ScreenSpot-Pro")
    assert "12 of 1581 images missing: " in err and ", ... and 2 more" in err
    shown = [g for g in gone if g in err]
    assert shown == gone[:10]
    assert "1581 samples" not in err  # the count is right; only the images are missing
    assert f"hf download {PRO_REPO} --repo-type dataset --local-dir {tmp_path / 'ScreenSpot-Pro'}" in err


def test_missing_annotation_file_fails_with_the_count_difference(pro_hub: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = len(json.loads((pro_hub / "annotations" / "autocad_windows.json").read_text("utf-8")))
    hub = FakeHub({PRO_REPO: pro_hub}, omit={"annotations/autocad_windows.json"})
    assert main(["screenspot_pro", "--data-root", str(tmp_path)], download=hub) == 2
    err = capsys.readouterr().err
    assert f"{1581 - rows} samples, expected 1581 (-{rows})" in err


def _connection_error(kind: str) -> BaseException:
    if kind == "builtin":
        return ConnectionError("[Errno 101] Network is unreachable")
    if kind == "oserror":
        return OSError("[Errno -2] Name or service not known")
    if kind == "huggingface_hub":
        errors = pytest.importorskip("huggingface_hub.errors")
        return errors.LocalEntryNotFoundError("An error happened while trying to locate the files on the Hub")
    module = importlib.import_module(kind) if importlib.util.find_spec(kind) else None
    if module is None:
        pytest.skip(f"{kind} is not installed")
    if kind == "requests":
        return module.ConnectionError("Max retries exceeded")
    return module.ConnectError("[Errno -3] Temporary failure in name resolution")


@pytest.mark.parametrize("kind", ["builtin", "oserror", "huggingface_hub", "httpx", "httpx2", "requests"])
def test_unreachable_hub_exits_2_with_what_to_do(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    error = _connection_error(kind)
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    hub = FakeHub({}, error=error)
    assert main(["screenspot_v2"], download=hub) == 2
    err = capsys.readouterr().err
    assert f"could not download {V2_REPO} (revision main) from the Hugging Face Hub" in err
    assert type(error).__name__ in err and "unreachable" in err
    assert f"data root {tmp_path} (from ${ENV_VAR})" in err
    assert f"hf download {V2_REPO} --repo-type dataset --local-dir {tmp_path / 'ScreenSpot-v2'}" in err
    assert "unzip screenspotv2_image.zip" in err
    assert "Traceback" not in err
    assert not (tmp_path / "ScreenSpot-v2").exists(), "a failed download leaves no empty data folder behind"


def test_huggingface_hub_not_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # import fails
    assert main(["screenspot_pro", "--data-root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "pip install 'guitest[fetch]'" in err and PRO_REPO in err and str(tmp_path) in err


def test_unknown_suite(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["demo", "--data-root", str(tmp_path)], download=FakeHub({})) == 2
    assert "no public data to fetch for 'demo'; suites with a download: screenspot, screenspot_pro, screenspot_v2" in capsys.readouterr().err


@pytest.fixture(scope="module")
def v2_images(tmp_path_factory: pytest.TempPathFactory) -> Path:
    images = tmp_path_factory.mktemp("v2-images")
    make_placeholders("screenspot_v2", shared("screenspot_v2"), images)
    return images


@pytest.mark.parametrize("layout", ["folder", "flat"])
def test_screenspot_v2_archive_is_unpacked(layout: str, v2_images: Path, tmp_path: Path) -> None:
    hub_dir = tmp_path / "hub"
    hub_dir.mkdir()
    for f in shared("screenspot_v2"):
        shutil.copyfile(f, hub_dir / f.name)
    prefix = "screenspotv2_image/" if layout == "folder" else ""
    with zipfile.ZipFile(hub_dir / "screenspotv2_image.zip", "w", zipfile.ZIP_STORED) as zf:
        for png in sorted(v2_images.iterdir()):
            zf.write(png, prefix + png.name)
        zf.writestr(f"__MACOSX/{prefix}._{png.name}", b"resource fork")
        zf.writestr(prefix + ".DS_Store", b"finder")
    lines: list[str] = []
    result = fetch("screenspot_v2", data_root=str(tmp_path / "data"), download=FakeHub({V2_REPO: hub_dir}), echo=lines.append)
    dest = tmp_path / "data" / "ScreenSpot-v2"
    assert result.verification.ok and result.verification.samples == EXPECTED["screenspot_v2"] == 1272
    assert sorted(p.name for p in (dest / "screenspotv2_image").iterdir()) == sorted(p.name for p in v2_images.iterdir())
    assert not (dest / "screenspotv2_image.zip").exists() and not (dest / "__MACOSX").exists()
    assert any(f"unpacked {len(list(v2_images.iterdir()))} files" in line for line in lines)


def test_screenspot_mirror_is_rearranged(tmp_path: Path) -> None:
    files = shared("screenspot")
    hub_dir = tmp_path / "hub"
    (hub_dir / "metadata").mkdir(parents=True)
    for f in files:
        shutil.copyfile(f, hub_dir / "metadata" / f.name)
    (hub_dir / "metadata" / "hf_test_full.json").write_text("[]")  # in the mirror, not part of the layout
    make_placeholders("screenspot", files, hub_dir / "images")
    result = fetch("screenspot", data_root=str(tmp_path / "data"), download=FakeHub({V1_REPO: hub_dir}), echo=lambda _: None)
    dest = tmp_path / "data" / "ScreenSpot"
    assert result.verification.ok and result.verification.samples == 1272
    assert sorted(p.name for p in dest.glob("*.json")) == sorted(f.name for f in files)
    assert len(list((dest / "screenspot_imgs").iterdir())) == result.verification.images == 610
    assert not (dest / "images").exists() and not (dest / "metadata").exists()


def test_unpack_refuses_paths_leaving_the_folder(tmp_path: Path) -> None:
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("screenspotv2_image/ok.png", b"x")
        zf.writestr("../../evil.png", b"x")
    with pytest.raises(FetchError, match="would land outside"):
        unpack(archive, tmp_path / "out" / "screenspotv2_image")
    assert not (tmp_path / "evil.png").exists()


def test_broken_archive_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hub_dir = tmp_path / "hub"
    hub_dir.mkdir()
    (hub_dir / "screenspotv2_image.zip").write_bytes(b"not a zip")
    assert main(["screenspot_v2", "--data-root", str(tmp_path / "data")], download=FakeHub({V2_REPO: hub_dir})) == 2
    assert "screenspotv2_image.zip: not a valid zip archive" in capsys.readouterr().err
