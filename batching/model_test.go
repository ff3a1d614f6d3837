package batching

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/switchyard/switchyard/message"
)

// refQueue is a plain reference model of state: a slice whose taken jobs
// form a prefix. It is slow and obvious, which is the point.
type refQueue struct {
	capacity int
	closed   bool
	items    []refItem
	stats    Stats
}

type refItem struct {
	job   *Job
	taken bool
}

func (r *refQueue) queued() int {
	n := 0
	for _, it := range r.items {
		if !it.taken {
			n++
		}
	}
	return n
}

func (r *refQueue) firstQueued() int {
	for i, it := range r.items {
		if !it.taken {
			return i
		}
	}
	return len(r.items)
}

// dead answers and removes item i when it must not be dispatched.
func (r *refQueue) dead(i int, now time.Time) bool {
	j := r.items[i].job
	switch {
	case j.Answered():
	case j.Gone():
		if j.Fail(ErrClientGone) {
			r.stats.Dropped++
		}
	case j.Expired(now):
		if j.Fail(ErrExpired) {
			r.stats.Expired++
		}
	default:
		return false
	}
	r.items = slices.Delete(r.items, i, i+1)
	return true
}

func (r *refQueue) push(j *Job, now time.Time) error {
	if r.closed {
		return ErrClosed
	}
	if j.Gone() {
		r.stats.Dropped++
		return ErrClientGone
	}
	for i := r.firstQueued(); i < len(r.items); {
		if !r.dead(i, now) {
			break
		}
	}
	if r.queued() >= r.capacity {
		r.stats.Rejected++
		return ErrQueueFull
	}
	r.items = append(r.items, refItem{job: j})
	r.stats.Pushed++
	return nil
}

func (r *refQueue) take(now time.Time, limit int) {
	for i := r.firstQueued(); i < len(r.items) && len(r.items)-r.queued() < limit; {
		if !r.dead(i, now) {
			r.items[i].taken = true
			i++
		}
	}
}

func (r *refQueue) handOut(now time.Time) []*Job {
	var out []*Job
	for len(r.items) > 0 && r.items[0].taken {
		if !r.dead(0, now) {
			out = append(out, r.items[0].job)
			r.items = r.items[1:]
		}
	}
	r.stats.Dispatched += uint64(len(out))
	return out
}

func (r *refQueue) requeue() {
	for i := range r.items {
		r.items[i].taken = false
	}
}

func (r *refQueue) clientGone(j *Job) {
	i := slices.IndexFunc(r.items, func(it refItem) bool { return it.job == j })
	if i < 0 {
		return
	}
	r.items = slices.Delete(r.items, i, i+1)
	if j.Fail(ErrClientGone) {
		r.stats.Dropped++
	}
}

func (r *refQueue) close(err error) int {
	if r.closed {
		return 0
	}
	r.closed = true
	n := 0
	for _, it := range r.items {
		if it.job.Fail(err) {
			n++
		}
	}
	r.items = nil
	return n
}

// twin is one job as both models see it: a job each, with the same story.
type twin struct {
	real, ref *Job
	entry     *entry
}

// TestStateMatchesModel runs random operations on state and on refQueue and
// checks after each that both hold the same jobs in the same order with the
// same counters, and answer the same way.
func TestStateMatchesModel(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			m := newModelRun(t, seed)
			for step := range 3000 {
				op := m.step()
				if err := m.compare(); err != nil {
					t.Fatalf("step %d (%s): %v", step, op, err)
				}
			}
			m.finish()
		})
	}
}

type modelRun struct {
	t      *testing.T
	rng    *rand.Rand
	now    time.Time
	s      state
	r      refQueue
	twins  []*twin
	out    []string // ids handed out by state
	refOut []string // ids handed out by the model
	nextID int
}

func newModelRun(t *testing.T, seed uint64) *modelRun {
	return &modelRun{
		t: t, rng: rand.New(rand.NewPCG(seed, 7)), now: t0,
		s: newState(4), r: refQueue{capacity: 4},
	}
}

func (m *modelRun) step() string {
	switch k := m.rng.IntN(100); {
	case k < 35:
		return m.push()
	case k < 45:
		return m.leave()
	case k < 50:
		return m.answerElsewhere()
	case k < 65:
		limit := 1 + m.rng.IntN(4)
		m.s.take(m.now, limit)
		m.r.take(m.now, limit)
		return fmt.Sprint("take ", limit)
	case k < 78:
		m.out = append(m.out, ids(m.s.handOut(m.now))...)
		m.refOut = append(m.refOut, ids(m.r.handOut(m.now))...)
		return "handOut"
	case k < 83:
		m.s.requeue()
		m.r.requeue()
		return "requeue"
	case k < 88:
		n := m.rng.IntN(7)
		m.s.setCapacity(n)
		m.r.capacity = max(n, 1)
		return fmt.Sprint("setCapacity ", n)
	case k < 99:
		m.now = m.now.Add(time.Duration(m.rng.IntN(3)) * time.Second)
		return "tick"
	default:
		return m.close()
	}
}

