package rocm_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/hw/rocm"
)

// writeTopo lays out a KFD sysfs topology under a temporary root.
func writeTopo(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	return root
}

// A CPU node and two GPU nodes linked by xGMI, the shape of
// /sys/class/kfd/kfd/topology on an MI300/MI355X host.
var sampleTopo = map[string]string{
	"nodes/0/properties":            "cpu_cores_count 96\nsimd_count 0\ngpu_id 0\n",
	"nodes/1/properties":            "cpu_cores_count 0\nsimd_count 1216\ngpu_id 25108\nnum_sdma_engines 2\nnum_sdma_xgmi_engines 14\nmarketing_name junk here\n",
	"nodes/1/io_links/0/properties": "type 2\nnode_from 1\nnode_to 0\nrecommended_sdma_engine_id_mask 0\n",
	"nodes/1/io_links/1/properties": "type 11\nnode_from 1\nnode_to 2\nrecommended_sdma_engine_id_mask 24\n",
	"nodes/2/properties":            "simd_count 1216\ngpu_id 4711\nnum_sdma_engines 2\nnum_sdma_xgmi_engines 14\n",
	"nodes/2/io_links/0/properties": "type 11\nnode_from 2\nnode_to 1\n",
	"generation_id":                 "1\n",
}

func TestReadTopology(t *testing.T) {
	nodes, err := rocm.ReadTopology(writeTopo(t, sampleTopo))
	require.NoError(t, err)
	require.Len(t, nodes, 3)
	require.False(t, nodes[0].IsGPU())
	require.True(t, nodes[1].IsGPU())
	require.Equal(t, rocm.TopoNode{ID: 1, GPUID: 25108, SIMDs: 1216, SDMAEngines: 2, XGMIEngines: 14,
		RecEngineMask: map[int]uint32{2: 24}}, nodes[1])
	require.Empty(t, nodes[2].RecEngineMask, "a link without the property recommends nothing")
}

func TestReadTopologyErrors(t *testing.T) {
	_, err := rocm.ReadTopology(t.TempDir())
	require.ErrorContains(t, err, "KFD topology")
	root := writeTopo(t, map[string]string{"nodes/0/io_links/0/properties": "node_to 1\n"})
	_, err = rocm.ReadTopology(root)
	require.ErrorContains(t, err, "properties", "a node without its properties file")

	// KFD writes these as 32-bit values: a larger one is refused, naming
	// it, rather than cut to its low bits (a mask of 1<<32 read as none,
	// a gpu_id of 1<<32+5 as 5).
	for _, tc := range []struct{ node, link, want string }{
		{"gpu_id 4294967301\nsimd_count 4\n", "", "gpu_id 4294967301 does not fit in 32 bits"},
		{"simd_count 9223372036854775808\n", "", "simd_count 9223372036854775808 does not fit in 32 bits"},
		{"num_sdma_xgmi_engines 4294967296\n", "", "num_sdma_xgmi_engines 4294967296 does not fit"},
		{"simd_count 4\n", "node_to 1\nrecommended_sdma_engine_id_mask 4294967296\n", "recommended_sdma_engine_id_mask 4294967296 does not fit in 32 bits"},
		{"simd_count 4\n", "node_to 18446744073709551615\nrecommended_sdma_engine_id_mask 2\n", "node_to 18446744073709551615 does not fit"},
		{strings.Repeat("x", 64<<10) + "\n", "", "not a sysfs properties file"},
	} {
		files := map[string]string{"nodes/0/properties": tc.node}
		if tc.link != "" {
			files["nodes/0/io_links/0/properties"] = tc.link
		}
		_, err := rocm.ReadTopology(writeTopo(t, files))
		require.ErrorContains(t, err, tc.want)
		require.ErrorContains(t, err, "properties", "the error names the file")
	}
}

func TestChooseEngine(t *testing.T) {
	cases := []struct {
		name     string
		loopback bool
		mask     uint32
		channel  int
		engine   int
		ok       bool
	}{
		{"loopback uses engine 0", true, 0b11000, 3, 0, true},
		{"first recommended engine", false, 0b11000, 0, 3, true},
		{"second", false, 0b11000, 1, 4, true},
		{"channels wrap over the engines", false, 0b11000, 2, 3, true},
		{"one engine takes every channel", false, 1 << 9, 7, 9, true},
		{"no recommendation: KFD chooses", false, 0, 0, 0, false},
		{"negative channel", false, 1, -1, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, ok := rocm.ChooseEngine(tc.loopback, tc.mask, tc.channel)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.engine, e)
		})
	}
}

// Whatever sysfs holds, the parser neither panics nor invents a mask.
func FuzzReadTopology(f *testing.F) {
	f.Add("simd_count 4\ngpu_id 1\n", "node_to 1\nrecommended_sdma_engine_id_mask 6\n")
	f.Add("", "")
	f.Add("simd_count -1\n\x00\xff", "node_to 99999999999999999999\nrecommended_sdma_engine_id_mask 4294967296\n")
	f.Fuzz(func(t *testing.T, node, link string) {
		root := writeTopo(t, map[string]string{"nodes/0/properties": node, "nodes/0/io_links/0/properties": link})
		nodes, err := rocm.ReadTopology(root)
		if err != nil {
			return
		}
		require.Len(t, nodes, 1)
		for to, m := range nodes[0].RecEngineMask {
			require.NotZero(t, m)
			require.GreaterOrEqual(t, to, 0)
		}
		n := nodes[0]
		require.True(t, n.SIMDs >= 0 && n.SDMAEngines >= 0 && n.XGMIEngines >= 0, "no count read as negative: %+v", n)
	})
}
