"""Websocket routes of the referees app (clock and judge console come later)."""

from __future__ import annotations

from django.urls import URLPattern

websocket_urlpatterns: list[URLPattern] = []
