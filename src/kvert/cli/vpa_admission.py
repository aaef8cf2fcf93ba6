"""``kvert vpa admission-controller``: the VPA admission webhook for any API server, with upstream
VPA 1.8's flags (``pkg/admission-controller/config/config.go``, ``common/flags.go``).

It serves HTTPS on ``--port`` (8000) at ``/`` (and ``/mutate``), its metrics and
``/health-check`` on ``--address`` (``:8944``), reads VPAs, LimitRanges and the pods'
controllers through informers (``--kubeconfig``, else in a pod the in-cluster configuration)
and registers the ``vpa-webhook-config`` MutatingWebhookConfiguration: by Service
(``--webhook-service`` in ``$NAMESPACE``, port 443) as upstream, or by URL
(``--register-by-url``: ``--webhook-address:--webhook-port``).

Certificates: upstream's ``--client-ca-file``, ``--tls-cert-file`` and ``--tls-private-key``
(``/etc/tls-certs/{caCert,serverCert,serverKey}.pem``, gencerts.sh's names; ``--reload-cert``
follows their changes). When none is given and the default files are absent, the controller
makes a self-signed CA and a serving certificate for ``vpa-webhook.NAMESPACE.svc`` at start
(kept in ``--cert-dir`` when given, else only for the process's life) and registers the
webhook with that CA, so no Secret is needed.

Once registered it renews its status Lease (upstream 1.8's ``--status-lease-name``,
``--status-lease-namespace``, ``--status-lease-update-interval``), which the updater reads.
It runs until SIGINT/SIGTERM and then deletes its registration if it is still the one it made
(``--unregister-on-exit``, default true), so that a controller that is gone leaves no webhook
behind while a newer one's registration stays.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import logging
import os
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kvert.cli.component import client_from_args, go_bool, run_component, stop_on_signals

if TYPE_CHECKING:
    from kvert.api.quantity import Quantity
    from kvert.clock import Clock

log = logging.getLogger(__name__)

TLS_DIR = Path("/etc/tls-certs")
CLIENT_CA_FILE = TLS_DIR / "caCert.pem"
TLS_CERT_FILE = TLS_DIR / "serverCert.pem"
TLS_PRIVATE_KEY = TLS_DIR / "serverKey.pem"
DEFAULT_NAMESPACE = "kube-system"     # upstream's status.AdmissionControllerStatusNamespace

EXAMPLE = """\
examples:
  # in a pod (kvert vpa manifests writes the Deployment): every flag at upstream's default
  kvert vpa admission-controller

  # outside the cluster, registered by URL, certificates made and kept in a directory
  kvert vpa admission-controller --kubeconfig ~/.kvert/kubeconfig --register-by-url \\
      --webhook-address https://127.0.0.1 --webhook-port 8000 --cert-dir ~/.kvert/vpa-webhook

  # with gencerts.sh's Secret mounted at /etc/tls-certs, reloaded when it changes
  kvert vpa admission-controller --reload-cert

