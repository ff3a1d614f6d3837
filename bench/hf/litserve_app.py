"""The LitServe peer: a LitAPI with LitServe's dynamic batching, max_batch_size 8.

usage: litserve_app.py MODEL_FOLDER PORT [--batch-timeout S]

POST /predictions/hf with {"inputs": "<text>"} answers the pipeline's
result for the text as a JSON list, [{"label": ..., "score": ...}], as
switchyard's built-in handler does; GET /health answers 200 once the
worker is ready. LitServe runs one API server process (uvicorn) and one
inference worker process; the worker collects up to 8 requests and calls
the pipeline once per batch, as switchyard's handler does.

batch_timeout is how long LitServe's worker waits to fill a batch once it
starts collecting: 0.005 s by default, switchyard's max_batch_delay of the
benchmark's model. LitServe has no adaptive batching, so a lone request
waits it out. 0 is no choice here: with a zero timeout LitServe's batch
loop polls its queue without blocking and keeps a core busy while idle.
"""

import argparse

import litserve as ls
from fastapi import HTTPException

from common import classify, load_pipeline


# has_active_requests and has_capacity are for LitServe's continuous-batching
# loops only; the batched loop this API runs in never calls them.
class Classifier(ls.LitAPI):  # pylint: disable=abstract-method
    """Classifier runs the pipeline once per batch of texts."""

    def __init__(self, model, **kwargs):
        super().__init__(**kwargs)
        self.model = model
        self.pipe = None

    def setup(self, device):
        self.pipe = load_pipeline(self.model)

    def decode_request(self, request, **kwargs):
        text = request.get("inputs")
        if not isinstance(text, str):
            raise HTTPException(status_code=400, detail="inputs must be a string")
        return text

    def batch(self, inputs):
        return list(inputs)

    def predict(self, x, **kwargs):
        return classify(self.pipe, x)

    def unbatch(self, output):
        return [[result] for result in output]

    def encode_response(self, output, **kwargs):
        return output


def main():
    """Loads the model in LitServe's worker and serves it until interrupted."""
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("port", type=int)
    ap.add_argument("--batch-timeout", type=float, default=0.005)
    args = ap.parse_args()
    # LitServe 0.2.19 mounts its MCP server when the package mcp is installed
    # (strands-agents brings it here) but imports its classes only when
    # fastmcp is: the server would fail to start. No MCP, then.
    ls.server._MCP_AVAILABLE = False  # pylint: disable=protected-access
    api = Classifier(args.model, max_batch_size=8, batch_timeout=args.batch_timeout, api_path="/predictions/hf")
    server = ls.LitServer(api, accelerator="cpu", devices=1, workers_per_device=1, healthcheck_path="/health")
    server.run(host="127.0.0.1", port=args.port, num_api_servers=1, log_level="warning", generate_client_file=False)


if __name__ == "__main__":
    main()
