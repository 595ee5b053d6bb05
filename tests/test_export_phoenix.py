"""A real OpenTelemetry backend: Arize Phoenix, started on loopback, fed over OTLP/HTTP.

The test sends a traced run with parallel and nested sub-agents, reads the spans back through
Phoenix's own REST API, and checks the tree, names, the kinds Phoenix derives from the GenAI
attributes, times and token sums. Phoenix runs from its own venv (``make install-phoenix``
puts it in ``.venv/phoenix``; ``NBAGENTS_PHOENIX`` may name another ``phoenix`` executable).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from support.export_scenario import EXPECTED_TREE, build_tree, run, tokens_per_agent

from nbagents import Span, Trace, Tracer
from nbagents.export import LiveExport, export_trace

pytestmark = pytest.mark.server  # starts an Arize Phoenix server

ROOT = Path(__file__).resolve().parent.parent
STARTUP_SECONDS = 180  # a cold start on a busy 2-core machine took 32 s
ORIGIN = 1_750_000_000_000_000_000  # ns; a whole number of microseconds, Phoenix's precision


def phoenix_executable() -> str | None:
    candidates = [
        os.environ.get("NBAGENTS_PHOENIX"),
        str(ROOT / ".venv" / "phoenix" / "bin" / "phoenix"),
        shutil.which("phoenix"),
    ]
    found = next((c for c in candidates if c and os.access(c, os.X_OK)), None)
    # Absolute: the server starts in its own working directory.
    return None if found is None else os.path.abspath(found)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Phoenix:
    def __init__(self, base: str) -> None:
        self.base = base

    @property
    def otlp_endpoint(self) -> str:
        return f"{self.base}/v1/traces"

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.base + path, timeout=10) as response:
            return json.load(response)

    def spans(self, project: str, expected: int, timeout: float = 30.0) -> list[dict[str, Any]]:
        """The project's spans once ``expected`` of them arrived (ingestion is asynchronous)."""
        deadline = time.monotonic() + timeout
        found: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            try:
                found = self.get(f"/v1/projects/{project}/spans?limit=1000")["data"]
            except urllib.error.HTTPError as error:
                if error.code != 404:  # the project appears with its first span
                    raise
            if len(found) >= expected:
                return found
            time.sleep(0.25)
        raise AssertionError(f"Phoenix holds {len(found)} of {expected} spans after {timeout} s")


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    executable = phoenix_executable()
    if executable is None:
        message = "Arize Phoenix is not installed: make install-phoenix (or set NBAGENTS_PHOENIX)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    workdir = tmp_path_factory.mktemp("phoenix")
    port = free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(workdir),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
        # Offline and quiet: no usage telemetry, no tracing of the server itself.
        "PHOENIX_TELEMETRY_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "OTEL_SDK_DISABLED": "true",
    }
    log_path = workdir / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [executable, "serve"],
            env=env,
            cwd=workdir,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        server = Phoenix(f"http://127.0.0.1:{port}")
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            if process.poll() is not None:
                pytest.fail(f"Phoenix exited ({process.returncode}):\n{_tail(log_path)}")
            try:
                with urllib.request.urlopen(server.base + "/healthz", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"Phoenix did not answer in {STARTUP_SECONDS} s:\n{_tail(log_path)}")
            time.sleep(0.5)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


def _tail(path: Path) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-30:])


def _resource(project: str) -> Resource:
    # Phoenix files spans under the project this resource attribute names.
    return Resource.create(
        {"service.name": "nbagents-tests", "openinference.project.name": project}
    )


def _records(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "span_id": s["context"]["span_id"],
            "parent_id": s["parent_id"],
            "name": s["name"],
            "attributes": s["attributes"],
        }
        for s in spans
    ]


def _ns(timestamp: str) -> int:
    moment = dt.datetime.fromisoformat(timestamp)
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    return (moment - epoch) // dt.timedelta(microseconds=1) * 1000


