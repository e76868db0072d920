"""Alarms before the deadline and the big screen's gong (issue 32), in the browser.

The pages count down from the server's `remaining` (players.js, screen.js), so time is faked
in the page, never on the server: ``page.clock`` is installed before the page opens and the
stories jump it forward (``fast_forward``) to 50 s and then 5 s before the real deadline, or
past it. Each jump also fires the page's 30 s safety net and its heartbeat check, which fetch
the state again and put the countdown back on the server's time; the alarms and "Orders
closed" are for the turn, so they stay said, and a story waits for that resync before its
next jump.

``navigator.vibrate`` and ``AudioContext`` are replaced before the page's scripts run
(``page.add_init_script``) by recorders: which vibrations were asked for, which tones were
started (square beeps on the General's phone, sine partials of the screen's gong).

Screenshots at 390, 820 and 1920 px wide, in English and Russian, go to
``artifacts/screenshots/alarms-*.png``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.browser.conftest import SCREENSHOTS, TIMEOUT_MS, LiveServer, judge_sign_in
from tests.browser.page_states import tournament_running, tournament_with_table

pytestmark = pytest.mark.browser

# Where a jump lands before the deadline: inside the one-minute alarm, then the ten-second one.
MINUTE_MARK_S = 50
TEN_MARK_S = 5
SIZES = {"phone": (390, 844), "tablet": (820, 1180), "projector": (1920, 1080)}
# R1 gives the clans Daimyos from 24 players.
WITH_DAIMYOS = 24

TEXT = {
    "en": {
        "live": "Live",
        "minute": "1 minute left: no order yet",
        "ten": "10 seconds!",
        "closed": "Orders closed",
        "next": "Next deadline",
        "over": "Turn over — waiting for the result",
        "unordered": "No order yet this turn:",
        "all": "Every General who can give an order this turn has given one.",
        "battle": "In a battle, so no order expected:",
        "missing": "no order yet",
    },
    "ru": {
        "live": "На связи",
        "minute": "Осталась 1 минута, а приказа нет",
        "ten": "10 секунд!",
        "closed": "Приказы закрыты",
        "next": "Следующий срок",
        "over": "Ход окончен — ждём результата",
        "unordered": "Ещё не отдали приказ на этот ход:",
        "all": "Все генералы, которые могут отдать приказ на этот ход, его отдали.",
        "battle": "В битве, поэтому без приказа:",
        "missing": "приказа ещё нет",
    },
}

# Recorders in place of the phone's vibration and the page's sound, before any script runs.
RECORDERS = """
window.__alarm = { vibrations: [], contexts: 0, tones: [] };
Object.defineProperty(Navigator.prototype, "vibrate", {
  configurable: true,
  value(pattern) { window.__alarm.vibrations.push(pattern); return true; },
});
class FakeParam {
  constructor() { this.first = null; }
  setValueAtTime(value) { if (this.first === null) this.first = value; return this; }
  exponentialRampToValueAtTime() { return this; }
  linearRampToValueAtTime() { return this; }
}
class FakeNode {
  constructor(kind) {
    this.kind = kind; this.type = "sine"; this.buffer = null;
    this.gain = new FakeParam(); this.frequency = new FakeParam();
  }
  connect(node) { return node; }
  disconnect() {}
  start() {
    if (this.kind === "oscillator") {
      window.__alarm.tones.push({ type: this.type, frequency: this.frequency.first });
    }
  }
  stop() {}
}
class FakeAudioContext {
  constructor() {
    window.__alarm.contexts += 1;
    this.state = "suspended"; this.currentTime = 0; this.destination = new FakeNode("out");
  }
  resume() { this.state = "running"; return Promise.resolve(); }
  close() { this.state = "closed"; return Promise.resolve(); }
  createOscillator() { return new FakeNode("oscillator"); }
  createGain() { return new FakeNode("gain"); }
  createBufferSource() { return new FakeNode("source"); }
  createBuffer() { return {}; }
}
window.AudioContext = FakeAudioContext;
window.webkitAudioContext = FakeAudioContext;
"""


def recorded(page: Page) -> dict[str, Any]:
    result: dict[str, Any] = page.evaluate("window.__alarm")
    return result


def beeps(page: Page) -> int:
    return sum(1 for tone in recorded(page)["tones"] if tone["type"] == "square")


def gong_tones(page: Page) -> int:
    return sum(1 for tone in recorded(page)["tones"] if tone["type"] == "sine")


def shots(page: Page, name: str) -> None:
    """The page now at phone, tablet and projector width; the viewport is put back."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    before = page.viewport_size
    for width, height in SIZES.values():
        page.set_viewport_size({"width": width, "height": height})
        page.screenshot(
            path=str(SCREENSHOTS / f"alarms-{name}-{width}.png"),
            full_page=True,
            animations="disabled",
        )
    if before is not None:
        page.set_viewport_size(before)


