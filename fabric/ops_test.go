package fabric_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/fabric/redop"
	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/require"
)

func randBytes(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, 99))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// Put and Get move the bytes; completion is observed by flush.
func TestPutGet(t *testing.T) {
	r := newRig(t, 3, job.FabricConfig{})
	data := pattern(1, 256)
	remote := pattern(2, 128)
	r.write(t, 1, r.V, 512, remote)
	var got []byte
	r.launch(t, 0, 32, 16+256+128, func(th *kernel.Thread, dc fabric.DevComm) {
		w := th.WarpGroup()
		copy(th.Shared()[16:], data)
		cft := fabric.NewCft(w, dc, 0)
		le, off := fabric.GetPeerLeInfo(r.W[0], 64, 1, dc)
		cft.Put(w, le, off, 16, 256)
		le, off = fabric.GetPeerLeInfo(r.V[0], 512, 1, dc)
		cft.Get(w, le, off, 16+256, 128)
		cft.Submit(w)
		has, code := cft.Flush(w)
		require.False(t, has)
		require.Zero(t, code)
		if th.Lane() == 0 {
			got = append([]byte(nil), th.Shared()[16+256:16+384]...)
		}
	})
	require.NoError(t, r.Sim.Run())
	require.Equal(t, data, r.read(t, 1, r.W, 64, 256))
	require.Equal(t, remote, got)
	require.Equal(t, make([]byte, 64), r.read(t, 1, r.W, 0, 64), "bytes before the put untouched")
}

// Every op × type through red, redMultimem and pullRed: supported pairs
// give redop's bit-exact result at the destination, the others fail the
// call with redop.ErrUnsupported.
func TestReductionsOpByType(t *testing.T) {
	const n = 64
	for _, op := range redop.AllOps() {
		for _, typ := range redop.AllTypes() {
			for _, call := range []string{"red", "redMultimem", "pullRed"} {
				t.Run(fmt.Sprintf("%v/%v/%s", op, typ, call), func(t *testing.T) {
					seed := uint64(op)*100 + uint64(typ)*10 + uint64(len(call))
					r := newRig(t, seed, job.FabricConfig{})
					a0, a1, src := randBytes(seed, n), randBytes(seed+1, n), randBytes(seed+2, n)
					r.write(t, 0, r.W, 0, a0)
					r.write(t, 1, r.W, 0, a1)
					red := fabric.RedOp{Op: op, Type: typ}
					var pulled []byte
					r.launch(t, 0, 32, 16+n, func(th *kernel.Thread, dc fabric.DevComm) {
						w := th.WarpGroup()
						copy(th.Shared()[16:], src)
						cft := fabric.NewCft(w, dc, 0)
						switch call {
						case "red":
							le, off := fabric.GetPeerLeInfo(r.W[0], 0, 1, dc)
							cft.Red(w, le, off, red, 16, n)
						case "redMultimem":
							le, off := fabric.GetMultimemLeInfo(r.W[0], 0, dc)
							cft.RedMultimem(w, le, off, red, 16, n)
						case "pullRed":
							le, off := fabric.GetMultimemLeInfo(r.W[0], 0, dc)
							cft.PullRed(w, le, off, red, 16, n)
						}
						cft.Submit(w)
						cft.Flush(w)
						if th.Lane() == 0 {
							pulled = append([]byte(nil), th.Shared()[16:16+n]...)
						}
					})
					err := r.Sim.Run()
					if cerr := redop.Check(op, typ, call == "pullRed"); cerr != nil {
						require.True(t, errors.Is(err, redop.ErrUnsupported), "want the unsupported pair refused, got %v", err)
						require.ErrorContains(t, err, op.String())
						return
					}
					require.NoError(t, err)
					apply := func(dst []byte) []byte {
						out := append([]byte(nil), dst...)
						require.NoError(t, redop.Apply(op, typ, out, src))
						return out
					}
					switch call {
					case "red":
						require.Equal(t, a0, r.read(t, 0, r.W, 0, n), "red to rank 1 leaves rank 0")
						require.Equal(t, apply(a1), r.read(t, 1, r.W, 0, n))
					case "redMultimem":
						require.Equal(t, apply(a0), r.read(t, 0, r.W, 0, n))
						require.Equal(t, apply(a1), r.read(t, 1, r.W, 0, n))
					case "pullRed":
						want := make([]byte, n)
						require.NoError(t, redop.Reduce(op, typ, want, a0, a1))
						require.Equal(t, want, pulled)
						require.Equal(t, a1, r.read(t, 1, r.W, 0, n), "pullRed reads, it does not write")
					}
				})
			}
		}
	}
}

