// nbagents live trace view (anywidget ESM).
//
// Renders the JSON view built by nbagents.display._viewmodel.build_view. Every text from the
// trace goes through textContent; class names come from fixed tables; inline styles only get
// numbers. No innerHTML anywhere.

const KINDS = new Set(["agent", "subagent", "task", "skill", "model", "tool", "chain"]);
const STATUSES = new Set(["running", "ok", "error", "interrupted"]);

function kindCls(kind) {
  return "nba-k-" + (KINDS.has(kind) ? kind : "chain");
}

function statusCls(status) {
  return "nba-s-" + (STATUSES.has(status) ? status : "running");
}

const GLYPHS = { ok: "\u2713", error: "\u2717", running: "\u25cc", interrupted: "\u2016" };

function dot(status) {
  const s = STATUSES.has(status) ? status : "running";
  const el = h("span", "nba-dot", GLYPHS[s]);
  el.title = s;
  return el;
}

function h(tag, cls, text) {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  if (text !== undefined && text !== null) el.textContent = String(text);
  return el;
}

function num(value) {
  const n = Number(value);
  return Number.isFinite(n) ? n : 0;
}

function fmtTokens(n) {
  return Math.round(num(n)).toLocaleString("en-US");
}

function fmtDuration(seconds) {
  if (seconds === null || seconds === undefined) return "…";
  const s = num(seconds);
  // Thresholds sit where rounding would carry over, as in viewmodel.format_duration.
  if (s < 9.995) return s.toFixed(2) + " s";
  if (s < 59.95) return s.toFixed(1) + " s";
  const total = Math.round(s);
  const m = Math.floor(total / 60);
  return m + " min " + String(total - m * 60).padStart(2, "0") + " s";
}

function duration(start, end) {
  if (start === null || start === undefined || end === null || end === undefined) return null;
  return Math.max(num(end) - num(start), 0);
}

function pct(value) {
  return Math.min(Math.max(num(value), 0), 100) + "%";
}

function section(state, key, title, body) {
  const det = h("details", "nba-sec");
  det.open = !state.closedSections.has(key);
  det.addEventListener("toggle", () => {
    if (det.open) state.closedSections.delete(key);
    else state.closedSections.add(key);
  });
  det.appendChild(h("summary", null, title));
  det.appendChild(body);
  return det;
}

function header(view, state) {
  const bar = h("div", "nba-header");
  bar.appendChild(h("span", "nba-badge " + statusCls(view.status), view.status || "running"));
  if (view.title) bar.appendChild(h("span", "nba-title", view.title));
  const stat = (label, value, extra) => {
    const s = h("span", "nba-stat" + (extra ? " " + extra : ""), label + " ");
    const b = h("b", null, value);
    s.appendChild(b);
    bar.appendChild(s);
    return b;
  };
  state.clock = stat("time", fmtDuration(view.duration));
  state.clockBase = { duration: num(view.duration), at: performance.now(), running: view.status === "running" };
  stat("agents", String(num(view.agents)));
  stat("sub-agent spawns", String(num(view.spawns)));
  const tok = view.tokens || {};
  const t = stat("tokens", fmtTokens(tok.total));
  t.parentNode.appendChild(
    document.createTextNode(" (" + fmtTokens(tok.input) + " in, " + fmtTokens(tok.output) + " out)")
  );
  if (view.waiting) bar.appendChild(h("span", "nba-stat nba-waiting", "waiting for a decision"));
  if (typeof view.cost === "string") stat("cost", view.cost);
  if (num(view.errors)) stat("failed", String(num(view.errors)), "nba-err");
  return bar;
}

function line(node) {
  const row = h("span", "nba-line");
  row.appendChild(dot(node.status));
  row.appendChild(h("span", "nba-kind", KINDS.has(node.kind) && node.kind !== "chain" ? node.kind : "step"));
  row.appendChild(h("span", "nba-name", node.name));
  if (node.preview) row.appendChild(h("span", "nba-preview", node.preview));
  if (node.status === "error") row.appendChild(h("span", "nba-err", "failed"));
  let meta = node.end === null || node.end === undefined ? "running…" : fmtDuration(duration(node.start, node.end));
  const tokens = node.tokens ? num(node.tokens.total) : 0;
  if (tokens) meta += " · " + fmtTokens(tokens) + " tok";
  row.appendChild(h("span", "nba-meta", meta));
  return row;
}

