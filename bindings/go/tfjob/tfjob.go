// Package tfjob binds libtfjob, the reference implementation of Kubeflow TFJob
// (kubeflow.org/v1) semantics, through cgo.
//
// The C library is found with pkg-config (package "tfjob"). Handles are released by Close
// and, as a safety net, by a finalizer; every call keeps its handle alive until the C call
// returns (runtime.KeepAlive). Errors are *Error values that match the sentinel errors
// (ErrParse, ErrSchema, ...) with errors.Is.
package tfjob

/*
#cgo pkg-config: tfjob
#include <stdlib.h>
#include <tfjob/tfjob.h>
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"unsafe"
)

// Compat selects the semantics: the documented ones (default) or training-operator v1.9's.
type Compat int

const (
	// Documented is the documented Kubeflow semantics with v1.9's defects fixed.
	Documented Compat = C.TFJOB_COMPAT_DOCUMENTED
	// TrainingOperator19 reproduces training-operator v1.9 exactly, defects included.
	TrainingOperator19 Compat = C.TFJOB_COMPAT_TRAINING_OPERATOR_1_9
)

// ParseCompat parses "documented" or "training-operator-1.9".
func ParseCompat(name string) (Compat, error) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var out C.tfjob_compat
	if C.tfjob_compat_from_string(&out, cs) != 0 {
		return Documented, fmt.Errorf("tfjob: unknown compat %q", name)
	}
	return Compat(out), nil
}

// Code is a libtfjob error code (a negative TFJOB_E* value).
type Code int

// Error codes of include/tfjob/error.h.
const (
	CodeInternal        Code = C.TFJOB_ERROR
	CodeNoMemory        Code = C.TFJOB_ENOMEM
	CodeInvalidArgument Code = C.TFJOB_EINVAL
	CodeVersion         Code = C.TFJOB_EVERSION
	CodeParse           Code = C.TFJOB_EPARSE
	CodeLimit           Code = C.TFJOB_ELIMIT
	CodeSchema          Code = C.TFJOB_ESCHEMA
	CodeInvalid         Code = C.TFJOB_EINVALID
	CodeNotFound        Code = C.TFJOB_ENOTFOUND
	CodeExists          Code = C.TFJOB_EEXISTS
	CodeConflict        Code = C.TFJOB_ECONFLICT
	CodeGone            Code = C.TFJOB_EGONE
	CodeUnauthorized    Code = C.TFJOB_EUNAUTHORIZED
	CodeForbidden       Code = C.TFJOB_EFORBIDDEN
	CodeTooManyRequests Code = C.TFJOB_ETOOMANYREQUESTS
	CodeTimeout         Code = C.TFJOB_ETIMEOUT
	CodeServer          Code = C.TFJOB_ESERVER
	CodeNetwork         Code = C.TFJOB_ENETWORK
	CodeIO              Code = C.TFJOB_EIO
	CodeState           Code = C.TFJOB_ESTATE
)

// Name is the code's stable symbolic name ("TFJOB_ENOTFOUND").
func (c Code) Name() string { return C.GoString(C.tfjob_error_code_name(C.int(c))) }

// String is the code's short description ("not found").
func (c Code) String() string { return C.GoString(C.tfjob_strerror(C.int(c))) }

// Error is a failure reported by libtfjob.
type Error struct {
	Code       Code
	Message    string
	Field      string
	File       string
	Line       int
	Column     int
	HTTPStatus int
}

func (e *Error) Error() string { return "tfjob: " + e.Message }

// Is matches sentinel errors by code.
func (e *Error) Is(target error) bool {
	return codeOf(target) == e.Code && e.Code != 0
}

// codeOf is the code of an *Error or *APIError target (0 for other errors).
func codeOf(target error) Code {
	switch t := target.(type) {
	case *Error:
		return t.Code
	case *APIError:
		return t.Code
	}
	return 0
}

// Sentinel errors for errors.Is (they match any error of the same code).
var (
	ErrParse           = &Error{Code: CodeParse, Message: "syntax error"}
	ErrLimit           = &Error{Code: CodeLimit, Message: "input limit exceeded"}
	ErrSchema          = &Error{Code: CodeSchema, Message: "wrong object shape"}
	ErrInvalid         = &Error{Code: CodeInvalid, Message: "invalid object"}
	ErrInvalidArgument = &Error{Code: CodeInvalidArgument, Message: "invalid argument"}
	ErrNotFound        = &Error{Code: CodeNotFound, Message: "not found"}
	ErrAlreadyExists   = &Error{Code: CodeExists, Message: "already exists"}
	ErrConflict        = &Error{Code: CodeConflict, Message: "conflict"}
	ErrGone            = &Error{Code: CodeGone, Message: "resource version too old"}
	ErrUnauthorized    = &Error{Code: CodeUnauthorized, Message: "unauthorized"}
	ErrForbidden       = &Error{Code: CodeForbidden, Message: "forbidden"}
	ErrTooManyRequests = &Error{Code: CodeTooManyRequests, Message: "too many requests"}
	ErrTimeout         = &Error{Code: CodeTimeout, Message: "timeout"}
	ErrServer          = &Error{Code: CodeServer, Message: "server error"}
	ErrNetwork         = &Error{Code: CodeNetwork, Message: "network error"}
	ErrIO              = &Error{Code: CodeIO, Message: "I/O error"}
	ErrState           = &Error{Code: CodeState, Message: "not valid in the current state"}
	ErrClosed          = &Error{Code: CodeInvalidArgument, Message: "the handle is closed"}
)

func goString(s *C.char) string {
	if s == nil {
		return ""
	}
	return C.GoString(s)
}

// takeError converts a C error (and frees it).
func takeError(code C.int, cerr *C.tfjob_error) error {
	defer C.tfjob_error_free(cerr)
	return convertError(code, cerr)
}

// convertError converts a borrowed C error (not freed): an *APIError for API failures (an
// HTTP status, or a transport code), else an *Error.
func convertError(code C.int, cerr *C.tfjob_error) error {
	if cerr == nil {
		if isTransportCode(Code(code)) {
			return newAPIError(Code(code), 0, goString(C.tfjob_strerror(code)), "")
		}
		return &Error{Code: Code(code), Message: goString(C.tfjob_strerror(code))}
	}
	if status := int(C.tfjob_error_http_status(cerr)); status != 0 || isTransportCode(Code(code)) {
		e := newAPIError(Code(code), status, goString(C.tfjob_error_message(cerr)),
			goString(C.tfjob_error_details_json(cerr)))
		if reason := goString(C.tfjob_error_reason(cerr)); reason != "" {
			e.Reason = reason // the API server's own word (a 410 may be Expired or Gone)
		}
		return e
	}
	return &Error{
		Code:       Code(code),
		Message:    goString(C.tfjob_error_message(cerr)),
		Field:      goString(C.tfjob_error_field(cerr)),
		File:       goString(C.tfjob_error_file(cerr)),
		Line:       int(C.tfjob_error_line(cerr)),
		Column:     int(C.tfjob_error_column(cerr)),
		HTTPStatus: int(C.tfjob_error_http_status(cerr)),
	}
}

// takeString copies a library-owned string and frees it.
func takeString(s *C.char) string {
	defer C.tfjob_free(unsafe.Pointer(s))
	return C.GoString(s)
}

// LibraryVersion is the version of the libtfjob actually loaded.
func LibraryVersion() string { return C.GoString(C.tfjob_version()) }

// Job is a kubeflow.org/v1 TFJob owned by libtfjob.
type Job struct {
	h *C.tfjob_job
}

func newJob(h *C.tfjob_job) *Job {
	j := &Job{h: h}
	runtime.SetFinalizer(j, (*Job).Close)
	return j
}

// Format is the syntax of parsed text.
type Format int

// Formats of ParseOptions.
const (
	FormatAuto Format = C.TFJOB_FORMAT_AUTO // JSON when the first non-blank character is '{' or '[', else YAML
	FormatYAML Format = C.TFJOB_FORMAT_YAML
	FormatJSON Format = C.TFJOB_FORMAT_JSON
)

// ParseOptions tune ParseWith and ParseAll (tfjob_parse_options); zero limits are the
// library's defaults (docs/limits.md).
type ParseOptions struct {
	Filename      string // used in error messages only
	Format        Format
	MaxInputBytes uint64 // whole input; 0: 16 MiB
	MaxDepth      uint32 // nesting of mappings/sequences; 0: 128
	MaxAliases    uint32 // YAML alias references in one document; 0: 1000
	MaxNodes      uint32 // values in one document after alias expansion; 0: 2000000
	MaxDocuments  uint32 // documents in one stream; 0: 10000
	// FirstLine is the line number of the data's first line, for text cut out of a larger file:
	// error lines count from it. 0: 1, and an error about a whole document names no line.
	FirstLine uint32
}

// parseCall runs a parse function of libtfjob on data with the options in C form.
func parseCall(data []byte, o ParseOptions, call func(buf *C.char, n C.size_t, opts *C.tfjob_parse_options, cerr **C.tfjob_error) C.int) error {
	if o.Format < FormatAuto || o.Format > FormatJSON {
		return &Error{Code: CodeInvalidArgument, Message: fmt.Sprintf("unknown format %d", int(o.Format))}
	}
	if strings.IndexByte(o.Filename, 0) >= 0 {
		return &Error{Code: CodeInvalidArgument, Message: "filename contains a NUL byte"}
	}
	var opts C.tfjob_parse_options
	C.tfjob_parse_options_init(&opts, C.TFJOB_PARSE_OPTIONS_VERSION)
	opts.format = C.tfjob_format(o.Format)
	if o.MaxInputBytes > uint64(^C.size_t(0)) {
		o.MaxInputBytes = uint64(^C.size_t(0))
	}
	opts.max_input_bytes = C.size_t(o.MaxInputBytes)
	opts.max_depth = C.uint(o.MaxDepth)
	opts.max_aliases = C.uint(o.MaxAliases)
	opts.max_nodes = C.uint(o.MaxNodes)
	opts.max_documents = C.uint(o.MaxDocuments)
	opts.first_line = C.uint(o.FirstLine)
	if o.Filename != "" {
		cname := C.CString(o.Filename)
		defer C.free(unsafe.Pointer(cname))
		opts.filename = cname
	}
	var buf *C.char
	if len(data) > 0 {
		buf = (*C.char)(C.CBytes(data))
		defer C.free(unsafe.Pointer(buf))
	}
	var cerr *C.tfjob_error
	if rc := call(buf, C.size_t(len(data)), &opts, &cerr); rc != 0 {
		return takeError(rc, cerr)
	}
	return nil
}

// Parse reads one TFJob from YAML or JSON; filename (may be "") appears in error messages.
func Parse(data []byte, filename string) (*Job, error) {
	return ParseWith(data, ParseOptions{Filename: filename})
}

// ParseWith reads one TFJob with options (format, input limits).
func ParseWith(data []byte, o ParseOptions) (*Job, error) {
	var out *C.tfjob_job
	err := parseCall(data, o, func(buf *C.char, n C.size_t, opts *C.tfjob_parse_options, cerr **C.tfjob_error) C.int {
		return C.tfjob_job_parse(&out, buf, n, opts, cerr)
	})
	if err != nil {
		return nil, err
	}
	return newJob(out), nil
}

// ParseAll reads every TFJob of a YAML stream (documents separated by ---), a JSON array or a
// Kubernetes List (tfjob_job_parse_all); empty documents are skipped.
func ParseAll(data []byte, o ParseOptions) ([]*Job, error) {
	var out **C.tfjob_job
	var count C.size_t
	err := parseCall(data, o, func(buf *C.char, n C.size_t, opts *C.tfjob_parse_options, cerr **C.tfjob_error) C.int {
		return C.tfjob_job_parse_all(&out, &count, buf, n, opts, cerr)
	})
	if err != nil {
		return nil, err
	}
	handles := unsafe.Slice(out, int(count))
	jobs := make([]*Job, int(count))
	for i := range jobs {
		jobs[i] = newJob(handles[i])
	}
	C.tfjob_job_array_free(out, 0) // the array only: the jobs now belong to the *Job values
	return jobs, nil
}

// Load reads one TFJob from a YAML or JSON file.
func Load(path string) (*Job, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// Close releases the job; it is safe to call more than once.
func (j *Job) Close() {
	if j != nil && j.h != nil {
		C.tfjob_job_free(j.h)
		j.h = nil
		runtime.SetFinalizer(j, nil)
	}
}

// Clone returns an independent copy.
func (j *Job) Clone() (*Job, error) {
	if j == nil || j.h == nil {
		return nil, ErrClosed
	}
	var out *C.tfjob_job
	var cerr *C.tfjob_error
	rc := C.tfjob_job_clone(&out, j.h, &cerr)
	runtime.KeepAlive(j)
	if rc != 0 {
		return nil, takeError(rc, cerr)
	}
	return newJob(out), nil
}

// WithDefaults returns a copy with the TFJob defaults applied.
func (j *Job) WithDefaults(compat Compat) (*Job, error) {
	c, err := j.Clone()
	if err != nil {
		return nil, err
	}
	var opts C.tfjob_default_options
	C.tfjob_default_options_init(&opts, C.TFJOB_DEFAULT_OPTIONS_VERSION)
	opts.compat = C.tfjob_compat(compat)
	var cerr *C.tfjob_error
	if rc := C.tfjob_job_apply_defaults(c.h, &opts, &cerr); rc != 0 {
		c.Close()
		return nil, takeError(rc, cerr)
	}
	return c, nil
}

// JSON serialises the whole job (compact).
func (j *Job) JSON() (string, error) {
	if j == nil || j.h == nil {
		return "", ErrClosed
	}
	var out *C.char
	var cerr *C.tfjob_error
	rc := C.tfjob_job_to_json(&out, j.h, C.TFJOB_JSON_COMPACT, &cerr)
	runtime.KeepAlive(j)
	if rc != 0 {
		return "", takeError(rc, cerr)
	}
	return takeString(out), nil
}

// Name is metadata.name ("" when absent or the job is closed).
func (j *Job) Name() string {
	if j == nil || j.h == nil {
		return ""
	}
	defer runtime.KeepAlive(j)
	return goString(C.tfjob_job_name(j.h))
}

// Namespace is metadata.namespace ("" when absent or the job is closed).
func (j *Job) Namespace() string {
	if j == nil || j.h == nil {
		return ""
	}
	defer runtime.KeepAlive(j)
	return goString(C.tfjob_job_namespace(j.h))
}

// FieldError is a Kubernetes field error.
type FieldError struct {
	Field   string // e.g. spec.tfReplicaSpecs[Worker].template.spec.containers[0].image
	Type    string // e.g. FieldValueRequired
	Detail  string
	Message string // formatted as Kubernetes prints it
}

func (e FieldError) String() string { return e.Message }

// ValidateOptions tunes Validate; the zero value validates a create in documented mode.
type ValidateOptions struct {
	Compat Compat
	Old    *Job // the stored object, for an update
	// AllowUnknownFields lets fields the CRD schema does not declare pass. By default (false)
	// each is a FieldValueNotSupported error with the API server's `unknown field "a.b"` and a
	// "did you mean" suggestion, as kubectl's fieldValidation=Strict has the server refuse it.
	AllowUnknownFields bool
}

// Validate returns every field error (nil when the job is valid). It panics on a closed job
// and on out-of-memory; ValidateWith returns those as errors and takes options.
func (j *Job) Validate() []FieldError {
	errs, err := j.ValidateWith(ValidateOptions{})
	if err != nil {
		panic(err)
	}
	return errs
}

// ValidateWith validates with options (compat mode, old object for updates, strictness).
func (j *Job) ValidateWith(o ValidateOptions) ([]FieldError, error) {
	if j == nil || j.h == nil || (o.Old != nil && o.Old.h == nil) {
		return nil, ErrClosed
	}
	var opts C.tfjob_validate_options
	C.tfjob_validate_options_init(&opts, C.TFJOB_VALIDATE_OPTIONS_VERSION)
	opts.compat = C.tfjob_compat(o.Compat)
	if o.Old != nil {
		opts.old = o.Old.h
	}
	opts.strict = 1
	if o.AllowUnknownFields {
		opts.strict = 0
	}
	var list *C.tfjob_field_errors
	var cerr *C.tfjob_error
	rc := C.tfjob_job_validate(&list, j.h, &opts, &cerr)
	runtime.KeepAlive(j)
	runtime.KeepAlive(o.Old)
	if rc != 0 {
		return nil, takeError(rc, cerr)
	}
	defer C.tfjob_field_errors_free(list)
	n := int(C.tfjob_field_errors_count(list))
	var out []FieldError
	for i := 0; i < n; i++ {
		ci := C.size_t(i)
		out = append(out, FieldError{
			Field:   goString(C.tfjob_field_errors_field(list, ci)),
			Type:    goString(C.tfjob_field_error_type_name(C.tfjob_field_errors_type(list, ci))),
			Detail:  goString(C.tfjob_field_errors_detail(list, ci)),
			Message: goString(C.tfjob_field_errors_message(list, ci)),
		})
	}
	return out, nil
}

// Warning is what the Kubeflow TFJob docs advise against in a valid job (tfjob_job_warnings).
type Warning struct {
	Reason  string // RestartPolicyNever, TemplateRestartPolicyIgnored, MultipleChiefReplicas, IstioSidecar or GPUWithoutRequests
	Field   string // e.g. spec.tfReplicaSpecs[Worker].restartPolicy
	Message string // "FIELD: text", as kubectl prints after "Warning: "
}

func (w Warning) String() string { return w.Message }

// WarningOptions tunes Warnings; the zero value leaves out the Istio rule.
type WarningOptions struct {
	// IstioInjection: the target namespace is labelled istio-injection=enabled, so pod
	// templates without sidecar.istio.io/inject: "false" are warned about.
	IstioInjection bool
}

// Warnings lists what the TFJob docs advise against: restartPolicy Never, GPU limits without
// cpu/memory requests, and (with IstioInjection) pod templates that keep the Istio sidecar.
func (j *Job) Warnings(o WarningOptions) ([]Warning, error) {
	if j == nil || j.h == nil {
		return nil, ErrClosed
	}
	var opts C.tfjob_warning_options
	C.tfjob_warning_options_init(&opts, C.TFJOB_WARNING_OPTIONS_VERSION)
	if o.IstioInjection {
		opts.istio_injection = 1
	}
	var list *C.tfjob_warnings
	var cerr *C.tfjob_error
	rc := C.tfjob_job_warnings(&list, j.h, &opts, &cerr)
	runtime.KeepAlive(j)
	if rc != 0 {
		return nil, takeError(rc, cerr)
	}
	defer C.tfjob_warnings_free(list)
	n := int(C.tfjob_warnings_count(list))
	var out []Warning
	for i := 0; i < n; i++ {
		ci := C.size_t(i)
		out = append(out, Warning{
			Reason:  goString(C.tfjob_warnings_reason(list, ci)),
			Field:   goString(C.tfjob_warnings_field(list, ci)),
			Message: goString(C.tfjob_warnings_message(list, ci)),
		})
	}
	return out, nil
}

// ExitCodeRetryable reports whether restartPolicy ExitCode restarts a replica that exited
// with code.
func ExitCodeRetryable(code int, compat Compat) bool {
	return C.tfjob_exit_code_classify(C.int(code), C.tfjob_compat(compat)) == C.TFJOB_EXIT_RETRYABLE
}
