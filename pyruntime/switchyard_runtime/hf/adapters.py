"""LoRA adapters on one base model, with PEFT: registered, in host memory, on the device.

With option.enable_lora=true the base model is loaded once and wrapped in a
peft.PeftModel the first time an adapter goes on the device. An adapter is:

* registered: its name and folder (adapter_config.json and
  adapter_model.safetensors) are known; the folders of adapters/<name>/
  beside serving.properties are registered at load, and the front-end
  registers and unregisters more (register_adapter, unregister_adapter);
* in host memory: its weights in CPU tensors, kept for an adapter that is
  not on the device (read ahead with preload, or copied off the device when
  it was evicted) so that it comes back without reading its folder, at most
  option.max_cpu_loras of them, least recently used dropped first; an
  adapter on the device has no second copy;
* on the device: added to the PeftModel, at most option.max_loras at once.
  Before a batch, Adapters.ensure puts the batch's adapters on the device,
  taking off the least recently used ones the batch does not need; a pinned
  adapter never leaves, and one that the batch needs is never taken off.

A batch runs every sequence with its own adapter in the same forward
passes (PEFT's mixed-adapter inference: generate(adapter_names=[...]),
"__base__" for the base model). Each load and eviction is logged
("adapter loaded", "adapter evicted") and recorded in events, which the
handler reports to the front-end with the answer.
"""

import json
import logging
import os
import time
import warnings

from ..djl.errors import LoadError
from ..generative.schemas import BASE_ADAPTER

BASE = BASE_ADAPTER
DEFAULT_MAX_LORAS = 4

_log = logging.getLogger("switchyard.hf.adapters")


class AdapterError(ValueError):
    """AdapterError is a request that names an adapter this model does not have (404) or a bad
    registration (400)."""

    def __init__(self, message, code=404):
        ValueError.__init__(self, message)
        self.code = code


class Adapter:
    """Adapter is one registered adapter: its folder, pin, and where its weights are."""

    __slots__ = ("name", "src", "pinned", "weights", "config", "on_device", "last_used")

    def __init__(self, name, src, pinned):
        self.name = name
        self.src = src
        self.pinned = pinned
        self.weights = None  # the state dict in host memory, or None
        self.config = None
        self.on_device = False
        self.last_used = 0.0

    def record(self):
        """Returns the adapter as the front-end shows it."""
        return {"name": self.name, "src": self.src, "pinned": self.pinned, "loaded": self.on_device,
                "lastUsed": self.last_used or None}


def check_folder(src):
    """Fails unless src is a PEFT adapter folder."""
    if not os.path.isfile(os.path.join(src, "adapter_config.json")):
        raise AdapterError("%s is not an adapter folder: it has no adapter_config.json" % src, code=400)


def startup_adapters(model_dir):
    """Returns {name: folder} of the adapters/ folder beside serving.properties."""
    root = os.path.join(model_dir, "adapters")
    if not os.path.isdir(root):
        return {}
    out = {}
    for name in sorted(os.listdir(root)):
        folder = os.path.join(root, name)
        if os.path.isfile(os.path.join(folder, "adapter_config.json")):
            out[name] = folder
    return out


def limit(props, key, default):
    """Returns the positive integer option key, or default."""
    raw = props.get(key)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise LoadError("option.%s=%r is not a whole number" % (key, raw)) from exc
    if value < 1:
        raise LoadError("option.%s=%r must be at least 1" % (key, raw))
    return value


