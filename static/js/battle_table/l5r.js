/**
 * l5r.js: the L5R game at a battle table (R7, R8, R10, R13): the set-up (strongholds, the
 * seating, the start), then whose turn it is, the phases and each player's honor,
 * provinces and rings, and the production turns of newcomers.
 */

import { ask } from "../battle_confirm.js";
import { $, el } from "../dom.js";
import { fmt } from "../players.js";
import { button, numberInput, say } from "./controls.js";
import { armyLabel, armyShort, clanName, list, named, signed } from "./labels.js";
import { act } from "./send.js";
import { S, can, judge, mine, row, seat, tablePlayer, tableState } from "./state.js";

const L5R_PHASES = ["straighten", "events", "action", "attack", "dynasty", "end"];
const ELEMENTS = ["air", "earth", "fire", "water", "void"];
const HONOR_FLOOR = -19; // R13: the Legacy Sensei never take family honor below −19
const PRODUCTION_TURNS = 2; // R8

let seatingDraft = null; // the chooser's seating while he arranges it

// --- The set-up (R7, R10, R13) -------------------------------------------------------------------

function startHonor(p) {
  // R13: the stronghold's honor with the Sensei's change (never below −19), then the
  // battle's bonus (Crane, R10). Before the battle begins it is simply the honor now.
  if (!p.stronghold) return null;
  const sensei = (p.stronghold.sensei && p.stronghold.sensei.honor) || 0;
  return Math.max(HONOR_FLOOR, p.stronghold.honor + sensei) + (p.honor_bonus || 0);
}

export function setupFacts(participant, p, table) {
  const facts = [];
  const add = (label, value) => facts.push(el("div", {}, el("dt", { text: label }), el("dd", { text: value })));
  const honor = p ? (table.stage === "setup" ? p.honor : startHonor(p)) : null;
  add(S["setup-honor"], honor === null || honor === undefined ? S["setup-no-stronghold"] : String(honor));
  if (participant && participant.honor_bonus) {
    add(S["setup-honor-bonus"], signed(participant.honor_bonus));
  }
  if (p && table.starting_player) {
    add(
      S["setup-start"],
      p.army === table.starting_player ? S["setup-starting-player"] : S["setup-bamboo"],
    );
  } else if (p && p.bamboo_harvesters) {
    add(S["setup-start"], S["setup-bamboo"]);
  }
  const strength = p ? p.province_strength : null;
  add(
    S["setup-provinces"],
    strength === null || strength === undefined ? "4" : fmt(S["setup-provinces-value"], { count: 4, strength }),
  );
  if (p && p.gold !== null && p.gold !== undefined) add(S["setup-gold"], String(p.gold));
  const hand = participant ? participant.hand_size : p ? p.hand_size : null;
  if (hand !== null && hand !== undefined) add(S["setup-hand"], fmt(S["setup-hand-value"], { count: hand }));
  const farms = participant ? participant.small_farms : p ? p.small_farms : 0;
  add(S["setup-farms"], String(farms || 0));
  const force = participant ? participant.force_modifier : p ? p.force_modifier : 0;
  add(S["setup-force"], force ? fmt(S["setup-force-value"], { value: signed(force) }) : S["setup-force-none"]);
  return facts;
}

function needsStronghold() {
  const table = tableState();
  if (!table || row.game !== "l5r") return [];
  return (table.players || [])
    .filter((p) => p.honor === null && p.status !== "lost")
    .map((p) => p.army);
}

export function renderStrongholdForm() {
  const form = $("stronghold-form");
  const missing = needsStronghold();
  const armies = judge ? missing : missing.filter((a) => a === mine);
  form.hidden = !(can("stronghold") && armies.length);
  if (form.hidden) return;
  const select = $("stronghold-army");
  const previous = select.value;
  select.replaceChildren(...armies.map((a) => el("option", { text: armyLabel(a), attrs: { value: a } })));
  if (armies.includes(previous)) select.value = previous;
  $("stronghold-army-label").hidden = !judge && armies.length === 1;
}

