/**
 * bushido.js: the Bushido game at a battle table (R14): two sides, each a clan whose
 * Generals keep its counts together; the tactical test, the models, pass tokens and victory
 * points, game after game while clans wait in the queue.
 */

import { ask } from "../battle_confirm.js";
import { $, el } from "../dom.js";
import { fmt } from "../players.js";
import { button, numberInput, say } from "./controls.js";
import { armyLabel, armyShort, clanName, list, named, signed } from "./labels.js";
import { act } from "./send.js";
import { S, can, row, seat, tableState } from "./state.js";

const BUSHIDO_PHASES = ["starting", "main", "end"];

/** What a Bushido army starts with, on its set-up card. */
export function bushidoFacts(participant) {
  if (!participant) return [];
  const out = [];
  const add = (label, value) => out.push(el("div", {}, el("dt", { text: label }), el("dd", { text: value })));
  add(S["setup-farms"], String(participant.small_farms || 0));
  const force = participant.force_modifier;
  add(S["setup-force"], force ? fmt(S["setup-force-value"], { value: signed(force) }) : S["setup-force-none"]);
  return out;
}

export function renderBushido() {
  const panel = $("bushido-panel");
  const summary = row.summary;
  const table = tableState();
  const playing = Boolean(summary && row.game === "bushido" && summary.stage === "playing" && summary.phase);
  panel.hidden = !playing;
  if (!playing) return;
  const [a, b] = summary.sides;
  $("bushido-sides").textContent = fmt(S["bushido-game"], {
    n: summary.game_number,
    a: clanName(a),
    b: clanName(b),
  });
  $("bushido-phase").textContent = fmt(S["phase-line"], { phase: named("bphase", summary.phase) });
  $("bushido-turn").textContent = fmt(S["bushido-turn"], { turn: summary.turn, turns: summary.turns });
  $("bushido-queue").textContent = summary.queue.length
    ? fmt(S["bushido-queue"], { clans: list(summary.queue.map(clanName)) })
    : "";
  const at = BUSHIDO_PHASES.indexOf(summary.phase);
  $("bushido-steps").replaceChildren(
    ...BUSHIDO_PHASES.map((phase, index) => {
      const item = el("li", { className: index === at ? "is-current" : index < at ? "is-done" : "" });
      if (index === at) item.setAttribute("aria-current", "step");
      item.append(el("span", { text: named("bphase", phase) }));
      return item;
    }),
  );

  const fighting = (summary.players || []).filter((p) => p.status === "fighting" || p.status === "winner");
  const first = (clan) => (fighting.find((p) => p.clan === clan) || {}).army;
  const body = [];
  // The Starting phase: the tactical test and the models (pass tokens follow, seed 002).
  const test = table ? table.tactical_test : null;
  body.push(el("p", { text: test ? fmt(S["tactical-won"], { army: armyLabel(test) }) : S["tactical-none"] }));
  if (can("tactical_test")) {
    body.push(
      el(
        "div",
        { className: "button-row" },
        ...[a, b].map((clan) =>
          button(
            fmt(S["tactical-button"], { clan: clanName(clan) }),
            (btn) => act({ type: "tactical_test", winner: first(clan) }, btn),
            { pressed: Boolean(test && seat(test) && seat(test).clan === clan), key: `tactical-${clan}` },
          ),
        ),
      ),
    );
  }
  const tokens = summary.pass_tokens;
  body.push(
    el("p", {
      text: tokens
        ? tokens.side
          ? fmt(S["pass-tokens"], { clan: clanName(tokens.side), count: tokens.count })
          : S["pass-tokens-none"]
        : "",
    }),
  );
  for (const clan of [a, b]) {
    const models = table && table.models ? table.models[clan] : null;
    const points = table && table.victory_points ? table.victory_points[clan] : 0;
    const side = el(
      "article",
      { className: "player-card", attrs: { "data-clan": clan } },
      el(
        "h3",
        {},
        el("span", { className: `clan clan-${clan}`, text: clanName(clan) }),
        " ",
        el("span", { text: list(fighting.filter((p) => p.clan === clan).map((p) => armyShort(p.army))) }),
      ),
      el(
        "div",
        { className: "counter" },
        el("span", { className: "counter-label", text: S["models"] }),
        el("span", { className: "counter-value", text: models === null || models === undefined ? "—" : String(models) }),
      ),
    );
    if (can("models")) {
      const input = numberInput(`models-${clan}`, {
        min: "0",
        max: "999",
        "aria-label": fmt(S["models-label"], { clan: clanName(clan) }),
      });
      if (models !== null && models !== undefined) input.value = String(models);
      side.append(
        el(
          "div",
          { className: "honor-other" },
          input,
          button(S["models-set"], (btn) => {
            const count = Number(input.value);
            if (input.value.trim() === "" || !Number.isInteger(count) || count < 0) {
              return say(S["models-invalid"], "error");
            }
            act({ type: "models", army: first(clan), count }, btn, undefined, () => {
              delete input.dataset.typed;
            });
          }, { className: "small-button", key: `models-set-${clan}` }),
        ),
      );
    }
    const vp = el(
      "div",
      { className: "counter" },
      el("span", { className: "counter-label", text: S["victory-points"] }),
      can("victory_points")
        ? button("−1", (btn) => act({ type: "victory_points", army: first(clan), points: -1 }, btn), {
            className: "quick-button",
            key: `vp-minus-${clan}`,
          })
        : null,
      el("span", { className: "counter-value", text: String(points || 0) }),
      can("victory_points")
        ? button("+1", (btn) => act({ type: "victory_points", army: first(clan), points: 1 }, btn), {
            className: "quick-button",
            key: `vp-plus-${clan}`,
          })
        : null,
    );
    side.append(vp);
    body.push(side);
  }
  const results = (table && table.results) || [];
  for (const result of results) {
    body.push(
      el("p", {
        className: "note",
        text: fmt(S["bushido-result"], {
          n: result.game,
          winner: result.winner ? clanName(result.winner) : S["nobody"],
          points: result.sides.map((s) => `${clanName(s)} ${result.victory_points[s]}`).join(" – "),
        }),
      }),
    );
  }
  $("bushido-body").replaceChildren(...body);

  const buttons = [];
  if (can("phase") && at >= 0 && at < BUSHIDO_PHASES.length - 1) {
    const next = BUSHIDO_PHASES[at + 1];
    buttons.push(button(fmt(S["next-phase"], { phase: named("bphase", next) }), (b) => act({ type: "phase", phase: next }, b)));
  }
  if (can("end_turn")) {
    buttons.push(
      button(S["end-turn"], (b) => act({ type: "end_turn" }, b, S["turn-ended"]), {
        className: "big-button is-primary",
      }),
    );
  }
  if (can("declare")) {
    buttons.push(
      button(S["declare-all-scored"], async (b) => {
        if (!(await ask(S["confirm-all-scored"]))) return;
        act({ type: "declare", kind: "all_scored", confirm: true }, b);
      }, { className: "big-button is-quiet" }),
    );
  }
  $("bushido-buttons").replaceChildren(...buttons);
}
