"""A small shell for ``kubectl exec`` into simulated containers.

A simulated container runs no program, so exec runs this instead: a POSIX-like ``sh``
with the commands people type first (``echo``, ``cat``, ``ls``, ``env``, ``test``, ``tar``
for ``kubectl cp``, ...) over an in-memory filesystem that lives as long as the container
instance. ``sh -c SCRIPT`` understands quoting, ``$VAR``/``$?`` expansion, ``;``, ``&&``,
``||``, pipes and ``>``/``>>``/``<``/``2>&1`` redirections; ``sh`` with a terminal reads
lines from stdin, echoing them as a terminal does. A command that is not here is "not
found" (exit 127 in a script; an exec of it fails as a missing executable does).
"""

from __future__ import annotations

import asyncio
import gzip
import io as iolib
import math
import os
import posixpath
import re
import tarfile
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from kvert.clock import WallClock
from kvert.clock.base import Clock

NOT_FOUND = 127
MAX_SLEEP = 3600.0
# Every loop iteration takes this much of the container's clock: a busy loop
# (``while true; do :; done``) paces itself instead of holding the node agent's event loop.
LOOP_STEP = 0.001
TIMED_OUT = 124          # timeout(1)'s exit status when the command ran out of time
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# where a variable stands until its command runs (``VAR_OPEN name VAR_CLOSE``): a list's
# later commands see what its earlier ones assigned, and ``$?`` the status just before
VAR_OPEN, VAR_CLOSE = "\ue000", "\ue001"
_DEFERRED = re.compile(f"{VAR_OPEN}([^{VAR_CLOSE}]*){VAR_CLOSE}")


class Filesystem:
    """Files (path -> bytes) and directories of one container instance."""

    def __init__(self, files: dict[str, bytes] | None = None):
        self.files: dict[str, bytes] = {}
        self.dirs: set[str] = {"/", "/tmp", "/root", "/etc", "/var", "/var/log", "/home", "/bin"}
        for path, data in (files or {}).items():
            self.write(path, data, parents=True)

    @staticmethod
    def resolve(cwd: str, path: str) -> str:
        return posixpath.normpath(posixpath.join(cwd, path)).replace("//", "/")

    def is_dir(self, path: str) -> bool:
        return path in self.dirs

    def exists(self, path: str) -> bool:
        return path in self.dirs or path in self.files

    def mkdir(self, path: str, parents: bool = False) -> None:
        parent = posixpath.dirname(path)
        if parent not in self.dirs:
            if not parents:
                raise FileNotFoundError(path)
            self.mkdir(parent, True)
        if path in self.files:
            raise FileExistsError(path)
        self.dirs.add(path)

    def write(self, path: str, data: bytes, append: bool = False, parents: bool = False) -> None:
        if path in self.dirs:
            raise IsADirectoryError(path)
        parent = posixpath.dirname(path)
        if parent not in self.dirs:
            if not parents:
                raise FileNotFoundError(path)
            self.mkdir(parent, True)
        self.files[path] = (self.files.get(path, b"") if append else b"") + data

    def read(self, path: str) -> bytes:
        if path in self.dirs:
            raise IsADirectoryError(path)
        if path not in self.files:
            raise FileNotFoundError(path)
        return self.files[path]

    def children(self, path: str) -> list[str]:
        prefix = path.rstrip("/") + "/"
        names = {p[len(prefix):].split("/")[0] for p in (*self.files, *self.dirs)
                 if p.startswith(prefix) and p != prefix}
        return sorted(names)

    def remove(self, path: str, recursive: bool = False) -> None:
        if path in self.files:
            del self.files[path]
        elif path in self.dirs and path != "/":
            if self.children(path) and not recursive:
                raise OSError(f"{path}: Directory not empty")
            prefix = path + "/"
            self.files = {p: d for p, d in self.files.items() if not p.startswith(prefix)}
            self.dirs = {d for d in self.dirs if d != path and not d.startswith(prefix)}
        else:
            raise FileNotFoundError(path)


Write = Callable[[bytes], Awaitable[None]]


Read = Callable[[], Awaitable[bytes | None]]


class _Input:
    """A reader with room to put back what a command read past its need (``read`` takes
    one line of a chunk; the next command gets the rest)."""

    def __init__(self, read: Read) -> None:
        self._read = read
        self._pending = b""

    async def __call__(self) -> bytes | None:
        if self._pending:
            chunk, self._pending = self._pending, b""
            return chunk
        return await self._read()

    def unread(self, data: bytes) -> None:
        self._pending = data + self._pending


@dataclass
class _Ctx:
    """One command's streams: stdin as a reader, stdout/stderr as writers."""
    stdin: Read
    out: Write
    err: Write

    def __post_init__(self) -> None:
        if not isinstance(self.stdin, _Input):
            self.stdin = _Input(self.stdin)

    async def read_all(self) -> bytes:
        chunks = []
        while (chunk := await self.stdin()) is not None:
            chunks.append(chunk)
        return b"".join(chunks)


Ctx = _Ctx      # what commands defined elsewhere (``simnet``) are given


def reader_of(data: bytes) -> Callable[[], Awaitable[bytes | None]]:
    pending = [data] if data else []

    async def read() -> bytes | None:
        return pending.pop() if pending else None
    return read


async def _no_input() -> bytes | None:
    return None


