package tracecheck

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// doc wraps events (JSON objects, comma-separated) in a document whose
// track pid 1 tid 2 is named.
func doc(events ...string) string {
	return `{"displayTimeUnit":"ns","traceEvents":[` +
		`{"name":"thread_name","cat":"__metadata","ph":"M","ts":0,"pid":1,"tid":2,"args":{"name":"t"}},` +
		`{"name":"process_name","cat":"__metadata","ph":"M","ts":0,"pid":1,"tid":1,"args":{"name":"p"}}` +
		prefixed(events) + `]}`
}

func prefixed(events []string) string {
	if len(events) == 0 {
		return ""
	}
	return "," + strings.Join(events, ",")
}

// x is a complete slice on pid 1 tid 2.
func x(name, ts, dur, id string) string {
	return `{"name":"` + name + `","cat":"c","ph":"X","ts":` + ts + `,"dur":` + dur + `,"pid":1,"tid":2,"args":{"slice_id":` + id + `}}`
}

// fl is a flow event on pid 1 tid 2 naming slice id.
func fl(ph, ts, id string, extra ...string) string {
	bp := ""
	if ph == "f" {
		bp = `"bp":"e",`
	}
	e := `{"name":"f","cat":"c","ph":"` + ph + `",` + bp + `"id":1,"ts":` + ts + `,"pid":1,"tid":2,"args":{"slice_id":` + id + `}}`
	for _, x := range extra {
		e = strings.Replace(e, `"name":"f"`, x, 1)
	}
	return e
}

func catD(e string) string { return strings.Replace(e, `"cat":"c"`, `"cat":"d"`, 1) }

// good is a valid document: a slice with a child, a flow from the parent
// to the child, and a slice after them.
var good = doc(x("a", "1", "5", "1"), fl("s", "1", "1"), x("b", "2", "3", "2"), fl("f", "2", "2"), x("c", "6", "1", "3"))

func TestCheckAccepts(t *testing.T) {
	rep, err := Check([]byte(good))
	require.NoError(t, err)
	assert.Equal(t, 7, rep.Events)
	require.Len(t, rep.Slices, 3)
	require.Len(t, rep.Flows, 1)
	f := rep.Flows[0]
	require.Len(t, f.Slices, 2)
	assert.Equal(t, "a", f.Slices[0].Name)
	assert.Equal(t, "b", f.Slices[1].Name)
}

