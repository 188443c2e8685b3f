// ikreport search and table filters. The index is JSON made at build time (ikreport/site/
// search_index.py) and loaded in pieces, relative to the page, so it works on a Pages sub-path:
// search/meta.json, then from the folder it names (one per index, so that the pieces of two
// builds never meet) one terms-<n>.json per word typed and the docs-<n>.json chunks of the
// results shown. No server, no CDN. Browsers refuse fetch() of file: URLs, so
// from a file the box says that search needs the site served.
(function () {
  "use strict";

  var FORMAT = 2;  // search_index.FORMAT
  var SHOWN = 50;  // results listed; the rest are counted
  var cache = {};

  function load(base, name) {
    if (!cache[name]) {
      cache[name] = fetch(base + name).then(function (r) {
        if (!r.ok) throw new Error(name + ": " + r.status);
        return r.json();
      });
    }
    return cache[name];
  }

  // The same as search_index.terms and shard_of: query words are matched as prefixes.
  function words(text) {
    return (text.toLowerCase().match(/[a-z0-9]+/g) || []).filter(function (w) { return w.length >= 2; });
  }

  function shardOf(term, shards) {
    return (term.charCodeAt(0) * 131 + term.charCodeAt(1)) % shards;
  }

  // Format 1 kept its pieces in search/ itself: a site updated in place gets this script before
  // the meta.json that names the new folder, and must still read the old index meanwhile.
  function folder(meta) {
    return meta.format === 1 ? "" : meta.dir + "/";
  }

  function matches(base, meta, word) {
    return load(base, folder(meta) + "terms-" + shardOf(word, meta.shards) + ".json").then(function (shard) {
      var found = new Set();
      Object.keys(shard).forEach(function (term) {
        if (term.lastIndexOf(word, 0) === 0) shard[term].forEach(function (n) { found.add(n); });
      });
      return found;
    });
  }

  function docs(base, meta, numbers) {
    var chunks = Array.from(new Set(numbers.map(function (n) { return Math.floor(n / meta.per_chunk); })));
    return Promise.all(chunks.map(function (c) { return load(base, folder(meta) + "docs-" + c + ".json"); })).then(function (loaded) {
      var byChunk = {};
      chunks.forEach(function (c, i) { byChunk[c] = loaded[i]; });
      return numbers.map(function (n) { return byChunk[Math.floor(n / meta.per_chunk)][n % meta.per_chunk]; });
    });
  }

  function element(tag, className, text) {
    var e = document.createElement(tag);
    if (className) e.className = className;
    if (text) e.textContent = text;
    return e;
  }

  function show(list, root, found) {
    list.textContent = "";
    found.forEach(function (doc) {
      var item = element("li");
      var link = element("a", "", doc.t);
      link.href = root + doc.u;
      item.appendChild(link);
      item.appendChild(element("span", "muted", " " + doc.k + (doc.g ? ", " + doc.g : "")));
      if (doc.s) item.appendChild(element("span", "superseded-note", " superseded by " + doc.s));
      if (doc.w) item.appendChild(element("span", "search-words", doc.w));
      list.appendChild(item);
    });
    list.hidden = found.length === 0;
  }

  function setUpSearch(box) {
    var input = box.querySelector("input[type=search]");
    var status = box.querySelector("#search-status");
    var list = box.querySelector(".search-results");
    var base = box.getAttribute("data-index");
    var root = base.replace(/search\/$/, "");
    if (location.protocol === "file:") {
      status.textContent = "Search needs the site served (GitHub Pages, or python3 -m http.server in the site folder): " +
        "a page opened from a file cannot load the search index. Every record is listed below.";
      input.disabled = true;
      return;
    }
    status.textContent = "Type two letters or more.";
    var asked = 0;
    function run() {
      var query = words(input.value);
      var ticket = ++asked;
      if (query.length === 0) { show(list, root, []); status.textContent = "Type two letters or more."; return; }
      load(base, "meta.json").then(function (meta) {
        if (meta.format !== FORMAT && meta.format !== 1) throw new Error("search index format " + meta.format);
        return Promise.all(query.map(function (w) { return matches(base, meta, w); })).then(function (sets) {
          var hits = Array.from(sets[0]).filter(function (n) { return sets.every(function (s) { return s.has(n); }); });
          hits.sort(function (a, b) { return a - b; });
          return docs(base, meta, hits.slice(0, SHOWN)).then(function (found) {
            if (ticket !== asked) return;  // a later query has its own answer
            show(list, root, found);
            list.setAttribute("data-query", input.value);  // what these results answer (tests wait on it)
            status.textContent = hits.length === 0 ? "Nothing found." :
              hits.length + " found" + (hits.length > SHOWN ? ", the first " + SHOWN + " shown." : ".");
          });
        });
      }).catch(function (e) {
        status.textContent = "The search index could not be loaded (" + e.message + ").";
      });
    }
    input.addEventListener("input", run);
    box.querySelector("form").addEventListener("submit", function (e) { e.preventDefault(); run(); });
  }

  function setUpFilter(form) {
    var table = document.getElementById(form.getAttribute("data-table"));
    var output = form.querySelector("output");
    function apply() {
      var gpu = form.elements.gpu.value, kind = form.elements.kind ? form.elements.kind.value : "", shown = 0;
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        var keep = (!gpu || row.getAttribute("data-gpu") === gpu) && (!kind || row.getAttribute("data-kind") === kind);
        row.hidden = !keep;
        if (keep) shown++;
      });
      output.textContent = (gpu || kind) ? shown + " of " + table.tBodies[0].rows.length + " rows shown" : "";
    }
    form.addEventListener("change", apply);
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    form.hidden = false;
  }

  document.addEventListener("DOMContentLoaded", function () {
    var box = document.getElementById("search");
    if (box) setUpSearch(box);
    Array.prototype.forEach.call(document.querySelectorAll("form.table-filter"), setUpFilter);
  });
})();
