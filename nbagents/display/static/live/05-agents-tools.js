// -- the agents' sections: tokens per agent and the timeline ------------------------------------

// A section of one row per agent, keyed by id: a patch replaces the touched rows; a new order
// draws all again. Subclasses give row(id) -> {el}, drawAll (which sets moreAt) and refresh.
class KeyedRows extends Part {
  constructor(view, key, title, cls) {
    super(view);
    Object.assign(this, { key, title, cls });
    this.ids = null; // the agents drawn, in order
    this.entries = new Map(); // id -> what row(id) returned
    this.more = null;
  }

  build() {
    this.box = h("div", this.cls);
    return (this.sec = section(this.view, this.key, this.title, this.box));
  }

  redraw() {
    this.ids = null;
    this.update(new Set(), true);
  }

  update(touched, reorder) {
    const agents = this.data.agents;
    this.sec.style.display = agents.length ? "" : "none";
    if (!agents.length) return;
    const ids = agents.slice(0, Math.max(this.view.agentLimit, ROW_PAGE));
    // New agents past the drawn page only change the "show more" count: no redraw.
    if (reorder && !same(this.ids, ids)) this.ids = null;
    const draw = (id) => this.entries.set(id, this.row(id)).get(id).el;
    if (this.ids) {
      touched.forEach((id) => {
        const old = this.entries.get(id);
        if (old) old.el.replaceWith(draw(id));
      });
    } else {
      this.entries = new Map();
      this.ids = ids;
      this.drawAll(ids.map(draw));
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
}

// The token table's and the Tools table's parts; cells from `figures` on are right-aligned.
function figureCells(tag, texts, figures) {
  return texts.map((t, i) => h(tag, i >= figures ? "nba-num" : null, t));
}

function figureTable(cls, columns, figures, rows, total) {
  const head = h("thead", null, [h("tr", null, figureCells("th", columns, figures))]);
  return h("table", "nba-table " + cls, [head, h("tbody", null, [...rows, total])]);
}

// A row of the token or the Tools table: its first cell, the name, after the status dot, indented.
function tableRow(row, figures, selected) {
  const tr = h("tr", statusCls(row.status) + (selected ? " nba-selected" : ""), figureCells("td", row.cells || [], figures));
  if (tr.firstChild) tr.firstChild.prepend("\u2003".repeat(Math.min(num(row.depth), 20)), dot(row.status, row.glyph), " ");
  return tr;
}

class AgentTable extends KeyedRows {
  constructor(view) {
    super(view, "tokens", "Tokens per agent", null);
  }

  drawAll(rows) {
    this.totalRow = h("tr", "nba-total");
    this.box.replaceChildren(figureTable("nba-tokens", this.data.columns, AGENT_FIGURES, rows, this.totalRow));
    this.moreAt = this.box;
  }

  refresh() {
    this.totalRow.replaceChildren(...figureCells("td", this.data.totals, AGENT_FIGURES));
  }

  row(id) {
    const row = this.data.agentRows.get(id) || { cells: [], depth: 0, status: "running", glyph: "" };
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
    const swatch = (kind) => h("span", "nba-swatch nba-seg-" + kind);
    const legend = h("div", "nba-legend", ["bar: agent run", swatch("model"), "model call", swatch("tool"), "tool call"]);
    this.box.replaceChildren(...rows, this.moreAt, legend);
  }

  // The time axis grows with the run: every drawn bar is placed again (numbers only).
  refresh() {
    const horizon = this.data.duration;
    const scale = horizon > 0 ? 100 / horizon : 0;
    const put = (el, start, end) => {
      const s = num(start);
      const e = end === null || end === undefined ? horizon : num(end);
      const left = Math.min(Math.max(s * scale, 0), 100);
      el.style.left = pct(left);
      el.style.width = pct(Math.min(Math.max((e - s) * scale, 0), 100 - left));
    };
    this.entries.forEach(({ bar, row, segs, marks }) => {
      put(bar, row.start, row.end);
      segs.forEach(([el, s]) => put(el, s.start, s.end));
      marks.forEach(([el, m]) => (el.style.left = pct(num(m.at) * scale)));
    });
  }

  row(id) {
    const row = this.data.timeline.get(id) || { segments: [], name: "", depth: 0, time: "" };
    const label = h("span", "nba-tl-label", [dot(row.status, row.glyph), " " + row.name]);
    label.style.paddingLeft = Math.min(num(row.depth), 20) * 12 + "px";
    const bar = h("span", "nba-bar");
    const track = h("span", "nba-tl-track nba-tl-abs", [bar]);
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
      const cls = "nba-mark nba-mark-" + (m.kind === "finished" ? "finished" : "started");
      return [track.appendChild(h("span", cls, null, { title: m.label })), m];
    });
    const selected = this.view.selected === id ? " nba-selected" : "";
    const r = h("div", "nba-tl-row " + statusCls(row.status) + selected, [label, track, h("span", "nba-tl-time", row.time)], { "data-node": id });
    r.addEventListener("click", () => this.view.select(id));
    return { el: r, bar, row, segs, marks };
  }
}

// -- the tools: a row per tool, which opens its calls ---------------------------------------------
//
// Drawn whole on a change: a run calls few tools, and an open one lists its first calls only.

class ToolTable extends Part {
  constructor(view) {
    super(view);
    this.open = new Set(); // the tools whose calls are shown
    this.limit = ROW_PAGE;
  }

  build() {
    this.box = h("div", "nba-tools-box");
    this.sec = section(this.view, "tools", "Tools", this.box);
    this.sec.classList.add("nba-tools-sec");
    return this.sec;
  }

  redraw() {
    const tools = this.data.tools;
    this.sec.style.display = tools.order.length ? "" : "none";
    if (!tools.order.length) {
      this.box.replaceChildren();
      return;
    }
    const shown = tools.order.slice(0, this.limit).filter((id) => tools.rows.has(id));
    const rows = shown.flatMap((id) => this.rows(id, tools.rows.get(id), tools.columns.length));
    const total = h("tr", "nba-total", figureCells("td", tools.totals, TOOL_FIGURES));
    const parts = [figureTable("nba-tools", tools.columns, TOOL_FIGURES, rows, total)];
    const rest = tools.order.length - this.limit;
    const more = () => {
      this.limit += ROW_PAGE;
      this.redraw();
    };
    if (rest > 0) parts.push(moreButton(rest, ROW_PAGE, " tools", more));
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
    const td = h("td", null, (row.calls || []).map((c) => this.call(c)), { colSpan: Math.max(width, 1) });
    td.style.wordBreak = "break-all"; // a word of a call's arguments: the table is as wide as its longest
    if (num(row.more)) td.appendChild(h("div", "nba-empty", "… and " + num(row.more) + ' more calls: trace.tool_usage("call") has every one.'));
    return [tr, h("tr", "nba-tool-calls", [td])];
  }

  call(c) {
    const node = this.data.nodes.get(c.id) || { status: "running", glyph: "", preview: "", time: "" };
    const selected = this.view.selected === c.id ? " nba-selected" : "";
    const box = h("div", "nba-tool-call " + statusCls(node.status) + selected, null, { "data-node": c.id });
    const head = h("span", "nba-line", [dot(node.status, node.glyph), h("span", "nba-name", c.agent)]);
    if (node.preview) head.appendChild(h("span", "nba-preview", node.preview));
    head.appendChild(h("span", "nba-meta", node.time));
    box.append(head, " ", button("nba-tree-link", "↑ its step in the call tree", () => this.view.reach(c.id)));
    (node.details || []).forEach((f) => box.appendChild(field(f)));
    return box;
  }
}
