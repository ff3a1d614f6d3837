"""Request schemas of generative models: chat, generation and completion.

parse() checks a request body and returns a GenRequest, or raises
RequestError (answered with status 400) naming the field that is wrong.

* chat: {"messages": [{"role", "content"}, ...], "max_tokens", "temperature",
  "top_p", "stop", "stream", "seed", "n", "tools", "tool_choice"}; a system
  message may only come first. max_new_tokens is ignored here, as
  chat-completions servers ignore it, and the answer carries the property
  x-switchyard-warning saying so. Tools follow OpenAI's shape: "tools" is a
  list of {"type": "function", "function": {"name", "description",
  "parameters"}}, an assistant message may carry "tool_calls" (content then
  may be null) and a message with role "tool" answers one call by its
  "tool_call_id".
* generation: {"inputs": "<prompt>", "parameters": {"max_new_tokens",
  "temperature", "top_p", "do_sample", "stop" (or TGI's "stop_sequences"),
  "seed", "details", "return_full_text"}, "stream"}.
* completion (OpenAI's CompletionRequest): {"prompt": "<text>", "max_tokens",
  "temperature", "top_p", "stop", "stream", "seed"}.

Unknown fields are ignored; null counts as absent. A model whose rolling
batch is vllm only takes chat and completion requests, as vLLM's servers do.

No silent degradation: what a handler cannot honour is refused with a
RequestError that names the field and the limit. A handler declares what it
can do with a Capabilities object (its context length, whether it calls
tools, how many choices it returns) and passes it to parse(); the same
object, turned into properties, goes back in its answer to the
initialization call, so that switchyard shows it and enforces it too. Tools,
tool messages and n above the declared maximum are refused by parse();
fit_context() refuses a prompt that does not fit the context once the
handler has counted its tokens.
"""

import json
import math

DEFAULT_MAX_TOKENS = 256
DEFAULT_TEMPERATURE = 1.0
ROLES = ("system", "user", "assistant", "tool")
TOOL_CHOICES = ("none", "auto", "required")
MAX_TOOL_NAME = 64
WARNING = "x-switchyard-warning"
MAX_NEW_TOKENS_IGNORED = ("max_new_tokens is ignored in a chat request; "
                          "max_tokens sets the limit")
RAW_STRING_REFUSED = ("could not find a handler for this request: a model with rolling_batch=vllm "
                      "expects a ChatCompletionRequest or CompletionRequest (send messages or prompt), "
                      "not a rendered string in inputs")

CHAT, GENERATION, COMPLETION = "chat", "generation", "completion"


# error_code values of RequestError, as OpenAI's API names these failures.
CONTEXT_LENGTH_EXCEEDED = "context_length_exceeded"
UNSUPPORTED_PARAMETER = "unsupported_parameter"
UNSUPPORTED_VALUE = "unsupported_value"


class RequestError(ValueError):
    """RequestError is a request that does not fit the schema; it answers 400.

    param names the request field at fault and error_code a machine-readable
    reason (context_length_exceeded, unsupported_parameter, ...), when known;
    both travel in the 400 answer's body.
    """

    code = 400

    def __init__(self, message, param=None, error_code=None):
        ValueError.__init__(self, message)
        self.param = param
        self.error_code = error_code


class Capabilities:
    """Capabilities are what a generative handler can honour.

    context_length is the number of tokens the prompt and the completion
    share (None: not known, nothing is checked); tools says whether the
    handler calls tools; max_choices is the largest n it answers. A handler
    returns properties() in its answer to the initialization call.
    """

    # tools is the keyword handlers pass; inside, it hides the function tools().
    def __init__(self, context_length=None, tools=False, max_choices=1):  # pylint: disable=redefined-outer-name
        self.context_length = int(context_length) if context_length else None
        self.tools = bool(tools)
        self.max_choices = max(1, int(max_choices))

    def properties(self):
        """Returns the initialization reply's properties that declare these capabilities."""
        props = {"supports_tools": "true" if self.tools else "false", "max_choices": str(self.max_choices)}
        if self.context_length:
            props["context_length"] = str(self.context_length)
        return props

    def __repr__(self):
        return "Capabilities(context_length=%r, tools=%r, max_choices=%r)" % (
            self.context_length, self.tools, self.max_choices)


