package daemon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/emud-dev/emud/scenario"

	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/sim"
)

// A run request: its JSON, decoded and checked field by field into a
// scenario and its options, and the error answers it gets.

// runRequest is POST /runs's body. Absent fields keep emud run's defaults.
type runRequest struct {
	Scenario string    `json:"scenario"`
	Ranks    int       `json:"ranks"`
	Bytes    jsonBytes `json:"bytes"`
	Queues   int       `json:"queues"`
	Seed     uint64    `json:"seed"`
	Debug    bool      `json:"debug"`
	Race     bool      `json:"race,omitempty"` // the race detector, as --race
	Model    string    `json:"model,omitempty"`
	Trace    bool      `json:"trace"`
	// Perturb is the timing perturbation level (0, as emud run); Strategy
	// "random" or "pct"; Faults a fault spec as --faults takes it.
	Perturb  int    `json:"perturb"`
	Strategy string `json:"strategy,omitempty"`
	Faults   string `json:"faults,omitempty"`
	Phantom  bool   `json:"phantom,omitempty"`
	LsaSize  int    `json:"lsa_size,omitempty"`
	CftSize  int    `json:"cft_size,omitempty"`
	McSize   int    `json:"mc_size,omitempty"`
}

// jsonBytes is a byte count given as a JSON number or as a size string
// ("64K", "1MiB"), as --bytes takes it.
type jsonBytes uint64

func (b *jsonBytes) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		v, err := scenario.ParseBytes(s)
		if err != nil {
			return &fieldError{"bytes", err}
		}
		*b = jsonBytes(v)
		return nil
	}
	v, err := strconv.ParseUint(string(data), 10, 64)
	if err != nil {
		return &fieldError{"bytes", fmt.Errorf("%s is not a whole number of bytes (or a size string such as \"64K\")", data)}
	}
	*b = jsonBytes(v)
	return nil
}

// fieldError is a field's own decoder failing (encoding/json passes it on
// without saying which field it was).
type fieldError struct {
	field string
	err   error
}

func (e *fieldError) Error() string { return e.err.Error() }

// requestError is a 4xx answer: the status, the field at fault (if one is)
// and the message.
type requestError struct {
	status int
	field  string
	msg    string
}

func (e *requestError) Error() string { return e.msg }

func badField(field, format string, args ...any) *requestError {
	return &requestError{http.StatusBadRequest, field, fmt.Sprintf(format, args...)}
}

// flagInError finds the flag an option error names ("invalid --ranks 1:
// ..."), the request field of the same name.
var flagInError = regexp.MustCompile(`--([a-z-]+)`)

