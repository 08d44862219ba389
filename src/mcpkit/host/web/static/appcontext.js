// What the host tells an MCP App about where it runs (SEP-1865 "Host Context"), and the
// frame's size and display mode, which that context describes. No postMessage here: the
// AppView (apps.js) sends what these functions compute.

export const MAX_HEIGHT = 900;
/** The display modes this host supports: in the card, or over the whole window. */
export const HOST_MODES = ["inline", "fullscreen"];

const dark = window.matchMedia("(prefers-color-scheme: dark)");

export function theme() {
  return dark.matches ? "dark" : "light";
}

/** Call `listener` when the theme changes; returns the way to stop. */
export function onThemeChange(listener) {
  const heard = () => listener(theme());
  dark.addEventListener("change", heard);
  return () => dark.removeEventListener("change", heard);
}

function styles() {
  const light = theme() === "light";
  return {
    variables: {
      "--font-sans": "system-ui, sans-serif",
      "--color-background-primary": light ? "#ffffff" : "#171a21",
      "--color-text-primary": light ? "#1d2330" : "#e8eaf0",
    },
  };
}

/** The container's dimensions: flexible up to the card's width inline (the app's
 * size-changed notifications size the frame), fixed to the window when full screen. */
export function dimensions(frame, mode) {
  if (mode === "fullscreen") return { width: window.innerWidth, height: window.innerHeight };
  const room = frame.parentElement?.clientWidth || frame.clientWidth || 0;
  return room ? { maxHeight: MAX_HEIGHT, maxWidth: room } : { maxHeight: MAX_HEIGHT };
}

/** The whole context, answered to `ui/initialize`. `requestId`: the JSON-RPC id of the
 * tools/call request that made this app (toolInfo.id), when the host knows it. */
export function hostContext(ev, frame, mode) {
  return {
    toolInfo: ev.request != null ? { id: ev.request, tool: ev.tool } : { tool: ev.tool },
    theme: theme(),
    displayMode: mode,
    availableDisplayModes: HOST_MODES,
    containerDimensions: dimensions(frame, mode),
    locale: navigator.language,
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    platform: "web",
    userAgent: "mcpkit",
    deviceCapabilities: { touch: navigator.maxTouchPoints > 0, hover: matchMedia("(hover: hover)").matches },
    styles: styles(),
  };
}

/** The part of the context that changes with the theme. */
export function themeContext() {
  return { theme: theme(), styles: styles() };
}

/** The mode a `ui/request-display-mode` ends in: the one asked for when this host supports
 * it and the app declared it (when the app declared any: the host MUST NOT switch it to a
 * mode outside its `availableDisplayModes`), else the current one (SHOULD). */
export function resultingMode(asked, current, appModes) {
  if (!HOST_MODES.includes(asked)) return current;
  if (Array.isArray(appModes) && !appModes.includes(asked)) return current;
  return asked;
}

/** Size the frame to what the app reports (`ui/notifications/size-changed`): its content
 * box gets the reported height and width (the frame's borders come on top, so the app
 * does not scroll), the height up to MAX_HEIGHT, the width up to the card's. */
export function applySize(frame, { width, height }) {
  const borderY = frame.offsetHeight - frame.clientHeight;
  const borderX = frame.offsetWidth - frame.clientWidth;
  if (typeof height === "number" && height > 0) {
    frame.style.height = `${Math.min(Math.ceil(height), MAX_HEIGHT) + borderY}px`;
  }
  if (typeof width === "number" && width > 0) {
    frame.style.width = `${Math.ceil(width) + borderX}px`;
    frame.style.maxWidth = "100%";
  }
}
