// ikreport site comfort: the in-browser hash check of a record page, and sortable tables.
// No claim needs this script: every page reads the same without it.
(function () {
  "use strict";

  function hex(buffer) {
    return Array.from(new Uint8Array(buffer)).map(function (b) { return b.toString(16).padStart(2, "0"); }).join("");
  }

  function embeddedBytes() {
    var holder = document.getElementById("record-bytes");
    var text = atob(holder.getAttribute("data-b64"));
    var bytes = new Uint8Array(text.length);
    for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    return bytes.buffer;
  }

  async function checkRecord(box) {
    var expected = decodeURIComponent(location.pathname.split("/").pop() || "").replace(/\.html$/, "");
    var status = box.querySelector(".hash-status");
    if (!(window.crypto && window.crypto.subtle)) {
      status.textContent = "This browser cannot compute sha256 here; check by hand as below.";
      return;
    }
    var bytes = null, from = "";
    if (location.protocol !== "file:") {  // browsers refuse fetch() of file: URLs
      try {
        var response = await fetch(box.getAttribute("data-json"), { cache: "no-store" });
        if (response.ok) { bytes = await response.arrayBuffer(); from = box.getAttribute("data-json"); }
      } catch (e) { bytes = null; }
    }
    if (bytes === null) { bytes = embeddedBytes(); from = "the copy of the record in this page"; }
    var digest = hex(await crypto.subtle.digest("SHA-256", bytes));
    var ok = digest === expected;
    box.classList.add(ok ? "hash-ok" : "hash-bad");
    status.textContent = ok
      ? "verified: the sha256 of " + from + " is " + digest + ", the id in this page's address."
      : "mismatch: the sha256 of " + from + " is " + digest + ", not " + expected + ". This copy was changed.";
  }

  // A published source: its bytes (decompressed from gzip when the file is .gz, unless the server
  // already did, as one sending Content-Encoding would) must hash to the id the page gives it.
  async function checkBlob(span) {
    if (location.protocol === "file:" || !(window.crypto && window.crypto.subtle)) return;
    try {
      var response = await fetch(span.getAttribute("data-href"), { cache: "no-store" });
      if (!response.ok) { span.textContent = "(could not be fetched to check)"; return; }
      var bytes = new Uint8Array(await response.arrayBuffer());
      if (span.hasAttribute("data-gz") && bytes[0] === 0x1f && bytes[1] === 0x8b) {
        if (!window.DecompressionStream) { span.textContent = "(this browser cannot decompress gzip to check it)"; return; }
        var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
        bytes = new Uint8Array(await new Response(stream).arrayBuffer());
      }
      var digest = hex(await crypto.subtle.digest("SHA-256", bytes));
      var ok = digest === span.getAttribute("data-id");
      span.classList.add(ok ? "hash-ok" : "hash-bad");
      span.textContent = ok ? "(verified: its sha256 is this id)" : "(mismatch: its sha256 is " + digest + ")";
    } catch (e) {
      span.textContent = "(could not be checked: " + e.message + ")";
    }
  }

  var UNITS = { "ns": 1e-3, "µs": 1, "ms": 1e3, "s": 1e6, "GB/s": 1, "TB/s": 1e3, "%": 1, "MiB": 1, "MHz": 1, "W": 1 };

  function sortKey(text) {
    var m = /^(-?[\d,]*\.?\d+)\s*(ns|µs|ms|s|GB\/s|TB\/s|%|MiB|MHz|W)?$/.exec(text.trim());
    if (!m) return null;
    return parseFloat(m[1].replace(/,/g, "")) * (m[2] ? UNITS[m[2]] : 1);
  }

  function makeSortable(table) {
    var heads = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(heads, function (th, col) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      button.textContent = th.textContent;
      th.textContent = "";
      th.appendChild(button);
      button.addEventListener("click", function () {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[col].textContent, y = b.cells[col].textContent;
          var kx = sortKey(x), ky = sortKey(y);
          var order = (kx !== null && ky !== null) ? kx - ky : x.localeCompare(y);
          return ascending ? order : -order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var box = document.getElementById("hash-check");
    if (box) checkRecord(box);
    Array.prototype.forEach.call(document.querySelectorAll(".blob-check"), checkBlob);
    Array.prototype.forEach.call(document.querySelectorAll("table"), makeSortable);
  });
})();
