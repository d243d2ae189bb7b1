package sim

import (
	"testing"

	"github.com/emud-dev/emud/internal/racebuild"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLocalScopes: RunLocal's value is the run's, made again by the next
// run that borrows the same Scratch; WorkerLocal's is the Scratch's, the
// same for every run until Close, after which it is made again. Within a
// run, and after its Run, each is the one value mk made.
func TestLocalScopes(t *testing.T) {
	key := NewLocalKey[*int]()
	for _, tc := range []struct {
		name string
		get  func(s *Sim, mk func() *int) *int
		// made is how many values mk made for 3 runs and for 3 more after
		// the Scratch's Close.
		made, madeAfterClose int
	}{
		{"RunLocal", func(s *Sim, mk func() *int) *int { return RunLocal(s, key, mk) }, 3, 6},
		{"WorkerLocal", func(s *Sim, mk func() *int) *int { return WorkerLocal(s.Scratch(), key, mk) }, 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := NewScratch()
			made := 0
			mk := func() *int { made++; v := made; return &v }
			seen := map[*int]bool{}
			runs := func() {
				for run := range 3 {
					s := New(Config{Seed: uint64(run), Scratch: sc})
					v := tc.get(s, mk)
					assert.Same(t, v, tc.get(s, mk), "run %d: one value within a run", run)
					s.Spawn("reader", func(*Actor) { assert.Same(t, v, tc.get(s, mk), "run %d: its actors' too", run) })
					require.NoError(t, s.Run())
					assert.Same(t, v, tc.get(s, mk), "run %d: still the run's after Run", run)
					seen[v] = true
				}
			}
			runs()
			assert.Equal(t, tc.made, made)
			assert.Len(t, seen, tc.made, "a value per value made")
			sc.Close()
			runs()
			assert.Equal(t, tc.madeAfterClose, made, "Close forgot the Scratch's values")
			assert.Len(t, seen, tc.madeAfterClose)
		})
	}
}

// namedString is a type of string's underlying type, for keys of two
// types whose values are alike.
type namedString string

// TestLocalKeysDistinct: each key has its own value, in a run and in a
// Scratch: two NewLocalKeys of one type, a NewLocalKey and the zero key,
// the zero keys of two types (a value is never read back as another
// type's).
func TestLocalKeysDistinct(t *testing.T) {
	str1, str2 := NewLocalKey[string](), NewLocalKey[string]()
	var zeroStr LocalKey[string]
	var zeroNamed LocalKey[namedString]
	// get returns the value under a key, as a string, made with mk.
	type get func(s *Sim, mk func() string) string
	runKey := func(k LocalKey[string]) get {
		return func(s *Sim, mk func() string) string { return RunLocal(s, k, mk) }
	}
	workerKey := func(k LocalKey[string]) get {
		return func(s *Sim, mk func() string) string { return WorkerLocal(s.Scratch(), k, mk) }
	}
	runNamed := func(s *Sim, mk func() string) string {
		return string(RunLocal(s, zeroNamed, func() namedString { return namedString(mk()) }))
	}
	workerNamed := func(s *Sim, mk func() string) string {
		return string(WorkerLocal(s.Scratch(), zeroNamed, func() namedString { return namedString(mk()) }))
	}
	for _, tc := range []struct {
		name string
		a, b get
	}{
		{"run: two keys of one type", runKey(str1), runKey(str2)},
		{"run: a key and the zero key", runKey(str1), runKey(zeroStr)},
		{"run: zero keys of two types", runKey(zeroStr), runNamed},
		{"worker: two keys of one type", workerKey(str1), workerKey(str2)},
		{"worker: a key and the zero key", workerKey(str1), workerKey(zeroStr)},
		{"worker: zero keys of two types", workerKey(zeroStr), workerNamed},
		{"a key's run value and its worker value", runKey(str1), workerKey(str1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := NewScratch()
			defer sc.Close()
			s := New(Config{Seed: 1, Scratch: sc})
			assert.Equal(t, "a", tc.a(s, func() string { return "a" }))
			assert.Equal(t, "b", tc.b(s, func() string { return "b" }), "b's own value, not a's")
			assert.Equal(t, "a", tc.a(s, func() string { return "made again" }), "a's value stays")
			assert.Equal(t, "b", tc.b(s, func() string { return "made again" }))
		})
	}
}

// TestLocalNilInterface: a nil value of an interface type is a value
// like another: made once, read back as nil.
func TestLocalNilInterface(t *testing.T) {
	key := NewLocalKey[error]()
	s := New(Config{Seed: 1, Scratch: NewScratch()})
	made := 0
	mk := func() error { made++; return nil }
	for range 2 {
		assert.NoError(t, RunLocal(s, key, mk))
		assert.NoError(t, WorkerLocal(s.Scratch(), key, mk))
	}
	assert.Equal(t, 2, made, "once a scope")
}

// TestRunScratch: the runs that borrow one Scratch get the same value,
// reset once at each run's first call; a run without a Scratch gets nil;
// two keys of one type are two arenas.
func TestRunScratch(t *testing.T) {
	type arena struct{ used, resets int }
	key, other := NewLocalKey[*arena](), NewLocalKey[*arena]()
	reset := func(a *arena) { a.used = 0; a.resets++ }
	assert.Nil(t, RunScratch(New(Config{Seed: 1}), key, reset), "no Scratch")
	sc := NewScratch()
	defer sc.Close()
	var first *arena
	for run := range 3 {
		s := New(Config{Seed: 1, Scratch: sc})
		a := RunScratch(s, key, reset)
		require.NotNil(t, a)
		assert.Zero(t, a.used, "run %d starts with it reset", run)
		a.used = 5
		assert.Same(t, a, RunScratch(s, key, reset), "the same value within a run, not reset again")
		assert.Equal(t, 5, a.used)
		assert.Equal(t, run+1, a.resets)
		if first == nil {
			first = a
		}
		assert.Same(t, first, a, "the Scratch's value, kept across runs")
		b := RunScratch(s, other, reset)
		assert.NotSame(t, a, b, "another key's arena")
		assert.Equal(t, 5, a.used, "resetting the other arena left this one")
		assert.Equal(t, run+1, b.resets)
	}
}

// TestRunLocalMapKept: a run borrowing a Scratch keeps its RunLocal
// values in the map the run before it used, emptied: RunLocal of values
// already made costs a warm worker's run no allocation (the map was two
// of a 4 KiB all-to-all seed's).
func TestRunLocalMapKept(t *testing.T) {
	if racebuild.Enabled {
		t.Skip("the race detector's instrumentation allocates on its own")
	}
	k1, k2 := NewLocalKey[*int](), NewLocalKey[*string]()
	v1, v2 := new(int), new(string)
	sc := NewScratch()
	defer sc.Close()
	run := func(local bool) func() {
		return func() {
			s := New(Config{Seed: 1, Scratch: sc})
			if local {
				assert.Same(t, v1, RunLocal(s, k1, func() *int { return v1 }))
				assert.Same(t, v2, RunLocal(s, k2, func() *string { return v2 }))
			}
			require.NoError(t, s.Run())
		}
	}
	without := testing.AllocsPerRun(20, run(false))
	with := testing.AllocsPerRun(20, run(true))
	assert.Equal(t, without, with, "RunLocal made allocations of its own")
}
