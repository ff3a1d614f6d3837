// Package dialect is the contract between the front-end's core (package
// frontend) and the API dialects it speaks: DJL's and SageMaker's hosting
// and management API (package djl), OpenAI's (openai), the AWS runtime APIs
// (aws) and KServe's health routes (kserve). Each dialect is one package
// that imports this one and no other dialect; the core imports them all and
// lists them, one line each, in its route table.
//
// The core owns the listeners, the framing guard, the wait list, the
// streams and the one function that turns an error into a status. A dialect
// owns its paths and its shapes, through the values and interfaces defined
// here:
//
//   - [Dialect] finds the [Route] of a request path.
//   - A Route says which listener serves it and which methods it takes, and
//     either answers at once (Serve) or, for an inference route, decodes the
//     request into the core's job description (Decode: a [Job]).
//   - The Job's [Reply] writes the worker's answer: whole, or streamed
//     through a [Framer] once the core's [Stream] is started.
//   - A Route's WriteError writes an error answer in the dialect's shape;
//     without one the core writes switchyard's own ([Problem]).
//
// Besides the contract the package holds what several dialects share: the
// errors meant for the client ([BadRequest], [WorkerError]), JSON answers
// and the copy of a worker's properties as headers, and the choice of a
// model by /invocations' rule ([TargetModel]).
package dialect
