"""The built-in suites: found by name, packed for the wheel, run from outside the rootdir, copied into a project.

An installed guitest is imitated here by :func:`installed`: the suites packed as the build packs them into a
folder laid out like site-packages, and ``guitest.bundled.PACKAGE`` pointed at it. tests/test_wheel.py builds a
real wheel and runs it in a fresh environment.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from PIL import Image

from guitest import bundled, datapath
from guitest.data import fetch
from guitest.data import suite_data
from guitest.cli import main as guitest_main
from guitest.errors import GuitestError

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
MODES = [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist")]


def files_under(top: Path) -> list[str]:
    return sorted(p.relative_to(top).as_posix() for p in top.rglob("*") if p.is_file())


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The repository's suites packed as the wheel packs them, under a stand-in for site-packages/guitest/."""
    package = tmp_path / "site-packages" / "guitest"
    bundled.bundle(REPO / "suites", package / "suites")
    monkeypatch.setattr(bundled, "PACKAGE", package)
    return package / "suites"


# ----------------------------------------------------------------------------- by name


def test_a_checkout_finds_its_suites_by_name() -> None:
    assert bundled.folder() == REPO / "suites"
    names = bundled.names()
    assert {"demo", "screenspot_pro", "mmbench_gui/l1", "gui_hallubench/parsing", "python_example", "desktop_local"} <= set(names)
    assert "mmbench_gui" not in names  # a folder of suites, not a suite
    assert bundled.find("mmbench_gui.l1").folder == REPO / "suites" / "mmbench_gui" / "l1"
    assert bundled.find("mmbench_gui.l1").dotted == "guitest.suites.mmbench_gui.l1"
    assert bundled.suite_file("screenspot_pro") == REPO / "suites" / "screenspot_pro" / "suite.yaml"


def test_an_unknown_name_lists_the_built_in_suites() -> None:
    with pytest.raises(GuitestError, match=r"'nosuch' is neither a suite folder or file here nor a built-in suite; built-in suites: demo, .*screenspot_pro"):
        bundled.suite_file("nosuch")
    with pytest.raises(GuitestError, match=r"suite written in Python .* no suite.yaml: run it with pytest"):
        bundled.suite_file("python_example")


def test_a_path_that_exists_comes_before_a_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = tmp_path / "screenspot_pro"
    mine.mkdir()
    (mine / "suite.yml").write_text("name: mine\n")
    monkeypatch.chdir(tmp_path)
    assert bundled.suite_file("screenspot_pro") == Path("screenspot_pro", "suite.yml")
    (mine / "suite.yml").unlink()
    with pytest.raises(GuitestError, match="screenspot_pro: no suite.yaml or suite.yml in this folder"):
        bundled.suite_file("screenspot_pro")


# ----------------------------------------------------------------------------- packing


def test_the_wheel_gets_every_suite_file_and_no_generated_data(tmp_path: Path) -> None:
    source = tmp_path / "suites"
    shutil.copytree(REPO / "suites", source, ignore=shutil.ignore_patterns("__pycache__", "data", ".*"))
    shipped = files_under(source)
    # what a checkout holds after a run: the demo's generated screenshots and its lock, bytecode
    (source / "demo" / "data" / "images").mkdir(parents=True)
    (source / "demo" / "data" / "images" / "x.png").write_bytes(b"png")
    (source / "demo" / ".data.lock").write_text("")
    (source / "miniwob" / "__pycache__").mkdir()
    (source / "miniwob" / "__pycache__" / "thresholds.cpython-311.pyc").write_bytes(b"")

    target = tmp_path / "guitest" / "suites"
    bundled.bundle(source, target)

    packages = [
        "",
        "demo",
        "desktop_local",
        "gui_hallubench",
        "gui_hallubench/hallucination",
        "gui_hallubench/parsing",
        "miniwob",
        "mmbench_gui",
        "mmbench_gui/l1",
        "mmbench_gui/l2",
        "my_webapp",
        "osworld",
        "python_example",
        "screenspot",
        "screenspot_pro",
        "screenspot_v2",
        "trajectory_judge",
        "waa",
    ]
    inits = [f"{p}/__init__.py".lstrip("/") for p in packages]
    assert files_under(target) == sorted(shipped + inits)
    assert (target / "mmbench_gui" / "l1" / "__init__.py").read_text() == bundled.INIT_TEXT
    assert not (target / "desktop_local" / "apps" / "__init__.py").exists()  # only folders on the way to a suite
    for rel in shipped:
        assert (target / rel).read_bytes() == (source / rel).read_bytes(), rel