NO_CAPABILITIES = Capabilities()


class GenRequest:  # pylint: disable=too-many-instance-attributes  # one flat record of a request's fields
    """GenRequest is a checked generative request with its sampling settings.

    kind is chat, generation or completion; messages (chat) or prompt (the
    others) holds the input. temperature 0 means greedy decoding.
    """

    # pylint: disable-next=too-many-arguments
    def __init__(self, kind, max_new_tokens, temperature=DEFAULT_TEMPERATURE, top_p=1.0,
                 stop=None, seed=None, stream=False, details=False):
        self.kind = kind
        self.messages = None
        self.prompt = None
        self.tools = []
        self.tool_choice = "none"
        self.n = 1
        self.max_new_tokens = max_new_tokens
        self.limit_field = None  # the field that set max_new_tokens; None for the model's default
        self.temperature = temperature
        self.top_p = top_p
        self.stop = list(stop or [])
        self.seed = seed
        self.stream = stream
        self.details = details
        self.return_full_text = None  # generation schema: parameters.return_full_text; None when not sent
        self.adapter = None  # the LoRA adapter the body names ("adapters"); None for the base model
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
            except ValueError as exc:
                raise ValueError("option.%s=%r is not a whole number" % (key, raw)) from exc
            if value < 1:
                raise ValueError("option.%s=%r must be at least 1" % (key, raw))
            return value
    return DEFAULT_MAX_TOKENS


def parse_input(inputs, rolling_batch=None, default_max=DEFAULT_MAX_TOKENS, caps=None):
    """Parses the body of a runtime Input (its "data" item); see parse."""
    return parse(inputs.get_as_bytes(), rolling_batch, default_max, caps)


def parse(body, rolling_batch=None, default_max=DEFAULT_MAX_TOKENS, caps=None):
    """Returns the GenRequest for a JSON body (bytes, str or an already decoded dict).

    caps are the handler's Capabilities; without them tools and n > 1 are
    refused.
    """
    caps = caps or NO_CAPABILITIES
    obj = decode_body(body)
    if _has(obj, "messages"):
        req = _chat(obj, default_max, caps)
    elif _has(obj, "inputs"):
        if rolling_batch == "vllm":
            raise RequestError(RAW_STRING_REFUSED)
        req = _generation(obj, default_max)
    elif _has(obj, "prompt"):
        req = _completion(obj, default_max, caps)
    else:
        raise RequestError("messages is required (a chat request), or inputs (a generation request)")
    req.adapter = _adapter(obj)
    return req


class AdapterNotServed(RequestError):
    """AdapterNotServed is a request that names a LoRA adapter on a model that serves none: 404, as an
    unknown adapter is on a model that does, and never the base model's answer."""

    code = 404


# The name the front-end gives the base model when a request selects it explicitly.
BASE_ADAPTER = "__base__"


def refuse_adapter(inputs, req):
    """Raises AdapterNotServed when the request names an adapter, in its body's adapters or in the
    adapter property the front-end sets, on a backend without LoRA adapters."""
    adapter = inputs.get_property("adapter") or req.adapter
    if adapter and adapter != BASE_ADAPTER:
        raise AdapterNotServed("adapter %s: this model serves no adapters (option.enable_lora is off)" % adapter,
                               param="adapters")


def _adapter(obj):
    """Returns the adapter DJL's "adapters" field names: a string, or a list of one ("" is the base)."""
    value = obj.get("adapters")
    if isinstance(value, list):
        if len(value) != 1:
            raise RequestError("adapters must name one adapter for the one input, not %d" % len(value),
                               param="adapters")
        value = value[0]
    if value is not None and not isinstance(value, str):
        raise RequestError("adapters must be a string, not %s" % _kind(value), param="adapters")
    return value or None


