package hostmem

// KeptList is buffers kept for reuse, by length, each with the content it
// holds (UnmapAs's key; "" for whatever its last user left): the process's
// kept buffers (behind a lock, Unmap), or one owner's own (an explore
// worker's, engine.Scratch). Kept with "" and taken with "", it is a
// stack of buffers a length, the last kept taken first (engine's zeroed
// buffers and rings). The zero value is empty. It is not safe for
// concurrent use.
type KeptList struct {
	free  map[uint64][]keptBuf
	bytes uint64
}

// keptBuf is a kept buffer and the content it holds.
type keptBuf struct {
	b   []byte
	key string
}

// Take returns a kept buffer of n bytes: for a non-empty key one kept
// under it (hit), else preferably one of no key, so that buffers holding a
// known content last for the callers that ask for it; nil if none.
func (k *KeptList) Take(n uint64, key string) (b []byte, hit bool) {
	l := k.free[n]
	if len(l) == 0 {
		return nil, false
	}
	i := len(l) - 1
	for j := len(l) - 1; j >= 0; j-- {
		if l[j].key == key {
			i = j
			break
		}
	}
	kb := l[i]
	copy(l[i:], l[i+1:])
	l[len(l)-1] = keptBuf{}
	k.free[n] = l[:len(l)-1]
	k.bytes -= n
	return kb.b, key != "" && kb.key == key
}

// Put keeps b, holding key's content ("" for none).
func (k *KeptList) Put(b []byte, key string) {
	if k.free == nil {
		k.free = map[uint64][]keptBuf{}
	}
	n := uint64(len(b))
	k.free[n] = append(k.free[n], keptBuf{b, key})
	k.bytes += n
}

// Bytes is the bytes kept.
func (k *KeptList) Bytes() uint64 { return k.bytes }

// Drain empties the list, handing each buffer and its content to fn.
func (k *KeptList) Drain(fn func(b []byte, key string)) {
	for n, l := range k.free {
		for _, kb := range l {
			fn(kb.b, kb.key)
		}
		delete(k.free, n)
	}
	k.bytes = 0
}
