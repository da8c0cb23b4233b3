package tfjob

/*
#include <stdlib.h>
#include <tfjob/tfjob.h>

extern int goWatchEvent(int type, char *object_json, uintptr_t handle);
extern void goWatchClosed(int code, tfjob_error *err, uintptr_t handle);

static int watch_event_cb(tfjob_watch_event type, const char *object_json, void *payload)
{
	return goWatchEvent((int)type, (char *)object_json, (uintptr_t)payload);
}

static void watch_closed_cb(int code, const tfjob_error *err, void *payload)
{
	goWatchClosed(code, (tfjob_error *)err, (uintptr_t)payload);
}

static void set_watch_callbacks(tfjob_watch_options *o, uintptr_t handle)
{
	o->on_event = watch_event_cb;
	o->on_closed = watch_closed_cb;
	o->payload = (void *)handle;
}
*/
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/cgo"
	"runtime/debug"
	"strings"
	"sync"
	"unsafe"
)

// Object is a Kubernetes object as decoded JSON.
type Object = map[string]any

// Resource names a kind of object as the API server's URLs do: Group "" is the core group.
type Resource struct {
	Group      string
	Version    string
	Resource   string // lower-case plural
	Namespaced bool
}

// The built-in resources.
var (
	TFJobs     = Resource{"kubeflow.org", "v1", "tfjobs", true}
	Pods       = Resource{"", "v1", "pods", true}
	Services   = Resource{"", "v1", "services", true}
	Events     = Resource{"", "v1", "events", true}
	PodGroups  = Resource{"scheduling.volcano.sh", "v1beta1", "podgroups", true}
	Namespaces = Resource{"", "v1", "namespaces", false}
)

// LookupResource finds a built-in resource by plural or kind, case-insensitive ("tfjobs",
// "TFJob", "svc", ...).
func LookupResource(name string) (Resource, bool) {
	if strings.IndexByte(name, 0) >= 0 {
		return Resource{}, false
	}
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	r := C.tfjob_resource_lookup(cs)
	if r == nil {
		return Resource{}, false
	}
	return Resource{goString(r.group), goString(r.version), goString(r.resource), r.namespaced != 0}, true
}

// cstrings allocates C strings for one call; free releases them all.
type cstrings []unsafe.Pointer

// nulArgument is the panic of cstrings.of for a string with a NUL byte, which C would cut
// there (a name "a\x00b" would address the object "a"). Backend.call turns it into an
// ErrInvalidArgument error before the C call is made.
type nulArgument struct{ s string }

// of returns a C copy of s, or NULL for "" unless keepEmpty. It panics with nulArgument when s
// holds a NUL byte.
func (a *cstrings) of(s string, keepEmpty bool) *C.char {
	if s == "" && !keepEmpty {
		return nil
	}
	if strings.IndexByte(s, 0) >= 0 {
		panic(nulArgument{s})
	}
	cs := C.CString(s)
	*a = append(*a, unsafe.Pointer(cs))
	return cs
}

func (a *cstrings) free() {
	for _, p := range *a {
		C.free(p)
	}
	*a = nil
}

func (a *cstrings) resource(r Resource) C.tfjob_resource {
	var ns C.int
	if r.Namespaced {
		ns = 1
	}
	return C.tfjob_resource{group: a.of(r.Group, true), version: a.of(r.Version, true),
		resource: a.of(r.Resource, true), namespaced: ns}
}

// objectJSON encodes what callers pass as an object: []byte, string and json.RawMessage are
// JSON (or YAML for TFJobs given to CreateTFJob) text; *Job is serialised; anything else is
// marshalled with encoding/json.
func objectJSON(obj any) ([]byte, error) {
	switch v := obj.(type) {
	case []byte:
		return v, nil
	case json.RawMessage:
		return v, nil
	case string:
		return []byte(v), nil
	case *Job:
		s, err := v.JSON()
		return []byte(s), err
	case nil:
		return nil, fmt.Errorf("tfjob: nil object")
	}
	return json.Marshal(obj)
}

