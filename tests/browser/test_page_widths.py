"""Every page a role can open fits a phone (390 px), a tablet (820), a laptop (1366) and a
projector (1920), in English and in Russian (issue 30, point 17).

Russian words are longer: the Daimyo's Generals table was cut on a tablet, the console's
correction drop-downs truncated on a laptop and the tournament's name cut on the big screen.
So each page is looked at in each width, and three things are checked:

- the page never scrolls sideways (nothing reaches past the viewport's right edge, except
  inside a box that scrolls, where what it holds is still reachable);
- no box that hides its overflow (overflow hidden or clip, text-overflow ellipsis) has
  content wider than itself: that content is cut, and nobody can read it;
- no drop-down shows its chosen option truncated.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Page

from tests.browser.conftest import SCREENSHOTS, LiveServer, judge_sign_in
from tests.browser.page_states import (
    tournament_declaring,
    tournament_ended_in_turn,
    tournament_in_setup,
    tournament_with_table,
)

pytestmark = pytest.mark.browser

WIDTHS = {
    "phone": (390, 844),
    "tablet": (820, 1180),
    "laptop": (1366, 768),
    "projector": (1920, 1080),
}

# What does not fit, described so that a failure says where to look.
OUT_OF_PLACE = """
() => {
  const out = [];
  const name = (node) => {
    let text = node.tagName.toLowerCase();
    if (node.id) text += "#" + node.id;
    else if (node.classList.length) text += "." + [...node.classList].join(".");
    const words = (node.innerText || node.value || "").trim().replace(/\\s+/g, " ");
    return words ? `${text} "${words.slice(0, 40)}"` : text;
  };
  const visible = (node) => node.getClientRects().length > 0
    && getComputedStyle(node).visibility !== "hidden";
  const scrolls = (node) => {
    for (let p = node.parentElement; p && p !== document.body; p = p.parentElement) {
      if (["auto", "scroll"].includes(getComputedStyle(p).overflowX)) return true;
    }
    return false;
  };
  const width = window.innerWidth;
  for (const node of document.body.querySelectorAll("*")) {
    if (!visible(node) || ["svg", "path", "g", "title", "option"].includes(
        node.tagName.toLowerCase()) || node.closest("svg")) continue;
    const style = getComputedStyle(node);
    const rect = node.getBoundingClientRect();
    const reaches = (n) => n.getBoundingClientRect().right > width + 0.5;
    // Only the outermost element that reaches past the edge: its content says the rest.
    if (rect.width > 0 && reaches(node) && style.position !== "fixed" && !scrolls(node)
        && !(node.parentElement && node.parentElement !== document.body
             && reaches(node.parentElement)))
      out.push(`${name(node)} reaches ${Math.round(rect.right)} px of ${width}`);
    const hides = ["hidden", "clip"].includes(style.overflowX)
      || style.textOverflow === "ellipsis";
    // A visually hidden label (1 px, clipped) is for screen readers: nothing to cut.
    // A cut text whose title holds it whole (a join link beside its copy button) is shown
    // on purpose, and read in full on hover.
    const whole = node.title && node.title.includes(node.textContent.trim());
    if (hides && !whole && rect.width > 2 && node.scrollWidth > node.clientWidth + 1
        && !["select", "input", "textarea"].includes(node.tagName.toLowerCase()))
      out.push(`${name(node)} cut: ${node.scrollWidth} px in ${node.clientWidth}`);
    if (node.tagName === "SELECT" && node.selectedIndex >= 0) {
      const canvas = document.createElement("canvas").getContext("2d");
      canvas.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
      const text = node.options[node.selectedIndex].text;
      // Room for the text: the box less its padding and the arrow (about 1.5 em).
      const room = node.clientWidth - parseFloat(style.paddingLeft)
        - parseFloat(style.paddingRight) - 0.9 * parseFloat(style.fontSize);
      if (canvas.measureText(text).width > room + 1)
        out.push(`${name(node)} shows "${text}" truncated`);
    }
  }
  // From a tablet up a table is read whole: no box scrolls sideways to show its columns.
  // The standings on a player's page are read whole on a phone too (the total was off
  // screen at 390 px).
  const whole = width >= 820 ? ".table-wrap" : ".table-wrap:has(> .player-scores)";
  for (const box of document.querySelectorAll(whole)) {
    if (visible(box) && box.scrollWidth > box.clientWidth + 1)
      out.push(`${name(box)} scrolls sideways: ${box.scrollWidth} px in ${box.clientWidth}`);
  }
  if (document.documentElement.scrollWidth > width)
    out.push(`the page is ${document.documentElement.scrollWidth} px wide in ${width}`);
  return [...new Set(out)];
}
"""


@pytest.fixture(scope="module")
def pages(live_site: LiveServer) -> dict[str, Any]:
    """The tournaments in the phases the scenario does not hold, and the ids the paths need."""
    data = live_site.data
    setup = tournament_in_setup(live_site, "Browser: widths in set-up")
    declaring = tournament_declaring(live_site, "Browser: widths declaring")
    ended = tournament_ended_in_turn(live_site, "Browser: widths ended", turn=3)
    # A table where a General called the battle (R7): the stronghold form, whose Russian
    # labels wrapped and put its boxes out of line.
    stronghold = tournament_with_table(live_site, "Browser: widths stronghold")
    live_site.api(
        "POST",
        f"/tournaments/{stronghold['id']}/battles/{stronghold['table']}/vote",
        token=stronghold["host"],
        body={"vote": "battle"},
    )
    battle = data["battle"]
    battle_id = live_site.api("GET", f"/tournaments/{battle['id']}/battles", token=battle["token"])[
        0
    ]["id"]
    return {
        "setup": setup["id"],
        "player": setup["players"][0]["id"],
        "declaring": declaring["id"],
        "ended": ended["id"],
        "ended_token": ended["players"][0]["token"],
        "declaring_token": next(p["token"] for p in declaring["players"] if p["army"]),
        "clock": data["clock"]["id"],
        "undo": data["undo"]["id"],
        "screen": data["screen"]["id"],
        "daimyo": data["daimyo"]["id"],
        "daimyo_token": data["daimyo"]["daimyo_token"],
        "general_token": data["daimyo"]["token"],
        "battle": battle["id"],
        "battle_token": battle["token"],
        "battle_id": battle_id,
        "stronghold": stronghold["id"],
        "stronghold_table": stronghold["table"],
        "stronghold_token": stronghold["host"],
    }


T = "/referees/tournaments"

# (who opens it, the path): every page a role can reach from its links.
PAGES = [
    ("public", "/"),
    ("public", "/accounts/sign-in/"),
    ("public", "/maps/rokugan/"),
    ("public", T + "/{screen}/screen/"),
    ("public", T + "/{ended}/screen/"),
    ("public", T + "/{ended}/history/"),
    ("general_token", T + "/{daimyo}/general/"),
    ("declaring_token", T + "/{declaring}/general/"),
    ("ended_token", T + "/{ended}/general/"),
    ("battle_token", "/tournaments/{battle}/battles/{battle_id}/"),
    ("stronghold_token", "/tournaments/{stronghold}/battles/{stronghold_table}/"),
    ("daimyo_token", T + "/{daimyo}/clan/"),
    ("judge", "/referees/judge/"),
    ("judge", T + "/new"),
    ("judge", T + "/{setup}/settings"),
    ("judge", T + "/{setup}/judge/"),
    ("judge", T + "/{setup}/players/add"),
    ("judge", T + "/{setup}/players/{player}/"),
    ("judge", T + "/{setup}/join-sheet"),
    ("judge", T + "/{setup}/judges/"),
    ("judge", T + "/{declaring}/positions/"),
    ("judge", T + "/{declaring}/judge/"),
    ("judge", T + "/{undo}/judge/"),
    ("judge", T + "/{clock}/history/"),
    ("judge", T + "/{ended}/judge/"),
    ("judge", "/tournaments/{battle}/battles/{battle_id}/"),
    ("judge", "/tournaments/{stronghold}/battles/{stronghold_table}/"),
    ("judge", "/tournaments/{battle}/battles/small-farms/"),
]


def sign_in(page: Page, live_site: LiveServer) -> None:
    judge_sign_in(page, live_site)


@pytest.mark.parametrize("language", ["en", "ru"])
@pytest.mark.parametrize(("who", "path"), PAGES, ids=[f"{w}:{p}" for w, p in PAGES])
def test_every_page_fits_a_phone_a_tablet_a_laptop_and_a_projector(
    new_page: Callable[..., Page],
    live_site: LiveServer,
    pages: dict[str, Any],
    who: str,
    path: str,
    language: str,
) -> None:
    page = new_page("desktop", locale=language)
    if who == "judge":
        sign_in(page, live_site)
    elif who != "public":
        page.goto(f"/join/{pages[who]}")
    page.goto(path.format(**pages))
    # The live pages draw their state after their first fetch: wait until nothing is loading.
    page.wait_for_load_state("networkidle")
    slug = re.sub(r"[^a-z0-9]+", "-", path.format(**pages)).strip("-") or "home"

    problems: dict[str, list[str]] = {}
    for size, (width, height) in WIDTHS.items():
        page.set_viewport_size({"width": width, "height": height})
        page.evaluate("() => new Promise((done) => requestAnimationFrame(() => done(null)))")
        found = page.evaluate(OUT_OF_PLACE)
        if found or size in ("phone", "projector"):
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(
                path=str(SCREENSHOTS / f"widths-{who}-{slug}-{size}-{language}.png"),
                full_page=True,
                animations="disabled",
            )
        if found:
            problems[f"{size} ({width} px)"] = found

    assert not problems, "\n".join(
        f"{size}: {problem}" for size, found in problems.items() for problem in found
    )
