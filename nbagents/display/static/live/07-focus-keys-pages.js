// -- focus: one agent's subtree alone, a breadcrumb back up, its conversation kept in view ------

class Focus extends Part {
  constructor(view) {
    super(view);
    this.id = null; // the focused agent's node id, or null: the whole run
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
    if (was !== null) this.view.keys.go(was);
  }

  // Selecting a step outside the focused subtree shows the whole run again.
  admit(id) {
    if (id && this.focused() !== null && this.data.nodes.has(id) && !this.holds(id)) this.to(null);
  }

  build() {
    this.el = h("nav", "nba-crumbs", null, { "aria-label": "Focused agent and its ancestors" });
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
      const { name, preview } = this.data.nodes.get(k);
      bar.append(h("span", "nba-crumb-sep", " › "), button("nba-crumb", name, () => this.set(k), { "data-node": k, title: preview || "" }));
    });
    bar.appendChild(h("span", "nba-crumb-sep", " › "));
    const here = h("span", "nba-crumb-here", this.data.nodes.get(id).name, { "data-node": id });
    bar.append(here, h("span", "nba-crumb-note", " (its subtree alone: Esc or \u201cWhole run\u201d goes back)"));
  }

  // A focus button on an agent's details; in focus, the focused agent's conversation below.
  decorate(pane, head, node) {
    const id = this.focused();
    if (AGENT_KINDS.has(node.kind) && node.id !== id) {
      const title = "Show this agent's subtree alone (key: f)";
      head.appendChild(button("nba-more-button nba-focus-button", "Focus on this agent", () => this.set(node.id), { title }));
    }
    if (id === null || node.id === id) return;
    const agent = this.data.nodes.get(id);
    if (!agent || !agent.conversation) return;
    const box = this.view.details.conversation(agent, "Conversation of the focused agent, " + agent.name);
    box.classList.add("nba-focus-conv");
    pane.appendChild(box);
  }
}

// -- keys on a tree row (a row stops their propagation: JupyterLab binds the arrows) ----------

const KEYS_HELP = "Keys on a row: \u2191 \u2193 rows \u00b7 \u2190 \u2192 close, open \u00b7 Enter select \u00b7 [ ] previous, next turn \u00b7 { } previous, next sibling agent \u00b7 f focus on the agent \u00b7 Backspace out to the parent agent \u00b7 Esc whole run";

const KEY_ACTIONS = {
  ArrowDown: ["step", 1], ArrowUp: ["step", -1], "]": ["turn", 1], "[": ["turn", -1],
  "}": ["sibling", 1], "{": ["sibling", -1], f: ["into"], F: ["into"], Backspace: ["out"],
};

class TreeKeys extends Part {
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
    const ahead = by > 0 ? own.slice(at + 1) : own.slice(0, at).reverse();
    const next = ahead.find((k) => this.data.nodes.get(k).kind === "model");
    if (next !== undefined) this.go(next);
  }

  // The steps of `agent` itself, in tree order: not those of the sub-agents it spawned.
  ownSteps(agent) {
    const out = [];
    const walk = (k) => {
      const node = this.data.nodes.get(k);
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
    const kin = this.data.agents.filter((a) => this.data.nodes.has(a) && focus.parentAgent(a) === parent);
    const next = kin[kin.indexOf(agent) + by];
    if (next === undefined) return;
    if (focus.focused() === agent) {
      focus.set(next);
      this.bring(next);
    } else this.go(next);
  }

  // In: focus on the row's agent; on a step that spawned one (a task), on the sub-agent.
  into(id) {
    const node = this.data.nodes.get(id);
    if (!node) return;
    const spawned = (node.children || []).find((k) => AGENT_KINDS.has((this.data.nodes.get(k) || {}).kind));
    const target = AGENT_KINDS.has(node.kind) ? id : spawned || this.view.focus.agentOf(id);
    if (target === null || target === undefined) return;
    this.view.focus.set(target);
    this.bring(target);
  }

  // Out: the focus, else the selection, to the parent agent (the focus from a top agent: the
  // whole run).
  out(id) {
    const focus = this.view.focus;
    const was = focus.focused();
    if (was !== null) {
      const parent = focus.parentAgent(was);
      if (parent === null) focus.leave();
      else focus.set(parent);
      this.bring(parent ?? was);
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
    const chain = lineage(this.data.nodes, id).reverse();
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

  show(row, block = "nearest") {
    row.focus({ preventScroll: true });
    row.scrollIntoView({ block });
  }
}

// -- a conversation's pages: the view holds the first; others come from a saved view's `pages`
// or from the kernel when asked (LiveView._send_turns).

class TurnPages extends Part {
  constructor(view) {
    super(view);
    this.at = new Map(); // agent node id -> the page shown
    this.got = new Map(); // "id:page" -> {turns, entries}, as the kernel sent it
    this.asked = new Set(); // "id:page:entries" asked and not answered
  }

  entries(node) {
    return num(node.conversation.entries);
  }

  size(node) {
    return Math.max(num(node.conversation.page_size), 1);
  }

  count(node) {
    return Math.max(Math.ceil(this.entries(node) / this.size(node)), 1);
  }

  // Page `page` of `node`'s conversation, or null while it is not here.
  page(node, page) {
    if (page === 0) return turns(node);
    const saved = this.data.pages && this.data.pages[node.id];
    if (saved && Array.isArray(saved[page])) return saved[page];
    const got = this.got.get(node.id + ":" + page);
    // A last page not full when it came may have grown since.
    if (got && (got.turns.length >= this.size(node) || got.entries === this.entries(node))) return got.turns;
    return null;
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
    if (shown === null && this.view.canSend()) {
      const key = node.id + ":" + page + ":" + this.entries(node);
      if (!this.asked.has(key)) {
        this.asked.add(key);
        this.view.model.send({ type: "turns", id: node.id, page });
      }
      box.appendChild(h("div", "nba-empty nba-conv-loading", "loading entries " + this.range(node, page) + "…"));
    } else if (shown === null) {
      box.appendChild(h("div", "nba-empty", "This page is not in the saved output: trace.transcript(…) has every entry."));
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
      const props = { "aria-label": label, disabled: to < 0 || to >= count || to === page };
      bar.appendChild(button("nba-more-button nba-page-button", text, () => this.go(node, to), props));
    };
    pageButton("\u00ab first", 0, "first page of the conversation");
    pageButton("\u2039 previous", page - 1, "previous page of the conversation");
    bar.appendChild(h("span", "nba-page-where", "entries " + this.range(node, page) + " of " + total.toLocaleString("en-US") + " \u00b7 page " + (page + 1) + " of " + count));
    pageButton("next \u203a", page + 1, "next page of the conversation");
    pageButton("last \u00bb", count - 1, "last page of the conversation");
    return bar;
  }
}
