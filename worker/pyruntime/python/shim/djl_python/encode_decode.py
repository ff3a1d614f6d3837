"""djl_python.encode_decode: request decoding and reply encoding by content type."""

import csv
import io

from switchyard_runtime.outputs import to_bytes

__all__ = ["decode", "encode", "decode_csv", "encode_csv"]


def decode_csv(inputs, require_headers=True):
    """Returns a CSV body: {"inputs": [...]} from a header row, or numbers as numpy."""
    text = inputs.get_as_string()
    if not require_headers:
        import numpy

        return numpy.genfromtxt(io.StringIO(text), delimiter=",")
    rows = list(csv.DictReader(io.StringIO(text)))
    if rows and "inputs" in rows[0]:
        return {"inputs": [row["inputs"] for row in rows]}
    return {"inputs": rows}


def encode_csv(rows):
    """Returns a list of dicts as CSV text with a header row."""
    rows = list(rows)
    out = io.StringIO()
    if rows:
        writer = csv.DictWriter(out, list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    return out.getvalue()


def decode(inputs, content_type, key=None, require_csv_headers=True):
    """Returns the request body decoded by content_type."""
    kind = (content_type or "").lower()
    if not kind:
        return inputs.get_as_json(key=key) if inputs.get_as_bytes(key=key) else {"inputs": ""}
    if "application/json" in kind:
        return inputs.get_as_json(key=key)
    if "text/csv" in kind:
        return decode_csv(inputs, require_headers=require_csv_headers)
    if "text/plain" in kind:
        return {"inputs": [inputs.get_as_string(key=key)]}
    if kind.startswith("image/"):
        return {"inputs": inputs.get_as_image(key=key)}
    if "tensor/npz" in kind:
        return {"inputs": inputs.get_as_npz(key=key)}
    if kind in ("tensor/ndlist", "application/x-npy"):
        return {"inputs": inputs.get_as_numpy(key=key)}
    if kind == "application/x-www-form-urlencoded":
        return {"inputs": inputs.get_as_string(key=key)}
    return {"inputs": inputs.get_as_bytes(key=key)}


def encode(outputs, prediction, content_type, key=None):
    """Adds prediction to outputs encoded for content_type and sets Content-Type."""
    kind = (content_type or "").lower()
    if not kind or "application/json" in kind:
        outputs.add_as_json(prediction, key=key)
        outputs.add_property("Content-Type", "application/json")
    elif "text/csv" in kind:
        outputs.add(to_bytes(encode_csv(prediction)), key=key)
        outputs.add_property("Content-Type", "text/csv")
    elif "tensor/npz" in kind:
        outputs.add_as_npz(prediction, key=key)
        outputs.add_property("Content-Type", "tensor/npz")
    else:
        outputs.add_as_numpy(prediction, key=key)
        outputs.add_property("Content-Type", "tensor/ndlist")
