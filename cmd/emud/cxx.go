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
		Long: `emud c++ is a compiler driver over g++ or clang++ ($EMUD_CXX, else g++,
else clang++) that build systems can drive as CXX. It compiles HIP C++ sources
(.cpp, .cc, .cxx, .hip, or any file after -x hip / -x c++) and CUDA sources
(.cu, -x cuda: warps of 32, cuda_runtime.h, nccl.h, nccl_device.h, inline
PTX; docs/cuda.md) as host C++ with emud's include directory first
(hip/hip_runtime.h and mori/cco/cco.hpp are emud's), rewriting their
<<<...>>> launches and __shared__ declarations,
and links the emulator once (go build -buildmode=c-archive -tags
emud_nometrics ./capi, from emud's source tree: run inside it or set
EMUD_ROOT; rebuilt only when the tree changed). -c, -S, -E, -M/-MM,
-MD/-MMD/-MF/-MT, response files (@file) and links of objects, archives and
-l/-L (emud-compiled or plain host objects) work as with g++; with no input
file (--version, -v, -dumpversion) the compiler answers. hipcc's flags:
--offload-arch=gfx950|gfx1250 sets the program's EMUD_ARCH (the environment
still wins), -fgpu-rdc is what emud always does, --rocm-path is ignored with a
note; -shared and -D__HIP_PLATFORM_NVIDIA__ are refused. -o never overwrites
an input. The program's ranks are its threads; at run time EMUD_SEED,
EMUD_GPUS, EMUD_RACE, EMUD_SUMMARY and MORI_* configure it (go doc ./capi).`,
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
