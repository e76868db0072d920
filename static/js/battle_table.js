/**
 * battle_table.js: one battle table (battles/templates/battles/table.html), phone first.
 *
 * What is drawn is the table as the API shows it to this viewer (R1.1):
 * GET /api/tournaments/{id}/battles/{bid}, first from the page (#battle-initial), then again
 * whenever live.js hears that the tournament changed (a "battle" event bumps its version).
 * The buttons come from the row's `actions` (what the table game lets this viewer send now)
 * and `you` (vote, choose the survivors, correct); they POST to .../vote, .../actions,
 * .../result and .../correct. A refusal's `detail` is shown on the page.
 *
 * Texts come translated from the page: #page-strings (the players' pages' common texts) and
 * #battle-strings (this page's), read with pageStrings(); {name} placeholders are filled here.
 *
 * This file draws the whole page and starts it; the parts are modules in battle_table/:
 *   state.js      the page's config and texts, the table as last heard (`row`), lookups
 *   labels.js     words for codes, armies and numbers
 *   controls.js   buttons, number fields, the message line
 *   send.js       the API: send, act, refresh
 *   header.js     the status line, the draw seed and the seats
 *   meeting.js    the meeting: peace or battle (R7)
 *   proposals.js  changes waiting for a player's consent (R8, R13)
 *   setup.js      the set-up panel of either game
 *   l5r.js        the L5R game: its set-up forms, turns, phases and players (R8, R13)
 *   bushido.js    the Bushido game (R14)
 *   outcome.js    truce, the judge's result, the outcome, survivors, corrections (R7–R9)
 * They share the element builder of dom.js with the other pages' scripts.
 */

import { startPlayerPage } from "./players.js";
import { renderBushido } from "./battle_table/bushido.js";
import { refocus } from "./battle_table/controls.js";
import { renderSeats, renderStatus } from "./battle_table/header.js";
import { renderL5R, wireL5R } from "./battle_table/l5r.js";
import { renderMeeting, wireMeeting } from "./battle_table/meeting.js";
import { renderJudge, renderOutcome, renderTruce, wireOutcome } from "./battle_table/outcome.js";
import { renderProposals } from "./battle_table/proposals.js";
import { drawWith, refresh } from "./battle_table/send.js";
import { renderSetup } from "./battle_table/setup.js";
import { S, config, root } from "./battle_table/state.js";

function render() {
  // What the user typed and where he was survive the new drawing (a live update may come
  // while he types a number).
  const typed = new Map();
  for (const input of root.querySelectorAll("input[data-key][data-typed]")) {
    typed.set(input.dataset.key, input.value);
  }
  const active = document.activeElement;
  const focused = active && root.contains(active) && active.dataset ? active.dataset.key : null;
  renderStatus();
  renderProposals();
  renderMeeting();
  renderSeats();
  renderOutcome();
  renderL5R();
  renderBushido();
  renderTruce();
  renderSetup();
  renderJudge();
  for (const input of root.querySelectorAll("input[data-key]")) {
    if (typed.has(input.dataset.key)) {
      input.value = typed.get(input.dataset.key);
      input.dataset.typed = "1";
    }
  }
  if (focused && !(document.activeElement && root.contains(document.activeElement))) refocus(focused);
}

wireMeeting();
wireL5R();
wireOutcome();
drawWith(render);
render();
startPlayerPage({
  tournamentId: config.tournamentId,
  svg: null,
  S,
  urgent: false,
  onState() {
    refresh();
  },
});
