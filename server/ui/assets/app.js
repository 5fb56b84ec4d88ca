// helix-org web UI: the one script. Pages work without it; it adds live
// updates (Server-Sent Events), live markdown previews, sending messages
// without a reload, and ticking run timers. No inline code, no framework.
"use strict";

(function () {
  const csrf = () => (document.querySelector('meta[name="csrf-token"]') || {}).content || "";

  // ---- Live views -------------------------------------------------------
  // The page's <main data-live="/ui/live?…"> names its stream of events.
  // Each SSE id is an event's seq, so EventSource's own reconnect (with
  // Last-Event-ID) replays exactly what was missed; seqs already on the
  // page are skipped.
  function startLive() {
    const main = document.getElementById("main");
    const url = main && main.dataset.live;
    if (!url || !window.EventSource) return;
    const status = document.getElementById("live-status");
    const setStatus = (state, text) => {
      if (!status) return;
      status.dataset.state = state;
      status.textContent = text;
    };
    const es = new EventSource(url);
    es.onopen = () => setStatus("live", "live");
    es.onerror = () => setStatus(es.readyState === EventSource.CLOSED ? "down" : "connecting",
      es.readyState === EventSource.CLOSED ? "live updates stopped — reload" : "reconnecting…");
    es.addEventListener("ev", (e) => insert(JSON.parse(e.data)));
    es.addEventListener("refresh", () => refresh.request());
    es.addEventListener("ended", (e) => {
      es.close();
      let why = "";
      try { why = JSON.parse(e.data).error; } catch (_) {}
      setStatus("down", "live updates ended");
      const note = document.createElement("div");
      note.className = "flash error";
      note.setAttribute("role", "alert");
      note.textContent = "Live updates ended: " + (why || "the session ended") + ". Reload the page or sign in again.";
      main.prepend(note);
    });
  }

  // insert queues a live event; flush puts everything queued on the page
  // at once, so a burst costs one layout, not one per event.
  const queue = [];
  let lastFlush = 0;
  function insert(msg) {
    queue.push(msg);
    if (queue.length === 1) setTimeout(flush, 0);
  }

  function flush() {
    const target = document.querySelector("[data-live-target]");
    const batch = queue.splice(0);
    if (!target) return;
    const mode = target.dataset.liveTarget;
    const stick = nearBottom(target);
    // Highlight arrivals only at a reading pace: a burst is not animated.
    const calm = batch.length <= 3 && Date.now() - lastFlush > 300;
    lastFlush = Date.now();
    for (const msg of batch) {
      if (document.querySelector('[data-seq="' + msg.seq + '"]')) continue;
      const tpl = document.createElement("template");
      tpl.innerHTML = msg.html.trim();
      const node = tpl.content.firstElementChild;
      if (!node) continue;
      if (calm) node.classList.add("fresh");
      if (mode === "prepend") target.prepend(node);
      else if (mode === "threads") intoThread(target, node, msg.thread);
      else target.append(node);
    }
    document.querySelectorAll("[data-empty]").forEach((n) => n.remove());
    if (stick) target.scrollTop = target.scrollHeight;
  }

  // intoThread folds an event under its thread when the thread is on the
  // page, else starts a new item.
  function intoThread(list, node, thread) {
    let item = thread ? list.querySelector('.thread[data-thread="' + CSS.escape(thread) + '"]') : null;
    if (!item) {
      item = document.createElement("li");
      item.className = "thread";
      if (thread) item.dataset.thread = thread;
      item.append(node);
      list.append(item);
      return;
    }
    let replies = item.querySelector(".replies");
    if (!replies) {
      replies = document.createElement("details");
      replies.className = "replies";
      replies.innerHTML = '<summary><span class="n">0</span> more in this thread</summary><div class="reply-list"></div>';
      item.append(replies);
    }
    replies.querySelector(".reply-list").append(node);
    const n = replies.querySelector(".n");
    n.textContent = String(Number(n.textContent) + 1);
  }

  function nearBottom(el) {
    return el.scrollHeight - el.scrollTop - el.clientHeight < 80;
  }

  // refresh reloads the page's content for views that change as a whole
  // (org chart, fleet): at most once a second, and never while a form on
  // the page is being filled in. A reload that fails is tried again,
  // waiting longer each time: dropping it would leave the page as it was
  // (a run's end missed keeps its "running" badge).
  const refresh = {
    pending: false,
    busy: false,
    last: 0,
    failures: 0,
    request() {
      this.pending = true;
      this.run();
    },
    // editing: a field of the page has focus, or a form holds what the
    // person changed and has not sent; a reload would throw it away.
    editing(main) {
      if (main.contains(document.activeElement) && /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName)) return true;
      return [...main.querySelectorAll("input, textarea, select")].some((f) => {
        if (f.type === "hidden") return false;
        if (f.type === "checkbox" || f.type === "radio") return f.checked !== f.defaultChecked;
        if (f.tagName === "SELECT") {
          // A select with no option marked selected starts on its first.
          const opts = [...f.options];
          const initial = opts.some((o) => o.defaultSelected) ? (o) => o.defaultSelected : (o, i) => i === 0 && !f.multiple;
          return opts.some((o, i) => o.selected !== initial(o, i));
        }
        return f.value !== f.defaultValue;
      });
    },
    run() {
      if (!this.pending || this.busy) return;
      const main = document.getElementById("main");
      const wait = 1000 * 2 ** Math.min(this.failures, 5) - (Date.now() - this.last);
      if (this.editing(main) || wait > 0) {
        setTimeout(() => this.run(), Math.max(wait, 500));
        return;
      }
      this.pending = false;
      this.busy = true;
      this.last = Date.now();
      fetch(location.href, { credentials: "same-origin" })
        .then((r) => (r.ok ? r.text() : Promise.reject(r.status)))
        .then((html) => {
          this.failures = 0;
          const fresh = new DOMParser().parseFromString(html, "text/html").getElementById("main");
          // The person may have started on a form while the page was
          // fetched: keep what they did and reload once they are done.
          if (fresh && this.editing(main)) {
            this.pending = true;
          } else if (fresh) {
            const open = [...main.querySelectorAll("details[open]")].map((d) => d.id || "");
            main.innerHTML = fresh.innerHTML;
            tick();
            watchDue();
            open.filter(Boolean).forEach((id) => { const d = document.getElementById(id); if (d) d.open = true; });
          }
        })
        .catch(() => { this.failures++; this.pending = true; })
        .finally(() => { this.busy = false; this.run(); });
    },
  };

  // ---- Deliveries due soon ----------------------------------------------
  // A stream's page shows its deliveries as they were when it loaded. One
  // due within a minute (a Resend just pressed) is reloaded a second after
  // it is due, so the person sees how it went. One still waiting after
  // that (a busy outbox) is reloaded again after 2, 4 and 8 seconds, then
  // every 15, until five minutes past its time: a fixed count of reloads
  // ran out on a slow outbox and left it showing pending.
  let dueReloads = 0;
  function watchDue() {
    const due = [...document.querySelectorAll("tr[data-due]")].map((r) => Date.parse(r.dataset.due)).filter((t) => !isNaN(t));
    if (!due.length) {
      dueReloads = 0;
      return;
    }
    const wait = Math.min(...due) - Date.now();
    if (wait > 60000 || wait < -300000) return;
    const after = 1000 * Math.min(2 ** dueReloads, 15);
    dueReloads++;
    setTimeout(() => refresh.request(), Math.max(wait, 0) + after);
  }

  // ---- Markdown preview ------------------------------------------------
  const previewTimers = new WeakMap();
  document.addEventListener("input", (e) => {
    const area = e.target;
    if (!(area instanceof HTMLTextAreaElement) || !area.dataset.preview) return;
    clearTimeout(previewTimers.get(area));
    previewTimers.set(area, setTimeout(() => preview(area), 250));
  });

  function preview(area) {
    const out = document.getElementById(area.dataset.preview);
    if (!out) return;
    const body = new URLSearchParams({ markdown: area.value });
    // An org other than the default is served under /orgs/<name>.
    const root = location.pathname.slice(0, location.pathname.indexOf("/ui/"));
    fetch(root + "/ui/preview", { method: "POST", body, credentials: "same-origin", headers: { "X-CSRF-Token": csrf() } })
      .then((r) => (r.ok ? r.text() : Promise.reject(r.status)))
      .then((html) => { out.innerHTML = html; })
      .catch(() => {});
  }

  // ---- Forms that send without a reload (composers) ----------------------
  document.addEventListener("submit", (e) => {
    const form = e.target;
    if (!form.hasAttribute("data-async") || !window.fetch) return;
    e.preventDefault();
    const error = form.querySelector(".form-error");
    const button = form.querySelector("button");
    if (button) button.disabled = true;
    fetch(form.action, {
      method: "POST",
      body: new URLSearchParams(new FormData(form)),
      credentials: "same-origin",
      headers: { Accept: "application/json", "X-CSRF-Token": csrf() },
    })
      .then((r) => r.json().then((j) => ({ ok: r.ok, j })))
      .then(({ ok, j }) => {
        if (!ok) throw new Error(j.error || "refused");
        if (error) error.textContent = "";
        const body = form.querySelector('textarea[name="body"]');
        if (body) { body.value = ""; body.focus(); }
      })
      .catch((err) => { if (error) error.textContent = String(err.message || err); })
      .finally(() => { if (button) button.disabled = false; });
  });

  // Enter sends a chat message; Shift+Enter starts a new line.
  document.addEventListener("keydown", (e) => {
    const area = e.target;
    if (e.key !== "Enter" || e.shiftKey || !(area instanceof HTMLTextAreaElement)) return;
    const form = area.closest("form.chat-composer");
    if (!form) return;
    e.preventDefault();
    form.requestSubmit();
  });

  // ---- Run timers -------------------------------------------------------
  function tick() {
    const now = Date.now();
    document.querySelectorAll("[data-since]").forEach((el) => {
      const start = Date.parse(el.dataset.since);
      if (isNaN(start)) return;
      const s = Math.max(0, Math.floor((now - start) / 1000));
      const m = Math.floor(s / 60), h = Math.floor(m / 60);
      el.textContent = "running " + (h ? h + "h " + String(m % 60).padStart(2, "0") + "m" : m ? m + "m " + String(s % 60).padStart(2, "0") + "s" : s + "s");
    });
  }

  function init() {
    startLive();
    tick();
    watchDue();
    setInterval(tick, 1000);
    const bubbles = document.getElementById("messages");
    if (bubbles) bubbles.scrollTop = bubbles.scrollHeight;
    const log = document.getElementById("log");
    if (log) log.scrollTop = log.scrollHeight;
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
