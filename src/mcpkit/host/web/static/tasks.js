// The side panel's background tasks: calls the agent left running as their servers' tasks,
// until the model has their results; a running one can be cancelled (`tasks/cancel`).
import { api, fill, h } from "./dom.js";

const LABEL = { working: "running", earlier: "from an earlier run" };

export function renderTasks(tasks) {
  const box = document.getElementById("tasks");
  if (!tasks.length) { fill(box, h("p", { class: "muted" }, "No background tasks.")); return; }
  fill(box, ...tasks.map((t) => {
    const error = h("div", { class: "form-error", role: "alert" });
    const running = t.status === "working" || t.status === "earlier";
    const status = t.cancelling && running ? "cancelling…" : LABEL[t.status] || `${t.status}, the result waits for the model`;
    return h("div", { class: "task", dataset: { task: t.task, status: t.status } },
      h("div", {}, h("b", {}, `${t.server} › ${t.tool}`), " ", h("span", { class: "muted small" }, t.task)),
      h("span", { class: `badge ${running ? "running" : t.status}`, dataset: { role: "task-status" } }, status),
      running && !t.cancelling ? h("button", { class: "small danger", dataset: { role: "cancel-task" }, onclick: async () => {
        try { await api.post("/api/tasks/cancel", { task: t.task }); }
        catch (err) { error.textContent = err.message; }
      } }, "Cancel") : null,
      error);
  }));
}
