"""The record a judge rules from (issue 30): each order with its own arrival time and author
(R4, R11), refused orders logged, one log line per battle change."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from django.utils.translation import override

from referees import services
from referees.kernel.visibility import Viewer
from referees.models import LogEntry, Tournament
from referees.reading.history import turn_history
from referees.reading.state import tournament_state
from referees.services import OrderInput, TournamentError
from referees.texts.log import log_context, log_text
from sl5r.api_errors import error_status
from sl5r.rules.mapgraph import rokugan_map
from strategic_map.models import Order
from tests.battles.conftest import move, resolve
from tests.referees.conftest import Api, Game

pytestmark = pytest.mark.django_db


def test_r4_the_history_shows_each_order_its_own_time_and_author(game16: Game) -> None:
    """It showed every order of a turn at the time of the turn's last order."""
    start = timezone.now()
    crab = game16.player("crab")
    services.order_give(player=crab, order=OrderInput("hold"), now=start)
    services.order_enter(
        tournament_id=game16.id,
        army_code="lion-1",
        order=OrderInput("hold"),
        actor=game16.judge_actor,
        now=start + timedelta(seconds=37),
    )
    services.order_give(
        player=game16.player("crane"), order=OrderInput("hold"), now=start + timedelta(seconds=61)
    )
    services.clock_resolve_now(tournament_id=game16.id, actor=game16.judge_actor, now=start)

    played = turn_history(tournament=game16.refresh(), number=1, viewer=Viewer.judge())

    assert played is not None
    rows = {row["army"]: row for row in played["orders"]}
    assert rows["crab-1"]["given_at"] == start.isoformat()
    assert crab.name in rows["crab-1"]["given_by"]
    assert not rows["crab-1"]["by_judge"]
    assert rows["lion-1"]["given_at"] == (start + timedelta(seconds=37)).isoformat()
    assert rows["lion-1"]["by_judge"]
    assert rows["crane-1"]["given_at"] == (start + timedelta(seconds=61)).isoformat()


def _clock_entries(game: Game) -> list[dict[str, object]]:
    return list(
        LogEntry.objects.filter(tournament=game.tournament, action="clock_extended")
        .order_by("id")
        .values_list("data", flat=True)
    )


def test_taking_time_off_logs_what_the_clock_lost_and_at_zero_is_refused(game16: Game) -> None:
    """Issue 30: "-1 min" at 0:00 logged "took 1:00 off" while nothing changed."""
    deadline = game16.refresh().deadline
    assert deadline is not None
    now = deadline - timedelta(seconds=900)  # a 15-minute turn, just opened
    judge = game16.judge_actor

    services.clock_extend(tournament_id=game16.id, seconds=-600, actor=judge, now=now)
    services.clock_extend(tournament_id=game16.id, seconds=-600, actor=judge, now=now)
    with pytest.raises(TournamentError) as refused:
        services.clock_extend(tournament_id=game16.id, seconds=-60, actor=judge, now=now)

    assert error_status(refused.value) == 409
    assert "0:00" in refused.value.message
    lost = [entry["seconds"] for entry in _clock_entries(game16)]
    assert lost == [-600, -300], lost  # the second took what was left
    ctx = log_context(game16.refresh())
    row = {"action": "clock_extended", "data": {"seconds": lost[1]}, "by": "judge"}
    assert "took 5:00 off" in log_text(row, ctx)


def test_time_taken_off_a_paused_clock_is_what_it_had_left(game16: Game) -> None:
    deadline = game16.refresh().deadline
    assert deadline is not None
    now = deadline - timedelta(seconds=900)  # a 15-minute turn, just opened
    judge = game16.judge_actor
    services.clock_pause(tournament_id=game16.id, actor=judge, now=now)
    left = game16.refresh().paused_remaining
    assert left == 900.0

    services.clock_extend(tournament_id=game16.id, seconds=-1200, actor=judge, now=now)

    assert game16.refresh().paused_remaining == 0.0
    assert [entry["seconds"] for entry in _clock_entries(game16)] == [-900]
    with pytest.raises(TournamentError):
        services.clock_extend(tournament_id=game16.id, seconds=-1, actor=judge, now=now)
    services.clock_extend(tournament_id=game16.id, seconds=90, actor=judge, now=now)
    assert game16.refresh().paused_remaining == 90.0


