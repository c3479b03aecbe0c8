"""The build step pyproject.toml cannot declare: the suites ship inside the wheel.

The repository keeps its benchmark suites in ``suites/`` beside the package; a wheel carries them as
``guitest/suites/<name>/`` with an ``__init__.py`` in each folder on the way to a suite, so an installed
guitest runs them by name (``pytest --pyargs guitest.suites.demo``). Generated data, caches and dot-files
stay behind (guitest/bundled.py, loaded by its path: guitest's dependencies are not installed at build time).
An editable install (a checkout) reads ``suites/`` where it is and copies nothing.
"""

import importlib.util
import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def _bundled():
    spec = importlib.util.spec_from_file_location("_guitest_bundled", HERE / "guitest" / "bundled.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


class BuildPyWithSuites(build_py):
    """``build_py``, then ``suites/`` copied into ``<build>/guitest/suites/``."""

    def run(self):
        super().run()
        if self.editable_mode:
            return
        target = Path(self.build_lib, "guitest", "suites")
        if target.exists():  # a build folder left from an earlier build: never ship a suite that was since removed
            shutil.rmtree(target)
        self.announce(f"copying the suites into {target}", level=2)
        self._suites = _bundled().bundle(HERE / "suites", target)

    def get_outputs(self, include_bytecode=True):
        return [*super().get_outputs(include_bytecode), *(str(p) for p in getattr(self, "_suites", []))]


setup(cmdclass={"build_py": BuildPyWithSuites})
