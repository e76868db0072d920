/**
 * checkin_console.js: check-in on the judge console before the turns (_console_checkin.html).
 *
 * From the console's live state (`state.checkin`, judges only): who has opened his join
 * link and when, who a judge marked present (he plays on paper), who has not come. For a
 * no-show: "Present" (paper), "Replace…" (a name, and the seat is his with a new join link),
 * or, during set-up, tick him and preview the line-up R1 (b) leaves without him (a Karo,
 * then a Daimyo, steps into a missing General's army) before applying it.
 */

import { ApiError, apiCall } from "./api.js";
import { el } from "./dom.js";

const panel = document.getElementById("checkin-panel");
const T = panel.dataset;
const config = JSON.parse(document.getElementById("judge-config").textContent);
const clans = Object.fromEntries((config.clans || []).map((c) => [c.id, c.name]));
const roles = config.roles || {};
const base = `/tournaments/${config.tournamentId}`;

let rows = [];
let phase = "";
const ticked = new Set();
let replacing = null;

function fill(text, values) {
  return String(text || "").replace(/\{(\w+)\}/g, (all, key) => (key in values ? String(values[key]) : all));
}

function timeOf(iso) {
  try {
    return new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", timeZone: config.timeZone }).format(new Date(iso));
  } catch {
    return iso;
  }
}

function say(text, kind = "ok") {
  const box = document.getElementById("checkin-message");
  box.textContent = text;
  box.className = `console-message is-${kind}`;
  box.hidden = !text;
}

async function act(button, run) {
  if (button) button.disabled = true;
  try {
    const message = await run();
    say(message || T.done);
  } catch (error) {
    say(error instanceof ApiError ? error.detail || error.message : config.strings.network_error, "error");
  } finally {
    if (button) button.disabled = false;
  }
}

function who(row) {
  return `${row.name} · ${clans[row.clan] || row.clan}, ${roles[row.role] || row.role}${row.army ? `, ${row.army}` : ""}`;
}

function missingItem(row) {
  const present = el("button", { text: T.present, attrs: { type: "button", "data-present": String(row.id) } });
  present.addEventListener("click", () => act(present, () => apiCall("POST", `${base}/players/${row.id}/presence`, { present: true })));
  const replace = el("button", { text: T.replace, attrs: { type: "button", "data-replace": String(row.id) } });
  replace.addEventListener("click", () => {
    replacing = row.id;
    draw();
    const input = panel.querySelector(`input[data-stand-in="${row.id}"]`);
    if (input) input.focus();
  });
  let form = null;
  if (replacing === row.id) {
    const input = el("input", { attrs: { type: "text", maxlength: "120", required: "", "aria-label": T.replaceName, placeholder: T.replaceName, "data-stand-in": String(row.id) } });
    const ok = el("button", { text: T.replaceOk, className: "primary", attrs: { type: "submit" } });
    const cancel = el("button", { text: T.cancel, attrs: { type: "button" } });
    cancel.addEventListener("click", () => {
      replacing = null;
      draw();
    });
    form = el("form", { className: "checkin-replace" }, input, ok, cancel);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      act(ok, async () => {
        // Before the start the seat goes to a stand-in; once started, the replace of the game.
        const path = phase === "setup" ? "stand-in" : "replace";
        const player = await apiCall("POST", `${base}/players/${row.id}/${path}`, { name: input.value });
        replacing = null;
        return fill(T.replaced, { name: player.name, url: player.join_url || "" });
      });
    });
  }
  const tick = phase === "setup"
    ? el("label", { className: "check" },
      el("input", { attrs: { type: "checkbox", "data-no-show": String(row.id), ...(ticked.has(row.id) ? { checked: "" } : {}) } }),
      document.createTextNode(` ${T.noShow}`))
    : null;
  if (tick) {
    tick.querySelector("input").addEventListener("change", (event) => {
      if (event.target.checked) ticked.add(row.id);
      else ticked.delete(row.id);
      document.getElementById("checkin-plan").hidden = true;
    });
  }
  return el("li", { className: "checkin-missing", attrs: { "data-player": String(row.id) } },
    el("span", { className: "checkin-who", text: who(row) }),
    el("span", { className: "checkin-actions" }, present, replace, tick),
    form);
}

