"""The pages fit their screens: the judge's console on a laptop (1280×800) and a projector
(1920×1080) cuts nothing off, and the big screen says which turn the game ended in. Every
page at every width: test_page_widths.py."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import SCREENSHOTS, LiveServer, judge_sign_in
from tests.browser.page_states import tournament_ended_in_turn

pytestmark = pytest.mark.browser

SIZES = {"laptop": (1280, 800), "projector": (1920, 1080)}

# Every element of the console that sticks out of its panel, the panel's edges included:
# a table's last cell, a select, a button. A scroll box (overflow auto) may hold wider
# content; what it holds is then reachable, not cut.
CLIPPED = """
() => {
  const out = [];
  const boxes = (node) => {
    const found = [];
    for (let p = node.parentElement; p; p = p.parentElement) {
      const style = getComputedStyle(p);
      if (p.classList.contains("panel")) { found.push([p, false]); break; }
      if (["auto", "scroll"].includes(style.overflowX)) found.push([p, true]);
    }
    return found;
  };
  const inside = (a, b) => a.left >= b.left - 0.5 && a.right <= b.right + 0.5;
  const items = document.querySelectorAll(
    ".panel select, .panel input, .panel button, .panel th, .panel td");
  for (const node of items) {
    if (!node.getClientRects().length) continue;
    const rect = node.getBoundingClientRect();
    if (rect.width === 0) continue;
    const found = boxes(node);
    if (!found.length) continue;
    const [box, scrolls] = found[0];
    if (scrolls) {
      // Inside a scroll box: the box itself must fit its panel.
      const panel = found[found.length - 1][0];
      if (!inside(box.getBoundingClientRect(), panel.getBoundingClientRect()))
        out.push(`${box.className} wider than ${panel.className}`);
      continue;
    }
    if (!inside(rect, box.getBoundingClientRect()))
      out.push(`${node.tagName.toLowerCase()}${node.id ? "#" + node.id : ""}.${node.className}`
        + ` (${Math.round(rect.left)}–${Math.round(rect.right)}) out of ${box.className}`);
  }
  return [...new Set(out)];
}
"""


def sign_in(page: Page, live_site: LiveServer) -> None:
    judge_sign_in(page, live_site)


def shot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True, animations="disabled")


@pytest.mark.parametrize("language", ["en", "ru"])
@pytest.mark.parametrize("size", sorted(SIZES))
def test_the_console_cuts_nothing_off_on_a_laptop_and_a_projector(
    new_page: Callable[..., Page], live_site: LiveServer, size: str, language: str
) -> None:
    """The Points table's total column and the corrections' drop-downs stay inside their
    panels; the page never scrolls sideways."""
    width, height = SIZES[size]
    page = new_page("desktop", locale=language)
    page.set_viewport_size({"width": width, "height": height})
    sign_in(page, live_site)
    page.goto(f"/referees/tournaments/{live_site.data['clock']['id']}/judge/")
    expect(page.locator("#live-status")).to_have_attribute("data-status", "live")
    expect(page.locator(".scores-table tbody tr").first).to_be_visible()

    clipped = page.evaluate(CLIPPED)
    # The points must be read at a glance: the whole table in its panel, no scrolling.
    table = page.locator(".panel-scores table").bounding_box()
    panel = page.locator(".panel-scores").bounding_box()
    assert table is not None and panel is not None
    assert table["x"] + table["width"] <= panel["x"] + panel["width"] + 0.5
    shot(page, f"layout-console-{size}-{language}")

    assert clipped == []
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


@pytest.fixture(scope="module")
def ended(live_site: LiveServer) -> dict[str, Any]:
    return tournament_ended_in_turn(live_site, "Browser: ended in turn 3", turn=3)


@pytest.mark.parametrize("live", [False, True], ids=["loaded-after", "watching"])
def test_the_big_screen_console_and_home_say_after_which_turn_the_game_ended(
    new_page: Callable[..., Page], live_site: LiveServer, ended: dict[str, Any], live: bool
) -> None:
    """The judge ended the game while turn 3 was open, so turn 2 was the last played: the
    screen, the console and the public home all say "ended after turn 2" (issue 30: they
    said 3 of 20, 2 / 20 and 3 / 20), as served and once the scripts have drawn the state."""
    page = new_page("desktop")
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.goto(f"/referees/tournaments/{ended['id']}/screen/")
    if live:
        expect(page.locator("#screen-status")).to_be_hidden()
        expect(page.locator("#screen-final")).to_be_visible()
    shot(page, "layout-screen-ended")

    expect(page.locator("#screen-turn")).to_have_text("Ended after turn 2 of 20")
    page.goto("/")
    card = page.locator(f'.tournament-card[data-tournament="{ended["id"]}"]')
    expect(card.locator(".tournament-turn")).to_have_text("Ended after turn 2 of 20")


@pytest.mark.parametrize("language", ["en", "ru"])
def test_every_page_writes_a_time_of_day_the_same_way(
    new_page: Callable[..., Page], live_site: LiveServer, language: str
) -> None:
    """The console, the big screen (static/js/screen.js) and the players' phones
    (static/js/players.js: General, clan, battle pages) share one formatter: 24-hour time
    in the tournament's zone, in either language (not "01:05:09 PM" on a phone and
    "13:05:09" on the console)."""
    page = new_page("phone", locale=language)
    page.goto("/")
    shown = page.evaluate(
        """async () => {
          const players = await import("/static/js/players.js");
          const screen = await import("/static/js/screen.js");
          const at = "2026-05-01T13:05:09.123456+00:00";
          const state = { tournament: { time_zone: "Europe/Moscow" } };
          return [players.formatTime(at, state), screen.formatTime(at, "Europe/Moscow", true)];
        }"""
    )

    assert shown == ["16:05:09", "16:05:09"]


def test_the_big_screen_keys_the_clans_on_its_map_during_play(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """R1.1: no clan of this game has a Daimyo, so the public sees the armies: the map has
    its key (every clan's colour and pattern), inside the projector's screen."""
    page = new_page("desktop")
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.goto(f"/referees/tournaments/{live_site.data['screen']['id']}/screen/")
    legend = page.locator("#screen-map .legend")
    expect(legend).to_be_visible()
    expect(legend.locator("li[data-clan]")).to_have_count(8)
    shot(page, "layout-screen-playing")

    box = legend.bounding_box()
    assert box is not None and box["y"] + box["height"] <= 1080
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


@pytest.mark.parametrize("language", ["en", "ru"])
@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
def test_the_big_screen_head_keeps_the_draw_commitment_inside_its_column(
    new_page: Callable[..., Page], live_site: LiveServer, size: tuple[int, int], language: str
) -> None:
    """R11's commitment is 64 hex digits, one word: it wraps inside its narrow column of the
    head instead of running on under the follow-on-your-phone address."""
    page = new_page("desktop", locale=language)
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(f"/referees/tournaments/{live_site.data['screen']['id']}/screen/")
    commitment = page.locator(".screen-head .draw-commitment")
    expect(commitment).to_be_visible()
    spill = commitment.evaluate("(node) => node.scrollWidth - node.clientWidth")
    assert spill <= 1, f"the commitment runs {spill} px out of its column"
    box, address = commitment.bounding_box(), page.locator(".screen-address").bounding_box()
    assert box is not None and address is not None
    assert box["x"] + box["width"] <= address["x"]


def test_the_big_screen_shows_each_clans_provinces_and_points_so_far_where_the_board_is_public(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """R1.1: no clan has a Daimyo, so the public sees the whole board: the screen lists each
    clan's provinces and points so far, beside the map, inside the projector's screen. Where
    a clan has a Daimyo the public sees no board, and no points until the end."""
    page = new_page("desktop")
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.goto(f"/referees/tournaments/{live_site.data['screen']['id']}/screen/")
    rows = page.locator("#points-body tr")
    expect(rows).to_have_count(8)
    expect(rows.first.locator("td.total")).to_have_text(re.compile(r"^\d+$"))
    box = page.locator("#screen-points").bounding_box()
    assert box is not None and box["y"] + box["height"] <= 1080
    shot(page, "layout-screen-points")

    page.goto(f"/referees/tournaments/{live_site.data['daimyo']['id']}/screen/")
    expect(page.locator("#screen-countdown")).to_be_visible()
    expect(page.locator("#screen-points")).to_have_count(0)
