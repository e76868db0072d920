"""Second lines of defence on every response: CSP, Referrer-Policy, Permissions-Policy.

The headers on a page, the API, a 404, the big screen and a static file; no page has an
inline script (every page the URL resolver lists, rendered for a judge and for the
players): a ``<script>`` either has a ``src`` or is a ``json_script`` block
(``application/json``, never run), so ``script-src 'self'`` holds. No inline style either,
so that ``style-src`` is ``'self'`` too. The venue mode sends the same headers.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from tests.battles.conftest import meet
from tests.referees.conftest import (  # noqa: F401  (fixtures)
    Game,
    _clear_cache,
    judge_user,
    make_game,
    rokugan,
)

BASE_DIR = Path(__file__).resolve().parents[1]
DIRECTIVES = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'self'",
    "frame-ancestors": "'none'",
    "form-action": "'self'",
}
DENIED_FEATURES = ("camera", "microphone", "geolocation", "payment", "usb")
# Not pages: JSON, a POST-only view, the probe, Django's admin (its own templates).
SKIPPED_PREFIXES = ("api/", "^api/", "i18n/", "healthz", "admin/")
SCRIPT_TAG = re.compile(r"<script\b([^>]*)>", re.IGNORECASE)
STYLE_TAG = re.compile(r"<style\b", re.IGNORECASE)
STYLE_ATTRIBUTE = re.compile(r"<[^>]*\sstyle\s*=", re.IGNORECASE)


def policy(response: Any) -> dict[str, str]:
    header = response.headers.get("Content-Security-Policy", "")
    assert header, f"no Content-Security-Policy on {response.status_code}"
    parts = (part.strip().split(None, 1) for part in header.split(";") if part.strip())
    return {part[0]: part[1] if len(part) > 1 else "" for part in parts}


def assert_defended(response: Any) -> None:
    found = policy(response)
    for directive, value in DIRECTIVES.items():
        assert found.get(directive) == value, (directive, found)
    assert response.headers["Referrer-Policy"] == "same-origin"
    permissions = response.headers["Permissions-Policy"]
    for feature in DENIED_FEATURES:
        assert f"{feature}=()" in permissions, permissions
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["X-Frame-Options"] == "DENY"


@pytest.fixture
def game(make_game: Callable[..., Game]) -> Iterator[Game]:  # noqa: F811
    """24 players (Daimyo included) and one battle table."""
    made = make_game(24)
    made.battle = meet(made, army="unicorn-2", to="lion-akodo")  # type: ignore[attr-defined]
    yield made


def judge_client(game: Game) -> Client:
    client = Client()
    client.force_login(game.judge)
    return client


def player_client(game: Game, clan: str, role: str) -> Client:
    client = Client()
    token = game.token(game.player(clan, role))
    assert client.get(f"/join/{token}").status_code in (200, 302)
    return client


def page_paths(game: Game) -> list[str]:
    """Every route of the URL resolver that renders a page, with this game's arguments."""
    values = {
        "tournament_id": game.id,
        "battle_id": game.battle.pk,  # type: ignore[attr-defined]
        "slug": "rokugan",
        "token": game.token(game.player("crab")),
        "player_id": game.player("crab").pk,
        "uidb64": "Mg",  # a judge's one-time link: with a join token it is a refused one
    }
    paths: list[str] = []

    def walk(patterns: list[Any], prefix: str) -> None:
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if route.startswith(SKIPPED_PREFIXES):
                continue
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, route)
            elif isinstance(pattern, URLPattern):
                paths.append(
                    "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: str(values[m.group(1)]), route)
                )

    walk(get_resolver().url_patterns, "")
    return paths


def assert_no_inline_code(path: str, html: str) -> None:
    for match in SCRIPT_TAG.finditer(html):
        attributes = match.group(1)
        assert re.search(r"\ssrc\s*=", attributes) or re.search(
            r"""\stype\s*=\s*["']application/json["']""", attributes
        ), f"{path}: inline script {match.group(0)}"
    assert not STYLE_TAG.search(html), f"{path}: a <style> block"
    attribute = STYLE_ATTRIBUTE.search(html)
    assert attribute is None, f"{path}: a style attribute in {attribute.group(0)[:120]}"


