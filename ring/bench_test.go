package ring

import "testing"

func BenchmarkDecodeCopy(b *testing.B) {
	c := Copy(0x200000000, 0x100000040, 4096)
	enc := c.AppendTo(nil)
	var p Packet
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(&p, enc, GFX94x); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeAtCopy(b *testing.B) {
	r, _ := New(Options{})
	c := Copy(0x200000000, 0x100000040, 4096)
	_ = r.WriteUnit(64, &c)
	var p Packet
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.DecodeAt(&p, 64, 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeAtWrapped(b *testing.B) {
	r, _ := New(Options{Size: 4096})
	c := Copy(0x200000000, 0x100000040, 4096)
	r.Write(4096-12, c.AppendTo(nil))
	var p Packet
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.DecodeAt(&p, 4096-12, 28); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteUnit(b *testing.B) {
	r, _ := New(Options{})
	c := Copy(0x200000000, 0x100000040, 4096)
	b.ReportAllocs()
	var ptr uint64
	for b.Loop() {
		if err := r.WriteUnit(ptr, &c); err != nil {
			b.Fatal(err)
		}
		ptr += Unit
	}
}
