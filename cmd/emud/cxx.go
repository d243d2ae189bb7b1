package main

import (
	"github.com/spf13/cobra"

	"github.com/emud-dev/emud/cxx"
)

// newCxxCmd is `emud c++`: the compiler driver for HIP C++ programs over
// the emulator (package cxx does the work).
func newCxxCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "c++ [compiler flags] file.cpp... -o prog",
		Short: "Compile HIP C++ (hip_runtime.h, mori/cco/cco.hpp) against the emulator with g++ or clang++",
		Long: `emud c++ compiles .cpp/.hip sources as host C++ with emud's include
directory first (hip/hip_runtime.h and mori/cco/cco.hpp are emud's), rewrites
their <<<...>>> launches and __shared__ declarations, and links the emulator
(go build -buildmode=c-archive -tags emud_nometrics ./capi, from emud's
source tree: run inside it
or set EMUD_ROOT). Other arguments go to the compiler ($EMUD_CXX, else g++,
else clang++). -c compiles only. The program's ranks are its threads; at run
time EMUD_SEED, EMUD_GPUS, EMUD_RACE, EMUD_SUMMARY and MORI_* configure it
(go doc ./capi).`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				if a == "--help" || a == "-h" {
					return cmd.Help()
				}
			}
			return cxx.Run(args, cxx.Options{Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr(), Verbose: false})
		},
	}
}
