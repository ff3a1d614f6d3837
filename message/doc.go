// Package message holds the request and answer types every layer shares: a
// request as a worker receives it ([Input]: properties and named content),
// a worker's answer ([Response]) and a streamed answer body ([Stream]).
//
// The front-end builds an [Input] from an HTTP request, the queue carries it
// inside a job, the wire codec writes it in the worker protocol's frames, and
// the reply reader turns frames back into a [Response]. The package is a
// leaf: it imports nothing of this module, so the codec and the process
// layer need not import the queue.
package message