def assert_self_contained(path: str, response: Any) -> None:
    found = policy(response)
    assert found.get("default-src") == "'none'", (path, found)
    assert "script-src" not in found and "connect-src" not in found, (path, found)
    assert found.get("frame-ancestors") == "'none'", (path, found)
    assert not SCRIPT_TAG.search(response.content.decode()), f"{path}: a script"


def test_a_page_the_api_a_404_and_the_big_screen_carry_the_headers(game: Game) -> None:
    public = Client()
    judge = judge_client(game)
    for client, path, status in (
        (public, "/", 200),
        (public, f"/referees/tournaments/{game.id}/screen/", 200),
        (public, f"/api/tournaments/{game.id}/state", 200),
        (judge, f"/referees/tournaments/{game.id}/judge/", 200),
        (public, "/no-such-page/", 404),
        (public, "/api/no-such-operation", 404),
        (public, "/admin/login/", 200),
        (public, "/api/docs", 200),
    ):
        response = client.get(path)
        assert response.status_code == status, (path, response.status_code)
        assert_defended(response)


def test_no_page_has_an_inline_script_or_style(game: Game) -> None:
    checked = 0
    clients = {
        "judge": judge_client(game),
        "general": player_client(game, "crab", "general"),
        "daimyo": player_client(game, "crab", "daimyo"),
    }
    for path in page_paths(game):
        for who, client in clients.items():
            response = client.get(path, follow=True)
            assert response.status_code < 500, (who, path, response.status_code)
            if "text/html" not in response.headers.get("Content-Type", ""):
                continue
            if path.endswith("/report.html") and "Content-Disposition" in response.headers:
                # The campaign report is a file to keep: its own styles inside, and a policy
                # stricter than the site's (nothing runs, nothing is fetched).
                assert_self_contained(f"{who} {path}", response)
                continue
            assert_defended(response)
            assert_no_inline_code(f"{who} {path}", response.content.decode())
            checked += 1
    # the judge's own pages and both players' pages were among them
    assert checked >= 3 * 10, checked


def test_the_admin_has_no_inline_script(game: Game) -> None:
    """Django's admin: no inline script (style attributes are its own, and harmless)."""
    judge = judge_client(game)
    for path in ("/admin/", "/admin/login/", "/admin/strategic_map/map/"):
        response = judge.get(path, follow=True)
        assert response.status_code == 200, path
        for match in SCRIPT_TAG.finditer(response.content.decode()):
            assert "src=" in match.group(1) or "application/json" in match.group(1), (
                path,
                match.group(0),
            )


def test_the_venue_mode_sends_the_same_headers(tmp_path: Path) -> None:
    """``make venue``'s settings (DEBUG off, plain HTTP): the site's 404 carries them too."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"SECRET_KEY", "DEBUG", "ALLOWED_HOSTS", "CSRF_TRUSTED_ORIGINS"}
    }
    env.update(
        DJANGO_SETTINGS_MODULE="sl5r.settings",
        SL5R_VENUE="1",
        VENUE_DIR=str(tmp_path),
        ALLOWED_HOSTS="testserver",
    )
    # As `make venue` does before serving: without DEBUG the pages name the collected files.
    collected = subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert collected.returncode == 0, collected.stderr
    script = (
        "import django; django.setup()\n"
        "from django.test import Client\n"
        "r = Client().get('/no-such-page/')\n"
        "print(r.status_code)\n"
        "for name in ('Content-Security-Policy', 'Referrer-Policy', 'Permissions-Policy'):\n"
        "    print(r.headers.get(name, ''))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    status, csp, referrer, permissions = done.stdout.strip().splitlines()[-4:]
    assert status == "404"
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert referrer == "same-origin"
    assert "camera=()" in permissions
