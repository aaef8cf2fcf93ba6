"""An authenticated user, as Kubernetes' ``user.Info``."""

from __future__ import annotations

from dataclasses import dataclass, field

# Groups Kubernetes gives every authenticated user, and the group that bypasses authorization.
AUTHENTICATED = "system:authenticated"
MASTERS = "system:masters"


@dataclass(frozen=True)
class User:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = field(default=())   # sorted (key, values)

    def extra_dict(self) -> dict[str, list[str]]:
        return {k: list(v) for k, v in self.extra}
