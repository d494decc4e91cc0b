// agentmem memory inspector: plain JavaScript, no framework, no build step.
// Every data call goes to the /v1 routes of this origin with the caller's auth (a bearer token,
// and/or the scope headers the local server accepts from loopback). Memory content is untrusted:
// everything is rendered with textContent / DOM nodes, never parsed as HTML.
"use strict";

const state = { token: "", tenant: "", user: "", memoriesCursor: null, conflictsCursor: null, deadCursor: null };
const $ = (id) => document.getElementById(id);

class ApiError extends Error {
  constructor(status, body, path) {
    const code = body && body.error ? body.error : "http_" + status;
    const message = body && body.message ? body.message : "no details";
    super(status + " " + code + ": " + message);
    this.status = status;
    this.body = body;
    this.path = path;
  }
  // The server has no such route at all (a helper's route not merged here): not an error of the data.
  get routeMissing() {
    return this.status === 404 && (!this.body || this.body.message === "no such route");
  }
}

async function api(method, path, body) {
  const headers = { Accept: "application/json" };
  if (state.token) headers.Authorization = "Bearer " + state.token;
  if (state.tenant) headers["X-Tenant-Id"] = state.tenant;
  if (state.user) headers["X-User-Id"] = state.user;
  const init = { method, headers, credentials: "omit", cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch (_) {
    data = null;
  }
  if (!response.ok) throw new ApiError(response.status, data, path);
  return data;
}

function query(params) {
  const q = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== "") q.set(key, String(value));
  }
  const text = q.toString();
  return text ? "?" + text : "";
}