// decodeRequest reads and checks a POST /runs body.
func (d *daemon) decodeRequest(w http.ResponseWriter, r *http.Request) (*runRequest, *scenario.Scenario, scenario.Options, *requestError) {
	req := runRequest{Scenario: "alltoall", Seed: 1, Phantom: d.cfg.Phantom}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, d.cfg.MaxBody))
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err == nil {
		err = dec.Decode(&req)
	}
	if err == nil && dec.More() {
		err = errors.New("extra data after the JSON object")
	}
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			err = errors.New("extra data after the JSON object")
		}
	}
	if err != nil {
		var tooBig *http.MaxBytesError
		var typeErr *json.UnmarshalTypeError
		var syntax *json.SyntaxError
		var fe *fieldError
		var netErr net.Error
		switch {
		case errors.As(err, &netErr) && netErr.Timeout():
			return nil, nil, scenario.Options{}, &requestError{http.StatusRequestTimeout, "",
				fmt.Sprintf("the request body did not arrive within the daemon's --read-timeout %v", d.cfg.ReadTimeout)}
		case errors.As(err, &fe):
			return nil, nil, scenario.Options{}, badField(fe.field, "field %q: %v", fe.field, fe.err)
		case errors.As(err, &tooBig):
			return nil, nil, scenario.Options{}, &requestError{http.StatusRequestEntityTooLarge, "",
				fmt.Sprintf("request body over the limit of %s", scenario.FormatBytes(uint64(tooBig.Limit)))}
		case errors.As(err, &typeErr) && typeErr.Field == "":
			return nil, nil, scenario.Options{}, badField("", "request body is a JSON %s: want a JSON object such as {\"scenario\": \"alltoall\"}", typeErr.Value)
		case errors.As(err, &typeErr):
			return nil, nil, scenario.Options{}, badField(typeErr.Field, "field %q: want %s, got a JSON %s", typeErr.Field, typeErr.Type, typeErr.Value)
		case errors.As(err, &syntax):
			return nil, nil, scenario.Options{}, badField("", "request body is not valid JSON (at byte %d): %v", syntax.Offset, err)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, nil, scenario.Options{}, badField("", "request body is not valid JSON: it ends inside the object")
		case errors.Is(err, io.EOF):
			return nil, nil, scenario.Options{}, badField("", "empty request body: want a JSON object such as {\"scenario\": \"alltoall\"}")
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return nil, nil, scenario.Options{}, badField(f, "unknown field %q: known fields are %s", f, strings.Join(requestFields(), ", "))
		}
		return nil, nil, scenario.Options{}, badField("", "bad request body: %v", err)
	}
	given, rerr := checkRequestKeys(body)
	if rerr != nil {
		return nil, nil, scenario.Options{}, rerr
	}
	sc, err := scenario.Lookup(req.Scenario)
	if err != nil {
		return nil, nil, scenario.Options{}, badField("scenario", "unknown scenario %q: known scenarios: %s", req.Scenario, scenario.Names())
	}
	def := scenario.Defaults(sc)
	if !given["bytes"] {
		req.Bytes = jsonBytes(def.Bytes)
	}
	if !given["ranks"] {
		req.Ranks = def.Ranks
	}
	if !given["queues"] {
		req.Queues = def.Queues
	}
	if req.Model != "" && !slices.Contains(model.Presets(), req.Model) {
		// A path would let any client make the daemon open files.
		return nil, nil, scenario.Options{}, badField("model", "field \"model\": %q is not a preset; the daemon takes preset names only: %s", req.Model, strings.Join(model.Presets(), ", "))
	}
	o := scenario.Options{Ranks: req.Ranks, Bytes: uint64(req.Bytes), Queues: req.Queues, Seed: req.Seed, Debug: req.Debug, Race: req.Race, Model: req.Model,
		Phantom: req.Phantom, LsaSize: req.LsaSize, CftSize: req.CftSize, McSize: req.McSize, Traced: req.Trace}
	if req.Perturb < 0 || req.Perturb > int(sim.MaxLevel) {
		return nil, nil, scenario.Options{}, badField("perturb", "field \"perturb\": %d: need 0..%d", req.Perturb, sim.MaxLevel)
	}
	o.Perturb = sim.Level(req.Perturb)
	if req.Strategy != "" {
		st, err := sim.ParseStrategy(req.Strategy)
		if err != nil {
			return nil, nil, scenario.Options{}, badField("strategy", "field \"strategy\": %v", err)
		}
		o.Strategy = st
	}
	if req.Faults != "" {
		sp, err := engine.ParseInject(req.Faults)
		if err != nil {
			return nil, nil, scenario.Options{}, badField("faults", "field \"faults\": %v", err)
		}
		o.Faults = sp
	}
	if o.Race && o.Phantom {
		why := "the request's \"phantom\": true"
		if !given["phantom"] {
			why = "phantom by the daemon's --phantom default"
		}
		return nil, nil, scenario.Options{}, badField("race", "field \"race\": the race detector watches stored bytes, and this run is %s, which stores none: send \"phantom\": false with \"race\": true", why)
	}
	var cerr error
	if sc.Fabric && req.Trace {
		cerr = fmt.Errorf("invalid --trace: %s has no SDMA queues; traces record SDMA scenarios only", sc.Name)
	} else {
		cerr = scenario.Admit(sc, o, d.cfg.MemBudget)
		if cerr == nil && d.cfg.MemBudget == 0 {
			// No budget of its own, but one request must not take the
			// daemon, and every run it holds, past the machine's memory.
			cerr = scenario.CheckMachine(sc, o)
		}
	}
	if be := (*scenario.BudgetError)(nil); errors.As(cerr, &be) {
		return nil, nil, scenario.Options{}, budgetRefusal(sc, o, be)
	}
	if cerr != nil {
		field := ""
		if m := flagInError.FindStringSubmatch(cerr.Error()); m != nil {
			field = strings.ReplaceAll(m[1], "-", "_") // --lsa-size is "lsa_size"
		}
		if f := topologyField(cerr.Error()); f != "" {
			field = f
		}
		return nil, nil, scenario.Options{}, badField(field, "%s", strings.ReplaceAll(cerr.Error(), "--", ""))
	}
	return &req, sc, o, nil
}

