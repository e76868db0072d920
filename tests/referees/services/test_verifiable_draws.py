"""R11: a turn's draws are committed when it opens and can be checked by anyone afterwards."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from referees import services
from referees.kernel.visibility import Viewer
from referees.models import LogEntry
from referees.reading.history import turn_history
from referees.reading.log import turn_case
from referees.reading.state import tournament_state
from referees.services import OrderInput, TournamentError
from sl5r.api_errors import error_status
from sl5r.rules.mapgraph import rokugan_map
from strategic_map.models import Turn
from tests.referees.conftest import Api, Game

pytestmark = pytest.mark.django_db


def open_turn(game: Game) -> Turn:
    return Turn.objects.get(campaign=game.refresh().campaign, status=Turn.Status.OPEN)


def swap(game: Game) -> tuple[str, str]:
    """crab-1 and lion-1 in two bordering provinces, each ordered into the other's (R5.2)."""
    here = game.province_of("crab-1")
    assert here is not None
    game_map = rokugan_map()
    taken = {spot.get("province") for spot in game.board()["armies"].values()}
    there = sorted(
        p
        for p in game_map.neighbours[here]
        if not game_map.provinces[p].impassable and p not in taken
    )[0]
    now = timezone.now()
    services.army_correct(
        tournament_id=game.id,
        army_code="lion-1",
        province=there,
        reason="set up a swap",
        actor=game.judge_actor,
        now=now,
    )
    for code, to in (("crab-1", there), ("lion-1", here)):
        services.order_enter(
            tournament_id=game.id,
            army_code=code,
            order=OrderInput("move", (to,)),
            actor=game.judge_actor,
            now=now,
        )
    return here, there


def resolve(game: Game) -> Turn:
    number = open_turn(game).number
    services.clock_resolve_now(tournament_id=game.id, actor=game.judge_actor, now=timezone.now())
    return Turn.objects.get(
        campaign=game.refresh().campaign, number=number, status=Turn.Status.RESOLVED
    )


def verify(path: Path) -> tuple[int, str]:
    out: list[str] = []

    class Sink:
        def write(self, text: str) -> None:
            out.append(text)

        def flush(self) -> None:
            pass

    try:
        call_command("adjudicate", "--verify", str(path), stdout=Sink(), stderr=Sink())
    except SystemExit as exit_:
        return int(exit_.code or 0), "\n".join(out)
    return 0, "\n".join(out)


def test_r11_a_turn_opens_with_a_secret_seed_and_publishes_its_commitment(game16: Game) -> None:
    turn = open_turn(game16)
    assert len(turn.draw_seed) == 64
    commitment = hashlib.sha256(bytes.fromhex(turn.draw_seed)).hexdigest()
    for viewer in (
        Viewer.public(),
        Viewer.judge(),
        Viewer(kind="player", player=game16.player("crab")),
    ):
        state = tournament_state(tournament=game16.refresh(), viewer=viewer, now=timezone.now())
        assert state["tournament"]["commitment"] == commitment
        assert turn.draw_seed not in json.dumps(state)
    opened = LogEntry.objects.get(tournament=game16.tournament, action="turn_opened")
    assert opened.data["commitment"] == commitment


def test_r11_the_next_turn_gets_a_new_seed_and_the_played_one_is_revealed(game16: Game) -> None:
    first = open_turn(game16)
    resolve(game16)
    second = open_turn(game16)
    assert second.draw_seed and second.draw_seed != first.draw_seed
    played = turn_history(tournament=game16.refresh(), number=1, viewer=Viewer.public())
    assert played is not None
    assert played["draw_seed"] == first.draw_seed
    assert played["commitment"] == first.commitment
    resolved = LogEntry.objects.get(tournament=game16.tournament, action="turn_resolved")
    assert resolved.data["draw_seed"] == first.draw_seed


def test_r11_undo_and_resolving_again_reuse_the_seed_and_make_the_same_draws(
    game16: Game,
) -> None:
    swap(game16)
    seed = open_turn(game16).draw_seed
    draws = resolve(game16).result["draws"]  # type: ignore[index]
    assert [d["method"] for d in draws] == ["random"]
    for _ in range(3):
        services.clock_undo(
            tournament_id=game16.id, actor=game16.judge_actor, now=timezone.now(), reason="again"
        )
        assert open_turn(game16).draw_seed == seed
        assert resolve(game16).result["draws"] == draws  # type: ignore[index]


def test_r11_a_judge_redraw_is_logged_and_changes_the_commitment(game16: Game) -> None:
    before = open_turn(game16).commitment
    services.turn_redraw(
        tournament_id=game16.id, actor=game16.judge_actor, now=timezone.now(), reason="dispute"
    )
    after = open_turn(game16).commitment
    assert after and after != before
    entry = LogEntry.objects.get(tournament=game16.tournament, action="draw_renewed")
    assert entry.turn == 1 and entry.reason == "dispute"
    assert entry.data == {"withdrawn": before, "commitment": after}
    state = tournament_state(
        tournament=game16.refresh(), viewer=Viewer.public(), now=timezone.now()
    )
    assert state["tournament"]["commitment"] == after


