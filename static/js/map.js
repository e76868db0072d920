/**
 * map.js: the live overlay of the war map (an ES module; it builds its SVG with dom.js).
 *
 * The map itself is static SVG drawn by the server: include
 * strategic_map/templates/strategic_map/map_svg.html (with a MapDrawing from
 * strategic_map/drawing.py) and link static/css/map.css. This module only reads that SVG and
 * draws what a state contains on it; it never decides what a viewer may see: the state from
 * GET /api/tournaments/{id}/state (referees/selectors.py::tournament_state) already holds
 * only that (R1.1), and everything in it is drawn.
 *
 *   import { renderOverlay, provinceInfo, provinceDetails, renderProvincePanel,
 *            focusOn, showWholeMap, clanStyles } from "/static/js/map.js";
 *
 *   renderOverlay(svg, state, {
 *     clanColours,      // optional {clan: "#rrggbb"}: override the SVG's colours (markers, arrows)
 *     onProvinceClick,  // optional (provinceId) => void; clicks, taps, Enter/Space on a province
 *     highlight = [],   // province ids to outline (e.g. where an army may go)
 *     selected = null,  // one province id outlined strongly (e.g. the chosen destination)
 *     showOrders = true,// arrows for the move orders in state.orders (judge, Daimyo, own order)
 *     strings = {},     // translated texts (PANEL_STRINGS keys; battle/meeting become tooltips)
 *   })
 *     Fills each province by its controller (state.control) with the clan's colour AND
 *     pattern; greys provinces outside state.visible_provinces; hatches the lands of
 *     excluded clans; draws army markers (clan colour + clan shape, a count badge when
 *     several of a clan stand together, a ring around the viewer's own army, red outline in
 *     battle), crossed swords on battles (red) and on last turn's meetings (grey), and
 *     arrows for move orders (a dashed ring for a reform). Call it again with every new state.
 *
 *   provinceInfo(svg, id) -> {id, name, homeClan, castle, impassable, neighbours: [ids],
 *                              label: {x, y}, anchor: {x, y}, size} | null   (from the map)
 *   provinceDetails(svg, state, id) -> provinceInfo + {visible, controller (clan id, null
 *       for nobody, undefined when not visible), armies: [state army rows], battle, meeting,
 *       blocked}
 *   renderProvincePanel(element, details, strings, svg, ownArmyId) fills a panel element
 *   clanStyles(svg) -> {clan: {colour, tint, shape, name, patternId}}   (the 8 clans)
 *   focusOn(svg, ids, {padding}) zooms the viewBox onto these provinces; showWholeMap(svg)
 *   clanSwatch(svg, clan) -> a small <svg> element showing the clan's fill (for legends)
 *
 * Strings shown to people come from the page (translated on the server): renderProvincePanel
 * takes an object with the keys in PANEL_STRINGS (English fallbacks).
 */

import { svgEl } from "./dom.js";

export const PANEL_STRINGS = {
  homeClan: "Home clan",
  unaligned: "unaligned",
  castle: "Castle",
  noCastle: "none",
  controller: "Controlled by",
  nobody: "nobody",
  notVisible: "not visible to you",
  armies: "Armies",
  noArmies: "none that you can see",
  inBattle: "in a battle",
  battle: "A battle is being fought here.",
  meeting: "Armies of several clans met here last turn.",
  impassable: "Impassable: no army may enter.",
  close: "Close",
  yourArmy: "your army",
};

const handlers = new WeakMap();

/** Parse the numbers of a viewBox attribute. */
function parseBox(text) {
  const [x, y, w, h] = (text || "0 0 1000 800").split(/[\s,]+/).map(Number);
  return { x, y, w, h };
}

function group(svg, cls) {
  return svg.querySelector(`g.${cls}`);
}

function clear(node) {
  while (node && node.firstChild) node.removeChild(node.firstChild);
}

function provincePaths(svg) {
  return svg.querySelectorAll("g.map-provinces path.province[data-province]");
}

