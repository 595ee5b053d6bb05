"""Start and stop a ``langgraph dev`` server serving the test graphs on loopback.

Used by the remote tests and ``benchmarks/bench_remote_subagents.py``. The server runs from a
scratch directory (where it keeps its ``.langgraph_api`` state) and imports ``nbagents`` from
this checkout. It serves ``worker`` (``worker_graph.py``) and the graphs of ``more_graphs.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GRAPH = Path(__file__).resolve().with_name("worker_graph.py")
MORE = Path(__file__).resolve().with_name("more_graphs.py")
GRAPHS = {
    "worker": f"{GRAPH}:graph",
    **{
        name: f"{MORE}:{name}"
        for name in ("lead", "asker", "plain", "approver", "approver_per_call", "approving_lead")
    },
}
LANGGRAPH = shutil.which("langgraph") or str(Path(sys.executable).with_name("langgraph"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """A ``langgraph dev`` process serving the test graphs from a temporary directory."""

    def __init__(self, workdir: Path, graphs: Sequence[str] = ("worker",)) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        served = {name: GRAPHS[name] for name in graphs}
        config = {"dependencies": [str(ROOT)], "graphs": served}
        (workdir / "langgraph.json").write_text(json.dumps(config))
        # The graphs import each other as ``remote_graph.*``, as the tests do.
        path = os.pathsep.join([str(ROOT), str(ROOT / "tests")])
        env = {**os.environ, "PYTHONPATH": path, "LANGSMITH_TRACING": "false"}
        for key in ("LANGGRAPH_API_KEY", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY"):
            env.pop(key, None)
        self.log = (workdir / "server.log").open("wb")
        self.process = subprocess.Popen(
            [
                *(LANGGRAPH, "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1"),
                *("--port", str(self.port), "--n-jobs-per-worker", "64"),
            ],
            cwd=workdir,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stop() ends the workers too
        )
        self._wait_ready(workdir)

    def _wait_ready(self, workdir: Path, seconds: float = 90) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            try:
                with urllib.request.urlopen(f"{self.url}/ok", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        self.stop()
        log = (workdir / "server.log").read_text(errors="replace")[-3000:]
        raise RuntimeError(f"langgraph dev did not answer GET /ok at {self.url}:\n{log}")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)
        self.log.close()
