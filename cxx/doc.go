// Package cxx is emud's compiler driver for HIP C++ programs (emud c++):
// it rewrites a source's <<<...>>> launches, __shared__ declarations and
// casts of names to void pointers (voidcast.go: a kernel cast so is
// registered for launches by its address, hipLaunchKernel((const
// void*)k, ...)) into calls of emud's headers (include/, with
// emud-forced/emud_kernel_addr.h included first in every source), compiles it as host C++ with
// g++ or clang++ with emud's include directory first, and links the
// emulator library built from package capi. It also finds the loops of a
// C++ source, which give native lanes their program order (capi).
//
// The driver takes g++'s command lines, so build systems drive it as CXX
// (tools/emud-c++, cmake/emud.cmake): -c/-S/-E/-M compile each source on
// its own (the rewrite and the loop scan are per translation unit: a
// lane's program order comes from the file:line of its calls); a link
// takes objects, archives and -l/-L in command-line order, emud-compiled
// or plain host code, and adds the emulator once. Dependency files
// (-MD/-MMD/-MF) name the user's source, not the rewritten copy.
// Response files (@file) are split as GCC splits them. hipcc's
// --offload-arch bakes EMUD_ARCH into the object or program (a
// constructor that sets it unless the environment does); its code
// generation flags are ignored with a note; -shared and the NVIDIA
// platform are refused (args.go says each). The emulator library is
// rebuilt only when a file of emud's tree is newer than its last build,
// under a lock, so a parallel make links it once. Partial: -x c and
// other languages are refused rather than passed to the C compiler, and
// -MD in a one-step compile-and-link writes source.d in the working
// directory.
//
// The rewrite is textual over a C++ token stream that knows comments,
// literals and preprocessor lines: launches of template kernels, launches
// inside macros over several lines and inside lambdas are rewritten the
// same way, and every line stays where it was (a #line directive names
// the original file), so compiler messages and __builtin_LINE point at
// the user's source. __shared__ declarations inside macro bodies are not
// rewritten; the header then makes them a compile error naming
// themselves rather than silently per-lane variables. Conditionals are
// honoured before any preprocessor runs (cond.go): a branch known dead
// (#if 0, #elif false, an #else after #if 1) is left as written and never
// checked, each branch of a condition only the compiler can decide
// (#ifdef X) is rewritten, and a launch split across branches is followed
// through each. Partial: a __shared__ declaration split by a conditional,
// or a conditional between >>> and (, is refused naming its line.
// Nothing else is renamed: threadIdx, blockIdx, blockDim and gridDim are
// objects of emud's hip_runtime.h, not macros, so a program's own
// variable, parameter or member of one of those names (in its headers
// too) shadows them as C++ scopes say, with no rewrite (docs/hip.md,
// "Built-in variables"; testdata/builtins).
//
// CUDA sources (.cu, -x cuda) are compiled with __CUDACC__, __NVCC__ and
// EMUD_CUDA instead of __HIP__ (cuda.go): emud's cuda_runtime.h,
// <cuda/atomic>, nccl.h and nccl_device.h then give the CUDA dialect and
// the LSA and GIN parts of NCCL's device API (docs/cuda.md; GIN over the
// node's SDMA queues, nccl_device/gin.h). Their inline PTX is
// rewritten first (ptx.go: red, atom, ld, st, fence, membar, nanosleep
// become emulated memory operations); any other asm fails the build
// naming the instruction.
//
// A user's own MORI: when an include directory the user gives holds
// mori/cco/cco.hpp, sources compile against it instead of emud's stand-in,
// with emud/amdgcn.h included first, and the link adds emud's host control
// plane for it, compiled against the same header; a structure of the
// header emud cannot fill is a build error naming the field (mori.go,
// docs/mori-headers.md). With spdlog nowhere on the include path, emud's
// spdlog-free mori/utils/mori_log.hpp stands in for the user's.
//
// Lane code is instrumented by default: -fsanitize=thread, with -g1's line
// tables unless a -g is given, goes to the compiler only, unless
// -fno-sanitize=thread says not to: the program is not linked with
// ThreadSanitizer's runtime, whose callbacks (__tsan_read4, …) the
// emulator implements to check and log each lane load and store (capi),
// naming each access's own file:line.
//
// A link also makes the program's seed form (seedform.go, seedbuild.go):
// the same objects, without the emulator, linked as a shared object
// OUT.emud-seeds.so (-shared -Wl,-Bsymbolic), which capi's seed server
// (emud-seed-server-BUILD, built once per build of the emulator library
// beside it, with -Wl,--export-dynamic; a new build's server replaces the
// last one's, so a program linked with an older library finds none and
// keeps a process per seed) loads afresh for each seed of a sweep
// instead of starting a process. Every object emud c++ compiles is built
// -fPIC, -fno-plt (the seed form calls the emulator's instrumentation
// callbacks millions of times a run: through the GOT, not a PLT stub)
// and, with GCC, -fno-gnu-unique (a unique symbol makes an object
// NODELETE, so dlclose would keep the last seed's globals). OUT carries a
// non-loaded ELF section .emud_seeds of key=value lines: server (its
// absolute path), object (relative to OUT's directory) and sha256 (the
// object's). No seed form is made, and OUT has no section, when a plain
// object is not position-independent (the shared link fails), the link
// asks for -static, or the object's undefined dynamic symbols show it
// forks, execs, spawns, waits for children or calls MPI (those programs'
// ranks are processes, which keep a process per seed); -v says which.
// ReadSeedForm reads the section for emud explore, checking that both
// files exist, that the server is executable and that the object is the
// one OUT was linked with: ErrNoSeedForm when there is none, a
// *SeedFormError naming the mismatch otherwise. The server's protocol
// and what it resets between seeds are capi's doc ("The seed server").
package cxx
