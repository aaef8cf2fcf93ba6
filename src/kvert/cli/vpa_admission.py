"""``kvert vpa admission-controller``: serve the VPA mutating webhook for any API server.

It makes (or reuses) a CA and a serving certificate in ``--cert-dir`` with
:mod:`kvert.apiserver.certs` (``ca.crt``/``ca.key``, ``apiserver.crt``/``apiserver.key`` for
``--host`` plus localhost / 127.0.0.1), reads VPAs, LimitRanges, ReplicaSets and
Deployments through informers over ``--kubeconfig``, serves ``https://HOST:PORT/mutate``,
and registers the ``vpa-webhook-config`` MutatingWebhookConfiguration (created, or its
webhooks replaced) pointing at that URL with the CA as ``caBundle``. It runs until
SIGINT/SIGTERM; the configuration is left in place (failurePolicy Ignore: pods are still
created while the controller is away), unless ``--unregister-on-exit``.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import logging
from pathlib import Path

from kvert.cli.component import run_component, stop_on_signals

log = logging.getLogger(__name__)


def register_subcommand(vpa_subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = vpa_subparsers.add_parser(
        "admission-controller", help="serve the VPA admission webhook (sets new pods' requests)",
        description="Serve the VPA mutating admission webhook over HTTPS and register it with the\n"
                    "API server as the MutatingWebhookConfiguration vpa-webhook-config: new pods\n"
                    "controlled by a VPA (mode not Off) get its target as requests, limits scaled\n"
                    "to keep their ratio (RequestsAndLimits), capped by policy and LimitRange.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kubeconfig", type=Path, required=True, help="kubeconfig of the API server")
    p.add_argument("--context", default=None, help="kubeconfig context (default: current)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on, and the host the API server dials (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8944, help="HTTPS port (default 8944; 0: any free port)")
    p.add_argument("--cert-dir", type=Path, required=True,
                   help="directory for the webhook's CA and serving certificate (created if missing)")
    p.add_argument("--webhook-config-name", default="vpa-webhook-config")
    p.add_argument("--webhook-timeout", type=int, default=10, help="timeoutSeconds (default 10)")
    p.add_argument("--ignored-namespaces", default="",
                   help="comma-separated namespaces whose pods are not sent to the webhook")
    p.add_argument("--unregister-on-exit", action="store_true",
                   help="delete the MutatingWebhookConfiguration when stopping")
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    p.set_defaults(func=run_admission_controller)
    return p


def run_admission_controller(args: argparse.Namespace) -> int:
    return run_component(args, _serve)


async def _serve(args: argparse.Namespace, ready: asyncio.Event | None = None,
                 stop: asyncio.Event | None = None) -> int:
    from kvert.apiserver.certs import ensure_pki
    from kvert.client.http import HttpClient
    from kvert.clock import WallClock
    from kvert.cluster import assembly as build
    from kvert.vpa.webhook import register_webhook, webhook_configuration

    names = tuple(dict.fromkeys((args.host, "localhost", "127.0.0.1", "::1")))
    clock = WallClock()
    now = datetime.datetime.fromtimestamp(clock.now(), datetime.UTC)
    pki = ensure_pki(Path(args.cert_dir), now, names)
    client = HttpClient.from_kubeconfig(args.kubeconfig, args.context, field_manager="vpa-admission-controller")
    server = build.vpa_webhook(client, clock, host=args.host, port=args.port, ssl_context=pki.server_context())
    stop = stop or asyncio.Event()
    stop_on_signals(stop)
    try:
        await server.run()
        ignored = tuple(n.strip() for n in args.ignored_namespaces.split(",") if n.strip())
        config = webhook_configuration(server.url, pki.ca_pem(), args.webhook_config_name,
                                       timeout_seconds=args.webhook_timeout, ignored_namespaces=ignored)
        await register_webhook(client, config)
        print(f"vpa admission controller serving {server.url} "
              f"(MutatingWebhookConfiguration {args.webhook_config_name})", flush=True)
        if ready is not None:
            ready.set()
        await stop.wait()
        if args.unregister_on_exit:
            try:
                await client.delete("admissionregistration.k8s.io/mutatingwebhookconfigurations",
                                    args.webhook_config_name)
            except Exception as e:  # best effort on the way out
                log.warning("could not delete %s: %s", args.webhook_config_name, e)
    finally:
        await server.stop()
        await client.close()
    return 0


__all__ = ["register_subcommand", "run_admission_controller"]
