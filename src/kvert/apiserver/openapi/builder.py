"""OpenAPI documents of the served types: v2 (``/openapi/v2``) and v3 (``/openapi/v3``).

The documents follow what kube-apiserver publishes, because clients rely on the details:

* kubectl explain reads the v3 document of a group version, finds the schema whose
  ``x-kubernetes-group-version-kind`` names the kind and walks ``properties`` through
  ``$ref`` / ``allOf``;
* kubectl create/apply/replace look for a ``fieldValidation`` query parameter on a PATCH
  operation carrying the kind's ``x-kubernetes-group-version-kind``: found, validation is
  left to the server (``?fieldValidation=Strict``); missing, kubectl validates on the
  client with the v2 document instead;
* client-side apply computes strategic merge patches from ``x-kubernetes-patch-strategy``
  and ``x-kubernetes-patch-merge-key`` (when the PATCH operation accepts
  ``application/strategic-merge-patch+json``, which custom resources do not).

Documents are cached per set of types (custom resources come and go). The returned dicts are
shared: treat them as read-only, or use the ``*_json`` functions for ready-made bytes.
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from kvert.api import kinds as kinds_mod
from kvert.api import patchmeta
from kvert.api.kindspecs import BUILTIN_KINDS

from . import proto
from . import schemas as S

V3_REF = "#/components/schemas/"
V2_REF = "#/definitions/"

PATCH_TYPES = ("application/apply-patch+yaml", "application/json-patch+json",
               "application/merge-patch+json", "application/strategic-merge-patch+json")
RESPONSE_TYPES = ("application/json", "application/yaml")
WATCH_RESPONSE_TYPES = ("application/json", "application/json;stream=watch", "application/yaml")

STATUS = "io.k8s.apimachinery.pkg.apis.meta.v1.Status"
DELETE_OPTIONS = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"
WATCH_EVENT = "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent"
PATCH = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
API_RESOURCE_LIST = "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList"
API_GROUP = "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup"
API_GROUP_LIST = "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList"
API_VERSIONS = "io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions"
VERSION_INFO = "io.k8s.apimachinery.pkg.version.Info"
SCALE = "io.k8s.api.autoscaling.v1.Scale"
EVICTION = "io.k8s.api.policy.v1.Eviction"
BINDING = "io.k8s.api.core.v1.Binding"
TOKEN_REQUEST = "io.k8s.api.authentication.v1.TokenRequest"

# Schemas of types Kubernetes marshals as scalars.
_SCALAR_DEFS_V3: dict[str, dict[str, Any]] = {
    S.QUANTITY: {
        "description": "A fixed-point decimal number with an optional suffix: a binary SI "
                       "(Ki, Mi, Gi, Ti, Pi, Ei), decimal SI (m, k, M, G, T, P, E) or decimal "
                       "exponent (e3) form, for example 500m, 1.5, 128Mi, 1e3. Serialized as a "
                       "string in canonical form.",
        "oneOf": [{"type": "string"}, {"type": "number"}],
    },
    S.INT_OR_STRING: {
        "description": "A value that is either an integer or a string, for example a port "
                       "number or name, or a count or percentage.",
        "format": "int-or-string",
        "oneOf": [{"type": "integer"}, {"type": "string"}],
    },
    S.TIME: {"description": "A timestamp in RFC 3339 form with second precision, in UTC.",
             "format": "date-time", "type": "string"},
    S.MICRO_TIME: {"description": "A timestamp in RFC 3339 form with microsecond precision.",
                   "format": "date-time", "type": "string"},
}
_SCALAR_DEFS_V2: dict[str, dict[str, Any]] = {
    S.QUANTITY: {"description": _SCALAR_DEFS_V3[S.QUANTITY]["description"], "type": "string"},
    S.INT_OR_STRING: {"description": _SCALAR_DEFS_V3[S.INT_OR_STRING]["description"],
                      "format": "int-or-string", "type": "string"},
    S.TIME: _SCALAR_DEFS_V3[S.TIME],
    S.MICRO_TIME: _SCALAR_DEFS_V3[S.MICRO_TIME],
}
_SCALAR_REFS = {"qty": S.QUANTITY, "ios": S.INT_OR_STRING, "time": S.TIME,
                "microtime": S.MICRO_TIME}
_FORMATS = {"int32": ("integer", "int32"), "int64": ("integer", "int64"),
            "double": ("number", "double"), "bytes": ("string", "byte")}

# Definitions with fixed group-version-kinds (not served resources themselves).
_FIXED_GVKS = {
    SCALE: [("autoscaling", "v1", "Scale")],
    EVICTION: [("policy", "v1", "Eviction")],
    BINDING: [("", "v1", "Binding")],
    TOKEN_REQUEST: [("authentication.k8s.io", "v1", "TokenRequest")],
    STATUS: [("", "v1", "Status")],
    API_RESOURCE_LIST: [("", "v1", "APIResourceList")],
    API_GROUP: [("", "v1", "APIGroup")],
    API_GROUP_LIST: [("", "v1", "APIGroupList")],
    API_VERSIONS: [("", "v1", "APIVersions")],
}

# Subresources: verbs, the definition they read and write, and its kind.
_SUBRESOURCES = {
    "status": (("get", "patch", "update"), None),
    "resize": (("get", "patch", "update"), None),
    "ephemeralcontainers": (("get", "patch", "update"), None),
    "scale": (("get", "patch", "update"), SCALE),
    "binding": (("create",), BINDING),
    "eviction": (("create",), EVICTION),
    "token": (("create",), TOKEN_REQUEST),
    "log": (("get",), "text"),
    "exec": (("get", "create"), "connect"),
    "attach": (("get", "create"), "connect"),
    "portforward": (("get", "create"), "connect"),
}


def _gvk_ext(group: str, version: str, kind: str) -> dict:
    return {"group": group, "kind": kind, "version": version}


def _q(name: str, typ: str, desc: str) -> tuple[str, str, str]:
    return (name, typ, desc)


_P = {
    "allowWatchBookmarks": _q("allowWatchBookmarks", "boolean",
                              "Ask for BOOKMARK watch events, which carry only a resourceVersion. "
                              "Ignored if this is not a watch."),
    "continue": _q("continue", "string",
                   "The continue token of a previous list response with the same query, to "
                   "fetch the next page. An expired token is answered with 410 Gone."),
    "dryRun": _q("dryRun", "string",
                 "When set to All, the request is fully processed (defaulting, admission, "
                 "validation) but nothing is persisted."),
    "fieldManager": _q("fieldManager", "string",
                       "Name of the actor making the change, recorded in managedFields. Required "
                       "for apply patches."),
    "fieldSelector": _q("fieldSelector", "string",
                        "Restrict the returned objects by their fields, for example "
                        "spec.nodeName=node-1,status.phase!=Running."),
    "fieldValidation": _q("fieldValidation", "string",
                          "How the server treats unknown and duplicate fields in the request "
                          "body: Ignore drops them, Warn drops them and returns a warning header "
                          "per field (the default), Strict rejects the request with 400 "
                          "BadRequest listing them."),
    "force": _q("force", "boolean",
                "For apply patches: take ownership of fields managed by others instead of "
                "failing with a conflict. Must be unset for other patch types."),
    "gracePeriodSeconds": _q("gracePeriodSeconds", "integer",
                             "Seconds before the object is deleted; 0 deletes immediately, unset "
                             "uses the default of the kind."),
    "labelSelector": _q("labelSelector", "string",
                        "Restrict the returned objects by their labels, for example "
                        "app=web,tier in (frontend,backend). Defaults to everything."),
    "limit": _q("limit", "integer",
                "Maximum number of items to return. When more exist, the list metadata carries "
                "a continue token for the next page; all pages come from one snapshot."),
    "orphanDependents": _q("orphanDependents", "boolean",
                           "Deprecated: use propagationPolicy."),
    "propagationPolicy": _q("propagationPolicy", "string",
                            "How dependents are garbage collected: Orphan, Background or "
                            "Foreground."),
    "resourceVersion": _q("resourceVersion", "string",
                          "Constrains which resource version the response may be served from; "
                          "for a watch, the version to start after."),
    "resourceVersionMatch": _q("resourceVersionMatch", "string",
                               "How resourceVersion applies to a list: Exact or NotOlderThan."),
    "sendInitialEvents": _q("sendInitialEvents", "boolean",
                            "With watch=true: start the stream with ADDED events for the current "
                            "objects, then a BOOKMARK annotated "
                            "k8s.io/initial-events-end=true. Requires "
                            "resourceVersionMatch=NotOlderThan."),
    "timeoutSeconds": _q("timeoutSeconds", "integer",
                         "Timeout of the list or watch call, regardless of activity."),
    "watch": _q("watch", "boolean",
                "Watch for changes instead of listing: the response is a stream of ADDED, "
                "MODIFIED, DELETED, BOOKMARK and ERROR events. Specify resourceVersion to start "
                "after a known version."),
    "pretty": _q("pretty", "string", "If 'true', the output is pretty printed."),
    "container": _q("container", "string",
                    "The container to read logs of, or to run in; optional for single-container "
                    "pods."),
    "command": _q("command", "string", "The command to run, one parameter per argument."),
    "stdin": _q("stdin", "boolean", "Redirect the standard input stream of the process."),
    "stdout": _q("stdout", "boolean", "Redirect the standard output stream (default true)."),
    "stderr": _q("stderr", "boolean", "Redirect the standard error stream (default true)."),
    "tty": _q("tty", "boolean", "Allocate a terminal for the process."),
    "ports": _q("ports", "integer", "The pod ports to forward (WebSocket channel protocol)."),
    "follow": _q("follow", "boolean", "Follow the log stream."),
    "limitBytes": _q("limitBytes", "integer", "Maximum number of bytes to return."),
    "previous": _q("previous", "boolean", "Logs of the previous, terminated container run."),
    "sinceSeconds": _q("sinceSeconds", "integer", "Only logs newer than this many seconds."),
    "tailLines": _q("tailLines", "integer", "Number of lines from the end of the log to show."),
    "timestamps": _q("timestamps", "boolean", "Prefix every line with an RFC 3339 timestamp."),
}

_LIST_PARAMS = ("allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit",
                "resourceVersion", "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds",
                "watch")
_WRITE_PARAMS = ("dryRun", "fieldManager", "fieldValidation")
_PATCH_PARAMS = ("dryRun", "fieldManager", "fieldValidation", "force")
_DELETE_PARAMS = ("dryRun", "gracePeriodSeconds", "orphanDependents", "propagationPolicy")
_DELETECOLLECTION_PARAMS = ("continue", "dryRun", "fieldSelector", "gracePeriodSeconds",
                            "labelSelector", "limit", "orphanDependents", "propagationPolicy",
                            "resourceVersion", "resourceVersionMatch", "sendInitialEvents",
                            "timeoutSeconds")
_LOG_PARAMS = ("container", "follow", "limitBytes", "previous", "sinceSeconds", "tailLines",
               "timestamps")
# the streaming subresources: connect verbs, GET (WebSocket) and POST (SPDY)
_CONNECT_PARAMS = {"exec": ("command", "container", "stderr", "stdin", "stdout", "tty"),
                   "attach": ("container", "stderr", "stdin", "stdout", "tty"),
                   "portforward": ("ports",)}


# -- type list and cache key ------------------------------------------------------------------

def expand_types(types: Iterable) -> list:
    """The types, plus every other registered version of their resources, deterministically
    ordered. ``kinds.all_types()`` lists one version per resource; documents describe all."""
    found: dict[tuple[str, str, str], Any] = {}
    for rt in types:
        found[(rt.group, rt.version, rt.kind)] = rt
    for rt in list(found.values()):
        try:
            others = kinds_mod.versions_of(rt.key)
        except Exception:  # pragma: no cover - defensive: a foreign registry
            others = []
        for other in others:
            found.setdefault((other.group, other.version, other.kind), other)
    return [found[k] for k in sorted(found)]


def fingerprint(types: Iterable) -> tuple:
    out = []
    for rt in types:
        schema = json.dumps(rt.schema, sort_keys=True) if rt.schema is not None else None
        out.append((rt.group, rt.version, rt.kind, rt.plural, rt.namespaced,
                    tuple(sorted(rt.subresources)), tuple(rt.short_names),
                    tuple(rt.categories), tuple(rt.verbs), schema))
    return tuple(out)


_CACHE: OrderedDict[tuple, _Model] = OrderedDict()
_CACHE_SIZE = 8
_LOCK = threading.Lock()


def _model(types: Iterable) -> _Model:
    expanded = expand_types(types)
    key = fingerprint(expanded)
    with _LOCK:
        model = _CACHE.get(key)
        if model is not None:
            _CACHE.move_to_end(key)
            return model
    model = _Model(expanded)
    with _LOCK:
        _CACHE[key] = model
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return model


# -- public interface ----------------------------------------------------------------------

def openapi_v2(types) -> dict:
    """The swagger 2.0 document of every served type (``GET /openapi/v2``)."""
    return _model(types).v2()


def openapi_v2_json(types) -> bytes:
    """``openapi_v2`` serialized (compact JSON, UTF-8)."""
    return _model(types).v2_json()


def openapi_v2_protobuf(types) -> bytes:
    """``openapi_v2`` as gnostic's ``openapi.v2.Document`` protobuf, the only form kubectl asks
    for (``application/com.github.proto-openapi.spec.v2@v1.0+protobuf``)."""
    return _model(types).v2_protobuf()


def openapi_v3_index(types) -> dict:
    """The ``/openapi/v3`` discovery document: one entry per document, each with a
    ``serverRelativeURL`` carrying the SHA-512 of the document (uppercase hex)."""
    return _model(types).index()


def openapi_v3_document(types, path: str) -> dict | None:
    """The OpenAPI 3.0 document at ``/openapi/v3/<path>`` ("api/v1", "apis/apps/v1", ...), or
    None if there is no such document."""
    return _model(types).v3(path.strip("/"))


def openapi_v3_json(types, path: str) -> tuple[bytes, str] | None:
    """The serialized v3 document at ``path`` and its hash (the index's ``hash=`` value)."""
    return _model(types).v3_json(path.strip("/"))


# A built-in kind's definition is the one its KindSpec (kvert.api.kindspecs) names; any
# other type's follows Kubernetes' naming rule (S.kind_definition, which gives the same names
# for the built-ins: tests/apiserver/test_kind_completeness.py).
_BUILTIN_DEFINITIONS: dict[tuple[str, str, str], str] = {
    (spec.group, spec.version, spec.kind): spec.openapi for spec in BUILTIN_KINDS}


def kind_schema_name(rt) -> str:
    name = _BUILTIN_DEFINITIONS.get((rt.group, rt.version, rt.kind))
    return name if name is not None else S.kind_definition(rt.group, rt.version, rt.kind)


# -- the model ----------------------------------------------------------------------------

def _camel(word: str) -> str:
    return word[:1].upper() + word[1:]


def _group_camel(group: str) -> str:
    if group == "":
        return "Core"
    if group in S.BUILTIN_GROUPS or group == "apiextensions.k8s.io":
        return _camel(group.split(".")[0])
    return "".join(_camel(part) for part in group.replace("-", ".").split("."))


def _tag(group: str, version: str) -> str:
    g = _group_camel(group)
    g = f"{g[:1].lower()}{g[1:]}"
    return f"{g}_{version}" if version else g


class _Model:
    """Every document for one set of types, built lazily and kept."""

    def __init__(self, types: list) -> None:
        self.types = types
        self._lock = threading.Lock()
        self._v2: dict | None = None
        self._v2_json: bytes | None = None
        self._v2_pb: bytes | None = None
        self._v3: dict[str, dict] = {}
        self._v3_json: dict[str, tuple[bytes, str]] = {}
        self._index: dict | None = None
        self.roots: dict[tuple[str, str, str], str] = {}
        self._custom: dict[str, Any] = {}   # definition name -> rt (schema from the type)
        for rt in types:
            name = kind_schema_name(rt)
            self.roots[(rt.group, rt.version, rt.kind)] = name
            if rt.schema is not None or name not in S.DEFINITIONS:
                self._custom[name] = rt
        self.gvs = sorted({(rt.group, rt.version) for rt in types})
        self.groups = sorted({rt.group for rt in types if rt.group})
        self.annotations = self._patch_annotations()

    # ---- patch metadata ----

    def _patch_annotations(self) -> dict[tuple[str, str], Any]:
        out: dict[tuple[str, str], Any] = {}
        for rt in self.types:
            name = self.roots[(rt.group, rt.version, rt.kind)]
            if name in self._custom:
                continue
            for path, meta in patchmeta.all_patch_meta(rt.api_version, rt.kind).items():
                target = _resolve_field(name, path)
                if target is not None and not meta.is_empty():
                    out.setdefault(target, meta)
        return out

    # ---- definitions ----

    def _definitions(self, v3: bool, wanted: set[str]) -> dict[str, dict]:
        """The definitions reachable from ``wanted``, rendered for v3 or v2, sorted by name."""
        out: dict[str, dict] = {}
        todo = list(wanted)
        while todo:
            name = todo.pop()
            if name in out:
                continue
            schema = self._definition(name, v3)
            out[name] = schema
            todo.extend(r for r in _refs(schema, V3_REF if v3 else V2_REF) if r not in out)
        return dict(sorted(out.items()))

    def _definition(self, name: str, v3: bool) -> dict:
        scalars = _SCALAR_DEFS_V3 if v3 else _SCALAR_DEFS_V2
        if name in scalars:
            return copy.deepcopy(scalars[name])
        if name in self._custom:
            return self._custom_definition(name, v3)
        if name.endswith("List") and name[:-4] in self.roots.values():
            return self._list_definition(name[:-4], v3)
        d = S.DEFINITIONS[name]
        props: dict[str, dict] = {}
        if d.kind:
            props["apiVersion"] = {"description": S.API_VERSION_DESC, "type": "string"}
            props["kind"] = {"description": S.KIND_DESC, "type": "string"}
            props["metadata"] = _ref_prop(S.OBJECT_META, S.METADATA_DESC, v3)
        for f in d.fields:
            prop = _render(f.type, f.description, v3)
            meta = self.annotations.get((name, f.name))
            if meta is not None:
                prop.update(_meta_ext(meta))
            props[f.name] = prop
        schema: dict[str, Any] = {"description": d.description}
        if props:
            schema["properties"] = dict(sorted(props.items()))
        if d.required:
            schema["required"] = d.required
        schema["type"] = "object"
        if d.preserve:
            schema["x-kubernetes-preserve-unknown-fields"] = True
        gvks = self._gvks_of(name)
        if gvks:
            schema["x-kubernetes-group-version-kind"] = gvks
        return schema

    def _gvks_of(self, name: str) -> list[dict]:
        if name in _FIXED_GVKS:
            return [_gvk_ext(*g) for g in _FIXED_GVKS[name]]
        if name in (DELETE_OPTIONS, WATCH_EVENT):
            kind = "DeleteOptions" if name == DELETE_OPTIONS else "WatchEvent"
            gvs = sorted(set(self.gvs) | {("", "v1")})
            return [_gvk_ext(g, v, kind) for g, v in gvs]
        return [_gvk_ext(g, v, k) for (g, v, k), root in sorted(self.roots.items())
                if root == name]

    def _custom_definition(self, name: str, v3: bool) -> dict:
        rt = self._custom[name]
        if isinstance(rt.schema, dict):
            schema = copy.deepcopy(rt.schema)
            if not v3:
                schema = _v2_compatible(schema)
        else:
            schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        props = dict(schema.get("properties") or {})
        props["apiVersion"] = {"description": S.API_VERSION_DESC, "type": "string"}
        props["kind"] = {"description": S.KIND_DESC, "type": "string"}
        props["metadata"] = _ref_prop(S.OBJECT_META, S.METADATA_DESC, v3)
        schema["properties"] = dict(sorted(props.items()))
        schema["type"] = "object"
        schema.setdefault("description", f"{rt.kind} is a custom resource of {rt.api_version}.")
        schema["x-kubernetes-group-version-kind"] = self._gvks_of(name)
        return dict(sorted(schema.items()))

    def _list_definition(self, item: str, v3: bool) -> dict:
        kind = item.rsplit(".", 1)[1]
        gvks = [_gvk_ext(g, v, f"{k}List") for (g, v, k), root in sorted(self.roots.items())
                if root == item]
        return {
            "description": f"{kind}List is a list of {kind} objects.",
            "properties": {
                "apiVersion": {"description": S.API_VERSION_DESC, "type": "string"},
                "items": {"description": f"The {kind} objects.", "type": "array",
                          "items": {"$ref": (V3_REF if v3 else V2_REF) + item}},
                "kind": {"description": S.KIND_DESC, "type": "string"},
                "metadata": _ref_prop(S.LIST_META, S.LIST_METADATA_DESC, v3),
            },
            "required": ["items"],
            "type": "object",
            "x-kubernetes-group-version-kind": gvks,
        }

    # ---- paths ----

    def _paths(self, group: str, version: str, v3: bool) -> dict[str, dict]:
        base = "/api/v1" if group == "" else f"/apis/{group}/{version}"
        ops = _Ops(v3)
        paths: dict[str, dict] = {
            f"{base}/": {"get": ops.op(
                "get available resources", f"get{_group_camel(group)}{_camel(version)}"
                "APIResources", group, version, None, None, params=(),
                responses={"200": ("OK", API_RESOURCE_LIST)})},
        }
        for rt in self.types:
            if (rt.group, rt.version) != (group, version):
                continue
            paths.update(self._resource_paths(rt, base, ops))
        return dict(sorted(paths.items()))

    def _resource_paths(self, rt, base: str, ops: _Ops) -> dict[str, dict]:
        root = self.roots[(rt.group, rt.version, rt.kind)]
        gv = f"{_group_camel(rt.group)}{_camel(rt.version)}"
        ns = "Namespaced" if rt.namespaced else ""
        verbs = set(rt.verbs)
        kind = rt.kind
        scope = f"{base}/namespaces/{{namespace}}/{rt.plural}" if rt.namespaced \
            else f"{base}/{rt.plural}"
        item = f"{scope}/{{name}}"
        common = [ops.param("pretty")]
        ns_param = [ops.path_param("namespace", "object name and auth scope, such as for teams "
                                               "and projects")] if rt.namespaced else []
        name_param = [ops.path_param("name", f"name of the {kind}")]
        body_types = RESPONSE_TYPES
        strategic = self._strategic(rt)
        out: dict[str, dict] = {}

        coll: dict[str, Any] = {"parameters": ns_param + common}
        if "list" in verbs:
            coll["get"] = ops.op(f"list or watch objects of kind {kind}", f"list{gv}{ns}{kind}",
                                 rt.group, rt.version, kind, "list", params=_LIST_PARAMS,
                                 responses={"200": ("OK", f"{root}List")},
                                 media=WATCH_RESPONSE_TYPES)
        if "create" in verbs:
            coll["post"] = ops.op(f"create a {kind}", f"create{gv}{ns}{kind}", rt.group,
                                  rt.version, kind, "post", params=_WRITE_PARAMS, body=root,
                                  responses={"200": ("OK", root), "201": ("Created", root),
                                             "202": ("Accepted", root)}, media=body_types)
        if "deletecollection" in verbs:
            coll["delete"] = ops.op(f"delete collection of {kind}",
                                    f"delete{gv}Collection{ns}{kind}", rt.group, rt.version,
                                    kind, "deletecollection", params=_DELETECOLLECTION_PARAMS,
                                    body=DELETE_OPTIONS, responses={"200": ("OK", STATUS)})
        if len(coll) > 1:
            out[scope] = coll

        one: dict[str, Any] = {"parameters": name_param + ns_param + common}
        if "get" in verbs:
            one["get"] = ops.op(f"read the specified {kind}", f"read{gv}{ns}{kind}", rt.group,
                                rt.version, kind, "get", params=(),
                                responses={"200": ("OK", root)})
        if "update" in verbs:
            one["put"] = ops.op(f"replace the specified {kind}", f"replace{gv}{ns}{kind}",
                                rt.group, rt.version, kind, "put", params=_WRITE_PARAMS,
                                body=root, responses={"200": ("OK", root),
                                                      "201": ("Created", root)})
        if "patch" in verbs:
            one["patch"] = ops.op(f"partially update the specified {kind}",
                                  f"patch{gv}{ns}{kind}", rt.group, rt.version, kind, "patch",
                                  params=_PATCH_PARAMS, patch_body=strategic,
                                  responses={"200": ("OK", root), "201": ("Created", root)})
        if "delete" in verbs:
            one["delete"] = ops.op(f"delete a {kind}", f"delete{gv}{ns}{kind}", rt.group,
                                   rt.version, kind, "delete", params=_DELETE_PARAMS,
                                   body=DELETE_OPTIONS, responses={"200": ("OK", STATUS),
                                                                   "202": ("Accepted", STATUS)})
        if len(one) > 1:
            out[item] = one

        if rt.namespaced and "list" in verbs:
            out[f"{base}/{rt.plural}"] = {
                "get": ops.op(f"list or watch objects of kind {kind}",
                              f"list{gv}{kind}ForAllNamespaces", rt.group, rt.version, kind,
                              "list", params=(), responses={"200": ("OK", f"{root}List")},
                              media=WATCH_RESPONSE_TYPES),
                "parameters": [ops.param(p) for p in _LIST_PARAMS] + common,
            }
        if "watch" in verbs:
            watch_params = [ops.param(p) for p in _LIST_PARAMS]
            wscope = scope.replace(base, f"{base}/watch", 1)
            out[wscope] = {
                "get": ops.op(f"watch individual changes to a list of {kind}. deprecated: use "
                              "the 'watch' parameter with a list operation instead.",
                              f"watch{gv}{ns}{kind}List", rt.group, rt.version, kind,
                              "watchlist", params=(), responses={"200": ("OK", WATCH_EVENT)},
                              media=WATCH_RESPONSE_TYPES),
                "parameters": watch_params + ns_param + common,
            }
            out[f"{wscope}/{{name}}"] = {
                "get": ops.op(f"watch changes to an object of kind {kind}. deprecated: use the "
                              "'watch' parameter with a list operation instead, filtered to a "
                              "single item with the 'fieldSelector' parameter.",
                              f"watch{gv}{ns}{kind}", rt.group, rt.version, kind, "watch",
                              params=(), responses={"200": ("OK", WATCH_EVENT)},
                              media=WATCH_RESPONSE_TYPES),
                "parameters": watch_params + name_param + ns_param + common,
            }
            if rt.namespaced:
                out[f"{base}/watch/{rt.plural}"] = {
                    "get": ops.op(f"watch individual changes to a list of {kind}. deprecated: "
                                  "use the 'watch' parameter with a list operation instead.",
                                  f"watch{gv}{kind}ListForAllNamespaces", rt.group,
                                  rt.version, kind, "watchlist", params=(),
                                  responses={"200": ("OK", WATCH_EVENT)},
                                  media=WATCH_RESPONSE_TYPES),
                    "parameters": watch_params + common,
                }

        for sub in sorted(rt.subresources):
            sub_verbs, target = _SUBRESOURCES.get(sub, (("get",), None))
            sub_path = f"{item}/{sub}"
            sc = _camel(sub)
            named = _camel(sub) if target in (BINDING, EVICTION, TOKEN_REQUEST) else kind
            entry: dict[str, Any] = {"parameters": [ops.path_param("name", f"name of the {named}")]
                + ns_param + common}
            if target == "text":
                entry["get"] = ops.op(f"read {sub} of the specified {kind}",
                                      f"read{gv}{ns}{kind}{sc}", rt.group, rt.version, kind,
                                      "connect", params=_LOG_PARAMS, text_response=True)
                out[sub_path] = entry
                continue
            if target == "connect":
                for method in ("get", "post"):
                    entry[method] = ops.op(f"connect {method.upper()} requests to {sub} of {kind}",
                                           f"connect{gv}{method.capitalize()}{ns}{kind}{sc}",
                                           rt.group, rt.version, kind, "connect",
                                           params=_CONNECT_PARAMS[sub], text_response=True)
                out[sub_path] = entry
                continue
            body = target or root
            if target is None:
                sgvk = (rt.group, rt.version, rt.kind)
            else:
                sgvk = _FIXED_GVKS[target][0]
            if "get" in sub_verbs:
                entry["get"] = ops.op(f"read {sub} of the specified {kind}",
                                      f"read{gv}{ns}{kind}{sc}", *sgvk, "get", params=(),
                                      responses={"200": ("OK", body)})
            if "update" in sub_verbs:
                entry["put"] = ops.op(f"replace {sub} of the specified {kind}",
                                      f"replace{gv}{ns}{kind}{sc}", *sgvk, "put",
                                      params=_WRITE_PARAMS, body=body,
                                      responses={"200": ("OK", body), "201": ("Created", body)})
            if "patch" in sub_verbs:
                entry["patch"] = ops.op(f"partially update {sub} of the specified {kind}",
                                        f"patch{gv}{ns}{kind}{sc}", *sgvk, "patch",
                                        params=_PATCH_PARAMS,
                                        patch_body=strategic or target is not None,
                                        responses={"200": ("OK", body),
                                                   "201": ("Created", body)})
            if "create" in sub_verbs:
                entry["post"] = ops.op(f"create {sub} of a {kind}", f"create{gv}{ns}{kind}{sc}",
                                       *sgvk, "post", params=_WRITE_PARAMS, body=body,
                                       responses={"200": ("OK", body), "201": ("Created", body),
                                                  "202": ("Accepted", body)})
            out[sub_path] = entry
        return out

    def _strategic(self, rt) -> bool:
        """Strategic merge patch is offered for built-in kinds, never for custom resources."""
        return patchmeta.supports_strategic(rt.api_version, rt.kind)

    # ---- documents ----

    def v3(self, path: str) -> dict | None:
        with self._lock:
            doc = self._v3.get(path)
            if doc is None:
                doc = self._build_v3(path)
                if doc is None:
                    return None
                self._v3[path] = doc
            return doc

    def v3_json(self, path: str) -> tuple[bytes, str] | None:
        doc = self.v3(path)
        if doc is None:
            return None
        with self._lock:
            found = self._v3_json.get(path)
            if found is None:
                data = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()
                found = (data, hashlib.sha512(data).hexdigest().upper())
                self._v3_json[path] = found
            return found

    def v3_paths(self) -> list[str]:
        out = ["api", "apis", "version"]
        out += [f"apis/{g}" for g in self.groups]
        out += ["api/v1" if g == "" else f"apis/{g}/{v}" for g, v in self.gvs]
        if ("", "v1") not in self.gvs:
            out.append("api/v1")
        return sorted(set(out))

    def index(self) -> dict:
        if self._index is None:
            paths = {}
            for path in self.v3_paths():
                found = self.v3_json(path)
                if found is not None:
                    paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={found[1]}"}
            self._index = {"paths": paths}
        return self._index

    def _build_v3(self, path: str) -> dict | None:
        ops = _Ops(True)
        if path == "api":
            paths = {"/api/": {"get": ops.op("get available API versions", "getCoreAPIVersions",
                                             "", "", None, None, params=(), tag="core",
                                             responses={"200": ("OK", API_VERSIONS)})}}
        elif path == "apis":
            paths = {"/apis/": {"get": ops.op("get available API versions", "getAPIVersions",
                                              "", "", None, None, params=(), tag="apis",
                                              responses={"200": ("OK", API_GROUP_LIST)})}}
        elif path == "version":
            paths = {"/version/": {"get": ops.op("get the version information for this server",
                                                 "getCodeVersion", "", "", None, None, params=(),
                                                 tag="version",
                                                 responses={"200": ("OK", VERSION_INFO)},
                                                 media=("application/json",))}}
        elif path == "api/v1":
            paths = self._paths("", "v1", True)
        elif path.startswith("apis/"):
            parts = path.split("/")
            if len(parts) == 2 and parts[1] in self.groups:
                group = parts[1]
                paths = {f"/apis/{group}/": {"get": ops.op(
                    "get information of a group", f"get{_group_camel(group)}APIGroup", group,
                    "", None, None, params=(), responses={"200": ("OK", API_GROUP)})}}
            elif len(parts) == 3 and (parts[1], parts[2]) in self.gvs:
                paths = self._paths(parts[1], parts[2], True)
            else:
                return None
        else:
            return None
        schemas = self._definitions(True, set(_refs(paths, V3_REF)))
        return {
            "components": {
                "schemas": schemas,
                "securitySchemes": {"BearerToken": {
                    "description": "Bearer Token authentication", "in": "header",
                    "name": "authorization", "type": "apiKey"}},
            },
            "info": {"title": "Kubernetes", "version": "unversioned"},
            "openapi": "3.0.0",
            "paths": paths,
        }

    def v2(self) -> dict:
        with self._lock:
            if self._v2 is None:
                self._v2 = self._build_v2()
            return self._v2

    def v2_json(self) -> bytes:
        doc = self.v2()
        with self._lock:
            if self._v2_json is None:
                self._v2_json = json.dumps(doc, separators=(",", ":"),
                                           ensure_ascii=False).encode()
            return self._v2_json

    def v2_protobuf(self) -> bytes:
        doc = self.v2()
        with self._lock:
            if self._v2_pb is None:
                self._v2_pb = proto.document(doc)
            return self._v2_pb

    def _build_v2(self) -> dict:
        paths: dict[str, dict] = {}
        for group, version in self.gvs:
            paths.update(self._paths(group, version, False))
        ops = _Ops(False)
        paths["/api/"] = {"get": ops.op("get available API versions", "getCoreAPIVersions", "",
                                        "", None, None, params=(), tag="core",
                                        responses={"200": ("OK", API_VERSIONS)})}
        paths["/apis/"] = {"get": ops.op("get available API versions", "getAPIVersions", "", "",
                                         None, None, params=(), tag="apis",
                                         responses={"200": ("OK", API_GROUP_LIST)})}
        for group in self.groups:
            paths[f"/apis/{group}/"] = {"get": ops.op(
                "get information of a group", f"get{_group_camel(group)}APIGroup", group, "",
                None, None, params=(), responses={"200": ("OK", API_GROUP)})}
        paths["/version/"] = {"get": ops.op("get the version information for this server",
                                            "getCodeVersion", "", "", None, None, params=(),
                                            tag="version",
                                            responses={"200": ("OK", VERSION_INFO)},
                                            media=("application/json",))}
        paths = dict(sorted(paths.items()))
        definitions = self._definitions(False, set(_refs(paths, V2_REF)))
        return {
            "definitions": definitions,
            "info": {"title": "Kubernetes", "version": "unversioned"},
            "paths": paths,
            "security": [{"BearerToken": []}],
            "securityDefinitions": {"BearerToken": {
                "description": "Bearer Token authentication", "in": "header",
                "name": "authorization", "type": "apiKey"}},
            "swagger": "2.0",
        }


class _Ops:
    """Renders operations and parameters in the v3 or the v2 form."""

    def __init__(self, v3: bool) -> None:
        self.v3 = v3
        self.prefix = V3_REF if v3 else V2_REF

    def param(self, name: str) -> dict:
        pname, typ, desc = _P[name]
        if self.v3:
            return {"description": desc, "in": "query", "name": pname,
                    "schema": {"type": typ, "uniqueItems": True}}
        return {"description": desc, "in": "query", "name": pname, "type": typ,
                "uniqueItems": True}

    def path_param(self, name: str, desc: str) -> dict:
        if self.v3:
            return {"description": desc, "in": "path", "name": name, "required": True,
                    "schema": {"type": "string", "uniqueItems": True}}
        return {"description": desc, "in": "path", "name": name, "required": True,
                "type": "string", "uniqueItems": True}

    def op(self, description: str, operation_id: str, group: str, version: str,
           kind: str | None, action: str | None, *, params, responses=None, body=None,
           patch_body: bool | None = None, media=RESPONSE_TYPES,
           text_response: bool = False, tag: str | None = None) -> dict:
        out: dict[str, Any] = {"description": description, "operationId": operation_id}
        parameters = [self.param(p) for p in params]
        ref = self.prefix
        if self.v3:
            if body is not None:
                out["requestBody"] = {"content": {"*/*": {"schema": {"$ref": ref + body}}}}
                if body != DELETE_OPTIONS:
                    out["requestBody"]["required"] = True
            elif patch_body is not None:
                types = PATCH_TYPES if patch_body else tuple(
                    t for t in PATCH_TYPES if "strategic" not in t)
                out["requestBody"] = {"content": {t: {"schema": {"$ref": ref + PATCH}}
                                                  for t in types}, "required": True}
            resp: dict[str, Any] = {}
            if text_response:
                resp["200"] = {"content": {"text/plain": {"schema": {"type": "string"}}},
                               "description": "OK"}
            for code, (text, schema) in (responses or {}).items():
                resp[code] = {"content": {m: {"schema": {"$ref": ref + schema}} for m in media},
                              "description": text}
            resp["401"] = {"description": "Unauthorized"}
            out["responses"] = resp
        else:
            if body is not None:
                parameters.insert(0, {"in": "body", "name": "body",
                                      "required": body != DELETE_OPTIONS,
                                      "schema": {"$ref": ref + body}})
                out["consumes"] = ["*/*"]
            elif patch_body is not None:
                parameters.insert(0, {"in": "body", "name": "body", "required": True,
                                      "schema": {"$ref": ref + PATCH}})
                out["consumes"] = [t for t in PATCH_TYPES if patch_body or "strategic" not in t]
            out["produces"] = ["text/plain"] if text_response else list(media)
            resp = {}
            if text_response:
                resp["200"] = {"description": "OK", "schema": {"type": "string"}}
            for code, (text, schema) in (responses or {}).items():
                resp[code] = {"description": text, "schema": {"$ref": ref + schema}}
            resp["401"] = {"description": "Unauthorized"}
            out["responses"] = resp
            out["schemes"] = ["https"]
        if parameters:
            out["parameters"] = parameters
        out["tags"] = [tag or _tag(group, version)]
        if action is not None:
            out["x-kubernetes-action"] = action
        if kind is not None:
            out["x-kubernetes-group-version-kind"] = _gvk_ext(group, version, kind)
        return dict(sorted(out.items()))


# -- rendering helpers ---------------------------------------------------------------------

def _ref_prop(name: str, description: str, v3: bool) -> dict:
    if v3:
        return {"allOf": [{"$ref": V3_REF + name}], "description": description}
    return {"$ref": V2_REF + name, "description": description}


def _render(t, description: str, v3: bool, top: bool = True) -> dict:
    """A parsed schemas type -> a JSON schema (a property if ``top``, else an item/value)."""
    tag = t[0]
    prefix = V3_REF if v3 else V2_REF
    out: dict[str, Any]
    if tag == "ref" or (tag == "scalar" and t[1] in _SCALAR_REFS):
        target = t[1] if tag == "ref" else _SCALAR_REFS[t[1]]
        if top and description:
            return _ref_prop(target, description, v3)
        return {"$ref": prefix + target}
    if tag == "enum":
        out = {"enum": list(t[1]), "type": "string"}
    elif tag == "list":
        out = {"items": _render(t[1], "", v3, top=False), "type": "array"}
    elif tag == "map":
        out = {"additionalProperties": _render(t[1], "", v3, top=False), "type": "object"}
    else:
        name = t[1]
        if name == "str":
            out = {"type": "string"}
        elif name == "bool":
            out = {"type": "boolean"}
        elif name in _FORMATS:
            typ, fmt = _FORMATS[name]
            out = {"format": fmt, "type": typ}
        elif name == "obj":
            out = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        else:  # any
            out = {"x-kubernetes-preserve-unknown-fields": True}
    if top and description:
        out["description"] = description
    return dict(sorted(out.items()))


def _meta_ext(meta) -> dict:
    out: dict[str, Any] = {}
    if meta.list_map_keys:
        out["x-kubernetes-list-map-keys"] = list(meta.list_map_keys)
    if meta.list_type:
        out["x-kubernetes-list-type"] = meta.list_type
    if getattr(meta, "map_type", None):
        out["x-kubernetes-map-type"] = meta.map_type
    if meta.merge_key:
        out["x-kubernetes-patch-merge-key"] = meta.merge_key
    if meta.strategy:
        out["x-kubernetes-patch-strategy"] = meta.strategy
    return out


def _resolve_field(root: str, path: tuple[str, ...]) -> tuple[str, str] | None:
    """The (definition, field) a patchmeta path ends at, following references."""
    name = root
    for i, seg in enumerate(path):
        d = S.DEFINITIONS.get(name)
        if d is None:
            return None
        if d.kind and seg == "metadata":
            if i == len(path) - 1:
                return None
            name = S.OBJECT_META
            continue
        f = next((f for f in d.fields if f.name == seg), None)
        if f is None:
            return None
        if i == len(path) - 1:
            return (name, seg)
        t = f.type
        while t[0] in ("list", "map"):
            t = t[1]
        if t[0] != "ref":
            return None
        name = t[1]
    return None


def _refs(obj, prefix: str):
    """Every definition name referenced with ``prefix`` inside ``obj``."""
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str) and ref.startswith(prefix):
                yield ref[len(prefix):]
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


_V2_DROP = ("nullable", "oneOf", "anyOf", "not", "x-kubernetes-validations")


def _v2_compatible(schema):
    """A CRD's structural schema in the subset OpenAPI v2 can express (as kube-apiserver
    publishes CRDs in /openapi/v2: no nullable, oneOf/anyOf/not, and int-or-string untyped)."""
    if isinstance(schema, list):
        return [_v2_compatible(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key in _V2_DROP:
            continue
        if key in ("properties", "patternProperties", "definitions") and isinstance(value, dict):
            out[key] = {k: _v2_compatible(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "allOf"):
            out[key] = _v2_compatible(value)
        else:
            out[key] = value
    if out.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
    return out
