"""Seconds to discover N skills (default 1,000), on the disk backend and on the state backend.

Each skill is a folder with a valid ``SKILL.md`` (frontmatter plus a short body) generated in a
temporary directory. Figures:

- disk: ``SkillsMiddleware.before_agent`` on a ``DiskBackend`` (discovery alone), beside upstream
  deepagents' ``SkillsMiddleware`` on its ``FilesystemBackend`` when deepagents is installed;
- state: a one-turn agent run whose input holds the N files in ``files``, minus the same run
  without the skills middleware (so the figure is what skills add), beside the same measure for
  upstream deepagents' ``StateBackend`` (which reads state only inside a graph run).

nbagents' target is under 1 s for 1,000 skills. Figures only; nothing is asserted.

    python benchmarks/bench_skills_loading.py [-n 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage

from nbagents import ScriptedChatModel
from nbagents.backends import DiskBackend, FilesystemMiddleware, StateBackend
from nbagents.skills import SKILLS_METADATA_KEY, SkillsMiddleware


def skill_text(index: int) -> tuple[str, str]:
    name = f"skill-{index:05d}"
    text = (
        f"---\nname: {name}\ndescription: Handles job number {index}, for benchmarking.\n"
        "license: MIT\nmetadata:\n  author: bench\n---\n\n"
        f"# Skill {index}\n\n1. Read the input.\n2. Do job {index}.\n3. Report.\n"
    )
    return name, text


def generate(root: Path, count: int) -> dict[str, str]:
    files = {}
    for index in range(count):
        name, text = skill_text(index)
        (root / name).mkdir()
        (root / name / "SKILL.md").write_text(text)
        files[f"/skills/{name}/SKILL.md"] = text
    return files


def best(run: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return min(times), result


def agent_run_seconds(agent: Any, payload: dict[str, Any], repeat: int) -> float:
    seconds, _ = best(lambda: agent.invoke(payload), repeat)
    return seconds


def nbagents_figures(root: Path, files: dict[str, str], count: int, repeat: int) -> None:
    disk = SkillsMiddleware(DiskBackend(root), sources=["/"])
    seconds, update = best(lambda: disk.before_agent({"messages": []}, None), repeat)  # type: ignore[arg-type]
    assert update is not None and len(update[SKILLS_METADATA_KEY]) == count
    print(f"nbagents  disk backend   {seconds:7.3f} s")

    records = {
        path: {"content": text, "encoding": "utf-8", "created_at": "", "modified_at": ""}
        for path, text in files.items()
    }
    payload = {"messages": [HumanMessage("go")], "files": records}

    def build(with_skills: bool) -> Any:
        middleware: list[Any] = [FilesystemMiddleware()]
        if with_skills:
            middleware.append(SkillsMiddleware(StateBackend(), sources=["/skills"]))
        model = ScriptedChatModel(script={"main": ["done"] * (repeat + 1)})
        return create_agent(model, middleware=middleware, name="main")

    result = build(True).invoke(payload)
    assert len(result[SKILLS_METADATA_KEY]) == count
    with_skills = agent_run_seconds(build(True), payload, repeat)
    without = agent_run_seconds(build(False), payload, repeat)
    print(
        f"nbagents  state backend  {with_skills - without:7.3f} s"
        f"  (agent run {with_skills:.3f} s, {without:.3f} s without skills)"
    )


def upstream_figures(root: Path, files: dict[str, str], count: int, repeat: int) -> None:
    try:
        from deepagents.backends import FilesystemBackend
        from deepagents.backends import StateBackend as UpstreamState
        from deepagents.backends.utils import create_file_data
        from deepagents.middleware import FilesystemMiddleware as UpstreamFiles
        from deepagents.middleware import SkillsMiddleware as UpstreamSkills
    except ImportError:
        print("deepagents is not installed: no upstream figures")
        return
    disk = UpstreamSkills(
        backend=FilesystemBackend(root_dir=root, virtual_mode=True), sources=["/"]
    )
    seconds, update = best(lambda: disk.before_agent({"messages": []}, None, {}), repeat)  # type: ignore[arg-type]
    print(f"deepagents disk backend  {seconds:7.3f} s  ({len(update['skills_metadata'])} skills)")

    payload = {
        "messages": [HumanMessage("go")],
        "files": {path: create_file_data(text) for path, text in files.items()},
    }

    def build(with_skills: bool) -> Any:
        middleware: list[Any] = [UpstreamFiles(backend=UpstreamState())]
        if with_skills:
            middleware.append(UpstreamSkills(backend=UpstreamState(), sources=["/skills/"]))
        model = ScriptedChatModel(script={"main": ["done"] * (repeat + 1)})
        return create_agent(model, middleware=middleware, name="main")

    # Upstream omits skills_metadata from the output: count it in the hook's own update.
    loaded: list[Any] = []
    for update in build(True).stream(payload, stream_mode="updates"):
        for node_update in update.values():
            if isinstance(node_update, dict) and node_update.get("skills_metadata"):
                loaded = node_update["skills_metadata"]
    with_skills = agent_run_seconds(build(True), payload, repeat)
    without = agent_run_seconds(build(False), payload, repeat)
    print(
        f"deepagents state backend {with_skills - without:7.3f} s"
        f"  (agent run {with_skills:.3f} s, {without:.3f} s without skills; "
        f"{len(loaded)} skills)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=1000, help="number of skills")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the best is shown")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = generate(root, args.n)
        print(f"Loading {args.n} skills (best of {args.repeat}):")
        nbagents_figures(root, files, args.n, args.repeat)
        upstream_figures(root, files, args.n, args.repeat)


if __name__ == "__main__":
    main()
