// Forms generated from JSON Schema: an elicitation's `requestedSchema` (every primitive type
// the spec allows: strings with formats, numbers, integers, booleans, single and multi-select
// enums with or without titles, defaults, required fields — ELIC-12/13) and a tool's
// `inputSchema` (anything else becomes a JSON field). `read()` validates in the page and
// returns the errors instead of the value when a field is wrong (ELIC-31).
import { h } from "./dom.js";

const FORMATS = {
  email: { type: "email", check: (v) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v), says: "an e-mail address" },
  uri: { type: "url", check: (v) => { try { return Boolean(new URL(v).protocol); } catch { return false; } }, says: "a URI (e.g. https://example.com)" },
  date: { type: "date", check: (v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(v)), says: "a date (YYYY-MM-DD)" },
  "date-time": { type: "text", check: (v) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(v) && !Number.isNaN(Date.parse(v)), says: "a date and time (e.g. 2026-12-01T09:30:00Z)" },
};

function options(prop) {
  // [value, label] pairs of a single-select enum (titled oneOf, legacy enumNames, plain enum)
  if (Array.isArray(prop.oneOf)) return prop.oneOf.filter((o) => o && "const" in o).map((o) => [o.const, o.title ?? String(o.const)]);
  if (Array.isArray(prop.enum)) return prop.enum.map((v, i) => [v, prop.enumNames?.[i] ?? String(v)]);
  return null;
}

function multiOptions(prop) {
  if (prop.type !== "array" || !prop.items) return null;
  if (Array.isArray(prop.items.anyOf)) return prop.items.anyOf.filter((o) => o && "const" in o).map((o) => [o.const, o.title ?? String(o.const)]);
  if (Array.isArray(prop.items.enum)) return prop.items.enum.map((v) => [v, String(v)]);
  return null;
}

function kindOf(prop) {
  if (multiOptions(prop)) return "multi";
  if (options(prop)) return "select";
  const type = Array.isArray(prop.type) ? prop.type.find((t) => t !== "null") : prop.type;
  if (["string", "number", "integer", "boolean"].includes(type)) return type;
  return "json";
}

function star(required) {
  // Marks a required field; the input says so itself (aria-required), so it is not read out.
  return required ? h("span", { class: "required", "aria-hidden": "true" }, " *") : null;
}

