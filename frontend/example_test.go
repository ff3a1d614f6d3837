package frontend_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/frontend"
	"github.com/switchyard/switchyard/frontend/dialect"
	"github.com/switchyard/switchyard/message"
)

// upper is a one-model registry whose model upper-cases its input at once.
type upper struct{ dialect.NoAdapters }

func (upper) Submit(model string, j *batching.Job) error {
	if model != "upper" {
		return fmt.Errorf("%w: %s", api.ErrModelNotFound, model)
	}
	body := strings.ToUpper(string(j.Input.Content[0].Value))
	j.Finish(&message.Response{Code: 200, Props: []message.Prop{{Key: "Content-Type", Value: "text/plain"}}, Body: []byte(body)})
	return nil
}
func (upper) Names() []string { return []string{"upper"} }
func (upper) List() []api.ModelSummary {
	return []api.ModelSummary{{ModelName: "upper", ModelURL: "/models/upper", Status: api.StatusHealthy}}
}
func (upper) Describe(string) (api.ModelRecord, error) {
	return api.ModelRecord{}, api.ErrModelNotFound
}
func (upper) Register(context.Context, api.RegisterRequest) (api.ModelRecord, error) {
	return api.ModelRecord{}, api.ErrModelExists
}
func (upper) Scale(context.Context, string, api.ScaleRequest) error { return api.ErrModelNotFound }
func (upper) Unregister(context.Context, string) error              { return api.ErrModelNotFound }
func (upper) Health() map[string]api.ModelHealth {
	return map[string]api.ModelHealth{"upper": {Status: api.StatusHealthy}}
}
func (upper) Generation(string) (api.Generation, error) { return api.Generation{}, nil }
func (upper) Signature(string) (api.Signature, error)   { return api.Signature{}, nil }
func (upper) StoreModels() ([]string, error)            { return []string{"upper"}, nil }

func post(url, body string) string {
	resp, err := http.Post(url, "text/plain", strings.NewReader(body))
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(b)))
}

// A server with one listener for both route tables: bind, serve, call a
// model, stop.
func Example() {
	srv, err := frontend.New(frontend.Config{InferenceAddr: "127.0.0.1:0", ManagementAddr: "127.0.0.1:0"}, upper{})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := srv.Listen(); err != nil {
		fmt.Println(err)
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()

	base := "http://" + srv.InferenceAddr()
	fmt.Println(post(base+"/invocations", "hello"))
	fmt.Println(post(base+"/predictions/lower", "hello"))
	fmt.Println(srv.InferenceAddr() == srv.ManagementAddr())

	stop()
	fmt.Println(<-served)
	http.DefaultClient.CloseIdleConnections()
	// Output:
	// 200 HELLO
	// 404 {
	//   "code": 404,
	//   "type": "ModelNotFoundException",
	//   "message": "model not found: lower"
	// }
	// true
	// <nil>
}

// New fills in defaults and rejects what cannot work.
func ExampleNew() {
	_, err := frontend.New(frontend.Config{InferenceAddr: "127.0.0.1:8080", ManagementAddr: "127.0.0.1:8084", ThrottleCode: 200}, upper{})
	fmt.Println(errors.Is(err, frontend.ErrConfig))
	// Output: true
}

// Shutdown with a deadline: in-flight requests get until then to finish.
func ExampleServer_Shutdown() {
	srv, err := frontend.New(frontend.Config{InferenceAddr: "127.0.0.1:0", ManagementAddr: "127.0.0.1:0"}, upper{})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := srv.Listen(); err != nil {
		fmt.Println(err)
		return
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background()) }()
	fmt.Println(post("http://"+srv.ManagementAddr()+"/models", ""))

	ctx, cancel := context.WithTimeout(context.Background(), frontend.DefaultShutdownTimeout)
	defer cancel()
	fmt.Println(srv.Shutdown(ctx), <-served)
	http.DefaultClient.CloseIdleConnections()
	// Output:
	// 400 {
	//   "code": 400,
	//   "type": "BadRequestException",
	//   "message": "Parameter url is required."
	// }
	// <nil> <nil>
}
