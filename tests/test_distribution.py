"""nbagents is installed as jupyter-nbagents."""

from __future__ import annotations

from importlib import metadata

import nbagents


def test_installed_under_our_name_with_the_packages_version() -> None:
    dist = metadata.distribution("jupyter-nbagents")
    assert dist.version == nbagents.__version__
    assert str(dist.read_text("top_level.txt")).split() == ["nbagents"]
