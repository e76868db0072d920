/**
 * clan.js: the Daimyo's and the Karo's page (referees/templates/referees/clan.html).
 *
 * The war map with every army the state holds, the clan's Generals with where their armies
 * are and (Daimyo only: the state carries his clan's orders) their orders this turn; a
 * Scorpion Daimyo chooses where each head-on clash is fought
 * (PUT /api/tournaments/{id}/armies/{code}/on-swap, R5.3). A Daimyo whose clan has no Karo
 * writes instructions to his Generals (POST /api/tournaments/{id}/instructions, R1.1) and
 * sees those sent, from the state.
 */

import {
  provinceDetails,
  provinceInfo,
  renderOverlay,
  renderProvincePanel,
} from "./map.js";
import {
  ApiError,
  apiCall,
  errorText,
  fmt,
  formatTime,
  pageStrings,
  panelStrings,
  renderInstructions,
  renderScores,
  startPlayerPage,
} from "./players.js";
import { renderClanBattles } from "./battle_link.js";

const root = document.getElementById("player-page");
const S = pageStrings();
// A Daimyo or Karo gives no orders: his page says what of his may not arrive.
if (S["live-offline-clan"]) S["live-offline"] = S["live-offline-clan"];
const PANEL = panelStrings(S);
const tournamentId = Number(root.dataset.tournament);

const $ = (id) => document.getElementById(id);
const svg = $("war-map");
const ui = {
  live: $("live-status"),
  panel: $("province-panel"),
  message: $("clan-message"),
  showOrders: $("show-orders"),
  instructions: $("instructions-list"),
  instructionForm: $("instruction-form"),
  instructionTo: $("instruction-to"),
  instructionText: $("instruction-text"),
  instructionMessage: $("instruction-message"),
  instructionSend: $("instruction-send"),
};
let sendingInstruction = false;

let state = null;
let page = null;
let panelProvince = null;
let messageTurn = null; // the turn the swap message was about

function over() {
  return Boolean(page && page.isOver());
}

function showMessage(kind, text) {
  ui.message.className = kind ? `message is-${kind}` : "message";
  ui.message.textContent = text;
  messageTurn = text && state ? state.tournament.turn : null;
}

const name = (id) => (provinceInfo(svg, id) || { name: id }).name;

function orderText(order) {
  if (!order) return "";
  let text;
  if (order.kind === "move") text = fmt(S["order-move"], { path: order.path.map(name).join(" → ") });
  else if (order.kind === "reform") text = fmt(S["order-reform"], { province: name(order.reform) });
  else text = S["order-hold"];
  if (order.claim === false) text += ` (${S["order-no-claim"]})`;
  return text;
}

function renderGenerals() {
  const armies = new Map((state.armies || []).map((a) => [a.id, a]));
  const orders = new Map((state.orders || []).map((o) => [o.army, o]));
  for (const row of document.querySelectorAll("table.generals tr[data-army]")) {
    const code = row.dataset.army;
    const army = armies.get(code);
    const where = row.querySelector(".js-where");
    if (where) {
      let text = S["general-no-army"];
      if (army && army.province) {
        text = name(army.province);
        if (army.in_battle) text += ` · ${S["general-in-battle"]}`;
      } else if (army && army.destroyed) {
        // R9: where and from when he may reform, as the Daimyo sees the board.
        const reform = (state.clan_reforms || {})[code];
        text = S["general-destroyed"];
        if (reform && reform.provinces.length) {
          text = fmt(S["general-reform"], { turn: reform.from_turn, castles: reform.provinces.map(name).join(", ") });
        } else if (reform) {
          text = S["general-reform-none"];
        }
      }
      where.textContent = text;
    }
    const order = orders.get(code);
    const cell = row.querySelector(".js-order");
    if (cell) {
      cell.replaceChildren();
      if (order) {
        cell.append(orderText(order));
        const when = document.createElement("div");
        when.className = "note";
        when.textContent = fmt(S["order-given"], { time: formatTime(order.given_at, state) });
        cell.append(when);
      } else {
        cell.textContent = "—";
      }
    }
    const select = row.querySelector(".js-swap select");
    if (select && document.activeElement !== select) {
      const movable = Boolean(order && order.kind === "move");
      select.disabled = !movable || state.tournament.clock.phase !== "running" || over();
      select.value = movable && order.on_swap === "stay" ? "stay" : "advance";
      select.title = movable ? "" : S["swap-none"];
    }
  }
}

