package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"
)

// wantSeries are the metrics /metrics must expose after a short load, by
// type, each as name{its labels besides le, sorted}.
var wantSeries = map[dto.MetricType]string{
	dto.MetricType_COUNTER: `pico_http_requests_total{code,op,protocol} pico_append_records_total pico_append_bytes_total
		pico_producer_rejections_total{reason} pico_wal_puts_total pico_object_store_requests_total{op,result}
		pico_fenced_total{kind} pico_stream_transfers_total{result} pico_cache_requests_total{cache,result}
		pico_gc_deleted_objects_total`,
	dto.MetricType_GAUGE: `pico_build_info{go_version,version} pico_live_readers{mode} pico_http_open_connections
		pico_wal_unflushed_bytes pico_meta_applied_index pico_streams_owned pico_lease_held pico_ready
		pico_cache_bytes{cache} pico_gc_pending_objects process_open_fds process_max_fds`,
	dto.MetricType_HISTOGRAM: `pico_http_request_duration_seconds{op,protocol} pico_append_batch_records
		pico_append_ack_latency_seconds pico_wal_upload_duration_seconds pico_wal_upload_bytes
		pico_object_store_request_duration_seconds{op} pico_meta_propose_duration_seconds`,
}

// TestMetricsSeriesAfterLoad: after creates, appends, reads, a long-poll,
// a producer gap and a miss on Pico, and a create, an append and an SSE
// read on Durable Streams (counted live while it lasts), /metrics exposes every series an operator
// needs, with the right types and labels, counts at least what was sent,
// names no stream in any label, and passes the Prometheus lint; the
// shipped dashboard and alert rules name only series it exposes.
func TestMetricsSeriesAfterLoad(t *testing.T) {
	n := startNode(t, nodeConfig{dataDir: t.TempDir(), flags: []string{"--ds-listen", "127.0.0.1:0"}})
	names := []string{"/metrics-load/orders", "/metrics-load/chat-42", "/metrics-load/device-7"}
	ds := dsURL(t, n) + "/metrics-load/ds"
	send(t, "PUT", ds, hdr("Content-Type", "text/plain"), nil).wantStatus(t, 201)
	send(t, "POST", ds, hdr("Content-Type", "text/plain"), []byte("ds record")).wantStatus(t, 204)
	sse := sendAsync("GET", ds+"?offset=-1&live=sse", nil, nil) // lasts --sse-max-duration-sec
	waitForLiveReader(t, n.AdminURL+"/metrics", "sse")
	const appendsPer = 4
	for _, name := range names {
		mustCreate(t, n.URL+name, "text/plain")
		for i := range appendsPer {
			mustAppend(t, n.URL+name, "text/plain", fmt.Appendf(nil, "record %d", i))
		}
		send(t, "GET", n.URL+name+"?seq=0", nil, nil).wantStatus(t, 200)
		send(t, "HEAD", n.URL+name, nil, nil).wantStatus(t, 200)
	}
	send(t, "GET", n.URL+names[0]+"?seq=now&live=long-poll", nil, nil) // parks until the timeout
	send(t, "GET", n.URL+"/metrics-load/missing?seq=0", nil, nil).wantStatus(t, 404)
	gap := send(t, "POST", n.URL+names[1], hdr("Content-Type", "text/plain", "Pico-Producer-Id", "p",
		"Pico-Producer-Epoch", "0", "Pico-Producer-Seq", "7"), []byte("x"))
	if gap.status < 400 {
		t.Fatalf("a producer's first append at seq 7: status %d, want a refusal", gap.status)
	}

	<-sse
	body := scrape(t, n.AdminURL+"/metrics")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for typ, list := range wantSeries {
		for _, spec := range strings.Fields(list) {
			name, labels, _ := strings.Cut(strings.TrimSuffix(spec, "}"), "{")
			checkFamily(t, families[name], name, typ, strings.FieldsFunc(labels, func(r rune) bool { return r == ',' }))
		}
	}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if strings.Contains(l.GetValue(), "metrics-load") {
					t.Errorf("%s: label %s=%q names a stream", name, l.GetName(), l.GetValue())
				}
			}
		}
	}

	sent := len(names) * appendsPer
	atLeast := func(what string, got, want float64) {
		t.Helper()
		if got < want {
			t.Errorf("%s = %v, want at least %v", what, got, want)
		}
	}
	req := func(op, code string) float64 {
		return sample(families, "pico_http_requests_total", map[string]string{"protocol": "pico", "op": op, "code": code})
	}
	atLeast("create 2xx", req("create", "2xx"), float64(len(names)))
	atLeast("append 2xx", req("append", "2xx"), float64(sent))
	atLeast("read 2xx", req("read", "2xx"), float64(len(names)))
	atLeast("read 4xx", req("read", "4xx"), 1)
	atLeast("head 2xx", req("head", "2xx"), float64(len(names)))
	atLeast("live_read 2xx", req("live_read", "2xx"), 1)
	atLeast("append 4xx", req("append", "4xx"), 1)
	atLeast("append durations", histCount(families, "pico_http_request_duration_seconds", map[string]string{"protocol": "pico", "op": "append"}), float64(sent))
	if histCount(families, "pico_http_request_duration_seconds", map[string]string{"op": "live_read"}) != 0 {
		t.Error("live reads are timed: their wait would skew the request latency")
	}
	atLeast("admin metrics scrapes", sample(families, "pico_http_requests_total", map[string]string{"protocol": "admin", "op": "metrics"}), 0)
	ds2xx := func(op string) float64 {
		return sample(families, "pico_http_requests_total", map[string]string{"protocol": "ds", "op": op, "code": "2xx"})
	}
	atLeast("ds create 2xx", ds2xx("create"), 1)
	atLeast("ds append 2xx", ds2xx("append"), 1)
	atLeast("ds live_read 2xx", ds2xx("live_read"), 1)
	atLeast("append records", sample(families, "pico_append_records_total", nil), float64(sent+1))
	atLeast("append bytes", sample(families, "pico_append_bytes_total", nil), float64(sent*len("record 0")))
	atLeast("append acks", histCount(families, "pico_append_ack_latency_seconds", nil), float64(sent))
	atLeast("records per append", histCount(families, "pico_append_batch_records", nil), float64(sent))
	atLeast("gap rejections", sample(families, "pico_producer_rejections_total", map[string]string{"reason": "gap"}), 1)
	atLeast("WAL uploads", histCount(families, "pico_wal_upload_duration_seconds", nil), 1)
	atLeast("WAL upload bytes", histCount(families, "pico_wal_upload_bytes", nil), 1)
	atLeast("store PUTs", sample(families, "pico_object_store_requests_total", map[string]string{"op": "put", "result": "ok"}), 1)
	atLeast("store PUT durations", histCount(families, "pico_object_store_request_duration_seconds", map[string]string{"op": "put"}), 1)
	atLeast("proposals", histCount(families, "pico_meta_propose_duration_seconds", nil), float64(len(names)))
	atLeast("applied index", sample(families, "pico_meta_applied_index", nil), 1)
	atLeast("streams owned", sample(families, "pico_streams_owned", nil), float64(len(names)))
	atLeast("ready", sample(families, "pico_ready", nil), 1)
	atLeast("open connections", sample(families, "pico_http_open_connections", nil), 0)
	atLeast("open fds", sample(families, "process_open_fds", nil), 1)
	if v := sample(families, "pico_build_info", nil); v != 1 {
		t.Errorf("pico_build_info = %v, want 1", v)
	}

	var ours []*dto.MetricFamily
	for name, f := range families {
		if strings.HasPrefix(name, "pico_") {
			ours = append(ours, f)
		}
	}
	problems, err := promlint.NewWithMetricFamilies(ours).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}

	checkDeployFiles(t, families)
}

