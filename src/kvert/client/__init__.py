"""How components reach objects: the Client protocol, the in-process client, informers."""

from kvert.client.base import Client, WatchStream
from kvert.client.informer import Informer, Registration
from kvert.client.inprocess import InProcessClient

__all__ = ["Client", "WatchStream", "Informer", "InProcessClient", "Registration"]