def test_generated_data_is_only_a_subfolder_of_the_suite(tmp_path: Path) -> None:
    suite = tmp_path / "odd"
    suite.mkdir()
    (suite / "suite.yaml").write_text("name: odd\ndata: {dir: ., base: suite, generator: demo}\n")
    (suite / "rows.json").write_text("[]")
    bundled.bundle(tmp_path, tmp_path.parent / "out")
    assert (tmp_path.parent / "out" / "odd" / "rows.json").is_file()  # dir: . is the suite itself: kept


def test_the_packing_module_loads_without_guitest_or_its_dependencies(tmp_path: Path) -> None:
    """setup.py loads guitest/bundled.py by its path at build time, before any dependency is installed."""
    code = (
        "import importlib.util, sys\n"
        "spec = importlib.util.spec_from_file_location('b', sys.argv[1])\n"
        "m = importlib.util.module_from_spec(spec); sys.modules['b'] = m; spec.loader.exec_module(m)\n"
        "assert 'guitest' not in sys.modules and 'yaml' not in sys.modules\n"
        "print(issubclass(m.BundledError, Exception))\n"
    )
    import subprocess

    result = subprocess.run([sys.executable, "-S", "-c", code, str(REPO / "guitest" / "bundled.py")], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"


# ----------------------------------------------------------------------------- node ids


def test_a_suite_outside_the_rootdir_gets_an_id_the_run_can_resolve(tmp_path: Path) -> None:
    demo = bundled.folder() / "demo" / "suite.yaml"
    assert bundled.nodeid(demo, REPO) is None  # inside the rootdir: pytest's own id, as always
    assert bundled.nodeid(demo, tmp_path) == "guitest/suites/demo/suite.yaml"
    assert bundled.resolve_key(tmp_path, "guitest/suites/demo/suite.yaml") == demo
    assert bundled.resolve_key(REPO, "suites/demo/suite.yaml") == demo
    other = tmp_path / "elsewhere" / "suite.yaml"
    assert bundled.nodeid(other, tmp_path / "root") == other.as_posix()
    assert bundled.resolve_key(tmp_path / "root", other.as_posix()) == other


ROW = {"img_filename": "a.png", "bbox": [10, 10, 20, 20], "instruction": "click the box", "data_type": "text", "data_source": "ios"}


def write_package_of_suites(top: Path) -> Path:
    """Two small suites in an importable package outside any rootdir: suitepkg.alpha and suitepkg.beta."""
    package = top / "suitepkg"
    for name in ("alpha", "beta"):
        folder = package / name
        (folder / "data").mkdir(parents=True)
        (folder / "__init__.py").write_text("")
        (folder / "suite.yaml").write_text(
            f"name: {name}\nformat: screenspot\ndata: {{dir: data, base: suite, annotations: screenspot_*.json}}\ntask: grounding\nid: '{{data_source}}-{{row}}'\ntags: [data_type, data_source]\n"
        )
        (folder / "data" / "screenspot_mobile.json").write_text(json.dumps([ROW, {**ROW, "bbox": [50, 50, 10, 10]}]))
        Image.new("RGB", (100, 100), "white").save(folder / "data" / "a.png")
    (package / "__init__.py").write_text("")
    return package


@pytest.mark.parametrize("mode", MODES)
def test_two_suites_run_by_pyargs_from_outside_the_rootdir_each_get_their_report(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, mode: list[str]
) -> None:
    package = write_package_of_suites(tmp_path_factory.mktemp("site"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(package.parent), os.environ.get("PYTHONPATH")])))
    pytester.makeini("[pytest]\n")
    result = pytester.runpytest_subprocess("--pyargs", "suitepkg.alpha", "suitepkg.beta", "--model=oracle", "-p", "no:cacheprovider", *mode)
    assert result.ret == 0, result.stdout.str()[-3000:]
    for name in ("alpha", "beta"):
        report = json.loads((pytester.path / "reports" / f"{name}.json").read_text())
        assert report["suite"]["path"] == (package / name / "suite.yaml").as_posix()
        assert (report["n_results"], report["overall"]["hit"]) == (2, 2)
    assert "NO REPORT" not in result.stdout.str()
    result.stdout.fnmatch_lines([f"*{(package / 'alpha' / 'suite.yaml').as_posix()}*"])


# ----------------------------------------------------------------------------- an installed guitest


