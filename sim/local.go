package sim

// LocalKey names a value of type T that a layer built on sim keeps with
// a run ([RunLocal]) or with a [Scratch] across the runs that borrow it
// ([WorkerLocal], [RunScratch]): its idle lane workers, its arenas. A
// layer makes its keys once, with NewLocalKey, in package variables. The
// value's type is the key's, so no caller asserts a type and nothing of
// another type can be stored under a key.
type LocalKey[T any] struct{ id *keyID }

// keyID is a key's identity. It is not of size zero, so that every
// NewLocalKey's is its own address (zero-size allocations may share one).
type keyID struct{ _ byte }

// NewLocalKey returns a key that no other call returns, even for the
// same T. The zero LocalKey is a key too, one for all zero LocalKeys of
// the same T.
func NewLocalKey[T any]() LocalKey[T] { return LocalKey[T]{new(keyID)} }

// locals are the values stored under keys, each under its LocalKey[T]
// as an interface value: keys of different types never compare equal, so
// the value under a LocalKey[T] is always a T.
type locals map[any]any

// RunLocal returns run s's value under k, made with mk on its first use
// in the run: per-run state of the packages built on sim (a map from
// actors to waves, say), kept with the run instead of in a global.
func RunLocal[T any](s *Sim, k LocalKey[T], mk func() T) T { return local(&s.local, k, mk) }

// WorkerLocal returns sc's value under k, made with mk on its first use,
// kept across the runs that borrow sc until sc's Close. A layer keeps
// there what it would otherwise make again every run (the kernel's idle
// lane workers, a goroutine each); it must leave nothing in it that a
// later run could tell from a fresh one. [Scratch.OnClose] ends what it
// holds.
func WorkerLocal[T any](sc *Scratch, k LocalKey[T], mk func() T) T { return local(&sc.local, k, mk) }

// RunScratch is the *T that the runs borrowing s's Scratch share under k
// (made with new(T) the first time), passed to reset at run s's first
// call so that it starts empty for that run; nil when s borrows no
// Scratch. It is RunLocal over WorkerLocal: a layer's per-worker arena.
func RunScratch[T any](s *Sim, k LocalKey[*T], reset func(*T)) *T {
	sc := s.Scratch()
	if sc == nil {
		return nil
	}
	return RunLocal(s, k, func() *T {
		v := WorkerLocal(sc, k, func() *T { return new(T) })
		reset(v)
		return v
	})
}

// local is the value under k in *m, made with mk (and the map with it)
// on first use.
func local[T any](m *locals, k LocalKey[T], mk func() T) T {
	if v, ok := (*m)[k]; ok {
		t, _ := v.(T) // stored under k by this function: a T, or nil for a nil interface T
		return t
	}
	if *m == nil {
		*m = locals{}
	}
	v := mk()
	(*m)[k] = v
	return v
}
