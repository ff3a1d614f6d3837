package rig

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Counts are one replica's counters of model loads and evictions, by model.
type Counts struct {
	Loads, Evictions map[string]float64
}

// Scrape reads a replica's /metrics and returns its loads and evictions.
func Scrape(managementURL string) (Counts, error) {
	c := Counts{Loads: map[string]float64{}, Evictions: map[string]float64{}}
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(managementURL + "/metrics")
	if err != nil {
		return c, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return c, fmt.Errorf("rig: %s/metrics: status %d", managementURL, resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		var into map[string]float64
		switch {
		case strings.HasPrefix(line, "switchyard_model_loads_total{"):
			into = c.Loads
		case strings.HasPrefix(line, "switchyard_model_evictions_total{"):
			into = c.Evictions
		default:
			continue
		}
		model, value, ok := sample(line)
		if !ok {
			return c, fmt.Errorf("rig: cannot read %q", line)
		}
		into[model] += value
	}
	return c, sc.Err()
}

// sample reads the model label and the value of one sample line.
func sample(line string) (model string, value float64, ok bool) {
	_, rest, _ := strings.Cut(line, `model="`)
	model, rest, ok = strings.Cut(rest, `"`)
	if !ok {
		return "", 0, false
	}
	_, num, ok := strings.Cut(rest, "} ")
	if !ok {
		return "", 0, false
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	return model, v, err == nil
}

// Add adds o's counts to c's.
func (c Counts) Add(o Counts) {
	for m, v := range o.Loads {
		c.Loads[m] += v
	}
	for m, v := range o.Evictions {
		c.Evictions[m] += v
	}
}

// Total returns the loads and evictions of all models.
func (c Counts) Total() (loads, evictions float64) {
	return sum(c.Loads), sum(c.Evictions)
}

// sum adds up m's values.
func sum(m map[string]float64) float64 {
	var s float64
	for _, v := range m {
		s += v
	}
	return s
}
