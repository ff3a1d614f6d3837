package deploytest

import (
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/strvals"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

const chartDir = "../helm/switchyard"

// render renders the chart as "helm template rel --namespace ml" with the
// given --set values, and returns its objects. A value "@file" is "-f
// file", a values file of the chart's folder, read before the --set ones.
func render(t *testing.T, sets ...string) []object {
	t.Helper()
	objs, err := renderErr(t, sets...)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func renderErr(t *testing.T, sets ...string) ([]object, error) {
	t.Helper()
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	vals := values(t, sets...)
	opts := chartutil.ReleaseOptions{Name: "rel", Namespace: "ml", Revision: 1, IsInstall: true}
	rv, err := chartutil.ToRenderValues(chrt, vals, opts, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(chrt, rv)
	if err != nil {
		return nil, err
	}
	var names []string
	for name := range files {
		if path.Ext(name) == ".yaml" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var out []object
	for _, name := range names {
		out = append(out, splitDocs(t, name, []byte(files[name]))...)
	}
	return out, nil
}

// values reads the "@file" values files of sets, then the --set values.
func values(t *testing.T, sets ...string) map[string]any {
	t.Helper()
	vals := map[string]any{}
	for _, s := range sets {
		if file, ok := strings.CutPrefix(s, "@"); ok {
			v, err := chartutil.ReadValuesFile(chartDir + "/" + file)
			if err != nil {
				t.Fatal(err)
			}
			vals = chartutil.CoalesceTables(v, vals)
		}
	}
	for _, s := range sets {
		if strings.HasPrefix(s, "@") {
			continue
		}
		if err := strvals.ParseInto(s, vals); err != nil {
			t.Fatal(err)
		}
	}
	return vals
}

var chartCRDs = []string{"keda.sh_scaledobjects.yaml", "monitoring.coreos.com_servicemonitors.yaml"}

// TestChartLint is "helm lint" with warnings counted as failures.
func TestChartLint(t *testing.T) {
	for _, sets := range [][]string{nil, {"keda.enabled=true"}, {"hpa.enabled=true"}, {"@values-gpu.yaml"}, {"@values-s3.yaml"}} {
		l := lint.All(chartDir, values(t, sets...), "ml", false)
		for _, m := range l.Messages {
			if m.Severity >= support.WarningSev {
				t.Errorf("helm lint %v: %s", sets, m)
			}
		}
	}
}

// TestChartObjects renders the chart with each group of settings and checks
// every object strictly: Kubernetes kinds against k8s.io/api, KEDA's and
// prometheus-operator's against their CRDs.
func TestChartObjects(t *testing.T) {
	crds := crdSchemas(t, chartCRDs...)
	cases := map[string][]string{
		"defaults":         nil,
		"keda":             {"keda.enabled=true", "keda.loadsPerMinutePerReplica=2", "keda.prometheus.authenticationRef=prom-auth"},
		"hpa":              {"hpa.enabled=true", "hpa.loadsPerMinutePerReplica=2"},
		"service monitor":  {"serviceMonitor.enabled=true", "serviceMonitor.labels.release=prom"},
		"gpu":              {"gpus=1", "image.tag=gpu"},
		"values-gpu.yaml":  {"@values-gpu.yaml"},
		"values-s3.yaml":   {"@values-s3.yaml", "serviceAccount.annotations.eks\\.amazonaws\\.com/role-arn=arn:aws:iam::1:role/r"},
		"one listener":     {"management.separatePort=false", "serviceMonitor.enabled=true"},
		"token":            {"management.tokenSecret.name=sy-token", "config.metrics_require_token=false"},
		"no extras":        {"headlessService.enabled=false", "podDisruptionBudget.enabled=false", "podMonitoringAnnotations=false"},
		"service account":  {"serviceAccount.create=true"},
		"pvc and options":  {"modelStore.volume.persistentVolumeClaim.claimName=models", "config.max_loaded_models=4", "env[0].name=OPTION_ROLLING_BATCH", "env[0].value=disable"},
		"readiness live":   {"readinessProbe.path=/v2/health/live"},
		"memory budget":    {"config.memory_budget_mb=7500", "config.min_residence_time=5"},
		"init and volumes": {"extraInitContainers[0].name=fetch", "extraInitContainers[0].image=busybox", "extraVolumes[0].name=x", "extraVolumes[0].emptyDir.medium=Memory", "extraVolumeMounts[0].name=x", "extraVolumeMounts[0].mountPath=/x"},
	}
	for name, sets := range cases {
		t.Run(name, func(t *testing.T) {
			objs := render(t, sets...)
			if len(objs) == 0 {
				t.Fatal("nothing rendered")
			}
			checkObjects(t, objs, crds)
		})
	}
}

func deployment(t *testing.T, sets ...string) *appsv1.Deployment {
	t.Helper()
	typed := checkObjects(t, render(t, sets...), crdSchemas(t, chartCRDs...))
	d, ok := typed["Deployment/rel-switchyard"].(*appsv1.Deployment)
	if !ok {
		t.Fatalf("no Deployment rel-switchyard among %v", keys(typed))
	}
	return d
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func env(c corev1.Container) map[string]string {
	out := map[string]string{}
	for _, e := range c.Env {
		out[e.Name] = e.Value
	}
	return out
}

// TestChartDrain checks what a rolling update without dropped requests
// rests on (docs/deploy.md, Upgrades): the pod's grace period covers the
// preStop sleep, the server's own drain and the workers' stop; a new pod
// is ready before an old one stops; the probes ask the right routes.
func TestChartDrain(t *testing.T) {
	d := deployment(t)
	spec := d.Spec.Template.Spec
	c := spec.Containers[0]
	if got := *spec.TerminationGracePeriodSeconds; got != 10+30+15 {
		t.Errorf("terminationGracePeriodSeconds = %d, want 55 (preStop 10 + shutdown_grace_period 30 + 15)", got)
	}
	if env(c)["SERVING_SHUTDOWN_GRACE_PERIOD"] != "30" {
		t.Errorf("SERVING_SHUTDOWN_GRACE_PERIOD = %q, want 30", env(c)["SERVING_SHUTDOWN_GRACE_PERIOD"])
	}
	if pre := c.Lifecycle.PreStop; pre == nil || pre.Exec == nil || !slices.Equal(pre.Exec.Command, []string{"sleep", "10"}) {
		t.Errorf("preStop = %+v, want exec sleep 10", pre)
	}
	ru := d.Spec.Strategy.RollingUpdate
	if ru == nil || ru.MaxUnavailable.IntValue() != 0 || ru.MaxSurge.IntValue() != 1 {
		t.Errorf("rollingUpdate = %+v, want maxSurge 1, maxUnavailable 0", ru)
	}
	probes := map[string]*corev1.Probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe, "liveness": c.LivenessProbe}
	want := map[string]string{"startup": "/ping", "readiness": "/ping", "liveness": "/v2/health/live"}
	for name, p := range probes {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != want[name] || p.HTTPGet.Port.String() != "http" {
			t.Errorf("%s probe = %+v, want GET %s on port http", name, p, want[name])
		}
	}
	if *d.Spec.Replicas != 2 {
		t.Errorf("replicas = %d, want 2", *d.Spec.Replicas)
	}

	// A longer grace period moves the pod's with it.
	d = deployment(t, "shutdownGracePeriodSeconds=120", "preStopSleepSeconds=5")
	if got := *d.Spec.Template.Spec.TerminationGracePeriodSeconds; got != 5+120+15 {
		t.Errorf("terminationGracePeriodSeconds = %d, want 140", got)
	}
}

// TestChartListeners: with the separate management port the Service
// exposes inference only, the server is told so, and metrics are scraped
// on 8084; with one listener everything is on 8080.
func TestChartListeners(t *testing.T) {
	typed := checkObjects(t, render(t), crdSchemas(t, chartCRDs...))
	svc := typed["Service/rel-switchyard"].(*corev1.Service)
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 8080 {
		t.Errorf("Service ports = %+v, want 8080 alone", svc.Spec.Ports)
	}
	d := typed["Deployment/rel-switchyard"].(*appsv1.Deployment)
	tmpl := d.Spec.Template
	if got := env(tmpl.Spec.Containers[0])["SERVING_MANAGEMENT_ADDRESS"]; got != "http://0.0.0.0:8084" {
		t.Errorf("SERVING_MANAGEMENT_ADDRESS = %q", got)
	}
	if tmpl.Annotations["prometheus.io/port"] != "8084" {
		t.Errorf("prometheus.io/port = %q, want 8084", tmpl.Annotations["prometheus.io/port"])
	}
	if _, ok := typed["Service/rel-switchyard-headless"]; !ok {
		t.Error("no headless Service")
	}

	d = deployment(t, "management.separatePort=false")
	if _, ok := env(d.Spec.Template.Spec.Containers[0])["SERVING_MANAGEMENT_ADDRESS"]; ok {
		t.Error("one listener: SERVING_MANAGEMENT_ADDRESS is set; the entrypoint's default (the inference address) should stay")
	}
	if d.Spec.Template.Annotations["prometheus.io/port"] != "8080" {
		t.Errorf("one listener: prometheus.io/port = %q, want 8080", d.Spec.Template.Annotations["prometheus.io/port"])
	}
}

// TestChartKEDA: KEDA owns the replica count when enabled, and its queries
// select this release's pods by the series the server exports.
func TestChartKEDA(t *testing.T) {
	objs := render(t, "keda.enabled=true", "keda.loadsPerMinutePerReplica=3")
	checkObjects(t, objs, crdSchemas(t, chartCRDs...))
	var so map[string]any
	for _, o := range objs {
		if o.fields["kind"] == "ScaledObject" {
			so = o.fields
		}
		if o.fields["kind"] == "Deployment" {
			if _, ok := o.fields["spec"].(map[string]any)["replicas"]; ok {
				t.Error("KEDA enabled, yet the Deployment sets replicas (each upgrade would reset KEDA's count)")
			}
		}
	}
	if so == nil {
		t.Fatal("no ScaledObject")
	}
	spec := so["spec"].(map[string]any)
	if ref := spec["scaleTargetRef"].(map[string]any); ref["name"] != "rel-switchyard" || ref["kind"] != "Deployment" {
		t.Errorf("scaleTargetRef = %v", ref)
	}
	triggers := spec["triggers"].([]any)
	if len(triggers) != 2 {
		t.Fatalf("%d triggers, want 2 (queue depth, model loads)", len(triggers))
	}
	for i, series := range []string{"switchyard_requests_waiting", "switchyard_model_loads_total"} {
		md := triggers[i].(map[string]any)["metadata"].(map[string]any)
		q := md["query"].(string)
		if !strings.Contains(q, series+`{namespace="ml",pod=~"rel-switchyard-.*"}`) {
			t.Errorf("trigger %d query %q does not select %s of this release's pods", i, q, series)
		}
	}
	for _, o := range render(t) {
		if o.fields["kind"] == "ScaledObject" {
			t.Error("ScaledObject rendered with keda.enabled=false")
		}
	}
}

// TestChartSeriesExist: the series the ScaledObject and docs/deploy.md
// query are ones switchyard exports (or, for the HPA, ones the
// prometheus-adapter rules make of them).
func TestChartSeriesExist(t *testing.T) {
	src := exportedSeries(t)
	tmpl, err := os.ReadFile(chartDir + "/templates/scaledobject.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	used := regexp.MustCompile(`switchyard_[a-z_]+`).FindAllString(string(tmpl)+string(doc), -1)
	if len(used) == 0 {
		t.Fatal("no series found in the ScaledObject template")
	}
	adapted := map[string]bool{} // names prometheus-adapter's rules give
	for _, r := range adapterRules(t).Rules.Custom {
		adapted[r.Name.As] = true
	}
	for _, s := range used {
		if adapted[s] {
			continue
		}
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(s, "_bucket"), "_sum"), "_count")
		if !strings.Contains(src, `"`+base+`"`) {
			t.Errorf("%s is used but switchyard exports no such series", s)
		}
	}
}

// exportedSeries returns the source of the files that name switchyard's
// series, to look names up in.
func exportedSeries(t *testing.T) string {
	t.Helper()
	var src strings.Builder
	for _, f := range []string{"../../worker/registry_metrics.go", "../../worker/residency_metrics.go", "../../frontend/metrics.go", "../../frontend/connlimit.go"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(data)
	}
	return src.String()
}

// TestChartOwnedKeys: settings the chart derives cannot be set twice.
func TestChartOwnedKeys(t *testing.T) {
	for _, key := range []string{"shutdown_grace_period", "model_store", "management_address", "inference_address", "management_token"} {
		if _, err := renderErr(t, "config."+key+"=x"); err == nil || !strings.Contains(err.Error(), "set by the chart") {
			t.Errorf("config.%s: error %v, want a refusal", key, err)
		}
	}
}

// TestChartConfigKeys: every server key values.yaml names (set or in a
// comment) is one docs/configuration.md documents.
func TestChartConfigKeys(t *testing.T) {
	values, err := os.ReadFile(chartDir + "/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?ms)^config:\n(.*?)\n\S`).FindSubmatch(values)
	if block == nil {
		t.Fatal("values.yaml has no config block")
	}
	found := regexp.MustCompile(`(?m)^\s*#?\s*([a-z_]+): "`).FindAllSubmatch(block[1], -1)
	if len(found) == 0 {
		t.Fatal("no keys in values.yaml's config block")
	}
	for _, m := range found {
		if !strings.Contains(string(doc), "| `"+string(m[1])+"`") {
			t.Errorf("values.yaml config key %s is not in docs/configuration.md", m[1])
		}
	}
}

// TestChartGPU: gpus asks the device plugin for that many GPUs and keeps
// the other resources.
func TestChartGPU(t *testing.T) {
	c := deployment(t, "gpus=2").Spec.Template.Spec.Containers[0]
	if got := c.Resources.Limits["nvidia.com/gpu"]; !got.Equal(resource.MustParse("2")) {
		t.Errorf("nvidia.com/gpu limit = %v, want 2", got.String())
	}
	if got := c.Resources.Limits[corev1.ResourceMemory]; !got.Equal(resource.MustParse("8Gi")) {
		t.Errorf("memory limit = %v, want 8Gi", got.String())
	}
	c = deployment(t).Spec.Template.Spec.Containers[0]
	if _, ok := c.Resources.Limits["nvidia.com/gpu"]; ok {
		t.Error("gpus=0, yet a GPU is asked for")
	}
}
