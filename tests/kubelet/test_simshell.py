"""The simulated container's shell: POSIX sh's rules for quoting, ``$?``, lists, pipes and
redirections (IEEE Std 1003.1, Shell Command Language 2.2-2.9), and tar as GNU tar
behaves for ``kubectl cp`` (leading '/' removed from member names)."""

from __future__ import annotations

import asyncio
import io
import tarfile

from hypothesis import given
from hypothesis import strategies as st

from kvert.kubelet.runtime.simshell import Filesystem, Shell, _Word, run, tokenize


class _IO:
    def __init__(self, stdin: bytes = b"", tty: bool = False):
        self.tty = tty
        self._stdin = [stdin] if stdin else []
        self.out = bytearray()
        self.err = bytearray()

    async def read_stdin(self):
        return self._stdin.pop(0) if self._stdin else None

    async def write_stdout(self, data):
        self.out += data

    async def write_stderr(self, data):
        self.err += data

    async def next_resize(self):
        return None


def sh(script: str, stdin: bytes = b"", fs: Filesystem | None = None) -> tuple[int, str, str]:
    shell = Shell(fs or Filesystem(), {"HOSTNAME": "web", "GREETING": "hello"})
    stream = _IO(stdin)
    code = asyncio.run(run(shell, ["sh", "-c", script], stream))
    return code, stream.out.decode(), stream.err.decode()


def test_quoting_and_expansion():
    assert sh("""echo "x  y" 'z $HOME' $GREETING ${HOSTNAME}""")[1] == "x  y z $HOME hello web\n"
    assert sh(r"echo a\ b")[1] == "a b\n"


def test_lists_and_exit_status():
    assert sh("false; echo $?")[1] == "1\n"
    assert sh("true; echo $?")[1] == "0\n"
    assert sh("false && echo no || echo yes")[1] == "yes\n"
    assert sh("true && echo one; echo two")[1] == "one\ntwo\n"
    assert sh("exit 4")[0] == 4
    assert sh("echo before; exit 2; echo after") == (2, "before\n", "")


def test_a_missing_command_is_127():
    code, _, err = sh("nope")
    assert code == 127 and err == "sh: 1: nope: not found\n"


def test_pipes_and_redirections():
    assert sh(r"printf 'a\nb\nc\n' | wc -l")[1] == "3\n"
    fs = Filesystem()
    assert sh("echo one > /tmp/f; echo two >> /tmp/f; cat /tmp/f", fs=fs)[1] == "one\ntwo\n"
    assert fs.read("/tmp/f") == b"one\ntwo\n"
    assert sh("cat /nope 2>/dev/null; echo $?")[1] == "1\n"
    assert sh("echo oops >&2") == (0, "", "oops\n")
    assert sh("cat /nope 2>&1")[1] == "cat: /nope: No such file or directory\n"
    assert sh("cat < /etc/x", fs=Filesystem({"/etc/x": b"from a file\n"}))[1] == "from a file\n"


def test_files_and_tests():
    fs = Filesystem()
    assert sh("mkdir -p /a/b && test -d /a/b && echo dir; [ -f /a/b ] || echo notfile", fs=fs)[1] == "dir\nnotfile\n"
    assert sh("touch /a/b/c; ls /a/b; rm -r /a; ls /a", fs=fs) == (2, "c\n", "ls: cannot access '/a': No such file or directory\n")


def test_stdin_reaches_the_command():
    assert sh("cat", stdin=b"piped\n")[1] == "piped\n"
    assert sh("tail -c+3", stdin=b"abcdef")[1] == "cdef"
    assert sh("head -n 1", stdin=b"x\ny\n")[1] == "x\n"


def test_read_takes_one_line_and_leaves_the_rest_to_the_next_command():
    # POSIX read: fields split on blanks, the last name takes the rest of the line
    assert sh("read a b; echo \"[$a] [$b]\"; cat", stdin=b"one two three\nnext\n")[1] == "[one] [two three]\nnext\n"
    assert sh("read; echo $REPLY", stdin=b"  spaced  \n")[1] == "spaced\n"
    # the end of input: status 1, the name empty
    assert sh("read x; echo $? [$x]")[1] == "1 []\n"
    assert sh("while read line; do echo got $line; done", stdin=b"a\nb\n")[1] == "got a\ngot b\n"