// cpMask: only the enabled bytes of each 16-byte word change.
func TestCpMask(t *testing.T) {
	const n = 64
	cases := []struct {
		name string
		mask uint16
		call string
	}{
		{"putCpMask low half", 0x00FF, "put"},
		{"putCpMask odd bytes", 0xAAAA, "put"},
		{"putCpMask none", 0x0000, "put"},
		{"putMultimemCpMask", 0xF00F, "putMultimem"},
		{"redCpMask u32 elements 1 and 3", 0xF0F0, "red"},
		{"redMultimemCpMask u32 element 0", 0x000F, "redMultimem"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 5, job.FabricConfig{})
			old0, old1, src := randBytes(1, n), randBytes(2, n), randBytes(3, n)
			r.write(t, 0, r.W, 0, old0)
			r.write(t, 1, r.W, 0, old1)
			red := fabric.RedOp{Op: redop.Xor, Type: redop.U32}
			r.launch(t, 0, 32, 16+n, func(th *kernel.Thread, dc fabric.DevComm) {
				w := th.WarpGroup()
				copy(th.Shared()[16:], src)
				cft := fabric.NewCft(w, dc, 0)
				uc, uoff := fabric.GetPeerLeInfo(r.W[0], 0, 1, dc)
				mc, moff := fabric.GetMultimemLeInfo(r.W[0], 0, dc)
				switch tc.call {
				case "put":
					cft.PutCpMask(w, uc, uoff, 16, n, tc.mask)
				case "putMultimem":
					cft.PutMultimemCpMask(w, mc, moff, 16, n, tc.mask)
				case "red":
					cft.RedCpMask(w, uc, uoff, red, 16, n, tc.mask)
				case "redMultimem":
					cft.RedMultimemCpMask(w, mc, moff, red, 16, n, tc.mask)
				}
				cft.Submit(w)
				cft.Flush(w)
			})
			require.NoError(t, r.Sim.Run())
			expect := func(old []byte) []byte {
				out := append([]byte(nil), old...)
				for i := range out {
					if tc.mask&(1<<uint(i%16)) == 0 {
						continue
					}
					if tc.call == "red" || tc.call == "redMultimem" {
						out[i] ^= src[i]
					} else {
						out[i] = src[i]
					}
				}
				return out
			}
			require.Equal(t, expect(old1), r.read(t, 1, r.W, 0, n))
			if tc.call == "putMultimem" || tc.call == "redMultimem" {
				require.Equal(t, expect(old0), r.read(t, 0, r.W, 0, n))
			} else {
				require.Equal(t, old0, r.read(t, 0, r.W, 0, n))
			}
		})
	}
}

// The mbarrier tracks at most 2^20 − 1 tx units between flushes: 16 MiB of
// put (bytes/16) or 1 MiB of get (bytes). A flush resets the count.
func TestInFlightLimits(t *testing.T) {
	const chunk = 128 << 10
	cases := []struct {
		name     string
		fetch    bool
		n        int // ops issued
		flushAt  int // flush after this many ops (0: never)
		wantFail string
	}{
		{"16 MiB of put without flush", false, 128, 0, "above the mbarrier's 1048575"},
		{"16 MiB - 128 KiB of put is fine", false, 127, 0, ""},
		{"a flush resets the count", false, 200, 100, ""},
		{"1 MiB of get without flush", true, 8, 0, "above the mbarrier's 1048575"},
		{"get limit with flushes", true, 16, 7, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 1, job.FabricConfig{Windows: []uint64{chunk, 64}, Model: &fabric.Model{Name: "fast", InjectionGBps: 1e6, ClockGHz: 1}})
			r.launch(t, 0, 32, 16+chunk, func(th *kernel.Thread, dc fabric.DevComm) {
				w := th.WarpGroup()
				cft := fabric.NewCft(w, dc, 0)
				le, off := fabric.GetPeerLeInfo(r.W[0], 0, 1, dc)
				for i := 1; i <= tc.n; i++ {
					if tc.fetch {
						cft.Get(w, le, off, 16, chunk)
					} else {
						cft.Put(w, le, off, 16, chunk)
					}
					if tc.flushAt > 0 && i%tc.flushAt == 0 {
						cft.Submit(w)
						cft.Flush(w)
					}
				}
				cft.Submit(w)
				cft.Flush(w)
			})
			err := r.Sim.Run()
			if tc.wantFail == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.wantFail)
		})
	}
}

