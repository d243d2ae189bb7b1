package scenario

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Scenario is one runnable workload: a collective on an emulated node,
// with its checks. Run builds its own simulator from the options (through
// NewEnv, or package fabric for the CFT scenarios), runs it and checks its
// data; it returns *sim.HangError on a hang, *race.Error when the race
// detector found unordered accesses and *MismatchError when data is wrong.
type Scenario struct {
	Name    string
	Summary string
	// Planted is set on a scenario with a deliberate bug: what the bug is
	// and which scenario is its fixed twin. Planted scenarios are listed
	// apart and are what "emud hunt" runs.
	Planted *Planted
	// Fabric marks a scenario on the CFT fabric (package fabric) rather
	// than an SDMA node: it takes no --model and leaves no trace, takes
	// the topology flags and up to MaxFabricRanks ranks.
	Fabric bool
	// Bytes says what --bytes means here ("per pair", "per chunk", ...);
	// "" = "per pair".
	Bytes string
	// DefaultBytes replaces the common --bytes default (1 MiB) when the
	// scenario cannot run it; 0 = the common default.
	DefaultBytes uint64
	// Shape, if set, is the only rank and queue count the scenario runs
	// with (the corpus programs fix theirs); --bytes is then unused.
	Shape *Shape
	// Check rejects option combinations the scenario cannot run (beyond
	// Options.Validate), naming the flags. Optional.
	Check func(Options) error
	Run   func(Options) (*Outcome, error)
	// Perf is how "emud perf" maps the scenario onto nccl-tests' columns;
	// nil is a transfer of --bytes (PerfOf).
	Perf *PerfShape
	// PerfModel names the timing model in perf's header, for a fabric
	// scenario whose model is not the CFT fabric's (GIN over SDMA: the
	// engines' model); nil: the default wording.
	PerfModel func(Options) string
	// Usage estimates a run's footprint for the memory budget (Footprint
	// drops Backed and Host for phantom runs). Optional.
	Usage func(Options) Usage
	// Opens, for an SDMA scenario whose queues grow with --ranks (an
	// all-to-all), says which queue ids rank g opens toward rank p (p == g:
	// loopback). Validate then refuses a rank count whose queues do not fit
	// the GPUs' SDMA engines (CheckEngines), naming the limit; nil for a
	// scenario that opens a bounded number of queues per GPU.
	Opens func(Options) func(g, p int) []int
}

// Planted describes a scenario's deliberate bug.
type Planted struct {
	// Fixed is the name of the fixed twin: the same program without the
	// bug, which passes under every strategy.
	Fixed string
	// Class is the bug class; Source where it was seen or documented.
	Class, Source string
	// Timing marks a bug that needs timing hardware shows but the
	// calibrated model alone never produces: seeded tie-breaks at exact
	// timing never find it.
	Timing bool
	// Faults names the fault injection the program runs under (the
	// hardware incident it reproduces); "" for program bugs.
	Faults string
	// Ranks and Bytes are the shape hunt runs the bug and its twin at (0:
	// Defaults), small so that hundreds of seeds stay cheap.
	Ranks int
	Bytes uint64
	// LsaSize is the hunt shape's --lsa-size (0: Defaults): the fabric
	// bugs that need several nodes.
	LsaSize int
}

// Shape is a fixed rank and queue count.
type Shape struct{ Ranks, Queues int }

// BytesMeaning is what --bytes means for s.
func (s *Scenario) BytesMeaning() string {
	if s.Bytes == "" {
		return "per pair"
	}
	return s.Bytes
}

var (
	mu       sync.RWMutex
	registry = map[string]*Scenario{}
)

// Register adds s to the registry; a scenario file calls it from init. A
// name registered twice, or a scenario without a name or Run, panics (a
// programming error caught by any test that imports the package).
func Register(s *Scenario) {
	if s.Name == "" || s.Run == nil {
		panic("scenario: Register needs a Name and a Run")
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[s.Name]; dup {
		panic("scenario: " + s.Name + " registered twice")
	}
	registry[s.Name] = s
}

// Unregister removes the scenario called name (for tests that register a
// throwaway one).
func Unregister(name string) {
	mu.Lock()
	defer mu.Unlock()
	delete(registry, name)
}

// All returns every registered scenario, sorted by name.
func All() []*Scenario {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]*Scenario, 0, len(registry))
	for _, s := range registry {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *Scenario) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// PlantedBugs returns the planted scenarios (those with a fixed twin),
// sorted by name: the hunt corpus.
func PlantedBugs() []*Scenario {
	var out []*Scenario
	for _, s := range All() {
		if s.Planted != nil {
			out = append(out, s)
		}
	}
	return out
}

// Names lists the registry, sorted, comma-separated, for help and errors.
func Names() string {
	var names []string
	for _, s := range All() {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

// Lookup returns the scenario called name; the error names the flag and
// lists the known scenarios.
func Lookup(name string) (*Scenario, error) {
	mu.RLock()
	s, ok := registry[name]
	mu.RUnlock()
	if ok {
		return s, nil
	}
	return nil, fmt.Errorf("invalid --scenario %q: known scenarios: %s", name, Names())
}

// Twin returns the fixed twin of planted scenario s.
func Twin(s *Scenario) (*Scenario, error) {
	if s.Planted == nil {
		return nil, fmt.Errorf("%s is not a planted bug: it has no fixed twin", s.Name)
	}
	t, err := Lookup(s.Planted.Fixed)
	if err != nil {
		return nil, fmt.Errorf("%s's fixed twin: %w", s.Name, err)
	}
	return t, nil
}

// List is the help text's list of scenarios, planted bugs last.
func List() string {
	var b, planted strings.Builder
	for _, sc := range All() {
		to := &b
		if sc.Planted != nil {
			to = &planted
		}
		fmt.Fprintf(to, "  %-26s %s\n", sc.Name, sc.Summary)
	}
	return b.String() + planted.String()
}
