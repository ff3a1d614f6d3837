"""The built-in Hugging Face handler: model folders with no model.py, on transformers.

* loading: where the model's files are, its task, dtype and device; the
  Hub is never contacted.
* taskinput, tasks, extractive_qa: the non-generative tasks, one model call
  per dynamic batch, answered in DJL's shapes.
* causal, generate, continuous: causal LMs under the generative schemas,
  with model.generate (rolling_batch=disable) or transformers' continuous
  batching (rolling_batch=auto).
* handler: the entry point that picks one of them.

This part imports the generative and djl parts and the standard library at
module level (torch and transformers where they are used); of the runtime,
only the loader imports it.
"""
