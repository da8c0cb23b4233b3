package diff

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	"github.com/kubeflow/training-operator/pkg/webhooks/tensorflow"
	tfjob "github.com/libtfjob/libtfjob/bindings/go/tfjob"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// The admission webhook end to end: v1.9.4's own handler (controller-runtime's
// admission.WithCustomValidator around tensorflow.Webhook, as its manager serves it) and
// tfjob-operator's (over HTTPS, --compat training-operator-1.9) are sent the same
// AdmissionReviews, and must answer the same: allowed, status code, reason and message, the
// message being what the API server shows after `admission webhook "..." denied the request: `.
// Reviews: the fixtures of tests/kube/fixtures/webhook/invalid, an UPDATE changing managedBy,
// and random jobs that v1.9's CRD schema admits (the only ones the API server sends on) and on
// whose field errors both already agree (TestDifferential compares those). v1.9 builds its
// message by iterating Go maps: the errors of several replica types come in map order, and the
// supported values of runPolicy.managedBy in a set's order (sets.UnsortedList). Messages are
// therefore compared with both sorted (canonicalMessage), as the field errors are (normalize.go,
// rules 3 and 4).

type reviewAnswer struct {
	Allowed bool   `json:"allowed"`
	UID     string `json:"uid"`
	Status  *struct {
		Code    int    `json:"code"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
	} `json:"status"`
}

func (a reviewAnswer) String() string {
	if a.Status == nil {
		return fmt.Sprintf("allowed=%v (no status)", a.Allowed)
	}
	return fmt.Sprintf("allowed=%v code=%d reason=%q message=%q", a.Allowed, a.Status.Code, a.Status.Reason, a.Status.Message)
}

func sameAnswer(a, b reviewAnswer) bool {
	if a.Allowed != b.Allowed || a.UID != b.UID || (a.Status == nil) != (b.Status == nil) {
		return false
	}
	return a.Status == nil || (a.Status.Code == b.Status.Code && a.Status.Reason == b.Status.Reason &&
		canonicalMessage(a.Status.Message) == canonicalMessage(b.Status.Message))
}

// An error of an aggregated message starts with its field path and ": ".
var fieldErrStart = regexp.MustCompile(`^[A-Za-z]+[.\[][^ ]*: `)

// canonicalMessage: an aggregated message ("[e1, e2]", or one error) with its errors sorted and
// the values of each "supported values: " list sorted.
func canonicalMessage(msg string) string {
	body := msg
	if strings.HasPrefix(body, "[") && strings.HasSuffix(body, "]") {
		body = body[1 : len(body)-1]
	}
	var errs []string
	for _, tok := range strings.Split(body, ", ") {
		if len(errs) == 0 || fieldErrStart.MatchString(tok) {
			errs = append(errs, tok)
		} else {
			errs[len(errs)-1] += ", " + tok
		}
	}
	for i, e := range errs {
		if at := strings.Index(e, "supported values: "); at >= 0 {
			head, vals := e[:at+len("supported values: ")], strings.Split(e[at+len("supported values: "):], ", ")
			sort.Strings(vals)
			errs[i] = head + strings.Join(vals, ", ")
		}
	}
	sort.Strings(errs)
	return strings.Join(errs, ", ")
}

func reviewBody(uid, op string, object, old []byte) []byte {
	req := map[string]any{"uid": uid, "operation": op, "namespace": "ns", "name": "job",
		"kind":     map[string]any{"group": "kubeflow.org", "version": "v1", "kind": "TFJob"},
		"resource": map[string]any{"group": "kubeflow.org", "version": "v1", "resource": "tfjobs"},
		"userInfo": map[string]any{"username": "diff"}, "object": json.RawMessage(object)}
	if old != nil {
		req["oldObject"] = json.RawMessage(old)
	}
	b, _ := json.Marshal(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req})
	return b
}

func decodeAnswer(t *testing.T, body []byte) reviewAnswer {
	var r struct {
		Response reviewAnswer `json:"response"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("not an AdmissionReview: %v: %s", err, body)
	}
	return r.Response
}

// selfSigned writes tls.crt and tls.key for 127.0.0.1 into dir and returns the certificate.
func selfSigned(t *testing.T, dir string) *x509.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "diff"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalPKCS8PrivateKey(key)
	os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	return cert
}

// startOperator runs tfjob-operator's webhook alone: its API server does not answer (the
// controller keeps retrying its first list), the webhook serves regardless.
func startOperator(t *testing.T, bin string) (*http.Client, string) {
	dir := t.TempDir()
	cert := selfSigned(t, dir)
	kc := filepath.Join(dir, "kubeconfig")
	os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\"}}]\n"+
		"users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"), 0o600)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	logf, _ := os.Create(filepath.Join(dir, "operator.log"))
	cmd := exec.Command(bin, "--kubeconfig", kc, "--compat", "training-operator-1.9", "--metrics-bind-address", "0",
		"--health-probe-bind-address", "0", "--webhook-host", "127.0.0.1", "--webhook-server-port",
		strconv.Itoa(port), "--webhook-cert-dir", dir, "--log-level", "error")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		logf.Close()
	})
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	url := fmt.Sprintf("https://127.0.0.1:%d/validate-kubeflow-org-v1-tfjob", port)
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if r, err := client.Post(url, "application/json", bytes.NewReader([]byte("{}"))); err == nil {
			r.Body.Close()
			return client, url
		}
	}
	log, _ := os.ReadFile(logf.Name())
	t.Fatalf("tfjob-operator's webhook did not come up: %s", log)
	return nil, ""
}