def fit_context(req, prompt_tokens, context_length):
    """Checks that a prompt of prompt_tokens fits the model's context; returns the token limit.

    A prompt that fills the context, or an explicit limit that does not fit
    beside the prompt, raises RequestError (context_length_exceeded). The
    model's default limit shrinks to the room left, as vLLM's does. Without a
    context_length nothing is checked.
    """
    if not context_length:
        return req.max_new_tokens
    field = {CHAT: "messages", COMPLETION: "prompt"}.get(req.kind, "inputs")
    if prompt_tokens >= context_length:
        raise RequestError("this model's context length is %d tokens, and no room is left for an answer after "
                           "%d tokens of %s; shorten the %s" % (context_length, prompt_tokens, field, field),
                           param=field, error_code=CONTEXT_LENGTH_EXCEEDED)
    room = context_length - prompt_tokens
    if req.limit_field is not None and req.max_new_tokens > room:
        raise RequestError("this model's context length is %d tokens, and the request asks for %d "
                           "(%d in the %s, %d in %s); lower %s to at most %d or shorten the %s" % (
                               context_length, prompt_tokens + req.max_new_tokens, prompt_tokens, field,
                               req.max_new_tokens, req.limit_field, req.limit_field, room, field),
                           param=req.limit_field, error_code=CONTEXT_LENGTH_EXCEEDED)
    req.max_new_tokens = min(req.max_new_tokens, room)
    return req.max_new_tokens


