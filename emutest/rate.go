package emutest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// Kind is how a failing seed failed.
type Kind int

// The kinds, in the order a seed's error is classified: a hang (whatever
// races it carries), a data race, a lane's trap or memory fault, wrong
// data (an error wrapping ErrWrongData, or made by WrongData), anything
// else (a panic in the body included).
const (
	KindHang Kind = iota
	KindRace
	KindTrap
	KindWrongData
	KindError
	numKinds
)

var kindNames = [numKinds]string{"hang", "race", "trap", "wrong data", "error"}

func (k Kind) String() string {
	if k < 0 || k >= numKinds {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// ErrWrongData marks a body's error as wrong data: wrap it (%w) in the
// error a data check returns, or build the error with WrongData.
var ErrWrongData = errors.New("wrong data")

// WrongData is a data check's error: the message, marked ErrWrongData.
func WrongData(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrWrongData, fmt.Sprintf(format, args...))
}

// KindOf classifies a failing seed's error.
func KindOf(err error) Kind {
	var h *sim.HangError
	var r *race.Error
	var l *kernel.LaneError
	switch {
	case errors.As(err, &h):
		return KindHang
	case errors.As(err, &r):
		return KindRace
	case errors.As(err, &l):
		return KindTrap
	case errors.Is(err, ErrWrongData):
		return KindWrongData
	}
	return KindError
}

// Outcome is one kind's share of a Rate: how many seeds failed so, and
// the first of them with its error.
type Outcome struct {
	Seeds int
	First uint64
	Err   error
}

// Rates is what Rate measured: the seeds run, how many failed (were
// detected), and per kind the count and first seed.
type Rates struct {
	Seeds    int
	Detected int
	Kinds    [numKinds]Outcome
}

// Of is kind k's outcome.
func (r *Rates) Of(k Kind) Outcome { return r.Kinds[k] }

// Rate is the share of seeds detected, 0..1.
func (r *Rates) Rate() float64 {
	if r.Seeds == 0 {
		return 0
	}
	return float64(r.Detected) / float64(r.Seeds)
}

// String is one line: "detected 12 of 50 seeds (24%): hang 3 (first seed
// 4), race 9 (first seed 1)".
func (r *Rates) String() string {
	s := fmt.Sprintf("detected %d of %d seeds (%.0f%%)", r.Detected, r.Seeds, 100*r.Rate())
	var parts []string
	for k, o := range r.Kinds {
		if o.Seeds > 0 {
			parts = append(parts, fmt.Sprintf("%s %d (first seed %d)", Kind(k), o.Seeds, o.First))
		}
	}
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, ", ")
	}
	return s
}

// Rate runs body under seeds 1..k (or -emutest.seeds of them) without
// stopping at a failure, and returns how many seeds failed, and per kind
// (KindOf) how many and the first: the detection rate of a bug, where
// Seeds stops at the first failing seed. It fails t only for bad flags or
// environment; the line it logs is Rates.String.
func Rate(t testing.TB, k int, body func(seed uint64) error) *Rates {
	t.Helper()
	if *numSeeds > 0 {
		k = *numSeeds
	}
	if err := checkFlags(); err != nil {
		t.Fatalf("%v", err)
		return &Rates{}
	}
	r := RateOf(k, body)
	t.Logf("emutest.Rate (%s): %v", timing(), r)
	return r
}

// RateOf is Rate without a testing.T: seeds 1..k exactly, nothing logged
// (a bad flag or environment is then each seed's error, from NewJob).
func RateOf(k int, body func(seed uint64) error) *Rates {
	defer probePCT(body)()
	r := &Rates{Seeds: max(k, 0)}
	for seed := uint64(1); seed <= uint64(r.Seeds); seed++ {
		err := call(body, seed)
		if err == nil {
			continue
		}
		r.Detected++
		o := &r.Kinds[KindOf(err)]
		if o.Seeds == 0 {
			o.First, o.Err = seed, err
		}
		o.Seeds++
	}
	return r
}
