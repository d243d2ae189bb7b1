package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/scenario/shard"
	"github.com/emud-dev/emud/sim"
)

// A C++ program's sweep (explore or hunt after --) shards and merges as a
// scenario's: shard K runs its range of seeds and writes a shard.Record
// whose header names the program (its argv, or hunt's pairs) and the
// SHA-256 of each executable, so records of another build of the
// program refuse to merge; emud merge runs the found seed again for its
// report, as it does for a scenario.

// sweepProgram runs argv (environment set plus EMUD_SEED) on seeds
// first..first+n-1, jobs at a time. With stop, no seed above the lowest
// failing one found so far is started (explore: every seed below the
// answer still runs); without, every seed runs (hunt's rates). runs[i]
// is seed first+i's run, nil if not run; lowest is the lowest failing
// index, n if none. A program that cannot start is an error.
func sweepProgram(argv, set []string, first uint64, n, jobs int, stop bool, step func(failed bool), o sweepOpts) (runs []*programRun, lowest int, err error) {
	runs = make([]*programRun, n)
	lowest = n
	var (
		mu   sync.Mutex
		next int
		wg   sync.WaitGroup
	)
	warm := newWarmSweep(argv, o)
	for range min(jobs, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := newSeedRunner(argv, set, warm)
			defer r.close()
			for {
				mu.Lock()
				i := next
				if i >= n || (stop && i >= lowest) || err != nil {
					mu.Unlock()
					return
				}
				next++
				mu.Unlock()
				seed := first + uint64(i)
				var out, errb bytes.Buffer
				code, warm, rerr := r.run(programEnv(append([]string{fmt.Sprintf("EMUD_SEED=%d", seed)}, set...)), &out, &errb)
				mu.Lock()
				if rerr != nil && err == nil {
					err = rerr
				}
				runs[i] = &programRun{seed: seed, code: code, stdout: out.String(), stderr: errb.String(), warm: warm}
				if code != 0 && i < lowest {
					lowest = i
				}
				mu.Unlock()
				if step != nil {
					step(code != 0)
				}
			}
		}()
	}
	wg.Wait()
	return runs, lowest, err
}

// stepsRe finds the step count capi prints with EMUD_STEPS=1.
var stepsRe = regexp.MustCompile(`(?m)^emud: seed \d+: (\d+) steps$`)

// programPCTSteps is PCT's k for a program, measured as explore and hunt
// measure a scenario's: one run of seed first at the sweep's timing
// without PCT (EMUD_STRATEGY=random), whose step count (EMUD_STEPS=1) is
// the program's length in scheduling steps (a failing run's: its steps up
// to the failure, as a race bug's probe under --race fails). A run that
// prints no count (killed, or a program built by an older emud) is tried
// again, up to probeTries runs; then k is sim.DefaultPCTSteps and warn
// says so, since shards that measured differently do not merge.
func programPCTSteps(argv, set []string, first uint64, warn io.Writer) (int, error) {
	probe := []string{fmt.Sprintf("EMUD_SEED=%d", first), "EMUD_STEPS=1"}
	for _, kv := range set {
		if !strings.HasPrefix(kv, "EMUD_STRATEGY=") && !strings.HasPrefix(kv, "EMUD_PCT_") {
			probe = append(probe, kv)
		}
	}
	probe = append(probe, "EMUD_STRATEGY=random")
	var code int
	var errb bytes.Buffer
	for range probeTries {
		var out bytes.Buffer
		errb.Reset()
		var err error
		if code, err = runProgram(argv, programEnv(probe), &out, &errb); err != nil {
			return 0, err
		}
		if m := stepsRe.FindStringSubmatch(errb.String()); m != nil {
			if k, err := strconv.Atoi(m[1]); err == nil && k > 0 {
				return k, nil
			}
		}
	}
	fmt.Fprintf(warn, "emud: warning: PCT's steps not measured: %d runs of %s on seed %d printed no step count (last exit status %d; its stderr ended: %q): using %d; --pct-steps sets them\n",
		probeTries, strings.Join(argv, " "), first, code, tail(errb.String(), 300), sim.DefaultPCTSteps)
	return sim.DefaultPCTSteps, nil
}

// probeTries bounds the runs programPCTSteps makes for one count.
const probeTries = 3

