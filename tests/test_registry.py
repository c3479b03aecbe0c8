"""The one registry type (guitest/registry.py): where a name comes from, lazy built-ins, entry points, the miss
message; and guitest's registries: every built-in loads and is what its kind needs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import guitest.envs
from guitest import registry
from guitest.datapath import locate
from guitest.errors import ModelError, SuiteError
from guitest.live.protocol import EnvFailure
from guitest.live import runners
from guitest.live.runners import Runner
from guitest.models import SPECS, load_model
from guitest.models.base import Model, Settings
from guitest.registry import ENVS, GENERATORS, MODELS, READERS, RUNNERS, STYLES, TASKS, Registry
from guitest.tasks import Task

REPO = Path(__file__).resolve().parents[1]


def install(site: Path, package: str, groups: dict[str, dict[str, str]], code: str = "") -> None:
    """A distribution ``package`` with ``groups`` of entry points, installed into nothing but the folder ``site``."""
    info = site / f"{package}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("".join(f"[{g}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) for g, eps in groups.items()))
    if code:
        (site / f"{package}.py").write_text(code)


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder on sys.path holding two lazily imported modules (``lazy_a``, ``lazy_b``) and an installed package."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "lazy_a.py").write_text("THING = 'a'\n")
    (site / "lazy_b.py").write_text("THING = 'b'\n")
    install(site, "thingpkg", {"test.things": {"from-pkg": "thingpkg:THING", "a": "thingpkg:THING", "broken": "no_such_module_x:THING"}}, "THING = 'pkg'\n")
    monkeypatch.syspath_prepend(str(site))
    for name in ("lazy_a", "lazy_b", "thingpkg"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return site


def things() -> Registry[str]:
    return Registry("thing", "test.things", {"b": "lazy_b:THING", "a": "lazy_a:THING"}, error=SuiteError, how="things.register(name, thing)")


def test_a_built_in_is_imported_only_when_asked_for(plugins: Path) -> None:
    reg = things()
    assert "a" in reg and "lazy_a" not in sys.modules  # knowing the name imports nothing
    assert reg.get("a") == "a" and "lazy_a" in sys.modules and "lazy_b" not in sys.modules


def test_a_registration_replaces_a_built_in_and_works_as_a_decorator(plugins: Path) -> None:
    reg = things()
    assert reg.get("a") == "a"
    assert reg.register("a", "mine") == "mine" and reg.get("a") == "mine"  # even after the built-in was loaded

    @reg.register("made")
    def make() -> str:
        return "made"

    assert reg.get("made") is make and "made" in reg
    with pytest.raises(ValueError, match="a thing name is letters, digits"):
        reg.register("two words", "x")


def test_entry_points_come_after_the_built_ins_and_load_lazily(plugins: Path) -> None:
    reg = things()
    assert reg.get("a") == "a"  # an installed package does not change what a built-in name means
    assert "from-pkg" in reg and "thingpkg" not in sys.modules
    assert reg.get("from-pkg") == "pkg"
    assert reg.names() == ["b", "a", "broken", "from-pkg"]  # built-ins in their order, then the others sorted


def test_a_broken_entry_point_and_an_unknown_name_say_what_to_do(plugins: Path) -> None:
    reg = things()
    with pytest.raises(SuiteError, match=r"^thing 'broken': cannot load entry point 'no_such_module_x:THING' of the group 'test.things': ModuleNotFoundError"):
        reg.get("broken")
    with pytest.raises(SuiteError) as info:
        reg.get("c")
    assert str(info.value) == "unknown thing 'c'; known: b, a, broken, from-pkg. Add one with things.register(name, thing) or an entry point in the group 'test.things'"


def test_a_built_in_missing_its_extra_names_the_pip_extra(plugins: Path) -> None:
    reg = Registry("thing", "test.none", {"x:ARG": "no_such_module_y:THING [xtra]", "y": "no_such_module_y:THING"}, error=ModelError)
    assert reg.known() == "x:ARG, y" and reg.builtins == {"x": "no_such_module_y:THING", "y": "no_such_module_y:THING"}
    with pytest.raises(ModelError, match=r"thing 'x' needs packages that are not installed: pip install 'guitest\[xtra\]' \(No module named 'no_such_module_y'\)"):
        reg.get("x")
    with pytest.raises(ModuleNotFoundError):  # without an extra a failing built-in is guitest's bug: its traceback is kept
        reg.get("y")


def test_a_built_in_must_be_module_and_attribute() -> None:
    for target in ("lazy_a", "lazy_a:THING [two words]", "lazy a:THING"):
        with pytest.raises(ValueError, match="expected a plain name and 'module:attribute'"):
            Registry("thing", "test.things", {"a": target})


# -- guitest's registries -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reg", "group"),
    [(TASKS, "guitest.tasks"), (READERS, "guitest.formats"), (STYLES, "guitest.answers"), (ENVS, "guitest.envs"), (MODELS, "guitest.models"), (GENERATORS, "guitest.generators")],
    ids=lambda x: x.kind if isinstance(x, Registry) else x,
)
def test_every_built_in_loads(reg: Registry[object], group: str) -> None:
    assert reg.group == group
    for name in reg.builtins:
        if name == "hf":  # the one built-in that needs an extra; tests/test_hf_model.py loads it where torch is installed
            continue
        assert callable(reg.get(name)), name
    if reg is TASKS:
        assert all(issubclass(TASKS.get(name), Task) and TASKS.get(name).name == name for name in TASKS.builtins)


def test_every_built_in_runner_loads_under_its_own_name() -> None:
    assert RUNNERS.group == "guitest.runners"
    assert all(isinstance(RUNNERS.get(name), Runner) and RUNNERS.get(name).name == name for name in RUNNERS.builtins)
    assert list(RUNNERS.builtins) == ["guitest", "uitars15", "uitars15-qwen2vl", "qwen25vl", "qwen3vl", "prompt-agent", "aguvis"]
    with pytest.raises(ModelError, match=r"^unknown runner 'nope'; known: guitest, uitars15, .*, aguvis\. Add one with guitest.live.runners.register"):
        runners.get("nope")


def test_the_suite_schema_lists_the_built_in_names_as_examples() -> None:
    props = json.loads((REPO / "guitest" / "schemas" / "suite.schema.json").read_text())["properties"]
    assert props["task"]["examples"] == list(TASKS.builtins)
    assert props["format"]["examples"] == list(READERS.builtins)
    assert props["data"]["properties"]["generator"]["examples"] == list(GENERATORS.builtins)


def test_the_model_specs_and_the_miss_message() -> None:
    assert SPECS == "openai:NAME, anthropic:MODEL, openai-cua:MODEL, hf:PATH, replay:PATH, ocr, oracle, center, random, py:MODULE:FACTORY, or an installed guitest.models entry point"
    with pytest.raises(ModelError) as info:
        load_model("gpt5:x", Settings())
    assert str(info.value).startswith("unknown model 'gpt5:x'; known: openai:NAME, anthropic:MODEL, openai-cua:MODEL, hf:PATH, replay:PATH, ocr, oracle, center, random, py:MODULE:FACTORY")
    assert "guitest.models.register(name, factory)" in str(info.value) and "'guitest.models'" in str(info.value)
    with pytest.raises(ModelError, match=r"--model=oracle:x: oracle takes no argument; use --model=oracle"):
        load_model("oracle:x", Settings())
    assert type(load_model("oracle:", Settings())).__name__ == "Oracle"


def test_a_model_registered_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = {}

    def make(spec: str, arg: str, settings: Settings, profile: object, profile_reason: str, backoff: float = 0) -> Model:
        seen.update(spec=spec, arg=arg, backoff=backoff)
        return load_model("center", settings)

    guitest.models.register("test-echo", make)
    assert isinstance(load_model("test-echo:v2", Settings(), backoff=0.25), Model)
    assert seen == {"spec": "test-echo:v2", "arg": "v2", "backoff": 0.25}  # a factory with a backoff parameter gets it


def test_the_environment_and_generator_misses() -> None:
    with pytest.raises(EnvFailure, match=r"^unknown environment backend 'nope'; known: miniwob, webapp, desktop"):
        guitest.envs.factory("nope")
    with pytest.raises(SuiteError, match=r"^unknown data generator 'nope'; known: demo\. Add one with guitest.registry.GENERATORS.register"):
        locate("/tmp", {"dir": "x", "generator": "nope"}, "/tmp", "default", "suite.yaml")


def test_guitest_registry_imports_no_implementation() -> None:
    """Naming a kind imports none of its implementations (the built-ins are strings until asked for)."""
    source = (REPO / "guitest" / "registry.py").read_text()
    assert [line for line in source.splitlines() if line.startswith(("from .", "import guitest"))] == ["from .errors import GuitestError, ModelError, SuiteError"]
    assert registry.TASKS.builtins["grounding"] == "guitest.tasks.grounding:TASK"
