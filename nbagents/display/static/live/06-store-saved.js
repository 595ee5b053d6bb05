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
      this.data.pages = next.pages;
      this.draw(patch);
      return;
    }
    this.data = next;
    this.views.forEach((view) => {
      view.stale = false;
      view.reset(this.data);
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
    const changes = applyPatch(this.data, patch);
    this.views.forEach((view) => {
      if (view.inSight) view.patched(changes);
      else view.stale = true;
    });
  }

  // `view` came into sight after patches it was not drawn with: draw it again, whole.
  catchUp(view) {
    if (!view.stale || !this.views.has(view)) return;
    view.stale = false;
    view.redraw(this.data);
  }
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
const HANDOFFS = (globalThis[Symbol.for("nbagents.handoff")] ??= new Map());
const HANDOFF_MS = 60_000;

function render({ model, el }, saved = false) {
  const uid = model.get("uid");
  const handed = uid ? HANDOFFS.get(uid) : undefined;
  if (handed) HANDOFFS.delete(uid);
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
    view = new TraceView(el.appendChild(h("div", "nba-root nba-live tex2jax_ignore mathjax_ignore")), model);
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
  const seen = (entries) => {
    view.inSight = entries[entries.length - 1].isIntersecting;
    if (view.inSight) store.catchUp(view);
  };
  const sight = new IntersectionObserver(seen, { rootMargin: "200px" });
  sight.observe(view.root);
  const unlisten = listen(model, {
    "msg:custom": (msg) => view.received(msg),
    "change:notice": () => view.approvals.noticeChanged(),
    "change:answerable": () => view.approvals.answerableChanged(),
  });
  return () => {
    if (uid && view.data) {
      const left = { ui: view.uiState(), view, stale: view.stale };
      HANDOFFS.set(uid, left);
      // Its rows stay with the page only until the saved view takes them.
      setTimeout(() => {
        if (HANDOFFS.get(uid) === left) HANDOFFS.set(uid, { ui: left.ui });
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
  if (!patch) view.redraw(store.data);
  else {
    view.data.pages = store.data.pages;
    store.data = view.data;
    view.patched(applyPatch(view.data, patch));
  }
  return view;
}

// -- the saved view (nbagents/display/_saved.py): where the output is trusted, its script
// draws the run from the final view as the live view did: no widget, no kernel.

function showSaved(box, viewJson, css) {
  if (box.dataset.nbaDrawn) return;
  box.dataset.nbaDrawn = "1";
  const values = { uid: box.dataset.nbaUid || "", view_json: viewJson, patch_json: "null", answerable: false, notice: "" };
  const model = { get: (key) => values[key], on() {}, off() {}, widget_manager: box };
  const style = h("style", null, css);
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
