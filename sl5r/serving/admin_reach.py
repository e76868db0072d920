"""The admin answers only from the networks the operator names (``SL5R_ADMIN_NETWORKS``).

Anywhere else a request under ``SL5R_ADMIN_PATH`` gets the site's 404, the answer for a
page that is not there: a phone on the venue's Wi-Fi learns nothing, not even that there is
an admin to guess passwords at. The address is the one the server saw (behind the balancer,
the client's, taken from ``X-Forwarded-For`` only on connections from a trusted proxy).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponseBase

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def address_within(address: str, networks: list[Network]) -> bool:
    """Whether ``address`` (``REMOTE_ADDR``) is in one of ``networks``; never for garbage."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip.version == network.version and ip in network for network in networks)


class AdminReachMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response
        self.prefix = f"/{settings.SL5R_ADMIN_PATH}" if settings.SL5R_ADMIN_PATH else ""
        self.networks: list[Network] = [
            ipaddress.ip_network(network, strict=False) for network in settings.SL5R_ADMIN_NETWORKS
        ]

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if (
            self.prefix
            and request.path.startswith(self.prefix)
            and not address_within(str(request.META.get("REMOTE_ADDR", "")), self.networks)
        ):
            raise Http404
        return self.get_response(request)
