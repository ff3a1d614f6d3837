#!/usr/bin/env python3
"""switchyard's Python worker: the engine the front-end starts per model worker.

    python3 switchyard_engine.py --sock-type unix --sock-name PATH --model-dir DIR \
        --entry-point EP --device-id N --cluster-size 1 \
        --recommended-entry-point REP --log-level LEVEL --async-mode|--no-async-mode

It takes DJL Serving's engine command line and speaks its wire protocol, so
handlers written for DJL (``from djl_python import Input, Output``) run as
they are.
"""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

import switchyard_runtime  # noqa: E402

switchyard_runtime.ensure_djl_python()

from switchyard_runtime.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
