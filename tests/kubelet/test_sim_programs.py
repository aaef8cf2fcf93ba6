"""Simulated containers run their programs (issue 27: "Simulated containers run no
program"). Expected values are the kubelet's and the images' own:

* a container's termination is ``exitCode`` with reason ``Completed`` for 0 and ``Error``
  otherwise (pkg/kubelet/kuberuntime/helpers.go toKubeContainerState / the CRI's
  ContainerStatus.Reason as containerd sets it);
* ``sh -c 'exit 3'`` exits 3 (POSIX sh, "exit [n]");
* busybox's image runs ``sh`` (its Dockerfile: ``CMD ["sh"]``), agnhost netexec serves HTTP
  on 8080 with ``/echo?msg=`` and ``/hostname`` (test/images/agnhost/netexec/netexec.go),
  agnhost serve-hostname on 9376.
"""

from __future__ import annotations

import asyncio

from kvert.clock import VirtualClock
from kvert.kubelet.runtime.base import (ContainerConfig, ContainerResources, LinuxContainerResources,
                                        PodSandboxConfig)
from kvert.kubelet.runtime.sim import SimRuntime
from kvert.kubelet.runtime.simprograms import program_argv


def cfg(name="c", image="busybox", command=(), args=(), stdin=False, stdin_once=False):
    return ContainerConfig(name=name, image=image, resources=ContainerResources(linux=LinuxContainerResources()),
                           command=tuple(command), args=tuple(args), stdin=stdin, stdin_once=stdin_once)


async def run_one(rt, config, uid="p"):
    sb = await rt.run_pod_sandbox(PodSandboxConfig(uid=uid, namespace="default", name=uid))
    cid = await rt.create_container(sb, config)
    await rt.start_container(cid)
    return sb, cid


def text(rt, sb, name="c"):
    log = rt.container_log(sb, name)
    return "".join(f"{line}\n" for _, line in log.lines(1e12))


def test_echo_hi_completes_with_its_output_as_the_log():
    clock = VirtualClock()

    async def main():
        rt = SimRuntime(clock)
        sb, cid = await run_one(rt, cfg(command=["echo", "hi"]))
        await clock.sleep(1)
        st = await rt.container_status(cid)
        assert (st.state, st.exit_code, st.reason) == ("exited", 0, "Completed")
        assert st.finished_at >= st.started_at > 0
        # the program's output, and nothing of kvert's own ("started: image ...")
        assert text(rt, sb) == "hi\n"
    clock.run(main())


def test_exit_3_is_an_error_with_exit_code_3():
    clock = VirtualClock()

    async def main():
        rt = SimRuntime(clock)
        sb, cid = await run_one(rt, cfg(command=["sh", "-c", "echo failing >&2; exit 3"]))
        await clock.sleep(1)
        st = await rt.container_status(cid)
        assert (st.state, st.exit_code, st.reason) == ("exited", 3, "Error")
        assert text(rt, sb) == "failing\n"
    clock.run(main())


def test_sleep_follows_the_runtimes_clock():
    clock = VirtualClock()

    async def main():
        rt = SimRuntime(clock)
        _, cid = await run_one(rt, cfg(command=["sh", "-c", "sleep 10; exit 7"]))
        start = clock.now()
        await clock.sleep(9.5)
        assert (await rt.container_status(cid)).state == "running"
        await clock.sleep(1)
        st = await rt.container_status(cid)
        assert (st.state, st.exit_code) == ("exited", 7)
        assert 10 <= st.finished_at - start < 10.5
    clock.run(main())


def test_sleep_infinity_and_unknown_programs_run_until_stopped():
    clock = VirtualClock()

    async def main():
        rt = SimRuntime(clock)
        _, forever = await run_one(rt, cfg(command=["sleep", "infinity"]), uid="a")
        _, workload = await run_one(rt, cfg(image="example.com/app:1", command=["/app/server"]), uid="b")
        _, plain = await run_one(rt, cfg(image="busybox"), uid="c")
        await clock.sleep(7 * 86400)
        for cid in (forever, workload, plain):
            assert (await rt.container_status(cid)).state == "running"
        await rt.stop_container(forever)
        st = await rt.container_status(forever)
        assert (st.state, st.exit_code) == ("exited", 143)
    clock.run(main())


