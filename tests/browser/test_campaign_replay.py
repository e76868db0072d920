"""Issue 32: after the end the big screen plays the campaign turn by turn, and the same story
downloads as one file that opens with the network cut off.

The module's tournament is played on the live site through the API, as judges and players
would: in turn 1 a judge's correction puts Dragon's army beside Crab's, each is ordered into
the other's province (a swap drawn from the turn's committed seed, R5.2, R11) and a Unicorn
army marches into the Lion's castle (a meeting, R7); while turn 2 is open the battle is fought
and the Unicorn wins, destroying the Lion's army (R8, R9); in turn 3 the Unicorn takes an
empty Lion province (R6). Then the judge ends the game.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, Route, expect

from tests.browser.conftest import DEVICES, SCREENSHOTS, LiveServer, snap
from tests.browser.page_states import tournament_running

pytestmark = pytest.mark.browser

PROJECTOR = {"width": 1920, "height": 1080}
TABLET = {"width": 820, "height": 1180}
CASTLE = "lion-akodo"  # the Lion's castle, where lion-1 starts on the bundled map
TAKEN = "lion-ikoma"  # an empty Lion province next to it


# Content-Security-Policy violations, recorded from an init script the policy does not govern.
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  const blocked = event.blockedURI || "inline";
  window.__cspViolations.push(`${event.effectiveDirective} blocked ${blocked}`);
});
"""


def campaign_played(live_site: LiveServer, name: str) -> dict[str, Any]:
    """The tournament of this module's docstring, played and ended: its id and armies."""
    made = tournament_running(live_site, name)
    tid = made["id"]
    base = f"/tournaments/{tid}"
    token = {p["army"]: p["token"] for p in made["players"] if p["army"]}
    where = {a["id"]: a["province"] for a in live_site.judge_api("GET", f"{base}/state")["armies"]}
    assert where["lion-1"] == CASTLE, where
    guest = next(code for code, province in where.items() if province == "unicorn-shinjo")

    def order(army: str, *path: str) -> None:
        live_site.judge_api(
            "PUT", f"{base}/armies/{army}/order", {"kind": "move", "path": list(path)}
        )

    # Turn 1: the swap and the march into the Lion's castle.
    live_site.judge_api(
        "POST",
        f"{base}/corrections/army",
        {"army": "dragon-2", "province": "crab-hiruma", "reason": "a swap for the story"},
    )
    order("crab-1", "crab-hiruma")
    order("dragon-2", where["crab-1"])
    order(guest, CASTLE)
    live_site.judge_api("POST", f"{base}/clock/resolve-now?turn=1")

    # Turn 2 open: the battle in the castle, won by the Unicorn, who lets nobody survive.
    table = next(
        t for t in live_site.judge_api("GET", f"{base}/battles") if t["province"] == CASTLE
    )
    path = f"{base}/battles/{table['id']}"
    live_site.api("POST", f"{path}/vote", token=token["lion-1"], body={"vote": "battle"})
    for army in ("lion-1", guest):
        live_site.api(
            "POST",
            f"{path}/actions",
            token=token[army],
            body={"type": "stronghold", "honor": 6, "province_strength": 5, "gold": 5},
        )
    live_site.api("POST", f"{path}/actions", token=token[guest], body={"type": "begin"})
    live_site.judge_api(
        "POST", f"{path}/actions", {"type": "judge_result", "kind": "win", "winner": guest}
    )
    ended = live_site.api("POST", f"{path}/result", token=token[guest], body={"survivors": []})
    assert ended["status"] == "ended", ended
    live_site.judge_api("POST", f"{base}/clock/resolve-now?turn=2")

    # Turn 3: an empty Lion province taken; then the end.
    order(guest, TAKEN)
    live_site.judge_api("POST", f"{base}/clock/resolve-now?turn=3")
    live_site.judge_api("POST", f"{base}/clock/end")
    return {"id": tid, "guest": guest}


@pytest.fixture(scope="module")
def campaign(live_site: LiveServer) -> Iterator[dict[str, Any]]:
    yield campaign_played(live_site, "Browser: the campaign told")


def _replay(campaign: dict[str, Any]) -> str:
    return f"/referees/tournaments/{campaign['id']}/screen/replay"


