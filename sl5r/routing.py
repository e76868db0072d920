"""Websocket routes of every app, gathered for ``sl5r.asgi`` (only the tournaments' live
updates have any: ``referees.routing``)."""

from __future__ import annotations

from referees.routing import websocket_urlpatterns as referees_websockets

websocket_urlpatterns = [*referees_websockets]
