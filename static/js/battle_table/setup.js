/**
 * setup.js: the set-up panel of either game (R7, R10, R11, R13): the seating and the draws
 * that made it, and one card per army with what it starts the battle with.
 */

import { $, el } from "../dom.js";
import { fmt } from "../players.js";
import { bushidoFacts } from "./bushido.js";
import { renderBegin, renderSeatingForm, renderStrongholdForm, setupFacts } from "./l5r.js";
import { armyShort, clanName, list, named } from "./labels.js";
import { S, config, mine, row, tablePlayer, tableState } from "./state.js";

function drawText(draw) {
  const what = named("draw", draw.what);
  const result = Array.isArray(draw.result) ? draw.result.join(" → ") : draw.result;
  const method = draw.method === "given" ? S["draw-given"] : S["draw-random"];
  return fmt(S["draw-line"], { what, from: list(draw.from || []), result, method });
}

export function renderSetup() {
  const panel = $("setup-panel");
  const table = tableState();
  const setup = row.setup;
  panel.hidden = !setup && !table;
  if (panel.hidden) return;
  const l5r = row.game === "l5r";
  const participants = Object.fromEntries(((setup && setup.participants) || []).map((p) => [p.army, p]));

  // The seating and how it came about (R7, R10, R11).
  let seating = "";
  if (table && l5r) {
    if (table.seating) {
      const how = named("seating-by", table.seating_by);
      seating = fmt(S["seating-line"], { order: table.seating.join(" → "), how });
    } else if (table.chooser) {
      seating = fmt(S["seating-waiting"], { army: armyShort(table.chooser) });
    }
  }
  $("seating-line").textContent = seating;
  const draws = (table && table.draws) || [];
  $("draw-list").replaceChildren(...draws.map((d) => el("li", { text: drawText(d) })));
  $("starting-line").textContent =
    table && table.starting_player ? fmt(S["starting-line"], { army: armyShort(table.starting_player) }) : "";

  // One card per army: what it starts the battle with.
  const order = l5r && table && table.seating ? table.seating : (row.armies || []).map((a) => a.code);
  const armies = [...new Set([...order, ...Object.keys(participants)])];
  const cards = armies.map((army) => {
    const participant = participants[army];
    const p = l5r ? tablePlayer(army) : null;
    const clan = participant ? participant.clan : p ? p.clan : "";
    const notes = ((participant && participant.notes) || []).map((n) => el("li", { text: config.notes[n] || n }));
    return el(
      "article",
      { className: `setup-card${army === mine ? " is-mine" : ""}`, attrs: { "data-army": army } },
      el(
        "h3",
        {},
        el("span", { className: `clan clan-${clan}`, text: clanName(clan) }),
        " ",
        el("span", { text: armyShort(army) }),
      ),
      l5r || participant
        ? el("dl", { className: "facts" }, ...(l5r ? setupFacts(participant, p, table || {}) : bushidoFacts(participant)))
        : null,
      notes.length ? el("ul", { className: "notes" }, ...notes) : null,
      participant && participant.reinforcement ? el("p", { className: "note", text: S["setup-reinforcement"] }) : null,
    );
  });
  $("setup-cards").replaceChildren(...cards);
  renderStrongholdForm();
  renderSeatingForm();
  renderBegin();
}
