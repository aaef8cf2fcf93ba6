"""The program a simulated container runs, and that program's process.

Which program (``program_argv``): the spec's ``command`` + ``args``; without a command,
the image's default entrypoint and arguments for the images in ``IMAGES`` (the spec's
``args`` replacing the image's default arguments, as a container runtime does). It runs
when its executable is one the simulated shell has (``simshell`` commands and the servers
of ``simnet``); anything else -- an image kvert does not know, or a binary that is not in
the shell -- is a *simulated workload*: it runs no program and follows its usage profile
until it is stopped, as every simulated container did before programs ran.

A shell image (busybox, alpine, ubuntu, debian) with neither command nor args would run
``sh`` with no input, which exits at once; kvert keeps such a container running as a
simulated workload instead unless it asked for stdin (``kubectl run -it busybox``), since
simulations and examples use ``image: busybox`` for a container that stays up.

The process (``MainProcess``) runs the program in a ``simshell.Shell`` of its own over the
container's filesystem, in the runtime's clock (a ``sleep 10`` takes ten seconds of virtual
time in a simulation), with its stdout and stderr as the container's log lines and stdin
from whoever attaches (when the container has ``stdin``). Its exit status ends the
container.
"""

from __future__ import annotations

import asyncio
import contextlib
import posixpath
from collections.abc import Callable

from kvert.clock.base import Clock
from kvert.kubelet.runtime.base import ContainerConfig, StreamIO
from kvert.kubelet.runtime.simlogs import ContainerLog
from kvert.kubelet.runtime.simnet import COMMANDS, PodNetwork
from kvert.kubelet.runtime.simshell import Ctx, Filesystem, Shell

# image name (the last path element, without tag or digest) -> (entrypoint, default args)
IMAGES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "busybox": ((), ("sh",)),
    "alpine": ((), ("/bin/sh",)),
    "ubuntu": ((), ("/bin/bash",)),
    "debian": ((), ("bash",)),
    "agnhost": (("/agnhost",), ()),
    "pause": (("/pause",), ()),
}
SHELL_IMAGES = frozenset({"busybox", "alpine", "ubuntu", "debian"})
MAX_LINE = 16 * 1024       # a longer line without newline is logged in pieces, as CRI's partial lines


def image_name(image: str) -> str:
    return image.rsplit("/", 1)[-1].split("@", 1)[0].split(":", 1)[0]


def program_argv(config: ContainerConfig) -> list[str] | None:
    """The command line the container runs, or None for a simulated workload."""
    name = image_name(config.image)
    if config.command:
        argv = [*config.command, *config.args]
    else:
        known = IMAGES.get(name)
        if known is None:
            return None
        entrypoint, default_args = known
        args = list(config.args) or list(default_args)
        if name in SHELL_IMAGES and not config.args and not config.stdin:
            return None
        argv = [*entrypoint, *args]
        if len(argv) < 2 and name == "agnhost":
            return None               # agnhost alone prints its help; keep it a workload
    if not argv or posixpath.basename(argv[0]) not in _KNOWN:
        return None
    return argv


def _known() -> frozenset[str]:
    probe = Shell(Filesystem(), {}, commands=COMMANDS)
    return frozenset(probe.commands)


_KNOWN = _known()


class ProgramLog(ContainerLog):
    """A log of what the program printed: no lifecycle or usage lines of kvert's own."""

    def lines(self, now: float, after: float | None = None) -> list[tuple[float, str]]:
        return [item for item in self.events if after is None or item[0] > after]


class _LineWriter:
    """Output bytes to log lines (a line ends at a newline, or at MAX_LINE)."""

    def __init__(self, log: ContainerLog, clock: Clock, echo: Callable[[bytes], None]) -> None:
        self.log, self.clock, self.echo = log, clock, echo
        self.pending = b""

    async def write(self, data: bytes) -> None:
        self.echo(data)
        self.pending += data
        while b"\n" in self.pending or len(self.pending) >= MAX_LINE:
            cut = self.pending.find(b"\n")
            line, self.pending = (self.pending[:cut], self.pending[cut + 1:]) if 0 <= cut < MAX_LINE \
                else (self.pending[:MAX_LINE], self.pending[MAX_LINE:])
            self.log.say(self.clock.now(), line.decode("utf-8", "replace"))

    def flush(self) -> None:
        if self.pending:
            self.log.say(self.clock.now(), self.pending.decode("utf-8", "replace"))
            self.pending = b""


class MainProcess:
    """A simulated container's program, running as a task; ``on_exit(code)`` when it ends
    by itself (not when it is stopped)."""

    def __init__(self, argv: list[str], config: ContainerConfig, fs: Filesystem, env: dict[str, str],
                 network: PodNetwork, log: ContainerLog, clock: Clock, on_exit: Callable[[int], None]) -> None:
        self.argv = argv
        self.config = config
        self.clock = clock
        self.on_exit = on_exit
        self.shell = Shell(fs, env, clock=clock, processes=[" ".join(argv)], commands=COMMANDS,
                           network=network, max_sleep=float("inf"))
        if config.working_dir:
            self.shell.cwd = config.working_dir
        self._stdin: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._attached: list[asyncio.Queue[bytes | None]] = []
        self._out = _LineWriter(log, clock, self._echo)
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.task = asyncio.ensure_future(self._run())

    def stop(self) -> None:
        if self.task is not None and not self.task.done() and self.task is not asyncio.current_task():
            self.task.cancel()
        self._out.flush()
        self._hang_up()

    async def _read_stdin(self) -> bytes | None:
        if not self.config.stdin:
            return None
        return await self._stdin.get()

    async def _run(self) -> None:
        code = 1
        try:
            code = await self.shell.run(self.argv, Ctx(self._read_stdin, self._out.write, self._out.write))
        except asyncio.CancelledError:
            raise
        except Exception as e:      # a simulated program's crash ends the container, not the node
            await self._out.write(f"{self.argv[0]}: {e}\n".encode())
        self._out.flush()
        self._hang_up()
        self.on_exit(code)

    def _echo(self, data: bytes) -> None:
        for queue in self._attached:
            queue.put_nowait(data)

    def _hang_up(self) -> None:
        for queue in self._attached:
            queue.put_nowait(None)

    async def attach(self, io: StreamIO) -> None:
        """The program's output from now on to ``io``, and ``io``'s stdin to the program
        (``stdinOnce``: the program's stdin closes when this session ends)."""
        output: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._attached.append(output)
        feeder = asyncio.ensure_future(self._feed(io)) if io.stdin and self.config.stdin else None
        try:
            while self.task is not None and not self.task.done():
                data = await output.get()
                if data is None:
                    break
                await io.write_stdout(data.replace(b"\n", b"\r\n") if io.tty else data)
        finally:
            self._attached.remove(output)
            if feeder is not None:
                feeder.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await feeder
            if self.config.stdin_once:
                self._stdin.put_nowait(None)

    async def _feed(self, io: StreamIO) -> None:
        while (chunk := await io.read_stdin()) is not None:
            if io.tty:
                # a terminal's line discipline: echo, and carriage return as end of line
                chunk = chunk.replace(b"\r", b"\n")
                self._echo(chunk)
            self._stdin.put_nowait(chunk)
        if self.config.stdin_once or io.tty:
            self._stdin.put_nowait(None)


__all__ = ["IMAGES", "MainProcess", "ProgramLog", "SHELL_IMAGES", "image_name", "program_argv"]
