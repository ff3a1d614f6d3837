"""Request schemas of generative models: chat, generation and completion.

parse() checks a request body and returns a GenRequest, or raises
RequestError (answered with status 400) naming the field that is wrong.

* chat: {"messages": [{"role", "content"}, ...], "max_tokens", "temperature",
  "top_p", "stop", "stream", "seed"}; a system message may only come first.
  max_new_tokens is ignored here, as chat-completions servers ignore it, and
  the answer carries the property x-switchyard-warning saying so.
* generation: {"inputs": "<prompt>", "parameters": {"max_new_tokens",
  "temperature", "top_p", "do_sample", "stop", "seed", "details"}, "stream"}.
* completion (OpenAI's CompletionRequest): {"prompt": "<text>", "max_tokens",
  "temperature", "top_p", "stop", "stream", "seed"}.

Unknown fields are ignored; null counts as absent. A model whose rolling
batch is vllm only takes chat and completion requests, as vLLM's servers do.
"""

import json
import math

DEFAULT_MAX_TOKENS = 256
DEFAULT_TEMPERATURE = 1.0
ROLES = ("system", "user", "assistant")
WARNING = "x-switchyard-warning"
MAX_NEW_TOKENS_IGNORED = ("max_new_tokens is ignored in a chat request; "
                          "max_tokens sets the limit")
RAW_STRING_REFUSED = ("could not find a handler for this request: a model with rolling_batch=vllm "
                      "expects a ChatCompletionRequest or CompletionRequest (send messages or prompt), "
                      "not a rendered string in inputs")

CHAT, GENERATION, COMPLETION = "chat", "generation", "completion"


class RequestError(ValueError):
    """RequestError is a request that does not fit the schema; it answers 400."""

    code = 400


class GenRequest(object):
    """GenRequest is a checked generative request with its sampling settings.

    kind is chat, generation or completion; messages (chat) or prompt (the
    others) holds the input. temperature 0 means greedy decoding.
    """

    def __init__(self, kind, max_new_tokens, temperature=DEFAULT_TEMPERATURE, top_p=1.0,
                 stop=None, seed=None, stream=False, details=False):
        self.kind = kind
        self.messages = None
        self.prompt = None
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.top_p = top_p
        self.stop = list(stop or [])
        self.seed = seed
        self.stream = stream
        self.details = details
        self.warnings = []

    def __repr__(self):
        return "GenRequest(kind=%r, max_new_tokens=%r, temperature=%r, stream=%r)" % (
            self.kind, self.max_new_tokens, self.temperature, self.stream)


def default_max_tokens(props):
    """Returns the model's default token limit: option max_new_tokens or max_tokens, else 256."""
    for key in ("max_new_tokens", "max_tokens"):
        raw = (props or {}).get(key)
        if raw not in (None, ""):
            try:
                value = int(raw)
            except ValueError:
                raise ValueError("option.%s=%r is not a whole number" % (key, raw))
            if value < 1:
                raise ValueError("option.%s=%r must be at least 1" % (key, raw))
            return value
    return DEFAULT_MAX_TOKENS


def parse_input(inputs, rolling_batch=None, default_max=DEFAULT_MAX_TOKENS):
    """Parses the body of a runtime Input (its "data" item); see parse."""
    return parse(inputs.get_as_bytes(), rolling_batch, default_max)


def parse(body, rolling_batch=None, default_max=DEFAULT_MAX_TOKENS):
    """Returns the GenRequest for a JSON body (bytes, str or an already decoded dict)."""
    obj = decode_body(body)
    if _has(obj, "messages"):
        return _chat(obj, default_max)
    if _has(obj, "inputs"):
        if rolling_batch == "vllm":
            raise RequestError(RAW_STRING_REFUSED)
        return _generation(obj, default_max)
    if _has(obj, "prompt"):
        return _completion(obj, default_max)
    raise RequestError("messages is required (a chat request), or inputs (a generation request)")


