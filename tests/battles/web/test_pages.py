"""The battle-table pages: the table page, the General's link, the console, the proxy sheet.

Who may open a table page is ``battles.selectors.battle_detail``'s decision (R1.1); these
tests check that the page follows it for every kind of viewer, and that the page carries the
row the API would give him (the script draws it and keeps it fresh).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from battles.models import Battle
from referees import services
from referees.models import Player
from sl5r.rules.mapgraph import rokugan_map
from tests.battles.conftest import PROVINCE, act, begin, fight, general, meet, move, resolve, vote
from tests.referees.conftest import JUDGE_PASSWORD, Game

pytestmark = pytest.mark.django_db


def table_url(game: Game, battle: Battle | int) -> str:
    battle_id = battle if isinstance(battle, int) else battle.pk
    return f"/tournaments/{game.id}/battles/{battle_id}/"


def farms_url(game: Game, blank: int | None = None) -> str:
    query = f"?blank={blank}" if blank is not None else ""
    return f"/tournaments/{game.id}/battles/small-farms/{query}"


def join(client: Client, game: Game, player: Player) -> None:
    assert client.get(f"/join/{game.token(player)}").status_code == 302


def as_general(game: Game, army: str) -> Client:
    client = Client()
    join(client, game, general(game, army))
    return client


def as_judge(game: Game) -> Client:
    client = Client()
    assert client.login(username=game.judge.get_username(), password=JUDGE_PASSWORD)
    return client


def page_json(html: str, element_id: str) -> Any:
    found = re.search(
        rf'<script id="{element_id}" type="application/json">(.*?)</script>', html, re.S
    )
    assert found, f"#{element_id} is not in the page"
    return json.loads(found.group(1))


def strings(html: str) -> dict[str, str]:
    block = re.search(r'<div id="battle-strings" hidden(.*?)></div>', html, re.S)
    assert block
    return dict(re.findall(r'data-([a-z0-9-]+)="([^"]*)"', block.group(1)))


# --- Who may open a table (R1.1) -----------------------------------------------------------------


def test_the_general_whose_army_sits_there_opens_the_table(game16: Game) -> None:
    battle = meet(game16)

    response = as_general(game16, "lion-1").get(table_url(game16, battle))

    assert response.status_code == 200
    html = response.content.decode()
    row = page_json(html, "battle-initial")
    assert row["id"] == battle.pk and row["status"] == "meeting"
    assert row["you"] == {
        "army": "lion-1",
        "may_vote": True,
        "may_choose_survivors": False,
        "may_correct": False,
    }
    config = page_json(html, "battle-config")
    assert config["viewer"] == {"kind": "player", "role": "general", "army": "lion-1"}
    assert 'id="vote-buttons"' in html and 'data-vote="battle"' in html
    assert "/static/js/battle_table.js" in html
    assert row["province_name"] in html


def test_a_general_of_another_army_may_not_open_it(game16: Game) -> None:
    battle = meet(game16)

    response = as_general(game16, "crab-1").get(table_url(game16, battle))

    assert response.status_code == 403
    assert "battle-initial" not in response.content.decode()


def test_a_device_that_has_not_joined_may_not_open_it(game16: Game) -> None:
    battle = meet(game16)

    response = Client().get(table_url(game16, battle))

    assert response.status_code == 403
    assert "battle-initial" not in response.content.decode()


def test_a_device_of_another_tournament_may_not_open_it(game16: Game, make_game: Any) -> None:
    battle = meet(game16)
    other = make_game(16, name="Another tournament")
    client = Client()
    join(client, other, other.player("lion"))

    assert client.get(table_url(game16, battle)).status_code == 403


def test_a_judge_opens_every_table_with_the_whole_state(game16: Game) -> None:
    battle = fight(game16, meet(game16))

    response = as_judge(game16).get(table_url(game16, battle))

    assert response.status_code == 200
    html = response.content.decode()
    row = page_json(html, "battle-initial")
    assert row["status"] == "battle"
    assert "state" in row and "judge_result" in row["actions"]
    assert page_json(html, "battle-config")["viewer"]["kind"] == "judge"
    assert 'id="judge-result-form"' in html and 'id="correct-form"' in html


def test_an_unknown_battle_or_tournament_is_not_found(game16: Game) -> None:
    judge = as_judge(game16)

    assert judge.get(table_url(game16, 999_999)).status_code == 404
    assert judge.get(f"/tournaments/999999/battles/{meet(game16).pk}/").status_code == 404


def test_r1_1_a_daimyo_without_a_karo_watches_his_clans_table(game_mixed: Game) -> None:
    move(game_mixed, "scorpion-1", "scorpion-soshi")
    resolve(game_mixed)
    crane_table = meet(game_mixed, "scorpion-1", "crane-kakita")
    client = Client()
    join(client, game_mixed, game_mixed.player("crane", "daimyo"))

    response = client.get(table_url(game_mixed, crane_table))

    assert response.status_code == 200
    row = page_json(response.content.decode(), "battle-initial")
    assert row["you"]["army"] is None and row["you"]["may_vote"] is False
    assert row["actions"] == []


def test_r1_1_a_daimyo_with_a_karo_may_not_watch_his_karo_may(game_karo: Game) -> None:
    battle = meet(game_karo, "scorpion-2", "crab-hida")
    daimyo, karo = Client(), Client()
    join(daimyo, game_karo, game_karo.player("crab", "daimyo"))
    join(karo, game_karo, game_karo.player("crab", "karo"))

    assert daimyo.get(table_url(game_karo, battle)).status_code == 403
    assert karo.get(table_url(game_karo, battle)).status_code == 200


# --- What the table page shows -------------------------------------------------------------------


def test_the_set_up_and_the_table_are_in_the_page_once_the_battle_starts(game16: Game) -> None:
    battle = meet(game16)
    vote(game16, battle, "unicorn-2", "battle")

    html = as_general(game16, "lion-1").get(table_url(game16, battle)).content.decode()

    row = page_json(html, "battle-initial")
    assert row["status"] == "battle"
    assert {p["army"] for p in row["setup"]["participants"]} == {"lion-1", "unicorn-2"}
    table = row["table"]
    assert "history" not in table and "state" not in row  # the judge's log stays his
    assert sorted(table["seating"]) == ["lion-1", "unicorn-2"]
    assert table["draws"][0]["what"] == "seating"
    assert "stronghold" in row["actions"]
    assert 'id="stronghold-form"' in html


def test_the_page_has_every_text_its_script_uses(game16: Game) -> None:
    """Each S["…"] key of battle_table.js and its modules is a data-* attribute of the page."""
    from django.conf import settings

    js = settings.BASE_DIR / "static" / "js"
    modules = [js / "battle_table.js", *sorted((js / "battle_table").glob("*.js"))]
    script = "\n".join(path.read_text() for path in modules)
    html = as_general(game16, "lion-1").get(table_url(game16, meet(game16))).content.decode()
    common = re.search(r'<div id="page-strings" hidden(.*?)></div>', html, re.S)
    assert common
    have = set(strings(html)) | set(re.findall(r'data-([a-z0-9-]+)="', common.group(1)))
    used = set(re.findall(r'S\["([a-z0-9-]+)"\]', script))

    assert used - have == set()
    for prefix, codes in {
        "lphase": ("straighten", "events", "action", "attack", "dynasty", "end"),
        "bphase": ("starting", "main", "end"),
        "status": ("meeting", "peace", "battle", "decided", "ended", "dispersed", "stopped"),
        "ring": ("air", "earth", "fire", "water", "void"),
        "why": ("honor", "enlightenment", "last-standing", "judge", "truce", "tie"),
    }.items():
        assert {f"{prefix}-{code}" for code in codes} <= have


def test_the_clan_ability_notes_are_given_in_the_readers_language(game16: Game) -> None:
    html = as_judge(game16).get(table_url(game16, meet(game16))).content.decode()

    notes = page_json(html, "battle-config")["notes"]

    assert "Dragon: one Fate card more" in notes
    assert "Crab: +1 Force in a Crab province" in notes


def test_the_outcome_and_the_winners_choice_reach_the_page(game16: Game) -> None:
    battle = meet(game16, "dragon-1", PROVINCE)
    # A third army, another clan: the winner will have somebody to spare or destroy.
    move(game16, "unicorn-2", PROVINCE)
    resolve(game16)
    battle = Battle.objects.get(pk=battle.pk)
    vote(game16, battle, "lion-1", "battle")
    battle = begin(game16, battle)
    act(game16, battle, None, type="judge_result", kind="win", winner="lion-1")

    html = as_general(game16, "lion-1").get(table_url(game16, battle)).content.decode()

    row = page_json(html, "battle-initial")
    assert row["status"] == "decided"
    assert row["outcome"]["winner"] == "lion-1"
    assert row["you"]["may_choose_survivors"] is True
    assert 'id="survivors-form"' in html


# --- The General's page, the judge console ---------------------------------------------------


def test_the_generals_page_has_his_battle_table_block(game16: Game) -> None:
    html = as_general(game16, "lion-1").get(f"/referees/tournaments/{game16.id}/general/")

    text = html.content.decode()
    assert 'id="battle-link-panel"' in text
    assert f'data-url="/tournaments/{game16.id}/battles/0/"' in text
    assert "/static/js/battle_link.js" not in text  # imported by general.js
    assert "R4" in text


def test_the_clan_page_lists_the_tables_a_daimyo_or_karo_may_watch(game_karo: Game) -> None:
    karo = Client()
    join(karo, game_karo, game_karo.player("crab", "karo"))

    html = karo.get(f"/referees/tournaments/{game_karo.id}/clan/").content.decode()

    assert 'id="clan-battles-panel"' in html
    assert f'data-api="/api/tournaments/{game_karo.id}/battles"' in html


def test_the_judge_console_has_the_battle_tables(game16: Game) -> None:
    html = as_judge(game16).get(f"/referees/tournaments/{game16.id}/judge/").content.decode()

    assert 'id="battle-tables-panel"' in html
    assert f'data-api="/api/tournaments/{game16.id}/battles"' in html
    assert f'href="/tournaments/{game16.id}/battles/small-farms/"' in html
    assert "/static/js/battles_console.js" in html


# --- The Small Farm proxies (R7) ---------------------------------------------------------------


def extra_castle_for(game: Game, clan: str) -> None:
    """``clan`` takes a castle beyond its starting count: one Small Farm for its Generals."""
    castles = rokugan_map().castles
    board = game.board()
    occupied = {spot["province"] for spot in board["armies"].values()}
    control = board["control"]
    # An empty castle: the turn's resolution would give an occupied one back (R6).
    province = next(
        p for p in sorted(castles) if control.get(p) not in (clan, None) and p not in occupied
    )
    services.control_correct(
        tournament_id=game.id,
        province=province,
        clan=clan,
        reason="test: an extra castle",
        actor=game.judge_actor,
        now=timezone.now(),
    )


def card_count(html: str, blank: bool = False) -> int:
    marker = 'class="farm-card is-blank"' if blank else 'class="farm-card" data-army='
    return html.count(marker)


def test_the_proxy_sheet_has_one_card_per_small_farm_at_the_tables(game16: Game) -> None:
    extra_castle_for(game16, "lion")
    battle = fight(game16, meet(game16))
    farms = {p["army"]: p["small_farms"] for p in battle.setup["participants"]}
    assert farms == {"lion-1": 1, "unicorn-2": 0}

    response = as_judge(game16).get(farms_url(game16))

    assert response.status_code == 200
    html = response.content.decode()
    assert card_count(html) == 1
    assert 'data-army="lion-1"' in html
    assert card_count(html, blank=True) == 0
    assert "Produce 1 Gold" in html and "Small Farm" in html


def test_the_proxy_sheet_prints_blank_cards_on_request(game16: Game) -> None:
    judge = as_judge(game16)

    assert card_count(judge.get(farms_url(game16, 4)).content.decode(), blank=True) == 4
    assert card_count(judge.get(farms_url(game16, 10_000)).content.decode(), blank=True) == 90
    assert card_count(judge.get(f"{farms_url(game16)}?blank=x").content.decode(), True) == 0


def test_meetings_bring_no_proxies_yet(game16: Game) -> None:
    extra_castle_for(game16, "lion")
    meet(game16)

    assert card_count(as_judge(game16).get(farms_url(game16)).content.decode()) == 0


def test_only_judges_print_the_proxies(game16: Game, other_user: Any) -> None:
    anonymous = Client().get(farms_url(game16))
    assert anonymous.status_code == 302 and "/accounts/sign-in/" in anonymous["Location"]
    bystander = Client()
    bystander.force_login(other_user)
    assert bystander.get(farms_url(game16)).status_code == 403
    assert as_general(game16, "lion-1").get(farms_url(game16)).status_code == 302