def _collector(into: list[bytes]) -> Callable[[bytes], Awaitable[None]]:
    """An output sink that keeps what is written (a command substitution's output)."""
    async def keep(data: bytes) -> None:
        into.append(data)
    return keep


# -- parsing ----------------------------------------------------------------------------------

class ShellSyntaxError(Exception):
    pass


_OPERATORS = ("&&", "||", "1>&2", ">&2", "2>&1", ">>", "2>>", "2>", ";", "|", ">", "<", "\n", "&")


@dataclass
class _Word:
    text: str


def tokenize(script: str, env: dict[str, str] | None) -> list[str | _Word]:
    """Words (with quotes removed and variables expanded, or marked for expansion when
    ``env`` is None) and operators (plain strings)."""
    out: list[str | _Word] = []
    word: list[str] = []
    in_word = False
    i = 0

    def value(name: str) -> str:
        return f"{VAR_OPEN}{name}{VAR_CLOSE}" if env is None else env.get(name, "")

    def expand(at: int) -> tuple[str, int]:
        if script.startswith("${", at):
            end = script.find("}", at)
            if end < 0:
                raise ShellSyntaxError("bad substitution")
            return value(script[at + 2:end]), end + 1
        if at + 1 < len(script) and script[at + 1] in "?#$":
            return value(script[at + 1]), at + 2
        m = _NAME.match(script, at + 1)
        if not m:
            return "$", at + 1
        return value(m.group(0)), m.end()

    while i < len(script):
        ch = script[i]
        if ch in " \t" :
            if in_word:
                out.append(_Word("".join(word)))
                word, in_word = [], False
            i += 1
            continue
        if ch == "#" and not in_word:
            end = script.find("\n", i)
            i = len(script) if end < 0 else end
            continue
        op = next((o for o in _OPERATORS if script.startswith(o, i)), None)
        if op is not None and not (op[0] in "12" and in_word):
            if in_word:
                out.append(_Word("".join(word)))
                word, in_word = [], False
            out.append({"\n": ";", "1>&2": ">&2"}.get(op, op))
            i += len(op)
            continue
        in_word = True
        if ch == "'":
            end = script.find("'", i + 1)
            if end < 0:
                raise ShellSyntaxError("unterminated quoted string")
            word.append(script[i + 1:end])
            i = end + 1
        elif ch == '"':
            i += 1
            while i < len(script) and script[i] != '"':
                if script[i] == "\\" and i + 1 < len(script) and script[i + 1] in '"\\$`':
                    word.append(script[i + 1])
                    i += 2
                elif script[i] == "$":
                    text, i = expand(i)
                    word.append(text)
                else:
                    word.append(script[i])
                    i += 1
            if i >= len(script):
                raise ShellSyntaxError("unterminated quoted string")
            i += 1
        elif ch == "\\" and i + 1 < len(script):
            word.append(script[i + 1])
            i += 2
        elif ch == "$":
            text, i = expand(i)
            word.append(text)
        else:
            word.append(ch)
            i += 1
    if in_word:
        out.append(_Word("".join(word)))
    return out


@dataclass
class _Simple:
    argv: list[str] = field(default_factory=list)
    redirects: list[tuple[str, str]] = field(default_factory=list)   # (operator, target)


def _parse(tokens: list) -> list[tuple[str, list[_Simple]]]:
    """[(connector, pipeline)]: the connector (";", "&&", "||") joins it to what came before."""
    statements: list[tuple[str, list[_Simple]]] = []
    connector, pipeline, cmd = ";", [], _Simple()
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if isinstance(tok, _Word):
            cmd.argv.append(tok.text)
        elif tok in (">", ">>", "<", "2>", "2>>"):
            if i + 1 >= len(tokens) or not isinstance(tokens[i + 1], _Word):
                raise ShellSyntaxError(f"syntax error: redirection {tok} without a file")
            cmd.redirects.append((tok, tokens[i + 1].text))
            i += 1
        elif tok in ("2>&1", ">&2"):
            cmd.redirects.append((tok, ""))
        elif tok == "|":
            if not cmd.argv:
                raise ShellSyntaxError('syntax error near unexpected token "|"')
            pipeline.append(cmd)
            cmd = _Simple()
        else:   # ; && || &
            if cmd.argv:
                pipeline.append(cmd)
            elif pipeline or tok in ("&&", "||"):
                raise ShellSyntaxError(f'syntax error near unexpected token "{tok}"')
            if pipeline:
                statements.append((connector, pipeline))
            connector, pipeline, cmd = (";" if tok == "&" else tok), [], _Simple()
        i += 1
    if cmd.argv:
        pipeline.append(cmd)
    elif pipeline:
        raise ShellSyntaxError("syntax error: unexpected end of file")
    if pipeline:
        statements.append((connector, pipeline))
    return statements


def _quoted_scan(text: str):
    """(index, char, quoted) for each character, quoted meaning inside '...' or "..."."""
    quote = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = ""
            elif ch == "\\" and quote == '"':
                yield i, ch, True
                i += 1
                if i < len(text):
                    yield i, text[i], True
                i += 1
                continue
            yield i, ch, True
        elif ch in "'\"":
            quote = ch
            yield i, ch, True
        elif ch == "\\":
            yield i, ch, True
            i += 1
            if i < len(text):
                yield i, text[i], True
        else:
            yield i, ch, False
        i += 1


