"""example_shared.py calls the example agent's shared client functions against switchyard.

    AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME=<base url> python example_shared.py

* invoke_endpoint_chat on "slm" (langid): the language of a German text;
* invoke_endpoint_generation on "gen" (an echo of inputs as generated_text);
* stream_endpoint_chat on "toolcaller" (which echoes the user's text, one
  word a part).

Prints {"chat", "generation", "stream": [pieces]} or the error of each as
{"error"}.
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "agent"))

import shared  # noqa: E402  pylint: disable=wrong-import-position,import-error

GERMAN = "Guten Morgen, wie geht es dir heute?"


def outcome(fn):
    """Returns fn() or {"error"}."""
    try:
        return fn()
    except Exception as exc:  # pylint: disable=broad-exception-caught
        return {"error": "%s: %s" % (type(exc).__name__, exc)}


def main():
    """Prints the three calls' outcomes."""
    print(json.dumps({
        "chat": outcome(lambda: shared.invoke_endpoint_chat("slm", "Name the language.", GERMAN)),
        "generation": outcome(lambda: shared.invoke_endpoint_generation("gen", "Hallo Welt", max_new_tokens=32)),
        "stream": outcome(lambda: list(shared.stream_endpoint_chat("toolcaller", "Repeat.", GERMAN, max_tokens=64))),
    }))


if __name__ == "__main__":
    main()
