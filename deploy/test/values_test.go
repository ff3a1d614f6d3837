package deploytest

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestChartGPUValues: values-gpu.yaml asks for a GPU on GPU nodes, runs the
// GPU image and gives the workers a budget that fits the memory limit.
func TestChartGPUValues(t *testing.T) {
	d := deployment(t, "@values-gpu.yaml")
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	if got := c.Resources.Limits["nvidia.com/gpu"]; !got.Equal(resource.MustParse("1")) {
		t.Errorf("nvidia.com/gpu limit = %v, want 1", got.String())
	}
	if !strings.HasSuffix(c.Image, ":gpu") {
		t.Errorf("image %s, want the gpu tag", c.Image)
	}
	if env(c)["SERVING_MEMORY_BUDGET_MB"] != "28000" || env(c)["SERVING_LOAD_ON_DEMAND"] != "true" {
		t.Errorf("config env %v", env(c))
	}
	if len(pod.Tolerations) == 0 || pod.Tolerations[0].Key != "nvidia.com/gpu" {
		t.Errorf("tolerations %v, want nvidia.com/gpu's", pod.Tolerations)
	}
}

// TestChartS3Values: values-s3.yaml syncs the bucket into the models
// volume in an init container that may write it, which the server then
// mounts read-only.
func TestChartS3Values(t *testing.T) {
	pod := deployment(t, "@values-s3.yaml").Spec.Template.Spec
	if len(pod.InitContainers) != 1 {
		t.Fatalf("%d init containers, want 1", len(pod.InitContainers))
	}
	ic := pod.InitContainers[0]
	if !strings.Contains(strings.Join(ic.Args, " "), "s3 sync") {
		t.Errorf("init container args %v", ic.Args)
	}
	if m := mountOf(ic, "models"); m == nil || m.ReadOnly || m.MountPath != "/opt/ml/models" {
		t.Errorf("init container's models mount %+v, want writable at /opt/ml/models", m)
	}
	if m := mountOf(pod.Containers[0], "models"); m == nil || !m.ReadOnly {
		t.Errorf("server's models mount %+v, want read-only", m)
	}
	for _, v := range pod.Volumes {
		if v.Name == "models" && v.EmptyDir == nil {
			t.Errorf("models volume %+v, want an emptyDir", v.VolumeSource)
		}
	}
}

func mountOf(c corev1.Container, volume string) *corev1.VolumeMount {
	for i, m := range c.VolumeMounts {
		if m.Name == volume {
			return &c.VolumeMounts[i]
		}
	}
	return nil
}

// TestChartWritablePaths: with a read-only root file system, every place
// the server and its workers write (the variables that name them, and
// socket_dir's default /tmp) is on a writable volume.
func TestChartWritablePaths(t *testing.T) {
	c := deployment(t).Spec.Template.Spec.Containers[0]
	if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
		t.Fatal("the root file system is not read-only")
	}
	e := env(c)
	for _, name := range []string{"SWITCHYARD_CACHE_DIR", "XDG_CACHE_HOME", "HF_HOME", "PYTHONPYCACHEPREFIX", "TMPDIR"} {
		path := e[name]
		if path == "" {
			t.Errorf("%s is not set", name)
			continue
		}
		writable := false
		for _, m := range c.VolumeMounts {
			if !m.ReadOnly && (path == m.MountPath || strings.HasPrefix(path, m.MountPath+"/")) {
				writable = true
			}
		}
		if !writable {
			t.Errorf("%s=%s is on no writable volume", name, path)
		}
	}
}

// TestChartMemoryBudget: a memory_budget_mb that leaves the container less
// than 512 MiB of its memory limit is refused, in any unit of the limit.
func TestChartMemoryBudget(t *testing.T) {
	cases := []struct {
		budget, limit string
		ok            bool
	}{
		{"7680", "8Gi", true}, {"7681", "8Gi", false}, {"12000", "8Gi", false},
		{"7000", "8G", true}, {"7200", "8G", false}, {"1536", "2048Mi", true},
		{"1537", "2048Mi", false}, {"100000", "", true},
	}
	for _, c := range cases {
		sets := []string{"config.memory_budget_mb=" + c.budget, "resources.limits.memory=" + c.limit}
		if c.limit == "" {
			sets = []string{"config.memory_budget_mb=" + c.budget, "resources.limits=null"}
		}
		_, err := renderErr(t, sets...)
		if (err == nil) != c.ok {
			t.Errorf("budget %s, limit %q: %v, want ok=%v", c.budget, c.limit, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "does not fit") {
			t.Errorf("budget %s, limit %q: %v", c.budget, c.limit, err)
		}
	}
}
