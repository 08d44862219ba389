// The inspector: browse a server's tools, resources, templates and prompts; call a tool from a
// form generated from its inputSchema; read a resource; run a prompt; follow
// `subscriptions/listen` live; and see the raw JSON-RPC of every exchange.
import { AppView } from "./apps.js";
import { api, fill, h, json } from "./dom.js";
import { schemaForm } from "./forms.js";
import { resultView } from "./results.js";
import { entryEl, findExchange, messages, record } from "./wire.js";

export { loadWire } from "./wire.js";

const state = { server: null, sub: "tools", data: null, current: null, listens: new Map() };
const shown = new Set();  // the AppViews in the detail pane (disposed when it is redrawn)
const listEl = document.getElementById("inspect-list");
const detailEl = document.getElementById("inspect-detail");
let forms = 0;

const upStates = ["ready", "degraded"];
const lastState = new Map();  // server → its state in the last status

export function servers(list) {
  for (const s of list) {  // back up after a restart or reconnect: its lists may have changed
    const before = lastState.get(s.name);
    lastState.set(s.name, s.state);
    if (before && !upStates.includes(before) && upStates.includes(s.state)) reloaded(s.name);
  }
  const nav = document.getElementById("inspect-servers");
  fill(nav, h("h2", {}, "Servers"), ...list.map((s) => h("button", {
    "aria-current": s.name === state.server ? "true" : "false",
    dataset: { server: s.name },
    onclick: () => select(s.name),
  }, s.name, " ", h("span", { class: `badge ${s.state}` }, s.state))));
}

export async function select(name) {
  state.server = name;
  state.current = null;
  for (const b of document.querySelectorAll("#inspect-servers button")) b.setAttribute("aria-current", b.dataset.server === name ? "true" : "false");
  fill(listEl, h("p", { class: "muted" }, "Loading…"));
  clearApps();
  fill(detailEl);
  try {
    state.data = await api.get(`/api/inspect/${encodeURIComponent(name)}`);
  } catch (err) {
    state.data = null;
    fill(listEl, h("p", { class: "form-error" }, err.message));
    return;
  }
  render();
}

// The server restarted (`mcpkit dev` reload, reconnect): show its new lists, keeping the tab
// and, where it still exists, the item.
export async function reloaded(name) {
  if (state.server !== name) return;
  const current = state.current;
  const picked = current !== null ? (state.data?.[state.sub] || [])[current] : null;
  try {
    state.data = await api.get(`/api/inspect/${encodeURIComponent(name)}`);
  } catch (err) {
    fill(listEl, h("p", { class: "form-error" }, err.message));
    return;
  }
  const again = picked ? (state.data[state.sub] || []).findIndex((i) => (i.name ?? i.uri) === (picked.name ?? picked.uri)) : -1;
  state.current = again >= 0 ? again : null;
  render();
}

export function setup() {
  for (const tab of document.querySelectorAll("#inspect-tabs button")) {
    tab.addEventListener("click", () => {
      state.sub = tab.dataset.sub;
      state.current = null;
      for (const t of document.querySelectorAll("#inspect-tabs button")) t.setAttribute("aria-selected", t === tab ? "true" : "false");
      render();
    });
  }
}

function clearApps() {
  for (const app of shown) app.dispose();
  shown.clear();
}

function render() {
  if (!state.server) return;
  clearApps();
  if (state.sub === "listen") { renderListen(); return; }
  if (state.sub === "wire") { renderWire(); return; }
  const data = state.data;
  if (!data) return;
  const items = data[state.sub] || [];
  const error = data.errors?.[state.sub];
  const label = { tools: (t) => t.name, resources: (r) => r.name || r.uri, templates: (t) => t.name || t.uriTemplate, prompts: (p) => p.name }[state.sub];
  const sub = { tools: (t) => t.title || "", resources: (r) => r.uri, templates: (t) => t.uriTemplate, prompts: (p) => p.description || "" }[state.sub];
  fill(listEl,
    error ? h("p", { class: "form-error" }, error) : null,
    items.length ? null : h("p", { class: "muted" }, `No ${state.sub}.`),
    ...items.map((item, i) => h("button", {
      dataset: { item: label(item) },
      "aria-current": state.current === i ? "true" : "false",
      onclick: () => { state.current = i; render(); },
    }, h("span", {}, label(item), " ", ...(state.sub === "tools" ? toolBadges(item) : [])), h("span", { class: "sub" }, sub(item)))));
  if (state.current !== null && items[state.current]) {
    const item = items[state.current];
    fill(detailEl, ...{ tools: toolDetail, resources: resourceDetail, templates: templateDetail, prompts: promptDetail }[state.sub](item));
  } else {
    fill(detailEl, h("p", { class: "muted" }, "Pick an item."));
  }
}

