package worker

import (
	"errors"
	"testing"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/message"
)

func TestGenerationOf(t *testing.T) {
	tests := []struct {
		name  string
		props []message.Prop
		want  *api.Generation
	}{
		{"nothing declared", []message.Prop{{Key: "rolling_batch", Value: "disable"}}, nil},
		{"all three", []message.Prop{{Key: "context_length", Value: "256"}, {Key: "supports_tools", Value: "true"},
			{Key: "max_choices", Value: "4"}}, &api.Generation{ContextLength: 256, SupportsTools: true, MaxChoices: 4}},
		{"no tools, choices default to one", []message.Prop{{Key: "supports_tools", Value: "false"}},
			&api.Generation{MaxChoices: 1}},
		{"values that do not parse are not declared", []message.Prop{{Key: "context_length", Value: "lots"},
			{Key: "max_choices", Value: "0"}, {Key: "supports_tools", Value: "maybe"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := generationOf(tt.props)
			if (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
				t.Errorf("generationOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestRegistryGeneration loads a worker that declares capabilities in its
// initialization reply: describe shows them and Generation returns them.
func TestRegistryGeneration(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.model(t, "gen", "minWorkers=1", "maxWorkers=1", "option.declare_context_length=128", "option.declare_supports_tools=true")
		r.model(t, "plain", "minWorkers=1", "maxWorkers=1")
		r.mustRegister(t, "gen")
		r.mustRegister(t, "plain")
		want := api.Generation{ContextLength: 128, SupportsTools: true, MaxChoices: 1}
		if got, err := r.Generation("gen"); err != nil || got != want {
			t.Errorf("Generation(gen) = %+v, %v; want %+v", got, err, want)
		}
		if rec, _ := r.Describe("gen"); rec.Generation == nil || *rec.Generation != want {
			t.Errorf("describe generation = %+v, want %+v", rec.Generation, want)
		}
		if got, err := r.Generation("plain"); err != nil || got != (api.Generation{}) || got.Choices() != 1 {
			t.Errorf("Generation(plain) = %+v, %v; want the zero value", got, err)
		}
		if rec, _ := r.Describe("plain"); rec.Generation != nil {
			t.Errorf("describe of a model that declared nothing has generation %+v", rec.Generation)
		}
		if _, err := r.Generation("nope"); !errors.Is(err, api.ErrModelNotFound) {
			t.Errorf("Generation(nope) = %v", err)
		}
	})
}
