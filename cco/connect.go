package cco

import (
	"fmt"
	"strings"

	"github.com/emud-dev/emud/sim"
)

// Queue creation in DevCommCreate (DevCommRequirements.ConnectQueues), as
// MORI's ccoDevCommCreate makes every queue up front. A queue KFD refuses
// (its engine holds its cap, the engine is fused off: engine.Node's
// placement says which) is recorded as failed; DevCommCreate returns the
// dev comm with a *QueueCreateError. A program that ignores the error and
// launches finds every post on a failed queue going nowhere, so a wait for
// its signals never returns: the hang report names the failed creation,
// and how many posts went nowhere, as the cause (CauseQueueCreateFailed),
// instead of "rank r never posted a signal".

// CauseQueueCreateFailed is the Kind of the cause that names a queue whose
// creation failed in DevCommCreate while the program went on.
const CauseQueueCreateFailed sim.CauseKind = "queue-create-failed"

type failedQueue struct {
	peer, q int
	err     error
	posts   int // posts the program made on it anyway
}

// QueueCreateError is DevCommCreate's error when queues it creates up
// front (ConnectQueues) are refused: the dev comm it returns with the
// error works but for those queues.
type QueueCreateError struct {
	Rank   int
	Failed []QueueCreateFailure
}

// QueueCreateFailure is one refused queue.
type QueueCreateFailure struct {
	Peer, Queue int
	Err         error
}

func (e *QueueCreateError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ccoDevCommCreate (rank %d): %d queue creation(s) failed: ", e.Rank, len(e.Failed))
	for i, f := range e.Failed {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "queue (peer %d, queueId %d): %v", f.Peer, f.Queue, f.Err)
	}
	b.WriteString(" (the dev comm has no such queues: posts on them go nowhere)")
	return b.String()
}

// connect creates every queue of the dev comm now, peer by peer.
func (st *devState) connect() error {
	var e *QueueCreateError
	for p := 0; p < st.c.LsaSize; p++ {
		for q := 0; q < st.n; q++ {
			if _, err := st.queue(p, q); err != nil {
				if st.failed == nil {
					st.failed = map[int]*failedQueue{}
				}
				st.failed[p*st.n+q] = &failedQueue{peer: p, q: q, err: err}
				if e == nil {
					e = &QueueCreateError{Rank: st.c.Rank}
				}
				e.Failed = append(e.Failed, QueueCreateFailure{Peer: p, Queue: q, Err: err})
			}
		}
	}
	if e == nil {
		return nil
	}
	return e
}

// missing reports whether queue (peer, q) failed to be created: the post
// call is to make goes nowhere. Debug mode stops the lane instead.
func (s *Sdma) missing(call string, peer, q int) bool {
	if s.st.failed == nil || peer < 0 || peer >= s.dc.LsaSize {
		return false
	}
	f := s.st.failed[peer*s.st.n+q]
	if f == nil {
		return false
	}
	if s.st.debug {
		s.fail(call, "queue (peer %d, queueId %d) does not exist: ccoDevCommCreate failed to create it (%v) and the program went on (emulator debug check, not MORI's)", peer, q, f.err)
	}
	f.posts++
	return true
}

// failedToward returns the failed creation of LSA rank src's queue toward
// rank me with id q in dev comm idx, if src's DevCommCreate saw one.
func (st *devState) failedToward(src, q int) *failedQueue {
	o := st.c.w.comms[src]
	if o == nil || len(o.devs) <= st.idx {
		return nil
	}
	os := o.devs[st.idx]
	if os.failed == nil || q < 0 || q >= os.n {
		return nil
	}
	return os.failed[st.c.LsaRank*os.n+q]
}

// failedCause is the cause for a wait on a slot whose sender's queue was
// never created.
func (f *failedQueue) String(src int) string {
	return fmt.Sprintf("rank %d's queue (peer %d, queueId %d), which carries this slot's signals, was never created: its ccoDevCommCreate failed to create it (%v) and the program went on without checking the error, so its %d post(s) on that queue went nowhere. Check ccoDevCommCreate's result; free queues (ccoCommDestroy) or use fewer queue ids so the engine has room",
		src, f.peer, f.q, f.err, f.posts)
}
