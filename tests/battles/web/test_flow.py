"""A battle from the meeting to the map, through the API only (R4, R6-R9, R12, R13).

Lion and Unicorn meet in lion-akodo after turn 1; the Unicorn calls for battle; a Dragon
army marches in during turn 2 and joins as a reinforcement; the Lion loses his provinces,
the Unicorn reaches enlightenment and destroys the Dragon by his choice. The map, the
scores and the destroyed armies' Reform orders follow.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sl5r.rules.mapgraph import rokugan_map
from sl5r.rules.scoring import score_breakdown
from tests.battles.conftest import PROVINCE, general
from tests.referees.conftest import Api, Game

pytestmark = pytest.mark.django_db


class Table:
    """One battle table, played through the API by the Generals' tokens and the judge's key."""

    def __init__(self, api: Api, game: Game, judge_key: str) -> None:
        self.api = api
        self.game = game
        self.judge_key = judge_key
        self.battle_id: int | None = None

    def token(self, army: str) -> str:
        return self.game.token(general(self.game, army))

    def ok(self, response: Any) -> dict[str, Any]:
        assert response.status_code == 200, response.content
        body: dict[str, Any] = response.json()
        return body

    def path(self, rest: str = "") -> str:
        return f"/tournaments/{self.game.id}/battles/{self.battle_id}{rest}"

    def act(self, general_of: str | None, /, **action: Any) -> dict[str, Any]:
        """An action sent by the General of ``general_of`` (None: by the judge)."""
        key = self.judge_key if general_of is None else self.token(general_of)
        return self.ok(self.api.post(self.path("/actions"), action, token=key))

    def show(self, army: str | None = None) -> dict[str, Any]:
        key = self.judge_key if army is None else self.token(army)
        return self.ok(self.api.get(self.path(), token=key))

    def order(self, army: str, order: dict[str, Any]) -> Any:
        url = f"/tournaments/{self.game.id}/orders/mine"
        return self.api.put(url, order, token=self.token(army))

    def resolve(self) -> None:
        turn = self.state()["tournament"]["turn"]
        url = f"/tournaments/{self.game.id}/clock/resolve-now?turn={turn}"
        self.ok(self.api.post(url, token=self.judge_key))

    def state(self, army: str | None = None) -> dict[str, Any]:
        key = self.judge_key if army is None else self.token(army)
        return self.ok(self.api.get(f"/tournaments/{self.game.id}/state", token=key))


def test_r7_r8_r9_a_battle_from_the_meeting_to_the_map_and_a_reform_at_t_plus_2(
    game16: Game, api: Api, judge_key: str
) -> None:
    table = Table(api, game16, judge_key)

    # Turn 1: the Unicorn marches into the Lion castle; a meeting follows (R7).
    assert table.order("unicorn-2", {"kind": "move", "path": [PROVINCE]}).status_code == 200
    table.resolve()
    seen = table.state("lion-1")["battle"]
    assert seen is not None and seen["status"] == "meeting" and seen["province"] == PROVINCE
    table.battle_id = seen["id"]

    # The Lion says peace, the Unicorn battle: the battle starts (R7).
    row = table.ok(api.post(table.path("/vote"), {"vote": "peace"}, token=table.token("lion-1")))
    assert row["status"] == "meeting"
    row = table.ok(
        api.post(table.path("/vote"), {"vote": "battle"}, token=table.token("unicorn-2"))
    )
    assert row["status"] == "battle" and row["summary"]["stage"] == "setup"
    assert "stronghold" in row["actions"]

    # R4: an army in battle gives no orders.
    refused = table.order("lion-1", {"kind": "move", "path": ["lion-ikoma"]})
    assert refused.status_code == 422 and refused.json()["code"] == "in_battle"

    # R13 set-up: strongholds; the Unicorn has more family honor and starts.
    table.act("lion-1", type="stronghold", honor=5, province_strength=5, gold=5)
    table.act("unicorn-2", type="stronghold", honor=7, province_strength=5, gold=5)
    row = table.act(None, type="begin")
    assert row["summary"]["current"] == "unicorn-2"

    # Turn 2: a Dragon army enters the province and joins the battle (R5.5, R8).
    assert table.order("dragon-1", {"kind": "move", "path": [PROVINCE]}).status_code == 200
    table.resolve()
    row = table.show("dragon-1")
    dragon = next(a for a in row["armies"] if a["code"] == "dragon-1")
    assert dragon["reinforcement"] is True and dragon["joined_turn"] == 2
    assert row["summary"]["frozen"] is True
    assert table.state("dragon-1")["battle"]["id"] == table.battle_id

    # The Unicorn finishes his turn; the game freezes for the newcomer's production turns.
    row = table.act("unicorn-2", type="end_turn")
    assert row["summary"]["stage"] == "production"
    table.act("dragon-1", type="stronghold", honor=4, province_strength=5, gold=5)
    table.act("dragon-1", type="production_done")
    row = table.act("dragon-1", type="production_done")
    assert row["summary"]["stage"] == "playing" and row["summary"]["current"] == "dragon-1"

    # The Lion loses his four provinces (R13), then the Unicorn holds the five rings.
    for _ in range(3):
        row = table.act("lion-1", type="province", army="lion-1", delta=-1)
    row = table.act("lion-1", type="province", army="lion-1", delta=-1, confirm=True)
    assert row["status"] == "battle"  # the Dragon and the Unicorn fight on
    row = table.act(
        "unicorn-2", type="declare", kind="enlightenment", army="unicorn-2", confirm=True
    )
    assert row["status"] == "decided"
    assert row["outcome"]["winner"] == "unicorn-2" and row["outcome"]["losers"] == ["lion-1"]
    assert row["you"]["may_choose_survivors"] is True
    assert table.show("dragon-1")["you"]["may_choose_survivors"] is False

    # The winner destroys the Dragon (R8); the battle ended in turn 3.
    turn = table.state()["tournament"]["turn"]
    assert turn == 3
    refused = api.post(table.path("/result"), {"survivors": []}, token=table.token("dragon-1"))
    assert refused.status_code == 403
    row = table.ok(
        api.post(table.path("/result"), {"survivors": []}, token=table.token("unicorn-2"))
    )
    assert row["status"] == "ended"
    assert {c["army"]: (c["destroyed_by"], c["reform_from"]) for c in row["casualties"]} == {
        "lion-1": ("loss", turn + 2),
        "dragon-1": ("winner", turn + 1),
    }

    # The map: the Unicorn alone holds lion-akodo, free to move again (R6).
    state = table.state()
    armies = {a["id"]: a for a in state["armies"]}
    assert armies["unicorn-2"]["province"] == PROVINCE and not armies["unicorn-2"]["in_battle"]
    assert armies["lion-1"]["destroyed"] and armies["lion-1"]["destroyed_in_turn"] == turn
    assert state["control"][PROVINCE] == "unicorn"
    expected = score_breakdown(rokugan_map(), state["control"], list(state["scores"]))
    assert {c: s["total"] for c, s in state["scores"].items()} == {
        c: s.total for c, s in expected.items()
    }
    assert state["small_farms"]["unicorn"] == 1
    assert table.state("unicorn-2")["battle"] is None

    # R9: the Dragon reforms from T + 1, the Lion only from T + 2.
    reform_lion = {"kind": "reform", "reform": "lion-matsu"}
    reform_dragon = {"kind": "reform", "reform": "dragon-mirumoto"}
    assert table.order("dragon-1", reform_dragon).status_code == 422  # turn T
    table.resolve()
    assert table.order("dragon-1", reform_dragon).status_code == 200  # T + 1
    assert table.order("lion-1", reform_lion).status_code == 422
    table.resolve()
    response = table.order("lion-1", reform_lion)  # T + 2
    assert response.status_code == 200, response.content
    table.resolve()
    armies = {a["id"]: a for a in table.state()["armies"]}
    assert armies["dragon-1"]["province"] == "dragon-mirumoto"
    assert armies["lion-1"]["province"] == "lion-matsu"


@pytest.mark.redis
def test_r7_r8_every_step_of_a_battle_is_announced_through_redis_with_a_newer_version(
    redis_url: str,
    settings: Any,
    game16: Game,
    api: Api,
    judge_key: str,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """With the production channel layer, each table change reaches the tournament's group."""
    import uuid

    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    from referees.live.events import tournament_group

    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                "hosts": [redis_url],
                "prefix": f"sl5r-test-{uuid.uuid4().hex[:8]}",
            },
        }
    }
    layer = get_channel_layer()
    assert type(layer).__name__ == "RedisChannelLayer"
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(tournament_group(game16.id), channel)
    table = Table(api, game16, judge_key)

    def step(call: Any) -> dict[str, Any]:
        with django_capture_on_commit_callbacks(execute=True):
            result: dict[str, Any] = call()
        return result

    def events() -> list[dict[str, Any]]:
        received = []
        while True:
            try:
                received.append(async_to_sync(_receive)(layer, channel, 0.5))
            # Not the builtin TimeoutError: they are one class only from Python 3.11 on.
            except asyncio.TimeoutError:
                return received

    try:
        step(lambda: table.order("unicorn-2", {"kind": "move", "path": [PROVINCE]}).json())
        step(table.resolve)
        table.battle_id = table.state("lion-1")["battle"]["id"]
        step(
            lambda: table.ok(
                api.post(table.path("/vote"), {"vote": "battle"}, token=table.token("unicorn-2"))
            )
        )
        step(lambda: table.act("lion-1", type="stronghold", honor=5, province_strength=5, gold=5))
        received = events()
        kinds = [(e["kind"], e["version"]) for e in received]
        # The table opened with the turn is part of the resolution's one event (one unit of
        # work); the vote and the stronghold are one event each.
        assert [kind for kind, _ in kinds] == ["order", "turn_resolved", "battle", "battle"]
        versions = [v for _, v in kinds]
        assert versions == sorted(versions) and len(set(versions)) == len(versions)
        assert versions[-1] == table.state()["tournament"]["version"]
        # Only what anyone may know travels, and the route its hubs read (referees/live/events.py):
        # no army, clan or province but an order's, which no socket is sent.
        assert all(
            set(e) <= {"type", "version", "kind", "turn", "phase", "route"} for e in received
        )
        assert [sorted(e["route"]) for e in received[1:]] == [["kinds"]] * 3
    finally:
        async_to_sync(layer.flush)()
        async_to_sync(layer.close_pools)()


async def _receive(layer: Any, channel: str, timeout: float) -> dict[str, Any]:
    message: dict[str, Any] = await asyncio.wait_for(layer.receive(channel), timeout)
    return message
