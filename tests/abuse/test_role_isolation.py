"""R1.1 from the outside: a General whose clan has a Daimyo learns no other army's position.

The rule: he sees his own army, its province and the provinces next to it, and nothing of
the other armies (``referees.kernel.visibility.viewer_sight``); the public display shows army
positions only where no clan has a Daimyo. What he may still learn of another army is what
he meets face to face: the armies seated at a battle table with his own (R7), in the
table's province.

Everything runs against a real ``manage.py serve``. On 24 players (two Generals and a
Daimyo in every clan) the General of ``unicorn-2`` (Unicorn Shinjo) watches three sockets
(his join token, his joined browser session, and no credentials at all) while the other
Generals move: ``lion-1`` rides into his province (a table he sits at), ``dragon-1`` and
``lion-2`` meet next door in Lion Akodo (a table he does not sit at), his own clan mate
``unicorn-1`` moves next to him, others move far away; the judge resolves the turn and
more orders follow. Then he opens every GET operation of the OpenAPI document (so that a
new endpoint is covered without a change here) with his token, his session and nothing,
and every page of the site's apps with his session. No other army's code appears in any
of it, except the armies at his own table, and only in that table's rows and page.

He cannot probe either: a Unicorn's two-province move is answered alike whether the
provinces it crosses hold armies or not (the turn rejects it at the deadline, R5.4).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import pytest
from django.conf import settings
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from battles.models import Battle
from referees.kernel.access import judge_key_create
from referees.live.events import PUBLIC_FIELDS
from sl5r.api import api
from strategic_map.models import Army
from tests.abuse.served import Reply, Served, Socket, request
from tests.referees.conftest import Game

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

WATCHER = "unicorn-2"  # in Unicorn Shinjo
SEATED_WITH_HIM = "lion-1"  # rides into Unicorn Shinjo: his table
EVENT_FIELDS = {"type", "version", "kind", *PUBLIC_FIELDS}  # hello, event, pong
TURN_1 = {
    "lion-1": ["unicorn-shinjo"],
    "dragon-1": ["lion-akodo"],
    "lion-2": ["lion-akodo"],
    "unicorn-1": ["unicorn-iuchi"],
    "crab-1": ["crab-hiruma"],
}
TURN_2 = {"crab-2": ["crab-hida"], "dragon-2": ["dragon-mirumoto"]}
# Page namespaces that hold no page for him to open, or none at all.
NOT_PAGES = {"api", "admin", None}
EVENTS_WAIT = 15.0


@dataclass
class Watcher:
    """What the General gets over the network, and how he asks for it."""

    site: Served
    tournament_id: int
    token: str
    cookie: str
    frames: dict[str, list[str]] = field(default_factory=dict)

    def get(self, path: str, identity: str) -> Reply:
        headers = {"Accept": "application/json, text/html"}
        if identity == "token":
            headers["Authorization"] = f"Bearer {self.token}"
        elif identity == "session":
            headers["Cookie"] = self.cookie
        return request(self.site.port, "GET", path, headers=headers)

    def page(self, path: str) -> Reply:
        """A page with his session, following redirects within the site."""
        for _ in range(5):
            reply = self.get(path, "session")
            location = reply.headers.get("location", "")
            if reply.status not in (301, 302) or not location.startswith("/"):
                return reply
            path = location
        raise AssertionError(f"{path}: too many redirects")


def call(site: Served, method: str, path: str, token: str, data: Any = None) -> Reply:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    payload = json.dumps(data).encode() if data is not None else None
    return request(site.port, method, path, headers=headers, body=payload)


def joined_cookie(site: Served, token: str) -> str:
    """His browser opens the join link: the session cookie it keeps."""
    reply = request(site.port, "GET", f"/join/{token}")
    assert reply.status in (200, 302), reply.text[:300]
    cookie = reply.headers.get("set-cookie", "")
    name = settings.SESSION_COOKIE_NAME
    found = re.search(rf"{name}=([^;]+)", cookie)
    assert found, cookie
    return f"{name}={found.group(1)}"


def other_codes(game: Game) -> set[str]:
    codes = set(
        Army.objects.filter(campaign=game.tournament.campaign).values_list("code", flat=True)
    )
    return codes - {WATCHER}


def codes_in(text: str, codes: set[str]) -> set[str]:
    return {c for c in codes if re.search(rf"(?<![\w-]){re.escape(c)}(?![\w-])", text)}


def get_operations(tournament_id: int, battle_ids: list[int], turns: list[int]) -> list[str]:
    """Every GET of the OpenAPI document, with every id he could name filled in."""
    paths = []
    for template, operations in api.get_openapi_schema()["paths"].items():
        operation = operations.get("get")
        if operation is None:
            continue
        query = {}
        for parameter in operation.get("parameters", []):
            if parameter["in"] == "query" and parameter.get("required"):
                schema = parameter.get("schema", {})
                query[parameter["name"]] = schema.get("enum", [schema.get("minimum", 24)])[0]
        suffix = f"?{urlencode(query)}" if query else ""
        for path in _filled(template, tournament_id, battle_ids, turns):
            paths.append(path + suffix)
    return paths


def _filled(
    template: str, tournament_id: int, battle_ids: list[int], turns: list[int]
) -> Iterator[str]:
    values: dict[str, list[Any]] = {
        "tournament_id": [tournament_id],
        "battle_id": battle_ids,
        "number": turns,
    }
    names = re.findall(r"\{(\w+)\}", template)
    unknown = [n for n in names if n not in values]
    assert not unknown, f"{template}: say which values of {unknown} to try"
    paths = [template]
    for name in names:
        paths = [p.replace(f"{{{name}}}", str(v)) for p in paths for v in values[name]]
    yield from paths


def site_pages(tournament_id: int, battle_ids: list[int], player_ids: list[int]) -> list[str]:
    """Every page of the site's apps, with every id he could name filled in."""
    values: dict[str, list[Any]] = {
        "tournament_id": [tournament_id],
        "battle_id": battle_ids,
        "player_id": player_ids,  # the judges' page of each player: refused to him
        "slug": ["rokugan"],
    }
    pages = []
    for entry in get_resolver().url_patterns:
        if isinstance(entry, URLPattern):
            if not entry.pattern.converters:
                pages.append(reverse(entry.name) if entry.name else "")
            continue
        assert isinstance(entry, URLResolver)
        if entry.namespace in NOT_PAGES:
            continue
        for pattern in entry.url_patterns:
            assert isinstance(pattern, URLPattern), pattern
            kwargs_list: list[dict[str, Any]] = [{}]
            for name in pattern.pattern.converters:
                assert name in values, f"{pattern.name}: say which values of {name} to try"
                kwargs_list = [{**k, name: v} for k in kwargs_list for v in values[name]]
            for kwargs in kwargs_list:
                pages.append(reverse(f"{entry.namespace}:{pattern.name}", kwargs=kwargs))
    return [p for p in pages if p]


