// -- drawing ------------------------------------------------------------------------------------

function line(node) {
  const row = h("span", "nba-line", [dot(node.status, node.glyph), h("span", "nba-kind", node.kind_label), h("span", "nba-name", node.name)]);
  if (node.preview) row.appendChild(h("span", "nba-preview", node.preview));
  if (node.failed) row.appendChild(h("span", "nba-err", "failed"));
  row.appendChild(h("span", "nba-meta", node.tokens ? node.time + " · " + node.tokens : node.time));
  return row;
}

function message(msg) {
  const box = h("div", "nba-msg", [h("span", "nba-role", (msg.role || "") + (msg.name ? " · " + msg.name : ""))]);
  if (msg.content) box.appendChild(h("div", "nba-text" + (msg.error ? " nba-error-text" : ""), msg.content));
  (msg.tool_calls || []).forEach((call) => box.appendChild(h("div", "nba-call", "→ " + callText(call))));
  return box;
}

function field(f) {
  const box = h("div", "nba-field", [h("div", "nba-label", f.label)]);
  const value = f.value;
  if (f.type === "messages") (value || []).forEach((m) => box.appendChild(message(m)));
  else if (f.type === "code") box.appendChild(h("pre", null, value));
  else if (f.type === "error") box.appendChild(h("pre", "nba-error-text", value));
  else if (f.type === "diff") box.appendChild(diff(value));
  else if (f.type === "kv") {
    const rows = (value || []).map((pair) => h("tr", null, [h("th", null, pair[0]), h("td", "nba-num", pair[1])]));
    box.appendChild(h("table", "nba-table", [h("tbody", null, rows)]));
  } else if (f.type === "checklist") {
    const items = (value || []).map((item) => {
      const li = h("li", "nba-plan-" + item.status, [h("span", "nba-plan-mark", item.mark), " " + item.text]);
      if (item.when) li.appendChild(h("small", null, " " + item.when));
      return li;
    });
    box.appendChild(h("ul", "nba-plan", items));
  } else box.appendChild(h("div", "nba-text", value));
  return box;
}

function diff(d) {
  const box = h("div", "nba-diff");
  const row = (cls, sign, key, note) => box.appendChild(h("div", "nba-diff-row " + cls, [sign + " " + key + " ", h("span", "nba-diff-note", note)]));
  (d.withheld || []).forEach((p) => row("nba-diff-del", "−", p[0], p[1] + " · withheld"));
  (d.passed || []).forEach((p) => row("nba-diff-ctx", " ", p[0], p[1] + " · passed"));
  (d.returned || []).forEach((k) => row("nba-diff-add", "+", k, "returned"));
  if (!box.childNodes.length) box.appendChild(h("div", "nba-diff-row nba-diff-note", "no state keys"));
  return box;
}

function section(ui, key, title, body) {
  const det = h("details", "nba-sec", [h("summary", null, title), body], { open: !ui.closedSections.has(key) });
  det.addEventListener("toggle", () => ui.closedSections[det.open ? "delete" : "add"](key));
  return det;
}

// -- the view: built once, then updated in place; each part keeps its own UI state -------------

// A part of the view (the tree, the details, focus, keys…), which draws the view's data.
class Part {
  constructor(view) {
    this.view = view;
  }

  get data() {
    return this.view.data;
  }
}

// The UI state each part keeps (the view's own under "view"), handed over by uiState().
const UI_STATE = {
  view: ["selected", "closedSections", "openFolds", "inputs", "agentLimit"],
  tree: ["collapsed", "expanded", "shown", "filter", "focused"],
  tools: ["open", "limit"],
  focus: ["id"],
  pages: ["at"],
};

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
    if (touched.tools.size || columns) this.tools.redraw();
    this.timeline.update(touched.timeline, agents);
    this.root.dataset.nbaRev = String(this.data.rev);
  }

  // The whole view again, as it was: what the user chose and where the tree was scrolled.
  redraw(data) {
    this.scrollTo = this.tree.el ? this.tree.el.scrollTop : 0;
    this.reset(data);
  }

  build() {
    const root = this.root;
    root.replaceChildren();
    if (!this.data) {
      root.appendChild(h("div", "nba-empty", "Waiting for the trace…"));
      return;
    }
    this.headerEl = root.appendChild(h("div"));
    this.drawHeader();
    root.appendChild(this.approvals.build());
    this.approvals.draw();
    const left = h("div", "nba-live-left");
    this.tree.build(left);
    left.appendChild(h("div", "nba-keys", KEYS_HELP));
    const main = h("div", "nba-live-main", [left, this.details.build()]);
    root.append(section(this, "tree", "Call tree", main), this.table.build(), this.tools.build(), this.timeline.build());
    this.tree.draw();
    if (this.scrollTo) {
      this.tree.el.scrollTop = this.scrollTo; // once its rows are in: an empty tree scrolls to 0
      this.scrollTo = 0;
    }
    this.details.draw();
    this.table.redraw();
    this.tools.redraw();
    this.timeline.redraw();
    this.root.dataset.nbaRev = String(this.data.rev); // the revision drawn, for whoever waits for it
  }

  drawHeader() {
    const hd = this.data.header;
    const bar = h("div", "nba-header");
    this.headerEl.replaceChildren(bar);
    if (!hd) return;
    bar.appendChild(h("span", "nba-badge " + statusCls(hd.status), hd.status));
    if (hd.title) bar.appendChild(h("span", "nba-title", hd.title));
    (hd.stats || []).forEach((st) => {
      const extra = st.emphasis === "error" ? " nba-err" : st.emphasis === "waiting" ? " nba-waiting" : "";
      const s = h("span", "nba-stat" + extra, st.label ? st.label + " " : "");
      s.appendChild(h("b", null, st.value));
      if (st.note) s.append(" " + st.note);
      bar.appendChild(s);
    });
  }

  // What the user chose in this view, as plain data: another view of the same run adopts it.
  uiState() {
    const state = { treeScroll: this.tree.el ? this.tree.el.scrollTop : 0 };
    for (const [name, keys] of Object.entries(UI_STATE)) {
      const part = name === "view" ? this : this[name];
      state[name] = Object.fromEntries(keys.map((key) => [key, part[key]]));
    }
    return structuredClone(state);
  }

  // Takes over uiState() of a view that is gone; call before reset().
  adopt(state) {
    for (const name of Object.keys(UI_STATE)) Object.assign(name === "view" ? this : this[name], state[name]);
    this.scrollTo = state.treeScroll;
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
    const drawn = this.root.querySelectorAll("tr[data-node], .nba-tl-row, .nba-tool-call");
    drawn.forEach((el) => el.classList.toggle("nba-selected", el.dataset.node === this.selected));
  }

  // Selects step `id` and brings its tree row into view (from the Tools pane).
  reach(id) {
    this.select(id);
    const item = this.tree.items.get(id);
    if (item) this.keys.show(item.row, "center");
  }
}
