"""Every page tells the truth about its connection (issue 11), in a real browser.

A phone that loses the Wi-Fi must stop saying "Live" at once, must not urge an order after
the deadline, must say when an order did not go and offer to send it again, and must come
back to the new turn by itself when the network returns. ``context.set_offline`` is what
the browser sees when the Wi-Fi drops: the ``offline`` event, failed requests, no socket.

Turns are played out by the server's own clock here: the judge's API brings the deadline of
the ``connectivity`` tournament (``scenario.py``) a few seconds close, and the in-process
clock resolves the turn just after it. The waits are Playwright's, generous, so that a busy
machine does not fail them; what the browser measured (event to screen) is printed and
written to ``artifacts/connectivity-timings.json``.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import ARTIFACTS, DEVICES, SCREENSHOTS, LiveServer

pytestmark = pytest.mark.browser

# "Within 2 s" is the promise; the waits allow for a loaded machine, the figures are kept.
WAIT_MS = 10_000
# From the shortened deadline to the turn resolved by the clock (2 s settle window).
RESOLVE_WAIT_S = 30.0
TIMINGS = ARTIFACTS / "connectivity-timings.json"
WIDE = {"width": 1920, "height": 1080}

TEXTS: dict[str, dict[str, str]] = {
    "en-GB": {
        "live": "Live",
        "offline": "Offline — your order may not reach the judge",
        "clan-offline": "Offline — your instructions and choices may not arrive",
        "table-offline": "Offline — what you record here may not reach the table",
        "over": "Turn over — waiting for the result",
        "not-sent-offline": "This device is offline: the order was not sent.",
        "not-sent-back": "The connection is back, but your order was not sent",
        "unsent-late": "Your order was not sent before the deadline.",
        "stored": "Order stored.",
        "screen-offline": "Offline — this screen may be out of date",
    },
    "ru-RU": {
        "live": "На связи",
        "offline": "Нет связи — ваш приказ может не дойти до судьи",
        "clan-offline": "Нет связи — ваши указания и решения могут не дойти",
        "over": "Ход окончен — ждём результата",
        "not-sent-offline": "Устройство не в сети: приказ не отправлен.",
        "not-sent-back": "Связь вернулась, но приказ не отправлен",
        "unsent-late": "Ваш приказ не был отправлен до конца хода.",
        "stored": "Приказ сохранён.",
        "screen-offline": "Нет связи — данные на экране могут быть устаревшими",
    },
}

# Watches the page from inside: when the browser's offline/online events fired, and when
# the page first showed what the test waits for. performance.now() of the page itself, so
# that the figures do not include Playwright's own round trips.
WATCH = """
({ statusId, offlineText }) => {
  const t = (window.__sl5rTiming = {});
  // Capture: before the page's own listeners, which may change the page at once.
  addEventListener("offline", () => { t.offline = performance.now(); check(); }, true);
  addEventListener("online", () => { t.online = performance.now(); check(); }, true);
  function check() {
    const status = document.getElementById(statusId);
    const now = performance.now();
    if (t.offline !== undefined && t.offlineShown === undefined && status &&
        !status.hidden && status.textContent.trim() === offlineText) t.offlineShown = now;
    const want = window.__sl5rWantTurn;
    const turn = document.getElementById("clock-turn") || document.getElementById("screen-turn");
    if (t.online !== undefined && want && t.turnShown === undefined && turn &&
        new RegExp(want).test(turn.textContent)) t.turnShown = now;
  }
  new MutationObserver(check).observe(document.body, {
    subtree: true, childList: true, characterData: true, attributes: true,
  });
}
"""

_measured: dict[str, float] = {}


@pytest.fixture(scope="module", autouse=True)
def _report_timings() -> Iterator[None]:
    yield
    if _measured:
        ARTIFACTS.mkdir(exist_ok=True)
        TIMINGS.write_text(json.dumps(_measured, indent=2, sort_keys=True), encoding="utf-8")
        print("\nconnectivity timings:")
        for key, value in sorted(_measured.items()):
            print(f"  {key}: {value:.1f}")


def keep(name: str, page: Page, start: str, end: str) -> float:
    """Record the browser's time from event ``start`` to ``end`` (both must have happened)."""
    timing = page.evaluate("window.__sl5rTiming")
    assert start in timing and end in timing, timing
    value = float(timing[end] - timing[start])
    _measured[f"{name} (ms, in the browser)"] = value
    return value


