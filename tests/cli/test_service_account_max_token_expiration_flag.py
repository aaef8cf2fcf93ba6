"""``--service-account-max-token-expiration`` of ``kvert apiserver`` / ``kvert up``:
kube-apiserver's flag (a Go duration; unset by default; when set, from 1 hour to 2^32
seconds, "the service-account-max-token-expiration must be between 1 hour and 2^32 seconds",
pkg/kubeapiserver/options/authentication.go) reaches TokenRequest (whose shortening, with
its warning, tests/apiserver/test_server.py asserts)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kvert.apiserver.identity import IdentityOptions
from kvert.cli.main import build_parser
from kvert.cluster.live import ApiServerProcess


@pytest.mark.parametrize("command", ["apiserver", "up"])
@pytest.mark.parametrize("flag, seconds", [([], 0.0), (["--service-account-max-token-expiration=1h"], 3600.0),
                                           (["--service-account-max-token-expiration=48h"], 172800.0),
                                           (["--service-account-max-token-expiration=0"], 0.0)])
def test_the_flag_parses_as_a_go_duration(command, flag, seconds):
    assert build_parser().parse_args([command, *flag]).service_account_max_token_expiration == seconds


@pytest.mark.parametrize("value", ["59m", "-1h", f"{2**32 + 1}s"])
def test_a_value_out_of_bounds_is_refused(value, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["apiserver", f"--service-account-max-token-expiration={value}"])
    assert "the service-account-max-token-expiration must be between 1 hour and 2^32 seconds" in \
        capsys.readouterr().err


def test_the_limit_reaches_token_requests(tmp_path: Path):
    async def limit() -> int:
        process = ApiServerProcess(data_dir=tmp_path / "k", store_url="memory", port=0,
                                   identity=IdentityOptions(service_account_max_token_expiration=7200.0))
        await process.start()
        try:
            assert process.server is not None
            return process.server.registry.token_requests.max_expiration_seconds
        finally:
            await process.stop()
    assert asyncio.run(limit()) == 7200