def command_substitutions(text: str) -> list[tuple[int, int]]:
    """The outermost ``$(`` ... ``)`` spans (start of ``$``, index of ``)``), outside single quotes."""
    spans, depth, start, in_single = [], 0, -1, False
    for i, ch in enumerate(text):
        if ch == "'" and depth == 0:
            in_single = not in_single
        if in_single:
            continue
        if text.startswith("$(", i):
            if depth == 0:
                start = i
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, i))
    if depth:
        raise ShellSyntaxError("unterminated command substitution")
    return spans


_FOR = re.compile(r"for\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\s+(.*?)\s*[;\n]\s*do\b(.*)\bdone\Z", re.S)
_WHILE = re.compile(r"(while|until)\s+(.*?)\s*[;\n]\s*do\b(.*)\bdone\Z", re.S)
_LOOPS = ("for", "while", "until")


def _command_start(text: str, k: int) -> bool:
    before = text[:k].rstrip(" \t")
    return not before or before[-1] in ";\n&|(" or re.search(r"(^|[\s;])(do|then|else)\Z", before) is not None


def split_loops(text: str) -> list:
    """The script as plain command lists (strings) and loops: ``("for", name, words, body)``
    and ``("while", condition, body, negate)`` (``until`` negates)."""
    unquoted = [i for i, _, quoted in _quoted_scan(text) if not quoted]
    free = set(unquoted)

    def keyword(k: int) -> str | None:
        if k not in free or (k and (text[k - 1].isalnum() or text[k - 1] == "_")) or not _command_start(text, k):
            return None
        m = re.match(r"[a-z]+\b", text[k:])
        return m.group(0) if m else None

    parts: list = []
    plain_from = 0
    i = 0
    while i < len(text):
        if keyword(i) not in _LOOPS:
            i += 1
            continue
        depth, end = 0, -1
        for k in unquoted:
            if k < i:
                continue
            word = keyword(k)
            if word in _LOOPS:
                depth += 1
            elif word == "done":
                depth -= 1
                if depth == 0:
                    end = k + 4
                    break
        if end < 0:
            raise ShellSyntaxError('syntax error: end of file unexpected (expecting "done")')
        if text[plain_from:i].strip(" \t\n;"):
            parts.append(text[plain_from:i])
        loop = text[i:end]
        if (f := _FOR.match(loop)) is not None:
            parts.append(("for", f.group(1), f.group(2), f.group(3)))
        elif (w := _WHILE.match(loop)) is not None:
            parts.append(("while", w.group(2), w.group(3), w.group(1) == "until"))
        else:
            raise ShellSyntaxError(f"syntax error in a {loop.split()[0]} loop")
        i = plain_from = end
    if text[plain_from:].strip(" \t\n;"):
        parts.append(text[plain_from:])
    return parts


# -- the shell --------------------------------------------------------------------------------

class _Exit(Exception):
    def __init__(self, code: int):
        self.code = code


class Network(Protocol):
    """The pod's network namespace as programs see it: the ports they listen on."""

    def listen(self, port: int, serve: Serve) -> None:
        """Accept connections to ``port`` with ``serve``; OSError when it is taken."""

    def close(self, port: int) -> None: ...


Serve = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Coroutine[Any, Any, None]]
Command = Callable[["Shell", list[str], "_Ctx"], Awaitable[int]]


