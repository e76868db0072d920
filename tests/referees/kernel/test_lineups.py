"""R1 on every registration path: the line-up the count gives registers and starts; a role
R1 does not give, or one clan too many at full size (R1 b), is refused with the reason.

The paths: ``services.player_register`` one by one, a pasted list (``roster_register``), the
API's single ``POST .../players`` and its ``POST .../players/bulk``. The matrix of every
count 8-48 runs at the service level (fast); the API paths take a representative subset of
counts and every kind of refusal.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.utils import timezone

from referees import services
from referees.forms.roster import roster_parse
from referees.kernel.core import TournamentError
from referees.models import Player
from referees.services import roster
from sl5r.rules.errors import LineupError
from sl5r.rules.roles import ShortfallRule, ThreeVariant, lineup_propose
from tests.referees.conftest import Api, Game

pytestmark = pytest.mark.django_db


A = "exclude_shadowlands"  # R1 (a)
B = "smaller_clans"  # R1 (b)


def _seatable(players: int, shortfall: str) -> bool:
    try:
        lineup_propose(players, shortfall=ShortfallRule(shortfall))
    except LineupError:
        return False
    return True


# Every count R1 seats, with each shortfall rule (the same line-up for a multiple of 8).
COUNTS = [
    pytest.param(n, s, id=f"{n}-{'a' if s == A else 'b'}")
    for n in range(8, 49)
    for s in (B, A)
    if _seatable(n, s)
]
VARIANTS_24 = [
    pytest.param(v, s, id=f"{v}-{'a' if s == A else 'b'}")
    for v in ("generals_and_daimyo", "three_generals")
    for s in (B, A)
]


def proposed(players: int, shortfall: str = B, variant: str = "generals_and_daimyo") -> list[Any]:
    """R1's proposed line-up as (clan, role) pairs, clan by clan."""
    lineup = lineup_propose(
        players, shortfall=ShortfallRule(shortfall), variant=ThreeVariant(variant)
    )
    return [(clan, role.value) for clan, roles in lineup.clans.items() for role in roles]


def paste(pairs: list[Any]) -> str:
    return "\n".join(f"Player {i}; {clan}; {role}" for i, (clan, role) in enumerate(pairs, 1))


def start(game: Game) -> None:
    services.tournament_start(tournament_id=game.id, actor=game.judge_actor, now=timezone.now())
    assert game.refresh().phase == "planning"


def registered(game: Game) -> list[tuple[str, str]]:
    return sorted(Player.objects.filter(tournament=game.tournament).values_list("clan", "role"))


# --- The line-up R1 gives registers and starts ---------------------------------------------------


@pytest.mark.parametrize(("players", "shortfall"), COUNTS)
def test_r1_proposed_lineup_registers_one_by_one_and_starts(
    make_game: Callable[..., Game], players: int, shortfall: str
) -> None:
    game = make_game(players, phase="setup", shortfall=shortfall)

    assert len(game.players) == players
    start(game)


@pytest.mark.parametrize(("players", "shortfall"), COUNTS)
def test_r1_proposed_lineup_registers_as_a_pasted_list_and_starts(
    make_game: Callable[..., Game], players: int, shortfall: str
) -> None:
    game = make_game(players, phase="setup", shortfall=shortfall, lineup={})
    pairs = proposed(players, shortfall)

    stored = roster.roster_register(
        tournament_id=game.id,
        lines=roster_parse(paste(pairs)),
        actor=game.judge_actor,
        now=timezone.now(),
    )

    assert len(stored) == players
    assert registered(game) == sorted(pairs)
    start(game)


@pytest.mark.parametrize(("players", "shortfall"), COUNTS)
def test_r1_a_list_of_names_alone_gets_a_startable_lineup_proposed(
    make_game: Callable[..., Game], players: int, shortfall: str
) -> None:
    """Every clan and role left out: R1 proposes them all, and the result may start."""
    game = make_game(players, phase="setup", shortfall=shortfall, lineup={})
    names = "\n".join(f"Player {i}" for i in range(1, players + 1))

    preview = roster.roster_preview(tournament=game.tournament, lines=roster_parse(names))
    assert preview.ok, preview.problems
    assert all(row.proposed_clan and row.proposed_role for row in preview.rows)
    roster.roster_register(
        tournament_id=game.id,
        lines=roster_parse(names),
        actor=game.judge_actor,
        now=timezone.now(),
    )

    start(game)