def decode_body(body):
    """Returns the JSON object in body; raises RequestError when it is not one."""
    if isinstance(body, dict):
        return body
    if body is None or len(body) == 0:
        raise RequestError("the request body is empty; want a JSON object")
    try:
        obj = json.loads(body if isinstance(body, str) else bytes(body).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise RequestError("the request body is not valid JSON: %s" % exc) from exc
    if not isinstance(obj, dict):
        raise RequestError("the request body must be a JSON object, not %s" % _kind(obj))
    return obj


# --- the three schemas ---------------------------------------------------------


def _chat(obj, default_max, caps):
    req = GenRequest(CHAT, default_max, **_sampling(obj, ""))
    _limit(req, obj, "")
    req.messages = messages(obj["messages"], caps.tools)
    req.tools = tools(obj.get("tools"), caps.tools)
    req.tool_choice = tool_choice(obj.get("tool_choice"), req.tools)
    req.n = _choices(obj, caps)
    req.stream = _bool(obj, "stream", "", False)
    if _has(obj, "max_new_tokens"):
        req.warnings.append(MAX_NEW_TOKENS_IGNORED)
    return req


def _limit(req, obj, prefix):
    """Sets max_tokens, or OpenAI's newer max_completion_tokens, when given."""
    for key in ("max_tokens", "max_completion_tokens"):
        if _has(obj, key):
            req.max_new_tokens = _positive_int(obj, key, prefix)
            req.limit_field = prefix + key
            return


def _choices(obj, caps):
    """Returns n (1 when absent); more than the handler's max_choices is refused."""
    if not _has(obj, "n"):
        return 1
    n = _positive_int(obj, "n", "")
    if n > caps.max_choices:
        raise RequestError("n=%d asks for more choices than this model returns: at most %d" % (n, caps.max_choices),
                           param="n", error_code=UNSUPPORTED_VALUE)
    return n


def _generation(obj, default_max):
    prompt = _string(obj, "inputs", "")
    params = obj.get("parameters")
    if params is None:
        params = {}
    elif not isinstance(params, dict):
        raise RequestError("parameters must be an object, not %s" % _kind(params))
    sampling = _sampling(params, "parameters.")
    if _has(params, "stop_sequences"):
        sampling["stop"] = sampling.get("stop", []) + _stop(params["stop_sequences"], "parameters.stop_sequences")
    if _bool(params, "do_sample", "parameters.", None) is False:
        sampling["temperature"] = 0.0
    req = GenRequest(GENERATION, default_max, **sampling)
    if _has(params, "max_new_tokens"):
        req.max_new_tokens = _positive_int(params, "max_new_tokens", "parameters.")
        req.limit_field = "parameters.max_new_tokens"
    req.prompt = prompt
    req.stream = _bool(obj, "stream", "", False)
    req.details = _bool(params, "details", "parameters.", False)
    req.return_full_text = _bool(params, "return_full_text", "parameters.", None)
    return req


def _completion(obj, default_max, caps):
    req = GenRequest(COMPLETION, default_max, **_sampling(obj, ""))
    _limit(req, obj, "")
    req.n = _choices(obj, caps)
    req.prompt = _string(obj, "prompt", "")
    req.stream = _bool(obj, "stream", "", False)
    return req


def messages(value, with_tools=False):
    """Checks a chat messages list and returns it as plain dicts.

    Each is {role, content}; an assistant message may add tool_calls and a
    tool message has tool_call_id. Without with_tools, tool messages and
    tool calls are refused.
    """
    if not isinstance(value, list):
        raise RequestError("messages must be a list, not %s" % _kind(value))
    if not value:
        raise RequestError("messages must not be empty")
    return [_message(i, m, with_tools) for i, m in enumerate(value)]


def _message(i, m, with_tools):
    where = "messages[%d]" % i
    if not isinstance(m, dict):
        raise RequestError("%s must be an object with role and content, not %s" % (where, _kind(m)))
    role = _string(m, "role", where + ".")
    if role not in ROLES:
        raise RequestError("%s.role must be one of %s, not %r" % (where, "/".join(ROLES), role))
    if role == "system" and i > 0:
        raise RequestError("%s.role: a system message may only come first" % where)
    if role == "tool":
        _need_tools(with_tools, where + ".role", "a tool message")
        return {"role": role, "content": _content(m, where),
                "tool_call_id": _string(m, "tool_call_id", where + ".")}
    if role == "assistant" and _has(m, "tool_calls"):
        _need_tools(with_tools, where + ".tool_calls", "tool calls")
        calls = _tool_calls(m["tool_calls"], where + ".tool_calls")
        content = _content(m, where) if m.get("content") is not None else ""
        return {"role": role, "content": content, "tool_calls": calls}
    return {"role": role, "content": _content(m, where)}


def _content(m, where):
    """A message's content: a string, or OpenAI's list of text parts
    ([{"type": "text", "text": ...}], which LiteLLM and the OpenAI SDKs
    send), joined by newlines as vLLM joins them. Other parts (images,
    audio) are refused: these models read text."""
    value = m.get("content")
    if not isinstance(value, list):
        return _string(m, "content", where + ".")
    texts = []
    for j, part in enumerate(value):
        at = "%s.content[%d]" % (where, j)
        if not isinstance(part, dict):
            raise RequestError("%s must be an object, not %s" % (at, _kind(part)), param=at)
        kind = part.get("type")
        if kind != "text":
            raise RequestError("%s.type: only text parts are supported, not %r" % (at, kind),
                               param=at + ".type", error_code=UNSUPPORTED_PARAMETER)
        texts.append(_string(part, "text", at + "."))
    if not texts:
        raise RequestError("%s.content must not be an empty list" % where, param=where + ".content")
    return "\n".join(texts)


def _need_tools(with_tools, param, what):
    if not with_tools:
        raise RequestError("%s: this model's handler does not call tools, so %s cannot be sent to it" % (param, what),
                           param=param, error_code=UNSUPPORTED_PARAMETER)


def _tool_calls(value, where):
    if not isinstance(value, list):
        raise RequestError("%s must be a list, not %s" % (where, _kind(value)))
    out = []
    for i, call in enumerate(value):
        at = "%s[%d]" % (where, i)
        if not isinstance(call, dict):
            raise RequestError("%s must be an object, not %s" % (at, _kind(call)))
        fn = _object(call, "function", at + ".")
        out.append({"id": _string(call, "id", at + "."), "type": "function",
                    "function": {"name": _string(fn, "name", at + ".function."),
                                 "arguments": _string(fn, "arguments", at + ".function.")}})
    return out


def tools(value, supported):
    """Checks OpenAI's tools list and returns it as [{"type": "function", "function": {...}}].

    None or an empty list means no tools; tools sent to a handler that does
    not call tools are refused.
    """
    if value is None or value == []:
        return []
    _need_tools(supported, "tools", "tools")
    if not isinstance(value, list):
        raise RequestError("tools must be a list, not %s" % _kind(value), param="tools")
    return [_tool(i, t) for i, t in enumerate(value)]


def _tool(i, t):
    where = "tools[%d]" % i
    if not isinstance(t, dict):
        raise RequestError("%s must be an object, not %s" % (where, _kind(t)), param=where)
    kind = t.get("type", "function")
    if kind != "function":
        raise RequestError("%s.type must be \"function\", not %r" % (where, kind), param=where + ".type")
    fn = _object(t, "function", where + ".")
    name = _string(fn, "name", where + ".function.")
    if not name or len(name) > MAX_TOOL_NAME or not all(c.isalnum() or c in "_-" for c in name):
        raise RequestError("%s.function.name must be 1 to %d letters, digits, '_' or '-', not %r" % (
            where, MAX_TOOL_NAME, name), param=where + ".function.name")
    out = {"name": name}
    if _has(fn, "description"):
        out["description"] = _string(fn, "description", where + ".function.")
    if _has(fn, "parameters"):
        out["parameters"] = _object(fn, "parameters", where + ".function.")
    return {"type": "function", "function": out}


def tool_choice(value, tool_list):
    """Returns OpenAI's tool_choice checked against the tools: "none", "auto", "required" or a name dict."""
    if value is None:
        return "auto" if tool_list else "none"
    if not tool_list:
        raise RequestError("tool_choice is only allowed when tools are given", param="tool_choice")
    if isinstance(value, str):
        if value not in TOOL_CHOICES:
            raise RequestError("tool_choice must be one of %s or a function, not %r" % (
                "/".join(TOOL_CHOICES), value), param="tool_choice")
        return value
    fn = _object(value, "function", "tool_choice.") if isinstance(value, dict) else None
    name = _string(fn, "name", "tool_choice.function.") if fn is not None else None
    if name is None:
        raise RequestError("tool_choice must be a string or {\"type\": \"function\", \"function\": {\"name\"}}, "
                           "not %s" % _kind(value), param="tool_choice")
    if name not in [t["function"]["name"] for t in tool_list]:
        raise RequestError("tool_choice names %r, which is not among the tools" % name, param="tool_choice")
    return {"type": "function", "function": {"name": name}}


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
        raise RequestError("%s%s is required" % (prefix, key), param=prefix + key)
    if not isinstance(value, str):
        raise RequestError("%s%s must be a string, not %s" % (prefix, key, _kind(value)), param=prefix + key)
    return value


def _object(obj, key, prefix):
    value = obj.get(key)
    if not isinstance(value, dict):
        raise RequestError("%s%s must be an object, not %s" % (prefix, key, _kind(value)), param=prefix + key)
    return value


def _bool(obj, key, prefix, default):
    value = obj.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise RequestError("%s%s must be true or false, not %s" % (prefix, key, _kind(value)), param=prefix + key)
    return value


def _int(obj, key, prefix):
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError("%s%s must be an integer, not %s" % (prefix, key, _kind(value)), param=prefix + key)
    return value


def _positive_int(obj, key, prefix):
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RequestError("%s%s must be a positive integer, not %s" % (prefix, key, _shown(value)), param=prefix + key)
    return value


def _number(obj, key, prefix, ok, want):
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not ok(value):
        raise RequestError("%s%s must be %s, not %s" % (prefix, key, want, _shown(value)), param=prefix + key)
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
