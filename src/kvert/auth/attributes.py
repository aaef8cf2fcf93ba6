"""What an authorizer is asked: Kubernetes' ``authorizer.Attributes`` and its decision."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from kvert.auth.user import User


class Decision(enum.Enum):
    ALLOW = "Allow"
    DENY = "Deny"
    NO_OPINION = "NoOpinion"


@dataclass(frozen=True)
class Attributes:
    user: User
    verb: str                   # get list watch create update patch delete deletecollection ...
    resource_request: bool = True
    namespace: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    path: str = ""              # for non-resource requests (/api, /healthz, ...)
    field_selector: str = ""    # of a list/watch/deletecollection, as the request sent it
