package rig

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Models are the rig's six models; the first gets half the requests, the
// others share the rest evenly.
var Models = []string{"model-a", "model-b", "model-c", "model-d", "model-e", "model-f"}

// Load is a paced, closed-loop load: each client sends one request at a
// time, at most Rate a second.
type Load struct {
	Base    string  // HAProxy's URL
	Clients int     // concurrent clients
	Rate    float64 // requests a second per client, at most
	Seed    uint64  // makes the sequence of models repeatable
}

// Failure is one request that did not get a 200.
type Failure struct {
	At     time.Duration // since the load started
	Model  string
	Status int // 0 when no answer came
	Error  string
}

// Result is what a load saw.
type Result struct {
	Sent, OK int
	Failures []Failure
	// Served counts the answers by replica and model, as the answers say.
	Served map[string]map[string]int
}

// Run sends requests until ctx ends, then waits for the ones in flight.
func (l Load) Run(ctx context.Context) *Result {
	res := &Result{Served: map[string]map[string]int{}}
	var mu sync.Mutex
	client := &http.Client{
		Timeout:   60 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: l.Clients},
	}
	start := time.Now()
	var wg sync.WaitGroup
	for c := range l.Clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(l.Seed, uint64(c)))
			interval := time.Duration(float64(time.Second) / l.Rate)
			next := time.Now()
			for i := 0; ctx.Err() == nil; i++ {
				model := pick(rng)
				replica, f := send(client, l.Base, model, i%3)
				f.At = time.Since(start)
				mu.Lock()
				res.Sent++
				if f.Status == http.StatusOK && f.Error == "" {
					res.OK++
					if res.Served[replica] == nil {
						res.Served[replica] = map[string]int{}
					}
					res.Served[replica][model]++
				} else {
					res.Failures = append(res.Failures, f)
				}
				mu.Unlock()
				next = next.Add(interval)
				if now := time.Now(); next.Before(now) {
					next = now
				}
				select {
				case <-ctx.Done():
				case <-time.After(time.Until(next)):
				}
			}
		})
	}
	wg.Wait()
	return res
}

// hotModel gets half the requests.
const hotModel = "model-a"

// pick draws a model: model-a half the time, else one of the other five.
func pick(rng *rand.Rand) string {
	if rng.IntN(2) == 0 {
		return Models[0]
	}
	return Models[1+rng.IntN(len(Models)-1)]
}

// send makes one request through one of three routes that name the model
// in different places (the path, the SageMaker target-model header, the
// multi-model invoke path) and returns the replica that answered.
func send(client *http.Client, base, model string, route int) (string, Failure) {
	f := Failure{Model: model}
	var req *http.Request
	var err error
	body := strings.NewReader(`{"inputs": "rig"}`)
	switch route {
	case 0:
		req, err = http.NewRequest(http.MethodPost, base+"/predictions/"+model, body)
	case 1:
		req, err = http.NewRequest(http.MethodPost, base+"/invocations", body)
		if err == nil {
			req.Header.Set("X-Amzn-SageMaker-Target-Model", model+".tar.gz")
		}
	default:
		req, err = http.NewRequest(http.MethodPost, base+"/models/"+model+"/invoke", body)
	}
	if err != nil {
		f.Error = err.Error()
		return "", f
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		f.Error = err.Error()
		return "", f
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	f.Status = resp.StatusCode
	if err != nil {
		f.Error = err.Error()
		return "", f
	}
	if resp.StatusCode != http.StatusOK {
		f.Error = strings.TrimSpace(string(data))
		return "", f
	}
	var ans struct{ Replica, Model string }
	if err := json.Unmarshal(data, &ans); err != nil || ans.Model != model {
		f.Error = fmt.Sprintf("answer %q is not model %s's", data, model)
		return "", f
	}
	return ans.Replica, f
}