async def _watch(socket: Socket, frames: list[str]) -> None:
    """Every frame until the socket closes, or the task is cancelled."""
    while True:
        kind, value = await socket.next_message(timeout=3600)
        if kind == "close":
            frames.append(f'{{"closed": {json.dumps(value)}}}')
            return
        frames.append(value)


def _version(frames: list[str]) -> int:
    versions = [json.loads(f).get("version", 0) for f in frames if f.startswith("{")]
    return max(versions, default=0)


async def _play(watcher: Watcher, judge_key: str, tokens: dict[str, str]) -> dict[str, Any]:
    """Open his sockets, play turn 1 and the start of turn 2, and collect his frames."""
    site, t = watcher.site, f"/api/tournaments/{watcher.tournament_id}"
    ws = f"/ws/tournaments/{watcher.tournament_id}/"
    sockets = {}
    for identity, path, cookie in (
        ("token", f"{ws}?token={watcher.token}", None),
        ("session", ws, watcher.cookie),
        ("nobody", ws, None),
    ):
        status, socket = await Socket.open(site.port, path, origin=site.origin, cookie=cookie)
        assert socket is not None, (identity, status)
        sockets[identity] = socket
        watcher.frames[identity] = []
    tasks = [asyncio.create_task(_watch(sockets[i], watcher.frames[i])) for i in sockets]

    async def http(method: str, path: str, token: str, data: Any = None) -> Reply:
        return await asyncio.to_thread(call, site, method, path, token, data)

    # His probes: a two-province move through held provinces, and through empty ones.
    probes = {}
    for name, path in (
        ("through Lion Akodo and Dragon Mirumoto, both held", ["lion-akodo", "dragon-mirumoto"]),
        ("through Unicorn Ide and Lion Kitsu, both empty", ["unicorn-ide", "lion-kitsu"]),
    ):
        reply = await http("PUT", f"{t}/orders/mine", watcher.token, {"kind": "move", "path": path})
        answer = reply.json()
        probes[name] = (reply.status, sorted(answer) if reply.status == 200 else answer)
    hold = await http("PUT", f"{t}/orders/mine", watcher.token, {"kind": "hold"})
    assert hold.status == 200, hold.text
    for army, path in TURN_1.items():
        reply = await http("PUT", f"{t}/orders/mine", tokens[army], {"kind": "move", "path": path})
        assert reply.status == 200, (army, reply.text)
    resolved = await http("POST", f"{t}/clock/resolve-now?turn=1", judge_key)
    assert resolved.status == 200, resolved.text
    for army, path in TURN_2.items():
        reply = await http("PUT", f"{t}/orders/mine", tokens[army], {"kind": "move", "path": path})
        assert reply.status == 200, (army, reply.text)
    state = await http("GET", f"{t}/state", judge_key)
    latest = state.json()["tournament"]["version"]
    # Wait until his sockets have been told of the latest change (the public socket, which
    # is not told of orders, of the resolved turn).
    loop = asyncio.get_running_loop()
    end = loop.time() + EVENTS_WAIT
    while loop.time() < end:
        told = [_version(watcher.frames[i]) for i in ("token", "session")]
        if min(told) >= latest and any('"turn_resolved"' in f for f in watcher.frames["nobody"]):
            break
        await asyncio.sleep(0.1)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for socket in sockets.values():
        await socket.close()
    return {"probes": probes, "latest": latest}


