"""Running a tournament, one domain per module: set-up, the start, the clock, orders,
corrections and messages.

Every change goes through a service here. Each one is one unit of work
(``referees.kernel.core.unit_of_work``): it takes the tournament's lock, writes its lines in the
tournament's log (R11), and once committed moves the version on once and sends one event.
Views, API handlers, consumers and tasks validate input and call these; a
``TournamentError`` carries a message for the person who asked and a code that the
transport turns into a status (``sl5r.api_errors``).

This package sits above ``battles`` (a turn resolution opens and closes battle tables) and
below the clocks and the transport. Its names are re-exported here, so that callers say
``services.order_give`` whichever module holds it.
"""

from __future__ import annotations

from referees.kernel.core import CLOCK, Actor, TournamentError
from referees.kernel.lineups import tournament_lineup
from referees.kernel.tokens import player_from_token, player_token
from referees.services.calls import (
    MAX_CALL_TEXT,
    judge_call_close,
    judge_call_make,
    judge_call_take,
    judge_call_withdraw,
)
from referees.services.clock import (
    TICK_DONE,
    TICK_HELD,
    TICK_NOTHING,
    clock_end,
    clock_extend,
    clock_pause,
    clock_resolve_now,
    clock_resume,
    clock_sweep,
    clock_tick,
    clock_tick_outcome,
    deadline_flag_rule,
    due_tournament_ids,
    game_reopen,
    refuse_unless_in_play,
    turn_redraw,
)
from referees.services.corrections import (
    BATTLE_ACTION_WORDS,
    CORRECTION_ACTIONS,
    UNDO_LEAST_DEFAULT,
    UNDO_MAX_SECONDS,
    UNDO_MIN_SECONDS,
    UndoItem,
    UndoPreview,
    army_correct,
    clock_undo,
    control_correct,
    undo_preview,
)
from referees.services.messages import (
    MAX_ANNOUNCEMENT,
    MAX_INSTRUCTION,
    announcement_post,
    instruction_send,
)
from referees.services.orders import (
    OrderInput,
    order_enter,
    order_give,
    order_give_claimed,
    order_swap_choice,
)
from referees.services.screen import tournament_gong_set
from referees.services.setup import (
    CAMPAIGN_SETTINGS,
    DEFAULT_TURNS,
    MAX_BUSHIDO_TURNS,
    MAX_PHASE_SECONDS,
    MAX_TURN_SECONDS,
    MIN_BUSHIDO_TURNS,
    MIN_TURN_SECONDS,
    NAME_MAX_LENGTH,
    PLAYER_NAME_MAX,
    TournamentSettings,
    lineup_refuse_unseated,
    player_name_checked,
    player_register,
    player_token_reissue,
    player_token_revoke,
    tournament_clans,
    tournament_create,
    tournament_settings,
    tournament_update,
    venue_address_choose,
    venue_site_changed,
)
from referees.services.start import (
    phase_advance,
    phase_enter,
    start_positions_declare,
    tournament_advance,
    tournament_start,
)

__all__ = [
    "BATTLE_ACTION_WORDS",
    "CAMPAIGN_SETTINGS",
    "CLOCK",
    "CORRECTION_ACTIONS",
    "DEFAULT_TURNS",
    "MAX_ANNOUNCEMENT",
    "MAX_BUSHIDO_TURNS",
    "MAX_CALL_TEXT",
    "MAX_INSTRUCTION",
    "MAX_PHASE_SECONDS",
    "MAX_TURN_SECONDS",
    "MIN_BUSHIDO_TURNS",
    "MIN_TURN_SECONDS",
    "NAME_MAX_LENGTH",
    "PLAYER_NAME_MAX",
    "TICK_DONE",
    "TICK_HELD",
    "TICK_NOTHING",
    "UNDO_LEAST_DEFAULT",
    "UNDO_MAX_SECONDS",
    "UNDO_MIN_SECONDS",
    "Actor",
    "OrderInput",
    "TournamentError",
    "TournamentSettings",
    "UndoItem",
    "UndoPreview",
    "announcement_post",
    "army_correct",
    "clock_end",
    "clock_extend",
    "clock_pause",
    "clock_resolve_now",
    "clock_resume",
    "clock_sweep",
    "clock_tick",
    "clock_tick_outcome",
    "clock_undo",
    "control_correct",
    "deadline_flag_rule",
    "due_tournament_ids",
    "game_reopen",
    "instruction_send",
    "judge_call_close",
    "judge_call_make",
    "judge_call_take",
    "judge_call_withdraw",
    "lineup_refuse_unseated",
    "order_enter",
    "order_give",
    "order_give_claimed",
    "order_swap_choice",
    "phase_advance",
    "phase_enter",
    "player_from_token",
    "player_name_checked",
    "player_register",
    "player_token",
    "player_token_reissue",
    "player_token_revoke",
    "refuse_unless_in_play",
    "start_positions_declare",
    "tournament_advance",
    "tournament_clans",
    "tournament_create",
    "tournament_gong_set",
    "tournament_lineup",
    "tournament_settings",
    "tournament_start",
    "tournament_update",
    "turn_redraw",
    "undo_preview",
    "venue_address_choose",
    "venue_site_changed",
]
