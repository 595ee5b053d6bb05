"""How readable a trace view is where it is drawn: WCAG contrast of its texts and bars."""

CONTRAST = """(root, texts) => {
    const rgb = c => (c.match(/[\\d.]+/g) || []).map(Number);
    const opaque = el => {
        for (; el; el = el.parentElement) {
            const c = rgb(getComputedStyle(el).backgroundColor);
            if (c.length >= 3 && (c.length < 4 || c[3] > 0.5)) return c;
        }
        return [255, 255, 255];
    };
    const lum = c => {
        const [r, g, b] = c.slice(0, 3).map(v => {
            v /= 255;
            return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
        });
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const ratio = (a, b) => {
        const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
        return (hi + 0.05) / (lo + 0.05);
    };
    const sel = texts || '.nba-name, .nba-badge, .nba-tl-label, td, th, .nba-kind';
    const found = [...root.querySelectorAll(sel)]
        .filter(el => el.textContent.trim())
        .map(el => [el.className || el.tagName,
                    ratio(rgb(getComputedStyle(el).color), opaque(el))]);
    const bars = [...root.querySelectorAll('.nba-bar, .nba-seg')]
        .map(el => [el.className, ratio(rgb(getComputedStyle(el).backgroundColor),
                                        opaque(el.closest('.nba-tl-row')))]);
    return {texts: found, bars, page: opaque(root)};
}"""
"""``element.evaluate(CONTRAST[, text selector])`` on a view's root: ``texts`` and ``bars`` as
``[class, contrast ratio against the nearest opaque background]``, and that page colour."""