func (m *modelRun) push() string {
	m.nextID++
	id := fmt.Sprint("j", m.nextID)
	var deadline time.Time
	if m.rng.IntN(4) == 0 {
		deadline = m.now.Add(time.Duration(m.rng.IntN(6)) * time.Second)
	}
	tw := &twin{}
	tw.real = NewJob(id, message.Input{}, m.now, deadline)
	tw.ref = NewJob(id, message.Input{}, m.now, deadline)
	if m.rng.IntN(10) == 0 {
		markGone(tw.real)
		markGone(tw.ref)
	}
	e, err := m.s.push(tw.real, m.now)
	refErr := m.r.push(tw.ref, m.now)
	if !sameErr(err, refErr) {
		m.t.Fatalf("push %s = %v, model says %v", id, err, refErr)
	}
	tw.entry = e
	m.twins = append(m.twins, tw)
	return "push " + id
}

// leave makes a random client leave. Half the time the job leaves the list
// at once (as Job.Cancel through its Queue does); otherwise take or push
// finds it later.
func (m *modelRun) leave() string {
	tw := m.pick()
	if tw == nil {
		return "leave none"
	}
	markGone(tw.real)
	markGone(tw.ref)
	if m.rng.IntN(2) == 0 && tw.entry != nil {
		m.s.cancel(tw.entry, ErrClientGone)
		m.r.clientGone(tw.ref)
	}
	return "leave " + tw.real.ID
}

func (m *modelRun) answerElsewhere() string {
	tw := m.pick()
	if tw == nil {
		return "answer none"
	}
	tw.real.Fail(errElsewhere)
	tw.ref.Fail(errElsewhere)
	return "answer " + tw.real.ID
}

func (m *modelRun) close() string {
	n, refN := m.s.close(ErrClosed), m.r.close(ErrClosed)
	if n != refN {
		m.t.Fatalf("close answered %d, model %d", n, refN)
	}
	if err := m.compare(); err != nil {
		m.t.Fatalf("close: %v", err)
	}
	m.finish()
	m.s, m.r, m.twins = newState(4), refQueue{capacity: 4}, nil
	return "close, then a fresh queue"
}

func (m *modelRun) pick() *twin {
	if len(m.twins) == 0 {
		return nil
	}
	return m.twins[m.rng.IntN(len(m.twins))]
}

func (m *modelRun) compare() error {
	got := listIDs(&m.s)
	var want []string
	for _, it := range m.r.items {
		want = append(want, it.job.ID)
	}
	switch {
	case !slices.Equal(got, want):
		return fmt.Errorf("list %v, model %v", got, want)
	case m.s.queued != m.r.queued() || m.s.taken != len(m.r.items)-m.r.queued():
		return fmt.Errorf("queued, taken = %d, %d; model %d, %d", m.s.queued, m.s.taken, m.r.queued(), len(m.r.items)-m.r.queued())
	case m.s.stats != m.r.stats:
		return fmt.Errorf("stats %+v, model %+v", m.s.stats, m.r.stats)
	case !slices.Equal(m.out, m.refOut):
		return fmt.Errorf("handed out %v, model %v", m.out, m.refOut)
	}
	return m.compareAnswers()
}

func (m *modelRun) compareAnswers() error {
	for _, tw := range m.twins {
		if tw.real.Answered() != tw.ref.Answered() || !sameErr(resultErr(tw.real), resultErr(tw.ref)) {
			return fmt.Errorf("job %s answer %v, model %v", tw.real.ID, resultErr(tw.real), resultErr(tw.ref))
		}
	}
	return nil
}

// finish checks that every job handed out was handed out once and had no
// answer yet, so the worker's answer is its only one.
func (m *modelRun) finish() {
	seen := make(map[string]bool)
	for _, id := range m.out {
		if seen[id] {
			m.t.Errorf("job %s handed out twice", id)
		}
		seen[id] = true
	}
	for _, tw := range m.twins {
		if seen[tw.real.ID] && !tw.real.Finish(&message.Response{Code: 200}) && !errors.Is(resultErr(tw.real), errElsewhere) {
			m.t.Errorf("handed-out job %s already answered by the queue: %v", tw.real.ID, resultErr(tw.real))
		}
	}
}

func sameErr(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return errors.Is(a, b) || errors.Is(b, a)
}
