package ring

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

var genCorpus = flag.Bool("gencorpus", false, "rewrite the FuzzDecode seed corpus under testdata/fuzz")

// fuzzSeeds covers every kind, truncations and garbage.
func fuzzSeeds() map[string][]byte {
	seeds := map[string][]byte{}
	for i, p := range allPackets() {
		b := p.AppendTo(nil)
		seeds[fmt.Sprintf("kind-%02d-%s", i, p.Kind)] = b
		seeds[fmt.Sprintf("trunc-%02d-%s", i, p.Kind)] = b[:len(b)/2]
	}
	seeds["empty"] = nil
	seeds["short-header"] = []byte{0x01, 0x00}
	seeds["zero-unit"] = make([]byte, 32)
	seeds["ones"] = []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	seeds["indirect"] = pad(0x00000004)
	seeds["poll-func7"] = pad(0xF0000008)
	seeds["copy-tiled"] = pad(0x00000101)
	seeds["write-huge-count"] = fromDwords(0x00000002, 0, 0, 0x000fffff, 1, 2)
	seeds["nop-max"] = fromDwords(0x3fff0000, 0, 0)
	for name, b := range fusedSeeds() {
		seeds[name] = b
	}
	seeds["garbage"] = []byte("\x8d\x13\xa7\x00\x01\x02\xfe\xfd\x77\x10\x00\x0b\x00\x00\x00\x00\x10")
	return seeds
}

func TestWriteFuzzCorpus(t *testing.T) {
	if !*genCorpus {
		t.Skip("use -gencorpus to rewrite the seed corpus")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzDecode")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for name, b := range fuzzSeeds() {
		body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(b)) + ")\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
}

func FuzzDecode(f *testing.F) {
	for _, b := range fuzzSeeds() {
		f.Add(b)
	}
	r, err := New(Options{Size: 4096})
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, b []byte) {
		for d := GFX94x; d < numDialects; d++ {
			var p Packet
			n, err := Decode(&p, b, d)
			checkDecode(t, &p, b, d, n, err)

			// The same bytes straddling the ring end decode identically.
			if len(b) <= int(r.Size()) {
				r.dialect = d
				ptr := uint64(1<<20) + r.Size() - uint64(len(b)/2)
				r.Write(ptr, b)
				var q Packet
				n2, err2 := r.DecodeAt(&q, ptr, uint64(len(b)))
				if n2 != n || (err == nil) != (err2 == nil) {
					t.Fatalf("DecodeAt = %d, %v; Decode = %d, %v", n2, err2, n, err)
				}
				if err == nil && !packetsEqual(&p, &q) {
					t.Fatalf("DecodeAt %+v != Decode %+v", q, p)
				}
				if err != nil && err.Error() == "" {
					t.Fatal("empty error")
				}
			}
		}
	})
}

func checkDecode(t *testing.T, p *Packet, b []byte, d Dialect, n int, err error) {
	t.Helper()
	if err != nil {
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Fatalf("error %T is not *DecodeError", err)
		}
		if errors.Is(err, ErrTruncated) == errors.Is(err, ErrIllegal) {
			t.Fatalf("error %v must be exactly one of truncated/illegal", err)
		}
		if n != 0 {
			t.Fatalf("n = %d on error", n)
		}
		if errors.Is(err, ErrTruncated) && de.Need <= len(b) {
			t.Fatalf("truncated but need %d <= have %d", de.Need, len(b))
		}
		_ = de.Error()
		return
	}
	if n < 4 || n > len(b) || n%4 != 0 {
		t.Fatalf("n = %d with len(b) = %d", n, len(b))
	}
	if p.Size() != n {
		t.Fatalf("Size() = %d, consumed %d", p.Size(), n)
	}
	_ = p.String()
	enc := p.AppendTo(nil)
	if len(enc) != n {
		t.Fatalf("re-encoded %d bytes, decoded %d", len(enc), n)
	}
	var q Packet
	n2, err := Decode(&q, enc, d)
	if err != nil || n2 != n {
		t.Fatalf("re-decode: %d, %v", n2, err)
	}
	if q.Header != p.header() {
		t.Fatalf("re-decoded header %#x, want %#x", q.Header, p.header())
	}
	pp := *p
	pp.Header = q.Header // ignored bits (tmz, swap, ...) are dropped by the encoder
	if !packetsEqual(&pp, &q) {
		t.Fatalf("round trip changed the packet:\n %+v\n %+v", pp, q)
	}
}

func packetsEqual(a, b *Packet) bool {
	x, y := *a, *b
	if len(x.Payload) != len(y.Payload) {
		return false
	}
	for i := range x.Payload {
		if x.Payload[i] != y.Payload[i] {
			return false
		}
	}
	x.Payload, y.Payload = nil, nil
	if len(x.Dsts) != len(y.Dsts) {
		return false
	}
	for i := range x.Dsts {
		if x.Dsts[i] != y.Dsts[i] {
			return false
		}
	}
	x.Dsts, y.Dsts = nil, nil
	return reflect.DeepEqual(x, y)
}
