"""The layers of nbagents, and the check that keeps them: no module imports a layer above its own.

Lowest first. A module may import its own layer and those below. Every import statement counts:
at the top of a module, inside a function, under ``if TYPE_CHECKING:`` (a module named to
``importlib`` in a string is not seen: name it in an import). Every module of the package
must be in a layer, so a new one is placed on purpose. The only upward imports are the
conveniences on ``Trace`` listed in :data:`EXCEPTIONS`, each with why; beyond layers, no two
packages import each other, apart from those, and none imports another's private module.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "nbagents"

LAYERS: list[tuple[str, list[str]]] = [
    (
        "foundation: what several layers share, cost, the models and the file backends",
        [
            "nbagents._contract",
            "nbagents._tokens",
            "nbagents.cost",
            "nbagents._guard",
            "nbagents._gc",
            "nbagents._kernel",
            "nbagents._versioned",
            "nbagents._distribution",
            "nbagents._interrupts",
            "nbagents._resumable",
            "nbagents._runtime_tools",
            "nbagents.models",
            "nbagents.backends",
            "nbagents.middleware",
        ],
    ),
    ("agents: the sub-agent system and skills", ["nbagents.subagents", "nbagents.skills"]),
    ("tracing: callbacks into a Trace", ["nbagents.tracing"]),
    ("export: OpenTelemetry", ["nbagents.export"]),
    ("history: runs kept over time", ["nbagents.history"]),
    ("pause and resume: answering a pause, continuing the trace", ["nbagents.approvals"]),
    ("display: the views of a Trace", ["nbagents.display"]),
    ("comparison: runs side by side, drawn like the trace view", ["nbagents.comparison"]),
    ("evaluation: experiments, many cases scored and compared", ["nbagents.evaluation"]),
    ("testing: assertions on runs for pytest", ["nbagents.testing"]),
    (
        "notebook glue: the public API, nbagents.trace(), %%trace, the command line",
        [
            "nbagents",
            "nbagents._notebook",
            "nbagents._trace_facts",
            "nbagents._rerun",
            "nbagents._cli",
            "nbagents.__main__",
            "nbagents.exercises",
        ],
    ),
]
"""Layer names and the modules (with their submodules) in each, lowest first."""

EXCEPTIONS: dict[tuple[str, str, str], str] = {
    ("nbagents.tracing.model", "nbagents.display", "Trace.to_html"): (
        "A trace renders itself, as a pandas Styler does: t.to_html() is the static snapshot. "
        "Imported when called, so tracing loads without display."
    ),
    ("nbagents.tracing.model", "nbagents.display", "Trace.to_graphviz"): (
        "t.to_graphviz() draws the call graph where the user holds the trace; imported when "
        "called (graphviz is only needed then)."
    ),
    ("nbagents.tracing.model", "nbagents._notebook", "Trace._repr_mimebundle_"): (
        "Jupyter displays a Trace through this hook, which must be a method of Trace; the "
        "notebook glue builds the bundle. Imported when displayed."
    ),
}
"""The upward imports allowed: (importer, imported, the function that imports) → why."""


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    scope: str
    """The function or class (``Trace.to_html``) the import statement is in; ``""`` at the top."""
    line: int


def modules(root: Path) -> dict[str, Path]:
    """Every module of the package in ``root``, by dotted name."""
    found: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports(root: Path) -> Iterator[Import]:
    """Every import of one of the package's modules by another, wherever it is written."""
    known = modules(root)
    for name, path in known.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node, scope in _walk(tree, ()):
            targets = set(_targets(node, name, is_package, known))
            for target in sorted(targets & known.keys() - {name}):
                yield Import(name, target, ".".join(scope), node.lineno)


