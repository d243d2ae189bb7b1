// The KFD topology a program built with emud c++ sees (see doc.go, "The
// KFD view"). Launchers count GPUs in /sys/class/kfd/kfd/topology/nodes
// (MORI's test harness reads nodes/N/gpu_id and counts the non-zero ones)
// and runtimes read node and io-link properties there. This file serves
// that tree for the emulated node, in C only so that a forked child, which
// has no Go runtime, sees it too: the first access to a path under
// /sys/class/kfd (or /sys/devices/virtual/kfd, its target) writes the tree
// once into a directory of its own under $TMPDIR (or /tmp), named by what
// it holds, and every interposed path call (open, fopen, opendir, stat,
// access and their variants) is redirected there. Nothing on the machine
// changes, and only programs linked with emud's library see the tree.
// Written for emud.
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

// emud's own once call, never a host thread's (psync.c).
int emud_real_once(pthread_once_t* o, void (*init)(void));

// The node's GPU count when EMUD_GPUS is unset or out of range (the
// emulation's first call then refuses a bad EMUD_GPUS, naming it).
#define KFD_NODE_GPUS 8
// Bumped whenever the tree's contents change, so a stale tree of an
// older emud is never served (trees are kept between runs).
#define KFD_TREE_VERSION 1

// The preset's SDMA engines (model.MI355X's Engines; the gfx1250 preset
// keeps them): 2 general engines (0-1, the host link's), 14 xGMI engines,
// 2 recommended per peer link. cxx's TestKFDTopology checks the masks
// below against package model.
#define KFD_GENERAL 2
#define KFD_XGMI 14
#define KFD_PER_LINK 2

static pthread_once_t tree_once = PTHREAD_ONCE_INIT;
static char tree[PATH_MAX];  // the served tree's root ("" when it could not be made)

// emud_sysfs_reset forgets the tree between two seeds of a seed server
// (lane.c): the next seed's EMUD_GPUS and EMUD_ARCH choose it afresh.
void emud_sysfs_reset(void) {
  tree_once = (pthread_once_t)PTHREAD_ONCE_INIT;
  tree[0] = 0;
}

static int (*real_open)(const char*, int, ...);
static int (*real_openat)(int, const char*, int, ...);
static int (*real_stat)(const char*, struct stat*);
static int (*real_mkdir)(const char*, mode_t);

// gpu_id is KFD's per-GPU id (a hash on hardware): any non-zero value,
// distinct per GPU; these are emud's own.
static unsigned kfd_gpu_id(int g) { return 0x5a00u + 0x101u * (unsigned)g; }

static int kfd_gpus(void) {
  const char* e = getenv("EMUD_GPUS");
  if (!e || !*e) return KFD_NODE_GPUS;
  char* end = NULL;
  long n = strtol(e, &end, 10);
  if (!end || *end || n < 1 || n > KFD_NODE_GPUS) return KFD_NODE_GPUS;
  return (int)n;
}

// kfd_mask is model.Engines.Mask: link k (the k-th other GPU in id order)
// gets xGMI engines General + (k·PerLink + i) mod XGMI, i < PerLink.
static uint32_t kfd_mask(int gpu, int peer) {
  int k = peer > gpu ? peer - 1 : peer;
  uint32_t m = 0;
  for (int i = 0; i < KFD_PER_LINK; i++) m |= 1u << (KFD_GENERAL + (k * KFD_PER_LINK + i) % KFD_XGMI);
  return m;
}

static int put_file(const char* dir, const char* name, const char* text) {
  char p[PATH_MAX];
  if (snprintf(p, sizeof p, "%s/%s", dir, name) >= (int)sizeof p) return ENAMETOOLONG;
  int fd = real_open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0444);
  if (fd < 0) return errno;
  size_t n = strlen(text), off = 0;
  while (off < n) {
    ssize_t w = write(fd, text + off, n - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      close(fd);
      return e;
    }
    off += (size_t)w;
  }
  return close(fd) ? errno : 0;
}

static int put_dir(char* out, size_t cap, const char* parent, const char* name) {
  if (snprintf(out, cap, "%s/%s", parent, name) >= (int)cap) return ENAMETOOLONG;
  return real_mkdir(out, 0755) && errno != EEXIST ? errno : 0;
}