// Two warps of a block share one ncclCftSmem. Warp 0 puts slowly and
// flushes; warp 1 first waits ~2 µs on a second object, then misbehaves
// while warp 0's flush runs.
func TestFlushExclusion(t *testing.T) {
	cases := []struct {
		name string
		act  func(a *fabric.Cft, th *kernel.Thread, le fabric.CftLeId, off uint64)
		want string
	}{
		{"issue during another group's flush", func(a *fabric.Cft, th *kernel.Thread, le fabric.CftLeId, off uint64) {
			a.Put(th.WarpGroup(), le, off, 16, 16)
		}, "while a flush by warp 0 of block 0 on rank 0 is in progress"},
		{"second flush in one phase", func(a *fabric.Cft, th *kernel.Thread, le fabric.CftLeId, off uint64) {
			a.Flush(th.WarpGroup())
		}, "already has a flush in this phase (by warp 0 of block 0 on rank 0)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			slow := &fabric.Model{Name: "slow", InjectionGBps: 1, Latency: sim.Microsecond, ClockGHz: 1}
			r := newRig(t, 1, job.FabricConfig{Model: slow})
			r.launch(t, 0, 64, 32+16<<10, func(th *kernel.Thread, dc fabric.DevComm) {
				a := fabric.NewCft(th.BlockGroup(), dc, 0)
				le, off := fabric.GetPeerLeInfo(r.W[0], 0, 1, dc)
				w := th.WarpGroup()
				if th.WaveIdx() == 0 {
					a.Put(w, le, off, 32, 16<<10) // 16 µs at 1 GB/s
					a.Submit(w)
					a.Flush(w)
					return
				}
				b := fabric.NewCft(w, dc, 16)
				b.Get(w, le, off, 32, 16)
				b.Submit(w)
				b.Flush(w)
				tc.act(a, th, le, off)
			})
			require.ErrorContains(t, r.Sim.Run(), tc.want)
		})
	}
}

// Injected fabric errors: the failed op's data does not land and the flush
// of its phase reports the code; the next phase is clean.
func TestFlushReportsInjectedFaults(t *testing.T) {
	cases := []struct {
		name    string
		plan    fabric.FaultPlan
		reports []bool // per phase
		code    uint32
		landed  []bool // per op
	}{
		{"second op fails", fabric.FaultPlan{FailOps: []fabric.OpRef{{Rank: 0, Op: 1}}}, []bool{true, false}, uint32(fabric.ReportInjected), []bool{true, false, true}},
		{"custom code", fabric.FaultPlan{FailOps: []fabric.OpRef{{Rank: 0, Op: 2}}, Code: 0x5a}, []bool{false, true}, 0x5a, []bool{true, true, false}},
		{"every op fails", fabric.FaultPlan{OpFailRate: 1}, []bool{true, true}, uint32(fabric.ReportInjected), []bool{false, false, false}},
		{"no faults", fabric.FaultPlan{}, []bool{false, false}, 0, []bool{true, true, true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 7, job.FabricConfig{Faults: tc.plan})
			var has []bool
			var codes []uint32
			r.launch(t, 0, 32, 16+48, func(th *kernel.Thread, dc fabric.DevComm) {
				w := th.WarpGroup()
				copy(th.Shared()[16:], pattern(9, 48))
				cft := fabric.NewCft(w, dc, 0)
				le, off := fabric.GetPeerLeInfo(r.W[0], 0, 1, dc)
				cft.Put(w, le, off, 16, 16)    // op 0, phase 0
				cft.Put(w, le, off+16, 32, 16) // op 1, phase 0
				cft.Submit(w)
				h, c := cft.Flush(w)
				cft.Put(w, le, off+32, 48, 16) // op 2, phase 1
				cft.Submit(w)
				h2, c2 := cft.Flush(w)
				if th.Lane() == 0 {
					has, codes = []bool{h, h2}, []uint32{c, c2}
				}
			})
			require.NoError(t, r.Sim.Run())
			require.Equal(t, tc.reports, has)
			for i, h := range has {
				if h {
					require.Equal(t, tc.code, codes[i])
				} else {
					require.Zero(t, codes[i], "report is 0 on success")
				}
			}
			got := r.read(t, 1, r.W, 0, 48)
			want := pattern(9, 48)
			for i, l := range tc.landed {
				if l {
					require.Equal(t, want[i*16:i*16+16], got[i*16:i*16+16], "op %d", i)
				} else {
					require.Equal(t, make([]byte, 16), got[i*16:i*16+16], "failed op %d must not land", i)
				}
			}
			require.Len(t, r.Sys.InjectedFaults(), countFalse(tc.landed))
		})
	}
}

func countFalse(b []bool) int {
	n := 0
	for _, x := range b {
		if !x {
			n++
		}
	}
	return n
}

// flushSmem returns once the sources are read, before the data lands.
func TestFlushSmemBeforeCompletion(t *testing.T) {
	r := newRig(t, 1, job.FabricConfig{})
	var atSmem, atFlush sim.Time
	r.launch(t, 0, 32, 16+64, func(th *kernel.Thread, dc fabric.DevComm) {
		w := th.WarpGroup()
		cft := fabric.NewCft(w, dc, 0)
		le, off := fabric.GetPeerLeInfo(r.W[0], 0, 1, dc)
		cft.Put(w, le, off, 16, 64)
		cft.Submit(w)
		cft.FlushSmem(w)
		atSmem = th.Now()
		cft.Flush(w)
		atFlush = th.Now()
	})
	require.NoError(t, r.Sim.Run())
	m := fabric.DefaultModel()
	require.Less(t, atSmem, m.Latency, "flushSmem waits for the source read only")
	require.GreaterOrEqual(t, atFlush, 2*m.Latency, "flush waits for the ack")
}
