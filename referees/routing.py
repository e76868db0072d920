"""Websocket routes of the referees app: a tournament's live updates."""

from __future__ import annotations

from django.urls import URLPattern, path

from referees.live.consumers import TournamentConsumer

websocket_urlpatterns: list[URLPattern] = [
    # django-stubs' path() knows views only, not the ASGI applications Channels routes.
    path("ws/tournaments/<int:tournament_id>/", TournamentConsumer.as_asgi()),  # type: ignore[arg-type]
]
