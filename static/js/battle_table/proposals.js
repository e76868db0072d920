/**
 * proposals.js: changes that wait for another player's consent (R8, R13): a General's
 * change to another player's counts is a proposal, which that player confirms or declines
 * and its maker may withdraw.
 */

import { ask } from "../battle_confirm.js";
import { $, el } from "../dom.js";
import { fmt } from "../players.js";
import { button } from "./controls.js";
import { armyLabel, armyShort, named, signed } from "./labels.js";
import { send } from "./send.js";
import { S, row, seat, tablePlayer } from "./state.js";

function changeText(proposal) {
  const a = proposal.action || {};
  const army = armyShort(proposal.to);
  let what;
  if (a.type === "honor") what = fmt(S["proposal-honor"], { army, delta: signed(a.delta) });
  else if (a.type === "province" && a.delta < 0) what = fmt(S["proposal-province-lost"], { army });
  else if (a.type === "province") what = fmt(S["proposal-province-regained"], { army });
  else if (a.type === "ring") what = fmt(S["proposal-ring"], { army, ring: S[`ring-${a.element}`] || a.element });
  else if (a.type === "models") what = fmt(S["proposal-models"], { army, count: a.count });
  else if (a.type === "victory_points") what = fmt(S["proposal-victory-points"], { army, delta: signed(a.points) });
  else what = fmt(S["proposal-other"], { army, type: named("action", a.type) });
  return what;
}

function proposalText(proposal) {
  return fmt(S["proposal-line"], { by: armyLabel(proposal.by), what: changeText(proposal) });
}

// What came of a proposal that was not made: "declined by unicorn-2", "withdrawn",
// "lapsed when the battle was decided", for its maker and everyone at the table.
function answeredText(proposal) {
  const what = changeText(proposal);
  const by = armyLabel(proposal.by);
  if (proposal.status === "declined") {
    const who = seat(proposal.answered_by) ? armyLabel(proposal.answered_by) : proposal.answered_by || "";
    return fmt(S["proposal-was-declined"], { by, what, who });
  }
  if (proposal.status === "withdrawn") return fmt(S["proposal-was-withdrawn"], { by, what });
  return fmt(S["proposal-lapsed"], { by, what });
}

function renderAnswered() {
  const answered = row.proposals_answered || [];
  $("proposals-answered").hidden = answered.length === 0;
  $("proposals-answered-list").replaceChildren(
    ...answered.map((proposal) =>
      el("li", { className: `proposal-answered is-${proposal.status}`, attrs: { "data-proposal": String(proposal.id) } },
        el("span", { text: answeredText(proposal) }))),
  );
}

export function renderProposals() {
  const proposals = row.proposals || [];
  renderAnswered();
  $("proposals-panel").hidden = proposals.length === 0 && (row.proposals_answered || []).length === 0;
  $("proposals-panel").classList.toggle("is-settled", proposals.length === 0);
  $("proposal-list").replaceChildren(
    ...proposals.map((proposal) => {
      const answer = (word, okKey) => async (b) => {
        // Consenting to his own end (his last province, −20 honor) is asked once more (R8).
        const a = proposal.action || {};
        const p = tablePlayer(proposal.to);
        const ending =
          p &&
          ((a.type === "province" && a.delta < 0 && p.provinces === 1) ||
            (a.type === "honor" && p.honor > -20 && p.honor + a.delta <= -20));
        if (word === "confirm" && ending && !(await ask(S["confirm-ending"]))) return;
        send(`/proposals/${proposal.id}`, { answer: word }, b, S[okKey]);
      };
      const buttons = [];
      if (proposal.may_answer) {
        buttons.push(
          button(S["proposal-confirm"], answer("confirm", "proposal-confirmed"), {
            className: "big-button is-primary",
            key: `proposal-confirm-${proposal.id}`,
          }),
          button(S["proposal-decline"], answer("decline", "proposal-declined"), {
            key: `proposal-decline-${proposal.id}`,
          }),
        );
      }
      if (proposal.may_withdraw) {
        buttons.push(
          button(S["proposal-withdraw"], answer("withdraw", "proposal-withdrawn"), {
            className: "big-button is-quiet",
            key: `proposal-withdraw-${proposal.id}`,
          }),
        );
      }
      const item = el(
        "li",
        { className: "proposal", attrs: { "data-proposal": String(proposal.id) } },
        el("p", { className: "proposal-text", text: proposalText(proposal) }),
      );
      if (!proposal.may_answer) {
        item.append(el("p", { className: "note", text: fmt(S["proposal-waiting"], { army: armyShort(proposal.to) }) }));
      }
      if (buttons.length) item.append(el("div", { className: "button-row tight" }, ...buttons));
      return item;
    }),
  );
}