func takeObject(out *C.char) (Object, error) {
	if out == nil {
		return nil, nil
	}
	var o Object
	if err := json.Unmarshal([]byte(takeString(out)), &o); err != nil {
		return nil, err
	}
	return o, nil
}

// dependent is a watch or controller made on a backend: closed before the backend.
type dependent interface{ closeDependent() }

// Backend is a transport handle: the Kubernetes API server (NewKubeBackend), the in-memory
// fake API store (NewMemoryBackend) or the local process engine (LocalEngine.Backend). All
// methods are safe for concurrent use. Close releases it (after closing the watches and
// controllers made on it); a finalizer does so if it is dropped.
//
// Namespaces: for single objects, ns "" means the object's own metadata.namespace, else the
// backend's (Namespace()). For List and Watch, ns "" means all namespaces (NamespaceAll), as in
// client-go.
type Backend struct {
	mu      sync.RWMutex // held for reading during calls, for writing by Close
	h       *C.tfjob_transport
	depMu   sync.Mutex
	deps    map[dependent]struct{}
	closing bool
	owner   any    // what the transport borrows from (a LocalEngine)
	onFree  func() // after the transport is freed (callback handles)
}

// NamespaceAll lists and watches across all namespaces.
const NamespaceAll = ""

var globalInit sync.Once
var globalInitErr error

// ensureGlobalInit runs tfjob_global_init() once per process (the transport needs it).
func ensureGlobalInit() error {
	globalInit.Do(func() {
		if rc := C.tfjob_global_init(); rc != 0 {
			globalInitErr = &Error{Code: Code(rc), Message: "tfjob_global_init failed"}
		}
	})
	return globalInitErr
}

func newBackend(h *C.tfjob_transport, owner any) *Backend {
	b := &Backend{h: h, deps: map[dependent]struct{}{}, owner: owner}
	runtime.SetFinalizer(b, func(b *Backend) { b.Close() })
	return b
}

// Close closes the watches and controllers made on the backend, then releases it. Calls in
// progress on other goroutines finish first. Safe to call more than once.
func (b *Backend) Close() error {
	b.depMu.Lock()
	b.closing = true
	deps := make([]dependent, 0, len(b.deps))
	for d := range b.deps {
		deps = append(deps, d)
	}
	b.depMu.Unlock()
	// Controllers before watches: a controller's own watches are its business.
	for _, d := range deps {
		if _, ok := d.(*controllerInner); ok {
			d.closeDependent()
		}
	}
	for _, d := range deps {
		if _, ok := d.(*controllerInner); !ok {
			d.closeDependent()
		}
	}
	b.depMu.Lock()
	b.deps = map[dependent]struct{}{}
	b.depMu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.h != nil {
		C.tfjob_transport_free(b.h)
		b.h = nil
		runtime.SetFinalizer(b, nil)
		if b.onFree != nil {
			b.onFree()
		}
	}
	return nil
}

func (b *Backend) addDependent(d dependent) error {
	b.depMu.Lock()
	defer b.depMu.Unlock()
	if b.closing {
		return ErrClosed
	}
	b.deps[d] = struct{}{}
	return nil
}

func (b *Backend) removeDependent(d dependent) {
	b.depMu.Lock()
	delete(b.deps, d)
	b.depMu.Unlock()
}

// call runs fn with the C handle while holding the read lock (ErrClosed after Close). A string
// argument with a NUL byte (see nulArgument) gives ErrInvalidArgument, the C call not made.
func (b *Backend) call(fn func(h *C.tfjob_transport) error) (err error) {
	defer recoverNUL(&err)
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.h == nil {
		return ErrClosed
	}
	err = fn(b.h)
	runtime.KeepAlive(b)
	return err
}

