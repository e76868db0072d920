/**
 * clan.js: the Daimyo's and the Karo's page (referees/templates/referees/clan.html).
 *
 * The war map with every army the state holds, the clan's Generals with where their armies
 * are and (Daimyo only: the state carries his clan's orders) their orders this turn; a
 * Scorpion Daimyo chooses where each head-on clash is fought
 * (PUT /api/tournaments/{id}/armies/{code}/on-swap, R5.3). A Daimyo whose clan has no Karo
 * writes instructions to his Generals (POST /api/tournaments/{id}/instructions, R1.1) and
 * sees those sent, from the state. A Daimyo also sees which of his Generals have not ordered
 * yet this turn, and which are in a battle and give none (issue 32).
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
  unordered: $("clan-unordered"),
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

// Issue 32: whether a General of the clan is expected to give an order in the open turn: his
// army stands on the map out of any battle (R4), or is destroyed and may reform now (R9).
function expectsOrder(code, army) {
  if (!army || army.in_battle) return false;
  if (army.province) return true;
  const reform = army.destroyed && (state.clan_reforms || {})[code];
  return Boolean(reform && reform.from_turn <= state.tournament.turn && reform.provinces.length);
}

// Issue 32: for a Daimyo (the state holds his clan's orders, R1.1), which of his Generals have
// not ordered yet this turn, and which are in a battle and give none.
function renderUnordered(missing, fighting, expected) {
  const box = ui.unordered;
  if (!box) return;
  const lines = [];
  const line = (text, names, kind) => {
    const p = document.createElement("p");
    const parts = fmt(text, { names: "\u0000" }).split("\u0000");
    p.append(parts[0]);
    if (names !== null) {
      const strong = document.createElement("strong");
      strong.className = kind;
      strong.textContent = names.join(", ");
      p.append(strong, parts[1] || "");
    }
    lines.push(p);
  };
  if (missing.length) line(S["clan-unordered"], missing, "is-missing");
  else if (expected) line(S["clan-all-ordered"], null, "");
  if (fighting.length) line(S["clan-in-battle"], fighting, "is-fighting");
  box.replaceChildren(...lines);
}

function renderGenerals() {
  const armies = new Map((state.armies || []).map((a) => [a.id, a]));
  const orders = new Map((state.orders || []).map((o) => [o.army, o]));
  const open = state.tournament.clock.phase === "running" && !over();
  const missing = [];
  const fighting = [];
  let expected = 0;
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
    const waited = open && expectsOrder(code, army);
    const general = row.cells[0].textContent.trim() || code; // the row's first cell: his name
    const inBattle = open && Boolean(army && army.in_battle);
    if (cell) {
      if (waited) expected += 1;
      if (waited && !order) missing.push(general);
      if (inBattle) fighting.push(general);
      cell.replaceChildren();
      cell.classList.toggle("is-missing", waited && !order);
      if (order) {
        cell.append(orderText(order));
        const when = document.createElement("div");
        when.className = "note";
        when.textContent = fmt(S["order-given"], { time: formatTime(order.given_at, state) });
        cell.append(when);
      } else if (waited) {
        cell.textContent = S["clan-order-missing"];
      } else if (inBattle) {
        cell.textContent = S["clan-order-battle"];
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
  renderUnordered(missing, fighting, expected);
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
      select.blur();
      await refresh();
    } catch (error) {
      showMessage("error", errorText(S, error));
      select.blur();
      // Refused: no event comes, and the select must show the stored choice again.
      await page.refresh({ evenLive: true });
    }
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
