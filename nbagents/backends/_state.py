"""The state backend: files in the running conversation's graph state, key ``files``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

from langgraph.config import get_config

from nbagents.backends._base import FileBackend, file_info
from nbagents.backends._paths import is_under
from nbagents.backends._protocol import FileData, FileInfo, FilesUpdate

FILES_KEY = "files"
"""The state key holding the state backend's files (path -> :class:`FileData`)."""

# LangGraph hands every running node two functions in its config: one reads the state's channels
# (with the node's own pending writes applied), one queues a write. Their keys are internal to
# LangGraph (``langgraph._internal._constants``), so the values are spelled here and checked by
# tests/test_backends_state.py against the installed LangGraph.
_READ = "__pregel_read"
_SEND = "__pregel_send"

_OUTSIDE_GRAPH = (
    "StateBackend keeps no files of its own: it reads and writes the files of the conversation "
    "that is running, so it works only inside a LangGraph graph execution (a tool or middleware "
    "of an agent). To give an agent files, pass them in its input: "
    'agent.invoke({"messages": [...], "files": {"/a.md": {"content": "...", '
    '"encoding": "utf-8"}}}).'
)


def files_reducer(
    current: Mapping[str, FileData] | None, update: Mapping[str, FileData | None] | None
) -> dict[str, FileData]:
    """Merge a ``files`` update into the state: paths are set one by one, ``None`` deletes.

    Merging (rather than replacing the dict) is what lets parallel tool calls or sub-agents that
    write different files all land in the same step.
    """
    merged = {**(current or {}), **(update or {})}
    return {path: record for path, record in merged.items() if record is not None}


class StateBackend(FileBackend):
    """Files that belong to one conversation (thread): the state key ``files``.

    The backend holds no files itself. Each operation reads the ``files`` of the graph run it is
    called from, and each write is queued as an update of that key, merged path by path when the
    step ends (a read later in the same step already sees it). So one instance, or the class, or
    a factory, can be given to any number of agents and threads: two threads never see each
    other's files, a thread sees the files given in its input, and a checkpointer keeps them with
    the rest of the thread's state. Called outside a graph run it raises ``RuntimeError``.
    """

    def __init__(self, runtime: Any = None) -> None:
        # deepagents before 0.5 built one per call, ``lambda rt: StateBackend(rt)``: accepted, and
        # not needed (the running graph is found from the call itself).
        if isinstance(runtime, Mapping):
            raise TypeError(
                "StateBackend takes no files: they belong to each conversation. Pass them in the "
                'agent\'s input instead: agent.invoke({"messages": [...], "files": {...}}).'
            )

    def __repr__(self) -> str:
        return "StateBackend()"

    def _functions(self) -> Mapping[str, Any]:
        try:
            config = get_config()
        except RuntimeError:
            raise RuntimeError(_OUTSIDE_GRAPH) from None
        configurable = config.get("configurable") or {}
        if _READ not in configurable or _SEND not in configurable:
            raise RuntimeError(_OUTSIDE_GRAPH)
        return configurable

    def _read_files(self) -> Mapping[str, FileData]:
        """The conversation's files, with this step's own writes applied."""
        read = cast(Callable[[str, bool], Any], self._functions()[_READ])
        return cast(Mapping[str, FileData], read(FILES_KEY, True) or {})

    def _send_files_update(self, update: FilesUpdate) -> None:
        """Queue an update of the ``files`` key for the end of this step."""
        send = cast(Callable[[list[tuple[str, Any]]], None], self._functions()[_SEND])
        send([(FILES_KEY, update)])

    def _get(self, path: str) -> FileData | None:
        return self._read_files().get(path)

    def _put(self, path: str, data: FileData) -> None:
        self._send_files_update({path: data})

    def _remove(self, path: str) -> list[str]:
        gone = [name for name in self._read_files() if is_under(name, path)]
        if gone:
            self._send_files_update(dict.fromkeys(gone))
        return gone

    def _files(self, base: str) -> Iterable[FileInfo]:
        return [
            file_info(name, data)
            for name, data in self._read_files().items()
            if is_under(name, base)
        ]
