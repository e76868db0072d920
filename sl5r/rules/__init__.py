"""The Strategic L5R rules as pure Python (rules.md): no Django, no clock, no hidden randomness.

Django apps convert their rows into these dataclasses, call the functions, and store what
comes back. Randomness is always passed in and every draw is part of the result (R11).
"""

from .battle import BattleSetup, Participant, ParticipantSetup, battle_modifiers
from .casefile import Case, case_from_dict, case_from_json, case_run, result_to_dict
from .clans import CLAN_NAMES, CLANS
from .errors import CaseFormatError, LineupError, MapError, RulesInputError
from .mapgraph import GameMap, Province, map_from_dict, rokugan_map
from .roles import (
    Lineup,
    Role,
    ShortfallRule,
    ThreeVariant,
    Visibility,
    lineup_propose,
    role_visibility,
    starting_positions_check,
)
from .scoring import ClanScore, clan_scores, score_breakdown, small_farms
from .turn import (
    Army,
    Draw,
    DrawMethod,
    Meeting,
    Order,
    OrderResult,
    Outcome,
    RandomSource,
    Reinforcement,
    Rejection,
    Settings,
    TurnResult,
    TurnState,
    adjudicate_turn,
    draw_key,
    order_check,
)

__all__ = [
    "CLANS",
    "CLAN_NAMES",
    "Army",
    "BattleSetup",
    "Case",
    "CaseFormatError",
    "ClanScore",
    "Draw",
    "DrawMethod",
    "GameMap",
    "Lineup",
    "LineupError",
    "MapError",
    "Meeting",
    "Order",
    "OrderResult",
    "Outcome",
    "Participant",
    "ParticipantSetup",
    "Province",
    "RandomSource",
    "Reinforcement",
    "Rejection",
    "Role",
    "RulesInputError",
    "Settings",
    "ShortfallRule",
    "ThreeVariant",
    "TurnResult",
    "TurnState",
    "Visibility",
    "adjudicate_turn",
    "battle_modifiers",
    "case_from_dict",
    "case_from_json",
    "case_run",
    "clan_scores",
    "draw_key",
    "lineup_propose",
    "map_from_dict",
    "order_check",
    "result_to_dict",
    "rokugan_map",
    "role_visibility",
    "score_breakdown",
    "small_farms",
    "starting_positions_check",
]