def deadline_of(live_site: LiveServer, tid: int) -> datetime:
    clock = live_site.judge_api("GET", f"/tournaments/{tid}/state")["tournament"]["clock"]
    return datetime.fromisoformat(clock["deadline"])


def jump_to(page: Page, deadline: datetime, seconds_left: float, *, pause: bool = False) -> None:
    """The page's clock forward to ``seconds_left`` before the real deadline; with ``pause``
    it stays there (no timer fires until ``page.clock.resume()``), so that what the jump
    showed can be photographed before a resync puts the countdown back.

    The page's clock runs at the real rate from where it stands: installed at the real time,
    or, after a jump, at the real time plus that jump, with the countdown's offset put back on
    the server's clock by the resync the jump brought (``await_resync``).
    """
    jump = deadline.timestamp() - time.time() - seconds_left
    if pause:
        page.clock.pause_at(page.evaluate("Date.now()") / 1000 + jump)
    else:
        page.clock.fast_forward(max(1, round(jump * 1000)))


def await_resync(page: Page, selector: str = "#clock-time") -> None:
    """The state fetched again after a jump: the countdown shows the real time left (the
    turns last an hour), not the jumped one."""
    expect(page.locator(selector)).to_have_text(re.compile(r"^(?!0?0:)\d"))


def open_general(page: Page, token: str, tid: int, language: str) -> None:
    page.add_init_script(RECORDERS)
    page.clock.install()
    page.goto(f"/join/{token}")
    expect(page).to_have_url(re.compile(rf"/referees/tournaments/{tid}/general/$"))
    expect(page.locator("#live-status")).to_have_text(TEXT[language]["live"])
    await_resync(page)


def tokens_by_army(live_site: LiveServer, tid: int) -> dict[str, str]:
    players = live_site.judge_api("GET", f"/tournaments/{tid}/players")
    return {p["army"]: p["token"] for p in players if p["army"]}


@pytest.fixture(scope="module")
def table_game(live_site: LiveServer) -> dict[str, Any]:
    """Turn 2 open; two Generals of two clans at one table, at war (R7: in a battle, R4: no
    orders); the other Generals free, none with an order yet."""
    made = tournament_with_table(live_site, "Browser: alarms before the deadline")
    tid = made["id"]
    table = f"/tournaments/{tid}/battles/{made['table']}"
    live_site.api("POST", f"{table}/vote", token=made["host"], body={"vote": "battle"})
    armies = live_site.judge_api("GET", f"/tournaments/{tid}/state")["armies"]
    fighting = sorted(a["id"] for a in armies if a["in_battle"])
    tokens = tokens_by_army(live_site, tid)
    free = sorted(code for code in tokens if code not in fighting)
    return {"id": tid, "tokens": tokens, "fighting": fighting, "free": free}


# --- The General ------------------------------------------------------------------------------


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_general_without_an_order_is_alarmed_at_a_minute_and_at_ten_seconds(
    new_page: Callable[..., Page], live_site: LiveServer, table_game: dict[str, Any], language: str
) -> None:
    """Issue 32: at 60 s the phone vibrates and the clock flashes with "1 minute left: no
    order yet"; at 10 s again, "10 seconds!", with a beep now that he has touched the page."""
    tid = table_game["id"]
    army = table_game["free"][0 if language == "en" else 1]
    page = new_page("phone", locale=language)
    open_general(page, table_game["tokens"][army], tid, language)
    deadline = deadline_of(live_site, tid)
    alarm, clock = page.locator("#clock-alarm"), page.locator("#clock")
    expect(alarm).to_have_text("")
    assert recorded(page)["vibrations"] == []

    jump_to(page, deadline, MINUTE_MARK_S, pause=True)

    expect(alarm).to_have_text(TEXT[language]["minute"])
    expect(clock).to_have_class(re.compile(r"\bis-alarm\b"))
    assert recorded(page)["vibrations"] == [[200, 100, 200]]
    # No tap on the page yet: browsers allow no sound, and none is made.
    assert recorded(page)["contexts"] == 0
    assert beeps(page) == 0
    shots(page, f"general-minute-{language}")

    # His first tap unlocks the sound (the heading: nothing happens on the page).
    page.locator(".player-head h1").tap()
    assert recorded(page)["contexts"] == 1
    page.clock.resume()
    await_resync(page)
    jump_to(page, deadline, TEN_MARK_S, pause=True)

    expect(alarm).to_have_text(TEXT[language]["ten"])
    assert recorded(page)["vibrations"] == [[200, 100, 200], [300, 100, 300, 100, 300]]
    assert beeps(page) == 3
    shots(page, f"general-ten-{language}")