// Each broken document is refused, naming what is wrong.
func TestCheckRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, json, want string
	}{
		{"not an object", `[1,2]`, "not a JSON object"},
		{"no events", `{"displayTimeUnit":"ns"}`, "no traceEvents"},
		{"bad unit", `{"displayTimeUnit":"us","traceEvents":[]}`, "displayTimeUnit"},
		{"bad phase", doc(`{"name":"a","cat":"c","ph":"Q","ts":0,"pid":1,"tid":2}`), "not a trace-event phase"},
		{"no cat", doc(`{"name":"a","ph":"X","ts":1,"dur":1,"pid":1,"tid":2}`), "no cat"},
		{"no cat on metadata", doc(`{"name":"thread_name","ph":"M","pid":1,"tid":3,"args":{"name":"u"}}`), "no cat"},
		{"string ts", doc(`{"name":"a","cat":"c","ph":"X","ts":"1","dur":1,"pid":1,"tid":2}`), "ts"},
		{"no dur", doc(`{"name":"a","cat":"c","ph":"X","ts":1,"pid":1,"tid":2}`), "without a numeric dur"},
		{"negative dur", doc(x("a", "1", "-1", "1")), "negative"},
		{"float pid", doc(`{"name":"a","cat":"c","ph":"X","ts":1,"dur":1,"pid":1.5,"tid":2}`), "pid"},
		{"string tid", doc(`{"name":"a","cat":"c","ph":"X","ts":1,"dur":1,"pid":1,"tid":"x"}`), "tid"},
		{"unknown metadata", doc(`{"name":"thread_colour","cat":"__metadata","ph":"M","pid":1,"tid":2,"args":{}}`), "metadata name"},
		{"thread name not a string", doc(`{"name":"thread_name","cat":"__metadata","ph":"M","pid":1,"tid":2,"args":{"name":3}}`), "args.name"},
		{"sort index not an integer", doc(`{"name":"thread_sort_index","cat":"__metadata","ph":"M","pid":1,"tid":2,"args":{"sort_index":"a"}}`), "sort_index"},
		{"unnamed track", doc(`{"name":"a","cat":"c","ph":"X","ts":1,"dur":1,"pid":1,"tid":3}`), "no thread_name"},
		{"tid in two pids", doc(x("a", "1", "1", "1"), `{"name":"a","cat":"c","ph":"X","ts":1,"dur":1,"pid":4,"tid":2}`), "used with pids"},
		{"off the grid", doc(x("a", "15.597", "1", "1")), "not a multiple of 2^-11"},
		{"off the nanosecond", doc(x("a", "0.00048828125", "1", "1")), "more than 1/4 ns"},
		{"overlap", doc(x("a", "1", "5", "1"), x("b", "3", "5", "2")), "overlap without nesting"},
		{"overlap in float64 only", doc(x("a", "0.1", "0.2", "1"), x("b", "0.3", "1", "2")), "in float64 as DevTools adds ts and dur"},
		{"zero-length slice under a longer one", doc(x("a", "1", "5", "1"), x("b", "1", "0", "2")), "speedscope ends it before it begins"},
		{"Perfetto drops an overlap", doc(x("a", "1", "5", "1"), x("b", "3", "5", "2")), "Perfetto drops it"},
		{"duplicate slice_id", doc(x("a", "1", "1", "1"), x("b", "3", "1", "1")), "same args.slice_id"},
		{"flow without end", doc(x("a", "1", "5", "1"), fl("s", "1", "1")), "want one of each"},
		{"flow outside slices", doc(x("a", "1", "5", "1"), fl("s", "1", "1"), fl("f", "9", "1")), "binds it to nothing"},
		{"flow inside but not at the start", doc(x("a", "1", "5", "1"), fl("s", "1", "1"), x("b", "4", "1", "2"), fl("f", "4.5", "2")),
			"DevTools trace engine binds it to nothing"},
		{"flow to another slice than named", doc(x("a", "1", "5", "1"), fl("s", "1", "1"), x("b", "2", "1", "2"), fl("f", "2", "3"), x("c", "7", "1", "3")),
			"not to event"},
		{"flow to a slice that another starts with", doc(x("a", "1", "5", "1"), fl("s", "1", "1"), x("b", "1", "2", "2"), x("c", "3", "1", "3"), fl("f", "3", "3")),
			"Perfetto binds it to event"},
		{"flow naming no slice", doc(x("a", "1", "5", "1"), fl("s", "1", "1"), x("b", "2", "1", "2"), fl("f", "2", "9")), "names no slice"},
		{"flow without slice_id", doc(x("a", "1", "5", "1"), `{"name":"f","cat":"c","ph":"s","id":1,"ts":1,"pid":1,"tid":2}`,
			x("b", "2", "1", "2"), fl("f", "2", "2")), "does not name the slice"},
		{"flow of another category", doc(x("a", "1", "5", "1"), catD(fl("s", "1", "1")), x("b", "2", "1", "2"), catD(fl("f", "2", "2"))),
			"DevTools trace engine binds it to nothing"},
		{"flow backwards", doc(x("a", "1", "5", "1"), fl("s", "4", "1"), fl("f", "2", "1")), "is not after"},
		{"flow events at one time", doc(x("a", "1", "5", "1"), fl("s", "1", "1"), fl("f", "1", "1")), "is not after"},
		{"flow names differ", doc(x("a", "1", "5", "1"), fl("s", "1", "1"), x("b", "2", "1", "2"), fl("f", "2", "2", `"name":"g"`)), "differ"},
		{"flow without id", doc(`{"name":"f","cat":"c","ph":"s","ts":2,"pid":1,"tid":2}`), "without an id"},
		{"bp on s", doc(x("a", "1", "5", "1"), strings.Replace(fl("s", "1", "1"), `"ph":"s",`, `"ph":"s","bp":"e",`, 1),
			x("b", "2", "1", "2"), fl("f", "2", "2")), "bp"},
		{"bad instant scope", doc(`{"name":"i","cat":"c","ph":"i","s":"x","ts":1,"pid":1,"tid":2}`), "instant scope"},
		{"unbalanced B", doc(`{"name":"a","cat":"c","ph":"B","ts":1,"pid":1,"tid":2}`), "never ended"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Check([]byte(tc.json))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// A document with many problems reports the first ones and a count.
func TestCheckBoundsItsReport(t *testing.T) {
	var evs []string
	for range 100 {
		evs = append(evs, `{"name":"a","ph":"X","ts":1,"dur":1,"pid":1,"tid":2}`)
	}
	_, err := Check([]byte(doc(evs...)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "more problems")
	assert.LessOrEqual(t, strings.Count(err.Error(), "\n"), maxProblems+1)
}

func FuzzCheck(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte(`{"traceEvents":[{"ph":"f","id":"x","ts":1e400}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := Check(data) // never panics
		if err == nil {
			require.NotNil(t, rep)
		}
	})
}
