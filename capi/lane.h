// Declarations shared by lane.c and the Go side (see doc.go).
#ifndef EMUD_LANE_H
#define EMUD_LANE_H
#include "emud/abi.h"
emud_lane* emud_lane_new(emud_entry entry, void* arg);
void emud_lane_free(emud_lane* l);
void emud_resume(emud_lane* l);
void emud_install_fault_handlers(void);
int emud_map_device(uint64_t base, uint64_t size);
void emud_set_race(int on);
void emud_set_host_cost(int on);
uint64_t emud_host_bytes_take(void);
#define EMUD_HOST_LOG 64
typedef struct {
  int n;
  uint64_t lo[EMUD_HOST_LOG], hi[EMUD_HOST_LOG], pc[EMUD_HOST_LOG];
} emud_host_log;
emud_host_log* emud_host_stores(void);
extern void emudGoHostStores(int id);
int emud_instrumented(void);
void* emud_obj_alloc(size_t n);
void emud_enter(void);
void emud_leave(void);
int emud_host_id(void);
void emud_set_host_id(int id);
static inline void emud_call_entry(emud_entry f, void* ctx) { f(ctx); }
// Exported by the Go side.
extern int emudGoHostSpawn(int parent);
extern void emudGoHostAttach(int id);
extern void emudGoHostExit(int id);
extern void emudGoHostJoin(int self, int child);
extern int emudGoHost(int op, uint64_t* a, char* file, int line);
extern void emudGoExit(void);
void emud_register_exit(void);
void emud_set_started(void);
void emud_early_lock(void);
void emud_early_unlock(void);
int emud_early_next(void);
void emud_early_adopt(int i, int id);
void emud_early_runtime(void);
int emud_early_id(void);
#endif