// io_link writes nodes/<from>/io_links/<i>/properties.
static int io_link(const char* links, int i, int type, int from, int to, int weight, uint32_t mask) {
  char d[PATH_MAX], name[16], text[512];
  snprintf(name, sizeof name, "%d", i);
  int e = put_dir(d, sizeof d, links, name);
  if (e) return e;
  // type: 2 PCIe (the host link), 11 xGMI (KFD's CRAT io link types).
  snprintf(text, sizeof text,
           "type %d\nversion_major 0\nversion_minor 0\nnode_from %d\nnode_to %d\nweight %d\nmin_latency 0\n"
           "max_latency 0\nmin_bandwidth 0\nmax_bandwidth 0\nrecommended_transfer_size 0\n"
           "recommended_sdma_engine_id_mask %u\nflags 1\n",
           type, from, to, weight, mask);
  return put_file(d, "properties", text);
}

// build writes the tree of an n-GPU node of arch (gfx950 or gfx1250) under
// root: node 0 the host CPU, nodes 1..n the GPUs, as KFD numbers them.
static int build(const char* root, int n, int gfx1250) {
  char kfd[PATH_MAX], top[PATH_MAX], nodes[PATH_MAX], d[PATH_MAX], links[PATH_MAX], text[2048], name[16];
  int e;
  if ((e = put_dir(kfd, sizeof kfd, root, "kfd")) || (e = put_dir(top, sizeof top, kfd, "topology")) ||
      (e = put_dir(nodes, sizeof nodes, top, "nodes")))
    return e;
  if ((e = put_file(top, "generation_id", "1\n")) ||
      (e = put_file(top, "system_properties", "platform_oem 0\nplatform_id 0\nplatform_rev 0\n")))
    return e;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus < 1) cpus = 1;
  for (int node = 0; node <= n; node++) {
    snprintf(name, sizeof name, "%d", node);
    if ((e = put_dir(d, sizeof d, nodes, name)) || (e = put_dir(links, sizeof links, d, "io_links"))) return e;
    if (node == 0) {  // the host: no GPU, a PCIe link to each GPU
      snprintf(text, sizeof text,
               "cpu_cores_count %ld\nsimd_count 0\nmem_banks_count 1\ncaches_count 0\nio_links_count %d\n"
               "p2p_links_count 0\ncpu_core_id_base 0\nsimd_id_base 0\nmax_waves_per_simd 0\nlds_size_in_kb 0\n"
               "wave_front_size 0\ngfx_target_version 0\nvendor_id 0\ndevice_id 0\nnum_sdma_engines 0\n"
               "num_sdma_xgmi_engines 0\n",
               cpus, n);
      if ((e = put_file(d, "gpu_id", "0\n")) || (e = put_file(d, "name", "\n")) || (e = put_file(d, "properties", text)))
        return e;
      for (int g = 0; g < n; g++)
        if ((e = io_link(links, g, 2, 0, g + 1, 20, 0))) return e;
      continue;
    }
    int g = node - 1;
    // An MI355X (gfx950): 256 CUs of 4 SIMDs, wave64, 160 KiB of LDS
    // per CU, 8 XCCs; its PCI device id 0x75a3, AMD's vendor id 0x1002.
    // gfx1250 keeps the node's shape and runs wave32 (model.Arch).
    snprintf(text, sizeof text,
             "cpu_cores_count 0\nsimd_count 1024\nmem_banks_count 1\ncaches_count 0\nio_links_count %d\n"
             "p2p_links_count 0\ncpu_core_id_base 0\nsimd_id_base %u\nmax_waves_per_simd 16\nlds_size_in_kb 160\n"
             "gds_size_in_kb 0\nnum_gws 0\nwave_front_size %d\narray_count 32\nsimd_arrays_per_engine 1\n"
             "cu_per_simd_array 8\nsimd_per_cu 4\nmax_slots_scratch_cu 32\ngfx_target_version %d\nvendor_id 4098\n"
             "device_id 30115\nlocation_id %d\ndomain 0\ndrm_render_minor %d\nhive_id 6557894561982347\n"
             "num_sdma_engines %d\nnum_sdma_xgmi_engines %d\nnum_sdma_queues_per_engine 8\nnum_cp_queues 24\n"
             "max_engine_clk_fcompute 2400\nlocal_mem_size 0\nfw_version 0\ncapability 0\ndebug_prop 0\n"
             "sdma_fw_version 0\nunique_id %u\nnum_xcc 8\nmax_engine_clk_ccompute %ld\n",
             n, 0x80000000u + 0x1000u * (unsigned)g, gfx1250 ? 32 : 64, gfx1250 ? 120500 : 90500, 256 * (g + 1),
             128 + g, KFD_GENERAL, KFD_XGMI, kfd_gpu_id(g), 2400L);
    char id[32];
    snprintf(id, sizeof id, "%u\n", kfd_gpu_id(g));
    if ((e = put_file(d, "gpu_id", id)) || (e = put_file(d, "name", gfx1250 ? "gfx1250\n" : "gfx950\n")) ||
        (e = put_file(d, "properties", text)))
      return e;
    // Link 0 is the host's, then one xGMI link per other GPU in id order,
    // as KFD lists them. The host link's engines are the general ones,
    // all of them on gfx1250 (model.Engines.HostLinkMask: MORI's anvil
    // spreads loopback over the host-link engines there).
    uint32_t host = gfx1250 ? (1u << (KFD_GENERAL + KFD_XGMI)) - 1 : (1u << KFD_GENERAL) - 1;
    if ((e = io_link(links, 0, 2, node, 0, 20, host))) return e;
    int i = 1;
    for (int p = 0; p < n; p++)
      if (p != g && (e = io_link(links, i++, 11, node, p + 1, 15, kfd_mask(g, p)))) return e;
  }
  return 0;
}

