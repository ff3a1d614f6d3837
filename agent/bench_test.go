package agent

import "testing"

// BenchmarkInvocation is one invocation's cost in the agent itself: two
// Converse calls and one InvokeEndpoint through the real SDK clients and
// HTTP, against the fake services, which answer at once.
func BenchmarkInvocation(b *testing.B) {
	for _, streamed := range []bool{false, true} {
		b.Run(map[bool]string{false: "Converse", true: "ConverseStream"}[streamed], func(b *testing.B) {
			a := newFakeCloud(b).agent(b, "classification")
			emit := func(string) error { return nil }
			for b.Loop() {
				var err error
				if streamed {
					_, err = a.Stream(b.Context(), "Which language is 'Hallo'?", emit)
				} else {
					_, err = a.Run(b.Context(), "Which language is 'Hallo'?")
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
