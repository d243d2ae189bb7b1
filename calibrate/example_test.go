package calibrate_test

import (
	"fmt"
	"strings"

	"github.com/emud-dev/emud/calibrate"
	"github.com/emud-dev/emud/model"
)

// Judge a model against some documented rows: each runs as a real
// scenario through the emulator.
func ExampleRun() {
	var rows []calibrate.Row
	for _, r := range calibrate.Documented() {
		if r.ID == "bw.1m" || r.ID == "engine.packet.64" || r.ID == "ring.capacity" {
			rows = append(rows, r)
		}
	}
	rep, err := calibrate.Run(model.MI355X(), rows, 1)
	if err != nil {
		panic(err)
	}
	for _, x := range rep.Rows {
		fmt.Printf("%s: documented %g %s, emulated %.4g (%+.1f%%)\n", x.ID, x.Documented, x.Unit, x.Emulated, 100*x.Error)
	}
	fmt.Println("all within tolerance:", rep.OK())
	// Output:
	// bw.1m: documented 52 GB/s, emulated 52.12 (+0.2%)
	// engine.packet.64: documented 128 us, emulated 127.2 (-0.7%)
	// ring.capacity: documented 8191 puts, emulated 8191 (+0.0%)
	// all within tolerance: true
}

// One row's emulated value.
func ExampleMeasure() {
	row := calibrate.Row{ID: "bw.64k", Params: map[string]uint64{"bytes": 65536}}
	v, _, err := calibrate.Measure(model.MI355X(), row, 1)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%.1f GB/s\n", v)
	// Output: 16.6 GB/s
}

// Measurements for emud fit: ops copies of bytes each from GPU src to GPU
// dst over queues queues.
func ExampleParseMeasurements() {
	ms, err := calibrate.ParseMeasurements(strings.NewReader("name,src,dst,ops,bytes,queues,time_us\nbw.64k,0,1,1,65536,1,3.855\nscatter,0,1,64,4096,1,138\n"))
	if err != nil {
		panic(err)
	}
	for _, m := range ms {
		pred, _ := calibrate.Predict(model.MI355X(), m, 1)
		fmt.Printf("%d × %d B on %d queue(s): measured %g µs, emulated %.1f µs\n", m.Ops, m.Bytes, m.Queues, m.TimeUs, pred)
	}
	// Output:
	// 1 × 65536 B on 1 queue(s): measured 3.855 µs, emulated 4.0 µs
	// 64 × 4096 B on 1 queue(s): measured 138 µs, emulated 133.4 µs
}

// Fit the link bandwidth to two measurements, starting far off.
func ExampleFit() {
	ms := []calibrate.Measurement{
		{Name: "bw.1m", Src: 0, Dst: 1, Ops: 1, Bytes: 1 << 20, Queues: 1, TimeUs: 20.165},
		{Name: "bw.4m", Src: 0, Dst: 1, Ops: 1, Bytes: 4 << 20, Queues: 1, TimeUs: 71.09},
	}
	start := model.MI355X()
	model.LinkGBps.Set(start, 20)
	res, err := calibrate.Fit(start, []string{"link_gbps"}, ms, 1)
	if err != nil {
		panic(err)
	}
	fmt.Printf("link %.0f GB/s\n", model.LinkGBps.Of(res.Model))
	for _, r := range res.Residuals {
		fmt.Printf("%s: measured %.1f µs, emulated %.1f µs\n", r.Name, r.TimeUs, r.PredictedUs)
	}
	// Output:
	// link 61 GB/s
	// bw.1m: measured 20.2 µs, emulated 20.0 µs
	// bw.4m: measured 71.1 µs, emulated 71.5 µs
}
