// Host threads' turnstiles (host.go's turnstile, sim.Turnstile): a host
// thread that blocks in virtual time, when the next actor to run is
// another host thread, wakes that thread and waits for its own turn in
// one cgo call, on futex words. So the Go runtime sees both threads in a
// cgo call at once: the woken thread takes the one P back as it returns
// (the P of a thread in a cgo call is free to take), where a handoff by
// channels between the two threads' locked goroutines parked one thread,
// woke a third to hand the P on, and woke the second from there.
#define _GNU_SOURCE
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lane.h"

// emud_turn_wait waits until the word is 1 and takes it back to 0: a
// wake that came first is kept.
void emud_turn_wait(uint32_t* self) {
  while (__atomic_exchange_n(self, 0, __ATOMIC_ACQUIRE) != 1)
    syscall(SYS_futex, self, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
}

// emud_turn_wake sets the word to 1 and wakes its waiter.
void emud_turn_wake(uint32_t* to) {
  __atomic_store_n(to, 1, __ATOMIC_RELEASE);
  syscall(SYS_futex, to, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

// emud_turn_pass wakes to and waits on self.
void emud_turn_pass(uint32_t* to, uint32_t* self) {
  emud_turn_wake(to);
  emud_turn_wait(self);
}
