#!/usr/bin/env python3
"""Micro-benchmark: the worker's cost to take a request frame to a handler's Input.

It times, in µs per request, what the runtime does with every frame before
the handler runs: parse the frame (protocol.parse_request), add device_id and
model_dir, build the Input, read the handler name and the tracking id; then
what a handler reads: nothing more, the batch size (the no-op model), one
header (get_property("Content-Type") as DJL's handlers spell it), every
property (the dict) or the batch split into one Input per request
(get_batches(), as the generative handler and DJL's batch handlers do).
Frames are what the front-end sends for a request from the load generator
(host, content-type, content-length, user-agent, request_id, handler): one
alone, and a dynamic batch of 8.

    python3 bench/parse_props.py [--runtime DIR] [--number N]

--runtime imports switchyard_runtime from another tree (an older version, to
compare: one whose parse_request returns a dict is driven the way its
server drove it).
"""

import argparse
import sys
import timeit

HEADERS = {"host": "127.0.0.1:41234", "content-type": "application/json", "content-length": "18",
           "user-agent": "fasthttp", "request_id": "7f3c2a9e-1d2b-4c5e-9a8b-0c1d2e3f4a5b"}
BODY = b'{"inputs": "hello"}'
EXTRA = {"device_id": "-1", "model_dir": "/models/noop"}


def frames(protocol):
    """Returns (name, frame, requests per frame): a lone request and a batch of 8."""
    one = dict(HEADERS, handler="handle")
    batch = {"batch_size": "8", "handler": "handle"}
    items = []
    for i in range(8):
        for key, value in HEADERS.items():
            batch["batch_%03d.%s" % (i, key)] = value
        items.append(("batch_%03d.data" % i, BODY))
    return [("b1", protocol.encode_request(one, [("data", BODY)]), 1),
            ("b8", protocol.encode_request(batch, items), 8)]


def runtime_steps(protocol, input_class, pair_list):
    """Returns take(frame) -> Input, doing what the runtime's server loop does per frame."""
    parse = protocol.parse_request

    def take(frame):
        props, keys, values, _ = parse(frame, 0)
        if type(props) is dict:  # the eager runtime: the server set them on the dict
            props["device_id"] = EXTRA["device_id"]
            props["model_dir"] = EXTRA["model_dir"]
        else:
            props.extra = EXTRA
        inputs = input_class(props, pair_list(keys, values))
        props.get("request_tracking_id")
        return inputs
    return take


READS = {
    "runtime only": lambda inputs: None,
    "+ batch size": lambda inputs: inputs.is_batch() and inputs.get_batch_size(),
    "+ one header": lambda inputs: inputs.get_property("Content-Type"),
    "+ every property": lambda inputs: inputs.get_properties(),
    "+ get_batches": lambda inputs: inputs.get_batches(),
}


def main():
    """Prints one line per frame and handler read: µs per frame and per request."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", help="a folder holding switchyard_runtime (default: this tree)")
    parser.add_argument("--number", type=int, default=20000, help="frames per timing (of 5; the best is kept)")
    args = parser.parse_args()
    sys.path.insert(0, args.runtime or sys.path[0] + "/..")
    # pylint: disable=import-outside-toplevel  # which tree to import is a command-line choice
    from switchyard_runtime.djl.inputs import Input
    from switchyard_runtime.djl.pairlist import PairList
    from switchyard_runtime.wire import protocol

    take = runtime_steps(protocol, Input, PairList)
    for name, frame, per in frames(protocol):
        for read_name, read in READS.items():
            seconds = min(timeit.repeat(lambda f=frame, r=read: r(take(f)), number=args.number, repeat=5))
            each = seconds / args.number * 1e6
            print("%-3s %-17s %7.2f µs/frame %6.2f µs/request" % (name, read_name, each, each / per))


if __name__ == "__main__":
    main()