function provincePath(svg, id) {
  for (const path of provincePaths(svg)) if (path.dataset.province === id) return path;
  return null;
}

/** The eight clans' colours, shapes and names, as the SVG's <pattern> elements define them. */
export function clanStyles(svg) {
  const styles = {};
  for (const pattern of svg.querySelectorAll("pattern.clan-pattern[data-clan]")) {
    styles[pattern.dataset.clan] = {
      colour: pattern.dataset.colour,
      tint: pattern.dataset.tint,
      shape: pattern.dataset.shape,
      name: pattern.dataset.name || pattern.dataset.clan,
      patternId: pattern.id,
    };
  }
  return styles;
}

/** What the map says about a province (no state needed). */
export function provinceInfo(svg, id) {
  const path = provincePath(svg, id);
  if (!path) return null;
  const d = path.dataset;
  return {
    id,
    name: d.name || id,
    homeClan: d.homeClan || null,
    castle: d.castle || null,
    impassable: d.impassable === "true",
    neighbours: (d.neighbours || "").split(" ").filter(Boolean),
    label: { x: Number(d.labelX), y: Number(d.labelY) },
    anchor: { x: Number(d.armyX), y: Number(d.armyY) },
    size: Number(d.size) || Number(svg.dataset.labelSize) || 14,
  };
}

/** Every province id of the map, in the map's order. */
export function provinceIds(svg) {
  return Array.from(provincePaths(svg), (p) => p.dataset.province);
}

function visibleSet(state) {
  return Array.isArray(state.visible_provinces) ? new Set(state.visible_provinces) : null;
}

function blockedSet(svg, state) {
  const excluded = new Set((state.tournament && state.tournament.excluded_clans) || []);
  const blocked = new Set();
  for (const path of provincePaths(svg)) {
    const d = path.dataset;
    if (d.impassable === "true" || (d.homeClan && excluded.has(d.homeClan))) {
      blocked.add(d.province);
    }
  }
  return blocked;
}

/** Province ids nothing may enter in this game: impassable terrain, excluded clans' lands. */
export function blockedProvinces(svg, state) {
  return blockedSet(svg, state);
}

function eventProvinces(state) {
  const battles = new Set();
  for (const army of state.armies || []) {
    if (army.in_battle && army.province) battles.add(army.province);
  }
  const meetings = new Set();
  for (const meeting of state.meetings || []) {
    if (meeting && meeting.province && !battles.has(meeting.province)) {
      meetings.add(meeting.province);
    }
  }
  return { battles, meetings };
}

// --- Army marker shapes (one per clan, so shape alone tells clans apart) -----------------------

function polygonPoints(count, radius, rotation) {
  const pts = [];
  for (let k = 0; k < count; k += 1) {
    const a = rotation + (2 * Math.PI * k) / count;
    pts.push(`${(radius * Math.cos(a)).toFixed(2)} ${(radius * Math.sin(a)).toFixed(2)}`);
  }
  return `M${pts.join("L")}Z`;
}

function starPoints(points, outer, inner) {
  const pts = [];
  for (let k = 0; k < points * 2; k += 1) {
    const r = k % 2 ? inner : outer;
    const a = -Math.PI / 2 + (Math.PI * k) / points;
    pts.push(`${(r * Math.cos(a)).toFixed(2)} ${(r * Math.sin(a)).toFixed(2)}`);
  }
  return `M${pts.join("L")}Z`;
}

export function shapePath(shape, r) {
  switch (shape) {
    case "square":
      return `M${-0.85 * r} ${-0.85 * r}H${0.85 * r}V${0.85 * r}H${-0.85 * r}Z`;
    case "diamond":
      return polygonPoints(4, 1.1 * r, -Math.PI / 2);
    case "triangle":
      return polygonPoints(3, 1.15 * r, -Math.PI / 2);
    case "triangle-down":
      return polygonPoints(3, 1.15 * r, Math.PI / 2);
    case "star":
      return starPoints(5, 1.2 * r, 0.55 * r);
    case "hexagon":
      return polygonPoints(6, r, 0);
    case "pentagon":
      return polygonPoints(5, 1.05 * r, -Math.PI / 2);
    case "circle":
    default:
      return `M${-r} 0A${r} ${r} 0 1 0 ${r} 0A${r} ${r} 0 1 0 ${-r} 0Z`;
  }
}