export function renderSeatingForm() {
  const box = $("seating-form");
  const table = tableState();
  const show = Boolean(
    row.game === "l5r" && table && table.stage === "setup" && can("seating") && (judge || table.chooser === mine),
  );
  box.hidden = !show;
  if (!show) {
    seatingDraft = null;
    return;
  }
  const armies = (table.players || []).map((p) => p.army);
  if (!seatingDraft || seatingDraft.length !== armies.length || armies.some((a) => !seatingDraft.includes(a))) {
    seatingDraft = table.seating ? [...table.seating] : [...armies];
  }
  const items = seatingDraft.map((army, index) =>
    el(
      "li",
      { className: "seating-item" },
      el("span", { className: "seating-army", text: armyLabel(army) }),
      button("↑", () => moveSeat(index, -1), {
        className: "small-button",
        disabled: index === 0,
        title: S["seating-up"],
      }),
      button("↓", () => moveSeat(index, 1), {
        className: "small-button",
        disabled: index === seatingDraft.length - 1,
        title: S["seating-down"],
      }),
    ),
  );
  $("seating-order").replaceChildren(...items);
}

function moveSeat(index, step) {
  const other = index + step;
  if (!seatingDraft || other < 0 || other >= seatingDraft.length) return;
  [seatingDraft[index], seatingDraft[other]] = [seatingDraft[other], seatingDraft[index]];
  renderSeatingForm();
}

export function renderBegin() {
  const box = $("begin-box");
  const table = tableState();
  box.hidden = !(row.game === "l5r" && can("begin"));
  if (box.hidden || !judge) return;
  const honors = (table.players || []).map((p) => p.honor).filter((h) => h !== null);
  const top = Math.max(...honors);
  const tied = (table.players || []).filter((p) => p.honor === top).map((p) => p.army);
  const label = $("begin-first-label");
  label.hidden = tied.length < 2;
  const select = $("begin-first");
  const previous = select.value;
  select.replaceChildren(
    el("option", { text: S["begin-draw"], attrs: { value: "" } }),
    ...tied.map((a) => el("option", { text: armyLabel(a), attrs: { value: a } })),
  );
  if (tied.includes(previous)) select.value = previous;
}

/** The set-up's forms are in the page (table.html); their listeners are added once. */
export function wireL5R() {
  $("stronghold-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const number = (name) => {
      const value = form.elements.namedItem(name).value.trim();
      return value === "" ? null : Number(value);
    };
    const action = {
      type: "stronghold",
      army: form.elements.namedItem("army").value || mine,
      honor: number("honor"),
      province_strength: number("province_strength"),
      gold: number("gold"),
    };
    const sensei = {};
    for (const key of ["honor", "province_strength", "gold"]) {
      const value = number(`sensei_${key}`);
      if (value !== null) sensei[key] = value;
    }
    if (Object.keys(sensei).length) action.sensei = sensei;
    act(action, form.querySelector("button[type=submit]"), S["stronghold-stored"]);
  });

  $("seating-send").addEventListener("click", (event) => {
    if (!seatingDraft) return;
    act({ type: "seating", order: [...seatingDraft] }, event.currentTarget, S["seating-stored"]);
  });

  $("begin-button").addEventListener("click", (event) => {
    const action = { type: "begin" };
    const first = $("begin-first");
    if (first && !$("begin-first-label").hidden && first.value) action.first = first.value;
    act(action, event.currentTarget, S["begun"]);
  });
}

// --- The game: whose turn, phases, players (R8, R13) -------------------------------------------

function phaseName(phase) {
  return named("lphase", phase);
}

function freezeText(summary, table) {
  if (summary.stage === "production" && table && table.production) {
    const production = table.production;
    const army = production.order[production.index];
    return [
      fmt(S["production-now"], {
        army: armyShort(army),
        turn: production.turn,
        of: PRODUCTION_TURNS,
      }),
      S["production-rules"],
    ];
  }
  if (summary.frozen && table) {
    const arriving = (table.players || [])
      .filter((p) => p.status === "newcomer" && !(table.seating || []).includes(p.army))
      .map((p) => p.army);
    return [
      fmt(S["frozen-now"], { army: armyShort(summary.current), newcomers: list(arriving) }),
      S["production-rules"],
    ];
  }
  return null;
}

