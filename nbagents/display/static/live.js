// nbagents live trace view (anywidget ESM): draws nbagents.display._viewmodel's records,
// `view_json` whole and `patch_json` since. Python decides every label and number. Rows are keyed
// by node id and updated in place. Every text goes through textContent; class names come from
// fixed tables; inline styles only get numbers. No innerHTML anywhere.

// The trace's kinds and statuses (nbagents.tracing.span), sent with the whole view.
let KINDS = new Set();
let STATUSES = new Set();
let AGENT_KINDS = new Set();
const LEAF_KINDS = new Set(["model", "tool", "skill"]);
const TURN_KINDS = new Set(["system", "input", "reply", "tool", "approval", "error", "note"]);
const PAGE = 100; // children drawn under one step before a "show more" row
const FILTER_LIMIT = 500; // matching steps drawn while filtering
const ROW_PAGE = 200; // agents drawn in the token table and the timeline before "show more"
// The first right-aligned column of the token table and of the Tools table.
const AGENT_FIGURES = 4;
const TOOL_FIGURES = 2;

function kindCls(kind) {
  return "nba-k-" + (KINDS.has(kind) ? kind : "chain");
}

function statusCls(status) {
  return "nba-s-" + (STATUSES.has(status) ? status : "running");
}

function h(tag, cls, text) {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  if (text !== undefined && text !== null) el.textContent = String(text);
  return el;
}

function button(cls, text, onClick) {
  const b = h("button", cls, text);
  b.type = "button";
  b.addEventListener("click", onClick);
  return b;
}

// "show 100 more of 2400" (`what`: " agents", " tools" or ""), `rest` waiting, `step` at a time.
function moreButton(rest, step, what, onClick) {
  return button("nba-more-button", "show " + Math.min(rest, step) + " more of " + rest + what, onClick);
}

function num(value) {
  const n = Number(value);
  return Number.isFinite(n) ? n : 0;
}

function dot(status, glyph) {
  const s = STATUSES.has(status) ? status : "running";
  const el = h("span", "nba-dot", glyph || "");
  el.title = s;
  return el;
}

// Step `id` and its ancestors, nearest first.
function lineage(nodes, id) {
  const out = [];
  for (let k = id; k !== null && k !== undefined; ) {
    out.push(k);
    const node = nodes.get(k);
    k = node ? node.parent : null;
  }
  return out;
}

function pct(value) {
  return Math.min(Math.max(num(value), 0), 100) + "%";
}

// -- the data: the whole view plus patches ------------------------------------------------------

// A patch's Tools table: the rows that changed, the rest whole. `touched` gets null too.
function takeTools(into, tools, touched) {
  if (!tools || typeof tools !== "object") return;
  into.anchor = String(tools.anchor || "");
  into.columns = Array.isArray(tools.columns) ? tools.columns : [];
  into.order = Array.isArray(tools.order) ? tools.order : [];
  into.totals = Array.isArray(tools.totals) ? tools.totals : [];
  takeRows(into.rows, tools.rows, touched);
  touched.add(null);
}

function takeRows(map, rows, touched) {
  (rows || []).forEach((r) => {
    map.set(r.id, r);
    touched.add(r.id);
  });
}

// Long texts come once: a message or turn holds `content_ref`, the key of its text in the view's
// `texts` (nbagents/display/_sharedtext.py), put back as the node is taken in.
function fillTexts(node, texts) {
  const fill = (m) => {
    if (m && typeof m === "object" && typeof m.content_ref === "string") {
      m.content = texts.get(m.content_ref) || "";
      delete m.content_ref;
    }
  };
  if (Array.isArray(node.details)) {
    node.details.forEach((f) => {
      if (f && f.type === "messages" && Array.isArray(f.value)) f.value.forEach(fill);
    });
  }
  turns(node).forEach(fill);
}

// A whole view is a patch of everything to empty data.
function loadView(view) {
  if (!view || typeof view !== "object" || !Array.isArray(view.nodes)) return null;
  const words = view.vocabulary || {};
  KINDS = new Set(words.kinds || []);
  STATUSES = new Set(words.statuses || []);
  AGENT_KINDS = new Set(words.agent_kinds || []);
  const data = {
    rev: -1, header: null, columns: [], totals: [], roots: [], agents: [], duration: 0,
    nodes: new Map(), agentRows: new Map(), timeline: new Map(), texts: new Map(),
    tools: { anchor: "", columns: [], order: [], totals: [], rows: new Map() },
  };
  applyPatch(data, view);
  data.pages = view.pages && typeof view.pages === "object" ? view.pages : null; // a saved view's
  return data;
}

// Applies a patch to the data; returns what the drawing must update.
function applyPatch(data, patch) {
  const touched = { nodes: new Set(), kids: new Set(), rows: new Set(), timeline: new Set(), tools: new Set() };
  data.rev = num(patch.rev);
  data.header = patch.header || data.header;
  data.totals = patch.totals || data.totals;
  data.duration = num(patch.duration);
  if (patch.columns) data.columns = patch.columns;
  if (patch.roots) {
    data.roots = patch.roots;
    touched.kids.add(null);
  }
  if (patch.agents) data.agents = patch.agents;
  Object.entries(patch.texts || {}).forEach(([key, text]) => {
    if (typeof text === "string") data.texts.set(key, text);
  });
  (patch.nodes || []).forEach((n) => {
    const old = data.nodes.get(n.id);
    const merged = Object.assign(old ? {} : { children: [], details: [] }, old || {}, n);
    fillTexts(merged, data.texts);
    delete merged._search;
    data.nodes.set(n.id, merged);
    touched.nodes.add(n.id);
    if (n.children) touched.kids.add(n.id);
  });
  takeRows(data.agentRows, patch.agent_rows, touched.rows);
  takeRows(data.timeline, patch.timeline, touched.timeline);
  takeTools(data.tools, patch.tools, touched.tools);
  return touched;
}

// A whole view that mostly repeats `data` as a patch of what differs, so only that is redrawn;
// null when `next` does not extend `data` (a step gone, or under another parent).
function asPatch(data, next) {
  for (const [id, node] of data.nodes) {
    const now = next.nodes.get(id);
    if (!now || now.parent !== node.parent) return null;
  }
  const patch = { rev: next.rev, header: next.header, totals: next.totals, duration: next.duration };
  for (const key of ["columns", "roots", "agents"]) if (!same(data[key], next[key])) patch[key] = next[key];
  patch.nodes = [];
  next.nodes.forEach((now, id) => {
    const old = data.nodes.get(id);
    if (!old) {
      patch.nodes.push(now);
      return;
    }
    const keys = new Set([...Object.keys(old), ...Object.keys(now)]);
    const changed = [...keys].filter((key) => key !== "_search" && !same(old[key], now[key]));
    // undefined for a field the step no longer has
    if (changed.length) patch.nodes.push(Object.fromEntries([["id", id], ...changed.map((k) => [k, now[k]])]));
  });
  const rows = (before, after) => [...after.values()].filter((r) => !same(before.get(r.id), r));
  patch.agent_rows = rows(data.agentRows, next.agentRows);
  patch.timeline = rows(data.timeline, next.timeline);
  const was = data.tools;
  const tools = next.tools;
  const toolRows = rows(was.rows, tools.rows);
  const table = ["anchor", "columns", "order", "totals"];
  if (toolRows.length || table.some((key) => !same(was[key], tools[key]))) {
    patch.tools = { ...tools, rows: toolRows };
  }
  return patch;
}

