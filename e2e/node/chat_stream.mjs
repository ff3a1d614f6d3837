// chat_stream.mjs talks to switchyard with the OpenAI Node SDK, the way an
// agent would, and prints what it saw as one JSON object on stdout:
//
//   node chat_stream.mjs <base url, e.g. http://127.0.0.1:8080/v1> <model> <question> [max_tokens] [--stream-only]
//
// It lists the models, asks for a whole chat completion, then streams one
// (with stream_options.include_usage) and counts the chunks: a stream in a
// format the SDK does not understand yields zero chunks and no error, so the
// count is what the Go test checks. An error raised while the stream is read
// is reported in stream.error (with the chunks read before it); any other
// error exits with status 1 and the error's text on stderr. --stream-only
// skips the listing and the whole completion. The environment variable
// CHAT_EXTRA, a JSON object, adds its fields to both chat requests (the SDK
// sends fields it does not know as they are).
import OpenAI from "openai";

const args = process.argv.slice(2).filter((a) => a !== "--stream-only");
const streamOnly = args.length < process.argv.length - 2;
const [baseURL, model, question, maxTokensArg] = args;
if (!baseURL || !model || !question) {
  console.error("usage: node chat_stream.mjs <base url> <model> <question> [max_tokens]");
  process.exit(2);
}
const maxTokens = Number(maxTokensArg || 40);

const client = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0, timeout: 120_000 });
const messages = [{ role: "user", content: question }];
const extra = JSON.parse(process.env.CHAT_EXTRA || "{}");

async function listModels() {
  const ids = [];
  for await (const m of client.models.list()) {
    ids.push(m.id);
  }
  return ids;
}

async function whole() {
  const c = await client.chat.completions.create({ ...extra, model, messages, max_tokens: maxTokens, temperature: 0 });
  return { text: c.choices[0].message.content, finish_reason: c.choices[0].finish_reason, model: c.model, usage: c.usage };
}

async function streamed() {
  const stream = await client.chat.completions.create({
    ...extra, model, messages, max_tokens: maxTokens, temperature: 0, stream: true,
    stream_options: { include_usage: true },
  });
  const out = { chunks: 0, text: "", roles: [], finish_reason: null, usage: null, ids: new Set(), error: null };
  try {
    for await (const chunk of stream) {
      out.chunks++;
      out.ids.add(chunk.id);
      if (chunk.usage) out.usage = chunk.usage;
      for (const choice of chunk.choices) {
        if (choice.delta.role) out.roles.push(choice.delta.role);
        if (choice.delta.content) out.text += choice.delta.content;
        if (choice.finish_reason) out.finish_reason = choice.finish_reason;
      }
    }
  } catch (err) {
    out.error = String(err && err.message ? err.message : err);
  }
  out.ids = out.ids.size;
  return out;
}

try {
  const result = streamOnly
    ? { stream: await streamed() }
    : { models: await listModels(), whole: await whole(), stream: await streamed() };
  process.stdout.write(JSON.stringify(result) + "\n");
} catch (err) {
  console.error(String(err && err.stack ? err.stack : err));
  process.exit(1);
}