def test_an_installed_suite_generates_its_data_under_the_data_root(installed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = files_under(installed)
    root = tmp_path / "data-root"
    monkeypatch.setenv(datapath.ENV_VAR, str(root))
    demo = installed / "demo"
    assert bundled.installed(demo) and not bundled.installed(REPO / "suites" / "demo")
    data = {"dir": "data", "base": "suite", "generator": "demo"}
    assert datapath.data_folder(str(demo), data, str(root)) == str(root / "demo" / "data")
    assert datapath.data_folder(str(REPO / "suites" / "demo"), data, str(root)) == str(REPO / "suites" / "demo" / "data")  # a checkout: as before
    assert "(generated under the data root" in datapath.describe_data(str(demo), data, str(root), "$GUITEST_DATA")

    assert suite_data("demo") == root / "demo" / "data"  # as suites/python_example reads it
    assert len(list((root / "demo" / "data" / "images").glob("*.png"))) == 12
    assert files_under(installed) == before  # nothing written into the package
    # the files a suite reads stay in the package (read-only use is fine)
    assert datapath.data_folder(str(installed / "desktop_local"), {"dir": ".", "base": "suite"}, str(root)) == str(installed / "desktop_local")


def test_placeholders_and_fetch_take_a_built_in_suite_by_name(installed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    annotations = sorted((SHARED / "screenspot_pro").glob("*.json"))
    if not annotations:
        pytest.skip(f"needs the real annotation files in {SHARED / 'screenspot_pro'} (the shared reference data is not on this machine)")
    monkeypatch.chdir(tmp_path)  # an empty folder, outside the repository
    root = tmp_path / "data"
    (root / "ScreenSpot-Pro" / "annotations").mkdir(parents=True)
    for f in annotations:
        shutil.copyfile(f, root / "ScreenSpot-Pro" / "annotations" / f.name)
    assert guitest_main(["placeholders", "screenspot_pro", "--data-root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "written 1581" in out
    assert f"run it with: pytest --pyargs guitest.suites.screenspot_pro --model=oracle --data-root={root}" in out

    calls = []

    def hub(repo_id: str, *, local_dir: str, **kwargs: object) -> str:
        calls.append((repo_id, local_dir))
        shutil.copytree(root / "ScreenSpot-Pro", local_dir, dirs_exist_ok=True)
        return local_dir

    other = tmp_path / "fetched"
    assert fetch.main(["screenspot_pro", "--data-root", str(other)], download=hub) == 0
    assert calls == [("likaixin/ScreenSpot-Pro", str(other / "ScreenSpot-Pro"))]
    assert f"run it with: pytest --pyargs guitest.suites.screenspot_pro --data-root={other} --model=SPEC" in capsys.readouterr().out


def test_fetch_names_the_built_in_suites_when_one_is_missing(installed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.rmtree(installed / "screenspot_v2")
    assert fetch.main(["screenspot_v2", "--data-root", str(tmp_path)], download=lambda *a, **k: None) == 2
    assert f"{installed / 'screenspot_v2' / 'suite.yaml'}: no such suite file (this guitest's built-in suites)" in capsys.readouterr().err


def test_a_copy_is_the_suite_s_files_and_is_never_overwritten_unasked(installed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert guitest_main(["suites", "copy", "desktop_local", "mmbench_gui/l1"]) == 0
    assert "desktop_local: copied to suites/desktop_local; run it with: pytest suites/desktop_local --model=SPEC" in capsys.readouterr().out
    expected = [f for f in files_under(installed / "desktop_local") if not f.endswith("__init__.py")]
    assert files_under(tmp_path / "suites" / "desktop_local") == expected
    assert files_under(tmp_path / "suites" / "mmbench_gui") == ["l1/suite.yaml"]

    edited = tmp_path / "suites" / "desktop_local" / "suite.yaml"
    edited.write_text("my edits\n")
    assert guitest_main(["suites", "copy", "desktop_local"]) == 2
    assert "suites/desktop_local exists already" in capsys.readouterr().err
    assert edited.read_text() == "my edits\n"
    (tmp_path / "suites" / "desktop_local" / "mine.txt").write_text("kept")
    assert guitest_main(["suites", "copy", "desktop_local", "--force"]) == 0
    assert edited.read_bytes() == (installed / "desktop_local" / "suite.yaml").read_bytes()
    assert (tmp_path / "suites" / "desktop_local" / "mine.txt").read_text() == "kept"


def test_the_list_names_each_suite_with_its_task(installed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert guitest_main(["suites"]) == 0
    out = capsys.readouterr().out
    assert f"built-in suites, in {installed}:" in out
    assert "  screenspot_pro                grounding: GUI grounding on professional high-resolution software (ScreenSpot-Pro)" in out
    assert "  python_example                a suite written in Python (pytest tests)" in out
    assert "run one: pytest --pyargs guitest.suites.demo --model=SPEC" in out


def test_suite_data_of_a_missing_suite_is_an_error(installed: Path) -> None:
    shutil.rmtree(installed / "demo")
    with pytest.raises(GuitestError, match="'demo' is neither"):
        suite_data("demo")
