"""The admin is reachable only where the operator wants it (issue 29): at a path he picks
(``SL5R_ADMIN_PATH``, or nowhere) and from the networks he names (``SL5R_ADMIN_NETWORKS``);
a venue keeps it to the laptop itself."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, override_settings
from django.urls import clear_url_caches, reverse

import sl5r.urls
from sl5r.serving.admin_reach import address_within
from tests.test_settings import load_settings

ADMIN_ENV = ("SL5R_ADMIN_PATH", "SL5R_ADMIN_NETWORKS", "SL5R_VENUE", "VENUE_DIR")


def settings_with(monkeypatch: pytest.MonkeyPatch, **env: str) -> dict[str, Any]:
    for name in ADMIN_ENV:
        monkeypatch.delenv(name, raising=False)
    return load_settings(monkeypatch, **env)


def test_by_default_the_admin_is_at_admin_for_every_address(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = settings_with(monkeypatch)
    assert settings["SL5R_ADMIN_PATH"] == "admin/"
    assert settings["SL5R_ADMIN_NETWORKS"] == ["0.0.0.0/0", "::/0"]


def test_at_a_venue_the_admin_answers_only_the_laptop_itself(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The phones share the laptop's Wi-Fi: the admin is not theirs to try passwords on."""
    venue = settings_with(monkeypatch, SL5R_VENUE="1", VENUE_DIR=str(tmp_path))
    assert venue["SL5R_ADMIN_NETWORKS"] == ["127.0.0.0/8", "::1"]

    opened = settings_with(
        monkeypatch, SL5R_VENUE="1", VENUE_DIR=str(tmp_path), SL5R_ADMIN_NETWORKS="10.0.0.0/8"
    )
    assert opened["SL5R_ADMIN_NETWORKS"] == ["10.0.0.0/8"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [("off", ""), ("OFF", ""), ("none", ""), ("/staff/desk", "staff/desk/"), ("desk/", "desk/")],
)
def test_the_admin_path_is_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: str
) -> None:
    assert settings_with(monkeypatch, SL5R_ADMIN_PATH=value)["SL5R_ADMIN_PATH"] == expected


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("SL5R_ADMIN_PATH", "ad min", "SL5R_ADMIN_PATH: expected a path"),
        ("SL5R_ADMIN_PATH", "/", "SL5R_ADMIN_PATH: expected a path"),
        ("SL5R_ADMIN_PATH", "a/../b", "SL5R_ADMIN_PATH: expected a path"),
        ("SL5R_ADMIN_NETWORKS", "10.0.0.0/8, lan", "SL5R_ADMIN_NETWORKS: 'lan' is not"),
        ("SL5R_ADMIN_NETWORKS", "300.1.1.1", "SL5R_ADMIN_NETWORKS: '300.1.1.1' is not"),
    ],
)
def test_a_bad_admin_setting_stops_the_start_naming_itself(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, problem: str
) -> None:
    with pytest.raises(ImproperlyConfigured, match=problem):
        settings_with(monkeypatch, **{name: value})


@pytest.mark.parametrize(
    ("address", "inside"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("::ffff:127.0.0.1", True),  # a dual-stack socket's view of the laptop itself
        ("192.168.1.23", False),
        ("::ffff:192.168.1.23", False),
        ("fe80::1", False),
        ("", False),
        ("unknown", False),
    ],
)
def test_address_within_the_networks(address: str, inside: bool) -> None:
    import ipaddress

    networks = [ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1")]
    assert address_within(address, networks) is inside


@pytest.mark.django_db
@override_settings(SL5R_ADMIN_NETWORKS=["127.0.0.0/8", "::1"])
def test_from_another_network_the_admin_is_not_there(django_user_model: Any) -> None:
    """A 404 as for any missing page, even for a signed-in superuser, on every admin URL."""
    root = django_user_model.objects.create_superuser(username="root", password="root-pass-1")
    phone = Client(REMOTE_ADDR="192.168.1.23")
    laptop = Client(REMOTE_ADDR="127.0.0.1")

    for url in ("/admin/", "/admin/login/", "/admin/auth/user/"):
        assert phone.get(url).status_code == 404, url
    refused = phone.post("/admin/login/", {"username": "root", "password": "root-pass-1"})
    assert refused.status_code == 404
    phone.force_login(root)
    assert phone.get("/admin/").status_code == 404
    assert phone.get(reverse("home")).status_code == 200  # the rest of the site is there

    assert laptop.get("/admin/login/").status_code == 200
    laptop.force_login(root)
    assert laptop.get("/admin/").status_code == 200


@pytest.fixture
def admin_urls_reloaded() -> Iterator[None]:
    """``sl5r.urls`` is read once; a test that moves the admin reads it again, both ways."""

    def reload() -> None:
        importlib.reload(sl5r.urls)
        clear_url_caches()

    yield reload  # type: ignore[misc]
    reload()


@pytest.mark.django_db
def test_the_admin_can_be_moved(admin_urls_reloaded: Any, django_user_model: Any) -> None:
    with override_settings(SL5R_ADMIN_PATH="staff/desk/"):
        admin_urls_reloaded()
        client = Client()
        assert client.get("/admin/").status_code == 404
        page = client.get("/staff/desk/login/")
        assert page.status_code == 200
        assert 'id="login-form"' in page.content.decode()
        root = django_user_model.objects.create_superuser(username="root", password="root-pw-1")
        client.force_login(root)
        assert client.get("/staff/desk/").status_code == 200
        assert 'href="/staff/desk/"' in client.get(reverse("home")).content.decode()


@pytest.mark.django_db
def test_with_the_admin_off_it_is_nowhere_and_no_page_links_to_it(
    admin_urls_reloaded: Any, django_user_model: Any
) -> None:
    with override_settings(SL5R_ADMIN_PATH=""):
        admin_urls_reloaded()
        client = Client()
        assert client.get("/admin/").status_code == 404
        assert client.get("/admin/login/").status_code == 404
        root = django_user_model.objects.create_superuser(username="root", password="root-pw-1")
        client.force_login(root)
        home = client.get(reverse("home"))
        assert home.status_code == 200
        assert "/admin/" not in home.content.decode()