class Shell:
    """One shell over a container's filesystem and environment: an exec's, or the
    container's own program (``max_sleep`` unbounded, ``commands`` adding the servers an
    image has, ``network`` where they listen)."""

    def __init__(self, fs: Filesystem, env: dict[str, str], *, clock: Clock | None = None,
                 processes: list[str] | None = None, commands: Mapping[str, Command] | None = None,
                 network: Network | None = None, max_sleep: float = MAX_SLEEP) -> None:
        self.fs = fs
        self.clock = clock or WallClock()
        self.env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    "HOME": "/root", **env}
        self.cwd = "/"
        self.status = 0
        self.processes = processes or []
        self.commands: dict[str, Command] = {**_BUILTINS, **(commands or {})}
        self.network = network
        self.max_sleep = max_sleep

    def has(self, name: str) -> bool:
        return posixpath.basename(name) in self.commands

    async def run(self, argv: list[str], ctx: _Ctx) -> int:
        """Run one command line (already split)."""
        try:
            return await self._command(argv, ctx)
        except _Exit as e:
            return e.code

    async def script(self, text: str, ctx: _Ctx) -> int:
        try:
            parts = split_loops(text)
        except ShellSyntaxError as e:
            await ctx.err(f"sh: 1: {e}\n".encode())
            return 2
        for part in parts:
            if isinstance(part, str):
                await self._list(part, ctx)
            elif part[0] == "for":
                _, name, words, body = part
                for word in await self._words(words, ctx):
                    self.env[name] = word
                    await self.script(body, ctx)
                    await self.clock.sleep(LOOP_STEP)
            else:
                _, condition, body, negate = part
                while (await self.script(condition, ctx) == 0) != negate:
                    await self.script(body, ctx)
                    await self.clock.sleep(LOOP_STEP)
                self.status = 0
        return self.status

    async def _words(self, text: str, ctx: _Ctx) -> list[str]:
        expanded = await self._substitute(text, ctx)
        return [t.text for t in tokenize(expanded, {**self.env, "#": "0", "$": "1"}) if isinstance(t, _Word)]

    async def _substitute(self, text: str, ctx: _Ctx) -> str:
        """``$(...)``: the inner script's output, trailing newlines removed."""
        out, at = [], 0
        for start, end in command_substitutions(text):
            captured: list[bytes] = []
            saved = self.status
            await self.script(text[start + 2:end], _Ctx(_no_input, _collector(captured), ctx.err))
            self.status = saved
            out += [text[at:start], b"".join(captured).decode("utf-8", "replace").rstrip("\n")]
            at = end + 1
        return "".join(out) + text[at:]

    async def _list(self, text: str, ctx: _Ctx) -> int:
        try:
            statements = _parse(tokenize(await self._substitute(text, ctx), None))
        except ShellSyntaxError as e:
            await ctx.err(f"sh: 1: {e}\n".encode())
            self.status = 2
            return 2
        for connector, pipeline in statements:
            if (connector == "&&" and self.status != 0) or (connector == "||" and self.status == 0):
                continue
            self.status = await self._pipeline(pipeline, ctx)
        return self.status

    async def _pipeline(self, pipeline: list[_Simple], ctx: _Ctx) -> int:
        stdin = ctx.stdin
        code = 0
        for n, cmd in enumerate(pipeline):
            last = n == len(pipeline) - 1
            captured: list[bytes] = []

            async def capture(data: bytes, into: list = captured) -> None:
                into.append(data)
            step = _Ctx(stdin, ctx.out if last else capture, ctx.err)
            code = await self._simple(cmd, step)
            stdin = reader_of(b"".join(captured))
        return code

    def _expand(self, text: str) -> str:
        special = {"?": str(self.status), "#": "0", "$": "1"}
        return _DEFERRED.sub(lambda m: special.get(m.group(1), self.env.get(m.group(1), "")), text)

    async def _simple(self, cmd: _Simple, ctx: _Ctx) -> int:
        cmd = _Simple([self._expand(a) for a in cmd.argv], [(op, self._expand(t)) for op, t in cmd.redirects])
        out, err, stdin = ctx.out, ctx.err, ctx.stdin
        writes: dict[str, tuple[str, bool]] = {}
        for op, target in cmd.redirects:
            if op == "<":
                try:
                    stdin = reader_of(self.fs.read(self.fs.resolve(self.cwd, target)))
                except OSError:
                    await err(f"sh: 1: cannot open {target}: No such file\n".encode())
                    return 2
            elif op == "2>&1":
                err = out
            elif op == ">&2":
                out = err
            else:
                writes["err" if op.startswith("2") else "out"] = (target, op.endswith(">>"))
        buffers: dict[str, list[bytes]] = {}
        for which, (target, _) in writes.items():
            if target == "/dev/null":
                async def drop(data: bytes) -> None:
                    return None
                out, err = (drop, err) if which == "out" else (out, drop)
                continue
            chunks = buffers.setdefault(which, [])

            async def keep(data: bytes, into: list = chunks) -> None:
                into.append(data)
            out, err = (keep, err) if which == "out" else (out, keep)
        code = await self._command(cmd.argv, _Ctx(stdin, out, err))
        for which, chunks in buffers.items():
            target, append = writes[which]
            try:
                self.fs.write(self.fs.resolve(self.cwd, target), b"".join(chunks), append=append)
            except OSError:
                await ctx.err(f"sh: 1: cannot create {target}: Directory nonexistent\n".encode())
                return 2
        return code

    async def _command(self, argv: list[str], ctx: _Ctx) -> int:
        assignments = 0
        while assignments < len(argv) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", argv[assignments]):
            assignments += 1
        for item in argv[:assignments]:
            name, _, value = item.partition("=")
            self.env[name] = value
        argv = argv[assignments:]
        if not argv:
            return 0
        builtin = self.commands.get(posixpath.basename(argv[0]))
        if builtin is None:
            await ctx.err(f"sh: 1: {argv[0]}: not found\n".encode())
            return NOT_FOUND
        try:
            return await builtin(self, argv[1:], ctx)
        except _Exit:
            raise
        except (OSError, ValueError) as e:
            await ctx.err(f"{argv[0]}: {e}\n".encode())
            return 1


# -- commands ---------------------------------------------------------------------------------

