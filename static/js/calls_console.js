/**
 * calls_console.js: the judges' queue of calls (referees/_console_calls.html).
 *
 * Drawn from the console's live state (`state.calls`: open calls oldest first, then those
 * closed lately; judge.js sends "sl5r:state" on the document after every update). A judge
 * takes a call ("on my way": the caller sees his name) and closes it with a note for the
 * caller. The tab's title counts the open calls, so a judge on another tab sees them.
 */

import { el } from "./dom.js";
import { ApiError, apiCall } from "./api.js";

const panel = document.getElementById("calls-panel");
const T = panel.dataset;
const config = JSON.parse(document.getElementById("judge-config").textContent);
const clans = Object.fromEntries((config.clans || []).map((c) => [c.id, c.name]));
const provinces = Object.fromEntries((config.provinces || []).map((p) => [p.id, p.name]));
const roles = config.roles || {};
const baseTitle = document.title;
const AGE_REFRESH_MS = 15000;

let calls = [];
// Notes being typed survive a redraw (a live update comes while a judge writes).
const notes = new Map();

function fill(text, values) {
  return String(text || "").replace(/\{(\w+)\}/g, (all, key) => (key in values ? String(values[key]) : all));
}

function ago(iso) {
  const minutes = Math.floor((Date.now() - Date.parse(iso)) / 60000);
  return minutes < 1 ? T.agoNow : fill(T.agoMin, { minutes });
}

function reasonText(code) {
  const key = `reason${String(code || "").replace(/^./, (c) => c.toUpperCase())}`;
  return T[key] || code;
}

function where(call) {
  if (!call.province) return "";
  const province = provinces[call.province] || call.province;
  return fill(call.battle ? T.table : T.in, { province });
}

function say(text, kind = "ok") {
  const box = document.getElementById("calls-message");
  box.textContent = text;
  box.className = `console-message is-${kind}`;
  box.hidden = !text;
}

async function act(button, run) {
  button.disabled = true;
  try {
    await run();
    say(T.done);
  } catch (error) {
    // The server's refusal says what is wrong ("hanna has already taken this call").
    say(error instanceof ApiError ? error.detail || error.message : config.strings.network_error, "error");
  } finally {
    button.disabled = false;
  }
}

function who(call) {
  const role = roles[call.role] || call.role;
  return `${call.player} (${clans[call.clan] || call.clan}, ${role}${call.army ? `, ${call.army}` : ""})`;
}

function openItem(call) {
  const mine = call.taken_by && call.taken_by === T.me;
  const status = call.taken_by ? (mine ? T.takenMe : fill(T.taken, { judge: call.taken_by })) : T.waiting;
  const take = el("button", { text: T.take, className: "primary", attrs: { type: "button", "data-take": String(call.id) } });
  take.hidden = Boolean(call.taken_by);
  take.addEventListener("click", () => act(take, () => apiCall("POST", `/tournaments/${config.tournamentId}/calls/${call.id}/take`)));
  const note = el("input", { attrs: { type: "text", maxlength: "200", "aria-label": T.note, placeholder: T.note, "data-note": String(call.id) } });
  note.value = notes.get(call.id) || "";
  note.addEventListener("input", () => notes.set(call.id, note.value));
  const close = el("button", { text: T.close, attrs: { type: "submit" } });
  const form = el("form", { className: "call-close" }, note, close);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    act(close, async () => {
      await apiCall("POST", `/tournaments/${config.tournamentId}/calls/${call.id}/close`, { note: note.value });
      notes.delete(call.id);
    });
  });
  return el("li", { className: `call${call.taken_by ? " is-taken" : " is-waiting"}`, attrs: { "data-call": String(call.id) } },
    el("p", { className: "call-head" },
      el("strong", { text: who(call) }),
      document.createTextNode(" "),
      el("span", { className: "call-where", text: where(call) })),
    el("p", { className: "call-why" },
      el("span", { className: "tag", text: reasonText(call.reason) }),
      call.text ? document.createTextNode(` “${call.text}”`) : null),
    el("p", { className: "call-state" },
      el("time", { className: "call-age", text: ago(call.at), attrs: { datetime: call.at } }),
      document.createTextNode(" · "),
      el("span", { text: status })),
    el("div", { className: "call-actions" }, take, form));
}

function closedItem(call) {
  const by = call.withdrawn ? T.withdrawn : fill(T.closed, { judge: call.closed_by });
  return el("li", { className: "call is-closed", attrs: { "data-call": String(call.id) } },
    el("strong", { text: who(call) }), document.createTextNode(` · ${reasonText(call.reason)} · ${by}`),
    call.note ? document.createTextNode(`: “${call.note}”`) : null);
}

function draw() {
  const open = calls.filter((c) => !c.closed_at);
  const closed = calls.filter((c) => c.closed_at);
  const list = document.getElementById("calls-open");
  // Keep the focus in a note being typed across the redraw.
  const active = document.activeElement;
  const focusNote = active && active.dataset ? active.dataset.note : null;
  list.replaceChildren(...(open.length ? open.map(openItem) : [el("li", { className: "muted", text: T.none })]));
  if (focusNote) {
    const again = list.querySelector(`input[data-note="${focusNote}"]`);
    if (again) again.focus();
  }
  document.getElementById("calls-recent").replaceChildren(...closed.map(closedItem));
  document.getElementById("calls-recent-box").hidden = !closed.length;
  const count = document.getElementById("calls-count");
  count.textContent = String(open.length);
  count.hidden = !open.length;
  panel.classList.toggle("has-calls", open.length > 0);
  document.title = open.length ? `(${open.length}) ${baseTitle}` : baseTitle;
}

function refreshAges() {
  for (const node of panel.querySelectorAll("time.call-age")) node.textContent = ago(node.getAttribute("datetime"));
}

document.addEventListener("sl5r:state", (event) => {
  calls = event.detail.calls || [];
  draw();
});
try {
  calls = JSON.parse(document.getElementById("initial-state").textContent).calls || [];
} catch {
  calls = [];
}
draw();
setInterval(refreshAges, AGE_REFRESH_MS);
