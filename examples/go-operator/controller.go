package main

// The same job, run by the library's own controller (tfjob.Controller) instead of the loop in
// main.go: informer caches, work queue, expectations, Events and status writes all happen in
// libtfjob. On the in-memory API store (tfjob.NewMemoryBackend) a fake kubelet goroutine
// watches the pods and writes their status; with -kubeconfig the controller runs against a real
// cluster (whose kubelets run the pods) until SIGINT/SIGTERM.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	tfjob "github.com/libtfjob/libtfjob/bindings/go/tfjob"
)

func runController(text []byte, kubeconfig string) error {
	if kubeconfig != "" {
		return runOnCluster(kubeconfig)
	}
	store, err := tfjob.NewMemoryBackend(tfjob.MemoryOptions{})
	if err != nil {
		return err
	}
	defer store.Close()
	ctrl, err := tfjob.NewController(store.Backend, tfjob.ControllerOptions{
		Workers: 2,
		Log: func(level tfjob.LogLevel, msg string, fields map[string]any) {
			if level >= tfjob.LogWarn {
				fmt.Printf("  log %s: %s %v\n", level, msg, fields)
			}
		},
		LogLevel: tfjob.LogInfo,
	})
	if err != nil {
		return err
	}
	defer ctrl.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runErr := make(chan error, 1)
	go func() { runErr <- ctrl.Run(ctx) }()
	go fakeKubelet(ctx, store.Backend)

	job, err := store.CreateTFJob("", text)
	if err != nil {
		return err
	}
	meta := job["metadata"].(map[string]any)
	ns, name := meta["namespace"].(string), meta["name"].(string)

	// Follow the job's conditions through a watch until it finishes.
	w, err := store.Watch(tfjob.TFJobs, ns, tfjob.WatchOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		return err
	}
	defer w.Close()
	last := ""
	timeout := time.After(60 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return fmt.Errorf("watch ended: %v", w.Err())
			}
			if c := conditions(ev.Object); c != last {
				fmt.Printf("  conditions: %s\n", c)
				last = c
			}
			if tfjob.HasCondition(ev.Object, "Succeeded") || tfjob.HasCondition(ev.Object, "Failed") {
				cancel()
				if err := <-runErr; err != nil {
					return err
				}
				events, _ := store.ListAll(tfjob.Events, ns, tfjob.ListOptions{}, 0)
				sort.Slice(events, func(i, j int) bool { return resourceVersion(events[i]) < resourceVersion(events[j]) })
				for _, e := range events {
					fmt.Printf("event %s %s: %s\n", e["type"], e["reason"], e["message"])
				}
				m, _ := ctrl.Metrics()
				fmt.Printf("reconciles %d, API calls %v\n", m.Reconciles, m.APICalls)
				if tfjob.HasCondition(ev.Object, "Succeeded") {
					fmt.Println("TFJob succeeded")
					return nil
				}
				return errors.New("TFJob failed")
			}
		case <-timeout:
			return errors.New("timed out")
		}
	}
}

// resourceVersion orders objects of the memory store by when they were written.
func resourceVersion(o tfjob.Object) int {
	rv, _ := strconv.Atoi(o["metadata"].(map[string]any)["resourceVersion"].(string))
	return rv
}

// fakeKubelet plays the nodes: each new pod starts Running; workers then exit 0, except that
// worker 1 is killed once with exit code 137 (retryable under restartPolicy ExitCode).
func fakeKubelet(ctx context.Context, b *tfjob.Backend) {
	w, err := b.Watch(tfjob.Pods, tfjob.NamespaceAll, tfjob.WatchOptions{})
	if err != nil {
		return
	}
	defer w.Close()
	killed := false
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			if ev.Type != tfjob.Added {
				continue
			}
			meta := ev.Object["metadata"].(map[string]any)
			ns, name := meta["namespace"].(string), meta["name"].(string)
			setPhase(b, ns, name, "Running", -1)
			if strings.Contains(name, "-ps-") {
				continue // parameter servers run until the job is cleaned up
			}
			code := 0
			if strings.HasSuffix(name, "-worker-1") && !killed {
				code, killed = 137, true
			}
			phase := "Succeeded"
			if code != 0 {
				phase = "Failed"
			}
			setPhase(b, ns, name, phase, code)
		}
	}
}

func setPhase(b *tfjob.Backend, ns, name, phase string, code int) {
	for attempt := 0; attempt < 10; attempt++ {
		pod, err := b.Get(tfjob.Pods, ns, name)
		if err != nil {
			return
		}
		state := map[string]any{"running": map[string]any{}}
		if code >= 0 {
			state = map[string]any{"terminated": map[string]any{"exitCode": code}}
		}
		pod["status"] = map[string]any{"phase": phase, "containerStatuses": []any{
			map[string]any{"name": "tensorflow", "restartCount": 0, "state": state}}}
		if _, err := b.UpdateStatus(tfjob.Pods, ns, pod); !tfjob.IsConflict(err) {
			return
		}
	}
}

// runOnCluster runs the controller on the cluster of a kubeconfig until SIGINT or SIGTERM.
func runOnCluster(kubeconfig string) error {
	k, err := tfjob.NewKubeBackendFromKubeconfig(kubeconfig, "")
	if err != nil {
		return err
	}
	defer k.Close()
	ctrl, err := tfjob.NewController(k.Backend, tfjob.ControllerOptions{Workers: 4, LeaderElection: true,
		Log: func(level tfjob.LogLevel, msg string, fields map[string]any) {
			fmt.Printf("%s %s %v\n", level, msg, fields)
		}, LogLevel: tfjob.LogInfo})
	if err != nil {
		return err
	}
	defer ctrl.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Printf("reconciling TFJobs on %s (Ctrl-C stops)\n", k.Server())
	return ctrl.Run(ctx)
}