function same(a, b) {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

// What the filter's text searches: the row, the details' texts and the conversation.
const SEARCHED = new Set(["text", "code", "error"]);

function turnText(t) {
  const calls = (t.tool_calls || []).map((c) => c.name + "(" + c.args + ")");
  return [t.label, t.content, ...calls, t.link_label].filter(Boolean).join("\n");
}

function turns(node) {
  return (node.conversation && Array.isArray(node.conversation.turns)) ? node.conversation.turns : [];
}

function searchText(node) {
  if (node._search === undefined) {
    const parts = [node.name, node.preview];
    (node.details || []).forEach((f) => {
      if (SEARCHED.has(f.type) && typeof f.value === "string") parts.push(f.value);
    });
    turns(node).forEach((t) => parts.push(turnText(t)));
    node._search = parts.join("\n").toLowerCase();
  }
  return node._search;
}

// Where the filter's text is in a node's conversation: its first matching turn, or null.
function conversationHit(node, needle) {
  if (!needle) return null;
  for (const t of turns(node)) {
    const text = turnText(t);
    const at = text.toLowerCase().indexOf(needle);
    if (at >= 0) return { turn: t, text, at };
  }
  return null;
}

// `text` into `parent`, each `needle` (lower case) in a <mark>; none where lower-casing changes
// the length.
function highlighted(parent, text, needle) {
  const str = String(text === undefined || text === null ? "" : text);
  const lower = str.toLowerCase();
  if (!needle || lower.length !== str.length) {
    parent.appendChild(document.createTextNode(str));
    return parent;
  }
  let from = 0;
  let at = lower.indexOf(needle);
  while (at >= 0) {
    if (at > from) parent.appendChild(document.createTextNode(str.slice(from, at)));
    parent.appendChild(h("mark", "nba-hit", str.slice(at, at + needle.length)));
    from = at + needle.length;
    at = lower.indexOf(needle, from);
  }
  if (from < str.length) parent.appendChild(document.createTextNode(str.slice(from)));
  return parent;
}

// The line under a tree row saying where its conversation holds the filter's text.
function whereLine(hit, needle) {
  const el = h("div", "nba-where", "conversation · turn " + num(hit.turn.turn) + " · " + hit.turn.label + ": ");
  const lo = Math.max(hit.at - 40, 0);
  const hi = Math.min(hit.at + needle.length + 60, hit.text.length);
  const snippet = (lo ? "…" : "") + hit.text.slice(lo, hi).replace(/\s+/g, " ") + (hi < hit.text.length ? "…" : "");
  return highlighted(el, snippet, needle);
}

// -- drawing ------------------------------------------------------------------------------------

function header(hd) {
  const bar = h("div", "nba-header");
  if (!hd) return bar;
  bar.appendChild(h("span", "nba-badge " + statusCls(hd.status), hd.status));
  if (hd.title) bar.appendChild(h("span", "nba-title", hd.title));
  (hd.stats || []).forEach((st) => {
    const extra = st.emphasis === "error" ? " nba-err" : st.emphasis === "waiting" ? " nba-waiting" : "";
    const s = h("span", "nba-stat" + extra, st.label ? st.label + " " : "");
    s.appendChild(h("b", null, st.value));
    if (st.note) s.appendChild(document.createTextNode(" " + st.note));
    bar.appendChild(s);
  });
  return bar;
}

function line(node) {
  const row = h("span", "nba-line");
  row.append(dot(node.status, node.glyph), h("span", "nba-kind", node.kind_label), h("span", "nba-name", node.name));
  if (node.preview) row.appendChild(h("span", "nba-preview", node.preview));
  if (node.failed) row.appendChild(h("span", "nba-err", "failed"));
  row.appendChild(h("span", "nba-meta", node.tokens ? node.time + " · " + node.tokens : node.time));
  return row;
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
  else if (f.type === "diff") box.appendChild(diff(value));
  else if (f.type === "kv") {
    const table = h("table", "nba-table");
    const body = h("tbody");
    (value || []).forEach((pair) => {
      const tr = h("tr");
      tr.append(h("th", null, pair[0]), h("td", "nba-num", pair[1]));
      body.appendChild(tr);
    });
    table.appendChild(body);
    box.appendChild(table);
  } else if (f.type === "checklist") {
    const list = h("ul", "nba-plan");
    (value || []).forEach((item) => {
      const li = h("li", "nba-plan-" + item.status);
      li.append(h("span", "nba-plan-mark", item.mark), " " + item.text);
      if (item.when) li.appendChild(h("small", null, " " + item.when));
      list.appendChild(li);
    });
    box.appendChild(list);
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

function section(ui, key, title, body) {
  const det = h("details", "nba-sec");
  det.open = !ui.closedSections.has(key);
  det.addEventListener("toggle", () => ui.closedSections[det.open ? "delete" : "add"](key));
  det.append(h("summary", null, title), body);
  return det;
}

// -- the view: built once, then updated in place; each part keeps its own UI state -------------

class TraceView {
  constructor(root, model) {
    this.root = root;
    this.model = model || null;
    this.data = null;
    this.inSight = true; // until the browser says otherwise
    this.stale = false; // patches came while out of sight
    this.selected = null;
    this.closedSections = new Set();
    this.openFolds = new Set(); // conversation texts the user unfolded: "node id:turn index"
    this.inputs = new Map(); // model call id -> its whole input, as the kernel sent it
    this.tree = new TreePane(this);
    this.details = new DetailsPane(this);
    this.approvals = new Approvals(this);
    this.agentLimit = ROW_PAGE; // agents drawn in the token table and the timeline
    this.table = new AgentTable(this);
    this.timeline = new Timeline(this);
    this.focus = new Focus(this);
    this.keys = new TreeKeys(this);
    this.pages = new TurnPages(this);
    this.tools = new ToolTable(this);
  }

  // The whole view arrived (first, or again): redraw everything, keeping the UI state.
  reset(data) {
    this.data = data;
    this.build();
  }

  patched({ touched, agents, columns }) {
    if (!this.data) return;
    this.drawHeader();
    this.approvals.draw();
    this.tree.patch(touched);
    if (this.selected && touched.nodes.has(this.selected)) this.details.draw();
    if (columns) this.table.ids = null; // new columns (cost): the table is drawn again
    this.table.update(touched.rows, agents || columns);
    this.tools.update(touched.tools, columns);
    this.timeline.update(touched.timeline, agents);
  }

  // The whole view again, as it was: what the user chose and where the tree was scrolled.
  redraw(data) {
    this.scrollTo = this.tree.el ? this.tree.el.scrollTop : 0;
    this.reset(data);
  }

  // After a draw: the revision drawn, for whoever waits for it.
  settle() {
    if (this.data) this.root.dataset.nbaRev = String(this.data.rev);
  }

  build() {
    const root = this.root;
    root.replaceChildren();
    if (!this.data) {
      root.appendChild(h("div", "nba-empty", "Waiting for the trace…"));
      return;
    }
    this.headerEl = h("div");
    root.appendChild(this.headerEl);
    this.drawHeader();
    root.appendChild(this.approvals.build());
    this.approvals.draw();
    const main = h("div", "nba-live-main");
    const left = h("div", "nba-live-left");
    this.tree.build(left);
    left.appendChild(h("div", "nba-keys", KEYS_HELP));
    main.append(left, this.details.build());
    root.append(section(this, "tree", "Call tree", main), this.table.build(), this.tools.build());
    root.appendChild(this.timeline.build());
    this.tree.draw();
    if (this.scrollTo) {
      this.tree.el.scrollTop = this.scrollTo; // once its rows are in: an empty tree scrolls to 0
      this.scrollTo = 0;
    }
    this.details.draw();
    this.table.redraw();
    this.tools.redraw();
    this.timeline.redraw();
  }

  drawHeader() {
    this.headerEl.replaceChildren(header(this.data.header));
  }

  // What the user chose in this view, as plain data: another view of the same run adopts it.
  uiState() {
    const t = this.tree;
    return {
      selected: this.selected,
      closedSections: [...this.closedSections],
      openFolds: [...this.openFolds],
      inputs: [...this.inputs],
      collapsed: [...t.collapsed],
      expanded: [...t.expanded],
      shown: [...t.shown],
      filter: { ...t.filter },
      focused: t.focused,
      limit: this.agentLimit,
      openTools: [...this.tools.open],
      toolLimit: this.tools.limit,
      treeScroll: t.el ? t.el.scrollTop : 0,
      focus: this.focus.id,
      turnPages: [...this.pages.at],
    };
  }

  // Takes over uiState() of a view that is gone; call before reset().
  adopt(s) {
    const t = this.tree;
    this.selected = s.selected;
    this.closedSections = new Set(s.closedSections);
    this.openFolds = new Set(s.openFolds);
    this.inputs = new Map(s.inputs);
    t.collapsed = new Set(s.collapsed);
    t.expanded = new Set(s.expanded);
    t.shown = new Map(s.shown);
    t.filter = { ...t.filter, ...s.filter };
    t.focused = s.focused;
    this.agentLimit = Math.max(num(s.limit), ROW_PAGE);
    this.tools.open = new Set(s.openTools || []);
    this.tools.limit = Math.max(num(s.toolLimit), ROW_PAGE);
    this.scrollTo = s.treeScroll;
    this.focus.id = s.focus || null;
    this.pages.at = new Map(s.turnPages || []);
  }

  // A saved view's model has no send: no kernel to ask.
  canSend() {
    return Boolean(this.model && this.model.send);
  }

  choose(id) {
    this.select(this.selected === id ? null : id);
  }

  // A message from the kernel: a model call's whole input, asked for from its details.
  received(msg) {
    if (msg && msg.type === "turns") return this.pages.received(msg);
    if (!msg || typeof msg !== "object" || msg.type !== "input" || typeof msg.id !== "string") return;
    const messages = Array.isArray(msg.messages) ? msg.messages : [];
    this.inputs.set(msg.id, { label: String(msg.label || "Whole input"), messages });
    if (this.selected === msg.id) this.details.draw();
  }

  // Selects a step, opening its ancestors so its row is drawn.
  select(id) {
    this.focus.admit(id);
    const before = this.selected;
    this.selected = id;
    if (this.tree.reveal(id)) this.tree.draw();
    else {
      if (before) this.tree.updateRow(before);
      if (id) this.tree.updateRow(id);
    }
    this.details.draw();
    this.root.querySelectorAll("tr[data-node], .nba-tl-row, .nba-tool-call").forEach((el) => {
      el.classList.toggle("nba-selected", el.dataset.node === this.selected);
    });
  }

  // Selects step `id` and brings its tree row into view (from the Tools pane).
  reach(id) {
    this.select(id);
    const item = this.tree.items.get(id);
    if (!item) return;
    item.row.scrollIntoView({ block: "center" });
    item.row.focus({ preventScroll: true });
  }
}

// -- the call tree and its filter ---------------------------------------------------------------

class TreePane {
  constructor(view) {
    this.view = view;
    this.collapsed = new Set();
    this.expanded = new Set();
    this.shown = new Map(); // node id -> how many children are drawn
    this.items = new Map(); // node id -> {li, row, ul}
    this.filter = { text: "", kind: "", status: "" };
    this.keep = null; // while filtering: the ids drawn (matches and their ancestors)
    this.focused = null;
  }

  get data() {
    return this.view.data;
  }

  build(left) {
    this.items.clear();
    left.append(this.filterBar(), this.view.focus.build());
    this.el = h("div", "nba-live-tree");
    left.appendChild(this.el);
  }

  patch(touched) {
    if (this.keep) {
      this.draw();
      return;
    }
    touched.nodes.forEach((id) => touched.kids.has(id) || this.updateRow(id));
    touched.kids.forEach((id) => this.updateChildren(id));
  }

  filterBar() {
    const bar = h("div", "nba-filter");
    const text = h("input", "nba-filter-text");
    text.type = "search";
    text.placeholder = "Filter steps: name, task, result, any message…";
    text.setAttribute("aria-label", "Filter steps by text");
    text.value = this.filter.text;
    const select = (what, any, values) => {
      const el = h("select", "nba-filter-" + what);
      el.setAttribute("aria-label", "Filter steps by " + what);
      [["", any], ...values].forEach(([v, t]) => {
        const o = h("option", null, t);
        o.value = v;
        el.appendChild(o);
      });
      el.value = this.filter[what];
      return el;
    };
    const kind = select("kind", "any kind", [...KINDS].map((k) => [k, k === "chain" ? "step" : k]));
    const status = select("status", "any status", [...STATUSES].map((v) => [v, v]));
    const apply = () => {
      this.filter = { text: text.value.trim().toLowerCase(), kind: kind.value, status: status.value };
      this.draw();
      this.view.details.draw(); // its conversation highlights the text
    };
    this.countEl = h("span", "nba-filter-count");
    this.inputs = [text, kind, status];
    this.inputs.forEach((el) => el.addEventListener(el === text ? "input" : "change", apply));
    bar.append(text, kind, status, this.countEl);
    return bar;
  }

  matches(node) {
    const f = this.filter;
    if (f.kind && node.kind !== f.kind) return false;
    if (f.status && node.status !== f.status) return false;
    return !f.text || searchText(node).includes(f.text);
  }

  computeKeep() {
    const f = this.filter;
    if (!f.text && !f.kind && !f.status) return null;
    const keep = new Set();
    let found = 0;
    for (const node of this.data.nodes.values()) {
      if (!this.matches(node) || !this.view.focus.holds(node.id)) continue;
      found += 1;
      if (found <= FILTER_LIMIT) lineage(this.data.nodes, node.id).forEach((k) => keep.add(k));
    }
    keep.found = found;
    return keep;
  }

  draw() {
    this.keep = this.computeKeep();
    this.items.clear();
    const scroll = this.el.scrollTop;
    const hadFocus = this.view.root.contains(document.activeElement);
    const ul = h("ul", "nba-tree");
    ul.setAttribute("role", "tree");
    this.rootUl = ul;
    this.fillChildren(null, ul);
    const empty = this.keep ? "No step matches the filter." : "No spans recorded yet.";
    this.emptyEl = h("div", "nba-empty", empty);
    this.emptyEl.hidden = ul.childNodes.length > 0;
    this.el.replaceChildren(this.emptyEl, ul);
    this.el.scrollTop = scroll;
    if (this.keep) {
      const more = this.keep.found > FILTER_LIMIT ? " (the first " + FILTER_LIMIT + " shown)" : "";
      this.countEl.textContent = this.keep.found + " matching" + more;
    } else this.countEl.textContent = "";
    const item = hadFocus && this.items.get(this.focused);
    if (item) item.row.focus({ preventScroll: true });
  }

  kidsOf(id) {
    const ids = id === null ? this.view.focus.roots() : (this.data.nodes.get(id) || {}).children || [];
    return this.keep ? ids.filter((k) => this.keep.has(k)) : ids;
  }

  isOpen(node) {
    if (this.keep) return true;
    if (this.collapsed.has(node.id)) return false;
    return this.expanded.has(node.id) || !LEAF_KINDS.has(node.kind);
  }

  // Draws (or reconciles, keeping existing rows) the children of `id` into `ul`.
  fillChildren(id, ul) {
    const ids = this.kidsOf(id);
    const limit = this.limitOf(id, ids);
    const wanted = ids.slice(0, limit).filter((k) => this.data.nodes.has(k));
    const elements = wanted.map((k) => (this.items.get(k) || this.makeItem(k)).li);
    const rest = ids.length - wanted.length;
    if (rest > 0) {
      const more = h("li", "nba-more");
      more.appendChild(
        moreButton(rest, PAGE, "", () => {
          this.shown.set(id, limit + PAGE);
          this.fillChildren(id, ul);
        }),
      );
      elements.push(more);
    }
    // Move only what is out of place: rows that stay keep their DOM (and focus).
    elements.forEach((el, i) => {
      if (ul.childNodes[i] !== el) ul.insertBefore(el, ul.childNodes[i] || null);
    });
    while (ul.childNodes.length > elements.length) ul.removeChild(ul.lastChild);
  }

  // How many of `kids`, the children of `id`, are drawn before a "show more" row.
  limitOf(id, kids) {
    return this.keep ? kids.length : Math.max(this.shown.get(id) || PAGE, PAGE);
  }

  makeItem(id) {
    const node = this.data.nodes.get(id);
    const li = h("li");
    const row = h("div", "nba-row");
    row.tabIndex = 0;
    row.dataset.node = id;
    row.setAttribute("role", "treeitem");
    row.addEventListener("focus", () => (this.focused = id));
    row.addEventListener("click", () => this.view.choose(id));
    row.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") this.view.choose(id);
      else if (ev.key === "ArrowRight") this.setOpen(id, true);
      else if (ev.key === "ArrowLeft") this.setOpen(id, false);
      else if (!this.view.keys.handle(ev, id)) return;
      ev.preventDefault();
      ev.stopPropagation(); // JupyterLab's command mode binds the arrows to its cells
    });
    const item = { li, row, ul: null };
    li.appendChild(row);
    this.items.set(id, item);
    this.drawRow(item, node);
    this.drawKids(item, node);
    return item;
  }

  drawRow(item, node) {
    const kids = this.kidsOf(node.id);
    const open = this.isOpen(node);
    item.li.className = "nba-node " + kindCls(node.kind) + " " + statusCls(node.status);
    item.row.className = "nba-row" + (this.view.selected === node.id ? " nba-selected" : "");
    const toggle = h("span", "nba-toggle", kids.length ? (open ? "▾" : "▸") : "");
    if (kids.length) {
      item.row.setAttribute("aria-expanded", String(open));
      toggle.addEventListener("click", (ev) => {
        ev.stopPropagation();
        this.setOpen(node.id, !this.isOpen(node));
      });
    } else item.row.removeAttribute("aria-expanded");
    item.row.replaceChildren(toggle, line(node));
    if (item.where) item.where.remove();
    const hit = this.keep ? conversationHit(node, this.filter.text) : null;
    item.where = hit ? whereLine(hit, this.filter.text) : null;
    if (item.where) item.row.after(item.where);
    this.view.approvals.drawCards(item, node);
  }

  drawKids(item, node) {
    const open = this.isOpen(node) && this.kidsOf(node.id).length > 0;
    if (open) {
      if (!item.ul) {
        item.ul = h("ul");
        item.li.appendChild(item.ul);
      }
      this.fillChildren(node.id, item.ul);
    } else if (item.ul) {
      item.ul.remove();
      item.ul = null;
    }
  }

  updateRow(id, kids = false) {
    const item = this.items.get(id);
    const node = this.data.nodes.get(id);
    if (!item || !node) return;
    this.drawRow(item, node);
    if (kids) this.drawKids(item, node);
  }

  updateChildren(id) {
    if (id !== null) return this.updateRow(id, true);
    if (this.rootUl) this.fillChildren(null, this.rootUl);
    // the first steps of a run arrive in a patch, after a view that had none
    if (this.emptyEl) this.emptyEl.hidden = this.rootUl.childNodes.length > 0;
  }

  setOpen(id, open) {
    const node = this.data.nodes.get(id);
    if (!node || this.keep) return;
    this.collapsed[open ? "delete" : "add"](id);
    this.expanded[open ? "add" : "delete"](id);
    this.updateChildren(id);
  }

  // Opens the ancestors of `id` and drops a filter that hides it; whether to draw again.
  reveal(id) {
    let redraw = false;
    lineage(this.data.nodes, id).slice(1).reverse().forEach((p) => {
      if (this.collapsed.has(p) || !this.isOpen(this.data.nodes.get(p))) {
        this.collapsed.delete(p);
        this.expanded.add(p);
        redraw = true;
      }
    });
    if (id && this.keep && !this.keep.has(id)) {
      this.filter = { text: "", kind: "", status: "" };
      this.inputs.forEach((el) => (el.value = ""));
      redraw = true;
    }
    return redraw;
  }
}

class DetailsPane {
  constructor(view) {
    this.view = view;
  }

  build() {
    return (this.el = h("div", "nba-live-details"));
  }

  draw() {
    const pane = this.el;
    const scroll = pane.scrollTop;
    const id = this.view.selected;
    const node = id ? this.view.data.nodes.get(id) : null;
    pane.replaceChildren();
    if (!node) {
      pane.appendChild(h("div", "nba-empty", "Click a step in the tree or the timeline to see its details."));
      return;
    }
    const head = h("div", "nba-details-head " + statusCls(node.status));
    head.appendChild(line(node));
    pane.appendChild(head);
    const whole = this.view.inputs.get(id);
    (node.details || []).forEach((f) => {
      const isInput = node.kind === "model" && typeof f.label === "string" && f.label.startsWith("Input messages");
      if (isInput && whole) {
        pane.appendChild(field({ label: whole.label, type: "messages", value: whole.messages }));
        return;
      }
      pane.appendChild(field(f));
      if (isInput && this.view.canSend()) pane.appendChild(this.wholeInputButton(id));
    });
    if ((node.token_table || []).length) pane.appendChild(field({ label: "Tokens", type: "kv", value: node.token_table }));
    if (node.diff) pane.appendChild(field({ label: "State", type: "diff", value: node.diff }));
    if (node.conversation) pane.appendChild(this.conversation(node));
    this.view.focus.decorate(pane, head, node);
    pane.scrollTop = scroll;
  }

  // Asks the kernel for a model call's whole input; its answer arrives as a custom message.
  wholeInputButton(id) {
    const b = button("nba-more-button nba-whole-input", "open the whole input", () => {
      b.disabled = true;
      b.textContent = "loading the whole input…";
      this.view.model.send({ type: "input", id });
    });
    return b;
  }

  conversation(node) {
    const conv = node.conversation;
    const needle = this.view.tree.filter.text;
    const box = h("div", "nba-field nba-conv");
    box.appendChild(h("div", "nba-label", "Conversation (" + num(conv.messages) + " messages, " + num(conv.model_calls) + " model calls)"));
    this.view.pages.fill(box, node, needle);
    return box;
  }

  turn(key, t, needle) {
    const box = h("div", "nba-msg nba-turn nba-turn-" + (TURN_KINDS.has(t.kind) ? t.kind : "note"));
    box.appendChild(h("span", "nba-role", t.label));
    if (t.meta) box.appendChild(h("span", "nba-meta", " " + t.meta));
    if (t.link) {
      box.append(" ", button("nba-conv-link", "→ the conversation of " + t.link_label, () => this.view.select(t.link)));
    }
    if (t.content) {
      const text = highlighted(h("div", "nba-text" + (t.error ? " nba-error-text" : "")), t.content, needle);
      if (t.fold) {
        const folds = this.view.openFolds;
        const det = h("details", "nba-fold");
        const summary = h("summary");
        const chars = " (" + String(t.content).length + " chars)";
        summary.append(h("span", "nba-preview", String(t.content).replace(/\s+/g, " ").slice(0, 100)), h("small", null, chars));
        det.append(summary, text);
        const hit = Boolean(needle) && String(t.content).toLowerCase().includes(needle);
        det.open = hit || folds.has(key);
        det.addEventListener("toggle", () => folds[det.open ? "add" : "delete"](key));
        box.appendChild(det);
      } else box.appendChild(text);
    }
    (t.tool_calls || []).forEach((c) => box.appendChild(highlighted(h("div", "nba-call"), "→ " + c.name + "(" + c.args + ")", needle)));
    return box;
  }
}

// -- approvals: pending requests at their steps, answered from the view -------------------------

class Approvals {
  constructor(view) {
    this.view = view;
    this.decisions = new Map(); // pending request key -> {decision, args_json, message}
    this.sending = false;
    this.sentKeys = null;
    this.el = null;
  }

  build() {
    return (this.el = h("div", "nba-approvals"));
  }

  drawCards(item, node) {
    const pending = node.pending || [];
    const keys = pending.map((p) => p.key).join("|");
    if (item.cardKeys === keys) return;
    item.cardKeys = keys;
    if (item.card) item.card.remove();
    item.card = pending.length ? h("div", "nba-pending") : null;
    if (!item.card) return;
    pending.forEach((p) => item.card.appendChild(this.requestCard(p)));
    item.row.after(item.card);
  }

  requestCard(p) {
    const box = h("div", "nba-request");
    box.dataset.request = p.key;
    box.appendChild(h("div", "nba-request-title", "waits for a decision: " + p.title));
    if (p.description) box.appendChild(h("div", "nba-request-desc", p.description));
    const body = h("div", "nba-request-body");
    const choices = h("div", "nba-choices");
    const draw = () => {
      const chosen = this.decisions.get(p.key) || {};
      choices.querySelectorAll("button").forEach((b) => {
        b.setAttribute("aria-pressed", String(b.dataset.decision === chosen.decision));
      });
      body.replaceChildren();
      if (chosen.decision === "edit") {
        const area = h("textarea", "nba-edit-args");
        area.setAttribute("aria-label", "Arguments of " + p.title + " as JSON");
        area.value = chosen.args_json;
        area.rows = Math.min(12, area.value.split("\n").length + 1);
        area.addEventListener("input", () => {
          chosen.args_json = area.value;
        });
        body.appendChild(area);
      } else if (chosen.decision === "reject" || chosen.decision === "respond") {
        const input = h("input", "nba-message");
        input.type = "text";
        input.placeholder = chosen.decision === "reject" ? "Why (optional, the agent reads it)" : "The tool's result, as the agent will read it";
        input.setAttribute("aria-label", (chosen.decision === "reject" ? "Reason to reject " : "Answer instead of ") + p.title);
        input.value = chosen.message || "";
        input.addEventListener("input", () => {
          chosen.message = input.value;
          this.draw();
        });
        body.appendChild(input);
      }
      this.draw();
    };
    p.allowed.forEach((decision) => {
      const b = button("nba-choice", decision, () => {
        const old = this.decisions.get(p.key);
        this.decisions.set(p.key, {
          decision,
          args_json: old && old.args_json !== undefined ? old.args_json : p.args_json,
          message: old ? old.message || "" : "",
        });
        draw();
      });
      b.dataset.decision = decision;
      b.disabled = !this.answerable();
      choices.appendChild(b);
    });
    if (!p.allowed.length) choices.appendChild(h("span", "nba-request-desc", "answer it in code: Command(resume=...)"));
    box.append(choices, body);
    draw();
    return box;
  }

  answerable() {
    const model = this.view.model;
    return Boolean(model && model.get("answerable") && model.send);
  }

  ready(p) {
    const chosen = this.decisions.get(p.key);
    if (!chosen || !p.allowed.includes(chosen.decision)) return false;
    return chosen.decision !== "respond" || Boolean((chosen.message || "").trim());
  }

  // The bar above the tree: how many requests are decided, and the button that sends them.
  draw() {
    const bar = this.el;
    if (!bar) return;
    const nodes = this.view.data ? [...this.view.data.nodes.values()] : [];
    const pending = nodes.flatMap((n) => n.pending || []).filter((p) => p.allowed.length);
    const notice = this.view.model ? this.view.model.get("notice") || "" : "";
    bar.replaceChildren();
    if (!pending.length) {
      this.sending = false;
      if (notice) bar.appendChild(h("div", "nba-notice", notice));
      return;
    }
    const keys = pending.map((p) => p.key).join("|");
    if (this.sending && keys !== this.sentKeys) this.sending = false; // it paused again
    const decided = pending.filter((p) => this.ready(p)).length;
    const line = h("div", "nba-approvals-bar");
    if (!this.answerable()) {
      line.appendChild(h("span", "nba-waiting", pending.length + " request(s) wait for a decision. Answer them in code: nbagents.pending_approvals(result)."));
    } else {
      line.appendChild(h("span", "nba-waiting", decided + " of " + pending.length + " decided"));
      const submit = button("nba-submit", this.sending ? "resuming…" : "Submit decisions and resume", () => this.submit(pending));
      submit.disabled = this.sending || decided < pending.length;
      line.appendChild(submit);
    }
    bar.appendChild(line);
    if (notice && !this.sending) bar.appendChild(h("div", "nba-notice", notice));
  }

  submit(pending) {
    if (!this.answerable() || this.sending) return;
    const decisions = pending.map((p) => {
      const chosen = this.decisions.get(p.key);
      return { key: p.key, decision: chosen.decision, args_json: chosen.args_json, message: chosen.message || "" };
    });
    this.sending = true;
    this.sentKeys = pending.map((p) => p.key).join("|");
    this.view.model.send({ type: "decide", decisions });
    this.draw();
  }

  noticeChanged() {
    this.sending = false;
    this.draw();
  }

  answerableChanged() {
    this.view.root.querySelectorAll(".nba-choice").forEach((b) => {
      b.disabled = !this.answerable();
    });
    this.draw();
  }
}

// -- the agents' sections: tokens per agent and the timeline ------------------------------------

// A section of one row per agent, keyed by id: a patch replaces the touched rows; a new order
// draws all again. Subclasses give row(id) -> {el}, drawAll (which sets moreAt) and refresh.
class KeyedRows {
  constructor(view, key, title, cls) {
    this.view = view;
    this.key = key;
    this.title = title;
    this.cls = cls;
    this.ids = null; // the agents drawn, in order
    this.entries = new Map(); // id -> what row(id) returned
    this.more = null;
  }

  build() {
    this.box = h("div", this.cls);
    this.sec = section(this.view, this.key, this.title, this.box);
    return this.sec;
  }

  redraw() {
    this.ids = null;
    this.update(new Set(), true);
  }

  update(touched, reorder) {
    const agents = this.view.data.agents;
    this.sec.style.display = agents.length ? "" : "none";
    if (!agents.length) return;
    const ids = agents.slice(0, Math.max(this.view.agentLimit, ROW_PAGE));
    // New agents past the drawn page only change the "show more" count: no redraw.
    if (reorder && !same(this.ids, ids)) this.ids = null;
    if (this.ids) {
      touched.forEach((id) => {
        const old = this.entries.get(id);
        if (old) old.el.replaceWith(this.add(id).el);
      });
    } else {
      this.entries = new Map();
      this.ids = ids;
      this.drawAll(ids.map((id) => this.add(id).el));
    }
    if (this.more) this.more.remove();
    const rest = agents.length - ids.length;
    const more = () => {
      this.view.agentLimit = ids.length + ROW_PAGE; // both sections draw the same agents
      this.view.table.redraw();
      this.view.timeline.redraw();
    };
    this.more = rest > 0 ? this.moreAt.appendChild(moreButton(rest, ROW_PAGE, " agents", more)) : null;
    this.refresh();
  }

  add(id) {
    const entry = this.row(id);
    this.entries.set(id, entry);
    return entry;
  }
}

// The token table's and the Tools table's parts; cells from `figures` on are right-aligned.
function figureTable(cls, columns, figures, rows, total) {
  const head = h("tr");
  columns.forEach((t, i) => head.appendChild(h("th", i >= figures ? "nba-num" : null, t)));
  const [table, thead, body] = [h("table", "nba-table " + cls), h("thead"), h("tbody")];
  thead.appendChild(head);
  body.append(...rows, total);
  table.append(thead, body);
  return table;
}

function tableRow(row, figures, selected) {
  const tr = h("tr", statusCls(row.status) + (selected ? " nba-selected" : ""));
  (row.cells || []).forEach((c, i) => {
    if (i === 0) {
      const td = h("td", null, "\u2003".repeat(Math.min(num(row.depth), 20)));
      td.append(dot(row.status, row.glyph), " " + c);
      tr.appendChild(td);
    } else tr.appendChild(h("td", i >= figures ? "nba-num" : null, c));
  });
  return tr;
}

function totalCells(tr, cells, figures) {
  tr.replaceChildren(...cells.map((t, i) => h("td", i >= figures ? "nba-num" : null, t)));
  return tr;
}

class AgentTable extends KeyedRows {
  constructor(view) {
    super(view, "tokens", "Tokens per agent", null);
  }

  drawAll(rows) {
    this.totalRow = h("tr", "nba-total");
    this.box.replaceChildren(figureTable("nba-tokens", this.view.data.columns, AGENT_FIGURES, rows, this.totalRow));
    this.moreAt = this.box;
  }

  refresh() {
    totalCells(this.totalRow, this.view.data.totals, AGENT_FIGURES);
  }

  row(id) {
    const row = this.view.data.agentRows.get(id) || { cells: [], depth: 0, status: "running", glyph: "" };
    const tr = tableRow(row, AGENT_FIGURES, this.view.selected === id);
    tr.dataset.node = id;
    tr.addEventListener("click", () => this.view.select(id));
    return { el: tr };
  }
}

class Timeline extends KeyedRows {
  constructor(view) {
    super(view, "timeline", "Timeline", "nba-tl");
  }

  drawAll(rows) {
    this.moreAt = h("div");
    const legend = h("div", "nba-legend", "bar: agent run");
    legend.append(h("span", "nba-swatch nba-seg-model"), "model call", h("span", "nba-swatch nba-seg-tool"), "tool call");
    this.box.replaceChildren(...rows, this.moreAt, legend);
  }

  // The time axis grows with the run: every drawn bar is placed again (numbers only).
  refresh() {
    this.entries.forEach((entry) => this.place(entry));
  }

  row(id) {
    const row = this.view.data.timeline.get(id) || { segments: [], name: "", depth: 0, time: "" };
    const r = h("div", "nba-tl-row " + statusCls(row.status) + (this.view.selected === id ? " nba-selected" : ""));
    r.dataset.node = id;
    const label = h("span", "nba-tl-label");
    label.style.paddingLeft = Math.min(num(row.depth), 20) * 12 + "px";
    label.append(dot(row.status, row.glyph), " " + row.name);
    r.appendChild(label);
    const track = h("span", "nba-tl-track nba-tl-abs");
    const bar = h("span", "nba-bar");
    track.appendChild(bar);
    const segs = (row.segments || []).map((s) => {
      const seg = h("span", "nba-seg " + (s.kind === "tool" ? "nba-seg-tool" : "nba-seg-model"));
      seg.addEventListener("click", (ev) => {
        ev.stopPropagation();
        this.view.select(s.id);
      });
      track.appendChild(seg);
      return [seg, s];
    });
    const marks = (row.marks || []).map((m) => {
      const mark = h("span", "nba-mark nba-mark-" + (m.kind === "finished" ? "finished" : "started"));
      mark.title = m.label;
      track.appendChild(mark);
      return [mark, m];
    });
    r.append(track, h("span", "nba-tl-time", row.time));
    r.addEventListener("click", () => this.view.select(id));
    return { el: r, bar, row, segs, marks };
  }

  place(entry) {
    const horizon = this.view.data.duration;
    const scale = horizon > 0 ? 100 / horizon : 0;
    const put = (el, start, end) => {
      const s = num(start);
      const e = end === null || end === undefined ? horizon : num(end);
      const left = Math.min(Math.max(s * scale, 0), 100);
      el.style.left = pct(left);
      el.style.width = pct(Math.min(Math.max((e - s) * scale, 0), 100 - left));
    };
    put(entry.bar, entry.row.start, entry.row.end);
    entry.segs.forEach(([el, s]) => put(el, s.start, s.end));
    entry.marks.forEach(([el, m]) => {
      el.style.left = pct(Math.min(Math.max(num(m.at) * scale, 0), 100));
    });
  }
}

// -- the tools: a row per tool, which opens its calls ---------------------------------------------
//
// Drawn whole on a change: a run calls few tools, and an open one lists its first calls only.

class ToolTable {
  constructor(view) {
    this.view = view;
    this.open = new Set(); // the tools whose calls are shown
    this.limit = ROW_PAGE;
  }

  build() {
    this.box = h("div", "nba-tools-box");
    this.sec = section(this.view, "tools", "Tools", this.box);
    this.sec.classList.add("nba-tools-sec");
    return this.sec;
  }

  update(touched, columns) {
    if (touched.size || columns) this.redraw();
  }

  redraw() {
    const tools = this.view.data.tools;
    this.sec.style.display = tools.order.length ? "" : "none";
    if (!tools.order.length) {
      this.box.replaceChildren();
      return;
    }
    const shown = tools.order.slice(0, this.limit).filter((id) => tools.rows.has(id));
    const rows = shown.flatMap((id) => this.rows(id, tools.rows.get(id), tools.columns.length));
    const total = totalCells(h("tr", "nba-total"), tools.totals, TOOL_FIGURES);
    const parts = [figureTable("nba-tools", tools.columns, TOOL_FIGURES, rows, total)];
    const rest = tools.order.length - this.limit;
    if (rest > 0) {
      parts.push(
        moreButton(rest, ROW_PAGE, " tools", () => {
          this.limit += ROW_PAGE;
          this.redraw();
        }),
      );
    }
    parts.push(h("div", "nba-legend", "turns: the model replies that asked for the tool; in, out and cost are theirs, a reply counted once per tool it asked for."));
    this.box.replaceChildren(...parts);
  }

  // A tool's row, and when open the row of its calls. (The name goes in no attribute.)
  rows(id, row, width) {
    const open = this.open.has(id);
    const tr = tableRow(row, TOOL_FIGURES, false);
    tr.classList.add("nba-tool-row");
    if (tr.firstChild) tr.firstChild.prepend(h("span", "nba-toggle", open ? "▾" : "▸"));
    tr.tabIndex = 0;
    tr.setAttribute("aria-expanded", String(open));
    const toggle = () => {
      this.open[this.open.has(id) ? "delete" : "add"](id);
      const at = [...this.box.querySelectorAll("tr.nba-tool-row")].indexOf(tr);
      this.redraw();
      const again = this.box.querySelectorAll("tr.nba-tool-row")[at];
      if (again) again.focus({ preventScroll: true });
    };
    tr.addEventListener("click", toggle);
    tr.addEventListener("keydown", (ev) => {
      if (ev.key !== "Enter" && ev.key !== " ") return;
      ev.preventDefault();
      toggle();
    });
    if (!open) return [tr];
    const calls = h("tr", "nba-tool-calls");
    const td = h("td");
    td.colSpan = Math.max(width, 1);
    td.style.wordBreak = "break-all"; // a word of a call's arguments: the table is as wide as its longest
    (row.calls || []).forEach((c) => td.appendChild(this.call(c)));
    if (num(row.more)) {
      td.appendChild(h("div", "nba-empty", "… and " + num(row.more) + ' more calls: trace.tool_usage("call") has every one.'));
    }
    calls.appendChild(td);
    return [tr, calls];
  }

  call(c) {
    const node = this.view.data.nodes.get(c.id) || { status: "running", glyph: "", preview: "", time: "" };
    const box = h("div", "nba-tool-call " + statusCls(node.status) + (this.view.selected === c.id ? " nba-selected" : ""));
    box.dataset.node = c.id;
    const head = h("span", "nba-line");
    head.append(dot(node.status, node.glyph), h("span", "nba-name", c.agent));
    if (node.preview) head.appendChild(h("span", "nba-preview", node.preview));
    head.appendChild(h("span", "nba-meta", node.time));
    box.append(head, " ", button("nba-tree-link", "↑ its step in the call tree", () => this.view.reach(c.id)));
    (node.details || []).forEach((f) => box.appendChild(field(f)));
    return box;
  }
}

// -- one store per widget -----------------------------------------------------------------------
//
// Every view of a widget draws its store's data, which takes in each view and patch once, so a
// view rendered late starts from all that came before. anywidget hands each view its own model
// proxy: the store is found by the widget's `uid` within its widget manager.

class Store {
  constructor(model) {
    this.model = model;
    this.data = null;
    this.views = new Set();
  }

  parse(name) {
    try {
      return JSON.parse(this.model.get(name) || "null");
    } catch (err) {
      return null;
    }
  }

  whole() {
    const next = loadView(this.parse("view_json"));
    const patch = this.data && next ? asPatch(this.data, next) : null;
    if (patch) {
      this.data.texts = next.texts; // the keys of the builder that made it (a new one: a move)
      this.data.pages = next.pages;
      this.draw(patch);
      return;
    }
    this.data = next;
    this.views.forEach((view) => {
      view.stale = false;
      view.reset(this.data);
      view.settle();
    });
  }

  patch() {
    const patch = this.parse("patch_json");
    if (!this.data || !patch || typeof patch !== "object") return;
    if (num(patch.rev) <= this.data.rev) return; // already in the whole view
    this.draw(patch);
  }

  // A view out of sight is drawn whole when it comes into sight (catchUp).
  draw(patch) {
    const changes = changesOf(patch, applyPatch(this.data, patch));
    this.views.forEach((view) => {
      if (!view.inSight) view.stale = true;
      else {
        view.patched(changes);
        view.settle();
      }
    });
  }

  // `view` came into sight after patches it was not drawn with: draw it again, whole.
  catchUp(view) {
    if (!view.stale || !this.views.has(view)) return;
    view.stale = false;
    view.redraw(this.data);
    view.settle();
  }
}

// What a patch touched, and whether it brought a new order of the agents or new columns.
function changesOf(patch, touched) {
  return { agents: Boolean(patch.agents), columns: Boolean(patch.columns), touched };
}

const STORES = new WeakMap(); // widget manager -> (widget uid -> its Store)
const NO_MANAGER = {};

function storesOf(model) {
  const manager = model.widget_manager || NO_MANAGER;
  if (!STORES.has(manager)) STORES.set(manager, new Map());
  return STORES.get(manager);
}

// Subscribes `handlers` (event -> function) to `model`; returns the unsubscribe.
function listen(model, handlers) {
  const each = (how) => Object.entries(handlers).forEach(([ev, fn]) => model[how](ev, fn));
  each("on");
  return () => each("off");
}

function follow(model, store) {
  const stop = listen(model, { "change:view_json": () => store.whole(), "change:patch_json": () => store.patch() });
  store.whole();
  store.patch();
  return stop;
}

function initialize({ model }) {
  const uid = model.get("uid");
  const stores = storesOf(model);
  const store = new Store(model);
  if (uid) stores.set(uid, store);
  const stop = follow(model, store);
  return () => {
    stop();
    if (stores.get(uid) === store) stores.delete(uid);
  };
}

// A view that goes leaves what the user chose, by widget uid, for the next view of that run, and
// for a minute its rows, for the saved view (takeOver), which runs its own copy of this module:
// hence a global.
const HANDOFF = Symbol.for("nbagents.handoff");
const HANDOFF_MS = 60_000;

function handoffs() {
  if (!globalThis[HANDOFF]) globalThis[HANDOFF] = new Map();
  return globalThis[HANDOFF];
}

function render({ model, el }, saved = false) {
  const uid = model.get("uid");
  const handed = uid ? handoffs().get(uid) : undefined;
  if (handed) handoffs().delete(uid);
  let store = uid ? storesOf(model).get(uid) : undefined;
  let stop = null;
  if (!store) {
    // A widget initialize() did not see: this view follows the model itself.
    store = new Store(model);
    stop = follow(model, store);
  }
  let view;
  if (saved && handed && handed.view && handed.view.data && store.data) {
    view = takeOver(handed, model, el, store);
  } else {
    // MathJax must not typeset user text ("costs $5 and $10").
    const root = h("div", "nba-root nba-live tex2jax_ignore mathjax_ignore");
    el.appendChild(root);
    view = new TraceView(root, model);
    if (handed) {
      try {
        view.adopt(handed.ui);
      } catch (err) {
        console.warn("nbagents: the view's earlier state could not be restored", err);
      }
    }
    store.views.add(view);
    view.reset(store.data);
  }
  view.settle();
  const sight = new IntersectionObserver(
    (entries) => {
      view.inSight = entries[entries.length - 1].isIntersecting;
      if (view.inSight) store.catchUp(view);
    },
    { rootMargin: "200px" },
  );
  sight.observe(view.root);
  const unlisten = listen(model, {
    "msg:custom": (msg) => view.received(msg),
    "change:notice": () => view.approvals.noticeChanged(),
    "change:answerable": () => view.approvals.answerableChanged(),
  });
  return () => {
    if (uid && view.data) {
      const left = { ui: view.uiState(), view, stale: view.stale };
      handoffs().set(uid, left);
      // Its rows stay with the page only until the saved view takes them.
      setTimeout(() => {
        if (handoffs().get(uid) === left) handoffs().set(uid, { ui: left.ui });
      }, HANDOFF_MS);
    }
    sight.disconnect();
    store.views.delete(view);
    if (stop) stop();
    unlisten();
  };
}

// The saved view takes over the live view's rows, brought up to date as a patch.
function takeOver(handed, model, el, store) {
  const view = handed.view;
  view.model = model;
  el.appendChild(view.root);
  store.views.add(view);
  const patch = handed.stale ? null : asPatch(view.data, store.data);
  if (!patch) {
    view.redraw(store.data);
    return view;
  }
  const touched = applyPatch(view.data, patch);
  view.data.pages = store.data.pages;
  store.data = view.data;
  view.patched(changesOf(patch, touched));
  return view;
}

// -- the saved view (nbagents/display/_saved.py): where the output is trusted, its script
// draws the run from the final view as the live view did: no widget, no kernel.

function showSaved(box, viewJson, css) {
  if (box.dataset.nbaDrawn) return;
  box.dataset.nbaDrawn = "1";
  const values = { uid: box.dataset.nbaUid || "", view_json: viewJson, patch_json: "null", answerable: false, notice: "" };
  const model = { get: (key) => values[key], on() {}, off() {}, widget_manager: box };
  const style = document.createElement("style");
  style.textContent = css;
  const el = h("div", "nba-saved-view");
  initialize({ model });
  render({ model, el }, true);
  // The static snapshot goes (a wide run's is many elements); its stylesheet stays.
  const snapshot = box.querySelector(":scope > .nba-trace");
  if (snapshot) {
    const sheet = snapshot.querySelector("style.nba-css");
    if (sheet) box.append(sheet);
    snapshot.remove();
  }
  box.append(style, el);
}

export { showSaved };
export default { initialize, render };

// -- focus: one agent's subtree alone, a breadcrumb back up, its conversation kept in view ------

class Focus {
  constructor(view) {
    this.view = view;
    this.id = null; // the focused agent's node id, or null: the whole run
    this.el = null;
  }

  get data() {
    return this.view.data;
  }

  focused() {
    return this.id !== null && this.data && this.data.nodes.has(this.id) ? this.id : null;
  }

  roots() {
    const id = this.focused();
    return id === null ? this.data.roots : [id];
  }

  // Whether step `id` is drawn in focus: the focused agent or a step under it.
  holds(id) {
    const top = this.focused();
    return top === null || lineage(this.data.nodes, id).includes(top);
  }

  // The agent a step belongs to: itself, if an agent, else its nearest agent above.
  agentOf(id) {
    const nodes = this.data.nodes;
    return lineage(nodes, id).find((k) => nodes.has(k) && AGENT_KINDS.has(nodes.get(k).kind)) ?? null;
  }

  parentAgent(id) {
    const node = this.data.nodes.get(id);
    return node ? this.agentOf(node.parent) : null;
  }

  // Focus on agent `id`: its subtree alone, and it selected (its conversation shows).
  set(id) {
    const node = id ? this.data.nodes.get(id) : null;
    if (!node || !AGENT_KINDS.has(node.kind)) return;
    this.to(id);
    this.view.select(id);
  }

  // Focus on `id` (null: the whole run): the tree and the breadcrumb drawn for it.
  to(id) {
    this.id = id;
    this.view.tree.draw();
    this.draw();
  }

  // Back to the whole run, the agent that was focused selected and on screen.
  leave() {
    const was = this.focused();
    this.to(null);
    if (was !== null) {
      this.view.select(was);
      this.view.keys.bring(was);
    }
  }

  // Out: focus on the focused agent's parent agent, or the whole run from a top agent.
  up() {
    const id = this.focused();
    if (id === null) return;
    const parent = this.parentAgent(id);
    if (parent === null) this.leave();
    else this.set(parent);
  }

  // Selecting a step outside the focused subtree shows the whole run again.
  admit(id) {
    if (id && this.focused() !== null && this.data.nodes.has(id) && !this.holds(id)) this.to(null);
  }

  build() {
    this.el = h("nav", "nba-crumbs");
    this.el.setAttribute("aria-label", "Focused agent and its ancestors");
    this.draw();
    return this.el;
  }

  // The breadcrumb: the whole run, each ancestor agent (buttons), the focused agent.
  draw() {
    const bar = this.el;
    if (!bar) return;
    bar.replaceChildren();
    const id = this.focused();
    bar.hidden = id === null;
    if (id === null) return;
    const chain = [];
    for (let k = this.parentAgent(id); k !== null; k = this.parentAgent(k)) chain.unshift(k);
    bar.appendChild(button("nba-crumb", "Whole run", () => this.leave()));
    chain.forEach((k) => {
      const b = button("nba-crumb", this.data.nodes.get(k).name, () => this.set(k));
      b.dataset.node = k;
      b.title = this.data.nodes.get(k).preview || "";
      bar.append(h("span", "nba-crumb-sep", " › "), b);
    });
    bar.appendChild(h("span", "nba-crumb-sep", " › "));
    const here = h("span", "nba-crumb-here", this.data.nodes.get(id).name);
    here.dataset.node = id;
    bar.append(here, h("span", "nba-crumb-note", " (its subtree alone: Esc or \u201cWhole run\u201d goes back)"));
  }

  // A focus button on an agent's details; in focus, the focused agent's conversation below.
  decorate(pane, head, node) {
    const id = this.focused();
    if (AGENT_KINDS.has(node.kind) && node.id !== id) {
      const b = button("nba-more-button nba-focus-button", "Focus on this agent", () => this.set(node.id));
      b.title = "Show this agent's subtree alone (key: f)";
      head.appendChild(b);
    }
    if (id === null || node.id === id) return;
    const agent = this.data.nodes.get(id);
    if (!agent || !agent.conversation) return;
    const box = this.view.details.conversation(agent);
    box.classList.add("nba-focus-conv");
    box.querySelector(".nba-label").textContent = "Conversation of the focused agent, " + agent.name + " (" + num(agent.conversation.messages) + " messages, " + num(agent.conversation.model_calls) + " model calls)";
    pane.appendChild(box);
  }
}

// -- keys on a tree row (a row stops their propagation: JupyterLab binds the arrows) ----------

const KEYS_HELP = "Keys on a row: \u2191 \u2193 rows \u00b7 \u2190 \u2192 close, open \u00b7 Enter select \u00b7 [ ] previous, next turn \u00b7 { } previous, next sibling agent \u00b7 f focus on the agent \u00b7 Backspace out to the parent agent \u00b7 Esc whole run";

const KEY_ACTIONS = {
  ArrowDown: ["step", 1], ArrowUp: ["step", -1], "]": ["turn", 1], "[": ["turn", -1],
  "}": ["sibling", 1], "{": ["sibling", -1], f: ["into"], F: ["into"], Backspace: ["out"],
};

class TreeKeys {
  constructor(view) {
    this.view = view;
  }

  // Handles a key pressed on the row of step `id`; whether it was one of these.
  handle(ev, id) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return false;
    if (ev.key === "Escape") {
      if (this.view.focus.focused() === null) return false;
      this.view.focus.leave();
      return true;
    }
    const act = Object.hasOwn(KEY_ACTIONS, ev.key) && KEY_ACTIONS[ev.key];
    if (!act) return false;
    this[act[0]](id, act[1]);
    return true;
  }

  step(id, by) {
    const item = this.view.tree.items.get(id);
    const rows = [...this.view.tree.el.querySelectorAll(".nba-row")];
    const at = item ? rows.indexOf(item.row) : -1;
    if (at >= 0 && rows[at + by]) this.show(rows[at + by]);
  }

  // The agent's next (1) or previous (-1) model call after the step `id`, selected.
  turn(id, by) {
    const agent = this.view.focus.agentOf(id);
    if (agent === null) return;
    const own = this.ownSteps(agent);
    let at = own.indexOf(id);
    if (at < 0) at = by > 0 ? -1 : own.length;
    for (let i = at + by; i >= 0 && i < own.length; i += by) {
      if (this.view.data.nodes.get(own[i]).kind === "model") {
        this.go(own[i]);
        return;
      }
    }
  }

  // The steps of `agent` itself, in tree order: not those of the sub-agents it spawned.
  ownSteps(agent) {
    const out = [];
    const walk = (k) => {
      const node = this.view.data.nodes.get(k);
      if (!node) return;
      out.push(k);
      if (k !== agent && AGENT_KINDS.has(node.kind)) return;
      (node.children || []).forEach(walk);
    };
    walk(agent);
    return out;
  }

  // The next (1) or previous (-1) sibling agent of the row's agent (in focus, the focus too).
  sibling(id, by) {
    const focus = this.view.focus;
    const agent = focus.agentOf(id);
    if (agent === null) return;
    const parent = focus.parentAgent(agent);
    const kin = this.view.data.agents.filter((a) => this.view.data.nodes.has(a) && focus.parentAgent(a) === parent);
    const next = kin[kin.indexOf(agent) + by];
    if (next === undefined) return;
    if (focus.focused() === agent) {
      focus.set(next);
      this.bring(next);
    } else this.go(next);
  }

  // In: focus on the row's agent; on a step that spawned one (a task), on the sub-agent.
  into(id) {
    const node = this.view.data.nodes.get(id);
    if (!node) return;
    const spawned = (node.children || []).find((k) => AGENT_KINDS.has((this.view.data.nodes.get(k) || {}).kind));
    const target = AGENT_KINDS.has(node.kind) ? id : spawned || this.view.focus.agentOf(id);
    if (target === null || target === undefined) return;
    this.view.focus.set(target);
    this.bring(target);
  }

  // Out: the focus, else the selection, to the parent agent.
  out(id) {
    const focus = this.view.focus;
    if (focus.focused() !== null) {
      const was = focus.focused();
      focus.up();
      this.bring(focus.focused() === null ? was : focus.focused());
      return;
    }
    const agent = focus.agentOf(id);
    const target = agent === id ? focus.parentAgent(id) : agent;
    if (target !== null) this.go(target);
  }

  go(id) {
    this.view.select(id);
    this.bring(id);
  }

  // The row of step `id` drawn (past a "show more"), on screen, with the keyboard focus.
  bring(id) {
    const tree = this.view.tree;
    const chain = lineage(this.view.data.nodes, id).reverse();
    let redraw = false;
    chain.forEach((k, i) => {
      const parent = i ? chain[i - 1] : null;
      const kids = tree.kidsOf(parent);
      const at = kids.indexOf(k);
      if (at >= tree.limitOf(parent, kids)) {
        tree.shown.set(parent, (Math.floor(at / PAGE) + 1) * PAGE);
        redraw = true;
      }
    });
    if (redraw) tree.draw();
    const item = tree.items.get(id);
    if (item) this.show(item.row);
  }

  show(row) {
    row.focus({ preventScroll: true });
    row.scrollIntoView({ block: "nearest" });
  }
}

