package worker

import (
	"strconv"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/message"
)

// Properties of a worker's initialization reply in which a generative
// handler declares what it can honour (docs/protocol.md).
const (
	propContextLength = "context_length"
	propSupportsTools = "supports_tools"
	propMaxChoices    = "max_choices"
)

// generationOf reads the declared capabilities from a worker's
// initialization reply; nil when the handler declared none of them. A value
// that does not parse counts as not declared.
func generationOf(props []message.Prop) *api.Generation {
	var g api.Generation
	declared := false
	for _, p := range props {
		switch p.Key {
		case propContextLength:
			if n, err := strconv.Atoi(p.Value); err == nil && n > 0 {
				g.ContextLength, declared = n, true
			}
		case propSupportsTools:
			if b, err := strconv.ParseBool(p.Value); err == nil {
				g.SupportsTools, declared = b, true
			}
		case propMaxChoices:
			if n, err := strconv.Atoi(p.Value); err == nil && n > 0 {
				g.MaxChoices, declared = n, true
			}
		}
	}
	if !declared {
		return nil
	}
	g.MaxChoices = g.Choices()
	return &g
}

// setGeneration records what the model's latest loaded worker declared; a
// worker that declared nothing leaves the record as it was.
func (m *Model) setGeneration(g *api.Generation) {
	if g == nil {
		return
	}
	m.mu.Lock()
	m.gen = g
	m.mu.Unlock()
}

// generation returns the declared capabilities, the zero value when no
// worker declared any.
func (m *Model) generation() api.Generation {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gen == nil {
		return api.Generation{}
	}
	return *m.gen
}

// Generation returns what the named model's handler declared it can honour
// (api.Generation's zero value when it declared nothing), or
// api.ErrModelNotFound.
func (r *Registry) Generation(name string) (api.Generation, error) {
	m, err := r.lookup(name)
	if err != nil {
		return api.Generation{}, err
	}
	return m.generation(), nil
}
