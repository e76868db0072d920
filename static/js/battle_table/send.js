/**
 * send.js: talking to the API. The buttons POST to .../vote, .../actions, .../result,
 * .../correct and .../proposals/{id}; a refusal's `detail` is shown on the page. refresh()
 * reads the table again (GET /api/tournaments/{id}/battles/{bid}) when live.js hears of a
 * change. After either the whole table is drawn again, by the function given to drawWith().
 */

import { ask } from "../battle_confirm.js";
import { $ } from "../dom.js";
import { ApiError, apiCall, fmt } from "../players.js";
import { refocus, say } from "./controls.js";
import { S, base, judge, mine, root, seat, setRow, row } from "./state.js";

let busy = false;
let fetching = false;
let again = false;
let render = () => {};

/** battle_table.js gives its render(): this module draws again without importing it back. */
export function drawWith(draw) {
  render = draw;
}

function errorText(error) {
  if (!(error instanceof ApiError)) {
    // The browser knows it has no network: say so, rather than blame the server.
    return navigator.onLine === false && S["battle-offline"] ? S["battle-offline"] : S["battle-network"];
  }
  const reason = error.detail || error.code || "";
  if (error.status === 401) return S["error-signed-out"];
  if (error.status === 403 && error.code === "csrf") return S["error-csrf"];
  if (error.status === 429) return S["battle-rate"];
  if (error.status >= 400 && error.status < 500) return fmt(S["battle-refused"], { reason });
  return fmt(S["error-other"], { status: error.status, reason });
}

export async function send(path, body, source, okText = S["battle-done"], onOk = null) {
  if (busy) return;
  busy = true;
  let askFirst = false;
  const buttons = [...root.querySelectorAll("button")];
  for (const b of buttons) b.dataset.wasDisabled = b.disabled ? "1" : "";
  for (const b of buttons) b.disabled = true;
  say(S["battle-sending"], "info");
  try {
    const fresh = await apiCall("POST", `${base}${path}`, body);
    setRow(fresh);
    if (onOk) onOk();
    say(okText, "ok");
  } catch (error) {
    // R8: the server asks before an action that ends the game for a player (say −20 honor);
    // the dialog asks him, and only a yes sends it again.
    askFirst = error instanceof ApiError && error.status === 409 && error.code === "confirm" && !body.confirm;
    say(askFirst ? "" : errorText(error), "error");
  } finally {
    busy = false;
    for (const b of buttons) b.disabled = b.dataset.wasDisabled === "1";
    const key = source && source.dataset ? source.dataset.key : null;
    render();
    if (source && document.body.contains(source)) source.focus();
    else if (key) refocus(key);
  }
  if (askFirst && (await ask(S["confirm-ending"]))) await send(path, { ...body, confirm: true }, source, okText, onOk);
}

export function act(action, source, okText, onOk) {
  // R8, R13: a General's change to another player's counts waits for that player's consent.
  // R14: in Bushido a side is a clan, and its Generals keep its counts together.
  const target = action.army;
  const counted = ["honor", "province", "ring", "models", "victory_points"].includes(action.type);
  const otherSide = row.game !== "bushido" || (seat(target) && seat(mine) && seat(target).clan !== seat(mine).clan);
  const proposal = !judge && target && target !== mine && counted && otherSide;
  const text = proposal ? fmt(S["proposal-made"], { army: target }) : okText;
  return send("/actions", action, source, text, onOk);
}

export async function refresh() {
  if (fetching) {
    again = true;
    return;
  }
  fetching = true;
  try {
    do {
      again = false;
      setRow(await apiCall("GET", base));
      $("load-message").textContent = "";
      if (!busy) render();
    } while (again);
  } catch (error) {
    $("load-message").textContent = fmt(S["battle-load-failed"], { reason: errorText(error) });
  } finally {
    fetching = false;
  }
}
