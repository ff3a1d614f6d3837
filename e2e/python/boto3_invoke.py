"""boto3_invoke.py calls switchyard with Debian's boto3, untouched but for its endpoint.

    /usr/bin/python3 boto3_invoke.py <base url, e.g. http://127.0.0.1:8080>

Debian 12's python3-boto3 (1.26, botocore 1.29, December 2022) predates the
SageMaker Runtime streaming operation and the Bedrock Runtime service, so
only invoke_endpoint is called: on the langid example with and without
TargetModel, and on the chat example with a bad body, which its handler
refuses (ModelError with OriginalStatusCode 400). The results are printed
as one JSON object; e2e/aws_sdk_test.go checks them.
"""

import json
import sys

import boto3
import botocore
from botocore.config import Config

GERMAN = "Guten Morgen, wie geht es dir heute? Ich hoffe, du hast gut geschlafen."


def main(endpoint):
    """Calls the endpoint with boto3's SageMaker Runtime client and prints what it got as JSON."""
    client = boto3.client(
        "sagemaker-runtime", endpoint_url=endpoint, region_name="us-east-1",
        aws_access_key_id="AKIDLOCAL", aws_secret_access_key="local-secret",
        config=Config(retries={"max_attempts": 1}))
    body = json.dumps({"inputs": GERMAN})
    report = {"versions": {"boto3": boto3.__version__, "botocore": botocore.__version__},
              "has_stream": "invoke_endpoint_with_response_stream" in client.meta.method_to_api_mapping}
    for key, kwargs in (("target", {"EndpointName": "my-endpoint", "TargetModel": "langid"}),
                        ("named", {"EndpointName": "langid"})):
        out = client.invoke_endpoint(Body=body, ContentType="application/json", **kwargs)
        report[key] = {"body": out["Body"].read().decode(), "contentType": out["ContentType"],
                       "variant": out.get("InvokedProductionVariant")}
    try:
        client.invoke_endpoint(EndpointName="chat", Body=json.dumps({"messages": 5}), ContentType="application/json")
        report["modelError"] = None
    except client.exceptions.ModelError as exc:
        report["modelError"] = {"code": exc.response["Error"]["Code"],
                                "status": exc.response["ResponseMetadata"]["HTTPStatusCode"],
                                "originalStatusCode": exc.response.get("OriginalStatusCode"),
                                "originalMessage": exc.response.get("OriginalMessage")}
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1])
