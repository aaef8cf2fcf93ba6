"""``--request-timeout`` of ``kvert apiserver`` / ``kvert up``: kube-apiserver's flag (a Go
duration, default 1m0s per `kube-apiserver --help`; 0 means no limit) reaches the server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kvert.cli.main import build_parser
from kvert.cluster.live import ApiServerProcess


@pytest.mark.parametrize("command", ["apiserver", "up"])
@pytest.mark.parametrize("flag, seconds", [([], 60.0), (["--request-timeout", "1m"], 60.0),
                                           (["--request-timeout", "1.5s"], 1.5),
                                           (["--request-timeout", "0"], 0.0)])
def test_the_flag_parses_as_a_go_duration(command, flag, seconds):
    assert build_parser().parse_args([command, *flag]).request_timeout == seconds


@pytest.mark.parametrize("command", ["apiserver", "up"])
def test_a_bad_value_is_an_argparse_error_naming_the_flag(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args([command, "--request-timeout", "soon"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "--request-timeout" in err and 'invalid duration "soon"' in err


@pytest.mark.parametrize("command", ["apiserver", "up"])
def test_a_negative_value_is_refused(command, capsys):
    # ServerRunOptions.Validate: "--request-timeout can not be negative value"
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args([command, "--request-timeout=-1s"])
    assert exit_.value.code == 2
    assert "argument --request-timeout: can not be negative value" in capsys.readouterr().err


def test_the_timeout_reaches_the_api_server(tmp_path: Path):
    async def started_timeout() -> float:
        process = ApiServerProcess(data_dir=tmp_path / "k", store_url="memory", port=0, request_timeout=2.0)
        await process.start()
        try:
            assert process.server is not None
            return process.server.request_timeout
        finally:
            await process.stop()
    assert asyncio.run(started_timeout()) == 2.0