// noNUL returns ErrInvalidArgument when a string holds a NUL byte (see nulArgument).
func noNUL(strs ...string) error {
	for _, s := range strs {
		if strings.IndexByte(s, 0) >= 0 {
			return &Error{Code: CodeInvalidArgument, Message: fmt.Sprintf("string argument %q contains a NUL byte", truncate(s, 64))}
		}
	}
	return nil
}

// recoverNUL turns a nulArgument panic into an ErrInvalidArgument error in *err.
func recoverNUL(err *error) {
	if r := recover(); r != nil {
		nul, ok := r.(nulArgument)
		if !ok {
			panic(r)
		}
		*err = &Error{Code: CodeInvalidArgument, Message: fmt.Sprintf("string argument %q contains a NUL byte", truncate(nul.s, 64))}
	}
}

// callText runs fn with the C handle (as call does); fn returns a libtfjob status code, an
// error and the text it made (out), which callText returns.
func (b *Backend) callText(fn func(h *C.tfjob_transport, out **C.char, cerr **C.tfjob_error) C.int) (*C.char, error) {
	var out *C.char
	err := b.call(func(h *C.tfjob_transport) error {
		var cerr *C.tfjob_error
		if rc := fn(h, &out, &cerr); rc != 0 {
			return takeError(rc, cerr)
		}
		return nil
	})
	return out, err
}

// callObject is callText for calls that return an object (JSON).
func (b *Backend) callObject(fn func(h *C.tfjob_transport, out **C.char, cerr **C.tfjob_error) C.int) (Object, error) {
	out, err := b.callText(fn)
	if err != nil {
		return nil, err
	}
	return takeObject(out)
}

// readHandle returns what fn reads from the C handle (the zero value after Close).
func readHandle[T any](b *Backend, fn func(h *C.tfjob_transport) T) T {
	var v T
	_ = b.call(func(h *C.tfjob_transport) error {
		v = fn(h)
		return nil
	})
	return v
}

// Namespace is the namespace used when a call leaves it empty ("default" unless configured).
func (b *Backend) Namespace() string {
	return readHandle(b, func(h *C.tfjob_transport) string { return goString(C.tfjob_transport_namespace(h)) })
}

// Get returns one object; an *APIError matching ErrNotFound when it does not exist.
func (b *Backend) Get(res Resource, ns, name string) (Object, error) {
	var cs cstrings
	defer cs.free()
	if err := noNUL(res.Group, res.Version, res.Resource); err != nil {
		return nil, err
	}
	r := cs.resource(res)
	return b.callObject(func(h *C.tfjob_transport, out **C.char, cerr **C.tfjob_error) C.int {
		return C.tfjob_transport_get(out, h, &r, cs.of(ns, false), cs.of(name, true), cerr)
	})
}

// ListOptions select and page a List.
type ListOptions struct {
	LabelSelector   string // "app=x,tier!=db,env in (a,b),!legacy"
	FieldSelector   string // "metadata.name=x"
	Limit           int64  // page size; 0: everything
	Continue        string // the previous page's List.Continue
	ResourceVersion string
}

// List is one page of objects.
type List struct {
	Items           []Object
	ResourceVersion string
	Continue        string // non-empty when there are more pages
}

