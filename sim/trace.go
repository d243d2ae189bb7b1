package sim

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
)

// TraceKind names a kind of trace record ("packet", "doorbell", ...).
// Kinds and subjects are small integers so tracing a packet costs no
// allocation; their names are registered once.
type TraceKind uint16

// TraceSubject names who a record is about (a queue, an actor).
type TraceSubject uint32

// Record is one kept trace record (Config.Record). For the scheduler's own
// records (kind "sched") Subject is the actor's index, or all ones for a
// tie-break; WriteRecords renders them.
type Record struct {
	T       Time
	Kind    TraceKind
	Subject TraceSubject
	A, B, C uint64
}

type tracer struct {
	h        hash.Hash
	buf      []byte
	keep     bool
	recs     []Record
	kinds    []string
	subjects []string
	// actorNames are the actors' names by id, kept with the records
	// (finished actors leave Sim.actors).
	actorNames []string
	count      uint64
}

const traceFlush = 4096

func (t *tracer) init(keep bool, sc *Scratch) {
	t.keep = keep
	if sc != nil && sc.trace.h != nil {
		// The last run's hash and buffers (Scratch.takeBack), emptied:
		// that run is over, and its digest and names were read.
		k := &sc.trace
		t.h, t.buf = k.h, k.buf[:0]
		t.h.Reset()
		t.kinds, t.subjects = k.kinds[:0], k.subjects[:0]
		if !keep {
			t.actorNames = k.actorNames[:0] // records name actors: a kept trace has its own
		}
		*k = tracer{}
		return
	}
	t.h = sha256.New()
	t.buf = make([]byte, 0, traceFlush+64)
}

// TraceKind registers a record kind and returns its id. Registration is
// part of the digest, so register in a deterministic order.
func (s *Sim) TraceKind(name string) TraceKind {
	s.trace.kinds = append(s.trace.kinds, name)
	s.trace.hashString(name)
	return TraceKind(len(s.trace.kinds) - 1)
}

// TraceSubject registers a subject name and returns its id.
func (s *Sim) TraceSubject(name string) TraceSubject {
	s.trace.subjects = append(s.trace.subjects, name)
	s.trace.hashString(name)
	return TraceSubject(len(s.trace.subjects) - 1)
}

// KindName and SubjectName resolve ids for trace writers.
func (s *Sim) KindName(k TraceKind) string { return lookup(s.trace.kinds, int(k)) }

// SubjectName resolves a subject id.
func (s *Sim) SubjectName(id TraceSubject) string { return lookup(s.trace.subjects, int(id)) }

func lookup(names []string, i int) string {
	if i < 0 || i >= len(names) {
		return "?"
	}
	return names[i]
}

// Trace adds a record at Now to the digest (and to Records if kept).
func (s *Sim) Trace(k TraceKind, subj TraceSubject, a, b, c uint64) {
	s.trace.record(s, k, uint32(subj), a, b, c)
}

func (t *tracer) hashString(name string) {
	t.buf = binary.LittleEndian.AppendUint32(t.buf, uint32(len(name)))
	t.buf = append(t.buf, name...)
	t.maybeFlush()
}

func (t *tracer) record(s *Sim, k TraceKind, subj uint32, a, b, c uint64) {
	t.count++
	buf := t.buf
	buf = binary.LittleEndian.AppendUint64(buf, uint64(s.now))
	buf = binary.LittleEndian.AppendUint16(buf, uint16(k))
	buf = binary.LittleEndian.AppendUint32(buf, subj)
	buf = binary.LittleEndian.AppendUint64(buf, a)
	buf = binary.LittleEndian.AppendUint64(buf, b)
	buf = binary.LittleEndian.AppendUint64(buf, c)
	t.buf = buf
	t.maybeFlush()
	if t.keep {
		t.recs = append(t.recs, Record{T: s.now, Kind: k, Subject: TraceSubject(subj), A: a, B: b, C: c})
	}
}

// sched records a PRNG tie-break (pick i of n).
func (t *tracer) sched(s *Sim, i, n uint64) { t.record(s, s.traceSched, ^uint32(0), 0, i, n) }

func (t *tracer) maybeFlush() {
	if len(t.buf) >= traceFlush {
		t.h.Write(t.buf)
		t.buf = t.buf[:0]
	}
}

// Digest returns the SHA-256, in hex, of every trace record so far:
// scheduling decisions, actor starts, wakes and exits, and whatever the
// layers above traced. The same seed gives the same digest.
func (s *Sim) Digest() string {
	t := &s.trace
	if len(t.buf) > 0 {
		t.h.Write(t.buf)
		t.buf = t.buf[:0]
	}
	return hex.EncodeToString(t.h.Sum(nil))
}

// TraceCount returns how many records were traced.
func (s *Sim) TraceCount() uint64 { return s.trace.count }

// Records returns the kept records (nil unless Config.Record).
func (s *Sim) Records() []Record { return s.trace.recs }

// WriteRecords writes the kept records (Config.Record) as text, one per
// line: virtual time, kind, subject and the three values. Scheduler records
// read "sched spawn|run|exit ACTOR" or "sched pick I of N". For reading what
// happened before a hang; the same seed writes the same text.
func (s *Sim) WriteRecords(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, r := range s.trace.recs {
		var err error
		if r.Kind == s.traceSched {
			_, err = fmt.Fprintf(bw, "%v\tsched\t%s\n", r.T, s.schedText(r))
		} else {
			_, err = fmt.Fprintf(bw, "%v\t%s\t%s\t%#x\t%#x\t%#x\n", r.T, s.KindName(r.Kind), s.SubjectName(r.Subject), r.A, r.B, r.C)
		}
		if err != nil {
			return err
		}
	}
	return bw.Flush()
}

// schedText renders a scheduler record: its subject is an actor index, or
// all ones for a tie-break.
func (s *Sim) schedText(r Record) string {
	if r.Subject == TraceSubject(^uint32(0)) {
		return fmt.Sprintf("pick %d of %d", r.B, r.C)
	}
	if r.Subject == TraceSubject(^uint32(0)-1) {
		return fmt.Sprintf("pct preempt at step %d for %v", r.C, Time(r.B))
	}
	name := "?"
	if int(r.Subject) < len(s.trace.actorNames) {
		name = s.trace.actorNames[r.Subject]
	}
	what := map[uint64]string{1: "spawn", 2: "run", 3: "exit"}[r.A]
	return what + " " + name
}
