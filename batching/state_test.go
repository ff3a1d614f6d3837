package batching

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/switchyard/switchyard/message"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

var errElsewhere = errors.New("answered elsewhere")

// spec describes a job for the state tables.
type spec struct {
	id       string
	gone     bool          // the client leaves after the push
	answered bool          // someone else answers it after the push
	ttl      time.Duration // deadline t0+ttl; 0 for none
}

func newTestJob(sp spec) (*Job, func()) {
	var deadline time.Time
	if sp.ttl != 0 {
		deadline = t0.Add(sp.ttl)
	}
	j := NewJob(sp.id, message.Input{}, t0, deadline)
	return j, func() { markGone(j) }
}

// markGone makes j's client leave as the first step of Job.Cancel does,
// before the queue takes the job out and answers it: the state must then
// find it gone wherever it sits.
func markGone(j *Job) {
	cause := ErrClientGone
	j.cause.Store(&cause)
}

// fill pushes a job for each spec at t0, then makes gone and answered come
// true. It returns the jobs by id.
func fill(t *testing.T, s *state, specs []spec) map[string]*Job {
	t.Helper()
	jobs := make(map[string]*Job)
	for _, sp := range specs {
		j, cancel := newTestJob(sp)
		if _, err := s.push(j, t0); err != nil {
			t.Fatalf("push %s: %v", sp.id, err)
		}
		if sp.answered {
			j.Fail(errElsewhere)
		}
		if sp.gone {
			cancel()
		}
		jobs[sp.id] = j
	}
	return jobs
}