// topologyField is the request field a fabric topology error is about:
// the error names all three topology flags and then the fabric's field
// at fault first ("CftMcSize 3 must divide CftSize 8" is mc_size's).
func topologyField(msg string) string {
	_, detail, ok := strings.Cut(msg, "fabric topology: ")
	if !ok {
		return ""
	}
	field, at := "", len(detail)
	for name, f := range map[string]string{"LsaSize": "lsa_size", "CftSize": "cft_size", "CftMcSize": "mc_size", "NRanks": "ranks"} {
		if i := strings.Index(detail, name); i >= 0 && i < at {
			field, at = f, i
		}
	}
	return field
}

// budgetRefusal is the 422 of a request over the daemon's budget (or the
// machine's memory), naming the field at fault and only the advice that
// applies: phantom for a request that is not already, a smaller field.
func budgetRefusal(sc *scenario.Scenario, o scenario.Options, be *scenario.BudgetError) *requestError {
	field := strings.ReplaceAll(be.Field(), "-", "_")
	limit := "the daemon's " + be.Limit()
	if be.Machine {
		limit = be.Limit()
	}
	msg := fmt.Sprintf("%s with ranks %d and bytes %s needs an estimated %s, over %s", sc.Name, o.Ranks, scenario.FormatBytes(o.Bytes), be.Usage, limit)
	var fix []string
	switch field {
	case "mem_budget":
		msg = fmt.Sprintf("even the smallest %s run needs more than %s", sc.Name, limit)
		field = ""
	case "ranks":
		fix = append(fix, "send fewer \"ranks\"")
	default:
		fix = append(fix, "send fewer \"bytes\"")
	}
	if !o.Phantom && sc.Shape == nil {
		fix = append(fix, "send \"phantom\": true for a timing-only run")
	}
	if len(fix) > 0 {
		msg += "; " + strings.Join(fix, ", or ")
	}
	return &requestError{http.StatusUnprocessableEntity, field, msg}
}

// requestFields are runRequest's JSON field names.
func requestFields() []string {
	t := reflect.TypeFor[runRequest]()
	names := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		names = append(names, strings.Split(t.Field(i).Tag.Get("json"), ",")[0])
	}
	return names
}

// checkRequestKeys is what encoding/json does not check in a body that
// decoded: that it is an object (null decodes into a struct as a no-op),
// that every key is a field name exactly (encoding/json matches keys
// without regard to case, so "Ranks" or "RANKS" would pass), and that no
// key is given twice (the last would win silently). body is valid JSON.
func checkRequestKeys(body []byte) (given map[string]bool, _ *requestError) {
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, badField("", "request body is %s: want a JSON object such as {\"scenario\": \"alltoall\"}", jsonKind(tok))
	}
	known, seen := requestFields(), map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, badField("", "bad request body: %v", err)
		}
		k, _ := tok.(string)
		switch {
		case !slices.Contains(known, k):
			return nil, badField(k, "unknown field %q: field names are case-sensitive; known fields are %s", k, strings.Join(known, ", "))
		case seen[k]:
			return nil, badField(k, "field %q is given twice", k)
		}
		seen[k] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, badField(k, "field %q: %v", k, err)
		}
	}
	return seen, nil
}

// jsonKind names the JSON value a token starts.
func jsonKind(tok json.Token) string {
	switch v := tok.(type) {
	case nil:
		return "null"
	case json.Delim:
		if v == '[' {
			return "an array"
		}
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "not an object"
}

func writeJSONResponse(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v) // the client went away; nothing to do
}

func writeError(w http.ResponseWriter, e *requestError) {
	body := map[string]string{"error": e.msg}
	if e.field != "" {
		body["field"] = e.field
	}
	writeJSONResponse(w, e.status, body)
}
