"""The campaign told turn by turn (issue 32): what the replay on the big screen and the
self-contained report show, read once from the played turns.

``campaign_story`` gathers, for every resolved turn, the armies before and after it, each
army's order and what came of it, the swap draws with the turn's commitment, its revealed
seed and the command that verifies them (R11), the meetings and battle tables with their
results (R7, R8), who controls each province after it and what changed (R6), and the points
after it (R12); then the standings as the big screen shows them.

R1.1: while the game runs, positions and orders are secret from those who may not see them,
so only judges get the story; once the game has finished nothing is secret any more
(issue 30) and everyone gets it whole. The story is JSON-ready: the replay page hands it to
its script as it is; the texts in it (orders, results, draws) are in the active language.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.utils.functional import Promise
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from battles.draws import battle_commitment, battle_draw_steps, battle_seed_revealed
from battles.models import Battle
from battles.selectors import battles_of_turn
from referees.kernel.core import TournamentError
from referees.kernel.visibility import Viewer
from referees.models import Tournament
from referees.reading.history import resolved_turn_numbers, score_history, turn_history
from referees.reading.log import turn_case
from referees.texts.log import log_context
from referees.texts.log_battles import battle_casualties_text, battle_outcome_text
from referees.texts.log_turns import rejection_text
from referees.texts.log_words import LogContext, order_words
from referees.texts.words import DRAW_METHODS, OUTCOMES
from sl5r.rules.clans import CLANS
from sl5r.rules.mapgraph import GameMap
from sl5r.rules.scoring import score_breakdown
from strategic_map.board import Board
from strategic_map.clans import clan_name
from strategic_map.drawing import CLAN_STYLES
from strategic_map.models import Army
from strategic_map.selectors import campaign_game_map

# What a battle table drew (sl5r/rules/games), in words.
TABLE_DRAWS: dict[str, Promise] = {
    "seating": gettext_lazy("the seating"),
    "seating_chooser": gettext_lazy("who chooses the seating"),
    "starting_player": gettext_lazy("the starting player"),
    "newcomer_seating": gettext_lazy("the newcomers' seats"),
    "ladder": gettext_lazy("the order on the ladder"),
}

# The command that checks a turn's draws (R11; docs/adjudication.md, "Verifying a turn's
# draws"), run on the turn's case file saved under ``case_file_name``.
VERIFY_COMMAND = "python manage.py adjudicate --verify {file}"
# A battle table's draws have no command: the check is these few lines of Python.
BATTLE_CHECK = "battles.draws.battle_draws_check(seed=…, entry=step)"


def story_allowed(*, tournament: Tournament, viewer: Viewer) -> bool:
    """R1.1: judges any time; everyone once the game has finished (issue 30)."""
    return viewer.kind == "judge" or tournament.phase == Tournament.Phase.FINISHED


def file_stem(tournament: Tournament) -> str:
    """``sl5r-<slug>``: the start of every file the story exports (a name in Cyrillic has
    no ASCII slug: the tournament's id stands for it)."""
    slug = slugify(tournament.name)[:60].strip("-") or f"tournament-{tournament.pk}"
    return f"sl5r-{slug}"


def report_file_name(tournament: Tournament) -> str:
    return f"{file_stem(tournament)}-report.html"


def case_file_name(tournament: Tournament, number: int) -> str:
    return f"{file_stem(tournament)}-turn-{number}.json"


def verify_command(tournament: Tournament, number: int) -> str:
    return VERIFY_COMMAND.format(file=case_file_name(tournament, number))


def standings_of(scores: Mapping[str, Mapping[str, int]]) -> list[dict[str, Any]]:
    """R12: clans by points, equal scores sharing the place; the big screen's rows
    (``referees.pages.screen.big_screen`` shows them at the end, the story in its last
    step): place, home provinces at 2 points, others, castles, total."""
    rows: list[dict[str, Any]] = sorted(
        ({"clan": clan, "name": clan_name(clan), **score} for clan, score in scores.items()),
        key=lambda row: (-int(row["total"]), str(row["name"])),
    )
    place = 0
    previous: int | None = None
    for index, row in enumerate(rows, start=1):
        if row["total"] != previous:
            place, previous = index, row["total"]
        row["place"] = place
        row["home_points"] = 2 * row["home_provinces"]
        row["provinces"] = row["home_provinces"] + row["other_provinces"]
    return rows


def campaign_story(
    *, tournament: Tournament, viewer: Viewer, cases: bool = False
) -> dict[str, Any]:
    """The whole campaign as ``viewer`` may be told it (R1.1), JSON-ready.

    ``TournamentError`` ("forbidden") for anyone but a judge before the game has finished.
    With ``cases``, each turn also carries its case file (``turn_case``): what
    ``manage.py adjudicate --verify`` checks.
    """
    if not story_allowed(tournament=tournament, viewer=viewer):
        raise TournamentError(
            _(
                "The campaign is told once the game is over: until then only a judge of "
                "this tournament may see it (R1.1)."
            ),
            code="forbidden",
        )
    campaign = tournament.campaign
    game_map = campaign_game_map(campaign)
    names = {code: p.name for code, p in game_map.provinces.items()}
    context = log_context(tournament)
    clans = [c for c in CLANS if c not in campaign.excluded_clans]
    initial = game_map.initial_control(campaign.excluded_clans)
    turns = _story_turns(tournament, viewer, initial, names, context, cases=cases)
    board = Board.of(campaign)
    now_control = board.control()
    scores = _scores(game_map, now_control, clans)
    history = score_history(tournament=tournament)
    start: dict[str, Any]
    if turns:
        start = {
            "armies": turns[0]["before"]["armies"],
            "control": turns[0]["before"]["control"],
        }
    else:
        start = {"armies": _board_armies(board), "control": {**initial, **now_control}}
    return {
        "tournament": _story_tournament(tournament, turns),
        "viewer": viewer.kind,
        "clans": [_clan_row(clan) for clan in clans],
        "provinces": names,
        "start": start,
        "turns": turns,
        "end": _story_end(tournament, board, {**initial, **now_control}),
        "score_history": history,
        # The big screen's standings: the board as it stands now (at the end, the final one).
        "scores": scores,
        "standings": standings_of(scores),
    }


def _story_turns(
    tournament: Tournament,
    viewer: Viewer,
    initial: Mapping[str, str | None],
    names: Mapping[str, str],
    context: LogContext,
    *,
    cases: bool,
) -> list[dict[str, Any]]:
    """Every resolved turn ``viewer`` may see, with its tables and what they did before it."""
    # After the end the public sees the whole board (viewer_sight); the tables are read as a
    # judge reads them, since nothing of them is secret any more either.
    tables = viewer if viewer.kind == "judge" else Viewer.judge(label="after the end")
    turns: list[dict[str, Any]] = []
    for number in resolved_turn_numbers(tournament=tournament):
        played = turn_history(tournament=tournament, number=number, viewer=viewer)
        case = turn_case(tournament=tournament, number=number)
        if played is None or case is None:
            continue
        turn = _turn(tournament, number, played, case, initial, names, context)
        turn["battles"] = _battles(tournament, number, tables, names, context)
        opened = {b["province"] for b in turn["battles"] if b["opened_now"]}
        for meeting in turn["meetings"]:  # its table tells it (the replay shows that only)
            meeting["table"] = meeting["province"] in opened
        # What the tables did while the turn was open (R8, R9): the board its orders met.
        previous = turns[-1]["after"] if turns else turn["before"]
        turn["between"] = _between(previous, turn["before"], names)
        if cases:
            turn["case"] = case
        turns.append(turn)
    return turns


def _scores(
    game_map: GameMap, control: Mapping[str, str | None], clans: Sequence[str]
) -> dict[str, dict[str, int]]:
    """R12: each clan's points on the board as it stands now, with what makes them up."""
    breakdown = score_breakdown(game_map, control, clans)
    return {
        clan: {
            "home_provinces": s.home_provinces,
            "other_provinces": s.other_provinces,
            "castles": s.castles,
            "total": s.total,
        }
        for clan, s in breakdown.items()
    }


def _story_tournament(tournament: Tournament, turns: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {
        "id": tournament.pk,
        "name": tournament.name,
        "phase": tournament.phase,
        "finished": tournament.phase == Tournament.Phase.FINISHED,
        "turns_total": tournament.turns_total,
        "turns_played": turns[-1]["turn"] if turns else 0,
        "time_zone": tournament.time_zone,
        "file_stem": file_stem(tournament),
        "excluded_clans": list(tournament.campaign.excluded_clans),
    }


def _clan_row(clan: str) -> dict[str, str]:
    return {
        "id": clan,
        "name": clan_name(clan),
        "colour": CLAN_STYLES[clan].colour if clan in CLAN_STYLES else "#555",
        "shape": CLAN_STYLES[clan].shape if clan in CLAN_STYLES else "circle",
    }


def _story_end(
    tournament: Tournament, board: Board, control: dict[str, str | None]
) -> dict[str, Any]:
    """The board now: at the end, the final one (the tables decided after the last turn too)."""
    armies_now = _board_armies(board)
    if tournament.phase == Tournament.Phase.FINISHED:
        # The tables were stopped: nobody is in a battle any more.
        armies_now = [{**a, "in_battle": False} for a in armies_now]
    return {"armies": armies_now, "control": control}


def _board_armies(board: Board) -> list[dict[str, Any]]:
    """The armies on the board now: the start of a story no turn has been played in yet."""
    clans = dict(Army.objects.filter(campaign=board.campaign).values_list("code", "clan"))
    return [
        {
            "id": code,
            "clan": clans.get(code),
            "province": spot.province,
            "in_battle": spot.in_battle,
            "destroyed": spot.destroyed,
        }
        for code, spot in board.spots().items()
    ]


def _turn(
    tournament: Tournament,
    number: int,
    played: dict[str, Any],
    case: Mapping[str, Any],
    initial: Mapping[str, str | None],
    names: Mapping[str, str],
    context: LogContext,
) -> dict[str, Any]:
    """One played turn: the board before and after, the orders, the draws and their proof."""
    before_armies = [
        {
            "id": a["id"],
            "clan": a.get("clan"),
            "province": a.get("province"),
            "in_battle": bool(a.get("in_battle")),
            "destroyed": a.get("province") is None,
        }
        for a in case.get("armies", [])
    ]
    # A case file lists only the provinces whose controller is not their home clan.
    before_control = {**initial, **case.get("control", {})}
    after_control = {**before_control, **played["control"]}
    scores: dict[str, int] = dict(played["scores"] or {})
    return {
        "turn": number,
        "resolved_at": played["resolved_at"],
        "before": {"armies": before_armies, "control": before_control},
        "after": {
            "armies": played["armies"],
            "control": after_control,
        },
        "orders": [_order(row, names, context) for row in played["orders"]],
        "draws": [_draw(d, names) for d in played["draws"]],
        "meetings": _places(played["meetings"], names, context),
        "reinforcements": _places(played["reinforcements"], names, context),
        "control_changes": _control_changes(before_control, after_control, names),
        "scores": scores,
        "score_rows": sorted(
            ({"clan": c, "name": clan_name(c), "total": t} for c, t in scores.items()),
            key=lambda row: (-row["total"], row["name"]),
        ),
        # R11: sealed when the turn opened, revealed after it; the case file and its command
        # check every draw of the turn (docs/adjudication.md).
        "proof": {
            "commitment": played["commitment"],
            "draw_seed": played["draw_seed"],
            "orders_digest": played["orders_digest"],
            "case_file": case_file_name(tournament, number),
            "verify_command": verify_command(tournament, number) if played["draw_seed"] else "",
        },
    }


def _order(row: Mapping[str, Any], names: Mapping[str, str], context: LogContext) -> dict[str, Any]:
    """An army's order of a played turn and what came of it, in words."""
    outcome = row.get("outcome") or ""
    return {
        "army": row["army"],
        "clan": row.get("clan"),
        "kind": row["kind"],
        "path": list(row["path"]),
        "reform": row.get("reform"),
        "claim": row.get("claim", True),
        "on_swap": row.get("on_swap", "advance"),
        "late": bool(row.get("late")),
        "from": row.get("from"),
        "outcome": outcome or None,
        "province": row.get("province"),
        "reason": row.get("reason"),
        "text": order_words(row, context),
        "from_name": names.get(row.get("from") or "", row.get("from") or ""),
        "province_name": names.get(row.get("province") or "", row.get("province") or ""),
        "outcome_label": str(OUTCOMES.get(outcome, outcome)),
        "reason_text": rejection_text(row["reason"]) if row.get("reason") else "",
    }


def _places(
    rows: Sequence[Mapping[str, Any]], names: Mapping[str, str], context: LogContext
) -> list[dict[str, Any]]:
    """Meetings or reinforcements of a turn: each province and its armies, in words."""
    return [
        {
            **r,
            "province_name": names.get(r["province"], r["province"]),
            "armies_text": context.armies(list(r["armies"])),
        }
        for r in rows
    ]


def _control_changes(
    before: Mapping[str, str | None], after: Mapping[str, str | None], names: Mapping[str, str]
) -> list[dict[str, Any]]:
    return [
        {
            "province": p,
            "province_name": names.get(p, p),
            "before": before.get(p),
            "after": c,
            "before_name": clan_name(str(before.get(p))) if before.get(p) else "",
            "after_name": clan_name(c) if c else "",
        }
        for p, c in sorted(after.items())
        if before.get(p) != c
    ]


def _between(
    previous: Mapping[str, Any], before: Mapping[str, Any], names: Mapping[str, str]
) -> dict[str, Any]:
    """What changed on the board from the end of the last turn to this turn's deadline:
    the battles' results (R8), armies destroyed (R9) and control that followed (R6)."""
    was = {a["id"]: a for a in previous["armies"]}
    destroyed = sorted(
        a["id"]
        for a in before["armies"]
        if a["destroyed"] and a["id"] in was and not was[a["id"]]["destroyed"]
    )
    return {
        "control_changes": _control_changes(previous["control"], before["control"], names),
        "destroyed": destroyed,
    }


def _draw(draw: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    """A swap's draw (R5.2, R11) with its sentence."""
    provinces: Sequence[str] = draw.get("provinces", [])
    shown = [names.get(p, p) for p in provinces]
    method = str(draw.get("method", ""))
    side = names.get(str(draw.get("moving_from")), str(draw.get("moving_from")))
    text = _("Swap on %(a)s–%(b)s: the armies from %(side)s moved (%(method)s).") % {
        "a": shown[0] if shown else "?",
        "b": shown[1] if len(shown) > 1 else "?",
        "side": side,
        "method": str(DRAW_METHODS.get(method, method)),
    }
    return {**draw, "names": shown, "moving_from_name": side, "text": text}


def _battles(
    tournament: Tournament,
    number: int,
    viewer: Viewer,
    names: Mapping[str, str],
    context: LogContext,
) -> list[dict[str, Any]]:
    """The tables turn ``number`` opened or decided (R7, R8), with their results and draws."""
    rows = battles_of_turn(tournament=tournament, number=number, viewer=viewer)
    tables = {b.pk: b for b in Battle.objects.filter(pk__in=[row["id"] for row in rows])}
    story = []
    for row in rows:
        battle = tables.get(row["id"])
        seed = battle_seed_revealed(battle) if battle is not None else None
        story.append(
            {
                **row,
                "province_name": names.get(row["province"], row["province"]),
                "armies_text": ", ".join(
                    context.army(a["code"])
                    if not a["reinforcement"]
                    else _("%(army)s (reinforcement from turn %(turn)s)")
                    % {"army": context.army(a["code"]), "turn": a["joined_turn"]}
                    for a in row["armies"]
                ),
                "result_text": battle_outcome_text(row["outcome"], context)
                if row["outcome"]
                else "",
                "casualties_text": battle_casualties_text(row["casualties"], context)
                if row["outcome"]
                else "",
                # R11: the table's own seed, shown once the table is over.
                "draws": {
                    "commitment": battle_commitment(battle) if battle is not None else "",
                    "seed": seed,
                    "steps": _steps_shown(battle_draw_steps(battle))
                    if battle is not None and seed
                    else [],
                    "check": BATTLE_CHECK if seed else "",
                },
            }
        )
    return story


def _steps_shown(steps: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A table's draw steps with each pick (a code, or an order of codes) as one text."""
    shown = []
    for step in steps:
        draws = []
        for draw in step.get("draws", []):
            result = draw.get("result")
            text = result if isinstance(result, str) else ", ".join(map(str, result or []))
            what = str(draw.get("what", ""))
            draws.append(
                {**draw, "result_text": text, "what_text": str(TABLE_DRAWS.get(what, what))}
            )
        shown.append({**step, "draws": draws})
    return shown
