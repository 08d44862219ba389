// The chat view: the conversation with tool calls as cards (arguments, result, duration,
// progress, an app when the tool has one), the host's questions (consent, a server's form or
// link), and the side panel (servers from supervision, tools awaiting approval, the audit).
import { AppView } from "./apps.js";
import { api, fill, h, json, urlBox } from "./dom.js";
import { schemaForm } from "./forms.js";
import { resultView, textOf } from "./results.js";
import { renderTasks } from "./tasks.js";

const messages = document.getElementById("messages");
const cards = new Map();      // call id → {el, body, progress, app, raw, cancelled, result, folds}
const questions = new Map();  // question id → element
let formCount = 0;

function scroll() {
  messages.scrollTop = messages.scrollHeight;
}

function add(el) {
  if (!el.classList.contains("note")) messages.querySelector(".empty")?.remove();  // notes keep it
  const near = messages.scrollHeight - messages.scrollTop - messages.clientHeight < 80;
  messages.append(el);
  if (near) scroll();
}

function card(ev) {
  const viaApp = String(ev.id).startsWith("app-");
  const body = h("div", { class: "body" },
    h("details", { open: true }, h("summary", {}, "arguments"), h("pre", {}, json(ev.arguments))));
  const el = h("div", { class: "card", dataset: { call: ev.id } },
    h("div", { class: "head" },
      h("span", { class: "name" }, ev.tool),
      h("span", { class: "server" }, `on ${ev.server}`),
      h("span", { class: `badge ${ev.decision}`, dataset: { role: "decision" } }, ev.decision),
      h("span", { class: "badge" }, ev.trusted ? "trusted server" : "untrusted server"),
      viaApp ? h("span", { class: "badge app" }, "called by its app") : null,
      h("span", { class: "duration", dataset: { role: "duration" } }, "running…")),
    body);
  const entry = { el, body, progress: null, app: null, raw: null };
  cards.set(ev.id, entry);
  add(el);
}

function result(ev) {
  const entry = cards.get(ev.id);
  if (!entry) return;
  entry.progress?.remove();
  entry.result = resultView({ content: ev.content || [], structured: ev.structured, isError: ev.is_error });
  entry.folds = !ev.is_error;  // an error stays in view, also under an app
  entry.body.append(entry.app && entry.folds ? folded(entry.result) : entry.result);
  // The call's own time; the time spent waiting for the person (consent, a form) apart.
  const waited = ev.waited_ms >= 100 ? ` · ${(ev.waited_ms / 1000).toFixed(1)} s waiting for you` : "";
  const duration = entry.el.querySelector('[data-role="duration"]');
  duration.textContent = `${ev.is_error ? "error · " : ""}${ev.duration_ms != null ? `${Math.round(ev.duration_ms)} ms` : ""}${waited}`;
  if (ev.duration_ms != null) duration.dataset.ms = String(ev.duration_ms);
  if (ev.raw) {
    entry.raw = ev.raw;
    entry.app?.toolResult(ev.raw);
  } else if ("raw" in ev) {  // a call with an app ended without a result: tell the app
    entry.cancelled = textOf(ev.content) || "the call ended without a result";
    entry.app?.toolCancelled(entry.cancelled);
  }
}

function progress(ev) {
  const entry = cards.get(ev.id);
  if (!entry) return;
  if (!entry.progress) {
    entry.progress = h("div", { class: "progress" }, h("progress", {}), h("span", { class: "muted small" }));
    entry.body.append(entry.progress);
  }
  const bar = entry.progress.querySelector("progress");
  if (ev.total) { bar.max = ev.total; bar.value = ev.progress; } else bar.removeAttribute("value");
  entry.progress.querySelector("span").textContent = ev.message || (ev.total ? `${ev.progress} / ${ev.total}` : `${ev.progress}`);
}

function folded(view) {
  return h("details", { class: "result-data", dataset: { role: "result-data" } },
    h("summary", {}, "the result, as data"), view);
}