func ids(jobs []*Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

// listIDs walks the state's list from the head.
func listIDs(s *state) []string {
	var out []string
	for e := s.head; e != nil; e = e.next {
		out = append(out, e.job.ID)
	}
	return out
}

func resultErr(j *Job) error {
	if !j.Answered() {
		return nil
	}
	_, err := j.Result()
	return err
}

func TestStateTake(t *testing.T) {
	tests := []struct {
		name      string
		specs     []spec
		limit     int
		at        time.Duration // take and hand out at t0+at
		want      []string
		wantLen   int
		wantStats Stats
		wantErrs  map[string]error // answers the queue gave
	}{
		{
			name:      "fifo up to the limit",
			specs:     []spec{{id: "a"}, {id: "b"}, {id: "c"}, {id: "d"}, {id: "e"}},
			limit:     3,
			want:      []string{"a", "b", "c"},
			wantLen:   2,
			wantStats: Stats{Pushed: 5, Dispatched: 3},
		},
		{
			name:      "limit above what is queued",
			specs:     []spec{{id: "a"}, {id: "b"}},
			limit:     8,
			want:      []string{"a", "b"},
			wantStats: Stats{Pushed: 2, Dispatched: 2},
		},
		{
			name:      "gone client dropped and not counted against the limit",
			specs:     []spec{{id: "a"}, {id: "b", gone: true}, {id: "c"}, {id: "d"}},
			limit:     2,
			want:      []string{"a", "c"},
			wantLen:   1,
			wantStats: Stats{Pushed: 4, Dropped: 1, Dispatched: 2},
			wantErrs:  map[string]error{"b": ErrClientGone},
		},
		{
			name:      "expired job answered",
			specs:     []spec{{id: "a", ttl: time.Second}, {id: "b", ttl: time.Minute}, {id: "c"}},
			limit:     4,
			at:        time.Second,
			want:      []string{"b", "c"},
			wantStats: Stats{Pushed: 3, Expired: 1, Dispatched: 2},
			wantErrs:  map[string]error{"a": ErrExpired},
		},
		{
			name:      "deadline not yet reached",
			specs:     []spec{{id: "a", ttl: time.Second}},
			limit:     1,
			at:        time.Second - 1,
			want:      []string{"a"},
			wantStats: Stats{Pushed: 1, Dispatched: 1},
		},
		{
			name:      "answered elsewhere skipped without a count",
			specs:     []spec{{id: "a", answered: true}, {id: "b"}},
			limit:     1,
			want:      []string{"b"},
			wantStats: Stats{Pushed: 2, Dispatched: 1},
			wantErrs:  map[string]error{"a": errElsewhere},
		},
		{
			name:      "gone and answered counts as answered",
			specs:     []spec{{id: "a", answered: true, gone: true}},
			limit:     1,
			want:      []string{},
			wantStats: Stats{Pushed: 1},
			wantErrs:  map[string]error{"a": errElsewhere},
		},
		{
			name:      "nothing alive",
			specs:     []spec{{id: "a", gone: true}, {id: "b", ttl: 1}},
			limit:     4,
			at:        time.Hour,
			want:      []string{},
			wantStats: Stats{Pushed: 2, Dropped: 1, Expired: 1},
			wantErrs:  map[string]error{"a": ErrClientGone, "b": ErrExpired},
		},
		{
			name:      "empty queue",
			limit:     4,
			want:      []string{},
			wantStats: Stats{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newState(10)
			jobs := fill(t, &s, tt.specs)
			now := t0.Add(tt.at)
			s.take(now, tt.limit)
			got := s.handOut(now)
			if !slices.Equal(ids(got), tt.want) {
				t.Errorf("batch = %v, want %v", ids(got), tt.want)
			}
			if s.queued != tt.wantLen || s.taken != 0 {
				t.Errorf("queued, taken = %d, %d, want %d, 0", s.queued, s.taken, tt.wantLen)
			}
			if s.stats != tt.wantStats {
				t.Errorf("stats = %+v, want %+v", s.stats, tt.wantStats)
			}
			checkAnswers(t, jobs, tt.wantErrs)
		})
	}
}

// checkAnswers checks that the jobs in wantErrs hold those errors and that
// no other job was answered: handed-out and still-queued jobs have no answer.
func checkAnswers(t *testing.T, jobs map[string]*Job, wantErrs map[string]error) {
	t.Helper()
	for id, j := range jobs {
		err, ok := wantErrs[id]
		switch {
		case ok && !errors.Is(resultErr(j), err):
			t.Errorf("job %s answer = %v, want %v", id, resultErr(j), err)
		case !ok && j.Answered():
			t.Errorf("job %s answered with %v, want no answer", id, resultErr(j))
		}
	}
}

func TestStatePush(t *testing.T) {
	tests := []struct {
		name      string
		capacity  int
		specs     []spec        // queued first
		push      spec          // then this one
		at        time.Duration // pushed at t0+at
		closed    bool
		wantErr   error
		wantLen   int
		wantStats Stats
		wantErrs  map[string]error
	}{
		{
			name:      "room left",
			capacity:  2,
			specs:     []spec{{id: "a"}},
			push:      spec{id: "b"},
			wantLen:   2,
			wantStats: Stats{Pushed: 2},
		},
		{
			name:      "full",
			capacity:  2,
			specs:     []spec{{id: "a"}, {id: "b"}},
			push:      spec{id: "c"},
			wantErr:   ErrQueueFull,
			wantLen:   2,
			wantStats: Stats{Pushed: 2, Rejected: 1},
		},
		{
			name:      "full but the head expired",
			capacity:  2,
			specs:     []spec{{id: "a", ttl: time.Second}, {id: "b"}},
			push:      spec{id: "c"},
			at:        time.Second,
			wantLen:   2,
			wantStats: Stats{Pushed: 3, Expired: 1},
			wantErrs:  map[string]error{"a": ErrExpired},
		},
		{
			name:      "full but the head client left",
			capacity:  2,
			specs:     []spec{{id: "a", gone: true}, {id: "b", answered: true}},
			push:      spec{id: "c"},
			wantLen:   1,
			wantStats: Stats{Pushed: 3, Dropped: 1},
			wantErrs:  map[string]error{"a": ErrClientGone, "b": errElsewhere},
		},
		{
			name:      "full with a dead job behind a live head",
			capacity:  2,
			specs:     []spec{{id: "a"}, {id: "b", ttl: time.Second}},
			push:      spec{id: "c"},
			at:        time.Second,
			wantErr:   ErrQueueFull,
			wantLen:   2,
			wantStats: Stats{Pushed: 2, Rejected: 1},
		},
		{
			name:      "client already gone",
			capacity:  2,
			push:      spec{id: "a", gone: true},
			wantErr:   ErrClientGone,
			wantStats: Stats{Dropped: 1},
		},
		{
			name:     "closed",
			capacity: 2,
			push:     spec{id: "a"},
			closed:   true,
			wantErr:  ErrClosed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newState(tt.capacity)
			jobs := fill(t, &s, tt.specs)
			if tt.closed {
				s.close(ErrClosed)
			}
			j, cancel := newTestJob(tt.push)
			defer cancel()
			if tt.push.gone {
				cancel()
			}
			_, err := s.push(j, t0.Add(tt.at))
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("push = %v, want %v", err, tt.wantErr)
			}
			if j.Answered() {
				t.Errorf("push answered the job it was given: %v", resultErr(j))
			}
			if s.queued != tt.wantLen {
				t.Errorf("queued = %d, want %d", s.queued, tt.wantLen)
			}
			if s.stats != tt.wantStats {
				t.Errorf("stats = %+v, want %+v", s.stats, tt.wantStats)
			}
			checkAnswers(t, jobs, tt.wantErrs)
		})
	}
}

