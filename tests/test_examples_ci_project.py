"""The example project examples/ci-project, run as its CI runs it: ``pytest`` in the project,
with no API key and requests to any provider going nowhere. It passes; a changed prompt fails
with the cassette miss named; a sub-agent the model no longer calls fails the structural check
with the two runs aligned.

Each run works on a copy, so nothing is written into the repository.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.kernel  # the project's CI runs its notebook under nbval

PROJECT = Path(__file__).resolve().parent.parent / "examples" / "ci-project"
NO_NETWORK = "http://127.0.0.1:9"  # the discard port: nothing listens, a request fails at once


def user_ci(project: Path) -> subprocess.CompletedProcess[str]:
    """``pytest`` in ``project``, in the environment a CI machine without secrets has."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("NBAGENTS_") and not k.endswith("_API_KEY") and k != "PYTEST_ADDOPTS"
    }
    env |= {"HTTP_PROXY": NO_NETWORK, "HTTPS_PROXY": NO_NETWORK, "OPENAI_BASE_URL": NO_NETWORK}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rfE"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    copy = tmp_path / "ci-project"
    shutil.copytree(PROJECT, copy, ignore=shutil.ignore_patterns("__pycache__", ".nbagents"))
    return copy


def test_the_project_passes_replayed(project: Path) -> None:
    result = user_ci(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "nbagents CI: 14 nbval sanitize rules" in result.stdout
    assert re.search(r"\b8 passed\b", result.stdout)  # 4 agent checks, 1 experiment, 3 cells
    assert not (project / ".nbagents").exists()


def test_a_changed_prompt_fails_with_the_cassette_miss_named(project: Path) -> None:
    agent = project / "research_agent.py"
    old = "Report facts with sources."
    assert old in agent.read_text()
    agent.write_text(agent.read_text().replace(old, "Report facts, each with its source."))
    result = user_ci(project)
    assert result.returncode == 1
    # The researcher's request missed first; its failure then changed the main agent's next
    # request, which missed too and ended the run: the error names both.
    assert "CassetteMissError: No recorded response for this request of agent 'main'" in (
        result.stdout
    )
    assert "the first was agent 'researcher'" in result.stdout
    assert "cassettes/research.json (mode is 'replay')" in result.stdout
    assert "ERROR tests/test_research.py::test_the_run_keeps_the_committed_structure" in (
        result.stdout
    )


def test_a_sub_agent_no_longer_called_fails_the_structural_check(project: Path) -> None:
    # Re-recorded, the model now answers after its researchers without asking the critic.
    cassette = project / "cassettes" / "research.json"
    data = json.loads(cassette.read_text())
    entries = data["interactions"].values()
    final = next(e for e in entries if e["request"]["agent"] == "main" and e["response"]["content"])
    for entry in entries:
        calls = entry["response"].get("tool_calls") or []
        if any(c["args"].get("subagent_type") == "critic" for c in calls):
            entry["response"] = final["response"]
    cassette.write_text(json.dumps(data))

    result = user_ci(project)
    assert result.returncode == 1
    out = result.stdout
    assert "FAILED tests/test_research.py::test_the_run_keeps_the_committed_structure" in out
    assert "The run differs from tests/baselines/research.json at 2 of 4 agents" in out
    assert re.search(r"^E\s+- +critic \"Review this draft answer to 'Should our…\": ok", out, re.M)
    assert re.search(r"^E\s+~ main: ok, [\d,]+ tokens$", out, re.M)
    assert "FAILED tests/test_research.py::test_the_researchers_work_in_parallel" in out


def test_the_workflow_runs_pytest_without_secrets() -> None:
    workflow = yaml.safe_load((PROJECT / ".github" / "workflows" / "notebooks.yml").read_text())
    steps = workflow["jobs"]["test"]["steps"]
    assert [s.get("run") for s in steps if "run" in s] == ['pip install -e ".[test]"', "pytest"]
    assert "secrets" not in json.dumps(workflow)
    assert "nbagents_ci = true" in (PROJECT / "pyproject.toml").read_text()