function toolBadges(tool) {
  const x = tool["x-host"] || {};
  return [
    x.model ? null : h("span", { class: "badge" }, x.withheld ? "withheld" : "not for the model"),
    x.app && x.ui ? h("span", { class: "badge app" }, "app") : null,
    x.app ? null : h("span", { class: "badge" }, "not for apps"),
  ];
}

function outcome(method, answer) {
  if (answer.error) return h("p", { class: "form-error", dataset: { role: "error" } }, answer.error);
  const r = answer.result || {};
  if (method !== "tools/call") return h("div", { dataset: { role: "result" } }, h("h3", {}, "Result"), h("pre", {}, json(r)));
  return h("div", { class: "call-outcome" }, h("h3", {}, "Result"),
    resultView({ content: r.content || [], structured: r.structuredContent, isError: r.isError === true }),
    h("details", { dataset: { role: "raw" } }, h("summary", {}, "raw result"), h("pre", {}, json(r))));
}

// A tool with a UI called here: its app, rendered as in the chat (the same AppView).
function appView(answer, out) {
  if (answer.appError) return h("p", { class: "form-error", dataset: { role: "app-error" } }, answer.appError);
  if (!answer.app) return null;
  const said = h("div", { class: "muted small" });
  const view = new AppView(answer.app, { onMessage: (text) => { said.textContent = `The app asks to send the model: ${text}`; } });
  shown.add(view);
  view.toolResult(answer.result);
  return h("div", { class: "inspect-app", dataset: { role: "app" } }, view.el, said);
}

async function send(method, params, out, match) {
  fill(out, h("p", { class: "muted" }, "Waiting for the server…"));
  const started = performance.now();
  const answer = await api.post(`/api/inspect/${encodeURIComponent(state.server)}/request`, { method, params }).catch((err) => ({ error: err.message }));
  const took = Math.round(performance.now() - started);
  const exchange = findExchange(state.server, method, match);
  fill(out,
    h("div", { class: "muted small", dataset: { role: "took" } }, `${took} ms`),
    appView(answer, out),
    outcome(method, answer),
    exchange ? h("details", { dataset: { role: "jsonrpc" } }, h("summary", {}, "JSON-RPC exchange"), h("pre", {}, json(exchange))) : null);
}

// A form's button row: the button submits the form's value once the form reads it as valid.
function submitRow(form, label, role, submit) {
  const onclick = () => {
    const got = form.read();
    if (got.ok) submit(got.value);
  };
  return h("div", { class: "row" }, h("button", { class: "primary", dataset: role ? { role } : undefined, onclick }, label));
}

function toolDetail(tool) {
  const form = schemaForm(tool.inputSchema || { type: "object" }, `tool-${++forms}`);
  const out = h("div", { class: "outcome" });
  const x = tool["x-host"] || {};
  return [
    h("h3", {}, tool.title || tool.name),
    h("div", { class: "muted" }, tool.description || ""),
    h("div", { class: "row small" },
      h("span", { class: "badge" }, x.model ? "offered to the model" : x.withheld ? "withheld (awaiting approval)" : "not for the model"),
      h("span", { class: "badge" }, x.app ? "apps may call it" : "apps may not call it"),
      x.ui ? h("span", { class: "badge app" }, `app: ${x.ui}`) : null),
    h("details", {}, h("summary", {}, "definition"), h("pre", {}, json(Object.fromEntries(Object.entries(tool).filter(([k]) => k !== "x-host"))))),
    form.element,
    submitRow(form, "Call tool", "call", (value) => send("tools/call", { name: tool.name, arguments: value }, out, (p) => p.name === tool.name)),
    out,
  ];
}

function resourceDetail(resource) {
  const out = h("div", { class: "outcome" });
  return [
    h("h3", {}, resource.title || resource.name || resource.uri),
    h("div", { class: "muted" }, resource.description || ""),
    h("div", { class: "small" }, h("code", {}, resource.uri), " ", resource.mimeType || ""),
    h("div", { class: "row" }, h("button", { class: "primary", dataset: { role: "read" }, onclick: () => send("resources/read", { uri: resource.uri }, out, (p) => p.uri === resource.uri) }, "Read")),
    out,
  ];
}