function tree(view, state, byId, redraw) {
  const wrap = h("div", "nba-live-tree");
  const ul = h("ul", "nba-tree");
  ul.setAttribute("role", "tree");
  const add = (node, parentUl) => {
    const li = h("li", "nba-node " + kindCls(node.kind) + " " + statusCls(node.status));
    const kids = (node.children || []).map((id) => byId.get(id)).filter(Boolean);
    const rowEl = h("div", "nba-row" + (state.selected === node.id ? " nba-selected" : ""));
    const collapsed = state.collapsed.has(node.id) ||
      (!state.expanded.has(node.id) && ["model", "tool", "skill"].includes(node.kind));
    const toggle = h("span", "nba-toggle", kids.length ? (collapsed ? "▸" : "▾") : "");
    const setOpen = (open) => {
      if (!kids.length || open === !collapsed) return;
      if (open) {
        state.collapsed.delete(node.id);
        state.expanded.add(node.id);
      } else {
        state.collapsed.add(node.id);
        state.expanded.delete(node.id);
      }
      redraw();
    };
    if (kids.length) {
      toggle.addEventListener("click", (ev) => {
        ev.stopPropagation();
        setOpen(collapsed);
      });
    }
    rowEl.appendChild(toggle);
    rowEl.appendChild(line(node));
    // Keyboard: Tab to a step, Enter or Space to show its details, arrows to open or close it.
    rowEl.tabIndex = 0;
    rowEl.dataset.node = node.id;
    rowEl.setAttribute("role", "treeitem");
    if (kids.length) rowEl.setAttribute("aria-expanded", String(!collapsed));
    rowEl.addEventListener("focus", () => {
      state.focused = node.id;
    });
    const choose = () => {
      state.selected = state.selected === node.id ? null : node.id;
      redraw();
    };
    rowEl.addEventListener("click", choose);
    rowEl.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") choose();
      else if (ev.key === "ArrowRight") setOpen(true);
      else if (ev.key === "ArrowLeft") setOpen(false);
      else return;
      ev.preventDefault();
    });
    li.appendChild(rowEl);
    if (kids.length && !collapsed) {
      const sub = h("ul");
      kids.forEach((kid) => add(kid, sub));
      li.appendChild(sub);
    }
    parentUl.appendChild(li);
  };
  (view.nodes || []).filter((n) => n.parent === null).forEach((root) => add(root, ul));
  if (!ul.childNodes.length) wrap.appendChild(h("div", "nba-empty", "No spans recorded yet."));
  else wrap.appendChild(ul);
  return wrap;
}

function message(msg) {
  const box = h("div", "nba-msg");
  box.appendChild(h("span", "nba-role", (msg.role || "") + (msg.name ? " · " + msg.name : "")));
  if (msg.content) box.appendChild(h("div", "nba-text" + (msg.error ? " nba-error-text" : ""), msg.content));
  (msg.tool_calls || []).forEach((call) => {
    box.appendChild(h("div", "nba-call", "→ " + call.name + "(" + call.args + ")"));
  });
  return box;
}

function field(f) {
  const box = h("div", "nba-field");
  box.appendChild(h("div", "nba-label", f.label));
  const value = f.value;
  if (f.type === "messages") (value || []).forEach((m) => box.appendChild(message(m)));
  else if (f.type === "code") box.appendChild(h("pre", null, value));
  else if (f.type === "error") box.appendChild(h("pre", "nba-error-text", value));
  else if (f.type === "kv") {
    const table = h("table", "nba-table");
    const body = h("tbody");
    (value || []).forEach((pair) => {
      const tr = h("tr");
      tr.appendChild(h("th", null, pair[0]));
      tr.appendChild(h("td", "nba-num", pair[1]));
      body.appendChild(tr);
    });
    table.appendChild(body);
    box.appendChild(table);
  } else box.appendChild(h("div", "nba-text", value));
  return box;
}