// remove_tree removes a tree build wrote (one that lost the race to
// publish): depth-first, its own files and directories only.
static void remove_tree(const char* p) {
  DIR* d = opendir(p);  // not under /sys: served as is
  if (d) {
    struct dirent* de;
    char c[PATH_MAX];
    while ((de = readdir(d)) != NULL) {
      if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
      if (snprintf(c, sizeof c, "%s/%s", p, de->d_name) < (int)sizeof c) remove_tree(c);
    }
    closedir(d);
    rmdir(p);
    return;
  }
  unlink(p);
}

static void make_tree(void) {
  real_open = dlsym(RTLD_NEXT, "open");
  real_openat = dlsym(RTLD_NEXT, "openat");
  real_stat = dlsym(RTLD_NEXT, "stat");
  real_mkdir = dlsym(RTLD_NEXT, "mkdir");
  if (!real_open || !real_openat || !real_stat || !real_mkdir) return;
  const char* tmp = getenv("TMPDIR");
  if (!tmp || !*tmp) tmp = "/tmp";
  const char* arch = getenv("EMUD_ARCH");
  int gfx1250 = arch && !strcmp(arch, "gfx1250");
  int n = kfd_gpus();
  char final[PATH_MAX], work[PATH_MAX];
  if (snprintf(final, sizeof final, "%s/emud-kfd-v%d-u%u-%s-%d", tmp, KFD_TREE_VERSION, (unsigned)getuid(),
               gfx1250 ? "gfx1250" : "gfx950", n) >= (int)sizeof final)
    return;
  struct stat st;
  // A tree of the same name holds the same bytes: one written by an
  // earlier run of this user is reused.
  if (real_stat(final, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid()) {
    snprintf(tree, sizeof tree, "%s", final);
    return;
  }
  snprintf(work, sizeof work, "%s.XXXXXX", final);
  if (!mkdtemp(work)) {
    fprintf(stderr, "emud: warning: cannot write the emulated KFD topology under %s: %s\n", tmp, strerror(errno));
    return;
  }
  int e = build(work, n, gfx1250);
  if (e) {
    fprintf(stderr, "emud: warning: cannot write the emulated KFD topology in %s: %s\n", work, strerror(e));
    remove_tree(work);
    return;
  }
  chmod(work, 0755);
  // Published whole, by a rename: a process starting beside this one
  // (MPI ranks) sees the whole tree or none, and the loser of a race
  // removes its copy.
  if (rename(work, final) != 0) remove_tree(work);
  if (real_stat(final, &st) == 0 && S_ISDIR(st.st_mode)) snprintf(tree, sizeof tree, "%s", final);
}

// served rewrites path into buf when it is a KFD sysfs path and returns
// the path to use (path itself otherwise).
static const char* served(const char* path, char* buf, size_t cap) {
  static const char* const prefixes[] = {"/sys/class/kfd", "/sys/devices/virtual/kfd"};
  if (!path || strncmp(path, "/sys/", 5) != 0) return path;
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
    size_t n = strlen(prefixes[i]);
    if (strncmp(path, prefixes[i], n) != 0 || (path[n] != '\0' && path[n] != '/')) continue;
    emud_real_once(&tree_once, make_tree);
    if (!tree[0]) return path;
    if (snprintf(buf, cap, "%s%s", tree, path + n) >= (int)cap) return path;
    return buf;
  }
  return path;
}

