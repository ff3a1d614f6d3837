"""A model for switchyard's rig (deploy/rig): a stand-in for a real model
whose load takes time and whose answer says where it ran.

Loading (the initialization call) takes RIG_LOAD_SECONDS (1 s by default),
each request RIG_WORK_SECONDS (5 ms). The answer is JSON naming the replica
(RIG_REPLICA, set by rig.sh) and the model (its folder's name). Only the
standard library is needed.
"""

import json
import os
import time

from djl_python import Input, Output

LOAD_SECONDS = float(os.environ.get("RIG_LOAD_SECONDS", "1"))
WORK_SECONDS = float(os.environ.get("RIG_WORK_SECONDS", "0.005"))
ANSWER = json.dumps({
    "replica": os.environ.get("RIG_REPLICA", ""),
    "model": os.path.basename(os.getcwd()),
}).encode()


def handle(inputs: Input):
    """Loads slowly on the initialization call, then answers each request."""
    if inputs.is_empty():
        time.sleep(LOAD_SECONDS)
        return None
    time.sleep(WORK_SECONDS)
    outputs = Output()
    outputs.add(ANSWER)
    outputs.add_property("Content-Type", "application/json")
    return outputs
