"""A battle table's draws anyone can check (R11): a seed per table, sealed until it is over.

The seating, a starting player's tie and newcomers' seats are drawn from the table's seed,
the armies at the table and the step being played (docs/adjudication.md, "Battle tables").
The recomputation here follows the documented formula with the standard library alone, so
it checks the published format and not just the code that made the draws.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from battles.draws import BattleDraws, battle_draws_check
from battles.models import Battle
from battles.selectors import battle_detail
from referees.kernel.visibility import Viewer
from referees.models import LogEntry
from tests.battles.conftest import PROVINCE, act, fight, general, meet, move, resolve
from tests.battles.web.test_pages import as_general, page_json, table_url
from tests.referees.conftest import Game

pytestmark = pytest.mark.django_db

SEED = "11" * 32


def canon(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def recompute(seed: str, entry: dict[str, Any]) -> list[Any]:
    """Every pick of one logged step, from the seed and the log line alone (the docs' recipe)."""
    digest = hashlib.sha256(
        canon({"move": entry["move"], "participants": sorted(entry["participants"])})
    ).digest()
    assert digest.hex() == entry["digest"]
    k = 0
    picks: list[Any] = []

    def choose(pool: list[str]) -> str:
        nonlocal k
        pool = sorted(pool)
        message = bytes.fromhex(seed) + digest + canon([entry["label"], k, pool])
        k += 1
        return pool[int.from_bytes(hashlib.sha256(message).digest(), "big") % len(pool)]

    for draw in entry["draws"]:
        if isinstance(draw["result"], str):
            picks.append(choose(draw["from"]))
        else:
            remaining, order = list(draw["from"]), []
            while len(remaining) > 1:
                pick = choose(remaining)
                order.append(pick)
                remaining.remove(pick)
            picks.append(order + remaining)
    return picks


def docs_recipe() -> str:
    """The Python block of docs/adjudication.md's "Battle tables"."""
    text = (settings.BASE_DIR / "docs" / "adjudication.md").read_text(encoding="utf-8")
    section = text.split("### Battle tables", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def detail(game: Game, battle: Battle, army: str = "lion-1") -> dict[str, Any]:
    battle.refresh_from_db()
    row = battle_services_detail(battle, Viewer.of_player(general(game, army)))
    assert row is not None
    return row


def battle_services_detail(battle: Battle, viewer: Viewer) -> dict[str, Any] | None:
    return battle_detail(battle=battle, viewer=viewer)


def logged_steps(game: Game, battle: Battle) -> list[dict[str, Any]]:
    lines = LogEntry.objects.filter(tournament=game.tournament, data__battle=battle.pk)
    return [line.data["draws"] for line in lines.order_by("id") if "draws" in line.data]


def seeded_meeting(game: Game) -> Battle:
    """The meeting in lion-akodo, with a known seed so that its draws are the same each run."""
    battle = meet(game)
    Battle.objects.filter(pk=battle.pk).update(draw_seed=SEED)
    battle.refresh_from_db()
    return battle


def played_table(game: Game) -> Battle:
    """A table with every kind of draw: the seating, a tie for the start and two newcomers.

    Lion and Unicorn start level on honor (a drawn starting player, R13); Dragon and a second
    Lion army arrive in the same turn, so their seats are drawn when the current turn ends
    (R8).
    """
    battle = fight(game, seeded_meeting(game))
    move(game, "dragon-1", PROVINCE)
    move(game, "lion-2", PROVINCE)
    resolve(game)
    battle.refresh_from_db()
    act(game, battle, battle.state["current"], type="end_turn")
    battle.refresh_from_db()
    return battle


# --- The seed and its commitment ------------------------------------------------------------


def test_r11_a_table_gets_its_own_seed_when_it_opens_and_shows_only_its_commitment(
    game16: Game,
) -> None:
    battle = meet(game16)
    assert len(battle.draw_seed) == 64 and int(battle.draw_seed, 16) >= 0
    row = detail(game16, battle)
    commitment = hashlib.sha256(bytes.fromhex(battle.draw_seed)).hexdigest()
    assert row["draws"]["commitment"] == commitment
    assert row["draws"]["seed"] is None
    fight(game16, battle)
    for viewer in (Viewer.of_player(general(game16, "unicorn-2")), Viewer.judge()):
        battle.refresh_from_db()
        row = battle_services_detail(battle, viewer)
        assert row is not None and row["status"] == Battle.Status.BATTLE
        assert row["draws"]["commitment"] == commitment
        assert battle.draw_seed not in json.dumps(row)  # R11: never before the table is over


def test_r11_two_tables_do_not_share_a_seed(game16: Game) -> None:
    first = meet(game16)
    act(game16, fight(game16, first), "lion-1", type="truce", agree=True)
    act(game16, first, "unicorn-2", type="truce", agree=True)
    second = Battle.objects.get(tournament=game16.tournament, province=PROVINCE, status="peace")
    assert second.pk != first.pk
    first.refresh_from_db()
    assert second.draw_seed != first.draw_seed


def test_r11_the_seed_is_revealed_once_the_battle_has_ended(game16: Game) -> None:
    battle = fight(game16, meet(game16))
    act(game16, battle, "lion-1", type="truce", agree=True)
    assert detail(game16, battle)["draws"]["seed"] is None
    act(game16, battle, "unicorn-2", type="truce", agree=True)
    row = detail(game16, battle)
    assert row["status"] == Battle.Status.ENDED
    assert row["draws"]["seed"] == battle.draw_seed
    assert (
        hashlib.sha256(bytes.fromhex(row["draws"]["seed"])).hexdigest()
        == (row["draws"]["commitment"])
    )


def test_r11_the_table_page_shows_the_commitment_and_the_seed_only_after_the_end(
    game16: Game,
) -> None:
    battle = fight(game16, meet(game16))
    client: Client = as_general(game16, "lion-1")
    html = client.get(table_url(game16, battle)).content.decode()
    commitment = hashlib.sha256(bytes.fromhex(battle.draw_seed)).hexdigest()
    assert f'<code id="battle-commitment-value">{commitment}</code>' in html
    assert battle.draw_seed not in html
    act(game16, battle, "lion-1", type="truce", agree=True)
    act(game16, battle, "unicorn-2", type="truce", agree=True)
    html = client.get(table_url(game16, battle)).content.decode()
    assert f'<code id="battle-seed-value">{battle.draw_seed}</code>' in html
    assert page_json(html, "battle-initial")["draws"]["seed"] == battle.draw_seed


# --- Recomputing a played table's draws ----------------------------------------------------


def test_r11_every_draw_of_a_played_table_recomputes_from_its_revealed_seed_and_its_log(
    game16: Game,
) -> None:
    battle = played_table(game16)
    steps = logged_steps(game16, battle)
    kinds = {draw["what"] for step in steps for draw in step["draws"]}
    assert kinds == {"seating", "starting_player", "newcomer_seating"}
    for step in steps:
        assert step["label"] == f"battle:{battle.pk}:{step['step']}"
        assert recompute(SEED, step) == [draw["result"] for draw in step["draws"]]
        assert battle_draws_check(seed=SEED, entry=step)
    # The log says what the table's state recorded, draw for draw.
    engine = [
        {"what": d["what"], "from": d["from"], "result": d["result"]} for d in battle.state["draws"]
    ]
    assert [draw for step in steps for draw in step["draws"]] == engine
    # Everyone at the table finds the same steps in the table's detail, and the seed at the end.
    act(game16, battle, "lion-1", type="truce", agree=True)
    for army in ("unicorn-2", "dragon-1", "lion-2"):
        act(game16, battle, army, type="truce", agree=True)
    row = detail(game16, battle, "lion-2")
    assert row["draws"]["seed"] == SEED
    assert [{k: v for k, v in s.items() if k != "action"} for s in row["draws"]["steps"]] == steps


def ended_table_detail(game: Game) -> dict[str, Any]:
    battle = played_table(game)
    for army in ("lion-1", "unicorn-2", "dragon-1", "lion-2"):
        act(game, battle, army, type="truce", agree=True)
    return detail(game, battle)


def test_r11_the_docs_recipe_checks_an_ended_tables_detail_as_printed(game16: Game) -> None:
    row = ended_table_detail(game16)
    assert row["draws"]["seed"] == SEED and row["draws"]["steps"]
    exec(docs_recipe(), {"detail": row})


def test_r11_the_docs_recipe_refuses_a_detail_whose_pick_was_changed(game16: Game) -> None:
    row = ended_table_detail(game16)
    draw = row["draws"]["steps"][0]["draws"][0]
    draw["result"] = list(reversed(draw["result"]))  # the seating, told the other way round
    with pytest.raises(AssertionError):
        exec(docs_recipe(), {"detail": row})


def test_r11_a_changed_seed_does_not_recompute_the_tables_draws(game16: Game) -> None:
    battle = played_table(game16)
    steps = logged_steps(game16, battle)
    recorded = [[draw["result"] for draw in step["draws"]] for step in steps]
    # A few two-way picks may come out the same under one other seed by chance (1 in 8 for
    # three of them), which is no proof of anything; under none of 16 seeds is 8**-16.
    seeds = [f"{n:02x}" * 32 for n in range(0x20, 0x30)]
    differing = [s for s in seeds if [recompute(s, step) for step in steps] != recorded]
    assert differing
    for seed in differing:
        assert not all(battle_draws_check(seed=seed, entry=step) for step in steps)


def test_r11_a_changed_move_in_the_log_does_not_check(game16: Game) -> None:
    step = logged_steps(game16, played_table(game16))[0]
    assert not battle_draws_check(seed=SEED, entry={**step, "move": {"type": "other"}})


def test_r11_the_same_step_on_the_same_table_draws_the_same(game16: Game) -> None:
    # A refused or undone step played again cannot re-roll a draw: nothing but the seed, the
    # armies and the move decides it.
    battle = fight(game16, seeded_meeting(game16))
    again = BattleDraws(
        battle, state=None, participants=["lion-1", "unicorn-2"], move={"type": "start"}
    )
    assert again.rng.choice(["lion-1", "unicorn-2"]) == battle.state["seating"][0]
