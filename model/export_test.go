package model

// TestExtraUs is a parameter only the model package's test build has:
// one row, as every parameter is. TestNewParameterIsOneRow finds it in
// the model file, the presets and "emud calibrate"'s parameter table.
var TestExtraUs = define[Float](Parameter{Name: "test_extra_us", Unit: "µs", Value: 0.5,
	Source: "a row only the test build has"})