// checkFamily checks f is a family of typ whose every sample has exactly
// the labels want.
func checkFamily(t *testing.T, f *dto.MetricFamily, name string, typ dto.MetricType, want []string) {
	t.Helper()
	if f == nil {
		t.Errorf("%s missing", name)
		return
	}
	if f.GetType() != typ {
		t.Errorf("%s is a %v, want a %v", name, f.GetType(), typ)
	}
	for _, m := range f.GetMetric() {
		var got []string
		for _, l := range m.GetLabel() {
			got = append(got, l.GetName())
		}
		if slices.Sort(got); !slices.Equal(got, want) {
			t.Errorf("%s has labels %v, want %v", name, got, want)
			return
		}
	}
}

// checkDeployFiles parses the shipped Grafana dashboard and alert rules
// and checks every pico_ series they query is one /metrics exposes.
func checkDeployFiles(t *testing.T, families map[string]*dto.MetricFamily) {
	deploy := filepath.Join("..", "..", "cmd", "pico", "deploy")
	raw, err := os.ReadFile(filepath.Join(deploy, "grafana", "pico.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	var exprs []string
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	raw, err = os.ReadFile(filepath.Join(deploy, "prometheus", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct{ Alert, Expr string }
		}
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatalf("alert rules: %v", err)
	}
	alerts := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || r.Expr == "" {
				t.Errorf("alert rule %+v lacks a name or an expression", r)
			}
			exprs = append(exprs, r.Expr)
			alerts++
		}
	}
	if len(dash.Panels) == 0 || alerts == 0 {
		t.Fatalf("%d panels, %d alerts: want some of each", len(dash.Panels), alerts)
	}
	series := regexp.MustCompile(`\b(pico|process)_[a-z0-9_]+`)
	for _, e := range exprs {
		for _, name := range series.FindAllString(e, -1) {
			base := name
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if b, ok := strings.CutSuffix(name, suffix); ok && families[b].GetType() == dto.MetricType_HISTOGRAM {
					base = b
				}
			}
			if _, ok := families[base]; !ok {
				t.Errorf("%q queries %s, which /metrics does not expose", e, name)
			}
		}
	}
}

// waitForLiveReader scrapes url until pico_live_readers{mode} is 1.
func waitForLiveReader(t *testing.T, url, mode string) {
	t.Helper()
	for range 100 {
		parser := expfmt.NewTextParser(model.UTF8Validation)
		families, err := parser.TextToMetricFamilies(bytes.NewReader(scrape(t, url)))
		if err != nil {
			t.Fatal(err)
		}
		if sample(families, "pico_live_readers", map[string]string{"mode": mode}) == 1 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("pico_live_readers{mode=%q} never reached 1 during a live read", mode)
}

func scrape(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: status %d, %v", resp.StatusCode, err)
	}
	return body
}

// matching yields the samples of family name whose labels include want.
func matching(families map[string]*dto.MetricFamily, name string, want map[string]string) []*dto.Metric {
	var out []*dto.Metric
	for _, m := range families[name].GetMetric() {
		ok := true
		for k, v := range want {
			ok = ok && slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool { return l.GetName() == k && l.GetValue() == v })
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

// sample sums the counter or gauge samples of name matching want.
func sample(families map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	sum := 0.0
	for _, m := range matching(families, name, want) {
		sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	return sum
}

// histCount sums the observation counts of histogram name matching want.
func histCount(families map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	sum := 0.0
	for _, m := range matching(families, name, want) {
		sum += float64(m.GetHistogram().GetSampleCount())
	}
	return sum
}
