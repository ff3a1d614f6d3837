package aws

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/frontend/awsapi"
	"github.com/switchyard/switchyard/frontend/dialect"
	"github.com/switchyard/switchyard/message"
)

// decodeConverse decodes Converse.
func (d *Dialect) decodeConverse(req dialect.Request) (dialect.Job, error) {
	return d.decodeChat(req, false, converseReply{})
}

// decodeConverseStream decodes ConverseStream.
func (d *Dialect) decodeConverseStream(req dialect.Request) (dialect.Job, error) {
	return d.decodeChat(req, true, converseStreamReply{})
}

// decodeChat picks a Converse request's model and turns its body into a
// chat request.
func (d *Dialect) decodeChat(req dialect.Request, stream bool, r dialect.Reply) (dialect.Job, error) {
	in := req.Input
	model, err := d.converseModel(string(req.Args.Name), &in)
	if err != nil {
		return dialect.Job{}, err
	}
	if err := d.chatInput(model, &in, stream); err != nil {
		return dialect.Job{Model: model}, err
	}
	return dialect.Job{Model: model, Input: in, Reply: r}, nil
}

// converseModel picks Converse's model from the modelId: the model an
// alias of model_aliases names, else the first of awsapi.ModelCandidates
// that is registered, or that is a LoRA adapter (its model then runs it,
// the adapter named in in).
func (d *Dialect) converseModel(modelID string, in *message.Input) (string, error) {
	for _, c := range awsapi.ModelCandidates(d.aliases.Resolve(modelID)) {
		if dialect.HasModel(d.models, c) {
			return c, nil
		}
		if base, ok := dialect.AsAdapter(d.models, c, in); ok {
			return base, nil
		}
	}
	return "", fmt.Errorf("%w: %s", api.ErrModelNotFound, modelID)
}

// chatInput turns the job's Converse body into a chat request, and refuses
// tools the model did not declare it can call.
func (d *Dialect) chatInput(model string, in *message.Input, stream bool) error {
	chat, err := awsapi.ChatFromConverse(in.Content[0].Value, stream)
	if err != nil {
		return dialect.BadRequest(err.Error())
	}
	if chat.Tools {
		g, err := d.models.Generation(model)
		if err != nil {
			return err
		}
		if !g.SupportsTools {
			return dialect.BadRequestf("toolConfig: model %q does not support tool use: its handler did not declare supports_tools.", model)
		}
	}
	in.Content[0].Value = chat.Body
	for i := range in.Props {
		if in.Props[i].Key == "content-type" {
			in.Props[i].Value = dialect.ContentTypeJSON
		}
	}
	return nil
}

// converseReply answers Converse from a model's chat.completion, or from
// its streamed generation, which it collects into one answer.
type converseReply struct{}

func (converseReply) Whole(a dialect.Answer) error { return writeConverse(a, false) }

// maxFolded bounds the streamed answer a Converse request collects.
const maxFolded = 16 << 20

// Stream answers a Converse request whose model streamed: the lines are
// collected into one Converse answer. A stream that breaks is an error.
func (converseReply) Stream(a dialect.Answer, s dialect.Stream) error {
	r := &replyFolder{}
	r.gen.Sink = r
	for read := 0; read < maxFolded; {
		chunk, err := s.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		read += len(chunk)
		r.gen.Feed(chunk)
	}
	r.gen.End()
	if r.err != nil {
		return r.err
	}
	dialect.WriteRawJSON(a.Ctx, fasthttp.StatusOK, r.reply.ConverseJSON(time.Since(a.Ctx.Time())))
	return nil
}

// converseStreamReply answers ConverseStream: ConverseStream events, a
// complete event stream for a whole chat.completion.
type converseStreamReply struct{}

func (converseStreamReply) Whole(a dialect.Answer) error { return writeConverse(a, true) }

func (converseStreamReply) Stream(a dialect.Answer, s dialect.Stream) error {
	if err := s.Start(newConverseFramer(a.Ctx.Time())); err != nil {
		return err
	}
	a.Ctx.Response.Header.SetContentType(awsapi.ContentTypeEventStream)
	return nil
}

// writeConverse answers Converse (or ConverseStream, as a complete event
// stream) from a model's whole chat.completion.
func writeConverse(a dialect.Answer, stream bool) error {
	reply, err := awsapi.ReplyFromChat(a.Body)
	if err != nil {
		return fmt.Errorf("model %s: %w", a.Model, notChat{err})
	}
	ctx := a.Ctx
	ctx.SetStatusCode(fasthttp.StatusOK)
	if stream {
		ctx.SetContentType(awsapi.ContentTypeEventStream)
		ctx.Response.SetBodyRaw(awsapi.NewConverseStream().Whole(reply, time.Since(ctx.Time())))
		return nil
	}
	dialect.WriteRawJSON(ctx, fasthttp.StatusOK, reply.ConverseJSON(time.Since(ctx.Time())))
	return nil
}
