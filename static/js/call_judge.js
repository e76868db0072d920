/**
 * call_judge.js: "Call a judge" on a player's page and at his table (_call_judge.html).
 *
 *   renderCall(state)   draws the player's own call from his state (`state.call`, R1.1)
 *
 * A call goes to the judges' consoles only; a repeated tap finds the same call. The page
 * shows the call's state ("waiting", "judge hanna is on the way", closed with the judge's
 * note) as the live state brings it; the answer to the call itself is drawn at once.
 */

import { ApiError, apiCall } from "./api.js";

const box = document.getElementById("judge-call");
const T = box ? box.dataset : {};
let current = null;

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

function draw() {
  if (!box) return;
  const call = current;
  const open = Boolean(call && !call.closed_at);
  const status = document.getElementById("call-status");
  const note = document.getElementById("call-note");
  let text = "";
  if (open && call.taken_by) text = fill(T.taken, { judge: call.taken_by });
  else if (open) text = fill(T.waiting, { reason: reasonText(call.reason), ago: ago(call.at) });
  else if (call && call.withdrawn) text = T.withdrawn;
  else if (call) text = fill(T.closed, { judge: call.closed_by });
  status.textContent = text;
  status.hidden = !text;
  box.classList.toggle("is-open", open);
  box.classList.toggle("is-taken", open && Boolean(call.taken_by));
  note.textContent = call && call.closed_at && call.note ? `“${call.note}”` : "";
  note.hidden = !note.textContent;
  // While a call is open the form gives way to "I no longer need a judge".
  document.getElementById("call-open").hidden = open;
  if (open) document.getElementById("call-open").open = false;
  document.getElementById("call-withdraw").hidden = !open;
}

export function renderCall(state) {
  if (!box || !state || !("call" in state)) return;
  current = state.call;
  draw();
}

function showError(error) {
  const node = document.getElementById("call-error");
  if (!error) {
    node.hidden = true;
    node.textContent = "";
    return;
  }
  node.textContent = error instanceof ApiError ? fill(T.error, { reason: error.detail || error.status }) : T.network;
  node.hidden = false;
}

if (box) {
  const tournament = box.dataset.tournament;
  const form = document.getElementById("call-form");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const send = document.getElementById("call-send");
    send.disabled = true;
    showError(null);
    try {
      const reason = form.querySelector("input[name=reason]:checked");
      current = await apiCall("POST", `/tournaments/${tournament}/calls`, {
        reason: reason ? reason.value : "other",
        text: document.getElementById("call-text").value,
      });
      document.getElementById("call-text").value = "";
      draw();
    } catch (error) {
      showError(error);
    } finally {
      send.disabled = false;
    }
  });
  const withdraw = document.getElementById("call-withdraw");
  withdraw.addEventListener("click", async () => {
    withdraw.disabled = true;
    showError(null);
    try {
      current = await apiCall("DELETE", `/tournaments/${tournament}/calls/mine`);
      draw();
    } catch (error) {
      showError(error);
    } finally {
      withdraw.disabled = false;
    }
  });
  // "2 min ago" keeps counting while the call waits.
  window.setInterval(() => {
    if (current && !current.closed_at) draw();
  }, 15000);
}