export function renderL5R() {
  const panel = $("play-panel");
  const summary = row.summary;
  const table = tableState();
  const playing = Boolean(summary && row.game === "l5r" && ["playing", "production"].includes(summary.stage));
  panel.hidden = !playing;
  if (!playing) return;
  const production = summary.stage === "production";
  const current = summary.current;
  const yours = current && current === mine;
  panel.classList.toggle("is-your-turn", Boolean(yours));
  panel.classList.toggle("is-frozen", Boolean(production || summary.frozen));
  $("turn-who").textContent = yours
    ? S["turn-yours"]
    : fmt(production ? S["turn-production-of"] : S["turn-of"], { army: armyLabel(current) });
  $("turn-phase").textContent = production
    ? fmt(S["production-turn"], { turn: table.production.turn, of: PRODUCTION_TURNS })
    : fmt(S["phase-line"], { phase: phaseName(summary.phase) });
  $("turn-round").textContent = fmt(S["round-line"], { round: summary.round, turn: summary.turn });

  const freeze = freezeText(summary, table);
  const note = $("freeze-note");
  note.hidden = !freeze;
  if (freeze) note.replaceChildren(...freeze.map((t, i) => el(i ? "p" : "strong", { text: t })));

  // The phases: the current one marked; a later one is a button when the turn may move on.
  const steps = $("phase-steps");
  steps.hidden = production;
  const at = L5R_PHASES.indexOf(summary.phase);
  steps.replaceChildren(
    ...L5R_PHASES.map((phase, index) => {
      const item = el("li", { className: index === at ? "is-current" : index < at ? "is-done" : "" });
      if (index === at) item.setAttribute("aria-current", "step");
      if (index > at && can("phase")) {
        item.append(button(phaseName(phase), (b) => act({ type: "phase", phase }, b), { className: "step-button" }));
      } else {
        item.append(el("span", { text: phaseName(phase) }));
      }
      return item;
    }),
  );

  const buttons = [];
  if (can("phase") && at >= 0 && at < L5R_PHASES.length - 1) {
    const next = L5R_PHASES[at + 1];
    buttons.push(
      button(fmt(S["next-phase"], { phase: phaseName(next) }), (b) => act({ type: "phase", phase: next }, b)),
    );
  }
  if (can("end_turn")) {
    buttons.push(
      button(S["end-turn"], (b) => act({ type: "end_turn" }, b, S["turn-ended"]), {
        className: "big-button is-primary",
      }),
    );
  }
  if (can("production_done")) {
    buttons.push(
      button(S["production-done"], (b) => act({ type: "production_done" }, b), {
        className: "big-button is-primary",
      }),
    );
  }
  $("turn-buttons").replaceChildren(...buttons);
  $("player-cards").replaceChildren(...(summary.players || []).map((p) => playerCard(p, summary)));
}

