"""A process that saves runs into a history, for the tests that need several processes, a
process killed mid-save, or limits a test process cannot take on itself.

    python history_worker.py STORE COUNT [--label L] [--blob BYTES] [--file-limit BYTES]

Runs a small agent ``COUNT`` times (forever when 0) under ``nbagents.trace(store=STORE)``,
prints one line per run (``ok <run id>``), each ``RunStoreWarning`` (``warning <text>``) and,
last, ``done``. ``--blob`` makes each run carry that many incompressible bytes; ``--file-limit``
caps the size of any file the process writes (a disk that is full, for this process only).
"""

from __future__ import annotations

import argparse
import base64
import os
import resource
import signal
import warnings

import nbagents
from nbagents import ScriptedChatModel, create_deep_agent
from nbagents.history import RunStoreWarning, run_id_of


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store")
    parser.add_argument("count", type=int)
    parser.add_argument("--label", default="worker")
    parser.add_argument("--blob", type=int, default=0)
    parser.add_argument("--file-limit", type=int, default=0)
    args = parser.parse_args()
    if args.file_limit:
        # Past the limit a write fails with EFBIG instead of killing the process.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (args.file_limit, args.file_limit))
    reply = base64.b64encode(os.urandom(args.blob)).decode() if args.blob else "A draft."
    writer = {"name": "writer", "description": "Writes.", "system_prompt": "Write."}
    number = 0
    while args.count == 0 or number < args.count:
        number += 1
        model = ScriptedChatModel(
            script={
                "main": [nbagents.models.delegate("Draft.", "writer"), "done"],
                "writer": [reply],
            }
        )
        agent = create_deep_agent(model, subagents=[writer])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RunStoreWarning)
            with nbagents.trace(
                display=False, store=args.store, name=f"{args.label} {number}"
            ) as t:
                result = agent.invoke({"messages": [("user", "go")]})
        assert result["messages"][-1].text == "done"
        for warning in caught:
            print("warning", str(warning.message).replace("\n", " "), flush=True)
        print("ok", run_id_of(t), flush=True)
    print("done", flush=True)


if __name__ == "__main__":
    main()
