"""Websocket routes of the referees app: a tournament's live updates."""

from __future__ import annotations

from django.urls import URLPattern, path

from referees.consumers import TournamentConsumer

websocket_urlpatterns: list[URLPattern] = [
    path("ws/tournaments/<int:tournament_id>/", TournamentConsumer.as_asgi()),
]
