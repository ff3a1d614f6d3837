package deploytest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// withServers replaces the server lines of haproxy.cfg (between "BEGIN
// servers" and "END servers") with one "server" line per address, as
// deploy/rig/rig.sh does.
func withServers(cfg string, addrs []string) string {
	var lines []string
	for i, a := range addrs {
		lines = append(lines, fmt.Sprintf("\tserver sy%d %s", i+1, a))
	}
	re := regexp.MustCompile(`(?s)(# BEGIN servers\n).*?(\t# END servers)`)
	return re.ReplaceAllString(cfg, "${1}"+strings.Join(lines, "\n")+"\n${2}")
}

// standIn is a server that answers in place of switchyard: /ping, and for
// anything else its own name and the affinity key HAProxy sent.
type standIn struct {
	name string
	srv  *httptest.Server
	down atomic.Bool // answer 503 to requests, as a server that is shutting down
}

func newStandIn(name string) *standIn {
	s := &standIn{name: name}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/ping" {
			w.Write([]byte("{}"))
			return
		}
		if s.down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"server": s.name, "key": r.Header.Get("X-Switchyard-Affinity-Key")})
	}))
	return s
}

// TestHAProxy runs haproxy.cfg (HAProxy 2.6, Debian 12's haproxy package)
// in front of three stand-in servers: every way of naming a model gives the
// model as the hash key and the same replica; a replica that goes away
// hands over only its own models; a 503 and a refused connection are sent
// again to another replica. Skipped without haproxy.
func TestHAProxy(t *testing.T) {
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("haproxy is not installed (apt-get install haproxy)")
	}
	data, err := os.ReadFile("../routing/haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	var servers []*standIn
	var addrs []string
	for i := range 3 {
		s := newStandIn(fmt.Sprintf("sy%d", i+1))
		defer s.srv.Close()
		servers = append(servers, s)
		addrs = append(addrs, strings.TrimPrefix(s.srv.URL, "http://"))
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(cfg, []byte(withServers(string(data), addrs)), 0o644); err != nil {
		t.Fatal(err)
	}
	front := freeAddr(t)
	cmd := exec.Command(bin, "-db", "-f", cfg)
	cmd.Env = append(os.Environ(), "HAPROXY_BIND="+front, "HAPROXY_ADMIN_SOCKET="+filepath.Join(dir, "admin.sock"))
	check := exec.Command(bin, "-c", "-f", cfg)
	check.Env = cmd.Env
	if out, err := check.CombinedOutput(); err != nil {
		t.Fatalf("haproxy -c: %v\n%s", err, out)
	}
	log, err := os.Create(filepath.Join(dir, "haproxy.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			out, _ := os.ReadFile(log.Name())
			t.Logf("haproxy's log:\n%s", out)
		}
	}()
	base := "http://" + front
	waitListening(t, front)

	// Every way of naming a model: the key is the model, and one model is
	// on one replica whatever the route.
	placed := map[string]string{}
	for _, c := range affinityCases {
		server, key, code := send(t, base, c.method, c.path, c.header, c.body)
		if code != 200 {
			t.Fatalf("%s %s: status %d", c.method, c.path, code)
		}
		if c.path == "/ping" {
			continue
		}
		if key != c.model {
			t.Errorf("%s %s %v: key %q, want %q", c.method, c.path, c.header, key, c.model)
		}
		if p, ok := placed[c.model]; ok && p != server {
			t.Errorf("%s %s: model %s on %s, earlier on %s", c.method, c.path, c.model, server, p)
		}
		placed[c.model] = server
	}
	// Spread: more models, and every replica gets some.
	for i := range 30 {
		m := fmt.Sprintf("m%02d", i)
		placed[m], _, _ = send(t, base, "POST", "/predictions/"+m, nil, "{}")
	}
	per := map[string]int{}
	for _, s := range placed {
		per[s]++
	}
	t.Logf("models per replica: %v", per)
	if len(per) != 3 {
		t.Errorf("models per replica %v: want all three used", per)
	}

	// A replica that answers 503 (shutting down): its requests go to
	// another replica and succeed.
	servers[1].down.Store(true)
	for m, s := range placed {
		got, _, code := send(t, base, "POST", "/predictions/"+m, nil, "{}")
		if code != 200 {
			t.Errorf("model %s (on %s) while sy2 answers 503: status %d", m, s, code)
		}
		if s == "sy2" && got == "sy2" {
			t.Errorf("model %s answered by sy2, which answers 503", m)
		}
	}
	servers[1].down.Store(false)

	// A replica that is gone (connection refused): its models move, the
	// others' stay where they were.
	servers[2].srv.Close()
	for m, s := range placed {
		got, _, code := send(t, base, "POST", "/predictions/"+m, nil, "{}")
		if code != 200 {
			t.Errorf("model %s (on %s) with sy3 gone: status %d", m, s, code)
			continue
		}
		if s != "sy3" && got != s {
			t.Errorf("model %s moved from %s to %s though %s is up", m, s, got, s)
		}
	}
}

func send(t *testing.T, base, method, path string, header map[string]string, body string) (server, key string, code int) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var ans map[string]string
	json.NewDecoder(resp.Body).Decode(&ans)
	return ans["server"], ans["key"], resp.StatusCode
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitListening(t *testing.T, addr string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
	}
	t.Fatalf("nothing listens on %s", addr)
}
