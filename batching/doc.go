// Package batching holds one model's bounded job queue and the rules that turn
// queued jobs into batches for the model's workers.
//
// Every model has one [Queue], shared by all of its workers. The front-end
// pushes accepted requests as [Job] values; a full queue refuses at once with
// [ErrQueueFull]. Workers pull: [Queue.Next] hands a worker what is already
// queued, up to its batch size, and then waits for more until the batch delay
// has passed since the first job was taken. Only one batch per queue is being
// filled at a time, so two idle workers never split a trickle of requests into
// two half-empty batches that both wait out the delay.
//
// A job whose client has gone, or whose deadline has passed, is answered by
// the queue (with [ErrClientGone] or [ErrExpired]) and never reaches a worker.
// Every job gets exactly one answer.
//
// The package is split the way etcd's raft splits RawNode from Node: a pure,
// synchronous state type that holds the jobs and takes every decision, and a
// thin driver that adds blocking, timers and the clock. [ScaleUp] is the pure
// rule the model registry uses to add temporary workers; a temporary worker
// is released when [Queue.Next], called with a deadline of its last work plus
// max_idle_time, gives it nothing.
//
// The package has no HTTP, starts no processes and imports no other package of
// this module.
package batching
