"""Every public member of ``Trace``, ``Span`` and ``SubAgentRecord`` says what it is.

Methods and properties through ``__doc__``; dataclass fields by the string literal under them,
which is what Sphinx shows and what an editor's hover reads.
"""

from __future__ import annotations

import ast
import inspect

import pytest

from nbagents.tracing import model

PUBLIC_DUNDERS = {"_repr_mimebundle_"}


def _public(name: str) -> bool:
    return not name.startswith("_") or name in PUBLIC_DUNDERS


@pytest.mark.parametrize("cls", [model.Trace, model.Span, model.SubAgentRecord])
def test_every_public_method_and_property_has_a_docstring(cls: type) -> None:
    missing = []
    for name, member in vars(cls).items():
        if not _public(name):
            continue
        function = member.fget if isinstance(member, property) else member
        function = getattr(function, "__func__", function)
        if callable(function) and not (function.__doc__ or "").strip():
            missing.append(name)
    assert missing == []


@pytest.mark.parametrize("cls", [model.Span, model.SubAgentRecord])
def test_every_field_has_a_docstring(cls: type) -> None:
    (node,) = [
        n
        for n in ast.parse(inspect.getsource(cls)).body
        if isinstance(n, ast.ClassDef) and n.name == cls.__name__
    ]
    documented = set()
    for statement, following in zip(node.body, node.body[1:], strict=False):
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            documented.add(statement.target.id)
    fields = {f.name for f in cls.__dataclass_fields__.values()}
    assert fields - documented == set()
