"""The pages, the health check, the language switch and the ASGI application."""

from __future__ import annotations

import json
from typing import Any

import pytest
from channels.routing import ProtocolTypeRouter
from channels.testing import HttpCommunicator
from django.db import DatabaseError
from django.test import Client
from django.urls import reverse

from strategic_map.models import Map

TINY_MAP: dict[str, Any] = {
    "id": "tiny",
    "name": "Tiny Rokugan",
    "provinces": [
        {"id": "crab-hida", "name": "Hida Lands", "home_clan": "crab", "castle": "Shiro Hida"},
        {"id": "crab-kaiu", "name": "Kaiu Lands", "home_clan": "crab", "castle": None},
        {"id": "crane-doji", "name": "Doji Lands", "home_clan": "crane", "castle": True},
        {"id": "beiden-pass", "name": "Beiden Pass", "home_clan": None, "castle": False},
    ],
    "borders": [
        ["crab-hida", "crab-kaiu"],
        ["crab-kaiu", "beiden-pass"],
        ["beiden-pass", "crane-doji"],
    ],
}


@pytest.fixture
def tiny_map(db: None) -> Map:
    # Written directly: these tests are about the pages, not the import validation.
    return Map.objects.create(slug="tiny", name="Tiny Rokugan", data=TINY_MAP)


def test_home_without_maps_says_how_to_load_one(client: Client, db: None) -> None:
    """With no map loaded, the home page says so and names the command."""
    response = client.get("/")

    assert response.status_code == 200
    content = response.content.decode()
    assert "No map is loaded yet." in content
    assert "manage.py loadmap" in content


def test_home_lists_maps_with_counts_and_links(client: Client, tiny_map: Map) -> None:
    """Each map is listed with its province and border counts and a link to its page."""
    response = client.get("/")

    assert response.status_code == 200
    maps = response.context["maps"]
    assert [(m.slug, m.province_count, m.border_count) for m in maps] == [("tiny", 4, 3)]
    content = response.content.decode()
    assert 'href="/maps/tiny/"' in content
    assert "Tiny Rokugan" in content


def test_map_page_shows_provinces_and_borders(client: Client, tiny_map: Map) -> None:
    """The map page lists provinces with home clan and castle, and every border."""
    response = client.get(reverse("strategic_map:map", args=["tiny"]))

    assert response.status_code == 200
    detail = response.context["map"]
    rows = {p.id: (p.name, p.home_clan, p.castle) for p in detail.provinces}
    assert rows == {
        "crab-hida": ("Hida Lands", "crab", "Shiro Hida"),
        "crab-kaiu": ("Kaiu Lands", "crab", None),
        "crane-doji": ("Doji Lands", "crane", ""),
        "beiden-pass": ("Beiden Pass", None, None),
    }
    assert detail.provinces[-1].id == "beiden-pass", "unaligned provinces come last"
    assert [(b.a.id, b.b.id) for b in detail.borders] == [tuple(b) for b in TINY_MAP["borders"]]
    content = response.content.decode()
    assert "Shiro Hida" in content
    assert "Crane" in content
    assert "unaligned" in content
    assert "4 provinces" in content
    assert "3 borders" in content


def test_map_page_for_an_unknown_map_is_404(client: Client, db: None) -> None:
    """A slug that is not loaded gives 404."""
    response = client.get("/maps/nowhere/")

    assert response.status_code == 404


def test_pages_are_translated_to_russian(client: Client, tiny_map: Map) -> None:
    """A Russian browser gets Russian pages, including the clan names."""
    home = client.get("/", headers={"accept-language": "ru"})
    page = client.get("/maps/tiny/", headers={"accept-language": "ru"})

    assert '<html lang="ru">' in home.content.decode()
    assert "Карты" in home.content.decode()
    content = page.content.decode()
    assert "Провинции" in content
    assert "Журавль" in content  # Crane
    assert "4 провинции" in content


def test_language_switch_sets_the_language(client: Client, db: None) -> None:
    """Posting to set_language switches the following pages to that language."""
    response = client.post("/i18n/setlang/", {"language": "ru", "next": "/"})

    assert response.status_code == 302
    assert response.headers["Location"] == "/"
    assert "Карты" in client.get("/").content.decode()


def test_base_layout_is_mobile_friendly_and_offers_languages(client: Client, db: None) -> None:
    """The layout has a viewport, a stylesheet and the language form with both languages."""
    content = client.get("/").content.decode()

    assert '<meta name="viewport"' in content
    assert 'rel="stylesheet"' in content
    assert 'action="/i18n/setlang/"' in content
    assert 'value="en"' in content
    assert 'value="ru"' in content


def test_healthz_reports_ok(client: Client, db: None) -> None:
    """/healthz answers {"status": "ok"} when the database answers."""
    response = client.get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert "no-cache" in response.headers["Cache-Control"]


def test_healthz_reports_a_database_failure(
    client: Client, db: None, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """/healthz answers 503 when the database does not, and logs one line saying why."""

    class BrokenConnection:
        def cursor(self) -> None:
            raise DatabaseError("connection refused")

    monkeypatch.setattr("sl5r.views.connection", BrokenConnection())

    response = client.get("/healthz")

    assert response.status_code == 503
    assert response.json()["status"] == "error"
    said = [(r.getMessage(), r.exc_info) for r in caplog.records if r.name == "sl5r.views"]
    assert said == [
        ("healthz: the database did not answer (DatabaseError: connection refused)", None)
    ]


def test_static_files_are_served(client: Client) -> None:
    """The stylesheet is served (by WhiteNoise) without a separate web server."""
    response = client.get("/static/css/site.css")

    assert response.status_code == 200
    assert b"".join(response.streaming_content).startswith(b"/* SL5R Referee")


def test_asgi_application_routes_http_and_websocket() -> None:
    """The ASGI entry point is a Channels router for both protocols."""
    from sl5r.asgi import application

    assert isinstance(application, ProtocolTypeRouter)
    assert set(application.application_mapping) == {"http", "websocket"}


@pytest.mark.django_db(transaction=True)
async def test_asgi_application_serves_http() -> None:
    """An HTTP request through the ASGI application reaches Django."""
    from sl5r.asgi import application

    communicator = HttpCommunicator(
        application, "GET", "/healthz", headers=[(b"host", b"localhost")]
    )
    response = await communicator.get_response()

    assert response["status"] == 200
    assert json.loads(response["body"]) == {"status": "ok"}
