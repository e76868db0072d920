/**
 * positions.js: the page where a clan declares its starting positions
 * (referees/templates/referees/positions.html, R3.1-R3.2).
 *
 * The clan's home provinces are outlined on the map; each army gets one, from its list or
 * by tapping the army and then a province. "Declare" sends them all to
 * PUT /api/tournaments/{id}/positions/{clan}: the server checks R3.2 and refuses with the
 * reason in the reader's language, shown as it comes. The state (live.js) says the phase and
 * where the clan's armies stand now (the clan's own armies only, until negotiation): the
 * form closes when the positions are fixed, and a declaration made elsewhere (another
 * General, a judge) replaces the choices unless the player has changed them since.
 */

import { focusOn, provinceInfo, renderOverlay, showWholeMap } from "./map.js";
import { ApiError, apiCall, fmt, pageStrings, panelStrings, startPlayerPage } from "./players.js";

const $ = (id) => document.getElementById(id);
const root = $("player-page");
const data = JSON.parse($("positions-data").textContent);
const S = { ...pageStrings(), ...pageStrings("positions-strings") };
if (S["live-offline-positions"]) S["live-offline"] = S["live-offline-positions"];
const PANEL = panelStrings(S);
const svg = $("war-map");
const homes = new Set(data.homes.map((h) => h.id));
const codes = data.armies.map((a) => a.code);
const OPEN = new Set(["planning", "deployment"]);

const ui = {
  status: $("positions-status"),
  form: $("positions-form"),
  message: $("positions-message"),
  hint: $("positions-hint"),
  offline: $("positions-offline"),
  declare: $("declare-button"),
  zoom: $("zoom-button"),
};

let state = null;
let page = null;
let busy = false;
let selected = codes[0] || null;
// What the server holds for each army, and what is chosen on this page.
let declared = Object.fromEntries(data.armies.map((a) => [a.code, a.province || ""]));
let draft = { ...declared };
let edited = false; // chosen here since the last declaration the page knows of
let zoomedIn = true; // the map shows the clan's lands, not all of Rokugan

const name = (id) => (provinceInfo(svg, id) || { name: id }).name;
const select = (code) => $(`position-${code}`);

function phase() {
  return state ? state.tournament.clock.phase : root.dataset.phase;
}

function isOpen() {
  return OPEN.has(phase());
}

let messagePhase = null; // a message is about the phase it was said in

function showMessage(kind, text) {
  ui.message.className = kind ? `message is-${kind}` : "message";
  ui.message.textContent = text;
  messagePhase = text ? phase() : null;
}

function choose(code, province) {
  if (!code || !isOpen()) return;
  // A province is for one army: the army that had it takes this one's old choice.
  const other = codes.find((c) => c !== code && draft[c] === province);
  if (other) draft[other] = draft[code] || "";
  draft[code] = province;
  edited = true;
  showMessage("", "");
  render();
}

function selectArmy(code) {
  selected = code;
  render();
}

function nextUnplaced(after) {
  const start = codes.indexOf(after);
  const order = [...codes.slice(start + 1), ...codes.slice(0, start + 1)];
  return order.find((c) => !draft[c]) || after;
}

function pickProvince(id) {
  if (!isOpen() || busy || !selected) return;
  if (!homes.has(id)) {
    showMessage("error", fmt(S["not-home"], { province: name(id) }));
    return;
  }
  const code = selected;
  choose(code, id);
  selected = nextUnplaced(code);
  render();
}

// Where the clan's armies stand by the state (the clan's own, R3.1): the declaration now.
function declaredFromState() {
  const placed = {};
  for (const army of state.armies || []) {
    if (army.clan === data.clan && codes.includes(army.id)) placed[army.id] = army.province || "";
  }
  return Object.fromEntries(codes.map((c) => [c, placed[c] || ""]));
}

function renderRows(open) {
  for (const row of document.querySelectorAll(".position-row[data-army]")) {
    const code = row.dataset.army;
    const field = select(code);
    row.classList.toggle("is-selected", open && code === selected);
    row.setAttribute("aria-current", open && code === selected ? "true" : "false");
    if (field) {
      if (field.value !== (draft[code] || "")) field.value = draft[code] || "";
      field.disabled = !open || busy;
    }
    const line = row.querySelector("[data-declared-for]");
    if (line) {
      let text = declared[code] ? fmt(S["declared-at"], { province: name(declared[code]) }) : S["not-declared"];
      if (open && draft[code] && draft[code] !== declared[code]) {
        text = fmt(S["chosen-other"], { province: name(draft[code]) });
      }
      line.textContent = text;
      line.classList.toggle("is-changed", open && draft[code] !== declared[code]);
    }
  }
}