/** A small inline <svg> with the clan's fill pattern and marker shape, for legends. */
export function clanSwatch(svg, clan) {
  const style = clanStyles(svg)[clan];
  const swatch = svgEl("svg", { viewBox: "-12 -12 24 24", "aria-hidden": "true", class: "clan-mark" });
  if (!style) return swatch;
  svgEl("path", { d: shapePath(style.shape, 9), fill: style.colour, stroke: "#fff", "stroke-width": 1.5 }, swatch);
  return swatch;
}

// --- Rendering -------------------------------------------------------------------------------------

function setClickHandler(svg, onProvinceClick) {
  const previous = handlers.get(svg);
  if (previous) {
    previous.callback = onProvinceClick || null;
  } else {
    const entry = { callback: onProvinceClick || null };
    handlers.set(svg, entry);
    const fire = (event) => {
      if (!entry.callback) return;
      const target = event.target.closest && event.target.closest("[data-province]");
      if (!target || !svg.contains(target)) return;
      entry.callback(target.dataset.province);
    };
    svg.addEventListener("click", fire);
    svg.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        if (event.target.closest && event.target.closest("path.province")) {
          event.preventDefault();
          fire(event);
        }
      }
    });
  }
  const clickable = Boolean(onProvinceClick);
  svg.classList.toggle("is-clickable", clickable);
  for (const path of provincePaths(svg)) {
    if (clickable) {
      path.setAttribute("tabindex", "0");
      path.setAttribute("role", "button");
    } else {
      path.removeAttribute("tabindex");
      path.removeAttribute("role");
    }
  }
}

function drawHatches(svg, blocked) {
  const hatches = group(svg, "map-hatches");
  if (!hatches) return;
  for (const old of hatches.querySelectorAll(".hatch.is-excluded")) old.remove();
  const drawn = new Set(Array.from(hatches.querySelectorAll(".hatch"), (h) => h.dataset.province));
  for (const id of blocked) {
    if (drawn.has(id)) continue;
    const path = provincePath(svg, id);
    if (!path) continue;
    svgEl("path", {
      class: "hatch is-excluded",
      d: path.getAttribute("d"),
      "data-province": id,
      fill: `url(#${svg.id}-hatch)`,
    }, hatches);
  }
}

function drawHighlights(svg, highlight, selected) {
  const layer = group(svg, "map-highlights");
  clear(layer);
  if (!layer) return;
  const ids = new Set(highlight || []);
  if (selected) ids.delete(selected);
  for (const id of [...ids, selected].filter(Boolean)) {
    const path = provincePath(svg, id);
    if (!path) continue;
    svgEl("path", {
      class: id === selected ? "highlight is-selected" : "highlight",
      d: path.getAttribute("d"),
      "data-province": id,
    }, layer);
  }
}

function armyGroups(state) {
  // province -> clan -> [army rows]; destroyed armies are off the map.
  const byProvince = new Map();
  for (const army of state.armies || []) {
    if (!army.province) continue;
    if (!byProvince.has(army.province)) byProvince.set(army.province, new Map());
    const clans = byProvince.get(army.province);
    if (!clans.has(army.clan)) clans.set(army.clan, []);
    clans.get(army.clan).push(army);
  }
  return byProvince;
}

