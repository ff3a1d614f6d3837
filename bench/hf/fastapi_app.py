"""The FastAPI peer: one uvicorn worker process that calls the pipeline once per request.

usage: fastapi_app.py MODEL_FOLDER PORT [--sync]

POST /predictions/hf with {"inputs": "<text>"} answers the pipeline's
result for the text as a JSON list, [{"label": ..., "score": ...}], as
switchyard's built-in handler does; GET /ping answers 200 once the model
is loaded. uvicorn runs with uvloop and httptools (its "auto" choices when
they are installed) and without an access log.

The endpoint is an async function by default: the pipeline runs on the
event loop, one request at a time, which is what a CPU-bound model wants
on a small machine. --sync declares it a plain function instead, which
FastAPI runs on its thread pool: up to 40 pipeline calls at once, each
with its own torch threads.
"""

import argparse

import fastapi
import uvicorn

from common import classify, load_pipeline


def make_app(pipe, sync):
    """Returns the FastAPI app that serves pipe."""
    app = fastapi.FastAPI(openapi_url=None, docs_url=None, redoc_url=None)

    @app.get("/ping")
    async def ping():
        return {"status": "Healthy"}

    if sync:
        @app.post("/predictions/hf")
        def predict_sync(request: dict = fastapi.Body(...)):
            return classify(pipe, [text_of(request)])
    else:
        @app.post("/predictions/hf")
        async def predict(request: dict = fastapi.Body(...)):
            return classify(pipe, [text_of(request)])

    return app


def text_of(request):
    """Returns the text of a request body; 400 when it has none."""
    text = request.get("inputs")
    if not isinstance(text, str):
        raise fastapi.HTTPException(status_code=400, detail="inputs must be a string")
    return text


def main():
    """Loads the model and serves it until interrupted."""
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("port", type=int)
    ap.add_argument("--sync", action="store_true")
    args = ap.parse_args()
    app = make_app(load_pipeline(args.model), args.sync)
    uvicorn.run(app, host="127.0.0.1", port=args.port, workers=1, access_log=False, log_level="warning")


if __name__ == "__main__":
    main()