function showPanel(id) {
  panelProvince = id;
  renderProvincePanel(ui.panel, provinceDetails(svg, state, id), PANEL, svg);
}

function render() {
  if (!state) return;
  if (messageTurn !== null && messageTurn !== state.tournament.turn) showMessage("", "");
  renderOverlay(svg, state, {
    onProvinceClick: showPanel,
    highlight: [],
    selected: panelProvince && !ui.panel.hidden ? panelProvince : null,
    showOrders: !ui.showOrders || ui.showOrders.checked,
    strings: PANEL,
  });
  if (panelProvince && !ui.panel.hidden) showPanel(panelProvince);
  renderGenerals();
  renderScores(svg, state);
  renderInstructions(ui.instructions, state.instructions, S, state);
  renderInstructionForm();
}

function renderInstructionForm() {
  if (!ui.instructionForm) return;
  const phase = state ? state.tournament.clock.phase : "";
  // The server refuses instructions before the start and after the end (R1.1 applies while
  // the game is on); the button says so at once.
  ui.instructionSend.disabled = sendingInstruction || phase === "setup" || phase === "finished";
  // Over, there is nobody to instruct: the form goes (the list of what was sent stays).
  ui.instructionForm.hidden = phase === "finished";
}

function instructionError(error) {
  if (!(error instanceof ApiError)) {
    return navigator.onLine === false ? S["instruction-offline"] : S["instruction-network"];
  }
  if (error.status === 401 || (error.status === 403 && error.code === "csrf") || error.status === 429) {
    return errorText(S, error);
  }
  return fmt(S["instruction-refused"], { reason: error.detail || error.code || error.status });
}

function showInstructionMessage(ok, text) {
  ui.instructionMessage.className = ok ? "message is-ok" : "message is-error";
  ui.instructionMessage.textContent = text;
}

async function sendInstruction(event) {
  event.preventDefault();
  const text = ui.instructionText.value.trim();
  if (!text) {
    showInstructionMessage(false, S["instruction-empty"]);
    ui.instructionText.focus();
    return;
  }
  sendingInstruction = true;
  renderInstructionForm();
  try {
    const to = ui.instructionTo.value ? Number(ui.instructionTo.value) : null;
    await apiCall("POST", `/tournaments/${tournamentId}/instructions`, { text, to });
    ui.instructionText.value = "";
    showInstructionMessage(true, S["instruction-sent"]);
  } catch (error) {
    showInstructionMessage(false, instructionError(error));
  } finally {
    sendingInstruction = false;
    renderInstructionForm();
  }
  await refresh();
}

function refresh() {
  return page.refresh();
}

for (const select of document.querySelectorAll(".js-swap select")) {
  select.addEventListener("change", async () => {
    select.disabled = true;
    try {
      await apiCall(
        "PUT",
        `/tournaments/${tournamentId}/armies/${encodeURIComponent(select.dataset.army)}/on-swap`,
        { on_swap: select.value },
      );
      showMessage("ok", S["swap-saved"]);
    } catch (error) {
      showMessage("error", errorText(S, error));
    }
    select.blur();
    await refresh();
  });
}
if (ui.showOrders) ui.showOrders.addEventListener("change", render);
if (ui.instructionForm) ui.instructionForm.addEventListener("submit", sendInstruction);
ui.panel.addEventListener("click", (event) => {
  if (event.target.closest(".panel-close")) render();
});
page = startPlayerPage({
  tournamentId,
  svg,
  S,
  urgent: false,
  onState(next) {
    state = next;
    render();
    renderClanBattles(next);
  },
  onChange() {
    // The deadline passed or the connection changed: close the swap choices at once.
    if (state) renderGenerals();
  },
});