def test_a_general_who_switched_sounds_off_is_alarmed_without_a_beep(
    new_page: Callable[..., Page], live_site: LiveServer, table_game: dict[str, Any]
) -> None:
    tid = table_game["id"]
    page = new_page("phone")
    open_general(page, table_game["tokens"][table_game["free"][2]], tid, "en")
    toggle = page.locator("#alarm-sounds")
    expect(toggle).to_be_checked()

    toggle.tap()
    expect(toggle).not_to_be_checked()
    page.reload()
    expect(page.locator("#live-status")).to_have_text("Live")
    await_resync(page)
    # Kept on this phone (localStorage) across a reload.
    expect(toggle).not_to_be_checked()
    page.locator(".player-head h1").tap()
    jump_to(page, deadline_of(live_site, tid), TEN_MARK_S)

    expect(page.locator("#clock-alarm")).to_have_text("10 seconds!")
    assert recorded(page)["vibrations"] == [[300, 100, 300, 100, 300]]
    assert beeps(page) == 0


def test_no_alarm_for_a_general_with_an_order_until_he_withdraws_it(
    new_page: Callable[..., Page], live_site: LiveServer, table_game: dict[str, Any]
) -> None:
    tid = table_game["id"]
    token = table_game["tokens"][table_game["free"][3]]
    live_site.api("PUT", f"/tournaments/{tid}/orders/mine", token=token, body={"kind": "hold"})
    page = new_page("phone")
    open_general(page, token, tid, "en")
    expect(page.locator("#stored-order")).to_contain_text("Hold")
    deadline = deadline_of(live_site, tid)

    jump_to(page, deadline, MINUTE_MARK_S)
    await_resync(page)

    assert recorded(page)["vibrations"] == []
    expect(page.locator("#clock-alarm")).to_have_text("")
    expect(page.locator("#clock")).not_to_have_class(re.compile(r"\bis-alarm\b"))

    # Withdrawn: he has no order any more, and the ten-second alarm is his.
    live_site.api("DELETE", f"/tournaments/{tid}/orders/mine", token=token)
    expect(page.locator("#stored-order")).to_contain_text("No order yet")
    jump_to(page, deadline, TEN_MARK_S)
    expect(page.locator("#clock-alarm")).to_have_text("10 seconds!")
    assert recorded(page)["vibrations"] == [[300, 100, 300, 100, 300]]


def test_no_alarm_for_a_general_in_a_battle(
    new_page: Callable[..., Page], live_site: LiveServer, table_game: dict[str, Any]
) -> None:
    """R4: an army in a battle is given no orders, so its General is not hurried."""
    tid = table_game["id"]
    page = new_page("phone", locale="ru")
    open_general(page, table_game["tokens"][table_game["fighting"][0]], tid, "ru")
    expect(page.locator("#army-line")).to_contain_text("в битве")
    deadline = deadline_of(live_site, tid)

    for seconds_left in (MINUTE_MARK_S, TEN_MARK_S):
        jump_to(page, deadline, seconds_left)
        await_resync(page)

    assert recorded(page)["vibrations"] == []
    expect(page.locator("#clock-alarm")).to_have_text("")
    expect(page.locator("#clock")).not_to_have_class(re.compile(r"\bis-alarm\b"))


def test_the_alarm_rule_in_the_page(new_page: Callable[..., Page], live_site: LiveServer) -> None:
    """alarm.js's rule itself: once a mark a turn, the latest one reached, never paused."""
    page = new_page("phone")
    page.goto("/")
    cases = page.evaluate(
        """async () => {
          const { alarmDue } = await import("/static/js/alarm.js");
          const due = (seconds, fired = [], extra = {}) => alarmDue(
            { seconds, running: true, paused: false, awaiting: true, ...extra }, new Set(fired));
          return {
            early: due(61), minute: due(60), forty: due(40), fortyAgain: due(40, [60]),
            ten: due(10), five: due(5), tenAgain: due(5, [60, 10]), over: due(0),
            paused: due(40, [], { paused: true }), ordered: due(40, [], { awaiting: false }),
            stopped: due(40, [], { running: false }), none: due(null),
          };
        }"""
    )

    assert cases == {
        "early": None,
        "minute": 60,
        "forty": 60,
        "fortyAgain": None,
        "ten": 10,
        "five": 10,
        "tenAgain": None,
        "over": None,
        "paused": None,
        "ordered": None,
        "stopped": None,
        "none": None,
    }


