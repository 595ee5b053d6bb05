(function (script) {
  var box = script && script.closest(".nba-saved"), part = {};
  if (!box || box.dataset.nbaDrawn || typeof DecompressionStream !== "function") return;
  box.childNodes.forEach(function (n) {
    if (n.nodeType === 8 && /^nba-(code|view):/.test(n.data)) part[n.data.slice(4, 8)] = n.data.slice(9);
  });
  if (!part.code || !part.view) return;
  // The view is drawn below in its place: meanwhile the snapshot (tens of thousands of elements
  // in a wide run) is not laid out. It shows again if the view cannot be drawn.
  var snapshot = box.querySelector(":scope > .nba-trace");
  if (snapshot) snapshot.style.display = "none";
  function unpack(data) {
    var text = atob(data), bytes = new Uint8Array(text.length);
    for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"))).text();
  }
  var cut = part.code.indexOf(":"), key = part.code.slice(0, cut), registry = Symbol.for("nbagents.viewers");
  var loaded = globalThis[registry] || (globalThis[registry] = new Map());
  if (!loaded.has(key)) loaded.set(key, unpack(part.code.slice(cut + 1)).then(function (text) {
    var code = JSON.parse(text);
    return import(URL.createObjectURL(new Blob([code.js], { type: "text/javascript" }))).then(function (m) {
      return { module: m, css: code.css };
    });
  }));
  Promise.all([loaded.get(key), unpack(part.view)]).then(function (got) {
    got[0].module.showSaved(box, got[1], got[0].css);
  }).catch(function (e) {
    if (snapshot) snapshot.style.display = "";
    console.warn("nbagents: the saved view could not be drawn; its snapshot stays.", e);
  });
})(document.currentScript);