booleans take Go's form: --register-webhook=false, --unregister-on-exit=false.
"""


def _bool_flag(p: argparse.ArgumentParser | argparse._ArgumentGroup, name: str, default: bool, help: str,
               *aliases: str) -> None:
    p.add_argument(name, *aliases, type=go_bool, nargs="?", const=True, default=default, metavar="BOOL",
                   help=f"{help} (default: {'true' if default else 'false'})")


def _quantity(text: str) -> Quantity:
    from kvert.api.quantity import Quantity, QuantityError
    try:
        return Quantity.parse(text)
    except QuantityError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def register_subcommand(vpa_subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    from kvert.cli.vpa_common import common_flags, duration_arg
    from kvert.vpa.admission_status import STATUS_NAME, STATUS_NAMESPACE, STATUS_UPDATE_INTERVAL
    from kvert.vpa.features import gates_help
    from kvert.vpa.serving import ADMISSION_ADDRESS
    from kvert.vpa.throttle import DEFAULT_BURST, DEFAULT_QPS
    from kvert.vpa.webhook import CONFIG_NAME, SERVICE_NAME

    p = vpa_subparsers.add_parser(
        "admission-controller", help="serve the VPA admission webhook (sets new pods' requests)",
        description="Serve the VPA mutating admission webhook over HTTPS and register it with the\n"
                    "API server as the MutatingWebhookConfiguration vpa-webhook-config: new pods\n"
                    "controlled by a VPA (mode not Off) get its target as requests, limits scaled\n"
                    "to keep their ratio (RequestsAndLimits), capped by policy and LimitRange.\n"
                    "Flags are upstream VPA 1.8's; --kubeconfig is only required out of a cluster.",
        epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    common_flags(p)
    p.add_argument("--vpa-object-namespace", default="", metavar="NS",
                   help="the namespace to search for VPA objects; empty: all namespaces")
    p.add_argument("--ignored-vpa-object-namespaces", "--ignored-namespaces", dest="ignored_vpa_object_namespaces",
                   default="", metavar="NS,...",
                   help="comma-separated namespaces whose pods are not sent to the webhook")
    p.add_argument("--feature-gates", default="", metavar="GATES",
                   help=f"Gate=true|false,... ({gates_help()})")
    p.add_argument("--max-allowed-cpu-boost", type=_quantity, default=None, metavar="QUANTITY",
                   help="most CPU a container's startup boost may give (default: no limit)")
    p.add_argument("--kube-api-qps", type=float, default=DEFAULT_QPS, metavar="QPS",
                   help=f"requests a second to the API server (default {DEFAULT_QPS:g})")
    p.add_argument("--kube-api-burst", type=float, default=float(DEFAULT_BURST), metavar="N",
                   help=f"burst of requests to the API server (default {DEFAULT_BURST})")

    serving = p.add_argument_group("serving")
    serving.add_argument("--port", type=int, default=8000, help="the HTTPS port (default 8000; 0: any free port)")
    serving.add_argument("--host", default="",
                         help="the address to listen on (default: every interface, as upstream)")
    serving.add_argument("--address", default=ADMISSION_ADDRESS,
                         help=f"the address to expose Prometheus metrics and /health-check on "
                              f"(default {ADMISSION_ADDRESS})")
    serving.add_argument("--client-ca-file", type=Path, default=CLIENT_CA_FILE, metavar="FILE",
                         help=f"the CA registered as the webhook's caBundle (default {CLIENT_CA_FILE})")
    serving.add_argument("--tls-cert-file", type=Path, default=TLS_CERT_FILE, metavar="FILE",
                         help=f"the serving certificate (default {TLS_CERT_FILE})")
    serving.add_argument("--tls-private-key", type=Path, default=TLS_PRIVATE_KEY, metavar="FILE",
                         help=f"the serving certificate's key (default {TLS_PRIVATE_KEY}); when none of "
                              "the three is given and the files are absent, a self-signed CA and serving "
                              "certificate are made at start")
    _bool_flag(serving, "--reload-cert", False, "reload the certificate and CA files when they change")
    serving.add_argument("--min-tls-version", default="tls1_2", choices=["tls1_2", "tls1_3"],
                         help="the minimum TLS version to accept (default tls1_2)")
    serving.add_argument("--cert-dir", type=Path, default=None, metavar="DIR",
                         help="without certificate files: keep the self-signed CA and serving "
                              "certificate here (made once, reused)")

    reg = p.add_argument_group("registration")
    _bool_flag(reg, "--register-webhook", True, "create the MutatingWebhookConfiguration at start")
    _bool_flag(reg, "--register-by-url", False,
               "register by URL (--webhook-address:--webhook-port) instead of by Service")
    reg.add_argument("--webhook-service", default=SERVICE_NAME,
                     help=f"the Service the webhook is registered under, in $NAMESPACE (default {SERVICE_NAME})")
    reg.add_argument("--webhook-address", default="",
                     help="with --register-by-url: the URL's scheme and host (default: https:// and "
                          "--host, else 127.0.0.1)")
    reg.add_argument("--webhook-port", default="",
                     help="with --register-by-url: the URL's port (default: the port served)")
    reg.add_argument("--webhook-timeout-seconds", "--webhook-timeout", dest="webhook_timeout_seconds", type=int,
                     default=30, metavar="SECONDS",
                     help="how long the API server waits for the webhook (default 30)")
    _bool_flag(reg, "--webhook-failure-policy-fail", False,
               'register with failurePolicy "Fail" (pods are refused while the controller is down)')
    reg.add_argument("--webhook-labels", default="", metavar="K:V,...",
                     help="labels of the webhook configuration, key1:value1,key2:value2")
    reg.add_argument("--webhook-config-name", default=CONFIG_NAME, help=argparse.SUPPRESS)
    _bool_flag(reg, "--unregister-on-exit", True,
               "delete the registration on SIGTERM/SIGINT while it is still this controller's")

    status = p.add_argument_group("status", "the Lease the updater reads to know the controller is up")
    status.add_argument("--status-lease-name", default=STATUS_NAME,
                        help=f"must match the updater's --admission-controller-status-lease-name "
                             f"(default {STATUS_NAME})")
    status.add_argument("--status-lease-namespace", default="",
                        help=f"must match the updater's --admission-controller-status-lease-namespace "
                             f"(default: $NAMESPACE, else {STATUS_NAMESPACE})")
    status.add_argument("--status-lease-update-interval", type=duration_arg, default=STATUS_UPDATE_INTERVAL,
                        metavar="DURATION",
                        help="how often the Lease is renewed, well below the updater's "
                             "--admission-controller-status-lease-timeout (default 10s)")
    p.set_defaults(func=run_admission_controller)
    return p


def run_admission_controller(args: argparse.Namespace) -> int:
    return run_component(args, _serve)


@dataclass
class Certificates:
    """The serving certificate and the CA the registration trusts."""

    cert: Path
    key: Path
    ca: Path
    self_signed: bool


def webhook_names(namespace: str, service: str, *hosts: str) -> tuple[str, ...]:
    """What the serving certificate must name: the Service as the API server dials it
    (``SERVICE.NAMESPACE.svc``, and its shorter and longer forms), the registration URL's host
    and loopback."""
    names = [f"{service}.{namespace}.svc", service, f"{service}.{namespace}",
             f"{service}.{namespace}.svc.cluster.local", *hosts, "localhost", "127.0.0.1", "::1"]
    return tuple(dict.fromkeys(n for n in names if n and n not in ("0.0.0.0", "::")))


def certificates(args: argparse.Namespace, clock: Clock, names: tuple[str, ...],
                 scratch: Path) -> Certificates:
    """Upstream's files when named or present; else a self-signed CA and serving certificate
    (in ``--cert-dir``, or ``scratch``). ValueError names a missing file."""
    from kvert.apiserver.certs import ensure_pki
    files = [Path(args.client_ca_file), Path(args.tls_cert_file), Path(args.tls_private_key)]
    defaults = files == [CLIENT_CA_FILE, TLS_CERT_FILE, TLS_PRIVATE_KEY]
    if args.cert_dir is None and not (defaults and not any(f.exists() for f in files)):
        for flag, f in zip(("--client-ca-file", "--tls-cert-file", "--tls-private-key"), files):
            if not f.is_file():
                raise ValueError(f"{flag} {f}: no such file")
        return Certificates(files[1], files[2], files[0], False)
    now = datetime.datetime.fromtimestamp(clock.now(), datetime.UTC)
    pki = ensure_pki(Path(args.cert_dir).expanduser() if args.cert_dir else scratch, now, names)
    return Certificates(pki.cert, pki.key, pki.ca_cert, True)


def service_namespace(client_namespace: str) -> str:
    """Upstream reads the Service's namespace from ``$NAMESPACE`` (the Deployment's downward
    API); without it kvert takes the pod's service account namespace, then kube-system."""
    return os.environ.get("NAMESPACE") or client_namespace or DEFAULT_NAMESPACE


