"""What turnspec knows about each provider wire API, as data.

One frozen `WireApi` record per API (the way `referencing` makes a dialect one frozen
value): where its requests go, how its streams are framed, which tool ids it accepts,
what it can carry, and probes that locate those things in a request or response body.
The records are written from the providers' documentation, independently of any adapter,
so the suite can judge an adapter by them. `conformance.wire.registry` lists them; adding
a wire API is one module plus one registry line.
"""

from .api import Carries, Endpoint, Framing, Header, Located, ModelIn, Probes, ToolIdRule, WireApi

__all__ = ["Carries", "Endpoint", "Framing", "Header", "Located", "ModelIn", "Probes", "ToolIdRule", "WireApi"]
