package worker

import (
	"reflect"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
)

// TestAdapterSetEvents: a worker's "loaded:a,evicted:b" report is applied
// in order, each event carrying the number on the device right after it;
// unknown names and malformed parts are skipped; used stamps lastUsed; put
// keeps where an adapter is when its folder is the same.
func TestAdapterSetEvents(t *testing.T) {
	s := newAdapterSet()
	for _, n := range []string{"a", "b", "c"} {
		s.put(api.AdapterRecord{Name: n, Src: "/srv/" + n})
	}
	got := s.applyEvents("loaded:a, loaded:b,evicted:a,loaded:c,loaded:ghost,nonsense,sideways:b")
	want := []adapterEvent{{"loaded", "a", 1}, {"loaded", "b", 2}, {"evicted", "a", 1}, {"loaded", "c", 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events %+v, want %+v", got, want)
	}
	if n := s.loadedCount(); n != 2 {
		t.Errorf("%d loaded, want 2", n)
	}
	at := time.Unix(1700000000, 0)
	s.used("b", at)
	s.used("ghost", at)
	s.put(api.AdapterRecord{Name: "b", Src: "/srv/b", Pin: true})
	if r, _ := s.get("b"); !r.Loaded || !r.LastUsed.Equal(at) || !r.Pin {
		t.Errorf("b after use and a re-put with the same folder: %+v", r)
	}
	s.put(api.AdapterRecord{Name: "c", Src: "/srv/other"})
	if r, _ := s.get("c"); r.Loaded {
		t.Errorf("c from another folder keeps the old one's place: %+v", r)
	}
	if s.has("ghost") {
		t.Error("used registered an unknown adapter")
	}
}