PHOENIX_KIND = {"invoke_agent": "AGENT", "execute_tool": "TOOL", "chat": "LLM"}


def test_a_parallel_nested_run_reads_back_from_phoenix_exactly(phoenix: Phoenix) -> None:
    trace, reported = run()
    exporter = OTLPSpanExporter(endpoint=phoenix.otlp_endpoint, timeout=30)
    sent = export_trace(trace, exporter, start_time_unix_nano=ORIGIN, resource=_resource("run"))
    exporter.shutdown()

    stored = phoenix.spans("run", len(sent))
    assert len(stored) == len(sent)
    records = _records(stored)
    assert build_tree(records) == EXPECTED_TREE

    trace_ids = {s["context"]["trace_id"] for s in stored}
    assert trace_ids == {f"{sent[0].context.trace_id:032x}"}
    by_id = {f"{s.context.span_id:016x}": s for s in sent}
    for span in stored:
        mine = by_id[span["context"]["span_id"]]
        expected_parent = f"{mine.parent.span_id:016x}" if mine.parent else None
        assert span["parent_id"] == expected_parent
        assert _ns(span["start_time"]) == mine.start_time
        assert _ns(span["end_time"]) == mine.end_time
        # Phoenix reads the GenAI operation into its own span kinds.
        assert span["span_kind"] == PHOENIX_KIND[span["attributes"]["gen_ai.operation.name"]]
        assert span["status_code"] == "UNSET"

    inputs, outputs = tokens_per_agent(records)
    assert inputs == reported.input
    assert outputs == reported.output
    # Phoenix's own token columns, derived from gen_ai.usage.*, sum to the same totals.
    llm = [s["attributes"] for s in stored if s["span_kind"] == "LLM"]
    assert sum(a["llm.token_count.prompt"] for a in llm) == sum(reported.input.values())
    assert sum(a["llm.token_count.completion"] for a in llm) == sum(reported.output.values())


def test_a_failed_step_is_an_error_in_phoenix(phoenix: Phoenix) -> None:
    trace = Trace(
        [
            Span(
                "a",
                None,
                "agent",
                "main",
                "main",
                0,
                0.0,
                2.0,
                status="error",
                error="RuntimeError: the sub-agent broke",
            ),
            Span(
                "t",
                "a",
                "tool",
                "lookup",
                "main",
                0,
                0.5,
                1.5,
                status="error",
                error="ValueError: no such page",
                attributes={"tool_call_id": "call_9"},
            ),
        ]
    )
    exporter = OTLPSpanExporter(endpoint=phoenix.otlp_endpoint, timeout=30)
    export_trace(trace, exporter, start_time_unix_nano=ORIGIN, resource=_resource("errors"))
    exporter.shutdown()

    stored = {s["name"]: s for s in phoenix.spans("errors", 2)}
    tool = stored["execute_tool lookup"]
    assert tool["status_code"] == "ERROR"
    assert tool["status_message"] == "ValueError: no such page"
    assert tool["attributes"]["gen_ai.tool.call.id"] == "call_9"
    (event,) = tool["events"]
    assert event["name"] == "exception"
    assert event["attributes"]["exception.message"] == "ValueError: no such page"
    assert stored["invoke_agent main"]["status_code"] == "ERROR"


def test_live_streaming_into_phoenix(phoenix: Phoenix) -> None:
    tracer = Tracer()
    exporter = OTLPSpanExporter(endpoint=phoenix.otlp_endpoint, timeout=30)
    processor = BatchSpanProcessor(exporter, schedule_delay_millis=100)
    live = LiveExport(tracer.trace, processor, resource=_resource("live"))
    run(extra_callbacks=[tracer])
    live.close()  # flushes the processor
    processor.shutdown()

    stored = phoenix.spans("live", live.exported)
    assert len(stored) == live.exported == sum(1 for s in tracer.trace.spans if not s.hidden)
    assert build_tree(_records(stored)) == EXPECTED_TREE