typedef int (*open_fn)(const char*, int, ...);
typedef int (*openat_fn)(int, const char*, int, ...);
#define REAL(name, type)                            \
  static type real;                                 \
  if (!real) real = (type)dlsym(RTLD_NEXT, name);   \
  if (!real) {                                      \
    errno = ENOSYS;                                 \
    return -1;                                      \
  }

static mode_t mode_arg(int flags, va_list ap) {
  return (flags & O_CREAT) || (flags & __O_TMPFILE) == __O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  REAL("open", open_fn);
  char buf[PATH_MAX];
  return real(served(path, buf, sizeof buf), flags, mode);
}

int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  REAL("open64", open_fn);
  char buf[PATH_MAX];
  return real(served(path, buf, sizeof buf), flags, mode);
}

int __open_2(const char* path, int flags) { return open(path, flags); }
int __open64_2(const char* path, int flags) { return open64(path, flags); }

int openat(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  REAL("openat", openat_fn);
  char buf[PATH_MAX];
  return real(dirfd, served(path, buf, sizeof buf), flags, mode);
}

int openat64(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  REAL("openat64", openat_fn);
  char buf[PATH_MAX];
  return real(dirfd, served(path, buf, sizeof buf), flags, mode);
}

int __openat_2(int dirfd, const char* path, int flags) { return openat(dirfd, path, flags); }
int __openat64_2(int dirfd, const char* path, int flags) { return openat64(dirfd, path, flags); }

#define PATH_CALL(name, ret, fail, params, args)        \
  ret name params {                                     \
    static ret(*real) params;                           \
    if (!real) real = (ret(*) params)dlsym(RTLD_NEXT, #name); \
    if (!real) {                                        \
      errno = ENOSYS;                                   \
      return fail;                                      \
    }                                                   \
    char buf[PATH_MAX];                                 \
    path = served(path, buf, sizeof buf);               \
    return real args;                                   \
  }

PATH_CALL(fopen, FILE*, NULL, (const char* path, const char* mode), (path, mode))
PATH_CALL(fopen64, FILE*, NULL, (const char* path, const char* mode), (path, mode))
PATH_CALL(opendir, DIR*, NULL, (const char* path), (path))
PATH_CALL(stat, int, -1, (const char* path, struct stat* st), (path, st))
PATH_CALL(lstat, int, -1, (const char* path, struct stat* st), (path, st))
PATH_CALL(stat64, int, -1, (const char* path, struct stat64* st), (path, st))
PATH_CALL(lstat64, int, -1, (const char* path, struct stat64* st), (path, st))
PATH_CALL(fstatat, int, -1, (int dirfd, const char* path, struct stat* st, int flags), (dirfd, path, st, flags))
PATH_CALL(fstatat64, int, -1, (int dirfd, const char* path, struct stat64* st, int flags), (dirfd, path, st, flags))
PATH_CALL(statx, int, -1, (int dirfd, const char* path, int flags, unsigned mask, struct statx* st),
          (dirfd, path, flags, mask, st))
PATH_CALL(access, int, -1, (const char* path, int mode), (path, mode))
PATH_CALL(faccessat, int, -1, (int dirfd, const char* path, int mode, int flags), (dirfd, path, mode, flags))
PATH_CALL(realpath, char*, NULL, (const char* path, char* resolved), (path, resolved))
