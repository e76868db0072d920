"""Every player told what happened to him (issue 30, points 8-12 and 15), on phones.

Each story builds its own tournament through the judge's API (``page_states.py``), plays it
to the moment that matters, and looks at the players' pages at 390x844, some in Russian:
a proposal declined or lapsed at a battle table (8), a destroyed General under a Daimyo sent
to his Daimyo, who sees where he may reform (9), a General in a meeting not promised the
province (10), a refused Send kept on screen across the next turn (11), the standings and
the played turns after "End the game" (12), and no swords left where a battle ended (15).

One story fails on today's code on purpose: after the end, a General under a Daimyo is still
told that he sees only his own army (general.html), while his map shows every army (R12).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Page, Route, expect

from tests.browser.conftest import LiveServer, snap
from tests.browser.page_states import tournament_ended_in_turn, tournament_running

pytestmark = pytest.mark.browser

# A new turn reaches a page over its socket, then a fresh state: generous on a busy machine.
TURN_WAIT_MS = 10_000
# A success at the battle table fades after 8 s (static/js/battle_table/controls.js).
FADE_WAIT_MS = 15_000


# R1 gives the clans Daimyos from 24 players.
WITH_DAIMYOS = 24


# --- Building the moment -------------------------------------------------------------------


def generals(made: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The tournament's Generals by army code."""
    return {p["army"]: p for p in made["players"] if p["army"]}


def player(made: dict[str, Any], clan: str, role: str) -> dict[str, Any]:
    return next(p for p in made["players"] if p["clan"] == clan and p["role"] == role)


def token_of(live_site: LiveServer, tid: int, who: dict[str, Any]) -> str:
    link = live_site.judge_api("POST", f"/tournaments/{tid}/players/{who['id']}/join-link")
    return str(link["token"])


def provinces_now(live_site: LiveServer, tid: int) -> dict[str, str | None]:
    state = live_site.judge_api("GET", f"/tournaments/{tid}/state")
    return {army["id"]: army["province"] for army in state["armies"]}


def correct(live_site: LiveServer, tid: int, kind: str, body: dict[str, Any]) -> None:
    live_site.judge_api(
        "POST", f"/tournaments/{tid}/corrections/{kind}", {**body, "reason": "story"}
    )


def resolve(live_site: LiveServer, tid: int, *turns: int) -> None:
    for turn in turns:
        live_site.judge_api("POST", f"/tournaments/{tid}/clock/resolve-now?turn={turn}")


def meeting(live_site: LiveServer, name: str) -> dict[str, Any]:
    """Turn 2 open, a Lion and a Unicorn army in the Lion's province: a meeting (R7).

    The judge moves the Unicorn army in by hand (a correction) in turn 1; resolving the turn
    finds two clans in one province and opens their table.
    """
    made = tournament_running(live_site, name)
    tid = made["id"]
    lion, unicorn = generals(made)["lion-1"], generals(made)["unicorn-1"]
    province = provinces_now(live_site, tid)["lion-1"]
    assert province
    correct(live_site, tid, "army", {"army": "unicorn-1", "province": province})
    resolve(live_site, tid, 1)
    (table,) = live_site.judge_api("GET", f"/tournaments/{tid}/battles")
    return {
        "id": tid,
        "made": made,
        "province": province,
        "table": f"/tournaments/{tid}/battles/{table['id']}",
        "a": {"army": "lion-1", "token": token_of(live_site, tid, lion)},
        "b": {"army": "unicorn-1", "token": token_of(live_site, tid, unicorn)},
    }


def act(live_site: LiveServer, game: dict[str, Any], side: str, body: dict[str, Any]) -> Any:
    token = game[side]["token"]
    return live_site.api("POST", f"{game['table']}/actions", token=token, body=body)


def battle_begun(live_site: LiveServer, game: dict[str, Any]) -> None:
    """A calls for battle, both enter their strongholds, A begins (R7, R13)."""
    live_site.api(
        "POST", f"{game['table']}/vote", token=game["a"]["token"], body={"vote": "battle"}
    )
    stronghold = {"type": "stronghold", "honor": 6, "province_strength": 5, "gold": 5}
    for side in ("a", "b"):
        act(live_site, game, side, stronghold)
    act(live_site, game, "a", {"type": "begin"})


