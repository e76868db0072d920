"""The data of the browser tests, built through the services as judges and players would.

Run in a subprocess against the live server's scratch database, before the server starts:

    DATABASE_URL=sqlite:////tmp/x.sqlite3 python -m tests.browser.scenario OUT.json

It writes what the tests need to ``OUT.json``: the judge's username, password and API key,
and per story a tournament id, a General's join token and army codes. Every tournament runs
its turn 1 with a long clock (30 minutes), so the in-process clock resolves nothing while
the tests run; only the tests do (``test_connectivity.py`` shortens a turn of its own
tournament through the judge's API and lets the clock resolve it).
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

TURN_SECONDS = 30 * 60
JUDGE_USERNAME = "browser-judge"


def main(out: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sl5r.settings")
    import django

    django.setup()
    data = build()
    Path(out).write_text(json.dumps(data, indent=2), encoding="utf-8")


def build() -> dict[str, Any]:
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from referees import services
    from referees.kernel.access import judge_key_create
    from referees.models import Player
    from referees.services import Actor, OrderInput
    from sl5r.rules.mapgraph import rokugan_map
    from sl5r.rules.roles import ShortfallRule, ThreeVariant, lineup_propose
    from strategic_map.services import map_import

    now = timezone.now()
    graph = rokugan_map()
    game_map = map_import(slug="rokugan", data=graph.to_dict())
    password = secrets.token_urlsafe(16)
    # Staff, to sign in through the admin's login page, as `loaddemo` makes its judge.
    judge = get_user_model().objects.create_user(
        username=JUDGE_USERNAME, password=password, is_staff=True
    )
    actor = Actor.of_user(judge)

    def tournament(name: str, players: int, **options: Any) -> tuple[int, dict[str, list[Player]]]:
        """A tournament with R1's line-up for ``players``, turn 1 open; Generals by clan."""
        created = services.tournament_create(
            name=name,
            judge=judge,
            game_map=game_map,
            player_count=players,
            now=now,
            turn_seconds=TURN_SECONDS,
            **options,
        )
        lineup = lineup_propose(
            players,
            shortfall=ShortfallRule.SMALLER_CLANS,
            variant=ThreeVariant.GENERALS_AND_DAIMYO,
        )
        generals: dict[str, list[Player]] = {}
        for clan, roles in lineup.clans.items():
            for number, role in enumerate(roles, start=1):
                player = services.player_register(
                    tournament=created,
                    name=f"{clan.title()} {role.value} {number}",
                    clan=clan,
                    role=role.value,
                    actor=actor,
                    now=now,
                )
                if player.army is not None:
                    generals.setdefault(clan, []).append(player)
        services.tournament_start(tournament_id=created.pk, actor=actor, now=now)
        for clan, players_of_clan in generals.items():
            codes = [p.army.code for p in players_of_clan if p.army is not None]
            services.start_positions_declare(
                tournament_id=created.pk,
                clan=clan,
                positions=_start_positions(graph, clan, codes),
                actor=actor,
                now=now,
            )
        services.tournament_advance(tournament_id=created.pk, actor=actor, now=now)
        services.tournament_advance(tournament_id=created.pk, actor=actor, now=now)
        return created.pk, generals

    def board_armies(tournament_id: int) -> dict[str, str]:
        from referees.models import Tournament

        found = Tournament.objects.select_related("campaign").get(pk=tournament_id)
        armies: Mapping[str, Any] = found.campaign.board["armies"]
        return {code: spot["province"] for code, spot in armies.items() if spot["province"]}

    def move(player: Player, to: str) -> None:
        fresh = Player.objects.select_related("army").get(pk=player.pk)
        services.order_give(player=fresh, order=OrderInput(kind="move", path=(to,)), now=now)

    def general(player: Player) -> dict[str, str]:
        assert player.army is not None
        return {"token": services.player_token(player), "army": player.army.code}

    # The General's order on a phone.
    order_id, order_generals = tournament("Browser: orders", 16)
    # The judge's clock.
    clock_id, _ = tournament("Browser: clock", 16)
    # The big screen: Crab 1 has an order to an empty neighbour, and turn 1 has ten minutes
    # less than a turn, so that the countdown visibly starts again when turn 2 opens.
    screen_id, screen_generals = tournament("Browser: screen", 16)
    mover = screen_generals["crab"][0]
    assert mover.army is not None
    positions = board_armies(screen_id)
    start = positions[mover.army.code]
    target = _free_neighbour(graph, start, occupied=set(positions.values()))
    move(mover, target)
    services.clock_extend(tournament_id=screen_id, seconds=-600, actor=actor, now=now)
    # The Russian interface.
    russian_id, russian_generals = tournament("Browser: русский", 16)
    # A clan with a Daimyo: his Generals see their own army only (R1.1). Other armies have
    # orders (his clan-mate's and an enemy's), so there is something that could leak.
    daimyo_id, daimyo_generals = tournament("Browser: daimyo", 24)
    positions = board_armies(daimyo_id)
    occupied = set(positions.values())
    for other in (daimyo_generals["crab"][1], daimyo_generals["crane"][0]):
        assert other.army is not None
        to = _free_neighbour(graph, positions[other.army.code], occupied=occupied)
        occupied.add(to)
        move(other, to)
    # Battle tables: after turn 1 two armies of different clans stand in one province; the
    # battle is an L5R game in one tournament, Bushido (R14) in the other.
    tables: dict[str, dict[str, Any]] = {}
    # "consent" (R8, R13): a table of its own, for two phones proposing and confirming.
    for story, game in (("battle", "l5r"), ("bushido", "bushido"), ("consent", "l5r")):
        table_id, table_generals = tournament(f"Browser: {story}", 16, battle_game=game)
        by_code = {p.army.code: p for ps in table_generals.values() for p in ps if p.army}
        host, guest = _meeting_pair(graph, board_armies(table_id))
        move(by_code[guest], board_armies(table_id)[host])
        services.clock_resolve_now(tournament_id=table_id, actor=actor, now=now)
        tables[story] = {
            "id": table_id,
            **general(by_code[host]),
            "other": general(by_code[guest]),
            "province": board_armies(table_id)[host],
        }
    # Undo (R4): turn 1 is resolved early (ten minutes before its deadline) and opens a
    # meeting table; in turn 2 a General gives an order, the judge enters a paper order and
    # corrects a province's control. The undo dialog lists all of it.
    undo_id, undo_generals = tournament("Browser: undo", 16)
    undo_by_code = {p.army.code: p for ps in undo_generals.values() for p in ps if p.army}
    host, guest = _meeting_pair(graph, board_armies(undo_id))
    move(undo_by_code[guest], board_armies(undo_id)[host])
    services.clock_extend(tournament_id=undo_id, seconds=-600, actor=actor, now=now)
    services.clock_resolve_now(tournament_id=undo_id, actor=actor, now=now)
    undo_positions = board_armies(undo_id)
    undo_occupied = set(undo_positions.values())
    undo_mover = next(p for code, p in sorted(undo_by_code.items()) if code not in (host, guest))
    assert undo_mover.army is not None
    move(
        undo_mover,
        _free_neighbour(graph, undo_positions[undo_mover.army.code], occupied=undo_occupied),
    )
    services.order_enter(
        tournament_id=undo_id,
        army_code=host,
        order=OrderInput(kind="hold"),
        actor=actor,
        now=now,
    )
    services.control_correct(
        tournament_id=undo_id,
        province=undo_positions[undo_mover.army.code],
        clan=None,
        reason="a correction to be discarded",
        actor=actor,
        now=now,
    )
    viewer = daimyo_generals["crab"][0]
    clanmate = daimyo_generals["crab"][1]
    assert clanmate.army is not None
    all_codes = sorted(
        p.army.code for ps in daimyo_generals.values() for p in ps if p.army is not None
    )
    # Phones losing the Wi-Fi: a tournament of its own, as its turns are played out by the
    # clock while the tests watch. One General per story, so that no two share an army.
    link_id, link_generals = tournament("Browser: connectivity", 16)
    link_players = [ps[0] for _, ps in sorted(link_generals.items())]

    # Live updates (issue 33): the new turn arrives in the event, a lost event is noticed.
    live_id, live_generals = tournament("Browser: live updates", 16)

    return {
        "live": {"id": live_id, **general(live_generals["crab"][0])},
        "judge": {
            "username": JUDGE_USERNAME,
            "password": password,
            "key": judge_key_create(user=judge, label="browser tests").key,
        },
        "order": {"id": order_id, **general(order_generals["crab"][0])},
        "clock": {"id": clock_id},
        "undo": {
            "id": undo_id,
            "general": undo_mover.name,
            "army": undo_mover.army.code,
            "left_seconds": TURN_SECONDS - 600,
        },
        "screen": {"id": screen_id, "army": mover.army.code, "from": start, "to": target},
        "russian": {"id": russian_id, **general(russian_generals["crab"][0])},
        **tables,
        "daimyo": {
            "id": daimyo_id,
            # The Crab Daimyo himself (R1.1: he sees the map and his Generals' orders).
            "daimyo_token": services.player_token(
                Player.objects.get(tournament_id=daimyo_id, clan="crab", role="daimyo")
            ),
            **general(viewer),
            "others": [code for code in all_codes if code != general(viewer)["army"]],
            # Where his clan-mate's army stands: the page must not say so.
            "clanmate_province": positions[clanmate.army.code],
        },
        "connectivity": {
            "id": link_id,
            "en": general(link_players[0]),
            "ru": general(link_players[1]),
            "retry": general(link_players[2]),
        },
    }


