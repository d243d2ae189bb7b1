package cxx

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPthreadSync: host threads that coordinate with std::mutex and
// std::condition_variable (cxx/testdata/pthread/sync.cpp; capi/pmutex.c)
// wait for each other in virtual time. Rank 0 makes the unique id and
// fills a buffer, then notifies ranks waiting on a condition variable,
// and each rank holds a mutex across a launch and its synchronize: the
// run passes, race-clean under EMUD_RACE=1 (the notify orders rank 0's
// copy before the others' reads), and one seed gives one digest. Before,
// the first waiter held its turn in pthread_cond_wait: a spin hang. A
// wait_for nobody notifies times out at its 50 ms of virtual time; a
// std::promise hands a buffer over (a futex wait in the C++ library:
// race-clean; its twin without the promise is a race) and a std::latch
// lets 4 ranks through; a loop of a lock, an inert call and an unlock
// is a poll of the thread's own, the watchdog's hang naming its line,
// under the race detector too; a destructor
// that locks, yields and sleeps after the end of run does so natively;
// two
// threads taking two mutexes in opposite orders are a deadlock report
// naming each mutex wait and its owner.
func TestPthreadSync(t *testing.T) {
	needCxx(t)
	prog := buildExample(t, filepath.Join("testdata", "pthread", "sync.cpp"), "-O2", "-std=c++20", "-Wall", "-Werror")
	for _, c := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"cv", []string{"cv"}, 0, []string{"sync cv: 4 of 4 ranks through, 4 checked: PASS"}},
		{"cv_race", []string{"cv", "EMUD_RACE=1", "EMUD_PERTURB=1"}, 0, []string{"sync cv: 4 of 4 ranks through, 4 checked: PASS"}},
		{"timeout", []string{"timeout"}, 0, []string{"sync timeout: timed out: PASS", "end 50000000000 ps"}},
		{"promise_race", []string{"promise", "EMUD_RACE=1", "EMUD_PERTURB=1"}, 0, []string{"sync promise: 3 of 3 ranks read the buffer: PASS"}},
		{"latch", []string{"latch", "EMUD_PERTURB=1"}, 0, []string{"sync latch: 4 of 4 through: PASS"}},
		{"atexit_race", []string{"atexit", "EMUD_RACE=1"}, 0, []string{"sync atexit: main returns", "sync atexit: the destructor ran"}},
		{"lockloop_race", []string{"lockloop", "EMUD_RACE=1", "EMUD_SPIN_LIMIT=1s"}, 2, []string{"hang (watchdog)",
			"host main thread: a poll in its own code at ", "sync.cpp:", "a loop of atomic operations or locks"}},
		{"deadlock", []string{"deadlock", "EMUD_SPIN_LIMIT=5s"}, 2, []string{"hang (deadlock)",
			"host thread 1 [waiting since 0ps]: pthread_mutex_lock of 0x", ", held by host thread 2",
			"host thread 2 [waiting since 0ps]: pthread_mutex_lock of 0x", ", held by host thread 1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runFull(t, prog, append([]string{"EMUD_SUMMARY=1"}, c.args...)...)
			require.Equal(t, c.code, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			for _, w := range c.want {
				assert.Contains(t, r.stdout+r.stderr, w)
			}
			assert.NotContains(t, r.stderr, "data race")
		})
	}
	t.Run("racy", func(t *testing.T) {
		// The promise's twin without it: the race detector still sees
		// host threads' copies that nothing orders.
		r := runFull(t, prog, "racy", "EMUD_RACE=1")
		require.Equal(t, 5, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		assert.Contains(t, r.stderr, "data race")
		assert.Contains(t, r.stderr, "sync.cpp:")
	})
	t.Run("same_seed", func(t *testing.T) {
		a := runFull(t, prog, "cv", "EMUD_SUMMARY=1", "EMUD_SEED=3", "EMUD_PERTURB=1")
		b := runFull(t, prog, "cv", "EMUD_SUMMARY=1", "EMUD_SEED=3", "EMUD_PERTURB=1")
		require.Equal(t, 0, a.code, a.stderr)
		assert.Contains(t, a.summary(), "digest ")
		assert.Equal(t, a.summary(), b.summary())
	})
}