function diff(d) {
  const box = h("div", "nba-diff");
  const row = (cls, sign, key, note) => {
    const r = h("div", "nba-diff-row " + cls, sign + " " + key + " ");
    r.appendChild(h("span", "nba-diff-note", note));
    box.appendChild(r);
  };
  (d.withheld || []).forEach((p) => row("nba-diff-del", "−", p[0], p[1] + " · withheld"));
  (d.passed || []).forEach((p) => row("nba-diff-ctx", " ", p[0], p[1] + " · passed"));
  (d.returned || []).forEach((k) => row("nba-diff-add", "+", k, "returned"));
  if (!box.childNodes.length) box.appendChild(h("div", "nba-diff-row nba-diff-note", "no state keys"));
  return box;
}

function detailsPane(view, state, byId) {
  const pane = h("div", "nba-live-details");
  const node = state.selected ? byId.get(state.selected) : null;
  if (!node) {
    pane.appendChild(h("div", "nba-empty", "Click a step in the tree or the timeline to see its details."));
    return pane;
  }
  const head = h("div", "nba-details-head " + statusCls(node.status));
  head.appendChild(line(node));
  pane.appendChild(head);
  (node.details || []).forEach((f) => pane.appendChild(field(f)));
  if (node.diff) {
    const box = h("div", "nba-field");
    box.appendChild(h("div", "nba-label", "State"));
    box.appendChild(diff(node.diff));
    pane.appendChild(box);
  }
  return pane;
}

function select(state, byId, id) {
  state.selected = id;
  let node = byId.get(id);
  while (node && node.parent !== null) {
    state.collapsed.delete(node.parent);
    state.expanded.add(node.parent);
    node = byId.get(node.parent);
  }
}

function tokenTable(view, state, byId, redraw) {
  const table = h("table", "nba-table nba-tokens");
  const head = h("tr");
  // Cost columns only when the view model priced some call; it formats them, not this code.
  const priced = typeof view.cost === "string";
  const heads = ["agent", "task", "status", "time", "in", "out", "own total", "incl. sub-agents"];
  if (priced) heads.push("own cost", "cost incl. sub-agents");
  heads.forEach((t, i) => head.appendChild(h("th", i >= 4 ? "nba-num" : null, t)));
  const thead = h("thead");
  thead.appendChild(head);
  table.appendChild(thead);
  const body = h("tbody");
  (view.agent_rows || []).forEach((row) => {
    const tr = h("tr", statusCls(row.status) + (state.selected === row.id ? " nba-selected" : ""));
    const name = h("td", null, "\u2003".repeat(Math.min(num(row.depth), 20)));
    name.appendChild(dot(row.status));
    name.appendChild(document.createTextNode(" " + row.name));
    tr.appendChild(name);
    tr.appendChild(h("td", null, row.description));
    tr.appendChild(h("td", null, row.status));
    tr.appendChild(h("td", null, row.end === null ? "running…" : fmtDuration(duration(row.start, row.end))));
    const own = row.own || {};
    [own.input, own.output, own.total, (row.total || {}).total].forEach((n) =>
      tr.appendChild(h("td", "nba-num", fmtTokens(n)))
    );
    if (priced) [row.cost_own, row.cost_total].forEach((c) => tr.appendChild(h("td", "nba-num", String(c || ""))));
    tr.addEventListener("click", () => {
      select(state, byId, row.id);
      redraw();
    });
    body.appendChild(tr);
  });
  const tok = view.tokens || {};
  const total = h("tr", "nba-total");
  ["all", "", "", ""].forEach((t) => total.appendChild(h("td", null, t)));
  [tok.input, tok.output, tok.total, tok.total].forEach((n) => total.appendChild(h("td", "nba-num", fmtTokens(n))));
  if (priced) [view.cost, view.cost].forEach((c) => total.appendChild(h("td", "nba-num", c)));
  body.appendChild(total);
  table.appendChild(body);
  return table;
}