def test_tar_as_kubectl_cp_runs_it():
    fs = Filesystem({"/tmp/d/a.txt": b"A", "/tmp/d/sub/b.txt": b"BB"})
    shell = Shell(fs, {})
    out = _IO()
    assert asyncio.run(run(shell, ["tar", "cf", "-", "/tmp/d"], out)) == 0
    assert out.err == b"tar: Removing leading `/' from member names\n"
    with tarfile.open(fileobj=io.BytesIO(bytes(out.out))) as tar:
        names = {m.name: (tar.extractfile(m).read() if m.isfile() else None) for m in tar}
    assert names == {"tmp/d": None, "tmp/d/a.txt": b"A", "tmp/d/sub": None, "tmp/d/sub/b.txt": b"BB"}
    # kubectl cp into a pod: tar -xmf - -C DIR with the archive on stdin
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("copied.txt")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"new"))
    target = Filesystem()
    code = asyncio.run(run(Shell(target, {}), ["tar", "-xmf", "-", "-C", "/tmp"], _IO(buffer.getvalue())))
    assert code == 0 and target.read("/tmp/copied.txt") == b"new"


def test_exec_of_a_missing_executable_is_not_an_exit_code():
    import pytest
    with pytest.raises(FileNotFoundError):
        asyncio.run(run(Shell(Filesystem(), {}), ["no-such-binary"], _IO()))


def test_an_interactive_shell_on_a_terminal_echoes_and_runs_lines():
    shell = Shell(Filesystem(), {"HOSTNAME": "web"})
    term = _IO(b"echo hi\rexit 3\r", tty=True)
    code = asyncio.run(run(shell, ["sh"], term))
    assert code == 3
    assert term.out == b"# echo hi\r\nhi\r\n# exit 3\r\n"


@given(st.text(alphabet=st.characters(blacklist_characters="'", blacklist_categories=("Cs",)), max_size=30))
def test_single_quotes_keep_everything(text):
    assert tokenize(f"'{text}'", {}) == [_Word(text)]


def test_date_and_dd_as_coreutils_answer():
    # GNU date: an operand it cannot parse is "invalid date", exit 1; +FORMAT formats
    assert sh("date foo") == (1, "", "date: invalid date 'foo'\n")
    code, out, _ = sh("date +%Y")
    assert code == 0 and out.strip().isdigit() and len(out.strip()) == 4
    fs = Filesystem()
    code, _, err = sh("dd if=/dev/zero of=/tmp/z bs=4k count=3", fs=fs)
    assert code == 0 and fs.read("/tmp/z") == bytes(12288)
    assert err.startswith("3+0 records in\n3+0 records out\n")
    assert sh("printf abcdef | dd bs=2 count=2")[1] == "abcd"


def test_loops_and_command_substitution():
    assert sh("for i in $(seq 1 3); do echo n$i; done")[1] == "n1\nn2\nn3\n"
    assert sh("for i in a b; do for j in 1 2; do printf $i$j; done; done; echo")[1] == "a1a2b1b2\n"
    assert sh("n=x; while test $n != xxx; do n=${n}x; echo $n; done")[1] == "xx\nxxx\n"
    assert sh("until true; do echo never; done; echo after")[1] == "after\n"
    assert sh('echo "$(echo inner) and $(seq 2 2)"')[1] == "inner and 2\n"
    assert sh("echo 'for x in y; do' $(echo ok)")[1] == "for x in y; do ok\n"
    code, _, err = sh("for i in 1 2; do echo $i")
    assert code == 2 and "expecting \"done\"" in err


def test_gzip_round_trips_through_a_pipe():
    import gzip as gz
    shell = Shell(Filesystem(), {})
    out = _IO()
    asyncio.run(run(shell, ["sh", "-c", 'echo -n "This is a test string" | gzip'], out))
    assert gz.decompress(bytes(out.out)) == b"This is a test string"