// List lists objects (ns NamespaceAll: every namespace).
func (b *Backend) List(res Resource, ns string, o ListOptions) (*List, error) {
	if err := noNUL(o.LabelSelector, o.FieldSelector, o.Continue, o.ResourceVersion); err != nil {
		return nil, err
	}
	var cs cstrings
	defer cs.free()
	if err := noNUL(res.Group, res.Version, res.Resource); err != nil {
		return nil, err
	}
	r := cs.resource(res)
	var opts C.tfjob_list_options
	C.tfjob_list_options_init(&opts, C.TFJOB_LIST_OPTIONS_VERSION)
	opts.label_selector = cs.of(o.LabelSelector, false)
	opts.field_selector = cs.of(o.FieldSelector, false)
	opts.limit = C.int64_t(o.Limit)
	opts.continue_token = cs.of(o.Continue, false)
	opts.resource_version = cs.of(o.ResourceVersion, false)
	out, err := b.callText(func(h *C.tfjob_transport, out **C.char, cerr **C.tfjob_error) C.int {
		return C.tfjob_transport_list(out, h, &r, cs.of(ns, true), &opts, cerr)
	})
	if err != nil {
		return nil, err
	}
	var raw struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
			Continue        string `json:"continue"`
		} `json:"metadata"`
		Items []Object `json:"items"`
	}
	if err := json.Unmarshal([]byte(takeString(out)), &raw); err != nil {
		return nil, err
	}
	return &List{Items: raw.Items, ResourceVersion: raw.Metadata.ResourceVersion, Continue: raw.Metadata.Continue}, nil
}

// ListAll lists every object, following continue tokens page by page (pageSize 0: 500).
func (b *Backend) ListAll(res Resource, ns string, o ListOptions, pageSize int64) ([]Object, error) {
	if pageSize <= 0 {
		pageSize = 500
	}
	o.Limit, o.Continue = pageSize, ""
	var items []Object
	for {
		page, err := b.List(res, ns, o)
		if err != nil {
			return nil, err
		}
		items = append(items, page.Items...)
		if page.Continue == "" {
			return items, nil
		}
		o.Continue = page.Continue
	}
}

type writeFn func(out **C.char, h *C.tfjob_transport, r *C.tfjob_resource, ns, obj *C.char, cerr **C.tfjob_error) C.int

func (b *Backend) write(fn writeFn, res Resource, ns string, obj any) (Object, error) {
	data, err := objectJSON(obj)
	if err != nil {
		return nil, err
	}
	var cs cstrings
	defer cs.free()
	if err := noNUL(res.Group, res.Version, res.Resource, string(data)); err != nil {
		return nil, err
	}
	r := cs.resource(res)
	cobj := cs.of(string(data), true)
	return b.callObject(func(h *C.tfjob_transport, out **C.char, cerr **C.tfjob_error) C.int {
		return fn(out, h, &r, cs.of(ns, false), cobj, cerr)
	})
}

// Create creates an object (an Object, any JSON-marshallable value, JSON text, or a *Job) and
// returns it as stored (uid, resourceVersion set). ErrAlreadyExists when the name is taken,
// ErrInvalid (422) for an invalid object.
func (b *Backend) Create(res Resource, ns string, obj any) (Object, error) {
	return b.write(func(out **C.char, h *C.tfjob_transport, r *C.tfjob_resource, ns, o *C.char, e **C.tfjob_error) C.int {
		return C.tfjob_transport_create(out, h, r, ns, o, e)
	}, res, ns, obj)
}

// Update replaces an object (PUT); with metadata.resourceVersion set, ErrConflict when stale.
func (b *Backend) Update(res Resource, ns string, obj any) (Object, error) {
	return b.write(func(out **C.char, h *C.tfjob_transport, r *C.tfjob_resource, ns, o *C.char, e **C.tfjob_error) C.int {
		return C.tfjob_transport_update(out, h, r, ns, o, e)
	}, res, ns, obj)
}

// UpdateStatus replaces the status subresource (PUT .../status): only status changes are kept.
func (b *Backend) UpdateStatus(res Resource, ns string, obj any) (Object, error) {
	return b.write(func(out **C.char, h *C.tfjob_transport, r *C.tfjob_resource, ns, o *C.char, e **C.tfjob_error) C.int {
		return C.tfjob_transport_update_status(out, h, r, ns, o, e)
	}, res, ns, obj)
}

