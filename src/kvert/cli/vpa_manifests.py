"""``kvert vpa manifests``: print what a cluster needs to run kvert's VPA (:mod:`kvert.vpa.manifests`),
as one multi-document YAML stream for ``kubectl apply -f -``."""

from __future__ import annotations

import argparse
import sys

EXAMPLE = """\
examples:
  kvert vpa manifests | kubectl apply -f -                  # everything, in kube-system
  kvert vpa manifests --namespace vpa --image registry.example.com/kvert:0.1.0 | kubectl apply -f -
  kvert vpa manifests --components recommender,updater      # no admission webhook
  kvert vpa manifests | kubectl delete -f -                 # remove it all again

The admission controller makes a self-signed CA and a serving certificate for
vpa-webhook.NAMESPACE.svc when it starts and registers its webhook with that CA, so no Secret
is needed. To bring your own (upstream's gencerts.sh makes one), create a Secret with the keys
caCert.pem, serverCert.pem and serverKey.pem and name it with --tls-secret:

  kubectl -n kube-system create secret generic vpa-tls-certs --from-file=caCert.pem \\
      --from-file=serverCert.pem --from-file=serverKey.pem
  kvert vpa manifests --tls-secret vpa-tls-certs | kubectl apply -f -

The image is built by the repository's Containerfile (its entrypoint is kvert):

  podman build -t ghcr.io/kvert/kvert:VERSION --build-arg KVERT_VERSION=VERSION .
"""


def register(vpa_subparsers: argparse._SubParsersAction) -> None:
    """Add ``manifests`` under ``kvert vpa``."""
    from kvert.vpa.features import gates_help
    from kvert.vpa.manifests import DEFAULT_NAMESPACE, default_image
    from kvert.vpa.rbac import COMPONENTS

    p = vpa_subparsers.add_parser(
        "manifests", help="print the YAML that installs kvert's VPA in a cluster (kubectl apply -f -)",
        description="Print everything a cluster needs to run kvert's VPA, as upstream VPA 1.8's deploy/\n"
                    "directory gives it: the VerticalPodAutoscaler and VerticalPodAutoscalerCheckpoint\n"
                    "CRDs, least-privilege RBAC, the ServiceAccounts, the Deployments vpa-recommender,\n"
                    "vpa-updater and vpa-admission-controller running the kvert image, and the\n"
                    "webhook Service vpa-webhook.",
        epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--namespace", "-n", default=DEFAULT_NAMESPACE,
                   help=f"where the components run (default {DEFAULT_NAMESPACE}; another is created)")
    p.add_argument("--image", default=default_image(), help=f"the kvert image (default {default_image()})")
    p.add_argument("--components", default=",".join(COMPONENTS), metavar="NAME,...",
                   help=f"which components (default {','.join(COMPONENTS)}); the CRDs always")
    p.add_argument("--tls-secret", default=None, metavar="NAME",
                   help="the admission controller's certificates from this Secret (caCert.pem, "
                        "serverCert.pem, serverKey.pem), mounted at /etc/tls-certs; default: a "
                        "self-signed CA made at start")
    p.add_argument("--feature-gates", default="", metavar="GATES",
                   help=f"passed to every component: Gate=true|false,... ({gates_help()})")
    p.set_defaults(func=run_manifests)


def run_manifests(args: argparse.Namespace) -> int:
    import kvert
    from kvert.apiserver.crds import vpa_crds
    from kvert.vpa.manifests import ManifestOptions, manifests, to_yaml

    components = tuple(dict.fromkeys(c.strip() for c in args.components.split(",") if c.strip()))
    try:
        options = ManifestOptions(namespace=args.namespace, image=args.image, components=components,
                                  tls_secret=args.tls_secret or None, feature_gates=args.feature_gates)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    header = (f"kvert {kvert.__version__}'s VPA: {', '.join(options.components)} in namespace "
              f"{options.namespace}, image {options.image}")
    sys.stdout.write(to_yaml(manifests(options, vpa_crds()), header=header))
    return 0


__all__ = ["register", "run_manifests"]
