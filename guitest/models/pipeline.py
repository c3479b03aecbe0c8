"""The model's stages made replaceable, from a model config file or from Python.

A case goes through ``build_prompt -> preprocess -> generate -> postprocess ->
parse_response`` (:mod:`guitest.models.base`). Any stage can be replaced by a function;
the others keep the adapter's own (its default). guitest calls a replacement as:

==================  ===============================================  =================================
stage               call                                             returns
==================  ===============================================  =================================
``build_prompt``    ``fn(model, case, template)``                    a ``Prompt`` (or the user text)
``preprocess``      ``fn(model, image, case, **generation)``         a ``SentImage``
``generate``        ``fn(model, prompt, sent, case, **generation)``  a ``Reply`` (or its text)
``postprocess``     ``fn(model, reply, case)``                       the answer text
``parse_response``  ``fn(model, answer, case)``                      the text the task's judge reads
==================  ===============================================  =================================

``model`` is the adapter being wrapped, so a stage can start from the default
(``model.build_prompt(case, template)``) or call the endpoint (``model.generate(...)``).
``generation`` are the config's generation settings: each replacement gets the ones its
signature names (all of them with ``**kwargs``); ``temperature``, ``max_tokens`` and
``seed`` also set the adapter's own settings, so the default stages, the response cache
and the report see them. Every function is resolved and its signature checked when the
config is loaded (before collection): a missing module, a missing function, a signature
that does not fit, or a generation setting nothing takes is a :class:`ModelError` naming
the file, the field and the fix.

From a file: ``pytest ... --model-config=my_model.yaml`` (``schemas/model_config.schema.json``);
from Python: :func:`with_stages`. See docs/pipeline.md.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping

import yaml
from PIL import Image

from .. import schema, yamlfile
from ..errors import ModelError, where
from .base import Blind, Case, Model, Prompt, Reply, SentImage

#: stage -> the positional arguments guitest passes to a replacement
CALLS: dict[str, tuple[str, ...]] = {
    "build_prompt": ("model", "case", "template"),
    "preprocess": ("model", "image", "case"),
    "generate": ("model", "prompt", "sent", "case"),
    "postprocess": ("model", "reply", "case"),
    "parse_response": ("model", "answer", "case"),
}
#: stages that receive the generation settings as keyword arguments
TAKE_GENERATION = ("preprocess", "generate")
#: generation settings that are also the adapter's own settings
SETTINGS_KEYS = ("temperature", "max_tokens", "seed")


@dataclass(frozen=True)
class Stage:
    """A resolved replacement: its name as given (``module:function`` or a Python qualname), the function,
    and the generation settings it is passed."""

    target: str
    fn: Callable[..., Any]
    kwargs: tuple[str, ...] = ()


def resolve(target: str, label: str) -> Callable[..., Any]:
    """The function ``module:function`` (``function`` may be dotted: ``module:Class.method``) names.

    ``label`` says where the name came from in error messages (file and field).
    """
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise ModelError(f"{label}: {target!r} is not of the form module:function")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise ModelError(f"{label}: no module named {exc.name!r} (looked in sys.path, which includes the config's python_path)") from None
        raise ModelError(f"{label}: importing module {module_name!r} failed: {exc}") from None
    except Exception as exc:  # the user's module itself is broken: say so, no traceback
        raise ModelError(f"{label}: importing module {module_name!r} raised {type(exc).__name__}: {exc}") from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            public = sorted(n for n, v in vars(module).items() if inspect.isfunction(v) and v.__module__ == module.__name__ and not n.startswith("_"))
            raise ModelError(f"{label}: module {module_name!r} ({getattr(module, '__file__', '?')}) has no {attr!r}" + (f"; its functions: {', '.join(public)}" if public else ""))
        obj = getattr(obj, part)
    if not callable(obj):
        raise ModelError(f"{label}: {target!r} is a {type(obj).__name__}, not a function")
    return obj


def check(stage: str, fn: Callable[..., Any], generation: Mapping[str, Any], label: str) -> tuple[str, ...]:
    """Check that ``fn`` can be called as guitest calls a ``stage`` replacement; the generation settings it takes."""
    if inspect.iscoroutinefunction(fn):
        raise ModelError(f"{label}: {_name(fn)} is an async function; stages are called from worker threads and must be plain functions")
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise ModelError(f"{label}: cannot read the signature of {_name(fn)}: {exc}") from None
    params = signature.parameters.values()
    takes_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
    keyword = {p.name for p in params if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)}
    positional = CALLS[stage]
    offered = list(generation) if stage in TAKE_GENERATION else []
    kwargs = tuple(k for k in offered if takes_all or (k in keyword and k not in positional))
    try:
        signature.bind(*positional, **{k: None for k in kwargs})
    except TypeError as exc:
        shape = f"{stage}({', '.join(positional)}{', **generation' if stage in TAKE_GENERATION else ''})"
        raise ModelError(f"{label}: {_name(fn)}{signature} cannot be called as guitest calls a {shape}: {exc}") from None
    return kwargs


def _name(fn: Callable[..., Any]) -> str:
    return f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"


class Pipeline(Model):
    """An adapter with some of its stages replaced; everything else is the wrapped adapter's."""

    def __init__(self, inner: Model, stages: Mapping[str, Stage], generation: Mapping[str, Any], source: str) -> None:
        known = {k: generation[k] for k in SETTINGS_KEYS if k in generation}
        if known:
            inner.settings = replace(inner.settings, **known)
        super().__init__(inner.name, inner.settings, inner.profile, inner.profile_reason)
        self.inner = inner
        self.stages = dict(stages)
        self.generation = dict(generation)
        self.source = source
        self.cacheable = inner.cacheable
        self.metered = inner.metered

    def _call(self, stage: str, *args: Any) -> Any:
        chosen = self.stages[stage]
        return chosen.fn(self.inner, *args, **{k: self.generation[k] for k in chosen.kwargs})

    def _expect(self, stage: str, value: Any, kinds: tuple[type, ...]) -> Any:
        if not isinstance(value, kinds):
            wanted = " or ".join(k.__name__ for k in kinds)
            raise ModelError(f"stage {stage} ({self.stages[stage].target}) returned {type(value).__name__}, not {wanted}")
        return value

    def plan_size(self, original: tuple[int, int]) -> tuple[int, int]:
        return self.inner.plan_size(original)

    def build_prompt(self, case: Case, template: str | None) -> Prompt:
        if "build_prompt" not in self.stages:
            return self.inner.build_prompt(case, template)
        prompt = self._expect("build_prompt", self._call("build_prompt", case, template), (Prompt, str))
        return Prompt(user=prompt) if isinstance(prompt, str) else prompt

    def preprocess(self, image: Image.Image, case: Case) -> SentImage:
        if "preprocess" not in self.stages:
            return self.inner.preprocess(image, case)
        return self._expect("preprocess", self._call("preprocess", image, case), (SentImage,))

    def generate(self, prompt: Prompt, image: SentImage, case: Case) -> Reply:
        if "generate" not in self.stages:
            return self.inner.generate(prompt, image, case)
        reply = self._expect("generate", self._call("generate", prompt, image, case), (Reply, str))
        return Reply(text=reply) if isinstance(reply, str) else reply

    def postprocess(self, reply: Reply, case: Case) -> str:
        if "postprocess" not in self.stages:
            return self.inner.postprocess(reply, case)
        return self._expect("postprocess", self._call("postprocess", reply, case), (str,))

    def parse_response(self, answer: str, case: Case) -> str:
        if "parse_response" not in self.stages:
            return self.inner.parse_response(answer, case)
        return self._expect("parse_response", self._call("parse_response", answer, case), (str,))

    def scrub_reply(self, text: str) -> str:
        return self.inner.scrub_reply(text)

    def unavailable(self) -> Any:
        return self.inner.unavailable()

    def generation_settings(self) -> dict[str, Any]:
        """The wrapped adapter's, plus the config's generation settings and the replaced stages (a reply depends on both)."""
        return {**self.inner.generation_settings(), "generation": self.generation, "stages": self.describe_stages()}

    def describe_stages(self) -> dict[str, str]:
        """Each replaced stage and the function that replaces it."""
        return {name: stage.target for name, stage in sorted(self.stages.items())}

    def describe(self) -> dict[str, Any]:
        info = self.inner.describe()
        info["settings"] = self.inner.settings.public()
        info["pipeline"] = {"source": self.source, "stages": self.describe_stages(), "generation": self.generation}
        return info

    def close(self) -> None:
        self.inner.close()


