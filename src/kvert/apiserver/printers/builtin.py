"""Column definitions and rows of the built-in kinds, after Kubernetes' internal printers.

A port of ``pkg/printers/internalversion/printers.go``: each kind has its column
definitions (name, type, format, description, priority) and a row function that turns a
JSON object into the cells ``kubectl get`` shows. The API server always generates the
wide form (``GenerateOptions{Wide: true}``); kubectl hides the priority-1 columns unless
``-o wide``. Cells are str, int, bool or None, exactly as the Go printers emit them.

Objects are the v1 JSON serialization, already defaulted by the registry; where the Go
printer reads the internal type, the v1 field it comes from is read instead (events.k8s.io
events are printed through the core Event printer, as the real API server does).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kvert.api.quantity import QuantityError, parse_quantity
from kvert.api.selectors import LabelSelector, SelectorError

from .duration import ZERO_TIME, human_duration, parse_time_ns, since, since_ns

Row = tuple[list[Any], list[dict[str, Any]] | None]  # (cells, row conditions)
RowFunc = Callable[[dict, int], Row]

# -- descriptions (the Go types' swagger docs) ------------------------------------------------

NAME_DOC = ("Name must be unique within a namespace. Is required when creating resources, although "
            "some resources may allow a client to request the generation of an appropriate name "
            "automatically. Name is primarily intended for creation idempotence and configuration "
            "definition. Cannot be updated. More info: "
            "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names")
CREATED_DOC = ("CreationTimestamp is a timestamp representing the server time when this object was "
               "created. It is not guaranteed to be set in happens-before order across separate "
               "operations. Clients may not set this value. It is represented in RFC3339 form and is "
               "in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "
               "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata")
CONTAINERS_DOC = "Names of each container in the template."
IMAGES_DOC = "Images referenced by each container in the template."
SELECTOR_DOC = ("Label query over pods that should match the replica count. It must match the pod "
                "template's labels. More info: "
                "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors")


def col(name: str, type_: str = "string", description: str = "", *, priority: int = 0,
        format_: str = "") -> dict[str, Any]:
    """A ``metav1.TableColumnDefinition``."""
    return {"name": name, "type": type_, "format": format_, "description": description,
            "priority": priority}


def name_col() -> dict[str, Any]:
    return col("Name", "string", NAME_DOC, format_="name")


def age_col() -> dict[str, Any]:
    return col("Age", "string", CREATED_DOC)


def template_container_cols() -> list[dict[str, Any]]:
    """The wide columns of the kinds with a pod template: its containers' names and images."""
    return [col("Containers", "string", CONTAINERS_DOC, priority=1),
            col("Images", "string", IMAGES_DOC, priority=1)]


# -- field access -------------------------------------------------------------------------------

def _m(v: Any) -> dict:
    return v if isinstance(v, dict) else {}


def _l(v: Any) -> list:
    return v if isinstance(v, list) else []


def _s(v: Any) -> str:
    if v is None:
        return ""
    return v if isinstance(v, str) else str(v)


def _i(v: Any, default: int = 0) -> int:
    if isinstance(v, bool) or v is None:
        return default
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v)
    return default


def _meta(obj: dict) -> dict:
    return _m(obj.get("metadata"))


def _name(obj: dict) -> str:
    return _s(_meta(obj).get("name"))


def _age(obj: dict, now: int) -> str:
    return since(_meta(obj).get("creationTimestamp"), now)


def _deleting(obj: dict) -> bool:
    return _meta(obj).get("deletionTimestamp") is not None


def format_labels(labels: Any) -> str:
    """``labels.FormatLabels``: ``k=v`` pairs sorted by key, ``<none>`` when empty."""
    labels = _m(labels)
    if not labels:
        return "<none>"
    return ",".join(f"{k}={_s(labels[k])}" for k in sorted(labels))


def _selector_string(selector: Any) -> str:
    """``metav1.LabelSelectorAsSelector(s).String()``; raises SelectorError."""
    if selector is not None and not isinstance(selector, Mapping):
        raise SelectorError("not a label selector")
    return str(LabelSelector.from_dict(selector))


def format_label_selector(selector: Any) -> str:
    """``metav1.FormatLabelSelector``: ``<none>`` when empty, ``<error>`` when invalid."""
    try:
        text = _selector_string(selector)
    except SelectorError:
        return "<error>"
    return text or "<none>"


def layout_container_cells(containers: Any) -> tuple[str, str]:
    """``layoutContainerCells``: comma-joined container names and images."""
    items = [_m(c) for c in _l(containers)]
    return ",".join(_s(c.get("name")) for c in items), ",".join(_s(c.get("image")) for c in items)


def _int_or_string(v: Any) -> str:
    """``intstr.IntOrString.String()``."""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int):
        return str(v)
    return _s(v)


def _quantity(v: Any) -> str:
    """``resource.Quantity.String()`` of a JSON quantity; "0" when unset."""
    if v is None:
        return "0"
    try:
        return str(parse_quantity(v))
    except QuantityError:
        return _s(v)


# -- pods ---------------------------------------------------------------------------------------