// ------------------------------------------------------------------ DOM helpers (no HTML parsing)

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "text") node.textContent = String(value);
    else if (key === "className") node.className = value;
    else if (key === "onclick") node.addEventListener("click", value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function clear(node) {
  node.replaceChildren();
  return node;
}

function when(value) {
  if (!value) return "";
  return String(value).replace("T", " ").replace(/\.\d+/, "").replace("+00:00", "Z");
}

function say(text, kind) {
  const status = $("status");
  status.textContent = text;
  status.className = "status" + (kind ? " " + kind : "");
}

function fail(error, note) {
  const text = error instanceof ApiError ? error.message : "request failed: " + error;
  if (note) note.textContent = text;
  say(text, "error");
}

function unavailable(note, tbody, what) {
  if (tbody) clear(tbody);
  note.textContent = what + ": not available on this server.";
  note.className = "unavailable";
}

function noted(note, text) {
  note.textContent = text;
  note.className = "muted";
}

// ------------------------------------------------------------------ confirmation step

// Resolves true when the user confirms. With `typed`, the user must type that exact text first.
function confirmStep(text, typed) {
  const dialog = $("confirm");
  const ok = $("confirm-ok");
  const input = $("confirm-typed");
  $("confirm-text").textContent = text;
  $("confirm-typed-label").hidden = !typed;
  $("confirm-typed-hint").textContent = typed ? "Type “" + typed + "” to confirm: " : "";
  input.value = "";
  ok.disabled = Boolean(typed);
  const check = () => { ok.disabled = Boolean(typed) && input.value !== typed; };
  input.addEventListener("input", check);
  return new Promise((resolve) => {
    dialog.addEventListener("close", function done() {
      dialog.removeEventListener("close", done);
      input.removeEventListener("input", check);
      resolve(dialog.returnValue === "ok" && (!typed || input.value === typed));
    });
    dialog.returnValue = "";
    dialog.showModal();
  });
}

// ------------------------------------------------------------------ connection and tabs

async function connect(event) {
  event.preventDefault();
  state.token = $("token").value.trim();
  state.tenant = $("tenant").value.trim();
  state.user = $("user").value.trim();
  sessionStorage.setItem("agentmem.scope", JSON.stringify({ tenant: state.tenant, user: state.user }));
  try {
    const health = await api("GET", "/v1/health");
    say("Connected: backend " + health.backend + ", embedder " + health.embedder +
        (state.user ? ", user " + (state.tenant ? state.tenant + "/" : "") + state.user : ""), "ok");
  } catch (error) {
    $("tabs").hidden = true;  // nothing shown for a caller the server refused
    for (const section of document.querySelectorAll(".view")) section.hidden = true;
    return fail(error);
  }
  $("tabs").hidden = false;
  $("erase-who").textContent = state.user || "(the token's user)";
  show("memories");
}

const loaders = {
  memories: () => loadMemories(false),
  conflicts: () => loadConflicts(false),
  audit: () => loadAudit(),
  "dead-letters": () => loadDeadLetters(false),
  user: () => null,
};

function show(view) {
  for (const tab of document.querySelectorAll(".tab")) {
    tab.setAttribute("aria-selected", String(tab.dataset.view === view));
  }
  for (const section of document.querySelectorAll(".view")) section.hidden = section.id !== "view-" + view;
  loaders[view]();
}

// ------------------------------------------------------------------ memories, search, detail

function memoryRow(memory) {
  const actions = el("td", { className: "actions" },
    el("button", { type: "button", text: "History", onclick: () => openHistory(memory) }),
    el("button", {
      type: "button",
      text: memory.pinned ? "Unpin" : "Pin",
      onclick: () => act(memory.pinned ? "Unpin" : "Pin", memory, () =>
        api("PATCH", "/v1/memories/" + encodeURIComponent(memory.id), { pinned: !memory.pinned })),
    }),
    memory.layer === "permanent" ? null : el("button", {
      type: "button",
      text: "Make permanent",
      onclick: () => act("Make permanent", memory, () =>
        api("POST", "/v1/memories/" + encodeURIComponent(memory.id) + "/permanent")),
    }),
    memory.status === "deleted" ? null : el("button", {
      type: "button",
      className: "danger",
      text: "Delete",
      onclick: () => act("Delete", memory, () =>
        api("DELETE", "/v1/memories/" + encodeURIComponent(memory.id))),
    }),
  );
  const content = el("td", { className: "content" },
    el("button", { type: "button", className: "link", text: memory.content, onclick: () => openDetail(memory) }));
  if (memory.pinned) content.append(el("span", { className: "badge", text: "pinned" }));
  return el("tr", { dataset: { memoryId: memory.id } },
    content,
    el("td", { text: memory.category }),
    el("td", { text: memory.layer }),
    el("td", { text: memory.status }),
    el("td", { text: memory.score === null || memory.score === undefined ? "" : memory.score.toFixed(3) }),
    el("td", { text: when(memory.updated_at || memory.created_at) }),
    actions,
  );
}

async function act(verb, memory, call) {
  const excerpt = memory.content.length > 80 ? memory.content.slice(0, 80) + "…" : memory.content;
  if (!(await confirmStep(verb + " this memory?\n“" + excerpt + "”"))) return say(verb + ": cancelled.");
  try {
    await call();
    say(verb + ": done (" + memory.id + ").", "ok");
  } catch (error) {
    return fail(error);
  }
  await loadMemories(false);
}

// Whether an ErrorOut's details name the field (a server that does not know it refuses it).
function mentions(body, name) {
  return Boolean(body && Array.isArray(body.details) && body.details.some((d) => (d.loc || []).includes(name)));
}

function layerFilter(memories) {
  const layer = $("filter-layer").value;
  return layer ? memories.filter((m) => m.layer === layer) : memories;
}

async function loadMemories(more) {
  const tbody = $("memories").tBodies[0];
  const note = $("memories-note");
  const search = $("search").value.trim();
  const category = $("filter-category").value;
  if (!more) {
    clear(tbody);
    state.memoriesCursor = null;
    $("detail").hidden = true;
  }
  try {
    let memories;
    if (search) {
      const body = { query: search, k: 20 };
      if (category) body.categories = [category];
      const asOf = $("as-of").value;
      if (asOf) body.as_of = new Date(asOf).toISOString();  // the input is local time
      let result;
      try {
        result = await api("POST", "/v1/recall", body);
      } catch (error) {
        if (asOf && error instanceof ApiError && mentions(error.body, "as_of")) {
          return unavailable(note, tbody, "Time travel (as of)");
        }
        throw error;
      }
      // recall answers the active memories only: the status filter applies to the list
      memories = result.memories;
      state.memoriesCursor = null;
      noted(note, memories.length + " recalled for “" + search + "”" + (asOf ? " as of " + body.as_of : "") +
        ", best first" +
        (result.degraded.length ? " (degraded: " + result.degraded.join(", ") + ")" : "") +
        ". Click a memory to see why it was recalled.");
    } else {
      const page = await api("GET", "/v1/memories" + query({
        status: $("filter-status").value, category, limit: 50, cursor: more ? state.memoriesCursor : null,
      }));
      memories = page.memories;
      state.memoriesCursor = page.next_cursor;
      noted(note, "");
    }
    const shown = layerFilter(memories);
    for (const memory of shown) tbody.append(memoryRow(memory));
    if (!tbody.rows.length) noted(note, note.textContent || "No memories match.");
    $("memories-more").hidden = !state.memoriesCursor;
  } catch (error) {
    fail(error, note);
  }
}

function field(list, name, value) {
  if (value === null || value === undefined || value === "" || (Array.isArray(value) && !value.length)) return;
  list.append(el("dt", { text: name }), el("dd", { text: typeof value === "object" ? JSON.stringify(value) : String(value) }));
}

function openDetail(memory) {
  $("detail").hidden = false;
  for (const tr of $("memories").tBodies[0].rows) tr.classList.toggle("selected", tr.dataset.memoryId === memory.id);
  const fields = clear($("detail-fields"));
  field(fields, "id", memory.id);
  field(fields, "content", memory.content);
  for (const name of ["category", "layer", "status", "pinned", "importance", "importance_source", "confidence",
    "source", "version", "tags", "key", "value"]) field(fields, name, memory[name]);
  for (const name of ["created_at", "updated_at", "valid_from", "valid_to"]) field(fields, name, when(memory[name]));
  field(fields, "supersedes", memory.supersedes);
  field(fields, "superseded_by", memory.superseded_by);
  field(fields, "source_refs", memory.source_refs);
  $("history").hidden = true;
  explain(memory);
}

// A recall explained: the score, each component (a bar of its share), and the channels that found it.
function explain(memory) {
  const section = $("explain");
  section.hidden = !memory.score_components;
  if (!memory.score_components) return;
  $("explain-score").textContent = "Score " + memory.score.toFixed(4) + ", from these components (each 0–1), weighted by the recall settings.";
  const channels = clear($("explain-channels"));
  for (const channel of memory.channels || []) channels.append(el("span", { className: "badge", text: channel }));
  if (!channels.childNodes.length) channels.textContent = "—";
  const tbody = clear($("explain-components").tBodies[0]);
  const entries = Object.entries(memory.score_components).sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]));
  for (const [name, value] of entries) {  // each component is in [0, 1]
    tbody.append(el("tr", {},
      el("td", { text: name }),
      el("td", { text: value.toFixed(4) }),
      el("td", {}, el("meter", { min: 0, max: 1, value: Math.min(1, Math.max(0, value)), title: String(value) }))));
  }
}

