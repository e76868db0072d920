"""Tournaments in the phases the scenario does not hold, made through the judge's API.

``scenario.py`` builds tournaments that are all in play; the accessibility and layout tests
also look at the console in set-up, while the clans declare their positions (R3.2) and
after the game has ended. Each is made here on the live site, as a judge would.
"""

from __future__ import annotations

from typing import Any

from sl5r.rules.mapgraph import map_from_dict
from sl5r.rules.roles import lineup_propose
from tests.browser.conftest import LiveServer

HOUR = 60 * 60
PLAYERS = 16


def tournament_in_setup(
    live_site: LiveServer, name: str, *, players: int = PLAYERS
) -> dict[str, Any]:
    """A tournament in set-up with R1's line-up for ``players`` registered (from 24 the
    clans have Daimyos): its id and its players."""
    created = live_site.judge_api(
        "POST",
        "/tournaments",
        {
            "name": name,
            "player_count": players,
            "planning_seconds": HOUR,
            "negotiation_seconds": HOUR,
            "turn_seconds": HOUR,
            "turns_total": 20,
        },
    )
    tid = created["id"]
    registered = []
    for clan, roles in lineup_propose(players).clans.items():
        for number, role in enumerate(roles, start=1):
            registered.append(
                live_site.judge_api(
                    "POST",
                    f"/tournaments/{tid}/players",
                    {
                        "name": f"{clan.title()} {role.value} {number}",
                        "clan": clan,
                        "role": role.value,
                    },
                )
            )
    return {"id": tid, "players": registered}


def tournament_declaring(
    live_site: LiveServer, name: str, *, players: int = PLAYERS
) -> dict[str, Any]:
    """A started tournament whose clans are declaring their starting positions (R3.2)."""
    made = tournament_in_setup(live_site, name, players=players)
    live_site.judge_api("POST", f"/tournaments/{made['id']}/start")
    return made


def tournament_running(
    live_site: LiveServer, name: str, *, players: int = PLAYERS
) -> dict[str, Any]:
    """A tournament whose turn 1 is open: every clan declared (R3.2), the judge moved on."""
    made = tournament_declaring(live_site, name, players=players)
    tid = made["id"]
    provinces = live_site.api("GET", f"/tournaments/{tid}/map")["provinces"]
    armies: dict[str, list[str]] = {}
    for player in made["players"]:
        if player["army"]:
            armies.setdefault(player["clan"], []).append(player["army"])
    for clan, codes in armies.items():
        homes = [p for p in provinces if p.get("home_clan") == clan and not p.get("impassable")]
        homes.sort(key=lambda p: (not p.get("castle"), p["id"]))
        positions = {code: home["id"] for code, home in zip(sorted(codes), homes, strict=False)}
        live_site.judge_api("PUT", f"/tournaments/{tid}/positions/{clan}", {"positions": positions})
    for _ in range(4):
        phase = live_site.judge_api("GET", f"/tournaments/{made['id']}/state")["tournament"]
        if phase["clock"]["phase"] == "running":
            break
        live_site.judge_api("POST", f"/tournaments/{made['id']}/advance")
    return made


def tournament_ended_in_turn(
    live_site: LiveServer, name: str, *, turn: int, players: int = PLAYERS
) -> dict[str, Any]:
    """A tournament whose judge pressed "End the game" while turn ``turn`` was open."""
    made = tournament_running(live_site, name, players=players)
    tid = made["id"]
    for number in range(1, turn):
        live_site.judge_api("POST", f"/tournaments/{tid}/clock/resolve-now?turn={number}")
    live_site.judge_api("POST", f"/tournaments/{tid}/clock/end")
    return made


def tournament_with_table(live_site: LiveServer, name: str) -> dict[str, Any]:
    """A running tournament whose turn 1 brought two clans' armies into one province (R7):
    its id, the table's id and the two Generals' join tokens (``host`` stood, ``guest``
    marched in), turn 2 open."""
    made = tournament_running(live_site, name)
    tid = made["id"]
    token = {p["army"]: p["token"] for p in made["players"] if p["army"]}
    state = live_site.judge_api("GET", f"/tournaments/{tid}/state")
    where = {a["id"]: a["province"] for a in state["armies"]}
    clan = {a["id"]: a["clan"] for a in state["armies"]}
    board = map_from_dict(live_site.api("GET", f"/tournaments/{tid}/map"))
    blocked = board.blocked_provinces()
    host, guest = next(
        (code, other)
        for code, province in sorted(where.items())
        for other, there in sorted(where.items())
        if clan[other] != clan[code]
        and province not in blocked
        and not board.provinces[province].impassable
        and board.adjacent(province, there)
    )
    live_site.api(
        "PUT",
        f"/tournaments/{tid}/orders/mine",
        token=token[guest],
        body={"kind": "move", "path": [where[host]]},
    )
    live_site.judge_api("POST", f"/tournaments/{tid}/clock/resolve-now?turn=1")
    table = live_site.api("GET", f"/tournaments/{tid}/battles", token=token[host])[0]
    return {"id": tid, "table": table["id"], "host": token[host], "guest": token[guest]}
