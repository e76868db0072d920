"""Which HTTP status each of the services' refusals becomes (transport, not domain).

The services refuse with ``TournamentError(message, code=...)`` in the domain's words; the
JSON API (``sl5r/api.py``), the API's own handlers and the pages all turn the code into a
status here, so that no domain module speaks HTTP.
"""

from __future__ import annotations

from referees.kernel.core import RulesRejection, TournamentError

# The HTTP status of each code a service refuses with (``TournamentError.code``).
# tests/test_api_errors.py checks that every code the code base raises is here.
ERROR_STATUS: dict[str, int] = {
    # The request itself is wrong: a value the form or body gives.
    "invalid": 400,
    "invisible_character": 400,
    "csv": 400,
    "empty": 400,
    "label_too_long": 400,
    "lineup": 400,
    "name_taken": 400,
    "password": 400,
    "positions": 400,
    "username": 400,
    # Who asks may not do it.
    "bad_token": 403,
    "forbidden": 403,
    "judges_elsewhere": 403,
    "karo": 403,
    "not_found": 404,
    # The request is fine but the tournament's state refuses it now.
    "already_judge": 409,
    "busy": 409,
    "closed": 409,
    "confirm": 409,
    "decided": 409,
    "full": 409,
    "has_password": 409,
    "in_battle": 409,
    "inactive": 409,
    "invitation_pending": 409,
    "last_judge": 409,
    "late": 409,
    "lineup_incomplete": 409,
    "map_exists": 409,
    "no_enemy": 409,
    "no_move": 409,
    "not_open": 409,
    "not_paused": 409,
    "not_running": 409,
    "not_venue": 409,
    "nothing_to_undo": 409,
    "paused": 409,
    "phase": 409,
    "positions_undeclared": 409,
    "revoked": 409,
    "stale": 409,
    "status": 409,
    "tables_changed": 409,
    "taken": 409,
    "username_taken": 409,
    "file_too_large": 413,
    "too_long": 413,
    # Well-formed, but the rules or the map cannot accept it.
    "game": 422,
    "illegal_action": 422,
    "map_seating": 422,
    "not_a_general": 422,
    "roster": 422,
    "validation": 422,
}


# An order the rules reject, whatever the engine's reason (R4–R9): well-formed, refused.
RULES_REJECTION_STATUS = 422


def error_status(error: TournamentError) -> int:
    """The HTTP status of a service's refusal; an unmapped code is a bug, answered as 400."""
    if isinstance(error, RulesRejection):
        return RULES_REJECTION_STATUS
    return ERROR_STATUS.get(error.code, 400)
