// The MCP Apps sandbox proxy (SEP-1865 "Sandbox proxy"), on its own origin. It loads the
// app's HTML into an inner frame that inherits this page's Content-Security-Policy (set by
// the host from the resource's declared domains) and has an opaque origin of its own, then
// relays JSON-RPC messages both ways, except the `ui/notifications/sandbox-*` ones.
(() => {
  const hostOrigin = decodeURIComponent(location.hash.slice(1));
  let inner = null;
  const reserved = (msg) => typeof msg?.method === "string" && msg.method.startsWith("ui/notifications/sandbox-");

  function load(params) {
    inner = document.createElement("iframe");
    // No allow-same-origin: each app gets an opaque origin, apart from the proxy and other
    // apps. Device permissions (camera, microphone, ...) are not delegated.
    inner.setAttribute("sandbox", "allow-scripts allow-forms");
    inner.srcdoc = String(params.html || "");
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
    } else if (inner && event.source === inner.contentWindow && !reserved(msg)) {
      window.parent.postMessage(msg, hostOrigin);
    }
  });
  window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, hostOrigin);
})();