function timeline(view, state, byId, redraw) {
  const box = h("div", "nba-tl");
  (view.timeline || []).forEach((row) => {
    const node = byId.get(row.id) || {};
    const r = h("div", "nba-tl-row " + statusCls(row.status) + (state.selected === row.id ? " nba-selected" : ""));
    const label = h("span", "nba-tl-label");
    label.style.paddingLeft = Math.min(num(row.depth), 20) * 12 + "px";
    label.appendChild(dot(row.status));
    label.appendChild(document.createTextNode(" " + row.name));
    r.appendChild(label);
    const track = h("span", "nba-tl-track");
    const bar = h("span", "nba-bar");
    bar.style.setProperty("--l", pct(row.left));
    bar.style.setProperty("--w", pct(row.width));
    track.appendChild(bar);
    (row.segments || []).forEach((s) => {
      const seg = h("span", "nba-seg " + (s.kind === "tool" ? "nba-seg-tool" : "nba-seg-model"));
      seg.style.setProperty("--l", pct(s.left));
      seg.style.setProperty("--w", pct(s.width));
      seg.addEventListener("click", (ev) => {
        ev.stopPropagation();
        select(state, byId, s.id);
        redraw();
      });
      track.appendChild(seg);
    });
    r.appendChild(track);
    r.appendChild(h("span", "nba-tl-time", fmtDuration(node.start) + " → " + fmtDuration(node.end)));
    r.addEventListener("click", () => {
      select(state, byId, row.id);
      redraw();
    });
    box.appendChild(r);
  });
  const legend = h("div", "nba-legend", "bar: agent run");
  legend.appendChild(h("span", "nba-swatch nba-seg-model"));
  legend.appendChild(document.createTextNode("model call"));
  legend.appendChild(h("span", "nba-swatch nba-seg-tool"));
  legend.appendChild(document.createTextNode("tool call"));
  box.appendChild(legend);
  return box;
}

function draw(root, view, state, redraw) {
  const treeEl = root.querySelector(".nba-live-tree");
  const detailsEl = root.querySelector(".nba-live-details");
  const scroll = [treeEl ? treeEl.scrollTop : 0, detailsEl ? detailsEl.scrollTop : 0];
  const hadFocus = root.contains(document.activeElement);
  root.replaceChildren();
  if (!view || typeof view !== "object" || !Array.isArray(view.nodes)) {
    root.appendChild(h("div", "nba-empty", "Waiting for the trace…"));
    return;
  }
  const byId = new Map(view.nodes.map((n) => [n.id, n]));
  if (state.selected && !byId.has(state.selected)) state.selected = null;
  root.appendChild(header(view, state));
  const main = h("div", "nba-live-main");
  const t = tree(view, state, byId, redraw);
  const d = detailsPane(view, state, byId);
  main.appendChild(t);
  main.appendChild(d);
  root.appendChild(section(state, "tree", "Call tree", main));
  if ((view.agent_rows || []).length)
    root.appendChild(section(state, "tokens", "Tokens per agent", tokenTable(view, state, byId, redraw)));
  if ((view.timeline || []).length)
    root.appendChild(section(state, "timeline", "Timeline", timeline(view, state, byId, redraw)));
  t.scrollTop = scroll[0];
  d.scrollTop = scroll[1];
  // Redrawing replaces every row: give the keyboard focus back to the step that had it.
  if (hadFocus && state.focused) {
    const row = [...t.querySelectorAll(".nba-row")].find((r) => r.dataset.node === state.focused);
    if (row) row.focus({ preventScroll: true });
  }
}

function render({ model, el }) {
  // MathJax must not typeset user text ("costs $5 and $10").
  const root = h("div", "nba-root nba-live tex2jax_ignore mathjax_ignore");
  el.appendChild(root);
  const state = {
    collapsed: new Set(),
    expanded: new Set(),
    closedSections: new Set(),
    selected: null,
    focused: null,
    clock: null,
    clockBase: null,
  };
  let view = null;
  const parse = () => {
    try {
      view = JSON.parse(model.get("view_json") || "null");
    } catch (err) {
      view = null;
    }
  };
  const redraw = () => draw(root, view, state, redraw);
  const onChange = () => {
    parse();
    redraw();
  };
  model.on("change:view_json", onChange);
  onChange();
  // The header clock keeps counting between updates while the run is going.
  const timer = setInterval(() => {
    const base = state.clockBase;
    if (!state.clock || !base || !base.running) return;
    state.clock.textContent = fmtDuration(base.duration + (performance.now() - base.at) / 1000);
  }, 500);
  return () => {
    clearInterval(timer);
    model.off("change:view_json", onChange);
  };
}

export default { render };
