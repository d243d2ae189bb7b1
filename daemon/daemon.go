package daemon

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"reflect"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emud-dev/emud/scenario"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/semaphore"

	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/sim"
)

// Config are the daemon's knobs (emud serve's flags).
type Config struct {
	Addr            string
	MaxRuns         int           // runs executing at once
	MaxQueued       int           // runs waiting for a slot; more are refused with 503
	MaxBody         int64         // request body limit; larger gets 413
	Keep            int           // finished runs kept for GET; the oldest go first
	TraceBudget     int64         // bytes of serialized traces kept; the oldest traces go first
	MemBudget       uint64        // memory for the runs executing at once, by their estimated footprints; 0 = no limit
	Phantom         bool          // runs are phantom unless a request says "phantom": false
	ReadTimeout     time.Duration // a request (headers and body) must arrive within this
	ShutdownTimeout time.Duration // how long shutdown waits for runs in flight
	// Token, when set, is the secret every request but /healthz must carry
	// as "Authorization: Bearer TOKEN" (--token-file). An address other
	// than loopback needs one.
	Token string
	// AllowHosts are host names, besides localhost, IP literals and
	// --addr's host, that a request's Host header may name (--allow-host).
	// Any other is refused, so a web page whose name was rebound to this
	// machine's address (DNS rebinding) cannot reach the API.
	AllowHosts []string
}

// DefaultConfig is emud serve's defaults.
func DefaultConfig() Config {
	return Config{Addr: "127.0.0.1:8080", MaxRuns: runtime.GOMAXPROCS(0), MaxQueued: 256, MaxBody: 1 << 20,
		Keep: 1000, TraceBudget: 256 << 20, MemBudget: scenario.DefaultMemBudget(), ReadTimeout: 30 * time.Second, ShutdownTimeout: 30 * time.Second}
}

// Validate checks the knobs; errors name emud serve's flags.
func (c Config) Validate() error {
	switch {
	case c.MaxRuns < 1:
		return fmt.Errorf("invalid --max-runs %d: need at least 1", c.MaxRuns)
	case c.MaxQueued < 0:
		return fmt.Errorf("invalid --max-queued %d: need 0 or more", c.MaxQueued)
	case c.MaxBody < 1:
		return fmt.Errorf("invalid --max-body %d: need at least 1 byte", c.MaxBody)
	case c.Keep < 1:
		return fmt.Errorf("invalid --keep %d: need at least 1", c.Keep)
	case c.TraceBudget < 0:
		return fmt.Errorf("invalid --trace-budget %d: need 0 or more bytes", c.TraceBudget)
	case c.ReadTimeout <= 0:
		return fmt.Errorf("invalid --read-timeout %v: need more than 0", c.ReadTimeout)
	case c.ShutdownTimeout < 0:
		return fmt.Errorf("invalid --shutdown-timeout %v: need 0 or more", c.ShutdownTimeout)
	}
	if c.MemBudget > 0 {
		if err := scenario.CheckMemBudget(c.MemBudget); err != nil {
			return err
		}
	}
	for _, h := range c.AllowHosts {
		if h == "" || strings.ContainsAny(h, ":/ ") {
			return fmt.Errorf("invalid --allow-host %q: want a host name without port, such as emud.example.org", h)
		}
	}
	if c.Token == "" && !loopback(c.Addr) {
		return fmt.Errorf("invalid --addr %s: not a loopback address, and no --token-file: anyone who can reach it could start runs on this machine; give --token-file FILE (clients send \"Authorization: Bearer\" and the token), or listen on 127.0.0.1", c.Addr)
	}
	return nil
}

