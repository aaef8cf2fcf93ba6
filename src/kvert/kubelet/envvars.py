"""The environment the kubelet gives a container (``makeEnvironmentVariables`` in
pkg/kubelet/kubelet_pods.go, ``pkg/kubelet/envvars``, ``third_party/forked/golang/expansion``),
resolved here for every runtime alike:

* ``envFrom`` (ConfigMaps and Secrets, with ``prefix``, ``optional``) first, then ``env``
  in order, replacing what ``envFrom`` set: a literal ``value`` with its ``$(VAR)``
  references expanded from what came before and the service variables, or a ``valueFrom``:
  ``fieldRef`` (``metadata.name``, ``namespace``, ``uid``, ``labels['k']``,
  ``annotations['k']``, ``spec.nodeName``, ``spec.serviceAccountName``, ``status.hostIP(s)``,
  ``status.podIP(s)``), ``resourceFieldRef`` (requests / limits of cpu, memory and
  ephemeral-storage over a ``divisor``, rounded up; an unset limit is the node's allocatable),
  ``configMapKeyRef``, ``secretKeyRef``;
* then the service variables not set otherwise: the ``kubernetes`` Service of ``default``
  always, and, with ``enableServiceLinks`` (the default), every Service of the pod's
  namespace that has a cluster IP, in Docker-link form (``NAME_SERVICE_HOST``,
  ``NAME_SERVICE_PORT``, ``NAME_PORT_443_TCP_ADDR``, ...).

A node without a service network (the cgroupfs runtime: host network, no kube-proxy) is
given the API server's own address (``kubernetes``), which stands in for the ``kubernetes``
Service's cluster IP and port so that in-cluster clients dial something the host reaches.

``command`` and ``args`` are expanded against the final environment. An error is the
kubelet's text; the container waits with ``CreateContainerConfigError``.
"""

from __future__ import annotations

import base64
import ipaddress
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kvert.api.errors import ApiError, NotFound
from kvert.api.quantity import QuantityError, is_milli_resource, parse_quantity, to_int
from kvert.client.base import Client
from kvert.clock.base import Clock

MASTER_NAMESPACE = "default"
MASTER_SERVICES = ("kubernetes",)
SERVICE_CACHE_SECONDS = 10.0     # services are read at most this often per namespace
DOWNWARD_RESOURCES = ("cpu", "memory", "ephemeral-storage")

_OPERATOR, _OPEN, _CLOSE = "$", "(", ")"


class EnvError(Exception):
    """A variable could not be resolved (the message is the kubelet's)."""


# ---- $(VAR) expansion ------------------------------------------------------------------------

def mapping_for(*contexts: Mapping[str, str]) -> Callable[[str], str]:
    """``expansion.MappingFuncFor``: the first context that has the name; an unknown name
    is kept as it was written."""
    def lookup(name: str) -> str:
        for context in contexts:
            if name in context:
                return context[name]
        return f"$({name})"
    return lookup


def _read_name(text: str) -> tuple[str, bool, int]:
    """``tryReadVariableName``: what follows a ``$``, whether it is a reference, how much of
    it was consumed."""
    if text[0] == _OPERATOR:
        return _OPERATOR, False, 1
    if text[0] == _OPEN:
        close = text.find(_CLOSE, 1)
        if close >= 0:
            return text[1:close], True, close + 1
        return _OPERATOR + _OPEN, False, 1
    return _OPERATOR + text[0], False, 1


def expand(text: str, mapping: Callable[[str], str]) -> str:
    """``expansion.Expand``: ``$(VAR)`` replaced by ``mapping``, ``$$`` an escaped ``$``,
    anything else left alone."""
    out: list[str] = []
    checkpoint = cursor = 0
    while cursor < len(text):
        if text[cursor] == _OPERATOR and cursor + 1 < len(text):
            out.append(text[checkpoint:cursor])
            read, is_var, advance = _read_name(text[cursor + 1:])
            out.append(mapping(read) if is_var else read)
            cursor += advance
            checkpoint = cursor + 1
        cursor += 1
    return "".join(out) + text[checkpoint:]


# ---- service variables -----------------------------------------------------------------------

def _env_name(name: str) -> str:
    return name.replace("-", "_").upper()


def _has_cluster_ip(service: Mapping[str, Any]) -> bool:
    ip = (service.get("spec") or {}).get("clusterIP") or ""
    return ip not in ("", "None")


