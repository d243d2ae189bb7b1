package fabric

import "fmt"

// Result is ncclResult_t (src/nccl.h.in), for the values CFT uses.
type Result int

const (
	Success         Result = 0 // ncclSuccess
	InvalidArgument Result = 4 // ncclInvalidArgument
	InvalidUsage    Result = 5 // ncclInvalidUsage
	Timeout         Result = 8 // ncclTimeout
)

func (r Result) String() string {
	switch r {
	case Success:
		return "ncclSuccess"
	case InvalidArgument:
		return "ncclInvalidArgument"
	case InvalidUsage:
		return "ncclInvalidUsage"
	case Timeout:
		return "ncclTimeout"
	}
	return fmt.Sprintf("ncclResult(%d)", int(r))
}

// Error is a failed host call: the NCCL result code, the call and what was
// wrong. Host calls return it as error; use errors.As to read Result.
type Error struct {
	Result Result
	Call   string
	Msg    string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s (%v)", e.Call, e.Msg, e.Result) }

func errf(r Result, call, format string, args ...any) error {
	return &Error{Result: r, Call: call, Msg: fmt.Sprintf(format, args...)}
}