// admittedBySchema: v1.9's CRD schema lets data through to the webhook.
func admittedBySchema(data []byte) bool {
	errs, err := v19SchemaErrors(data)
	return err == nil && len(errs) == 0
}

func TestWebhookResponses(t *testing.T) {
	bin := os.Getenv("TFJOB_OPERATOR")
	if bin == "" {
		t.Skip("TFJOB_OPERATOR is not set (tests/suites/90-diff.sh sets it)")
	}
	if compat != tfjob.TrainingOperator19 {
		t.Skip("the webhook is compared in v1.9's mode only")
	}
	client, url := startOperator(t, bin)
	scheme := runtime.NewScheme()
	if err := kubeflowv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	v19 := admission.WithCustomValidator(scheme, &kubeflowv1.TFJob{}, &tensorflow.Webhook{})
	askV19 := func(body []byte) reviewAnswer {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/validate-kubeflow-org-v1-tfjob", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		v19.ServeHTTP(rec, req.WithContext(context.Background()))
		return decodeAnswer(t, rec.Body.Bytes())
	}
	askOurs := func(body []byte) reviewAnswer {
		r, err := client.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		if r.StatusCode != http.StatusOK {
			t.Fatalf("tfjob-operator answered HTTP %d: %s", r.StatusCode, b)
		}
		return decodeAnswer(t, b)
	}
	compared, denied := 0, 0
	compare := func(what string, body []byte) {
		ours, theirs := askOurs(body), askV19(body)
		compared++
		if !ours.Allowed {
			denied++
		}
		if !sameAnswer(theirs, ours) {
			t.Errorf("%s: v1.9: %v\n  ours: %v", what, theirs, ours)
		}
	}
	// Fixtures v1.9 admits on purpose (docs/semantics-diff.md names each): not compared.
	intended := map[string]string{
		"replicas-over-limit.yaml": "D2: libtfjob's replica limit is a validation rule; v1.9 has no limit",
	}
	fixtures, _ := filepath.Glob("../kube/fixtures/webhook/invalid/*.yaml")
	for i, f := range fixtures {
		data, _ := os.ReadFile(f)
		if why, ok := intended[filepath.Base(f)]; ok {
			t.Logf("%s: not compared (%s)", filepath.Base(f), why)
			continue
		}
		if admittedBySchema(asJSON(t, data)) {
			compare(filepath.Base(f), reviewBody(fmt.Sprintf("f-%d", i), "CREATE", asJSON(t, data), nil))
		}
	}
	upd := func(managedBy string) []byte {
		return []byte(`{"apiVersion":"kubeflow.org/v1","kind":"TFJob","metadata":{"name":"u","namespace":"ns"},` +
			`"spec":{"runPolicy":{"managedBy":"` + managedBy + `"},"tfReplicaSpecs":{"Worker":{"template":` +
			`{"spec":{"containers":[{"name":"tensorflow","image":"tf"}]}}}}}}`)
	}
	compare("UPDATE of managedBy", reviewBody("u-1", "UPDATE", upd("kueue.x-k8s.io/multikueue"), upd("kubeflow.org/training-operator")))
	compare("UPDATE, managedBy kept", reviewBody("u-2", "UPDATE", upd("kubeflow.org/training-operator"), upd("kubeflow.org/training-operator")))
	seed, _, count := seededRun(20)
	g := NewGen(seed)
	for i := 0; i < count; i++ {
		data := asJSON(t, g.Job())
		if !admittedBySchema(data) {
			continue
		}
		job, err := v19Decode(data)
		if err != nil {
			continue
		}
		want, perr := v19Validate(job)
		ours, err := tfjob.Parse(data, "")
		if perr != nil || err != nil {
			continue // a v1.9 panic (its handler answers nothing) or no TFJob: TestDifferential's
		}
		got, err := oursValidate(ours)
		ours.Close()
		if onlyV19, onlyOurs := diffErrs(want, got); err != nil || len(onlyV19)+len(onlyOurs) > 0 {
			continue
		}
		compare(fmt.Sprintf("random job %d (seed %d): %s", i, seed, data), reviewBody(fmt.Sprintf("r-%d", i), "CREATE", data, nil))
	}
	t.Logf("webhook: %d AdmissionReviews answered alike by v1.9.4 and tfjob-operator (%d denied)", compared, denied)
	if compared < 20 || denied < 10 {
		t.Errorf("too few reviews compared (%d, %d denied): the comparison saw nothing", compared, denied)
	}
}

// canonicalMessage forgives the two orders v1.9 takes from Go maps, and nothing else.
func TestCanonicalMessage(t *testing.T) {
	a := `[spec.runPolicy.managedBy: Unsupported value: "": supported values: "b", "a", spec.x[W].y: Required value: must be required, or not]`
	b := `[spec.x[W].y: Required value: must be required, or not, spec.runPolicy.managedBy: Unsupported value: "": supported values: "a", "b"]`
	if canonicalMessage(a) != canonicalMessage(b) {
		t.Errorf("the same errors in another order differ:\n%s\n%s", canonicalMessage(a), canonicalMessage(b))
	}
	for _, c := range []string{
		strings.Replace(b, `"a", "b"`, `"a", "c"`, 1),
		strings.Replace(b, "must be required, or not", "must be required", 1),
		strings.Replace(b, "Required value", "Invalid value", 1),
	} {
		if canonicalMessage(a) == canonicalMessage(c) {
			t.Errorf("different messages compare equal:\n%s\n%s", a, c)
		}
	}
}