// withPCTSteps measures PCT's k for argv when the sweep runs PCT and
// --pct-steps left it open, and sets it in f (so the reproduce command
// carries it) and in the environment.
func withPCTSteps(f *scenarioFlags, argv, set []string, first uint64, warn io.Writer) ([]string, error) {
	if f.strategy != sim.StrategyPCT.String() || f.o.PCT.Steps != 0 {
		return set, nil
	}
	k, err := programPCTSteps(argv, set, first, warn)
	if err != nil {
		return nil, err
	}
	f.o.PCT.Steps = k
	return append(set, fmt.Sprintf("EMUD_PCT_STEPS=%d", k)), nil
}

// programSums is the SHA-256 of each distinct executable of argvs (found
// on PATH as exec finds it), in order of first mention.
func programSums(argvs ...[]string) ([]string, error) {
	seen := map[string]bool{}
	var sums []string
	for _, argv := range argvs {
		if len(argv) == 0 || seen[argv[0]] {
			continue
		}
		seen[argv[0]] = true
		path, err := exec.LookPath(argv[0])
		if err != nil {
			return nil, fmt.Errorf("program %s: %w", argv[0], err)
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("program %s: %w", argv[0], err)
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("program %s: %w", argv[0], err)
		}
		sums = append(sums, hex.EncodeToString(h.Sum(nil)))
	}
	return sums, nil
}

// foundStatus is a failing program run's status in a shard record.
func foundStatus(code int) string { return fmt.Sprintf("exit %d", code) }

// exploreProgram runs argv on seeds first.. (seeds of them), jobs at a
// time, and reports the lowest failing seed with its output and the
// command that reproduces it; with shardArg, it runs that shard's range
// and writes its record instead.
func exploreProgram(cmd *cobra.Command, f *scenarioFlags, argv []string, first uint64, seeds, jobs int, showProgress, processPerSeed bool, shardArg, shardOut string) error {
	o := sweepOpts{processPerSeed: processPerSeed, warn: cmd.ErrOrStderr()}
	set, err := programFlags(f)
	if err != nil {
		return err
	}
	sums, err := programSums(argv)
	if err != nil {
		return err
	}
	if set, err = withPCTSteps(f, argv, set, first, cmd.ErrOrStderr()); err != nil {
		return err
	}
	if shardArg != "" {
		sh, err := shard.Parse(shardArg)
		if err != nil {
			return err
		}
		rec := shardRecord(cmd, "explore", "", first, seeds, sh)
		rec.Program, rec.Sums = argv, sums
		if rec.RangeSeeds > 0 {
			runs, lowest, err := sweepProgram(argv, set, rec.RangeFirst, rec.RangeSeeds, jobs, true, nil, o)
			if err != nil {
				return err
			}
			if lowest < rec.RangeSeeds {
				rec.Found = &shard.Found{Seed: runs[lowest].seed, Status: foundStatus(runs[lowest].code)}
			} else {
				for _, r := range runs {
					rec.Ends = append(rec.Ends, r.endMicros())
					rec.Digests = append(rec.Digests, r.digest())
				}
			}
		}
		return rec.Write(cmd.OutOrStdout(), shardOut)
	}
	errOut := cmd.ErrOrStderr()
	prog := newProgress(errOut, showProgress || isTerminal(errOut), "explore "+argv[0], seeds)
	runs, lowest, err := sweepProgram(argv, set, first, seeds, jobs, true, prog.step, o)
	prog.finish()
	if err != nil {
		return err
	}
	var found *programRun
	if lowest < seeds {
		found = runs[lowest]
	}
	return reportProgram(cmd.OutOrStdout(), f, argv, first, seeds, found)
}

// reportProgram prints explore's answer for a program: all passed, or
// the lowest failing seed's output and the command that reproduces it.
func reportProgram(w io.Writer, f *scenarioFlags, argv []string, first uint64, seeds int, r *programRun) error {
	name := strings.Join(argv, " ")
	last := first + uint64(seeds) - 1
	if r == nil {
		fmt.Fprintf(w, "explore %s: all %d seeds passed (seeds %d..%d, --perturb %d --strategy %s)\n", name, seeds, first, last, f.perturb, f.strategy)
		return nil
	}
	fmt.Fprintf(w, "explore %s: seed %d failed (exit status %d), the lowest failing seed of seeds %d..%d\n", name, r.seed, r.code, first, last)
	fmt.Fprintf(w, "stdout:\n%sstderr:\n%s", r.stdout, r.stderr)
	fmt.Fprintf(w, "reproduce: emud replay --seed %d %s-- %s\n", r.seed, replayFlags(f), name)
	return &scenario.ExitError{Code: r.code, Err: fmt.Errorf("%s: seed %d failed with exit status %d (report on stdout)", name, r.seed, r.code)}
}