def test_the_resolution_line_names_each_rejected_order_and_why(game16: Game) -> None:
    """Issue 30: only the history said which orders the rules refused at the deadline."""
    here = game16.province_of("crab-1")
    assert here is not None
    graph = rokugan_map()
    there = sorted(p for p in graph.neighbours[here] if not graph.provinces[p].impassable)[0]
    move(game16, "crab-1", there)
    far = next(
        p
        for p in sorted(graph.provinces)
        if p != here
        and p not in graph.neighbours[here]
        and there not in graph.neighbours[p]
        and not graph.provinces[p].impassable
    )
    services.army_correct(
        tournament_id=game16.id,
        army_code="crab-1",
        province=far,
        reason="the paper map had it elsewhere",
        actor=game16.judge_actor,
        now=timezone.now(),
    )
    resolve(game16)

    entry = LogEntry.objects.get(tournament=game16.tournament, action="turn_resolved")
    assert [r["army"] for r in entry.data["rejected"]] == ["crab-1"]
    row = {"action": entry.action, "data": entry.data, "by": entry.actor, "turn": entry.turn}
    ctx = log_context(game16.refresh())
    text = log_text(row, ctx)
    assert f"the order of {ctx.army('crab-1')} was rejected: " in text, text
    assert ": …" not in text and "not_adjacent" not in text, text  # words, not a code
    with override("ru"):
        assert "отклонён" in log_text(row, log_context(game16.refresh()))


def _refused(game: Game) -> list[LogEntry]:
    return list(
        LogEntry.objects.filter(tournament=game.tournament, action="order_refused").order_by("id")
    )


def _text(game: Game, entry: LogEntry) -> str:
    row = {"action": entry.action, "data": entry.data, "by": entry.actor, "turn": entry.turn}
    return log_text(row, log_context(game.refresh()))


def test_a_late_order_is_logged_with_its_arrival_time_sender_and_reason(
    api: Api, game16: Game, judge_key: str
) -> None:
    """Issue 30: a General who pressed Send across a stalled deadline got "too late", and
    the log had nothing, even filtered by his army."""
    Tournament.objects.filter(pk=game16.id).update(deadline=timezone.now() - timedelta(seconds=1))
    general = game16.player("crab")

    response = api.put(
        f"/tournaments/{game16.id}/orders/mine",
        {"kind": "move", "path": ["shinomen-mori"]},
        token=game16.token(general),
    )

    assert response.status_code == 409 and response.json()["code"] == "late"
    assert not Order.objects.exists()
    (entry,) = _refused(game16)
    assert entry.data["army"] == "crab-1" and entry.data["code"] == "late"
    assert entry.data["path"] == ["shinomen-mori"]
    assert general.name in entry.actor
    assert abs((entry.at - timezone.now()).total_seconds()) < 60  # when it arrived
    text = _text(game16, entry)
    assert "was refused: move to Shinomen Mori. Why: it arrived after the deadline." in text
    with override("ru"):
        assert "после срока" in _text(game16, entry)
    by_army = api.get(f"/tournaments/{game16.id}/log?army=crab-1", token=judge_key)
    assert "order_refused" in [row["action"] for row in by_army.json()["entries"]]


def test_an_order_the_rules_refuse_is_logged_with_the_rule(api: Api, game16: Game) -> None:
    response = api.put(
        f"/tournaments/{game16.id}/orders/mine",
        {"kind": "move", "path": ["unicorn-utaku"]},
        token=game16.token(game16.player("crab")),
    )

    assert response.status_code == 422
    (entry,) = _refused(game16)
    assert entry.data["code"] == "not_adjacent"
    assert "Why: that province is not next to the army." in _text(game16, entry)


def test_a_refused_order_given_without_a_link_is_logged_too(game16: Game) -> None:
    """The session path (``order_give``): its refusal rolls back, the log line stays."""
    Tournament.objects.filter(pk=game16.id).update(deadline=timezone.now() - timedelta(seconds=1))
    with pytest.raises(TournamentError):
        services.order_give(
            player=game16.player("lion"), order=OrderInput("hold"), now=timezone.now()
        )

    (entry,) = _refused(game16)
    assert entry.data["army"] == "lion-1" and entry.data["code"] == "late"


def test_an_order_from_a_revoked_link_is_refused_without_a_line_in_anyones_name(
    api: Api, game16: Game
) -> None:
    general = game16.player("crab")
    token = game16.token(general)
    services.player_token_reissue(player=general, actor=game16.judge_actor, now=timezone.now())

    response = api.put(f"/tournaments/{game16.id}/orders/mine", {"kind": "hold"}, token=token)

    assert response.status_code in (401, 403)
    assert _refused(game16) == []


def _judge_flags(game: Game) -> list[dict[str, object]]:
    state = tournament_state(tournament=game.refresh(), viewer=Viewer.judge(), now=timezone.now())
    flags: list[dict[str, object]] = state["flags"]
    return flags


