"""MiniWoB++ task lists (format ``miniwob``): one row per task, one live case per seed.

A row (``schemas/formats/miniwob.schema.json``): ``task`` (the page's name), ``seeds``, optional
``family`` (default: the first word of the name), ``flags`` (``nondeterministic``, ``select_dropdown``,
``unregistered``), ``note``, ``max_steps``. Each (task, seed) is one case, id ``<task>-seed<seed>``,
whose ``data`` carries the :class:`~guitest.live.protocol.TaskSpec` (env ``miniwob``) as builtins and
the seed. Tags available: ``task``, ``family``, ``seed``, and each flag as ``yes``/``no``.
Flagged tasks are left out unless the suite's ``settings.include_flagged`` names every flag they have.
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import SuiteError, where
from ..live.protocol import TaskSpec
from ..sample import Sample
from ..suite import Suite
from ..formats import Converted, annotation_files, load_json_rows, read_rows

DEFAULT_ID = "{task}-seed{seed}"
FLAGS = ("nondeterministic", "select_dropdown", "unregistered")


def family_of(task: str) -> str:
    """A task's default family: the first word of its name (``click-checkboxes`` -> ``click``)."""
    return task.split("-", 1)[0]


def _convert(included: frozenset[str]):
    def convert(row: dict[str, Any], images_dir: str) -> list[Converted]:
        flags = list(row.get("flags", []))
        if not set(flags) <= included:
            return []
        family = row.get("family") or family_of(row["task"])
        spec = TaskSpec(env="miniwob", name=row["task"]).to_dict()
        out = []
        for seed in row["seeds"]:
            fields = {"task": row["task"], "family": family, "seed": seed, **{f: "yes" if f in flags else "no" for f in FLAGS}}
            data: dict[str, Any] = {"task": spec, "seed": seed, "flags": flags}
            if "max_steps" in row:
                data["max_steps"] = row["max_steps"]
            out.append(Converted(image="", instruction="", box=None, fields=fields, data=data, image_field="task", box_field="task"))
        return out

    return convert


def included_flags(suite: Suite) -> frozenset[str]:
    """The flags the suite runs (``settings.include_flagged``); SuiteError for a flag that does not exist."""
    chosen = suite.settings.get("include_flagged", [])
    if not isinstance(chosen, list) or any(f not in FLAGS for f in chosen):
        raise SuiteError(f"{where(str(suite.path), field='settings.include_flagged')}: expected a list of {', '.join(FLAGS)}, got {chosen!r}")
    return frozenset(chosen)


def read(suite: Suite, data_dir: str) -> list[Sample]:
    """One sample per (task, seed) of every task list, flagged tasks left out unless included."""
    convert = _convert(included_flags(suite))

    def files():
        for path in annotation_files(suite, data_dir):
            yield path, load_json_rows(path), {"file": os.path.basename(path)}

    return read_rows(suite, data_dir, files(), "miniwob", convert, DEFAULT_ID)