// loopback says whether addr (host:port) listens on loopback only; an
// empty host listens on every interface.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Serve answers HTTP on ln until ctx is done, then shuts down gracefully:
// no new runs, queued runs canceled, runs in flight awaited (the API keeps
// answering meanwhile, so clients can fetch their results), then the
// listener closes. It logs one line per run to log.
func Serve(ctx context.Context, cfg Config, ln net.Listener, log io.Writer) error {
	d := newDaemon(cfg, log)
	// A client has ReadTimeout for its whole request: a stalled upload holds
	// a connection (and a goroutine) no longer than that. Idle keep-alive
	// connections go after a while too.
	srv := &http.Server{Handler: d.routes(), ReadHeaderTimeout: min(10*time.Second, cfg.ReadTimeout),
		ReadTimeout: cfg.ReadTimeout, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	// The start-up line comes before the first request is answered: who
	// may submit is said before anyone has.
	d.logf("emud serve: listening on http://%s (%s)", ln.Addr(), d.access())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	select {
	case err := <-errc:
		d.drain(0)
		return err
	case <-ctx.Done():
	}
	d.logf("emud serve: shutting down: %d runs in flight, %d queued (canceled)", d.inFlight(), d.queued())
	var gaveUp error
	if !d.drain(cfg.ShutdownTimeout) {
		// Runs were cut off: the exit status must say so.
		gaveUp = fmt.Errorf("shutdown: gave up waiting for %d runs in flight after --shutdown-timeout %v", d.inFlight(), cfg.ShutdownTimeout)
		d.logf("emud serve: %v", gaveUp)
	}
	// Answers being written get a moment to finish; a client still
	// sending a request then is cut off: it could not start a run now
	// anyway, and it must not make a clean drain fail (a slow upload made
	// SIGTERM exit 1 after 5 s).
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); errors.Is(err, context.DeadlineExceeded) {
		d.logf("emud serve: closing connections still sending or reading after %v", shutdownGrace)
		srv.Close()
	} else if err != nil {
		return err
	}
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	if gaveUp != nil {
		return gaveUp
	}
	d.logf("emud serve: stopped")
	return nil
}

// lastBoot is the last boot id's time, so two daemons of one process (as
// tests make them) started in the same millisecond still differ.
var lastBoot atomic.Int64

// bootID is a daemon's id prefix: its start time in milliseconds, base 36,
// later than any earlier daemon's of this process.
func bootID(now time.Time) string {
	ms := now.UnixMilli()
	for {
		last := lastBoot.Load()
		if ms <= last {
			ms = last + 1
		}
		if lastBoot.CompareAndSwap(last, ms) {
			return strconv.FormatInt(ms, 36)
		}
	}
}

// shutdownGrace is how long shutdown waits for open connections once the
// runs are done.
const shutdownGrace = 2 * time.Second

// daemon is the server's state: the runs and the metrics.
type daemon struct {
	cfg  Config
	log  io.Writer
	sem  *semaphore.Weighted // run slots (--max-runs)
	ctx  context.Context     // canceled at shutdown: queued runs give up
	stop context.CancelFunc
	wg   sync.WaitGroup // runs not finished

	mu         sync.Mutex
	runs       map[string]*run
	order      []string // ids, oldest first
	traceBytes int64    // bytes of the traces kept
	nextID     int
	draining   bool
	logMu      sync.Mutex
	// boot prefixes every id ("boot-n"): the daemon's start time in
	// milliseconds, base 36. Records live in memory only, so a restarted
	// daemon must not hand out an id an old client still holds for
	// another run, and can tell such an id from one it dropped.
	boot    string
	started time.Time
	// memCur is the part of memBudget (--mem-budget; 0: none) held by the
	// runs executing (their estimated footprints) and by the finished
	// records (storedCost); memFree is closed, and replaced, whenever
	// some is given back.
	memBudget int64
	memCur    int64
	memFree   chan struct{}
	recBytes  int64 // the records' part of memCur

	reg      *prometheus.Registry
	engine   *engineTotals
	total    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	flying   prometheus.Gauge
	waiting  prometheus.Gauge
}

// run is one submitted run. Once it has finished it keeps only what GET
// answers with: its request, status, digest, the report serialized as JSON
// and, if asked for, the serialized trace (within --trace-budget). Nothing
// of the run's node (memory, queues, metrics registry, trace recorder)
// survives it, so --keep finished runs cost kilobytes each, not the run's
// footprint.
type run struct {
	ID        string     `json:"id"`
	Status    string     `json:"status"`
	Request   runRequest `json:"request"`
	Submitted time.Time  `json:"submitted"`
	Started   *time.Time `json:"started,omitempty"`
	Finished  *time.Time `json:"finished,omitempty"`
	// Report is the summary, hang report or error, as JSON.
	Report json.RawMessage `json:"report,omitempty"`
	// TraceDropped says why a trace that was asked for is not kept.
	TraceDropped string `json:"trace_dropped,omitempty"`

	digest string
	trace  []byte             // Chrome trace JSON, when asked for and within the budget
	sc     *scenario.Scenario // resolved at submission
	o      scenario.Options   // resolved at submission; no registry or observer
	// cancel stops the run's wait for a slot; stop, its simulator once
	// running (o.Stop); canceled says DELETE asked.
	cancel   context.CancelFunc
	ctx      context.Context
	stop     *sim.Stopper
	canceled bool
	// stored is what the finished record holds of --mem-budget (storedCost).
	stored int64
}

