// Sundial Service Center's scripts (served from /static, as the CSP asks). Pages work without them.
// The edit page's live preview: the Preview button asks the server; with it, the next runs
// follow the schedule as it is typed.
"use strict";
(function () {
  const form = document.getElementById("edit-form");
  if (!form) return;
  const input = document.getElementById("schedule");
  const dst = document.getElementById("dst");
  const list = document.getElementById("preview");
  const errorBox = document.getElementById("edit-error");
  const zone = form.dataset.timezone || "UTC";
  let timer = null;
  let seq = 0;

  async function refresh() {
    const mine = ++seq;
    const url = "/api/schedule/preview?schedule=" + encodeURIComponent(input.value) + "&timezone=" + encodeURIComponent(zone) +
      "&dst=" + encodeURIComponent(dst ? dst.value : "");
    let body;
    let ok = false;
    try {
      const resp = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
      ok = resp.ok;
      body = await resp.json();
    } catch (e) {
      body = { error: "preview unavailable: " + e };
    }
    if (mine !== seq) return; // a newer keystroke already asked
    list.replaceChildren();
    errorBox.textContent = ok ? "" : body.error;
    if (!ok) return;
    for (const label of body.labels) {
      const li = document.createElement("li");
      li.textContent = label;
      list.appendChild(li);
    }
    if (body.labels.length === 0) {
      const li = document.createElement("li");
      li.className = "muted";
      li.textContent = "no next run";
      list.appendChild(li);
    }
    list.dataset.schedule = input.value;
  }

  input.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(refresh, 250);
  });
  if (dst) dst.addEventListener("change", refresh);
})();

// Sortable tables: a click on a header sorts the rows by that column (again: the other way).
// Cells sort by their data-sort-value when set, else as numbers when both read as numbers
// (a duration or lateness such as "1.5s" or "+120ms" by its value), else as text. The order
// survives a live update (below).
const sortState = {}; // table id → {col, dir}
function cellKey(td) {
  if (!td) return "";
  const v = td.dataset.sortValue !== undefined ? td.dataset.sortValue : td.innerText.trim();
  const m = /^([+-]?\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(v.replace(/^waiting |^in /, ""));
  if (m) {
    const unit = { ms: 1, s: 1e3, m: 6e4, h: 36e5 }[m[2] || "ms"];
    return parseFloat(m[1]) * (m[2] ? unit : 1);
  }
  return v.toLowerCase();
}
function sortTable(table) {
  const st = sortState[table.id];
  const body = table.tBodies[0];
  if (!st || !body) return;
  const rows = Array.from(body.rows).filter((r) => r.cells.length > 1);
  if (rows.length < 2) return;
  rows.sort(function (a, b) {
    const x = cellKey(a.cells[st.col]), y = cellKey(b.cells[st.col]);
    const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
    return st.dir * c;
  });
  for (const r of rows) body.appendChild(r);
  table.querySelectorAll("thead th").forEach(function (th, i) {
    if (i === st.col) th.setAttribute("aria-sort", st.dir > 0 ? "ascending" : "descending");
    else th.removeAttribute("aria-sort");
  });
}
function sortable(root) {
  root.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("thead th").forEach(function (th, i) {
      if (th.dataset.sort !== undefined) return;
      th.dataset.sort = String(i);
      th.title = "sort by " + th.innerText.trim();
      th.addEventListener("click", function () {
        const st = sortState[table.id];
        sortState[table.id] = { col: i, dir: st && st.col === i ? -st.dir : 1 };
        sortTable(table);
      });
    });
    sortTable(table);
  });
}
sortable(document);

// Live updates: a page with [data-live] parts (Environment Health, a timer's page, the newest
// page of the log) reads itself again every few seconds while it is visible, and replaces
// those parts with the fresh ones (same id); a part holding the focus (a form being filled)
// is left alone. It reads the page, not the API: the same rendering, the same authorization.
(function () {
  if (!document.querySelector("[data-live]")) return;
  // Every 5 s, or what a part asks for (Environment Health: 10 s, its figures read the hour's log).
  const every = Math.max(...Array.from(document.querySelectorAll("[data-live]"), (e) => Number(e.dataset.liveEvery || 5000)));
  const status = document.querySelectorAll("[data-live-status]");
  function say(text, cls) {
    status.forEach(function (s) {
      s.textContent = text;
      s.classList.remove("paused", "stale");
      if (cls) s.classList.add(cls);
    });
  }
  let busy = false;
  async function refresh() {
    if (busy || document.hidden) return;
    busy = true;
    try {
      const resp = await fetch(location.href, { credentials: "same-origin", headers: { Accept: "text/html" } });
      if (!resp.ok) throw new Error("HTTP " + resp.status);
      const doc = new DOMParser().parseFromString(await resp.text(), "text/html");
      let found = 0;
      document.querySelectorAll("[data-live]").forEach(function (old) {
        const fresh = old.id && doc.getElementById(old.id);
        if (!fresh) return;
        found++;
        if (old.contains(document.activeElement)) return;
        const node = document.importNode(fresh, true);
        old.replaceWith(node);
        sortable(node.matches("table") ? node.parentNode : node);
      });
      if (found === 0) throw new Error("the page came back without its parts (signed out?): reload");
      say("live · updated " + new Date().toISOString().slice(11, 19) + " UTC");
      document.body.dataset.liveUpdates = String(Number(document.body.dataset.liveUpdates || 0) + 1);
    } catch (e) {
      say("live · not updated: " + e.message, "stale");
    } finally {
      busy = false;
    }
  }
  say("live");
  setInterval(refresh, every);
  document.addEventListener("visibilitychange", function () {
    if (document.hidden) say("live · paused while hidden", "paused");
    else refresh();
  });
})();
