"""The frame codec against hand-written bytes from docs/protocol.md."""

# The golden frames below are hex strings written field by field.
# pylint: disable=implicit-str-concat

import io
import random
import socket
import struct
import threading
import unittest

from switchyard_runtime.wire import protocol
from switchyard_runtime.wire.framereader import FrameReader


def reader(data):
    """Returns the read function of a stream holding data."""
    return io.BytesIO(data).read


def plain(request):
    """Returns a request (props, keys, values, ...) with its Properties as a dict; None as None."""
    if request is None:
        return None
    return (request[0].to_dict(),) + tuple(request[1:])


# request: nProps=1 ("a" = "b"), nContent=1 ("data" = b"hi")
REQUEST = bytes.fromhex("0001" "00000001" "61" "00000001" "62" "0001" "00000004" "64617461" "00000002" "6869")
# response: 200 "OK", nProps=1 ("k" = "v"), nContent=1 ("data" = b"ok")
RESPONSE = bytes.fromhex("00c8" "00000002" "4f4b" "0001" "00000001" "6b" "00000001" "76" "0001"
                         "00000004" "64617461" "00000002" "6f6b")
# streamed response head: 200 "OK", no props, nContent=-1
STREAM_HEAD = bytes.fromhex("00c8" "00000002" "4f4b" "0000" "ffff")
CHUNK_A = bytes.fromhex("01" "00000001" "61")
END = bytes.fromhex("00" "00000000")
END_BOOM = bytes.fromhex("00" "00000004") + b"boom"
# a tracked piece: 200 "OK", props request_tracking_id=7, nContent=-1, one chunk "a"
TRACKED = (bytes.fromhex("00c8" "00000002" "4f4b" "0001" "00000013") + b"request_tracking_id"
           + bytes.fromhex("00000001" "37" "ffff") + CHUNK_A)
# a request and a response with a 40 KB header value (int32 length 0x0000a000)
BIG = "v" * (40 << 10)
BIG_REQUEST = (bytes.fromhex("0001" "00000005") + b"x-big" + bytes.fromhex("0000a000") + BIG.encode()
               + bytes.fromhex("0001" "00000004" "64617461" "00000002") + b"{}")
BIG_RESPONSE = (bytes.fromhex("00c8" "00000002" "4f4b" "0001" "00000005") + b"x-big"
                + bytes.fromhex("0000a000") + BIG.encode() + bytes.fromhex("0000"))


