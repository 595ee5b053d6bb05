"""The graphviz call graph: source, escaping, determinism, and a missing ``dot`` program."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import graphviz
import pytest
from support.display_fixtures import XSS_PAYLOADS, build_trace

from nbagents.display._graph import INSTALL_HINT, TraceGraph, dot_label


def test_agents_are_nodes_and_spawns_are_labelled_edges() -> None:
    graph = build_trace().to_graphviz()
    assert isinstance(graph, graphviz.Digraph) and isinstance(graph, TraceGraph)
    src = graph.source
    nodes = dict(re.findall(r"^\t(a\d) \[label=\"([^\"]*)\"", src, flags=re.M))
    assert nodes == {
        "a0": "main\\nok · 355 tok own",
        "a1": "researcher\\nok · 122 tok own",
        "a2": "researcher\\nok · 130 tok own",
        "a3": "general-purpose\\nok · 38 tok own",
        "a4": "writer\\nerror · 0 tok own",
    }
    edges = re.findall(r"^\t(a\d) -> (a\d) \[label=\"([^\"]*)\"", src, flags=re.M)
    assert edges == [
        ("a0", "a1", "Research A\\n122 tok"),
        ("a0", "a2", "Research B\\n168 tok"),
        ("a2", "a3", "Dig deeper\\n38 tok"),
        ("a0", "a4", "Write C\\n0 tok"),
    ]
    assert "#cf222e" in src.split("a0 -> a4")[1]  # the failed spawn is red


def test_source_is_deterministic() -> None:
    assert build_trace().to_graphviz().source == build_trace(variant=1).to_graphviz().source


@pytest.mark.parametrize("payload", [*XSS_PAYLOADS, '\\" ] ; a9 [label=x', "<<b>x</b>>"])
def test_labels_are_escaped_for_dot(payload: str) -> None:
    src = build_trace(payload).to_graphviz().source
    clean = build_trace().to_graphviz().source
    # same statements: the payload never adds nodes, edges or attributes
    statement = re.compile(r"^\t(a\d+(?: -> a\d+)?) \[", flags=re.M)
    assert statement.findall(src) == statement.findall(clean)
    assert "label=<" not in src  # never an HTML-like label
    for line in src.splitlines():
        if "label=" in line:  # the label string closes exactly where it should
            label = re.match(r'^\t\S+(?: -> \S+)? \[label="((?:[^"\\]|\\.)*)" color=', line)
            assert label is not None, line


def test_dot_label_escapes_backslashes_and_breaks_lines() -> None:
    label = dot_label("a\\b", "two\nlines")
    assert label == "a\\\\b\\ntwo lines"
    assert isinstance(label, graphviz.quoting.NoHtml)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_renders_svg_when_dot_is_installed() -> None:
    bundle = build_trace(XSS_PAYLOADS[0]).to_graphviz()._repr_mimebundle_()
    svg = bundle["image/svg+xml"]
    assert "<svg" in svg and "<script" not in svg
    assert "Research A&lt;script&gt;" in svg


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_control_characters_in_labels_render_as_their_pictures() -> None:
    svg = build_trace("x\x00y\x1bz\x7f").to_graphviz()._repr_mimebundle_()["image/svg+xml"]
    assert "<svg" in svg
    assert "Research Ax\u2400y\u241bz\u2421" in svg
    assert dot_label("a\x00b") == "a\u2400b"


def test_missing_dot_shows_how_to_install_it_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no dot anywhere
    graph = build_trace(XSS_PAYLOADS[0]).to_graphviz()
    bundle = graph._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    assert INSTALL_HINT in bundle["text/plain"] and graph.source in bundle["text/plain"]
    for text in ("apt-get install graphviz", "brew install graphviz", "conda install"):
        assert text in bundle["text/plain"] and text in bundle["text/html"]
    assert "<script>" not in bundle["text/html"]

    # and through IPython's display machinery, as in a notebook
    from IPython.core.formatters import DisplayFormatter

    data, _ = DisplayFormatter().format(graph)
    assert "apt-get install graphviz" in data["text/html"]
    assert "Traceback" not in data.get("text/plain", "")
