"""Prints the schemas of the Open Inference Protocol's REST specification
(e2e/testdata/oip/open_inference_rest.yaml, components.schemas) as one JSON
object, in the form of e2e/testdata/oip/schemas.json: each $ref by the
schema's bare name, without the titles, descriptions and examples, which
say nothing of a body's shape. e2e/v2_schemas_test.go compares the two.
"""

import json
import sys

import yaml

LEFT_OUT = ("title", "description", "x-examples")
REF_PREFIX = "#/components/schemas/"


def normalize(node):
    """Returns node with LEFT_OUT dropped and $refs by bare name."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key in LEFT_OUT:
                continue
            if key == "$ref":
                out[key] = value[len(REF_PREFIX):] if value.startswith(REF_PREFIX) else value
            else:
                out[key] = normalize(value)
        return out
    if isinstance(node, list):
        return [normalize(x) for x in node]
    return node


def main():
    """Reads the YAML named by the first argument and prints its schemas."""
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = yaml.safe_load(f)
    print(json.dumps(normalize(spec["components"]["schemas"]), sort_keys=True))


if __name__ == "__main__":
    main()
