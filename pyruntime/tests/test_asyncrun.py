"""The asyncio loop thread."""

# These tests look inside the objects they check.
# pylint: disable=protected-access

import asyncio
import threading
import unittest

from switchyard_runtime.asyncrun import AsyncRunner

TIMEOUT = 60


class AsyncRunnerTest(unittest.TestCase):
    def test_run_and_iterate(self):
        runner = AsyncRunner()
        self.addCleanup(runner.stop)

        async def double(x):
            await asyncio.sleep(0)
            return 2 * x

        async def count():
            for i in range(3):
                yield i

        self.assertEqual(runner.run(double(21)), 42)
        self.assertEqual(list(runner.iterate(count())), [0, 1, 2])
        self.assertEqual(runner.submit(double(1)).result(TIMEOUT), 2)

    def test_stop_cancels_tasks(self):
        runner = AsyncRunner()
        canceled = threading.Event()

        async def forever():
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                canceled.set()
                raise

        future = runner.submit(forever())
        thread = runner._thread
        self.assertTrue(runner.stop())
        self.assertTrue(canceled.is_set())
        self.assertTrue(future.cancelled())
        self.assertFalse(thread.is_alive())
        self.assertTrue(runner.stop())  # a second stop does nothing

    def test_stop_gives_up_on_a_blocked_loop(self):
        runner = AsyncRunner()
        release = threading.Event()
        started = threading.Event()

        async def blocks_the_loop():
            started.set()
            release.wait()  # a sync wait: nothing else runs on the loop meanwhile

        runner.submit(blocks_the_loop())
        self.assertTrue(started.wait(TIMEOUT))
        thread = runner._thread
        self.assertFalse(runner.stop(timeout=0.01))
        release.set()
        thread.join(TIMEOUT)
        self.assertFalse(thread.is_alive())


if __name__ == "__main__":
    unittest.main()
