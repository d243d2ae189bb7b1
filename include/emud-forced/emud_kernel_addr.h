// Kernels taken as void pointers. HIP and CUDA launch a kernel passed as
// `(const void*)kernel` with its arguments as `void** args`
// (hipLaunchKernel, hipLaunchCooperativeKernel, cudaLaunchKernel,
// cudaLaunchCooperativeKernel): their runtimes find the kernel's
// parameters from its address. emud calls a kernel as a C++ function, so
// it needs the parameters' types: emud c++ rewrites each cast of a name
// to a void pointer in the program's sources, `(void*)X` and
// `reinterpret_cast<const void*>(X)` (cxx/voidcast.go), into the same
// cast of `::emud::kernel_addr(X, "X")`, which returns X as it is and,
// when X is a function returning void, first registers it here: its
// address, its name, its parameters' sizes and alignments and a function
// that calls it with arguments read from pointers. hip_runtime.h's
// launch of a void pointer (emud::launch_addr) looks the address up
// here, copies the arguments, and launches that caller.
//
// emud c++ includes this header first in every source it compiles
// (-include, from a directory of its own searched as a system one), so
// it uses no library header: a source that casts pointers to void* and
// never includes hip_runtime.h compiles as it did. A cast in a macro's
// body names no kernel (its operand may be a parameter): the launch then
// names the kernel from its address. Partial: a kernel reaching a launch
// as a void pointer with no such cast in the program's own sources (a
// library's) is not found, and its launch fails, saying so (docs/hip.md).
#pragma once

namespace emud {

typedef void (*kernel_invoker)(const void* f, void* const* args);

// kernel_entry is a registered kernel: its parameters' sizes and
// alignments, in order, and the call that passes them.
struct kernel_entry {
  const void* fn;
  const char* name;
  kernel_invoker invoke;
  unsigned nargs;
  const unsigned* size;
  const unsigned* align;
};

enum { kernel_table_max = 4096 };

struct kernel_table {
  kernel_entry e[kernel_table_max];
  int n;
  bool full;  // a kernel was not registered: the table was full
  char lock;
};

inline kernel_table& kernels() {
  static kernel_table t;
  return t;
}

struct kernel_lock {
  kernel_table& t;
  explicit kernel_lock(kernel_table& t) : t(t) {
    while (__atomic_test_and_set(&t.lock, __ATOMIC_ACQUIRE)) {
    }
  }
  ~kernel_lock() { __atomic_clear(&t.lock, __ATOMIC_RELEASE); }
};

// kernel_lookup is the registered kernel at f, or null.
inline const kernel_entry* kernel_lookup(const void* f) {
  kernel_table& t = kernels();
  kernel_lock l(t);
  for (int i = 0; i < t.n; i++)
    if (t.e[i].fn == f) return &t.e[i];
  return nullptr;
}

inline bool kernel_table_full() {
  kernel_table& t = kernels();
  kernel_lock l(t);
  return t.full;
}

template <unsigned... I>
struct kernel_seq {};
template <unsigned N, unsigned... I>
struct kernel_make_seq : kernel_make_seq<N - 1, N - 1, I...> {};
template <unsigned... I>
struct kernel_make_seq<0, I...> {
  typedef kernel_seq<I...> type;
};

template <class... P, unsigned... I>
void kernel_call(const void* f, void* const* a, kernel_seq<I...>) {
  reinterpret_cast<void (*)(P...)>(const_cast<void*>(f))(*static_cast<P*>(a[I])...);
}

template <class... P>
void kernel_invoke(const void* f, void* const* a) {
  kernel_call<P...>(f, a, typename kernel_make_seq<sizeof...(P)>::type{});
}

template <class... P>
struct kernel_params {
  static constexpr unsigned size[sizeof...(P) + 1] = {sizeof(P)..., 0};
  static constexpr unsigned align[sizeof...(P) + 1] = {alignof(P)..., 0};
};
#if __cplusplus < 201703L  // before C++17's inline variables
template <class... P>
constexpr unsigned kernel_params<P...>::size[sizeof...(P) + 1];
template <class... P>
constexpr unsigned kernel_params<P...>::align[sizeof...(P) + 1];
#endif

template <class... P>
void register_kernel(void (*f)(P...), const char* name) {
  if (!f) return;
  const void* p = reinterpret_cast<const void*>(f);
  kernel_table& t = kernels();
  kernel_lock l(t);
  for (int i = 0; i < t.n; i++)
    if (t.e[i].fn == p) return;
  if (t.n == kernel_table_max) {
    t.full = true;
    return;
  }
  t.e[t.n++] = kernel_entry{p, name, &kernel_invoke<P...>, sizeof...(P), kernel_params<P...>::size,
                            kernel_params<P...>::align};
}

// The type X names, as a value: a function's its pointer's.
template <class T>
struct kernel_decay {
  typedef T type;
};
template <class T>
struct kernel_decay<T&> : kernel_decay<T> {};
template <class T>
struct kernel_decay<T&&> : kernel_decay<T> {};
template <class T>
struct kernel_decay<const T> : kernel_decay<T> {};
template <class... P>
struct kernel_decay<void(P...)> {
  typedef void (*type)(P...);
};
#if __cpp_noexcept_function_type  // C++17: noexcept is part of a function's type
template <class... P>
struct kernel_decay<void(P...) noexcept> {
  typedef void (*type)(P...);
};
template <class... P>
struct kernel_decay<void (*)(P...) noexcept> {
  typedef void (*type)(P...);
};
#endif

// kernel_copyable: every parameter is trivially copyable (no reference,
// no move-only or self-copying type), as a launch's argument bytes are
// copied; a function with another parameter is no kernel emud can call
// from bytes, and casting it still compiles.
template <class... P>
struct kernel_copyable {
  static constexpr bool value = true;
};
template <class P, class... R>
struct kernel_copyable<P, R...> {
  static constexpr bool value = __is_trivially_copyable(P) && kernel_copyable<R...>::value;
};

template <bool ok>
struct kernel_register_if {
  template <class F>
  static int add(F, const char*) {
    return 0;
  }
};
template <>
struct kernel_register_if<true> {
  template <class... P>
  static int add(void (*f)(P...), const char* name) {
    register_kernel(f, name);
    return 0;
  }
};

template <class T>
struct kernel_register {
  template <class V>
  static constexpr int add(const V&, const char*) {
    return 0;  // not a function returning void: nothing to launch
  }
};
template <class... P>
struct kernel_register<void (*)(P...)> {
  static int add(void (*f)(P...), const char* name) {
    return kernel_register_if<kernel_copyable<P...>::value>::add(f, name);
  }
};

// kernel_addr is x, registered first when it is a function returning
// void (or a pointer to one): what a cast of x to a void pointer in the
// program's source becomes. constexpr, so that a data pointer's cast in
// a constant expression stays one (one statement: C++11's rule).
template <class T>
constexpr T&& kernel_addr(T&& x, const char* name) {
  return (void)kernel_register<typename kernel_decay<T>::type>::add(x, name), static_cast<T&&>(x);
}

}  // namespace emud