// Patch applies a JSON merge patch (RFC 7386); subresource "status" patches the status.
func (b *Backend) Patch(res Resource, ns, name, subresource string, patch any) (Object, error) {
	data, err := objectJSON(patch)
	if err != nil {
		return nil, err
	}
	var cs cstrings
	defer cs.free()
	if err := noNUL(res.Group, res.Version, res.Resource); err != nil {
		return nil, err
	}
	r := cs.resource(res)
	return b.callObject(func(h *C.tfjob_transport, out **C.char, cerr **C.tfjob_error) C.int {
		return C.tfjob_transport_patch(out, h, &r, cs.of(ns, false), cs.of(name, true), cs.of(subresource, false),
			cs.of(string(data), true), cerr)
	})
}

// Propagation is a deletion propagation policy.
type Propagation int

// Propagation policies (deleteOptions.propagationPolicy).
const (
	PropagationDefault    Propagation = C.TFJOB_PROPAGATION_DEFAULT
	PropagationBackground Propagation = C.TFJOB_PROPAGATION_BACKGROUND
	PropagationForeground Propagation = C.TFJOB_PROPAGATION_FOREGROUND
	PropagationOrphan     Propagation = C.TFJOB_PROPAGATION_ORPHAN
)

// DeleteOptions tune Delete; the zero value deletes unconditionally with the resource's defaults.
type DeleteOptions struct {
	Propagation                 Propagation
	PreconditionUID             string // delete only this incarnation (ErrConflict otherwise)
	PreconditionResourceVersion string
	GracePeriodSeconds          *int64 // nil: the resource's default
}

// Delete deletes an object and returns what the server returned (the object, or a Status).
func (b *Backend) Delete(res Resource, ns, name string, o DeleteOptions) (Object, error) {
	if err := noNUL(o.PreconditionUID, o.PreconditionResourceVersion); err != nil {
		return nil, err
	}
	var cs cstrings
	defer cs.free()
	if err := noNUL(res.Group, res.Version, res.Resource); err != nil {
		return nil, err
	}
	r := cs.resource(res)
	var opts C.tfjob_delete_options
	C.tfjob_delete_options_init(&opts, C.TFJOB_DELETE_OPTIONS_VERSION)
	opts.propagation = C.tfjob_propagation(o.Propagation)
	opts.precondition_uid = cs.of(o.PreconditionUID, false)
	opts.precondition_resource_version = cs.of(o.PreconditionResourceVersion, false)
	if o.GracePeriodSeconds != nil {
		opts.grace_period_seconds = C.int64_t(*o.GracePeriodSeconds)
	}
	return b.callObject(func(h *C.tfjob_transport, out **C.char, cerr **C.tfjob_error) C.int {
		return C.tfjob_transport_delete(out, h, &r, cs.of(ns, false), cs.of(name, true), &opts, cerr)
	})
}

// CreateEvent records a core/v1 Event about an object as client-go's recorder does; eventType
// is "Normal" or "Warning"; component "" is "tfjob-controller".
func (b *Backend) CreateEvent(ns string, involved any, eventType, reason, message, component string) (Object, error) {
	data, err := objectJSON(involved)
	if err != nil {
		return nil, err
	}
	var cs cstrings
	defer cs.free()
	return b.callObject(func(h *C.tfjob_transport, out **C.char, cerr **C.tfjob_error) C.int {
		return C.tfjob_transport_create_event(out, h, cs.of(ns, false), cs.of(string(data), true),
			cs.of(eventType, true), cs.of(reason, true), cs.of(message, true), cs.of(component, false), cerr)
	})
}

// CreateTFJob creates a TFJob given as a *Job, an Object, or YAML/JSON text.
func (b *Backend) CreateTFJob(ns string, job any) (Object, error) {
	switch v := job.(type) {
	case string:
		return b.CreateTFJob(ns, []byte(v))
	case []byte:
		j, err := Parse(v, "")
		if err != nil {
			return nil, err
		}
		defer j.Close()
		return b.Create(TFJobs, ns, j)
	}
	return b.Create(TFJobs, ns, job)
}

// ---- watches ----

