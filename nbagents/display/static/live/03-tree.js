// -- the call tree and its filter ---------------------------------------------------------------

class TreePane extends Part {
  constructor(view) {
    super(view);
    this.collapsed = new Set();
    this.expanded = new Set();
    this.shown = new Map(); // node id -> how many children are drawn
    this.items = new Map(); // node id -> {li, row, ul}
    this.filter = { text: "", kind: "", status: "" };
    this.keep = null; // while filtering: the ids drawn (matches and their ancestors)
    this.focused = null;
  }

  build(left) {
    this.items.clear();
    this.el = h("div", "nba-live-tree");
    left.append(this.filterBar(), this.view.focus.build(), this.el);
  }

  patch(touched) {
    if (this.keep) return this.draw();
    touched.nodes.forEach((id) => touched.kids.has(id) || this.updateRow(id));
    touched.kids.forEach((id) => this.updateChildren(id));
  }

  filterBar() {
    const placeholder = "Filter steps: name, task, result, any message…";
    const text = h("input", "nba-filter-text", null, { type: "search", placeholder, "aria-label": "Filter steps by text", value: this.filter.text });
    const select = (what, any, values) => {
      const options = [["", any], ...values].map(([v, t]) => h("option", null, t, { value: v }));
      const el = h("select", "nba-filter-" + what, options, { "aria-label": "Filter steps by " + what });
      el.value = this.filter[what]; // once its options are in
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
    return h("div", "nba-filter", [text, kind, status, this.countEl]);
  }

  // While filtering: the steps drawn (the first matches and their ancestors), and how many match.
  computeKeep() {
    const f = this.filter;
    if (!f.text && !f.kind && !f.status) return null;
    const keep = Object.assign(new Set(), { found: 0 });
    for (const node of this.data.nodes.values()) {
      const match = (!f.kind || node.kind === f.kind) && (!f.status || node.status === f.status);
      if (!match || (f.text && !searchText(node).includes(f.text)) || !this.view.focus.holds(node.id)) continue;
      keep.found += 1;
      if (keep.found <= FILTER_LIMIT) lineage(this.data.nodes, node.id).forEach((k) => keep.add(k));
    }
    return keep;
  }

  draw() {
    this.keep = this.computeKeep();
    this.items.clear();
    const scroll = this.el.scrollTop;
    const hadFocus = this.view.root.contains(document.activeElement);
    const ul = (this.rootUl = h("ul", "nba-tree", null, { role: "tree" }));
    this.fillChildren(null, ul);
    const empty = this.keep ? "No step matches the filter." : "No spans recorded yet.";
    this.emptyEl = h("div", "nba-empty", empty, { hidden: ul.childNodes.length > 0 });
    this.el.replaceChildren(this.emptyEl, ul);
    this.el.scrollTop = scroll;
    const more = this.keep && this.keep.found > FILTER_LIMIT ? " (the first " + FILTER_LIMIT + " shown)" : "";
    this.countEl.textContent = this.keep ? this.keep.found + " matching" + more : "";
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
    const more = () => {
      this.shown.set(id, limit + PAGE);
      this.fillChildren(id, ul);
    };
    if (rest > 0) elements.push(h("li", "nba-more", [moreButton(rest, PAGE, "", more)]));
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
    const row = h("div", "nba-row", null, { tabIndex: 0, "data-node": id, role: "treeitem" });
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
    const item = { li: h("li", null, [row]), row, ul: null };
    this.items.set(id, item);
    this.drawRow(item, node);
    this.drawKids(item, node);
    return item;
  }

  drawRow(item, node) {
    const kids = this.kidsOf(node.id);
    const open = this.isOpen(node);
    item.li.className = "nba-node nba-k-" + (KINDS.has(node.kind) ? node.kind : "chain") + " " + statusCls(node.status);
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
    item.where = this.keep ? whereLine(node, this.filter.text) : null;
    if (item.where) item.row.after(item.where);
    this.view.approvals.drawCards(item, node);
  }

  drawKids(item, node) {
    const open = this.isOpen(node) && this.kidsOf(node.id).length > 0;
    if (open) {
      if (!item.ul) item.ul = item.li.appendChild(h("ul"));
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
