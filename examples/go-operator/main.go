// Command go-operator shows how a controller written in Go uses libtfjob: it keeps its own view
// of the cluster (here an in-process fake; in a real operator, client-go informers), asks the
// library's planner what one reconcile step must do, and executes the plan: create and delete
// Pods and Services, record Events, write the status, requeue. A fake "kubelet" moves the pods
// through their phases so the job runs to completion.
//
// With -controller the same job is run by the library's own controller (tfjob.Controller) on
// its in-memory API store, a fake kubelet writing pod status through the store (controller.go);
// with -kubeconfig FILE that controller reconciles the TFJobs of a real cluster.
//
//	go run . [-controller] [-kubeconfig FILE] [path/to/tfjob.yaml]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	tfjob "github.com/libtfjob/libtfjob/bindings/go/tfjob"
)

const defaultJob = `apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: mnist, namespace: default, uid: 6c1d-example}
spec:
  successPolicy: AllWorkers
  tfReplicaSpecs:
    PS:
      replicas: 1
      template: {spec: {containers: [{name: tensorflow, image: tf-example}]}}
    Worker:
      replicas: 2
      restartPolicy: ExitCode
      template: {spec: {containers: [{name: tensorflow, image: tf-example}]}}
`

// cluster is the operator's view of the world: what informers would cache.
type cluster struct {
	job      map[string]any
	pods     map[string]map[string]any
	services map[string]map[string]any
	events   []tfjob.Action
}

func (c *cluster) list(m map[string]map[string]any) []byte {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	items := make([]map[string]any, 0, len(names))
	for _, n := range names {
		items = append(items, m[n])
	}
	b, _ := json.Marshal(items)
	return b
}

// reconcile is one level-triggered step: observe, plan, act. It returns when to look again.
func (c *cluster) reconcile(now time.Time) (*time.Duration, error) {
	raw, _ := json.Marshal(c.job)
	job, err := tfjob.Parse(raw, "tfjob")
	if err != nil {
		return nil, err
	}
	defer job.Close()
	plan, err := tfjob.PlanStep(job, c.list(c.pods), c.list(c.services), tfjob.PlanOptions{Now: now})
	if err != nil {
		return nil, err
	}
	for _, a := range plan.Actions {
		switch {
		case a.Action == "create" && a.Kind == "Pod":
			a.Object["status"] = map[string]any{"phase": "Pending"}
			c.pods[a.Name] = a.Object
		case a.Action == "create" && a.Kind == "Service":
			c.services[a.Name] = a.Object
		case a.Action == "delete" && a.Kind == "Pod":
			delete(c.pods, a.Name)
		case a.Action == "delete" && a.Kind == "Service":
			delete(c.services, a.Name)
		case a.Action == "delete" && a.Kind == "TFJob":
			c.job = nil
		case a.Action == "event":
			c.events = append(c.events, a)
		}
		if a.Action != "event" {
			fmt.Printf("  %s %s %s\n", a.Action, a.Kind, a.Name)
		}
	}
	if plan.Changed && c.job != nil {
		c.job["status"] = plan.Status // a real operator writes it through the /status subresource
	}
	if plan.RequeueAfter == nil {
		return nil, nil
	}
	d := time.Duration(*plan.RequeueAfter * float64(time.Second))
	return &d, nil
}

// kubelet moves every pod one phase on; worker 1 is killed once (exit 137, retryable under
// restartPolicy ExitCode), so the planner restarts it.
func (c *cluster) kubelet(killed *bool) {
	for name, pod := range c.pods {
		status := pod["status"].(map[string]any)
		labels := pod["metadata"].(map[string]any)["labels"].(map[string]any)
		typ := labels["training.kubeflow.org/replica-type"]
		switch status["phase"] {
		case "Pending":
			status["phase"] = "Running"
		case "Running":
			if typ == "ps" {
				continue // parameter servers run until the job is cleaned up
			}
			code := 0
			if name == "mnist-worker-1" && !*killed {
				code, *killed = 137, true
			}
			phase := "Succeeded"
			if code != 0 {
				phase = "Failed"
			}
			status["phase"] = phase
			status["containerStatuses"] = []any{map[string]any{"name": "tensorflow",
				"state": map[string]any{"terminated": map[string]any{"exitCode": code}}}}
		}
	}
}

func conditions(job map[string]any) string {
	status, _ := job["status"].(map[string]any)
	conds, _ := status["conditions"].([]any)
	out := ""
	for _, c := range conds {
		m := c.(map[string]any)
		out += fmt.Sprintf("%s=%s ", m["type"], m["status"])
	}
	return out
}

func main() {
	useController := flag.Bool("controller", false, "run the job with the library's controller (tfjob.Controller)")
	kubeconfig := flag.String("kubeconfig", "", "with -controller: reconcile the TFJobs of this cluster")
	flag.Parse()
	text := []byte(defaultJob)
	if flag.NArg() > 0 {
		var err error
		if text, err = os.ReadFile(flag.Arg(0)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	if *useController || *kubeconfig != "" {
		if err := runController(text, *kubeconfig); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	job, err := tfjob.Parse(text, "tfjob.yaml")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if errs := job.Validate(); len(errs) > 0 {
		for _, e := range errs {
			fmt.Fprintln(os.Stderr, e)
		}
		os.Exit(1)
	}
	s, _ := job.JSON()
	job.Close()
	c := &cluster{pods: map[string]map[string]any{}, services: map[string]map[string]any{}}
	json.Unmarshal([]byte(s), &c.job)

	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	killed := false
	for step := 1; step <= 20 && c.job != nil; step++ {
		fmt.Printf("step %d (+%ds)\n", step, int(now.Sub(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)).Seconds()))
		if _, err := c.reconcile(now); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Printf("  conditions: %s\n", conditions(c.job))
		if status, _ := c.job["status"].(map[string]any); status["completionTime"] != nil {
			break
		}
		c.kubelet(&killed)
		now = now.Add(10 * time.Second)
	}
	for _, e := range c.events {
		fmt.Printf("event %s %s: %s\n", e.Type, e.Reason, e.Message)
	}
	status, _ := c.job["status"].(map[string]any)
	for _, cond := range status["conditions"].([]any) {
		m := cond.(map[string]any)
		if m["type"] == "Succeeded" && m["status"] == "True" {
			fmt.Println("TFJob succeeded")
			return
		}
	}
	fmt.Println("TFJob did not succeed")
	os.Exit(1)
}
