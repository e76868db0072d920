/**
 * outcome.js: how a battle ends, in either game: a truce agreed (R8), a judge's result at
 * the table, the outcome and the losers, the winner's choice of who survives (R7, R9) and a
 * judge's correction afterwards.
 */

import { ask } from "../battle_confirm.js";
import { $, el } from "../dom.js";
import { fmt } from "../players.js";
import { button, say } from "./controls.js";
import { armyChoice, armyLabel, armyShort, clanName, list, named } from "./labels.js";
import { act, send } from "./send.js";
import { S, can, judge, mine, row, seat, tableState } from "./state.js";

// --- Truce (R8) ----------------------------------------------------------------------------------

export function renderTruce() {
  const panel = $("truce-panel");
  const table = tableState();
  const show = row.status === "battle" && Boolean(row.summary) && row.summary.stage !== "over";
  panel.hidden = !show;
  if (!show) return;
  const agreed = (table && table.truce) || [];
  $("truce-line").textContent = agreed.length
    ? fmt(S["truce-agreed"], { armies: list(agreed.map(armyShort)) })
    : S["truce-none"];
  const buttons = [];
  if (can("truce")) {
    const armies = judge
      ? (row.summary.players || []).filter((p) => p.status !== "lost").map((p) => p.army)
      : mine
        ? [mine]
        : [];
    for (const army of armies) {
      const yes = agreed.includes(army);
      const label = judge
        ? fmt(yes ? S["truce-withdraw-for"] : S["truce-agree-for"], { army })
        : yes
          ? S["truce-withdraw"]
          : S["truce-agree"];
      buttons.push(
        button(label, (b) => act({ type: "truce", army, agree: !yes }, b), {
          className: yes ? "big-button is-quiet" : "big-button",
          pressed: yes,
        }),
      );
    }
  }
  $("truce-buttons").replaceChildren(...buttons);
}

// --- The outcome, the winner's choice and a judge's correction (R8, R9) -------------------------

function reasonText(reason) {
  return named("why", reason);
}

export function renderOutcome() {
  const panel = $("outcome-panel");
  const outcome = row.outcome || (row.summary && row.summary.outcome) || null;
  const stopped = row.status === "stopped" || row.status === "dispersed";
  panel.hidden = !outcome && !stopped;
  if (panel.hidden) return;
  let line = "";
  if (outcome && outcome.kind === "win") {
    line = fmt(S["outcome-win"], { army: armyLabel(outcome.winner), reason: reasonText(outcome.reason) });
  } else if (outcome && outcome.kind === "truce") {
    line = outcome.reason && !["truce", "judge", "tie"].includes(outcome.reason)
      ? fmt(S["outcome-truce-because"], { reason: outcome.reason })
      : fmt(S["outcome-truce"], { reason: reasonText(outcome.reason) });
  } else if (row.status === "stopped") {
    line = S["outcome-stopped"];
  } else if (row.status === "dispersed") {
    line = S["outcome-dispersed"];
  }
  if (outcome && outcome.corrected) line += ` ${S["outcome-corrected"]}`;
  $("outcome-line").textContent = line;
  const losers = (outcome && outcome.losers) || [];
  $("losers-line").textContent = losers.length ? fmt(S["outcome-losers"], { armies: list(losers.map(armyShort)) }) : "";

  const decided = row.status === "decided";
  let note = "";
  if (decided) {
    if (judge) note = fmt(S["decided-judge"], { army: armyShort(outcome.winner) });
    else if (row.you.may_choose_survivors) note = S["decided-you"];
    else note = fmt(S["decided-wait"], { army: armyShort(outcome.winner) });
  }
  $("decided-note").textContent = note;
  $("decided-note").hidden = !note;
  renderSurvivorsForm(outcome);

  const casualties = row.casualties || [];
  const items = casualties.map((c) =>
    el("li", {
      text: fmt(S["casualty"], {
        army: armyLabel(c.army),
        how: named("destroyed", c.destroyed_by),
        turn: c.reform_from,
      }),
    }),
  );
  if (row.status === "ended" && outcome && outcome.survivors) {
    items.unshift(
      el("li", {
        text: outcome.survivors.length
          ? fmt(S["survivors"], { armies: list(outcome.survivors.map(armyShort)) })
          : S["survivors-none"],
      }),
    );
  }
  $("casualty-list").replaceChildren(...items);
  $("control-line").textContent =
    row.status === "ended" && outcome && "control_after" in outcome
      ? fmt(S["control-after"], {
          province: row.province_name,
          clan: outcome.control_after ? clanName(outcome.control_after) : S["nobody"],
        })
      : "";
  renderCorrection(outcome);
}

