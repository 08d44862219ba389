// Start-up: the state snapshot, then the event stream (replayed from the start, so a page
// opened or reloaded mid-session shows the whole conversation), the tabs and the composer.
import { auditRow, emptyState, handle, renderStatus } from "./chat.js";
import { api } from "./dom.js";
import * as inspector from "./inspector.js";
import { renderTasks } from "./tasks.js";

// The access token is in the address only until the cookie is set: drop it from history.
if (location.search.includes("token=")) history.replaceState(null, "", "/");

const prompt = document.getElementById("prompt");
const live = document.getElementById("live");

function composer(text, from) {
  prompt.value = text;
  prompt.focus();
  prompt.title = `suggested by the ${from}: send it if you agree`;
}

async function send(event) {
  event?.preventDefault();
  const text = prompt.value.trim();
  if (!text) return;
  try {
    await api.post("/api/chat", { text });
    prompt.value = "";
    prompt.title = "";
  } catch (err) {
    handle({ kind: "note", level: "error", text: err.message }, composer);
  }
}

function show(name) {
  for (const t of document.querySelectorAll(".tabs button")) t.setAttribute("aria-selected", t.dataset.tab === name ? "true" : "false");
  for (const view of document.querySelectorAll(".view")) view.hidden = view.id !== name;
}

function tabs() {
  for (const tab of document.querySelectorAll(".tabs button")) tab.addEventListener("click", () => show(tab.dataset.tab));
}

// `mcpkit dev`: what the server file's reload did, one line in the header (any tab).
function devEvent(ev) {
  const line = document.getElementById("dev-status");
  line.hidden = false;
  line.textContent = ev.text;
  line.className = `dev-status ${ev.level}`;
  if (ev.reloaded) inspector.reloaded(ev.server);
}

async function main() {
  tabs();
  inspector.setup();
  document.getElementById("composer").addEventListener("submit", send);
  prompt.addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey) send(e); });
  const state = await api.get("/api/state");
  document.getElementById("who").textContent = `${state.modelHint ? "no model" : `model ${state.model}`}${state.agent ? ` · agent ${state.agent}` : ""}`;
  renderStatus(state.servers, state.pins);
  renderTasks(state.tasks);
  emptyState(state.tools, state.modelHint, composer);
  inspector.servers(state.servers);
  if (state.view === "inspector") {
    show("inspector");
    if (state.servers.length) inspector.select(state.servers[0].name);
  }
  for (const row of state.audit) auditRow(row);
  document.getElementById("audit-file").textContent = state.auditFile ? `also written to ${state.auditFile}` : "not written to a file (set host.audit in the config)";
  await Promise.all(state.servers.map((s) => inspector.loadWire(s.name)));
  const events = api.events(0);
  events.onopen = () => { live.textContent = "live"; live.className = "live on"; };
  events.onerror = () => { live.textContent = "reconnecting…"; live.className = "live off"; };
  events.onmessage = (message) => {
    const ev = JSON.parse(message.data);
    if (ev.kind === "rpc") inspector.rpcEvent(ev);
    else if (ev.kind === "listen") inspector.listenEvent(ev);
    else if (ev.kind === "dev") devEvent(ev);
    else {
      if (ev.kind === "status") inspector.servers(ev.servers);
      handle(ev, composer);
    }
  };
  document.body.dataset.ready = "true";
}

main().catch((err) => handle({ kind: "note", level: "error", text: `the page failed to start: ${err.message}` }, composer));
