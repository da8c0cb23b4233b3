package tfjob

/*
#include "cgo_glue.h"

TFJOB_GO_SETTER(set_memory_clock, tfjob_memory_options, clock, go_clock_cb, clock_payload)
*/
import "C"

import (
	"runtime/cgo"
	"runtime/debug"
	"sync"
	"time"
)

// clockState is what a clock callback reaches through its cgo.Handle.
type clockState struct {
	fn  func() time.Time
	mu  sync.Mutex
	err error // a recovered panic
}

func (c *clockState) takeErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	err := c.err
	c.err = nil
	return err
}

//export goClock
func goClock(h C.uintptr_t) (now C.int64_t) {
	st := cgo.Handle(h).Value().(*clockState)
	defer func() {
		if r := recover(); r != nil {
			st.mu.Lock()
			if st.err == nil {
				st.err = &PanicError{Callback: "clock", Value: r, Stack: debug.Stack()}
			}
			st.mu.Unlock()
			now = C.int64_t(time.Now().Unix())
		}
	}()
	return C.int64_t(st.fn().Unix())
}

// MemoryOptions tune the in-memory store; the zero value is a fresh store on the system clock.
type MemoryOptions struct {
	Namespace        string           // the default namespace; "": "default"
	Clock            func() time.Time // creationTimestamp and the like; nil: the system clock
	Seed             uint64           // uid / generateName randomness; 0: from the clock
	HistoryLimit     int              // watch events kept for resuming; 0: 1000
	BookmarkInterval time.Duration    // idle time before a bookmark; 0: 1 s; negative: never
}

// MemoryBackend is the in-memory fake API store (memory.h): a faithful stand-in for
// kube-apiserver + etcd, for tests and simulations.
type MemoryBackend struct {
	*Backend
	clock       *clockState
	clockHandle cgo.Handle
}

// NewMemoryBackend makes a new, empty in-memory store.
func NewMemoryBackend(o MemoryOptions) (*MemoryBackend, error) {
	if err := noNUL(o.Namespace); err != nil {
		return nil, err
	}
	var cs cstrings
	defer cs.free()
	var opts C.tfjob_memory_options
	C.tfjob_memory_options_init(&opts, C.TFJOB_MEMORY_OPTIONS_VERSION)
	opts.default_namespace = cs.of(o.Namespace, false)
	opts.seed = C.uint64_t(o.Seed)
	opts.history_limit = C.size_t(o.HistoryLimit)
	switch {
	case o.BookmarkInterval < 0:
		opts.bookmark_interval_ms = -1
	case o.BookmarkInterval > 0:
		opts.bookmark_interval_ms = C.int64_t(max(1, o.BookmarkInterval.Milliseconds()))
	}
	m := &MemoryBackend{}
	if o.Clock != nil {
		m.clock = &clockState{fn: o.Clock}
		m.clockHandle = cgo.NewHandle(m.clock)
		C.set_memory_clock(&opts, C.uintptr_t(m.clockHandle))
	}
	var h *C.tfjob_transport
	var cerr *C.tfjob_error
	if rc := C.tfjob_memory_transport_new(&h, &opts, &cerr); rc != 0 {
		if m.clockHandle != 0 {
			m.clockHandle.Delete()
		}
		return nil, takeError(rc, cerr)
	}
	m.Backend = newBackend(h, nil)
	if m.clockHandle != 0 {
		handle := m.clockHandle
		m.Backend.onFree = func() { handle.Delete() }
	}
	return m, nil
}

// Close releases the store (its watches and controllers first) and returns a panic of the
// clock callback, if one happened.
func (m *MemoryBackend) Close() error {
	m.Backend.Close()
	if m.clock != nil {
		return m.clock.takeErr()
	}
	return nil
}

// ResourceVersion is the store's current resourceVersion (1 before the first write, as a fresh etcd).
func (m *MemoryBackend) ResourceVersion() uint64 {
	return readHandle(m.Backend, func(h *C.tfjob_transport) uint64 { return uint64(C.tfjob_memory_resource_version(h)) })
}

// Bookmark sends a BOOKMARK now to every watch that asked for bookmarks.
func (m *MemoryBackend) Bookmark() error {
	return m.call(func(h *C.tfjob_transport) error {
		if rc := C.tfjob_memory_bookmark(h); rc != 0 {
			return takeError(rc, nil)
		}
		return nil
	})
}

