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

function statusCls(status) {
  return "nba-s-" + (STATUSES.has(status) ? status : "running");
}

// An element of class `cls` holding `text`, or the nodes and strings of an array; `props` are
// properties, or attributes for a name with a dash (aria-label, data-node) or `role`.
function h(tag, cls, text, props) {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  if (Array.isArray(text)) el.append(...text);
  else if (text !== undefined && text !== null) el.textContent = String(text);
  for (const [key, value] of Object.entries(props || {})) {
    if (key.includes("-") || key === "role") el.setAttribute(key, value);
    else el[key] = value;
  }
  return el;
}

function button(cls, text, onClick, props) {
  const b = h("button", cls, text, { type: "button", ...props });
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
  return h("span", "nba-dot", glyph || "", { title: STATUSES.has(status) ? status : "running" });
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

function takeRows(map, rows, touched) {
  (rows || []).forEach((r) => {
    map.set(r.id, r);
    touched.add(r.id);
  });
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
    nodes: new Map(), agentRows: new Map(), timeline: new Map(),
    tools: { columns: [], order: [], totals: [], rows: new Map() },
  };
  applyPatch(data, view);
  data.pages = view.pages && typeof view.pages === "object" ? view.pages : null; // a saved view's
  return data;
}

// Applies a patch to the data; returns what the drawing must update (`touched`), and whether the
// patch brought a new order of the agents or new columns.
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
  (patch.nodes || []).forEach((n) => {
    const old = data.nodes.get(n.id);
    const merged = Object.assign(old ? {} : { children: [], details: [] }, old || {}, n);
    delete merged._search;
    data.nodes.set(n.id, merged);
    touched.nodes.add(n.id);
    if (n.children) touched.kids.add(n.id);
  });
  takeRows(data.agentRows, patch.agent_rows, touched.rows);
  takeRows(data.timeline, patch.timeline, touched.timeline);
  if (patch.tools) {
    data.tools = { ...patch.tools, rows: data.tools.rows }; // its rows: those that changed
    takeRows(data.tools.rows, patch.tools.rows, touched.tools);
    touched.tools.add(null);
  }
  return { agents: Boolean(patch.agents), columns: Boolean(patch.columns), touched };
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
  const toolRows = rows(data.tools.rows, next.tools.rows);
  if (toolRows.length || !same({ ...data.tools, rows: null }, { ...next.tools, rows: null })) patch.tools = { ...next.tools, rows: toolRows };
  return patch;
}

// Equal values of the view (JSON's: no NaN, no function).
function same(a, b) {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

// What the filter's text searches: the row, the details' texts and the conversation.
const SEARCHED = new Set(["text", "code", "error"]);

function callText(call) {
  return call.name + "(" + call.args + ")";
}

function turnText(t) {
  const calls = (t.tool_calls || []).map(callText);
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

// `text` into `parent`, each `needle` (lower case) in a <mark>; none where lower-casing changes
// the length.
function highlighted(parent, text, needle) {
  const str = String(text === undefined || text === null ? "" : text);
  const lower = str.toLowerCase();
  const search = needle && lower.length === str.length;
  let from = 0;
  for (let at = search ? lower.indexOf(needle) : -1; at >= 0; at = lower.indexOf(needle, from)) {
    if (at > from) parent.append(str.slice(from, at));
    parent.appendChild(h("mark", "nba-hit", str.slice(at, at + needle.length)));
    from = at + needle.length;
  }
  if (from < str.length || !search) parent.append(str.slice(from));
  return parent;
}

// The line under a tree row saying where its conversation holds the filter's text (its first
// matching turn), or null.
function whereLine(node, needle) {
  for (const t of needle ? turns(node) : []) {
    const text = turnText(t);
    const at = text.toLowerCase().indexOf(needle);
    if (at < 0) continue;
    const el = h("div", "nba-where", "conversation · turn " + num(t.turn) + " · " + t.label + ": ");
    const lo = Math.max(at - 40, 0);
    const hi = Math.min(at + needle.length + 60, text.length);
    const snippet = (lo ? "…" : "") + text.slice(lo, hi).replace(/\s+/g, " ") + (hi < text.length ? "…" : "");
    return highlighted(el, snippet, needle);
  }
  return null;
}
