"""Who is asking and what they may do: authentication (static tokens, service-account
tokens) and authorization (RBAC, the Node authorizer), shared by the API server and the
in-process client.

This layer sits above the store and below the registry: it reads RBAC objects and pods
from the store, and nothing below it knows it exists.
"""

from kvert.auth.attributes import Attributes, Decision
from kvert.auth.user import User

__all__ = ["Attributes", "Decision", "User"]
