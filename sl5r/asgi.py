"""ASGI entry point: ``daphne sl5r.asgi:application``.

HTTP goes, as ``SL5R_HTTP`` says (settings), to Django's WSGI handler on a pool of
long-lived threads (``threads``, ``sl5r/serving/threaded_http.py``) or to Django's own ASGI handler
with each request's arrival stamped as the pool stamps it (``django``). Websockets go
through the same-origin check (``sl5r/serving/websocket_origin.py``) and the session
authentication to the routes collected from each app's ``routing.py``.
"""

from __future__ import annotations

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sl5r.settings")

# Load the apps before anything imports models (consumers do, through routing).
django.setup(set_prefix=False)

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402
from django.core.asgi import get_asgi_application  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware  # noqa: E402

from sl5r.routing import websocket_urlpatterns  # noqa: E402
from sl5r.serving.arrival import BalancerStamped  # noqa: E402
from sl5r.serving.threaded_http import ArrivalStamped, ThreadedWsgiHttp  # noqa: E402
from sl5r.serving.websocket_origin import SameOriginValidator  # noqa: E402

http = (
    ThreadedWsgiHttp(get_wsgi_application(), threads=settings.SL5R_HTTP_THREADS)
    if settings.SL5R_HTTP == "threads"
    else ArrivalStamped(get_asgi_application())
)
routed = ProtocolTypeRouter(
    {
        "http": http,
        "websocket": SameOriginValidator(
            # Channels' stubs want their own URLPattern subclass, which path() never returns.
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns)),  # type: ignore[arg-type]
        ),
    }
)

# Behind the load balancer (deploy/haproxy/haproxy.cfg) every connection comes from it: the
# client's address is taken from its X-Forwarded-For, for HTTP and websockets alike, but only
# on connections from SL5R_TRUSTED_PROXIES, so that nobody else can name his own address.
# (uvicorn and asgiref, whose types Channels' stubs use, declare the ASGI messages each in
# their own TypedDicts, which mypy does not match: hence the ignore.)
# R4: the balancer's stamp of when a request reached it is the order's arrival, taken from
# the same trusted proxies only (sl5r/serving/arrival.py); outside the forwarded-for step,
# which replaces the connection's address with the client's. Without a balancer no stamp is
# taken from any header: the kernel's stands.
application = (
    BalancerStamped(
        ProxyHeadersMiddleware(routed, trusted_hosts=settings.SL5R_TRUSTED_PROXIES),  # type: ignore[arg-type]
        trusted=settings.SL5R_TRUSTED_PROXIES,
    )
    if settings.SL5R_TRUSTED_PROXIES
    else routed
)
