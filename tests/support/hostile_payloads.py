"""Hostile texts for the views: each would call ``window.__pwned(<its index>)`` if a view let it
run. Used by the static-HTML check (tests/test_display_hostile_static.py) and the browser check
of both views (tests/browser/test_display_widget_js.py), which also proves, with a positive
control, that it can see a payload run."""

from __future__ import annotations

__all__ = ["PAYLOADS", "payload"]


def _pwn(n: int) -> str:
    return f"__pwned({n})"


_TEMPLATES: tuple[str, ...] = (
    "<script>{p}</script>",
    "<img src=x onerror={p}>",
    "<svg onload={p}>",
    "<svg><script>{p}</script></svg>",
    "<body onload={p}>",
    '<iframe srcdoc="<script>parent.{p}</script>"></iframe>',
    '<iframe src="javascript:parent.{p}"></iframe>',
    '<a href="javascript:{p}">link</a>',
    '" onmouseover="{p}" x="',
    "' onfocus='{p}' autofocus='",
    "<details open ontoggle={p}>",
    "<input autofocus onfocus={p}>",
    "<video><source onerror={p}></video>",
    "<audio src=x onerror={p}>",
    '<object data="javascript:{p}"></object>',
    '<embed src="javascript:{p}">',
    "<math><mtext><table><mglyph><style><img src=x onerror={p}>",
    "</style><img src=x onerror={p}>",
    "</textarea><img src=x onerror={p}>",
    "</title><img src=x onerror={p}>",
    "--><img src=x onerror={p}>",
    "]]><img src=x onerror={p}>",
    "{{{{constructor.constructor('{p}')()}}}}",
    "${{{p}}}",
    "&lt;img src=x onerror={p}&gt;",
    '<img src=x onerror="&#x77;indow.{p}">',
    "<marquee onstart={p}>x</marquee>",
    "<form><button formaction=javascript:{p}>x</button></form>",
    '<div style="background:url(javascript:{p})">x</div>',
    '<meta http-equiv="refresh" content="0;url=javascript:{p}">',
    "\u202e<img src=x onerror={p}>\u202c",
    "<scr\x00ipt>{p}</scr\x00ipt>",
    '<base href="javascript:{p}//">',
    "<select autofocus onfocus={p}></select>",
    "<img src=x onerror={p}>" + "A" * 3000,
)

PAYLOADS: tuple[str, ...] = tuple(t.format(p=_pwn(n)) for n, t in enumerate(_TEMPLATES))


def payload(n: int) -> str:
    return PAYLOADS[n]
