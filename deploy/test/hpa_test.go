package deploytest

import (
	"os"
	"slices"
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// adapterValues mirrors what deploy/prometheus-adapter/values.yaml sets of
// the prometheus-adapter chart's values: rules.default and rules.custom,
// whose entries are the adapter's DiscoveryRule (pkg/config of
// kubernetes-sigs/prometheus-adapter v0.12). Decoded strictly, a misspelt
// key is an error.
type adapterValues struct {
	Rules struct {
		Default bool            `json:"default"`
		Custom  []discoveryRule `json:"custom"`
	} `json:"rules"`
}

type discoveryRule struct {
	SeriesQuery   string `json:"seriesQuery"`
	SeriesFilters []struct {
		Is    string `json:"is,omitempty"`
		IsNot string `json:"isNot,omitempty"`
	} `json:"seriesFilters,omitempty"`
	Resources struct {
		Template  string `json:"template,omitempty"`
		Overrides map[string]struct {
			Group    string `json:"group,omitempty"`
			Resource string `json:"resource"`
		} `json:"overrides,omitempty"`
	} `json:"resources"`
	Name struct {
		Matches string `json:"matches"`
		As      string `json:"as"`
	} `json:"name"`
	MetricsQuery string `json:"metricsQuery,omitempty"`
}

func adapterRules(t *testing.T) adapterValues {
	t.Helper()
	data, err := os.ReadFile("../prometheus-adapter/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var v adapterValues
	if err := decodeStrict(data, &v); err != nil {
		t.Fatalf("prometheus-adapter/values.yaml: %v", err)
	}
	return v
}

// TestChartHPA: hpa.enabled makes an autoscaling/v2 HorizontalPodAutoscaler
// on per-pod metrics that the adapter rules serve, takes the replica count
// from the Deployment, and is refused together with KEDA.
func TestChartHPA(t *testing.T) {
	typed := checkObjects(t, render(t, "hpa.enabled=true", "hpa.loadsPerMinutePerReplica=3"), crdSchemas(t, chartCRDs...))
	hpa, ok := typed["HorizontalPodAutoscaler/rel-switchyard"].(*autoscalingv2.HorizontalPodAutoscaler)
	if !ok {
		t.Fatalf("no HorizontalPodAutoscaler among %v", keys(typed))
	}
	if ref := hpa.Spec.ScaleTargetRef; ref.Kind != "Deployment" || ref.Name != "rel-switchyard" || ref.APIVersion != "apps/v1" {
		t.Errorf("scaleTargetRef = %+v", ref)
	}
	if *hpa.Spec.MinReplicas != 2 || hpa.Spec.MaxReplicas != 8 {
		t.Errorf("replicas %d to %d, want 2 to 8", *hpa.Spec.MinReplicas, hpa.Spec.MaxReplicas)
	}
	if b := hpa.Spec.Behavior; b == nil || b.ScaleDown == nil || *b.ScaleDown.StabilizationWindowSeconds != 600 {
		t.Errorf("behavior %+v, want keda.behavior's (scale down after 600 s)", b)
	}
	var rules []string
	for _, r := range adapterRules(t).Rules.Custom {
		rules = append(rules, r.Name.As)
	}
	want := map[string]string{"switchyard_requests_waiting": "8", "switchyard_model_loads_per_minute": "3"}
	if len(hpa.Spec.Metrics) != len(want) {
		t.Fatalf("%d metrics, want %d", len(hpa.Spec.Metrics), len(want))
	}
	for _, m := range hpa.Spec.Metrics {
		if m.Type != autoscalingv2.PodsMetricSourceType || m.Pods == nil {
			t.Errorf("metric %+v is not a Pods metric", m)
			continue
		}
		name, target := m.Pods.Metric.Name, m.Pods.Target
		if target.Type != autoscalingv2.AverageValueMetricType || target.AverageValue.String() != want[name] {
			t.Errorf("%s: target %s %v, want AverageValue %s", name, target.Type, target.AverageValue, want[name])
		}
		if !slices.Contains(rules, name) {
			t.Errorf("%s: no prometheus-adapter rule serves it (rules give %v)", name, rules)
		}
	}
	d := deployment(t, "hpa.enabled=true")
	if d.Spec.Replicas != nil {
		t.Error("HPA enabled, yet the Deployment sets replicas (each upgrade would reset the HPA's count)")
	}
	if _, err := renderErr(t, "hpa.enabled=true", "keda.enabled=true"); err == nil || !strings.Contains(err.Error(), "choose one") {
		t.Errorf("hpa and keda together: %v, want a refusal", err)
	}
	for _, o := range render(t) {
		if o.fields["kind"] == "HorizontalPodAutoscaler" {
			t.Error("HorizontalPodAutoscaler rendered with hpa.enabled=false")
		}
	}
}

// TestAdapterRules: each rule selects one switchyard series by the labels
// the HPA's pod metrics need, maps them to the pod and its namespace, and
// groups by them.
func TestAdapterRules(t *testing.T) {
	v := adapterRules(t)
	src := exportedSeries(t)
	if v.Rules.Default {
		t.Error("rules.default is true: the adapter's default rules would serve the same series under other names")
	}
	for _, r := range v.Rules.Custom {
		series, _, _ := strings.Cut(r.SeriesQuery, "{")
		if !strings.HasPrefix(series, "switchyard_") || !strings.Contains(r.SeriesQuery, `namespace!="",pod!=""`) {
			t.Errorf("seriesQuery %q: want one switchyard series with namespace and pod", r.SeriesQuery)
		}
		if !strings.Contains(src, `"`+series+`"`) {
			t.Errorf("%s: switchyard exports no such series", series)
		}
		if r.Name.Matches != "^"+series+"$" {
			t.Errorf("%s: name.matches %q, want the series", series, r.Name.Matches)
		}
		for label, res := range map[string]string{"namespace": "namespace", "pod": "pod"} {
			if r.Resources.Overrides[label].Resource != res {
				t.Errorf("%s: label %s is not mapped to %s", series, label, res)
			}
		}
		for _, part := range []string{"<<.Series>>{<<.LabelMatchers>>}", "by (<<.GroupBy>>)"} {
			if !strings.Contains(r.MetricsQuery, part) {
				t.Errorf("%s: metricsQuery %q lacks %s", series, r.MetricsQuery, part)
			}
		}
	}
}
