"""A pip user's guitest: a wheel built from this source, installed in a fresh environment, run from an empty folder.

The wheel is built as ``python -m build`` builds it (a source distribution first, the wheel from that), with
this environment's setuptools and no network (``--no-build-isolation``). It is installed into a new venv
without its dependencies; the venv reaches them through a ``.pth`` line naming this environment's
site-packages, written after the install (so pip does not take this environment's own guitest, an
editable install, for the one being installed). Every command runs with the venv's interpreter in an
empty folder outside the repository, without PYTHONPATH: ``guitest`` is the installed package.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
SOURCE_FILES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "guitest", "suites")


class Installed:
    """A venv holding the wheel, and an empty working folder outside the repository."""

    def __init__(self, top: Path, wheel: Path) -> None:
        self.top = top
        self.wheel = wheel
        self.python = top / "venv" / "bin" / "python"
        self.work = top / "work"
        self.work.mkdir()
        self.data_home = top / "xdg"
        self.env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "GUITEST_DATA", "LMUData")}
        self.env["XDG_DATA_HOME"] = str(self.data_home)
        self.package = Path(self.run("-c", "import guitest, os; print(os.path.dirname(guitest.__file__))").stdout.strip())

    def run(self, *args: str, ok: bool = True, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        result = subprocess.run([str(self.python), *args], cwd=self.work, env=self.env, capture_output=True, text=True, timeout=timeout)
        if ok:
            assert result.returncode == 0, f"{args}: exit {result.returncode}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        return result

    def guitest(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        return self.run(str(self.python.parent / "guitest"), *args, ok=ok)

    def pytest(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run("-m", "pytest", *args)


def package_files(package: Path) -> list[str]:
    """The installed package's files, leaving out pytest's own cache of assertion-rewritten modules (``*-pytest-*.pyc``),
    which pytest writes into ``__pycache__`` beside every module of an installed pytest plugin (guitest's own, with or
    without suites) and every test module it imports; PYTHONDONTWRITEBYTECODE stops it."""
    return sorted(p.relative_to(package).as_posix() for p in package.rglob("*") if p.is_file() and "-pytest-" not in p.name)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    for needed in ("setuptools", "yaml", "pip"):  # the build's requirements, taken from this environment (no network)
        if importlib.util.find_spec(needed) is None:
            pytest.skip(f"building the wheel without network needs {needed} in this environment (pip install setuptools pyyaml)")
    top = tmp_path_factory.mktemp("pip-user")
    source = top / "source"
    source.mkdir()
    for name in SOURCE_FILES:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(path, source / name)
    # what a checkout holds after `pytest suites/demo`: generated data the wheel must leave out
    (source / "suites" / "demo" / "data").mkdir(exist_ok=True)
    (source / "suites" / "demo" / "data" / "leftover.json").write_text("[]")

    pip = [sys.executable, "-m", "pip"]
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # a checkout on PYTHONPATH would pass for an installed guitest
    build = "import sys; from setuptools import build_meta; print(build_meta.build_sdist(sys.argv[1]))"
    sdist = subprocess.run([sys.executable, "-c", build, str(top / "sdist")], cwd=source, env=clean, capture_output=True, text=True, timeout=300)
    assert sdist.returncode == 0, sdist.stderr[-3000:]
    tarball = top / "sdist" / sdist.stdout.strip().splitlines()[-1]
    wheel = subprocess.run([*pip, "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(top / "dist"), str(tarball)], env=clean, capture_output=True, text=True, timeout=300)
    assert wheel.returncode == 0, wheel.stderr[-3000:]
    (whl,) = (top / "dist").glob("guitest-*.whl")

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(top / "venv")], check=True, timeout=120)
    venv_python = top / "venv" / "bin" / "python"
    install = subprocess.run([*pip, "--python", str(venv_python), "install", "-q", "--no-deps", "--no-index", str(whl)], env=clean, capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr[-3000:]
    site = subprocess.run([str(venv_python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], capture_output=True, text=True, check=True).stdout.strip()
    deps = dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")])
    Path(site, "_guitest_test_deps.pth").write_text("".join(f"{p}\n" for p in deps))

    env = Installed(top, whl)
    assert env.package == Path(site) / "guitest", "the venv must import the installed wheel, not this checkout"
    return env


PRO_ROWS = [  # the ScreenSpot-Pro format, for a machine without ../shared/data
    {
        "img_filename": "app_win/a.png",
        "bbox": [10, 10, 40, 30],
        "instruction": "open the menu",
        "id": "app_windows_0",
        "application": "app",
        "platform": "windows",
        "img_size": [200, 100],
        "ui_type": "icon",
        "group": "Dev",
    },
    {
        "img_filename": "app_win/a.png",
        "bbox": [100, 50, 190, 90],
        "instruction": "click Save",
        "id": "app_windows_1",
        "application": "app",
        "platform": "windows",
        "img_size": [200, 100],
        "ui_type": "text",
        "group": "Dev",
    },
]


def test_a_pip_user_runs_the_built_in_suites_from_an_empty_folder(installed: Installed) -> None:
    """One test, so that -n 2 builds and installs the wheel once."""
    names = zipfile.ZipFile(installed.wheel).namelist()
    assert "guitest/suites/__init__.py" in names
    assert "guitest/suites/mmbench_gui/l1/__init__.py" in names and "guitest/suites/mmbench_gui/l1/suite.yaml" in names
    assert "guitest/suites/desktop_local/apps/notes_app.py" in names and "guitest/suites/desktop_local/pages/form.html" in names
    assert not [n for n in names if n.startswith("guitest/suites/demo/data/") or "__pycache__" in n]
    assert {"guitest/reporting/viewer/viewer.js", "guitest/reporting/viewer/viewer.css"} <= set(names)  # the report's viewer, package data
    before = package_files(installed.package)

    # the demo by name: reports in the current folder, its screenshots under the data root
    result = installed.pytest("--pyargs", "guitest.suites.demo", "--model=oracle")
    assert "48 passed" in result.stdout and "guitest/suites/demo/suite.yaml" in result.stdout
    report = json.loads((installed.work / "reports" / "demo.json").read_text())
    assert (report["suite"]["path"], report["overall"]["hit"]) == ("guitest/suites/demo/suite.yaml", 48)
    assert len(list((installed.data_home / "guitest" / "demo" / "data" / "images").glob("*.png"))) == 12
    result = installed.pytest("--pyargs", "guitest.suites.python_example", "guitest.suites.demo", "--model=oracle", "-n", "2")
    assert "66 passed" in result.stdout
    assert (installed.work / "reports" / "test_demo_clicks.json").is_file()

    # ScreenSpot-Pro by name: placeholders for its annotations, then the oracle
    root = installed.top / "data"
    annotations = root / "ScreenSpot-Pro" / "annotations"
    annotations.mkdir(parents=True)
    real = sorted((SHARED / "screenspot_pro").glob("*.json"))
    for f in real:
        shutil.copyfile(f, annotations / f.name)
    if not real:
        (annotations / "app_windows.json").write_text(json.dumps(PRO_ROWS))
    rows, images, selected = (1581, 1581, 379) if real else (2, 1, 1)
    out = installed.guitest("placeholders", "screenspot_pro", f"--data-root={root}").stdout
    assert f"rows {rows}, images {images}, written {images}" in out and f"pytest --pyargs guitest.suites.screenspot_pro --model=oracle --data-root={root}" in out
    result = installed.pytest("--pyargs", "guitest.suites.screenspot_pro", "--model=oracle", f"--data-root={root}", "-k", "icon and windows", "-n", "2")
    assert f"{selected} passed" in result.stdout

    # fetch finds the built-in suite by name and calls the hub with its paths (a stand-in for snapshot_download, unreachable)
    fake = (
        "import sys\nfrom guitest.data import fetch\n"
        "def hub(repo_id, *, local_dir, **kw):\n"
        "    print('hub called:', repo_id, local_dir)\n"
        "    raise ConnectionError('no network in this test')\n"
        "sys.exit(fetch.main(sys.argv[1:], download=hub))\n"
    )
    fetched = installed.top / "fetched"
    result = installed.run("-c", fake, "screenspot_pro", "--data-root", str(fetched), ok=False)
    assert result.returncode == 2
    assert f"hub called: likaixin/ScreenSpot-Pro {fetched / 'ScreenSpot-Pro'}" in result.stdout
    assert "could not download likaixin/ScreenSpot-Pro" in result.stderr and "ConnectionError: no network in this test" in result.stderr

    assert package_files(installed.package) == before  # nothing written into the installed package

    # a copy to edit: its own files only, run by its path, its generated data beside it
    installed.guitest("suites", "copy", "demo", "--into", "mine")
    assert sorted(p.name for p in (installed.work / "mine" / "demo").iterdir()) == ["suite.yaml"]
    assert "48 passed" in installed.pytest("mine/demo", "--model=oracle").stdout
    assert (installed.work / "mine" / "demo" / "data" / ".guitest-demo").is_file()
