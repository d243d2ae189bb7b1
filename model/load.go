package model

import (
	"fmt"
	"slices"
	"strings"
)

// presets are the models Load knows by name.
var presets = map[string]func() Model{
	"placeholder": func() Model { return NewPlaceholder() },
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

// Load returns the model named by spec: a preset name, or "" for the
// default preset.
func Load(spec string) (Model, error) {
	if spec == "" {
		spec = DefaultPreset
	}
	if mk, ok := presets[spec]; ok {
		return mk(), nil
	}
	return nil, fmt.Errorf("unknown model %q: presets are %s", spec, strings.Join(Presets(), ", "))
}

// DefaultPreset is the model Load returns for "".
const DefaultPreset = "placeholder"
