package serve

import (
	"errors"
	"net/http"
)

// requestError is a request's fault: its HTTP status, the field it names
// (so a client can tell which of its inputs to fix) and why.
type requestError struct {
	status int
	field  string
	msg    string
}

func (e *requestError) Error() string {
	if e.field == "" {
		return e.msg
	}
	return e.field + ": " + e.msg
}

// fieldErr is a 422: the request is well formed but a field's value is
// refused.
func fieldErr(field, msg string) error {
	return &requestError{status: http.StatusUnprocessableEntity, field: field, msg: msg}
}

// badRequest is a 400: the request cannot be read.
func badRequest(field, msg string) error {
	return &requestError{status: http.StatusBadRequest, field: field, msg: msg}
}

// tooLarge is a 413: the request is over a limit.
func tooLarge(field, msg string) error {
	return &requestError{status: http.StatusRequestEntityTooLarge, field: field, msg: msg}
}

// statusOf is the HTTP status err answers with, and the field it names.
func statusOf(err error) (int, string) {
	var re *requestError
	var mb *http.MaxBytesError
	switch {
	case errors.As(err, &re):
		return re.status, re.field
	case errors.As(err, &mb):
		return http.StatusRequestEntityTooLarge, "body"
	case errors.Is(err, errDraining):
		return http.StatusServiceUnavailable, ""
	case errors.Is(err, errTimeout):
		return http.StatusGatewayTimeout, ""
	}
	return http.StatusInternalServerError, ""
}

var (
	errDraining = errors.New("server shutting down: retry on another instance")
	errTimeout  = errors.New("query timed out (the server's --query-timeout)")
)

func asMaxBytes(err error, target **http.MaxBytesError) bool { return errors.As(err, target) }

// isRequestErr says whether err is a request's fault, already worded.
func isRequestErr(err error) bool {
	var re *requestError
	return errors.As(err, &re)
}
