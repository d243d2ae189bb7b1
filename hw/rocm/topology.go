package rocm

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// TopologyRoot is where KFD publishes its topology in sysfs.
const TopologyRoot = "/sys/class/kfd/kfd/topology"

// TopoNode is one KFD topology node as sysfs describes it
// (nodes/<id>/properties and nodes/<id>/io_links/*/properties).
type TopoNode struct {
	ID    int
	GPUID uint32 // gpu_id; 0 on CPU-only nodes
	SIMDs int    // simd_count; 0 on CPU-only nodes
	// SDMAEngines and XGMIEngines are num_sdma_engines and
	// num_sdma_xgmi_engines.
	SDMAEngines, XGMIEngines int
	// RecEngineMask maps a peer node id to the io link's
	// recommended_sdma_engine_id_mask (absent before Linux 6.9 / on links
	// without a recommendation).
	RecEngineMask map[int]uint32
}

// IsGPU reports whether the node has GPU compute (what
// hsaKmtGetNodeProperties reports as NumFComputeCores > 0).
func (n TopoNode) IsGPU() bool { return n.SIMDs > 0 }

// ReadTopology reads KFD's sysfs topology under root (TopologyRoot on a
// real host), nodes sorted by id. The backend needs it only for the
// recommended SDMA engine of each GPU pair, which libhsakmt 5.2.3's
// HsaIoLinkProperties lacks.
func ReadTopology(root string) ([]TopoNode, error) {
	dirs, err := os.ReadDir(filepath.Join(root, "nodes"))
	if err != nil {
		return nil, fmt.Errorf("KFD topology: %w", err)
	}
	var nodes []TopoNode
	for _, d := range dirs {
		id, err := strconv.Atoi(d.Name())
		if err != nil || id < 0 {
			continue // not a node directory
		}
		dir := filepath.Join(root, "nodes", d.Name())
		props, err := readProps(filepath.Join(dir, "properties"))
		if err != nil {
			return nil, err
		}
		n, err := props.node(id)
		if err != nil {
			return nil, err
		}
		links, _ := os.ReadDir(filepath.Join(dir, "io_links")) // a node may have none
		for _, l := range links {
			lp, err := readProps(filepath.Join(dir, "io_links", l.Name(), "properties"))
			if err != nil {
				return nil, err
			}
			to, ok, err := lp.u32("node_to")
			if err != nil {
				return nil, err
			}
			m, has, err := lp.u32("recommended_sdma_engine_id_mask")
			if err != nil {
				return nil, err
			}
			if ok && has && m != 0 {
				n.RecEngineMask[int(to)] = m
			}
		}
		nodes = append(nodes, n)
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].ID < nodes[j].ID })
	return nodes, nil
}

// maxPropsFile bounds a properties file: sysfs serves at most a page per
// attribute, so a larger file is not KFD's.
const maxPropsFile = 64 << 10

// props is one parsed sysfs properties file.
type props struct {
	path string
	v    map[string]uint64
}

// readProps parses a sysfs properties file: one "name value" per line,
// values unsigned decimal. Lines that do not parse are skipped, as KFD
// adds properties over time; a missing or unreadable file, or one over
// maxPropsFile, is an error.
func readProps(path string) (props, error) {
	p := props{path: path, v: map[string]uint64{}}
	f, err := os.Open(path)
	if err != nil {
		return p, fmt.Errorf("KFD topology: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPropsFile+1))
	if err != nil {
		return p, fmt.Errorf("KFD topology: %s: %w", path, err)
	}
	if len(b) > maxPropsFile {
		return p, fmt.Errorf("KFD topology: %s: over %d B, not a sysfs properties file", path, maxPropsFile)
	}
	for line := range strings.Lines(string(b)) {
		fields := strings.Fields(line)
		if len(fields) != 2 {
			continue
		}
		v, err := strconv.ParseUint(fields[1], 10, 64)
		if err != nil {
			continue
		}
		p.v[fields[0]] = v
	}
	return p, nil
}

// u32 returns property name, which KFD writes as a 32-bit value, and
// whether it is present. A larger value is an error naming the property
// and the file: cut to its low 32 bits it would read as another value
// (a mask of 1<<32 as no mask at all).
func (p props) u32(name string) (uint32, bool, error) {
	v, ok := p.v[name]
	if v > math.MaxUint32 {
		return 0, false, fmt.Errorf("KFD topology: %s: %s %d does not fit in 32 bits", p.path, name, v)
	}
	return uint32(v), ok, nil
}

// node builds the topology node id from its properties.
func (p props) node(id int) (TopoNode, error) {
	n := TopoNode{ID: id, RecEngineMask: map[int]uint32{}}
	var simds, sdma, xgmi uint32
	for _, f := range []struct {
		name string
		dst  *uint32
	}{{"gpu_id", &n.GPUID}, {"simd_count", &simds}, {"num_sdma_engines", &sdma}, {"num_sdma_xgmi_engines", &xgmi}} {
		v, _, err := p.u32(f.name)
		if err != nil {
			return n, err
		}
		*f.dst = v
	}
	n.SIMDs, n.SDMAEngines, n.XGMIEngines = int(simds), int(sdma), int(xgmi)
	return n, nil
}

// ChooseEngine picks the SDMA engine of channel c toward a peer the way
// MORI's anvil does (docs/sdma-hardware.md §4.4): loopback uses engine 0;
// otherwise channel c goes to the c-th (mod n) engine set in the io link's
// recommended mask. ok is false when there is no recommendation: the
// caller then lets KFD choose an xGMI engine (HSA_QUEUE_SDMA_XGMI).
// MORI's static MI300X OAM fallback table is not reproduced.
func ChooseEngine(loopback bool, recMask uint32, c int) (engine int, ok bool) {
	if loopback {
		return 0, true
	}
	var engines []int
	for b := 0; b < 32; b++ {
		if recMask&(1<<b) != 0 {
			engines = append(engines, b)
		}
	}
	if len(engines) == 0 || c < 0 {
		return 0, false
	}
	return engines[c%len(engines)], true
}