class BlindPipeline(Pipeline, Blind):
    """A pipeline around a model that never looks at pixels (baselines, replays): still no thumbnails, no cache."""


def with_stages(
    model: Model,
    *,
    build_prompt: Callable[..., Any] | str | None = None,
    preprocess: Callable[..., Any] | str | None = None,
    generate: Callable[..., Any] | str | None = None,
    postprocess: Callable[..., Any] | str | None = None,
    parse_response: Callable[..., Any] | str | None = None,
    generation: Mapping[str, Any] | None = None,
    source: str = "python",
) -> Model:
    """``model`` with the given stages replaced (a function, or its ``module:function`` name) and ``generation``
    settings passed to them; each checked now. ModelError for a name that does not resolve, a signature that
    does not fit, or a generation setting that no stage and no adapter setting takes."""
    given = {"build_prompt": build_prompt, "preprocess": preprocess, "generate": generate, "postprocess": postprocess, "parse_response": parse_response}
    return _wrap(model, {k: v for k, v in given.items() if v is not None}, dict(generation or {}), source, lambda stage: f"{source}: {'stage ' if stage in CALLS else ''}{stage}")


def _wrap(model: Model, given: Mapping[str, Callable[..., Any] | str], generation: dict[str, Any], source: str, label: Callable[[str], str]) -> Model:
    stages: dict[str, Stage] = {}
    for stage, value in given.items():
        if stage not in CALLS:
            raise ModelError(f"{label(stage)}: unknown stage; the stages are {', '.join(CALLS)}")
        fn = resolve(value, label(stage)) if isinstance(value, str) else value
        target = value if isinstance(value, str) else _name(fn)
        stages[stage] = Stage(target, fn, check(stage, fn, generation, label(stage)))
    taken = {k for s in stages.values() for k in s.kwargs} | {k for k in SETTINGS_KEYS if k in generation}
    unused = [k for k in generation if k not in taken]
    if unused:
        raise ModelError(
            f"{label('generation')}: {', '.join(map(repr, unused))} reach(es) no stage: only a replaced preprocess or generate "
            f"whose signature names it (or takes **kwargs) receives it; the adapter's own settings are {', '.join(SETTINGS_KEYS)}"
        )
    _check_settings(generation, label("generation"))
    cls = BlindPipeline if isinstance(model, Blind) else Pipeline
    return cls(model, stages, generation, source)