// Compact forgets the event history (as etcd compaction does): watches resuming from an older
// version end with ErrGone.
func (m *MemoryBackend) Compact() error {
	return m.call(func(h *C.tfjob_transport) error {
		if rc := C.tfjob_memory_compact(h); rc != 0 {
			return takeError(rc, nil)
		}
		return nil
	})
}

// KubeSource says where the Kubernetes configuration comes from.
type KubeSource int

// Configuration sources.
const (
	KubeAuto       KubeSource = C.TFJOB_KUBE_SOURCE_AUTO       // kubeconfig, else in-cluster
	KubeKubeconfig KubeSource = C.TFJOB_KUBE_SOURCE_KUBECONFIG // kubeconfig only
	KubeInCluster  KubeSource = C.TFJOB_KUBE_SOURCE_IN_CLUSTER // the pod's service account only
)

// KubeOptions configure the Kubernetes backend; zero values mean the defaults.
type KubeOptions struct {
	Source         KubeSource
	Kubeconfig     string // explicit file; "": $KUBECONFIG, else ~/.kube/config
	Context        string // "": current-context
	Namespace      string // "": the context's, else "default"
	InClusterDir   string // "": /var/run/secrets/kubernetes.io/serviceaccount
	QPS            float64
	Burst          int
	ConnectTimeout time.Duration
	RequestTimeout time.Duration
	MaxRetries     int // 0: 5; negative: none
	RetryBase      time.Duration
	UserAgent      string
}

// KubeBackend is a Kubernetes API server over HTTPS (kube.h).
type KubeBackend struct {
	*Backend
}

// NewKubeBackend loads the configuration as kubectl does and makes a backend. No network
// traffic happens here.
func NewKubeBackend(o KubeOptions) (*KubeBackend, error) {
	if err := noNUL(o.Kubeconfig, o.Context, o.Namespace, o.InClusterDir, o.UserAgent); err != nil {
		return nil, err
	}
	if err := ensureGlobalInit(); err != nil {
		return nil, err
	}
	var cs cstrings
	defer cs.free()
	var opts C.tfjob_kube_options
	C.tfjob_kube_options_init(&opts, C.TFJOB_KUBE_OPTIONS_VERSION)
	opts.source = C.tfjob_kube_source(o.Source)
	opts.kubeconfig = cs.of(o.Kubeconfig, false)
	opts.context = cs.of(o.Context, false)
	opts.namespace_name = cs.of(o.Namespace, false)
	opts.in_cluster_dir = cs.of(o.InClusterDir, false)
	opts.qps = C.double(o.QPS)
	opts.burst = C.int(o.Burst)
	opts.connect_timeout_ms = C.int64_t(o.ConnectTimeout.Milliseconds())
	opts.request_timeout_ms = C.int64_t(o.RequestTimeout.Milliseconds())
	opts.max_retries = C.int(o.MaxRetries)
	opts.retry_base_ms = C.int64_t(o.RetryBase.Milliseconds())
	opts.user_agent = cs.of(o.UserAgent, false)
	var h *C.tfjob_transport
	var cerr *C.tfjob_error
	if rc := C.tfjob_kube_transport_new(&h, &opts, &cerr); rc != 0 {
		return nil, takeError(rc, cerr)
	}
	return &KubeBackend{newBackend(h, nil)}, nil
}

// NewKubeBackendFromKubeconfig uses a kubeconfig file ("": $KUBECONFIG, else ~/.kube/config)
// and context ("": its current context).
func NewKubeBackendFromKubeconfig(path, context string) (*KubeBackend, error) {
	return NewKubeBackend(KubeOptions{Source: KubeKubeconfig, Kubeconfig: path, Context: context})
}

// NewInClusterBackend uses the pod's service account.
func NewInClusterBackend() (*KubeBackend, error) {
	return NewKubeBackend(KubeOptions{Source: KubeInCluster})
}

// Server is the API server URL in use.
func (k *KubeBackend) Server() string {
	return readHandle(k.Backend, func(h *C.tfjob_transport) string { return goString(C.tfjob_kube_transport_server(h)) })
}