function drawArmies(svg, state, styles, colours) {
  const layer = group(svg, "map-armies");
  clear(layer);
  if (!layer) return;
  const own = state.viewer && state.viewer.player ? state.viewer.player.army : null;
  const r = Number(svg.dataset.markerSize) || 12;
  for (const [provinceId, clans] of armyGroups(state)) {
    const info = provinceInfo(svg, provinceId);
    if (!info) continue;
    const entries = Array.from(clans.entries()).sort(([a], [b]) => a.localeCompare(b));
    const gap = 2.4 * r;
    entries.forEach(([clan, armies], k) => {
      const x = info.anchor.x + (k - (entries.length - 1) / 2) * gap;
      const y = info.anchor.y;
      const style = styles[clan] || {};
      const colour = (colours && colours[clan]) || style.colour || "#444";
      const ids = armies.map((a) => a.id);
      const classes = ["army-marker"];
      if (own && ids.includes(own)) classes.push("is-own");
      if (armies.some((a) => a.in_battle)) classes.push("is-in-battle");
      const marker = svgEl("g", {
        class: classes.join(" "),
        transform: `translate(${x.toFixed(1)} ${y.toFixed(1)})`,
        "data-clan": clan,
        "data-province": provinceId,
        "data-armies": ids.join(" "),
      }, layer);
      svgEl("title", {}, marker).textContent = `${style.name || clan}: ${ids.join(", ")}`;
      if (classes.includes("is-own")) {
        svgEl("circle", { class: "army-halo", r: (1.45 * r).toFixed(1) }, marker);
      }
      svgEl("path", { class: "army-shape", d: shapePath(style.shape, r), fill: colour }, marker);
      if (armies.length > 1) {
        const badge = svgEl("g", {
          class: "army-badge",
          transform: `translate(${(0.95 * r).toFixed(1)} ${(-0.95 * r).toFixed(1)})`,
        }, marker);
        svgEl("circle", { r: (0.62 * r).toFixed(1) }, badge);
        svgEl("text", { "font-size": (0.85 * r).toFixed(1) }, badge).textContent = String(armies.length);
      }
    });
  }
}

function drawEvents(svg, state, strings) {
  const layer = group(svg, "map-events");
  clear(layer);
  if (!layer) return;
  const { battles, meetings } = eventProvinces(state);
  const draw = (id, kind) => {
    const info = provinceInfo(svg, id);
    if (!info) return;
    const size = info.size * 1.6;
    const x = info.label.x + info.size * 2.0;
    const y = info.label.y - info.size * 1.45;
    const use = svgEl("use", {
      href: `#${svg.id}-swords`,
      class: `event-${kind}`,
      x: (x - size / 2).toFixed(1),
      y: (y - size / 2).toFixed(1),
      width: size.toFixed(1),
      height: size.toFixed(1),
      "data-province": id,
    }, layer);
    svgEl("title", {}, use).textContent = kind === "battle" ? strings.battle : strings.meeting;
  };
  for (const id of battles) draw(id, "battle");
  for (const id of meetings) draw(id, "meeting");
}

function drawOrders(svg, state, styles, colours) {
  const layer = group(svg, "map-orders");
  clear(layer);
  if (!layer) return;
  const armies = new Map((state.armies || []).map((a) => [a.id, a]));
  const r = Number(svg.dataset.markerSize) || 12;
  for (const order of state.orders || []) {
    const army = armies.get(order.army);
    const clan = army ? army.clan : (order.army || "").split("-")[0];
    const style = styles[clan] || {};
    const colour = (colours && colours[clan]) || style.colour || "#444";
    if (order.kind === "move" && army && army.province && (order.path || []).length) {
      const points = [army.province, ...order.path]
        .map((id) => provinceInfo(svg, id))
        .filter(Boolean)
        .map((info) => [info.anchor.x, info.anchor.y]);
      if (points.length < 2) continue;
      // Start beside the marker, end short of the target's marker.
      const trim = (from, to, by) => {
        const dx = to[0] - from[0];
        const dy = to[1] - from[1];
        const len = Math.hypot(dx, dy) || 1;
        const t = Math.min(by / len, 0.45);
        return [from[0] + dx * t, from[1] + dy * t];
      };
      points[0] = trim(points[0], points[1], 1.3 * r);
      const last = points.length - 1;
      points[last] = trim(points[last], points[last - 1], 1.3 * r);
      const d = `M${points.map((p) => `${p[0].toFixed(1)} ${p[1].toFixed(1)}`).join("L")}`;
      svgEl("path", { class: "order-casing", d }, layer);
      svgEl("path", {
        class: "order-arrow",
        d,
        stroke: colour,
        "marker-end": `url(#${svg.id}-arrow)`,
        "data-army": order.army,
      }, layer);
    } else if (order.kind === "reform" && order.reform) {
      const info = provinceInfo(svg, order.reform);
      if (!info) continue;
      svgEl("circle", {
        class: "order-reform",
        cx: info.anchor.x.toFixed(1),
        cy: info.anchor.y.toFixed(1),
        r: (1.7 * r).toFixed(1),
        stroke: colour,
        "data-army": order.army,
      }, layer);
    }
  }
}

