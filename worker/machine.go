package worker

// A lifecycle is a state machine written down. Its states and its events
// are enumerated types, and its step is a pure function from a state and
// an event to the next state and the actions its owner carries out, or a
// refusal: the event does not apply in that state and nothing changes.
// A transition to the same state with no actions is allowed but does
// nothing (a worker that comes up after its model failed, say).
//
// The owner keeps the state and drives the machine with fire, under its
// own lock. An action may find a fact that is itself an event (a fill
// that finds no minimum to start, a failure count that reaches the
// retry threshold): it reports it as a follow-up, which fire steps at
// once. A model's lifecycle (lifecycle.go, driven from
// model_lifecycle.go) is one such machine; its table test walks every
// state and event (lifecycle_test.go, with the checks of machine_test.go
// that any lifecycle can reuse).

// lifeState is a state of a lifecycle whose events are E and whose
// transitions carry actions A.
type lifeState[S any, E any, A any] interface {
	comparable
	// step is the transition function: the next state and the actions
	// of event e, or ok false when the state refuses e.
	step(e E) (next S, acts A, ok bool)
}

// maxFollowUps bounds a chain of follow-up events; the table test checks
// that no chain comes near it.
const maxFollowUps = 4

// fire steps *s through e, then through every follow-up that apply
// reports. apply carries out one transition's actions, with *s already
// the new state, and returns the follow-up event it found, if any. A
// transition that changes nothing is not applied, and a refused event
// changes nothing. fire reports whether e changed anything.
func fire[S lifeState[S, E, A], E any, A comparable](s *S, e E, apply func(A) (E, bool)) bool {
	var none A
	for n := 0; n <= maxFollowUps; n++ {
		next, acts, ok := (*s).step(e)
		if !ok || next == *s && acts == none {
			return n > 0
		}
		*s = next
		follow, more := apply(acts)
		if !more {
			return true
		}
		e = follow
	}
	return true
}

// acts reports whether event e would change anything in state s: it is
// neither refused nor a transition that does nothing.
func acts[S lifeState[S, E, A], E any, A comparable](s S, e E) bool {
	var none A
	next, a, ok := s.step(e)
	return ok && (next != s || a != none)
}
