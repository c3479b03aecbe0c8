"""guitest's modules import each other without a circle (docs/design.md, "Import rules": data types both sides use live in a
module that imports neither).

The graph is read from the source with ``ast``, not from a running interpreter, so an import that only
a type checker or a rarely-called function makes still counts. Every ``import`` and ``from ... import``
statement is an edge: at module level, under ``if TYPE_CHECKING:`` (a type-only circle is still a circle
to a reader, and to the type checker), and inside functions and methods (a function-level import that
closes a circle only defers it: the modules still cannot be read or tested apart). Importing ``a.b.c``
also runs ``a/__init__.py`` and ``a/b/__init__.py``, so it adds edges to those packages too (except to
the importer's own packages, which are already running). Names that are not imports do not count: a
registry's ``"module:attribute"`` built-ins (guitest/registry.py) and ``importlib.import_module`` calls
are resolved only when asked for, after every module has loaded.

Three rules read the graph: no circle between modules; no loop of any length between guitest's parts (its packages
and top-level modules) but those ALLOWED_LOOPS names, each with its reason; and no module outside an environment
backend's own modules imports them (BACKEND_HOMES) or compares an ``env`` with a backend's name: the general modules
ask the backend's registry entry (guitest/backends.py) instead.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "guitest"


@lru_cache(maxsize=None)
def tree(path: Path) -> ast.Module:
    """A module's syntax tree (each file parsed once for all the rules)."""
    return ast.parse(path.read_text("utf-8"), str(path))


def modules(package: Path) -> dict[str, tuple[Path, bool]]:
    """Every module of the package under ``package``: dotted name -> (file, whether it is a package's __init__)."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        is_init = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_init else parts)] = (path, is_init)
    return out


def _targets(node: ast.Import | ast.ImportFrom, name: str, is_init: bool, known: dict[str, tuple[Path, bool]]) -> list[str]:
    """The modules of the package that one import statement in module ``name`` imports."""
    if isinstance(node, ast.Import):
        wanted = [alias.name for alias in node.names]
    else:
        base = name if is_init else name.rpartition(".")[0]
        for _ in range(max(node.level - 1, 0)):
            base = base.rpartition(".")[0]
        source = (f"{base}.{node.module}" if node.module else base) if node.level else (node.module or "")
        wanted = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source for alias in node.names]
    out = []
    for target in wanted:
        while target and target not in known:  # `import guitest.x.y` of a name inside a module: the module
            target = target.rpartition(".")[0]
        if target:
            out.append(target)
    return out


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (see the module docstring for what counts)."""
    known = modules(package)
    graph: dict[str, set[str]] = {}
    for name, (path, is_init) in known.items():
        edges: set[str] = set()
        for node in ast.walk(tree(path)):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target in _targets(node, name, is_init, known):
                edges.add(target)
                parent = target.rpartition(".")[0]
                while parent in known and not name.startswith(parent + "."):
                    edges.add(parent)
                    parent = parent.rpartition(".")[0]
        edges.discard(name)
        graph[name] = edges
    return graph


def knots(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every set of two or more modules that import one another in circles (a strongly connected component),
    each sorted, sorted by their first module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm; the graph is small, recursion is fine
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def circle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """The shortest path from a knot's first module back to itself (one circle of the knot, for the message)."""
    start, members = component[0], set(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v] & members):
            if w == start:
                return paths[v] + [start]
            if w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    return component


@pytest.fixture(scope="module")
def guitest_graph() -> dict[str, set[str]]:
    return import_graph(PACKAGE)


def describe(graph: dict[str, set[str]], knot: list[str]) -> str:
    """One knot as a message line: a circle through it, and every module in it."""
    return f"{' -> '.join(circle(graph, knot))} (the knot: {', '.join(knot)})"


def test_guitest_has_no_import_cycle(guitest_graph: dict[str, set[str]]) -> None:
    found = knots(guitest_graph)
    assert not found, "import circles:\n  " + "\n  ".join(describe(guitest_graph, k) for k in found)


def test_the_graph_sees_the_package(guitest_graph: dict[str, set[str]]) -> None:
    graph = guitest_graph
    assert len(graph) > 50 and "guitest.plugin" in graph and "guitest.registry" in graph
    assert "guitest.tasks" in graph["guitest.suite"]  # a module-level import
    assert "guitest.exchange" in graph["guitest.tasks"]  # an import under TYPE_CHECKING
    assert "guitest.formats" in graph["guitest.data.fetch"]  # only inside a function
    assert "guitest.models" in graph["guitest.tasks.judge"]  # `from ..models.base import ...` runs models/__init__ first