# --- The Daimyo -------------------------------------------------------------------------------


def test_a_daimyo_sees_which_of_his_generals_have_not_ordered_and_no_other_clans(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """R1.1: the Daimyo's state holds his clan's orders, and no other clan's. His page lists
    his Generals without an order this turn, and those in a battle who give none."""
    made = tournament_running(live_site, "Browser: the Daimyo's unordered", players=WITH_DAIMYOS)
    tid = made["id"]
    people = {(p["clan"], p["role"], p["army"]): p for p in made["players"]}
    token = {p["army"]: p["token"] for p in made["players"] if p["army"]}
    daimyo = next(p for (clan, role, _), p in people.items() if clan == "lion" and role == "daimyo")
    name = {p["army"]: p["name"] for p in made["players"] if p["army"]}
    # lion-1 and unicorn-1 meet in lion-1's province and go to war (R7).
    where = {
        a["id"]: a["province"]
        for a in live_site.judge_api("GET", f"/tournaments/{tid}/state")["armies"]
    }
    live_site.judge_api(
        "POST",
        f"/tournaments/{tid}/corrections/army",
        {"army": "unicorn-1", "province": where["lion-1"], "reason": "story"},
    )
    live_site.judge_api("POST", f"/tournaments/{tid}/clock/resolve-now?turn=1")
    (table,) = live_site.judge_api("GET", f"/tournaments/{tid}/battles")
    live_site.api(
        "POST",
        f"/tournaments/{tid}/battles/{table['id']}/vote",
        token=token["lion-1"],
        body={"vote": "battle"},
    )
    # Other clans' Generals give orders too: none of it reaches the Lion's Daimyo.
    live_site.api(
        "PUT", f"/tournaments/{tid}/orders/mine", token=token["crab-1"], body={"kind": "hold"}
    )
    seen = live_site.api("GET", f"/tournaments/{tid}/state", token=daimyo["token"])
    assert seen["orders"] == []

    for language in ("en", "ru"):
        text = TEXT[language]
        page = new_page("desktop", locale=language)
        page.goto(f"/join/{daimyo['token']}")
        expect(page).to_have_url(re.compile(rf"/referees/tournaments/{tid}/clan/$"))
        box = page.locator("#clan-unordered")
        expect(box).to_contain_text(f"{text['unordered']} {name['lion-2']}")
        expect(box).to_contain_text(f"{text['battle']} {name['lion-1']}")
        expect(page.locator('tr[data-army="lion-2"] .js-order')).to_have_text(text["missing"])
        for other in ("unicorn-1", "unicorn-2", "crab-2"):
            expect(box).not_to_contain_text(name[other])
        shots(page, f"daimyo-unordered-{language}")

        # lion-2 gives his order: the list follows at once.
        live_site.api(
            "PUT", f"/tournaments/{tid}/orders/mine", token=token["lion-2"], body={"kind": "hold"}
        )
        expect(box).to_contain_text(text["all"])
        expect(box).not_to_contain_text(text["unordered"])
        expect(page.locator('tr[data-army="lion-2"] .js-order')).not_to_have_text(text["missing"])
        if language == "en":
            shots(page, "daimyo-all-ordered-en")
        live_site.api("DELETE", f"/tournaments/{tid}/orders/mine", token=token["lion-2"])
        page.close()


# --- The big screen ---------------------------------------------------------------------------

# The screen's own time zone differs from the tournament's (UTC): the deadline is shown in
# the tournament's.
SCREEN_TIME_ZONE = "Asia/Kolkata"


@pytest.fixture
def screen_page(browser: Browser, live_site: LiveServer) -> Iterator[Callable[[str], Page]]:
    """``screen_page(language)``: a projector at 1920×1080 in a time zone of its own, with the
    recorders in place and the page's clock installed. Script errors fail the test."""
    contexts: list[BrowserContext] = []
    errors: list[str] = []

    def make(language: str) -> Page:
        context = browser.new_context(
            base_url=live_site.url,
            viewport={"width": 1920, "height": 1080},
            locale=language,
            timezone_id=SCREEN_TIME_ZONE,
        )
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(f"{page.url}: {error}"))
        page.add_init_script(RECORDERS)
        page.clock.install()
        return page

    yield make
    for context in contexts:
        context.close()
    assert not errors, "script errors in the page:\n" + "\n".join(errors)


def open_screen(page: Page, tid: int) -> None:
    page.goto(f"/referees/tournaments/{tid}/screen/")
    expect(page.locator("#screen-status")).to_be_hidden()
    await_resync(page, "#screen-countdown")


