package cxx

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/hw/rocm"
	"github.com/emud-dev/emud/model"
)

// TestKFDTopology runs examples/cxx/procs/kfd_topology.cpp: it counts
// GPUs in /sys/class/kfd/kfd/topology as MORI's test harness does and
// finds the emulated node's (EMUD_GPUS, as many as hipGetDeviceCount),
// under both presets; the tree it copies out reads back with hw/rocm's
// sysfs reader (what the ROCm backend reads on hardware) as the preset's
// engines say: the counts, and each io link's recommended engine mask
// as model.Engines.Mask places the link's channels.
func TestKFDTopology(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "examples", "cxx", "procs", "kfd_topology.cpp"), "-O2", "-Wall", "-Werror")
	for _, c := range []struct {
		arch string
		gpus int
	}{{"gfx950", 8}, {"gfx950", 3}, {"gfx1250", 8}} {
		t.Run(fmt.Sprintf("%s/%d", c.arch, c.gpus), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "topology")
			out, report, code := runExample(t, prog, dir, "TMPDIR="+t.TempDir(), "EMUD_ARCH="+c.arch, fmt.Sprintf("EMUD_GPUS=%d", c.gpus))
			require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, report)
			assert.Contains(t, out, fmt.Sprintf("kfd_topology: %d GPUs in sysfs, %d HIP devices\n", c.gpus, c.gpus))
			assert.Contains(t, out, "kfd_topology: PASS")
			nodes, err := rocm.ReadTopology(dir)
			require.NoError(t, err)
			require.Len(t, nodes, c.gpus+1, "the host's node and one per GPU")
			assert.False(t, nodes[0].IsGPU())
			p, err := model.Load(c.arch)
			require.NoError(t, err)
			e := p.Engines()
			ids := map[uint32]bool{}
			for g := range c.gpus {
				n := nodes[g+1]
				require.True(t, n.IsGPU(), "node %d", g+1)
				b, err := os.ReadFile(filepath.Join(dir, "nodes", fmt.Sprint(g+1), "gpu_id"))
				require.NoError(t, err)
				var id uint32
				_, err = fmt.Sscan(string(b), &id)
				require.NoError(t, err)
				assert.NotZero(t, id, "node %d's gpu_id", g+1)
				ids[id] = true
				assert.Equal(t, e.General, n.SDMAEngines, "node %d num_sdma_engines", g+1)
				assert.Equal(t, e.XGMI, n.XGMIEngines, "node %d num_sdma_xgmi_engines", g+1)
				assert.Equal(t, uint32(e.HostLinkMask()), n.RecEngineMask[0], "node %d's host link", g+1)
				for peer := range c.gpus {
					if peer == g {
						continue
					}
					assert.Equal(t, uint32(e.Mask(g, peer)), n.RecEngineMask[peer+1], "GPU %d's link to GPU %d", g, peer)
				}
			}
			assert.Len(t, ids, c.gpus, "gpu_id differs per GPU")
		})
	}
}
