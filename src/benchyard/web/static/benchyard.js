// benchyard web UI: live progress (server-sent events), the scenario drawer, confirmations.
// Served from this server only (the Content-Security-Policy allows no inline script).
"use strict";

(function () {
  document.documentElement.classList.add("js");  // long cells are clamped only with this script
  // A browser keeps about six connections to one server: stream at most this many runs and poll
  // the others, so that a page of many running runs still loads and navigates.
  const STREAMED = 3;
  const POLL_MS = 4000;

  function show(box, p) {
    const bar = box.querySelector('[data-field="bar"]');
    if (bar) { bar.max = Math.max(1, p.planned); bar.value = p.finished; }
    const text = box.querySelector('[data-field="text"]');
    if (text) text.textContent = p.finished + "/" + p.planned;
    const detail = box.querySelector('[data-field="detail"]');
    if (detail) {
      let words = p.passed + " passed · " + p.failed + " failed · " + p.timeouts + " timeouts · " + p.errors + " errors";
      if (p.queued || p.claimed) words += " · " + p.queued + " queued · " + p.claimed + " claimed";
      if (p.stuck) words += " · " + p.stuck + " stuck";
      detail.textContent = words;
    }
    const status = box.querySelector('[data-field="status"]');
    if (status) { status.textContent = p.status; status.className = "status s-" + p.status; }
  }

  function ended(box) {
    // The figures of a run that ended are on its page itself: load it again once.
    if (box.closest(".run-head")) window.location.reload();
  }

  function streamProgress(box, runId) {
    const source = new EventSource("/runs/" + encodeURIComponent(runId) + "/events");
    source.addEventListener("progress", function (event) { show(box, JSON.parse(event.data)); });
    source.addEventListener("end", function () { source.close(); ended(box); });
    source.onerror = function () { source.close(); pollProgress(box, runId); };
  }

  function pollProgress(box, runId) {
    const url = "/api/runs/" + encodeURIComponent(runId) + "/progress";
    function tick() {
      fetch(url, { credentials: "same-origin" })
        .then(function (response) { return response.ok ? response.json() : null; })
        .then(function (p) {
          if (!p) return;
          show(box, p);
          if (p.active) window.setTimeout(tick, POLL_MS); else ended(box);
        })
        .catch(function () { /* the server went away: stop */ });
    }
    window.setTimeout(tick, POLL_MS);
  }

  function watchProgress(box, index) {
    const runId = box.dataset.progressRun;
    if (!runId) return;
    if (index < STREAMED && "EventSource" in window) streamProgress(box, runId);
    else pollProgress(box, runId);
  }

  function openDrawer(url, pageUrl) {
    const drawer = document.getElementById("drawer");
    if (!drawer) { window.location.href = pageUrl; return; }
    // A static copy (benchyard view-bundle) holds each drawer as a file of its own.
    const address = document.documentElement.hasAttribute("data-static-copy") ? url + "/fragment.html" : url + "?fragment=1";
    fetch(address, { headers: { "Accept": "text/html" }, credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) throw new Error(response.status);
        return response.text();
      })
      .then(function (html) {
        // The fragment is rendered by this server with every value escaped.
        drawer.innerHTML = html;
        drawer.classList.add("open");
        drawer.scrollTop = 0;
        markClamped(drawer);
        history.pushState({ drawer: url }, "", pageUrl);
        wireSteps(drawer);
      })
      .catch(function () { window.location.href = pageUrl; });
  }

  // The drawer's previous and next: the attempts before and after the one shown in the table
  // beside it (the fragment alone does not know the table).
  function wireSteps(drawer) {
    const links = Array.from(document.querySelectorAll("#attempts a[data-drawer]"));
    const shown = new URL(window.location.href).searchParams.get("attempt");
    const at = links.findIndex(function (link) { return link.dataset.drawer.split("/").pop() === shown; });
    if (at < 0) return;
    [["previous", links[at - 1]], ["next", links[at + 1]]].forEach(function (pair) {
      const step = drawer.querySelector('a[data-drawer-step="' + pair[0] + '"]');
      if (!step) return;
      if (pair[1]) {
        step.href = pair[1].href;
        step.dataset.drawer = pair[1].dataset.drawer;
        step.hidden = false;
      } else {
        step.hidden = true;
        step.removeAttribute("href");
        delete step.dataset.drawer;
      }
    });
  }

  function step(direction) {
    const link = document.querySelector('#drawer.open a[data-drawer-step="' + direction + '"]:not([hidden])');
    if (link) link.click();
  }

  function closeDrawer(pageUrl) {
    const drawer = document.getElementById("drawer");
    if (!drawer) return false;
    drawer.classList.remove("open");
    drawer.innerHTML = "";
    history.pushState({}, "", pageUrl);
    return true;
  }

  // A clamped cell (.clamp) shows its first lines; one that has more says so and opens on click.
  function markClamped(root) {
    root.querySelectorAll(".clamp:not(.open)").forEach(function (cell) {
      const cut = cell.scrollHeight > cell.clientHeight + 1;
      cell.classList.toggle("cut", cut);
      if (cut) { cell.title = "click to show it all"; cell.tabIndex = 0; }
    });
  }

  function toggleClamp(cell) {
    if (!cell.classList.contains("cut") && !cell.classList.contains("open")) return;
    const open = cell.classList.toggle("open");
    cell.title = open ? "click to show less" : "click to show it all";
  }

  // Invisible format characters shown as their code points, as the server shows them
  // (web/display.py): no text can display as another.
  const INVISIBLE = /[\u061c\u180e\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff\x1b]/g;
  function visible(text) {
    return text.replace(INVISIBLE, function (c) {
      return "[U+" + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0") + "]";
    });
  }

  // An agent's output longer than the drawer shows: the rest is fetched from the artifact's
  // endpoint (plain text) and put in as text, never as markup.
  function loadRest(button) {
    const target = document.getElementById(button.dataset.target);
    if (!target) return;
    button.disabled = true;
    fetch(button.dataset.rest, { credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) throw new Error(response.status);
        return response.text();
      })
      .then(function (text) {
        target.textContent = visible(text);
        const note = button.closest(".output-more");
        if (note) note.remove();
      })
      .catch(function () { button.disabled = false; });
  }

  document.addEventListener("click", function (event) {
    const more = event.target.closest("button[data-rest]");
    if (more) { event.preventDefault(); loadRest(more); return; }
    if (!event.target.closest("a")) {
      const cell = event.target.closest(".clamp");
      if (cell) { toggleClamp(cell); return; }
    }
    const link = event.target.closest("a[data-drawer]");
    if (link && document.getElementById("drawer") && !event.ctrlKey && !event.metaKey) {
      event.preventDefault();
      const page = new URL(window.location.href);
      page.searchParams.set("attempt", link.dataset.drawer.split("/").pop());
      page.hash = "drawer";
      openDrawer(link.dataset.drawer, page.toString());
      return;
    }
    const close = event.target.closest("a[data-drawer-close]");
    if (close && document.getElementById("drawer")) {
      event.preventDefault();
      const page = new URL(window.location.href);
      page.searchParams.delete("attempt");
      page.hash = "";
      closeDrawer(page.toString());
    }
  });

  document.addEventListener("submit", function (event) {
    const form = event.target.closest("form[data-confirm]");
    if (form && !window.confirm(form.dataset.confirm)) event.preventDefault();
  });

  document.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && event.target.classList && event.target.classList.contains("clamp")) {
      toggleClamp(event.target);
      return;
    }
    const typing = event.target.closest && event.target.closest("input, textarea, select, [contenteditable]");
    if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "ArrowLeft" || event.key === "k") { step("previous"); return; }
    if (event.key === "ArrowRight" || event.key === "j") { step("next"); return; }
    if (event.key === "Escape") {
      const close = document.querySelector("#drawer.open a[data-drawer-close]");
      if (close) close.click();
    }
  });

  window.addEventListener("popstate", function () { window.location.reload(); });

  markClamped(document);
  window.addEventListener("resize", function () { markClamped(document); });

  // The run page's own progress first, then the rows.
  const live = Array.from(document.querySelectorAll("[data-progress-run][data-live]"));
  live.sort(function (a, b) { return (b.closest(".run-head") ? 1 : 0) - (a.closest(".run-head") ? 1 : 0); });
  live.forEach(watchProgress);
})();
