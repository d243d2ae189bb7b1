// A program that never calls emud: a global counter main increments and
// prints, a function-local static, and a static destructor that prints.
// Each seed of a seed server must see fresh globals (1, 1) and print the
// destructor's line, as each process run does.
#include <cstdio>

static int counter;

static int& local() {
  static int n = 0;
  return n;
}

struct Goodbye {
  ~Goodbye() { std::printf("destructor: counter %d, local %d\n", counter, local()); }
} goodbye;

int main(int argc, char** argv) {
  counter++;
  local()++;
  std::printf("counter %d, local %d, argc %d", counter, local(), argc);
  for (int i = 1; i < argc; i++) std::printf(" %s", argv[i]);
  std::printf("\n");
  std::fprintf(stderr, "to stderr\n");
  return counter == 1 ? 0 : 7;
}