const (
	statusQueued   = "queued"
	statusRunning  = "running"
	statusCanceled = "canceled"
)

func newDaemon(cfg Config, log io.Writer) *daemon {
	ctx, stop := context.WithCancel(context.Background())
	now := time.Now()
	d := &daemon{cfg: cfg, log: log, sem: semaphore.NewWeighted(int64(cfg.MaxRuns)), ctx: ctx, stop: stop,
		memBudget: memBudgetOf(cfg.MemBudget), memFree: make(chan struct{}),
		runs: map[string]*run{}, reg: prometheus.NewRegistry(), engine: newEngineTotals(),
		boot: bootID(now), started: now.UTC()}
	d.total = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "emud_runs_total",
		Help: "Runs finished, by scenario and status (ok, hang, mismatch, race, error, canceled)."}, []string{"scenario", "status"})
	d.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "emud_run_duration_seconds",
		Help:    "Wall-clock time of a run, from start to report, by scenario.",
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, []string{"scenario"})
	d.flying = prometheus.NewGauge(prometheus.GaugeOpts{Name: "emud_runs_in_flight", Help: "Runs executing now."})
	d.waiting = prometheus.NewGauge(prometheus.GaugeOpts{Name: "emud_runs_queued", Help: "Runs waiting for a slot."})
	d.reg.MustRegister(d.total, d.duration, d.flying, d.waiting, d.engine)
	return d
}

func (d *daemon) logf(format string, args ...any) {
	d.logMu.Lock()
	defer d.logMu.Unlock()
	fmt.Fprintf(d.log, format+"\n", args...)
}

func (d *daemon) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /runs", d.submit)
	mux.HandleFunc("GET /runs", d.list)
	mux.HandleFunc("GET /runs/{id}", d.get)
	mux.HandleFunc("DELETE /runs/{id}", d.cancelRun)
	mux.HandleFunc("GET /runs/{id}/trace", d.getTrace)
	mux.Handle("GET /metrics", promhttp.HandlerFor(d.reg, promhttp.HandlerOpts{}))
	guarded := d.guard(mux)
	root := http.NewServeMux()
	root.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	root.Handle("/", guarded)
	return root
}

// access says, for the start-up line, who may use the API.
func (d *daemon) access() string {
	if d.cfg.Token != "" {
		return "every request but /healthz needs \"Authorization: Bearer\" and the --token-file token"
	}
	return "loopback only, no token: any local user or process may submit runs; --token-file requires one"
}

