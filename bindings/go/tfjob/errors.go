package tfjob

import (
	"encoding/json"
	"errors"
	"fmt"
)

// APIError is a failure answered by an API server (or by the memory and local backends, which
// answer as kube-apiserver does), or a failure to reach one: the HTTP status (0 for network
// failures), Kubernetes' Status reason ("NotFound", "AlreadyExists", "Conflict", ...), the
// server's own message, and the Status details (the causes of a 422 Invalid). It matches the
// sentinels of its code with errors.Is (ErrNotFound, ErrAlreadyExists, ErrConflict, ...).
type APIError struct {
	Code       Code
	HTTPStatus int
	Reason     string // the Status.reason the server sent, else derived from Code and HTTPStatus
	Message    string
	Details    *StatusDetails
}

// StatusDetails are the details of a Kubernetes Status.
type StatusDetails struct {
	Name   string        `json:"name,omitempty"`
	Group  string        `json:"group,omitempty"`
	Kind   string        `json:"kind,omitempty"`
	UID    string        `json:"uid,omitempty"`
	Causes []StatusCause `json:"causes,omitempty"`
}

// StatusCause is one cause of a Status (a field error of a 422 Invalid).
type StatusCause struct {
	Type    string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	Field   string `json:"field,omitempty"`
}

func (e *APIError) Error() string {
	if e.HTTPStatus != 0 {
		return fmt.Sprintf("tfjob: %s (%s, HTTP %d)", e.Message, e.Reason, e.HTTPStatus)
	}
	return "tfjob: " + e.Message
}

// Is matches the sentinels (and other errors) of the same code.
func (e *APIError) Is(target error) bool { return codeOf(target) == e.Code && e.Code != 0 }

func isTransportCode(c Code) bool { return c <= CodeNotFound && c >= CodeNetwork }

var statusReasons = map[Code]string{
	CodeNotFound: "NotFound", CodeExists: "AlreadyExists", CodeConflict: "Conflict", CodeGone: "Expired",
	CodeUnauthorized: "Unauthorized", CodeForbidden: "Forbidden", CodeTooManyRequests: "TooManyRequests",
	CodeInvalid: "Invalid", CodeInvalidArgument: "BadRequest",
}

// reasonFor is Kubernetes' StatusReason for a code and HTTP status, as client-go's
// ReasonForError falls back to when a Status has none ("" when there is none).
func reasonFor(c Code, status int) string {
	switch {
	case c == CodeTimeout && status == 0, status == 408, status == 504:
		return "Timeout"
	case status == 503:
		return "ServiceUnavailable"
	case status == 500 || c == CodeServer:
		return "InternalError"
	case status == 0 && !isTransportCode(c):
		return ""
	}
	return statusReasons[c]
}

func newAPIError(c Code, status int, message, details string) *APIError {
	e := &APIError{Code: c, HTTPStatus: status, Reason: reasonFor(c, status), Message: message}
	if details != "" {
		var d StatusDetails
		if json.Unmarshal([]byte(details), &d) == nil {
			e.Details = &d
		}
	}
	return e
}

// IsNotFound reports whether err is a NotFound (404) error.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// IsAlreadyExists reports whether err is an AlreadyExists (409) error.
func IsAlreadyExists(err error) bool { return errors.Is(err, ErrAlreadyExists) }

// IsConflict reports whether err is a Conflict (409: stale resourceVersion, failed precondition).
func IsConflict(err error) bool { return errors.Is(err, ErrConflict) }

// PanicError is a panic recovered in a Go callback called from C (a hook, a watch or update
// callback): it never unwinds through C; the callback counts as failed and the panic comes back
// as this error.
type PanicError struct {
	Callback string // "log", "before_reconcile", "after_reconcile", "mutate_pod", "clock", ...
	Value    any    // what was passed to panic
	Stack    []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("tfjob: %s callback panicked: %v", e.Callback, e.Value)
}

// Unwrap gives the panic value when it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}
