// The KFD topology a launcher reads: MORI's test harness counts GPUs as
// the nodes under /sys/class/kfd/kfd/topology/nodes whose gpu_id is not
// 0, reading node i until one is missing. A program built with emud c++
// sees the emulated node there (capi/sysfs.c), so it counts EMUD_GPUS
// GPUs, as many as hipGetDeviceCount. Given a directory, it also copies
// the tree there, walking it with opendir and stat as a runtime would, so
// cxx's TestKFDTopology can read it with hw/rocm's sysfs reader.
#include <dirent.h>
#include <sys/stat.h>

#include <cstring>
#include <string>

#include "../common.hpp"

// copyTree copies the directory src into dst (made); the number of files.
static int copyTree(const std::string& src, const std::string& dst) {
  if (mkdir(dst.c_str(), 0755) != 0) return -1;
  DIR* d = opendir(src.c_str());
  if (!d) return -1;
  int files = 0;
  while (dirent* de = readdir(d)) {
    if (!std::strcmp(de->d_name, ".") || !std::strcmp(de->d_name, "..")) continue;
    std::string s = src + "/" + de->d_name, t = dst + "/" + de->d_name;
    struct stat st;
    if (stat(s.c_str(), &st) != 0) return -1;
    if (S_ISDIR(st.st_mode)) {
      int n = copyTree(s, t);
      if (n < 0) return -1;
      files += n;
      continue;
    }
    FILE* in = std::fopen(s.c_str(), "r");
    FILE* out = std::fopen(t.c_str(), "w");
    if (!in || !out) return -1;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, in)) > 0) std::fwrite(buf, 1, n, out);
    std::fclose(in);
    std::fclose(out);
    files++;
  }
  closedir(d);
  return files;
}

int main(int argc, char** argv) {
  int gpus = 0;  // as MORI's ccoTestMain counts them
  for (int i = 0; i < 64; i++) {
    char path[128];
    std::snprintf(path, sizeof path, "/sys/class/kfd/kfd/topology/nodes/%d/gpu_id", i);
    FILE* f = std::fopen(path, "r");
    if (!f) break;
    unsigned long id = 0;
    if (std::fscanf(f, "%lu", &id) == 1 && id != 0) gpus++;
    std::fclose(f);
  }
  int devices = 0;
  HIP_CHECK(hipGetDeviceCount(&devices));
  std::printf("kfd_topology: %d GPUs in sysfs, %d HIP devices\n", gpus, devices);
  int errors = gpus == devices && gpus > 0 ? 0 : 1;
  if (argc > 1) {
    int files = copyTree("/sys/class/kfd/kfd/topology", argv[1]);
    std::printf("kfd_topology: copied %d files\n", files);
    if (files <= 0) errors++;
  }
  return finish("kfd_topology", errors);
}
