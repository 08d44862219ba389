// The host side of the MCP Apps bridge (SEP-1865): each app runs in a sandbox proxy frame on
// a separate origin; this page speaks JSON-RPC with it over postMessage. Requests the app may
// make go to the host, which decides (tools/call on the app's own server only, tools visible
// to apps only, under the consent policy); links open only after the user confirms.
import { api, confirmDialog, h, sandboxOrigin, urlBox } from "./dom.js";

const PROTOCOL = "2026-01-26";
const HOST_INFO = { name: "mcpkit", version: "1" };
const MAX_HEIGHT = 900;

export class AppView {
  constructor(ev, { onMessage }) {
    this.ev = ev;
    this.onMessageText = onMessage;
    this.initialized = false;
    this.loaded = false;
    this.result = null;
    // This rendering (one per page load): a restored app's own calls are answered from what
    // they returned the first time (host/web/replay.py).
    this.view = Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, "0")).join("");
    this.frame = h("iframe", {
      class: ev.prefersBorder === false ? "app-frame" : "app-frame border",
      title: `${ev.server} app: ${ev.tool.title || ev.tool.name}`,
      sandbox: "allow-scripts allow-same-origin",
      referrerpolicy: "no-referrer",
      src: `${ev.sandbox}#${encodeURIComponent(location.origin)}`,
      dataset: { app: ev.id, call: ev.call },
    });
    this.listener = (event) => this.receive(event);
    window.addEventListener("message", this.listener);
  }

  post(message) {
    this.frame.contentWindow?.postMessage({ jsonrpc: "2.0", ...message }, sandboxOrigin);
  }

  toolResult(raw) {
    this.result = raw;
    if (this.initialized) this.post({ method: "ui/notifications/tool-result", params: raw });
  }

  async receive(event) {
    if (event.source !== this.frame.contentWindow || event.origin !== sandboxOrigin) return;
    const msg = event.data;
    if (!msg || typeof msg !== "object" || msg.jsonrpc !== "2.0") return;  // malformed: ignored
    if (typeof msg.method !== "string") return;  // a response: this page sends no requests
    if (msg.id === undefined) { this.notified(msg.method, msg.params || {}); return; }
    let reply;
    try {
      reply = { result: await this.answer(msg.method, msg.params || {}) };
    } catch (err) {
      reply = { error: { code: err.code ?? -32000, message: err.message } };
    }
    this.post({ id: msg.id, ...reply });
  }

  notified(method, params) {
    if (method === "ui/notifications/sandbox-proxy-ready") {
      if (this.loaded) return;  // the resource is sent once per app
      this.loaded = true;
      this.post({
        method: "ui/notifications/sandbox-resource-ready",
        params: { html: this.ev.html, csp: this.ev.csp, permissions: this.ev.permissions },
      });
    } else if (method === "ui/notifications/initialized") {
      this.initialized = true;
      this.post({ method: "ui/notifications/tool-input", params: { arguments: this.ev.arguments || {} } });
      if (this.result) this.post({ method: "ui/notifications/tool-result", params: this.result });
    } else if (method === "ui/notifications/size-changed") {
      if (typeof params.height === "number" && params.height > 0) {
        this.frame.style.height = `${Math.min(Math.ceil(params.height), MAX_HEIGHT)}px`;
      }
    } else if (method === "notifications/message") {
      console.info(`[${this.ev.server} app]`, params.level, params.data);
    }
  }

  async answer(method, params) {
    const ev = this.ev;
    switch (method) {
      case "ui/initialize":
        return {
          protocolVersion: PROTOCOL,
          hostInfo: HOST_INFO,
          hostCapabilities: {
            openLinks: {},
            serverTools: {},
            serverResources: {},
            logging: {},
            message: { text: {} },
            // The declared domains are honoured; device permissions are never granted.
            sandbox: { csp: ev.csp || {}, permissions: {} },
          },
          hostContext: {
            toolInfo: { id: ev.call, tool: ev.tool },
            theme: "light",
            displayMode: "inline",
            availableDisplayModes: ["inline"],
            containerDimensions: { maxHeight: MAX_HEIGHT },
            locale: navigator.language,
            timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
            platform: "web",
            userAgent: "mcpkit",
            styles: { variables: { "--font-sans": "system-ui, sans-serif", "--color-background-primary": "#ffffff", "--color-text-primary": "#1d2330" } },
          },
        };
      case "ping":
        return {};
      case "tools/call":
      case "resources/read": {
        // `auto`: the app called by itself (the user is not in its frame).
        const auto = document.activeElement !== this.frame;
        const answer = await api.post(`/api/apps/${encodeURIComponent(ev.id)}/rpc`, { method, params, view: this.view, auto });
        if (answer.error) throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
        return answer.result;
      }
      case "ui/open-link": {
        const url = String(params.url || "");
        let ok = false;
        try { ok = ["http:", "https:"].includes(new URL(url).protocol); } catch { ok = false; }
        if (!ok) throw Object.assign(new Error("Invalid URL"), { code: -32602 });
        const yes = await confirmDialog(`The ${ev.server} app wants to open a link`, urlBox(url));
        if (!yes) throw new Error("Link opening denied by user");
        window.open(url, "_blank", "noopener,noreferrer");
        return {};
      }
      case "ui/message": {
        const text = (Array.isArray(params.content) ? params.content : [params.content])
          .filter((c) => c && c.type === "text").map((c) => c.text).join("\n");
        if (!text) throw Object.assign(new Error("Invalid message format"), { code: -32602 });
        this.onMessageText(text, ev.server);  // into the composer: the user decides to send it
        return {};
      }
      case "ui/request-display-mode":
        return { mode: "inline" };
      default:
        throw Object.assign(new Error(`${method} is not supported by this host`), { code: -32601 });
    }
  }

  dispose() {
    window.removeEventListener("message", this.listener);
  }
}
