// mori/core/transport/rdma/core_device_types.hpp for emud: MORI's RDMA
// transport is not emulated, so a source that includes it stops here with
// one clear error instead of failing on its first undeclared name.
#pragma once
#error "mori/core/transport/rdma/core_device_types.hpp: MORI's RDMA transport (GDA, multi-node) is not emulated by emud; its intra-node ccoSdma and LSA paths are (mori/cco/cco.hpp)"
// A missing header is fatal to GCC and Clang: compilation stops after the
// message above rather than going on to a cascade of undeclared names.
#include "emud/not-emulated"
