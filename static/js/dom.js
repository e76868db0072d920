/**
 * dom.js: the element builders of the pages' scripts (static/js/*.js), one for HTML and one
 * for SVG (which needs the SVG namespace).
 *
 *   el("li", { text, className, attrs }, ...children)
 *   svgEl("path", { d, class: "…" }, parent)
 */

const SVG_NS = "http://www.w3.org/2000/svg";

export const $ = (id) => document.getElementById(id);

/** A child that is null, undefined or false is left out: `cond ? node : null` and `cond && node` both mean "nothing here". */
export function el(tag, { text, className, attrs } = {}, ...children) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  for (const child of children) if (child !== null && child !== undefined && child !== false) node.append(child);
  return node;
}

/** An SVG element, appended to `parent` when given; an attribute that is null or undefined is left out. */
export function svgEl(name, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attrs)) {
    if (value !== null && value !== undefined) node.setAttribute(key, String(value));
  }
  if (parent) parent.appendChild(node);
  return node;
}
