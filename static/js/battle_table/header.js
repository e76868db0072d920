/**
 * header.js: the table's status line, its draw seed (R11) and the seats, whatever the game.
 */

import { $, el } from "../dom.js";
import { fmt } from "../players.js";
import { clanName, named } from "./labels.js";
import { S, root, row, summaryPlayer } from "./state.js";

/** R11: the commitment of the table's seed, and the seed itself once the table is over. */
function renderDrawSeed() {
  const draws = row.draws || {};
  const lines = [
    ["battle-commitment", draws.commitment],
    ["battle-seed", draws.seed],
  ];
  for (const [id, value] of lines) {
    $(id).hidden = !value;
    const code = $(`${id}-value`);
    if (code.textContent !== (value || "")) code.textContent = value || "";
  }
}

export function renderStatus() {
  renderDrawSeed();
  root.dataset.status = row.status;
  root.dataset.stage = row.summary ? row.summary.stage : "";
  $("status-line").textContent = fmt(S["status-line"], {
    status: named("status", row.status),
    turn: row.opened_turn,
  });
}

export function voteText(army) {
  if (army.vote) return named("vote", army.vote);
  return army.voted ? S["vote-hidden"] : S["vote-none"];
}

export function renderSeats() {
  const gathering = ["meeting", "peace"].includes(row.status);
  const items = (row.armies || []).map((army) => {
    const player = summaryPlayer(army.code);
    const bits = [];
    if (army.general) bits.push(army.general);
    if (army.mine) bits.push(S["you"]);
    if (army.reinforcement) bits.push(fmt(S["seat-reinforcement"], { turn: army.joined_turn }));
    if (player && player.status && !gathering) bits.push(named("pstatus", player.status));
    const item = el(
      "li",
      { className: `seat${army.mine ? " is-mine" : ""}` },
      el("span", { className: `clan clan-${army.clan}`, text: clanName(army.clan) }),
      " ",
      el("strong", { text: army.code }),
      bits.length ? el("span", { className: "seat-info", text: ` · ${bits.join(" · ")}` }) : null,
    );
    if (gathering || (row.status !== "battle" && army.vote)) {
      item.append(
        el("span", { className: `seat-vote vote-${army.vote || "none"}`, text: voteText(army) }),
      );
    }
    return item;
  });
  $("seat-list").replaceChildren(...items);
}
