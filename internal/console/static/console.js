// Sundial Service Center: the edit page's live preview. Pages work without it (the Preview
// button asks the server); with it, the next runs follow the schedule as it is typed.
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
