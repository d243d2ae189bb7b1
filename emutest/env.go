package emutest

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/sim"
)

// The environment a test binary honours, as a program built by "emud c++"
// does (docs/guide-cxx.md, docs/env.md): EMUD_SEED runs only that seed (as
// -emutest.seed), EMUD_PERTURB is the perturbation level (as
// -emutest.perturb), EMUD_RACE or MORI_CCO_SDMA_RACE turns on the race
// detector (as -emutest.race), EMUD_ARCH=gfx1250 builds a gfx1250 node
// (its timing preset, wave32 kernels, its packets),
// and the MORI_* variables reach cco as a MORI program reads them
// (MORI_CCO_SDMA_DEBUG's checks on every dev comm, MORI_ENABLE_SDMA,
// MORI_SDMA_NUM_CHANNELS). A flag given on the command line wins over the
// environment. EMUD_GPUS and EMUD_SUMMARY do not apply: a test names its
// ranks, and a failure prints its seed and digest.

// flagSet reports whether the command line set the flag called name.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// level is the perturbation level: -emutest.perturb when given, else
// EMUD_PERTURB, else realistic. A bad EMUD_PERTURB is an error naming it.
func level() (sim.Level, error) {
	if v := os.Getenv("EMUD_PERTURB"); v != "" && !flagSet("emutest.perturb") {
		l, err := sim.ParseLevel(v)
		if err != nil {
			return sim.LevelRealistic, fmt.Errorf("emutest: EMUD_PERTURB=%q: %w", v, err)
		}
		return l, nil
	}
	return sim.Level(min(max(*perturb, 0), int(sim.MaxLevel))), nil
}

// only is the one seed to run: -emutest.seed when given, else EMUD_SEED;
// 0 runs every seed. A bad EMUD_SEED is an error naming it.
func only() (uint64, error) {
	if v := os.Getenv("EMUD_SEED"); v != "" && !flagSet("emutest.seed") {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil || s == 0 {
			return 0, fmt.Errorf("emutest: EMUD_SEED=%q: want a seed of 1 or more", v)
		}
		return s, nil
	}
	return *onlySeed, nil
}

// arch is the timing model of EMUD_ARCH's architecture: nil (the
// default MI355X) when unset, the gfx1250 preset (wave32 kernels, its
// packets) for gfx1250, the gfx950 preset for gfx950. Another name is an
// error naming EMUD_ARCH.
func arch() (model.Model, error) {
	v := os.Getenv("EMUD_ARCH")
	switch v {
	case "":
		return nil, nil
	case "gfx1250", "gfx950":
		return model.Load(v)
	}
	return nil, fmt.Errorf("emutest: EMUD_ARCH=%q: want gfx950 or gfx1250", v)
}

// Env is the process environment NewJob's cco host reads: the MORI_*
// variables of the test binary's environment, with SDMA on unless it says
// otherwise.
func Env() cco.Env {
	env := cco.OSEnv()
	if _, ok := env["MORI_ENABLE_SDMA"]; !ok {
		env["MORI_ENABLE_SDMA"] = "1"
	}
	return env
}

// checkFlags reports the first flag or EMUD_* setting a search cannot
// use.
func checkFlags() error {
	if _, _, err := flagSchedule(); err != nil {
		return err
	}
	return checkEnv()
}

// checkEnv reports the first EMUD_* setting NewJob cannot use.
func checkEnv() error {
	if _, err := level(); err != nil {
		return err
	}
	if _, err := arch(); err != nil {
		return err
	}
	_, err := only()
	return err
}

// envPrefix is what a reproduce command must set in the environment to
// rerun as this run did: the settings no flag carries (EMUD_ARCH and the
// MORI_* variables cco reads, but the race switch, which -emutest.race
// carries).
func envPrefix() string {
	var b strings.Builder
	for _, k := range []string{"EMUD_ARCH", "MORI_CCO_SDMA_DEBUG", "MORI_ENABLE_SDMA", "MORI_SDMA_NUM_CHANNELS"} {
		if v, ok := os.LookupEnv(k); ok {
			fmt.Fprintf(&b, "%s=%s ", k, shellWord(v))
		}
	}
	return b.String()
}

// shellWord quotes s for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,/:=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
