"""One asyncio event loop on its own thread, for handlers written with async."""

import asyncio
import threading


class AsyncRunner:
    """AsyncRunner owns an event loop thread, started on first use.

    stop() ends the loop and waits for its thread.
    """

    def __init__(self, name="switchyard-asyncio"):
        self._name = name
        self._lock = threading.Lock()
        self._loop = None
        self._thread = None

    def loop(self):
        """Returns the running loop, starting its thread the first time."""
        with self._lock:
            if self._loop is None:
                self._start()
            return self._loop

    def _start(self):
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run():
            asyncio.set_event_loop(loop)
            loop.call_soon(ready.set)
            try:
                loop.run_forever()
            finally:
                loop.close()

        self._thread = threading.Thread(target=run, name=self._name, daemon=True)
        self._thread.start()
        ready.wait()
        self._loop = loop

    def submit(self, coro):
        """Schedules coro on the loop; returns a concurrent.futures.Future."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop())

    def run(self, awaitable):
        """Runs an awaitable on the loop and waits for its result (not from the loop thread)."""
        return self.submit(_await(awaitable)).result()

    def iterate(self, aiterable):
        """Yields the items of an async iterable, driven on the loop, from another thread."""
        it = aiterable.__aiter__()
        try:
            while True:
                try:
                    yield self.run(it.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            if hasattr(it, "aclose"):
                self.run(it.aclose())

    def stop(self, timeout=None):
        """Cancels the loop's tasks, then stops the loop and waits for its thread.

        Returns False when that takes longer than timeout seconds (a task
        blocks the loop or ignores cancellation); the loop then stops when it
        can, and its daemon thread is left to end with the process.
        """
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None:
            return True
        cancel = asyncio.run_coroutine_threadsafe(_cancel_tasks(), loop)
        cancel.add_done_callback(lambda _: loop.call_soon_threadsafe(loop.stop))
        thread.join(timeout)
        return not thread.is_alive()


async def _await(awaitable):
    return await awaitable


async def _cancel_tasks():
    """Cancels every other task on the running loop and waits for them to end."""
    current = asyncio.current_task()
    tasks = [task for task in asyncio.all_tasks() if task is not current]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await asyncio.get_running_loop().shutdown_asyncgens()