function playerCard(p, summary) {
  const army = p.army;
  const out = p.status === "lost";
  const card = el("article", {
    className: [
      "player-card",
      army === mine ? "is-mine" : "",
      army === summary.current ? "is-current" : "",
      out ? "is-out" : "",
    ].filter(Boolean).join(" "),
    attrs: { "data-army": army },
  });
  const info = tablePlayer(army);
  const status = named("pstatus", p.status);
  const lost = out && info && info.lost_reason ? ` (${named("lost", info.lost_reason)})` : "";
  card.append(
    el(
      "h3",
      {},
      el("span", { className: `clan clan-${p.clan}`, text: clanName(p.clan) }),
      " ",
      el("span", { text: armyShort(army) }),
      el("span", { className: "player-status", text: ` · ${status}${lost}` }),
    ),
  );
  const general = seat(army) && seat(army).general;
  if (general) card.append(el("p", { className: "note general-name", text: general }));

  const quick = can("honor") && !out && p.honor !== null;
  const honorRow = el(
    "div",
    { className: "counter honor-counter" },
    el("span", { className: "counter-label", text: S["honor"] }),
    quick
      ? button("−1", (b) => act({ type: "honor", army, delta: -1 }, b), {
          className: "quick-button",
          label: fmt(S["honor-minus"], { army }),
          key: `honor-minus-${army}`,
        })
      : null,
    el("span", { className: "counter-value honor-value", text: p.honor === null ? "—" : String(p.honor) }),
    quick
      ? button("+1", (b) => act({ type: "honor", army, delta: 1 }, b), {
          className: "quick-button",
          label: fmt(S["honor-plus"], { army }),
          key: `honor-plus-${army}`,
        })
      : null,
  );
  card.append(honorRow);
  if (quick) {
    card.append(honorOther(army));
  }

  const provinces = el(
    "div",
    { className: "counter province-counter" },
    el("span", { className: "counter-label", text: S["provinces-left"] }),
    el("span", { className: "counter-value province-value", text: fmt(S["provinces-value"], { count: p.provinces, of: 4 }) }),
  );
  card.append(provinces);
  if (can("province") && !out && p.honor !== null) {
    card.append(
      el(
        "div",
        { className: "button-row tight" },
        button(S["province-lost"], async (b) => {
          // Another player's province is a proposal he confirms (R8, R13): nothing to ask here.
          const last = p.provinces === 1 && (judge || army === mine);
          const text = army === mine ? S["confirm-own-last-province"] : fmt(S["confirm-last-province"], { army });
          if (last && !(await ask(text))) return;
          act({ type: "province", army, delta: -1, ...(last ? { confirm: true } : {}) }, b);
        }, { className: "big-button", key: `province-lost-${army}` }),
        p.provinces < 4
          ? button(S["province-regained"], (b) => act({ type: "province", army, delta: 1 }, b), {
              className: "big-button is-quiet",
              key: `province-regained-${army}`,
            })
          : null,
      ),
    );
  }

  const rings = el("div", { className: "rings" }, el("span", { className: "counter-label", text: S["rings"] }));
  const claimable = can("ring") && !out && p.honor !== null;
  for (const element of ELEMENTS) {
    const held = (p.rings || []).includes(element);
    if (held) {
      rings.append(el("span", { className: `ring ring-${element} is-held`, text: `✓ ${S[`ring-${element}`]}` }));
    } else if (claimable) {
      rings.append(
        button(S[`ring-${element}`], async (b) => {
          if (!(await ask(fmt(S["confirm-ring"], { army, ring: S[`ring-${element}`] })))) return;
          act({ type: "ring", army, element, confirm: true }, b);
        }, { className: `ring-button ring-${element}`, key: `ring-${element}-${army}` }),
      );
    }
  }
  if (!(p.rings || []).length && !claimable) rings.append(el("span", { className: "note", text: S["rings-none"] }));
  card.append(rings);

  // Enlightenment declared (R13): a General for himself, a judge for anyone.
  const extra = [];
  if (can("declare") && !out && (judge || army === mine)) {
    extra.push(
      button(S["declare-enlightenment"], async (b) => {
        if (!(await ask(fmt(S["confirm-enlightenment"], { army })))) return;
        act({ type: "declare", kind: "enlightenment", army, confirm: true }, b);
      }, { className: "big-button is-quiet", key: `declare-${army}` }),
    );
  }
  if (extra.length) card.append(el("div", { className: "button-row tight" }, ...extra));
  return card;
}

function honorOther(army) {
  // Larger changes (an honor gain of 3, a loss of 5…): a number and a button.
  const input = numberInput(`honor-${army}`, {
    min: "-99",
    max: "99",
    placeholder: "±",
    "aria-label": fmt(S["honor-change-label"], { army }),
  });
  const go = button(S["honor-change"], (b) => {
    const delta = Number(input.value);
    if (input.value.trim() === "" || !Number.isInteger(delta) || delta === 0) {
      say(S["honor-change-invalid"], "error");
      return;
    }
    act({ type: "honor", army, delta }, b, undefined, () => {
      input.value = "";
      delete input.dataset.typed;
    });
  }, { className: "small-button", key: `honor-change-${army}` });
  return el("div", { className: "honor-other" }, input, go);
}
