"""Generative models: request schemas, answers, and the built-in handler.

* schemas: the chat, generation and completion request bodies
  (parse, parse_input, RequestError, Capabilities, fit_context).
* outputs: generation events (Piece, Done) turned into a JSON-lines stream
  or a whole answer, and the Outputs around them.
* toolcalls: tool calls found in generated text (the hermes format).
* prompts: chat messages and tools as a tokenizer's chat template takes them.
* backends: which backend a folder without a model.py gets, from
  option.rolling_batch.
* handler: the built-in handler (entry point "generative"), over
  hf_pipeline (a transformers pipeline) or vllm_backend (vLLM's engine).

A model's own handler may use schemas and outputs (the chat example does).
This part imports the djl part and the standard library only; of the
runtime, only the loader imports it.
"""
