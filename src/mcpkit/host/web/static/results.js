// A tool's result rendered by type, the same in the chat's cards and the inspector: text as
// text, images as images, links and embedded resources by their URI, structured content as a
// collapsible tree, and `isError` marked so that a failure never reads like an answer.
import { h, json } from "./dom.js";

function sameJson(text, value) {
  try { return JSON.stringify(JSON.parse(text)) === JSON.stringify(value); } catch { return false; }
}

function size(data) {
  const kb = Math.round(((data || "").length * 3) / 4 / 1024);
  return kb ? `${kb} KB` : "under 1 KB";
}

function block(b, structured) {
  switch (b.type) {
    case "text":
      if (structured !== undefined && sameJson(b.text, structured)) {
        return h("details", { class: "text-dup" }, h("summary", {}, "text (the structured content, as JSON)"), h("pre", {}, b.text));
      }
      return h("pre", { class: "text", dataset: { role: "text" } }, b.text);
    case "image":
      return h("figure", { class: "image" },
        h("img", { src: `data:${b.mimeType};base64,${b.data}`, alt: `image (${b.mimeType}) from the tool`, dataset: { role: "image" } }),
        h("figcaption", { class: "muted small" }, `${b.mimeType}, ${size(b.data)}`));
    case "audio":
      return h("div", { class: "muted small", dataset: { role: "audio" } }, `audio (${b.mimeType}, ${size(b.data)})`);
    case "resource_link":
      return h("div", { class: "link", dataset: { role: "resource-link" } }, "resource link ", h("code", {}, b.uri), b.name ? ` ${b.name}` : "");
    case "resource": {
      const r = b.resource || {};
      return h("div", { class: "embedded", dataset: { role: "resource" } },
        h("div", { class: "muted small" }, "resource ", h("code", {}, r.uri || ""), r.mimeType ? ` ${r.mimeType}` : ""),
        r.text !== undefined ? h("pre", {}, r.text) : h("div", { class: "muted small" }, `binary, ${size(r.blob)}`));
    }
    default:
      return h("pre", {}, json(b));
  }
}

/** The text blocks of a content list, one per line (what a plain-text view of it says). */
export function textOf(content) {
  return (content || []).filter((b) => b && b.type === "text").map((b) => b.text).join("\n");
}

/** A JSON value as a tree of <details>: objects and arrays fold, the first levels open. */
export function tree(value, key = null, depth = 0) {
  const name = key === null ? null : h("span", { class: "key" }, String(key));
  if (value === null || typeof value !== "object") {
    const kind = value === null ? "null" : typeof value;
    return h("div", { class: "leaf" }, name, name ? ": " : null, h("span", { class: `val ${kind}` }, JSON.stringify(value)));
  }
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  const count = Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`;
  return h("details", { class: "tree", open: depth < 2, dataset: { role: "tree" } },
    h("summary", {}, name, " ", h("span", { class: "muted small" }, count)),
    h("div", { class: "children" }, ...entries.map(([k, v]) => tree(v, k, depth + 1))));
}

/** The result of a tools/call: {content, structured, isError}. */
export function resultView({ content = [], structured, isError = false }) {
  return h("div", { class: `result${isError ? " error" : ""}`, dataset: { role: "result", error: isError ? "true" : "false" } },
    isError ? h("div", { class: "error-mark", dataset: { role: "is-error" } }, "The tool reported an error (isError)") : null,
    ...(content.length ? content.map((b) => block(b, structured)) : [h("p", { class: "muted small" }, "(no content)")]),
    structured !== undefined && structured !== null
      ? h("div", { class: "structured", dataset: { role: "structured" } }, h("div", { class: "muted small" }, "structured content"), tree(structured))
      : null);
}
