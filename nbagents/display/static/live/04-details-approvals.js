class DetailsPane extends Part {
  build() {
    return (this.el = h("div", "nba-live-details"));
  }

  draw() {
    const pane = this.el;
    const scroll = pane.scrollTop;
    const id = this.view.selected;
    const node = id ? this.data.nodes.get(id) : null;
    pane.replaceChildren();
    if (!node) {
      pane.appendChild(h("div", "nba-empty", "Click a step in the tree or the timeline to see its details."));
      return;
    }
    const head = pane.appendChild(h("div", "nba-details-head " + statusCls(node.status), [line(node)]));
    const whole = this.view.inputs.get(id);
    (node.details || []).forEach((f) => {
      const isInput = node.kind === "model" && typeof f.label === "string" && f.label.startsWith("Input messages");
      pane.appendChild(field(isInput && whole ? { label: whole.label, type: "messages", value: whole.messages } : f));
      if (!isInput || whole || !this.view.canSend()) return;
      // Asks the kernel for the whole input; its answer arrives as a custom message.
      const ask = pane.appendChild(button("nba-more-button nba-whole-input", "open the whole input", () => {
        ask.disabled = true;
        ask.textContent = "loading the whole input…";
        this.view.model.send({ type: "input", id });
      }));
    });
    if ((node.token_table || []).length) pane.appendChild(field({ label: "Tokens", type: "kv", value: node.token_table }));
    if (node.diff) pane.appendChild(field({ label: "State", type: "diff", value: node.diff }));
    if (node.conversation) pane.appendChild(this.conversation(node));
    this.view.focus.decorate(pane, head, node);
    pane.scrollTop = scroll;
  }

  conversation(node, title = "Conversation") {
    const conv = node.conversation;
    const label = title + " (" + num(conv.messages) + " messages, " + num(conv.model_calls) + " model calls)";
    const box = h("div", "nba-field nba-conv", [h("div", "nba-label", label)]);
    this.view.pages.fill(box, node, this.view.tree.filter.text);
    return box;
  }

  turn(key, t, needle) {
    const box = h("div", "nba-msg nba-turn nba-turn-" + (TURN_KINDS.has(t.kind) ? t.kind : "note"), [h("span", "nba-role", t.label)]);
    if (t.meta) box.appendChild(h("span", "nba-meta", " " + t.meta));
    if (t.link) {
      box.append(" ", button("nba-conv-link", "→ the conversation of " + t.link_label, () => this.view.select(t.link)));
    }
    if (t.content) {
      const text = highlighted(h("div", "nba-text" + (t.error ? " nba-error-text" : "")), t.content, needle);
      if (t.fold) {
        const [folds, content] = [this.view.openFolds, String(t.content)];
        const preview = h("span", "nba-preview", content.replace(/\s+/g, " ").slice(0, 100));
        const summary = h("summary", null, [preview, h("small", null, " (" + content.length + " chars)")]);
        const hit = Boolean(needle) && content.toLowerCase().includes(needle);
        const det = h("details", "nba-fold", [summary, text], { open: hit || folds.has(key) });
        det.addEventListener("toggle", () => folds[det.open ? "add" : "delete"](key));
        box.appendChild(det);
      } else box.appendChild(text);
    }
    (t.tool_calls || []).forEach((c) => box.appendChild(highlighted(h("div", "nba-call"), "→ " + callText(c), needle)));
    return box;
  }
}

// -- approvals: pending requests at their steps, answered from the view -------------------------

class Approvals extends Part {
  constructor(view) {
    super(view);
    this.decisions = new Map(); // pending request key -> {decision, args_json, message}
    this.sending = false;
    this.sentKeys = null;
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
    item.card = pending.length ? h("div", "nba-pending", pending.map((p) => this.requestCard(p))) : null;
    if (item.card) item.row.after(item.card);
  }

  requestCard(p) {
    const box = h("div", "nba-request", [h("div", "nba-request-title", "waits for a decision: " + p.title)], { "data-request": p.key });
    if (p.description) box.appendChild(h("div", "nba-request-desc", p.description));
    const body = h("div", "nba-request-body");
    const choices = h("div", "nba-choices");
    const draw = () => {
      const chosen = this.decisions.get(p.key) || {};
      choices.querySelectorAll("button").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.decision === chosen.decision)));
      body.replaceChildren();
      if (chosen.decision === "edit") {
        const area = h("textarea", "nba-edit-args", null, { "aria-label": "Arguments of " + p.title + " as JSON", value: chosen.args_json });
        area.rows = Math.min(12, area.value.split("\n").length + 1);
        area.addEventListener("input", () => (chosen.args_json = area.value));
        body.appendChild(area);
      } else if (chosen.decision === "reject" || chosen.decision === "respond") {
        const reject = chosen.decision === "reject";
        const placeholder = reject ? "Why (optional, the agent reads it)" : "The tool's result, as the agent will read it";
        const label = (reject ? "Reason to reject " : "Answer instead of ") + p.title;
        const input = h("input", "nba-message", null, { type: "text", placeholder, "aria-label": label, value: chosen.message || "" });
        input.addEventListener("input", () => {
          chosen.message = input.value;
          this.draw();
        });
        body.appendChild(input);
      }
      this.draw();
    };
    p.allowed.forEach((decision) => {
      const choose = () => {
        const old = this.decisions.get(p.key) || {};
        this.decisions.set(p.key, { decision, args_json: old.args_json ?? p.args_json, message: old.message || "" });
        draw();
      };
      choices.appendChild(button("nba-choice", decision, choose, { "data-decision": decision, disabled: !this.answerable() }));
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
    const nodes = this.data ? [...this.data.nodes.values()] : [];
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
    const answerable = this.answerable();
    const status = answerable ? decided + " of " + pending.length + " decided" : pending.length + " request(s) wait for a decision. Answer them in code: nbagents.pending_approvals(result).";
    const line = bar.appendChild(h("div", "nba-approvals-bar", [h("span", "nba-waiting", status)]));
    if (answerable) {
      const text = this.sending ? "resuming…" : "Submit decisions and resume";
      line.appendChild(button("nba-submit", text, () => this.submit(pending), { disabled: this.sending || decided < pending.length }));
    }
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
    this.view.root.querySelectorAll(".nba-choice").forEach((b) => (b.disabled = !this.answerable()));
    this.draw();
  }
}
