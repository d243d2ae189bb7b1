package daemon

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emud-dev/emud/scenario"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/semaphore"

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
	// lastTurn is the newest run's turn (run.turn): runs take their slots
	// in the order they were submitted (takeSlot).
	lastTurn chan struct{}

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
	// prev is the turn of the run submitted before this one and turn this
	// run's own: closed once the run has a slot or has given up waiting
	// and every run ahead of it has done the same.
	prev, turn chan struct{}
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
		boot: bootID(now), started: now.UTC(), lastTurn: make(chan struct{})}
	close(d.lastTurn) // the first run waits for no one
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