def _shot(page: Page, name: str, size: dict[str, int]) -> None:
    """A screenshot at ``size`` (the projector, the tablet); the viewport is put back."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    before = page.viewport_size
    page.set_viewport_size(size)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), animations="disabled")
    if before is not None:
        page.set_viewport_size(before)


def _title(page: Page) -> Any:
    return page.locator("#replay-step-title")


def _controller(page: Page, province: str) -> Any:
    return page.locator(f'#replay-war-map path.province[data-province="{province}"]')


@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_replay_steps_through_the_played_tournament_with_keys_and_a_clicker(
    new_page: Callable[..., Page], campaign: dict[str, Any], language: str
) -> None:
    words = {
        "en": ("Before turn 1", "Turn 1: the orders", "Turn 1: what came of it", "Final standings"),
        "ru": ("Перед ходом 1", "Ход 1: приказы", "Ход 1: что из них вышло", "Итоговая таблица"),
    }[language]
    page = new_page("desktop", locale=language)
    page.add_init_script(RECORD_VIOLATIONS)
    page.set_viewport_size(PROJECTOR)
    page.goto(_replay(campaign))
    expect(page.locator("html")).to_have_attribute("lang", language)
    expect(_title(page)).to_have_text(words[0])
    expect(page.locator("#replay-previous")).to_be_disabled()
    _shot(page, f"replay-start-1920-{language}", PROJECTOR)

    page.keyboard.press("ArrowRight")
    expect(_title(page)).to_have_text(words[1])
    # The moves as arrows, from where each army stood before the turn.
    expect(page.locator("#replay-war-map .map-orders .order-arrow")).to_have_count(3)
    expect(page.locator("#step-1")).to_be_visible()
    _shot(page, f"replay-turn-1-orders-1920-{language}", PROJECTOR)

    page.keyboard.press("PageDown")  # what a clicker sends
    expect(_title(page)).to_have_text(words[2])
    expect(page.locator("#replay-war-map .map-orders .order-arrow")).to_have_count(0)
    expect(
        page.locator(f'#replay-war-map .map-events use[data-province="{CASTLE}"]')
    ).to_have_count(1)
    step = page.locator("#step-2")
    # R11: the commitment published when the turn opened, and the seed revealed after it.
    expect(step.locator(".draw-proof code")).to_have_text(
        [re.compile(r"^[0-9a-f]{64}$"), re.compile(r"^[0-9a-f]{64}$")]
    )
    expect(step.locator(".story-battle").filter(has_text=campaign["guest"])).to_have_count(1)
    _shot(page, f"replay-turn-1-result-1920-{language}", PROJECTOR)
    snap(page, f"replay turn 1 result {language}")

    page.keyboard.press("PageUp")
    expect(_title(page)).to_have_text(words[1])
    page.keyboard.press("ArrowLeft")
    expect(_title(page)).to_have_text(words[0])

    # R6: the Lion province taken in turn 3 changes colour with the result.
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    expect(page.locator("#replay-progress")).to_contain_text("6")
    expect(_controller(page, TAKEN)).to_have_attribute("data-controller", "lion")
    page.keyboard.press(" ")
    expect(_controller(page, TAKEN)).to_have_attribute("data-controller", "unicorn")
    expect(page.locator("#step-6 .story-control")).to_contain_text("→")
    # R12: the chart has grown to the turn: every clan's line has the start and three turns.
    expect(page.locator("#replay-chart .chart-clan-unicorn title")).to_have_text(
        re.compile(r"^[^:]+: \d+, \d+, \d+, \d+$")
    )
    _shot(page, f"replay-turn-3-result-1920-{language}", PROJECTOR)

    page.keyboard.press("End")
    expect(_title(page)).to_have_text(words[3])
    expect(page.locator("#step-7 .standings-table tbody tr")).to_have_count(8)
    expect(page.locator("#replay-next")).to_be_disabled()
    # The whole step stands on the projector: nothing cut off, the points column in view.
    panel = page.locator("#replay-panel")
    assert panel.evaluate(
        "p => p.scrollWidth <= p.clientWidth + 1 && p.scrollHeight <= p.clientHeight + 1"
    )
    expect(page.locator("#step-7 .standings-table tbody tr .total").first).to_be_in_viewport()
    _shot(page, f"replay-final-1920-{language}", PROJECTOR)
    _shot(page, f"replay-final-tablet-{language}", TABLET)
    page.keyboard.press("Home")
    expect(_title(page)).to_have_text(words[0])
    assert page.evaluate("window.__cspViolations") == []


def test_the_replay_plays_by_itself_at_the_speed_chosen_and_pauses(
    new_page: Callable[..., Page], campaign: dict[str, Any]
) -> None:
    page = new_page("desktop")
    page.clock.install()
    page.goto(_replay(campaign))
    play = page.locator("#replay-play")
    expect(_title(page)).to_have_text("Before turn 1")

    page.keyboard.press("p")
    expect(play).to_have_attribute("aria-pressed", "true")
    expect(play).to_have_text("Pause")
    page.clock.run_for(6_000)  # the default: 6 s per step
    expect(_title(page)).to_have_text("Turn 1: the orders")
    page.locator("#replay-speed").select_option("3")
    page.clock.run_for(3_000)
    expect(_title(page)).to_have_text("Turn 1: what came of it")

    page.keyboard.press("k")  # a clicker's "blank" key on some models; P works too
    expect(play).to_have_attribute("aria-pressed", "false")
    expect(play).to_have_text("Play")
    page.clock.run_for(30_000)
    expect(_title(page)).to_have_text("Turn 1: what came of it")

    # Unattended play goes round: after the standings, the story starts again.
    page.keyboard.press("End")
    play.click()
    page.clock.run_for(3_000)
    expect(_title(page)).to_have_text("Before turn 1")


def test_the_replay_is_played_with_its_buttons_on_a_phone_and_a_tablet(
    new_page: Callable[..., Page], campaign: dict[str, Any]
) -> None:
    for language in ("en", "ru"):
        page = new_page("phone", locale=language)
        page.goto(_replay(campaign))
        next_button = page.locator("#replay-next")
        expect(next_button).to_be_visible()
        next_button.tap()
        next_button.tap()
        expect(page.locator("#step-2")).to_be_visible()
        # Nothing is wider than the phone.
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= DEVICES["phone"]["viewport"]["width"], width
        snap(page, f"replay phone {language}")
        page.locator("#replay-previous").tap()
        expect(page.locator("#step-1")).to_be_visible()
        page.set_viewport_size(TABLET)
        expect(page.locator("#replay-chart svg")).to_be_visible()
        _shot(page, f"replay-turn-1-orders-tablet-{language}", TABLET)


def test_the_big_screen_after_the_end_leads_to_the_replay(
    new_page: Callable[..., Page], campaign: dict[str, Any]
) -> None:
    page = new_page("desktop")
    page.set_viewport_size(PROJECTOR)
    page.goto(f"/referees/tournaments/{campaign['id']}/screen/")
    link = page.get_by_role("link", name="Play the campaign")
    expect(link).to_be_visible()
    link.click()
    expect(page).to_have_url(re.compile(r"/screen/replay(#step-0)?$"))
    expect(_title(page)).to_have_text("Before turn 1")


@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_report_downloads_and_opens_offline_with_its_maps_and_standings(
    new_page: Callable[..., Page],
    browser: Browser,
    campaign: dict[str, Any],
    tmp_path: Path,
    language: str,
) -> None:
    page = new_page("desktop", locale=language)
    page.goto(_replay(campaign))
    with page.expect_download() as download:
        page.locator("#replay-report").click()
    saved = tmp_path / download.value.suggested_filename
    assert saved.name == "sl5r-browser-the-campaign-told-report.html", saved.name
    download.value.save_as(saved)
    address = saved.resolve().as_uri()

    # A browser with the network cut off: only the file itself may load.
    offline = browser.new_context(locale=language, viewport=PROJECTOR)
    asked: list[str] = []

    def only_the_file(route: Route) -> None:
        if route.request.url == address:
            route.continue_()
        else:
            asked.append(route.request.url)
            route.abort()

    try:
        offline.route("**/*", only_the_file)
        report = offline.new_page()
        report.goto(address)
        expect(report.locator("html")).to_have_attribute("lang", language)
        expect(report.locator("#standings .standings-table tbody tr")).to_have_count(8)
        expect(report.locator("svg.war-map")).to_have_count(4)  # the start and three turns
        expect(report.locator("#turn-3 svg.war-map .army-marker").first).to_be_visible()
        expect(report.locator("#turn-1 .verify-command").first).to_contain_text(
            "adjudicate --verify sl5r-browser-the-campaign-told-turn-1.json"
        )
        expect(report.locator("#standings svg.score-chart")).to_be_visible()
        # The maps draw: provinces filled with the controlling clan's pattern.
        fill = report.locator(f"#turn-3-map-p-{TAKEN}").evaluate(
            "path => getComputedStyle(path).fill"
        )
        assert "turn-3-map-clan-unicorn" in fill, fill
        report.screenshot(path=str(SCREENSHOTS / f"report-offline-{language}.png"))
        report.locator("#turn-1").scroll_into_view_if_needed()
        report.screenshot(path=str(SCREENSHOTS / f"report-offline-turn-1-{language}.png"))
    finally:
        offline.close()
    assert asked == [], asked


def test_the_report_shown_on_the_site_to_print_keeps_to_its_own_policy(
    new_page: Callable[..., Page], campaign: dict[str, Any]
) -> None:
    """``?print=1`` shows the report in the browser under a policy that lets it fetch
    nothing at all: it draws without a violation."""
    page = new_page("desktop")
    page.add_init_script(RECORD_VIOLATIONS)
    page.goto(f"/referees/tournaments/{campaign['id']}/report.html?print=1")
    expect(page.locator("#standings .standings-table tbody tr")).to_have_count(8)
    expect(page.locator("svg.war-map")).to_have_count(4)
    assert page.evaluate("window.__cspViolations") == []
    snap(page, "report print")
