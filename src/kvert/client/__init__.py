"""How components reach objects: the Client protocol, the in-process client, informers.

``InProcessClient`` is loaded when first asked for: it brings the whole write path with it
(registry, validation, admission, token signing), which a component that only names the
``Client`` protocol or runs informers over HTTP has no use for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvert.client.base import Client, WatchStream
from kvert.client.informer import Informer, Registration

if TYPE_CHECKING:
    from kvert.client.inprocess import InProcessClient

__all__ = ["Client", "WatchStream", "Informer", "InProcessClient", "Registration"]


def __getattr__(name: str) -> object:
    if name == "InProcessClient":
        from kvert.client.inprocess import InProcessClient
        return InProcessClient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
