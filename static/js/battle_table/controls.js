/**
 * controls.js: the battle table's buttons, number fields and message line.
 *
 * Every control has a `data-key` that names it across drawings, so that focus and what the
 * user typed come back to it when the table is drawn again (battle_table.js, render()).
 */

import { $, el } from "../dom.js";
import { root } from "./state.js";

const OK_SHOWN_MS = 8000;

/** A button; `key` names it across renders (focus comes back to it after a change). */
export function button(text, onClick, { className = "big-button", pressed, disabled, title, key, label } = {}) {
  const node = el("button", { text, className, attrs: { type: "button", "data-key": key || text } });
  if (label) node.setAttribute("aria-label", label);
  if (pressed !== undefined) node.setAttribute("aria-pressed", pressed ? "true" : "false");
  if (disabled) node.disabled = true;
  if (title) node.title = title;
  node.addEventListener("click", () => onClick(node));
  return node;
}

/** A number field that keeps what the user typed when the table is drawn again. */
export function numberInput(key, attrs) {
  const input = el("input", {
    className: "honor-input",
    attrs: { type: "number", inputmode: "numeric", "data-key": key, ...attrs },
  });
  input.addEventListener("input", () => {
    input.dataset.typed = "1";
  });
  return input;
}

let sayTimer = null;

/** A message above the table; a success fades after a while, a refusal stays. */
export function say(text, kind = "ok") {
  const box = $("battle-message");
  box.textContent = text || "";
  box.className = `message${text ? ` is-${kind}` : ""}`;
  window.clearTimeout(sayTimer);
  if (text && kind === "ok") sayTimer = window.setTimeout(() => say(""), OK_SHOWN_MS);
}

export function refocus(key) {
  const node = [...root.querySelectorAll("[data-key]")].find((n) => n.dataset.key === key);
  if (node && !node.disabled) node.focus();
}