def _start_positions(graph: Any, clan: str, codes: Sequence[str]) -> dict[str, str]:
    """R3.2: each army in a different home province, castle provinces first."""
    homes = sorted(graph.home_provinces[clan], key=lambda p: (p not in graph.castles, p))
    return dict(zip(sorted(codes), homes, strict=False))


def _meeting_pair(graph: Any, positions: Mapping[str, str]) -> tuple[str, str]:
    """Two armies of different clans in neighbouring provinces: (stays, moves in), by code."""
    where = {province: code for code, province in positions.items()}
    blocked = graph.blocked_provinces()
    for code, province in sorted(positions.items()):
        for neighbour in sorted(graph.neighbours[province]):
            other = where.get(neighbour)
            if other and other.split("-")[0] != code.split("-")[0] and province not in blocked:
                return code, other
    raise LookupError("no two armies of different clans stand next to each other")


def _free_neighbour(graph: Any, province: str, *, occupied: set[str]) -> str:
    """A passable neighbour of ``province`` with no army in it (first by id)."""
    blocked = graph.blocked_provinces()
    for candidate in sorted(graph.neighbours[province]):
        if candidate not in blocked and candidate not in occupied:
            return str(candidate)
    raise LookupError(f"no free neighbour next to {province}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m tests.browser.scenario OUT.json")
    main(sys.argv[1])
