"""``kvert controller-manager``'s flags as kube-controller-manager's: ``--controllers``
read as ``IsControllerEnabled`` does (k8s.io/controller-manager/app/helper.go: a name
enables, ``-name`` disables, the first mention wins, ``*`` enables what is on by default;
an unknown name is refused: "%q is not in the list of known controllers", from
KubeControllerManagerOptions.Validate), and csrsigning's ``--cluster-signing-cert-file``,
``--cluster-signing-key-file`` and ``--cluster-signing-duration`` (default 8760h0m0s, per
`kube-controller-manager --help`)."""

from __future__ import annotations

import pytest

from kvert.cli.components import KNOWN_CONTROLLERS, enabled_controllers, signing_settings
from kvert.cli.main import build_parser
from kvert.controllers.manager import ALL_CONTROLLERS

KNOWN = ("a", "b", "kubelet-serving-approver")


def test_star_enables_the_controllers_on_by_default():
    assert enabled_controllers("*", KNOWN) == ("a", "b")
    assert set(enabled_controllers("*")) == set(KNOWN_CONTROLLERS) - {"kubelet-serving-approver"}
    assert set(ALL_CONTROLLERS) <= set(enabled_controllers("*"))


def test_names_enable_and_minus_names_disable():
    assert enabled_controllers("a", KNOWN) == ("a",)
    assert enabled_controllers("*,-a", KNOWN) == ("b",)
    assert enabled_controllers("*,kubelet-serving-approver", KNOWN) == KNOWN
    # the first mention wins
    assert enabled_controllers("-a,a,*", KNOWN) == ("b",)
    assert enabled_controllers("", KNOWN) == ()


def test_an_unknown_controller_is_refused():
    with pytest.raises(ValueError, match='"bogus" is not in the list of known controllers'):
        enabled_controllers("*,-bogus", KNOWN)


def _args(*flags: str):
    return build_parser().parse_args(["controller-manager", *flags])


def test_signing_needs_both_files(tmp_path):
    assert signing_settings(_args()) is None
    (tmp_path / "ca.crt").write_text("cert")
    with pytest.raises(ValueError, match="--cluster-signing-cert-file and --cluster-signing-key-file"):
        signing_settings(_args("--cluster-signing-cert-file", str(tmp_path / "ca.crt")))
    with pytest.raises(ValueError, match="--cluster-signing-key-file: No such file or directory"):
        signing_settings(_args("--cluster-signing-cert-file", str(tmp_path / "ca.crt"),
                               "--cluster-signing-key-file", str(tmp_path / "missing.key")))


def test_signing_duration_defaults_to_a_year_and_parses_go_durations(tmp_path):
    assert _args().cluster_signing_duration == 8760 * 3600
    (tmp_path / "ca.crt").write_text("cert")
    (tmp_path / "ca.key").write_text("key")
    settings = signing_settings(_args("--cluster-signing-cert-file", str(tmp_path / "ca.crt"),
                                      "--cluster-signing-key-file", str(tmp_path / "ca.key"),
                                      "--cluster-signing-duration", "720h"))
    assert settings == {"ca_cert": b"cert", "ca_key": b"key", "duration_seconds": 720 * 3600}


def test_a_bad_duration_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit):
        _args("--cluster-signing-duration", "a while")
    assert "--cluster-signing-duration" in capsys.readouterr().err