function app(ev, composer) {
  const entry = cards.get(ev.call);
  if (!entry || entry.app) return;
  entry.app = new AppView(ev, { onMessage: (text, server) => composer(text, `${server} app`) });
  if (ev.calls === "deny") {
    entry.body.append(h("div", { class: "muted small", dataset: { role: "app-calls" } },
      `This app may not call tools of ${ev.server} (${ev.callsBy === "user" ? "you denied it" : "the consent rules"}).`));
  }
  // The app shows the call: the arguments fold, and the result (once there) follows the app,
  // folded, as the data the app was given.
  entry.body.querySelector("details")?.removeAttribute("open");
  entry.body.append(entry.app.el);
  if (entry.result) entry.body.append(entry.folds ? folded(entry.result) : entry.result);
  if (entry.raw) entry.app.toolResult(entry.raw);
  else if (entry.cancelled) entry.app.toolCancelled(entry.cancelled);
}

// -- questions -----------------------------------------------------------------------
async function answer(id, value, el) {
  const error = el.querySelector(".form-error");
  error.textContent = "";
  try {
    await api.post("/api/answer", { id, answer: value });
  } catch (err) {
    error.textContent = err.message;
  }
}

function consent(ev) {
  const el = h("div", { class: "question", dataset: { question: ev.id, type: "consent" } },
    h("div", {}, h("span", { class: "asker" }, ev.server), ` wants to run `, h("b", {}, ev.tool),
      ev.trusted ? "" : " (an untrusted server: its annotations are not believed)"),
    h("pre", {}, json(ev.arguments)),
    Object.keys(ev.annotations || {}).length ? h("div", { class: "muted small" }, `annotations: ${json(ev.annotations)}`) : null,
    h("div", { class: "actions" },
      h("button", { class: "primary", onclick: () => answer(ev.id, "once", el) }, "Allow once"),
      h("button", { onclick: () => answer(ev.id, "session", el) }, "Allow for this session"),
      h("button", { class: "danger", onclick: () => answer(ev.id, "deny", el) }, "Deny")),
    h("div", { class: "form-error", role: "alert" }));
  return el;
}

function elicitForm(ev) {
  const form = schemaForm(ev.schema, `elicit-${++formCount}`);
  const el = h("div", { class: "question", dataset: { question: ev.id, type: "elicit" } },
    h("div", {}, h("span", { class: "asker" }, ev.server), " asks:"),
    h("div", {}, ev.message),
    form.element,
    h("div", { class: "actions" },
      h("button", { class: "primary", dataset: { role: "submit" }, onclick: () => {
        const got = form.read();
        if (!got.ok) { el.querySelector(".form-error").textContent = "Fix the marked fields first."; return; }
        answer(ev.id, { action: "accept", content: got.value }, el);
      } }, "Send"),
      h("button", { onclick: () => answer(ev.id, { action: "decline" }, el) }, "Decline"),
      h("button", { onclick: () => answer(ev.id, { action: "cancel" }, el) }, "Cancel")),
    h("div", { class: "form-error", role: "alert" }));
  return el;
}

function elicitUrl(ev) {
  const el = h("div", { class: "question", dataset: { question: ev.id, type: "url" } },
    h("div", {}, h("span", { class: "asker" }, ev.server), " asks you to open a page:"),
    h("div", {}, ev.message),
    urlBox(ev.url),
    h("div", { class: "muted small" }, `It opens in a new tab on ${ev.domain}; this page cannot see what you enter there.`),
    h("div", { class: "actions" },
      h("button", { class: "primary", onclick: () => {
        window.open(ev.url, "_blank", "noopener,noreferrer");
        answer(ev.id, "accept", el);
      } }, "Open the page"),
      h("button", { onclick: () => answer(ev.id, "decline", el) }, "Decline"),
      h("button", { onclick: () => answer(ev.id, "cancel", el) }, "Cancel")),
    h("div", { class: "form-error", role: "alert" }));
  return el;
}