function hereItem(row) {
  const when = row.marked_by
    ? fill(T.byJudge, { judge: row.marked_by, time: timeOf(row.checked_in_at) })
    : fill(T.byLink, { time: timeOf(row.checked_in_at) });
  let unmark = null;
  if (row.marked_by) {
    unmark = el("button", { text: T.unmark, className: "link-like", attrs: { type: "button", "data-unmark": String(row.id) } });
    unmark.addEventListener("click", () => act(unmark, () => apiCall("POST", `${base}/players/${row.id}/presence`, { present: false })));
  }
  return el("li", { attrs: { "data-player": String(row.id) } },
    el("span", { className: "checkin-who", text: who(row) }), document.createTextNode(` — ${when} `), unmark);
}

function planView(plan) {
  const box = document.getElementById("checkin-plan");
  const changes = plan.changes.map((c) => el("li", {
    text: fill(T.becomes, { name: c.name, clan: clans[c.clan] || c.clan, before: roles[c.role_before] || c.role_before, after: roles[c.role] || c.role })
      + (c.role === "general" && c.role_before !== "general" && c.army ? ` · ${fill(T.takesArmy, { army: c.army })}` : ""),
  }));
  const parts = [
    el("h4", { text: fill(T.previewTitle, { before: plan.players_before, after: plan.players_after }) }),
    el("p", { text: fill(T.leaving, { names: plan.leaving.map((p) => p.name).join(", ") }) }),
    changes.length ? el("ul", { className: "checkin-changes" }, ...changes) : el("p", { className: "muted", text: T.noChanges }),
  ];
  if (plan.ok) {
    const apply = el("button", { text: fill(T.apply, { after: plan.players_after }), className: "primary", attrs: { type: "button", id: "checkin-apply" } });
    apply.addEventListener("click", () => act(apply, async () => {
      const done = await apiCall("POST", `${base}/lineup/shrink`, { players: plan.leaving.map((p) => p.id) });
      ticked.clear();
      box.hidden = true;
      return fill(T.applied, { after: done.players_after });
    }));
    const cancel = el("button", { text: T.cancel, attrs: { type: "button" } });
    cancel.addEventListener("click", () => {
      box.hidden = true;
    });
    parts.push(el("div", { className: "button-row" }, apply, cancel));
  } else {
    parts.push(el("p", { className: "console-message is-error", text: plan.problem, attrs: { role: "alert" } }));
  }
  box.replaceChildren(...parts);
  box.hidden = false;
}

function draw() {
  const missing = rows.filter((r) => !r.checked_in_at);
  const here = rows.filter((r) => r.checked_in_at);
  document.getElementById("checkin-count").textContent = fill(T.count, { here: here.length, total: rows.length });
  document.getElementById("checkin-missing-title").textContent = missing.length ? T.missing : T.all;
  document.getElementById("checkin-missing").replaceChildren(...missing.map(missingItem));
  document.getElementById("checkin-here-title").textContent = `${T.here} (${here.length})`;
  document.getElementById("checkin-here").replaceChildren(...here.map(hereItem));
  const shrink = document.getElementById("checkin-shrink");
  shrink.hidden = phase !== "setup" || !missing.length;
  panel.classList.toggle("is-complete", rows.length > 0 && !missing.length);
}

document.getElementById("checkin-preview").textContent = T.preview;
document.getElementById("checkin-preview").addEventListener("click", (event) => {
  if (!ticked.size) {
    say(T.noneTicked, "error");
    return;
  }
  act(event.currentTarget, async () => {
    planView(await apiCall("POST", `${base}/lineup/shrink-preview`, { players: [...ticked] }));
    return "";
  });
});

function update(state) {
  phase = state.tournament.clock.phase;
  panel.hidden = !state.checkin;
  if (!state.checkin) return;
  rows = state.checkin;
  const ids = new Set(rows.map((r) => r.id));
  for (const id of [...ticked]) if (!ids.has(id)) ticked.delete(id);
  draw();
}

document.addEventListener("sl5r:state", (event) => update(event.detail));
try {
  update(JSON.parse(document.getElementById("initial-state").textContent));
} catch {
  panel.hidden = true;
}