def test_r1_1_a_general_under_a_daimyo_learns_no_other_armys_position(
    make_game: Any, served_site: Served
) -> None:
    # given: every clan has a Daimyo; the General of unicorn-2 has joined on his phone
    game = make_game(24)
    key = judge_key_create(user=game.judge, label="isolation").key
    tokens = {p.army.code: game.token(p) for p in game.players if p.army is not None}
    watcher = Watcher(
        site=served_site,
        tournament_id=game.id,
        token=tokens[WATCHER],
        cookie=joined_cookie(served_site, tokens[WATCHER]),
    )
    others = other_codes(game)

    # when: the others move, the turn resolves, orders follow; he watches and then reads
    played = asyncio.run(_play(watcher, key, tokens))
    tables = {b.province: b.pk for b in Battle.objects.filter(tournament_id=game.id)}
    assert set(tables) == {"unicorn-shinjo", "lion-akodo"}, tables  # the scenario happened
    his_table, not_his = tables["unicorn-shinjo"], tables["lion-akodo"]
    answers: dict[str, Reply] = {}
    for path in get_operations(game.id, [his_table, not_his], [1]):
        for identity in ("token", "session", "nobody"):
            answers[f"{identity} GET {path}"] = watcher.get(path, identity)
    for path in site_pages(game.id, [his_table, not_his], [p.pk for p in game.players]):
        answers[f"page {path}"] = watcher.page(path)

    # then: he could not probe
    held, empty = played["probes"].values()
    assert held == empty, played["probes"]  # the same status and the same fields
    assert held[0] == 200, played["probes"]
    # his sockets were told that things changed, with his own view (or that it had not
    # changed: ``since``), and nothing else: no other army's code in any frame
    for identity, frames in watcher.frames.items():
        assert frames, identity
        for frame in frames:
            message = json.loads(frame)
            allowed = EVENT_FIELDS | {"state", "since"}
            assert set(message) <= allowed, (identity, message)
            assert codes_in(frame, others) == set(), (identity, frame)
            if "state" in message and identity != "nobody":
                assert [a["id"] for a in message["state"]["armies"]] == [WATCHER]
    assert _version(watcher.frames["token"]) >= played["latest"]
    assert _version(watcher.frames["session"]) >= played["latest"]
    assert any('"turn_resolved"' in frame for frame in watcher.frames["nobody"])
    # no answer names another army, but for the armies at his own table, on that table
    his_table_paths = {
        f"/api/tournaments/{game.id}/battles",
        f"/api/tournaments/{game.id}/battles/{his_table}",
        f"/tournaments/{game.id}/battles/{his_table}/",
    }
    leaks = {}
    for name, reply in answers.items():
        assert reply.status < 500, (name, reply.status, reply.text[:300])
        path = name.split(" ", 2)[-1]
        allowed = {SEATED_WITH_HIM} if path in his_table_paths else set()
        found = codes_in(reply.text, others) - allowed
        if found:
            leaks[name] = sorted(found)
    assert leaks == {}
    # the table he sits at is his; the one next door is not
    assert answers[f"token GET /api/tournaments/{game.id}/battles/{not_his}"].status == 403
    assert answers[f"page /tournaments/{game.id}/battles/{not_his}/"].status == 403
    rows = answers[f"token GET /api/tournaments/{game.id}/battles"].json()
    assert [sorted(a["code"] for a in row["armies"]) for row in rows] == [
        sorted([SEATED_WITH_HIM, WATCHER])
    ]
    state = answers[f"token GET /api/tournaments/{game.id}/state"].json()
    assert [a["id"] for a in state["armies"]] == [WATCHER]
    assert state["viewer"]["sees_all_armies"] is False
