package djl

import (
	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/frontend/dialect"
	"github.com/switchyard/switchyard/frontend/genstream"
)

// decodeTarget decodes POST /invocations: the model by SageMaker's rule
// (dialect.TargetModel).
func (d *Dialect) decodeTarget(req dialect.Request) (dialect.Job, error) {
	model, err := dialect.TargetModel(req, d.host.Models)
	if err != nil {
		return dialect.Job{}, err
	}
	return dialect.Job{Model: model, Input: req.Input, Reply: reply{}}, nil
}

// decodeNamed decodes POST /models/{name}/invoke and
// /predictions/{name}[/{version}]: the model the path names.
func (d *Dialect) decodeNamed(req dialect.Request) (dialect.Job, error) {
	a := req.Args
	if a.Version != nil && !dialect.ValidModelName(a.Version) {
		return dialect.Job{}, dialect.BadRequestf("Invalid model version %s.", api.Quote(a.Version))
	}
	name := string(a.Name)
	if err := dialect.CheckModelName(name); err != nil {
		return dialect.Job{}, err
	}
	return dialect.Job{Model: name, Input: req.Input, Reply: reply{}}, nil
}

// reply writes the worker's answer as it is; a JSON-lines stream goes out
// as server-sent events to a client that asks for them (genstream.Plain).
type reply struct{}

func (reply) Whole(a dialect.Answer) error {
	a.Write(a.Body)
	return nil
}

func (reply) Stream(a dialect.Answer, s dialect.Stream) error {
	f, sse := genstream.Plain(a.Props, genstream.AcceptsEventStream(a.Header("accept")))
	if err := s.Start(f); err != nil {
		return err
	}
	h := &a.Ctx.Response.Header
	dialect.CopyProps(h, a.Props)
	if sse {
		genstream.SetEventStream(h)
	}
	return nil
}