def _walk(node: ast.AST, scope: tuple[str, ...]) -> Iterator[tuple[ast.stmt, tuple[str, ...]]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child, scope
        inner = scope
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            inner = (*scope, child.name)
        yield from _walk(child, inner)


def _targets(node: ast.stmt, name: str, is_package: bool, known: Mapping[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    assert isinstance(node, ast.ImportFrom)
    base = node.module or ""
    if node.level:
        here = name.split(".") if is_package else name.split(".")[:-1]
        anchor = here[: len(here) - node.level + 1]
        base = ".".join([*anchor, base] if base else anchor)
    # ``from pkg import mod`` imports the module pkg.mod; ``from pkg import name``, pkg itself.
    return [
        f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names
    ]


def layer_of(module: str, layers: Sequence[tuple[str, Sequence[str]]], package: str) -> int | None:
    """The index of the layer holding ``module``; the most specific entry decides."""
    best: tuple[int, int] | None = None
    for index, (_, entries) in enumerate(layers):
        for entry in entries:
            # The package's root stands for its ``__init__`` alone, not every module under it.
            covers = module == entry or (entry != package and module.startswith(entry + "."))
            if covers and (best is None or len(entry) > best[1]):
                best = (index, len(entry))
    return None if best is None else best[0]


def violations(
    root: Path,
    layers: Sequence[tuple[str, Sequence[str]]],
    exceptions: Mapping[tuple[str, str, str], str],
) -> list[str]:
    """What breaks the layers: unplaced modules, upward imports, and exceptions no longer used."""
    package = root.name
    problems = [
        f"{module} is in no layer: add it to LAYERS"
        for module in modules(root)
        if layer_of(module, layers, package) is None
    ]
    used = set()
    for found in imports(root):
        low, high = (layer_of(m, layers, package) for m in (found.importer, found.imported))
        if low is None or high is None or high <= low:
            continue
        key = (found.importer, found.imported, found.scope)
        if key in exceptions:
            used.add(key)
            continue
        where = f" (in {found.scope})" if found.scope else ""
        problems.append(
            f"{found.importer}:{found.line}{where} imports {found.imported}, a layer above it "
            f"({layers[low][0].split(':')[0]} < {layers[high][0].split(':')[0]})"
        )
    problems += [f"unused exception: {key}" for key in exceptions if key not in used]
    return problems


def package_cycles(root: Path, exceptions: Mapping[tuple[str, str, str], str]) -> list[list[str]]:
    """Groups of the package's direct children (``nbagents.tracing``, ``nbagents._contract`` …)
    that import one another, directly or not, the excepted imports left out."""

    def top(module: str) -> str:
        return ".".join(module.split(".")[:2])

    graph: dict[str, set[str]] = {}
    for found in imports(root):
        a, b = top(found.importer), top(found.imported)
        if a != b and (found.importer, found.imported, found.scope) not in exceptions:
            graph.setdefault(a, set()).add(b)

    def reach(start: str) -> set[str]:
        seen: set[str] = set()
        stack = [start]
        while stack:
            for nxt in graph.get(stack.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return seen

    reached = {node: reach(node) for node in graph}
    groups = {
        tuple(sorted(b for b in reached[a] if a in reached.get(b, ())))
        for a in graph
        if a in reached[a]
    }
    return [list(group) for group in sorted(groups)]


def private_imports(root: Path) -> list[str]:
    """Imports of another package's private module (``nbagents.tracing._lock`` from display):
    a package offers other packages its public modules only."""

    def package(module: str) -> str:
        return ".".join(module.split(".")[:2])

    return [
        f"{found.importer}:{found.line} imports {found.imported}"
        for found in imports(root)
        if any(part.startswith("_") for part in found.imported.split(".")[2:])
        and package(found.importer) != package(found.imported)
    ]


# -- nbagents keeps its layers -------------------------------------------------------------------


def test_no_module_imports_a_layer_above_its_own() -> None:
    assert violations(PACKAGE, LAYERS, EXCEPTIONS) == []


def test_no_two_packages_import_each_other() -> None:
    assert package_cycles(PACKAGE, EXCEPTIONS) == []


def test_no_module_imports_another_packages_private_module() -> None:
    assert private_imports(PACKAGE) == []


def test_every_exception_says_why() -> None:
    for (importer, _, scope), why in EXCEPTIONS.items():
        assert importer == "nbagents.tracing.model" and scope.startswith("Trace.")
        assert len(why) > 40


# -- the check can fail ----------------------------------------------------------------------------


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    """A package of three layers, ``low`` → ``mid`` → ``high``, that keeps them."""
    root = tmp_path / "toy"
    (root / "mid").mkdir(parents=True)
    (root / "__init__.py").write_text("from toy import high\n")
    (root / "low.py").write_text("X = 1\n")
    (root / "mid" / "__init__.py").write_text("from toy.low import X\n")
    (root / "mid" / "_impl.py").write_text("from ..low import X\n")
    (root / "high.py").write_text("from toy.mid import _impl\nimport toy.low\n")
    return root


TOY_LAYERS = [("low", ["toy.low"]), ("mid", ["toy.mid"]), ("high", ["toy", "toy.high"])]


def test_a_package_that_keeps_its_layers_passes(toy: Path) -> None:
    assert violations(toy, TOY_LAYERS, {}) == []
    assert package_cycles(toy, {}) == []
    assert private_imports(toy) == ["toy.high:1 imports toy.mid._impl"]


def test_an_upward_import_inside_a_function_fails(toy: Path) -> None:
    (toy / "low.py").write_text("def f():\n    from toy.mid import _impl\n")
    assert violations(toy, TOY_LAYERS, {}) == [
        "toy.low:2 (in f) imports toy.mid._impl, a layer above it (low < mid)"
    ]
    assert package_cycles(toy, {}) == [["toy.low", "toy.mid"]]
    (toy / "mid" / "__init__.py").write_text("")
    (toy / "mid" / "_impl.py").write_text("import toy.low\n")
    (toy / "low.py").write_text("import toy.high\n")  # low -> high -> mid -> low
    assert package_cycles(toy, {}) == [["toy.high", "toy.low", "toy.mid"]]


@pytest.mark.parametrize(
    "source",
    [
        "import toy.high\n",
        "from toy import high\n",
        "from .high import Y\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from toy.high import Y\n",
    ],
)
def test_every_form_of_an_upward_import_fails(toy: Path, source: str) -> None:
    (toy / "mid" / "_impl.py").write_text(source.replace("from .high", "from ..high"))
    (found,) = violations(toy, TOY_LAYERS, {})
    assert found.startswith("toy.mid._impl:") and "imports toy.high" in found


def test_an_exception_allows_one_import_in_one_function_only(toy: Path) -> None:
    (toy / "low.py").write_text(
        "class T:\n    def show(self):\n        import toy.high\n"
        "    def other(self):\n        import toy.high\n"
    )
    allowed = {("toy.low", "toy.high", "T.show"): "why"}
    assert violations(toy, TOY_LAYERS, allowed) == [
        "toy.low:5 (in T.other) imports toy.high, a layer above it (low < high)"
    ]
    stale = {("toy.mid", "toy.high", "f"): "why"}
    assert "unused exception: ('toy.mid', 'toy.high', 'f')" in violations(toy, TOY_LAYERS, stale)


def test_a_module_in_no_layer_fails(toy: Path) -> None:
    (toy / "stray.py").write_text("")
    assert violations(toy, TOY_LAYERS, {}) == ["toy.stray is in no layer: add it to LAYERS"]
