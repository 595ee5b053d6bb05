"""The pytest plugin's switch and what it sets, seen from inside a test session it configured:
off unless asked; on, a throwaway history, replay-only cassettes, nbagents' rules ahead of the
project's own file; a variable the user set wins; a project file that is missing is a usage
error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_nbagents import RULES

pytestmark = pytest.mark.slow  # each test runs pytest in a fresh process

PROBE = """\
import os
from pathlib import Path


def test_probe(request):
    rules = request.config.option.nbval_sanitize_with
    print("\\nRUNS=" + str(os.environ.get("NBAGENTS_RUNS")))
    print("MODE=" + str(os.environ.get("NBAGENTS_CASSETTE_MODE")))
    print("RULES=" + (Path(rules).read_text() if rules else "none").replace("\\n", "|"))
"""


def session(
    tmp_path: Path, *args: str, ini: str = "", **env: str
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_probe.py").write_text(PROBE)
    (tmp_path / "pytest.ini").write_text(f"[pytest]\n{ini}")
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("NBAGENTS_RUNS", "NBAGENTS_CASSETTE_MODE", "PYTEST_ADDOPTS")
    }
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-s", "-p", "no:cacheprovider", *args],
        cwd=tmp_path,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def probed(result: subprocess.CompletedProcess[str], name: str) -> str:
    assert result.returncode == 0, result.stdout + result.stderr
    return next(line for line in result.stdout.splitlines() if line.startswith(f"{name}="))[
        len(name) + 1 :
    ]


def test_off_unless_asked(tmp_path: Path) -> None:
    result = session(tmp_path)
    assert probed(result, "RUNS") == "None"
    assert probed(result, "MODE") == "None"
    assert probed(result, "RULES") == "none"
    assert "nbagents CI" not in result.stdout


@pytest.mark.parametrize(
    ("args", "ini"), [((), "nbagents_ci = true\n"), (("--nbagents-ci",), "")], ids=["ini", "flag"]
)
def test_on_it_sets_the_session_up(tmp_path: Path, args: tuple[str, ...], ini: str) -> None:
    result = session(tmp_path, *args, ini=ini)
    runs = probed(result, "RUNS")
    assert Path(runs).name == "runs.sqlite"
    assert Path(runs).parent.name.startswith("nbagents-ci-")
    assert not Path(runs).parent.exists()  # removed when the session ended
    assert not str(Path(runs)).startswith(str(tmp_path))
    assert probed(result, "MODE") == "replay"
    assert probed(result, "RULES").count("regex: ") == len(RULES)
    assert f"nbagents CI: {len(RULES)} nbval sanitize rules for trace outputs" in result.stdout


def test_the_projects_own_rules_come_after_nbagents(tmp_path: Path) -> None:
    (tmp_path / "own.cfg").write_text("[mine]\nregex: secret-[0-9]+\nreplace: SECRET\n")
    result = session(tmp_path, "--nbval-sanitize-with", "own.cfg", ini="nbagents_ci = true\n")
    rules = probed(result, "RULES")
    assert rules.index("[nbagents-times]") < rules.index("regex: secret-[0-9]+")
    assert rules.count("regex: ") == len(RULES) + 1


def test_variables_the_user_set_win(tmp_path: Path) -> None:
    own = str(tmp_path / "mine.sqlite")
    result = session(
        tmp_path, ini="nbagents_ci = true\n", NBAGENTS_CASSETTE_MODE="auto", NBAGENTS_RUNS=own
    )
    assert probed(result, "MODE") == "auto"
    assert probed(result, "RUNS") == own


def test_a_missing_project_file_is_a_usage_error(tmp_path: Path) -> None:
    result = session(tmp_path, "--nbval-sanitize-with", "nowhere.cfg", ini="nbagents_ci = true\n")
    assert result.returncode == 4  # pytest's usage error
    assert "--nbval-sanitize-with: no file at nowhere.cfg." in result.stderr