@pytest.mark.parametrize(
    ("where", "importer"),
    [
        ("module level", "from .b import B\n"),
        ("TYPE_CHECKING", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n"),
        ("a function", "def f():\n    from . import b\n    return b\n"),
        ("a method, absolute", "class A:\n    def f(self):\n        import pkg.b\n"),
        ("the package of a submodule", "def f():\n    from .sub.c import C\n"),
    ],
)
def test_a_circle_is_found_wherever_its_import_is(tmp_path: Path, where: str, importer: str) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text(importer)
    (package / "b.py").write_text("from .a import A\n")
    (package / "sub" / "__init__.py").write_text("from ..a import A\n")
    (package / "sub" / "c.py").write_text("C = 1\n")
    graph = import_graph(package)
    found = knots(graph)
    expected = ["pkg.a", "pkg.sub"] if "submodule" in where else ["pkg.a", "pkg.b"]
    assert found == [expected]
    assert circle(graph, found[0]) == [*expected, "pkg.a"]


def test_no_circle_in_a_package_without_one(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from . import b\nimport json\n")
    (package / "b.py").write_text("from .c import C\n")
    (package / "c.py").write_text("C = 'pkg.a:A'  # a name, not an import\n")
    assert knots(import_graph(package)) == []


#: the pairs of guitest's parts (its packages, and its top-level modules) that import each other, with why each
#: remains (docs/design.md, "Layout"): none since the flow of a live case moved from live/ (the contract every backend
#: implements) to run/ (which opens the backends of envs/)
ALLOWED_PAIRS: set[tuple[str, str]] = set()


def part(module: str) -> str:
    """The part of guitest a module belongs to: its package under guitest, or itself for a top-level module."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def pairs(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """The pairs of parts that import each other (each pair sorted)."""
    edges = {(part(a), part(b)) for a, targets in graph.items() for b in targets if part(a) != part(b)}
    return {tuple(sorted(e)) for e in edges if (e[1], e[0]) in edges}  # type: ignore[misc]


def test_guitests_parts_import_one_way_but_the_pairs_named(guitest_graph: dict[str, set[str]]) -> None:
    found = pairs(guitest_graph)
    assert found == ALLOWED_PAIRS, f"parts importing each other: {sorted(found)}; allowed, with a reason: {sorted(ALLOWED_PAIRS)}"
    assert ("reporting", "tasks") not in found and ("models", "tasks") not in found  # the two the report side's typing untied


def test_a_pair_is_found(tmp_path: Path) -> None:
    package = tmp_path / "guitest"
    (package / "a").mkdir(parents=True)
    (package / "b").mkdir()
    for path, text in {"__init__.py": "", "a/__init__.py": "", "b/__init__.py": "", "a/x.py": "from ..b import y\n", "b/y.py": "def f():\n    from ..a import x\n"}.items():
        (package / path).write_text(text)
    assert pairs(import_graph(package)) == {("a", "b")}


# -- loops of any length between guitest's parts ------------------------------------------------------------------


def part_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph of guitest's parts (:func:`part`): part -> the other parts its modules import."""
    out: dict[str, set[str]] = {}
    for a, targets in graph.items():
        out.setdefault(part(a), set()).update(part(b) for b in targets if part(b) != part(a))
    return out


def loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every loop of the graph (an elementary circuit: no node twice), as a path from its smallest node back to it,
    sorted. Only the nodes of one knot can be on a loop together, so each knot is searched alone."""
    found: list[list[str]] = []
    for knot in knots(graph):
        members = set(knot)
        for i, start in enumerate(knot):  # each loop once: from its smallest node, through larger ones only
            later = set(knot[i + 1 :])
            stack = [[start]]
            while stack:
                path = stack.pop()
                for w in sorted(graph[path[-1]] & members):
                    if w == start:
                        found.append([*path, start])
                    elif w in later and w not in path:
                        stack.append([*path, w])
    return sorted(found)


#: the loops between guitest's parts (its packages, and its top-level modules) that remain, each with why; any other
#: loop fails the test, and so does one listed here that is gone (remove it). None remains: the three that ran through
#: live/ -> envs/ (live/flow.py opened the backends' pools) went when that flow moved to run/live_case.py
ALLOWED_LOOPS: dict[str, str] = {}


def test_guitests_parts_loop_only_as_written(guitest_graph: dict[str, set[str]]) -> None:
    found = {" -> ".join(loop) for loop in loops(part_graph(guitest_graph))}
    new, gone = sorted(found - set(ALLOWED_LOOPS)), sorted(set(ALLOWED_LOOPS) - found)
    assert not new, "import loops between guitest's parts that ALLOWED_LOOPS does not name (break them, or name each with its reason):\n  " + "\n  ".join(new)
    assert not gone, "ALLOWED_LOOPS names loops that are gone (remove them):\n  " + "\n  ".join(gone)


def test_a_loop_of_three_parts_is_found_and_named(tmp_path: Path) -> None:
    package = tmp_path / "guitest"
    for sub in ("a", "b", "c"):
        (package / sub).mkdir(parents=True)
        (package / sub / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "a" / "x.py").write_text("from ..b import y\n")
    (package / "b" / "y.py").write_text("def f():\n    from ..c.z import Z\n")
    (package / "c" / "z.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..a.x import X\nZ = 1\n")
    (package / "top.py").write_text("from .a import x\n")  # into the loop, not on it
    parts = part_graph(import_graph(package))
    assert loops(parts) == [["a", "b", "c", "a"]]
    assert pairs(import_graph(package)) == set()  # the pairs rule alone misses it


def test_loops_are_each_found_once() -> None:
    graph = {"a": {"b", "c"}, "b": {"a", "c"}, "c": {"a"}, "d": {"a"}}
    assert loops(graph) == [["a", "b", "a"], ["a", "b", "c", "a"], ["a", "c", "a"]]


# -- no module outside a backend imports it ------------------------------------------------------------------------

#: each built-in environment backend's own modules (a package of its own, or modules of envs/, which the web backends
#: share): only these import one another; every other module reaches a backend through its entries in
#: guitest/registry.py (ENVS, ORACLES, BACKENDS, READERS), which name modules without importing them
BACKEND_HOMES = {
    "miniwob": ("guitest.miniwob",),
    "webapp": ("guitest.envs.webapp", "guitest.envs.web_solution"),
    "desktop": ("guitest.desktopenv",),
}
#: modules outside a backend's home that import it, each with why
BACKEND_IMPORTERS = {
    ("guitest.published.runs", "desktop"): "reads OSWorld's published trajectories, whose actions are the desktop's (desktopenv.task.action_from, desktopenv.machine.pyautogui_code)",
    ("guitest.cli", "desktop"): "the command line hands `guitest desktop up|down|list|...` to the desktop backend's own command (desktopenv/commands.py), loaded only for that command",
}


def inside(module: str, homes: tuple[str, ...]) -> bool:
    return any(module == home or module.startswith(home + ".") for home in homes)


def test_every_backend_has_its_home_written() -> None:
    from guitest.registry import BACKENDS, ENVS, ORACLES

    assert set(BACKEND_HOMES) == set(ENVS.builtins)
    for env, homes in BACKEND_HOMES.items():
        targets = [ENVS.builtins[env], ORACLES.builtins[env]] + ([BACKENDS.builtins[env]] if BACKENDS.builtins[env] != "guitest.backends:WEB" else [])
        assert all(inside(t.partition(":")[0], homes) for t in targets), (env, targets, homes)


def test_no_module_outside_a_backend_imports_it(guitest_graph: dict[str, set[str]]) -> None:
    found = sorted(
        f"{module} imports {', '.join(sorted(t for t in targets if inside(t, homes)))} (backend {env})"
        for env, homes in BACKEND_HOMES.items()
        for module, targets in guitest_graph.items()
        if not inside(module, homes) and (module, env) not in BACKEND_IMPORTERS and any(inside(t, homes) for t in targets)
    )
    assert not found, "modules importing a backend (ask its registry entry instead, guitest/backends.py):\n  " + "\n  ".join(found)


def env_name_comparisons(path: Path, names: set[str]) -> list[str]:
    """The places in a module that compare an ``env`` (a name or an attribute so called) with a backend's name."""
    out = []
    for node in ast.walk(tree(path)):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        literals = {n.value for side in sides for n in ast.walk(side) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        envs = [s for s in sides if (isinstance(s, ast.Name) and s.id == "env") or (isinstance(s, ast.Attribute) and s.attr == "env")]
        if envs and literals & names:
            out.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return out


def test_no_module_outside_a_backend_compares_an_env_with_its_name() -> None:
    names = set(BACKEND_HOMES)
    found = [hit for name, (path, _) in modules(PACKAGE).items() if not any(inside(name, homes) for homes in BACKEND_HOMES.values()) for hit in env_name_comparisons(path, names)]
    assert not found, "an env compared with a backend's name (ask guitest.backends.backend(env) instead):\n  " + "\n  ".join(found)


def test_an_env_name_comparison_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text('def f(suite, env):\n    a = suite.env == "desktop"\n    b = env in ("miniwob", "x")\n    c = suite.name == "desktop"\n')
    assert env_name_comparisons(path, {"desktop", "miniwob"}) == ["m.py:2: suite.env == 'desktop'", "m.py:3: env in ('miniwob', 'x')"]