@pytest.mark.parametrize(("variant", "shortfall"), VARIANTS_24)
def test_r1_24_player_variants_register_on_every_service_path_and_start(
    make_game: Callable[..., Game], variant: str, shortfall: str
) -> None:
    one_by_one = make_game(24, phase="setup", three_variant=variant, shortfall=shortfall)
    start(one_by_one)
    pasted = make_game(24, phase="setup", three_variant=variant, shortfall=shortfall, lineup={})
    roster.roster_register(
        tournament_id=pasted.id,
        lines=roster_parse(paste(proposed(24, shortfall, variant))),
        actor=pasted.judge_actor,
        now=timezone.now(),
    )
    start(pasted)


@pytest.mark.parametrize("players", range(43, 48))
def test_r1_a_cannot_seat_43_to_47_players_in_seven_clans(
    make_game: Callable[..., Game], players: int
) -> None:
    """Without the Shadowlands at most 6 × 7 = 42 players: the count is refused at creation."""
    with pytest.raises(TournamentError, match="too many"):
        make_game(players, phase="setup", shortfall=A, lineup={})


# --- The API paths, on a representative subset ---------------------------------------------------

API_COUNTS = [
    pytest.param(8, B, id="8"),
    pytest.param(16, B, id="16"),
    pytest.param(20, B, id="20-b"),
    pytest.param(20, A, id="20-a"),
    pytest.param(32, B, id="32"),
    pytest.param(36, B, id="36-b"),
    pytest.param(42, A, id="42-a"),
    pytest.param(48, B, id="48"),
]


@pytest.mark.parametrize(("players", "shortfall"), API_COUNTS)
def test_r1_proposed_lineup_registers_through_the_api_one_post_each_and_starts(
    make_game: Callable[..., Game], api: Api, judge_key: str, players: int, shortfall: str
) -> None:
    game = make_game(players, phase="setup", shortfall=shortfall, lineup={})
    for i, (clan, role) in enumerate(proposed(players, shortfall), 1):
        response = api.post(
            f"/tournaments/{game.id}/players",
            {"name": f"Player {i}", "clan": clan, "role": role},
            token=judge_key,
        )
        assert response.status_code == 201, response.content

    assert api.post(f"/tournaments/{game.id}/start", token=judge_key).status_code == 200


@pytest.mark.parametrize(("players", "shortfall"), API_COUNTS)
def test_r1_proposed_lineup_registers_through_the_bulk_api_and_starts(
    make_game: Callable[..., Game], api: Api, judge_key: str, players: int, shortfall: str
) -> None:
    game = make_game(players, phase="setup", shortfall=shortfall, lineup={})
    pairs = proposed(players, shortfall)

    response = api.post(
        f"/tournaments/{game.id}/players/bulk",
        {"lines": paste(pairs), "dry_run": False},
        token=judge_key,
    )

    assert response.status_code == 201, response.content
    body = response.json()
    assert len(body["players"]) == players
    assert all(p["join_url"] for p in body["players"])
    assert registered(game) == sorted(pairs)
    assert api.post(f"/tournaments/{game.id}/start", token=judge_key).status_code == 200


@pytest.mark.parametrize(("variant", "shortfall"), VARIANTS_24)
def test_r1_24_player_variants_register_through_the_bulk_api(
    make_game: Callable[..., Game], api: Api, judge_key: str, variant: str, shortfall: str
) -> None:
    game = make_game(24, phase="setup", three_variant=variant, shortfall=shortfall, lineup={})
    response = api.post(
        f"/tournaments/{game.id}/players/bulk",
        {"lines": paste(proposed(24, shortfall, variant))},
        token=judge_key,
    )

    assert response.status_code == 201, response.content
    assert api.post(f"/tournaments/{game.id}/start", token=judge_key).status_code == 200


