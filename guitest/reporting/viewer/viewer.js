/*
 * guitest's report viewer (guitest/reporting/viewer/viewer.js, shipped with the package).
 *
 * The page's HTML is its first screen (settings, headline, tables, charts, the filters). This script adds the case
 * list and the case view:
 *   - the index of every case comes first: from <stem>_files/<token>/index.js beside the page, or from the page's own
 *     JSON block gv-index (a script element of type application/json, never run) when the page carries its data;
 *   - the list puts on the page only the cards in view (a virtual grid: a 50,000-case run has some thirty cards in
 *     the document at any time);
 *   - a case's detail (reply, evidence, cost, an episode's every step) is loaded when the case is opened, from the
 *     chunk that holds it (c/<k>.js, or the block gv-chunk-<k>).
 * Data files are scripts that call window.guitestViewer.index(token, data) and .chunk(token, k, data): a page opened
 * from file: may not fetch() a file, but a script element may load one.
 *
 * The address holds the state: #verdict=miss&tag.platform=windows&q=menu (the filters), &case=ID (a case open),
 * &attempt=K (one of a repeated case's episodes), &step=N (a step of its episode). Every string from the report is
 * set as text (textContent), never parsed as markup; every address the data names is checked before use.
 */
(function () {
  "use strict";
  var doc = document;
  var win = window;
  var SVG = "http://www.w3.org/2000/svg";
  var CARD_H = 318; // the cards' height (viewer.css .card)
  var GAP = 14;
  var MIN_W = 290; // the narrowest card
  var SHOT_H = 150; // a card's picture at most
  var STEP_W = 340; // a step's picture at most

  var meta = doc.querySelector('meta[name="guitest-data"]');
  var base = meta ? meta.getAttribute("content") : null; // "<stem>_files/<token>/": the data folder, or null (inline data)
  var expected = base ? base.replace(/\/$/, "").split("/").pop() : null;
  // The folder of the page that wrote the data, two levels above its data folder: this page's own ("") or, for a page
  // that shows a run kept in its run folder, that folder ("runs/<suite>/<stamp>/"). The data's relative links start there.
  var root = base ? base.replace(/[^\/]*\/[^\/]*\/$/, "") : "";

  var cardsEl = doc.getElementById("cards");
  var statusEl = doc.getElementById("cards-status");
  var countEl = doc.getElementById("f-count");
  var verdictSel = doc.getElementById("f-verdict");
  var textIn = doc.getElementById("f-text");
  var resetBtn = doc.getElementById("f-reset");
  var tagSels = Array.prototype.slice.call(doc.querySelectorAll("select.f-tag"));
  var viewEl = doc.getElementById("case-view");
  var boxEl = doc.getElementById("lightbox");
  var title = doc.title;

  var index = null; // the case index (guitest/reporting/viewer_data.py)
  var byId = null; // case id -> its number
  var shown = []; // the numbers of the cases the filters let through, in the report's order
  var filterKey = null; // the filters shown applied, as the address writes them
  var haystacks = null; // per case: its id, instruction and tag values in lower case (made at the first text filter)
  var chunks = {}; // chunk number -> its cases' details (the last KEEP_CHUNKS read)
  var kept = []; // the chunks held, the oldest first
  var KEEP_CHUNKS = 16;
  var waiting = {}; // chunk number -> [done, failed] callbacks waiting for it
  var rendered = {}; // case number -> its card (only the cards in view)
  var grid = { cols: 0, width: 0 };
  var pending = false;
  var current = null; // the case open: {id, n}
  var target = null; // the step shown as the address's target

  // -- small helpers ------------------------------------------------------------------------------------------------

  function el(tag, cls, text) {
    var e = doc.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }

  function svg(tag, attrs) {
    var e = doc.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
    return e;
  }

  function num(x) { return typeof x === "number" && isFinite(x); }

  function fmt(x) { return Math.round(x * 10) / 10; }

  var VERDICTS = ["hit", "miss", "unparsed", "refused", "truncated", "unsure", "error", "partial"];

  function badge(verdict) {
    return el("span", "badge " + (VERDICTS.indexOf(verdict) >= 0 ? "v-" + verdict : "v-other"), verdict);
  }

  // A source the data names, made safe: a path relative to the page that wrote the data (root), a data: image or a
  // file: URI; "@name" is a file of the data folder. Anything else (another scheme, a network path) is refused.
  function resolve(src) {
    if (typeof src !== "string" || !src) { return null; }
    if (src.charAt(0) === "@") { return base ? base + src.slice(1) : null; }
    if (/^data:image\/[a-z0-9.+-]+;base64,/i.test(src) || /^file:\/\//i.test(src)) { return src; }
    if (/^[a-z][a-z0-9+.-]*:/i.test(src) || /^[\/\\]{2}/.test(src)) { return null; }
    return root + src;
  }

  function sources() {
    var out = [];
    Array.prototype.forEach.call(arguments, function (value) {
      (Array.isArray(value) ? value : [value]).forEach(function (s) {
        var safe = resolve(s);
        if (safe && out.indexOf(safe) < 0) { out.push(safe); }
      });
    });
    return out;
  }

  // An image that tries its sources in turn (a link relative to the page, then the file's absolute place).
  function image(srcs, alt) {
    var img = doc.createElement("img");
    img.alt = alt || "";
    img.decoding = "async";
    img.loading = "lazy";
    var rest = srcs.slice(1);
    img.addEventListener("error", function () {
      if (rest.length) { img.src = rest.shift(); } else { img.classList.add("broken"); }
    });
    img.src = srcs[0];
    return img;
  }

  // A picture fitted into maxW x maxH with its aspect ratio (size: the original's pixels), and an overlay drawn in
  // those pixels over it.
  function shot(srcs, size, maxW, maxH, overlay, alt) {
    var fig = el("figure", "shot");
    var w = size ? size[0] : 16;
    var h = size ? size[1] : 9;
    var scale = Math.min(maxW / w, maxH / h);
    fig.style.width = Math.max(1, Math.floor(w * scale)) + "px";
    fig.style.height = Math.max(1, Math.floor(h * scale)) + "px";
    fig.appendChild(image(srcs, alt));
    if (overlay) { fig.appendChild(overlay); }
    return fig;
  }

  function marker(box, x, y, r) {
    box.appendChild(svg("circle", { "class": "pred-halo", cx: x, cy: y, r: fmt(r) }));
    box.appendChild(svg("circle", { "class": "pred", cx: x, cy: y, r: fmt(r) }));
  }

  function overlayBox(w, h) {
    return svg("svg", { "class": "overlay", viewBox: "0 0 " + w + " " + h, preserveAspectRatio: "none", "aria-hidden": "true" });
  }

  // The truth box and the predicted point (pixels of the original image).
  function groundOverlay(size, truth, pred) {
    if (!size || (!truth && !pred)) { return null; }
    var box = overlayBox(size[0], size[1]);
    if (truth) {
      box.appendChild(svg("rect", { "class": "truth", x: truth[0], y: truth[1], width: Math.max(truth[2] - truth[0], 0), height: Math.max(truth[3] - truth[1], 0) }));
    }
    if (pred) {
      var r = Math.max(size[0], size[1]) * 0.014;
      var x = pred[0];
      var y = pred[1];
      marker(box, x, y, r);
      box.appendChild(svg("path", { "class": "pred", d: "M" + fmt(x - 2 * r) + " " + y + "H" + fmt(x + 2 * r) + "M" + x + " " + fmt(y - 2 * r) + "V" + fmt(y + 2 * r) }));
    }
    return box;
  }

  // A step's actions that ran: a circle at each point, a line to a drag's end, the action's number when several.
  function marksOverlay(size, marks) {
    if (!size || !marks || !marks.length) { return null; }
    var box = overlayBox(size[0], size[1]);
    var r = Math.max(size[0], size[1]) * 0.02;
    marks.forEach(function (m) {
      marker(box, m[0], m[1], r);
      if (num(m[2]) && num(m[3])) { box.appendChild(svg("path", { "class": "pred", d: "M" + m[0] + " " + m[1] + "L" + m[2] + " " + m[3] })); }
      if (num(m[4])) {
        var label = svg("text", { "class": "pred-n", x: fmt(m[0] + 1.3 * r), y: fmt(m[1] - 1.3 * r), "font-size": fmt(2 * r) });
        label.textContent = String(m[4]);
        box.appendChild(label);
      }
    });
    return box;
  }

  function geometry(g) {
    if (!g) { return { size: null, truth: null, pred: null }; }
    return { size: [g[0], g[1]], truth: num(g[2]) ? g.slice(2, 6) : null, pred: num(g[6]) ? [g[6], g[7]] : null };
  }

  function load(src, failed) {
    var s = doc.createElement("script");
    s.src = src;
    s.async = true;
    s.addEventListener("load", function () { s.remove(); });
    s.addEventListener("error", function () { s.remove(); failed(); });
    doc.head.appendChild(s);
  }

  function say(text, bad) {
    statusEl.hidden = false;
    statusEl.className = "status" + (bad ? " bad" : "");
    statusEl.textContent = text;
  }

  // -- data ----------------------------------------------------------------------------------------------------------

  win.guitestViewer = {
    index: function (token, data) {
      if (token !== expected || !data || data.token !== token) {
        say("The case list in " + base + " is not this page's (another run's data): write the report again, or keep each page with its own folder.", true);
        return;
      }
      start(data);
    },
    chunk: function (token, k, data) {
      if (index && token === index.token && Array.isArray(data)) { got(k, data); }
    }
  };

  function boot() {
    if (!cardsEl || !statusEl) { return; }
    if (base) {
      load(base + "index.js", function () {
        say("The case list could not be read from " + base + "index.js: a report is its page and the folder " + base.replace(/[^\/]*\/$/, "") + " it names; keep them together (move or zip the report folder as a whole).", true);
      });
      return;
    }
    var block = doc.getElementById("gv-index");
    var data = null;
    try { data = block ? JSON.parse(block.textContent) : null; } catch (e) { data = null; }
    if (!data) { say("This page carries no case list.", true); return; }
    start(data);
  }

  function chunkOf(n) {
    var starts = index.starts;
    var lo = 0;
    var hi = starts.length - 1;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= n) { lo = mid; } else { hi = mid - 1; }
    }
    return lo;
  }

  function got(k, data) {
    chunks[k] = data;
    kept.push(k);
    while (kept.length > KEEP_CHUNKS) { delete chunks[kept.shift()]; } // a long browse of a large run holds a few MB, not all of it
    var calls = waiting[k] || [];
    delete waiting[k];
    calls.forEach(function (c) { c[0](data); });
  }

  function lost(k) {
    var calls = waiting[k] || [];
    delete waiting[k];
    calls.forEach(function (c) { c[1](); });
  }

  function withChunk(k, done, failed) {
    if (chunks[k]) { done(chunks[k]); return; }
    if (waiting[k]) { waiting[k].push([done, failed]); return; }
    waiting[k] = [[done, failed]];
    if (base) {
      load(base + "c/" + k + ".js", function () { lost(k); });
      return;
    }
    var block = doc.getElementById("gv-chunk-" + k);
    var data = null;
    try { data = block ? JSON.parse(block.textContent) : null; } catch (e) { data = null; }
    if (Array.isArray(data)) { got(k, data); } else { lost(k); }
  }

  // -- the list ------------------------------------------------------------------------------------------------------

  function start(data) {
    if (data.format !== 1) {
      say("This report's case list is in a format this viewer does not read (" + String(data.format) + ").", true);
      return;
    }
    index = data;
    byId = new Map();
    index.cases.forEach(function (c, i) { if (!byId.has(c.id)) { byId.set(c.id, i); } });
    statusEl.hidden = true;
    cardsEl.addEventListener("click", onCardClick);
    win.addEventListener("scroll", schedule, { passive: true });
    win.addEventListener("resize", function () { grid.width = 0; schedule(); });
    if (verdictSel) { verdictSel.addEventListener("change", onFilter); }
    tagSels.forEach(function (s) { s.addEventListener("change", onFilter); });
    if (textIn) { textIn.addEventListener("input", onFilter); }
    if (resetBtn) {
      resetBtn.addEventListener("click", function () {
        if (verdictSel) { verdictSel.value = ""; }
        tagSels.forEach(function (s) { s.value = ""; });
        if (textIn) { textIn.value = ""; }
        onFilter();
      });
    }
    if (viewEl) { viewEl.addEventListener("click", onViewClick); }
    var jump = doc.getElementById("to-cases");
    if (jump) {
      jump.addEventListener("click", function (ev) {
        ev.preventDefault(); // its href="#" would clear the address's filters
        doc.getElementById("gallery").scrollIntoView();
      });
    }
    if (boxEl) { boxEl.addEventListener("click", function (ev) { if (ev.target === boxEl || ev.target.closest(".shot")) { closeBox(); } }); }
    win.addEventListener("hashchange", route);
    doc.addEventListener("keydown", onKey);
    route();
    cardsEl.setAttribute("data-ready", "1");
    if (win.performance && performance.mark) { performance.mark("guitest-list"); }
  }

  // The address's parameters: the filters as the controls stand, then extra ones (a case, an attempt, a step).
  function params(extra) {
    var p = new URLSearchParams();
    if (verdictSel && verdictSel.value) { p.set("verdict", verdictSel.value.slice(1)); }
    tagSels.forEach(function (s) { if (s.value) { p.set("tag." + s.getAttribute("data-tag"), s.value.slice(1)); } });
    if (textIn && textIn.value) { p.set("q", textIn.value); }
    Object.keys(extra || {}).forEach(function (k) {
      if (extra[k] !== null && extra[k] !== undefined) { p.set(k, String(extra[k])); }
    });
    return p.toString();
  }

  function onFilter() {
    filter();
    history.replaceState(null, "", "#" + params());
  }

  function setSelect(select, value) {
    if (!select) { return; }
    var want = value === null ? "" : "=" + value;
    select.value = want;
    if (select.value !== want) { select.value = ""; } // a value the menu lacks: no filter
  }

  function filter() {
    var key = params();
    if (key === filterKey) { return; }
    filterKey = key;
    var verdict = verdictSel && verdictSel.value ? index.verdicts.indexOf(verdictSel.value.slice(1)) : -1;
    if (verdictSel && verdictSel.value && verdict < 0) { verdict = -2; } // no case has it
    var tags = tagSels.filter(function (s) { return s.value; }).map(function (s) {
      var t = index.tags.indexOf(s.getAttribute("data-tag"));
      return [t, t < 0 ? -2 : index.values[t].indexOf(s.value.slice(1))];
    });
    var needle = textIn ? textIn.value.trim().toLowerCase() : "";
    if (needle && !haystacks) { haystacks = index.cases.map(haystack); }
    var cases = index.cases;
    shown = [];
    for (var i = 0; i < cases.length; i++) {
      var c = cases[i];
      if (verdict !== -1 && c.v !== verdict) { continue; }
      var ok = true;
      for (var j = 0; ok && j < tags.length; j++) { ok = tags[j][0] >= 0 && tags[j][1] >= 0 && c.t[tags[j][0]] === tags[j][1]; }
      if (ok && needle) { ok = haystacks[i].indexOf(needle) >= 0; }
      if (ok) { shown.push(i); }
    }
    countEl.textContent = shown.length + " of " + cases.length + " cases shown";
    clearCards();
    place();
  }

  function haystack(c) {
    var words = [c.id, c.s || ""];
    c.t.forEach(function (v, t) { if (v >= 0) { words.push(index.values[t][v]); } });
    return words.join(" ").toLowerCase();
  }

  function schedule() {
    if (pending) { return; }
    pending = true;
    win.requestAnimationFrame(function () { pending = false; place(); });
  }

  function clearCards() {
    Object.keys(rendered).forEach(function (k) { rendered[k].remove(); });
    rendered = {};
  }

  // Only the rows in view, and those within a screen's height of it, have cards.
  function place() {
    if (!index) { return; }
    var width = cardsEl.clientWidth;
    if (!width) { return; }
    if (width !== grid.width) {
      var cols = Math.max(1, Math.floor((width + GAP) / (MIN_W + GAP)));
      grid = { cols: cols, width: width, card: (width - GAP * (cols - 1)) / cols };
      clearCards();
    }
    var row = CARD_H + GAP;
    var rows = Math.ceil(shown.length / grid.cols);
    cardsEl.style.height = (rows ? rows * row - GAP : 0) + "px";
    var top = cardsEl.getBoundingClientRect().top;
    var first = Math.max(0, Math.floor((-top - win.innerHeight) / row));
    var last = Math.min(rows - 1, Math.floor((2 * win.innerHeight - top) / row));
    var keep = {};
    for (var r = first; r <= last; r++) {
      for (var c = 0; c < grid.cols; c++) {
        var at = r * grid.cols + c;
        if (at >= shown.length) { break; }
        var n = shown[at];
        keep[n] = true;
        var card = rendered[n];
        if (!card) {
          card = rendered[n] = makeCard(n);
          cardsEl.appendChild(card);
        }
        card.style.transform = "translate(" + Math.round(c * (grid.card + GAP)) + "px," + r * row + "px)";
      }
    }
    Object.keys(rendered).forEach(function (k) {
      if (!keep[k]) { rendered[k].remove(); delete rendered[k]; }
    });
  }

  function makeCard(n) {
    var c = index.cases[n];
    var verdict = index.verdicts[c.v];
    var card = el("article", "card " + (VERDICTS.indexOf(verdict) >= 0 ? "v-" + verdict : "v-other"));
    card.setAttribute("data-verdict", verdict);
    card.setAttribute("data-n", String(n));
    card.style.width = Math.floor(grid.card) + "px";
    var head = el("header");
    head.appendChild(badge(verdict));
    var link = el("a", "cid", c.id);
    link.href = "#" + params({ "case": c.id });
    head.appendChild(link);
    card.appendChild(head);
    var srcs = c.p >= 0 ? sources(index.pictures[c.p]) : [];
    if (srcs.length) {
      var g = geometry(c.g);
      card.appendChild(shot(srcs, g.size, Math.floor(grid.card) - 22, SHOT_H, groundOverlay(g.size, g.truth, g.pred), "screenshot of " + c.id));
    }
    if (c.s) { card.appendChild(el("p", "instruction", c.s)); }
    if (c.r) { card.appendChild(el("pre", "reply", c.r)); }
    var said = [];
    if (num(c.k)) { said.push(c.k + " step(s)"); }
    if (num(c.sc)) { said.push("score " + c.sc.toFixed(3)); }
    c.t.forEach(function (v, t) { if (v >= 0) { said.push(index.tags[t] + " " + index.values[t][v]); } });
    if (said.length) { card.appendChild(el("p", "meta", said.join(" · "))); }
    return card;
  }

  function onCardClick(ev) {
    if (ev.defaultPrevented || ev.target.closest("a")) { return; }
    var card = ev.target.closest(".card");
    if (card) { location.hash = params({ "case": index.cases[Number(card.getAttribute("data-n"))].id }); }
  }

  // -- the address ---------------------------------------------------------------------------------------------------

  function route() {
    var p = new URLSearchParams(location.hash.replace(/^#/, ""));
    setSelect(verdictSel, p.get("verdict"));
    tagSels.forEach(function (s) { setSelect(s, p.get("tag." + s.getAttribute("data-tag"))); });
    if (textIn) { textIn.value = p.get("q") || ""; }
    filter();
    var id = p.get("case");
    if (id === null) { closeCase(); } else { openCase(id, p.get("attempt"), p.get("step")); }
  }

  function onKey(ev) {
    if (ev.key === "Escape") {
      if (boxEl && !boxEl.hidden) { closeBox(); return; }
      if (current) { location.hash = params(); }
      return;
    }
    if (!current || (boxEl && !boxEl.hidden) || ev.altKey || ev.ctrlKey || ev.metaKey) { return; }
    var into = ev.target && ev.target.closest && ev.target.closest("input, select, textarea");
    if (into) { return; }
    var step = ev.key === "ArrowRight" ? 1 : ev.key === "ArrowLeft" ? -1 : 0;
    var at = shown.indexOf(current.n);
    if (step && at >= 0 && shown[at + step] !== undefined) { location.hash = params({ "case": index.cases[shown[at + step]].id }); }
  }

  // -- one case ------------------------------------------------------------------------------------------------------

  function closeCase() {
    closeBox();
    if (!current) { return; }
    current = null;
    viewEl.hidden = true;
    viewEl.replaceChildren();
    viewEl.removeAttribute("data-case");
    viewEl.removeAttribute("data-ready");
    doc.body.classList.remove("viewing");
    doc.title = title;
    schedule();
  }

  function openCase(id, attempt, step) {
    closeBox();
    var n = byId.get(id);
    if (current && current.id === id && current.n === n && viewEl.getAttribute("data-ready")) {
      aim(attempt, step); // the same case: only the step the address names changes
      return;
    }
    current = { id: id, n: n };
    doc.body.classList.add("viewing");
    viewEl.hidden = false;
    viewEl.setAttribute("data-case", id);
    viewEl.removeAttribute("data-ready");
    var inner = el("div", "inner");
    inner.appendChild(nav(n));
    viewEl.replaceChildren(inner);
    if (n === undefined) {
      inner.appendChild(el("p", "status bad", "This report has no case with the id “" + id + "”: the address names a case this run did not have."));
      return;
    }
    inner.appendChild(el("p", "status", "Loading the case…"));
    var k = chunkOf(n);
    withChunk(k, function (details) {
      if (!current || current.n !== n) { return; }
      var d = details[n - index.starts[k]];
      if (!d || d.id !== id) { fail(); return; }
      showCase(n, d, inner);
      aim(attempt, step);
      viewEl.setAttribute("data-ready", "1");
      if (win.performance && performance.mark) { performance.mark("guitest-case"); }
    }, fail);

    function fail() {
      if (!current || current.n !== n) { return; }
      inner.replaceChildren(nav(n), el("p", "status bad", "This case's detail could not be read" + (base ? " from " + base + "c/" + k + ".js" : "") + ": a report is its page and the folder beside it; keep them together."));
    }
  }

  function nav(n) {
    var bar = el("nav");
    var back = el("a", null, "← all cases");
    back.href = "#" + params();
    bar.appendChild(back);
    var at = n === undefined ? -1 : shown.indexOf(n);
    [["‹ previous", -1], ["next ›", 1]].forEach(function (pair) {
      var a = el("a", null, pair[0]);
      var other = at >= 0 ? shown[at + pair[1]] : undefined;
      if (other === undefined) { a.setAttribute("aria-disabled", "true"); } else { a.href = "#" + params({ "case": index.cases[other].id }); }
      bar.appendChild(a);
    });
    bar.appendChild(el("span", "where", at >= 0 ? "case " + (at + 1) + " of " + shown.length + " shown" : "a case the filters do not show"));
    return bar;
  }

  function showCase(n, d, inner) {
    var entry = index.cases[n];
    doc.title = d.id + " · " + title;
    inner.replaceChildren(nav(n));
    var h = el("h2");
    h.appendChild(badge(d.verdict));
    h.appendChild(el("code", "cid", d.id));
    inner.appendChild(h);
    if (d.tags && d.tags.length) {
      var tags = el("ul", "tags");
      d.tags.forEach(function (kv) {
        var li = el("li");
        li.appendChild(el("span", null, kv[0]));
        li.appendChild(doc.createTextNode(" " + kv[1]));
        tags.appendChild(li);
      });
      inner.appendChild(tags);
    }
    if (d.instruction) { inner.appendChild(el("p", "instruction", d.instruction)); }
    if (d.error) { inner.appendChild(el("pre", "err", d.error)); }
    if (d.episodes && d.episodes.length) {
      d.episodes.forEach(function (ep) { inner.appendChild(episode(d, ep)); });
    } else {
      var srcs = sources(d.full, entry.p >= 0 ? index.pictures[entry.p] : null);
      if (srcs.length) {
        var g = geometry(entry.g);
        var wide = Math.max(320, Math.min(1232, (viewEl.clientWidth || win.innerWidth) - 48));
        inner.appendChild(shot(srcs, g.size, wide, Math.max(240, win.innerHeight * 0.7), groundOverlay(g.size, g.truth, g.pred), "screenshot of " + d.id));
      }
      inner.appendChild(el("h3", null, "reply"));
      inner.appendChild(d.reply === null ? el("p", "noreply", "no reply") : el("pre", "reply", d.reply));
    }
    if (d.meta && d.meta.length) { inner.appendChild(el("p", "meta", d.meta.join(" · "))); }
    if (d.cost) { inner.appendChild(el("p", "meta cost", "cost: " + d.cost)); }
    if (d.attempts) {
      inner.appendChild(el("h3", null, "attempts"));
      var list = el("ol", "attempts");
      d.attempts.forEach(function (a) {
        var li = el("li");
        li.appendChild(badge(a.verdict));
        if (a.meta && a.meta.length) { li.appendChild(el("span", "meta", " " + a.meta.join(" · "))); }
        li.appendChild(a.reply === null ? el("p", "noreply", "no reply") : el("pre", "reply", a.reply));
        if (a.error) { li.appendChild(el("pre", "err", a.error)); }
        list.appendChild(li);
      });
      inner.appendChild(list);
    }
  }

  function episode(d, ep) {
    var box = el("section", "episode");
    box.setAttribute("data-attempt", String(ep.attempt));
    var head = el("h3");
    if (ep.label) {
      head.appendChild(doc.createTextNode(ep.label + " "));
      head.appendChild(badge(ep.verdict));
    } else {
      head.textContent = "episode";
    }
    box.appendChild(head);
    box.appendChild(el("p", "outcome", ep.outcome));
    if (ep.evidence && ep.evidence.length) {
      var why = el("ul", "evidence");
      ep.evidence.forEach(function (line) { why.appendChild(el("li", null, line)); });
      box.appendChild(why);
    }
    var list = el("ol", "steps");
    var size = ep.size || null;
    (ep.steps || []).forEach(function (s) {
      var li = el("li", "step");
      li.id = "step-" + ep.attempt + "-" + s.n;
      li.appendChild(stepShot(sources(s.thumb, s.src), sources(s.src), size, s.marks, "step " + s.n));
      var text = el("div");
      var act = el("p", "act");
      var link = el("a", null, "step " + s.n);
      link.href = "#" + params({ "case": d.id, attempt: ep.attempt || null, step: s.n });
      act.appendChild(link);
      act.appendChild(doc.createTextNode(s.read));
      text.appendChild(act);
      if (s.notes) { text.appendChild(el("p", "meta", s.notes)); }
      text.appendChild(s.reply === null ? el("p", "noreply", "no reply") : el("pre", "reply", s.reply));
      if (s.meta) { text.appendChild(el("p", "meta", s.meta)); }
      li.appendChild(text);
      list.appendChild(li);
    });
    if (ep.final) {
      var li = el("li", "step");
      li.id = "step-" + ep.attempt + "-end";
      li.appendChild(stepShot(sources(ep.final.thumb, ep.final.src), sources(ep.final.src), size, null, "final screen"));
      var end = el("p", "act");
      end.appendChild(el("b", null, "end "));
      end.appendChild(doc.createTextNode(ep.final.end || ""));
      li.appendChild(end);
      list.appendChild(li);
    }
    box.appendChild(list);
    return box;
  }

  // A step's screenshot (its thumbnail where there is one) with its actions drawn; a click shows the full screenshot.
  function stepShot(srcs, full, size, marks, alt) {
    if (!srcs.length) { return el("div", "noshot"); }
    var fig = shot(srcs, size, STEP_W, STEP_W, marksOverlay(size, marks), alt);
    fig.setAttribute("title", "click: the full screenshot");
    fig.addEventListener("click", function () { openBox(full.length ? full : srcs, size, marks, alt); });
    return fig;
  }

  // The step the address names: shown, and marked as the target.
  function aim(attempt, step) {
    if (target) { target.classList.remove("target"); target = null; }
    if (step === null || step === undefined) { viewEl.scrollTop = 0; return; }
    var first = viewEl.querySelector("section.episode");
    var which = attempt !== null && attempt !== undefined ? attempt : first ? first.getAttribute("data-attempt") : "0";
    var li = doc.getElementById("step-" + which + "-" + step);
    if (!li) { return; }
    target = li;
    li.classList.add("target");
    li.scrollIntoView({ block: "start" });
  }

  function onViewClick(ev) {
    var a = ev.target.closest("a");
    if (a && a.getAttribute("href") === "#" + location.hash.replace(/^#/, "")) { aim(currentParam("attempt"), currentParam("step")); }
  }

  function currentParam(name) { return new URLSearchParams(location.hash.replace(/^#/, "")).get(name); }

  // -- the full screenshot -------------------------------------------------------------------------------------------

  function openBox(srcs, size, marks, alt) {
    if (!boxEl) { return; }
    var fig = shot(srcs, size, win.innerWidth * 0.96, win.innerHeight * 0.86, marksOverlay(size, marks), alt);
    if (!size) { fig.style.width = ""; fig.style.height = ""; }
    fig.querySelector("img").loading = "eager";
    var caption = el("p", null, alt + " · ");
    var open = el("a", null, "open the file");
    open.href = srcs[0];
    open.target = "_blank";
    open.rel = "noopener";
    caption.appendChild(open);
    caption.appendChild(doc.createTextNode(" · Esc or a click closes it"));
    boxEl.replaceChildren(fig, caption);
    boxEl.hidden = false;
  }

  function closeBox() {
    if (boxEl && !boxEl.hidden) {
      boxEl.hidden = true;
      boxEl.replaceChildren();
    }
  }

  boot();
})();
