"""Custom adapters: a conftest hook, py:MODULE:FACTORY, and an entry point (installed into nothing but a folder on the path)."""

from __future__ import annotations

import json

import pytest

from builders import n_rows, write_suite

ADAPTER = '''
from guitest.geometry import center, from_original_pixels
from guitest.models.base import Model, Reply


class TruthTeller(Model):
    """Answers the truth centre in its profile's syntax, and counts its calls."""

    calls = 0

    def generate(self, prompt, sent, case):
        assert sent.image is not None and sent.image.size == sent.size  # it looks at pixels
        TruthTeller.calls += 1
        x, y = from_original_pixels(center(case.truth), self.space, case.sent_size, case.original_size)
        return Reply(text=self.profile.answer_text(x, y))


def make_model(spec, arg, settings, profile, profile_reason):
    model = TruthTeller(spec, settings, profile, profile_reason)
    model.arg = arg
    return model
'''


def report_of(pytester: pytest.Pytester) -> dict:
    return json.loads((pytester.path / "reports" / "tiny.json").read_text())


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_conftest_hook_adapter(pytester: pytest.Pytester, mode: list[str]) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    pytester.makepyfile(my_adapters=ADAPTER)
    pytester.makeconftest(
        "from my_adapters import TruthTeller\n"
        "def pytest_guitest_make_model(spec, settings, profile, profile_reason):\n"
        "    return TruthTeller(spec, settings, profile, profile_reason) if spec == 'truth' else None\n"
    )
    result = pytester.runpytest_subprocess("suites/tiny", "--model=truth", "--model-profile=ui-tars-1.5", "-p", "no:cacheprovider", *mode)
    assert result.ret == 0, result.stdout.str()
    report = report_of(pytester)
    assert report["overall"]["hit"] == n_rows()
    assert report["model"]["adapter"] == "TruthTeller" and report["model"]["profile"]["name"] == "ui-tars-1.5"


def test_py_module_factory(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    pytester.makepyfile(my_adapters=ADAPTER)
    pytester.makeconftest("")  # puts the rootdir on sys.path, as a project's conftest does
    result = pytester.runpytest_subprocess("suites/tiny", "--model=py:my_adapters:make_model:v2", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    assert report_of(pytester)["overall"]["hit"] == n_rows()


def test_entry_point_adapter(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    site = pytester.path / "site"
    (site / "truthpkg-1.0.dist-info").mkdir(parents=True)
    (site / "truthpkg.py").write_text(ADAPTER)
    (site / "truthpkg-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: truthpkg\nVersion: 1.0\n")
    (site / "truthpkg-1.0.dist-info" / "entry_points.txt").write_text("[guitest.models]\ntruth = truthpkg:make_model\n")
    monkeypatch.setenv("PYTHONPATH", str(site))
    result = pytester.runpytest_subprocess("suites/tiny", "--model=truth:anything", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    assert report_of(pytester)["model"]["adapter"] == "TruthTeller"


def test_bad_factories_are_usage_errors(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    pytester.makepyfile(bad="def make_model(spec, arg, settings, profile, reason):\n    return 42\n")
    pytester.makeconftest("")
    result = pytester.runpytest_subprocess("suites/tiny", "--model=py:bad:make_model")
    assert result.ret == 4
    assert "the factory returned int, not a guitest.models.base.Model" in result.stderr.str()
    result = pytester.runpytest_subprocess("suites/tiny", "--model=py:nosuchmodule:make")
    assert result.ret == 4
    assert "cannot import module 'nosuchmodule'" in result.stderr.str()
