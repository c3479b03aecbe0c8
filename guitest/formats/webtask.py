"""Live tasks on your own web app (format ``webtask``): a task file (JSON or YAML list), one case per seed.

A row (``schemas/formats/webtask.schema.json``): ``id``, ``instruction``, ``success`` (a JavaScript
expression checked in the page), optional ``start``, ``setup``, ``score``, ``done_when``, ``family``
(default ``web``), ``seeds`` (default ``[0]``), ``max_steps``, ``solution`` (the oracle's steps). Each
(task, seed) is one case, id ``<id>-seed<seed>``, whose ``data`` carries the
:class:`~guitest.live.protocol.TaskSpec` (env ``webapp``; the page-side fields in its ``config``) and the
seed. Tags available: ``task``, ``family``, ``seed``. Where the app is served from is the suite's
``env_options`` (:mod:`guitest.envs.webapp`).
"""

from __future__ import annotations

import os
from typing import Any

import yaml

from .. import yamlfile
from ..errors import SuiteError
from ..live.protocol import TaskSpec
from ..sample import Sample
from ..suite import Suite
from . import Converted, annotation_files, load_json_rows, read_rows

DEFAULT_ID = "{task}-seed{seed}"
CONFIG_FIELDS = ("start", "setup", "success", "score", "done_when", "solution")


def _convert(row: dict[str, Any], images_dir: str) -> list[Converted]:
    config = {k: row[k] for k in CONFIG_FIELDS if k in row}
    config.setdefault("start", "/")
    spec = TaskSpec(env="webapp", name=row["id"], instruction=row["instruction"], config=config).to_dict()
    family = row.get("family", "web")
    out = []
    for seed in row.get("seeds", [0]):
        data: dict[str, Any] = {"task": spec, "seed": seed}
        if "max_steps" in row:
            data["max_steps"] = row["max_steps"]
        fields = {**row, "task": row["id"], "family": family, "seed": seed}
        out.append(Converted(image="", instruction=row["instruction"], box=None, fields=fields, data=data, image_field="start", box_field="id"))
    return out


def load_rows(path: str) -> list[Any]:
    """A task file's rows: YAML for ``.yaml``/``.yml`` files, else JSON; SuiteError naming the line when unreadable."""
    if not path.endswith((".yaml", ".yml")):
        return load_json_rows(path)
    try:
        with open(path, encoding="utf-8") as f:
            data = yamlfile.load(f.read(), unique_keys=False)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise SuiteError(f"{path}{line}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(f"{path}: cannot read task file: {exc}") from None
    if not isinstance(data, list):
        raise SuiteError(f"{path}: expected a list of tasks, got {type(data).__name__}")
    return data


def read(suite: Suite, data_dir: str) -> list[Sample]:
    """One sample per (task, seed) of every task file, in file order, then row order."""

    def files():
        for path in annotation_files(suite, data_dir):
            yield path, load_rows(path), {"file": os.path.basename(path)}

    return read_rows(suite, data_dir, files(), "webtask", _convert, DEFAULT_ID)
