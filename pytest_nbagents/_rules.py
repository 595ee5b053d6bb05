"""The sanitize rules for nbval that make nbagents' trace outputs stable between runs.

Each rule masks one thing that legitimately varies while the run stays the same: wall times,
the timeline drawn from them, costs (they follow the installed price table), ids drawn at
random, and the live view's snapshot. The markup they match is written for them by
``nbagents/display/_html.py`` and ``nbagents/comparison/_html.py``; what a run did (its tree,
tasks, results, statuses and tokens) is left alone, so a real change still fails.

This module imports nothing from nbagents: pytest loads the plugin in every session of an
environment where nbagents is installed, and that must stay cheap.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RULES", "Rule", "sanitize", "sanitize_file_text"]


@dataclass(frozen=True)
class Rule:
    name: str
    regex: str
    replace: str
    why: str


RULES: tuple[Rule, ...] = (
    Rule(
        "nbagents-live-view-html",
        r"(?s)<!-- nba-live -->.*?<!-- /nba-live -->",
        r"<!-- nba-live --><!-- /nba-live -->",
        "The live view's HTML: nbval sees the snapshot taken when the view appeared (it ignores "
        "display updates) while the saved notebook holds the final one. Display the trace "
        "(`t`) in a later cell to have its tree checked.",
    ),
    Rule(
        "nbagents-live-view-text",
        r"nbagents live view: [^\n]*",
        r"nbagents live view: …",
        "The live view's text/plain, for the same reason.",
    ),
    Rule(
        "nbagents-trace-facts",
        r"(?s)(<!--nba-facts v1\n.*?-->).*?<!--/nba-trace-->",
        r"\1",
        "A displayed trace (`t`): its HTML changes with nbagents' releases, so what is compared "
        "is the run's facts written before it: each agent's status, tokens, own model and tool "
        "calls, task, result and error.",
    ),
    Rule(
        "nbagents-trace-css",
        r'(?s)<style class="nba-css">.*?</style>',
        r'<style class="nba-css"></style>',
        "The views' inline stylesheet: presentation, and it changes with nbagents' version.",
    ),
    Rule(
        "nbagents-times",
        r'<span class="nba-t">[^<]*</span>',
        r'<span class="nba-t">T</span>',
        'Wall times and durations: <span class="nba-t">0.21 s</span>.',
    ),
    Rule(
        "nbagents-costs",
        r'<span class="nba-cost">[^<]*</span>',
        r'<span class="nba-cost">COST</span>',
        "Costs: the same tokens cost what the installed price table says.",
    ),
    Rule(
        "nbagents-ids",
        r'<code class="nba-id">[^<]*</code>',
        r'<code class="nba-id">ID</code>',
        "Experiment and run ids in an experiment's view, drawn at random.",
    ),
    Rule(
        "nbagents-experiment-progress-text",
        r"nbagents experiment: [^\n]*",
        r"nbagents experiment: …",
        "An experiment's progress line: nbval sees the first drawing, the notebook the last.",
    ),
    Rule(
        "nbagents-timeline-widths",
        r"(display:inline-block;width:)[0-9]+(?:\.[0-9]+)?%",
        r"\1W%",
        "The timeline's bars and calls, laid out in proportion to their times.",
    ),
    Rule(
        "nbagents-timeline-times",
        r'(<div class="nba-tl-row [^"]*") data-start="[^"]*" data-end="[^"]*" '
        r'data-horizon="[^"]*"',
        r'\1 data-start="S" data-end="S" data-horizon="S"',
        "The times each timeline row stands for.",
    ),
    Rule(
        "nbagents-timeline-text",
        r'(<code class="nba-tl-text" style="display:none">)[^<]*</code>',
        r"\1BAR</code>",
        "The timeline drawn in characters, for renderers that strip every style.",
    ),
    Rule(
        "nbagents-uuids",
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        r"UUID",
        "Span, run and thread ids, drawn at random for every run.",
    ),
    Rule(
        "nbagents-memory-addresses",
        r"0x[0-9a-fA-F]{6,16}",
        r"0xADDRESS",
        "Memory addresses in reprs of objects held in an agent's state or in an error.",
    ),
    Rule(
        "nbagents-widget-model-ids",
        r"""(model_id['"]?\s*[:=]\s*['"])[0-9a-f]{32}""",
        r"\1MODEL_ID",
        "Widget model ids (32 hex digits), should one appear in text.",
    ),
)
"""Applied in this order, before the project's own rules."""


def sanitize_file_text() -> str:
    """The rules in nbval's sanitize file format (one ``regex:`` and one ``replace:`` line each)."""
    out = [
        "# nbagents' sanitize rules for nbval: what varies between runs of a traced agent.",
        "# Written by pytest_nbagents; edit the project's own file, not this one.",
    ]
    for rule in RULES:
        out += ["", f"# {rule.why}", f"[{rule.name}]", f"regex: {rule.regex}"]
        out.append(f"replace: {rule.replace}")
    return "\n".join(out) + "\n"


def sanitize(text: str) -> str:
    """``text`` with every rule applied, as nbval applies them."""
    import re

    for rule in RULES:
        text = re.sub(rule.regex, rule.replace, text)
    return text