function renderStatus(open) {
  const p = phase();
  const key = p === "setup" || open ? `status-${p}` : "status-fixed";
  ui.status.textContent = S[key] || "";
  ui.status.classList.toggle("is-closed", !open);
}

function renderZoom() {
  if (zoomedIn) focusOn(svg, [...homes], { padding: 0.08 });
  else showWholeMap(svg);
  ui.zoom.textContent = zoomedIn ? S["zoom-whole"] : S["zoom-homes"];
  ui.zoom.setAttribute("aria-pressed", zoomedIn ? "false" : "true");
}

function renderMap(open) {
  // The choices drawn as the clan's armies, so that the map shows what would be declared.
  const armies = codes
    .filter((c) => draft[c])
    .map((c) => ({ id: c, clan: data.clan, province: draft[c], in_battle: false, destroyed: false }));
  renderOverlay(svg, { ...state, armies, orders: [], meetings: [] }, {
    onProvinceClick: open ? pickProvince : null,
    highlight: [...homes],
    selected: open && selected ? draft[selected] || null : null,
    showOrders: false,
    strings: PANEL,
  });
}

function render() {
  if (!state) return;
  const open = isOpen();
  renderStatus(open);
  renderRows(open);
  ui.declare.hidden = !open;
  ui.declare.disabled = busy;
  ui.declare.textContent = busy ? S.sending : ui.declare.dataset.label;
  ui.hint.hidden = !open;
  ui.hint.textContent = selected ? fmt(S.placing, { army: selected }) : "";
  ui.offline.hidden = !open || Boolean(page && page.isLive());
  if (messagePhase !== null && messagePhase !== phase()) showMessage("", "");
  renderMap(open);
}

// The service says "positions: <why>" (the API's "field: what is wrong"); the page says
// "Not declared: <why>", so the field's name is left out, in whatever language it came.
function reason(detail) {
  const prefix = String(S["refusal-format"] || "").split("%(problems)s")[0];
  return prefix && detail.startsWith(prefix) ? detail.slice(prefix.length) : detail;
}

function refusalText(error) {
  if (!(error instanceof ApiError)) return navigator.onLine === false ? S.offline : S.network;
  const { status, code } = error;
  const detail = reason(error.detail || "");
  if (status === 409 && code === "phase") return S.closed;
  if (status === 400 || status === 409 || status === 422) return fmt(S.refused, { reason: detail || code });
  if (status === 401) return S["signed-out"];
  if (status === 403 && code === "csrf") return S.csrf;
  if (status === 403) return fmt(S.forbidden, { reason: detail || code });
  return fmt(S.other, { status, reason: detail || code });
}

async function declare(event) {
  event.preventDefault();
  if (busy || !isOpen()) return;
  const missing = codes.find((c) => !draft[c]);
  if (missing) {
    selected = missing;
    showMessage("error", S["choose-all"]);
    render();
    return;
  }
  busy = true;
  render();
  try {
    const positions = Object.fromEntries(codes.map((c) => [c, draft[c]]));
    const done = await apiCall("PUT", `/tournaments/${data.tournament}/positions/${data.clan}`, { positions });
    declared = { ...positions };
    edited = false;
    const key = OPEN.has(done.phase) ? `declared-ok-${done.phase}` : "declared-ok-fixed";
    showMessage("ok", S[key]);
    messagePhase = done.phase; // the declaration itself may have begun negotiation
  } catch (error) {
    showMessage("error", refusalText(error));
  } finally {
    busy = false;
    render();
  }
  await page.refresh();
}

for (const code of codes) {
  const field = select(code);
  if (!field) continue;
  field.addEventListener("focus", () => {
    if (selected !== code) selectArmy(code);
  });
  field.addEventListener("change", () => {
    selected = code;
    choose(code, field.value);
  });
}
for (const row of document.querySelectorAll(".position-row[data-army]")) {
  row.addEventListener("click", (event) => {
    if (event.target.closest("select")) return;
    selectArmy(row.dataset.army);
  });
}
ui.declare.dataset.label = ui.declare.textContent;
ui.zoom.hidden = false;
ui.zoom.addEventListener("click", () => {
  zoomedIn = !zoomedIn;
  renderZoom();
});
renderZoom();
ui.form.addEventListener("submit", declare);

page = startPlayerPage({
  tournamentId: data.tournament,
  svg,
  S,
  urgent: false,
  onState(next) {
    state = next;
    const fresh = declaredFromState();
    const changed = codes.some((c) => fresh[c] !== declared[c]);
    declared = fresh;
    // A declaration made elsewhere wins over choices not touched here since.
    if (changed && !edited) draft = { ...declared };
    if (!isOpen()) draft = { ...declared };
    render();
  },
  onChange() {
    render();
  },
});
