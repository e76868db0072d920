"""The JSON API's endpoints: thin handlers that check who asks and call a service.

One module per resource, each with its router and its tag (``access``, ``set-up``,
``players`` …); ``router`` gathers them for ``sl5r.api``. What they share (who asks, the
refusals every operation documents) is ``common``.

Who may call what is said in each endpoint's summary. The game's decisions (is the order
legal, is it late, may the line-up start) are the services'; their refusals come back as
``{"detail", "code"}`` with the status ``sl5r.api_errors`` gives their code (``sl5r.api``
installs the handlers).
"""

from __future__ import annotations

from ninja import Router

from referees.api import (
    access,
    calls,
    checkin,
    clock,
    corrections,
    judges,
    messages,
    orders,
    players,
    reading,
    setup,
    start,
)

router = Router()
# In the order of the document's sections (and of the former single module).
for resource in (
    access,
    setup,
    players,
    checkin,
    start,
    clock,
    orders,
    corrections,
    reading,
    messages,
    calls,
    judges,
):
    router.add_router("", resource.router)