// EventType is the type of a watch event.
type EventType string

// Watch event types.
const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
	Bookmark EventType = "BOOKMARK"
)

// WatchEvent is one event of a watch.
type WatchEvent struct {
	Type   EventType
	Object Object
}

// WatchOptions tune a watch; the zero value starts with ADDED events for what exists now, then
// follows changes, reconnecting from the last resourceVersion when the stream breaks.
type WatchOptions struct {
	LabelSelector   string
	FieldSelector   string
	ResourceVersion string // start after this version ("" or "0": synthetic ADDED events first)
	AllowBookmarks  bool
	TimeoutSeconds  int64 // server-side timeout of each request; 0: the backend's default
	NoReconnect     bool  // end (Err() nil) when the server ends the stream
	Buffer          int   // channel buffer; 0: 64
}

// watchState is what the C callbacks reach through a cgo.Handle. It never refers to the Watch
// (so that a dropped Watch can be finalized).
type watchState struct {
	ch       chan WatchEvent
	stop     chan struct{}
	stopOnce sync.Once
	ended    chan struct{}
	err      error
}

func (s *watchState) requestStop() { s.stopOnce.Do(func() { close(s.stop) }) }

//export goWatchEvent
func goWatchEvent(etype C.int, text *C.char, h C.uintptr_t) (rc C.int) {
	st := cgo.Handle(h).Value().(*watchState)
	defer func() {
		if r := recover(); r != nil { // never unwind into C
			st.err = &PanicError{Callback: "watch", Value: r, Stack: debug.Stack()}
			rc = 1
		}
	}()
	var obj Object
	if err := json.Unmarshal([]byte(C.GoString(text)), &obj); err != nil {
		st.err = err
		return 1
	}
	ev := WatchEvent{Type: EventType(C.GoString(C.tfjob_watch_event_name(C.tfjob_watch_event(etype)))), Object: obj}
	select {
	case st.ch <- ev:
		return 0
	case <-st.stop:
		return 1
	}
}

//export goWatchClosed
func goWatchClosed(code C.int, cerr *C.tfjob_error, h C.uintptr_t) {
	st := cgo.Handle(h).Value().(*watchState)
	if code != 0 && st.err == nil {
		st.err = convertError(code, cerr)
	}
	close(st.ended) // before ch: whoever sees ch closed sees Err() set
	close(st.ch)
}

// watchInner owns the C watch; the Backend and the Watch (Close, finalizer) close it. It
// refers to neither, so that neither is kept alive by it.
type watchInner struct {
	mu     sync.Mutex
	h      *C.tfjob_watch
	handle cgo.Handle
	state  *watchState
}

func (w *watchInner) closeDependent() {
	w.state.requestStop() // unblocks a callback waiting to send
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.h != nil {
		C.tfjob_watch_free(w.h)
		w.h = nil
		w.handle.Delete()
	}
}

func (w *watchInner) stop() {
	w.state.requestStop()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.h != nil {
		C.tfjob_watch_stop(w.h)
	}
}

// Watch is a running watch; read its events from ResultChan until the channel is closed, then
// Err tells why it ended (nil when stopped; ErrGone: list again). Close (or dropping it: a
// finalizer) stops and releases it.
type Watch struct {
	inner *watchInner
	b     *Backend // the transport must outlive the watch
}

