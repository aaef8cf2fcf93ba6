import subprocess
import sys

import pytest

import kvert
from kvert.cli.main import COMMANDS, build_parser, main


def test_help_lists_every_command(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    for command in ("version", "demo"):
        assert command in out


def _command_names() -> list[str]:
    import argparse
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return list(sub.choices)


def test_every_module_adds_a_command():
    assert len(_command_names()) >= len(COMMANDS)


@pytest.mark.parametrize("name", _command_names())
def test_every_command_has_help_with_an_example(name, capsys):
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args([name, "--help"])
    assert info.value.code == 0
    assert "example: kvert " + name in capsys.readouterr().out


def test_version(capsys):
    assert main(["version"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"kvert {kvert.__version__} (Kubernetes v1.36.0, Python ")


def test_console_script_is_installed():
    result = subprocess.run([sys.executable, "-m", "kvert.cli.main", "version"],
                            capture_output=True, text=True, check=True)
    assert result.stdout.startswith("kvert ")


def test_explain_reads_the_components_annotations():
    from kvert.cli.explain import explanation
    pod = {"metadata": {"name": "p", "namespace": "ns", "annotations": {
               "explain.kvert.io/scheduling": '{"node-1": {"score": 87}}',
               "explain.kvert.io/node": '{"oomScoreAdj": {"app": -997}}',
               "unrelated": "x"}},
           "spec": {"nodeName": "node-1"},
           "status": {"phase": "Running", "qosClass": "Guaranteed", "conditions": [
               {"type": "Ready", "status": "True"},
               {"type": "PodResizePending", "status": "True", "reason": "Deferred"}]}}
    out = explanation(pod)
    assert out["scheduling"] == {"node-1": {"score": 87}}
    assert out["node"] == {"oomScoreAdj": {"app": -997}}
    assert out["nodeName"] == "node-1" and out["qosClass"] == "Guaranteed"
    assert out["conditions"] == [{"type": "PodResizePending", "status": "True", "reason": "Deferred"}]
    assert "unrelated" not in out
