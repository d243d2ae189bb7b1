package model

import (
	"fmt"
	"slices"
	"strings"
)

// presets are the models Load knows by name: values of Params.
var presets = map[string]func() *Params{
	"placeholder": NewPlaceholder,
	"mi355x":      MI355X,
}

// Presets lists the preset names Load accepts, sorted.
func Presets() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// DefaultPreset is the model Load returns for "": the calibrated MI355X.
const DefaultPreset = "mi355x"

// Default returns the default preset's model (DefaultPreset): what a node
// built without a model, the CLI and the daemon use.
func Default() *Params { return presets[DefaultPreset]() }

// Load returns the model named by spec: a preset name, "" for the default
// preset, or the path of a model file (JSON, see LoadFile; anything with a
// path separator or a .json suffix is taken as a file).
func Load(spec string) (*Params, error) {
	if spec == "" {
		spec = DefaultPreset
	}
	if mk, ok := presets[spec]; ok {
		return mk(), nil
	}
	if strings.ContainsAny(spec, `/\`) || strings.HasSuffix(spec, ".json") {
		return LoadFile(spec)
	}
	return nil, fmt.Errorf("unknown model %q: presets are %s, or give a model file path (*.json)", spec, strings.Join(Presets(), ", "))
}