function choosable(outcome) {
  // The armies the winner decides about: not the winner, not a loser, not of his clan (R7).
  if (!outcome || outcome.kind !== "win") return [];
  const winner = seat(outcome.winner);
  return (row.armies || [])
    .filter((a) => a.code !== outcome.winner && !(outcome.losers || []).includes(a.code))
    .filter((a) => !winner || a.clan !== winner.clan)
    .map((a) => a.code);
}

function checkList(box, armies, checked = new Set()) {
  const before = new Map([...box.querySelectorAll("input")].map((i) => [i.value, i.checked]));
  box.replaceChildren(
    ...armies.map((army) => {
      const input = el("input", { attrs: { type: "checkbox", name: "survivor", value: army } });
      input.checked = before.has(army) ? before.get(army) : checked.has(army);
      return el("label", { className: "check" }, input, ` ${armyLabel(army)}`);
    }),
  );
}

function renderSurvivorsForm(outcome) {
  const form = $("survivors-form");
  const show = row.status === "decided" && row.you.may_choose_survivors;
  form.hidden = !show;
  if (show) checkList($("survivor-choices"), choosable(outcome));
}

function renderCorrection(outcome) {
  const box = $("correct-box");
  if (!box) return;
  box.hidden = !row.you.may_correct;
  if (box.hidden) return;
  const armies = (row.armies || []).map((a) => a.code);
  const winner = $("correct-winner");
  const previous = winner.value || (outcome && outcome.winner) || "";
  winner.replaceChildren(...armies.map((a) => el("option", { text: armyChoice(a), attrs: { value: a } })));
  if (armies.includes(previous)) winner.value = previous;
  $("correct-winner-label").hidden = $("correct-kind").value !== "win";
  checkList($("correct-survivors"), armies, new Set((outcome && outcome.survivors) || []));
}

// --- A judge's result at the table ---------------------------------------------------------------

export function renderJudge() {
  const panel = $("judge-panel");
  if (!panel) return;
  panel.hidden = !can("judge_result");
  if (panel.hidden) return;
  const players = ((row.summary && row.summary.players) || []).filter((p) => p.status !== "lost");
  const select = $("judge-winner");
  const previous = select.value;
  select.replaceChildren(...players.map((p) => el("option", { text: armyChoice(p.army), attrs: { value: p.army } })));
  if (players.some((p) => p.army === previous)) select.value = previous;
  $("judge-winner-label").hidden = $("judge-kind").value !== "win";
}

/** The survivors', the correction's and the judge's result forms are in the page (table.html). */
export function wireOutcome() {
  $("survivors-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const survivors = [...form.querySelectorAll("input[name=survivor]:checked")].map((i) => i.value);
    const spared = survivors.length ? list(survivors) : S["nobody"];
    if (!(await ask(fmt(S["confirm-survivors"], { armies: spared })))) return;
    send("/result", { survivors }, form.querySelector("button[type=submit]"), S["survivors-stored"]);
  });

  if ($("correct-form")) {
    $("correct-kind").addEventListener("change", () => {
      $("correct-winner-label").hidden = $("correct-kind").value !== "win";
    });
    $("correct-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const form = event.currentTarget;
      const kind = $("correct-kind").value;
      const body = {
        kind,
        winner: kind === "win" ? $("correct-winner").value : null,
        survivors: [...$("correct-survivors").querySelectorAll("input:checked")].map((i) => i.value),
        reason: form.elements.namedItem("reason").value.trim(),
      };
      if (!body.reason) return say(S["correct-reason-required"], "error");
      send("/correct", body, form.querySelector("button[type=submit]"), S["corrected"]).then(() => {
        if ($("battle-message").classList.contains("is-ok")) form.elements.namedItem("reason").value = "";
      });
    });
  }

  if ($("judge-result-form")) {
    $("judge-kind").addEventListener("change", () => {
      $("judge-winner-label").hidden = $("judge-kind").value !== "win";
    });
    $("judge-result-form").addEventListener("submit", async (event) => {
      event.preventDefault();
      const kind = $("judge-kind").value;
      const action = { type: "judge_result", kind };
      if (kind === "win") action.winner = $("judge-winner").value;
      const submit = event.currentTarget.querySelector("button[type=submit]");
      if (!(await ask(S["confirm-judge-result"]))) return;
      act(action, submit);
    });
  }
}
