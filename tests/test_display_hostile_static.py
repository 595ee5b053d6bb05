"""Every hostile payload (tests/support/hostile_payloads.py) stays text in the static HTML snapshot:
no element, event handler or ``javascript:`` URL of a payload's making reaches the markup, the
agents' Conversation views included."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from support.display_fixtures import build_trace
from support.hostile_payloads import PAYLOADS

# What the snapshot itself is made of; anything else would come from a payload.
OWN_TAGS = {
    "div", "span", "details", "summary", "style", "table", "thead", "tbody", "tr", "th", "td",
    "b", "pre", "code", "ul", "li", "em", "strong", "small", "br", "p", "svg", "rect", "line",
    "text", "g", "title",
}  # fmt: skip
TREE_LINK = re.compile(r"#nba-[0-9a-f-]{36}-[0-9]+(\.[0-9]+)*")
"""The snapshot's only links: the Tools pane's, each to a step of its own call tree."""


class Markup(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attributes: list[tuple[str, str]] = []
        self.links: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes += [(name, value or "") for name, value in attrs]
        if tag == "a":
            self.links.append(dict(attrs))


@pytest.mark.parametrize("index", range(len(PAYLOADS)))
def test_a_payload_in_every_field_stays_text_in_the_snapshot(index: int) -> None:
    payload = PAYLOADS[index]
    html = build_trace(payload).to_html()
    markup = Markup()
    markup.feed(html)
    assert markup.tags <= OWN_TAGS | {"a"}, markup.tags - OWN_TAGS
    assert markup.links and all(
        set(a) == {"class", "href"}
        and a["class"] == "nba-tree-link"
        and TREE_LINK.fullmatch(a["href"] or "")
        for a in markup.links
    ), markup.links
    assert not [name for name, _ in markup.attributes if name.startswith("on")]
    assert not [v for _, v in markup.attributes if "javascript:" in v.lower()]
    assert f"__pwned({index})" in html  # the payload is there, as text
    # ... in the conversations too: every agent's messages and tool results carry it
    conversations = html.split('class="nba-field nba-conv"')[1:]
    assert len(conversations) == 5
    assert all(f"__pwned({index})" in c.split("<li ")[0] for c in conversations)


def test_there_are_at_least_thirty_payloads() -> None:
    assert len(PAYLOADS) >= 30
    assert len(set(PAYLOADS)) == len(PAYLOADS)
