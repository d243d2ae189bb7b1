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
// wait_for nobody notifies times out at its 50 ms of virtual time; two
// threads taking two mutexes in opposite orders are a deadlock report
// naming each mutex wait and its owner.
func TestPthreadSync(t *testing.T) {
	needCxx(t)
	prog := buildExample(t, filepath.Join("testdata", "pthread", "sync.cpp"), "-O2", "-Wall", "-Werror")
	for _, c := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"cv", []string{"cv"}, 0, []string{"sync cv: 4 of 4 ranks through, 4 checked: PASS"}},
		{"cv_race", []string{"cv", "EMUD_RACE=1", "EMUD_PERTURB=1"}, 0, []string{"sync cv: 4 of 4 ranks through, 4 checked: PASS"}},
		{"timeout", []string{"timeout"}, 0, []string{"sync timeout: timed out: PASS", "end 50000000000 ps"}},
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
	t.Run("same_seed", func(t *testing.T) {
		a := runFull(t, prog, "cv", "EMUD_SUMMARY=1", "EMUD_SEED=3", "EMUD_PERTURB=1")
		b := runFull(t, prog, "cv", "EMUD_SUMMARY=1", "EMUD_SEED=3", "EMUD_PERTURB=1")
		require.Equal(t, 0, a.code, a.stderr)
		assert.Contains(t, a.summary(), "digest ")
		assert.Equal(t, a.summary(), b.summary())
	})
}
