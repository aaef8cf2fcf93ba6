"""Server-side apply (``application/apply-patch+yaml``) and ``metadata.managedFields``.

Every write records which *field manager* set which fields, as Kubernetes'
structured-merge-diff does, in ``metadata.managedFields``::

    {"manager": "kubectl", "operation": "Apply", "apiVersion": "apps/v1",
     "time": "2024-05-01T10:00:00Z", "fieldsType": "FieldsV1",
     "fieldsV1": {"f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers":
         {"k:{\\"name\\":\\"app\\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}}}

``f:<name>`` is a field, ``k:{...}`` an item of an associative list (``+listType=map``)
by its key fields, ``v:<json>`` a member of a set (``+listType=set``), ``.`` the node
itself when it also has children. List and map semantics come from
``kvert.api.patchmeta`` (and a custom resource's schema markers).

``server_side_apply`` merges an applied configuration into the live object: every field
of the configuration is set (associative lists merge by key, sets by value, atomic lists
and maps are replaced), fields the same manager applied before and no longer applies are
removed unless another manager owns them, and a field owned by another manager whose
value would change is a conflict (409, reason ``Conflict``, one ``FieldManagerConflict``
cause per field) unless ``force`` takes it over. Applying to a missing object creates it;
applying to an object nobody tracked yet first gives all its fields to an ``Update``
manager ``before-first-apply``, as Kubernetes does.
``update_managed_fields`` records an ordinary write (create, update, patch) as an
``Update`` manager: it takes ownership of what it changed, from whoever owned it.

Simplified, compared with Kubernetes:

* Field sets are version-independent (kvert serves one version per kind, and paths are
  the same across its versions); there is no conversion of managed fields.
* A ``null`` in an applied configuration removes the field and is not owned.
* Conflicts are detected on the merged result (fields whose value changes, appear or go)
  as structured-merge-diff does, but duplicate keys in associative lists are matched by
  their first occurrence rather than treated atomically.
* Maps and lists that pruning empties are removed (Go's omitempty would drop them).
* No ``ancient-changes`` cap on the number of ``Update`` managers; no interplay with
  ``kubectl.kubernetes.io/last-applied-configuration``.
* Reset fields are ``status`` for the main resource of kinds with a status subresource
  and everything but ``status`` for the status subresource.
* Key fields with a default (``protocol: TCP`` of ports) are filled in for matching, as
  Kubernetes does from the OpenAPI defaults; other missing key fields are an error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import yaml

from kvert.api import kinds
from kvert.api.errors import ApiError, BadRequest, Cause, Conflict, Invalid, required
from kvert.api.meta import deep_copy
from kvert.api.patchmeta import PatchMeta, patch_meta
from kvert.api.types import Obj

__all__ = ["server_side_apply", "update_managed_fields", "ApplyConflict", "parse_apply_body",
           "fields_to_v1", "fields_from_v1", "path_string", "manager_from_user_agent",
           "APPLY", "UPDATE", "BEFORE_FIRST_APPLY"]

APPLY = "Apply"
UPDATE = "Update"
FIELDS_V1 = "FieldsV1"
BEFORE_FIRST_APPLY = "before-first-apply"

Path = tuple[str, ...]  # path elements: 'f:spec', 'k:{"name":"app"}', 'v:"x"'
# a managedFields entry's identity: (manager, operation, subresource, apiVersion)
_EntryKey = tuple[str, str, str, str]

# Fields every object has that no manager owns (structured-merge-diff's strip set).
_STRIP: frozenset[Path] = frozenset({
    ("f:apiVersion",), ("f:kind",), ("f:metadata",),
    ("f:metadata", "f:name"), ("f:metadata", "f:namespace"),
    ("f:metadata", "f:creationTimestamp"), ("f:metadata", "f:selfLink"),
    ("f:metadata", "f:uid"), ("f:metadata", "f:clusterName"),
    ("f:metadata", "f:generation"), ("f:metadata", "f:managedFields"),
    ("f:metadata", "f:resourceVersion"),
})

# Key fields the OpenAPI schema defaults, so items omitting them still have a key.
_KEY_DEFAULTS: dict[str, Any] = {"protocol": "TCP"}

_MISSING: Any = object()


# ---- managed fields entries ----------------------------------------------------------------


@dataclass
class _Entry:
    manager: str
    operation: str
    api_version: str
    time: str | None
    subresource: str = ""
    fields: set[Path] = field(default_factory=set)

    @property
    def key(self) -> _EntryKey:
        # Appliers are one manager whatever version they apply (BuildManagerIdentifier).
        version = "" if self.operation == APPLY else self.api_version
        return (self.manager, self.operation, self.subresource, version)

    def encode(self) -> Obj:
        out: dict[str, Any] = {"manager": self.manager, "operation": self.operation,
                               "apiVersion": self.api_version}
        if self.time:
            out["time"] = self.time
        out["fieldsType"] = FIELDS_V1
        out["fieldsV1"] = fields_to_v1(self.fields)
        if self.subresource:
            out["subresource"] = self.subresource
        return out

    def describe(self) -> str:
        """The manager as Kubernetes names it in conflict messages (``printManager`` of the
        manager identifier, which carries no time): ``"kubectl-edit" using apps/v1``."""
        text = json.dumps(self.manager, ensure_ascii=False)
        if self.subresource:
            text += f" with subresource {json.dumps(self.subresource)}"
        if self.operation == UPDATE:
            text += f" using {self.api_version}"
        return text


def _decode_entries(obj: Obj | None, strict: bool = False) -> dict[_EntryKey, _Entry]:
    raw = ((obj or {}).get("metadata") or {}).get("managedFields")
    out: dict[_EntryKey, _Entry] = {}
    if not raw:
        return out
    try:
        if not isinstance(raw, list):
            raise ValueError("managedFields must be a list")
        for item in raw:
            if not isinstance(item, dict):
                raise ValueError("managedFields entries must be objects")
            operation = item.get("operation")
            if operation not in (APPLY, UPDATE):
                raise ValueError(f"unsupported operation {operation!r}")
            fields_type = item.get("fieldsType", FIELDS_V1)
            if fields_type != FIELDS_V1:
                raise ValueError(f"unsupported fieldsType {fields_type!r}")
            entry = _Entry(str(item.get("manager", "")), operation,
                           str(item.get("apiVersion", "")), item.get("time"),
                           str(item.get("subresource", "") or ""),
                           fields_from_v1(item.get("fieldsV1") or {}))
            if entry.key in out:
                out[entry.key].fields |= entry.fields
            else:
                out[entry.key] = entry
    except (ValueError, TypeError) as e:
        if strict:
            raise BadRequest(f"invalid managedFields: {e}") from e
        return {}  # as Kubernetes does with a broken record: start afresh
    return out


def _encode_entries(entries: Iterable[_Entry]) -> list[Obj]:
    ordered = sorted(entries, key=lambda e: (e.operation, e.time or "", e.manager,
                                             e.api_version, e.subresource))
    return [e.encode() for e in ordered]


def _pe_order(pe: str) -> tuple[int, str]:
    return ({"f:": 0, "k:": 1, "v:": 2, "i:": 3}.get(pe[:2], 4), pe)


def fields_to_v1(paths: Iterable[Path]) -> Obj:
    """A set of paths as a FieldsV1 object (``.`` marks members that have children)."""
    members = set(paths)
    tree: Obj = {}
    for path in members:
        node = tree
        for pe in path:
            node = node.setdefault(pe, {})

    def render(node: Obj, prefix: Path) -> Obj:
        out: Obj = {}
        if node and prefix in members:
            out["."] = {}
        for pe in sorted(node, key=_pe_order):
            out[pe] = render(node[pe], prefix + (pe,))
        return out

    return render(tree, ())


def fields_from_v1(fields: Obj, prefix: Path = ()) -> set[Path]:
    """The set of paths a FieldsV1 object names."""
    if not isinstance(fields, dict):
        raise ValueError("fieldsV1 must be an object")
    out: set[Path] = set()
    for pe, child in fields.items():
        if pe == ".":
            if prefix:
                out.add(prefix)
            continue
        if pe[:2] not in ("f:", "k:", "v:", "i:"):
            raise ValueError(f"invalid path element {pe!r}")
        path = prefix + (pe,)
        if not isinstance(child, dict):
            raise ValueError(f"invalid fieldsV1 value at {pe!r}")
        if child:
            out |= fields_from_v1(child, path)
        else:
            out.add(path)
    return out


def _value_string(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def path_string(path: Path) -> str:
    """A path as Kubernetes prints it: ``.spec.containers[name="app"].image``."""
    out = []
    for pe in path:
        kind, rest = pe[:2], pe[2:]
        if kind == "f:":
            out.append("." + rest)
        elif kind == "k:":
            keys = json.loads(rest)
            out.append("[" + ",".join(f"{k}={_value_string(v)}" for k, v in keys.items()) + "]")
        elif kind == "v:":
            out.append(f"[={_value_string(json.loads(rest))}]")
        else:
            out.append(f"[{rest}]")
    return "".join(out)


def _strip(paths: set[Path]) -> set[Path]:
    return {p for p in paths
            if p not in _STRIP and p[:2] != ("f:metadata", "f:managedFields")}


def manager_from_user_agent(user_agent: str) -> str:
    """The default field manager of a request without ``fieldManager``: the user agent up
    to the first ``/`` (``kubectl/v1.30.0 (linux/amd64) ...`` -> ``kubectl``), at most 128
    characters."""
    return (user_agent or "").split("/", 1)[0][:128]


# ---- the typed walk ----------------------------------------------------------------------


@dataclass
class _Comparison:
    added: set[Path] = field(default_factory=set)
    modified: set[Path] = field(default_factory=set)
    removed: set[Path] = field(default_factory=set)

    def changed(self) -> set[Path]:
        return self.added | self.modified | self.removed


class _Typed:
    """Walks objects of one kind with its list and map semantics."""

    def __init__(self, api_version: str, kind: str):
        self.api_version, self.kind = api_version, kind
        self._meta: dict[tuple[str, ...], PatchMeta] = {}

    def meta(self, fpath: tuple[str, ...]) -> PatchMeta:
        found = self._meta.get(fpath)
        if found is None:
            found = self._meta[fpath] = patch_meta(self.api_version, self.kind, fpath)
        return found

    @staticmethod
    def node_kind(value: Any, meta: PatchMeta) -> str:
        if isinstance(value, dict):
            return "atomic" if meta.map_type == "atomic" else "map"
        if isinstance(value, list):
            if meta.list_type == "map" and all(isinstance(i, dict) for i in value):
                return "assoc"
            if meta.list_type == "set" and not any(isinstance(i, (dict, list)) for i in value):
                return "set"
            return "atomic"
        return "scalar"

    def item_pe(self, item: Any, meta: PatchMeta, path: Path) -> str:
        if meta.list_type == "set":
            return "v:" + json.dumps(item, separators=(",", ":"), ensure_ascii=False)
        keys = meta.list_map_keys or ((meta.merge_key,) if meta.merge_key else ())
        values: dict[str, Any] = {}
        for key in keys:
            if item.get(key) is not None:
                values[key] = item[key]
            elif key in _KEY_DEFAULTS:
                values[key] = _KEY_DEFAULTS[key]
            else:
                raise BadRequest(f"{path_string(path) or '.'}: associative list with keys has an "
                                 f"element that omits key field {json.dumps(key)} (and doesn't "
                                 "have default value)")
        return "k:" + json.dumps(values, sort_keys=True, separators=(",", ":"),
                                 ensure_ascii=False)

    def items(self, value: list[Any], meta: PatchMeta, path: Path) -> list[tuple[str, Any]]:
        return [(self.item_pe(item, meta, path), item) for item in value]

    # -- the set of fields a value sets (ToFieldSet) ----------------------------------------

    def field_set(self, value: Any, path: Path = (), fpath: tuple[str, ...] = (),
                  out: set[Path] | None = None) -> set[Path]:
        out = set() if out is None else out
        kind = self.node_kind(value, self.meta(fpath))
        if kind in ("scalar", "atomic"):
            if path:
                out.add(path)
        elif kind == "map":
            for key, child in value.items():
                if child is not None:
                    self.field_set(child, path + ("f:" + key,), fpath + (key,), out)
        else:
            for pe, item in self.items(value, self.meta(fpath), path):
                out.add(path + (pe,))
                if kind == "assoc":
                    self.field_set(item, path + (pe,), fpath, out)
        return out

    # -- comparing two values (added / modified / removed paths) -----------------------------

    def compare(self, lhs: Any, rhs: Any) -> _Comparison:
        result = _Comparison()
        self._compare(lhs, rhs, (), (), result)
        return result

    def _compare(self, lhs: Any, rhs: Any, path: Path, fpath: tuple[str, ...],
                 res: _Comparison) -> None:
        meta = self.meta(fpath)
        lk = None if lhs is _MISSING else self.node_kind(lhs, meta)
        rk = None if rhs is _MISSING else self.node_kind(rhs, meta)
        kind = lk or rk
        leaf = kind in ("scalar", "atomic") or (lk and rk and lk != rk)
        if not leaf and _empty(lhs) and _empty(rhs):
            leaf = True  # both empty or absent: a leaf, keeping empty distinct from absent
        if leaf:
            if not path:
                return
            if lhs is _MISSING:
                res.added.add(path)
            elif rhs is _MISSING:
                res.removed.add(path)
            elif lhs != rhs:
                res.modified.add(path)
            return
        if kind == "map":
            lm = lhs if lk == "map" else {}
            rm = rhs if rk == "map" else {}
            for key in list(lm) + [k for k in rm if k not in lm]:
                lv, rv = lm.get(key, _MISSING), rm.get(key, _MISSING)
                lv = _MISSING if lv is None else lv
                rv = _MISSING if rv is None else rv
                if lv is _MISSING and rv is _MISSING:
                    continue
                self._compare(lv, rv, path + ("f:" + key,), fpath + (key,), res)
        else:
            left = _first(self.items(lhs, meta, path)) if lk else {}
            right = _first(self.items(rhs, meta, path)) if rk else {}
            for pe in list(left) + [p for p in right if p not in left]:
                self._compare(left.get(pe, _MISSING), right.get(pe, _MISSING),
                              path + (pe,), fpath, res)
        if path:
            if lhs is _MISSING:
                res.added.add(path)
            elif rhs is _MISSING:
                res.removed.add(path)

    # -- merging an applied configuration into a live object --------------------------------

    def merge(self, lhs: Any, rhs: Any, fpath: tuple[str, ...] = ()) -> Any:
        meta = self.meta(fpath)
        rk = self.node_kind(rhs, meta)
        if lhs is _MISSING or lhs is None or self.node_kind(lhs, meta) != rk:
            return _clean(rhs)
        if rk == "map":
            out = dict(lhs)
            for key, value in rhs.items():
                if value is None:
                    out.pop(key, None)
                else:
                    out[key] = self.merge(lhs.get(key, _MISSING), value, fpath + (key,))
            return out
        if rk in ("assoc", "set"):
            return self._merge_list(lhs, rhs, meta, fpath)
        return deep_copy(rhs)

    def _merge_list(self, lhs: list[Any], rhs: list[Any], meta: PatchMeta,
                    fpath: tuple[str, ...]) -> list[Any]:
        """structured-merge-diff's order: the configuration's items in its order, live-only
        items kept where they were relative to the shared ones."""
        lpes = self.items(lhs, meta, ())
        rpes: list[tuple[str, Any]] = []
        for pe, item in self.items(rhs, meta, ()):
            if all(pe != seen for seen, _ in rpes):
                rpes.append((pe, item))
        lmap, rmap = _first(lpes), dict(rpes)
        shared = iter([pe for pe, _ in rpes if pe in lmap])
        next_shared = next(shared, None)
        done: set[str] = set()
        out: list[Any] = []

        def take(pe: str) -> Any:
            if meta.list_type == "set":
                return deep_copy(rmap[pe])
            return self.merge(lmap.get(pe, _MISSING), rmap[pe], fpath)

        li = ri = 0
        while li < len(lpes) or ri < len(rpes):
            if li < len(lpes) and ri < len(rpes):
                pe = lpes[li][0]
                if pe == rpes[ri][0]:
                    done.add(pe)
                    out.append(take(pe))
                    li, ri = li + 1, ri + 1
                    next_shared = next(shared, None)
                    continue
                if pe in rmap and next_shared is not None and next_shared != pe:
                    li += 1
                    continue
            if li < len(lpes):
                pe, item = lpes[li]
                if pe not in rmap:
                    out.append(deep_copy(item))
                    li += 1
                    continue
                if pe in done:
                    li += 1
                    continue
            if ri < len(rpes):
                pe = rpes[ri][0]
                done.add(pe)
                out.append(take(pe))
                ri += 1
                if next_shared is not None and next_shared == pe:
                    next_shared = next(shared, None)
        return out

    # -- removing a path ----------------------------------------------------------------------

    def remove(self, obj: Obj, path: Path) -> None:
        """Remove the field or list item at ``path``, and maps and lists it leaves empty."""
        trail: list[tuple[Any, Any]] = []  # (container, key-or-index) down to the target
        node: Any = obj
        fpath: tuple[str, ...] = ()
        for pe in path:
            if pe.startswith("f:"):
                if not isinstance(node, dict) or pe[2:] not in node:
                    return
                trail.append((node, pe[2:]))
                fpath += (pe[2:],)
                node = node[pe[2:]]
            else:
                if not isinstance(node, list):
                    return
                meta = self.meta(fpath)
                index = None
                for i, item in enumerate(node):
                    try:
                        if self.item_pe(item, meta, ()) == pe:
                            index = i
                            break
                    except (BadRequest, AttributeError):
                        continue
                if index is None:
                    return
                trail.append((node, index))
                node = node[index]
        if not trail:
            return
        container, key = trail.pop()
        if isinstance(container, list):
            meta = self.meta(fpath)
            container[:] = [item for item in container if not _item_is(self, item, meta, pe)]
        else:
            del container[key]
        while trail and not container:  # an emptied map or list goes too (omitempty)
            parent, key = trail.pop()
            if isinstance(parent, list):
                break
            del parent[key]
            container = parent


def _item_is(typed: _Typed, item: Any, meta: PatchMeta, pe: str) -> bool:
    try:
        return typed.item_pe(item, meta, ()) == pe
    except (BadRequest, AttributeError):
        return False


def _first(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pe, item in pairs:
        out.setdefault(pe, item)
    return out


def _empty(value: Any) -> bool:
    return value is _MISSING or value is None or (isinstance(value, (dict, list)) and not value)


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _without_managed_fields(obj: Obj) -> Obj:
    out: Obj = deep_copy(obj)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    return out


def _zero_object(like: Obj) -> Obj:
    """What Kubernetes compares a created object with: its Go zero value, in which the
    top-level structs (metadata, spec, status) exist but are empty."""
    return {k: {} for k, v in like.items() if isinstance(v, dict)}


# ---- parsing --------------------------------------------------------------------------------


class _Loader(yaml.SafeLoader):
    """YAML as Kubernetes reads it into JSON: timestamps stay strings."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _json_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k) if not isinstance(k, bool) else str(k).lower(): _json_keys(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_json_keys(v) for v in value]
    return value