@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_big_screen_sounds_its_gong_and_closes_orders_at_the_deadline(
    screen_page: Callable[[str], Page], live_site: LiveServer, language: str
) -> None:
    text = TEXT[language]
    made = tournament_running(live_site, f"Browser: the gong ({language})")
    tid = made["id"]
    deadline = deadline_of(live_site, tid)
    page = screen_page(language)
    open_screen(page, tid)

    # The next deadline, in the tournament's time zone, readable from the back of the hall.
    expected = deadline.astimezone(ZoneInfo("UTC")).strftime("%H:%M")
    expect(page.locator("#screen-next")).to_be_visible()
    expect(page.locator("#screen-next")).to_contain_text(text["next"])
    expect(page.locator("#screen-next-time")).to_have_text(expected)
    assert page.locator("#screen-next-time").evaluate("e => e.getBoundingClientRect().height") >= 50
    expect(page.locator("#screen-closed")).to_be_hidden()
    sound = page.locator("#screen-sound")
    expect(sound).to_be_visible()
    shots(page, f"screen-running-{language}")

    # The operator clicks "Sound on" once, as browsers require; the button goes.
    sound.click()
    expect(sound).to_be_hidden()
    assert recorded(page)["contexts"] == 1
    assert gong_tones(page) == 0

    jump_to(page, deadline, -2, pause=True)

    closed = page.locator("#screen-closed")
    expect(closed).to_be_visible()
    expect(closed).to_have_text(text["closed"])
    expect(page.locator("#screen-countdown")).to_have_text(text["over"])
    expect(page.locator("#screen-next")).to_be_hidden()
    assert closed.evaluate("e => e.getBoundingClientRect().height") >= 60
    # One stroke: the gong's six partials.
    assert gong_tones(page) == 6
    shots(page, f"screen-closed-{language}")
    # A fresh state of the same turn (here with a judge's announcement, on the server's
    # clock again) leaves the orders closed: they are until the next turn arrives, and the
    # gong does not sound twice.
    page.clock.resume()
    live_site.judge_api("POST", f"/tournaments/{tid}/announcements", {"text": "Resolving…"})
    expect(page.locator("#screen-announcements-list")).to_contain_text("Resolving…")
    expect(closed).to_be_visible()
    expect(page.locator("#screen-countdown")).to_have_text(text["over"])
    assert gong_tones(page) == 6

    # The next turn arrives: the orders open again, with the new deadline.
    live_site.judge_api("POST", f"/tournaments/{tid}/clock/resolve-now?turn=1")
    expect(closed).to_be_hidden()
    expect(page.locator("#screen-next-time")).to_have_text(
        deadline_of(live_site, tid).astimezone(ZoneInfo("UTC")).strftime("%H:%M")
    )


def test_the_judge_switches_the_gong_off_and_the_screen_stays_silent(
    screen_page: Callable[[str], Page], new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    made = tournament_running(live_site, "Browser: the gong switched off")
    tid = made["id"]
    deadline = deadline_of(live_site, tid)
    screen = screen_page("en")
    open_screen(screen, tid)
    expect(screen.locator("#screen-sound")).to_be_visible()

    console = new_page("desktop")
    judge_sign_in(console, live_site)
    console.goto(f"/referees/tournaments/{tid}/judge/")
    gong = console.get_by_label("Gong on the big screen")
    expect(gong).to_be_checked()
    gong.uncheck()
    expect(console.locator("#console-message")).to_have_text("Done.")
    expect(gong).not_to_be_checked()
    console.screenshot(path=str(SCREENSHOTS / "alarms-console-gong-off-1440.png"))

    # The screen hears of it at once: no "Sound on" to press, and no gong at the deadline.
    expect(screen.locator("#screen-sound")).to_be_hidden()
    assert (
        live_site.judge_api("GET", f"/tournaments/{tid}/state")["tournament"]["screen_gong"]
        is False
    )
    log = live_site.judge_api("GET", f"/tournaments/{tid}/log?kind=setup")
    assert any(
        e["action"] == "tournament_gong_set" and "switched the big screen's gong off" in e["text"]
        for e in log["entries"]
    ), log
    screen.locator("#screen-name").click()
    jump_to(screen, deadline, -2)
    expect(screen.locator("#screen-closed")).to_be_visible()
    assert recorded(screen)["contexts"] == 0
    assert gong_tones(screen) == 0

    # Switched on again from the console: the button is back for the operator.
    gong.check()
    expect(screen.locator("#screen-sound")).to_be_visible()
