"""Websocket routes of every app, gathered for ``sl5r.asgi``."""

from __future__ import annotations

from referees.routing import websocket_urlpatterns as referees_websockets
from strategic_map.routing import websocket_urlpatterns as strategic_map_websockets

websocket_urlpatterns = [
    *strategic_map_websockets,
    *referees_websockets,
]
