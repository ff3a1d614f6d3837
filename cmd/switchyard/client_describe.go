package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard/switchyard/api"
)

// describe prints one model's settings, state and workers.
func (e clientEnv) describe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("describe", "NAME [flags]",
		"Describes a model: its batching settings, queue, status and workers.")
	f := e.addManagementFlags(fs, defaultTimeout)
	pos, err := parseArgs(fs, args, stdout, stderr, 1, "a model name")
	if err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	defer c.close()
	body, err := c.call(ctx, http.MethodGet, nil, "models", pos[0])
	if err != nil {
		return err
	}
	if f.json {
		return writeRaw(stdout, body)
	}
	return printDescribe(stdout, body)
}

// printDescribe writes the model records of a describe answer (DJL's array
// of workflows) in words.
func printDescribe(w io.Writer, body []byte) error {
	var flows []api.Workflow
	if err := json.Unmarshal(body, &flows); err != nil {
		return fmt.Errorf("%w: describe: %w", errBadAnswer, err)
	}
	n := 0
	for _, flow := range flows {
		for _, m := range flow.Models {
			if n > 0 {
				fmt.Fprintln(w)
			}
			if err := printModel(w, m); err != nil {
				return err
			}
			n++
		}
	}
	if n == 0 {
		return fmt.Errorf("%w: describe: no model record in the answer", errBadAnswer)
	}
	return nil
}

// printModel writes one model record: its settings, a last error of
// several lines (a Python traceback) in full, then its worker groups.
func printModel(w io.Writer, m api.ModelRecord) error {
	if err := writeTable(w, "", modelFacts(m)); err != nil {
		return err
	}
	if err := printFullError(w, m.LastError); err != nil {
		return err
	}
	if len(m.WorkerGroups) == 0 {
		_, err := fmt.Fprintln(w, "\nWorkers: none")
		return err
	}
	for _, g := range m.WorkerGroups {
		if err := printGroup(w, g); err != nil {
			return err
		}
	}
	return nil
}

// modelFacts returns the settings and state of a model as label/value rows.
func modelFacts(m api.ModelRecord) [][]string {
	rows := [][]string{
		{"Name:", m.ModelName},
		{"URL:", m.ModelURL},
		{"Status:", m.Status},
	}
	if m.LastError != "" {
		first, _, _ := strings.Cut(m.LastError, "\n")
		rows = append(rows, []string{"Last error:", first})
	}
	if m.RollingBatch != "" {
		rows = append(rows, []string{"Rolling batch:", m.RollingBatch})
	}
	if g := m.Generation; g != nil {
		rows = append(rows, generationFacts(*g)...)
	}
	rows = append(rows,
		[]string{"Batch size:", strconv.Itoa(m.BatchSize)},
		[]string{"Max batch delay:", strconv.Itoa(m.MaxBatchDelayMillis) + " ms"},
		[]string{"Max idle time:", strconv.Itoa(m.MaxIdleSeconds) + " s"},
		[]string{"Queue size:", strconv.Itoa(m.QueueSize)},
		[]string{"In queue:", strconv.Itoa(m.RequestInQueue)},
		[]string{"Loaded at startup:", yesNo(m.LoadedAtStartup)},
	)
	return append(rows, residencyFacts(m)...)
}

// residencyFacts returns whether the model is loaded and pinned, when it
// was last used and, if it was, why it was last unloaded.
func residencyFacts(m api.ModelRecord) [][]string {
	used := "never"
	if !m.LastUsed.IsZero() {
		used = m.LastUsed.Format(time.RFC3339)
	}
	rows := [][]string{{"Loaded:", yesNo(m.Loaded)}, {"Pinned:", yesNo(m.Pinned)}, {"Last used:", used}}
	if u := m.LastUnload; u != nil {
		why := u.Reason
		if u.ForModel != "" {
			why += " for " + u.ForModel
		}
		if u.Cause != "" {
			why += " (" + u.Cause + ")"
		}
		rows = append(rows, []string{"Last unloaded:", why + " at " + u.Time.Format(time.RFC3339)})
	}
	return rows
}

// printFullError writes a last error that has more than one line under a
// heading of its own, indented; the table above showed its first line.
func printFullError(w io.Writer, lastError string) error {
	text := strings.TrimRight(lastError, "\n")
	if !strings.Contains(text, "\n") {
		return nil
	}
	fmt.Fprintln(w, "\nLast error in full:")
	for line := range strings.SplitSeq(text, "\n") {
		if _, err := fmt.Fprintln(w, "  "+line); err != nil {
			return err
		}
	}
	return nil
}

// generationFacts returns what a generative model's handler declared.
func generationFacts(g api.Generation) [][]string {
	ctx := "not declared"
	if g.ContextLength > 0 {
		ctx = strconv.Itoa(g.ContextLength) + " tokens"
	}
	return [][]string{
		{"Context length:", ctx},
		{"Tool calls:", yesNo(g.SupportsTools)},
		{"Max choices (n):", strconv.Itoa(g.Choices())},
	}
}

// printGroup writes a worker group's heading and its table of workers.
func printGroup(w io.Writer, g api.WorkerGroup) error {
	head := fmt.Sprintf("\nWorkers on %s (min %d, max %d):", deviceName(g.Device), g.MinWorkers, g.MaxWorkers)
	if len(g.Workers) == 0 {
		_, err := fmt.Fprintln(w, head, "none")
		return err
	}
	fmt.Fprintln(w, head)
	rows := [][]string{{"DEVICE", "ID", "PID", "STATUS", "TEMPORARY", "STARTED", "RSS(MiB)", "GPU(MiB)"}}
	for _, wk := range g.Workers {
		rows = append(rows, workerRow(g.Device, wk))
	}
	return writeTable(w, "  ", rows)
}

// workerRow returns one worker's cells; "-" stands for what is unknown.
func workerRow(d api.Device, wk api.WorkerRecord) []string {
	gpuMem := "-"
	if wk.GPUMemoryMiB != nil {
		gpuMem = strconv.FormatInt(*wk.GPUMemoryMiB, 10)
	}
	started := "-"
	if !wk.StartTime.IsZero() {
		started = wk.StartTime.Format(time.RFC3339)
	}
	return []string{deviceName(d), strconv.Itoa(wk.ID), strconv.Itoa(wk.PID), wk.Status,
		yesNo(wk.Temporary), started, strconv.FormatInt(wk.RSSMiB, 10), gpuMem}
}

// deviceName returns "cpu", or the device type and id ("gpu:0").
func deviceName(d api.Device) string {
	if d.DeviceType == "cpu" || d.DeviceType == "" && d.DeviceID < 0 {
		return "cpu"
	}
	return d.DeviceType + ":" + strconv.Itoa(d.DeviceID)
}

// yesNo returns "yes" or "no".
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