# --- Refused: a role R1 does not give, a clan too many at full size ------------------------------


@dataclass(frozen=True)
class Refusal:
    """Registered ``before`` (clan, role pairs), then ``bad`` is refused saying ``reason``."""

    players: int
    bad: tuple[str, str]
    reason: str
    before: list[tuple[str, str]] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)


def _each(clans: list[str], role: str) -> list[tuple[str, str]]:
    return [(clan, role) for clan in clans]


FOUR = ["crab", "crane", "dragon", "lion"]
REFUSALS = {
    "daimyo_in_16": Refusal(16, ("crab", "daimyo"), "with 16 players R1 gives no clan a Daimyo"),
    "second_general_in_8": Refusal(
        8, ("crab", "general"), "at most 1 General, not 2", [("crab", "general")]
    ),
    "third_general_in_24": Refusal(
        24, ("crab", "general"), "at most 2 Generals, not 3", _each(["crab"] * 2, "general")
    ),
    "fourth_general_in_24_three_generals": Refusal(
        24,
        ("crab", "general"),
        "at most 3 Generals, not 4",
        _each(["crab"] * 3, "general"),
        {"three_variant": "three_generals"},
    ),
    "daimyo_in_24_three_generals": Refusal(
        24,
        ("crab", "daimyo"),
        "with 24 players R1 gives no clan a Daimyo",
        options={"three_variant": "three_generals"},
    ),
    "karo_in_32": Refusal(32, ("crab", "karo"), "with 32 players R1 gives no clan a Karo"),
    "second_daimyo_in_40": Refusal(
        40, ("crab", "daimyo"), "at most 1 Daimyo, not 2", [("crab", "daimyo")]
    ),
    "fifth_general_in_48": Refusal(
        48, ("crab", "general"), "at most 4 Generals, not 5", _each(["crab"] * 4, "general")
    ),
    "fifth_daimyo_in_20_b": Refusal(
        20, ("phoenix", "daimyo"), "with 20 players only 4 clans have", _each(FOUR, "daimyo")
    ),
    "fifth_karo_in_36_b": Refusal(
        36, ("phoenix", "karo"), "with 36 players only 4 clans have", _each(FOUR, "karo")
    ),
    "shadowlands_in_20_a": Refusal(
        20, ("shadowlands", "general"), "not in this tournament", options={"shortfall": A}
    ),
}
REFUSAL_CASES = [pytest.param(case, id=key) for key, case in REFUSALS.items()]


def _prepared(make_game: Callable[..., Game], case: Refusal) -> Game:
    game = make_game(case.players, phase="setup", lineup={}, **case.options)
    for i, (clan, role) in enumerate(case.before, 1):
        services.player_register(
            tournament=game.tournament,
            name=f"Before {i}",
            clan=clan,
            role=role,
            actor=game.judge_actor,
            now=timezone.now(),
        )
    return game


@pytest.mark.parametrize("case", REFUSAL_CASES)
def test_r1_refused_one_by_one_with_the_reason(
    make_game: Callable[..., Game], case: Refusal
) -> None:
    game = _prepared(make_game, case)
    clan, role = case.bad

    with pytest.raises(TournamentError, match=case.reason):
        services.player_register(
            tournament=game.tournament,
            name="Refused",
            clan=clan,
            role=role,
            actor=game.judge_actor,
            now=timezone.now(),
        )
    assert Player.objects.filter(tournament=game.tournament).count() == len(case.before)


@pytest.mark.parametrize("case", REFUSAL_CASES)
def test_r1_refused_in_a_pasted_list_with_the_line_and_reason_and_nothing_stored(
    make_game: Callable[..., Game], case: Refusal
) -> None:
    game = _prepared(make_game, case)
    clan, role = case.bad
    text = f"Fine one\nRefused; {clan}; {role}\n"
    lines = roster_parse(text)

    preview = roster.roster_preview(tournament=game.tournament, lines=lines)
    assert not preview.ok
    assert preview.rows[0].problems == ()
    assert any(case.reason in p for p in preview.rows[1].problems), preview.rows[1].problems
    with pytest.raises(roster.RosterRefused, match=f"line 2: .*{case.reason}"):
        roster.roster_register(
            tournament_id=game.id, lines=lines, actor=game.judge_actor, now=timezone.now()
        )
    assert Player.objects.filter(tournament=game.tournament).count() == len(case.before)