POD_COLUMNS = [
    name_col(),
    col("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
    col("Status", "string", "The aggregate status of the containers in this pod."),
    col("Restarts", "string", "The number of times the containers in this pod have been restarted "
        "and when the last container in this pod has restarted."),
    age_col(),
    col("IP", "string", "podIP address allocated to the pod. Routable at least within the cluster. "
        "Empty if not yet allocated.", priority=1),
    col("Node", "string", "NodeName indicates in which node this pod is scheduled. If empty, this pod "
        "is a candidate for scheduling by the scheduler defined in schedulerName. Once this field is "
        "set, the kubelet for this node becomes responsible for the lifecycle of this pod. This field "
        "should not be used to express a desire for the pod to be scheduled on a specific node. "
        "https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename",
        priority=1),
    col("Nominated Node", "string", "nominatedNodeName is set only when this pod preempts other pods "
        "on the node, but it cannot be scheduled right away as preemption victims receive their "
        "graceful termination periods. This field does not guarantee that the pod will be scheduled "
        "on this node. Scheduler may decide to place the pod elsewhere if other nodes become "
        "available sooner. Scheduler may also decide to give the resources on this node to a higher "
        "priority pod that is created after preemption. As a result, this field may be different "
        "than PodSpec.nodeName when the pod is scheduled.", priority=1),
    col("Readiness Gates", "string", "If specified, all readiness gates will be evaluated for pod "
        "readiness. A pod is ready when all its containers are ready AND all conditions specified in "
        "the readiness gates have status equal to \"True\" More info: "
        "https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates", priority=1),
]

POD_SUCCEEDED_CONDITIONS = [{"type": "Completed", "status": "True", "reason": "Succeeded",
                             "message": "The pod has completed successfully."}]
POD_FAILED_CONDITIONS = [{"type": "Completed", "status": "True", "reason": "Failed",
                          "message": "The pod failed."}]

NODE_UNREACHABLE_POD_REASON = "NodeLost"
POD_REASON_SCHEDULING_GATED = "SchedulingGated"


def _restartable(container: Any) -> bool:
    return isinstance(container, dict) and container.get("restartPolicy") == "Always"


def _finished_at(status: dict) -> int | None:
    """``lastState.terminated.finishedAt`` (Go's zero time when the field is unset), or None."""
    terminated = _m(status.get("lastState")).get("terminated")
    if terminated is None:
        return None
    at = parse_time_ns(_m(terminated).get("finishedAt"))
    return ZERO_TIME if at is None else at


def _condition_true(conditions: Any, type_: str) -> bool:
    """The first condition of ``type_`` has status True (isPodInitializedConditionTrue,
    hasJobCondition)."""
    for c in _l(conditions):
        if _m(c).get("type") == type_:
            return _m(c).get("status") == "True"
    return False


def _terminated_reason(terminated: dict, prefix: str) -> str:
    if terminated.get("reason"):
        return prefix + _s(terminated["reason"])
    signal = _i(terminated.get("signal"))
    if signal != 0:
        return f"{prefix}Signal:{signal}"
    return f"{prefix}ExitCode:{_i(terminated.get('exitCode'))}"


def pod_status_reason(pod: dict) -> tuple[str, int, int, int, int]:
    """(status, ready containers, total containers, restarts, last restart time in ns)."""
    spec, status = _m(pod.get("spec")), _m(pod.get("status"))
    init_specs = _l(spec.get("initContainers"))
    total = len(_l(spec.get("containers")))
    ready = 0
    restarts = restartable_restarts = 0
    last_restart = last_restartable_restart = ZERO_TIME

    phase = _s(status.get("phase"))
    reason = phase
    if status.get("reason"):
        reason = _s(status["reason"])
    for c in _l(status.get("conditions")):
        c = _m(c)
        if c.get("type") == "PodScheduled" and c.get("reason") == POD_REASON_SCHEDULING_GATED:
            reason = POD_REASON_SCHEDULING_GATED

    init_by_name: dict[Any, dict] = {}
    for c in init_specs:
        c = _m(c)
        init_by_name[c.get("name")] = c
        if _restartable(c):
            total += 1

    initializing = False
    for i, cs in enumerate(_l(status.get("initContainerStatuses"))):
        cs = _m(cs)
        count = _i(cs.get("restartCount"))
        restarts += count
        finished = _finished_at(cs)
        if finished is not None and last_restart < finished:
            last_restart = finished
        sidecar = _restartable(init_by_name.get(cs.get("name")))
        if sidecar:
            restartable_restarts += count
            if finished is not None and last_restartable_restart < finished:
                last_restartable_restart = finished
        state = _m(cs.get("state"))
        terminated, waiting = state.get("terminated"), state.get("waiting")
        if terminated is not None and _i(_m(terminated).get("exitCode")) == 0:
            continue
        if sidecar and cs.get("started") is True:
            if cs.get("ready") is True:
                ready += 1
            continue
        if terminated is not None:
            reason = _terminated_reason(_m(terminated), "Init:")
        elif waiting is not None and _m(waiting).get("reason") \
                and _m(waiting).get("reason") != "PodInitializing":
            reason = "Init:" + _s(_m(waiting)["reason"])
        else:
            reason = f"Init:{i}/{len(init_specs)}"
        initializing = True
        break

    if not initializing or _condition_true(status.get("conditions"), "Initialized"):
        restarts = restartable_restarts
        last_restart = last_restartable_restart
        has_running = False
        for cs in reversed(_l(status.get("containerStatuses"))):
            cs = _m(cs)
            restarts += _i(cs.get("restartCount"))
            finished = _finished_at(cs)
            if finished is not None and last_restart < finished:
                last_restart = finished
            state = _m(cs.get("state"))
            terminated, waiting = state.get("terminated"), state.get("waiting")
            if waiting is not None and _m(waiting).get("reason"):
                reason = _s(_m(waiting)["reason"])
            elif terminated is not None:
                reason = _terminated_reason(_m(terminated), "")
            elif cs.get("ready") is True and state.get("running") is not None:
                has_running = True
                ready += 1
        # Back to "Running" if a container still runs although another one completed.
        if reason == "Completed" and has_running:
            reason = "Running" if _condition_true_any(status.get("conditions"), "Ready") \
                else "NotReady"

    if _deleting(pod) and status.get("reason") == NODE_UNREACHABLE_POD_REASON:
        reason = "Unknown"
    elif _deleting(pod) and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"
    return reason, ready, total, restarts, last_restart


def _condition_true_any(conditions: Any, type_: str) -> bool:
    """hasPodReadyCondition: any condition of ``type_`` with status True."""
    return any(_m(c).get("type") == type_ and _m(c).get("status") == "True"
               for c in _l(conditions))


def pod_row(pod: dict, now: int) -> Row:
    spec, status = _m(pod.get("spec")), _m(pod.get("status"))
    reason, ready, total, restarts, last_restart = pod_status_reason(pod)
    restarts_text = str(restarts)
    if restarts != 0 and last_restart != ZERO_TIME:
        restarts_text = f"{restarts} ({since_ns(last_restart, now)} ago)"

    # v1 -> internal conversion: podIP wins over podIPs[0] when they differ.
    pod_ip = _s(status.get("podIP"))
    if not pod_ip:
        ips = _l(status.get("podIPs"))
        pod_ip = _s(_m(ips[0]).get("ip")) if ips else ""
    gates = _l(spec.get("readinessGates"))
    readiness = "<none>"
    if gates:
        true_count = 0
        pod_conditions = [_m(c) for c in _l(status.get("conditions"))]
        for gate in gates:
            wanted = _m(gate).get("conditionType")
            for c in pod_conditions:
                if c.get("type") == wanted:
                    if c.get("status") == "True":
                        true_count += 1
                    break
        readiness = f"{true_count}/{len(gates)}"

    cells = [_name(pod), f"{ready}/{total}", reason, restarts_text, _age(pod, now),
             pod_ip or "<none>", _s(spec.get("nodeName")) or "<none>",
             _s(status.get("nominatedNodeName")) or "<none>", readiness]
    conditions: list[dict[str, Any]] | None = None
    if status.get("phase") == "Succeeded":
        conditions = POD_SUCCEEDED_CONDITIONS
    elif status.get("phase") == "Failed":
        conditions = POD_FAILED_CONDITIONS
    return cells, conditions


# -- nodes --------------------------------------------------------------------------------------

NODE_COLUMNS = [
    name_col(),
    col("Status", "string", "The status of the node"),
    col("Roles", "string", "The roles of the node"),
    age_col(),
    col("Version", "string", "Kubelet Version reported by the node."),
    col("Internal-IP", "string", "List of addresses reachable to the node. Queried from cloud "
        "provider, if available.", priority=1),
    col("External-IP", "string", "List of addresses reachable to the node. Queried from cloud "
        "provider, if available.", priority=1),
    col("OS-Image", "string", "OS Image reported by the node from /etc/os-release (e.g. Debian "
        "GNU/Linux 7 (wheezy)).", priority=1),
    col("Kernel-Version", "string", "Kernel Version reported by the node from 'uname -r' (e.g. "
        "3.16.0-0.bpo.4-amd64).", priority=1),
    col("Container-Runtime", "string", "ContainerRuntime Version reported by the node through "
        "runtime remote API (e.g. containerd://1.4.2).", priority=1),
]

NODE_ROLE_PREFIX = "node-role.kubernetes.io/"
NODE_ROLE_LABEL = "kubernetes.io/role"


def node_roles(node: dict) -> list[str]:
    """findNodeRoles: ``node-role.kubernetes.io/<role>`` keys and ``kubernetes.io/role`` values."""
    roles: set[str] = set()
    for k, v in _m(_meta(node).get("labels")).items():
        if k.startswith(NODE_ROLE_PREFIX):
            role = k[len(NODE_ROLE_PREFIX):]
            if role:
                roles.add(role)
        elif k == NODE_ROLE_LABEL and v:
            roles.add(_s(v))
    return sorted(roles)


def node_status(node: dict) -> str:
    conditions: dict[Any, dict] = {}
    for c in _l(_m(node.get("status")).get("conditions")):
        c = _m(c)
        conditions[c.get("type")] = c
    parts = []
    ready = conditions.get("Ready")
    if ready is not None:
        parts.append("Ready" if ready.get("status") == "True" else "NotReady")
    if not parts:
        parts.append("Unknown")
    if _m(node.get("spec")).get("unschedulable") is True:
        parts.append("SchedulingDisabled")
    return ",".join(parts)


def _node_address(node: dict, type_: str) -> str:
    for a in _l(_m(node.get("status")).get("addresses")):
        if _m(a).get("type") == type_:
            return _s(_m(a).get("address"))
    return "<none>"


def node_row(node: dict, now: int) -> Row:
    info = _m(_m(node.get("status")).get("nodeInfo"))
    roles = ",".join(node_roles(node)) or "<none>"
    return [_name(node), node_status(node), roles, _age(node, now),
            _s(info.get("kubeletVersion")),
            _node_address(node, "InternalIP"), _node_address(node, "ExternalIP"),
            _s(info.get("osImage")) or "<unknown>", _s(info.get("kernelVersion")) or "<unknown>",
            _s(info.get("containerRuntimeVersion")) or "<unknown>"], None


# -- namespaces, configmaps, secrets, service accounts -----------------------------------------

NAMESPACE_COLUMNS = [name_col(), col("Status", "string", "The status of the namespace"), age_col()]


def namespace_row(ns: dict, now: int) -> Row:
    return [_name(ns), _s(_m(ns.get("status")).get("phase")), _age(ns, now)], None


CONFIGMAP_COLUMNS = [
    name_col(),
    col("Data", "string", "Data contains the configuration data. Each key must consist of "
        "alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use "
        "the BinaryData field. The keys stored in Data must not overlap with the keys in the "
        "BinaryData field, this is enforced during validation process."),
    age_col(),
]


def configmap_row(cm: dict, now: int) -> Row:
    return [_name(cm), len(_m(cm.get("data"))) + len(_m(cm.get("binaryData"))), _age(cm, now)], None


SECRET_COLUMNS = [
    name_col(),
    col("Type", "string", "Used to facilitate programmatic handling of secret data. More info: "
        "https://kubernetes.io/docs/concepts/configuration/secret/#secret-types"),
    col("Data", "string", "Data contains the secret data. Each key must consist of alphanumeric "
        "characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded "
        "string, representing the arbitrary (possibly non-string) data value here. Described in "
        "https://tools.ietf.org/html/rfc4648#section-4"),
    age_col(),
]


def secret_row(secret: dict, now: int) -> Row:
    return [_name(secret), _s(secret.get("type")), len(_m(secret.get("data"))),
            _age(secret, now)], None


SERVICE_ACCOUNT_COLUMNS = [
    name_col(),
    col("Secrets", "string", "Secrets is a list of the secrets in the same namespace that pods "
        "running using this ServiceAccount are allowed to use."),
    age_col(),
]


def service_account_row(sa: dict, now: int) -> Row:
    return [_name(sa), len(_l(sa.get("secrets"))), _age(sa, now)], None


# -- events -------------------------------------------------------------------------------------

EVENT_COLUMNS = [
    col("Last Seen", "string", "The time at which the most recent occurrence of this event was "
        "recorded."),
    col("Type", "string", "Type of this event (Normal, Warning), new types could be added in the "
        "future"),
    col("Reason", "string", "This should be a short, machine understandable string that gives the "
        "reason for the transition into the object's current status."),
    col("Object", "string", "The object that this event is about."),
    col("Subobject", "string", "If referring to a piece of an object instead of an entire object, "
        "this string should contain a valid JSON/Go field access statement, such as "
        "desiredState.manifest.containers[2].", priority=1),
    col("Source", "string", "The component reporting this event. Should be a short machine "
        "understandable string.", priority=1),
    col("Message", "string", "A human-readable description of the status of this operation."),
    col("First Seen", "string", "The time at which the event was first recorded. (Time of server "
        "receipt is in TypeMeta.)", priority=1),
    col("Count", "string", "The number of times this event has occurred.", priority=1),
    col("Name", "string", NAME_DOC, priority=1, format_="name"),
]


def _event_fields(event: dict) -> dict[str, Any]:
    """The internal core Event's fields, from a core/v1 or an events.k8s.io/v1 Event."""
    if _s(event.get("apiVersion")).startswith("events.k8s.io/"):
        return {
            "involvedObject": _m(event.get("regarding")),
            "source": _m(event.get("deprecatedSource")),
            "firstTimestamp": event.get("deprecatedFirstTimestamp"),
            "lastTimestamp": event.get("deprecatedLastTimestamp"),
            "count": event.get("deprecatedCount"),
            "message": event.get("note"),
            "reportingController": event.get("reportingController"),
            "reportingInstance": event.get("reportingInstance"),
        }
    return {
        "involvedObject": _m(event.get("involvedObject")),
        "source": _m(event.get("source")),
        "firstTimestamp": event.get("firstTimestamp"),
        "lastTimestamp": event.get("lastTimestamp"),
        "count": event.get("count"),
        "message": event.get("message"),
        "reportingController": event.get("reportingComponent"),
        "reportingInstance": event.get("reportingInstance"),
    }


def format_event_source(source: dict, controller: Any, instance: Any) -> str:
    """formatEventSource: component (or reportingController), then ", host" if any."""
    component = _s(source.get("component")) or _s(controller)
    host = _s(source.get("host")) or _s(instance)
    return component if not host else f"{component}, {host}"


def event_row(event: dict, now: int) -> Row:
    f = _event_fields(event)
    first = parse_time_ns(f["firstTimestamp"])
    first_seen = since_ns(first, now) if first not in (None, ZERO_TIME) \
        else since(event.get("eventTime"), now)
    last = parse_time_ns(f["lastTimestamp"])
    last_seen = since_ns(last, now) if last not in (None, ZERO_TIME) else first_seen
    count = _i(f["count"])
    series = event.get("series")
    if series is not None:
        last_seen = since(_m(series).get("lastObservedTime"), now)
        count = _i(_m(series).get("count"))
    elif count == 0:
        count = 1  # singleton events of the new API carry no count
    involved = f["involvedObject"]
    kind = _s(involved.get("kind")).lower()
    target = f"{kind}/{_s(involved.get('name'))}" if involved.get("name") else kind
    return [last_seen, _s(event.get("type")), _s(event.get("reason")), target,
            _s(involved.get("fieldPath")),
            format_event_source(f["source"], f["reportingController"], f["reportingInstance"]),
            _s(f["message"]).strip(), first_seen, count, _name(event)], None


# -- services -----------------------------------------------------------------------------------

SERVICE_COLUMNS = [
    name_col(),
    col("Type", "string", "type determines how the Service is exposed. Defaults to ClusterIP. Valid "
        "options are ExternalName, ClusterIP, NodePort, and LoadBalancer."),
    col("Cluster-IP", "string", "clusterIP is the IP address of the service and is usually assigned "
        "randomly."),
    col("External-IP", "string", "externalIPs is a list of IP addresses for which nodes in the "
        "cluster will also accept traffic for this service."),
    col("Port(s)", "string", "The list of ports that are exposed by this service. More info: "
        "https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies"),
    age_col(),
    col("Selector", "string", "Route service traffic to pods with label keys and values matching "
        "this selector. If empty or not present, the service is assumed to have an external process "
        "managing its endpoints, which Kubernetes will not modify.", priority=1),
]


def _load_balancer_ips(status: dict) -> str:
    """loadBalancerStatusStringer (wide: never clipped): sorted unique IPs or hostnames."""
    found = set()
    for ing in _l(_m(_m(status.get("loadBalancer"))).get("ingress")):
        ing = _m(ing)
        if ing.get("ip"):
            found.add(_s(ing["ip"]))
        elif ing.get("hostname"):
            found.add(_s(ing["hostname"]))
    return ",".join(sorted(found))


def service_external_ip(svc: dict) -> str:
    spec = _m(svc.get("spec"))
    external = [_s(ip) for ip in _l(spec.get("externalIPs"))]
    svc_type = spec.get("type")
    if svc_type in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else "<none>"
    if svc_type == "LoadBalancer":
        lb = _load_balancer_ips(_m(svc.get("status")))
        if external:
            return ",".join((lb.split(",") if lb else []) + external)
        return lb or "<pending>"
    if svc_type == "ExternalName":
        return _s(spec.get("externalName"))
    return "<unknown>"


def service_ports(ports: Any) -> str:
    """makePortString: ``port[:nodePort]/protocol`` joined by commas."""
    pieces = []
    for p in _l(ports):
        p = _m(p)
        protocol = _s(p.get("protocol")) or "TCP"
        node_port = _i(p.get("nodePort"))
        if node_port > 0:
            pieces.append(f"{_i(p.get('port'))}:{node_port}/{protocol}")
        else:
            pieces.append(f"{_i(p.get('port'))}/{protocol}")
    return ",".join(pieces)


def service_row(svc: dict, now: int) -> Row:
    spec = _m(svc.get("spec"))
    cluster_ips = _l(spec.get("clusterIPs"))
    cluster_ip = _s(cluster_ips[0]) if cluster_ips else _s(spec.get("clusterIP"))
    return [_name(svc), _s(spec.get("type")), cluster_ip or "<none>", service_external_ip(svc),
            service_ports(spec.get("ports")) or "<none>", _age(svc, now),
            format_labels(spec.get("selector"))], None



ENDPOINTS_COLUMNS = [
    name_col(),
    col("Endpoints", "string", "The set of all endpoints is the union of all subsets. Addresses "
        "are placed into subsets according to the IPs they share. A single address with multiple "
        "ports, some of which are ready and some of which are not (because they come from "
        "different containers) will result in the address being displayed in different subsets "
        "for the different ports. No address will appear in both Addresses and NotReadyAddresses "
        "in the same subset. Sets of addresses and ports that comprise a service."),
    age_col(),
]


def _endpoints_cell(subsets: list) -> str:
    """formatEndpoints: ready ``ip:port`` pairs, three at most."""
    if not subsets:
        return "<none>"
    shown: list[str] = []
    count, limit = 0, 3
    for subset in subsets:
        subset = _m(subset)
        addresses = [_s(_m(a).get("ip")) for a in _l(subset.get("addresses"))]
        ports = _l(subset.get("ports"))
        for port in ports or [None]:
            count += len(addresses)
            for ip in addresses:
                if len(shown) == limit:
                    break
                if port is None:
                    shown.append(ip)
                else:
                    host = f"[{ip}]" if ":" in ip else ip
                    shown.append(f"{host}:{_m(port).get('port', 0)}")
    text = ",".join(shown)
    return f"{text} + {count - limit} more..." if count > limit else text


def endpoints_row(ep: dict, now: int) -> Row:
    return [_name(ep), _endpoints_cell(_l(ep.get("subsets"))), _age(ep, now)], None


ENDPOINT_SLICE_COLUMNS = [
    name_col(),
    col("AddressType", "string", "addressType specifies the type of address carried by this "
        "EndpointSlice. All addresses in this slice must be the same type. This field is immutable "
        "after creation. The following address types are currently supported: * IPv4: Represents "
        "an IPv4 Address. * IPv6: Represents an IPv6 Address. * FQDN: Represents a Fully Qualified "
        "Domain Name."),
    col("Ports", "string", "ports specifies the list of network ports exposed by each endpoint in "
        "this slice. Each port must have a unique name. When ports is empty, it indicates that "
        "there are no defined ports. When a port is defined with a nil port value, it indicates "
        "\"all ports\". Each slice may include a maximum of 100 ports."),
    col("Endpoints", "string", "endpoints is a list of unique endpoints in this slice. Each slice "
        "may include a maximum of 1000 endpoints."),
    age_col(),
]


def _list_with_more(items: list[str], count: int, limit: int = 3) -> str:
    """listWithMoreString."""
    text = ",".join(items[:limit])
    if count > limit:
        return f"{text} + {count - limit} more..."
    return text or "<unset>"


def endpoint_slice_row(slice_: dict, now: int) -> Row:
    ports = []
    for port in _l(slice_.get("ports")):
        port = _m(port)
        ports.append(str(port["port"]) if port.get("port") is not None
                     else _s(port.get("name")) if port.get("name") is not None else "*")
    addresses = [_s(a) for e in _l(slice_.get("endpoints")) for a in _l(_m(e).get("addresses"))]
    return [_name(slice_), _s(slice_.get("addressType")), _list_with_more(ports, len(ports)),
            _list_with_more(addresses, len(addresses)), _age(slice_, now)], None

# -- workloads ----------------------------------------------------------------------------------

DEPLOYMENT_COLUMNS = [
    name_col(),
    col("Ready", "string", "Number of the pod with ready state"),
    col("Up-to-date", "string", "Total number of non-terminated pods targeted by this deployment "
        "that have the desired template spec."),
    col("Available", "string", "Total number of available pods (ready for at least "
        "minReadySeconds) targeted by this deployment."),
    age_col(),
    *template_container_cols(),
    col("Selector", "string", "Label selector for pods. Existing ReplicaSets whose pods are selected "
        "by this will be the ones affected by this deployment.", priority=1),
]


def _template_container_cells(obj: dict) -> tuple[str, str]:
    """The cells under ``template_container_cols``: the pod template's container names and
    images."""
    return layout_container_cells(
        _m(_m(_m(obj.get("spec")).get("template")).get("spec")).get("containers"))


def _replicas(spec: dict) -> int:
    """spec.replicas, which defaulting sets to 1 when unset."""
    return _i(spec.get("replicas"), 1)


def _ready_of_replicas(spec: dict, status: dict) -> str:
    """The Ready cell of deployments and statefulsets: ``ready/desired``."""
    return f"{_i(status.get('readyReplicas'))}/{_replicas(spec)}"


def deployment_row(d: dict, now: int) -> Row:
    spec, status = _m(d.get("spec")), _m(d.get("status"))
    try:
        selector = _selector_string(spec.get("selector"))
    except SelectorError:
        selector = "<invalid>"
    names, images = _template_container_cells(d)
    return [_name(d), _ready_of_replicas(spec, status),
            _i(status.get("updatedReplicas")), _i(status.get("availableReplicas")), _age(d, now),
            names, images, selector], None


REPLICASET_COLUMNS = [
    name_col(),
    col("Desired", "integer", "Replicas is the number of desired pods. This is a pointer to "
        "distinguish between explicit zero and unspecified. Defaults to 1. More info: "
        "https://kubernetes.io/docs/concepts/workloads/controllers/replicaset/#how-a-replicaset-works"),
    col("Current", "integer", "Replicas is the most recently observed number of non-terminating "
        "pods. More info: "
        "https://kubernetes.io/docs/concepts/workloads/controllers/replicaset/#how-a-replicaset-works"),
    col("Ready", "integer", "The number of non-terminating pods targeted by this ReplicaSet with a "
        "Ready Condition."),
    age_col(),
    *template_container_cols(),
    col("Selector", "string", SELECTOR_DOC, priority=1),
]


def replicaset_row(rs: dict, now: int) -> Row:
    spec, status = _m(rs.get("spec")), _m(rs.get("status"))
    names, images = _template_container_cells(rs)
    return [_name(rs), _replicas(spec), _i(status.get("replicas")),
            _i(status.get("readyReplicas")), _age(rs, now), names, images,
            format_label_selector(spec.get("selector"))], None


STATEFULSET_COLUMNS = [
    name_col(),
    col("Ready", "string", "Number of the pod with ready state"),
    age_col(),
    *template_container_cols(),
]


def statefulset_row(ss: dict, now: int) -> Row:
    spec, status = _m(ss.get("spec")), _m(ss.get("status"))
    names, images = _template_container_cells(ss)
    return [_name(ss), _ready_of_replicas(spec, status), _age(ss, now),
            names, images], None


DAEMONSET_COLUMNS = [
    name_col(),
    col("Desired", "integer", "The total number of nodes that should be running the daemon pod "
        "(including nodes correctly running the daemon pod)."),
    col("Current", "integer", "The number of nodes that are running at least 1 daemon pod and are "
        "supposed to run the daemon pod."),
    col("Ready", "integer", "The number of nodes that should be running the daemon pod and have one "
        "or more of the daemon pod running with a Ready Condition."),
    col("Up-to-date", "integer", "The total number of nodes that are running updated daemon pod"),
    col("Available", "integer", "The number of nodes that should be running the daemon pod and have "
        "one or more of the daemon pod running and available (ready for at least "
        "spec.minReadySeconds)"),
    col("Node Selector", "string", "NodeSelector is a selector which must be true for the pod to "
        "fit on a node. Selector which must match a node's labels for the pod to be scheduled on "
        "that node. More info: "
        "https://kubernetes.io/docs/concepts/configuration/assign-pod-node/"),
    age_col(),
    *template_container_cols(),
    col("Selector", "string", "A label query over pods that are managed by the daemon set. Must "
        "match in order to be controlled. It must match the pod template's labels. More info: "
        "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
        priority=1),
]


def daemonset_row(ds: dict, now: int) -> Row:
    spec, status = _m(ds.get("spec")), _m(ds.get("status"))
    node_selector = _m(_m(spec.get("template")).get("spec")).get("nodeSelector")
    names, images = _template_container_cells(ds)
    return [_name(ds), _i(status.get("desiredNumberScheduled")),
            _i(status.get("currentNumberScheduled")), _i(status.get("numberReady")),
            _i(status.get("updatedNumberScheduled")), _i(status.get("numberAvailable")),
            format_labels(node_selector), _age(ds, now), names, images,
            format_label_selector(spec.get("selector"))], None


JOB_COLUMNS = [
    name_col(),
    col("Status", "string", "Status of the job."),
    col("Completions", "string", "The number of pods which reached phase Succeeded. The value "
        "increases monotonically for a given spec. However, it may decrease in reaction to scale "
        "down of elastic indexed jobs."),
    col("Duration", "string", "Time required to complete the job."),
    age_col(),
    *template_container_cols(),
    col("Selector", "string", "A label query over pods that should match the pod count. Normally, "
        "the system sets this field for you. More info: "
        "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
        priority=1),
]


def job_row(job: dict, now: int) -> Row:
    spec, status = _m(job.get("spec")), _m(job.get("status"))
    succeeded = _i(status.get("succeeded"))
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{_i(spec['completions'])}"
    else:
        parallelism = _i(spec.get("parallelism"))
        completions = f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"
    start, done = parse_time_ns(status.get("startTime")), parse_time_ns(status.get("completionTime"))
    duration = ""
    if start is not None:
        duration = human_duration((done if done is not None else now) - start)
    conditions = status.get("conditions")
    if _condition_true(conditions, "Complete"):
        state = "Complete"
    elif _condition_true(conditions, "Failed"):
        state = "Failed"
    elif _deleting(job):
        state = "Terminating"
    elif _condition_true(conditions, "Suspended"):
        state = "Suspended"
    elif _condition_true(conditions, "FailureTarget"):
        state = "FailureTarget"
    elif _condition_true(conditions, "SuccessCriteriaMet"):
        state = "SuccessCriteriaMet"
    else:
        state = "Running"
    names, images = _template_container_cells(job)
    return [_name(job), state, completions, duration, _age(job, now), names, images,
            format_label_selector(spec.get("selector"))], None


CRONJOB_COLUMNS = [
    name_col(),
    col("Schedule", "string", "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."),
    col("Timezone", "string", "The time zone name for the given schedule, see "
        "https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will "
        "default to the time zone of the kube-controller-manager process. The set of valid time zone "
        "names and the time zone offset is loaded from the system-wide time zone database by the API "
        "server during CronJob validation and the controller manager during execution. If no "
        "system-wide time zone database can be found a bundled version of the database is used "
        "instead. If the time zone name becomes invalid during the lifetime of a CronJob or due to a "
        "change in host configuration, the controller will stop creating new new Jobs and will "
        "create a system event with the reason UnknownTimeZone. More information can be found in "
        "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones"),
    col("Suspend", "boolean", "This flag tells the controller to suspend subsequent executions, it "
        "does not apply to already started executions.  Defaults to false."),
    col("Active", "integer", "A list of pointers to currently running jobs."),
    col("Last Schedule", "string", "Information when was the last time the job was successfully "
        "scheduled."),
    age_col(),
    *template_container_cols(),
    JOB_COLUMNS[-1],
]


def cronjob_row(cj: dict, now: int) -> Row:
    """``printCronJob``: ``<none>`` for an unset time zone or last schedule."""
    spec, status = _m(cj.get("spec")), _m(cj.get("status"))
    last = status.get("lastScheduleTime")
    last_schedule = since(last, now) if last else "<none>"
    zone = spec.get("timeZone")
    suspend = spec.get("suspend")
    suspend_cell = "<unset>" if suspend is None else ("True" if suspend else "False")
    job_spec = _m(_m(spec.get("jobTemplate")).get("spec"))
    names, images = layout_container_cells(_m(_m(job_spec.get("template")).get("spec")).get("containers"))
    return [_name(cj), _s(spec.get("schedule")), "<none>" if zone is None else _s(zone), suspend_cell,
            len(_l(status.get("active"))), last_schedule, _age(cj, now), names, images,
            format_label_selector(job_spec.get("selector"))], None


# -- policy, scheduling, node, coordination, quota, admission -----------------------------------

PDB_COLUMNS = [
    name_col(),
    col("Min Available", "string", "The minimum number of pods that must be available."),
    col("Max Unavailable", "string", "The maximum number of pods that may be unavailable."),
    col("Allowed Disruptions", "integer", "Calculated number of pods that may be disrupted at this "
        "time."),
    age_col(),
]


def pdb_row(pdb: dict, now: int) -> Row:
    spec, status = _m(pdb.get("spec")), _m(pdb.get("status"))
    min_available = spec.get("minAvailable")
    max_unavailable = spec.get("maxUnavailable")
    return [_name(pdb),
            "N/A" if min_available is None else _int_or_string(min_available),
            "N/A" if max_unavailable is None else _int_or_string(max_unavailable),
            _i(status.get("disruptionsAllowed")), _age(pdb, now)], None


PRIORITY_CLASS_COLUMNS = [
    name_col(),
    col("Value", "integer", "value represents the integer value of this priority class. This is the "
        "actual priority that pods receive when they have the name of this class in their pod "
        "spec."),
    col("Global-Default", "boolean", "globalDefault specifies whether this PriorityClass should be "
        "considered as the default priority for pods that do not have any priority class. Only one "
        "PriorityClass can be marked as `globalDefault`. However, if more than one PriorityClasses "
        "exists with their `globalDefault` field set to true, the smallest value of such global "
        "default PriorityClasses will be used as the default priority."),
    age_col(),
    col("PreemptionPolicy", "string", "preemptionPolicy is the Policy for preempting pods with lower "
        "priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset."),
]


def priority_class_row(pc: dict, now: int) -> Row:
    return [_name(pc), _i(pc.get("value")), pc.get("globalDefault") is True, _age(pc, now),
            _s(pc.get("preemptionPolicy"))], None


# The Go code documents Handler with ObjectMeta's (nonexistent) "handler" doc: empty.
RUNTIME_CLASS_COLUMNS = [name_col(), col("Handler", "string", ""), age_col()]


def runtime_class_row(rc: dict, now: int) -> Row:
    return [_name(rc), _s(rc.get("handler")), _age(rc, now)], None


LEASE_COLUMNS = [
    name_col(),
    col("Holder", "string", "holderIdentity contains the identity of the holder of a current "
        "lease. If Coordinated Leader Election is used, the holder identity must be equal to the "
        "elected LeaseCandidate.metadata.name field."),
    age_col(),
]


def lease_row(lease: dict, now: int) -> Row:
    return [_name(lease), _s(_m(lease.get("spec")).get("holderIdentity")), _age(lease, now)], None


RESOURCE_QUOTA_COLUMNS = [
    name_col(),
    col("Request", "string", "Request represents a minimum amount of cpu/memory that a container "
        "may consume."),
    col("Limit", "string", "Limits control the maximum amount of cpu/memory that a container may "
        "use independent of contention on the node."),
    age_col(),
]


def resource_quota_row(quota: dict, now: int) -> Row:
    status = _m(quota.get("status"))
    hard, used = _m(status.get("hard")), _m(status.get("used"))
    requests: list[str] = []
    limits: list[str] = []
    for resource in sorted(hard):
        pieces = resource.split(".")
        target = limits if len(pieces) > 1 and pieces[0] == "limits" else requests
        target.append(f"{resource}: {_quantity(used.get(resource))}/{_quantity(hard[resource])}")
    return [_name(quota), ", ".join(requests), ", ".join(limits), _age(quota, now)], None


WEBHOOK_COLUMNS = [
    name_col(),
    col("Webhooks", "integer", "Webhooks indicates the number of webhooks registered in this "
        "configuration"),
    age_col(),
]


def webhook_configuration_row(cfg: dict, now: int) -> Row:
    return [_name(cfg), len(_l(cfg.get("webhooks"))), _age(cfg, now)], None


# -- resource.k8s.io ---------------------------------------------------------------------------------

DEVICE_CLASS_COLUMNS = [name_col(), age_col()]
RESOURCE_CLAIM_TEMPLATE_COLUMNS = [name_col(), age_col()]


def name_age_row(obj: dict, now: int) -> Row:
    return [_name(obj), _age(obj, now)], None


RESOURCE_CLAIM_COLUMNS = [
    name_col(),
    col("State", "string", "A summary of the current state (allocated, pending, reserved, etc.)."),
    age_col(),
]


def resource_claim_state(claim: dict) -> str:
    """``resourceClaimState``: deleted / pending, or allocated and maybe reserved."""
    status = _m(claim.get("status"))
    states = []
    if _deleting(claim):
        states.append("deleted")
    if status.get("allocation") is None:
        if not _deleting(claim):
            states.append("pending")
    else:
        states.append("allocated")
        if _l(status.get("reservedFor")):
            states.append("reserved")
    return ",".join(states)


def resource_claim_row(claim: dict, now: int) -> Row:
    return [_name(claim), resource_claim_state(claim), _age(claim, now)], None


RESOURCE_SLICE_COLUMNS = [
    name_col(),
    col("Node", "string", "nodeName identifies the node which provides the resources in this pool. "
        "A field selector can be used to list only ResourceSlice objects belonging to a certain "
        "node.\n\nThis field can be used to limit access from nodes to ResourceSlices with the "
        "same node name. It also indicates to autoscalers that adding new nodes of the same type "
        "as some old node might also make new resources available.\n\nExactly one of NodeName, "
        "NodeSelector, AllNodes, and PerDeviceNodeSelection must be set. This field is immutable."),
    col("Driver", "string", "driver identifies the DRA driver providing the capacity information. "
        "A field selector can be used to list only ResourceSlice objects with a certain driver "
        "name.\n\nMust be a DNS subdomain and should end with a DNS domain owned by the vendor of "
        "the driver. It should use only lower case characters. This field is immutable."),
    col("Pool", "string", "name is used to identify the pool. For node-local devices, this is "
        "often the node name, but this is not required.\n\nIt must not be longer than 253 "
        "characters and must consist of one or more DNS sub-domains separated by slashes. This "
        "field is immutable."),
    age_col(),
]


def resource_slice_row(rs: dict, now: int) -> Row:
    spec = _m(rs.get("spec"))
    return [_name(rs), _s(spec.get("nodeName")), _s(spec.get("driver")),
            _s(_m(spec.get("pool")).get("name")), _age(rs, now)], None


# -- RBAC ---------------------------------------------------------------------------------------
# Roles and ClusterRoles have no printer upstream: the default table (Name, Created At).

def _binding_columns(kind: str) -> list[dict[str, Any]]:
    return [
        name_col(),
        col("Role", "string", "RoleRef can only reference a ClusterRole in the global namespace. "
            "If the RoleRef cannot be resolved, the Authorizer must return an error. This field "
            "is immutable." if kind == "clusterRoleBinding" else
            "RoleRef can reference a Role in the current namespace or a ClusterRole in the global "
            "namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. "
            "This field is immutable."),
        age_col(),
        col("Users", "string", f"Users in the {kind}", priority=1),
        col("Groups", "string", f"Groups in the {kind}", priority=1),
        col("ServiceAccounts", "string", f"ServiceAccounts in the {kind}", priority=1),
    ]


ROLE_BINDING_COLUMNS = _binding_columns("roleBinding")
CLUSTER_ROLE_BINDING_COLUMNS = _binding_columns("clusterRoleBinding")


def subjects_strings(subjects: Any) -> tuple[list[str], list[str], list[str]]:
    """``rbac.SubjectsStrings``: users, groups and ``namespace/name`` service accounts."""
    users, groups, sas = [], [], []
    for subject in _l(subjects):
        subject = _m(subject)
        kind, name = subject.get("kind"), _s(subject.get("name"))
        if kind == "ServiceAccount":
            sas.append(f"{_s(subject.get('namespace'))}/{name}")
        elif kind == "User":
            users.append(name)
        elif kind == "Group":
            groups.append(name)
    return users, groups, sas


def binding_row(binding: dict, now: int) -> Row:
    ref = _m(binding.get("roleRef"))
    users, groups, sas = subjects_strings(binding.get("subjects"))
    return [_name(binding), f"{_s(ref.get('kind'))}/{_s(ref.get('name'))}", _age(binding, now),
            ", ".join(users), ", ".join(groups), ", ".join(sas)], None


# -- the registry -------------------------------------------------------------------------------

# (group, kind) -> (column definitions, row function)
PRINTERS: dict[tuple[str, str], tuple[list[dict[str, Any]], RowFunc]] = {
    ("", "Pod"): (POD_COLUMNS, pod_row),
    ("", "Node"): (NODE_COLUMNS, node_row),
    ("", "Namespace"): (NAMESPACE_COLUMNS, namespace_row),
    ("", "Event"): (EVENT_COLUMNS, event_row),
    ("events.k8s.io", "Event"): (EVENT_COLUMNS, event_row),
    ("", "ConfigMap"): (CONFIGMAP_COLUMNS, configmap_row),
    ("", "Secret"): (SECRET_COLUMNS, secret_row),
    ("", "ServiceAccount"): (SERVICE_ACCOUNT_COLUMNS, service_account_row),
    ("", "Service"): (SERVICE_COLUMNS, service_row),
    ("", "Endpoints"): (ENDPOINTS_COLUMNS, endpoints_row),
    ("discovery.k8s.io", "EndpointSlice"): (ENDPOINT_SLICE_COLUMNS, endpoint_slice_row),
    ("", "ResourceQuota"): (RESOURCE_QUOTA_COLUMNS, resource_quota_row),
    ("apps", "Deployment"): (DEPLOYMENT_COLUMNS, deployment_row),
    ("apps", "ReplicaSet"): (REPLICASET_COLUMNS, replicaset_row),
    ("apps", "StatefulSet"): (STATEFULSET_COLUMNS, statefulset_row),
    ("apps", "DaemonSet"): (DAEMONSET_COLUMNS, daemonset_row),
    ("batch", "Job"): (JOB_COLUMNS, job_row),
    ("batch", "CronJob"): (CRONJOB_COLUMNS, cronjob_row),
    ("policy", "PodDisruptionBudget"): (PDB_COLUMNS, pdb_row),
    ("scheduling.k8s.io", "PriorityClass"): (PRIORITY_CLASS_COLUMNS, priority_class_row),
    ("node.k8s.io", "RuntimeClass"): (RUNTIME_CLASS_COLUMNS, runtime_class_row),
    ("coordination.k8s.io", "Lease"): (LEASE_COLUMNS, lease_row),
    ("rbac.authorization.k8s.io", "RoleBinding"): (ROLE_BINDING_COLUMNS, binding_row),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): (CLUSTER_ROLE_BINDING_COLUMNS, binding_row),
    ("resource.k8s.io", "DeviceClass"): (DEVICE_CLASS_COLUMNS, name_age_row),
    ("resource.k8s.io", "ResourceClaim"): (RESOURCE_CLAIM_COLUMNS, resource_claim_row),
    ("resource.k8s.io", "ResourceClaimTemplate"): (RESOURCE_CLAIM_TEMPLATE_COLUMNS, name_age_row),
    ("resource.k8s.io", "ResourceSlice"): (RESOURCE_SLICE_COLUMNS, resource_slice_row),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"):
        (WEBHOOK_COLUMNS, webhook_configuration_row),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"):
        (WEBHOOK_COLUMNS, webhook_configuration_row),
}
