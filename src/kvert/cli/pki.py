"""``kvert pki``: the cluster identity's files -- ServiceAccount signing key rotation."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kvert.cli.up import DEFAULT_DATA_DIR


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "pki", help="rotate the ServiceAccount signing key of a PKI directory",
        description="Manage a cluster's PKI directory (what --pki-dir names; DATA_DIR/pki by default).\n"
                    "rotate-sa-key makes a new sa.key: API servers using the directory sign new\n"
                    "ServiceAccount tokens with it at once (no restart), and the old key stays in\n"
                    "sa.pub so tokens it signed are accepted until they expire. retire-sa-key drops\n"
                    "an old key from sa.pub once its tokens have expired; list-sa-keys shows the kids.",
        epilog="example: kvert pki rotate-sa-key --pki-dir /srv/kvert-pki\n"
               "         kvert pki list-sa-keys --pki-dir /srv/kvert-pki\n"
               "         kvert pki retire-sa-key --pki-dir /srv/kvert-pki KID",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = p.add_subparsers(dest="pki_command", metavar="ACTION", required=True)
    for name, text in (("rotate-sa-key", "make a new signing key; old tokens stay valid"),
                       ("list-sa-keys", "print the kid of every verification key, the signing one marked"),
                       ("retire-sa-key", "stop accepting tokens signed by the key KID")):
        action = actions.add_parser(name, help=text, description=text)
        action.add_argument("--pki-dir", type=Path, default=None, metavar="DIR",
                            help="the PKI directory (default: DATA_DIR/pki)")
        action.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR,
                            help="the data directory whose pki/ to use without --pki-dir")
        if name == "retire-sa-key":
            action.add_argument("kid", metavar="KID", help="the key's id (list-sa-keys)")
        action.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kvert.apiserver.identity import IdentityOptions, locked
    from kvert.auth.sakeys import (
        SIGNING_KEY_FILE,
        VERIFICATION_KEYS_FILE,
        KeyFileError,
        ensure_key_files,
        key_id,
        read_public_keys,
        read_signing_key,
        retire,
        rotate,
    )
    directory = IdentityOptions(pki_dir=args.pki_dir).directory(args.data_dir.expanduser())
    try:
        with locked(directory):
            ensure_key_files(directory)
            if args.pki_command == "rotate-sa-key":
                old, new = rotate(directory)
                print(f"rotated: {new} signs new tokens; {old} still verifies "
                      f"(retire it once its tokens have expired)")
            elif args.pki_command == "retire-sa-key":
                retire(directory, args.kid)
                print(f"retired {args.kid}")
            else:
                signing = key_id(read_signing_key(directory / SIGNING_KEY_FILE).public_key())
                for key in read_public_keys(directory / VERIFICATION_KEYS_FILE):
                    kid = key_id(key)
                    print(f"{kid}{'  (signing)' if kid == signing else ''}")
    except KeyFileError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0