async function openHistory(memory) {
  openDetail(memory);
  const section = $("history");
  const note = $("history-note");
  const list = clear($("history-entries"));
  section.hidden = false;
  noted(note, "Loading…");
  try {
    const history = await api("GET", "/v1/memories/" + encodeURIComponent(memory.id) + "/history");
    noted(note, history.entries.length + " version(s), oldest first.");
    for (const entry of history.entries) {
      const current = entry.memory_id === memory.id;
      list.append(el("li", { className: current ? "current" : null },
        el("div", { className: "content", text: entry.content }),
        el("div", { className: "muted", text: [entry.status, entry.layer, entry.category,
          "v" + entry.version, "valid " + when(entry.valid_from) + " → " + (when(entry.valid_to) || "now")].join(" · ") }),
        entry.superseded_by ? el("div", { className: "muted", text: "superseded by " + entry.superseded_by }) : null));
    }
  } catch (error) {
    if (error instanceof ApiError && error.routeMissing) unavailable(note, null, "History");
    else fail(error, note);
  }
}

// ------------------------------------------------------------------ conflicts

async function loadConflicts(more) {
  const tbody = $("conflicts").tBodies[0];
  const note = $("conflicts-note");
  if (!more) { clear(tbody); state.conflictsCursor = null; }
  try {
    const page = await api("GET", "/v1/conflicts" + query({
      status: $("conflict-status").value, limit: 50, cursor: more ? state.conflictsCursor : null,
    }));
    state.conflictsCursor = page.next_cursor;
    for (const conflict of page.conflicts) tbody.append(conflictRow(conflict));
    noted(note, tbody.rows.length ? "" : "No " + $("conflict-status").value + " conflicts.");
    $("conflicts-more").hidden = !state.conflictsCursor;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) unavailable(note, tbody, "Conflicts");
    else fail(error, note);
  }
}

function conflictRow(conflict) {
  const decide = (decision) => async () => {
    const verb = decision === "confirm" ? "Confirm (replace the kept memory)" : "Reject (keep the memory)";
    if (!(await confirmStep(verb + "?\nProposed: “" + conflict.proposed + "”"))) return say("Cancelled.");
    try {
      await api("POST", "/v1/conflicts/" + encodeURIComponent(conflict.conflict_id), { decision });
      say("Conflict " + decision + "ed.", "ok");
    } catch (error) {
      return fail(error);
    }
    await loadConflicts(false);
  };
  const pending = conflict.status === "pending";
  return el("tr", { dataset: { conflictId: conflict.conflict_id } },
    el("td", { className: "content", text: conflict.existing }),
    el("td", { className: "content", text: conflict.proposed }),
    el("td", { text: conflict.status }),
    el("td", { text: when(conflict.created_at) }),
    el("td", { className: "actions" },
      pending ? el("button", { type: "button", text: "Confirm", onclick: decide("confirm") }) : null,
      pending ? el("button", { type: "button", text: "Reject", onclick: decide("reject") }) : null,
      pending ? null : el("span", { className: "muted", text: when(conflict.resolved_at) })));
}

