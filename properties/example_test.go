package properties_test

import (
	"errors"
	"fmt"
	"log"
	"path/filepath"

	"github.com/switchyard/switchyard/properties"
)

func ExampleLoadModel() {
	srv, err := properties.LoadServer("", nil)
	if err != nil {
		log.Fatal(err)
	}
	m, err := properties.LoadModel("testdata/models/good/llm", srv, properties.Env{"OPTION_MAX_MODEL_LEN": "4096"})
	if err != nil {
		log.Fatal(err)
	}
	gmin, gmax := m.GPUWorkers()
	fmt.Println(m.Name, m.RollingBatch, m.MaxRollingBatchSize, m.LoadOnDevices)
	fmt.Println(m.Options["model_id"], m.Options["max_model_len"])
	fmt.Println("gpu workers", gmin, gmax, "predict timeout", m.PredictTimeout)
	// Output:
	// llm vllm 64 [0 1]
	// TheBloke/Llama-2-7B-fp16 4096
	// gpu workers 1 1 predict timeout 5m0s
}

func ExampleLoadModel_error() {
	_, err := properties.LoadModel("testdata/models/bad/not_integer", nil, nil)
	var e *properties.Error
	if !errors.As(err, &e) {
		log.Fatal(err)
	}
	fmt.Println(filepath.Base(e.File), e.Line, e.Key, e.Msg, errors.Is(err, properties.ErrInvalid))
	// Output:
	// serving.properties 3 batch_size "abc" is not an integer true
}

func ExampleLoadServer() {
	env := properties.Env{"SERVING_INFERENCE_ADDRESS": "http://0.0.0.0:8080"}
	srv, err := properties.LoadServer("testdata/server/shared.good.properties", env)
	if err != nil {
		log.Fatal(err)
	}
	inf, _ := srv.InferenceListen()
	mgmt, _ := srv.ManagementListen()
	fmt.Println(inf, mgmt, srv.SharedListener(), len(srv.LoadModels), srv.ThrottleErrorHTTPCode)
	// Output:
	// 0.0.0.0:8080 127.0.0.1:8080 false 0 503
}

func ExampleModel_WorkerProps() {
	m := properties.NewModel("/opt/ml/model", nil)
	m.Options["model_id"] = "./weights"
	m.Extra["custom.flag"] = "on"
	for _, p := range m.WorkerProps()[:5] {
		fmt.Printf("%s=%s\n", p.Key, p.Value)
	}
	// Output:
	// batch_size=1
	// custom.flag=on
	// engine=Python
	// gpu.required_memory_mb=0
	// gpu.reserved_memory_mb=500
}

func ExampleServer_InferenceListen() {
	srv := properties.DefaultServer()
	addr, err := srv.InferenceListen()
	fmt.Println(addr, err)
	// Output:
	// 127.0.0.1:8080 <nil>
}