def shoot(page: Page, name: str) -> list[Path]:
    """Screenshots at phone size (390x844) and on a 1920x1080 screen; viewport put back."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    before = page.viewport_size
    paths = []
    for label, size in (("phone", DEVICES["phone"]["viewport"]), ("1920", WIDE)):
        page.set_viewport_size(size)
        path = SCREENSHOTS / f"{name}-{label}.png"
        page.screenshot(path=str(path), full_page=True, animations="disabled")
        paths.append(path)
    if before is not None:
        page.set_viewport_size(before)
    return paths


def join(page: Page, token: str, tournament_id: int, role: str = "general") -> None:
    page.goto(f"/join/{token}")
    expect(page).to_have_url(re.compile(rf"/referees/tournaments/{tournament_id}/{role}/$"))


def turn_label(turn: int) -> re.Pattern[str]:
    """The clock's heading for ``turn`` in any language ("Turn 2", "Ход 2 из 10")."""
    return re.compile(rf"^\D*\b{turn}\b")


def _time(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


def state_of(live_site: LiveServer, tournament_id: int) -> dict[str, Any]:
    state: dict[str, Any] = live_site.judge_api("GET", f"/tournaments/{tournament_id}/state")
    return state


def deadline_in(live_site: LiveServer, tournament_id: int, seconds: float) -> int:
    """Bring the open turn's deadline to ``seconds`` from now; the turn's number."""
    tournament = state_of(live_site, tournament_id)["tournament"]
    clock = tournament["clock"]
    left = (_time(clock["deadline"]) - _time(clock["server_time"])).total_seconds()
    change = -round(left - seconds)
    assert change < 0, clock
    live_site.judge_api(
        "POST", f"/tournaments/{tournament_id}/clock/extend", body={"seconds": change}
    )
    return int(tournament["turn"])


def wait_for_turn(live_site: LiveServer, tournament_id: int, turn: int) -> None:
    """The server has resolved the turn before ``turn`` (the clock did it, not the test)."""
    end = time.monotonic() + RESOLVE_WAIT_S
    while time.monotonic() < end:
        if state_of(live_site, tournament_id)["tournament"]["turn"] >= turn:
            return
        time.sleep(0.2)
    pytest.fail(f"the clock did not open turn {turn} within {RESOLVE_WAIT_S:g} s")


@pytest.mark.parametrize("locale", ["en-GB", "ru-RU"])
def test_a_general_loses_the_wifi_over_the_deadline(
    new_page: Callable[..., Page], live_site: LiveServer, locale: str
) -> None:
    """Offline at once, the send fails and says so, "Turn over" after the deadline with
    every order control closed, and back online the new turn with no stale error."""
    game = live_site.data["connectivity"]
    text = TEXTS[locale]
    lang = locale[:2]
    general = game[lang]
    page = new_page("phone", locale=locale)
    screen = new_page("desktop", locale=locale)
    screen.set_viewport_size(WIDE)

    join(page, general["token"], game["id"])
    status = page.locator("#live-status")
    expect(status).to_have_text(text["live"])
    expect(page.locator("#army-line strong")).to_be_visible()
    screen.goto(f"/referees/tournaments/{game['id']}/screen/")
    expect(screen.locator("#screen-status")).to_have_text("Live" if lang == "en" else "На связи")
    page.evaluate(WATCH, {"statusId": "live-status", "offlineText": text["offline"]})
    screen.evaluate(WATCH, {"statusId": "screen-status", "offlineText": text["screen-offline"]})

    turn = deadline_in(live_site, game["id"], 20)
    # The page has the new deadline before the network goes.
    expect(page.locator("#clock-time")).to_have_text(re.compile(r"^00:(0\d|1\d|20)$"))
    expect(screen.locator("#screen-countdown")).to_have_text(re.compile(r"^0:(0\d|1\d|20)$"))
    destination = page.locator("#destinations button").first
    destination.tap()
    expect(page.locator("#send-button")).to_be_enabled()

    page.context.set_offline(True)
    screen.context.set_offline(True)

    expect(status).to_have_text(text["offline"], timeout=WAIT_MS)
    expect(status).to_have_class(re.compile(r"\bis-offline\b"))
    expect(page.locator("#order-offline")).to_be_visible()
    expect(page.locator("#order-offline")).to_have_text(text["offline"])
    # The last minute, offline: the clock warns instead of urging "send your order now".
    expect(page.locator("#clock-note")).to_have_text(text["offline"])
    expect(screen.locator("#screen-status")).to_be_visible(timeout=WAIT_MS)
    expect(screen.locator("#screen-status")).to_have_text(text["screen-offline"])
    keep(f"{lang}: general offline shown after", page, "offline", "offlineShown")
    keep(f"{lang}: screen offline shown after", screen, "offline", "offlineShown")

    # Sending anyway: it cannot go, the page says why and offers to send it again.
    page.locator("#send-button").tap()
    message = page.locator("#order-message")
    expect(message).to_have_class(re.compile(r"\bis-error\b"))
    expect(message).to_contain_text(text["not-sent-offline"])
    expect(page.locator("#retry-button")).to_be_visible()
    expect(page.locator("#retry-button")).to_be_enabled()
    shoot(page, f"connectivity-general-offline-{lang}")

    # The deadline passes while the phone is offline.
    clock = page.locator("#clock")
    expect(clock).to_contain_text(text["over"], timeout=WAIT_MS + 20_000)
    expect(clock).to_have_class(re.compile(r"\bis-over\b"))
    expect(clock).not_to_have_class(re.compile(r"\bis-urgent\b"))
    expect(page.locator("#send-button")).to_be_disabled()
    expect(page.locator("#hold-button")).to_be_disabled()
    expect(page.locator("#no-claim")).to_be_disabled()
    buttons = page.locator("#destinations button")
    assert buttons.count() > 0
    for index in range(buttons.count()):
        expect(buttons.nth(index)).to_be_disabled()
    expect(page.locator("#retry-button")).to_be_hidden()
    expect(message).to_contain_text(text["unsent-late"])
    expect(page.locator("#order-offline")).to_be_hidden()
    assert "send your order now" not in page.locator("body").inner_text()
    expect(screen.locator("#screen-countdown")).to_have_text(text["over"], timeout=WAIT_MS)
    shoot(page, f"connectivity-general-turn-over-{lang}")
    shoot(screen, f"connectivity-screen-turn-over-offline-{lang}")

    # The server resolves the turn meanwhile; the phones hear nothing of it.
    wait_for_turn(live_site, game["id"], turn + 1)
    expect(page.locator("#clock-turn")).to_have_text(turn_label(turn))
    for each in (page, screen):
        each.evaluate(f"window.__sl5rWantTurn = {json.dumps(turn_label(turn + 1).pattern)}")
        each.context.set_offline(False)

    expect(page.locator("#clock-turn")).to_have_text(turn_label(turn + 1), timeout=WAIT_MS)
    expect(screen.locator("#screen-turn")).to_have_text(turn_label(turn + 1), timeout=WAIT_MS)
    keep(f"{lang}: general new turn after online", page, "online", "turnShown")
    keep(f"{lang}: screen new turn after online", screen, "online", "turnShown")
    expect(status).to_have_text(text["live"], timeout=WAIT_MS)
    expect(screen.locator("#screen-status")).to_be_hidden(timeout=WAIT_MS)
    # Issue 30: the refusal outlives the resync, until he says he has read it.
    expect(message).to_contain_text(text["unsent-late"])
    message.locator("button.message-seen").click()
    expect(message).to_have_text("")
    expect(page.locator("#retry-button")).to_be_hidden()
    expect(clock).not_to_contain_text(text["over"])
    expect(page.locator("#clock-time")).to_have_text(re.compile(r"^(30:00|29:[0-5]\d)$"))
    expect(page.locator("#destinations button").first).to_be_enabled()
    expect(page.locator("#hold-button")).to_be_enabled()
    shoot(page, f"connectivity-general-new-turn-{lang}")


def test_an_order_that_failed_offline_is_sent_again_with_retry(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """While the turn is open: offline, the send fails; online again, Retry stores it."""
    game = live_site.data["connectivity"]
    general = game["retry"]
    text = TEXTS["en-GB"]
    page = new_page("phone")

    join(page, general["token"], game["id"])
    expect(page.locator("#live-status")).to_have_text(text["live"])
    destination = page.locator("#destinations button").first
    province = destination.inner_text().strip()
    destination.tap()

    page.context.set_offline(True)
    expect(page.locator("#live-status")).to_have_text(text["offline"], timeout=WAIT_MS)
    page.locator("#send-button").tap()
    message = page.locator("#order-message")
    expect(message).to_contain_text(text["not-sent-offline"])
    retry = page.locator("#retry-button")
    expect(retry).to_be_visible()

    page.context.set_offline(False)
    expect(page.locator("#live-status")).to_have_text(text["live"], timeout=WAIT_MS)
    # The offline message is no longer true; that the order has not gone still is.
    expect(message).to_contain_text(text["not-sent-back"])
    expect(retry).to_be_visible()
    retry.tap()

    expect(message).to_have_text(text["stored"])
    expect(message).to_have_class(re.compile(r"\bis-ok\b"))
    expect(retry).to_be_hidden()
    expect(page.locator("#stored-order")).to_contain_text(province)
    orders = state_of(live_site, game["id"])["orders"]
    assert [o["army"] for o in orders if o["army"] == general["army"]] == [general["army"]]


@pytest.mark.parametrize("locale", ["en-GB", "ru-RU"])
def test_the_clan_page_goes_offline_and_comes_back(
    new_page: Callable[..., Page], live_site: LiveServer, locale: str
) -> None:
    """The Daimyo's page on a phone: Offline at once, Live again when the network is back."""
    game = live_site.data["daimyo"]
    text = TEXTS[locale]
    lang = locale[:2]
    page = new_page("phone", locale=locale)

    join(page, game["daimyo_token"], game["id"], role="clan")
    status = page.locator("#live-status")
    expect(status).to_have_text(text["live"])
    page.evaluate(WATCH, {"statusId": "live-status", "offlineText": text["clan-offline"]})

    page.context.set_offline(True)
    expect(status).to_have_text(text["clan-offline"], timeout=WAIT_MS)
    expect(status).to_have_class(re.compile(r"\bis-offline\b"))
    keep(f"{lang}: clan offline shown after", page, "offline", "offlineShown")
    shoot(page, f"connectivity-clan-offline-{lang}")

    page.context.set_offline(False)
    expect(status).to_have_text(text["live"], timeout=WAIT_MS)
    expect(status).not_to_have_class(re.compile(r"\bis-offline\b"))


def test_the_big_screen_goes_offline_and_comes_back(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """The big screen never says Live without a connection: offline at once, then back."""
    game = live_site.data["connectivity"]
    text = TEXTS["en-GB"]
    page = new_page("desktop")
    page.set_viewport_size(WIDE)

    page.goto(f"/referees/tournaments/{game['id']}/screen/")
    status = page.locator("#screen-status")
    expect(status).to_have_text(text["live"])
    expect(status).to_be_hidden()
    page.evaluate(WATCH, {"statusId": "screen-status", "offlineText": text["screen-offline"]})

    page.context.set_offline(True)
    expect(status).to_be_visible(timeout=WAIT_MS)
    expect(status).to_have_text(text["screen-offline"])
    keep("en: big screen offline shown after", page, "offline", "offlineShown")
    shoot(page, "connectivity-screen-offline-en")

    page.context.set_offline(False)
    expect(status).to_have_text(text["live"], timeout=WAIT_MS)
    expect(status).to_be_hidden()


def test_a_battle_table_goes_offline_and_comes_back(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """The battle table on a phone says Offline at once and Live again afterwards."""
    game = live_site.data["bushido"]["other"]
    tournament_id = live_site.data["bushido"]["id"]
    text = TEXTS["en-GB"]
    page = new_page("phone")

    join(page, game["token"], tournament_id)
    page.locator("#battle-link").tap()
    expect(page).to_have_url(re.compile(rf"/tournaments/{tournament_id}/battles/\d+/$"))
    status = page.locator("#live-status")
    expect(status).to_have_text(text["live"])

    page.context.set_offline(True)
    expect(status).to_have_text(text["table-offline"], timeout=WAIT_MS)
    shoot(page, "connectivity-battle-table-offline-en")
    page.context.set_offline(False)
    expect(status).to_have_text(text["live"], timeout=WAIT_MS)


def test_the_judge_console_goes_offline_and_comes_back(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """The console never says Live without a connection either."""
    game = live_site.data["connectivity"]
    judge = live_site.data["judge"]
    console = f"/referees/tournaments/{game['id']}/judge/"
    page = new_page("desktop")
    page.set_viewport_size(WIDE)

    page.goto(f"/admin/login/?next={console}")
    page.locator("#id_username").fill(judge["username"])
    page.locator("#id_password").fill(judge["password"])
    page.locator("input[type=submit]").click()
    expect(page).to_have_url(re.compile(rf"{re.escape(console)}$"))
    status = page.locator("#live-status")
    expect(status).to_have_attribute("data-status", "live")

    page.context.set_offline(True)
    expect(status).not_to_have_attribute("data-status", "live", timeout=WAIT_MS)
    expect(status).to_have_text("Offline — this console may be out of date")
    shoot(page, "connectivity-judge-offline-en")
    page.context.set_offline(False)
    expect(status).to_have_attribute("data-status", "live", timeout=WAIT_MS)


def test_a_socket_that_stops_answering_is_not_live(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """The Wi-Fi is up as far as the browser knows, but nothing comes back from the server
    (a half-dead connection): the page stops saying Live and reconnects by itself."""
    game = live_site.data["connectivity"]
    text = TEXTS["en-GB"]
    page = new_page("phone")
    muted = {"on": False}

    def relay(ws: Any) -> None:
        server = ws.connect_to_server()
        ws.on_message(lambda message: server.send(message))
        server.on_message(lambda message: None if muted["on"] else ws.send(message))

    page.route_web_socket(re.compile(r"/ws/tournaments/"), relay)
    join(page, game["retry"]["token"], game["id"])
    status = page.locator("#live-status")
    expect(status).to_have_text(text["live"])

    muted["on"] = True
    silent_at = time.monotonic()
    # No word for 12 s (two pings unanswered) means not live; allow for a slow machine.
    expect(status).to_have_text(text["offline"], timeout=30_000)
    _measured["en: half-dead socket not live after (s, from the test)"] = (
        time.monotonic() - silent_at
    )
    assert page.evaluate("navigator.onLine") is True

    muted["on"] = False
    expect(status).to_have_text(text["live"], timeout=30_000)