// ------------------------------------------------------------------ audit trail

async function loadAudit() {
  const tbody = clear($("audit").tBodies[0]);
  const note = $("audit-note");
  try {
    const trail = await api("GET", "/v1/audit" + query({
      action: $("audit-action").value.trim(), limit: $("audit-limit").value || 100,
    }));
    for (const e of trail.events) {
      const details = e.details && Object.keys(e.details).length ? JSON.stringify(e.details) : "";
      tbody.append(el("tr", {},
        el("td", { text: when(e.at) }),
        el("td", { text: e.action }),
        el("td", { className: "mono", text: e.memory_id || "" }),
        el("td", { text: e.reason || "" }),
        el("td", { className: "mono", text: details })));
    }
    noted(note, trail.events.length + " event(s), newest first.");
  } catch (error) {
    fail(error, note);
  }
}

// ------------------------------------------------------------------ dead letters

async function loadDeadLetters(more) {
  const tbody = $("dead-letters").tBodies[0];
  const note = $("dead-letters-note");
  if (!more) { clear(tbody); state.deadCursor = null; }
  try {
    const page = await api("GET", "/v1/dead-letters" + query({ limit: 50, cursor: more ? state.deadCursor : null }));
    state.deadCursor = page.next_cursor;
    for (const letter of page.dead_letters) {
      tbody.append(el("tr", { dataset: { messageId: letter.message_id } },
        el("td", { className: "mono", text: letter.message_id }),
        el("td", { className: "mono", text: letter.session_id || "" }),
        el("td", { text: letter.reason }),
        el("td", { text: letter.attempts }),
        el("td", { text: when(letter.failed_at) }),
        el("td", { className: "actions" }, el("button", {
          type: "button", text: "Redrive", onclick: () => redrive(letter),
        }))));
    }
    noted(note, tbody.rows.length ? "" : "No dead letters.");
    $("dead-letters-more").hidden = !state.deadCursor;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) unavailable(note, tbody, "Dead letters");
    else fail(error, note);
  }
}

async function redrive(letter) {
  if (!(await confirmStep("Send turn " + letter.message_id + " back to the ingest queue?"))) return say("Cancelled.");
  try {
    const result = await api("POST", "/v1/dead-letters/" + encodeURIComponent(letter.message_id) + "/redrive");
    say("Redriven: " + result.redriven + ".", "ok");
  } catch (error) {
    return fail(error);
  }
  await loadDeadLetters(false);
}

// ------------------------------------------------------------------ erase the user

async function eraseUser() {
  const user = state.user;
  if (!user) return say("Erase: name the user in the connection box first.", "error");
  if (!(await confirmStep("Erase everything stored about " + user + "? This cannot be undone.", user))) {
    return say("Erase: cancelled.");
  }
  try {
    const report = await api("DELETE", "/v1/users/" + encodeURIComponent(user));
    const pre = $("erase-report");
    pre.hidden = false;
    pre.textContent = JSON.stringify(report, null, 2);
    say("Erased " + user + ": " + report.memories + " memories.", "ok");
  } catch (error) {
    fail(error);
  }
}

// ------------------------------------------------------------------ wiring

function submitTo(id, handler) {
  $(id).addEventListener("submit", (event) => { event.preventDefault(); handler(); });
}

document.addEventListener("DOMContentLoaded", () => {
  $("base-url").value = window.location.origin;
  try {
    const saved = JSON.parse(sessionStorage.getItem("agentmem.scope") || "{}");
    $("tenant").value = saved.tenant || "";
    $("user").value = saved.user || "";
  } catch (_) { /* nothing saved */ }
  $("connect-form").addEventListener("submit", connect);
  for (const tab of document.querySelectorAll(".tab")) tab.addEventListener("click", () => show(tab.dataset.view));
  submitTo("memory-filters", () => loadMemories(false));
  submitTo("conflict-filters", () => loadConflicts(false));
  submitTo("audit-filters", loadAudit);
  $("filter-status").addEventListener("change", () => loadMemories(false));
  $("filter-category").addEventListener("change", () => loadMemories(false));
  $("filter-layer").addEventListener("change", () => loadMemories(false));
  $("memories-more").addEventListener("click", () => loadMemories(true));
  $("conflicts-more").addEventListener("click", () => loadConflicts(true));
  $("dead-letters-more").addEventListener("click", () => loadDeadLetters(true));
  $("erase-user").addEventListener("click", eraseUser);
});
