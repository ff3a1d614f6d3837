// Command chatbench measures a generative model behind switchyard's OpenAI
// route, for issue 6's numbers:
//
//   - time to first byte of a chat answer of -tokens tokens, streamed
//     (stream: true, the first chunk event) and not streamed (the whole
//     chat.completion), the median of -runs runs each;
//   - tokens per second at each concurrency level of -concurrency: that
//     many clients each stream -requests answers one after the other; the
//     figure is all completion tokens (from each stream's usage chunk)
//     divided by the wall time of the level.
//
// Usage:
//
//	chatbench -url http://127.0.0.1:8080 -model chat [-tokens 200] [-runs 5]
//	          [-concurrency 1,8] [-requests 2] [-question "..."]
//
// It prints one line per figure and exits 1 when a request fails.
// bench/bench_chat.sh starts a server on the toy chat model and runs it.
package main
