package ring

import "fmt"

// NewOver is New over ring memory the caller provides, such as the
// host-visible buffer a real SDMA queue was created on (the hardware
// backend, hw/rocm), so the same writer puts the same bytes there. buf must
// hold exactly o.Size bytes (o.Size 0 means len(buf)); every other option
// is checked as New checks it. buf is used as is, not cleared: KFD hands out
// zeroed ring memory, and the engine never reads bytes that were not rung.
func NewOver(buf []byte, o Options) (*Ring, error) {
	if o.Size == 0 {
		o.Size = len(buf)
	}
	if len(buf) == 0 || len(buf) != o.Size {
		return nil, fmt.Errorf("ring: external ring memory of %d bytes, options ask for %d", len(buf), o.Size)
	}
	r, err := New(o)
	if err != nil {
		return nil, err
	}
	r.buf = buf[:len(buf):len(buf)]
	return r, nil
}
