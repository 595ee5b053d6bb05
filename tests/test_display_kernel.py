"""The live view in a real ipykernel: one output, widget updates while the cell is busy, a final
snapshot, ``%load_ext nbagents`` and ``%%trace`` — checked at the kernel protocol level."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.view_mirror import Mirror, saved_view, stat

pytestmark = pytest.mark.kernel  # starts a real ipykernel

jupyter_client = pytest.importorskip("jupyter_client")

TESTS = Path(__file__).parent
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


class Kernel:
    def __init__(self, km: Any, kc: Any) -> None:
        self.km, self.kc = km, kc

    def run(
        self, code: str, timeout: float = 60, *, after_error: bool = False, expect: str = ""
    ) -> list[dict[str, Any]]:
        """Execute ``code``; every iopub message of it, in arrival order, until idle.

        ``after_error``: the previous cell failed. ipykernel then aborts what arrives before its
        event loop turns once more (a loaded machine makes that window long), so ``code`` (which
        must be safe to run twice) is sent again while it comes back aborted.
        """
        for _ in range(50 if after_error else 1):
            messages, status = self._execute(code, timeout, expect)
            if status != "aborted":
                break
            time.sleep(0.1)
        return messages

    def _execute(
        self, code: str, timeout: float, expect: str = ""
    ) -> tuple[list[dict[str, Any]], str]:
        msg_id = self.kc.execute(code)
        messages = []
        deadline = time.monotonic() + timeout
        while True:
            msg = self.kc.get_iopub_msg(timeout=max(deadline - time.monotonic(), 0.1))
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            messages.append(msg)
            idle = msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle"
            # ipykernel publishes from more than one thread: on a loaded machine a cell's
            # output can come after its idle status, so wait for what the caller expects.
            if idle and (not expect or any(m["msg_type"] == expect for m in messages)):
                break
            if (
                expect
                and msg["msg_type"] == expect
                and any(
                    m["msg_type"] == "status" and m["content"]["execution_state"] == "idle"
                    for m in messages
                )
            ):
                break
        # A kernel slow to start (a busy machine) gets several kernel_info requests from
        # jupyter_client's wait_for_ready; their late replies come before this one.
        reply = self.kc.get_shell_msg(timeout=timeout)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = self.kc.get_shell_msg(timeout=timeout)
        errors = [m["content"] for m in messages if m["msg_type"] == "error"]
        if reply["content"]["status"] == "aborted":
            return messages, "aborted"
        assert reply["content"]["status"] == "ok", errors or reply["content"]
        return messages, "ok"


@pytest.fixture(scope="module")
def kernel() -> Iterator[Kernel]:
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3", cwd=str(TESTS), startup_timeout=120)
    try:
        k = Kernel(km, kc)
        k.run(f"import sys; sys.path.insert(0, {str(TESTS)!r})")
        k.run(
            "import nbagents\nfrom support.display_fixtures import make_agent\n"
            "agent = make_agent(latency=0.15)"
        )
        yield k
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def _stream_index(messages: list[dict[str, Any]], text: str) -> int:
    for i, m in enumerate(messages):
        if m["msg_type"] == "stream" and text in m["content"]["text"]:
            return i
    raise AssertionError(f"no stream output {text!r}")


def assert_streamed(messages: list[dict[str, Any]], text: str) -> None:
    """Fails unless a stream output of ``messages`` holds ``text``."""
    _stream_index(messages, text)


def _view_updates(messages: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """The view as the front end has it after each widget message (whole views and patches)."""
    out = []
    mirror = Mirror()
    for i, m in enumerate(messages):
        if m["msg_type"] == "comm_msg":
            state = m["content"]["data"].get("state", {})
            if "view_json" in state:
                mirror.reset(state["view_json"])
            if "patch_json" in state:
                mirror.patch(state["patch_json"])
            if mirror.base is not None and ("view_json" in state or "patch_json" in state):
                out.append((i, mirror.view()))
    return out


def test_trace_magic_shows_one_live_output_updated_while_the_cell_runs(kernel: Kernel) -> None:
    kernel.run("%load_ext nbagents")
    messages = kernel.run(
        "%%trace run\n"
        "print('invoke start', flush=True)\n"
        "out = agent.invoke({'messages': [('user', 'go')]})\n"
        "print('invoke end', flush=True)\n"
    )
    displays = [m for m in messages if m["msg_type"] == "display_data"]
    assert len(displays) == 1
    data = displays[0]["content"]["data"]
    assert set(data) == {WIDGET_VIEW, "text/html", "text/plain"}
    display_id = displays[0]["content"]["transient"]["display_id"]

    start, end = _stream_index(messages, "invoke start"), _stream_index(messages, "invoke end")
    updates = _view_updates(messages)
    during = [(i, s) for i, s in updates if start < i < end]
    assert len(during) >= 2, [(i, len(s["nodes"])) for i, s in updates]
    assert any(
        s["status"] == "running" and int(stat(s, "sub-agent spawns") or 0) >= 1 for _, s in during
    )

    refreshed = [m for m in messages if m["msg_type"] == "update_display_data"]
    assert len(refreshed) == 1
    assert refreshed[0]["content"]["transient"]["display_id"] == display_id
    final = refreshed[0]["content"]["data"]
    # The run is over: the output becomes the saved HTML (no widget for a reopened notebook to
    # miss), and the widget is closed after it, so the page lets go of its model.
    assert set(final) == {"text/html", "text/plain"}
    assert "Done: combined." in final["text/html"] and "Dig deeper" in final["text/html"]
    assert saved_view(final["text/html"])["status"] == "ok"
    assert final["text/plain"].startswith("nbagents live view: <Trace ok: main; 4 sub-agent")
    closed = [m for m in messages if m["msg_type"] == "comm_close"]
    assert len(closed) == 1 and messages.index(closed[0]) > messages.index(refreshed[0])
    assert closed[0]["content"]["comm_id"] == data[WIDGET_VIEW]["model_id"]
    assert not any(m["msg_type"] == "error" for m in messages)


def test_the_traced_cell_leaves_the_trace_in_the_namespace(kernel: Kernel) -> None:
    messages = kernel.run(
        "print(type(run).__name__, run.status, len(run.subagents))\nrun", expect="execute_result"
    )
    assert_streamed(messages, "Trace ok 4")
    result = next(m for m in messages if m["msg_type"] == "execute_result")["content"]["data"]
    assert result["text/plain"].startswith("<Trace ok: main; 4 sub-agent spawn(s)")
    assert result["text/html"].startswith("<!--nba-facts v1\nmain · ok · 2912 tokens")
    assert '<div class="nba-root nba-trace ' in result["text/html"]


def test_a_live_view_shown_by_hand_finishes_when_the_cell_ends(kernel: Kernel) -> None:
    messages = kernel.run(
        "from nbagents.display.live import LiveView\n"
        "from nbagents.tracing import recording\n"
        "with recording() as tracer:\n"
        "    LiveView(tracer.trace).show()\n"
        "    out = agent.invoke({'messages': [('user', 'go')]})\n"
    )
    kinds = [m["msg_type"] for m in messages]
    assert kinds.count("display_data") == 1 and kinds.count("update_display_data") == 1
    assert kinds.index("display_data") < kinds.index("update_display_data")
    final = next(m for m in messages if m["msg_type"] == "update_display_data")["content"]["data"]
    assert "Done: combined." in final["text/html"]


def test_a_live_view_given_as_the_cells_value_is_saved_when_the_cell_ends(kernel: Kernel) -> None:
    messages = kernel.run(
        "from nbagents.display.live import LiveView\n"
        "from nbagents.tracing import recording\n"
        "with recording() as tracer:\n"
        "    view = LiveView(tracer.trace)\n"
        "    out = agent.invoke({'messages': [('user', 'go')]})\n"
        "view\n"
    )
    kinds = [m["msg_type"] for m in messages]
    assert "execute_result" not in kinds  # shown as an output that can be refreshed
    shown = messages[kinds.index("display_data")]["content"]
    refreshed = messages[kinds.index("update_display_data")]["content"]
    assert WIDGET_VIEW in shown["data"]
    assert refreshed["transient"]["display_id"] == shown["transient"]["display_id"]
    assert set(refreshed["data"]) == {"text/html", "text/plain"}
    assert saved_view(refreshed["data"]["text/html"])["status"] == "ok"


def test_the_trace_block_shows_the_live_view_at_once_and_the_final_tree_at_the_end(
    kernel: Kernel,
) -> None:
    messages = kernel.run(
        "import nbagents\n"
        "with nbagents.trace() as t:\n"
        "    print('invoke start', flush=True)\n"
        "    out = agent.invoke({'messages': [('user', 'go')]})\n"
        "print('block ended', flush=True)\n"
    )
    kinds = [m["msg_type"] for m in messages]
    shown = kinds.index("display_data")
    assert shown < _stream_index(messages, "invoke start")
    assert set(messages[shown]["content"]["data"]) == {WIDGET_VIEW, "text/html", "text/plain"}
    assert any(s["status"] == "running" for _, s in _view_updates(messages))
    refreshed = kinds.index("update_display_data")
    assert refreshed < _stream_index(messages, "block ended")
    final = messages[refreshed]["content"]["data"]
    assert "Done: combined." in final["text/html"]
    assert final["text/plain"].startswith("nbagents live view: <Trace ok: main; 4 sub-agent")


def test_the_trace_block_with_display_false_only_records(kernel: Kernel) -> None:
    messages = kernel.run(
        "with nbagents.trace(display=False) as quiet:\n"
        "    out = agent.invoke({'messages': [('user', 'go')]})\n"
        "print(len(quiet.subagents), quiet.finished)\n"
    )
    kinds = [m["msg_type"] for m in messages]
    assert "display_data" not in kinds and "update_display_data" not in kinds
    assert_streamed(messages, "4 True")


def test_bad_magic_argument_is_a_usage_error(kernel: Kernel) -> None:
    msg_id = kernel.kc.execute("%%trace not-a-name\n1")
    reply = kernel.kc.get_shell_msg(timeout=60)
    assert reply["parent_header"]["msg_id"] == msg_id
    assert reply["content"]["status"] == "error"
    assert reply["content"]["ename"] == "UsageError"


def test_a_traced_cell_returns_its_last_value_and_raises_its_errors(kernel: Kernel) -> None:
    messages = kernel.run("%%trace small\nx = 20\nx + 22", expect="execute_result")
    result = next(m for m in messages if m["msg_type"] == "execute_result")
    assert result["content"]["data"]["text/plain"] == "42"
    quiet = kernel.run("%%trace quiet\n7;")
    assert not [m for m in quiet if m["msg_type"] == "execute_result"]

    msg_id = kernel.kc.execute("%%trace failing\nraise ValueError('bad <input>')")
    reply = kernel.kc.get_shell_msg(timeout=60)
    assert reply["parent_header"]["msg_id"] == msg_id
    assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "ValueError"
    check = kernel.run("print(type(failing).__name__, failing.finished)", after_error=True)
    assert_streamed(check, "Trace True")
    # Each traced cell is kept in the run history under the name of its variable.
    kept = kernel.run(
        "import nbagents\n"
        "h = nbagents.runs(name='[sqf]*')\n"
        "print(sorted(zip(h['name'], h['status'])))"
    )
    # (A cell that fails outside any agent run has a trace with nothing in it to fail.)
    assert_streamed(kept, "[('failing', 'ok'), ('quiet', 'ok'), ('small', 'ok')]")


HELD_CELL = """
import threading
from langchain_core.tools import tool
from nbagents import ScriptedChatModel, create_deep_agent
from nbagents.models import call, delegate, parallel