def test_r11_no_redraw_once_the_game_is_over(game16: Game) -> None:
    services.clock_end(tournament_id=game16.id, actor=game16.judge_actor, now=timezone.now())
    with pytest.raises(TournamentError) as caught:
        services.turn_redraw(
            tournament_id=game16.id, actor=game16.judge_actor, now=timezone.now(), reason="x"
        )
    assert error_status(caught.value) == 409


@pytest.mark.parametrize("reason", ["", "   \n\t"])
def test_r11_a_redraw_without_a_reason_is_refused_and_changes_nothing(
    game16: Game, reason: str
) -> None:
    before = open_turn(game16).commitment
    with pytest.raises(TournamentError) as caught:
        services.turn_redraw(
            tournament_id=game16.id, actor=game16.judge_actor, now=timezone.now(), reason=reason
        )
    assert error_status(caught.value) == 400
    assert str(caught.value).startswith("reason:")
    assert open_turn(game16).commitment == before
    assert not LogEntry.objects.filter(tournament=game16.tournament, action="draw_renewed")


def test_r11_the_api_refuses_a_blank_redraw_reason(api: Api, game16: Game, judge_key: str) -> None:
    answer = api.post(
        f"/tournaments/{game16.id}/clock/redraw", {"reason": "   \n\t"}, token=judge_key
    )
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith("reason:")


def exported(game: Game, tmp_path: Path) -> tuple[dict[str, object], Path]:
    swap(game)
    turn = resolve(game)
    case = turn_case(tournament=game.refresh(), number=turn.number)
    assert case is not None
    assert case["draw_seed"] == turn.draw_seed
    assert case["commitment"] == turn.commitment
    path = tmp_path / "turn.json"
    path.write_text(json.dumps(case), encoding="utf-8")
    return case, path


def test_r11_verify_accepts_a_real_export(game16: Game, tmp_path: Path) -> None:
    case, path = exported(game16, tmp_path)
    code, out = verify(path)
    assert code == 0, out
    assert str(case["commitment"]) in out
    call_command("adjudicate", "--check", str(path))  # still a case file that replays


def test_r11_verify_refuses_a_changed_seed(game16: Game, tmp_path: Path) -> None:
    case, path = exported(game16, tmp_path)
    case["draw_seed"] = "00" * 32
    path.write_text(json.dumps(case), encoding="utf-8")
    code, out = verify(path)
    assert code == 1
    assert "commitment:" in out


def test_r11_verify_refuses_a_changed_order(game16: Game, tmp_path: Path) -> None:
    case, path = exported(game16, tmp_path)
    orders = case["orders"]
    assert isinstance(orders, list)
    orders.append({"army": "crane-1", "claim": False})
    path.write_text(json.dumps(case), encoding="utf-8")
    code, out = verify(path)
    assert code == 1
    assert "orders: their digest is" in out


def test_r11_verify_refuses_a_changed_draw(game16: Game, tmp_path: Path) -> None:
    case, path = exported(game16, tmp_path)
    draws = case["draws"]
    assert isinstance(draws, dict)
    ((key, moving),) = draws.items()
    draws[key] = next(p for p in key.split("|") if p != moving)
    path.write_text(json.dumps(case), encoding="utf-8")
    code, out = verify(path)
    assert code == 1
    assert f"draws.{key}:" in out


def test_r11_verify_of_a_file_without_a_seed_or_not_json_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"format": 1, "map": "rokugan", "armies": []}), encoding="utf-8")
    assert verify(path)[0] == 2
    path.write_text("{", encoding="utf-8")
    assert verify(path)[0] == 2
    path.write_text(json.dumps({"format": 1, "draw_seed": "zz"}), encoding="utf-8")
    assert verify(path)[0] == 2


def test_r11_the_documented_python_verifies_a_real_export(game16: Game, tmp_path: Path) -> None:
    docs = (Path(__file__).resolve().parents[3] / "docs" / "adjudication.md").read_text()
    section = docs.split("## Verifying a turn's draws", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    _, path = exported(game16, tmp_path)
    exec(code.replace('"turn.json"', repr(str(path))), {})


def test_r11_the_judge_renews_the_draws_through_the_api_with_a_reason(
    api: Api, game16: Game, judge_key: str
) -> None:
    url = f"/tournaments/{game16.id}/clock/redraw"
    before = open_turn(game16).commitment
    player = game16.token(game16.player("crab"))
    assert api.post(url, {"reason": "mine"}, token=player).status_code == 403
    assert api.post(url, {"reason": ""}, token=judge_key).status_code == 422
    assert open_turn(game16).commitment == before
    assert api.post(url, {"reason": "dispute at table 3"}, token=judge_key).status_code == 200
    assert open_turn(game16).commitment != before


def test_r11_the_console_and_the_big_screen_show_the_commitment_and_the_history_the_seed(
    client: Client, game16: Game
) -> None:
    turn = open_turn(game16)
    client.force_login(game16.judge)
    for page in ("judge", "screen"):
        html = client.get(reverse(f"referees:{page}", args=[game16.id])).content.decode()
        assert turn.commitment in html, page
        assert turn.draw_seed not in html, page
    swap(game16)
    resolve(game16)
    history = reverse("referees:history", args=[game16.id]) + "?turn=1"
    html = client.get(history).content.decode()
    assert 'id="history-draw-proof"' in html
    assert turn.commitment in html and turn.draw_seed in html
