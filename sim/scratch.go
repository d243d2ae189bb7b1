package sim

// Scratch is the event store one caller keeps across the runs it makes
// one after another (an explore worker's seeds): a Sim given one
// (Config.Scratch) takes its event chunks and its event queue's blocks
// from it and gives them back when Run returns. A 4 KiB all-to-all seed
// made 38 KiB of them, a fifth of what it allocated. The next Sim also
// takes the last one's digest hash and trace buffers and its write logs
// (WatchList.EnableLog), emptied.
//
// What a run takes is cleared as it is taken, so a run sees the zeroed
// store a fresh Sim makes whatever ran before it, even if the Sim before
// touched its events after Run (a Timer stopped late). A Scratch belongs
// to one goroutine: its Sims must run one after another, and a Sim's
// digest, records and write logs are read before the next Sim borrows
// the Scratch (they become that Sim's).
type Scratch struct {
	chunks [][]event
	blocks []*runBlock
	local  locals // WorkerLocal
	// runLocal is the last run's map of RunLocal's values, which the
	// next run empties and takes (a map made every run).
	runLocal locals
	closers  []func() // OnClose
	// trace is the last run's digest hash and trace buffers, which the
	// next run takes emptied (tracer.init): 5 KiB a run.
	trace tracer
	// logs are the write logs the runs made (WatchList.EnableLog), up to
	// maxKeptLogs; the first nlogs of them are the current run's.
	logs  []*WriteLog
	nlogs int
	// names are the strings Intern made, up to maxNames: the same writers
	// and regions are named alike from one seed to the next.
	names map[string]string
	// fired and nameBuf are the last run's buffers of fired watches
	// (WatchList.wake) and of a writer's name, emptied when used.
	fired   []*watch
	nameBuf []byte
	// The free watches, page lists and page maps the runs' watch lists
	// dropped (watch.go): each emptied when it was freed.
	freeWatches []*watch
	freeLists   [][]*watch
	freeMaps    []map[uint64][]*watch
	// actors are the last runs' actors whose goroutines ended (or never
	// started), up to maxKeptActors, for the next runs' Spawns; actorList
	// is the last run's actor list, which the next run empties and takes.
	actors    []*Actor
	actorList []*Actor
	// The last run's lists of its event store, emptied: recycled ids,
	// the batch due now, the queue's heap, free blocks and runs' block
	// lists (each grew from nil every run: a dozen allocations a seed).
	free      []uint32
	batch     []*event
	heap      eventHeap
	qfree     []*runBlock
	runBlocks [queueRuns][]*runBlock
}

// maxKeptActors bounds the actors a Scratch keeps for reuse: a 4 KiB
// all-to-all seed spawns a dozen.
const maxKeptActors = 256

// maxNames bounds the strings a Scratch interns: a 4 KiB all-to-all
// seed names a few dozen, and a run naming more makes the rest anew.
const maxNames = 1 << 12

// Intern returns b as a string: with a Scratch, the one made for the same
// bytes by this or an earlier run that borrowed it (names of writers and
// regions repeat from seed to seed), else a new one. A nil Sim (a device
// with no simulator) makes a new one.
func (s *Sim) Intern(b []byte) string {
	if s == nil || s.cfg.Scratch == nil {
		return string(b)
	}
	sc := s.cfg.Scratch
	if n, ok := sc.names[string(b)]; ok { // no allocation for the lookup
		return n
	}
	n := string(b)
	if len(sc.names) < maxNames {
		if sc.names == nil {
			sc.names = make(map[string]string)
		}
		sc.names[n] = n
	}
	return n
}

// maxKeptLogs bounds the write logs a Scratch keeps: a node has one.
const maxKeptLogs = 4

// newRun is a new Sim borrowing the Scratch: what the last run took is
// free to take again (the run before is over, and its caller has read
// its digest and reports).
func (sc *Scratch) newRun() {
	if sc != nil {
		sc.nlogs = 0
	}
}

// writeLog is a kept write log, emptied, for the current run; nil if all
// are taken (the caller makes one and keeps it, keepLog).
func (sc *Scratch) writeLog() *WriteLog {
	if sc == nil || sc.nlogs == len(sc.logs) {
		return nil
	}
	g := sc.logs[sc.nlogs]
	sc.nlogs++
	g.reuse()
	return g
}