/** Draw a state on the map (see the top of this file). */
export function renderOverlay(svg, state, options = {}) {
  const {
    clanColours = null,
    onProvinceClick = null,
    highlight = [],
    selected = null,
    showOrders = true,
    strings = {},
  } = options;
  if (!svg || !state) return;
  const styles = clanStyles(svg);
  const visible = visibleSet(state);
  const control = state.control || {};
  const blocked = blockedSet(svg, state);

  for (const path of provincePaths(svg)) {
    const id = path.dataset.province;
    const seen = visible === null || visible.has(id);
    const owner = seen ? control[id] : null;
    path.classList.toggle("is-unseen", !seen);
    path.classList.toggle("is-blocked", blocked.has(id));
    path.classList.toggle("is-controlled", Boolean(owner));
    if (owner && styles[owner]) {
      path.style.fill = `url(#${styles[owner].patternId})`;
      path.dataset.controller = owner;
    } else {
      path.style.fill = "";
      delete path.dataset.controller;
    }
  }
  drawHatches(svg, blocked);
  drawHighlights(svg, highlight, selected);
  if (showOrders) drawOrders(svg, state, styles, clanColours);
  else clear(group(svg, "map-orders"));
  drawEvents(svg, state, { ...PANEL_STRINGS, ...strings });
  drawArmies(svg, state, styles, clanColours);
  setClickHandler(svg, onProvinceClick);
}

/** Everything the map and the state say about one province. */
export function provinceDetails(svg, state, id) {
  const info = provinceInfo(svg, id);
  if (!info) return null;
  const visible = visibleSet(state || {});
  const seen = visible === null || visible.has(id);
  const control = (state && state.control) || {};
  const { battles, meetings } = eventProvinces(state || {});
  return {
    ...info,
    visible: seen,
    controller: seen ? (control[id] ?? null) : undefined,
    armies: ((state && state.armies) || []).filter((a) => a.province === id),
    battle: battles.has(id),
    meeting: meetings.has(id),
    blocked: blockedSet(svg, state || {}).has(id),
  };
}

function addRow(dl, term, value) {
  const dt = document.createElement("dt");
  dt.textContent = term;
  const dd = document.createElement("dd");
  if (value instanceof Node) dd.appendChild(value);
  else dd.textContent = value;
  dl.append(dt, dd);
  return dd;
}

/**
 * Show a province's details in ``element`` (emptied first): name, home clan, castle,
 * controller and the armies there that the state contains. ``strings``: PANEL_STRINGS keys.
 */