class Adapters:
    """Adapters are the LoRA adapters of one CausalModel (see the module doc)."""

    def __init__(self, model, props):
        self.model = model
        self.max_loras = limit(props, "max_loras", DEFAULT_MAX_LORAS)
        self.max_cpu = max(self.max_loras, limit(props, "max_cpu_loras", self.max_loras))
        self.registered = {}
        self.peft = None  # the PeftModel, made on the first load
        self.events = []  # (event, name) since the last take_events
        self.loads = 0

    def register(self, name, src, pinned=False, preload=True):
        """Registers an adapter; with preload its weights are read into host memory now."""
        if not name or name == BASE or "/" in name:
            raise AdapterError("%r is not an adapter name" % name, code=400)
        check_folder(src)
        old = self.registered.get(name)
        if old is not None:
            self.unregister(name)
        adapter = Adapter(name, os.path.abspath(src), pinned)
        self.registered[name] = adapter
        if preload or pinned:
            self._read(adapter)
        if pinned:
            self.ensure({name})
        _log.info("adapter registered: %s from %s%s", name, adapter.src, " (pinned)" if pinned else "")
        return adapter

    def update(self, name, pinned=None, src=None):
        """Changes an adapter's pin or folder."""
        adapter = self.get(name)
        if src is not None and os.path.abspath(src) != adapter.src:
            return self.register(name, src, adapter.pinned if pinned is None else pinned)
        if pinned is not None:
            adapter.pinned = pinned
            if pinned:
                self.ensure({name})
        return adapter

    def unregister(self, name):
        """Forgets an adapter and takes it off the device."""
        adapter = self.get(name)
        del self.registered[name]
        if adapter.on_device:
            self._evict(adapter)
        _log.info("adapter unregistered: %s", name)

    def get(self, name):
        """Returns the registered adapter name; AdapterError (404) when there is none."""
        adapter = self.registered.get(name)
        if adapter is None:
            raise AdapterError("adapter %s is not registered on this model" % name)
        return adapter

    def ensure(self, names):
        """Puts the adapters of names (BASE and None excluded) on the device for one batch."""
        wanted = [self.get(n) for n in sorted({n for n in names if n and n != BASE})]
        if len(wanted) > self.max_loras:
            raise AdapterError("a batch needs %d adapters and option.max_loras is %d" % (len(wanted), self.max_loras),
                               code=507)
        now = time.time()
        for adapter in wanted:
            if not adapter.on_device:
                self._make_room({a.name for a in wanted})
                self._load(adapter)
            adapter.last_used = now

    def _make_room(self, needed):
        on = [a for a in self.registered.values() if a.on_device]
        if len(on) < self.max_loras:
            return
        victims = sorted((a for a in on if not a.pinned and a.name not in needed), key=lambda a: a.last_used)
        if not victims:
            raise AdapterError("no room on the device for another adapter: %d are loaded, pinned or in use "
                               "(option.max_loras=%d)" % (len(on), self.max_loras), code=507)
        self._evict(victims[0])

    def _read(self, adapter):
        """Reads an adapter's weights into host memory, unless they are there."""
        if adapter.weights is not None:
            return
        import peft
        from peft.utils import load_peft_weights

        adapter.config = peft.PeftConfig.from_pretrained(adapter.src)
        adapter.weights = load_peft_weights(adapter.src, device="cpu")
        self._trim_host(adapter)

    def _trim_host(self, keep):
        """Drops the least recently used host copies beyond max_cpu_loras (keep's is kept)."""
        held = [a for a in self.registered.values() if a.weights is not None and a is not keep]
        while len(held) + 1 > self.max_cpu and held:
            oldest = min(held, key=lambda a: a.last_used)
            oldest.weights = None
            held.remove(oldest)

    def _load(self, adapter):
        import peft
        from peft.utils import set_peft_model_state_dict

        self._read(adapter)
        if self.peft is None:
            self.peft = peft.PeftModel(self.model.model, adapter.config, adapter_name=adapter.name)
        else:
            self.peft.add_adapter(adapter.name, adapter.config)
        set_peft_model_state_dict(self.peft, adapter.weights, adapter_name=adapter.name)
        self.peft.to(self.model.device).eval()
        adapter.weights = None  # the device holds it now; eviction copies it back
        adapter.on_device = True
        self.loads += 1
        self.events.append(("loaded", adapter.name))
        _log.info("adapter loaded: %s (%d of max_loras %d on the device)", adapter.name, self.on_device(),
                  self.max_loras)

    def _evict(self, adapter):
        from peft.utils import get_peft_model_state_dict

        if adapter.name in self.registered:  # an unregistered one needs no copy
            weights = get_peft_model_state_dict(self.peft, adapter_name=adapter.name)
            adapter.weights = {k: v.detach().to("cpu", copy=True) for k, v in weights.items()}
            self._trim_host(adapter)
        with warnings.catch_warnings():  # PEFT warns that the active adapter changes: each request names its own
            warnings.simplefilter("ignore", UserWarning)
            self.peft.delete_adapter(adapter.name)
        adapter.on_device = False
        self.events.append(("evicted", adapter.name))
        _log.info("adapter evicted: %s", adapter.name)

    def on_device(self):
        """Returns how many adapters are on the device."""
        return sum(1 for a in self.registered.values() if a.on_device)

    def generator(self):
        """Returns what generates: the PeftModel once an adapter was loaded, else the base model."""
        return self.peft if self.peft is not None else self.model.model

    def take_events(self):
        """Returns the loads and evictions since the last call, as "loaded:a,evicted:b"."""
        events, self.events = self.events, []
        return ",".join("%s:%s" % e for e in events)

    def listing(self):
        """Returns the registered adapters as JSON text, for the front-end."""
        return json.dumps([a.record() for a in sorted(self.registered.values(), key=lambda a: a.name)])