// -- a conversation's pages: the view holds the first; others come from a saved view's `pages`
// or from the kernel when asked (LiveView._send_turns).

class TurnPages {
  constructor(view) {
    this.view = view;
    this.at = new Map(); // agent node id -> the page shown
    this.got = new Map(); // "id:page" -> {turns, entries}, as the kernel sent it
    this.asked = new Set(); // "id:page:entries" asked and not answered
  }

  entries(node) {
    const conv = node.conversation || {};
    return conv.entries !== undefined ? num(conv.entries) : turns(node).length + num(conv.left_out);
  }

  size(node) {
    return Math.max(num((node.conversation || {}).page_size), turns(node).length, 1);
  }

  count(node) {
    return Math.max(Math.ceil(this.entries(node) / this.size(node)), 1);
  }

  // Page `page` of `node`'s conversation, or null while it is not here.
  page(node, page) {
    if (page === 0) return turns(node);
    const saved = this.view.data.pages && this.view.data.pages[node.id];
    if (saved && Array.isArray(saved[page])) return saved[page];
    const got = this.got.get(node.id + ":" + page);
    // A last page not full when it came may have grown since.
    if (got && (got.turns.length >= this.size(node) || got.entries === this.entries(node))) return got.turns;
    return null;
  }

  ask(node, page) {
    const key = node.id + ":" + page + ":" + this.entries(node);
    if (this.asked.has(key)) return;
    this.asked.add(key);
    this.view.model.send({ type: "turns", id: node.id, page });
  }