def parse_apply_body(body: Any) -> Obj:
    """An apply configuration from YAML or JSON text (or an already decoded object)."""
    if isinstance(body, (bytes, bytearray)):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError as e:
            raise BadRequest(f"error decoding YAML: {e}") from e
    if isinstance(body, str):
        try:
            body = yaml.load(body, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
        except yaml.YAMLError as e:
            raise BadRequest(f"error decoding YAML: {e}") from e
        body = _json_keys(body)
    else:
        body = deep_copy(body)
    if not isinstance(body, dict):
        raise BadRequest("error decoding YAML: the apply configuration must be an object")
    return body


# ---- conflicts ------------------------------------------------------------------------------


# lastAppliedManager upgrades client-side-applied objects for this manager only (kubectl
# --server-side's default field manager)
KUBECTL_APPLY_MANAGER = "kubectl"
LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"


class ApplyConflict(Conflict):
    """409 Conflict: the apply would change fields other managers own."""

    def __init__(self, conflicts: list[tuple[_Entry, Path]]):
        causes = [Cause(path_string(path), f"conflict with {entry.describe()}",
                        "FieldManagerConflict") for entry, path in conflicts]
        if len(conflicts) == 1:
            entry, path = conflicts[0]
            message = (f"Apply failed with 1 conflict: conflict with {entry.describe()}: "
                       f"{path_string(path)}")
        else:
            lines: list[str] = []
            by_manager: dict[_EntryKey, list[Path]] = {}
            entries: dict[_EntryKey, _Entry] = {}
            for entry, path in conflicts:
                by_manager.setdefault(entry.key, []).append(path)
                entries[entry.key] = entry
            for key in sorted(by_manager):
                lines.append(f"conflicts with {entries[key].describe()}:")
                lines.extend(f"- {path_string(p)}" for p in by_manager[key])
            message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
        ApiError.__init__(self, message, 409, "Conflict", {}, causes)


# ---- apply ------------------------------------------------------------------------------------


def _has_status_subresource(api_version: str, kind: str) -> bool:
    try:
        return kinds.by_gvk(api_version, kind).has_status
    except KeyError:
        return False


def _reset_fields(config: Obj, api_version: str, kind: str, subresource: str) -> Obj:
    if subresource == "status":
        meta = config.get("metadata")
        if not isinstance(meta, dict):
            meta = {}
        kept = {k: meta[k] for k in ("name", "namespace") if k in meta}
        out: Obj = {k: config[k] for k in ("apiVersion", "kind") if k in config}
        if kept:
            out["metadata"] = kept
        if "status" in config:
            out["status"] = config["status"]
        return out
    if not subresource and "status" in config and _has_status_subresource(api_version, kind):
        config = dict(config)
        del config["status"]
    return config


def server_side_apply(live: Obj | None, applied: Any, manager: str, force: bool,
                      api_version: str, kind: str, now: str | None, *,
                      subresource: str = "") -> Obj:
    """Apply a configuration for ``manager``; return the new object (``live`` unchanged).

    ``live`` is None to create. ``applied`` is YAML/JSON text or a decoded object. Raises
    ``ApplyConflict`` (409) when fields owned by other managers would change and ``force``
    is false, ``BadRequest`` for a malformed configuration, ``Invalid`` without a manager.
    """
    if not manager:
        raise Invalid("PatchOptions", "", [required("fieldManager", "is required for apply patch")],
                      group="meta.k8s.io")
    config = parse_apply_body(applied)
    if config.get("apiVersion") != api_version:
        raise BadRequest("Incorrect version specified in apply patch. Specified patch version: "
                         f"{config.get('apiVersion', '')}, expected: {api_version}")
    if config.get("kind") != kind:
        raise BadRequest("Incorrect kind specified in apply patch. Specified patch kind: "
                         f"{config.get('kind', '')}, expected: {kind}")
    meta = config.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise BadRequest("metadata must be an object")
    if isinstance(meta, dict) and meta.get("managedFields") is not None:
        raise BadRequest("metadata.managedFields must be nil")
    config = _reset_fields(config, api_version, kind, subresource)

    typed = _Typed(api_version, kind)
    base = _without_managed_fields(live) if live is not None else {}
    entries = _decode_entries(live)
    if live is not None and not entries:
        # An object nobody has tracked yet: its fields belong to "before-first-apply".
        owned = _strip(typed.compare(_zero_object(base), base).added)
        if owned:
            first = _Entry(BEFORE_FIRST_APPLY, UPDATE, api_version, now, "", owned)
            entries[first.key] = first

    mine = _Entry(manager, APPLY, api_version, now, subresource)
    previous = entries.get(mine.key)
    config_set = _strip(typed.field_set(config))
    merged: Obj = typed.merge(base, config)   # two objects merge into an object

    # Fields applied before and no longer applied go, unless someone else still owns them.
    others: set[Path] = set()
    for key, entry in entries.items():
        if key != mine.key:
            others |= entry.fields
    if previous is not None:
        for path in sorted(previous.fields - config_set, key=len):
            if any(p[:len(path)] == path for p in others) or \
                    any(p[:len(path)] == path for p in config_set):
                continue
            typed.remove(merged, path)

    comparison = typed.compare(base, merged)
    changed = comparison.changed()
    conflicts: list[tuple[_Entry, Path]] = []
    for key, entry in entries.items():
        if key == mine.key:
            continue
        for path in sorted(entry.fields & changed, key=_path_order):
            conflicts.append((entry, path))
    if conflicts and not force:
        # kubectl's first server-side apply of an object it applied client-side: conflicts
        # on fields its last-applied configuration set are its own (lastAppliedManager)
        allowed = _last_applied_fields(live, typed) if manager == KUBECTL_APPLY_MANAGER else set()
        remaining = [(entry, path) for entry, path in conflicts if path not in allowed]
        if remaining:
            raise ApplyConflict(remaining)
    for key, entry in list(entries.items()):
        if key == mine.key:
            continue
        entry.fields -= changed
        if not entry.fields:
            del entries[key]

    object_changed = merged != base
    if previous is not None and not object_changed:
        mine.time = previous.time
    mine.fields = config_set
    entries[mine.key] = mine
    merged.setdefault("metadata", {})["managedFields"] = _encode_entries(entries.values())
    if live is None:
        merged.setdefault("apiVersion", api_version)
        merged.setdefault("kind", kind)
    return merged


def _last_applied_fields(live: Obj | None, typed: _Typed) -> set[Path]:
    """The fields of the ``kubectl.kubernetes.io/last-applied-configuration`` annotation's
    object (none when it is missing or unreadable)."""
    annotations = ((live or {}).get("metadata") or {}).get("annotations") or {}
    text = annotations.get(LAST_APPLIED_ANNOTATION)
    if not isinstance(text, str) or not text:
        return set()
    try:
        last_applied = json.loads(text)
    except ValueError:
        return set()
    if not isinstance(last_applied, dict):
        return set()
    try:
        return set(typed.field_set(last_applied))
    except ApiError:
        return set()


def _path_order(path: Path) -> tuple[Any, ...]:
    return tuple(_pe_order(pe) for pe in path)


# ---- ordinary writes ---------------------------------------------------------------------------


def update_managed_fields_no_errors(old: Obj | None, new: Obj, manager: str, **options: Any) -> Obj:
    """``FieldManager.UpdateNoErrors``: as :func:`update_managed_fields`, but an object whose
    fields cannot be tracked (a list item without its merge key) keeps going with its
    managedFields cleared, so validation answers for it (422, not a field-manager 400)."""
    try:
        return update_managed_fields(old, new, manager, **options)
    except ApiError:
        result: Obj = deep_copy(new)
        (result.get("metadata") or {}).pop("managedFields", None)
        return result


def update_managed_fields(old: Obj | None, new: Obj, manager: str, operation: str = UPDATE,
                          *, now: str | None = None, subresource: str = "") -> Obj:
    """Record a create, update or patch by ``manager`` in ``new``'s managedFields.

    ``old`` is the stored object (None on create). The manager takes ownership of every
    field the write added or changed, from whoever owned it; fields the write removed
    leave every manager. A client that sends managedFields different from the stored ones
    sets them itself (an empty list clears them), as in Kubernetes. Returns a new dict.
    """
    result: Obj = deep_copy(new)
    meta = result.setdefault("metadata", {})
    old_managed = ((old or {}).get("metadata") or {}).get("managedFields")
    sent = meta.get("managedFields")
    if "managedFields" in meta and sent != old_managed:
        if not sent:
            meta.pop("managedFields", None)
            return result
        meta["managedFields"] = _encode_entries(
            _decode_entries({"metadata": {"managedFields": sent}}, strict=True).values())
        return result

    api_version = result.get("apiVersion") or (old or {}).get("apiVersion", "")
    kind = result.get("kind") or (old or {}).get("kind", "")
    typed = _Typed(api_version, kind)
    entries = _decode_entries(old) if old is not None else {}
    after = _without_managed_fields(result)
    before = _without_managed_fields(old) if old is not None else _zero_object(after)
    comparison = typed.compare(before, after)
    taken = _strip(comparison.added | comparison.modified)
    for key, entry in list(entries.items()):
        entry.fields -= taken
        entry.fields -= comparison.removed
        if not entry.fields:
            del entries[key]
    if taken:
        entry = _Entry(manager or "unknown", operation, api_version, now, subresource)
        previous = entries.get(entry.key)
        entry.fields = taken | (previous.fields if previous else set())
        entries[entry.key] = entry
    if entries:
        meta["managedFields"] = _encode_entries(entries.values())
    else:
        meta.pop("managedFields", None)
    return result
