// The host side of the MCP Apps bridge (SEP-1865): each app runs in a sandbox proxy frame on
// a separate origin; this page speaks JSON-RPC with it over postMessage. Requests the app may
// make go to the host, which decides (tools/call on the app's own server only, tools visible
// to apps only, under the consent policy); links open only after the user confirms. The host
// tells the app how its call ended (tool-result or tool-cancelled), when its context changes
// (theme, display mode, room) and, before its frame goes, asks it to tear down.
import { applySize, dimensions, hostContext, onThemeChange, resultingMode, themeContext } from "./appcontext.js";
import { api, confirmDialog, h, json, sandboxOrigin, urlBox } from "./dom.js";
import { textOf } from "./results.js";

const PROTOCOL = "2026-01-26";
const HOST_INFO = { name: "mcpkit", version: "1" };
/** How long a closing card waits for the app's answer to `ui/resource-teardown` (ms), unless
 * the host says (`teardownWait` in the app event). */
const TEARDOWN_WAIT = 3000;
let requests = 0;

const err = (code, message) => Object.assign(new Error(message), { code });

export class AppView {
  constructor(ev, { onMessage }) {
    this.ev = ev;
    this.onMessageText = onMessage;
    this.initialized = false;
    this.loaded = false;
    this.closed = false;
    this.closing = false;
    this.result = null;
    // This rendering (one per page load): a restored app's own calls are answered from what
    // they returned the first time (host/web/replay.py).
    this.view = Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, "0")).join("");
    this.cancelled = null;
    this.mode = "inline";
    this.appModes = undefined;
    this.pending = new Map();  // id of a request this page sent → its resolver
    this.frame = h("iframe", {
      class: ev.prefersBorder === false ? "app-frame" : "app-frame border",
      title: `${ev.server} app: ${ev.tool.title || ev.tool.name}`,
      sandbox: "allow-scripts allow-same-origin",
      referrerpolicy: "no-referrer",
      src: `${ev.sandbox}#${encodeURIComponent(location.origin)}`,
      dataset: { app: ev.id, call: ev.call },
    });
    this.notices = h("div", { class: "app-notices" });
    this.el = h("div", { class: "app", dataset: { app: ev.id } },
      h("div", { class: "app-bar" },
        h("button", { class: "small", dataset: { role: "exit-fullscreen" }, onclick: () => this.setMode("inline") }, "Exit full screen"),
        h("button", { class: "small", dataset: { role: "close-app" }, onclick: () => this.close("closed by the user") }, "Close app")),
      this.frame, this.notices);
    this.listener = (event) => this.receive(event);
    window.addEventListener("message", this.listener);
    this.stopTheme = onThemeChange(() => this.contextChanged(themeContext()));
    this.room = null;
    this.resized = new ResizeObserver(() => this.roomChanged());
    this.resized.observe(this.el);
    // An unload cannot wait for the app's answer: it is told, and the page goes.
    this.unload = () => {
      if (this.initialized && !this.closing) this.request("ui/resource-teardown", { reason: "the page is closing" }).catch(() => {});
    };
    window.addEventListener("pagehide", this.unload);
    this.escape = (e) => { if (e.key === "Escape" && this.mode !== "inline") this.setMode("inline"); };
    document.addEventListener("keydown", this.escape);
  }

  post(message) {
    this.frame.contentWindow?.postMessage({ jsonrpc: "2.0", ...message }, sandboxOrigin);
  }

  /** A request to the app; rejects after `wait` ms without an answer. */
  request(method, params, wait = TEARDOWN_WAIT) {
    const id = `mcpkit-${++requests}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => { this.pending.delete(id); reject(new Error(`${method}: no answer`)); }, wait);
      this.pending.set(id, (msg) => { clearTimeout(timer); this.pending.delete(id); (msg.error ? reject(new Error(msg.error.message)) : resolve(msg.result)); });
      this.post({ id, method, params });
    });
  }

  notice(role, text, level = "warning") {
    const seen = [...this.notices.children].some((n) => n.dataset.role === role && n.textContent === text);
    if (!seen) this.notices.append(h("div", { class: `note ${level}`, dataset: { role } }, text));
  }

  // -- the call's outcome ------------------------------------------------------------
  toolResult(raw) {
    this.result = raw;
    if (this.initialized) this.post({ method: "ui/notifications/tool-result", params: raw });
  }

  /** The call ended without a result (cancelled, timed out, failed to start): the host MUST
   * say so "for any reason", or the app waits for ever. */
  toolCancelled(reason) {
    this.cancelled = reason || "the call ended without a result";
    if (this.initialized) this.post({ method: "ui/notifications/tool-cancelled", params: { reason: this.cancelled } });
  }

  /** The id of the tools/call request that made this app, learnt after it was shown. */
  requestSent(id) {
    this.ev = { ...this.ev, request: id };
    this.contextChanged({ toolInfo: { id, tool: this.ev.tool } });
  }

  contextChanged(params) {
    if (this.initialized && !this.closed) this.post({ method: "ui/notifications/host-context-changed", params });
  }

  roomChanged() {
    const now = dimensions(this.frame, this.mode);
    if (json(now) === json(this.room)) return;
    this.room = now;
    this.contextChanged({ containerDimensions: now });
  }

  setMode(mode) {
    if (mode === this.mode || this.closed) return;
    this.mode = mode;
    this.el.classList.toggle("fullscreen", mode === "fullscreen");
    this.room = dimensions(this.frame, mode);
    this.contextChanged({ displayMode: mode, containerDimensions: this.room });
  }

  // -- messages from the app ---------------------------------------------------------
  async receive(event) {
    if (event.source !== this.frame.contentWindow || event.origin !== sandboxOrigin) return;
    const msg = event.data;
    if (!msg || typeof msg !== "object" || msg.jsonrpc !== "2.0") return;  // malformed: ignored
    if (typeof msg.method !== "string") { this.pending.get(msg.id)?.(msg); return; }  // an answer
    if (msg.id === undefined) { this.notified(msg.method, msg.params || {}); return; }
    let reply;
    try {
      reply = { result: await this.answer(msg.method, msg.params || {}) };
    } catch (e) {
      reply = { error: { code: e.code ?? -32000, message: e.message } };
    }
    this.post({ id: msg.id, ...reply });
  }

  notified(method, params) {
    if (method === "ui/notifications/sandbox-proxy-ready") {
      if (this.loaded) return;  // the resource is sent once per app
      this.loaded = true;
      this.post({
        method: "ui/notifications/sandbox-resource-ready",
        params: { html: this.ev.html, csp: this.ev.csp || {}, permissions: this.ev.permissions },
      });
    } else if (method === "ui/notifications/sandbox-csp-violation") {
      // Reported by the sandbox: the card says why the app may stay blank. (A library probing
      // for eval is reported too: the advice says what helps and what never will.)
      const never = ["eval", "wasm-eval", "inline"].includes(params.blocked);
      // The browser names a scheme alone for blob:, data: and the like.
      const what = !params.blocked ? "inline code"
        : !never && /^[a-z-]+$/.test(params.blocked) ? `${params.blocked}: URLs` : params.blocked;
      const advice = never
        ? `this host never allows ${what}.`
        : "if the app stays blank or incomplete, its server must declare what it loads in _meta.ui.csp.";
      this.notice("csp", `Blocked by the app's Content-Security-Policy (${params.directive}): ${what}; ${advice}`);
    } else if (method === "ui/notifications/initialized") {
      this.initialized = true;
      this.post({ method: "ui/notifications/tool-input", params: { arguments: this.ev.arguments || {} } });
      if (this.result) this.post({ method: "ui/notifications/tool-result", params: this.result });
      else if (this.cancelled) this.toolCancelled(this.cancelled);
    } else if (method === "ui/notifications/size-changed") {
      if (this.mode === "inline") applySize(this.frame, params);
    } else if (method === "ui/notifications/request-teardown") {
      this.close("the app asked to close");
    } else if (method === "notifications/message") {
      console.info(`[${this.ev.server} app]`, params.level, params.data);
    }
  }

  async answer(method, params) {
    const ev = this.ev;
    switch (method) {
      case "ui/initialize":
        this.appModes = params.appCapabilities?.availableDisplayModes;
        this.room = dimensions(this.frame, this.mode);
        return {
          protocolVersion: PROTOCOL,
          hostInfo: HOST_INFO,
          hostCapabilities: {
            openLinks: {},
            serverTools: {},
            serverResources: {},
            logging: {},
            message: { text: {} },
            updateModelContext: { text: {}, structuredContent: {} },
            // The declared domains are honoured; device permissions are never granted.
            sandbox: { csp: ev.csp || {}, permissions: {} },
          },
          hostContext: hostContext(ev, this.frame, this.mode),
        };
      case "ping":
        return {};
      case "tools/call":
      case "resources/read":
      case "ui/update-model-context":
        return this.forward(method, params);
      case "ui/open-link": {
        const url = String(params.url || "");
        let ok = false;
        try { ok = ["http:", "https:"].includes(new URL(url).protocol); } catch { ok = false; }
        if (!ok) throw err(-32602, "Invalid URL");
        const yes = await confirmDialog(`The ${ev.server} app wants to open a link`, urlBox(url));
        if (!yes) throw new Error("Link opening denied by user");
        window.open(url, "_blank", "noopener,noreferrer");
        return {};
      }
      case "ui/message": {
        const text = textOf(Array.isArray(params.content) ? params.content : [params.content]);
        if (!text) throw err(-32602, "Invalid message format");
        this.onMessageText(text, ev.server);  // into the composer: the user decides to send it
        return {};
      }
      case "ui/request-display-mode":
        this.setMode(resultingMode(params.mode, this.mode, this.appModes));
        return { mode: this.mode };  // the resulting mode, changed or not (a MUST)
      default:
        throw err(-32601, `${method} is not supported by this host`);
    }
  }

  /** To the host (the app's server, or the host's own store for model context). */
  async forward(method, params) {
    // `auto`: the app called by itself (the user is not in its frame): a restored app's own
    // calls are answered from what they returned the first time (host/web/replay.py).
    const auto = document.activeElement !== this.frame;
    const answer = await api.post(`/api/apps/${encodeURIComponent(this.ev.id)}/rpc`, { method, params, view: this.view, auto });
    if (answer.error) throw err(answer.error.code, answer.error.message);
    if (method === "ui/update-model-context") this.showContext(answer.result.shown);
    return method === "ui/update-model-context" ? {} : answer.result;
  }

  showContext(text) {
    this.notices.querySelector('[data-role="model-context"]')?.remove();
    if (text) {
      this.notices.append(h("details", { class: "model-context", dataset: { role: "model-context" } },
        h("summary", {}, "context for the model's next turn"), h("pre", {}, text)));
    }
  }

  // -- the end -----------------------------------------------------------------------
  /** Ask the app to tear down (awaited, up to TEARDOWN_WAIT), then remove its frame. */
  async close(reason) {
    if (this.closing) return;
    this.closing = true;
    for (const button of this.el.querySelectorAll(".app-bar button")) button.disabled = true;
    if (this.initialized) {
      try {
        await this.request("ui/resource-teardown", { reason }, this.ev.teardownWait ?? TEARDOWN_WAIT);
      } catch { /* no answer in time: it goes anyway */ }
    }
    this.closed = true;
    this.dispose();
    this.el.replaceWith(h("div", { class: "note", dataset: { role: "app-closed" } }, `The app was closed (${reason}).`));
  }

  dispose() {
    window.removeEventListener("message", this.listener);
    window.removeEventListener("pagehide", this.unload);
    document.removeEventListener("keydown", this.escape);
    this.stopTheme();
    this.resized.disconnect();
    for (const resolve of this.pending.values()) resolve({ error: { message: "the app was closed" } });
  }
}
