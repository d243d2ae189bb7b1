// Package tracecheck checks a Chrome trace-event JSON document (the object
// form emud's trace package writes) the way the viewers that open it read
// it, and says everything it finds wrong.
//
// [Check] applies, beyond the Trace Event Format's fields (phases, names,
// categories on every event, integer pids and tids, numeric times,
// metadata, named tracks, B/E balance):
//
//   - the time grid: every ts and dur is an exact multiple of 2⁻¹¹ µs
//     within a quarter nanosecond of a whole nanosecond, so float64 viewers
//     compute ts + dur exactly and Perfetto's round(µs × 1000) recovers the
//     nanoseconds;
//   - nesting: on every track the complete slices nest or are disjoint, in
//     exact arithmetic and in float64 as DevTools (ts + dur) and speedscope
//     (shifted to the track's first slice) compute it; and no zero-length
//     slice shares its start with a longer one (speedscope ends it before it
//     begins);
//   - flows (v1: s, t, f): one s first and one f last, one name and
//     category, strictly increasing ts (DevTools keeps one event per time
//     in a flow), and each event bound, both under Perfetto's rule (the
//     innermost slice open on the event's track at its time, events in
//     file order or sorted as Perfetto's JSON importer sorts a file out of
//     ts order, both tried; an f without bp "e" the next slice to begin)
//     and under the DevTools trace engine's (the first event of the track
//     with the same ts and category), to the one slice whose args.slice_id
//     the event's args.slice_id names.
//
// The real viewers are checked too, in CI (.ci/tracecheck): this package is
// the fast, dependency-free version of the same rules for go test, and it
// states them in one place. What it does not model: catapult
// (chrome://tracing) and anything but v1 flows and X, B/E and instant
// slices.
package tracecheck
