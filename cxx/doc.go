// Package cxx is emud's compiler driver for HIP C++ programs (emud c++):
// it rewrites a source's <<<...>>> launches and __shared__ declarations
// into calls of emud's headers (include/), compiles it as host C++ with
// g++ or clang++ with emud's include directory first, and links the
// emulator library built from package capi. It also finds the loops of a
// C++ source, which give native lanes their program order (capi).
//
// The rewrite is textual over a C++ token stream that knows comments,
// literals and preprocessor lines: launches of template kernels, launches
// inside macros over several lines and inside lambdas are rewritten the
// same way, and every line stays where it was (a #line directive names
// the original file), so compiler messages and __builtin_LINE point at
// the user's source. __shared__ declarations inside macro bodies are not
// rewritten; the header then makes them a compile error naming
// themselves rather than silently per-lane variables.
//
// Lane code is instrumented by default: -fsanitize=thread, with -g1's line
// tables unless a -g is given, goes to the compiler only, unless
// -fno-sanitize=thread says not to: the program is not linked with
// ThreadSanitizer's runtime, whose callbacks (__tsan_read4, …) the
// emulator implements to check and log each lane load and store (capi),
// naming each access's own file:line.
package cxx