class GoldenTest(unittest.TestCase):
    def test_encode(self):
        cases = [
            ("request", protocol.encode_request({"a": "b"}, [("data", b"hi")]), REQUEST),
            ("response", protocol.encode_response(200, "OK", {"k": "v"}, ["data"], [b"ok"]), RESPONSE),
            ("stream head", protocol.encode_stream_head(200, "OK", {}), STREAM_HEAD),
            ("chunk", protocol.encode_chunk(b"a"), CHUNK_A),
            ("end", protocol.encode_end(), END),
            ("error end", protocol.encode_end("boom"), END_BOOM),
            ("tracked piece", protocol.encode_stream_head(200, "OK", {"request_tracking_id": "7"})
             + protocol.encode_chunk(b"a"), TRACKED),
            ("null string", protocol.encode_string(None), b"\xff\xff\xff\xff"),
            ("utf-8 string", protocol.encode_string("é"), b"\x00\x00\x00\x02\xc3\xa9"),
            ("40 KB header request", protocol.encode_request({"x-big": BIG}, [("data", b"{}")]), BIG_REQUEST),
            ("40 KB header response", protocol.encode_response(200, "OK", {"x-big": BIG}, [], []), BIG_RESPONSE),
        ]
        for name, got, want in cases:
            with self.subTest(name):
                self.assertEqual(got.hex(), want.hex())

    def test_read_request(self):
        for name, read in [("stream", lambda d: plain(protocol.read_request(reader(d)))),
                           ("in place", lambda d: plain(protocol.parse_request(d)[:3]))]:
            with self.subTest(name):
                self.assertEqual(read(REQUEST), ({"a": "b"}, ["data"], [b"hi"]))
                self.assertEqual(read(BIG_REQUEST), ({"x-big": BIG}, ["data"], [b"{}"]))

    def test_read_response(self):
        resp = protocol.read_response(reader(RESPONSE))
        self.assertEqual((resp.code, resp.message, resp.props, resp.keys, resp.values),
                         (200, "OK", {"k": "v"}, ["data"], [b"ok"]))
        self.assertFalse(resp.streamed)

    def test_read_stream(self):
        cases = [("clean end", STREAM_HEAD + CHUNK_A + CHUNK_A + END, [b"a", b"a"], ""),
                 ("error end", STREAM_HEAD + CHUNK_A + END_BOOM, [b"a"], "boom")]
        for name, data, chunks, error in cases:
            with self.subTest(name):
                resp = protocol.read_response(reader(data))
                self.assertTrue(resp.streamed)
                self.assertEqual((resp.chunks, resp.error), (chunks, error))

    def test_read_tracked_piece(self):
        read = reader(TRACKED + TRACKED)
        for _ in range(2):
            resp = protocol.read_response(read, max_chunks=1)
            self.assertEqual(resp.props, {"request_tracking_id": "7"})
            self.assertEqual((resp.chunks, resp.error), ([b"a"], None))

    def test_null_strings(self):
        data = protocol.encode_request({"k": None, None: "v"}, [(None, b"x")])
        want = ({"k": None, None: "v"}, [None], [b"x"])
        self.assertEqual(plain(protocol.read_request(reader(data))), want)
        self.assertEqual(plain(protocol.parse_request(data)[:3]), want)

    def test_end_of_stream(self):
        self.assertIsNone(protocol.read_request(reader(b"")))
        self.assertIsNone(protocol.read_response(reader(b"")))


class ErrorTest(unittest.TestCase):
    def test_bad_requests(self):
        cases = [
            ("negative prop count", b"\xff\xfe"),
            ("bad string length", b"\x00\x01\xff\xff\xff\xfe"),
            ("string over the cap", b"\x00\x01\x00\x00\x01\x01"),
            ("negative item length", b"\x00\x00\x00\x01\x00\x00\x00\x00\xff\xff\xff\xfe"),
            ("item over the cap", b"\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x01\x01"),
        ]
        for name, data in cases:
            with self.subTest(name):
                with self.assertRaises(protocol.ProtocolError):
                    protocol.read_request(reader(data), max_item=256)
                with self.assertRaises(protocol.ProtocolError):
                    protocol.parse_request(data, 0, 256)

    def test_truncated(self):
        for cut in range(1, len(REQUEST)):
            with self.subTest(cut=cut):
                self.assertIsNone(protocol.parse_request(REQUEST[:cut]))
                with self.assertRaises(protocol.ProtocolError):
                    protocol.read_request(reader(REQUEST[:cut]))

    def test_encode_limits(self):
        with self.assertRaises(protocol.EncodeError):
            protocol.encode_response(70000, "OK", {}, [], [])
        self.assertEqual(len(protocol.encode_string("x" * 40000)), 4 + 40000)
        long_message = protocol.encode_message("é" * 20000, limit=32767)
        self.assertLessEqual(len(long_message), 4 + 32767)
        self.assertEqual(struct.unpack(">i", long_message[:4])[0], len(long_message) - 4)
        long_message[4:].decode("utf-8")  # cut at a character boundary

    def test_content_values(self):
        cases = [("bytes", b"ok"), ("bytearray", bytearray(b"ok")), ("memoryview", memoryview(b"ok")), ("str", "ok")]
        for name, value in cases:
            with self.subTest(name):
                self.assertEqual(protocol.encode_response(200, "OK", {"k": "v"}, ["data"], [value]), RESPONSE)
        with self.assertRaises(protocol.EncodeError):
            protocol.encode_response(200, "OK", {}, ["data"], [{"a": 1}])
        got = protocol.encode_response(200, "OK", {}, ["data"], [{"a": 1}], to_bytes=lambda v: b"json")
        self.assertEqual(protocol.read_response(reader(got)).values, [b"json"])

    def test_status_code_as_text(self):
        data = protocol.encode_response("201", "Created", {}, [], [])
        self.assertEqual(protocol.read_response(reader(data)).code, 201)

    def test_random_bytes(self):
        """Random and mutated frames either parse the same both ways or fail with ProtocolError."""
        rng = random.Random(7)
        for i in range(3000):
            data = _mutate(rng, REQUEST) if i % 2 else bytes(rng.randrange(256) for _ in range(rng.randrange(40)))
            with self.subTest(data=data.hex()):
                _check_both_parsers(self, data)