def b_loses_every_province(live_site: LiveServer, game: dict[str, Any]) -> None:
    """B marks his own four provinces lost, the last one confirmed (R8): A wins."""
    b = game["b"]["army"]
    for last in (False, False, False, True):
        body: dict[str, Any] = {"type": "province", "army": b, "delta": -1}
        if last:
            body["confirm"] = True
        act(live_site, game, "b", body)


def join(page: Page, token: str, tid: int, role: str = "general") -> None:
    page.goto(f"/join/{token}")
    expect(page).to_have_url(re.compile(rf"/referees/tournaments/{tid}/{role}/$"))


def card(page: Page, army: str) -> Any:
    return page.locator(f'#player-cards .player-card[data-army="{army}"]')


def turn_label(turn: int) -> re.Pattern[str]:
    """The clock's heading for ``turn`` in either language ("Turn 2 of 20", "Ход 2 из 20")."""
    return re.compile(rf"^\D*\b{turn}\b")


def swords(page: Page, province: str) -> Any:
    return page.locator(f'#war-map g.map-events use[data-province="{province}"]')


# --- Point 8 ---------------------------------------------------------------------------------


def test_a_declined_or_lapsed_proposal_is_reported_on_both_phones(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """R8, R13; issue 30, point 8: a proposal that came to nothing was never reported.

    The proposer kept "Proposed: it takes effect when … confirms", the pending box vanished
    and nobody learnt that it had been declined. Now both phones (one in Russian) say it was
    declined and by whom, and a proposal left waiting when the battle is decided lapses, said
    so, with nothing stale left on the proposer's phone once the battle has ended.
    """
    game = meeting(live_site, "Browser: proposals declined")
    battle_begun(live_site, game)
    b = game["b"]["army"]
    phone_a, phone_b = new_page("phone"), new_page("phone", locale="ru")
    join(phone_a, game["a"]["token"], game["id"])
    join(phone_b, game["b"]["token"], game["id"])
    for phone, live in ((phone_a, "Live"), (phone_b, "На связи")):
        phone.goto(f"{game['table']}/")
        expect(phone.locator("#live-status")).to_have_text(live)
    message_a = phone_a.locator("#battle-message")

    # A proposes that B lost a province; B declines it on his phone.
    card(phone_a, b).get_by_role("button", name="Province lost").tap()
    expect(message_a).to_contain_text("takes effect when")
    decline = phone_b.locator('#proposal-list [data-key^="proposal-decline-"]')
    expect(decline).to_have_count(1)
    decline.tap()

    answered_a = phone_a.locator("#proposals-answered")
    answered_b = phone_b.locator("#proposals-answered")
    expect(answered_a).to_be_visible()
    expect(answered_a).to_contain_text("loses a province")
    declined_en = rf"Declined by {re.escape(b)}\b.*: nothing changed"
    declined_ru = rf"Отклонил {re.escape(b)}\b.*: ничего не изменилось"
    expect(answered_a).to_contain_text(re.compile(declined_en))
    expect(answered_b).to_contain_text(re.compile(declined_ru))
    for phone in (phone_a, phone_b):
        expect(phone.locator("#proposal-list li")).to_have_count(0)
        expect(card(phone, b).locator(".province-value")).to_contain_text("4")
    # The proposer's "Proposed: it takes effect when … confirms it" does not stay (it fades
    # on a timer; the answer does not clear it, hence the longer wait).
    expect(message_a).not_to_contain_text("takes effect when", timeout=FADE_WAIT_MS)
    snap(phone_a, "players-told-declined-proposer")
    snap(phone_b, "players-told-declined-ru")

    # A proposes +1 honor for B; before B answers, B loses his last province: the battle is
    # decided, and what still waited for consent lapses (R8).
    card(phone_a, b).get_by_role("button", name=f"{b}: family honor +1").tap()
    expect(phone_b.locator("#proposal-list li")).to_have_count(1)
    b_loses_every_province(live_site, game)

    expect(phone_a.locator("#outcome-panel")).to_be_visible()
    lapsed = re.compile(r"family honor \+1.*Lapsed when the battle was decided: nothing changed")
    expect(answered_a).to_contain_text(lapsed)
    expect(answered_b).to_contain_text("Не принято до конца битвы: ничего не изменилось")
    expect(answered_a.locator("li")).to_have_count(2)
    for phone in (phone_a, phone_b):
        expect(phone.locator("#proposal-list li")).to_have_count(0)
    # Nothing on A's phone still says a change waits for B.
    expect(message_a).not_to_contain_text("takes effect when", timeout=FADE_WAIT_MS)
    snap(phone_a, "players-told-lapsed-after-the-battle")
    snap(phone_b, "players-told-lapsed-after-the-battle-ru")


# --- Point 9 ---------------------------------------------------------------------------------


def test_a_destroyed_general_is_sent_to_his_daimyo_who_sees_where_he_may_reform(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """R9, R1.1; issue 30, point 9: a General under a Daimyo was offered a castle his clan had
    lost, without a word, and lost a turn to the refusal.

    He may not see which castles his clan holds (R1.1): his page (in Russian) says so and
    sends him to his Daimyo. The Daimyo's page shows his destroyed General, the turn he may
    reform from and only the castles the clan really holds (R9).
    """
    made = tournament_running(live_site, "Browser: reform under a Daimyo", players=WITH_DAIMYOS)
    tid = made["id"]
    # Scorpion 1 is destroyed in turn 1 (reform from turn 3, R9); Scorpion 2 leaves Shosuro,
    # which the Crane then take.
    destroyed = {"army": "scorpion-1", "province": None, "destroyed_by": "loss"}
    correct(live_site, tid, "army", destroyed)
    correct(live_site, tid, "army", {"army": "scorpion-2", "province": "scorpion-soshi"})
    correct(live_site, tid, "control", {"province": "scorpion-shosuro", "clan": "crane"})
    resolve(live_site, tid, 1, 2)
    general = new_page("phone", locale="ru")
    daimyo = new_page("phone")

    join(general, token_of(live_site, tid, generals(made)["scorpion-1"]), tid)
    blind = general.locator("#reform-blind")
    expect(blind).to_be_visible()
    expect(blind).to_contain_text("вы не видите, какие из этих замков клан ещё удерживает")
    expect(blind).to_contain_text("спросите Даймё")
    # As far as he may know, both home castles are still his clan's.
    expect(general.locator("#reform-destinations button")).to_have_count(2)
    snap(general, "players-told-reform-ask-your-daimyo-ru")

    join(daimyo, token_of(live_site, tid, player(made, "scorpion", "daimyo")), tid, role="clan")
    where = daimyo.locator('table.generals tr[data-army="scorpion-1"] .js-where')
    expect(where).to_have_text("destroyed: may reform from turn 3 in Bayushi Lands")
    # His other General stands on the map, and is shown there as before.
    expect(daimyo.locator('table.generals tr[data-army="scorpion-2"] .js-where')).to_have_text(
        "Soshi Lands"
    )
    snap(daimyo, "players-told-reform-daimyo-sees")


# --- Point 10 --------------------------------------------------------------------------------


def test_a_general_in_a_meeting_is_not_promised_control_of_the_province(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """R6, R7; issue 30, point 10: a General in a meeting was told "your army holds, and
    takes control of its province", though control does not change while another clan is
    there. In Russian, on a phone, through the meeting and the peace that follows."""
    game = meeting(live_site, "Browser: meeting holds")
    tid = game["id"]
    takes_control = "берёт под контроль свою провинцию"
    shared = "Пока в провинции армия другого клана, контроль над ней не меняется."
    host, guest = new_page("phone", locale="ru"), new_page("phone", locale="ru")
    alone = new_page("phone", locale="ru")

    join(host, game["a"]["token"], tid)
    join(guest, game["b"]["token"], tid)
    for phone in (host, guest):
        stored = phone.locator("#stored-order")
        expect(stored).to_contain_text(shared)
        expect(stored).not_to_contain_text(takes_control)
    snap(host, "players-told-meeting-holds-ru")

    # A General alone in his province is still told that holding takes it (R6).
    join(alone, token_of(live_site, tid, generals(game["made"])["crab-1"]), tid)
    expect(alone.locator("#stored-order")).to_contain_text(takes_control)

    # Both say peace: the armies stay together, and control still does not change (R7).
    for side in ("a", "b"):
        live_site.api(
            "POST", f"{game['table']}/vote", token=game[side]["token"], body={"vote": "peace"}
        )
    expect(host.locator("#battle-link-text")).to_contain_text("Ваша армия в мире")
    expect(host.locator("#stored-order")).to_contain_text(shared)
    expect(host.locator("#stored-order")).not_to_contain_text(takes_control)
    snap(host, "players-told-peace-holds-ru")


# --- Point 11 --------------------------------------------------------------------------------


def test_a_send_lost_offline_is_still_shown_in_the_next_turn_until_seen(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """R4; issue 30, point 11: a Send that failed during a network drop vanished when the
    page resynced in the next turn, and the General never learnt that his order did not
    count. In Russian: the refusal stays until he taps "Понятно" (OK, seen)."""
    made = tournament_running(live_site, "Browser: refused offline")
    tid = made["id"]
    page = new_page("phone", locale="ru")
    join(page, token_of(live_site, tid, generals(made)["crane-1"]), tid)
    status = page.locator("#live-status")
    expect(status).to_have_text("На связи")
    page.locator("#destinations button").first.tap()

    page.context.set_offline(True)
    expect(status).not_to_have_text("На связи", timeout=TURN_WAIT_MS)
    page.locator("#send-button").tap()
    message = page.locator("#order-message")
    expect(message).to_have_class(re.compile(r"\bis-error\b"))
    expect(message).to_contain_text("приказ не отправлен")

    # The turn is resolved while the phone is offline; back online, the page resyncs.
    resolve(live_site, tid, 1)
    page.context.set_offline(False)
    expect(page.locator("#clock-turn")).to_have_text(turn_label(2), timeout=TURN_WAIT_MS)
    expect(status).to_have_text("На связи", timeout=TURN_WAIT_MS)

    # Turn 1 is over: not "send it again", but that the order did not count.
    expect(message).to_contain_text("Ваш приказ не был отправлен до конца хода.")
    seen = message.get_by_role("button", name="Понятно")
    expect(seen).to_be_visible()
    snap(page, "players-told-send-lost-offline-ru")
    orders = live_site.judge_api("GET", f"/tournaments/{tid}/state")["orders"]
    assert [o for o in orders if o["army"] == "crane-1"] == []
    seen.tap()
    expect(message).to_have_text("")


def test_a_send_refused_as_late_is_still_shown_two_turns_on_until_seen(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """R4; issue 30, point 11: an order that reached the server after its turn was resolved
    is refused as late. The page said so only until the next turn's state arrived; now the
    refusal stays through the turns that follow until the General taps "OK, seen"."""
    made = tournament_running(live_site, "Browser: refused late")
    tid = made["id"]
    page = new_page("phone")
    join(page, token_of(live_site, tid, generals(made)["crane-1"]), tid)
    expect(page.locator("#live-status")).to_have_text("Live")

    def deadline_passes_on_the_way(route: Route) -> None:
        # The deadline passes while the order is in flight: the server resolves turn 1
        # before the order arrives (a stall, a slow network).
        resolve(live_site, tid, 1)
        route.continue_()

    page.route("**/orders/mine", deadline_passes_on_the_way, times=1)
    page.locator("#destinations button").first.tap()
    page.locator("#send-button").tap()
    message = page.locator("#order-message")
    expect(message).to_contain_text("late: the deadline has passed", timeout=TURN_WAIT_MS)
    expect(page.locator("#clock-turn")).to_have_text(turn_label(2), timeout=TURN_WAIT_MS)

    # Another turn goes by: the refusal is still there.
    resolve(live_site, tid, 2)
    expect(page.locator("#clock-turn")).to_have_text(turn_label(3), timeout=TURN_WAIT_MS)
    expect(message).to_contain_text("late: the deadline has passed")
    snap(page, "players-told-send-refused-late")
    message.get_by_role("button", name="OK, seen").tap()
    expect(message).to_have_text("")


# --- Point 12 --------------------------------------------------------------------------------


def test_after_the_end_players_and_the_public_see_the_standings_and_the_played_turns(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """R12, R1.1; issue 30, point 12: after "End the game" a General's page said "The game is
    over" with no standings, and the public home's "Played turns" led to the judge sign-in.

    With Daimyos the armies are secret while the game runs (R1.1), so the public home offers
    no "Played turns" (it led to the judge's sign-in); once it has ended, a General's page (in
    Russian) shows the final standings and links the played turns, and the public reaches
    them from the home.
    """
    made = tournament_running(live_site, "Browser: the end is public", players=WITH_DAIMYOS)
    tid = made["id"]
    history_page = re.compile(rf"^{re.escape(live_site.url)}/referees/tournaments/{tid}/history/")
    public = new_page("phone")
    card_links = public.locator(f'.tournament-card[data-tournament="{tid}"] .tournament-links')

    public.goto("/")
    expect(card_links.get_by_role("link", name="Big screen")).to_be_visible()
    expect(card_links.get_by_role("link", name="Played turns")).to_have_count(0)

    resolve(live_site, tid, 1, 2)
    live_site.judge_api("POST", f"/tournaments/{tid}/clock/end")

    general = new_page("phone", locale="ru")
    join(general, token_of(live_site, tid, generals(made)["dragon-1"]), tid)
    scores = general.locator("#scores")
    expect(scores).to_be_visible()
    expect(scores.locator("h2")).to_have_text("Очки")
    expect(scores.locator("#scores-body tr")).to_have_count(8)
    snap(general, "players-told-the-end-general-ru")
    history = scores.locator("#scores-history a")
    expect(history).to_have_text("Все сыгранные ходы: приказы и битвы")
    history.tap()
    expect(general).to_have_url(history_page)
    expect(general.locator("h1")).to_have_text("Ход 2: итоги")
    expect(general.locator("#history-orders-title")).to_be_visible()
    snap(general, "players-told-the-end-history-ru")

    public.goto("/")
    card_links.get_by_role("link", name="Played turns").tap()
    expect(public).to_have_url(history_page)
    expect(public.locator("h1")).to_have_text("Turn 2 as played")
    expect(public.locator("#history-war-map")).to_be_visible()
    snap(public, "players-told-the-end-history-public")


def test_after_the_end_a_general_under_a_daimyo_is_not_told_he_sees_only_his_own_army(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """R12, R1.1; issue 30, point 12: once the game has ended his page draws every army (R12),
    so the note "You see your own army, its province and the provinces next to it (R1.1)"
    is no longer true and must not stay under the map.

    Fails today: general.html shows the note whenever the clan has a Daimyo, in every phase.
    """
    made = tournament_ended_in_turn(
        live_site, "Browser: the end, the whole map", turn=2, players=WITH_DAIMYOS
    )
    tid = made["id"]
    page = new_page("phone")
    join(page, token_of(live_site, tid, generals(made)["dragon-1"]), tid)
    expect(page.locator("#scores")).to_be_visible()
    # Every clan's armies are on his map now, not only his own.
    crab = page.locator('#war-map g.map-armies g.army-marker[data-clan="crab"]')
    expect(crab).to_have_count(2)
    expect(page.get_by_text("You see your own army, its province")).to_have_count(0)


# --- Point 15 --------------------------------------------------------------------------------


def test_no_swords_stay_on_a_province_whose_battle_ended_with_one_army(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """R7, R8; issue 30, point 15: the crossed swords stayed on a province after its battle
    ended with one army left, since the state still sent last turn's meeting. The winner's
    phone shows the meeting, then the battle, then no swords at all once it has ended."""
    game = meeting(live_site, "Browser: swords go")
    province = game["province"]
    page = new_page("phone")
    join(page, game["a"]["token"], game["id"])
    expect(swords(page, province)).to_have_class(re.compile(r"\bevent-meeting\b"))

    battle_begun(live_site, game)
    expect(swords(page, province)).to_have_class(re.compile(r"\bevent-battle\b"))

    b_loses_every_province(live_site, game)
    expect(page.locator("#battle-link-panel")).to_be_hidden()
    expect(swords(page, province)).to_have_count(0)
    expect(page.locator("#war-map g.map-events use")).to_have_count(0)
    board = provinces_now(live_site, game["id"])
    assert (board[game["a"]["army"]], board[game["b"]["army"]]) == (province, None)
    snap(page, "players-told-no-swords-after-the-battle")
