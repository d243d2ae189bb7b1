package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/emud-dev/emud/internal/fileio"
)

// maxModelFile bounds a model file: a few dozen numbers and a layout fit
// in a few KiB, so anything past 1 MiB is not a model file.
const maxModelFile = 1 << 20

// LoadFile reads a model file: a JSON object with the key "name" (the
// model's label), one key per parameter (its model-file name, see
// [Parameters]) and optionally "engine_links" and "fused_off_engines"
// (engine ids). Keys match exactly (case
// too), each at most once; an unknown key is an error (a misspelt
// parameter must not silently keep its default), and missing ones keep
// the MI355X preset's value (or, for a per-path row such as
// local_packet_us or host_packet_us, the value the file gives the row it
// Follows). null, an
// empty object, or an object with
// only a name are refused: they would be the MI355X preset under another
// name.
func LoadFile(path string) (*Params, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("model file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxModelFile+1))
	if err != nil {
		return nil, fmt.Errorf("model file %s: %w", path, err)
	}
	if len(b) > maxModelFile {
		return nil, fmt.Errorf("model file %s: larger than %d bytes: not a model file", path, maxModelFile)
	}
	p, err := decodeModel(b)
	if err != nil {
		return nil, fmt.Errorf("model file %s: %w", path, err)
	}
	if p.Label == "" {
		p.Label = path
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("model file %s: %w", path, err)
	}
	return p, nil
}

// decodeModel parses a model file's bytes over the MI355X preset.
func decodeModel(b []byte) (*Params, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err == io.EOF {
		return nil, errors.New("empty: want a JSON object of parameters")
	}
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("want a JSON object of parameters, got %s", tokenText(tok))
	}
	p := MI355X()
	p.Label = ""
	seen := map[string]bool{}
	params := 0
	for dec.More() {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		} else if err != nil {
			return nil, err
		}
		key := tok.(string) // inside an object the decoder yields only string keys
		if seen[key] {
			return nil, fmt.Errorf("key %q given twice", key)
		}
		seen[key] = true
		switch key {
		case "name":
			if err := decodeValue(dec, key, &p.Label); err != nil {
				return nil, err
			}
		case "engine_links":
			if err := decodeValue(dec, key, &p.EngineLinks); err != nil {
				return nil, err
			}
		case "fused_off_engines":
			if err := decodeValue(dec, key, &p.FusedOffEngines); err != nil {
				return nil, err
			}
		default:
			r, ok := lookup(key)
			if !ok {
				return nil, fmt.Errorf("unknown field %q: parameters are %s (names match exactly)", key, joinNames())
			}
			var v float64
			if err := decodeValue(dec, key, &v); err != nil {
				return nil, err
			}
			if r.Int && v != math.Trunc(v) {
				return nil, fmt.Errorf("%s: %v is not a count (a whole number)", key, v)
			}
			r.Set(p, v)
			params++
		}
	}
	if _, err := dec.Token(); err == io.EOF { // the closing brace
		return nil, io.ErrUnexpectedEOF
	} else if err != nil {
		return nil, err
	}
	// One JSON object and nothing after it: trailing text is a damaged or
	// concatenated file, not something to ignore.
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the JSON object (at byte %d)", dec.InputOffset())
	}
	for _, r := range table {
		if r.Follows != "" && !seen[r.Name] && seen[r.Follows] {
			f, _ := lookup(r.Follows)
			r.Set(p, f.Get(p))
		}
	}
	if params == 0 && len(p.EngineLinks) == 0 && len(p.FusedOffEngines) == 0 {
		return nil, errors.New("no parameters: a model file names at least one parameter (for the MI355X preset, use --model mi355x)")
	}
	return p, nil
}

// decodeValue decodes the value of key into v; null is refused.
func decodeValue(dec *json.Decoder, key string, v any) error {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	if string(raw) == "null" {
		return fmt.Errorf("%s: null: give a value or leave the key out", key)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

func tokenText(t json.Token) string {
	switch d := t.(type) {
	case nil:
		return "null"
	case json.Delim:
		return fmt.Sprintf("%q", string(d))
	}
	b, _ := json.Marshal(t)
	return string(b)
}

func lookup(name string) (Parameter, bool) {
	for _, r := range table {
		if r.Name == name {
			return r, true
		}
	}
	return Parameter{}, false
}

func joinNames() string {
	var b bytes.Buffer
	for i, n := range parameterNames() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n)
	}
	return b.String()
}

// MarshalJSON writes p as a model file: "name", every parameter in table
// order (counts as integers), then "engine_links" and
// "fused_off_engines" if set.
func (p *Params) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"name":`)
	n, _ := json.Marshal(p.Label)
	b.Write(n)
	for _, r := range table {
		b.WriteString(`,"` + r.Name + `":`)
		v := r.Get(p)
		if r.Int {
			b.WriteString(strconv.FormatInt(int64(v), 10))
			continue
		}
		x, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("model %q: %s: %w", p.Label, r.Name, err)
		}
		b.Write(x)
	}
	if len(p.EngineLinks) > 0 {
		l, _ := json.Marshal(p.EngineLinks)
		b.WriteString(`,"engine_links":`)
		b.Write(l)
	}
	if len(p.FusedOffEngines) > 0 {
		l, _ := json.Marshal(p.FusedOffEngines)
		b.WriteString(`,"fused_off_engines":`)
		b.Write(l)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// WriteFile writes p as a model file LoadFile reads back.
func (p *Params) WriteFile(path string) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return fileio.WriteFile(path, append(b, '\n'), 0o644) // whole or not at all
}
