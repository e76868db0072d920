/**
 * paper_orders.js: the paper slips typed in (referees/templates/referees/paper_orders.html).
 *
 * One row per army, in the order of the turn pack's slips. Keyboard first: digits choose the
 * box ticked on the slip (its number), Enter stores the row with the judges' order API
 * (PUT /api/tournaments/{id}/armies/{code}/order: a paper order handed in on time, R4) and
 * moves on to the next row at once; the answer, stored or refused with its reason, lands on
 * its own row. Every request names the pack's turn, so a slip entered after that turn was
 * resolved is refused as late, never carried into the next one.
 */

import { ApiError, apiCall } from "./api.js";
import { $ } from "./dom.js";

const config = JSON.parse($("paper-config").textContent);
const S = config.strings;
const rows = [...document.querySelectorAll(".paper-row")];
// The latest request of each row: an older answer arriving later is not shown.
const sent = new Map();
const outcome = new Map(); // army -> "ok" | "refused" | "sending"

const fill = (text, values) => text.replace(/\{(\w+)\}/g, (_, key) => String(values[key] ?? ""));

// A refusal's words: the API's own detail (in the judge's language), else what went wrong.
function reasonOf(error) {
  if (error instanceof ApiError) return error.detail || fill(S.server_error, { status: error.status });
  return S.network;
}

const parts = (row) => ({
  choice: row.querySelector(".paper-choice"),
  noClaim: row.querySelector(".paper-no-claim"),
  swap: row.querySelector(".paper-swap"),
  stored: row.querySelector(".paper-stored"),
  when: row.querySelector(".paper-when"),
  refusal: row.querySelector(".paper-refusal"),
  hint: row.querySelector(".paper-hint"),
});

// A box marked ✗ is one the turn would refuse as the board stands (a General who may not
// see the map ticked what his slip offered, R1.1): the judge reads why before he stores it.
function hint(row) {
  const p = parts(row);
  const option = p.choice.selectedOptions[0];
  const reason = option ? option.dataset.refused || "" : "";
  p.hint.hidden = !reason;
  p.hint.textContent = reason ? fill(S.would_refuse, { reason }) : "";
}

function summarise() {
  const counts = { ok: 0, refused: 0, sending: 0 };
  for (const state of outcome.values()) counts[state] += 1;
  const box = $("paper-summary");
  box.textContent = outcome.size
    ? fill(S.summary, { stored: counts.ok, refused: counts.refused, waiting: counts.sending })
    : "";
  box.classList.toggle("has-refused", counts.refused > 0);
}

function show(row, state, text, reason = "") {
  const p = parts(row);
  p.stored.textContent = text;
  p.stored.className = `paper-stored is-${state}`;
  if (p.when) p.when.textContent = "";
  p.refusal.hidden = !reason;
  p.refusal.textContent = reason ? fill(S.refused, { reason }) : "";
  p.refusal.setAttribute("role", reason ? "alert" : "status");
  row.classList.toggle("is-refused", state === "refused");
  outcome.set(row.dataset.army, state);
  summarise();
}

// The chosen box in words, as the row shows it once stored: "Kaiu Lands (does not claim)".
function choiceText(p) {
  const option = p.choice.selectedOptions[0];
  const label = option.dataset.text;
  const notes = [];
  if (p.noClaim && p.noClaim.checked) notes.push(S.no_claim);
  if (p.swap && p.swap.value === "stay" && option.dataset.kind === "move") notes.push(S.stay);
  return notes.length ? `${label} (${notes.join("; ")})` : label;
}

async function store(row) {
  const p = parts(row);
  const army = row.dataset.army;
  const value = p.choice.value;
  if (!value) return; // no slip for this army: nothing to store
  const ticket = (sent.get(army) || 0) + 1;
  sent.set(army, ticket);
  const path = `${config.api}/armies/${encodeURIComponent(army)}/order`;
  const text = value === "withdraw" ? S.withdrawn : fill(S.stored, { order: choiceText(p) });
  show(row, "sending", S.sending);
  try {
    if (value === "withdraw") {
      await apiCall("DELETE", path);
    } else {
      const option = p.choice.selectedOptions[0];
      const kind = option.dataset.kind;
      const body = {
        kind,
        claim: !(p.noClaim && p.noClaim.checked),
        on_swap: p.swap ? p.swap.value : "advance",
        turn: config.turn,
      };
      if (kind === "move") body.path = option.dataset.path.split(">");
      if (kind === "reform") body.reform = option.dataset.reform;
      await apiCall("PUT", path, body);
    }
    if (sent.get(army) === ticket) {
      p.stored.dataset.before = text;
      show(row, "ok", text);
    }
  } catch (error) {
    if (sent.get(army) === ticket) show(row, "refused", p.stored.dataset.before || "", reasonOf(error));
  }
}

function current(row) {
  for (const other of rows) other.classList.toggle("is-current", other === row);
}

function next(row) {
  const index = rows.indexOf(row);
  const following = rows[index + 1];
  if (following) parts(following).choice.focus();
  else $("paper-summary").focus();
}

// Digits typed on a row's list choose the box with that number; two digits typed quickly
// make one number (box 12), as the slip prints them.
let typed = "";
let typedAt = 0;
function chooseNumber(select, digit) {
  const now = Date.now();
  typed = now - typedAt < 900 && typed.length < 2 ? typed + digit : digit;
  typedAt = now;
  const byNumber = (n) => [...select.options].find((o) => o.dataset.number === n);
  const option = byNumber(typed) || byNumber(digit);
  if (!option) return;
  if (option.dataset.number === digit) typed = digit;
  select.value = option.value;
}

for (const row of rows) {
  const p = parts(row);
  p.stored.dataset.before = p.stored.textContent;
  row.addEventListener("focusin", () => current(row));
  p.choice.addEventListener("change", () => hint(row));
  row.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === "Enter") {
      event.preventDefault();
      typed = "";
      store(row);
      next(row);
      return;
    }
    if (event.target === p.choice && /^[0-9]$/.test(event.key)) {
      event.preventDefault();
      chooseNumber(p.choice, event.key);
      hint(row);
    }
  });
}

$("paper-summary").tabIndex = -1;
if (rows.length) parts(rows[0]).choice.focus();