// Asked once per app, in its card, before its frame loads (the frame comes with the answer).
function appConsent(ev) {
  const el = h("div", { class: "question", dataset: { question: ev.id, type: "app-consent" } },
    h("div", {}, "This app may call tools of server ", h("span", { class: "asker" }, ev.server),
      ev.tools.length ? ` (${ev.tools.join(", ")})` : ""),
    h("div", { class: "actions" },
      h("button", { class: "primary", onclick: () => answer(ev.id, "allow", el) }, "Allow"),
      h("button", { class: "danger", onclick: () => answer(ev.id, "deny", el) }, "Deny")),
    h("div", { class: "form-error", role: "alert" }));
  return el;
}

function question(ev) {
  const inCard = ev.type === "consent" || ev.type === "app-consent";
  const el = ev.type === "app-consent" ? appConsent(ev) : ev.type === "consent" ? consent(ev)
    : ev.mode === "url" ? elicitUrl(ev) : elicitForm(ev);
  questions.set(ev.id, el);
  const owner = inCard ? cards.get(ev.call) : null;
  if (owner) {  // consent sits in its call's card
    owner.body.append(el);
    if (ev.type === "consent") owner.el.querySelector('[data-role="duration"]').textContent = "waiting for you";
    scroll();
  } else add(el);
  el.querySelector("input, select, button")?.focus({ preventScroll: true });
}

function answered(ev) {
  const el = questions.get(ev.id);
  if (!el) return;
  if (el.dataset.type.endsWith("consent") && el.parentElement?.classList.contains("body")) {
    el.remove();  // the card's badge now says who allowed or denied it
    questions.delete(ev.id);
    return;
  }
  el.classList.add("done");
  for (const control of el.querySelectorAll("button, input, select, textarea")) control.disabled = true;
  questions.delete(ev.id);
}

// -- the empty chat: how to start (example prompts from the servers' tools; no model: how to set one)
let hint = null;

function examplePrompt(t) {
  const words = t.tool.replace(/[_-]+/g, " ");
  return `Use ${t.server}'s ${words} tool${t.description ? ` (${t.description.replace(/\.$/, "")})` : ""}: `;
}

export function emptyState(tools, modelHint, composer) {
  if (modelHint !== undefined) hint = modelHint;
  const old = messages.querySelector(".empty");
  if (messages.querySelector(".msg, .card, .question")) { old?.remove(); return; }  // it has started
  const el = h("div", { class: "empty", dataset: { role: "empty" } },
    hint ? h("p", { class: "note warning", dataset: { role: "model-hint" } }, hint) : null,
    tools?.length ? h("p", { class: "muted" }, hint ? "With a model you could ask, for example:" : "Try asking, for example:") : h("p", { class: "muted" }, "No tools yet: the servers are starting, or offer none."),
    h("div", { class: "examples" }, ...(tools || []).map((t) => h("button", {
      class: "example", dataset: { role: "example", tool: t.tool },
      onclick: () => composer(examplePrompt(t), `${t.server} server`),
    }, h("b", {}, t.tool), h("span", { class: "muted small" }, ` ${t.server}${t.description ? ` · ${t.description}` : ""}`)))));
  if (old) old.replaceWith(el); else messages.prepend(el);
  document.getElementById("prompt").placeholder = hint
    ? "No model is set (see above); the Inspector tab works without one"
    : "Message the agent (Enter to send, Shift+Enter for a new line)";
}

