"""djl_python.encode_decode: request decoding and reply encoding by content type.

It behaves as DJL Serving's module of the same name: decode() turns a request
body into the dict a handler expects ({"inputs": ...} for most types),
encode() adds a prediction to an Output in the format a content type asks
for and sets Content-Type.
"""

import csv
import io

__all__ = ["decode", "encode", "decode_csv", "encode_csv"]

# A CSV body for the default handlers needs one of these columns.
CSV_COLUMNS = ("question", "context", "inputs")


def decode_csv(inputs, require_headers=True):
    """Returns a CSV body as a handler's input.

    With require_headers, the first line must name one of the columns
    question, context or inputs (any case), else ValueError: an "inputs"
    column gives {"inputs": [each row's inputs]}, other columns
    {"inputs": [each row as a dict]}. Without it, the body must be numbers
    only and comes back as a numpy array (ValueError for anything else).
    """
    text = inputs.get_as_string()
    if not require_headers:
        return _numeric_csv(text)
    lines = text.splitlines()
    header = lines[0].lower() if lines else ""
    if not any(column in header for column in CSV_COLUMNS):
        raise ValueError("You need to provide the correct CSV with Header columns to use it "
                         "with the inference toolkit default handler: one of %s."
                         % ", ".join(CSV_COLUMNS))
    rows = list(csv.DictReader(io.StringIO(text)))
    if rows and "inputs" in rows[0]:
        return {"inputs": [row["inputs"] for row in rows]}
    return {"inputs": rows}


def _numeric_csv(text):
    import numpy

    values = numpy.genfromtxt(io.StringIO(text), delimiter=",")
    if numpy.isnan(values).any():
        raise ValueError("CSV contains non-numeric data. Please provide numeric data only.")
    return values


def encode_csv(content):
    """Returns rows (dicts, the first one's keys as the header) as CSV text."""
    rows = content if isinstance(content, list) else list(content)
    out = io.StringIO()
    writer = csv.DictWriter(out, list(rows[0].keys()))
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def decode(inputs, content_type, key=None, require_csv_headers=True):
    """Returns the request body decoded by content_type.

    No type: the body parsed as JSON, or {"inputs": ""} when it is empty.
    application/json: the parsed JSON. text/csv: decode_csv. text/plain:
    {"inputs": [text]}. image/*: {"inputs": a PIL image}. audio/*,
    application/octet-stream and anything else: {"inputs": bytes}.
    tensor/npz, tensor/ndlist, application/x-npy: {"inputs": numpy arrays}.
    application/x-www-form-urlencoded: {"inputs": text}.
    """
    kind = content_type or ""
    if not kind:
        if not inputs.get_as_bytes(key=key):
            return {"inputs": ""}
        return inputs.get_as_json(key=key)
    if "application/json" in kind:
        return inputs.get_as_json(key=key)
    if "text/csv" in kind:
        return decode_csv(inputs, require_headers=require_csv_headers)
    if "text/plain" in kind:
        return {"inputs": [inputs.get_as_string(key=key)]}
    return {"inputs": _decode_other(inputs, kind, key)}


def _decode_other(inputs, kind, key):
    if kind.startswith("image/"):
        return inputs.get_as_image(key=key)
    if kind.startswith("audio/"):
        return inputs.get_as_bytes(key=key)
    if "tensor/npz" in kind:
        return inputs.get_as_npz(key=key)
    if kind in ("tensor/ndlist", "application/x-npy"):
        return inputs.get_as_numpy(key=key)
    if kind == "application/x-www-form-urlencoded":
        return inputs.get_as_string(key=key)
    return inputs.get_as_bytes(key=key)


def encode(outputs, prediction, content_type, key=None):
    """Adds prediction to outputs encoded for content_type and sets Content-Type.

    No type or application/json: JSON. text/csv: encode_csv, added as a
    string. tensor/npz: an npz archive. Anything else: a DJL NDList
    (Content-Type tensor/ndlist).
    """
    kind = content_type or ""
    if not kind or "application/json" in kind:
        outputs.add_as_json(prediction, key=key)
        outputs.add_property("Content-Type", "application/json")
    elif "text/csv" in kind:
        outputs.add_as_string(encode_csv(prediction), key=key)
        outputs.add_property("Content-Type", "text/csv")
    elif "tensor/npz" in kind:
        outputs.add_as_npz(prediction, key=key)
        outputs.add_property("Content-Type", "tensor/npz")
    else:
        outputs.add_as_numpy(prediction, key=key)
        outputs.add_property("Content-Type", "tensor/ndlist")
