"""ASGI entry point: ``daphne sl5r.asgi:application``.

HTTP goes to Django's request handler on a pool of long-lived threads
(``sl5r/threaded_http.py``); websockets go through the same-origin check
(``sl5r/websocket_origin.py``) and the session authentication to the routes collected from
each app's ``routing.py``.
"""

from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sl5r.settings")

# Load the apps before anything imports models (consumers do, through routing).
django_wsgi_app = get_wsgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402

from sl5r.routing import websocket_urlpatterns  # noqa: E402
from sl5r.threaded_http import ThreadedWsgiHttp  # noqa: E402
from sl5r.websocket_origin import SameOriginValidator  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": ThreadedWsgiHttp(django_wsgi_app, threads=settings.SL5R_HTTP_THREADS),
        "websocket": SameOriginValidator(
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns)),
        ),
    }
)