async def _echo(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    newline = True
    if args and args[0] == "-n":
        newline, args = False, args[1:]
    await ctx.out((" ".join(args) + ("\n" if newline else "")).encode())
    return 0


async def _read(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    """``read [-r] [NAME...]``: one line of stdin, split on blanks into the names (the last
    takes the rest; ``REPLY`` when none is named); status 1 at the end of input."""
    names = [a for a in args if not a.startswith("-")] or ["REPLY"]
    raw = "-r" in args
    buffer = b""
    while b"\n" not in buffer:
        chunk = await ctx.stdin()
        if chunk is None:
            break
        buffer += chunk
    if not buffer:
        for name in names:
            sh.env[name] = ""
        return 1
    line, newline, rest = buffer.partition(b"\n")
    stdin = ctx.stdin
    if rest and isinstance(stdin, _Input):
        stdin.unread(rest)
    text = line.decode("utf-8", "replace")
    if not raw:
        text = re.sub(r"\\(.)", r"\1", text)
    fields = text.split(None, len(names) - 1) if len(names) > 1 else [text.strip()]
    for i, name in enumerate(names):
        sh.env[name] = fields[i] if i < len(fields) else ""
    return 0 if newline else 1


async def _printf(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    if not args:
        await ctx.err(b"printf: usage: printf format [arguments]\n")
        return 2
    fmt = args[0].replace("\\n", "\n").replace("\\t", "\t")
    values = args[1:]
    pieces = re.split(r"(%[sd%])", fmt)
    out, k = [], 0
    for piece in pieces:
        if piece == "%%":
            out.append("%")
        elif piece in ("%s", "%d"):
            out.append(values[k] if k < len(values) else ("" if piece == "%s" else "0"))
            k += 1
        else:
            out.append(piece)
    await ctx.out("".join(out).encode())
    return 0


async def _cat(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    if not args or args == ["-"]:
        while (chunk := await ctx.stdin()) is not None:
            await ctx.out(chunk)
        return 0
    code = 0
    for name in args:
        try:
            await ctx.out(sh.fs.read(sh.fs.resolve(sh.cwd, name)))
        except IsADirectoryError:
            await ctx.err(f"cat: {name}: Is a directory\n".encode())
            code = 1
        except FileNotFoundError:
            await ctx.err(f"cat: {name}: No such file or directory\n".encode())
            code = 1
    return code


async def _ls(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    flags = "".join(a[1:] for a in args if a.startswith("-"))
    paths = [a for a in args if not a.startswith("-")] or ["."]
    code = 0
    for name in paths:
        path = sh.fs.resolve(sh.cwd, name)
        if sh.fs.is_dir(path):
            entries = sh.fs.children(path)
            if "a" in flags:
                entries = [".", "..", *entries]
        elif sh.fs.exists(path):
            entries = [name]
        else:
            await ctx.err(f"ls: cannot access '{name}': No such file or directory\n".encode())
            code = 2
            continue
        if len(paths) > 1:
            await ctx.out(f"{name}:\n".encode())
        for entry in entries:
            if "l" in flags:
                full = sh.fs.resolve(path, entry) if sh.fs.is_dir(path) else path
                size = len(sh.fs.files.get(full, b""))
                kind = "d" if sh.fs.is_dir(full) else "-"
                await ctx.out(f"{kind}rw-r--r-- 1 root root {size:>8} {entry}\n".encode())
            else:
                await ctx.out(f"{entry}\n".encode())
    return code


async def _pwd(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    await ctx.out(f"{sh.cwd}\n".encode())
    return 0


async def _cd(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    path = sh.fs.resolve(sh.cwd, args[0] if args else sh.env.get("HOME", "/"))
    if not sh.fs.is_dir(path):
        await ctx.err(f"sh: 1: cd: can't cd to {args[0] if args else path}\n".encode())
        return 2
    sh.cwd = path
    return 0


async def _mkdir(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    parents = "-p" in args
    code = 0
    for name in (a for a in args if not a.startswith("-")):
        path = sh.fs.resolve(sh.cwd, name)
        if sh.fs.exists(path):
            if not parents:
                await ctx.err(f"mkdir: cannot create directory '{name}': File exists\n".encode())
                code = 1
            continue
        try:
            sh.fs.mkdir(path, parents)
        except OSError:
            await ctx.err(f"mkdir: cannot create directory '{name}': No such file or directory\n".encode())
            code = 1
    return code


async def _rm(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    flags = "".join(a[1:] for a in args if a.startswith("-"))
    code = 0
    for name in (a for a in args if not a.startswith("-")):
        path = sh.fs.resolve(sh.cwd, name)
        if sh.fs.is_dir(path) and "r" not in flags and "R" not in flags:
            await ctx.err(f"rm: cannot remove '{name}': Is a directory\n".encode())
            code = 1
            continue
        try:
            sh.fs.remove(path, recursive=True)
        except FileNotFoundError:
            if "f" not in flags:
                await ctx.err(f"rm: cannot remove '{name}': No such file or directory\n".encode())
                code = 1
    return code


async def _touch(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    for name in args:
        path = sh.fs.resolve(sh.cwd, name)
        if not sh.fs.exists(path):
            sh.fs.write(path, b"")
    return 0


def _test(sh: Shell, args: list[str]) -> bool:
    if args and args[0] == "!":
        return not _test(sh, args[1:])
    if len(args) == 1:
        return args[0] != ""
    if len(args) == 2:
        op, operand = args
        path = sh.fs.resolve(sh.cwd, operand)
        checks = {"-d": lambda: sh.fs.is_dir(path), "-f": lambda: path in sh.fs.files,
                  "-e": lambda: sh.fs.exists(path), "-s": lambda: bool(sh.fs.files.get(path)),
                  "-z": lambda: operand == "", "-n": lambda: operand != ""}
        if op not in checks:
            raise ValueError(f"{op}: unexpected operator")
        return checks[op]()
    if len(args) == 3:
        left, op, right = args
        if op in ("=", "=="):
            return left == right
        if op == "!=":
            return left != right
        numeric = {"-eq": int.__eq__, "-ne": int.__ne__, "-lt": int.__lt__, "-le": int.__le__,
                   "-gt": int.__gt__, "-ge": int.__ge__}
        if op in numeric:
            return numeric[op](int(left), int(right))
        raise ValueError(f"{op}: unexpected operator")
    return False


async def _test_cmd(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    try:
        return 0 if _test(sh, args) else 1
    except ValueError as e:
        await ctx.err(f"sh: 1: test: {e}\n".encode())
        return 2


async def _bracket(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    if not args or args[-1] != "]":
        await ctx.err(b"sh: 1: [: missing ]\n")
        return 2
    return await _test_cmd(sh, args[:-1], ctx)


async def _true(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    return 0


async def _false(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    return 1


async def _exit(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    raise _Exit(int(args[0]) & 0xFF if args else sh.status)


async def _env(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    if args:
        value = sh.env.get(args[0])
        if value is None:
            return 1
        await ctx.out(f"{value}\n".encode())
        return 0
    await ctx.out("".join(f"{k}={v}\n" for k, v in sh.env.items()).encode())
    return 0


async def _hostname(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    await ctx.out(f"{sh.env.get('HOSTNAME', 'localhost')}\n".encode())
    return 0


async def _uname(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    await ctx.out(b"Linux\n" if "-a" not in args else
                  f"Linux {sh.env.get('HOSTNAME', 'localhost')} kvert-sim x86_64 GNU/Linux\n".encode())
    return 0


async def _whoami(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    await ctx.out(b"root\n")
    return 0


async def _id(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    await ctx.out(b"uid=0(root) gid=0(root) groups=0(root)\n")
    return 0


async def _date(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    """``date [-u] [+FORMAT]``: the time is UTC; any other operand is a date GNU date
    cannot read here."""
    fmt = "%a %b %d %H:%M:%S UTC %Y"
    for arg in args:
        if arg.startswith("+"):
            fmt = arg[1:]
        elif arg not in ("-u", "--utc", "--universal"):
            await ctx.err(f"date: invalid date '{arg}'\n".encode())
            return 1
    await ctx.out((time.strftime(fmt, time.gmtime(sh.clock.now())) + "\n").encode())
    return 0


async def _seq(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    """``seq [FIRST [INCREMENT]] LAST`` (integers)."""
    numbers = [int(a) for a in args]
    operands: dict[int, tuple[int, ...]] = {1: (1, 1, *numbers), 2: (numbers[0], 1, numbers[-1]),
                                            3: tuple(numbers)}
    picked = operands.get(len(numbers))
    if picked is None or picked[1] == 0:
        await ctx.err(b"seq: missing operand\n")
        return 1
    first, step, last = picked
    values = range(first, last + (1 if step > 0 else -1), step)
    await ctx.out("".join(f"{v}\n" for v in values).encode())
    return 0


async def _gzip(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    """``gzip [-c] [-d]`` of stdin to stdout (files are not compressed in place here)."""
    flags = "".join(a.lstrip("-") for a in args if a.startswith("-"))
    files = [a for a in args if not a.startswith("-")]
    data = await _input(sh, files, ctx)
    try:
        await ctx.out(gzip.decompress(data) if "d" in flags else gzip.compress(data, mtime=0))
    except (OSError, EOFError) as e:
        await ctx.err(f"gzip: stdin: {e}\n".encode())
        return 1
    return 0


async def _uptime(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    now = time.strftime("%H:%M:%S", time.gmtime(sh.clock.now()))
    await ctx.out(f" {now} up 0 min,  0 users,  load average: 0.00, 0.00, 0.00\n".encode())
    return 0


_DD_UNITS = {"": 1, "c": 1, "w": 2, "b": 512, "k": 1024, "K": 1024, "M": 1 << 20, "G": 1 << 30}


async def _dd(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    """``dd [if=FILE] [of=FILE] [bs=N] [count=N]``; /dev/zero, /dev/random and /dev/urandom read
    as Linux's."""
    ops = dict(a.split("=", 1) for a in args if "=" in a)
    m = re.fullmatch(r"(\d+)([a-zA-Z]?)", ops.get("bs", "512"))
    if not m or m.group(2) not in _DD_UNITS:
        await ctx.err(f"dd: invalid number: '{ops.get('bs')}'\n".encode())
        return 1
    block = int(m.group(1)) * _DD_UNITS[m.group(2)]
    count = int(ops["count"]) if ops.get("count", "").isdigit() else None
    source = ops.get("if")
    if source in ("/dev/zero", "/dev/random", "/dev/urandom"):
        if count is None:
            await ctx.err(b"dd: an endless source needs count=N here\n")
            return 1
        data = bytes(block * count) if source == "/dev/zero" else os.urandom(block * count)
    else:
        data = await _input(sh, [source] if source else [], ctx)
        if count is not None:
            data = data[:block * count]
    if ops.get("of"):
        sh.fs.write(sh.fs.resolve(sh.cwd, ops["of"]), data)
    else:
        await ctx.out(data)
    records = -(-len(data) // block) if block else 0
    await ctx.err(f"{records}+0 records in\n{records}+0 records out\n{len(data)} bytes copied\n".encode())
    return 0


_SLEEP_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def sleep_seconds(arg: str) -> float:
    """busybox sleep's operand: a number with an optional s/m/h/d suffix, or ``infinity``."""
    unit = _SLEEP_UNITS.get(arg[-1:], 0.0)
    value = float(arg[:-1] if unit else arg)
    if value < 0 or math.isnan(value):
        raise ValueError(f"invalid number '{arg}'")
    return value * (unit or 1.0)


async def _sleep(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    try:
        seconds = sum(sleep_seconds(a) for a in args)
    except ValueError:
        await ctx.err(f"sleep: invalid number '{' '.join(args)}'\n".encode())
        return 1
    seconds = min(seconds, sh.max_sleep)
    if math.isinf(seconds):
        await asyncio.Event().wait()        # until the container is stopped
    await sh.clock.sleep(seconds)
    return 0


async def _timeout(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    if len(args) < 2:
        await ctx.err(b"Usage: timeout [-s SIG] SECS PROG ARGS\n")
        return 1
    try:
        seconds = sleep_seconds(args[0])
    except ValueError:
        await ctx.err(f"timeout: invalid number '{args[0]}'\n".encode())
        return 1
    work = asyncio.ensure_future(sh.run(args[1:], ctx))
    timer = asyncio.ensure_future(sh.clock.sleep(seconds))
    try:
        await asyncio.wait({work, timer}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (work, timer):
            task.cancel()
    return work.result() if work.done() and not work.cancelled() else TIMED_OUT


YES_LIMIT = 1 << 20      # what ``yes`` writes at most (a pipeline here holds a command's output)


async def _yes(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    chunk = ((" ".join(args) or "y") + "\n").encode() * 256
    for _ in range(YES_LIMIT // len(chunk)):
        await ctx.out(chunk)
        await sh.clock.sleep(LOOP_STEP)
    return 0


async def _ps(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    lines = ["PID   USER     COMMAND"] + [f"{n:<5} root     {cmd}"
                                          for n, cmd in enumerate(sh.processes, start=1)]
    await ctx.out(("\n".join(lines) + "\n").encode())
    return 0


def _count_option(args: list[str], default: int) -> tuple[str, int, bool, list[str]]:
    """head/tail's ``-n N``, ``-c N``, ``-N`` and ``-c+N``: (unit, count, from_start, files)."""
    unit, count, from_start, rest = "n", default, False, []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-n", "-c") and i + 1 < len(args):
            unit, value = a[1], args[i + 1]
            i += 1
        elif re.fullmatch(r"-[nc][+]?\d+", a):
            unit, value = a[1], a[2:]
        elif re.fullmatch(r"-\d+", a):
            value = a[1:]
        else:
            rest.append(a)
            i += 1
            continue
        from_start = value.startswith("+")
        count = int(value.lstrip("+"))
        i += 1
    return unit, count, from_start, rest


async def _input(sh: Shell, files: list[str], ctx: _Ctx) -> bytes:
    if not files:
        return await ctx.read_all()
    return b"".join(sh.fs.read(sh.fs.resolve(sh.cwd, f)) for f in files)


async def _head(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    unit, count, _, files = _count_option(args, 10)
    data = await _input(sh, files, ctx)
    await ctx.out(data[:count] if unit == "c" else b"".join(data.splitlines(True)[:count]))
    return 0


async def _tail(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    unit, count, from_start, files = _count_option(args, 10)
    data = await _input(sh, files, ctx)
    if unit == "c":
        await ctx.out(data[max(count - 1, 0):] if from_start else (data[-count:] if count else b""))
    else:
        lines = data.splitlines(True)
        await ctx.out(b"".join(lines[max(count - 1, 0):] if from_start else (lines[-count:] if count else [])))
    return 0


async def _wc(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    files = [a for a in args if not a.startswith("-")]
    data = await _input(sh, files, ctx)
    counts = {"l": data.count(b"\n"), "w": len(data.split()), "c": len(data)}
    chosen = [k for k in "lwc" if f"-{k}" in args] or ["l", "w", "c"]
    await ctx.out((" ".join(str(counts[k]) for k in chosen) + "\n").encode())
    return 0


async def _tar(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    """``tar c|x|t [-v] [-f FILE] [-C DIR] [PATH...]``: what ``kubectl cp`` runs."""
    mode, archive, directory, paths = "", "-", sh.cwd, []
    i = 0
    first = True
    while i < len(args):
        a = args[i]
        if a.startswith("--"):
            i += 1
            continue
        if a.startswith("-") or first:
            letters = a.lstrip("-")
            for letter in letters:
                if letter in "cxt":
                    mode = letter
                elif letter == "f":
                    i += 1
                    archive = args[i] if i < len(args) else "-"
                elif letter == "C":
                    i += 1
                    directory = sh.fs.resolve(sh.cwd, args[i]) if i < len(args) else directory
            first = False
        elif a == "-C" and i + 1 < len(args):
            directory = sh.fs.resolve(sh.cwd, args[i + 1])
            i += 1
        else:
            paths.append(a)
        i += 1
    if not mode:
        await ctx.err(b"tar: You must specify one of the '-Acdtrux', '--delete' or '--test-label' options\n")
        return 2
    if mode == "c":
        buffer = iolib.BytesIO()
        warned = False
        with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as tar:
            for name in paths:
                path = sh.fs.resolve(directory, name)
                if not sh.fs.exists(path):
                    await ctx.err(f"tar: {name}: Cannot stat: No such file or directory\n".encode())
                    continue
                if name.startswith("/") and not warned:
                    await ctx.err(b"tar: Removing leading `/' from member names\n")
                    warned = True
                _add(sh.fs, tar, path, name.lstrip("/") or ".", int(sh.clock.now()))
        data = buffer.getvalue()
        if archive == "-":
            await ctx.out(data)
        else:
            sh.fs.write(sh.fs.resolve(sh.cwd, archive), data)
        return 0
    data = await ctx.read_all() if archive == "-" else sh.fs.read(sh.fs.resolve(sh.cwd, archive))
    try:
        with tarfile.open(fileobj=iolib.BytesIO(data), mode="r:*") as tar:
            for member in tar:
                if mode == "t":
                    await ctx.out(f"{member.name}\n".encode())
                    continue
                target = sh.fs.resolve(directory, member.name.lstrip("/"))
                if member.isdir():
                    if not sh.fs.is_dir(target):
                        sh.fs.mkdir(target, parents=True)
                elif member.isfile():
                    handle = tar.extractfile(member)
                    sh.fs.write(target, handle.read() if handle else b"", parents=True)
    except tarfile.TarError as e:
        await ctx.err(f"tar: {e}\n".encode())
        return 2
    return 0


def _add(fs: Filesystem, tar: tarfile.TarFile, path: str, name: str, mtime: int) -> None:
    info = tarfile.TarInfo(name)
    info.mtime = mtime
    if fs.is_dir(path):
        info.type, info.mode = tarfile.DIRTYPE, 0o755
        tar.addfile(info)
        for child in fs.children(path):
            _add(fs, tar, posixpath.join(path, child), posixpath.join(name, child), mtime)
    else:
        data = fs.read(path)
        info.size, info.mode = len(data), 0o644
        tar.addfile(info, iolib.BytesIO(data))


async def _sh(sh: Shell, args: list[str], ctx: _Ctx) -> int:
    if args and args[0] == "-c":
        if len(args) < 2:
            await ctx.err(b"sh: 0: -c requires an argument\n")
            return 2
        return await sh.script(args[1], ctx)
    if args:
        try:
            text = sh.fs.read(sh.fs.resolve(sh.cwd, args[0])).decode("utf-8", "replace")
        except OSError:
            await ctx.err(f"sh: 0: cannot open {args[0]}: No such file\n".encode())
            return 2
        return await sh.script(text, ctx)
    # commands from stdin, line by line, as they come
    buffer = b""
    while True:
        chunk = await ctx.stdin()
        if chunk is None:
            if buffer.strip():
                await sh.script(buffer.decode("utf-8", "replace"), ctx)
            return sh.status
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            await sh.script(line.decode("utf-8", "replace"), ctx)


_BUILTINS: dict[str, Command] = {
    "echo": _echo, "printf": _printf, "read": _read, "cat": _cat, "ls": _ls, "pwd": _pwd, "cd": _cd,
    "mkdir": _mkdir, "rm": _rm, "touch": _touch, "test": _test_cmd, "[": _bracket,
    "true": _true, "false": _false, "exit": _exit, "env": _env, "printenv": _env,
    "hostname": _hostname, "uname": _uname, "whoami": _whoami, "id": _id, "date": _date, "dd": _dd, "seq": _seq,
    "gzip": _gzip, "uptime": _uptime,
    "sleep": _sleep, "timeout": _timeout, "yes": _yes, "ps": _ps, "head": _head, "tail": _tail, "wc": _wc, "tar": _tar,
    "sh": _sh, "bash": _sh, "ash": _sh,
}


# -- a terminal -------------------------------------------------------------------------------

class _Terminal:
    """A pty's line discipline for an interactive shell: echo, erase, ^C, ^D, CRLF output."""

    def __init__(self, io) -> None:
        self.io = io

    async def write(self, data: bytes) -> None:
        await self.io.write_stdout(data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))

    async def lines(self, prompt: bytes):
        line = bytearray()
        await self.io.write_stdout(prompt)
        while (chunk := await self.io.read_stdin()) is not None:
            for byte in chunk:
                if byte in (0x0D, 0x0A):
                    await self.io.write_stdout(b"\r\n")
                    yield bytes(line)
                    line.clear()
                    await self.io.write_stdout(prompt)
                elif byte == 0x7F or byte == 0x08:
                    if line:
                        line.pop()
                        await self.io.write_stdout(b"\b \b")
                elif byte == 0x03:
                    line.clear()
                    await self.io.write_stdout(b"^C\r\n" + prompt)
                elif byte == 0x04:
                    if not line:
                        await self.io.write_stdout(b"exit\r\n")
                        return
                elif byte >= 0x20 or byte == 0x09:
                    line.append(byte)
                    await self.io.write_stdout(bytes([byte]))


async def run(shell: Shell, argv: list[str], io) -> int:
    """Run ``argv`` as an exec with ``io`` (a runtime ``StreamIO``): its exit code. Raises
    FileNotFoundError when ``argv[0]`` is not a command here."""
    if not argv or not shell.has(argv[0]):
        raise FileNotFoundError(2, "executable file not found in $PATH", argv[0] if argv else "")
    out = io.write_stdout
    err = io.write_stderr
    interactive = io.tty and posixpath.basename(argv[0]) in ("sh", "bash", "ash") and len(argv) == 1
    if not interactive:
        if io.tty:
            term = _Terminal(io)
            out = err = term.write
        return await shell.run(argv, _Ctx(io.read_stdin, out, err))
    term = _Terminal(io)
    ctx = _Ctx(_no_input, term.write, term.write)
    async for line in term.lines(b"# "):
        try:
            await shell.script(line.decode("utf-8", "replace"), ctx)
        except _Exit as e:
            return e.code
    return shell.status
