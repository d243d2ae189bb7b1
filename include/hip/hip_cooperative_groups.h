// emud's <hip/hip_cooperative_groups.h>: the part of HIP's cooperative
// groups emud emulates, written for emud (not AMD's header; docs/hip.md):
// the block (this_thread_block(), thread_block) and, in a cooperative
// launch (hipLaunchCooperativeKernel), the grid (this_grid(),
// grid_group), whose sync is a barrier of every thread of the grid
// (capi/gridsync.go). Tiles, coalesced groups and multi-grid groups are
// not declared (the compiler's own error names them).
#ifndef EMUD_HIP_COOPERATIVE_GROUPS_H
#define EMUD_HIP_COOPERATIVE_GROUPS_H

#include "hip_runtime.h"
#include "../emud/groups.h"  // thread_block, grid_group

#endif