/** One field: its element and read() → {value, error, empty}. */
function field(name, prop, required, id) {
  const kind = kindOf(prop);
  const label = prop.title || name;
  const hint = prop.description ? h("div", { class: "hint" }, prop.description) : null;
  const error = h("div", { class: "error", id: `${id}-error`, role: "alert" });
  const has = "default" in prop;
  let input;
  let read;

  if (kind === "boolean") {
    input = h("input", { type: "checkbox", id, name, checked: has ? Boolean(prop.default) : false });
    read = () => ({ value: input.checked });
    const wrap = h("div", { class: "field" }, h("label", {}, input, " ", label, star(required)), hint, error);
    return { name, element: wrap, read, input, error };
  }
  if (kind === "select") {
    const opts = options(prop);
    input = h("select", { id, name },
      (!required || !has) ? h("option", { value: "" }, required ? "— choose —" : "—") : null,
      opts.map(([value, text], i) => h("option", { value: String(i), selected: has && prop.default === value }, text)));
    read = () => (input.value === "" ? { empty: true } : { value: opts[Number(input.value)][0] });
  } else if (kind === "multi") {
    const opts = multiOptions(prop);
    const defaults = Array.isArray(prop.default) ? prop.default : [];
    const boxes = opts.map(([value, text], i) => h("label", {}, h("input", { type: "checkbox", name, value: String(i), checked: defaults.includes(value) }), " ", text));
    input = h("div", { class: "choices", id, role: "group" }, boxes);
    read = () => {
      const picked = opts.filter((_, i) => boxes[i].querySelector("input").checked).map(([v]) => v);
      if (prop.minItems !== undefined && picked.length < prop.minItems) return { error: `choose at least ${prop.minItems}` };
      if (prop.maxItems !== undefined && picked.length > prop.maxItems) return { error: `choose at most ${prop.maxItems}` };
      return picked.length || required ? { value: picked } : { empty: true };
    };
  } else if (kind === "number" || kind === "integer") {
    input = h("input", { type: "text", inputmode: kind === "integer" ? "numeric" : "decimal", id, name, value: has ? String(prop.default) : "" });
    read = () => {
      const text = input.value.trim();
      if (text === "") return { empty: true };
      const value = Number(text);
      if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text) || !Number.isFinite(value)) return { error: "enter a number" };
      if (kind === "integer" && !Number.isInteger(value)) return { error: "enter a whole number" };
      if (prop.minimum !== undefined && value < prop.minimum) return { error: `must be at least ${prop.minimum}` };
      if (prop.maximum !== undefined && value > prop.maximum) return { error: `must be at most ${prop.maximum}` };
      if (prop.exclusiveMinimum !== undefined && value <= prop.exclusiveMinimum) return { error: `must be more than ${prop.exclusiveMinimum}` };
      if (prop.exclusiveMaximum !== undefined && value >= prop.exclusiveMaximum) return { error: `must be less than ${prop.exclusiveMaximum}` };
      return { value };
    };
  } else if (kind === "string") {
    const format = FORMATS[prop.format];
    input = h("input", { type: format ? format.type : "text", id, name, value: has ? String(prop.default) : "" });
    read = () => {
      const value = input.value;
      if (value === "") return { empty: true };
      if (prop.minLength !== undefined && value.length < prop.minLength) return { error: `at least ${prop.minLength} characters` };
      if (prop.maxLength !== undefined && value.length > prop.maxLength) return { error: `at most ${prop.maxLength} characters` };
      if (format && !format.check(value)) return { error: `enter ${format.says}` };
      if (prop.pattern) { try { if (!new RegExp(prop.pattern, "u").test(value)) return { error: `must match ${prop.pattern}` }; } catch { /* unusable pattern */ } }
      return { value };
    };
  } else {
    input = h("textarea", { id, name, rows: 3, placeholder: "JSON" });
    if (has) input.value = JSON.stringify(prop.default);
    read = () => {
      if (input.value.trim() === "") return { empty: true };
      try { return { value: JSON.parse(input.value) }; } catch { return { error: "enter valid JSON" }; }
    };
  }
  input.setAttribute("aria-describedby", `${id}-error`);
  input.setAttribute("aria-label", label);
  if (required) input.setAttribute("aria-required", "true");
  const wrap = h("div", { class: "field" }, h("label", { for: id }, label, star(required)), input, hint, error);
  return { name, element: wrap, read, input, error };
}

/** A form for an object schema: { element, read() → {ok, value} | {ok: false} }. */
export function schemaForm(schema, prefix) {
  const props = (schema && schema.properties) || {};
  const required = new Set((schema && schema.required) || []);
  const fields = Object.entries(props).map(([name, prop], i) => field(name, prop || {}, required.has(name), `${prefix}-${i}`));
  const element = h("div", { class: "form" }, fields.map((f) => f.element));
  if (!fields.length) element.append(h("p", { class: "muted small" }, "No fields."));
  function read() {
    const value = {};
    let ok = true;
    for (const f of fields) {
      let got = f.read();
      if (got.empty) got = required.has(f.name) ? { error: "required" } : {};
      f.error.textContent = got.error || "";
      const target = f.input.tagName === "DIV" ? f.input : f.input;
      target.setAttribute("aria-invalid", got.error ? "true" : "false");
      if (got.error) ok = false;
      else if ("value" in got) value[f.name] = got.value;
    }
    return ok ? { ok, value } : { ok: false };
  }
  return { element, read };
}