  received(msg) {
    if (typeof msg.id !== "string" || !Number.isInteger(msg.page) || !Array.isArray(msg.turns)) return;
    this.got.set(msg.id + ":" + msg.page, { turns: msg.turns, entries: num(msg.entries) });
    [...this.asked].filter((k) => k.startsWith(msg.id + ":" + msg.page + ":")).forEach((k) => this.asked.delete(k));
    const shown = [this.view.selected, this.view.focus.focused()];
    if (shown.includes(msg.id)) this.view.details.draw();
  }

  go(node, page) {
    this.at.set(node.id, page);
    this.view.details.draw();
  }

  // Draws the page shown of `node`'s conversation into `box`, between two page bars.
  fill(box, node, needle) {
    const count = this.count(node);
    const page = Math.min(Math.max(this.at.get(node.id) || 0, 0), count - 1);
    const size = this.size(node);
    const shown = this.page(node, page);
    if (count > 1) box.appendChild(this.bar(node, page, count));
    if (shown === null) {
      if (this.view.canSend()) {
        this.ask(node, page);
        box.appendChild(h("div", "nba-empty nba-conv-loading", "loading entries " + this.range(node, page) + "…"));
      } else {
        box.appendChild(h("div", "nba-empty", "This page is not in the saved output: trace.transcript(…) has every entry."));
      }
    } else {
      const current = this.view.selected;
      shown.forEach((t, i) => {
        const el = this.view.details.turn(node.id + ":" + (page * size + i), t, needle);
        if (current && t.step === current && current !== node.id) el.classList.add("nba-turn-current");
        box.appendChild(el);
      });
    }
    if (count > 1 && shown !== null && shown.length > 20) box.appendChild(this.bar(node, page, count));
  }

  range(node, page) {
    const size = this.size(node);
    const last = Math.min((page + 1) * size, this.entries(node));
    return (page * size + 1).toLocaleString("en-US") + "\u2013" + last.toLocaleString("en-US");
  }

  bar(node, page, count) {
    const bar = h("div", "nba-conv-pages");
    const total = this.entries(node);
    const pageButton = (text, to, label) => {
      const b = button("nba-more-button nba-page-button", text, () => this.go(node, to));
      b.setAttribute("aria-label", label);
      b.disabled = to < 0 || to >= count || to === page;
      bar.appendChild(b);
    };
    pageButton("\u00ab first", 0, "first page of the conversation");
    pageButton("\u2039 previous", page - 1, "previous page of the conversation");
    bar.appendChild(h("span", "nba-page-where", "entries " + this.range(node, page) + " of " + total.toLocaleString("en-US") + " \u00b7 page " + (page + 1) + " of " + count));
    pageButton("next \u203a", page + 1, "next page of the conversation");
    pageButton("last \u00bb", count - 1, "last page of the conversation");
    return bar;
  }
}
