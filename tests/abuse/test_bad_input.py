"""Bad input is refused with a clear 4xx naming the problem, and nothing is stored.

The HTTP table runs through Django's whole stack in-process (the test client) on ``scene``
(turn 1 played, turn 2 open, a table open at Lion Akodo where ``lion-1`` and ``unicorn-2``
met). Each case compares what the tournament holds before and after: orders, log entries,
announcements, instructions, players' links, the board, the clock, the tables and the
campaign's version.

Replays are not refusals: the same order sent twice is stored once (the second answer is
the stored order); a judge's resolve-now or undo that names the turn it saw does not act
twice (409 ``stale``); a battle vote replayed after it started the battle is refused.

The websocket table, the huge body and the NUL in a URL run against a real ``manage.py
serve``: the origin check and the message limits live in the ASGI stack and in Daphne.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone

from battles.models import Battle, BattleSeat
from referees import services
from referees.live.consumers import (
    CLOSE_BAD_MESSAGE,
    CLOSE_BAD_TOKEN,
    CLOSE_NO_TOURNAMENT,
    CLOSE_TOO_BIG,
    CLOSE_UNSUPPORTED_DATA,
    MAX_MESSAGE_BYTES,
)
from referees.models import Announcement, Instruction, LogEntry, Player, Tournament
from strategic_map.models import Map, Order, Turn
from tests.abuse.conftest import Scene
from tests.abuse.served import HOST, OP_BINARY, Served, Socket, request

# Over Django's DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB), which the API answers with 413.
HUGE = 3 * 1024 * 1024
# Daphne drops a connection whose message is over 1 MiB before the consumer sees it.
DAPHNE_MAX_MESSAGE = 1024 * 1024
REVOKED_ARMY = "dragon-1"  # whose join link the table revokes first


def footprint(scene: Scene) -> dict[str, Any]:
    """Everything a refused request could have changed."""
    tournament = Tournament.objects.select_related("campaign").get(pk=scene.id)
    return {
        "orders": list(Order.objects.order_by("pk").values_list("pk", flat=True)),
        # A refused order is itself logged (issue 30), and nothing else is.
        "log": LogEntry.objects.exclude(action="order_refused").count(),
        "announcements": Announcement.objects.count(),
        "instructions": Instruction.objects.count(),
        "players": list(Player.objects.order_by("pk").values_list("pk", "name", "token_nonce")),
        "version": tournament.campaign.version,
        "board": tournament.campaign.board,
        "clock": (tournament.phase, tournament.deadline, tournament.paused),
        "turns": list(Turn.objects.order_by("pk").values_list("number", "status")),
        "tables": list(Battle.objects.order_by("pk").values_list("pk", "status", "state")),
        "votes": list(BattleSeat.objects.order_by("pk").values_list("pk", "vote")),
        "maps": Map.objects.count(),
        "tournaments": Tournament.objects.count(),
    }


def body(value: Any) -> bytes:
    return json.dumps(value).encode()


@dataclass(frozen=True)
class Bad:
    """One bad request: who sends it, what, and the refusal it must get.

    ``path`` may use ``{t}`` (the tournament's API path) and ``{b}`` (the open table's id);
    ``says`` is a piece of the answer that names the problem.
    """

    who: str  # general (lion-1), revoked (dragon-1), forged, daimyo (crane), judge, nobody
    method: str
    path: str
    status: int
    code: str | None  # None: a page, not the API
    says: str
    data: bytes | None = None
    content_type: str = "application/json"


ORDER = "{t}/orders/mine"

CASES = [
    # --- not JSON, or JSON of the wrong shape -------------------------------------------
    pytest.param(
        Bad("general", "PUT", ORDER, 400, "bad_json", "not valid JSON", b'{"kind": "hold"'),
        id="malformed-json",
    ),
    pytest.param(
        Bad("general", "PUT", ORDER, 400, "bad_json", "not valid JSON", b'{"kind": "\xff"}'),
        id="body-not-utf8",
    ),
    pytest.param(
        Bad("general", "PUT", ORDER, 400, "bad_json", "not valid JSON", b"[" * 50_000),
        id="json-nested-too-deep",
    ),
    pytest.param(
        Bad(
            "general",
            "PUT",
            ORDER,
            422,
            "validation",
            "the request body must be a JSON object, not an array",
            b"[1, 2]",
        ),
        id="json-array-not-an-object",
    ),
    pytest.param(
        Bad(
            "general",
            "PUT",
            ORDER,
            422,
            "validation",
            "the request body must be a JSON object, not null",
            b"null",
        ),
        id="json-null-not-an-object",
    ),
    pytest.param(
        Bad(
            "general",
            "PUT",
            ORDER,
            422,
            "validation",
            "claim:",
            body({"kind": 5, "path": "lion-ikoma", "claim": "maybe"}),
        ),
        id="wrong-types",
    ),
    pytest.param(
        Bad("general", "PUT", ORDER, 422, "validation", "kind: Field required", body({})),
        id="missing-field",
    ),
    pytest.param(
        Bad("general", "PUT", ORDER, 422, "validation", "path:", body({"kind": "move"})),
        id="move-without-a-path",
    ),
    pytest.param(
        Bad(
            "judge",
            "POST",
            "{t}/clock/extend",
            422,
            "validation",
            "seconds:",
            body({"seconds": "ten"}),
        ),
        id="seconds-as-text",
    ),
    pytest.param(
        Bad(
            "judge",
            "POST",
            "{t}/clock/undo",
            422,
            "validation",
            "reason:",
            body({"reason": "x" * 2001, "turn": 1}),
        ),
        id="reason-too-long",
    ),
    pytest.param(
        Bad(
            "judge",
            "POST",
            "/api/tournaments",
            422,
            "validation",
            "player_count:",
            body({"name": "Huge", "player_count": 10**9}),
        ),
        id="absurd-player-count",
    ),
    # --- too big ------------------------------------------------------------------------
    pytest.param(
        Bad(
            "general",
            "PUT",
            ORDER,
            413,
            "too_large",
            "larger than",
            body({"kind": "hold", "pad": "x" * HUGE}),
        ),
        id="huge-order",
    ),
    pytest.param(
        Bad(
            "nobody",
            "POST",
            "/api/join",
            413,
            "too_large",
            "larger than",
            body({"token": "x" * HUGE}),
        ),
        id="huge-join",
    ),
    # --- a NUL character (PostgreSQL cannot store or compare one) -------------------------
    pytest.param(
        Bad(
            "judge",
            "POST",
            "{t}/announcements",
            400,
            "nul_character",
            "text: contains a NUL",
            body({"text": "Lunch\u0000 at noon"}),
        ),
        id="nul-in-a-text",
    ),
    pytest.param(
        Bad(
            "general",
            "PUT",
            ORDER,
            400,
            "nul_character",
            "path[0]: contains a NUL",
            body({"kind": "move", "path": ["lion-ikoma\u0000"]}),
        ),
        id="nul-in-a-list",
    ),
    pytest.param(
        Bad(
            "judge",
            "PUT",
            "{t}/armies/lion-1%00/order",
            400,
            "nul_character",
            "address contains a NUL",
            body({"kind": "hold"}),
        ),
        id="nul-in-the-path",
    ),
    pytest.param(
        Bad("general", "GET", "{t}/instructions?limit=1%00", 400, "nul_character", "address"),
        id="nul-in-the-query",
    ),
    # --- unknown ids --------------------------------------------------------------------
    pytest.param(
        Bad("general", "GET", "/api/tournaments/999999/state", 404, "not_found", "999999"),
        id="unknown-tournament",
    ),
    pytest.param(
        Bad(
            "general",
            "GET",
            "/api/tournaments/99999999999999999999999999/state",
            404,
            "not_found",
            "there is no tournament",
        ),
        id="tournament-id-beyond-64-bits",
    ),
    pytest.param(
        Bad(
            "judge",
            "PUT",
            "{t}/armies/lion-9/order",
            404,
            "not_found",
            "lion-9",
            body({"kind": "hold"}),
        ),
        id="unknown-army",
    ),
    pytest.param(
        Bad("general", "GET", "{t}/battles/999999", 404, "not_found", "no battle 999999"),
        id="unknown-battle",
    ),
    pytest.param(
        Bad("judge", "POST", "{t}/players/999999/join-link", 404, "not_found", "no player"),
        id="unknown-player",
    ),
    pytest.param(
        Bad(
            "daimyo",
            "POST",
            "{t}/instructions",
            404,
            "not_found",
            "999999",
            body({"text": "Hold", "to": 999999}),
        ),
        id="unknown-instruction-recipient",
    ),
    # --- another clan's army --------------------------------------------------------------
    pytest.param(
        Bad(
            "general",
            "PUT",
            "{t}/armies/crab-1/order",
            403,
            "forbidden",
            "only a judge",
            body({"kind": "hold"}),
        ),
        id="order-for-another-clans-army",
    ),
    pytest.param(
        Bad(
            "general",
            "PUT",
            "{t}/armies/crab-1/on-swap",
            403,
            "forbidden",
            "Daimyo",
            body({"on_swap": "stay"}),
        ),
        id="swap-choice-for-another-clans-army",
    ),
    pytest.param(
        Bad(
            "general",
            "POST",
            "{t}/battles/{b}/vote",
            403,
            "forbidden",
            "own army",
            body({"vote": "battle", "army": "unicorn-2"}),
        ),
        id="battle-vote-for-another-army",
    ),
    # --- the wrong turn -----------------------------------------------------------------
    pytest.param(
        Bad(
            "general",
            "PUT",
            ORDER,
            409,
            "late",
            "turn 1 has been resolved",
            body({"kind": "hold", "turn": 1}),
        ),
        id="order-for-the-past-turn",
    ),
    pytest.param(
        Bad(
            "general",
            "PUT",
            ORDER,
            409,
            "not_open",
            "turn 3 is not open yet",
            body({"kind": "hold", "turn": 3}),
        ),
        id="order-for-a-turn-to-come",
    ),
    # --- revoked or forged credentials --------------------------------------------------
    pytest.param(
        Bad("revoked", "PUT", ORDER, 401, "bad_token", "revoked", body({"kind": "hold"})),
        id="revoked-link-as-bearer",
    ),
    pytest.param(
        Bad("nobody", "POST", "/api/join", 403, "bad_token", "revoked", b'{"token": "REVOKED"}'),
        id="revoked-link-joined-through-the-api",
    ),
    pytest.param(
        Bad("nobody", "GET", "/join/REVOKED", 403, None, "join link does not work"),
        id="revoked-link-opened-as-a-page",
    ),
    pytest.param(
        Bad("forged", "GET", "{t}/state", 401, "bad_token", "not valid"),
        id="forged-bearer",
    ),
    pytest.param(
        Bad(
            "general",
            "POST",
            "{t}/instructions",
            403,
            "forbidden",
            "only a Daimyo",
            body({"text": "Charge!"}),
        ),
        id="instruction-from-a-general",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_bad_request_is_refused_clearly_and_stores_nothing(
    case: Bad, scene: Scene, client: Client
) -> None:
    # given: a revoked join link, and what the tournament holds now
    revoked_player = Player.objects.get(tournament_id=scene.id, army__code=REVOKED_ARMY)
    revoked = scene.token_of(REVOKED_ARMY)
    services.player_token_revoke(
        player=revoked_player, actor=scene.game.judge_actor, now=timezone.now()
    )
    tokens = {
        "general": scene.token_of("lion-1"),
        "judge": scene.judge_key,
        "revoked": revoked,
        "daimyo": scene.game.token(scene.game.player("crane", "daimyo")),
        "forged": "12:not-a-nonce:not-a-signature",
    }
    path = case.path.format(t=f"/api/tournaments/{scene.id}", b=scene.battle.pk)
    path = path.replace("REVOKED", revoked)
    data = case.data.replace(b"REVOKED", revoked.encode()) if case.data else None
    headers = {"Authorization": f"Bearer {tokens[case.who]}"} if case.who in tokens else {}
    before = footprint(scene)

    # when
    response = client.generic(
        case.method, path, data=data or b"", content_type=case.content_type, headers=headers
    )

    # then
    assert response.status_code == case.status, response.content[:500]
    if case.code is not None:
        answer = response.json()
        assert answer["code"] == case.code, answer
        assert case.says in answer["detail"], answer
    else:
        assert case.says in response.content.decode(), response.content[:500]
    assert footprint(scene) == before
    refusals = LogEntry.objects.filter(action="order_refused")
    if case.code in {"late", "not_open"}:
        # An order the service refused: the judges can read what was sent, when and why. A
        # request that is not an order at all (malformed, forged) is answered, not logged.
        (logged,) = refusals
        assert logged.data["army"] == "lion-1" and logged.data["code"] == case.code
    else:
        assert not refusals.exists()


# --- Replays -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("who", "method", "path", "data"),
    [
        pytest.param("general", "PUT", ORDER, {"kind": "move", "path": ["lion-ikoma"]}, id="move"),
        pytest.param("general", "DELETE", ORDER, None, id="withdrawal"),
        pytest.param(
            "judge", "PUT", "{t}/armies/crab-1/order", {"kind": "hold"}, id="judges-paper-order"
        ),
    ],
)
def test_the_same_order_sent_twice_is_stored_once(
    who: str, method: str, path: str, data: Any, scene: Scene, client: Client
) -> None:
    token = scene.token_of("lion-1") if who == "general" else scene.judge_key
    url = path.format(t=f"/api/tournaments/{scene.id}")
    before = footprint(scene)

    def send() -> Any:
        response = client.generic(
            method,
            url,
            data=json.dumps(data) if data is not None else b"",
            content_type="application/json",
            headers={"Authorization": f"Bearer {token}"},
        )
        assert response.status_code == 200, response.content
        return response.json()

    first, replayed = send(), send()

    after = footprint(scene)
    assert replayed == first  # the answer names the order stored the first time
    assert len(after["orders"]) == len(before["orders"]) + 1
    assert after["log"] == before["log"] + 1
    assert after["version"] > before["version"]
    assert footprint(scene) == after
    send()
    assert footprint(scene) == after


def test_a_changed_order_is_stored_again_even_if_it_repeats_an_earlier_one(
    scene: Scene, client: Client
) -> None:
    token = scene.token_of("lion-1")
    url = f"/api/tournaments/{scene.id}/orders/mine"
    orders = [{"kind": "hold"}, {"kind": "hold", "claim": False}, {"kind": "hold"}]
    for order in orders:
        response = client.put(
            url,
            order,
            content_type="application/json",
            headers={"Authorization": f"Bearer {token}"},
        )
        assert response.status_code == 200, response.content

    stored = Order.objects.filter(army__code="lion-1", turn__number=2).order_by("pk")
    assert [o.claim for o in stored] == [True, False, True]


def test_a_replayed_resolve_now_resolves_one_turn(scene: Scene, client: Client) -> None:
    url = f"/api/tournaments/{scene.id}/clock/resolve-now?turn=2"
    headers = {"Authorization": f"Bearer {scene.judge_key}"}

    first = client.post(url, headers=headers)
    replayed = client.post(url, headers=headers)

    assert first.status_code == 200, first.content
    assert replayed.status_code == 409 and replayed.json()["code"] == "stale", replayed.content
    turns = list(Turn.objects.order_by("number").values_list("number", "status"))
    assert turns == [(1, "resolved"), (2, "resolved"), (3, "open")]


def test_a_replayed_undo_undoes_one_turn(scene: Scene, client: Client) -> None:
    headers = {"Authorization": f"Bearer {scene.judge_key}"}
    t = f"/api/tournaments/{scene.id}"
    assert client.post(f"{t}/clock/resolve-now?turn=2", headers=headers).status_code == 200
    undo = {"reason": "a wrong paper order", "turn": 2}

    first = client.post(f"{t}/clock/undo", undo, content_type="application/json", headers=headers)
    replayed = client.post(
        f"{t}/clock/undo", undo, content_type="application/json", headers=headers
    )

    assert first.status_code == 200, first.content
    assert replayed.status_code == 409, replayed.content
    assert replayed.json()["code"] == "stale" and "turn 2" in replayed.json()["detail"]
    statuses = dict(Turn.objects.exclude(status="undone").values_list("number", "status"))
    assert statuses == {1: "resolved", 2: "open"}
    assert LogEntry.objects.filter(action="turn_undone").count() == 1


def test_a_replayed_battle_vote_does_not_start_a_second_battle(
    scene: Scene, client: Client
) -> None:
    url = f"/api/tournaments/{scene.id}/battles/{scene.battle.pk}/vote"
    headers = {"Authorization": f"Bearer {scene.token_of('lion-1')}"}

    first = client.post(url, {"vote": "battle"}, content_type="application/json", headers=headers)
    replayed = client.post(
        url, {"vote": "battle"}, content_type="application/json", headers=headers
    )

    assert first.status_code == 200, first.content
    assert replayed.status_code == 409, replayed.content
    assert "meeting is over" in replayed.json()["detail"]
    assert LogEntry.objects.filter(action="battle_started").count() == 1


# --- Against the real server: websockets, a huge body, a NUL in the URL ------------------


@dataclass(frozen=True)
class BadSocket:
    """A websocket that must be refused: at the handshake (``status``) or with ``close``."""

    query: str = ""
    # "same": the server's own origin; "other-port", "other-scheme": the same host with
    # another port, or https instead of http
    origin: str | None = "same"
    tournament: str = "{t}"
    send: tuple[tuple[int, bytes], ...] = ()
    status: int = 101
    close: int | None = None  # None: no close code (refused at the handshake, or dropped)


SOCKET_CASES = [
    pytest.param(BadSocket(origin="http://evil.example", status=403), id="cross-origin"),
    pytest.param(BadSocket(origin="other-port", status=403), id="same-host-other-port"),
    pytest.param(BadSocket(origin="other-scheme", status=403), id="same-host-other-scheme"),
    pytest.param(BadSocket(origin="null", status=403), id="null-origin"),
    pytest.param(BadSocket(origin=None, status=403), id="no-origin"),
    pytest.param(BadSocket(query="?token=REVOKED", close=CLOSE_BAD_TOKEN), id="revoked-link"),
    pytest.param(BadSocket(query="?token=12:forged:x", close=CLOSE_BAD_TOKEN), id="forged-token"),
    pytest.param(
        BadSocket(tournament="999999", close=CLOSE_NO_TOURNAMENT), id="unknown-tournament"
    ),
    pytest.param(
        BadSocket(
            send=((0x1, b'{"type": "ping", "pad": "' + b"x" * MAX_MESSAGE_BYTES + b'"}'),),
            close=CLOSE_TOO_BIG,
        ),
        id="message-over-1-kib",
    ),
    pytest.param(
        BadSocket(send=((0x1, b"x" * (DAPHNE_MAX_MESSAGE + 1)),), close=None),
        id="message-over-1-mib",
    ),
    pytest.param(
        BadSocket(send=((OP_BINARY, b"\x00\x01"),), close=CLOSE_UNSUPPORTED_DATA), id="binary-frame"
    ),
    pytest.param(BadSocket(send=((0x1, b"ping"),), close=CLOSE_BAD_MESSAGE), id="not-json"),
    pytest.param(
        BadSocket(send=((0x1, b'{"type": "order", "army": "lion-1"}'),), close=CLOSE_BAD_MESSAGE),
        id="anything-but-a-ping",
    ),
]


async def _socket_outcome(site: Served, path: str, case: BadSocket) -> tuple[int, int | None]:
    origin = {
        "same": site.origin,
        "other-port": f"http://{HOST}:{site.port + 1}",
        "other-scheme": f"https://{HOST}:{site.port}",
    }.get(case.origin or "", case.origin)
    status, socket = await Socket.open(site.port, path, origin=origin)
    if socket is None:
        return status, None
    try:
        for opcode, payload in case.send:
            kind, first = await socket.next_message()
            assert kind == "text" and json.loads(first)["type"] == "hello", (kind, first)
            socket.send(opcode, payload)
        while True:
            kind, value = await socket.next_message()
            if kind == "close":
                return status, value
    finally:
        await socket.close()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("case", SOCKET_CASES)
def test_bad_websocket_is_refused_with_a_clear_code(
    case: BadSocket, scene: Scene, served_site: Served
) -> None:
    # given
    revoked_player = Player.objects.get(tournament_id=scene.id, army__code=REVOKED_ARMY)
    revoked = scene.token_of(REVOKED_ARMY)
    services.player_token_revoke(
        player=revoked_player, actor=scene.game.judge_actor, now=timezone.now()
    )
    tournament = case.tournament.format(t=scene.id)
    path = f"/ws/tournaments/{tournament}/" + case.query.replace("REVOKED", revoked)
    before = footprint(scene)

    # when
    outcome = asyncio.run(_socket_outcome(served_site, path, case))

    # then: refused as it should be, nothing stored, and the server still serves
    assert outcome == (case.status, case.close), served_site.service.tail()
    assert footprint(scene) == before
    assert asyncio.run(_hello_answers(served_site, scene.id)), served_site.service.tail()


async def _hello_answers(site: Served, tournament_id: int) -> bool:
    status, socket = await Socket.open(
        site.port, f"/ws/tournaments/{tournament_id}/", origin=site.origin
    )
    assert socket is not None, status
    try:
        kind, text = await socket.next_message()
        return kind == "text" and json.loads(text)["type"] == "hello"
    finally:
        await socket.close()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_server_refuses_a_huge_body_and_a_nul_in_the_url_with_a_clear_4xx(
    scene: Scene, served_site: Served
) -> None:
    """Through Daphne and the threaded HTTP workers, as a phone's request arrives."""
    headers = {
        "Authorization": f"Bearer {scene.token_of('lion-1')}",
        "Content-Type": "application/json",
    }
    t = f"/api/tournaments/{scene.id}"
    before = footprint(scene)

    huge = request(
        served_site.port,
        "PUT",
        f"{t}/orders/mine",
        headers=headers,
        body=body({"kind": "hold", "pad": "x" * HUGE}),
    )
    nul = request(
        served_site.port,
        "PUT",
        f"{t}/armies/lion-1%00/order",
        headers={**headers, "Authorization": f"Bearer {scene.judge_key}"},
        body=body({"kind": "hold"}),
    )

    assert huge.status == 413, huge.text[:500]
    assert huge.json()["code"] == "too_large"
    assert str(settings.DATA_UPLOAD_MAX_MEMORY_SIZE) in huge.json()["detail"]
    assert nul.status == 400, nul.text[:500]
    assert nul.json()["code"] == "nul_character"
    assert footprint(scene) == before
    fine = request(
        served_site.port, "PUT", f"{t}/orders/mine", headers=headers, body=b'{"kind": "hold"}'
    )
    assert fine.status == 200, fine.text[:500]
