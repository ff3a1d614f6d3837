"""The single writer of a connection: one lock, so frames are never split."""

import threading


class Writer:
    """Writer sends whole frames on a socket under one lock.

    Hold ``lock`` and call ``send_locked`` to send several frames back to
    back (an untracked stream) without other frames in between.
    """

    def __init__(self, sock):
        self.lock = threading.Lock()
        self._sendall = sock.sendall

    def send(self, frame):
        """Sends one frame."""
        with self.lock:
            self._sendall(frame)

    def send_locked(self, frame):
        """Sends one frame; the caller holds lock."""
        self._sendall(frame)
