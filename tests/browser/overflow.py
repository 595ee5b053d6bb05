"""Whether a trace view stays inside its width: what spills out of it, measured in the browser."""

LONG = "A" * 5000
"""A base64 blob or a URL pasted whole: 5,000 characters with nowhere to break a line."""

OPEN_ALL = """root => {
    root.querySelectorAll('details').forEach(d => { d.open = true; });
    return root.querySelectorAll('details').length;
}"""
"""``element.evaluate(OPEN_ALL)`` opens every ``<details>`` under a view's root (a folded
step, a details pane, a section) and returns how many there are."""

OVERFLOW = """root => {
    const width = root.parentElement.getBoundingClientRect().right;
    const name = el => el.tagName.toLowerCase()
        + [...el.classList].map(c => '.' + c).join('');
    const found = [];
    const wide = (el, how, px) => found.push([el, how, Math.round(px)]);
    // The view: nothing sticks out of its container, and it does not scroll sideways.
    const box = root.getBoundingClientRect();
    if (box.right > width + 1) wide(root, 'right edge', box.right - box.left);
    if (root.scrollWidth > root.clientWidth + 1) wide(root, 'scrolls', root.scrollWidth);
    for (const el of root.querySelectorAll('*')) {
        if (!el.getClientRects().length) continue;  // not drawn: display:none, hidden text
        const overflow = getComputedStyle(el).overflowX;
        // Where it ends on screen, cut where an ancestor inside the view clips or scrolls.
        let right = el.getBoundingClientRect().right;
        for (let a = el.parentElement; a && a !== root; a = a.parentElement) {
            if (getComputedStyle(a).overflowX !== 'visible') {
                right = Math.min(right, a.getBoundingClientRect().right);
            }
        }
        if (right > width + 1) wide(el, 'right edge', right - box.left);
        // Content wider than its box: spilling out is a fault anywhere; scrolling sideways is
        // allowed to a box of text (a value), never to a pane of elements; cutting it off is
        // allowed to a line that ends in an ellipsis, which says there is more.
        if (el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0) {
            if (overflow === 'visible') wide(el, 'spills', el.scrollWidth);
            else if (overflow === 'hidden' || overflow === 'clip') {
                if (getComputedStyle(el).textOverflow !== 'ellipsis')
                    wide(el, 'cuts', el.scrollWidth);
            } else if (el.childElementCount) wide(el, 'scrolls', el.scrollWidth);
        }
    }
    // An element that holds a wider one spills because of it: name only the innermost.
    const holds = el => found.some(([other]) => other !== el && el.contains(other));
    return found
        .filter(([el]) => el === root || !holds(el))
        .map(([el, how, px]) => [name(el), how, px]);
}"""
"""``element.evaluate(OVERFLOW)`` on a view's root: ``[element, how, width in px]`` for each
element that reaches past the root's container (``right edge``, measured from the root's left),
whose content spills out of it (``spills``), that lays elements out wider than itself and
scrolls them (``scrolls``), or that cuts its content off with no ellipsis to say so (``cuts``).
Empty when the view fits."""