// endRe finds the end time in capi's summary line.
var endRe = regexp.MustCompile(`(?m)^emud: seed \d+: end (\d+) ps, digest`)

// endMicros is the run's emulated end time in µs (0 if it printed none).
func (r programRun) endMicros() float64 {
	if m := endRe.FindStringSubmatch(r.stderr); m != nil {
		ps, _ := strconv.ParseInt(m[1], 10, 64)
		return float64(ps) / 1e6
	}
	return 0
}

// mergeProgram is emud merge of a program's explore shards: the failing
// seed, if any, runs again here for its report (the program must be the
// build the shards ran).
func mergeProgram(cmd *cobra.Command, f *scenarioFlags, m *shard.Merged, asJSON bool) error {
	if asJSON {
		return fmt.Errorf("merge --json: a program's sweep prints text (its output), not JSON")
	}
	argv := m.Program
	sums, err := programSums(argv)
	if err != nil {
		return err
	}
	if !slices.Equal(sums, m.Sums) {
		return fmt.Errorf("merge: %s is not the build the shards ran (SHA-256 %s, the shards' %s): merge where the shards' program is", argv[0], strings.Join(sums, ","), strings.Join(m.Sums, ","))
	}
	set, err := programFlags(f)
	if err != nil {
		return err
	}
	if set, err = withPCTSteps(f, argv, set, m.First, cmd.ErrOrStderr()); err != nil {
		return err
	}
	if m.Found == nil {
		return reportProgram(cmd.OutOrStdout(), f, argv, m.First, m.Seeds, nil)
	}
	runs, _, err := sweepProgram(argv, set, m.Found.Seed, 1, 1, true, nil, sweepOpts{processPerSeed: true}) // one seed: a server saves nothing
	if err != nil {
		return err
	}
	r := runs[0]
	if foundStatus(r.code) != m.Found.Status {
		return fmt.Errorf("merge: seed %d of %s ended with %s here, %s in its shard: the run did not reproduce (another build, or another machine's environment?)", r.seed, argv[0], foundStatus(r.code), m.Found.Status)
	}
	return reportProgram(cmd.OutOrStdout(), f, argv, m.First, m.Seeds, r)
}

// programPair is one operand of a program hunt: a planted bug's command
// line and, optionally, its fixed twin's.
type programPair struct {
	spec       string // as given, BUG[:FIXED]
	bug, fixed []string
}

// maxPairs bounds a hunt's program list (a file is anyone's).
const maxPairs = 4096

// parsePair reads BUG[:FIXED]: each side a command line, words split at
// spaces (a program path or argument with a space or colon cannot be
// given this way).
func parsePair(s string) (programPair, error) {
	bug, fixed, twin := strings.Cut(s, ":")
	p := programPair{spec: strings.Join(strings.Fields(s), " "), bug: strings.Fields(bug)}
	if twin {
		p.fixed = strings.Fields(fixed) // nil without ':': no twin
	}
	switch {
	case len(p.bug) == 0:
		return p, fmt.Errorf("invalid program pair %q: want BUG[:FIXED], a planted bug's command line and its fixed twin's", s)
	case twin && len(p.fixed) == 0:
		return p, fmt.Errorf("invalid program pair %q: nothing after ':' (leave the ':' out for a bug with no twin)", s)
	case strings.Contains(fixed, ":"):
		return p, fmt.Errorf("invalid program pair %q: more than one ':' (BUG[:FIXED])", s)
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r < ' ' && r != '\t' }) {
		return p, fmt.Errorf("invalid program pair %q: control characters", s)
	}
	return p, nil
}

// parsePairs reads a program list: one BUG[:FIXED] a line, blank lines
// and lines starting with # skipped. The error names the line.
func parsePairs(r io.Reader, name string) ([]programPair, error) {
	var out []programPair
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p, err := parsePair(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if len(out) == maxPairs {
			return nil, fmt.Errorf("%s:%d: more than %d program pairs", name, n, maxPairs)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w (lines up to 64 KiB)", name, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no program pairs (one BUG[:FIXED] a line)", name)
	}
	return out, nil
}
