"""Tracked (rolling-batch) requests: concurrency, interleaving, cancel."""

import unittest

from tests.helpers import start_worker

TIMEOUT = 60  # a bound on waits so a broken runtime fails instead of hanging


class TrackedTest(unittest.TestCase):
    def setUp(self):
        self.worker = start_worker(self)
        self.assertEqual(self.worker.init(max_rolling_batch_size="4").code, 200)
        self.module = self.worker.server.handler.module
        self.addCleanup(self._release_gates)

    def _release_gates(self):
        for items in list(self.module.GATES.values()):
            items.put(None)

    def start(self, tid, handler, body=b""):
        """Sends a tracked request to handler."""
        self.worker.send({"request_tracking_id": tid, "handler": handler}, [("data", body)])

    def piece(self):
        """Reads one tracked frame."""
        return self.worker.read(max_chunks=1)

    def assert_piece(self, resp, tid, chunk=None, end=None):
        """Checks a tracked frame of tid: its one chunk, or its end text."""
        self.assertTrue(resp.streamed)
        self.assertEqual(resp.props["request_tracking_id"], tid)
        if chunk is not None:
            self.assertEqual((resp.chunks, resp.error), ([chunk], None))
        else:
            self.assertEqual((resp.chunks, resp.error), ([], end))

    def test_whole_answer(self):
        self.start("w1", "whole", b"abc")
        resp = self.worker.read()
        self.assertFalse(resp.streamed)
        self.assertEqual((resp.code, resp.props, resp.values), (200, {"request_tracking_id": "w1"}, [b"whole:abc"]))

    def test_two_streams_interleave(self):
        a, _ = self.module.gate("A")
        b, _ = self.module.gate("B")
        self.start("A", "gated")
        self.start("B", "gated")
        steps = [(a, "a1", "A"), (b, "b1", "B"), (a, "a2", "A"), (b, "b2", "B")]
        for i, (gate, item, tid) in enumerate(steps):
            gate.put(item)
            resp = self.piece()
            self.assert_piece(resp, tid, item.encode())
            if i < 2:  # the first frame of each request carries the Output's properties
                self.assertEqual(resp.props.get("x-kind"), "gated")
            else:
                self.assertEqual(resp.props, {"request_tracking_id": tid})
        b.put(None)
        self.assert_piece(self.piece(), "B", end="")
        a.put(RuntimeError("a broke"))
        self.assert_piece(self.piece(), "A", end="a broke")

    def test_cancel(self):
        items, closed = self.module.gate("C")
        self.start("C", "gated")
        items.put("c1")
        self.assert_piece(self.piece(), "C", b"c1")
        self.worker.send({"request_tracking_id": "C", "cancel": "true"})
        resp = self.piece()
        self.assert_piece(resp, "C", end="canceled")
        self.assertEqual(resp.message, "canceled")
        items.put("c2")  # the generator wakes up, sees the cancel and is closed
        self.assertTrue(closed.wait(TIMEOUT))
        self.worker.send({"request_tracking_id": "unknown", "cancel": "true"})
        self.start("D", "whole", b"after")
        resp = self.worker.read()
        self.assertEqual((resp.props["request_tracking_id"], resp.values), ("D", [b"whole:after"]))

    def test_cancel_async(self):
        _, closed = self.module.gate("E")
        self.start("E", "async_hang")
        self.assert_piece(self.piece(), "E", b"started")
        self.worker.send({"request_tracking_id": "E", "cancel": "true"})
        self.assert_piece(self.piece(), "E", end="canceled")
        self.assertTrue(closed.wait(TIMEOUT))

    def test_async_handlers(self):
        self.start("F", "coroutine", b"q")
        resp = self.worker.read()
        self.assertEqual((resp.props, resp.values), ({"request_tracking_id": "F"}, [b"async:q"]))
        cases = [("agen", b"x", b"y"), ("sync_with_async_stream", b"p1", b"p2"),
                 ("async_with_sync_stream", b"s1", b"s2")]
        for handler, first, second in cases:
            with self.subTest(handler):
                self.start(handler, handler)
                self.assert_piece(self.piece(), handler, first)
                self.assert_piece(self.piece(), handler, second)
                self.assert_piece(self.piece(), handler, end="")

    def test_errors(self):
        cases = [("fail", 424, "bad input: z"), ("oom", 507, "MemoryError"), ("nothing", 204, "No content"),
                 ("no_such_function", 424, None)]
        for handler, code, message in cases:
            with self.subTest(handler):
                self.start("H-" + handler, handler, b"z")
                resp = self.worker.read()
                self.assertEqual((resp.code, resp.props["request_tracking_id"]), (code, "H-" + handler))
                if message is not None:
                    self.assertEqual(resp.message, message)

    def test_untracked_between_tracked(self):
        items, _ = self.module.gate("I")
        self.start("I", "gated")
        resp = self.worker.call({"handler": "handle"}, [("data", b"inline")])
        self.assertEqual(resp.values, [b"inline"])
        items.put("i1")
        self.assert_piece(self.piece(), "I", b"i1")

    def test_close_with_requests_in_flight(self):
        items, closed = self.module.gate("J")
        self.start("J", "gated")
        self.start("K", "whole", b"k")
        self.assertEqual(self.worker.read().values, [b"whole:k"])
        self.assertEqual(self.worker.server.active(), 1)
        self.worker.reader.close()
        self.worker.sock.close()
        self.worker.thread.join()
        self.assertEqual(self.worker.status, 0)
        self.assertTrue(self.worker.server.busy())  # J's generator still blocks a pool thread
        items.put("late")  # nothing is sent any more; the generator is closed
        self.assertTrue(closed.wait(TIMEOUT))
        self.worker.server.join()
        self.assertFalse(self.worker.server.busy())


if __name__ == "__main__":
    unittest.main()
