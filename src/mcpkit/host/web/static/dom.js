// Small DOM and API helpers. Text is always set as text (never parsed as HTML): whatever a
// server or the model says cannot become markup or script in the page.

/** h("div", {class: "x", onclick: fn}, "text", child, ...) */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (value === true) el.setAttribute(key, "");
    else el.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replace an element's children, leaving out null, undefined and false. */
export function fill(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}

export function json(value) {
  return JSON.stringify(value, null, 2);
}

const csrf = document.querySelector('meta[name="mcpkit-csrf"]').content;
export const sandboxOrigin = document.querySelector('meta[name="mcpkit-sandbox"]').content;

async function call(method, path, body) {
  const response = await fetch(path, {
    method,
    credentials: "same-origin",
    headers: { "content-type": "application/json", "x-mcpkit-csrf": csrf },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = {};
  try { data = await response.json(); } catch { /* not JSON */ }
  if (!response.ok) throw new Error(data.error || `${response.status} ${response.statusText}`);
  return data;
}

export const api = {
  get: (path) => call("GET", path),
  post: (path, body) => call("POST", path, body ?? {}),
  events: (after) => new EventSource(`/api/events?csrf=${encodeURIComponent(csrf)}&after=${after}`),
};

/** A modal confirmation (used for links an app wants to open). Resolves true or false. */
export function confirmDialog(title, body, ok = "Open") {
  return new Promise((resolve) => {
    const dialog = h("dialog", { class: "confirm" },
      h("h3", {}, title), body,
      h("div", { class: "row" },
        h("button", { class: "primary", value: "ok", onclick: () => { dialog.close("ok"); } }, ok),
        h("button", { value: "cancel", onclick: () => { dialog.close("cancel"); } }, "Cancel")));
    dialog.addEventListener("close", () => { dialog.remove(); resolve(dialog.returnValue === "ok"); });
    document.getElementById("dialogs").append(dialog);
    dialog.showModal();
  });
}

/** The full URL with its domain highlighted (ELIC-29), and a warning for punycode. */
export function urlBox(url) {
  let parsed;
  try { parsed = new URL(url); } catch { return h("div", { class: "url-box" }, url); }
  const at = url.indexOf(parsed.host);
  const box = at < 0
    ? h("div", { class: "url-box" }, url)
    : h("div", { class: "url-box" }, url.slice(0, at), h("span", { class: "domain" }, parsed.host), url.slice(at + parsed.host.length));
  const warn = parsed.hostname.includes("xn--")
    ? h("div", { class: "form-error" }, "Careful: this domain is punycode and may imitate another one.")
    : null;
  return h("div", {}, box, warn);
}
