"""``manage.py loaddemo``: the demo tournament, set up once through the services."""

from __future__ import annotations

import io
import re
from datetime import timedelta

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from battles.models import Battle
from referees.management.commands.loaddemo import DEMO_NAME, GENERALS
from referees.models import LogEntry, Player, Tournament
from referees.services import player_from_token
from strategic_map.models import Turn

pytestmark = pytest.mark.django_db

LINK = re.compile(r"http://127\.0\.0\.1:8000/join/(\S+)")
PASSWORD = re.compile(r"judge / (\S+)")
TURN = timedelta(minutes=15)


def loaddemo(*args: str) -> str:
    out = io.StringIO()
    call_command("loaddemo", *args, stdout=out)
    return out.getvalue()


def test_loaddemo_sets_up_a_running_16_player_tournament() -> None:
    """Turn 2 is open with 15 minutes to go, two Generals per clan named after its families,
    every printed join link opens its player, and the printed password lets the judge in."""
    # when
    before = timezone.now()
    output = loaddemo()

    # then
    tournament = Tournament.objects.get(name=DEMO_NAME)
    assert tournament.phase == Tournament.Phase.RUNNING
    assert tournament.turn_seconds == 15 * 60
    turns = list(Turn.objects.filter(campaign=tournament.campaign_id))
    assert [(t.number, t.status) for t in turns] == [
        (1, Turn.Status.RESOLVED),
        (2, Turn.Status.OPEN),
    ]
    assert tournament.deadline is not None
    assert before + TURN <= tournament.deadline <= timezone.now() + TURN
    players = list(Player.objects.filter(tournament=tournament).select_related("army"))
    assert len(players) == 16
    assert all(p.role == Player.Role.GENERAL and p.army is not None for p in players)
    for clan, names in GENERALS.items():
        assert sorted(p.name for p in players if p.clan == clan) == sorted(names)
    placed = tournament.campaign.board["armies"]
    assert all(placed[p.army.code]["province"] for p in players if p.army is not None)

    tokens = LINK.findall(output)
    assert len(tokens) == 16
    assert {player_from_token(t) for t in tokens} == set(players)

    password = PASSWORD.search(output)
    assert password is not None
    judge = authenticate(username="judge", password=password.group(1))
    assert judge is not None and judge.is_staff
    assert tournament.judges.filter(pk=judge.pk).exists()


def test_loaddemo_opens_with_a_battle_at_hida_castle_to_look_at(client: Client) -> None:
    """Turn 1 was the opening: the Shadowlands army marched on Hida castle (R5), the
    meeting opened (R7) and the Crab called for battle, so the L5R table is being played
    with its set-up computed (R10: the Crab's +1 Force at home). Its link is printed and
    the judge can open it."""
    # when
    output = loaddemo("--password", "winter-court")

    # then
    tournament = Tournament.objects.get(name=DEMO_NAME)
    board = tournament.campaign.board["armies"]
    assert board["shadowlands-2"]["province"] == "crab-hida"
    assert board["crab-1"]["in_battle"] is True
    assert board["shadowlands-2"]["in_battle"] is True
    battle = Battle.objects.get(tournament=tournament)
    assert (battle.province, battle.status, battle.opened_turn) == (
        "crab-hida",
        Battle.Status.BATTLE,
        1,
    )
    assert battle.state is not None and battle.state["game"] == "l5r"
    modifiers = {p["army"]: p["force_modifier"] for p in battle.setup["participants"]}
    assert modifiers == {"crab-1": 1, "shadowlands-2": 0}
    link = f"http://127.0.0.1:8000/tournaments/{tournament.pk}/battles/{battle.pk}/"
    assert f"Battle table in crab-hida (battle: being played): {link}" in output

    assert client.login(username="judge", password="winter-court")
    page = client.get(link.removeprefix("http://127.0.0.1:8000"))
    assert page.status_code == 200
    assert "Hida Kuon" in page.content.decode()


def test_loaddemo_a_second_time_changes_nothing() -> None:
    """The second run finds the tournament, changes nothing and prints the same links."""
    # given
    first = loaddemo()
    tournament = Tournament.objects.get(name=DEMO_NAME)
    judge = get_user_model().objects.get(username="judge")
    log_lines = LogEntry.objects.count()

    # when
    second = loaddemo()

    # then
    assert Tournament.objects.filter(name=DEMO_NAME).count() == 1
    assert LogEntry.objects.count() == log_lines
    assert "already loaded" in second
    assert LINK.findall(second) == LINK.findall(first)
    assert PASSWORD.search(second) is None
    judge_after = get_user_model().objects.get(username="judge")
    assert judge_after.password == judge.password
    assert Tournament.objects.get(name=DEMO_NAME).pk == tournament.pk


def test_loaddemo_reset_sets_it_up_afresh_with_the_password_given() -> None:
    """--reset replaces the tournament (old links stop working); --password sets the
    judge's password."""
    # given
    old_tokens = LINK.findall(loaddemo())
    old = Tournament.objects.get(name=DEMO_NAME)

    # when
    output = loaddemo("--reset", "--password", "winter-court-2")

    # then
    new = Tournament.objects.get(name=DEMO_NAME)
    assert new.pk != old.pk
    assert not Tournament.objects.filter(pk=old.pk).exists()
    assert all(player_from_token(t) is None for t in old_tokens)
    assert len(LINK.findall(output)) == 16
    assert authenticate(username="judge", password="winter-court-2") is not None
