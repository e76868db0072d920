"""A laptop dies mid-tournament; another one restores the latest backup and goes on.

End to end, with real processes: ``manage.py venue`` serves a tournament in venue mode on
laptop A (its own VENUE_DIR and SQLite file); a General's phone joins with its link and
gives an order each turn; the judge resolves two turns, each followed by a backup. The
server is killed with SIGKILL. Laptop B, a fresh clone (another VENUE_DIR, another database
path), restores the latest backup from a "USB stick" and serves: the phone's session and its
join link still work, the judge's session and password too, the clock waits paused until the
judge resumes, and the third turn is resolved exactly once, by B's clock.

Only outcomes are asserted, never timings: every wait polls for a state with a generous
limit.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.venue.laptop import Browser, Laptop, wait_until

pytestmark = pytest.mark.slow


def log_entries(browser: Browser, laptop: Laptop, tournament: int, key: str) -> list[Any]:
    status, body = browser.json(f"{laptop.url}/api/tournaments/{tournament}/log", token=key)
    assert status == 200, body
    entries: list[Any] = body["entries"]
    return entries


def resolved_turns(entries: list[Any]) -> list[int]:
    return [e["turn"] for e in entries if e["action"] == "turn_resolved"]


def test_a_tournament_continues_on_another_laptop_from_the_latest_backup(
    laptops: Callable[[str], Laptop], tmp_path: Path
) -> None:
    # --- given: laptop A serves a tournament in venue mode -------------------------------
    a = laptops("a")
    migrated = a.run("manage.py", "migrate", "--noinput", "-v0")
    assert migrated.returncode == 0, migrated.stderr
    scenario = a.run("-m", "tests.venue.scenario", str(a.root / "scenario.json"))
    assert scenario.returncode == 0, scenario.stderr
    data = json.loads((a.root / "scenario.json").read_text())
    tid, key, token = data["tournament"], data["judge"]["key"], data["token"]
    api = f"/api/tournaments/{tid}"
    a.serve()

    # the General's phone opens his join link; the judge signs in on his laptop
    phone, judge = Browser(), Browser()
    status, _, _ = phone.request(f"{a.url}/join/{token}")
    assert status == 302, (status, a.log.read_text())
    assert phone.json(f"{a.url}/api/me")[1]["player"]["army"] == data["army"]
    judge.request(f"{a.url}/api/csrf")
    status, _, _ = judge.request(
        f"{a.url}/admin/login/?next=/api/me",
        method="POST",
        form={
            "username": data["judge"]["username"],
            "password": data["judge"]["password"],
            "csrfmiddlewaretoken": judge.cookie("csrftoken") or "",
            "next": "/api/me",
        },
    )
    assert status == 302, (status, a.log.read_text())
    assert judge.json(f"{a.url}/api/me")[1]["user"] == data["judge"]["username"]

    # two turns: the phone gives an order, the judge resolves the turn
    for number, to in ((1, data["neighbour"]), (2, data["home"])):
        status, body = phone.json(
            f"{a.url}{api}/orders/mine",
            method="PUT",
            body={"kind": "move", "path": [to], "turn": number},
            token=token,
        )
        assert status == 200, body
        status, body = judge.json(
            f"{a.url}{api}/clock/resolve-now?turn={number}", method="POST", token=key
        )
        assert status == 200, body
    backups = sorted((a.venue / "backups").glob("sl5r-backup-*.zip"))
    assert backups, a.log.read_text()
    latest = backups[-1]
    manifest = json.loads(zipfile.ZipFile(latest).read("manifest.json"))
    assert manifest["reason"] == "turn_resolved"
    assert [(t["name"], t["turn"]) for t in manifest["tournaments"]] == [("Venue cup", 3)]

    # --- when: laptop A dies; laptop B, a fresh clone, restores the latest backup -------
    a.kill()
    usb = tmp_path / "usb"
    usb.mkdir()
    shutil.copy2(latest, usb / latest.name)
    b = laptops("b")
    restored = b.run("manage.py", "restore", str(usb / latest.name))
    assert restored.returncode == 0, restored.stderr
    assert any(
        line.startswith('"Venue cup": running, turn 3, paused (')
        for line in restored.stdout.splitlines()
    ), restored.stdout
    assert (b.venue / "secret_key").read_text() == (a.venue / "secret_key").read_text()
    b.serve()

    # --- then: the same phone and judge carry on at laptop B's address -------------------
    assert phone.json(f"{b.url}/api/me")[1]["player"]["army"] == data["army"]  # its session
    other_phone = Browser()
    status, _, _ = other_phone.request(f"{b.url}/join/{token}")  # the same join link
    assert status == 302, (status, b.log.read_text())
    assert other_phone.json(f"{b.url}/api/me")[1]["player"]["army"] == data["army"]
    assert judge.json(f"{b.url}/api/me")[1]["user"] == data["judge"]["username"]
    judge_again = Browser()
    judge_again.request(f"{b.url}/api/csrf")
    status, _, _ = judge_again.request(
        f"{b.url}/admin/login/?next=/api/me",
        method="POST",
        form={
            "username": data["judge"]["username"],
            "password": data["judge"]["password"],
            "csrfmiddlewaretoken": judge_again.cookie("csrftoken") or "",
            "next": "/api/me",
        },
    )
    assert status == 302, (status, b.log.read_text())

    # the clock waits, paused by the restore with the time turn 3 had at the backup
    status, state = phone.json(f"{b.url}{api}/state")
    assert status == 200, state
    clock = state["tournament"]["clock"]
    assert (state["tournament"]["turn"], clock["phase"], clock["paused"]) == (3, "running", True)
    assert 0 < clock["remaining"] <= 600
    entries = log_entries(judge, b, tid, key)
    assert resolved_turns(entries) == [1, 2]
    # Paused by the restore, which says what the backup held; laptop B serves at another
    # address (another port here) than the one A's sheets carried, and the console says so.
    assert [(e["by"], e["action"]) for e in entries[-3:]] == [
        ("the restore", "clock_paused"),
        ("the restore", "backup_restored"),
        ("the venue", "site_changed"),
    ]
    before, after = entries[-1]["data"]["before"], entries[-1]["data"]["after"]
    assert before.endswith(f":{a.port}") and after.endswith(f":{b.port}"), entries[-1]
    # nothing happens while it is paused: the phone's order for turn 3 is taken
    status, body = phone.json(
        f"{b.url}{api}/orders/mine",
        method="PUT",
        body={"kind": "move", "path": [data["neighbour"]], "turn": 3},
        token=token,
    )
    assert status == 200, body
    assert resolved_turns(log_entries(judge, b, tid, key)) == [1, 2]

    # the judge resumes and brings the deadline to now: B's clock resolves turn 3
    status, body = judge.json(f"{b.url}{api}/clock/resume", method="POST", token=key)
    assert status == 200, body
    status, body = judge.json(
        f"{b.url}{api}/clock/extend", method="POST", body={"seconds": -600}, token=key
    )
    assert status == 200, body
    assert wait_until(lambda: 3 in resolved_turns(log_entries(judge, b, tid, key))), (
        b.log.read_text()
    )

    # exactly once, with the phone's order carried out, and turn 4 open
    entries = log_entries(judge, b, tid, key)
    assert resolved_turns(entries) == [1, 2, 3]
    status, state = phone.json(f"{b.url}{api}/state")
    assert state["tournament"]["turn"] == 4
    [army] = [x for x in state["armies"] if x["id"] == data["army"]]
    assert army["province"] == data["neighbour"]
    # and laptop B backs up in its own folder from then on
    assert sorted((b.venue / "backups").glob("sl5r-backup-*.zip")), b.log.read_text()
