// EviGraph consult page. One hand-written script, no library, nothing fetched from elsewhere.
// Every string from the server (questions, answers, passages, chain names) is put into the page with
// textContent or as an SVG text node, never as HTML: a passage carrying <script> shows those characters.
// KG chains are drawn as inline SVG here (a chain is a short path: boxes left to right, labelled arrows).
"use strict";

(function () {
  const body = document.body;
  const csrf = body.dataset.csrf || "";
  let consultId = body.dataset.consult || "";
  let controller = null;
  let stopping = false;
  const MAX_RETRIES = 6;
  const SVG_NS = "http://www.w3.org/2000/svg";
  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "text") node.textContent = value;
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function showMessage(text, kind) {
    const box = $("message");
    box.textContent = text || "";
    box.hidden = !text;
    box.className = "message" + (kind ? " " + kind : "");
  }

  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  async function errorOf(response) {
    try {
      const data = await response.json();
      if (data && data.error) return String(data.error);
    } catch (_) { /* not JSON */ }
    return `The server answered ${response.status}.`;
  }

  // 429 and 503 carry Retry-After (a header, or a stream's error event): say so, count down, try again.
  const RETRIED = [429, 503];
  async function waitRetry(why, status, retryAfter, attempt, signal) {
    const after = Math.min(60, Math.max(1, parseInt(retryAfter || "5", 10) || 5));
    for (let left = after; left > 0; left--) {
      if (signal && signal.aborted) throw new DOMException("Stopped.", "AbortError");
      showMessage(`${why} (HTTP ${status}, Retry-After ${after} s) — retrying in ${left} s, ` +
        `attempt ${attempt + 1} of ${MAX_RETRIES}.`, "busy");
      await sleep(1000);
    }
  }

  async function request(path, options) {
    for (let attempt = 0; ; attempt++) {
      const response = await fetch(path, Object.assign({ credentials: "same-origin" }, options || {}));
      if (response.status === 401) {
        location.reload(); // the server shows the token form (a stale token asks again)
        throw new Error("The access token is needed.");
      }
      if (RETRIED.includes(response.status) && attempt + 1 < MAX_RETRIES) {
        const why = await errorOf(response);
        await waitRetry(why, response.status, response.headers.get("Retry-After"), attempt, (options || {}).signal);
        continue;
      }
      return response;
    }
  }

  async function getJSON(path) {
    const response = await request(path);
    if (!response.ok) {
      const error = new Error(await errorOf(response));
      error.status = response.status;
      throw error;
    }
    return response.json();
  }

  // ----- recent consults -----
  async function loadConsults() {
    const list = $("consult-list");
    let data;
    try {
      data = await getJSON("/web/consults");
    } catch (error) {
      list.replaceChildren(el("li", { class: "muted", text: `Cannot list consults: ${error.message}` }));
      return;
    }
    const rows = data.consults || [];
    if (!rows.length) {
      list.replaceChildren(el("li", { class: "muted", text: "No consults yet." }));
      return;
    }
    list.replaceChildren(...rows.map((row) => {
      const question = String(row.first_question || "(no question)");
      const link = el("a", {
        href: "/c/" + encodeURIComponent(row.consult_id),
        "aria-current": row.consult_id === consultId ? "page" : null,
        text: question.length > 90 ? question.slice(0, 89) + "…" : question,
      });
      const meta = el("span", { class: "muted small" },
        `${row.updated || ""} UTC · ${row.turns} turn(s) `, statusBadge(row.status));
      return el("li", {}, link, el("br"), meta);
    }));
  }

  function statusBadge(status) {
    const known = ["answered", "insufficient", "unverified", "undecided", "supported", "contradicted"];
    const kind = known.includes(status) ? status : "other";
    return el("span", { class: "badge " + kind, text: status || "—" });
  }

  // ----- a consult -----
  function setConsult(id) {
    consultId = id;
    $("consult-head").hidden = !id;
    if (!id) return;
    const enc = encodeURIComponent(id);
    $("consult-title").textContent = `Consult ${id}`;
    $("permalink").href = `/c/${enc}`;
    $("export-md").href = `/web/consults/${enc}/export.md`;
    $("export-json").href = `/web/consults/${enc}/export.json`;
    if (location.pathname !== `/c/${enc}`) history.replaceState(null, "", `/c/${enc}`);
  }

  function clearConsult() {
    setConsult("");
    history.replaceState(null, "", "/");
    $("turns").replaceChildren();
  }

  async function loadConsult(id, full) {
    const data = await getJSON(`/web/consults/${encodeURIComponent(id)}${full ? "?full=1" : ""}`);
    setConsult(id);
    $("kb-version").textContent = data.kb_version;
    $("mode").textContent = data.mode;
    renderTurns(data.turns || [], full);
    return data;
  }

  function renderTurns(turns, full) {
    const section = $("turns");
    section.replaceChildren(...turns.map((turn) => renderTurn(turn, full)));
  }

  function renderTurn(turn, full) {
    const heading = el("h3", { tabindex: "-1", id: `turn-${turn.index}` }, `${turn.index}. `,
      el("span", { class: "question", text: turn.question }));
    const status = el("p", { class: "status" }, statusBadge(turn.status),
      turn.task ? el("span", { class: "muted small", text: ` task ${turn.task}` }) : null);
    const article = el("article", { class: "turn", "aria-labelledby": `turn-${turn.index}` }, heading, status);
    if (turn.status === "insufficient" && turn.missing && turn.missing.length) {
      article.append(el("p", { class: "missing", text: "Missing: " + turn.missing.join(", ") }));
    }
    for (const warning of turn.warnings || []) article.append(el("p", { class: "warning", text: "⚠ " + warning }));
    if (turn.removed_claims) {
      article.append(el("p", { class: "warning", text: `${turn.removed_claims} unsupported claim(s) removed.` }));
    }
    const answer = el("div", { class: "answer" });
    let list = null;
    for (const block of turn.blocks || []) {
      const node = renderBlock(block, turn);
      if (block.kind === "li") {
        if (!list) { list = el("ul"); answer.append(list); }
        list.append(node);
      } else {
        list = null;
        answer.append(node);
      }
    }
    article.append(answer);
    if ((turn.more || turn.hidden) && !full) {
      const label = turn.more ? `Show all ${turn.more} retrieved passages` : "Show every passage and chain";
      const more = el("button", { type: "button", class: "link", text: label });
      more.addEventListener("click", () => loadConsult(consultId, true) // re-rendered: keep the reader's place
        .then(() => $(`turn-${turn.index}`).focus(), (e) => showMessage(e.message, "error")));
      article.append(more);
    }
    article.append(el("p", { class: "footer muted small",
      text: `KB ${turn.kb_version} · ${turn.mode} mode · ${turn.status}` }));
    article.append(el("p", { class: "safety-note muted small", text: turn.safety_note }));
    return article;
  }

  function renderBlock(block, turn) {
    const tag = block.kind === "h" ? "h4" : block.kind === "li" ? "li" : "p";
    const node = el(tag);
    for (const span of block.spans) {
      if (span.cite) node.append(citeButton(span, turn, node));
      else node.append(span.bold ? el("strong", { text: span.text }) : document.createTextNode(span.text));
    }
    return node;
  }

  function citeButton(span, turn, block) {
    const citation = (turn.citations || []).find((c) => c.n === span.cite);
    const kind = citation && citation.kind === "chain" ? "chain" : "passage";
    const button = el("button", {
      type: "button", class: `cite ${kind}`, "aria-expanded": "false",
      "aria-label": `Citation ${span.cite}: ${kind === "chain" ? "knowledge-graph chain" : "passage"} ${span.id}`,
      "data-id": span.id, text: `[${span.cite}]`,
    });
    button.addEventListener("click", () => toggleCitation(button, citation, span, block));
    return button;
  }

  function toggleCitation(button, citation, span, block) {
    const open = block.querySelector(":scope > .citation");
    const wasThis = open && open.dataset.n === String(span.cite) && open.dataset.hl === String(span.hl);
    if (open) {
      open.remove();
      block.querySelectorAll(":scope > .cite").forEach((b) => b.setAttribute("aria-expanded", "false"));
    }
    if (wasThis || !citation) return;
    const panel = citation.kind === "chain" ? chainPanel(citation) : passagePanel(citation, span.hl);
    panel.dataset.n = String(span.cite);
    panel.dataset.hl = String(span.hl);
    const close = el("button", { type: "button", class: "close", "aria-label": "Close the citation", text: "×" });
    close.addEventListener("click", () => { panel.remove(); button.setAttribute("aria-expanded", "false"); button.focus(); });
    panel.prepend(close);
    block.append(panel);
    button.setAttribute("aria-expanded", "true");
  }

  function passagePanel(citation, hl) {
    const panel = el("div", { class: "citation passage", role: "region", "aria-label": `Passage ${citation.n}` });
    panel.append(el("p", { class: "cite-title" }, el("strong", { text: `[${citation.n}] ` }),
      citation.title || citation.document_id));
    const where = el("p", { class: "muted small" }, `${citation.source} · document ${citation.document_id} · ${citation.id}`);
    if (citation.url) {
      where.append(" · ");
      where.append(citation.link
        ? el("a", { href: citation.url, rel: "noopener noreferrer", target: "_blank", text: citation.url })
        : el("span", { text: citation.url }));
    }
    panel.append(where);
    const text = el("blockquote", { class: "passage-text" });
    const passage = citation.text || "(This passage is no longer in the knowledge base.)";
    if (hl && hl.length === 2) {
      text.append(passage.slice(0, hl[0]), el("mark", { text: passage.slice(hl[0], hl[1]) }), passage.slice(hl[1]));
    } else {
      text.append(passage);
    }
    panel.append(text);
    return panel;
  }

  function chainPanel(citation) {
    const panel = el("div", { class: "citation chain", role: "region", "aria-label": `Knowledge-graph chain ${citation.n}` });
    panel.append(el("p", { class: "cite-title" }, el("strong", { text: `[${citation.n}] ` }),
      "Knowledge-graph chain ", el("code", { text: citation.id })));
    panel.append(el("div", { class: "graph-scroll" }, drawChain(citation)));
    panel.append(el("p", { class: "chain-text", text: citation.text }));
    const sources = [...new Set((citation.edges || []).flatMap((e) => e.sources || []))];
    panel.append(el("p", { class: "muted small", text: "Source datasets: " + (sources.join(", ") || "not recorded") }));
    return panel;
  }

  const TYPES = ["disease", "compound", "gene", "symptom", "anatomy", "pathway", "biologicalprocess",
    "sideeffect", "pharmacologicclass", "molecularfunction", "cellularcomponent"];

  function drawChain(citation) {
    const nodes = citation.nodes || [];
    const edges = citation.edges || [];
    const charW = 7.4, boxH = 46, top = 20, pad = 10;
    const widths = nodes.map((n) => Math.max(90, Math.max(n.name.length, (n.type || "").length) * charW + 2 * pad));
    const gaps = edges.map((e) => Math.max(110, e.relation.length * 7 + 30,
      (e.sources || []).join(", ").length * 6 + 20));
    const total = widths.reduce((a, b) => a + b, 0) + gaps.reduce((a, b) => a + b, 0) + 2;
    const height = top + boxH + 4;
    const uid = `m${citation.n}-${Math.random().toString(36).slice(2, 8)}`;
    const root = svg("svg", { class: "chain-graph", viewBox: `0 0 ${total} ${height}`, width: total, height,
      role: "img", "aria-label": citation.text });
    const defs = svg("defs");
    const marker = svg("marker", { id: uid, viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 8,
      markerHeight: 8, orient: "auto-start-reverse" });
    marker.append(svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" }));
    defs.append(marker);
    root.append(defs);
    let x = 1;
    nodes.forEach((node, i) => {
      const type = (node.type || "").toLowerCase().replace(/[^a-z]/g, "");
      const group = svg("g", { class: "node t-" + (TYPES.includes(type) ? type : "other") });
      group.append(svg("rect", { x, y: top, width: widths[i], height: boxH, rx: 8 }));
      group.append(svg("text", { x: x + widths[i] / 2, y: top + 20, "text-anchor": "middle", class: "name" }, node.name));
      group.append(svg("text", { x: x + widths[i] / 2, y: top + 37, "text-anchor": "middle", class: "type" },
        node.type || "entity"));
      root.append(group);
      x += widths[i];
      if (i < edges.length) {
        const edge = edges[i];
        const y = top + boxH / 2;
        const line = svg("line", { x1: x + 2, y1: y, x2: x + gaps[i] - 2, y2: y, class: "edge" });
        line.setAttribute(edge.forward ? "marker-end" : "marker-start", `url(#${uid})`);
        root.append(line);
        root.append(svg("text", { x: x + gaps[i] / 2, y: y - 8, "text-anchor": "middle", class: "relation" }, edge.relation));
        root.append(svg("text", { x: x + gaps[i] / 2, y: y + 18, "text-anchor": "middle", class: "sources" },
          (edge.sources || []).join(", ")));
        x += gaps[i];
      }
    });
    return root;
  }

  // ----- asking -----
  function startRunning(question) {
    $("running").hidden = false;
    $("running-question").textContent = question;
    $("steps").replaceChildren();
    $("draft").textContent = "";
    $("draft").hidden = true;
    $("send").disabled = true;
    $("stop").disabled = false;
    showMessage("");
  }

  function endRunning() {
    $("running").hidden = true;
    $("send").disabled = false;
    controller = null;
    stopping = false;
  }

  async function ask(question, task) {
    if (!question.trim()) {
      showMessage("Type a question first: the question is empty.", "error");
      $("question").focus();
      return;
    }
    startRunning(question);
    const before = $("turns").querySelectorAll("article.turn").length;
    const first = !consultId;
    controller = new AbortController();
    let finished = false;
    try {
      for (let attempt = 0; ; attempt++) {
        const path = consultId ? `/v1/consults/${encodeURIComponent(consultId)}/turns?stream=true` : "/v1/consults?stream=true";
        const response = await request(path, {
          method: "POST", signal: controller.signal, body: JSON.stringify({ question, task }),
          headers: { "Content-Type": "application/json", "Accept": "text/event-stream", "X-EviGraph-CSRF": csrf },
        });
        if (!response.ok) {
          showMessage(await errorOf(response), "error");
          return;
        }
        $("question").value = "";
        const end = await readEvents(response);
        finished = end !== null;
        if (!end || end.name !== "error" || end.data.status === 499) break;
        if (first) clearConsult(); // a failed first turn leaves no consult (the server deletes it)
        if (!RETRIED.includes(end.data.status) || !end.data.retry_after || attempt + 1 >= MAX_RETRIES) break;
        await waitRetry(end.data.error, end.data.status, end.data.retry_after, attempt, controller.signal);
      }
    } catch (error) {
      if (stopping) { finished = true; showMessage("Stopped.", "info"); }
      else if (!consultId) showMessage(`Cannot reach the server (${error.message}).`, "error");
    } finally {
      endRunning();
    }
    if (!finished && consultId) await reconnect(before);
  }

  // Server-Sent Events over fetch (EventSource cannot POST): the event that ended the turn, null if the
  // stream broke before one came.
  async function readEvents(response) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return null;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const raw = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let name = "message", data = "";
        for (const line of raw.split("\n")) {
          if (line.startsWith("event:")) name = line.slice(6).trim();
          else if (line.startsWith("data:")) data += line.slice(5).trim();
        }
        const parsed = data ? JSON.parse(data) : {};
        if (await onEvent(name, parsed)) return { name, data: parsed };
      }
    }
  }

  async function onEvent(name, data) {
    if (name === "consult") {
      setConsult(data.consult_id);
    } else if (name === "step") {
      $("steps").append(el("li", { class: "step step-" + String(data.step || "").replace(/[^a-z_]/g, ""),
        text: data.line || data.step }));
    } else if (name === "token") {
      $("draft").hidden = false;
      $("draft").append(String(data.text || ""));
    } else if (name === "turn") {
      await showStored();
      return true;
    } else if (name === "error") {
      if (data.status === 499) {
        showMessage(data.error, "info");
        await showStored(true);
      } else {
        showMessage(data.error, "error");
      }
      return true;
    }
    return false;
  }

  async function showStored(afterStop) {
    try {
      await loadConsult(consultId);
      const turns = $("turns").querySelectorAll("article.turn h3");
      if (turns.length) turns[turns.length - 1].focus();
    } catch (error) {
      if (afterStop && error.status === 404) { // a new consult stopped before its first turn: nothing kept
        clearConsult();
        showMessage("Stopped. The new consult had no finished turn, so nothing was kept: ask again.", "info");
      } else {
        showMessage(error.message, "error");
      }
    }
    loadConsults();
  }

  // The stream broke (server restart, network): read the consult back until the server answers again.
  async function reconnect(before) {
    for (let attempt = 0, wait = 1000; attempt < 40; attempt++, wait = Math.min(wait * 2, 8000)) {
      showMessage(`The connection was lost: reconnecting (attempt ${attempt + 1})…`, "busy");
      await sleep(wait);
      try {
        const data = await loadConsult(consultId);
        if (data.running) { wait = 1000; continue; }
        const now = (data.turns || []).length;
        showMessage(now > before
          ? "Reconnected: the turn finished and is shown from the stored consult."
          : "Reconnected: the turn did not finish (the server restarted?). The stored consult is shown; ask again.",
        "info");
        loadConsults();
        return;
      } catch (error) {
        if (error.status === 404) { showMessage("The consult is gone from the server.", "error"); return; }
      }
    }
    showMessage("The server did not come back. Reload the page later.", "error");
  }

  async function stop() {
    if (!controller) return;
    stopping = true;
    $("stop").disabled = true;
    if (!consultId) { controller.abort(); return; }
    try {
      const response = await request(`/web/consults/${encodeURIComponent(consultId)}/stop`, {
        method: "POST", headers: { "X-EviGraph-CSRF": csrf },
      });
      const data = response.ok ? await response.json() : { stopped: false };
      if (!data.stopped && controller) controller.abort();
    } catch (_) {
      if (controller) controller.abort();
    }
  }

  async function openOnLoad() {
    if (!consultId) return;
    try {
      let data = await loadConsult(consultId);
      while (data.running) {
        showMessage("A turn of this consult is still running; it is shown when it ends.", "busy");
        await sleep(1500);
        data = await loadConsult(consultId);
      }
      showMessage("");
    } catch (error) {
      showMessage(error.message, "error");
    }
  }

  function init() {
    const form = $("ask");
    if (!form) return;
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (!controller) ask($("question").value, $("task").value);
    });
    $("question").addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        form.requestSubmit();
      }
    });
    $("stop").addEventListener("click", stop);
    document.addEventListener("keydown", (event) => {
      if (event.key !== "Escape") return;
      const active = document.activeElement;
      if (!active) return;
      const panel = active.closest(".citation") ||
        (active.classList.contains("cite") && active.parentElement.querySelector(":scope > .citation"));
      if (panel) panel.querySelector(".close").click();
    });
    setConsult(consultId);
    loadConsults();
    openOnLoad();
  }

  init();
})();