release, entered, finished = threading.Event(), threading.Semaphore(0), []

@tool
def hold(x: str) -> str:
    \"\"\"Blocks until released.\"\"\"
    entered.release()
    release.wait(30)
    finished.append(x)
    return x

def announce():
    for _ in range(3):
        entered.acquire(timeout=30)
    print("all three held", flush=True)

held_agent = create_deep_agent(
    ScriptedChatModel(script={
        "main": [parallel(*(delegate(x, "w") for x in "ABC")), "done"],
        "w": [call("hold", x="1"), "ok"],
    }),
    [hold],
    subagents=[{"name": "w", "description": "Works.", "system_prompt": "Work."}],
)
"""


def test_interrupting_the_kernel_stops_an_invoke_while_subagents_are_busy(
    kernel: Kernel,
) -> None:
    kernel.run("%load_ext nbagents")
    kernel.run(HELD_CELL)
    msg_id = kernel.kc.execute(
        "%%trace held\n"
        "threading.Thread(target=announce, daemon=True).start()\n"
        "held_agent.invoke({'messages': [('user', 'go')]})"
    )
    deadline = time.monotonic() + 60
    while True:
        msg = kernel.kc.get_iopub_msg(timeout=max(deadline - time.monotonic(), 0.1))
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream" and "all three held" in msg["content"]["text"]:
            break
        assert msg["msg_type"] != "error", msg["content"]
    kernel.km.interrupt_kernel()
    reply = kernel.kc.get_shell_msg(timeout=60)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kernel.kc.get_shell_msg(timeout=60)
    assert reply["content"]["status"] == "error"
    assert reply["content"]["ename"] == "KeyboardInterrupt"
    check = kernel.run("print(len(finished), held.status)\nrelease.set()", after_error=True)
    text = "".join(m["content"]["text"] for m in check if m["msg_type"] == "stream")
    assert text.strip() == "0 interrupted", "the cell ended only after the held tools returned"


def test_a_wide_run_in_a_kernel_saves_the_view_a_fresh_build_shows(kernel: Kernel) -> None:
    kernel.run(
        "import json\n"
        "from langchain_core.tools import tool\n"
        "from nbagents import ScriptedChatModel, create_deep_agent\n"
        "from nbagents.display._viewmodel import build_view\n"
        "from nbagents.models import call, delegate, parallel, say\n"
        "@tool\n"
        "def lookup(key: str) -> str:\n"
        "    'Look a key up.'\n"
        "    return f'value of {key}'\n"
        "jobs = parallel(*(delegate(f'job {i}', 'worker') for i in range(60)))\n"
        "model = ScriptedChatModel(script={'main': [jobs, say('done')],\n"
        "                                  'worker': [call('lookup', key='k'), say('found')]})\n"
        "worker = {'name': 'worker', 'description': 'Looks up.', 'system_prompt': 'Look up.'}\n"
        "wide = create_deep_agent(model, [lookup], subagents=[worker])\n",
        timeout=120,
    )
    kernel.run("%load_ext nbagents")
    messages = kernel.run("%%trace wide_run\nwide.invoke({'messages': [('user', 'go')]})\n")
    refreshed = [m for m in messages if m["msg_type"] == "update_display_data"]
    assert len(refreshed) == 1
    saved = saved_view(refreshed[0]["content"]["data"]["text/html"])
    checks = kernel.run("print(json.dumps(json.loads(json.dumps(build_view(wide_run)))))\n")
    text = "".join(m["content"]["text"] for m in checks if m["msg_type"] == "stream")
    built = json.loads(text)
    assert len(built["agent_rows"]) == 61
    assert {k: v for k, v in saved.items() if k != "rev"} == {
        k: v for k, v in built.items() if k != "rev"
    }