// Watch starts a watch (ns NamespaceAll: every namespace).
func (b *Backend) Watch(res Resource, ns string, o WatchOptions) (*Watch, error) {
	if err := noNUL(ns, o.LabelSelector, o.FieldSelector, o.ResourceVersion); err != nil {
		return nil, err
	}
	buf := o.Buffer
	if buf <= 0 {
		buf = 64
	}
	st := &watchState{ch: make(chan WatchEvent, buf), stop: make(chan struct{}), ended: make(chan struct{})}
	var cs cstrings
	defer cs.free()
	if err := noNUL(res.Group, res.Version, res.Resource); err != nil {
		return nil, err
	}
	r := cs.resource(res)
	var opts C.tfjob_watch_options
	C.tfjob_watch_options_init(&opts, C.TFJOB_WATCH_OPTIONS_VERSION)
	opts.label_selector = cs.of(o.LabelSelector, false)
	opts.field_selector = cs.of(o.FieldSelector, false)
	opts.resource_version = cs.of(o.ResourceVersion, false)
	if o.AllowBookmarks {
		opts.allow_bookmarks = 1
	}
	opts.timeout_seconds = C.int64_t(o.TimeoutSeconds)
	if o.NoReconnect {
		opts.reconnect = 0
	}
	handle := cgo.NewHandle(st)
	C.set_watch_callbacks(&opts, C.uintptr_t(handle))
	inner := &watchInner{handle: handle, state: st}
	if err := b.addDependent(inner); err != nil {
		handle.Delete()
		return nil, err
	}
	err := b.call(func(h *C.tfjob_transport) error {
		var cerr *C.tfjob_error
		if rc := C.tfjob_transport_watch(&inner.h, h, &r, cs.of(ns, true), &opts, &cerr); rc != 0 {
			return takeError(rc, cerr)
		}
		return nil
	})
	if err != nil {
		b.removeDependent(inner)
		handle.Delete()
		return nil, err
	}
	w := &Watch{inner: inner, b: b}
	runtime.SetFinalizer(w, (*Watch).Close)
	return w, nil
}

// ResultChan delivers the events; it is closed when the watch ends.
func (w *Watch) ResultChan() <-chan WatchEvent { return w.inner.state.ch }

// Done is closed when the watch has ended.
func (w *Watch) Done() <-chan struct{} { return w.inner.state.ended }

// Stop asks the watch to end and returns at once (the channel is closed soon after). Safe from
// any goroutine.
func (w *Watch) Stop() { w.inner.stop() }

// Err is why the watch ended, once ResultChan is closed: nil when it was stopped, an *APIError
// otherwise (ErrGone: the resourceVersion is too old, list again).
func (w *Watch) Err() error {
	select {
	case <-w.inner.state.ended:
		return w.inner.state.err
	default:
		return nil
	}
}

// Close stops the watch, waits for it to end and releases it. Safe to call more than once.
func (w *Watch) Close() {
	w.inner.closeDependent()
	w.b.removeDependent(w.inner)
	runtime.SetFinalizer(w, nil)
}

// WaitForTFJob watches a TFJob until one of the condition types (default Succeeded, Failed) is
// True and returns it; ctx bounds the wait.
func (b *Backend) WaitForTFJob(ctx context.Context, ns, name string, conditions ...string) (Object, error) {
	if len(conditions) == 0 {
		conditions = []string{"Succeeded", "Failed"}
	}
	if ns == "" {
		ns = b.Namespace()
	}
	w, err := b.Watch(TFJobs, ns, WatchOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		return nil, err
	}
	defer w.Close()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				if err := w.Err(); err != nil {
					return nil, err
				}
				return nil, fmt.Errorf("tfjob: the watch of TFJob %s/%s ended", ns, name)
			}
			if ev.Type != Added && ev.Type != Modified {
				continue
			}
			for _, c := range conditions {
				if HasCondition(ev.Object, c) {
					return ev.Object, nil
				}
			}
		}
	}
}

// Condition returns the status condition of that type of an object (a TFJob), or nil.
func Condition(obj Object, condType string) map[string]any {
	status, _ := obj["status"].(map[string]any)
	conds, _ := status["conditions"].([]any)
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == condType {
			return m
		}
	}
	return nil
}

// HasCondition reports whether the object's condition of that type has status "True".
func HasCondition(obj Object, condType string) bool {
	c := Condition(obj, condType)
	return c != nil && strings.EqualFold(fmt.Sprint(c["status"]), "True")
}