def decode_body(body):
    """Returns the JSON object in body; raises RequestError when it is not one."""
    if isinstance(body, dict):
        return body
    if body is None or len(body) == 0:
        raise RequestError("the request body is empty; want a JSON object")
    try:
        obj = json.loads(body if isinstance(body, str) else bytes(body).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise RequestError("the request body is not valid JSON: %s" % exc)
    if not isinstance(obj, dict):
        raise RequestError("the request body must be a JSON object, not %s" % _kind(obj))
    return obj


# --- the three schemas ---------------------------------------------------------


def _chat(obj, default_max):
    req = GenRequest(CHAT, _limit(obj, default_max), **_sampling(obj, ""))
    req.messages = messages(obj["messages"])
    req.stream = _bool(obj, "stream", "", False)
    if _has(obj, "max_new_tokens"):
        req.warnings.append(MAX_NEW_TOKENS_IGNORED)
    return req


def _limit(obj, default_max):
    """Returns max_tokens, or OpenAI's newer max_completion_tokens, or the default."""
    for key in ("max_tokens", "max_completion_tokens"):
        if _has(obj, key):
            return _positive_int(obj, key, "")
    return default_max


def _generation(obj, default_max):
    prompt = _string(obj, "inputs", "")
    params = obj.get("parameters")
    if params is None:
        params = {}
    elif not isinstance(params, dict):
        raise RequestError("parameters must be an object, not %s" % _kind(params))
    limit = _positive_int(params, "max_new_tokens", "parameters.") if _has(params, "max_new_tokens") else default_max
    sampling = _sampling(params, "parameters.")
    if _bool(params, "do_sample", "parameters.", None) is False:
        sampling["temperature"] = 0.0
    req = GenRequest(GENERATION, limit, **sampling)
    req.prompt = prompt
    req.stream = _bool(obj, "stream", "", False)
    req.details = _bool(params, "details", "parameters.", False)
    return req


def _completion(obj, default_max):
    req = GenRequest(COMPLETION, _limit(obj, default_max), **_sampling(obj, ""))
    req.prompt = _string(obj, "prompt", "")
    req.stream = _bool(obj, "stream", "", False)
    return req


def messages(value):
    """Checks a chat messages list and returns it as plain {role, content} dicts."""
    if not isinstance(value, list):
        raise RequestError("messages must be a list, not %s" % _kind(value))
    if not value:
        raise RequestError("messages must not be empty")
    return [_message(i, m) for i, m in enumerate(value)]


def _message(i, m):
    where = "messages[%d]" % i
    if not isinstance(m, dict):
        raise RequestError("%s must be an object with role and content, not %s" % (where, _kind(m)))
    role = _string(m, "role", where + ".")
    if role not in ROLES:
        raise RequestError("%s.role must be one of %s, not %r" % (where, "/".join(ROLES), role))
    if role == "system" and i > 0:
        raise RequestError("%s.role: a system message may only come first" % where)
    return {"role": role, "content": _string(m, "content", where + ".")}


def _sampling(obj, prefix):
    """Returns the sampling keyword arguments of GenRequest found in obj."""
    out = {}
    if _has(obj, "temperature"):
        out["temperature"] = _number(obj, "temperature", prefix, lambda v: v >= 0, "a number >= 0")
    if _has(obj, "top_p"):
        out["top_p"] = _number(obj, "top_p", prefix, lambda v: 0 < v <= 1, "a number in (0, 1]")
    if _has(obj, "stop"):
        out["stop"] = _stop(obj["stop"], prefix + "stop")
    if _has(obj, "seed"):
        out["seed"] = _int(obj, "seed", prefix)
    return out


def _stop(value, name):
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise RequestError("%s[%d] must be a string, not %s" % (name, i, _kind(item)))
        return list(value)
    raise RequestError("%s must be a string or a list of strings, not %s" % (name, _kind(value)))


# --- field checks --------------------------------------------------------------


def _has(obj, key):
    return obj.get(key) is not None


def _string(obj, key, prefix):
    value = obj.get(key)
    if value is None:
        raise RequestError("%s%s is required" % (prefix, key))
    if not isinstance(value, str):
        raise RequestError("%s%s must be a string, not %s" % (prefix, key, _kind(value)))
    return value


def _bool(obj, key, prefix, default):
    value = obj.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise RequestError("%s%s must be true or false, not %s" % (prefix, key, _kind(value)))
    return value


def _int(obj, key, prefix):
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError("%s%s must be an integer, not %s" % (prefix, key, _kind(value)))
    return value


def _positive_int(obj, key, prefix):
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RequestError("%s%s must be a positive integer, not %s" % (prefix, key, _shown(value)))
    return value


def _number(obj, key, prefix, ok, want):
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not ok(value):
        raise RequestError("%s%s must be %s, not %s" % (prefix, key, want, _shown(value)))
    return float(value)


def _kind(value):
    """Returns the JSON type name of a decoded value, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, dict) else type(value).__name__


def _shown(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return _kind(value)
    return repr(value)
