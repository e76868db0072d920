"""Websocket routes of the strategic map (the live map comes later)."""

from __future__ import annotations

from django.urls import URLPattern

websocket_urlpatterns: list[URLPattern] = []
