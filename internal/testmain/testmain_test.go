package testmain

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func status(t *testing.T, hwm string) string {
	p := filepath.Join(t.TempDir(), "status")
	require.NoError(t, os.WriteFile(p, []byte("Name:\tx.test\nVmPeak:\t 9999999 kB\nVmHWM:\t"+hwm+"\nVmRSS:\t 1 kB\n"), 0o600))
	return p
}

func TestCheckPeak(t *testing.T) {
	for _, c := range []struct {
		name, env, hwm, err string
	}{
		{"unset: not checked", "", "8000000 kB", ""},
		{"under 2G", "2G", "2097152 kB", ""},
		{"over 2G", "2G", "2097153 kB", "peak RSS was 2048 MiB, over the limit of 2048 MiB"},
		{"8 GB over 2G", "2G", "8000000 kB", "peak RSS was 7812 MiB, over the limit of 2048 MiB"},
		{"raised", "3G", "3000000 kB", ""},
		{"lowered", "512M", "600000 kB", "over the limit of 512 MiB"},
		{"off", "0", "99999999 kB", ""},
		{"bad limit", "lots", "1 kB", "EMUD_TEST_MAX_RSS=lots: want a whole number"},
		{"bad line", "2G", "many kB", `VmHWM "many kB"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkPeak(c.env, status(t, c.hwm))
			if c.err == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, c.err)
			}
		})
	}
	assert.NoError(t, checkPeak("2G", filepath.Join(t.TempDir(), "none")), "no status file: not Linux, not checked")
}

type fakeM int

func (f fakeM) Run() int { return int(f) }

// A failing run keeps its status; a passing one is checked (the real
// process's own peak, far under 2 GiB here, over 1 KiB).
func TestRun(t *testing.T) {
	var buf bytes.Buffer
	assert.Equal(t, 3, run(fakeM(3), true, &buf))
	assert.Equal(t, 0, run(fakeM(0), true, &buf))
	assert.Empty(t, buf.String())
	t.Setenv("EMUD_TEST_MAX_RSS", "1K")
	if _, err := os.Stat("/proc/self/status"); err == nil {
		assert.Equal(t, 1, run(fakeM(0), false, &buf))
		assert.Contains(t, buf.String(), "testmain: the test binary's peak RSS was")
	}
}
