// aws_sdk.mjs talks to switchyard with the AWS SDK for JavaScript v3, the
// SageMaker Runtime and Bedrock Runtime clients untouched but for their
// endpoint, and prints what it saw as one JSON object on stdout:
//
//   node aws_sdk.mjs <base url, e.g. http://127.0.0.1:8080>
//
// It expects the langid example, the chat example (as "chat") and the
// toolcaller fixture to be served. Each call's result (or its error: name,
// HTTP status and the error's own fields) is reported under its own key;
// the Go test (e2e/aws_sdk_test.go) checks them. Any failure outside a call
// exits with status 1 and the error on stderr.
import {
  SageMakerRuntimeClient,
  InvokeEndpointCommand,
  InvokeEndpointWithResponseStreamCommand,
} from "@aws-sdk/client-sagemaker-runtime";
import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
} from "@aws-sdk/client-bedrock-runtime";

const [endpoint] = process.argv.slice(2);
if (!endpoint) {
  console.error("usage: node aws_sdk.mjs <base url>");
  process.exit(2);
}

// Any credentials: switchyard checks no signature.
const common = {
  endpoint,
  region: "us-east-1",
  credentials: { accessKeyId: "AKIDLOCAL", secretAccessKey: "local-secret" },
  maxAttempts: 1,
};
const sagemaker = new SageMakerRuntimeClient(common);
const bedrock = new BedrockRuntimeClient(common);
const decoder = new TextDecoder();
const GERMAN = "Guten Morgen, wie geht es dir heute? Ich hoffe, du hast gut geschlafen.";

// settle runs one call and reports its result or its error.
async function settle(fn) {
  try {
    return { ok: await fn() };
  } catch (e) {
    return {
      error: {
        name: e.name,
        status: e.$metadata?.httpStatusCode ?? null,
        message: e.message,
        originalStatusCode: e.OriginalStatusCode ?? e.originalStatusCode ?? null,
        originalMessage: e.OriginalMessage ?? e.originalMessage ?? null,
      },
    };
  }
}

async function invoke(input) {
  const out = await sagemaker.send(new InvokeEndpointCommand(input));
  return {
    body: decoder.decode(out.Body),
    contentType: out.ContentType,
    variant: out.InvokedProductionVariant,
  };
}

async function invokeStream() {
  const body = JSON.stringify({
    messages: [{ role: "user", content: "What does cruft mean?" }],
    max_tokens: 24, temperature: 0, stream: true,
  });
  const out = await sagemaker.send(new InvokeEndpointWithResponseStreamCommand({
    EndpointName: "chat", Body: new TextEncoder().encode(body), ContentType: "application/json",
  }));
  let parts = 0;
  let joined = "";
  for await (const event of out.Body) {
    if (event.PayloadPart) {
      parts++;
      joined += decoder.decode(event.PayloadPart.Bytes, { stream: true });
    }
  }
  return { parts, joined, contentType: out.ContentType };
}

const user = (text) => ({ role: "user", content: [{ text }] });

async function converse(input) {
  const out = await bedrock.send(new ConverseCommand(input));
  return { content: out.output.message.content, stopReason: out.stopReason, usage: out.usage, latency: out.metrics?.latencyMs };
}

async function converseStream(input) {
  const out = await bedrock.send(new ConverseStreamCommand(input));
  const events = [];
  let text = "";
  for await (const event of out.stream) {
    const [name] = Object.keys(event);
    events.push(name);
    if (event.contentBlockDelta?.delta?.text) {
      text += event.contentBlockDelta.delta.text;
    }
    if (event.messageStop) {
      events.push(event.messageStop.stopReason);
    }
  }
  return { events, text };
}

const classify = {
  toolSpec: {
    name: "classify_language",
    description: "Names the language of a text.",
    inputSchema: { json: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } },
  },
};

async function toolRound() {
  const question = user(`Which language is '${GERMAN}'?`);
  const first = await bedrock.send(new ConverseCommand({
    modelId: "us.toolcaller", messages: [question], toolConfig: { tools: [classify] },
  }));
  const use = first.output.message.content.find((b) => b.toolUse)?.toolUse;
  const second = await bedrock.send(new ConverseCommand({
    modelId: "us.toolcaller",
    toolConfig: { tools: [classify] },
    messages: [question, first.output.message, {
      role: "user", content: [{ toolResult: { toolUseId: use.toolUseId, content: [{ text: "deu" }] } }],
    }],
  }));
  return {
    firstStop: first.stopReason, toolUse: use,
    secondStop: second.stopReason, secondText: second.output.message.content[0].text,
  };
}

const report = {
  invokeTarget: await settle(() => invoke({
    EndpointName: "my-endpoint", TargetModel: "langid.tar.gz", Body: new TextEncoder().encode(JSON.stringify({ inputs: GERMAN })),
    ContentType: "application/json",
  })),
  invokeNamed: await settle(() => invoke({
    EndpointName: "langid", Body: new TextEncoder().encode(JSON.stringify({ inputs: GERMAN })), ContentType: "application/json",
  })),
  modelError: await settle(() => invoke({
    EndpointName: "chat", Body: new TextEncoder().encode(JSON.stringify({ messages: 5 })), ContentType: "application/json",
  })),
  stream: await settle(invokeStream),
  converse: await settle(() => converse({
    modelId: "chat", messages: [user("What does cruft mean?")], inferenceConfig: { maxTokens: 24, temperature: 0 },
  })),
  converseStream: await settle(() => converseStream({
    modelId: "chat", messages: [user("What does cruft mean?")], inferenceConfig: { maxTokens: 24, temperature: 0 },
  })),
  toolRound: await settle(toolRound),
  tooLong: await settle(() => converse({ modelId: "chat", messages: [user("cruft ".repeat(6000))] })),
};
console.log(JSON.stringify(report));