func TestStateCapacity(t *testing.T) {
	tests := []struct {
		name    string
		initial int
		queued  int // jobs pushed before the change
		setTo   int
		taken   int // jobs handed out after the change
		tries   int // pushes tried after that
		wantOK  int // of which accepted
		wantCap int
	}{
		{name: "shrink keeps queued jobs", initial: 4, queued: 4, setTo: 2, tries: 1, wantOK: 0, wantCap: 2},
		{name: "shrink refuses until below", initial: 4, queued: 4, setTo: 2, taken: 3, tries: 3, wantOK: 1, wantCap: 2},
		{name: "grow takes more", initial: 1, queued: 1, setTo: 3, tries: 3, wantOK: 2, wantCap: 3},
		{name: "below one counts as one", initial: 0, setTo: -5, tries: 2, wantOK: 1, wantCap: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newState(tt.initial)
			for i := range tt.queued {
				fill(t, &s, []spec{{id: string(rune('a' + i))}})
			}
			s.setCapacity(tt.setTo)
			if s.queued != tt.queued {
				t.Fatalf("queued after the change = %d, want %d", s.queued, tt.queued)
			}
			s.take(t0, tt.taken)
			s.handOut(t0)
			ok := 0
			for range tt.tries {
				j, cancel := newTestJob(spec{id: "new"})
				defer cancel()
				if _, err := s.push(j, t0); err == nil {
					ok++
				}
			}
			if ok != tt.wantOK || s.capacity != tt.wantCap {
				t.Errorf("accepted %d with capacity %d, want %d with %d", ok, s.capacity, tt.wantOK, tt.wantCap)
			}
		})
	}
}

func TestStateFillingBatch(t *testing.T) {
	tests := []struct {
		name      string
		limit     int
		act       func(s *state, e map[string]*entry)
		wantOrder []string // list order after act
		wantTaken int
		wantLen   int
	}{
		{
			name:      "take keeps taken jobs at the front",
			limit:     2,
			act:       func(*state, map[string]*entry) {},
			wantOrder: []string{"a", "b", "c", "d"},
			wantTaken: 2,
			wantLen:   2,
		},
		{
			name:      "requeue puts the batch back in front, in order",
			limit:     3,
			act:       func(s *state, _ map[string]*entry) { s.requeue() },
			wantOrder: []string{"a", "b", "c", "d"},
			wantLen:   4,
		},
		{
			name:      "client leaves from the batch",
			limit:     2,
			act:       func(s *state, e map[string]*entry) { s.cancel(e["a"], ErrClientGone) },
			wantOrder: []string{"b", "c", "d"},
			wantTaken: 1,
			wantLen:   2,
		},
		{
			name:      "client leaves from the queue",
			limit:     2,
			act:       func(s *state, e map[string]*entry) { s.cancel(e["d"], ErrClientGone) },
			wantOrder: []string{"a", "b", "c"},
			wantTaken: 2,
			wantLen:   1,
		},
		{
			name:  "client leaves at the cursor, then more is taken",
			limit: 2,
			act: func(s *state, e map[string]*entry) {
				s.cancel(e["c"], ErrClientGone)
				s.take(t0, 3)
			},
			wantOrder: []string{"a", "b", "d"},
			wantTaken: 3,
		},
		{
			name:  "a second cancel does nothing",
			limit: 2,
			act: func(s *state, e map[string]*entry) {
				s.cancel(e["c"], ErrClientGone)
				s.cancel(e["c"], ErrClientGone)
			},
			wantOrder: []string{"a", "b", "d"},
			wantTaken: 2,
			wantLen:   1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newState(10)
			entries := make(map[string]*entry)
			for _, id := range []string{"a", "b", "c", "d"} {
				j, cancel := newTestJob(spec{id: id})
				defer cancel()
				e, err := s.push(j, t0)
				if err != nil {
					t.Fatal(err)
				}
				entries[id] = e
			}
			s.take(t0, tt.limit)
			tt.act(&s, entries)
			if got := listIDs(&s); !slices.Equal(got, tt.wantOrder) {
				t.Errorf("list = %v, want %v", got, tt.wantOrder)
			}
			if s.taken != tt.wantTaken || s.queued != tt.wantLen {
				t.Errorf("taken, queued = %d, %d, want %d, %d", s.taken, s.queued, tt.wantTaken, tt.wantLen)
			}
		})
	}
}

func TestStateClose(t *testing.T) {
	s := newState(10)
	jobs := fill(t, &s, []spec{{id: "a"}, {id: "b"}, {id: "c", answered: true}, {id: "d"}})
	s.take(t0, 1)
	held := map[*Job]*entry{}
	for e := s.head; e != nil; e = e.next {
		e.job.entry = e
		held[e.job] = e
	}
	if n := s.close(ErrClosed); n != 3 {
		t.Errorf("close answered %d jobs, want 3 (the taken one and two queued)", n)
	}
	for j, e := range held {
		if j.entry != nil || !e.out {
			t.Errorf("job %s still holds its place after close", j.ID)
		}
	}
	checkAnswers(t, jobs, map[string]error{"a": ErrClosed, "b": ErrClosed, "c": errElsewhere, "d": ErrClosed})
	if s.head != nil || s.queued != 0 || s.taken != 0 {
		t.Errorf("closed state still holds jobs: %v", listIDs(&s))
	}
	if n := s.close(errElsewhere); n != 0 || s.closeErr != ErrClosed {
		t.Errorf("second close = %d, %v; want 0 and the first error kept", n, s.closeErr)
	}
}