def test_which_containers_run_a_program():
    # busybox's CMD is sh; args replace it, a command replaces the entrypoint
    assert program_argv(cfg(image="busybox", args=["echo", "hi"])) == ["echo", "hi"]
    assert program_argv(cfg(image="busybox:1.36", stdin=True)) == ["sh"]
    assert program_argv(cfg(image="registry.k8s.io/e2e-test-images/agnhost:2.52",
                            args=["netexec", "--http-port=8080"])) == ["/agnhost", "netexec", "--http-port=8080"]
    # kept as simulated workloads: no program kvert can run
    assert program_argv(cfg(image="busybox")) is None
    assert program_argv(cfg(image="nginx")) is None
    assert program_argv(cfg(image="example.com/app", args=["--port=1"])) is None
    assert program_argv(cfg(image="busybox", command=["/app/server"])) is None


def test_a_busy_loop_does_not_hold_the_event_loop():
    clock = VirtualClock()

    async def main():
        rt = SimRuntime(clock)
        _, cid = await run_one(rt, cfg(command=["sh", "-c", "while true; do :; done"]))
        ticks = 0
        for _ in range(5):
            await clock.sleep(1)
            ticks += 1
        assert ticks == 5 and (await rt.container_status(cid)).state == "running"
        await rt.stop_container(cid)
    clock.run(main())


async def settle():
    """Let the program's task reach its listening point (a few loop iterations)."""
    for _ in range(20):
        await asyncio.sleep(0)


async def _get(rt, sb, port, path):
    reader, writer = await rt.port_forward(sb, port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    await writer.drain()
    data = await reader.read()
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def test_agnhost_netexec_answers_port_forward():
    async def main():
        clock = VirtualClock()
        rt = SimRuntime(clock)
        sb, cid = await run_one(rt, cfg(image="registry.k8s.io/e2e-test-images/agnhost:2.52",
                                        args=["netexec", "--http-port=8080"]), uid="echo")
        await settle()
        assert await _get(rt, sb, 8080, "/echo?msg=hello") == (200, b"hello")
        assert await _get(rt, sb, 8080, "/hostname") == (200, b"echo")
        # /exit?code=N ends the process with that code
        await _get(rt, sb, 8080, "/exit?code=5")
        await settle()
        st = await rt.container_status(cid)
        assert (st.state, st.exit_code, st.reason) == ("exited", 5, "Error")
    asyncio.run(main())


def test_nc_listening_with_cat_is_an_echo_server():
    async def main():
        clock = VirtualClock()
        rt = SimRuntime(clock)
        sb, _ = await run_one(rt, cfg(command=["nc", "-lk", "-p", "8080", "-e", "cat"]))
        await settle()
        for word in (b"one\n", b"two\n"):
            reader, writer = await rt.port_forward(sb, 8080)
            writer.write(word)
            writer.write_eof()
            assert await reader.read() == word
            writer.close()
    asyncio.run(main())


def test_nc_without_k_serves_one_connection_and_exits():
    async def main():
        clock = VirtualClock()
        rt = SimRuntime(clock)
        sb, cid = await run_one(rt, cfg(command=["nc", "-l", "-p", "9000"]))
        await settle()
        reader, writer = await rt.port_forward(sb, 9000)
        writer.write(b"logged\n")
        writer.write_eof()
        await reader.read()
        writer.close()
        await settle()
        st = await rt.container_status(cid)
        assert (st.state, st.exit_code) == ("exited", 0)
        assert text(rt, sb) == "logged\n"
    asyncio.run(main())


def test_attach_feeds_the_programs_stdin():
    class IO:
        tty = False
        stdin = True

        def __init__(self):
            self.chunks = [b"echo attached\n", b"exit 4\n"]
            self.out = bytearray()

        async def read_stdin(self):
            await asyncio.sleep(0)
            return self.chunks.pop(0) if self.chunks else None

        async def write_stdout(self, data):
            self.out += data

        async def write_stderr(self, data):
            self.out += data

        async def next_resize(self):
            return None

    async def main():
        clock = VirtualClock()
        rt = SimRuntime(clock)
        sb, cid = await run_one(rt, cfg(command=["sh"], stdin=True, stdin_once=True))
        io = IO()
        await rt.attach(cid, io)
        assert bytes(io.out) == b"attached\n"
        st = await rt.container_status(cid)
        assert (st.state, st.exit_code) == ("exited", 4)
    asyncio.run(main())
