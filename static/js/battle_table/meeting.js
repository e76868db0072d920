/**
 * meeting.js: the meeting, where each General says peace or battle (R7), and a judge may
 * give any army's word.
 */

import { ask } from "../battle_confirm.js";
import { $, el } from "../dom.js";
import { fmt } from "../players.js";
import { button } from "./controls.js";
import { voteText } from "./header.js";
import { armyLabel, named } from "./labels.js";
import { send } from "./send.js";
import { S, judge, mine, row, seat } from "./state.js";

export function renderMeeting() {
  const panel = $("meeting-panel");
  const gathering = ["meeting", "peace"].includes(row.status);
  panel.hidden = !gathering;
  if (!gathering) return;
  $("meeting-explain").textContent =
    row.status === "peace" ? S["meeting-peace-explain"] : S["meeting-explain"];
  const own = mine ? seat(mine) : null;
  const voting = Boolean(row.you.may_vote && own);
  $("vote-buttons").hidden = !voting;
  $("your-word").textContent = own
    ? own.vote
      ? fmt(S["your-word"], { vote: named("vote", own.vote) })
      : S["your-word-none"]
    : "";
  for (const b of $("vote-buttons").querySelectorAll("button")) {
    b.setAttribute("aria-pressed", own && own.vote === b.dataset.vote ? "true" : "false");
  }
  const box = $("judge-votes");
  box.hidden = !(judge && row.you.may_vote);
  if (!box.hidden) {
    box.replaceChildren(
      el("h3", { text: S["judge-votes"] }),
      ...(row.armies || []).map((army) =>
        el(
          "div",
          { className: "judge-vote" },
          el("span", { text: `${armyLabel(army.code)}: ${voteText(army)}` }),
          el(
            "div",
            { className: "button-row" },
            button(S["vote-peace-button"], (b) => send("/vote", { army: army.code, vote: "peace" }, b), {
              pressed: army.vote === "peace",
            }),
            button(S["vote-battle-button"], (b) => send("/vote", { army: army.code, vote: "battle" }, b), {
              className: "big-button is-primary",
              pressed: army.vote === "battle",
            }),
          ),
        ),
      ),
    );
  }
}

/** The General's own peace and battle buttons are in the page; one listener serves both. */
export function wireMeeting() {
  $("vote-buttons").addEventListener("click", async (event) => {
    const target = event.target.closest("button[data-vote]");
    if (!target) return;
    const vote = target.dataset.vote;
    if (vote === "battle" && !(await ask(S["confirm-battle"]))) return;
    send("/vote", { vote }, target, S["vote-stored"]);
  });
}