// keepLog keeps a new write log of the current run for the runs after it.
func (sc *Scratch) keepLog(g *WriteLog) {
	if sc != nil && len(sc.logs) < maxKeptLogs {
		sc.logs = append(sc.logs, g)
		sc.nlogs++
	}
}

// OnClose registers fn to run at Close: to end what WorkerLocal keeps.
func (sc *Scratch) OnClose(fn func()) { sc.closers = append(sc.closers, fn) }

// Close ends what the runs kept (OnClose's functions, last first) and
// forgets WorkerLocal's values; the event store stays for later runs. An
// owner that drops a Scratch closes it first, or goroutines parked in it
// stay.
func (sc *Scratch) Close() {
	for i := len(sc.closers) - 1; i >= 0; i-- {
		sc.closers[i]()
	}
	sc.closers, sc.local = nil, nil
}

// scratchChunks bounds the chunks a Scratch keeps (256 events each): a
// run that needed more makes the rest and leaves them to the collector.
const scratchChunks = 64

// NewScratch returns an empty Scratch.
func NewScratch() *Scratch { return &Scratch{} }

// chunk returns a zeroed chunk of events.
func (sc *Scratch) chunk() []event {
	if sc == nil || len(sc.chunks) == 0 {
		return make([]event, eventChunk)
	}
	c := sc.chunks[len(sc.chunks)-1]
	sc.chunks = sc.chunks[:len(sc.chunks)-1]
	clear(c)
	return c
}

// block returns a zeroed block of an event run.
func (sc *Scratch) block() *runBlock {
	if sc == nil || len(sc.blocks) == 0 {
		return new(runBlock)
	}
	b := sc.blocks[len(sc.blocks)-1]
	sc.blocks = sc.blocks[:len(sc.blocks)-1]
	*b = runBlock{}
	return b
}

// clearedBlocks is bs emptied, its blocks forgotten.
func clearedBlocks(bs []*runBlock) []*runBlock {
	clear(bs)
	return bs[:0]
}

// takeBack keeps what s made of its event store, which s drops: events
// made after Run (none run) come from a new store.
func (sc *Scratch) takeBack(s *Sim) {
	for _, c := range s.chunks {
		if len(sc.chunks) < scratchChunks {
			sc.chunks = append(sc.chunks, c)
		}
	}
	q := &s.heap
	keep := func(bs []*runBlock) {
		for _, b := range bs {
			if len(sc.blocks) < scratchChunks {
				sc.blocks = append(sc.blocks, b)
			}
		}
	}
	keep(q.free)
	for i := range q.runs {
		keep(q.runs[i].blocks)
	}
	clear(s.batch)
	sc.free, sc.batch, sc.heap, sc.qfree = s.free[:0], s.batch[:0], q.heap[:0], clearedBlocks(q.free)
	for i := range q.runs {
		sc.runBlocks[i] = clearedBlocks(q.runs[i].blocks)
	}
	s.chunks, s.free, s.nevents, s.batch = nil, nil, 0, nil
	s.heap = eventQueue{}
	sc.fired, sc.nameBuf = s.fired[:0], s.nameBuf[:0]
	s.fired, s.nameBuf = nil, nil
	sc.freeWatches, sc.freeLists, sc.freeMaps = s.freeWatches, s.freeLists, s.freeMaps
	s.freeWatches, s.freeLists, s.freeMaps = nil, nil, nil
	// An actor is free once its goroutine has ended: it returned or was
	// killed (Run waited for its last channel send, after which it
	// touches nothing of the actor), or it never started. A foreign
	// actor's goroutine stays parked in it: never reused. The actors and
	// s's list of them stay as they are until the next run takes them
	// (newActor, New), for what reads s after Run.
	for _, a := range s.actors {
		if a.foreign || (a.started && a.state != stateDone) || len(sc.actors) >= maxKeptActors {
			continue
		}
		sc.actors = append(sc.actors, a)
	}
	sc.actorList = s.actors
	sc.runLocal = s.local // still s's until the next run takes it
	// The trace stays s's too until the next run takes it (Digest,
	// SubjectName and WriteRecords read it after Run).
	t := &s.trace
	sc.trace = tracer{h: t.h, buf: t.buf, kinds: t.kinds, subjects: t.subjects, actorNames: t.actorNames}
	if t.keep {
		sc.trace.actorNames = nil
	}
}
