// The MCP Apps sandbox proxy (SEP-1865 "Sandbox proxy"), on its own origin. It loads the
// app's HTML into an inner frame that inherits this page's Content-Security-Policy (set by
// the host from the resource's declared domains) and has an opaque origin of its own, then
// relays JSON-RPC messages both ways, except the `ui/notifications/sandbox-*` ones.
//
// The inner document's `securitypolicyviolation` events cannot be heard from here (another
// origin), so a one-line listener goes first into the app's document and posts each
// violation up; the proxy passes it to the host as `ui/notifications/sandbox-csp-violation`,
// and the app's card says what was blocked instead of staying blank. (An app can send that
// message itself: all it can do is put a notice in its own card.)
(() => {
  const hostOrigin = decodeURIComponent(location.hash.slice(1));
  const VIOLATION = "ui/notifications/sandbox-csp-violation";
  const WATCH = `<script>document.addEventListener("securitypolicyviolation",function(e){` +
    `parent.postMessage({jsonrpc:"2.0",method:"${VIOLATION}",params:{directive:e.effectiveDirective,` +
    `blocked:String(e.blockedURI||"").slice(0,200)}},"*")});</script>`;
  let inner = null;
  const reserved = (msg) => typeof msg?.method === "string" && msg.method.startsWith("ui/notifications/sandbox-");

  function load(params) {
    inner = document.createElement("iframe");
    // No allow-same-origin: each app gets an opaque origin, apart from the proxy and other
    // apps. Device permissions (camera, microphone, ...) are not delegated.
    inner.setAttribute("sandbox", "allow-scripts allow-forms");
    // After the doctype and the comments before it, if any (a script before the doctype
    // would put the page in quirks mode).
    const html = String(params.html || "");
    inner.srcdoc = html.replace(/^(\s*(<!--[\s\S]*?-->\s*)*<!doctype[^>]*>)?/i, (head) => head + WATCH);
    document.body.append(inner);
  }

  window.addEventListener("message", (event) => {
    const msg = event.data;
    if (event.source === window.parent && event.origin === hostOrigin) {
      if (msg?.method === "ui/notifications/sandbox-resource-ready") {
        if (!inner) load(msg.params || {});
      } else if (inner && !reserved(msg)) {
        inner.contentWindow.postMessage(msg, "*");
      }
    } else if (inner && event.source === inner.contentWindow) {
      if (msg?.method === VIOLATION) {
        const p = msg.params || {};
        window.parent.postMessage({ jsonrpc: "2.0", method: VIOLATION, params: { directive: String(p.directive || ""), blocked: String(p.blocked || "") } }, hostOrigin);
      } else if (!reserved(msg)) {
        window.parent.postMessage(msg, hostOrigin);
      }
    }
  });
  window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, hostOrigin);
})();
