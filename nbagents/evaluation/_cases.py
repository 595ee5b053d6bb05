"""The cases an experiment runs: LangSmith's example shape, read from a list, a DataFrame or a
JSONL/CSV file, each with an id that pairs it with the same case in another experiment."""

from __future__ import annotations

import csv
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Case", "read_cases"]

_INPUT_COLUMNS = ("inputs", "input", "question")
_EXPECTED_COLUMNS = ("expected", "reference_outputs", "outputs")


@dataclass(frozen=True)
class Case:
    """One case: what the agent is called with (``inputs``) and, optionally, what a scorer
    compares its answer with (``expected``)."""

    id: str
    inputs: Any
    expected: Any = None
    metadata: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "inputs": self.inputs,
            "expected": self.expected,
            "metadata": dict(self.metadata or {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Case:
        return cls(data["id"], data["inputs"], data.get("expected"), data.get("metadata") or None)


def read_cases(cases: Any) -> list[Case]:
    """``cases`` as a list of :class:`Case`: a list of dicts (``{"id"?, "inputs", "expected"?}``)
    or of ``Case``, a pandas DataFrame, or the path of a ``.jsonl`` or ``.csv`` file."""
    if isinstance(cases, str | os.PathLike):
        rows: Iterable[Any] = _read_file(Path(cases))
    elif type(cases).__name__ == "DataFrame" and hasattr(cases, "to_dict"):
        rows = [_flat_row(record) for record in cases.to_dict(orient="records")]
    elif isinstance(cases, Mapping):
        raise TypeError(
            "cases must be a list of cases, not one mapping: "
            "[{'inputs': {...}, 'expected': ...}, ...]"
        )
    elif isinstance(cases, Iterable):
        rows = cases
    else:
        raise TypeError(
            f"cases must be a list of dicts, a pandas DataFrame or a .jsonl/.csv path, not "
            f"{type(cases).__name__}"
        )
    found = [_case(row, n) for n, row in enumerate(rows)]
    if not found:
        raise ValueError("cases is empty: an experiment needs at least one case.")
    seen: dict[str, int] = {}
    for n, case in enumerate(found):
        if case.id in seen:
            raise ValueError(
                f"cases {seen[case.id]} and {n} have the same id {case.id!r}: ids pair cases "
                "between experiments, so each must be unique (give 'id' explicitly)."
            )
        seen[case.id] = n
    return found


def case_id(inputs: Any) -> str:
    """An id made from the inputs, the same in every process: the same case run in two
    experiments pairs without the user naming it."""
    text = json.dumps(inputs, sort_keys=True, default=repr, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _case(row: Any, n: int) -> Case:
    if isinstance(row, Case):
        return row
    if not isinstance(row, Mapping):
        raise TypeError(
            f"case {n} is a {type(row).__name__}; each case is a dict like "
            "{'inputs': {...}, 'expected': ...}"
        )
    if "inputs" not in row:
        raise ValueError(
            f"case {n} has no 'inputs' (it has {sorted(map(str, row))}): each case is "
            "{'inputs': {...}, 'expected': ...}, as a LangSmith example."
        )
    expected = row.get("expected", row.get("reference_outputs", row.get("outputs")))
    given = row.get("id")
    identity = case_id(row["inputs"]) if given in (None, "") else str(given)
    metadata = row.get("metadata")
    return Case(identity, row["inputs"], expected, dict(metadata) if metadata else None)


def _flat_row(record: Mapping[str, Any]) -> dict[str, Any]:
    """A table's row as a case: ``inputs.x`` columns make the inputs dict (``expected.y`` the
    expected one); an ``inputs``, ``input`` or ``question`` column holds the inputs whole."""
    row: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {"inputs": {}, "expected": {}}
    for key, value in record.items():
        name = str(key)
        head, dot, rest = name.partition(".")
        if dot and head in nested:
            nested[head][rest] = _cell(value)
        elif name in _INPUT_COLUMNS:
            row["inputs"] = _cell(value)
        elif name in _EXPECTED_COLUMNS:
            row["expected"] = _cell(value)
        elif name in ("id", "metadata"):
            row[name] = _cell(value)
        else:
            row.setdefault("metadata", {})[name] = _cell(value)
    for head, values in nested.items():
        if values:
            row[head] = values
    return row


def _cell(value: Any) -> Any:
    if isinstance(value, float) and value != value:  # a table's empty cell
        return None
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _read_file(path: Path) -> list[Any]:
    if not path.exists():
        raise FileNotFoundError(f"No cases file {path}.")
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        rows = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except ValueError as error:
                raise ValueError(f"{path}, line {number}: not JSON ({error}).") from None
        return rows
    if suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, list):
            raise ValueError(f"{path} must hold a JSON list of cases.")
        return data
    if suffix == ".csv":
        with path.open(newline="", encoding="utf-8") as handle:
            return [_flat_row(record) for record in csv.DictReader(handle)]
    raise ValueError(f"{path}: cases are read from .jsonl, .json or .csv files, not {suffix!r}.")