// TestHostPoll: a host thread that waits in its own code, sleeping,
// yielding or spinning on an atomic flag another host thread sets, or
// spinning on a volatile word of pinned memory a kernel sets
// (cxx/testdata/pthread/poll.cpp; capi/psleep.c), gives its turn up in
// virtual time: each run passes, at the virtual time its wait took
// (a sleep_for of 1 ms: 1 ms; a yield or a run of equal loads: 1 µs;
// the kernel's 2 µs), where before each was a spin hang after
// EMUD_SPIN_LIMIT. A flag nobody sets is the watchdog's hang naming the
// poll.
func TestHostPoll(t *testing.T) {
	needCxx(t)
	prog := buildExample(t, filepath.Join("testdata", "pthread", "poll.cpp"), "-O2", "-Wall", "-Werror")
	for _, c := range []struct {
		mode string
		code int
		want []string
	}{
		{"sleep", 0, []string{"poll sleep: 5: PASS", "end 1000000000 ps"}},
		{"yield", 0, []string{"poll yield: 5: PASS", "end 1000000 ps"}},
		{"spin", 0, []string{"poll spin: 5: PASS", "end 1000000 ps"}},
		{"pinned", 0, []string{"poll pinned: flag seen: PASS", "end 2000417 ps"}},
		{"never", 2, []string{"hang (watchdog)", "pthread_join of host thread 1",
			"host thread 1: a poll in its own code at ", "poll.cpp:"}},
	} {
		t.Run(c.mode, func(t *testing.T) {
			r := runFull(t, prog, c.mode, "EMUD_SUMMARY=1", "EMUD_SPIN_LIMIT=5s")
			require.Equal(t, c.code, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			for _, w := range c.want {
				assert.Contains(t, r.stdout+r.stderr, w)
			}
			assert.NotContains(t, r.stderr, "hang (spin)")
		})
	}
}

// TestSleepRanksForked: ranks that sleep and yield between their calls
// (cxx/testdata/pthread/sleep_ranks.cpp) give one digest as threads and
// as forked rank processes, exact and perturbed: a rank process's sleeps
// pass in virtual time through its proxy, as a thread's do.
func TestSleepRanksForked(t *testing.T) {
	needCxx(t)
	prog := buildExample(t, filepath.Join("testdata", "pthread", "sleep_ranks.cpp"), "-O2", "-Wall", "-Werror")
	for _, env := range [][]string{{"EMUD_SEED=1"}, {"EMUD_SEED=4", "EMUD_PERTURB=1"}} {
		threads := runFull(t, prog, append([]string{"EMUD_SUMMARY=1"}, env...)...)
		require.Equal(t, 0, threads.code, threads.stderr)
		assert.Contains(t, threads.stdout, "sleep_ranks threads: PASS")
		if len(env) == 1 {
			assert.Contains(t, threads.stderr, "end 401000417 ps") // 400 µs of the last rank's sleep, 1 µs yield
		}
		forked := runFull(t, prog, append([]string{"fork", "EMUD_SUMMARY=1"}, env...)...)
		require.Equal(t, 0, forked.code, forked.stderr)
		assert.Contains(t, forked.stdout, "sleep_ranks fork: PASS")
		assert.Equal(t, digestOf(t, threads.stderr), digestOf(t, forked.stderr), "%v: the processes' digest", env)
	}
}

// TestPthreadLocks: host threads hand a device buffer over with a POSIX
// semaphore, a read-write lock (pthread's and std::shared_mutex), a
// pthread spin lock, a spin lock of the program's own (std::atomic_flag),
// a mutex or a try_lock loop polled under, a condition variable, C++20
// semaphores and barriers, and std::call_once
// (cxx/testdata/pthread/locks.cpp; capi/psync.c, the host cycles of
// psleep.c). Each passes, race-clean under EMUD_RACE=1, where before sem,
// rwlock, shared, spin and flag were a spin hang and call_once was a
// false race; each also with the threads started before the program's
// first HIP call (early), whose first waits begin natively, before the
// emulation adopts them, where before sem, rwlock, shared, spin, flag,
// csem, barrier and once were each a spin hang (the modes tried). A
// semaphore nobody posts is a deadlock report naming the waits, a spin
// lock never unlocked the watchdog's naming the retries, and the
// semaphore's twin whose readers do not wait is a race.
func TestPthreadLocks(t *testing.T) {
	needCxx(t)
	prog := buildExample(t, filepath.Join("testdata", "pthread", "locks.cpp"), "-O2", "-std=c++20", "-Wall", "-Werror")
	for _, mode := range []string{"sem", "rwlock", "shared", "spin", "flag", "mutex", "trylock", "cv", "csem", "barrier", "once"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			for _, start := range []string{"main", "early"} {
				for _, race := range []string{"0", "1"} {
					r := runFull(t, prog, mode, start, "EMUD_RACE="+race, "EMUD_SPIN_LIMIT=5s")
					require.Equal(t, 0, r.code, "%s EMUD_RACE=%s; stdout:\n%s\nstderr:\n%s", start, race, r.stdout, r.stderr)
					assert.Contains(t, r.stdout, "locks "+mode+": 4 of 4 ranks read the buffer: PASS")
					assert.NotContains(t, r.stderr, "data race")
				}
			}
		})
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"sem_never", []string{"sem_never"}, 2, []string{"hang (deadlock)",
			"]: sem_wait on 0x", ": no sem_post", "host thread 4 [waiting since"}},
		{"spin_never", []string{"spin_never"}, 2, []string{"hang (watchdog)",
			"host thread 2: a retry of pthread_spin_lock"}},
		{"sem_racy", []string{"sem_racy", "EMUD_RACE=1"}, 5, []string{"data race on LSA memory", "locks.cpp:"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := runFull(t, prog, append(c.args, "EMUD_SPIN_LIMIT=5s")...)
			require.Equal(t, c.code, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			for _, w := range c.want {
				assert.Contains(t, r.stderr, w)
			}
			assert.NotContains(t, r.stderr, "hang (spin)")
		})
	}
	t.Run("same_seed", func(t *testing.T) {
		for _, start := range []string{"main", "early"} {
			a := runFull(t, prog, "rwlock", start, "EMUD_SUMMARY=1", "EMUD_SEED=5", "EMUD_PERTURB=1")
			b := runFull(t, prog, "rwlock", start, "EMUD_SUMMARY=1", "EMUD_SEED=5", "EMUD_PERTURB=1")
			require.Equal(t, 0, a.code, a.stderr)
			assert.Equal(t, digestOf(t, a.stderr), digestOf(t, b.stderr), start)
		}
	})
}