@pytest.mark.parametrize("case", REFUSAL_CASES)
def test_r1_refused_by_the_api_with_the_reason(
    make_game: Callable[..., Game], api: Api, judge_key: str, case: Refusal
) -> None:
    game = _prepared(make_game, case)
    clan, role = case.bad

    response = api.post(
        f"/tournaments/{game.id}/players",
        {"name": "Refused", "clan": clan, "role": role},
        token=judge_key,
    )

    assert response.status_code == 400, response.content
    assert case.reason in response.json()["detail"]
    assert Player.objects.filter(tournament=game.tournament).count() == len(case.before)


@pytest.mark.parametrize("case", REFUSAL_CASES)
def test_r1_refused_by_the_bulk_api_per_line_on_a_dry_run_and_for_real(
    make_game: Callable[..., Game], api: Api, judge_key: str, case: Refusal
) -> None:
    game = _prepared(make_game, case)
    clan, role = case.bad
    text = f"Fine one\nRefused; {clan}; {role}\n"
    path = f"/tournaments/{game.id}/players/bulk"

    dry = api.post(path, {"lines": text, "dry_run": True}, token=judge_key)
    real = api.post(path, {"lines": text, "dry_run": False}, token=judge_key)

    assert dry.status_code == 200, dry.content
    assert dry.json()["ok"] is False
    assert [line["line"] for line in dry.json()["lines"]] == [1, 2]
    assert dry.json()["lines"][0]["problems"] == []
    assert any(case.reason in p for p in dry.json()["lines"][1]["problems"])
    assert real.status_code == 422, real.content
    assert real.json()["code"] == "roster"
    assert "line 2: " in real.json()["detail"]
    assert case.reason in real.json()["detail"]
    assert any(case.reason in p for p in real.json()["lines"][1]["problems"])
    assert Player.objects.filter(tournament=game.tournament).count() == len(case.before)


@pytest.mark.parametrize(
    ("players", "full_line"),
    [
        pytest.param(20, "general, general, daimyo", id="20"),
        pytest.param(36, "general, general, general, daimyo, karo", id="36"),
    ],
)
def test_r1_b_more_full_clans_than_the_count_allows_are_refused_in_one_list(
    make_game: Callable[..., Game], players: int, full_line: str
) -> None:
    """R1 b: 20 and 36 players allow only 4 full clans; a list asking for 5 names the clans."""
    game = make_game(players, phase="setup", lineup={})
    clans = ["crab", "crane", "dragon", "lion", "phoenix"]
    text = "\n".join(
        f"{clan} {i}; {clan}; {role.strip()}"
        for clan in clans
        for i, role in enumerate(full_line.split(","), 1)
    )

    preview = roster.roster_preview(tournament=game.tournament, lines=roster_parse(text))

    refused = [row for row in preview.rows if row.problems]
    assert refused, "a fifth full clan must be refused"
    assert all(row.clan == "phoenix" for row in refused)
    assert "only 4 clans have" in refused[0].problems[0]
    assert "Crab, Crane, Dragon, Lion, Phoenix" in refused[0].problems[0]


def test_r1_start_is_refused_with_the_exact_missing_roles(
    make_game: Callable[..., Game],
) -> None:
    """Every pasted line fits, but the line-up is not complete: the start names what is
    missing."""
    game = make_game(16, phase="setup", lineup={})
    roster.roster_register(
        tournament_id=game.id,
        lines=roster_parse("Only one; crab; general"),
        actor=game.judge_actor,
        now=timezone.now(),
    )

    with pytest.raises(TournamentError, match="Crab: 1 of 2 Generals registered") as refused:
        start(game)
    assert refused.value.code == "lineup_incomplete"