def registration_url(args: argparse.Namespace, port: int) -> str:
    """Upstream's ``fmt.Sprintf("%v:%v", webhookAddress, webhookPort)``, with kvert's defaults
    for what is not given."""
    address = args.webhook_address or f"https://{args.host or '127.0.0.1'}"
    return f"{address}:{args.webhook_port or port}"


def _url_host(url: str) -> str:
    from urllib.parse import urlsplit
    return urlsplit(url if "//" in url else f"//{url}").hostname or ""


async def _serve(args: argparse.Namespace, ready: asyncio.Event | None = None,
                 stop: asyncio.Event | None = None) -> int:
    from kvert.clock import WallClock
    from kvert.cluster import assembly as build
    from kvert.vpa.admission_status import STATUS_NAMESPACE, AdmissionControllerStatus
    from kvert.vpa.features import VpaGates
    from kvert.vpa.instruments import AdmissionMetrics, HealthCheck
    from kvert.vpa.serving import MetricsServer
    from kvert.vpa.throttle import ThrottledClient
    from kvert.vpa.webhook import (
        CertReloader,
        parse_webhook_labels,
        register_webhook,
        server_tls_context,
        unregister_webhook,
        webhook_configuration,
    )

    if args.vpa_object_namespace and args.ignored_vpa_object_namespaces:
        raise ValueError("--vpa-object-namespace and --ignored-vpa-object-namespaces are mutually "
                         "exclusive and can't be set together.")
    if args.status_lease_update_interval <= 0:
        raise ValueError("--status-lease-update-interval must be positive.")
    gates = VpaGates.parse(args.feature_gates)
    ignored = tuple(n.strip() for n in args.ignored_vpa_object_namespaces.split(",") if n.strip())
    try:
        labels = parse_webhook_labels(args.webhook_labels)
    except ValueError as e:          # upstream registers without labels then
        log.error("Unable to parse webhook labels: %s", e)
        labels = {}
    clock = WallClock()
    raw = client_from_args(args, "vpa-admission-controller")
    namespace = service_namespace(raw.namespace)
    client = ThrottledClient(raw, clock, args.kube_api_qps, int(args.kube_api_burst))
    stop = stop or asyncio.Event()
    stop_on_signals(stop)
    metrics = AdmissionMetrics()
    # upstream's admission controller never starts monitoring: healthy while it serves
    health = HealthCheck(clock, 60.0)
    status_server = MetricsServer(metrics, health, args.address)
    reloader: CertReloader | None = None
    reloading: asyncio.Task | None = None
    lease: AdmissionControllerStatus | None = None
    renewing: asyncio.Task | None = None
    registered: dict | None = None
    scratch = tempfile.TemporaryDirectory(prefix="kvert-vpa-webhook-")
    server = None
    try:
        url_host = _url_host(args.webhook_address) if args.register_by_url else ""
        certs = certificates(args, clock, webhook_names(namespace, args.webhook_service, url_host, args.host),
                             Path(scratch.name))
        if certs.self_signed:
            print(f"vpa admission controller: self-signed CA and serving certificate for "
                  f"{args.webhook_service}.{namespace}.svc ({certs.cert.parent})", flush=True)
        try:
            ctx = server_tls_context(certs.cert, certs.key, args.min_tls_version)
        except ssl.SSLError as e:
            raise ValueError(f"{certs.cert}, {certs.key}: not a usable certificate and key ({e})") from None
        server = build.vpa_webhook(client, clock, ssl_context=ctx, host=args.host or "0.0.0.0", port=args.port,
                                   gates=gates, max_allowed_cpu_boost=args.max_allowed_cpu_boost,
                                   metrics=metrics, health=health)
        await status_server.start()
        await server.run()
        ca_pem = certs.ca.read_bytes()
        if args.register_webhook:
            if args.register_by_url:
                config = webhook_configuration(registration_url(args, server.port), ca_pem, args.webhook_config_name,
                                               **_registration(args, ignored, labels))
            else:
                config = webhook_configuration(None, ca_pem, args.webhook_config_name,
                                               service={"namespace": namespace, "name": args.webhook_service},
                                               **_registration(args, ignored, labels))
            registered = await register_webhook(client, config)
            hook = registered["webhooks"][0]["clientConfig"]
            where = hook.get("url") or f"Service {namespace}/{args.webhook_service}"
            print(f"vpa admission controller serving https on port {server.port}, registered as "
                  f"MutatingWebhookConfiguration {args.webhook_config_name} ({where})", flush=True)
        else:
            print(f"vpa admission controller serving https on port {server.port} (not registered)", flush=True)
        if args.reload_cert and not certs.self_signed:
            reloader = CertReloader(ctx, clock, certs.cert, certs.key, certs.ca,
                                    client=client if args.register_webhook else None,
                                    config_name=args.webhook_config_name, registered=registered)
            reloading = asyncio.ensure_future(reloader.run())
        # upstream renews the status Lease once the webhook is registered
        lease = AdmissionControllerStatus(
            client, clock, name=args.status_lease_name,
            namespace=args.status_lease_namespace or os.environ.get("NAMESPACE") or STATUS_NAMESPACE,
            interval=args.status_lease_update_interval)
        renewing = asyncio.ensure_future(lease.run())
        if ready is not None:
            ready.set()
        await stop.wait()
        if reloader is not None and reloader.registered is not None:
            registered = reloader.registered       # its CA patched since
        if registered is not None and args.unregister_on_exit:
            try:
                if await unregister_webhook(client, registered):
                    print(f"vpa admission controller: deleted {args.webhook_config_name}", flush=True)
            except Exception as e:  # noqa: BLE001 - best effort on the way out
                log.warning("could not delete %s: %s", args.webhook_config_name, e)
    finally:
        if lease is not None:
            lease.stop()
        if reloader is not None:
            reloader.stop()
        for task in (renewing, reloading):
            if task is not None:
                await _ended(task)
        if server is not None:
            await server.stop()
        await status_server.stop()
        await raw.close()
        scratch.cleanup()
    print("vpa admission controller stopped", flush=True)
    return 0


async def _ended(task: asyncio.Task) -> None:
    """Wait a moment for a stopped loop to end (a step in flight finishes), else cancel it."""
    try:
        await asyncio.wait_for(task, 5)
    except (TimeoutError, asyncio.CancelledError):
        pass
    except Exception as e:  # noqa: BLE001 - logged; the controller is stopping anyway
        log.warning("%s", e)


def _registration(args: argparse.Namespace, ignored: tuple[str, ...], labels: dict[str, str]) -> dict:
    return {"timeout_seconds": args.webhook_timeout_seconds, "ignored_namespaces": ignored,
            "selected_namespace": args.vpa_object_namespace, "failure_policy_fail": args.webhook_failure_policy_fail,
            "labels": labels}


__all__ = ["Certificates", "certificates", "go_bool", "register_subcommand", "registration_url",
           "run_admission_controller", "service_namespace", "webhook_names"]
