// The JSON-RPC log of each server: every message to and from it (agent, apps, inspector) with
// its time, and each reply's delay since its request.
import { api, h, json } from "./dom.js";

const wire = new Map();  // server → [{dir, time, message, took?}]
const KEEP = 400;

function describe(m) {
  if (m.method) return `${m.method}${m.id !== undefined ? ` #${m.id}` : ""}`;
  return `${m.error ? "error" : "result"} #${m.id}`;
}

function clock(ms) {
  const d = new Date(ms);
  const two = (n) => String(n).padStart(2, "0");
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, "0")}`;
}

export function entryEl(e) {
  return h("details", { class: "wire-entry" },
    h("summary", {},
      e.time ? h("time", { datetime: new Date(e.time).toISOString(), dataset: { role: "time" } }, clock(e.time)) : null,
      h("span", { class: `dir ${e.dir}` }, e.dir === "send" ? "→" : "←"), describe(e.message),
      e.took != null ? h("span", { class: "took", dataset: { role: "took" } }, `${e.took} ms`) : null),
    h("pre", {}, json(e.message)));
}

// A reply's time since its request (same server, same id, the other direction).
function withTook(log, e) {
  const m = e.message;
  if (m.method || m.id === undefined || !e.time) return e;
  for (let i = log.length - 1; i >= 0; i--) {
    const q = log[i];
    if (q.message.id === m.id && q.message.method && q.dir !== e.dir && q.time) return { ...e, took: Math.round(e.time - q.time) };
  }
  return e;
}

export function messages(server) {
  return wire.get(server) || [];
}

/** An `rpc` event into its server's log; the entry, with its delay if it is a reply. */
export function record(ev) {
  const log = messages(ev.server);
  const e = withTook(log, { dir: ev.dir, time: ev.time, message: ev.message });
  log.push(e);
  if (log.length > KEEP) log.shift();
  wire.set(ev.server, log);
  return e;
}

/** The last exchange of `method` (matching its params): [request, reply]. */
export function findExchange(server, method, match) {
  const log = messages(server);
  for (let i = log.length - 1; i >= 0; i--) {
    const m = log[i].message;
    if (log[i].dir === "send" && m.method === method && (!match || match(m.params || {}))) {
      const reply = log.slice(i + 1).find((e) => e.dir === "recv" && e.message.id === m.id && !e.message.method);
      return reply ? [m, reply.message] : [m];
    }
  }
  return null;
}

export async function loadWire(server) {
  const answer = await api.get(`/api/inspect/${encodeURIComponent(server)}/wire`).catch(() => ({ messages: [] }));
  const log = [];
  for (const m of answer.messages) log.push(withTook(log, { dir: m.dir, time: m.time, message: m.message }));
  wire.set(server, log);
}
