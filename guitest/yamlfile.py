"""YAML files read safely: the safe loader, a key given twice refused, and aliases that cannot blow up.

YAML aliases share one node, so a 1 KB file of nested aliases (``a: &a [x, x, ...]; b: &b [*a, *a, ...]``) stands
for 10^7 values once anything walks it: the schema check and the report took 14 s and 400 MB on one such
``env_options``. :func:`load` counts the values the document expands to, each shared node as often as it is
used, and refuses a document of more than ``MAX_VALUES`` before it is built.
"""

from __future__ import annotations

from typing import Any

import yaml

#: the most values (scalars, lists, mappings, counted as expanded) a suite, task or config file may stand for
MAX_VALUES = 1_000_000


class _UniqueKeyLoader(yaml.SafeLoader):
    """The safe loader, refusing a key given twice in one mapping (the last would silently win)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"key '{key}' appears twice", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def expanded_size(node: yaml.Node | None, limit: int = MAX_VALUES) -> int:
    """How many values ``node`` stands for with its aliases expanded (each shared node counted per use), counted up
    to just past ``limit``; linear in the nodes, not in the expansion."""
    sizes: dict[int, int] = {}

    def size(n: yaml.Node) -> int:
        known = sizes.get(id(n))
        if known is not None:
            return known
        sizes[id(n)] = limit + 1  # a node reached again while being sized (a recursive alias): too big
        total = 1
        if isinstance(n, yaml.SequenceNode):
            for child in n.value:
                total += size(child)
                if total > limit:
                    break
        elif isinstance(n, yaml.MappingNode):
            for key, value in n.value:
                total += size(key) + size(value)
                if total > limit:
                    break
        sizes[id(n)] = min(total, limit + 1)
        return sizes[id(n)]

    return 0 if node is None else size(node)


def load(text: str, unique_keys: bool = True) -> Any:
    """The YAML document in ``text``; :class:`yaml.YAMLError` for bad YAML, a key given twice (``unique_keys``), or a
    document that expands to more than :data:`MAX_VALUES` values."""
    loader = (_UniqueKeyLoader if unique_keys else yaml.SafeLoader)(text)
    try:
        node = loader.get_single_node()
        if expanded_size(node) > MAX_VALUES:
            raise yaml.YAMLError(f"the document stands for more than {MAX_VALUES:,} values once its aliases (*name) are expanded; write the values out or use fewer nested aliases")
        return None if node is None else loader.construct_document(node)
    finally:
        loader.dispose()