def _join_host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def service_variables(services: Iterable[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """``envvars.FromServices``: each Service with a cluster IP as Docker links would name it."""
    out: list[tuple[str, str]] = []
    for service in services:
        if not _has_cluster_ip(service):
            continue
        spec = service.get("spec") or {}
        ports = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
        if not ports:
            continue
        prefix = _env_name((service.get("metadata") or {}).get("name", ""))
        ip = str(spec["clusterIP"])
        out.append((f"{prefix}_SERVICE_HOST", ip))
        out.append((f"{prefix}_SERVICE_PORT", str(ports[0].get("port", ""))))
        for port in ports:
            if port.get("name"):
                out.append((f"{prefix}_SERVICE_PORT_{_env_name(str(port['name']))}", str(port.get("port", ""))))
        for i, port in enumerate(ports):
            protocol = str(port.get("protocol") or "TCP")
            address = f"{protocol.lower()}://{_join_host_port(ip, int(port.get('port') or 0))}"
            if i == 0:
                out.append((f"{prefix}_PORT", address))
            port_prefix = f"{prefix}_PORT_{port.get('port')}_{protocol.upper()}"
            out += [(port_prefix, address), (f"{port_prefix}_PROTO", protocol.lower()),
                    (f"{port_prefix}_PORT", str(port.get("port"))), (f"{port_prefix}_ADDR", ip)]
    return out


def service_env(services: Iterable[Mapping[str, Any]], namespace: str, enable_links: bool) -> dict[str, str]:
    """``getServiceEnvVarMap``: the master services of ``default`` always, the services of
    ``namespace`` with ``enable_links``; a namespace's own service wins over a master one of
    the same name."""
    chosen: dict[str, Mapping[str, Any]] = {}
    for service in services:
        if not _has_cluster_ip(service):
            continue
        meta = service.get("metadata") or {}
        name, ns = meta.get("name", ""), meta.get("namespace", "")
        if ns == MASTER_NAMESPACE and name in MASTER_SERVICES:
            chosen.setdefault(name, service)
        elif ns == namespace and enable_links:
            chosen[name] = service
    return dict(service_variables(chosen.values()))


def address_service(host: str, port: int) -> dict[str, Any]:
    """The ``kubernetes`` Service as a node without a service network must show it: the
    API server's own address in place of the cluster IP and port."""
    return {"metadata": {"name": "kubernetes", "namespace": MASTER_NAMESPACE},
            "spec": {"clusterIP": host, "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}}


# ---- the downward API ------------------------------------------------------------------------

def go_quote(text: str) -> str:
    """Go's ``strconv.Quote`` (``%q``), as ``fieldpath.FormatMap`` writes values."""
    escapes = {'"': '\\"', "\\": "\\\\", "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n",
               "\r": "\\r", "\t": "\\t", "\v": "\\v"}
    out = []
    for ch in text:
        if ch in escapes:
            out.append(escapes[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def format_map(values: Mapping[str, str]) -> str:
    """``fieldpath.FormatMap``: ``key="value"`` lines, sorted by key."""
    return "\n".join(f"{k}={go_quote(str(values[k]))}" for k in sorted(values))


def _split_subscript(path: str) -> tuple[str, str] | None:
    """``SplitMaybeSubscriptedPath``: ``metadata.labels['k']`` -> (``metadata.labels``, ``k``)."""
    if not path.endswith("']"):
        return None
    head, sep, key = path[:-2].partition("['")
    return (head, key) if sep and head else None


def metadata_value(pod: Mapping[str, Any], path: str) -> str:
    """``fieldpath.ExtractFieldPathAsString`` of a pod."""
    meta = pod.get("metadata") or {}
    subscripted = _split_subscript(path)
    if subscripted is not None:
        head, key = subscripted
        if head in ("metadata.annotations", "metadata.labels"):
            return str((meta.get(head.split(".")[1]) or {}).get(key, ""))
        raise EnvError(f'fieldPath "{path}" does not support subscript')
    if path in ("metadata.annotations", "metadata.labels"):
        return format_map(meta.get(path.split(".")[1]) or {})
    if path in ("metadata.name", "metadata.namespace", "metadata.uid"):
        return str(meta.get(path.split(".")[1], ""))
    raise EnvError(f"unsupported fieldPath: {path}")


def sort_ips(ips: Sequence[str], primary_v4: bool = True) -> list[str]:
    """The kubelet's ``sortPodIPs``: valid addresses only, the first of the node's primary
    family, then the first of the other one."""
    parsed = []
    for ip in ips:
        try:
            parsed.append(ipaddress.ip_address(ip))
        except ValueError:
            continue
    first = next((ip for ip in parsed if (ip.version == 4) == primary_v4), None)
    second = next((ip for ip in parsed if (ip.version == 4) != primary_v4), None)
    return [str(ip) for ip in (first, second) if ip is not None]


def field_value(pod: Mapping[str, Any], path: str, *, host_ips: Sequence[str],
                pod_ips: Sequence[str]) -> str:
    """``podFieldSelectorRuntimeValue``: a pod field an env var's ``fieldRef`` names."""
    spec = pod.get("spec") or {}
    if path == "spec.nodeName":
        return str(spec.get("nodeName") or "")
    if path == "spec.serviceAccountName":
        return str(spec.get("serviceAccountName") or "")
    if path == "status.hostIP":
        return host_ips[0] if host_ips else ""
    if path == "status.hostIPs":
        return ",".join(host_ips)
    if path == "status.podIP":
        return pod_ips[0] if pod_ips else ""
    if path == "status.podIPs":
        return ",".join(pod_ips)
    return metadata_value(pod, path)


def _resources(container: Mapping[str, Any], which: str) -> dict[str, int]:
    raw = ((container.get("resources") or {}).get(which)) or {}
    return {name: to_int(name, value) for name, value in raw.items()}


def _find_container(pod: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    spec = pod.get("spec") or {}
    for field in ("containers", "initContainers"):
        for c in spec.get(field) or []:
            if isinstance(c, dict) and c.get("name") == name:
                return c
    raise EnvError(f"container {name} not found")


def resource_value(selector: Mapping[str, Any], pod: Mapping[str, Any], container: Mapping[str, Any],
                   allocatable: Mapping[str, int] | None = None) -> str:
    """``containerResourceRuntimeValue`` after ``defaultPodLimitsForDownwardAPI``: a
    container's request or limit over the selector's divisor, rounded up; an unset (or
    zero) cpu, memory or ephemeral-storage limit is the node's allocatable."""
    if selector.get("containerName"):
        container = _find_container(pod, str(selector["containerName"]))
    which, _, name = str(selector.get("resource") or "").partition(".")
    if which not in ("requests", "limits") or not (name in DOWNWARD_RESOURCES or name.startswith("hugepages-")):
        raise EnvError(f"unsupported container resource : {selector.get('resource')}")
    values = _resources(container, which)
    if which == "limits":
        for default in DOWNWARD_RESOURCES:
            if not values.get(default) and allocatable and default in allocatable:
                values[default] = allocatable[default]
    amount = values.get(name, 0)
    try:
        divisor = parse_quantity(selector.get("divisor") or "1")
    except QuantityError as e:
        raise EnvError(str(e)) from None
    if divisor.nanos == 0:
        divisor = parse_quantity("1")
    unit = divisor.milli_value() if is_milli_resource(name) else divisor.value()
    return str(-(-amount // unit) if unit else 0)


# ---- a container's environment --------------------------------------------------------------

def _decode(resource: str, value: Any) -> str:
    if resource == "secrets":
        return base64.b64decode(value or "").decode("utf-8", "replace")
    return str(value or "")


class PodEnvironment:
    """What a node resolves containers' environments from: its client (Services, ConfigMaps,
    Secrets) and, without a service network, the API server's address (``kubernetes``)."""

    def __init__(self, client: Client, clock: Clock, *, kubernetes: tuple[str, int] | None = None) -> None:
        self.client = client
        self.clock = clock
        self.kubernetes = kubernetes
        self._services: dict[str, tuple[float, list[dict[str, Any]]]] = {}

    async def _services_of(self, namespace: str) -> list[dict[str, Any]]:
        cached = self._services.get(namespace)
        now = self.clock.now()
        if cached is not None and now - cached[0] < SERVICE_CACHE_SECONDS:
            return cached[1]
        try:
            items = (await self.client.list("services", namespace=namespace)).get("items") or []
        except ApiError:
            raise EnvError("failed to list services when setting up env vars") from None
        self._services[namespace] = (now, items)
        return items

    async def service_env(self, namespace: str, enable_links: bool) -> dict[str, str]:
        """The service variables of a pod in ``namespace`` (``getServiceEnvVarMap``)."""
        if self.kubernetes is not None:
            # first, so that default/kubernetes as listed never replaces it (service_env
            # keeps the first master service it meets)
            services = [address_service(*self.kubernetes)]
            if enable_links:
                services += await self._services_of(namespace)
        else:
            services = list(await self._services_of(MASTER_NAMESPACE))
            if enable_links and namespace != MASTER_NAMESPACE:
                services += await self._services_of(namespace)
        return service_env(services, namespace, enable_links)

    async def _object(self, resource: str, name: str, namespace: str, cache: dict[tuple[str, str], Any],
                      optional: bool) -> dict[str, Any] | None:
        key = (resource, name)
        if key not in cache:
            try:
                cache[key] = await self.client.get(resource, name, namespace)
            except NotFound:
                if optional:
                    cache[key] = None
                else:
                    kind = "configmap" if resource == "configmaps" else "secret"
                    raise EnvError(f'{kind} "{name}" not found') from None
            except ApiError as e:
                raise EnvError(str(e)) from None
        return cache[key]

    async def container_env(self, pod: Mapping[str, Any], container: Mapping[str, Any], *,
                            host_ips: Sequence[str], pod_ips: Sequence[str],
                            allocatable: Mapping[str, int] | None = None) -> list[tuple[str, str]]:
        """The container's variables in order: envFrom and env as declared, then the
        service variables they did not set. Raises :class:`EnvError`."""
        meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        namespace = str(meta.get("namespace") or "")
        enable_links = spec.get("enableServiceLinks") is not False
        services = await self.service_env(namespace, enable_links)
        pod_ips = sort_ips(pod_ips)
        objects: dict[tuple[str, str], Any] = {}
        declared: dict[str, str] = {}
        for source in container.get("envFrom") or []:
            if not isinstance(source, dict):
                continue
            prefix = str(source.get("prefix") or "")
            for field, resource in (("configMapRef", "configmaps"), ("secretRef", "secrets")):
                ref = source.get(field)
                if not isinstance(ref, dict):
                    continue
                obj = await self._object(resource, str(ref.get("name") or ""), namespace, objects,
                                         ref.get("optional") is True)
                if obj is None:
                    continue
                for key, value in (obj.get("data") or {}).items():
                    declared[prefix + key] = _decode(resource, value)
        mapping = mapping_for(declared, services)
        for var in container.get("env") or []:
            if not isinstance(var, dict):
                continue
            name = str(var.get("name") or "")
            value = var.get("value")
            if value:
                declared[name] = expand(str(value), mapping)
                continue
            source = var.get("valueFrom")
            if not isinstance(source, dict):
                declared[name] = ""
                continue
            resolved = await self._value_from(pod, container, source, namespace, objects,
                                              host_ips=host_ips, pod_ips=pod_ips, allocatable=allocatable)
            if resolved is not None:
                declared[name] = resolved
        return list(declared.items()) + [(k, v) for k, v in services.items() if k not in declared]

    async def _value_from(self, pod: Mapping[str, Any], container: Mapping[str, Any], source: Mapping[str, Any],
                          namespace: str, objects: dict[tuple[str, str], Any], *, host_ips: Sequence[str],
                          pod_ips: Sequence[str], allocatable: Mapping[str, int] | None) -> str | None:
        """One ``valueFrom``; None when an optional source is missing (no variable then)."""
        if isinstance(source.get("fieldRef"), dict):
            return field_value(pod, str(source["fieldRef"].get("fieldPath") or ""),
                               host_ips=host_ips, pod_ips=pod_ips)
        if isinstance(source.get("resourceFieldRef"), dict):
            return resource_value(source["resourceFieldRef"], pod, container, allocatable)
        for field, resource, kind in (("configMapKeyRef", "configmaps", "ConfigMap"),
                                      ("secretKeyRef", "secrets", "Secret")):
            ref = source.get(field)
            if not isinstance(ref, dict):
                continue
            optional = ref.get("optional") is True
            name, key = str(ref.get("name") or ""), str(ref.get("key") or "")
            obj = await self._object(resource, name, namespace, objects, optional)
            if obj is None:
                return None
            data = obj.get("data") or {}
            if key not in data:
                if optional:
                    return None
                raise EnvError(f"couldn't find key {key} in {kind} {namespace}/{name}")
            return _decode(resource, data[key])
        return ""


def expand_command(words: Sequence[str], env: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    """``ExpandContainerCommandAndArgs``: ``$(VAR)`` in command and args from the final
    environment."""
    mapping = mapping_for(dict(env))
    return tuple(expand(str(w), mapping) for w in words)


__all__ = ["EnvError", "PodEnvironment", "address_service", "expand", "expand_command", "field_value",
           "format_map", "mapping_for", "metadata_value", "resource_value", "service_env",
           "service_variables", "sort_ips"]
