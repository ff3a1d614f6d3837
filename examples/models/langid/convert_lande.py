#!/usr/bin/env python3
"""Convert the trained network of the npm package lande@1.0.10 for model.py.

lande ships its network as toygrad options inside JavaScript modules
(standalone/t50-options.js, t50-ngrams.js, t50-langs.js). This script reads
them from an `npm pack lande@1.0.10` tarball, or from the unpacked folder,
decodes the 8-bit weights exactly as toygrad does, and writes:

  lande-t50.npz   dense1_weight (120, 620), dense1_bias (120,),
                  dense2_weight (50, 120), dense2_bias (50,), all float32
  lande-t50.json  labels, the n-gram vocabulary, and where they came from

Usage (from this folder):

  npm pack lande@1.0.10
  /usr/bin/python3 convert_lande.py lande-1.0.10.tgz

The output is byte-for-byte reproducible: the zip entries carry a fixed date.
"""

import argparse
import base64
import hashlib
import io
import json
import os
import sys
import tarfile
import zipfile

import numpy as np

LANDE_VERSION = "1.0.10"
SOURCES = ("t50-options.js", "t50-ngrams.js", "t50-langs.js")
NGRAM_ORDERS = ("unigrams", "bigrams", "trigrams", "quadgrams")
EXPORT_PREFIX = "export default "
ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def read_package(path):
    """Return {name: text} for package.json and the three model modules."""
    names = ["package.json"] + ["standalone/" + s for s in SOURCES]
    if os.path.isdir(path):
        root = path
        if os.path.isdir(os.path.join(path, "package")):
            root = os.path.join(path, "package")
        return {n: _read_text(os.path.join(root, n)) for n in names}
    with tarfile.open(path, "r:gz") as tar:
        return {n: tar.extractfile("package/" + n).read().decode("utf-8")
                for n in names}


def _read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def npm_integrity(path):
    """Return the npm `integrity` string (sha512) of a tarball, or None for a folder."""
    if os.path.isdir(path):
        return None
    with open(path, "rb") as f:
        digest = hashlib.sha512(f.read()).digest()
    return "sha512-" + base64.b64encode(digest).decode("ascii")


def parse_module(text, name):
    """Return the JSON value of an ES module that is `export default <json>;`."""
    body = text.strip()
    if not body.startswith(EXPORT_PREFIX) or not body.endswith(";"):
        raise ValueError(f"{name}: expected 'export default <json>;'")
    return json.loads(body[len(EXPORT_PREFIX):-1])


def decode_f8(encoded):
    """Decode toygrad's 8-bit encoding '1<scale>|<base64>' into float32.

    Each byte b stands for (b - 127) / scale, rounded to float32 as toygrad's
    Float32Array does.
    """
    head, sep, payload = encoded.partition("|")
    if not sep or not head.startswith("1") or head.startswith("1-"):
        raise ValueError(f"unsupported toygrad encoding {encoded[:12]!r}")
    scale = float(head[1:])
    raw = np.frombuffer(base64.b64decode(payload, validate=True), dtype=np.uint8)
    return ((raw.astype(np.float64) - 127.0) / scale).astype(np.float32)


def dense_layer(layer, inputs):
    """Return (weight, bias) of a toygrad dense layer that reads `inputs` values."""
    weight = np.stack([decode_f8(f) for f in layer["_filters"]])
    bias = decode_f8(layer["_biases"])
    if weight.shape != (layer["filters"], inputs) or bias.shape != (layer["filters"],):
        raise ValueError(f"dense layer shape {weight.shape} does not match its options")
    return weight, bias


def convert_network(options, input_size):
    """Return the four weight arrays of lande's input-dense-relu-dense-softmax net."""
    types = [layer["type"] for layer in options["layers"]]
    if types != ["input", "dense", "relu", "dense", "softmax"]:
        raise ValueError(f"unexpected layer stack {types}")
    first, second = options["layers"][1], options["layers"][3]
    if options["layers"][0]["sz"] != input_size:
        raise ValueError("input layer size differs from the n-gram count")
    w1, b1 = dense_layer(first, input_size)
    w2, b2 = dense_layer(second, first["filters"])
    return {"dense1_weight": w1, "dense1_bias": b1,
            "dense2_weight": w2, "dense2_bias": b2}


def write_npz(path, arrays):
    """Write arrays as a deflated .npz whose bytes depend only on the data."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(arrays):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, arrays[name], allow_pickle=False)
            info = zipfile.ZipInfo(name + ".npy", date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, buf.getvalue())


def vocabulary(files, integrity):
    """Return the JSON document with labels, n-grams and provenance."""
    ngrams = parse_module(files["standalone/t50-ngrams.js"], "t50-ngrams.js")
    return {
        "source": f"npm lande@{LANDE_VERSION} (standalone/t50-*.js), MIT license",
        "integrity": integrity,
        "labels": parse_module(files["standalone/t50-langs.js"], "t50-langs.js"),
        "ngrams": {order: ngrams[order] for order in NGRAM_ORDERS},
    }


def convert(package, out_dir):
    """Convert a lande package (tarball or folder) into out_dir; return the paths."""
    files = read_package(package)
    version = json.loads(files["package.json"]).get("version")
    if version != LANDE_VERSION:
        raise ValueError(f"expected lande {LANDE_VERSION}, found {version}")
    vocab = vocabulary(files, npm_integrity(package))
    input_size = sum(len(vocab["ngrams"][o]) for o in NGRAM_ORDERS)
    options = parse_module(files["standalone/t50-options.js"], "t50-options.js")
    arrays = convert_network(options, input_size)
    if arrays["dense2_bias"].shape[0] != len(vocab["labels"]):
        raise ValueError("output size differs from the label count")
    npz_path = os.path.join(out_dir, "lande-t50.npz")
    json_path = os.path.join(out_dir, "lande-t50.json")
    write_npz(npz_path, arrays)
    with open(json_path, "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False, indent=1)
        f.write("\n")
    return npz_path, json_path


def main(argv):
    """Converts lande's package into this folder's weights; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", help="lande-1.0.10.tgz from `npm pack`, or its unpacked folder")
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)),
                        help="output folder (default: this script's folder)")
    args = parser.parse_args(argv)
    for path in convert(args.package, args.out):
        print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
