package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/switchyard/switchyard/api"
)

// Paging of GET /models: the largest page the server gives, and a bound on
// the pages one listing follows.
const (
	pageLimit = 100
	maxPages  = 10000
)

// models lists the registered models as a table, following every page.
func (e clientEnv) models(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("models", "[flags]", "Lists the registered models: name, status and URL.")
	f := e.addManagementFlags(fs, defaultTimeout)
	if _, err := parseArgs(fs, args, stdout, stderr, 0, ""); err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	defer c.close()
	all, err := listModels(ctx, c)
	if err != nil {
		return err
	}
	if f.json {
		return writeJSONValue(stdout, api.ModelList{Models: all})
	}
	if len(all) == 0 {
		fmt.Fprintln(stderr, "No models registered.")
		return nil
	}
	return printModels(stdout, all)
}

// listModels returns every registered model, one GET /models page after
// another until a page has no nextPageToken.
func listModels(ctx context.Context, c *apiClient) ([]api.ModelSummary, error) {
	all := []api.ModelSummary{}
	token := ""
	for range maxPages {
		page, err := modelPage(ctx, c, token)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Models...)
		if page.NextPageToken == "" {
			return all, nil
		}
		if page.NextPageToken == token || len(page.Models) == 0 {
			return nil, fmt.Errorf("%w: GET /models: page token %q does not move on", errBadAnswer, page.NextPageToken)
		}
		token = page.NextPageToken
	}
	return nil, fmt.Errorf("%w: GET /models: more than %d pages", errBadAnswer, maxPages)
}

// modelPage fetches the page of GET /models that starts at token.
func modelPage(ctx context.Context, c *apiClient, token string) (api.ModelList, error) {
	q := url.Values{"limit": {strconv.Itoa(pageLimit)}}
	if token != "" {
		q.Set("next_page_token", token)
	}
	var page api.ModelList
	body, err := c.call(ctx, http.MethodGet, q, "models")
	if err != nil {
		return page, err
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return page, fmt.Errorf("%w: GET /models: %w", errBadAnswer, err)
	}
	return page, nil
}

// printModels writes the table NAME STATUS URL.
func printModels(w io.Writer, models []api.ModelSummary) error {
	rows := [][]string{{"NAME", "STATUS", "URL"}}
	for _, m := range models {
		rows = append(rows, []string{m.ModelName, m.Status, m.ModelURL})
	}
	return writeTable(w, "", rows)
}

// writeTable writes rows as aligned columns, each line starting with indent;
// tabs in cells become spaces.
func writeTable(w io.Writer, indent string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	for _, row := range rows {
		fmt.Fprint(tw, indent)
		for i, cell := range row {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprint(tw, strings.ReplaceAll(cell, "\t", " "))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// writeJSONValue writes v as indented JSON and a newline.
func writeJSONValue(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeRaw writes an answer's body as it came, ending it with a newline
// when it has none.
func writeRaw(w io.Writer, body []byte) error {
	if _, err := w.Write(body); err != nil {
		return err
	}
	if len(body) > 0 && body[len(body)-1] == '\n' {
		return nil
	}
	_, err := io.WriteString(w, "\n")
	return err
}