// guard is what a request must pass before the API sees it: the token
// (when there is one), a Host the daemon answers to, and for a POST a JSON
// body. A web page the user visits can send a text/plain or form POST to
// 127.0.0.1 without the browser asking (no CORS preflight), or reach it
// under its own name rebound to 127.0.0.1 (DNS rebinding, its own name in
// Host); a JSON Content-Type or a Bearer header makes the browser ask
// first, and this daemon never says yes.
func (d *daemon) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d.cfg.Token != "" {
			scheme, tok, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
			if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(d.cfg.Token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="emud"`)
				writeError(w, &requestError{http.StatusUnauthorized, "", "missing or wrong token: send \"Authorization: Bearer TOKEN\" with the token of the daemon's --token-file"})
				return
			}
		}
		if !d.hostAllowed(r.Host) {
			writeError(w, &requestError{http.StatusForbidden, "", fmt.Sprintf("Host %q is not this daemon's: it answers to localhost, IP addresses, its --addr host and --allow-host names (a page under another name reaching it is refused)", r.Host)})
			return
		}
		if r.Method == http.MethodPost {
			mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if err != nil || mt != "application/json" {
				writeError(w, &requestError{http.StatusUnsupportedMediaType, "", fmt.Sprintf("Content-Type %q: send the request as application/json", r.Header.Get("Content-Type"))})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// hostAllowed says whether a request's Host header (host or host:port)
// names this daemon.
func (d *daemon) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "" {
		return false
	}
	if net.ParseIP(host) != nil || strings.EqualFold(host, "localhost") {
		return true // a rebound name arrives as that name, never as an address
	}
	if ah, _, err := net.SplitHostPort(d.cfg.Addr); err == nil && ah != "" && strings.EqualFold(ah, host) {
		return true
	}
	for _, a := range d.cfg.AllowHosts {
		if strings.EqualFold(a, host) {
			return true
		}
	}
	return false
}

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

// memBudgetOf is --mem-budget as the daemon counts it: 0 for none (or one
// beyond what an int64 counts, which no machine has).
func memBudgetOf(budget uint64) int64 {
	if budget > math.MaxInt64 {
		return 0
	}
	return int64(budget)
}

// acquireMem holds need bytes of the budget for a run, evicting the oldest
// finished records to make room (a run matters more than an old report),
// else waiting until runs give some back or ctx is done.
func (d *daemon) acquireMem(ctx context.Context, need int64) error {
	for {
		d.mu.Lock()
		if d.memCur+need <= d.memBudget {
			d.memCur += need
			d.mu.Unlock()
			return nil
		}
		// Records give way only where that makes room: a run waiting
		// for the runs executing leaves them be.
		if d.memCur-d.recBytes+need <= d.memBudget && d.evictOldestLocked(nil) {
			d.mu.Unlock()
			continue
		}
		free := d.memFree
		d.mu.Unlock()
		select {
		case <-free:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// releaseMemLocked gives n bytes back to the budget and wakes the runs
// waiting for memory.
func (d *daemon) releaseMemLocked(n int64) {
	if n == 0 {
		return
	}
	d.memCur -= n
	close(d.memFree)
	d.memFree = make(chan struct{})
}

// evictOldestLocked drops the oldest finished run other than keep and
// gives back what its record held; false when there is none.
func (d *daemon) evictOldestLocked(keep *run) bool {
	for i, id := range d.order {
		ru := d.runs[id]
		if ru == keep || ru.Status == statusQueued || ru.Status == statusRunning {
			continue
		}
		d.dropLocked(ru)
		d.order = slices.Delete(d.order, i, i+1)
		return true
	}
	return false
}

// dropLocked forgets a finished run: its trace, its record's share of the
// budget, the run itself (the caller takes it out of d.order).
func (d *daemon) dropLocked(ru *run) {
	if ru.trace != nil {
		d.dropTraceLocked(ru, "")
	}
	d.releaseMemLocked(ru.stored)
	d.recBytes -= ru.stored
	ru.stored = 0
	delete(d.runs, ru.ID)
}

// storedCost is what a finished record holds on the heap, by its parts:
// the report's JSON and the request's strings, twice over for what the
// runtime keeps around them (a faults list of 949 KB made records of
// about 6 MB before runs dropped their parsed fault spec), plus the
// fixed part of a record.
func storedCost(ru *run) int64 {
	q := ru.Request
	n := len(ru.Report) + len(q.Scenario) + len(q.Model) + len(q.Strategy) + len(q.Faults) + len(ru.digest) + len(ru.TraceDropped)
	return 2*int64(n) + recordOverhead
}

// recordOverhead is a record's fixed size: the run, its times, the map
// entry and its id.
const recordOverhead = 2 << 10

// shrinkLocked cuts a finished record that does not fit the budget down to
// its status: its report and its faults list go, and the record says so.
func shrinkLocked(ru *run, budget int64) {
	why := fmt.Sprintf("the report (%s) is dropped: the runs executing and the newer records hold the daemon's --mem-budget %s", scenario.FormatBytes(uint64(len(ru.Report))), scenario.FormatBytes(uint64(budget)))
	ru.Report, _ = json.Marshal(map[string]string{"status": ru.Status, "error": why})
	if len(ru.Request.Faults) > 64 {
		ru.Request.Faults = fmt.Sprintf("(%d bytes, dropped with the report)", len(ru.Request.Faults))
	}
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

func (d *daemon) submit(w http.ResponseWriter, r *http.Request) {
	req, sc, o, rerr := d.decodeRequest(w, r)
	if rerr != nil {
		writeError(w, rerr)
		return
	}
	d.mu.Lock()
	if d.draining {
		d.mu.Unlock()
		writeError(w, &requestError{http.StatusServiceUnavailable, "", "shutting down: not taking runs"})
		return
	}
	if d.queuedLocked() >= d.cfg.MaxQueued+d.cfg.MaxRuns {
		d.mu.Unlock()
		writeError(w, &requestError{http.StatusServiceUnavailable, "", fmt.Sprintf("too many runs waiting (%d): try again later", d.cfg.MaxQueued)})
		return
	}
	d.nextID++
	ru := &run{ID: d.boot + "-" + strconv.Itoa(d.nextID), Status: statusQueued, Request: *req, Submitted: time.Now().UTC(), sc: sc, o: o}
	ru.ctx, ru.cancel = context.WithCancel(d.ctx)
	ru.stop = &sim.Stopper{}
	d.runs[ru.ID] = ru
	d.order = append(d.order, ru.ID)
	d.evictLocked()
	d.wg.Add(1)
	d.mu.Unlock()
	d.waiting.Inc()
	go d.execute(ru)
	writeJSONResponse(w, http.StatusAccepted, map[string]string{"id": ru.ID, "status": statusQueued, "url": "/runs/" + ru.ID})
}

// queuedLocked counts runs not finished (queued or running).
func (d *daemon) queuedLocked() int {
	n := 0
	for _, ru := range d.runs {
		if ru.Status == statusQueued || ru.Status == statusRunning {
			n++
		}
	}
	return n
}

// evictLocked drops the oldest finished runs beyond cfg.Keep.
func (d *daemon) evictLocked() {
	excess := len(d.order) - d.cfg.Keep
	if excess <= 0 {
		return
	}
	kept := d.order[:0]
	for _, id := range d.order {
		ru := d.runs[id]
		if excess > 0 && ru.Status != statusQueued && ru.Status != statusRunning {
			d.dropLocked(ru)
			excess--
			continue
		}
		kept = append(kept, id)
	}
	d.order = kept
}

// execute waits for a slot, runs, and files the report. Nothing a run
// does can stop the daemon: runOnce turns panics into error reports.
func (d *daemon) execute(ru *run) {
	defer d.wg.Done()
	defer ru.cancel()
	err := d.sem.Acquire(ru.ctx, 1)
	d.waiting.Dec()
	if err != nil {
		d.finish(ru, nil, nil, statusCanceled)
		return
	}
	defer d.sem.Release(1)
	var need int64
	if d.memBudget > 0 {
		// Runs that fit the budget alone may still not fit it together:
		// a run waits for the memory it is estimated to need. Submission
		// refused any run larger than the whole budget.
		need = int64(scenario.Footprint(ru.sc, ru.o).Bytes())
		if err := d.acquireMem(ru.ctx, need); err != nil {
			d.finish(ru, nil, nil, statusCanceled)
			return
		}
	}
	// The run's memory goes back before its record takes its own share.
	release := func() {
		d.mu.Lock()
		d.releaseMemLocked(need)
		need = 0
		d.mu.Unlock()
	}
	defer release()
	now := time.Now().UTC()
	d.mu.Lock()
	if ru.canceled {
		d.mu.Unlock()
		d.finish(ru, nil, nil, statusCanceled)
		return
	}
	ru.Status, ru.Started = statusRunning, &now
	d.mu.Unlock()
	d.flying.Inc()
	defer d.flying.Dec()

	rep, tr := d.runOne(ru)
	d.duration.WithLabelValues(ru.sc.Name).Observe(time.Since(now).Seconds())
	status := rep.Status
	if errors.Is(rep.Err, errCanceled) {
		status = statusCanceled
	}
	release()
	d.finish(ru, rep, tr, status)
	if scenario.Footprint(ru.sc, ru.o).Bytes() >= returnToOSAfter {
		// The run's memory is garbage now. Left to the runtime, the freed
		// heap stays resident (reused spans are zeroed, so their pages
		// are touched) and the scavenger returns it only slowly: a daemon
		// that ran a big run would keep its footprint. A forced collection
		// costs little next to such a run.
		debug.FreeOSMemory()
	}
}

// returnToOSAfter is the estimated footprint from which a finished run's
// memory is handed back to the operating system at once.
const returnToOSAfter = 64 << 20

// runOne runs ru and returns its report and serialized trace (nil unless
// asked for). The run's registry is folded into the daemon's totals here;
// nothing else of the run outlives this call.
func (d *daemon) runOne(ru *run) (*scenario.Report, []byte) {
	o := ru.o
	o.Registry = prometheus.NewRegistry()
	o.Stop = ru.stop
	var writeTrace func(io.Writer) error
	if ru.Request.Trace {
		writeTrace = scenario.TraceInto(&o)
	}
	rep := scenario.RunOnce(ru.sc, o)
	var tr []byte
	if writeTrace != nil {
		var buf bytes.Buffer
		if err := writeTrace(&buf); errors.Is(err, scenario.ErrNoNode) {
			// a run that failed before its node was built has no trace
		} else if err != nil {
			d.logf("run %s: trace: %v", ru.ID, err)
		} else {
			tr = buf.Bytes()
		}
	}
	if err := d.engine.add(o.Registry); err != nil {
		d.logf("run %s: engine metrics: %v", ru.ID, err)
	}
	return rep, tr
}

// errCanceled ends a run DELETE /runs/{id} interrupted.
var errCanceled = errors.New("canceled by DELETE /runs/{id}")

// cancelRun is DELETE /runs/{id}: a queued run is canceled at once, a
// running one is stopped at its next event (its report says canceled
// once it stops); a finished run is left as it is.
func (d *daemon) cancelRun(w http.ResponseWriter, r *http.Request) {
	ru := d.lookup(w, r)
	if ru == nil {
		return
	}
	d.mu.Lock()
	status := ru.Status
	switch {
	case status != statusQueued && status != statusRunning:
		d.mu.Unlock()
		writeError(w, &requestError{http.StatusConflict, "", fmt.Sprintf("run %s has finished (%s): nothing to cancel", ru.ID, status)})
		return
	}
	ru.canceled = true
	ru.cancel()               // a queued run stops waiting for its slot or memory
	ru.stop.Stop(errCanceled) // a running one at its next event
	d.mu.Unlock()
	d.logf("run %s: cancel asked (%s)", ru.ID, status)
	writeJSONResponse(w, http.StatusAccepted, map[string]string{"id": ru.ID, "status": "canceling", "url": "/runs/" + ru.ID})
}

// finish files a run's outcome: the report as JSON, the trace within the
// budget.
func (d *daemon) finish(ru *run, rep *scenario.Report, tr []byte, status string) {
	now := time.Now().UTC()
	var body json.RawMessage
	digest := ""
	if rep != nil {
		b, err := json.Marshal(rep)
		if err != nil {
			b, _ = json.Marshal(map[string]string{"status": scenario.StatusError, "error": "report: " + err.Error()})
			status = scenario.StatusError
		}
		body, digest = b, rep.Digest()
	}
	d.mu.Lock()
	ru.Status, ru.Report, ru.digest, ru.Finished = status, body, digest, &now
	ru.o.Faults = engine.InjectSpec{} // parsed, it took several times its text
	if d.memBudget > 0 {
		cost := storedCost(ru)
		for d.memCur+cost > d.memBudget && d.evictOldestLocked(ru) {
		}
		if d.memCur+cost > d.memBudget {
			shrinkLocked(ru, d.memBudget)
			cost = storedCost(ru) // counted even over the budget: a few KiB, given back as runs end
		}
		ru.stored = cost
		d.memCur += cost
		d.recBytes += cost
	}
	switch {
	case tr == nil:
	case int64(len(tr)) > d.cfg.TraceBudget:
		ru.TraceDropped = fmt.Sprintf("the trace (%s) is larger than --trace-budget %s", scenario.FormatBytes(uint64(len(tr))), scenario.FormatBytes(uint64(d.cfg.TraceBudget)))
	default:
		ru.trace = tr
		d.traceBytes += int64(len(tr))
		d.trimTracesLocked()
	}
	d.evictLocked()
	d.mu.Unlock()
	d.total.WithLabelValues(ru.sc.Name, status).Inc()
	d.logf("run %s: %s seed %d: %s", ru.ID, ru.sc.Name, ru.o.Seed, status)
}

// trimTracesLocked drops the oldest kept traces until the rest fit
// --trace-budget.
func (d *daemon) trimTracesLocked() {
	for _, id := range d.order {
		if d.traceBytes <= d.cfg.TraceBudget {
			return
		}
		if ru := d.runs[id]; ru.trace != nil {
			d.dropTraceLocked(ru, fmt.Sprintf("dropped to keep the traces of newer runs within --trace-budget %s", scenario.FormatBytes(uint64(d.cfg.TraceBudget))))
		}
	}
}

func (d *daemon) dropTraceLocked(ru *run, why string) {
	d.traceBytes -= int64(len(ru.trace))
	ru.trace, ru.TraceDropped = nil, why
}

// runListing is one row of GET /runs.
type runListing struct {
	ID       string `json:"id"`
	Scenario string `json:"scenario"`
	Seed     uint64 `json:"seed"`
	Status   string `json:"status"`
	Digest   string `json:"digest,omitempty"`
}

func (d *daemon) list(w http.ResponseWriter, _ *http.Request) {
	d.mu.Lock()
	rows := make([]runListing, 0, len(d.order))
	for _, id := range slices.Backward(d.order) {
		ru := d.runs[id]
		row := runListing{ID: ru.ID, Scenario: ru.sc.Name, Seed: ru.o.Seed, Status: ru.Status, Digest: ru.digest}
		rows = append(rows, row)
	}
	d.mu.Unlock()
	writeJSONResponse(w, http.StatusOK, map[string]any{"runs": rows})
}

func (d *daemon) lookup(w http.ResponseWriter, r *http.Request) *run {
	id := r.PathValue("id")
	d.mu.Lock()
	ru := d.runs[id]
	d.mu.Unlock()
	if ru == nil {
		writeError(w, &requestError{http.StatusNotFound, "id", d.missing(id)})
	}
	return ru
}

// missing says why there is no run id: made by an earlier daemon (records
// do not survive a restart), dropped, or never made.
func (d *daemon) missing(id string) string {
	boot, n, ok := strings.Cut(id, "-")
	seq, err := strconv.Atoi(n)
	switch {
	case !ok || err != nil || seq < 1:
		return fmt.Sprintf("no run %q: run ids look like %s-1", id, d.boot)
	case boot != d.boot:
		return fmt.Sprintf("no run %q: it was made before this daemon started (%s); records are kept in memory only and do not survive a restart", id, d.started.Format(time.RFC3339))
	}
	d.mu.Lock()
	made := seq <= d.nextID
	d.mu.Unlock()
	if made {
		return fmt.Sprintf("no run %q: dropped to keep the last --keep %d runs within --mem-budget", id, d.cfg.Keep)
	}
	return fmt.Sprintf("no run %q: not made yet", id)
}

func (d *daemon) get(w http.ResponseWriter, r *http.Request) {
	ru := d.lookup(w, r)
	if ru == nil {
		return
	}
	d.mu.Lock()
	body, err := json.MarshalIndent(ru, "", "  ")
	d.mu.Unlock()
	if err != nil {
		writeError(w, &requestError{http.StatusInternalServerError, "", err.Error()})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(append(body, '\n'))
}

func (d *daemon) getTrace(w http.ResponseWriter, r *http.Request) {
	ru := d.lookup(w, r)
	if ru == nil {
		return
	}
	d.mu.Lock()
	status, tr, asked, dropped := ru.Status, ru.trace, ru.Request.Trace, ru.TraceDropped
	d.mu.Unlock()
	switch {
	case !asked:
		writeError(w, &requestError{http.StatusNotFound, "trace", fmt.Sprintf("run %s was submitted without \"trace\": true", ru.ID)})
	case status == statusQueued || status == statusRunning:
		writeError(w, &requestError{http.StatusConflict, "", fmt.Sprintf("run %s is %s: its trace is written when it ends", ru.ID, status)})
	case tr == nil && dropped != "":
		writeError(w, &requestError{http.StatusGone, "", fmt.Sprintf("run %s's trace is not kept: %s", ru.ID, dropped)})
	case tr == nil:
		writeError(w, &requestError{http.StatusNotFound, "", fmt.Sprintf("run %s (%s) left no trace", ru.ID, status)})
	default:
		w.Header().Set("Content-Type", "application/json")
		w.Write(tr)
	}
}

// inFlight and queued count the runs running and waiting.
func (d *daemon) inFlight() int { return d.count(statusRunning) }
func (d *daemon) queued() int   { return d.count(statusQueued) }

// count is how many of the runs have status st.
func (d *daemon) count(st string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, ru := range d.runs {
		if ru.Status == st {
			n++
		}
	}
	return n
}

// drain stops taking runs, cancels the queued ones and waits up to timeout
// for those in flight. It reports whether they all finished.
func (d *daemon) drain(timeout time.Duration) bool {
	d.mu.Lock()
	d.draining = true
	d.mu.Unlock()
	d.stop()
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(timeout):
		return false
	}
}
