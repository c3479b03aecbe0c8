"""No function in guitest is over :data:`LIMIT` lines, but those :data:`ALLOWED` names with a reason (issue 43, item 4).

A function that long does several things; cut it into steps whose names say what each does. The length is read
with ``ast`` as the project counts it: from the ``def`` line to the function's last line, its docstring included
(``end_lineno - lineno + 1``), for every function and method, nested ones too.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "guitest"
LIMIT = 60

#: a function's qualified name (its module's file left out, so an entry holds while modules move between packages)
#: -> why it may stay over LIMIT lines; the test also fails for an entry no longer over the limit (remove it), so the
#: list only shrinks. None is left.
ALLOWED: dict[str, str] = {}


def long_functions(package: Path, limit: int = LIMIT) -> dict[str, int]:
    """Every function of the package under ``package`` longer than ``limit`` lines: "path: qualified name" -> lines."""
    found: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                lines = (child.end_lineno or child.lineno) - child.lineno + 1
                if lines > limit:
                    found[f"{where}: {name}"] = lines
                visit(child, f"{name}.<locals>.", where)
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.", where)
            else:
                visit(child, prefix, where)

    for path in sorted(package.rglob("*.py")):
        visit(ast.parse(path.read_text("utf-8"), str(path)), "", path.relative_to(package).as_posix())
    return found


def test_no_function_in_guitest_is_over_the_limit_but_those_named() -> None:
    found = long_functions(PACKAGE)
    unnamed = sorted(f"{where} ({lines} lines)" for where, lines in found.items() if where.partition(": ")[2] not in ALLOWED)
    assert not unnamed, f"functions over {LIMIT} lines (cut each into named steps, or name it in ALLOWED with its reason):\n  " + "\n  ".join(unnamed)
    short_now = sorted(set(ALLOWED) - {where.partition(": ")[2] for where in found})
    assert not short_now, f"ALLOWED names functions no longer over {LIMIT} lines, or gone (remove them):\n  " + "\n  ".join(short_now)


def test_a_long_function_is_found_wherever_it_is(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(LIMIT - 1))  # with its def line: LIMIT lines, allowed
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.py").write_text(f"def short():\n{body}\n\ndef long():\n{body}    return 1\n")
    (tmp_path / "sub" / "b.py").write_text(
        f"class C:\n    def method(self):\n        '''A docstring counts.'''\n{body.replace('    ', '        ')}\n"
        f"def outer():\n    def inner():\n{body.replace('    ', '        ')}        return 2\n    return inner\n"
    )
    assert long_functions(tmp_path) == {"a.py: long": LIMIT + 1, "sub/b.py: C.method": LIMIT + 1, "sub/b.py: outer": LIMIT + 3, "sub/b.py: outer.<locals>.inner": LIMIT + 1}
