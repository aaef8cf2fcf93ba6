"""Test-only: a minimal HTTP API server serving discovery and OpenAPI for real kubectl.

It answers from ``kvert.apiserver.discovery`` and ``kvert.apiserver.openapi`` the way
kube-apiserver does (content negotiation, hashed OpenAPI v3 URLs), records every request
(method, path, Accept, Content-Type, body) and, for the write flows kubectl needs, keeps a
tiny in-memory object map: GET/POST/PATCH of single objects, with ``dryRun`` and strict
``fieldValidation`` answered from the OpenAPI schemas.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

from kvert.api import kinds
from kvert.apiserver import discovery, openapi
from kvert.apiserver.openapi import fields as openapi_fields


def kubectl_path() -> str | None:
    here = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "kubectl"
    if here.exists():
        return str(here)
    return shutil.which("kubectl")


@dataclass
class Request:
    method: str
    path_qs: str
    accept: str
    content_type: str
    body: bytes


@dataclass
class StubServer:
    types: list = field(default_factory=kinds.all_types)
    # Drop the fieldValidation parameter from the v3 documents (an "old server").
    no_field_validation: bool = False
    # Answer kubectl's protobuf request for /openapi/v2 (else 406 Not Acceptable).
    v2_protobuf: bool = True
    # Answer aggregated discovery when asked (else only the legacy form, like an old server).
    aggregated: bool = True
    requests: list[Request] = field(default_factory=list)
    objects: dict[str, dict] = field(default_factory=dict)
    port: int = 0

    # ---- lifecycle ----

    def start(self) -> "StubServer":
        self._loop = asyncio.new_event_loop()
        ready = threading.Event()
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        self._sock = sock

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            app = web.Application()
            app.router.add_route("*", "/{tail:.*}", self._handle)
            self._runner = web.AppRunner(app, access_log=None)
            self._loop.run_until_complete(self._runner.setup())
            site = web.SockSite(self._runner, sock)
            self._loop.run_until_complete(site.start())
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        async def shutdown() -> None:
            await self._runner.cleanup()
        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ---- kubectl ----

    def kubectl(self, home: Path, *args: str, stdin: str | None = None,
                timeout: float = 30) -> subprocess.CompletedProcess:
        home.mkdir(parents=True, exist_ok=True)
        kubeconfig = home / "kubeconfig"
        kubeconfig.write_text(
            "apiVersion: v1\nkind: Config\n"
            f"clusters:\n- name: stub\n  cluster:\n    server: {self.url}\n"
            "contexts:\n- name: stub\n  context:\n    cluster: stub\n    user: stub\n"
            "    namespace: default\n"
            "current-context: stub\nusers:\n- name: stub\n  user: {}\n")
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home),
               "KUBECONFIG": str(kubeconfig), "KUBECTL_EXTERNAL_DIFF": ""}
        cmd = [kubectl_path(), "--cache-dir", str(home / "cache"), *args]
        return subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env,
                              timeout=timeout)

    # ---- HTTP ----

    def _v3_document(self, path: str) -> tuple[bytes, str] | None:
        found = openapi.openapi_v3_json(self.types, path)
        if found is None or not self.no_field_validation:
            return found
        doc = json.loads(found[0])
        for item in doc.get("paths", {}).values():
            for op in item.values():
                if isinstance(op, dict) and "parameters" in op:
                    op["parameters"] = [p for p in op["parameters"]
                                        if p.get("name") != "fieldValidation"]
        data = json.dumps(doc).encode()
        return data, found[1]

    async def _handle(self, req: web.Request) -> web.StreamResponse:
        body = await req.read()
        self.requests.append(Request(req.method, req.path_qs, req.headers.get("Accept", ""),
                                     req.headers.get("Content-Type", ""), body))
        path = req.path.rstrip("/") or "/"
        accept = req.headers.get("Accept", "")
        if path == "/version":
            return web.json_response({
                "major": "1", "minor": "36", "gitVersion": "v1.36.0+kvert",
                "gitCommit": "0000000000000000000000000000000000000000",
                "gitTreeState": "clean", "buildDate": "2025-12-17T00:00:00Z",
                "goVersion": "python3.11", "compiler": "cpython", "platform": "linux/amd64"})
        if path in ("/api", "/apis"):
            legacy = path == "/api"
            wanted = _aggregated_version(accept) if self.aggregated else None
            if wanted:
                doc = discovery.aggregated_discovery(self.types, legacy, wanted)
                return _json(doc, discovery.aggregated_media_type(wanted))
            doc = discovery.api_versions(f"127.0.0.1:{self.port}") if legacy \
                else discovery.api_group_list(self.types)
            return _json(doc)
        parts = path.strip("/").split("/")
        if parts[0] == "openapi":
            return self._openapi(req, parts[1:], accept)
        if parts[0] == "api" and len(parts) == 2:
            return _json_or_404(discovery.api_resource_list(self.types, "", parts[1]))
        if parts[0] == "apis" and len(parts) == 2:
            return _json_or_404(discovery.api_group(self.types, parts[1]))
        if parts[0] == "apis" and len(parts) == 3:
            return _json_or_404(discovery.api_resource_list(self.types, parts[1], parts[2]))
        return self._object(req, parts, body)

    def _openapi(self, req: web.Request, parts: list[str], accept: str) -> web.Response:
        if parts == ["v2"] and self.v2_protobuf and _wants_v2_protobuf(accept):
            resp = web.Response(body=openapi.openapi_v2_protobuf(self.types))
            resp.headers["Content-Type"] = openapi.V2_PROTOBUF_MEDIA_TYPE
            return resp
        if not _accepts_json(accept):
            return _status(406, "NotAcceptable",
                           "only application/json is served; protobuf is not supported")
        if parts == ["v2"]:
            return web.Response(body=openapi.openapi_v2_json(self.types),
                                content_type="application/json")
        if parts == ["v3"]:
            index = openapi.openapi_v3_index(self.types)
            return web.Response(body=json.dumps(index).encode(), content_type="application/json",
                                headers={"Cache-Control": "no-cache, private"})
        if parts[:1] == ["v3"] and len(parts) > 1:
            found = self._v3_document("/".join(parts[1:]))
            if found is None:
                return _status(404, "NotFound", "no such OpenAPI document")
            data, digest = found
            wanted = req.query.get("hash")
            if wanted and wanted != digest:
                raise web.HTTPMovedPermanently(f"{req.path}?hash={digest}")
            headers = {"Etag": f'"{digest}"'}
            headers["Cache-Control"] = "public, immutable" if wanted else "no-cache, private"
            return web.Response(body=data, content_type="application/json", headers=headers)
        return _status(404, "NotFound", "the server could not find the requested resource")

    def _object(self, req: web.Request, parts: list[str], body: bytes) -> web.Response:
        """Single-object GET/POST/PUT/PATCH for namespaced and cluster-scoped resources."""
        if parts[0] == "api":
            group, version, rest = "", parts[1], parts[2:]
        elif parts[0] == "apis" and len(parts) > 3:
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            return _status(404, "NotFound", "the server could not find the requested resource")
        namespace = None
        if len(rest) >= 2 and rest[0] == "namespaces" and len(rest) > 2:
            namespace, rest = rest[1], rest[2:]
        plural, name = rest[0], (rest[1] if len(rest) > 1 else None)
        rt = next((t for t in self.types if t.group == group and t.version == version
                   and t.plural == plural), None)
        if rt is None:
            return _status(404, "NotFound", "the server could not find the requested resource")
        key = f"{group}/{plural}/{namespace}/{name}"
        if req.method == "GET" and name:
            found = self.objects.get(key)
            if found is None:
                return _status(404, "NotFound", f'{plural} "{name}" not found',
                               details={"name": name, "group": group, "kind": plural})
            return _json(found)
        if req.method in ("POST", "PUT"):
            obj = json.loads(body)
            if req.query.get("fieldValidation") == "Strict":
                unknown = openapi_fields.unknown_fields(self.types, obj)
                if unknown:
                    listed = ", ".join(f'unknown field "{p}"' for p in unknown)
                    return _status(400, "BadRequest",
                                   f'{rt.kind} in version "{rt.version}" cannot be handled as a '
                                   f"{rt.kind}: strict decoding error: {listed}")
            obj.setdefault("metadata", {}).setdefault("namespace", namespace)
            obj["metadata"]["resourceVersion"] = "1"
            if req.query.get("dryRun") != "All":
                name = obj["metadata"].get("name")
                self.objects[f"{group}/{plural}/{namespace}/{name}"] = obj
            return _json(obj, status=201 if req.method == "POST" else 200)
        if req.method == "PATCH" and name:
            found = self.objects.get(key)
            if found is None:
                return _status(404, "NotFound", f'{plural} "{name}" not found')
            return _json(found)
        return _status(405, "MethodNotAllowed", "not supported by the stub")


def _aggregated_version(accept: str) -> str | None:
    """The apidiscovery version asked for before any plain JSON, if any."""
    for item in accept.split(","):
        head, *params = [p.strip() for p in item.split(";")]
        values = dict(p.split("=", 1) for p in params if "=" in p)
        if head == "application/json" and not values:
            return None
        if head == "application/json" and values.get("g") == "apidiscovery.k8s.io" \
                and values.get("as") == "APIGroupDiscoveryList" \
                and values.get("v") in ("v2", "v2beta1"):
            return values["v"]
    return None


def _wants_v2_protobuf(accept: str) -> bool:
    heads = [item.split(";")[0].strip() for item in accept.split(",")]
    return openapi.V2_PROTOBUF_ACCEPT in heads or openapi.V2_PROTOBUF_MEDIA_TYPE in heads


def _accepts_json(accept: str) -> bool:
    if not accept:
        return True
    for item in accept.split(","):
        head = item.split(";")[0].strip().lower()
        if head in ("application/json", "application/*", "*/*"):
            return True
    return False


def _json(doc, content_type: str = "application/json", status: int = 200) -> web.Response:
    resp = web.Response(body=json.dumps(doc).encode(), status=status)
    resp.headers["Content-Type"] = content_type
    return resp


def _json_or_404(doc) -> web.Response:
    if doc is None:
        return _status(404, "NotFound", "the server could not find the requested resource")
    return _json(doc)


def _status(code: int, reason: str, message: str, details: dict | None = None) -> web.Response:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}
    if details:
        body["details"] = details
    return _json(body, status=code)