def test_a_deadline_passed_while_nothing_served_is_flagged_with_the_orders_around_it(
    api: Api, game16: Game, judge_key: str
) -> None:
    """Issue 30: the server stalled 63 s across a deadline (a laptop lid closed); a General
    who pressed Send 9.5 s before it got "too late" on waking. The judges are told."""
    deadline = game16.refresh().deadline
    assert deadline is not None
    services.order_give(
        player=game16.player("crab"), order=OrderInput("hold"), now=deadline - timedelta(seconds=20)
    )
    with pytest.raises(TournamentError):  # sent in time, arrived when the server woke
        services.order_give(
            player=game16.player("lion"),
            order=OrderInput("hold"),
            now=deadline + timedelta(seconds=62),
        )

    assert services.clock_tick(tournament_id=game16.id, now=deadline + timedelta(seconds=63))
    # On waking the clock went first; a request that waited in the socket is read after it.
    with pytest.raises(TournamentError):
        services.order_give(
            player=game16.player("dragon"),
            order=OrderInput("hold", turn=1),
            now=deadline + timedelta(seconds=64),
        )
    services.order_give(  # turn 2's first order: not part of it
        player=game16.player("crane"),
        order=OrderInput("hold"),
        now=deadline + timedelta(seconds=65),
    )

    (flag,) = _judge_flags(game16)
    text = str(flag["text"])
    assert flag["turn"] == 1
    assert "resolved 1:03 late" in text, text
    assert "crab-1 (Crab general 1): order given" in text, text
    assert "lion-1 (Lion general 1): order refused as late" in text, text
    assert "dragon-1 (Dragon general 1): order refused as late" in text, text
    assert "crane-1" not in text, text
    public = tournament_state(tournament=game16.refresh(), viewer=Viewer.public(), now=deadline)
    assert "flags" not in public
    player_state = api.get(
        f"/tournaments/{game16.id}/state", token=game16.token(game16.player("crab"))
    ).json()
    assert player_state.get("flags") is None
    assert api.get(f"/tournaments/{game16.id}/state", token=judge_key).json()["flags"] == [flag]

    ruled = api.post(f"/tournaments/{game16.id}/clock/flags/{flag['id']}/ruled", token=judge_key)
    again = api.post(f"/tournaments/{game16.id}/clock/flags/{flag['id']}/ruled", token=judge_key)

    assert ruled.status_code == 200 and again.status_code == 200
    assert _judge_flags(game16) == []
    assert LogEntry.objects.filter(action="turn_deadline_ruled").count() == 1
    unknown = api.post(f"/tournaments/{game16.id}/clock/flags/999999/ruled", token=judge_key)
    assert unknown.status_code == 404
    refused = api.post(
        f"/tournaments/{game16.id}/clock/flags/{flag['id']}/ruled",
        token=game16.token(game16.player("crab")),
    )
    assert refused.status_code in (401, 403)


def test_a_turn_the_clock_resolves_on_time_or_a_judge_resolves_raises_no_flag(
    game16: Game,
) -> None:
    deadline = game16.refresh().deadline
    assert deadline is not None
    # Within the settle window and a few sweeps: on time, as far as anyone could tell.
    assert services.clock_tick(tournament_id=game16.id, now=deadline + timedelta(seconds=20))
    services.clock_pause(tournament_id=game16.id, actor=game16.judge_actor, now=timezone.now())
    services.clock_resolve_now(
        tournament_id=game16.id, actor=game16.judge_actor, now=timezone.now() + timedelta(hours=1)
    )
    assert _judge_flags(game16) == []
    assert not LogEntry.objects.filter(action="turn_deadline_missed").exists()


def test_the_pause_and_the_time_taken_off_name_the_time_the_clock_showed(game16: Game) -> None:
    """Issue 30, point 3: paused with 59.4 s left, the log said "paused with 0:59 left" and
    then "took 1:00 off" (one floored, the other rounded). Both say what the clocks showed:
    1:00, rounded up as static/js/format.js shows it."""
    deadline = game16.refresh().deadline
    assert deadline is not None
    now = deadline - timedelta(seconds=59.4)
    judge = game16.judge_actor
    services.clock_pause(tournament_id=game16.id, actor=judge, now=now)
    services.clock_extend(tournament_id=game16.id, seconds=-120, actor=judge, now=now)

    ctx = log_context(game16.refresh())
    rows = [
        {"action": entry.action, "data": entry.data, "by": "judge"}
        for entry in LogEntry.objects.filter(
            tournament=game16.tournament, action__in=["clock_paused", "clock_extended"]
        ).order_by("id")
    ]
    with override("en"):
        texts = [log_text(row, ctx) for row in rows]
    assert "paused the clock with 1:00 left" in texts[0], texts
    assert "took 1:00 off" in texts[1], texts
