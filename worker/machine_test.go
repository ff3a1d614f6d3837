package worker

import (
	"fmt"
	"slices"
	"testing"
)

// Checks that any lifecycle's table test can use (machine.go), and the
// tests of fire on a lifecycle of three states.

// row is one transition a lifecycle's table allows: in the state the row
// is listed under, event on leads to next, with acts.
type row[S, E, A any] struct {
	on   E
	next S
	acts A
}

// tableMismatches walks every pair of states and events and compares step
// with the table: the rows of want(s) are the events s allows, each with
// its next state and actions, and s must refuse every other event. It
// returns one line per difference, and one per event listed twice.
func tableMismatches[S, E, A comparable](states []S, events []E, step func(S, E) (S, A, bool), want func(S) []row[S, E, A]) []string {
	var out []string
	for _, s := range states {
		rows := map[E]row[S, E, A]{}
		for _, r := range want(s) {
			if _, dup := rows[r.on]; dup {
				out = append(out, fmt.Sprintf("%v: %v is listed twice", s, r.on))
			}
			rows[r.on] = r
		}
		for _, e := range events {
			next, acts, ok := step(s, e)
			r, allowed := rows[e]
			switch {
			case ok && !allowed:
				out = append(out, fmt.Sprintf("%v --%v--> %v [%v]: allowed, but the table refuses it", s, e, next, acts))
			case !ok && allowed:
				out = append(out, fmt.Sprintf("%v --%v-->: refused, but the table says %v [%v]", s, e, r.next, r.acts))
			case ok && (next != r.next || acts != r.acts):
				out = append(out, fmt.Sprintf("%v --%v--> %v [%v], but the table says %v [%v]", s, e, next, acts, r.next, r.acts))
			}
		}
	}
	return out
}

// reachable returns the states that some sequence of events leads to from
// the given ones.
func reachable[S lifeState[S, E, A], E any, A any](from []S, events []E) []S {
	seen := slices.Clone(from)
	for i := 0; i < len(seen); i++ {
		for _, e := range events {
			if next, _, ok := seen[i].step(e); ok && !slices.Contains(seen, next) {
				seen = append(seen, next)
			}
		}
	}
	return seen
}

// door is a lifecycle of three states for the tests of fire: push opens a
// closed door and closes an open one; lock locks a closed door, and a
// locked door refuses push. Opening rings (a follow-up: ring), and a ring
// on an open door does nothing.
type door uint8

const (
	closed door = iota
	open
	locked
)

type doorEvent uint8

const (
	push doorEvent = iota
	lock
	ring
)

func (d door) step(e doorEvent) (door, string, bool) {
	switch {
	case d == closed && e == push:
		return open, "open", true
	case d == open && e == push:
		return closed, "close", true
	case d == closed && e == lock:
		return locked, "lock", true
	case d == open && e == ring:
		return open, "", true
	}
	return d, "", false
}

func TestFire(t *testing.T) {
	tests := []struct {
		from    door
		on      doorEvent
		want    door
		applied []string
		changed bool
	}{
		{closed, push, open, []string{"open"}, true},
		{open, push, closed, []string{"close"}, true},
		{locked, push, locked, nil, false}, // refused
		{open, ring, open, nil, false},     // allowed, does nothing
		{closed, lock, locked, []string{"lock"}, true},
	}
	for _, tt := range tests {
		s := tt.from
		var applied []string
		changed := fire(&s, tt.on, func(a string) (doorEvent, bool) {
			applied = append(applied, a)
			return ring, a == "open" // opening rings
		})
		if s != tt.want || !slices.Equal(applied, tt.applied) || changed != tt.changed {
			t.Errorf("fire(%v, %v) = %v, applied %q, changed %v; want %v, %q, %v", tt.from, tt.on, s, applied, changed, tt.want, tt.applied, tt.changed)
		}
	}
}

// TestFireBoundsFollowUps stops a chain of follow-ups that never ends.
func TestFireBoundsFollowUps(t *testing.T) {
	s, n := closed, 0
	fire(&s, push, func(string) (doorEvent, bool) { n++; return push, true })
	if n != maxFollowUps+1 {
		t.Errorf("applied %d transitions, want %d", n, maxFollowUps+1)
	}
}

func TestTableMismatches(t *testing.T) {
	events := []doorEvent{push, lock, ring}
	want := func(d door) []row[door, doorEvent, string] {
		switch d {
		case closed:
			return []row[door, doorEvent, string]{{push, open, "open"}, {lock, locked, "lock"}}
		case open:
			return []row[door, doorEvent, string]{{push, closed, "close"}, {ring, open, ""}}
		}
		return nil
	}
	states := []door{closed, open, locked}
	if bad := tableMismatches(states, events, door.step, want); len(bad) > 0 {
		t.Fatalf("the door's own table: %q", bad)
	}
	unlocking := func(d door, e doorEvent) (door, string, bool) {
		if d == locked && e == push {
			return open, "open", true
		}
		return d.step(e)
	}
	if bad := tableMismatches(states, events, unlocking, want); len(bad) != 1 {
		t.Errorf("a locked door that opens: %q, want one difference", bad)
	}
	if got := reachable([]door{open}, events); !slices.Equal(got, []door{open, closed, locked}) {
		t.Errorf("reachable from open: %v", got)
	}
}
