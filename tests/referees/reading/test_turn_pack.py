"""The paper fallback (issue 32): the turn pack's slips list exactly the orders the engine
allows, each General's as far as his role may know (R1.1), and only judges open its pages.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from referees import services
from referees.kernel.core import TournamentError
from referees.reading.turn_pack import Slip, TurnPack, turn_pack
from referees.services import OrderInput
from sl5r.rules.clans import CLANS
from sl5r.rules.turn import TurnState, order_options
from strategic_map.selectors import campaign_turn_state, turn_state_as_seen_by
from tests.referees.conftest import Game

pytestmark = pytest.mark.django_db

# R1 (b) for 20 players: the Unicorn, Crab, Crane and Phoenix have two Generals and a
# Daimyo (their Generals see only their own surroundings, R1.1); the Scorpion, Dragon, Lion
# and Shadowlands two Generals and no Daimyo.
DAIMYO_CLANS = ("crab", "crane", "phoenix", "unicorn")
LINEUP: Mapping[str, Sequence[str]] = {
    clan: ("general", "general", "daimyo") if clan in DAIMYO_CLANS else ("general", "general")
    for clan in CLANS
}
PLAYERS = 20


def _resolve(game: Game, turn: int) -> None:
    services.clock_resolve_now(
        tournament_id=game.id, actor=game.judge_actor, now=timezone.now(), turn=turn
    )


def _place(game: Game, army: str, province: str | None, destroyed_by: str = "loss") -> None:
    services.army_correct(
        tournament_id=game.id,
        army_code=army,
        province=province,
        destroyed_by=destroyed_by,
        reason="set up for the test",
        actor=game.judge_actor,
        now=timezone.now(),
    )


def _give(game: Game, clan: str, n: int, path: Sequence[str]) -> None:
    services.order_give(
        player=game.player(clan, n=n),
        order=OrderInput(kind="move", path=tuple(path)),
        now=timezone.now(),
    )


def _state(game: Game, pack: TurnPack) -> TurnState:
    return campaign_turn_state(game.refresh().campaign, turn=pack.turn)


def _slip(pack: TurnPack, army: str) -> Slip:
    return next(s for s in pack.slips if s.army == army)


@pytest.fixture
def seeded(make_game: Callable[..., Game]) -> Game:
    """Turn 4 open after three resolved turns: armies moved, a meeting, an army destroyed
    by a winner's choice in turn 2 (it may reform from turn 3), another destroyed in turn 3
    that must wait, and a Lion army standing two provinces from the blind Unicorn."""
    game = make_game(PLAYERS, lineup=LINEUP)
    # Turn 1: the Lion walks towards the Unicorn, the Dragon and the Scorpion move.
    _give(game, "lion", 1, ["lion-ikoma"])
    _give(game, "scorpion", 1, ["scorpion-yogo"])
    _resolve(game, 1)
    # Turn 2: a Crab army is destroyed by a winner's choice.
    _place(game, "crab-1", None, destroyed_by="winner")
    _give(game, "lion", 2, ["lion-kitsu"])
    _resolve(game, 2)
    # Turn 3: a Crane army lost a battle: it may reform from turn 5 only.
    _place(game, "crane-1", None, destroyed_by="loss")
    _resolve(game, 3)
    return game


def test_issue_32_every_slip_lists_the_engines_options_for_every_army(seeded: Game) -> None:
    pack = turn_pack(tournament=seeded.refresh())
    state = _state(seeded, pack)

    assert pack.turn == 4
    assert sorted(s.army for s in pack.slips) == sorted(a.id for a in state.armies)
    for slip in pack.slips:
        # R1.1: a General under a Daimyo is offered what the board he knows allows.
        known = state if slip.sees_map else turn_state_as_seen_by(state, slip.army)
        assert slip.options == order_options(known, slip.army), slip.army
        assert slip.sees_map == (slip.clan not in DAIMYO_CLANS)
        boxes = [(c.kind, c.path, c.reform) for c in slip.choices]
        expected = (
            [("hold", (), "")] * slip.options.hold
            + [("move", path, "") for path in slip.options.moves]
            + [("reform", (), p) for p in slip.options.reforms]
        )
        assert sorted(boxes) == sorted(expected)
        assert [c.number for c in slip.choices] == list(range(1, len(slip.choices) + 1))
    # Where every General sees the map, his slip is the engine's own list for the board.
    for slip in pack.slips:
        if slip.sees_map:
            assert slip.options == order_options(state, slip.army)


def test_issue_32_the_slips_come_in_clan_order_then_by_army(seeded: Game) -> None:
    pack = turn_pack(tournament=seeded.refresh())

    order = [(CLANS.index(s.clan), s.army) for s in pack.slips]
    assert order == sorted(order)
    assert [s.number for s in pack.slips] == list(range(1, len(pack.slips) + 1))
    assert all(s.player == seeded.player(s.clan, n=int(s.army[-1])).name for s in pack.slips)


def test_r9_the_destroyed_armies_slips_offer_reform_only_from_their_turn(seeded: Game) -> None:
    pack = turn_pack(tournament=seeded.refresh())

    crab = _slip(pack, "crab-1")  # destroyed by the winner in turn 2: from turn 3
    crane = _slip(pack, "crane-1")  # lost in turn 3: from turn 5

    assert crab.destroyed and not crab.options.hold and not crab.options.moves
    assert [c.reform for c in crab.choices] == ["crab-hida", "crab-kaiu"]
    assert crane.options.reform_from == 5 and crane.choices == ()


def test_r5_3_the_scorpions_swap_choice_is_his_own_where_his_clan_has_no_daimyo(
    seeded: Game, make_game: Callable[..., Game]
) -> None:
    pack = turn_pack(tournament=seeded.refresh())
    under_daimyo = turn_pack(tournament=make_game(24, name="Daimyo everywhere").tournament)

    assert {_slip(pack, f"scorpion-{n}").swap_decided_by for n in (1, 2)} == {"general"}
    assert {_slip(under_daimyo, f"scorpion-{n}").swap_decided_by for n in (1, 2)} == {"daimyo"}
    assert all(s.swap_decided_by is None for s in pack.slips if s.clan != "scorpion")


def test_r5_4_a_unicorn_slip_offers_two_province_moves(seeded: Game) -> None:
    pack = turn_pack(tournament=seeded.refresh())

    unicorn = _slip(pack, "unicorn-1")
    assert unicorn.two_step
    assert any(len(c.path) == 2 for c in unicorn.choices)


def test_r1_1_a_blind_generals_slip_reveals_nothing_beyond_his_sight(seeded: Game) -> None:
    """His slip depends only on his army, its province and the provinces next to it: an
    army out of his sight changes nothing on it, though it changes what the turn accepts."""
    game = seeded
    start = game.province_of("unicorn-1")
    assert start is not None
    pack = turn_pack(tournament=game.refresh())
    slip = _slip(pack, "unicorn-1")
    state = _state(game, pack)
    sight = {start, *state.game_map.neighbours[start]}
    # A province two steps away, out of his sight, on a two-province move the turn accepts.
    first, second = next(
        path
        for path in order_options(state, "unicorn-1").moves
        if len(path) == 2 and path[1] not in sight
    )

    _place(game, "lion-1", second)
    after = turn_pack(tournament=game.refresh())

    assert asdict(_slip(after, "unicorn-1")) == asdict(slip)
    # The judges learn that the turn would refuse it (R5.4), with the reason; he does not.
    value = f"move:{first}>{second}"
    assert after.refused["unicorn-1"][value][0] == "occupied"
    assert value not in pack.refused.get("unicorn-1", {})
    assert (first, second) not in order_options(_state(game, after), "unicorn-1").moves
    # A General who sees the map is offered only what the board allows.
    assert all(not after.refused.get(s.army) for s in after.slips if s.sees_map)


def test_r4_every_box_on_every_slip_is_stored_as_a_paper_order_unless_the_judges_see_why_not(
    seeded: Game,
) -> None:
    game = seeded
    _place(game, "lion-1", "unicorn-iuchi")  # next to the Unicorn's castles
    pack = turn_pack(tournament=game.refresh())
    now = timezone.now()

    for slip in pack.slips:
        for choice in slip.choices:
            order = OrderInput(
                kind=choice.kind,
                path=choice.path,
                reform=choice.reform,
                claim=False,
                on_swap="stay",
                turn=pack.turn,
            )
            refused = pack.refused.get(slip.army, {}).get(choice.value)
            try:
                services.order_enter(
                    tournament_id=game.id,
                    army_code=slip.army,
                    order=order,
                    actor=game.judge_actor,
                    now=now,
                )
            except TournamentError as error:
                assert refused is not None, (slip.army, choice.value, error.message)
                assert error.code == refused[0]
            else:
                assert refused is None, (slip.army, choice.value)


def test_the_judges_board_holds_every_army_every_province_and_the_open_tables(
    seeded: Game,
) -> None:
    game = seeded
    board = game.board()
    pack = turn_pack(tournament=game.refresh())

    assert {a.code: a.province for a in pack.armies} == {
        code: spot["province"] for code, spot in board["armies"].items()
    }
    assert {p.id: p.controller for p in pack.provinces} == board["control"]
    generals = {a.code: a.general for a in pack.armies}
    assert generals["unicorn-1"] == game.player("unicorn").name
    assert all(t["status"] in ("meeting", "peace", "battle", "decided") for t in pack.tables)


def test_the_judges_board_lists_an_open_table(make_game: Callable[..., Game]) -> None:
    game = make_game(16)
    _place(game, "lion-1", game.province_of("crab-1"))
    _resolve(game, 1)

    pack = turn_pack(tournament=game.refresh())

    assert [sorted(a["code"] for a in t["armies"]) for t in pack.tables] == [["crab-1", "lion-1"]]


@pytest.mark.parametrize("phase", ["setup", "planning", "negotiation"])
def test_there_is_no_turn_pack_before_the_turns_run(
    make_game: Callable[..., Game], phase: str
) -> None:
    game = make_game(16, phase=phase)

    with pytest.raises(TournamentError) as refused:
        turn_pack(tournament=game.refresh())

    assert refused.value.code == "not_running"


def test_there_is_no_turn_pack_once_the_game_has_ended(game16: Game) -> None:
    services.clock_end(tournament_id=game16.id, actor=game16.judge_actor, now=timezone.now())

    with pytest.raises(TournamentError, match="not running"):
        turn_pack(tournament=game16.refresh())


# --- the pages ------------------------------------------------------------------------------


def _url(name: str, game: Game) -> str:
    return reverse(f"referees:{name}", args=[game.id])


def _article(html: str, army: str) -> str:
    found = re.search(rf'<article class="slip" id="slip-{army}".*?</article>', html, re.S)
    assert found is not None, army
    return found.group(0)


@pytest.mark.parametrize("page", ["turn_pack", "paper_orders"])
def test_issue_32_a_judge_opens_the_paper_pages(client: Client, seeded: Game, page: str) -> None:
    client.force_login(seeded.judge)

    response = client.get(_url(page, seeded))

    assert response.status_code == 200
    html = response.content.decode()
    for slip in turn_pack(tournament=seeded.refresh()).slips:
        assert slip.army in html


@pytest.mark.parametrize("page", ["turn_pack", "paper_orders"])
def test_issue_32_players_and_the_public_are_sent_to_sign_in(
    client: Client, seeded: Game, page: str
) -> None:
    anonymous = client.get(_url(page, seeded))
    client.get(f"/join/{seeded.token(seeded.player('lion'))}")
    player = client.get(_url(page, seeded))

    for response in (anonymous, player):
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("sign_in"))


@pytest.mark.parametrize("page", ["turn_pack", "paper_orders"])
def test_issue_32_another_tournaments_judge_is_refused(
    client: Client, seeded: Game, other_user: object, page: str
) -> None:
    client.force_login(other_user)  # type: ignore[arg-type]

    response = client.get(_url(page, seeded))

    assert response.status_code == 403
    assert b"Only a judge of this tournament" in response.content


@pytest.mark.parametrize("page", ["turn_pack", "paper_orders"])
def test_issue_32_the_paper_pages_say_why_there_is_no_pack_before_the_turns(
    client: Client, make_game: Callable[..., Game], page: str
) -> None:
    game = make_game(16, phase="setup")
    client.force_login(game.judge)

    response = client.get(_url(page, game))

    assert response.status_code == 409
    assert b"the turns are not running now" in response.content


def test_issue_32_the_pack_prints_every_label_in_both_languages(
    client: Client, seeded: Game
) -> None:
    client.force_login(seeded.judge)

    english = client.get(_url("turn_pack", seeded)).content.decode()
    russian = client.get(_url("turn_pack", seeded), headers={"accept-language": "ru"})

    slip = _article(english, "lion-1")
    assert '<span lang="en">Army</span><span class="also" lang="ru"> · Армия</span>' in slip
    assert '<span lang="en">Hold</span>' in slip
    # The reader's language first.
    assert '<span lang="ru">Армия</span><span class="also" lang="en"> · Army</span>' in (
        russian.content.decode()
    )


def test_r1_1_a_blind_generals_printed_slip_names_no_other_army(
    client: Client, seeded: Game
) -> None:
    client.force_login(seeded.judge)
    pack = turn_pack(tournament=seeded.refresh())

    html = client.get(_url("turn_pack", seeded)).content.decode()

    others = [a.code for a in pack.armies if a.code != "unicorn-1"]
    article = _article(html, "unicorn-1")
    assert not [code for code in others if code in article]
    assert "ask your Daimyo" in article