// -- side panel ----------------------------------------------------------------------
export function renderStatus(servers, pins) {
  const box = document.getElementById("servers");
  fill(box, ...servers.map((s) => h("div", { class: "srv", dataset: { server: s.name } },
    h("span", { class: "sname" }, s.name, " ", h("span", { class: "muted small" }, `${s.transport}${s.trusted ? " · trusted" : ""}`)),
    h("span", { class: `badge ${s.state}`, dataset: { role: "state" } }, s.state),
    h("span", { class: "sdetail" },
      s.state === "ready" || s.state === "degraded" ? `${s.tools} tools${s.withheld ? `, ${s.withheld} withheld` : ""}` : "",
      s.state !== "ready" && s.detail ? ` ${s.detail}` : "",
      s.retry_in != null && !(s.state === "ready" || s.state === "degraded") ? ` (next attempt in ${s.retry_in.toFixed(1)} s) ` : " ",
      s.state === "down" ? h("button", { class: "small", onclick: () => api.post(`/api/servers/${encodeURIComponent(s.name)}/reconnect`) }, "reconnect now") : null))));
  const pinBox = document.getElementById("pins");
  if (!pins.length) { fill(pinBox, h("p", { class: "muted" }, "No new or changed tools waiting.")); return; }
  fill(pinBox, ...pins.map((p) => {
    const error = h("div", { class: "form-error" });
    const whole = Array.isArray(p.tools);  // a new server: its whole catalogue at once
    const what = whole ? ` is new: its ${p.tools.length} tools are withheld until you approve them.`
      : p.new ? " is a new tool; withheld until you approve." : " changed since it was pinned; withheld until you approve.";
    const body = whole ? { server: p.server, tools: p.tools } : { server: p.server, tool: p.tool, digest: p.digest };
    return h("div", { class: "pin", dataset: { pin: whole ? p.server : `${p.server}/${p.tool}` } },
      h("div", {}, h("b", {}, whole ? p.server : `${p.server} › ${p.tool}`), what),
      p.reason ? h("div", { class: "form-error" }, `Held for review: ${p.reason}`) : null,
      h("pre", {}, p.diff),
      h("button", { class: "primary", onclick: async () => {
        try { await api.post("/api/pins/approve", body); }
        catch (err) { error.textContent = err.message; }
      } }, whole ? `Approve all ${p.tools.length} tools` : p.new ? "Approve the new tool" : "Approve the new definition"), error);
  }));
}

export function auditRow(r) {
  const time = (r.time || "").replace(/^.*T/, "").replace(/\.\d+Z$/, "");
  const row = h("tr", {}, [time, r.agent, r.server, r.tool, r.decision, r.by, r.outcome, r.duration_ms]
    .map((v) => h("td", {}, v ?? "")));
  if (r.error) row.title = r.error;
  document.querySelector("#audit tbody").prepend(row);
}

// -- the event stream ------------------------------------------------------------------
export function handle(ev, composer) {
  switch (ev.kind) {
    case "user": add(h("div", { class: "msg user" }, ev.text)); break;
    case "assistant": add(h("div", { class: "msg assistant" }, ev.text)); break;
    case "call": card(ev); break;
    case "consent": {
      const badge = cards.get(ev.id)?.el.querySelector('[data-role="decision"]');
      const waiting = cards.get(ev.id)?.el.querySelector('[data-role="duration"]');
      if (waiting) waiting.textContent = ev.answer === "deny" ? "" : "running…";
      if (badge) { badge.textContent = ev.answer === "deny" ? "denied by you" : ev.answer === "session" ? "allowed for the session" : "allowed by you"; badge.className = `badge ${ev.answer === "deny" ? "deny" : "allow"}`; }
      break;
    }
    case "result": result(ev); break;
    case "progress": progress(ev); break;
    case "app": app(ev, composer); break;
    case "app-request": cards.get(ev.call)?.app?.requestSent(ev.request); break;
    case "question": question(ev); break;
    case "answered": answered(ev); break;
    case "note": add(h("div", { class: `note ${ev.level}` }, ev.text)); break;
    case "server": add(h("div", { class: "note" }, ev.text)); break;
    case "status": renderStatus(ev.servers, ev.pins); emptyState(ev.tools, undefined, composer); break;
    case "audit": auditRow(ev.record); break;
    case "tasks": renderTasks(ev.tasks); break;
    case "turn":
      document.getElementById("send").disabled = ev.state === "running";
      document.body.dataset.turn = ev.state;
      break;
    default: break;
  }
}