def _mutate(rng, data):
    data = bytearray(data)
    for _ in range(rng.randrange(1, 4)):
        data[rng.randrange(len(data))] = rng.randrange(256)
    return bytes(data[:rng.randrange(len(data) + 1)])


def _check_both_parsers(test, data):
    try:
        slow = protocol.read_request(reader(data), max_item=1 << 16)
    except protocol.ProtocolError:
        slow = "error"
    try:
        fast = protocol.parse_request(data, 0, 1 << 16)
    except protocol.ProtocolError:
        fast = "error"
    if fast is None:  # incomplete: the stream reader hits the end inside the frame
        test.assertIn(slow, ("error", None))
        return
    if fast == "error":
        test.assertEqual(slow, "error")
        return
    test.assertEqual(plain(slow), plain(fast[:3]))


class FrameReaderTest(unittest.TestCase):
    def _pair(self):
        a, b = socket.socketpair()
        self.addCleanup(a.close)
        self.addCleanup(b.close)
        return a, b

    def _write(self, sock, data, piece):
        def run():
            for i in range(0, len(data), piece):
                sock.sendall(data[i:i + piece])
            sock.shutdown(socket.SHUT_WR)
        t = threading.Thread(target=run)
        t.start()
        self.addCleanup(t.join)

    def test_split_and_pipelined(self):
        frames = [({"k%d" % i: "v" * i}, [("data", bytes([i]) * i)]) for i in range(40)]
        data = b"".join(protocol.encode_request(p, items) for p, items in frames)
        for piece in (1, 7, 64, len(data)):
            with self.subTest(piece=piece):
                a, b = self._pair()
                self._write(a, data, piece)
                fr = FrameReader(b, size=128)
                for props, items in frames:
                    self.assertEqual(plain(fr.read_request()), (props, [k for k, _ in items], [v for _, v in items]))
                self.assertIsNone(fr.read_request())

    def test_frame_larger_than_buffer(self):
        big = bytes(range(256)) * 4000  # about 1 MB, over BIG_READ pieces too
        data = (protocol.encode_request({"a": "b"}, [("data", big), ("q", b"1")])
                + protocol.encode_request({"next": "1"}))
        a, b = self._pair()
        self._write(a, data, 65536)
        fr = FrameReader(b, size=4096)
        self.assertEqual(plain(fr.read_request()), ({"a": "b"}, ["data", "q"], [big, b"1"]))
        self.assertEqual(plain(fr.read_request()), ({"next": "1"}, [], []))
        self.assertIsNone(fr.read_request())

    def test_closed_inside_a_frame(self):
        for size in (4096, 8):
            with self.subTest(size=size):
                a, b = self._pair()
                self._write(a, REQUEST[:-1], 3)
                with self.assertRaises(protocol.ProtocolError):
                    FrameReader(b, size=size).read_request()

    def test_cap(self):
        a, b = self._pair()
        self._write(a, protocol.encode_request({}, [("data", b"x" * 100)]), 1000)
        with self.assertRaises(protocol.ProtocolError):
            FrameReader(b, max_item=99).read_request()


if __name__ == "__main__":
    unittest.main()