export function renderProvincePanel(element, details, strings = {}, svg = null, own = null) {
  const t = { ...PANEL_STRINGS, ...strings };
  element.replaceChildren();
  if (!details) {
    element.hidden = true;
    return;
  }
  const styles = svg ? clanStyles(svg) : {};
  const clanName = (clan) => (styles[clan] && styles[clan].name) || clan;
  const clanNode = (clan) => {
    const span = document.createElement("span");
    if (svg && styles[clan]) span.appendChild(clanSwatch(svg, clan));
    span.append(clanName(clan));
    span.className = `clan clan-${clan}`;
    return span;
  };
  const close = document.createElement("button");
  close.type = "button";
  close.className = "panel-close";
  close.textContent = t.close;
  close.addEventListener("click", () => {
    element.hidden = true;
  });
  const title = document.createElement("h3");
  title.textContent = details.name;
  const dl = document.createElement("dl");
  addRow(dl, t.homeClan, details.homeClan ? clanNode(details.homeClan) : t.unaligned);
  addRow(dl, t.castle, details.castle || t.noCastle);
  let controller;
  if (details.controller === undefined) controller = t.notVisible;
  else if (details.controller === null) controller = t.nobody;
  else controller = clanNode(details.controller);
  addRow(dl, t.controller, controller);
  if (!details.visible && !details.armies.length) {
    addRow(dl, t.armies, t.notVisible);
  } else if (!details.armies.length) {
    addRow(dl, t.armies, t.noArmies);
  } else {
    const list = document.createElement("ul");
    for (const army of details.armies) {
      const item = document.createElement("li");
      item.appendChild(clanNode(army.clan));
      item.append(` · ${army.id}`);
      if (own && army.id === own) item.append(` (${t.yourArmy})`);
      if (army.in_battle) item.append(` · ${t.inBattle}`);
      list.appendChild(item);
    }
    addRow(dl, t.armies, list);
  }
  element.append(close, title, dl);
  for (const [flag, text] of [["blocked", t.impassable], ["battle", t.battle], ["meeting", t.meeting]]) {
    if (details[flag]) {
      const p = document.createElement("p");
      p.textContent = text;
      element.appendChild(p);
    }
  }
  element.hidden = false;
}

/** Zoom onto these provinces (their bounding box with a margin); unknown ids are skipped. */
export function focusOn(svg, ids, { padding = 0.12, minShare = 0.3 } = {}) {
  const full = parseBox(svg.dataset.viewBox || svg.getAttribute("viewBox"));
  let box = null;
  for (const id of ids || []) {
    const path = provincePath(svg, id);
    if (!path) continue;
    const b = path.getBBox();
    box = box
      ? {
          x1: Math.min(box.x1, b.x),
          y1: Math.min(box.y1, b.y),
          x2: Math.max(box.x2, b.x + b.width),
          y2: Math.max(box.y2, b.y + b.height),
        }
      : { x1: b.x, y1: b.y, x2: b.x + b.width, y2: b.y + b.height };
  }
  if (!box) {
    showWholeMap(svg);
    return;
  }
  let w = box.x2 - box.x1;
  let h = box.y2 - box.y1;
  const pad = Math.max(w, h) * padding;
  w = Math.max(w + 2 * pad, full.w * minShare);
  h = Math.max(h + 2 * pad, full.h * minShare);
  // Keep the map's proportions, so the zoomed map is as tall as the whole one.
  const ratio = full.w / full.h;
  if (w / h > ratio) h = w / ratio;
  else w = h * ratio;
  w = Math.min(w, full.w);
  h = Math.min(h, full.h);
  const cx = (box.x1 + box.x2) / 2;
  const cy = (box.y1 + box.y2) / 2;
  const x = Math.min(Math.max(cx - w / 2, full.x), full.x + full.w - w);
  const y = Math.min(Math.max(cy - h / 2, full.y), full.y + full.h - h);
  svg.setAttribute("viewBox", `${x.toFixed(1)} ${y.toFixed(1)} ${w.toFixed(1)} ${h.toFixed(1)}`);
  svg.classList.add("is-zoomed");
}

/** Back to the whole map. */
export function showWholeMap(svg) {
  svg.setAttribute("viewBox", svg.dataset.viewBox || svg.getAttribute("viewBox"));
  svg.classList.remove("is-zoomed");
}
