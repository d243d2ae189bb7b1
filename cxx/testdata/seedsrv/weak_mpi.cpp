// A program that calls MPI_Init when the process has MPI (a weak
// reference, so it links without an MPI library): its ranks may be MPI
// processes, so emud c++ makes it no seed form.
#include <cstdio>

extern "C" int MPI_Init(int* argc, char*** argv) __attribute__((weak));

int main(int argc, char** argv) {
  if (MPI_Init) MPI_Init(&argc, &argv);
  std::printf("MPI %s\n", MPI_Init ? "present" : "absent");
  return 0;
}
