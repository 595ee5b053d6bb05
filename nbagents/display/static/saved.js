(function (script) {
  var box = script && script.parentNode, part = {};
  if (!box || box.dataset.nbaDrawn) return;
  box.childNodes.forEach(function (n) {
    if (n.nodeType === 8 && /^nba-(code|view):/.test(n.data)) part[n.data.slice(4, 8)] = n.data.slice(9);
  });
  if (!part.code || !part.view) return;
  var code = JSON.parse(part.code), key = Symbol.for("nbagents.viewer");
  var loaded = globalThis[key] || (globalThis[key] = new Map());
  if (!loaded.has(code.key)) loaded.set(code.key, import(URL.createObjectURL(new Blob([code.js], { type: "text/javascript" }))));
  loaded.get(code.key).then(function (m) { m.showSaved(box, part.view, code.css); }).catch(function (e) {
    console.warn("nbagents: the saved view could not be drawn; its snapshot stays.", e);
  });
})(document.currentScript);
