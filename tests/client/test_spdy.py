"""SPDY/3.1 framing as the server sees it (draft 3: frame layouts in section 2.2, header
blocks in 2.6.10, the zlib dictionary in 2.6.10.1); a client is played here by hand with
zlib, as moby/spdystream's Framer writes frames."""

from __future__ import annotations

import asyncio
import struct
import zlib

from hypothesis import given
from hypothesis import strategies as st

from kvert.client.httpstream.spdy import (DICTIONARY, FLAG_FIN, PING, RST_STREAM, SYN_REPLY, SYN_STREAM, SpdySession,
                                  decode_headers, encode_headers)

names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=20)
values = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=40)


@given(st.dictionaries(names, values, max_size=8))
def test_header_blocks_round_trip(headers):
    assert decode_headers(encode_headers(headers)) == headers


def test_header_block_layout():
    # 32-bit pair count, then 32-bit length-prefixed name and value (section 2.6.10)
    assert encode_headers({"streamtype": "error"}) == (
        b"\x00\x00\x00\x01" + b"\x00\x00\x00\x0astreamtype" + b"\x00\x00\x00\x05error")


def test_the_dictionary_starts_and_ends_as_the_draft_gives_it():
    assert DICTIONARY.startswith(b"\x00\x00\x00\x07options\x00\x00\x00\x04head\x00\x00\x00\x04post")
    assert DICTIONARY.endswith(b"charset=utf-8charset=iso-8859-1,utf-,*,enq=0.")


class _Client:
    def __init__(self):
        self.deflate = zlib.compressobj(zlib.Z_BEST_COMPRESSION, zdict=DICTIONARY)
        self.inflate = zlib.decompressobj(zdict=DICTIONARY)
        self.to_server: asyncio.Queue[bytes] = asyncio.Queue()
        self.from_server = bytearray()

    def control(self, kind: int, flags: int, payload: bytes) -> None:
        self.to_server.put_nowait(struct.pack(">HHI", 0x8003, kind, (flags << 24) | len(payload)) + payload)

    def syn_stream(self, stream_id: int, headers: dict, fin: bool = False) -> None:
        block = self.deflate.compress(encode_headers(headers)) + self.deflate.flush(zlib.Z_SYNC_FLUSH)
        self.control(SYN_STREAM, FLAG_FIN if fin else 0, struct.pack(">IIH", stream_id, 0, 0) + block)

    def data(self, stream_id: int, data: bytes, fin: bool = False) -> None:
        self.to_server.put_nowait(struct.pack(">II", stream_id, ((FLAG_FIN if fin else 0) << 24) | len(data)) + data)

    def frames(self) -> list[tuple]:
        out, buf = [], self.from_server
        while len(buf) >= 8:
            first, second = struct.unpack_from(">II", buf)
            length = second & 0xFFFFFF
            payload = bytes(buf[8:8 + length])
            del buf[:8 + length]
            if first & 0x80000000:
                out.append(("control", first & 0xFFFF, second >> 24, payload))
            else:
                out.append(("data", first, second >> 24, payload))
        return out


def test_a_session_replies_echoes_pings_and_carries_data():
    async def main():
        client = _Client()

        async def write(data: bytes) -> None:
            client.from_server.extend(data)
        session = SpdySession(client.to_server.get, write)
        runner = asyncio.create_task(session.run())
        client.syn_stream(1, {"streamtype": "stdin"})
        client.syn_stream(3, {"streamtype": "stdout", "port": "80"})
        client.control(PING, 0, struct.pack(">I", 7))
        client.data(1, b"typed", fin=True)
        stdin = await session.new_streams.get()
        stdout = await session.new_streams.get()
        assert (stdin.id, stdin.headers) == (1, {"streamtype": "stdin"})
        assert stdout.headers == {"streamtype": "stdout", "port": "80"}
        assert await stdin.read() == b"typed"
        assert await stdin.read() == b""          # FIN: the client's half is closed
        await stdout.write(b"printed")
        await stdout.close()
        client.control(RST_STREAM, 0, struct.pack(">II", 3, 5))
        client.to_server.put_nowait(b"")          # the connection ends
        await runner
        frames = client.frames()
        replies = [f for f in frames if f[0] == "control" and f[1] == SYN_REPLY]
        assert [struct.unpack_from(">I", r[3])[0] for r in replies] == [1, 3]
        # the reply's header block inflates with the dictionary to an empty block
        assert client.inflate.decompress(replies[0][3][4:]) == b"\x00\x00\x00\x00"
        assert ("control", PING, 0, struct.pack(">I", 7)) in frames
        assert ("data", 3, 0, b"printed") in frames and ("data", 3, FLAG_FIN, b"") in frames
        assert await session.new_streams.get() is None
    asyncio.run(main())


def test_a_corrupt_header_block_ends_the_session_with_goaway():
    async def main():
        client = _Client()

        async def write(data: bytes) -> None:
            client.from_server.extend(data)
        session = SpdySession(client.to_server.get, write)
        client.control(SYN_STREAM, 0, struct.pack(">IIH", 1, 0, 0) + b"not zlib at all")
        await asyncio.wait_for(session.run(), 5)
        assert [f[1] for f in client.frames()] == [7]     # GOAWAY
        assert session.closed
    asyncio.run(main())