def _check_settings(generation: Mapping[str, Any], label: str) -> None:
    """The generation settings that are also adapter settings have valid values (the config schema's rules)."""
    known = {k: generation[k] for k in SETTINGS_KEYS if k in generation}
    for field, message in schema.iter_problems("model_config", {"generation": known}):
        raise ModelError(f"{label}: {field.removeprefix('generation.')}: {message}")


def load_config(path: str | Path) -> dict[str, Any]:
    """A model config file, read and validated against ``schemas/model_config.schema.json``; ModelError naming file and field."""
    path = Path(path)
    try:
        raw = yamlfile.load(path.read_text("utf-8"), unique_keys=False)
    except OSError as exc:
        raise ModelError(f"--model-config={path}: cannot read the file: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise ModelError(f"--model-config={path}{at}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ModelError(f"--model-config={path}: a model config must be a mapping (stages:, generation:), got {type(raw).__name__}")
    problems = [f"{where(str(path), field=f or '(top level)')}: {m}" for f, m in schema.iter_problems("model_config", raw)]
    if problems:
        raise ModelError("invalid model config:\n  " + "\n  ".join(problems))
    return raw


def apply_config(model: Model, path: str | Path) -> Model:
    """``model`` with the stages and generation settings of the model config at ``path``, all resolved and checked now.

    The config's ``python_path`` folders (relative to the file; default: the file's own folder) are
    appended to ``sys.path`` first, so a stages module beside the config imports as it is.
    """
    config = load_config(path)
    folder = Path(path).resolve().parent
    for entry in config.get("python_path", ["."]):
        resolved = str((folder / entry).resolve())
        if resolved not in sys.path:
            sys.path.append(resolved)
    return _wrap(model, config.get("stages", {}), dict(config.get("generation", {})), str(path), lambda field: where(str(path), field=f"stages.{field}" if field in CALLS else field))