function expand(template, values) {
  // RFC 6570 level 1-2 for the common cases: {var}, {+var}, {/var}, {?a,b}
  return template.replace(/\{([+/?#&]?)([^}]+)\}/g, (_, op, names) => {
    const vars = names.split(",").map((n) => n.trim()).filter((n) => values[n] !== undefined && values[n] !== "");
    if (!vars.length) return "";
    const enc = (v) => (op === "+" || op === "#" ? encodeURI(v) : encodeURIComponent(v));
    if (op === "?" || op === "&") return (op === "?" ? "?" : "&") + vars.map((n) => `${n}=${enc(values[n])}`).join("&");
    const joined = vars.map((n) => enc(values[n])).join(",");
    return op === "/" ? `/${joined}` : op === "#" ? `#${joined}` : joined;
  });
}

function templateDetail(t) {
  const names = [...new Set([...t.uriTemplate.matchAll(/\{[+/?#&]?([^}]+)\}/g)].flatMap((m) => m[1].split(",").map((n) => n.trim())))];
  const form = schemaForm({ type: "object", properties: Object.fromEntries(names.map((n) => [n, { type: "string" }])) }, `tpl-${++forms}`);
  const out = h("div", { class: "outcome" });
  return [
    h("h3", {}, t.title || t.name),
    h("div", { class: "muted" }, t.description || ""),
    h("code", {}, t.uriTemplate),
    form.element,
    submitRow(form, "Read", undefined, (value) => {
      const uri = expand(t.uriTemplate, value);
      send("resources/read", { uri }, out, (p) => p.uri === uri);
    }),
    out,
  ];
}

function promptDetail(p) {
  const args = p.arguments || [];
  const schema = { type: "object", properties: Object.fromEntries(args.map((a) => [a.name, { type: "string", title: a.title || a.name, description: a.description }])), required: args.filter((a) => a.required).map((a) => a.name) };
  const form = schemaForm(schema, `prompt-${++forms}`);
  const out = h("div", { class: "outcome" });
  return [
    h("h3", {}, p.title || p.name),
    h("div", { class: "muted" }, p.description || ""),
    form.element,
    submitRow(form, "Run prompt", "run", (value) => send("prompts/get", { name: p.name, arguments: value }, out, (q) => q.name === p.name)),
    out,
  ];
}

// -- subscriptions/listen --------------------------------------------------------------
function renderListen() {
  const boxes = ["tools", "prompts", "resources"].map((k) => h("label", {}, h("input", { type: "checkbox", name: k, checked: k === "tools" }), ` ${k} list changes`));
  const uris = h("textarea", { rows: 2, placeholder: "resource URIs to follow, one per line" });
  const error = h("div", { class: "form-error" });
  fill(listEl, h("h3", {}, "subscriptions/listen"), ...boxes, uris,
    h("button", { class: "primary", dataset: { role: "listen" }, onclick: async () => {
      const wanted = Object.fromEntries(boxes.map((b) => [b.querySelector("input").name, b.querySelector("input").checked]));
      wanted.uris = uris.value.split("\n").map((s) => s.trim()).filter(Boolean);
      try { await api.post(`/api/inspect/${encodeURIComponent(state.server)}/listen`, wanted); error.textContent = ""; }
      catch (err) { error.textContent = err.message; }
    } }, "Start listening"), error);
  fill(detailEl, ...[...state.listens.values()].filter((l) => l.server === state.server).map((l) => l.el));
  if (!detailEl.children.length) detailEl.append(h("p", { class: "muted" }, "No streams yet."));
}

export function listenEvent(ev) {
  let entry = state.listens.get(ev.listen);
  if (!entry) {
    const notes = h("div", { class: "notes" });
    const status = h("span", { class: "badge running" }, "opening");
    const stop = h("button", { class: "danger", onclick: () => api.post(`/api/listen/${ev.listen}/stop`) }, "Stop");
    const el = h("div", { class: "card", dataset: { listen: ev.listen } }, h("div", { class: "head" }, h("b", {}, `stream ${ev.listen}`), status, stop), notes);
    entry = { server: ev.server, el, notes, status, stop };
    state.listens.set(ev.listen, entry);
    if (state.sub === "listen" && state.server === ev.server) renderListen();
  }
  if (ev.state === "open") { entry.status.textContent = "open"; entry.status.className = "badge ok"; entry.notes.append(h("div", { class: "muted small" }, `acknowledged: ${json(ev.acknowledged)}`)); }
  if (ev.state === "note") entry.notes.append(h("div", { class: "listen-note", dataset: { role: "notification" } }, h("code", {}, ev.method), ev.params ? h("pre", {}, json(ev.params)) : null));
  if (ev.state === "closed") { entry.status.textContent = `closed: ${ev.detail}`; entry.status.className = "badge"; entry.stop.disabled = true; }
}

// -- raw JSON-RPC (the log itself is wire.js) ------------------------------------------
function renderWire() {
  fill(listEl, h("p", { class: "muted small" }, `Every JSON-RPC message to and from ${state.server} (agent, apps and inspector), newest first, with its time and each reply's delay.`));
  fill(detailEl, ...messages(state.server).slice().reverse().slice(0, 300).map(entryEl));
}

export function rpcEvent(ev) {
  const e = record(ev);
  if (state.sub === "wire" && state.server === ev.server && !document.getElementById("inspector").hidden) {
    detailEl.prepend(entryEl(e));
  }
}
